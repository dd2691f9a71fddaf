//! `toolstream proxy`: flags over the TOML config over defaults, then serve.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use toolstream::proxy::{shutdown_signal, Mode, OnInvalid, Proxy, ProxyConfig};

#[derive(clap::Args)]
pub(crate) struct ProxyArgs {
    /// The OpenAI-compatible server to forward to (`http://127.0.0.1:8080`, with or without `/v1`).
    #[arg(long)]
    upstream: Option<String>,
    /// Address to listen on (loopback unless told otherwise).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// The upstream model (default: the first one the upstream lists).
    #[arg(long)]
    model: Option<String>,
    /// How calls are obtained: `native` (tools forwarded, calls from native
    /// tool_calls and from content), `emulate` (needs the toolkit: not in
    /// this build), `auto` (per model; here always native).
    #[arg(long)]
    mode: Option<Mode>,
    /// A TOML file with every setting (docs/proxy.md); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Environment variable holding the key clients must send.
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// Environment variable holding the key sent to the upstream.
    #[arg(long, value_name = "NAME")]
    upstream_key_env: Option<String>,
    /// Keep Claude Code's per-request attribution line in the system prompt.
    #[arg(long)]
    keep_attribution: bool,
    /// Validation retries: how often the upstream is asked again, with
    /// feedback, for an invalid call, a missing required call or a repeated
    /// call (default 1; 0 streams each call as soon as it is checked).
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// A call still invalid after the retries: `text` (not sent; a text
    /// block names it and its problems), `error`, or `forward` (sent, with
    /// a note).
    #[arg(long, value_name = "WHAT")]
    on_invalid: Option<OnInvalid>,
    /// Pass calls on as parsed: no normalizer, no validation, no retries.
    #[arg(long)]
    no_normalize: bool,
    /// Do not stop calls the conversation shows the model already repeated.
    #[arg(long)]
    no_loop_stop: bool,
}

pub(crate) fn run(a: &ProxyArgs) -> ExitCode {
    let mut cfg = match &a.config {
        Some(p) => match ProxyConfig::from_file(p) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("toolstream proxy: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
        None => ProxyConfig::default(),
    };
    if let Some(u) = &a.upstream {
        cfg.upstream = u.clone();
    }
    if let Some(l) = a.listen {
        cfg.listen = l;
    }
    if let Some(m) = &a.model {
        cfg.model = Some(m.clone());
    }
    if let Some(m) = a.mode {
        cfg.mode = m;
    }
    if a.api_key_env.is_some() {
        cfg.api_key_env = a.api_key_env.clone();
    }
    if a.upstream_key_env.is_some() {
        cfg.upstream_key_env = a.upstream_key_env.clone();
    }
    if a.keep_attribution {
        cfg.strip_attribution = false;
    }
    if let Some(n) = a.retries {
        cfg.retries.validation = n;
    }
    if let Some(w) = a.on_invalid {
        cfg.retries.on_invalid = w;
    }
    if a.no_normalize {
        cfg.normalize = false;
    }
    if a.no_loop_stop {
        cfg.loops.stop = false;
    }
    if let Err(e) = cfg.validate() {
        eprintln!("toolstream proxy: {e}");
        return ExitCode::from(2);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLSTREAM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolstream proxy: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async move {
        let proxy = match Proxy::start(cfg).await {
            Ok(p) => p,
            Err(e) => {
                eprintln!("toolstream proxy: {e}");
                return ExitCode::from(2);
            }
        };
        let listen = proxy.config().listen;
        let listener = match tokio::net::TcpListener::bind(listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("toolstream proxy: cannot listen on {listen}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let addr = listener.local_addr().unwrap_or(listen);
        // Before the banner: a SIGTERM sent once it is printed must stop us.
        let shutdown = shutdown_signal();
        eprintln!("toolstream proxy listening on http://{addr}");
        eprintln!("{}", proxy.describe());
        eprintln!(
            "Claude Code: ANTHROPIC_BASE_URL=http://{addr} ANTHROPIC_API_KEY=any claude\n\
             OpenAI SDK:  OPENAI_BASE_URL=http://{addr}/v1 OPENAI_API_KEY=any"
        );
        match proxy.serve(listener, shutdown).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("toolstream proxy: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

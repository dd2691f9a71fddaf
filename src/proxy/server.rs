//! The HTTP server: axum routes, tower-http layers (body limit, timeouts,
//! request ids, tracing), the inbound key check, the concurrency limit,
//! metrics, and graceful shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};
use tower_http::trace::TraceLayer;

use super::config::{ConfigError, Mode, ProxyConfig};
use super::context;
use super::emulate::{self, EmulateSetup};
use super::error::{Api, ProxyError};
use super::retry::{self, Choice};
use super::session::{
    estimate_request_tokens, Checks, Next, Session, SessionOptions, StageFactory,
};
use super::translate::{self, TranslateOptions, UpstreamRequest};
use super::upstream::{ByteStream, Probe, Upstream};
use crate::config::Config;

/// Counters for `/metrics`.
#[derive(Debug, Default)]
struct Metrics {
    requests: [AtomicU64; 3],
    streams_open: AtomicU64,
    tool_calls: AtomicU64,
    rejected_429: AtomicU64,
    errors_4xx: AtomicU64,
    errors_5xx: AtomicU64,
    upstream_cut: AtomicU64,
    bytes_out: AtomicU64,
    validation_retries: AtomicU64,
    usage_estimated: AtomicU64,
    shrunk: AtomicU64,
}

fn api_index(api: Api) -> usize {
    match api {
        Api::Chat => 0,
        Api::Messages => 1,
        Api::Responses => 2,
    }
}

struct Shared {
    cfg: ProxyConfig,
    upstream: Upstream,
    /// The upstream model used when the client's is not mapped.
    default_model: Option<String>,
    /// Parser configuration per upstream model (found once at start-up).
    parse: HashMap<String, Config>,
    inbound_key: Option<Vec<u8>>,
    slots: Arc<Semaphore>,
    metrics: Metrics,
    stage: Option<StageFactory>,
    translate: TranslateOptions,
    ids: AtomicU64,
    probe: Probe,
    /// The upstream's context window, when known (config, else `/props`).
    context: Option<u64>,
    /// The server the upstream is (start-up probe), for constraints.
    server: Option<crate::toolkit::constrain::Server>,
    /// Per upstream model served in emulate mode, its setup (decided at
    /// start-up; models met later are looked up in the registry).
    emulate: HashMap<String, EmulateSetup>,
}

/// A configured proxy, ready to serve.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use toolstream::proxy::{Proxy, ProxyConfig};
/// let cfg = ProxyConfig { upstream: "http://127.0.0.1:8080".into(), ..Default::default() };
/// let proxy = Proxy::start(cfg).await?;
/// let listener = tokio::net::TcpListener::bind(proxy.config().listen).await?;
/// proxy.serve(listener, toolstream::proxy::shutdown_signal()).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Proxy {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("upstream", &self.shared.upstream.base())
            .field("model", &self.shared.default_model)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// Checks the configuration and probes the upstream once (its models
    /// and context window), which decides the defaults.
    pub async fn start(cfg: ProxyConfig) -> Result<Proxy, ConfigError> {
        cfg.validate()?;
        let upstream = Upstream::new(&cfg)?;
        let probe = upstream.probe().await;
        let stage = cfg
            .normalize
            .then(|| super::stage::normalizer_factory(crate::normalize::Options::default(), 64));
        let server = emulate::probe_server(upstream.base()).await;
        Ok(Proxy::with_probe(cfg, upstream, probe, server, stage).await)
    }

    /// Like [`Proxy::start`], with a [`StageFactory`] whose stage runs
    /// between decoder and encoder on every request, in place of the
    /// default normalizer stage ([`super::stage::normalizer_factory`]).
    pub async fn start_with_stage(
        cfg: ProxyConfig,
        stage: StageFactory,
    ) -> Result<Proxy, ConfigError> {
        cfg.validate()?;
        let upstream = Upstream::new(&cfg)?;
        let probe = upstream.probe().await;
        let server = emulate::probe_server(upstream.base()).await;
        Ok(Proxy::with_probe(cfg, upstream, probe, server, Some(stage)).await)
    }

    async fn with_probe(
        cfg: ProxyConfig,
        upstream: Upstream,
        probe: Probe,
        server: Option<crate::toolkit::constrain::Server>,
        stage: Option<StageFactory>,
    ) -> Proxy {
        let default_model = cfg.model.clone().or_else(|| probe.models.first().cloned());
        let mut parse = HashMap::new();
        for m in default_model.iter().chain(cfg.models.values()) {
            parse.insert(m.clone(), Config::for_model(m));
        }
        let inbound_key = cfg
            .api_key_env
            .as_ref()
            .and_then(|n| std::env::var(n).ok())
            .map(String::into_bytes);
        let translate = TranslateOptions {
            max_tool_name: cfg.max_tool_name,
            strip_attribution: cfg.strip_attribution,
        };
        let slots = Arc::new(Semaphore::new(cfg.limits.max_concurrent));
        let context = cfg.context_tokens.or(probe.n_ctx);
        let mut emulated = HashMap::new();
        for m in default_model.iter().chain(cfg.models.values()) {
            if emulated.contains_key(m) {
                continue;
            }
            if let Some(mut setup) = emulate_setup(&cfg, server, m) {
                // Where the prompt goes: asked of the upstream's template
                // once, here (a recognised local server only; a few
                // prompt tokens, one generated).
                if let (Some(kind), None, None) = (server, &probe.error, cfg.emulate.system_in_user)
                {
                    let found = super::probe::probe_system_role(
                        &upstream,
                        kind,
                        m,
                        cfg.limits.first_byte_timeout(),
                    )
                    .await;
                    setup.place_system(found);
                }
                tracing::info!(
                    model = %m,
                    system_in_user = setup.system_in_user,
                    why = %setup.system_placement,
                    "emulation prompt placed"
                );
                emulated.insert(m.clone(), setup);
            }
        }
        Proxy {
            shared: Arc::new(Shared {
                cfg,
                upstream,
                default_model,
                parse,
                inbound_key,
                slots,
                metrics: Metrics::default(),
                stage,
                translate,
                ids: AtomicU64::new(0),
                probe,
                context,
                server,
                emulate: emulated,
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ProxyConfig {
        &self.shared.cfg
    }

    /// What the start-up probe found.
    pub fn probe(&self) -> &Probe {
        &self.shared.probe
    }

    /// What the proxy will do, for the start-up banner.
    pub fn describe(&self) -> String {
        let s = &self.shared;
        let mut out = format!("upstream {}", s.upstream.base());
        match &s.probe.error {
            Some(e) => out.push_str(&format!(" (not reachable at start-up: {e})")),
            None => out.push_str(&format!(" serving {}", s.probe.models.join(", "))),
        }
        if let Some(n) = s.context {
            out.push_str(&format!(", context {n} tokens"));
        }
        match &s.default_model {
            Some(m) => {
                let dialects = &s.parse[m].dialects;
                let d = if dialects.is_empty() {
                    "auto-detected dialect".to_string()
                } else {
                    dialects
                        .iter()
                        .map(|d| d.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.push_str(&format!("\nmodel {m} (in-content calls: {d})"));
            }
            None => out.push_str("\nmodel: the client's own model name, passed on"),
        }
        for (from, to) in &s.cfg.models {
            out.push_str(&format!("\n  {from} -> {to}"));
        }
        out.push_str(&format!("\nmode {}", s.cfg.mode));
        if let Some(k) = s.server {
            out.push_str(&format!(" (upstream server: {})", k.name()));
        }
        match s.default_model.as_ref().and_then(|m| s.emulate.get(m)) {
            Some(e) => out.push_str(&format!(": {}", e.describe())),
            None => out.push_str(
                ": tools forwarded; calls taken from native tool_calls and from content, merged",
            ),
        }
        if s.stage.is_some() {
            out.push_str(&format!(
                "\ncalls checked against the request's tools (normalizer); {} validation retr{} ({}), then {}; loop stop {}",
                s.cfg.retries.validation,
                if s.cfg.retries.validation == 1 { "y" } else { "ies" },
                if s.cfg.retries.validation > 0 { "valid calls sent as each ends, rejected ones asked again" } else { "each call held until its end" },
                match s.cfg.retries.on_invalid {
                    super::config::OnInvalid::Text => "an invalid call becomes a text block",
                    super::config::OnInvalid::Error => "an invalid call ends the reply with an error",
                    super::config::OnInvalid::Forward => "an invalid call is forwarded with a note",
                },
                if s.cfg.loops.stop { "on" } else { "off" },
            ));
        } else {
            out.push_str("\ncalls passed on unchecked (normalize = false)");
        }
        out.push_str(&format!(
            "\ninbound key: {}; attribution line: {}; max {} concurrent requests, body {} bytes",
            if s.inbound_key.is_some() {
                "required"
            } else {
                "none"
            },
            if s.cfg.strip_attribution {
                "stripped"
            } else {
                "kept"
            },
            s.cfg.limits.max_concurrent,
            s.cfg.limits.max_body_bytes,
        ));
        out
    }

    /// The router with every endpoint and layer.
    pub fn router(&self) -> Router {
        let limits = &self.shared.cfg.limits;
        let header_timeout =
            limits.first_byte_timeout() + limits.connect_timeout() + Duration::from_secs(5);
        Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/messages", post(messages))
            .route("/v1/messages/count_tokens", post(count_tokens))
            .route("/v1/responses", post(responses))
            .route("/v1/models", get(models))
            .route("/health", get(health))
            .route("/metrics", get(metrics))
            .route("/", get(root).head(root))
            .fallback(not_found)
            .with_state(self.shared.clone())
            .layer(tower_http::limit::RequestBodyLimitLayer::new(limits.max_body_bytes))
            .layer(RequestBodyTimeoutLayer::new(Duration::from_secs(60)))
            .layer(TimeoutLayer::with_status_code(
                StatusCode::GATEWAY_TIMEOUT,
                header_timeout,
            ))
            .layer(PropagateRequestIdLayer::x_request_id())
            .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
                let id = req
                    .headers()
                    .get("x-request-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                tracing::info_span!("request", id = %id, method = %req.method(), path = %req.uri().path())
            }))
            .layer(SetRequestIdLayer::x_request_id(Counter::default()))
    }

    /// Serves on `listener` until `shutdown` completes; open streams then
    /// get [`crate::proxy::ProxyLimits::shutdown_grace_secs`] to finish.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let grace = self.shared.cfg.limits.shutdown_grace();
        let app = self.router();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        // Small SSE writes go out at once (no Nagle delay behind an unacknowledged one).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY on a client connection: {e}");
            }
        });
        let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
            shutdown.await;
            tracing::info!("shutting down: no new connections; open streams may finish");
            let _ = tx.send(());
        });
        let deadline = async move {
            if rx.await.is_ok() {
                tokio::time::sleep(grace).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            r = serve => r,
            () = deadline => {
                tracing::warn!("grace period over: closing the streams still open");
                Ok(())
            }
        }
    }
}

/// Completes on SIGTERM or Ctrl-C. The handlers are installed when this
/// is called (inside a tokio runtime), not when the future is first polled,
/// so a signal that arrives before the server starts waiting still counts:
/// call it before announcing that the proxy listens.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let ctrl_c = tokio::signal::ctrl_c();
    async move {
        #[cfg(unix)]
        let term = async move {
            match term {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            _ = ctrl_c => {},
            () = term => {},
        }
    }
}

/// Request ids: a process-unique counter (`ts-<n>`), unless the client sent one.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicU64>);

impl MakeRequestId for Counter {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_str(&format!("ts-{n}"))
            .ok()
            .map(RequestId::new)
    }
}

type St = State<Arc<Shared>>;

async fn chat(State(s): St, req: Request) -> Response {
    handle(s, Api::Chat, req).await
}

async fn messages(State(s): St, req: Request) -> Response {
    handle(s, Api::Messages, req).await
}

async fn responses(State(s): St, req: Request) -> Response {
    handle(s, Api::Responses, req).await
}

async fn root() -> StatusCode {
    StatusCode::OK
}

async fn not_found(req: Request) -> Response {
    let api = if req.uri().path().starts_with("/v1/messages") {
        Api::Messages
    } else {
        Api::Chat
    };
    let mut r = ProxyError::BadRequest(format!(
        "no route for {} {}",
        req.method(),
        req.uri().path()
    ))
    .response(api);
    *r.status_mut() = if req.method() == Method::GET || req.method() == Method::POST {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::METHOD_NOT_ALLOWED
    };
    r
}

/// The client's key, from `x-api-key` or `Authorization: Bearer`.
fn client_key(h: &HeaderMap) -> Option<&str> {
    if let Some(k) = h.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(k);
    }
    h.get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
}

fn authorized(s: &Shared, h: &HeaderMap) -> bool {
    match &s.inbound_key {
        None => true,
        Some(want) => {
            let got = client_key(h).unwrap_or("").as_bytes();
            // Constant time in the key's content; lengths differ only for a wrong key.
            bool::from(got.ct_eq(want.as_slice()))
        }
    }
}

async fn read_body(s: &Shared, req: Request) -> Result<(HeaderMap, Value), ProxyError> {
    let (parts, body) = req.into_parts();
    let max = s.cfg.limits.max_body_bytes;
    let bytes = axum::body::to_bytes(body, max).await.map_err(|e| {
        let text = format!("{e}");
        let source = std::error::Error::source(&e)
            .map(|x| x.to_string())
            .unwrap_or_default();
        if text.contains("length limit") || source.contains("length limit") {
            ProxyError::TooLarge(max)
        } else {
            ProxyError::BadRequest(format!("could not read the request body: {text}"))
        }
    })?;
    let v = serde_json::from_slice(&bytes)
        .map_err(|e| ProxyError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    Ok((parts.headers, v))
}

fn translate(s: &Shared, api: Api, body: Value) -> Result<UpstreamRequest, ProxyError> {
    match api {
        Api::Chat => translate::from_chat(body, &s.translate),
        Api::Messages => translate::from_messages(body, &s.translate),
        Api::Responses => translate::from_responses(body, &s.translate),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn new_id(s: &Shared, api: Api) -> String {
    let n = s.ids.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let prefix = match api {
        Api::Chat => "chatcmpl-",
        Api::Messages => "msg_",
        Api::Responses => "resp_",
    };
    format!("{prefix}{:x}{nanos:08x}{n:x}", now())
}

fn fail(s: &Shared, api: Api, e: ProxyError) -> Response {
    let status = e.status();
    if status.is_server_error() {
        s.metrics.errors_5xx.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(error = %e, status = status.as_u16(), "request failed");
    } else {
        s.metrics.errors_4xx.fetch_add(1, Ordering::Relaxed);
        tracing::info!(error = %e, status = status.as_u16(), "request rejected");
    }
    e.response(api)
}

async fn handle(s: Arc<Shared>, api: Api, req: Request) -> Response {
    s.metrics.requests[api_index(api)].fetch_add(1, Ordering::Relaxed);
    if !authorized(&s, req.headers()) {
        return fail(&s, api, ProxyError::Unauthorized);
    }
    let Ok(permit) = s.slots.clone().try_acquire_owned() else {
        s.metrics.rejected_429.fetch_add(1, Ordering::Relaxed);
        return fail(
            &s,
            api,
            ProxyError::Overloaded {
                retry_after: s.cfg.limits.retry_after_secs,
            },
        );
    };
    let (headers, body) = match read_body(&s, req).await {
        Ok(x) => x,
        Err(e) => return fail(&s, api, e),
    };
    let mut up = match translate(&s, api, body) {
        Ok(u) => u,
        Err(e) => return fail(&s, api, e),
    };
    let model = s
        .cfg
        .upstream_model(&up.client_model)
        .map(str::to_string)
        .or_else(|| s.default_model.clone())
        .unwrap_or_else(|| up.client_model.clone());
    up.body.insert("model".into(), Value::String(model.clone()));
    let setup = s
        .emulate
        .get(&model)
        .cloned()
        .or_else(|| emulate_setup(&s.cfg, s.server, &model));
    let user_text =
        crate::toolkit::search::last_user_text(up.body.get("messages").unwrap_or(&Value::Null));
    let key = if s.cfg.forward_client_key {
        client_key(&headers).map(str::to_string)
    } else {
        None
    };
    // Two-step decoding: the tool's name first, then its arguments.
    let picked = match setup
        .as_ref()
        .and_then(|setup| emulate::name_step(&up.body, setup))
    {
        Some(step) => step.run(&s.upstream, key.as_deref()).await,
        None => None,
    };
    let served_required = setup.as_ref().is_some_and(|x| {
        !up.tools.specs.is_empty() && emulate::auto_served_as_required(&up.body, x)
    });
    // `original`: the request as the client sent it (translated; shrunk if
    // it had to be). An emulated retry is built on it and rewritten again,
    // so the failed turn and its feedback reach the model as text like
    // every earlier call.
    let (emulated, original, shrunk) =
        match fit(&s, &mut up.body, setup.as_ref(), picked.as_deref()) {
            Ok(x) => x,
            Err(e) => return fail(&s, api, e),
        };
    tracing::info!(
        api = api.name(),
        client_model = %up.client_model,
        model = %model,
        stream = up.stream,
        tools = up.tools.specs.len(),
        dropped_tools = up.tools.dropped.len(),
        "forwarding"
    );
    let bytes = match s.upstream.chat(&up.body, key.as_deref()).await {
        Ok(b) => b,
        Err(e) => return fail(&s, api, e),
    };
    let retry = match (&setup, original) {
        (Some(setup), Some(original)) => emulated_retry(setup.clone(), original),
        _ => retry::native(),
    };
    let mut checks = checks_for(&s, &up, retry);
    if let Some(setup) = &setup {
        checks.retries = setup.retries(checks.retries);
        // A prose reply where emulation asked for a call is retried too.
        if served_required && emulated.is_some() && checks.choice == Choice::Auto {
            checks.choice = Choice::Required;
        }
    }
    let tools = Arc::new(up.tools);
    let parse = if let Some(r) = &emulated {
        r.parse.clone()
    } else if tools.specs.is_empty() || up.body.get("tool_choice") == Some(&json!("none")) {
        None
    } else {
        Some(
            s.parse
                .get(&model)
                .cloned()
                .unwrap_or_else(|| Config::for_model(&model)),
        )
    };
    let mut stage = s.stage.as_ref().and_then(|f| f(&tools));
    if let Some(r) =
        emulated.filter(|r| !r.examples.is_empty() && setup.as_ref().is_some_and(|x| x.echo_filter))
    {
        let echo: Box<dyn super::session::CallStage> =
            Box::new(emulate::EchoFilter::new(r.examples, user_text));
        stage = Some(match stage {
            Some(next) => Box::new(emulate::Chain(vec![echo, next])),
            None => echo,
        });
    }
    let client_model = if up.client_model.is_empty() {
        model.clone()
    } else {
        up.client_model.clone()
    };
    let opts = SessionOptions {
        api,
        stream: up.stream,
        model: client_model.clone(),
        id: new_id(&s, api),
        created: now(),
        parse,
        tools: tools.clone(),
        checks,
    };
    let session = Session::new(opts.clone(), stage);
    let mut r = if up.stream {
        stream_reply(s, session, bytes, key, permit)
    } else {
        collect_reply(s, api, session, bytes, key, opts, permit).await
    };
    if let Some(v) = shrunk.and_then(|x| HeaderValue::from_str(&x.header()).ok()) {
        r.headers_mut()
            .insert(header::HeaderName::from_static("x-toolstream-context"), v);
    }
    r
}

/// The request as the upstream gets it: rewritten for emulation (when
/// `setup`), and fitted into the context window when it is known — shrunk
/// with the toolkit's context optimisation ([`context`]) when it leaves no
/// room for the reply, refused with a 400 when even the shrunk request
/// exceeds the window. Returns the emulation's rewrite, the request as the
/// client sent it (translated, shrunk; an emulated retry is built on it),
/// and what shrinking did. `picked` is the tool two-step decoding chose
/// (the emulation prompt then offers that tool alone).
#[allow(clippy::type_complexity)]
fn fit(
    s: &Shared,
    body: &mut Map<String, Value>,
    setup: Option<&EmulateSetup>,
    picked: Option<&str>,
) -> Result<
    (
        Option<emulate::Rewritten>,
        Option<Map<String, Value>>,
        Option<context::Shrunk>,
    ),
    ProxyError,
> {
    let client = body.clone();
    let rewrite = |b: &mut Map<String, Value>| match setup {
        Some(setup) => emulate::rewrite_for(b, setup, picked).map(Some),
        None => Ok(None),
    };
    let mut emulated = rewrite(body)?;
    let Some(window) = s.context else {
        return Ok((emulated, setup.map(|_| client), None));
    };
    let opts = &s.cfg.shrink;
    let target = context::target(&client, window, opts);
    let mut need = estimate_request_tokens(body);
    let mut report = context::Shrunk {
        before: need,
        target,
        ..Default::default()
    };
    let mut pre = client;
    // A few rounds: in emulate mode the prompt is re-rendered from the
    // shrunk request, so each round measures what the upstream would get.
    let mut rounds = 0;
    while opts.enabled && need > target && rounds < 4 {
        rounds += 1;
        if !context::shrink(&mut pre, need - target, window, opts, &mut report) {
            break;
        }
        *body = pre.clone();
        emulated = rewrite(body)?;
        need = estimate_request_tokens(body);
    }
    report.after = need;
    if need > window {
        let what = if report.changed() {
            format!(
                " even after shrinking it (from about {} tokens: {})",
                report.before,
                report.header()
            )
        } else if opts.enabled {
            " and nothing in it could be shrunk".to_string()
        } else {
            " (shrinking is off: [shrink] enabled = false)".to_string()
        };
        return Err(ProxyError::BadRequest(format!(
            "the request needs about {need} tokens (estimate: one per 4 bytes of its messages and tools, plus one per line break), more than the upstream's context window of {window} tokens{what}"
        )));
    }
    let shrunk = report.changed().then(|| {
        s.metrics.shrunk.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            before = report.before,
            after = report.after,
            target = report.target,
            window,
            tools_dropped = ?report.tools_dropped,
            tools_shortened = report.tools_shortened,
            contents_cut = report.contents_cut.len(),
            bytes_cut = report.bytes_cut,
            "request shrunk to fit the upstream's context window"
        );
        report
    });
    Ok((emulated, setup.map(|_| pre), shrunk))
}

/// What a request's reply is checked for: the request's `tool_choice`, the
/// loop history of its messages, the configured retries. Retries and
/// checks need the normalizer's verdicts, so without a stage there are none.
fn checks_for(s: &Shared, up: &UpstreamRequest, retry: retry::RetryBuilder) -> Checks {
    if s.stage.is_none() || up.tools.specs.is_empty() {
        return Checks::default();
    }
    let l = &s.cfg.loops;
    let loops = l
        .stop
        .then_some(crate::toolkit::planning::loops::LoopOptions {
            max_repeats: l.max_repeats,
            max_failures: l.max_failures,
            ping_pong_pairs: l.ping_pong_pairs,
            // The proxy stops repeated calls, not long tasks.
            max_rounds: usize::MAX,
        });
    let history = match (&loops, up.body.get("messages")) {
        (Some(_), Some(m)) => crate::toolkit::planning::loops::rounds_from_messages(m),
        _ => Vec::new(),
    };
    Checks {
        retries: s.cfg.retries.validation,
        on_invalid: s.cfg.retries.on_invalid,
        choice: Choice::of(&up.body, &up.tools),
        loops,
        history,
        request: Arc::new(up.body.clone()),
        retry,
    }
}

/// The emulate-mode [`retry::RetryBuilder`]: the native retry request built
/// on the client's own request (each turn asked again as an assistant
/// message with its calls, one `tool` message of feedback per call), then rewritten
/// for emulation like the first attempt, so the upstream sees the failed
/// calls and the feedback as text in the prompt's own format.
fn emulated_retry(setup: EmulateSetup, original: Map<String, Value>) -> retry::RetryBuilder {
    // A copy constraint takes its spans from the client's last turn, not
    // from the retry's feedback message.
    let user = original.get("messages").and_then(emulate::copy_source);
    Arc::new(move |_rewritten, attempts| {
        let mut body = retry::fold_attempts(&original, attempts);
        match emulate::rewrite_copying(&mut body, &setup, None, user.as_deref()) {
            Ok(_) => body,
            // The first attempt was rewritten from the same request, so
            // this cannot fail on the tools; keep the request usable anyway.
            Err(_) => retry::fold_attempts(&original, attempts),
        }
    })
}

/// After an upstream reply ended: the next reply's bytes when the session
/// asks again (a validation retry), else `None` (the client's reply is
/// complete; if the retry request failed, the session has released the
/// previous reply).
async fn next_reply(
    s: &Shared,
    session: &mut Session,
    key: Option<&str>,
    out: &mut Vec<u8>,
) -> Option<ByteStream> {
    match session.finish(out) {
        Next::Done => None,
        Next::Retry(body) => {
            s.metrics.validation_retries.fetch_add(1, Ordering::Relaxed);
            match s.upstream.chat(&body, key).await {
                Ok(b) => Some(b),
                Err(e) => {
                    session.give_up(&e.to_string(), out);
                    None
                }
            }
        }
    }
}

/// The emulation setup for an upstream model, when its requests are
/// emulated: `--mode emulate`, or `auto` for a model the registry says has
/// no native tools.
fn emulate_setup(
    cfg: &ProxyConfig,
    server: Option<crate::toolkit::constrain::Server>,
    model: &str,
) -> Option<EmulateSetup> {
    let info = emulate::lookup(model);
    let mode = match cfg.mode {
        Mode::Auto => emulate::choose_mode(&info),
        m => m,
    };
    (mode == Mode::Emulate).then(|| EmulateSetup::for_model(&info, server, &cfg.emulate))
}

/// Reads the next upstream chunk within the idle timeout.
async fn next_chunk(bytes: &mut ByteStream, idle: Duration) -> Result<Option<Bytes>, String> {
    match tokio::time::timeout(idle, bytes.next()).await {
        Err(_) => Err(format!("no data for {} s", idle.as_secs())),
        Ok(None) => Ok(None),
        Ok(Some(Ok(b))) => Ok(Some(b)),
        Ok(Some(Err(e))) => Err(format!("read failed: {e}")),
    }
}

struct StreamState {
    shared: Arc<Shared>,
    session: Session,
    bytes: ByteStream,
    key: Option<String>,
    done: bool,
    _permit: OwnedSemaphorePermit,
}

impl Drop for StreamState {
    fn drop(&mut self) {
        let m = &self.shared.metrics;
        m.streams_open.fetch_sub(1, Ordering::Relaxed);
        m.tool_calls
            .fetch_add(self.session.calls() as u64, Ordering::Relaxed);
        if self.session.usage_estimated() {
            m.usage_estimated.fetch_add(1, Ordering::Relaxed);
        }
        if !self.done {
            tracing::info!("client went away: upstream request cancelled");
        }
    }
}

fn stream_reply(
    s: Arc<Shared>,
    session: Session,
    bytes: ByteStream,
    key: Option<String>,
    permit: OwnedSemaphorePermit,
) -> Response {
    s.metrics.streams_open.fetch_add(1, Ordering::Relaxed);
    let st = StreamState {
        shared: s,
        session,
        bytes,
        key,
        done: false,
        _permit: permit,
    };
    // Dropping the body (the client went away) drops the upstream stream,
    // which closes the upstream connection.
    let body = futures_util::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        let idle = st.shared.cfg.limits.idle_timeout();
        let mut out = Vec::new();
        loop {
            match next_chunk(&mut st.bytes, idle).await {
                Ok(Some(b)) => st.session.feed(b, &mut out),
                Ok(None) => {
                    let shared = st.shared.clone();
                    match next_reply(&shared, &mut st.session, st.key.as_deref(), &mut out).await {
                        Some(b) => st.bytes = b,
                        None => st.done = true,
                    }
                }
                Err(cause) => {
                    st.shared
                        .metrics
                        .upstream_cut
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(cause = %cause, "upstream stream cut");
                    st.session.cut(&cause, &mut out);
                    st.done = true;
                }
            }
            if !out.is_empty() || st.done {
                break;
            }
        }
        st.shared
            .metrics
            .bytes_out
            .fetch_add(out.len() as u64, Ordering::Relaxed);
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(out)), st))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

async fn collect_reply(
    s: Arc<Shared>,
    api: Api,
    mut session: Session,
    mut bytes: ByteStream,
    key: Option<String>,
    opts: SessionOptions,
    _permit: OwnedSemaphorePermit,
) -> Response {
    let idle = s.cfg.limits.idle_timeout();
    let mut sink = Vec::new();
    loop {
        match next_chunk(&mut bytes, idle).await {
            Ok(Some(b)) => session.feed(b, &mut sink),
            Ok(None) => match next_reply(&s, &mut session, key.as_deref(), &mut sink).await {
                Some(b) => bytes = b,
                None => break,
            },
            Err(cause) => {
                s.metrics.upstream_cut.fetch_add(1, Ordering::Relaxed);
                session.cut(&cause, &mut sink);
                break;
            }
        }
    }
    s.metrics
        .tool_calls
        .fetch_add(session.calls() as u64, Ordering::Relaxed);
    let reply = session.reply();
    if let Some(e) = &reply.error {
        return fail(&s, api, ProxyError::UpstreamFailed(e.clone()));
    }
    let body = match api {
        Api::Chat => reply.to_chat(&opts.id, &opts.model, opts.created),
        Api::Messages => reply.to_messages(&opts.id, &opts.model),
        Api::Responses => {
            reply.to_responses(&opts.id, &opts.model, opts.created, &opts.tools.custom)
        }
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    s.metrics
        .bytes_out
        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    let mut r = ([(header::CONTENT_TYPE, "application/json")], bytes).into_response();
    if session.usage_estimated() {
        s.metrics.usage_estimated.fetch_add(1, Ordering::Relaxed);
        r.headers_mut().insert(
            header::HeaderName::from_static("x-toolstream-usage"),
            HeaderValue::from_static("estimated"),
        );
    }
    if session.attempts() > 1 {
        if let Ok(v) = HeaderValue::from_str(&session.attempts().to_string()) {
            r.headers_mut()
                .insert(header::HeaderName::from_static("x-toolstream-attempts"), v);
        }
    }
    r
}

/// `count_tokens`: an estimate ([`estimate_request_tokens`]: one token per
/// 4 bytes of the request as the upstream would see it — messages, system
/// prompt and tools, as JSON — plus one per line break). Local servers
/// have no counting endpoint in the OpenAI API; the estimate errs high for
/// English and code.
async fn count_tokens(State(s): St, req: Request) -> Response {
    let api = Api::Messages;
    if !authorized(&s, req.headers()) {
        return fail(&s, api, ProxyError::Unauthorized);
    }
    let body = match read_body(&s, req).await {
        Ok((_, b)) => b,
        Err(e) => return fail(&s, api, e),
    };
    let up = match translate::from_messages(body, &s.translate) {
        Ok(u) => u,
        Err(e) => return fail(&s, api, e),
    };
    let tokens = estimate_request_tokens(&up.body);
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&json!({"input_tokens": tokens})).unwrap_or_default(),
    )
        .into_response()
}

async fn models(State(s): St, req: Request) -> Response {
    let anthropic = req.headers().contains_key("anthropic-version");
    let api = if anthropic { Api::Messages } else { Api::Chat };
    if !authorized(&s, req.headers()) {
        return fail(&s, api, ProxyError::Unauthorized);
    }
    let mut ids: Vec<String> = s.cfg.models.keys().cloned().collect();
    for m in s.default_model.iter().chain(s.probe.models.iter()) {
        if !ids.contains(m) {
            ids.push(m.clone());
        }
    }
    let data: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"id": id, "object": "model", "type": "model", "display_name": id,
                   "created": 0, "created_at": "1970-01-01T00:00:00Z", "owned_by": "toolstream"})
        })
        .collect();
    let body = json!({
        "object": "list", "data": data, "has_more": false,
        "first_id": ids.first(), "last_id": ids.last(),
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&body).unwrap_or_default(),
    )
        .into_response()
}

async fn health(State(s): St) -> Response {
    let body = json!({
        "status": "ok",
        "upstream": s.upstream.base(),
        "model": s.default_model,
        "mode": s.cfg.mode.name(),
        "emulated": s.default_model.as_ref().is_some_and(|m| s.emulate.contains_key(m)),
        "streams_open": s.metrics.streams_open.load(Ordering::Relaxed),
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&body).unwrap_or_default(),
    )
        .into_response()
}

async fn metrics(State(s): St) -> Response {
    let m = &s.metrics;
    let mut out = String::new();
    out.push_str("# HELP toolstream_requests_total Requests received, by client API.\n# TYPE toolstream_requests_total counter\n");
    for api in [Api::Chat, Api::Messages, Api::Responses] {
        out.push_str(&format!(
            "toolstream_requests_total{{api=\"{}\"}} {}\n",
            api.name(),
            m.requests[api_index(api)].load(Ordering::Relaxed)
        ));
    }
    let rows: [(&str, &str, &str, &AtomicU64); 10] = [
        (
            "toolstream_streams_open",
            "gauge",
            "Streaming replies in progress.",
            &m.streams_open,
        ),
        (
            "toolstream_tool_calls_total",
            "counter",
            "Tool calls passed to clients.",
            &m.tool_calls,
        ),
        (
            "toolstream_rejected_total",
            "counter",
            "Requests refused by the concurrency limit (429).",
            &m.rejected_429,
        ),
        (
            "toolstream_client_errors_total",
            "counter",
            "Requests answered with a 4xx.",
            &m.errors_4xx,
        ),
        (
            "toolstream_server_errors_total",
            "counter",
            "Requests answered with a 5xx.",
            &m.errors_5xx,
        ),
        (
            "toolstream_upstream_cut_total",
            "counter",
            "Upstream replies cut mid-stream.",
            &m.upstream_cut,
        ),
        (
            "toolstream_bytes_out_total",
            "counter",
            "Reply bytes sent to clients.",
            &m.bytes_out,
        ),
        (
            "toolstream_validation_retries_total",
            "counter",
            "Upstream requests made again with feedback (invalid call, missing required call, loop).",
            &m.validation_retries,
        ),
        (
            "toolstream_usage_estimated_total",
            "counter",
            "Replies whose usage was estimated (the upstream reported none).",
            &m.usage_estimated,
        ),
        (
            "toolstream_requests_shrunk_total",
            "counter",
            "Requests shrunk to fit the upstream's context window.",
            &m.shrunk,
        ),
    ];
    for (name, ty, help, v) in rows {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {ty}\n{name} {}\n",
            v.load(Ordering::Relaxed)
        ));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

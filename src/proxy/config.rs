//! The proxy's configuration: command-line flags over a TOML file over
//! defaults.
//!
//! ```toml
//! upstream = "http://127.0.0.1:8080"
//! listen = "127.0.0.1:4000"
//! model = "SmolLM2-135M-Instruct"      # the upstream model (default: the first of its /v1/models)
//! mode = "native"                       # native | emulate | auto
//! api_key_env = "TOOLSTREAM_PROXY_KEY"  # inbound key (Authorization: Bearer / x-api-key)
//! upstream_key_env = "UPSTREAM_KEY"     # sent upstream as Authorization: Bearer
//! forward_client_key = false            # send the client's own key upstream instead
//! strip_attribution = true              # drop Claude Code's per-request attribution line
//! max_tool_name = 64                    # longer tool names are shortened and mapped back
//! context_tokens = 8192                 # the upstream's context window (default: llama.cpp's /props)
//!
//! [models]                              # client model name -> upstream model
//! "claude-sonnet-4-5" = "qwen2.5-coder-7b"
//! "gpt-5-codex" = "qwen2.5-coder-7b"
//!
//! [limits]
//! max_body_bytes = 33554432
//! max_concurrent = 512
//! connect_timeout_secs = 10
//! first_byte_timeout_secs = 600
//! idle_timeout_secs = 300
//! shutdown_grace_secs = 30
//!
//! [retries]
//! upstream = 1                          # retries of a connection refused / 502 / 503 before any byte
//! validation = 1                        # re-asks of the model, with feedback, for an invalid call,
//!                                       # a missing required call, or a repeated call
//! on_invalid = "text"                   # when retries are spent: text | error | forward
//!
//! [loops]                               # stop a call the conversation already made (toolkit loop detection)
//! stop = true
//! max_repeats = 4                       # the same call (name + arguments) this often since the last user turn
//! max_failures = 3                      # the same call failing this often
//! ping_pong_pairs = 3                   # A, B, A, B… this many pairs
//! ```
//!
//! `normalize = false` (top level) turns the normalizer off: calls reach the
//! client as the parser produced them, with no validation and no retry.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

/// How the proxy gets tool calls out of the upstream model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Tools are forwarded upstream; calls are taken from the upstream's
    /// native `tool_calls` and from its text content (in-band calls the
    /// server left unparsed), merged and deduplicated.
    Native,
    /// Tools are removed from the upstream request and emulated with the
    /// toolkit's prompt (and a grammar where the upstream takes one); calls
    /// are parsed out of the text (see [`crate::proxy::emulate`]).
    Emulate,
    /// Picks per model: `native` for models the registry says call tools
    /// natively, else `emulate`.
    #[default]
    Auto,
}

impl Mode {
    /// The mode's name.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Emulate => "emulate",
            Mode::Auto => "auto",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Mode {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "native" => Ok(Mode::Native),
            "emulate" => Ok(Mode::Emulate),
            "auto" => Ok(Mode::Auto),
            other => Err(ConfigError::Invalid(format!(
                "unknown mode `{other}` (native, emulate, auto)"
            ))),
        }
    }
}

/// Per-request and per-process limits.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProxyLimits {
    /// Largest request body accepted (413 above it).
    pub max_body_bytes: usize,
    /// Requests served at once (429 with `retry-after` above it); a
    /// streaming request holds its slot until its stream ends.
    pub max_concurrent: usize,
    /// Seconds to connect to the upstream (504 after).
    pub connect_timeout_secs: u64,
    /// Seconds until the upstream's response headers (504 after).
    pub first_byte_timeout_secs: u64,
    /// Seconds without a byte from the upstream while a reply streams
    /// (the stream is then cut and reported as such).
    pub idle_timeout_secs: u64,
    /// Seconds open streams get to finish after SIGTERM / Ctrl-C.
    pub shutdown_grace_secs: u64,
    /// The `retry-after` seconds sent with a 429.
    pub retry_after_secs: u64,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        ProxyLimits {
            max_body_bytes: 32 << 20,
            max_concurrent: 512,
            connect_timeout_secs: 10,
            first_byte_timeout_secs: 600,
            idle_timeout_secs: 300,
            shutdown_grace_secs: 30,
            retry_after_secs: 1,
        }
    }
}

impl ProxyLimits {
    /// [`ProxyLimits::connect_timeout_secs`] as a duration.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs(self.connect_timeout_secs)
    }
    /// [`ProxyLimits::first_byte_timeout_secs`] as a duration.
    pub fn first_byte_timeout(&self) -> Duration {
        Duration::from_secs(self.first_byte_timeout_secs)
    }
    /// [`ProxyLimits::idle_timeout_secs`] as a duration.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs)
    }
    /// [`ProxyLimits::shutdown_grace_secs`] as a duration.
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}

/// Retry policy.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Retries {
    /// Extra attempts when the upstream refuses the connection or answers
    /// 502/503 before any byte of the reply was sent to the client.
    pub upstream: u32,
    /// Extra upstream requests, each carrying feedback, when a reply has a
    /// call that is invalid after repair, lacks the call `tool_choice`
    /// requires, or repeats a call (see [`Loops`]). Valid calls are sent as
    /// soon as each ends; only rejected ones wait for the retry.
    pub validation: u32,
    /// What the client gets for a call still invalid when retries are spent.
    pub on_invalid: OnInvalid,
}

impl Default for Retries {
    fn default() -> Self {
        Retries {
            upstream: 1,
            validation: 1,
            on_invalid: OnInvalid::Text,
        }
    }
}

/// What happens to a call that is still invalid once validation retries
/// are spent. Never a silently wrong call: the client is always told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnInvalid {
    /// The call is not sent; a text block names it, shows its arguments
    /// and lists its problems.
    #[default]
    Text,
    /// The reply ends with an error in the client's format (streaming: an
    /// error event after what was sent; otherwise a 502).
    Error,
    /// The call is sent as repaired, followed by a text block listing its
    /// problems (for clients that validate calls themselves).
    Forward,
}

impl std::str::FromStr for OnInvalid {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(OnInvalid::Text),
            "error" => Ok(OnInvalid::Error),
            "forward" => Ok(OnInvalid::Forward),
            other => Err(ConfigError::Invalid(format!(
                "unknown on_invalid `{other}` (text, error, forward)"
            ))),
        }
    }
}

/// Loop stop: a call the conversation shows the model already made again
/// and again (the toolkit's loop detection, run on each request's history,
/// which needs no state in the proxy) is not forwarded; the model is asked
/// again with the detector's message while validation retries are left,
/// and the client gets that message as text after that.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Loops {
    /// Stop repeated calls (on by default).
    pub stop: bool,
    /// The same call (name and arguments) this many times since the last
    /// user turn, the new one included, is a loop. Agents re-run read-only
    /// commands between edits, hence 4 rather than the toolkit's 3.
    pub max_repeats: usize,
    /// The same call failing this many times is a loop.
    pub max_failures: usize,
    /// This many A, B alternations of two single-call rounds is a loop.
    pub ping_pong_pairs: usize,
}

impl Default for Loops {
    fn default() -> Self {
        Loops {
            stop: true,
            max_repeats: 4,
            max_failures: 3,
            ping_pong_pairs: 3,
        }
    }
}

/// The whole configuration.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProxyConfig {
    /// The upstream's base URL (`http://host:port`, with or without `/v1`).
    pub upstream: String,
    /// Where to listen (loopback by default).
    pub listen: SocketAddr,
    /// The upstream model to use when the client's model is not mapped
    /// (default: the first model the upstream lists).
    pub model: Option<String>,
    /// Client model name → upstream model.
    pub models: BTreeMap<String, String>,
    /// How calls are obtained.
    pub mode: Mode,
    /// Environment variable holding the key clients must present.
    pub api_key_env: Option<String>,
    /// Environment variable holding the key sent to the upstream.
    pub upstream_key_env: Option<String>,
    /// Send the client's own `Authorization` / `x-api-key` upstream (off by
    /// default: a client's credentials go upstream only when configured).
    pub forward_client_key: bool,
    /// Remove the per-request attribution line Claude Code puts at the top
    /// of its system prompt (`x-anthropic-billing-header: …`), which changes
    /// every turn and defeats the upstream's prompt cache.
    pub strip_attribution: bool,
    /// Longest tool name the upstream accepts; longer names are shortened
    /// and mapped back in the reply.
    pub max_tool_name: usize,
    /// The upstream's context window in tokens (default: what llama.cpp's
    /// `/props` reports at start-up; unknown otherwise). A request whose
    /// estimated size (one token per 4 bytes of its messages and tools as
    /// JSON) leaves no room for the reply is shrunk ([`Self::shrink`]); one
    /// that still exceeds the window gets a 400 in the client's format
    /// instead of being sent.
    pub context_tokens: Option<u64>,
    /// Limits.
    pub limits: ProxyLimits,
    /// Retries.
    pub retries: Retries,
    /// Every call is checked and repaired against the request's tools by
    /// the normalizer before it reaches the client (on by default).
    pub normalize: bool,
    /// Loop stop.
    pub loops: Loops,
    /// Overrides of the emulation defaults (`[emulate]`).
    pub emulate: super::emulate::EmulateConfig,
    /// Shrinking requests over the context window (`[shrink]`).
    pub shrink: super::context::Shrink,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            upstream: String::new(),
            listen: SocketAddr::from(([127, 0, 0, 1], 4000)),
            model: None,
            models: BTreeMap::new(),
            mode: Mode::Auto,
            api_key_env: None,
            upstream_key_env: None,
            forward_client_key: false,
            strip_attribution: true,
            max_tool_name: 64,
            context_tokens: None,
            limits: ProxyLimits::default(),
            retries: Retries::default(),
            normalize: true,
            loops: Loops::default(),
            emulate: Default::default(),
            shrink: Default::default(),
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// The config file could not be read.
    Read(std::io::Error),
    /// The config file is not valid TOML for this schema.
    Toml(toml::de::Error),
    /// A value is out of range or inconsistent.
    Invalid(String),
    /// A named environment variable is not set.
    MissingEnv(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Read(e) => write!(f, "cannot read the config file: {e}"),
            ConfigError::Toml(e) => write!(f, "bad config file: {e}"),
            ConfigError::Invalid(m) => f.write_str(m),
            ConfigError::MissingEnv(n) => {
                write!(
                    f,
                    "environment variable `{n}` (named in the config) is not set"
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl ProxyConfig {
    /// Reads a TOML file.
    pub fn from_file(path: &Path) -> Result<ProxyConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(ConfigError::Read)?;
        ProxyConfig::from_toml(&text)
    }

    /// Parses TOML text.
    ///
    /// ```
    /// use toolstream::proxy::ProxyConfig;
    /// let c = ProxyConfig::from_toml("upstream = \"http://127.0.0.1:8080\"\n[models]\nclaude = \"qwen\"\n").unwrap();
    /// assert_eq!(c.upstream_model("claude"), Some("qwen"));
    /// assert_eq!(c.listen.to_string(), "127.0.0.1:4000");
    /// ```
    pub fn from_toml(text: &str) -> Result<ProxyConfig, ConfigError> {
        toml::from_str(text).map_err(ConfigError::Toml)
    }

    /// Checks the configuration before serving.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.upstream.is_empty() {
            return Err(ConfigError::Invalid(
                "no upstream: pass --upstream URL (or `upstream` in the config file)".into(),
            ));
        }
        let u = self.upstream.to_ascii_lowercase();
        if !(u.starts_with("http://") || u.starts_with("https://")) {
            return Err(ConfigError::Invalid(format!(
                "the upstream `{}` is not an http:// or https:// URL",
                self.upstream
            )));
        }
        if self.max_tool_name < 16 {
            return Err(ConfigError::Invalid(
                "max_tool_name must be at least 16".into(),
            ));
        }
        if self.limits.max_concurrent == 0 {
            return Err(ConfigError::Invalid(
                "limits.max_concurrent must be at least 1".into(),
            ));
        }
        for name in [&self.api_key_env, &self.upstream_key_env]
            .into_iter()
            .flatten()
        {
            if std::env::var_os(name).is_none() {
                return Err(ConfigError::MissingEnv(name.clone()));
            }
        }
        Ok(())
    }

    /// The upstream model a client's model name maps to, if mapped.
    pub fn upstream_model(&self, client_model: &str) -> Option<&str> {
        self.models.get(client_model).map(String::as_str)
    }

    /// The upstream base URL without a trailing `/` or `/v1`.
    pub fn upstream_base(&self) -> &str {
        let b = self.upstream.trim_end_matches('/');
        b.strip_suffix("/v1").unwrap_or(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_round() {
        let c = ProxyConfig::from_toml(
            "upstream = \"http://x:1/v1/\"\nmode = \"native\"\n[limits]\nmax_concurrent = 3\n",
        )
        .unwrap();
        assert_eq!(c.upstream_base(), "http://x:1");
        assert_eq!(c.mode, Mode::Native);
        assert_eq!(c.limits.max_concurrent, 3);
        assert_eq!(c.limits.idle_timeout_secs, 300);
        c.validate().unwrap();
    }

    #[test]
    fn unknown_keys_are_errors_and_emulate_is_valid() {
        assert!(matches!(
            ProxyConfig::from_toml("upstrem = \"x\""),
            Err(ConfigError::Toml(_))
        ));
        let c = ProxyConfig {
            upstream: "http://x".into(),
            mode: Mode::Emulate,
            ..Default::default()
        };
        c.validate().unwrap();
        let c = ProxyConfig {
            upstream: "ftp://x".into(),
            ..Default::default()
        };
        assert!(c.validate().is_err());
    }
}

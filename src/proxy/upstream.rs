//! The upstream client: one fixed OpenAI-compatible server (no per-request
//! upstream), reached with reqwest over rustls.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Map, Value};

use super::config::{ConfigError, ProxyConfig};
use super::error::ProxyError;

/// A stream of the upstream's reply bytes.
pub type ByteStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// What the start-up probe learned about the upstream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Probe {
    /// The models `/v1/models` lists.
    pub models: Vec<String>,
    /// The context window (llama.cpp `/props`), when known.
    pub n_ctx: Option<u64>,
    /// What went wrong, when the upstream could not be asked.
    pub error: Option<String>,
}

/// The upstream.
#[derive(Clone, Debug)]
pub struct Upstream {
    client: reqwest::Client,
    base: String,
    key: Option<String>,
    first_byte: Duration,
    retries: u32,
}

impl Upstream {
    /// A client for the configured upstream.
    pub fn new(cfg: &ProxyConfig) -> Result<Upstream, ConfigError> {
        let client = reqwest::Client::builder()
            .connect_timeout(cfg.limits.connect_timeout())
            .pool_idle_timeout(Duration::from_secs(90))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| ConfigError::Invalid(format!("cannot build the HTTP client: {e}")))?;
        let key = match &cfg.upstream_key_env {
            Some(n) => Some(std::env::var(n).map_err(|_| ConfigError::MissingEnv(n.clone()))?),
            None => None,
        };
        Ok(Upstream {
            client,
            base: cfg.upstream_base().to_string(),
            key,
            first_byte: cfg.limits.first_byte_timeout(),
            retries: cfg.retries.upstream,
        })
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn auth(
        &self,
        req: reqwest::RequestBuilder,
        client_key: Option<&str>,
    ) -> reqwest::RequestBuilder {
        match (client_key, &self.key) {
            (Some(k), _) => req.bearer_auth(k),
            (None, Some(k)) => req.bearer_auth(k),
            (None, None) => req,
        }
    }

    /// Starts a streaming Chat Completions request; returns the reply's
    /// byte stream once its headers are in. `client_key` is the client's own
    /// key, passed only when the configuration says so.
    pub async fn chat(
        &self,
        body: &Map<String, Value>,
        client_key: Option<&str>,
    ) -> Result<ByteStream, ProxyError> {
        let url = format!("{}/v1/chat/completions", self.base);
        let payload =
            serde_json::to_vec(body).map_err(|e| ProxyError::BadRequest(e.to_string()))?;
        let mut attempt = 0;
        loop {
            let req = self
                .auth(self.client.post(&url), client_key)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .body(payload.clone());
            let res = tokio::time::timeout(self.first_byte, req.send()).await;
            let err = match res {
                Err(_) => {
                    return Err(ProxyError::UpstreamTimeout(format!(
                        "no response headers within {} s",
                        self.first_byte.as_secs()
                    )))
                }
                Ok(Err(e)) if e.is_timeout() => {
                    return Err(ProxyError::UpstreamTimeout(describe(&e)))
                }
                Ok(Err(e)) => ProxyError::UpstreamUnreachable(describe(&e)),
                Ok(Ok(r)) if r.status().is_success() => return Ok(Box::pin(r.bytes_stream())),
                Ok(Ok(r)) => {
                    let status = r.status().as_u16();
                    let message = error_message(r).await;
                    let e = ProxyError::UpstreamStatus { status, message };
                    if !matches!(status, 502 | 503) {
                        return Err(e);
                    }
                    e
                }
            };
            if attempt >= self.retries {
                return Err(err);
            }
            attempt += 1;
            tracing::warn!(error = %err, attempt, "upstream attempt failed; retrying");
            tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
        }
    }

    /// Sends one small non-streamed JSON request (`POST base + path`) and
    /// returns the reply's JSON: for start-up probes
    /// ([`super::probe`]), never for a client's request.
    pub async fn post_json(
        &self,
        path: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, ProxyError> {
        let url = format!("{}{path}", self.base);
        let req = self.auth(self.client.post(&url), None).json(body);
        let r = match tokio::time::timeout(timeout, req.send()).await {
            Err(_) => {
                return Err(ProxyError::UpstreamTimeout(format!(
                    "POST {path}: no answer within {} s",
                    timeout.as_secs()
                )))
            }
            Ok(Err(e)) => return Err(ProxyError::UpstreamUnreachable(describe(&e))),
            Ok(Ok(r)) => r,
        };
        if !r.status().is_success() {
            let status = r.status().as_u16();
            let message = error_message(r).await;
            return Err(ProxyError::UpstreamStatus { status, message });
        }
        match tokio::time::timeout(timeout, r.json::<Value>()).await {
            Err(_) => Err(ProxyError::UpstreamTimeout(format!(
                "POST {path}: no body within {} s",
                timeout.as_secs()
            ))),
            Ok(Err(e)) => Err(ProxyError::UpstreamFailed(describe(&e))),
            Ok(Ok(v)) => Ok(v),
        }
    }

    /// Asks the upstream what it serves (`/v1/models`, and llama.cpp's
    /// `/props` for the context window). Never fails: what could not be
    /// learned is left out, with the reason.
    pub async fn probe(&self) -> Probe {
        let mut p = Probe::default();
        let url = format!("{}/v1/models", self.base);
        match tokio::time::timeout(
            Duration::from_secs(5),
            self.auth(self.client.get(&url), None).send(),
        )
        .await
        {
            Ok(Ok(r)) if r.status().is_success() => {
                if let Ok(v) = r.json::<Value>().await {
                    p.models = v
                        .get("data")
                        .and_then(Value::as_array)
                        .map(|d| {
                            d.iter()
                                .filter_map(|m| m.get("id").and_then(Value::as_str))
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                }
            }
            Ok(Ok(r)) => p.error = Some(format!("GET /v1/models answered {}", r.status())),
            Ok(Err(e)) => p.error = Some(describe(&e)),
            Err(_) => p.error = Some("GET /v1/models timed out".into()),
        }
        if p.error.is_none() {
            let url = format!("{}/props", self.base);
            if let Ok(Ok(r)) = tokio::time::timeout(
                Duration::from_secs(5),
                self.auth(self.client.get(&url), None).send(),
            )
            .await
            {
                if r.status().is_success() {
                    if let Ok(v) = r.json::<Value>().await {
                        p.n_ctx = v
                            .pointer("/default_generation_settings/n_ctx")
                            .or_else(|| v.get("n_ctx"))
                            .and_then(Value::as_u64);
                    }
                }
            }
        }
        p
    }
}

/// An error and its causes, on one line ("connection refused" is in the
/// cause, not in reqwest's own message).
fn describe(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        let m = x.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        src = x.source();
    }
    s
}

/// The message of an upstream error reply (its `error.message`, else its
/// text, at most 2 KB).
async fn error_message(r: reqwest::Response) -> String {
    let status = r.status();
    let mut body = Vec::new();
    let mut s = r.bytes_stream();
    while let Some(Ok(c)) = s.next().await {
        body.extend_from_slice(&c);
        if body.len() > 64 << 10 {
            break;
        }
    }
    if let Ok(v) = serde_json::from_slice::<Value>(&body) {
        let m = v
            .pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .or_else(|| v.get("error"));
        if let Some(m) = m {
            return match m {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
        }
    }
    let t = String::from_utf8_lossy(&body);
    let t = t.trim();
    if t.is_empty() {
        status.to_string()
    } else {
        t.chars().take(2048).collect()
    }
}

//! Start-up probe of the upstream's chat template: does a system message
//! reach the model?
//!
//! Emulation puts its prompt in a system message. Not every template shows
//! one to the model: llama-cpp-python's hand-written `gemma` chat format
//! drops system messages, so Gemma behind `python -m llama_cpp.server`
//! never saw the prompt (#49); Gemma 2's own template rejects them. Where
//! the system message does not get through, the proxy puts the prompt at
//! the start of the first user turn instead
//! ([`super::emulate::EmulateSetup::system_in_user`]) — what Gemma 3's own
//! template does with a system message.
//!
//! Asked once per served model at start-up, never per request, and only of
//! a server the proxy recognised ([`super::emulate::probe_server`]): a
//! local server, where a probe costs nothing but a few prompt tokens.
//!
//! | server | how |
//! |---|---|
//! | `llama-server` | `POST /apply-template` with a system message carrying [`MARKER`]: is the marker in the rendered prompt? (no generation) |
//! | `llama_cpp.server`, vLLM, Ollama (and `llama-server` without `/apply-template`) | two `POST /v1/chat/completions` with `max_tokens: 1`, one with the marked system message and one with a one-word system message: `usage.prompt_tokens` (nearly) equal → dropped; a system message rejected where a request without one is served → dropped |
//!
//! Both requests carry a system message because some templates insert a
//! default system prompt when there is none (SmolLM2's: "You are a helpful
//! AI assistant named SmolLM…", as many tokens as the marker): comparing
//! with a request without one would read "dropped" there.
//!
//! When the probe cannot tell (no usage, an error, an unknown server), the
//! registry decides ([`crate::model::ModelSpec::system_role`]: Gemma 1–3
//! have no system role); `[emulate] system_in_user` overrides both.

use std::fmt;
use std::time::Duration;

use serde_json::{json, Value};

use super::error::ProxyError;
use super::upstream::Upstream;
use crate::toolkit::constrain::Server;

/// The system message the probe sends (a sentence no template adds itself).
pub const MARKER: &str =
    "toolstream start-up probe: this system message should reach the model unchanged.";

/// The short system message the marked one is compared with.
const SHORT: &str = "OK.";

/// Fewer extra prompt tokens than this with the marked system message than
/// with [`SHORT`] means the system text did not get through (the marker is
/// about 15 tokens in any tokenizer, `SHORT` 1–2).
const MIN_EXTRA_TOKENS: u64 = 6;

/// Whether a system message reaches the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemRole {
    /// The template renders it (as a system turn, or folded into a user turn).
    Kept,
    /// The template drops it (or rejects a request that has one).
    Dropped,
}

/// What the probe saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// `llama-server`'s `/apply-template`: the marker is (not) in the prompt.
    Template,
    /// `usage.prompt_tokens` with the marked system message and with a
    /// one-word one.
    PromptTokens {
        /// With the marked system message.
        with: u64,
        /// With the one-word system message instead.
        without: u64,
    },
    /// The request with a system message was rejected, the one without it
    /// was served (the upstream's message).
    Rejected(String),
}

/// The probe's finding for one model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemProbe {
    /// Whether the system message reaches the model.
    pub role: SystemRole,
    /// How that was seen.
    pub evidence: Evidence,
}

impl fmt::Display for SystemProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = match self.role {
            SystemRole::Kept => "kept",
            SystemRole::Dropped => "dropped",
        };
        match &self.evidence {
            Evidence::Template => write!(f, "system message {verdict} by the template (/apply-template)"),
            Evidence::PromptTokens { with, without } => write!(
                f,
                "system message {verdict} by the template ({with} prompt tokens with the marked one, {without} with a one-word one)"
            ),
            Evidence::Rejected(m) => write!(f, "system message rejected by the template: {m}"),
        }
    }
}

/// Why the probe could not tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// The upstream could not be asked, or answered the request without a
    /// system message with an error.
    Upstream(ProxyError),
    /// The upstream answered, but without `usage.prompt_tokens`.
    NoUsage,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Upstream(e) => write!(f, "{e}"),
            ProbeError::NoUsage => f.write_str("the upstream reports no usage.prompt_tokens"),
        }
    }
}

impl std::error::Error for ProbeError {}

fn messages(system: Option<&str>) -> Value {
    let user = json!({"role": "user", "content": "Say OK."});
    match system {
        Some(s) => json!([{"role": "system", "content": s}, user]),
        None => json!([user]),
    }
}

/// Asks `upstream` (a `server` the start-up probe recognised) whether the
/// chat template it applies for `model` shows the model a system message.
/// Each request waits at most `timeout`.
pub async fn probe_system_role(
    upstream: &Upstream,
    server: Server,
    model: &str,
    timeout: Duration,
) -> Result<SystemProbe, ProbeError> {
    if server == Server::LlamaServer {
        let body = json!({"model": model, "messages": messages(Some(MARKER))});
        match upstream.post_json("/apply-template", &body, timeout).await {
            Ok(v) => {
                if let Some(prompt) = v.get("prompt").and_then(Value::as_str) {
                    let role = if prompt.contains(MARKER) {
                        SystemRole::Kept
                    } else {
                        SystemRole::Dropped
                    };
                    return Ok(SystemProbe {
                        role,
                        evidence: Evidence::Template,
                    });
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "/apply-template failed; probing with prompt tokens")
            }
        }
    }
    let request = |system: Option<&str>| {
        json!({
            "model": model,
            "messages": messages(system),
            "max_tokens": 1,
            "temperature": 0,
            "stream": false,
        })
    };
    let ask = |system: Option<&str>| {
        let body = request(system);
        async move {
            upstream
                .post_json("/v1/chat/completions", &body, timeout)
                .await
        }
    };
    let prompt_tokens = |v: &Value| v.pointer("/usage/prompt_tokens").and_then(Value::as_u64);
    let with = match ask(Some(MARKER)).await {
        Ok(v) => prompt_tokens(&v).ok_or(ProbeError::NoUsage)?,
        Err(ProxyError::UpstreamStatus { status, message }) if (400..600).contains(&status) => {
            // Rejected with a system message: dropped, if it is served
            // without one (else the upstream is failing, not the template).
            ask(None).await.map_err(ProbeError::Upstream)?;
            return Ok(SystemProbe {
                role: SystemRole::Dropped,
                evidence: Evidence::Rejected(format!("{status}: {message}")),
            });
        }
        Err(e) => return Err(ProbeError::Upstream(e)),
    };
    let short = ask(Some(SHORT)).await.map_err(ProbeError::Upstream)?;
    let without = prompt_tokens(&short).ok_or(ProbeError::NoUsage)?;
    let role = if with >= without.saturating_add(MIN_EXTRA_TOKENS) {
        SystemRole::Kept
    } else {
        SystemRole::Dropped
    };
    Ok(SystemProbe {
        role,
        evidence: Evidence::PromptTokens { with, without },
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::routing::post;
    use axum::{Json, Router};

    use super::*;
    use crate::proxy::ProxyConfig;

    /// How the fake upstream's "template" treats a system message.
    #[derive(Clone, Copy)]
    enum Template {
        /// Rendered as its own turn.
        Keeps,
        /// Rendered, and a default system prompt as long as the marker
        /// inserted when there is none (SmolLM2's template).
        KeepsWithDefault,
        /// Left out (llama-cpp-python's `gemma` format).
        Drops,
        /// An error (Gemma 2's template).
        Rejects,
    }

    #[derive(Clone)]
    struct Fake {
        template: Template,
        apply_template: bool,
        usage: bool,
        requests: Arc<AtomicUsize>,
    }

    fn render(t: Template, body: &Value) -> Result<String, ()> {
        let mut out = String::new();
        let msgs = body["messages"].as_array().cloned().unwrap_or_default();
        if matches!(t, Template::KeepsWithDefault)
            && msgs.first().is_some_and(|m| m["role"] != "system")
        {
            // As many words as the marker.
            out.push_str(&format!(
                "<start_of_turn>system\n{}<end_of_turn>\n",
                "default ".repeat(MARKER.split_whitespace().count())
            ));
        }
        for m in &msgs {
            let role = m["role"].as_str().unwrap_or("");
            let content = m["content"].as_str().unwrap_or("");
            match (role, t) {
                ("system", Template::Drops) => {}
                ("system", Template::Rejects) => return Err(()),
                _ => out.push_str(&format!("<start_of_turn>{role}\n{content}<end_of_turn>\n")),
            }
        }
        Ok(out)
    }

    async fn apply_template(
        State(f): State<Fake>,
        Json(body): Json<Value>,
    ) -> (StatusCode, Json<Value>) {
        f.requests.fetch_add(1, Ordering::SeqCst);
        if !f.apply_template {
            return (StatusCode::NOT_FOUND, Json(json!({"error": "not found"})));
        }
        match render(f.template, &body) {
            Ok(p) => (StatusCode::OK, Json(json!({"prompt": p}))),
            Err(()) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"error": {"message": "System role not supported"}})),
            ),
        }
    }

    async fn chat(State(f): State<Fake>, Json(body): Json<Value>) -> (StatusCode, Json<Value>) {
        f.requests.fetch_add(1, Ordering::SeqCst);
        assert_eq!(body["max_tokens"], 1, "the probe asks for one token");
        match render(f.template, &body) {
            Ok(p) => {
                // One "token" per word, as a tokenizer would count them.
                let n = p.split_whitespace().count();
                let mut reply = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, "finish_reason": "length"}]});
                if f.usage {
                    reply["usage"] =
                        json!({"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1});
                }
                (StatusCode::OK, Json(reply))
            }
            Err(()) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"error": {"message": "System role not supported"}})),
            ),
        }
    }

    async fn fake(template: Template, apply: bool, usage: bool) -> (Upstream, Arc<AtomicUsize>) {
        let requests = Arc::new(AtomicUsize::new(0));
        let f = Fake {
            template,
            apply_template: apply,
            usage,
            requests: requests.clone(),
        };
        let app = Router::new()
            .route("/apply-template", post(apply_template))
            .route("/v1/chat/completions", post(chat))
            .route(
                "/v1/models",
                axum::routing::get(|| async {
                    // llama-cpp-python's answer.
                    Json(json!({"object": "list", "data": [{"id": "gemma-3-270m-it", "object": "model", "owned_by": "me"}]}))
                }),
            )
            .with_state(f);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let cfg = ProxyConfig {
            upstream: format!("http://{addr}"),
            ..Default::default()
        };
        (Upstream::new(&cfg).unwrap(), requests)
    }

    const T: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn llama_server_renders_the_template_without_generating() {
        for (template, want) in [
            (Template::Keeps, SystemRole::Kept),
            (Template::KeepsWithDefault, SystemRole::Kept),
            (Template::Drops, SystemRole::Dropped),
        ] {
            let (up, n) = fake(template, true, true).await;
            let p = probe_system_role(&up, Server::LlamaServer, "m", T)
                .await
                .unwrap();
            assert_eq!(p.role, want);
            assert_eq!(p.evidence, Evidence::Template);
            assert_eq!(n.load(Ordering::SeqCst), 1, "one /apply-template, no chat");
        }
    }

    #[tokio::test]
    async fn llama_cpp_python_compares_prompt_tokens() {
        let (up, n) = fake(Template::Drops, false, true).await;
        let p = probe_system_role(&up, Server::LlamaCppPython, "gemma-3-270m-it", T)
            .await
            .unwrap();
        assert_eq!(p.role, SystemRole::Dropped);
        let Evidence::PromptTokens { with, without } = p.evidence else {
            panic!("{p:?}")
        };
        assert_eq!(with, without);
        assert_eq!(n.load(Ordering::SeqCst), 2);

        for template in [Template::Keeps, Template::KeepsWithDefault] {
            let (up, _) = fake(template, false, true).await;
            let p = probe_system_role(&up, Server::LlamaCppPython, "SmolLM2", T)
                .await
                .unwrap();
            assert_eq!(p.role, SystemRole::Kept);
            let Evidence::PromptTokens { with, without } = p.evidence else {
                panic!("{p:?}")
            };
            assert!(with >= without + MIN_EXTRA_TOKENS, "{with} {without}");
            assert!(p.to_string().contains("kept"), "{p}");
        }
    }

    #[tokio::test]
    async fn llama_server_without_apply_template_falls_back_to_tokens() {
        let (up, n) = fake(Template::Drops, false, true).await;
        let p = probe_system_role(&up, Server::LlamaServer, "m", T)
            .await
            .unwrap();
        assert_eq!(p.role, SystemRole::Dropped);
        assert!(matches!(p.evidence, Evidence::PromptTokens { .. }));
        assert_eq!(n.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_template_that_rejects_a_system_message_drops_it() {
        let (up, _) = fake(Template::Rejects, false, true).await;
        let p = probe_system_role(&up, Server::Vllm, "google/gemma-2-2b-it", T)
            .await
            .unwrap();
        assert_eq!(p.role, SystemRole::Dropped);
        assert!(matches!(&p.evidence, Evidence::Rejected(m) if m.contains("System role")));
    }

    #[tokio::test]
    async fn the_proxy_asks_once_at_start_up_and_says_so() {
        let (up, n) = fake(Template::Drops, false, true).await;
        let proxy = crate::proxy::Proxy::start(ProxyConfig {
            upstream: up.base().to_string(),
            ..Default::default()
        })
        .await
        .unwrap();
        let banner = proxy.describe();
        assert!(
            banner.contains("upstream server: llama_cpp.server")
                && banner.contains(
                    "prompt in the first user turn (start-up probe: system message dropped"
                ),
            "{banner}"
        );
        assert_eq!(n.load(Ordering::SeqCst), 2, "two probe requests, once");

        // Overridden in the config: no probe request at all.
        let (up, n) = fake(Template::Drops, false, true).await;
        let mut cfg = ProxyConfig {
            upstream: up.base().to_string(),
            ..Default::default()
        };
        cfg.emulate.system_in_user = Some(false);
        let banner = crate::proxy::Proxy::start(cfg).await.unwrap().describe();
        assert!(
            banner.contains("prompt in the system message ([emulate] system_in_user)"),
            "{banner}"
        );
        assert_eq!(n.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn no_usage_or_no_upstream_is_an_error() {
        let (up, _) = fake(Template::Keeps, false, false).await;
        let e = probe_system_role(&up, Server::Ollama, "m", T)
            .await
            .unwrap_err();
        assert_eq!(e, ProbeError::NoUsage);

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dead = listener.local_addr().unwrap();
        drop(listener);
        let cfg = ProxyConfig {
            upstream: format!("http://{dead}"),
            ..Default::default()
        };
        let up = Upstream::new(&cfg).unwrap();
        let e = probe_system_role(&up, Server::LlamaCppPython, "m", T)
            .await
            .unwrap_err();
        assert!(
            matches!(e, ProbeError::Upstream(ProxyError::UpstreamUnreachable(_))),
            "{e:?}"
        );
    }
}

//! `toolstream proxy`: a local model serves native tool calls to OpenAI-
//! and Anthropic-style clients (feature `proxy`).
//!
//! Clients (Claude Code, Codex, apps on the official SDKs) point their base
//! URL at the proxy; the proxy forwards to one OpenAI-compatible upstream
//! (llama.cpp's `llama-server`, `python -m llama_cpp.server`, vLLM, Ollama's
//! `/v1`, LM Studio) and streams back native tool calls in the client's own
//! format, whatever the model wrote:
//!
//! ```text
//! client ─▶ translate (Messages / Responses / Chat → Chat) ─▶ upstream (always streaming)
//!        ◀─ encoder (the client's API) ◀─ [stage] ◀─ decoder + parser (native and in-content calls) ◀─
//! ```
//!
//! | endpoint | |
//! |---|---|
//! | `POST /v1/chat/completions` | OpenAI Chat Completions, streaming or not |
//! | `POST /v1/messages` (also `?beta=true`) | Anthropic Messages, streaming or not |
//! | `POST /v1/messages/count_tokens` | an estimate (see [`server`]) |
//! | `POST /v1/responses` | OpenAI Responses (Codex), streaming or not |
//! | `GET /v1/models`, `GET /health`, `GET /metrics`, `HEAD /` | models, liveness, Prometheus text, Claude Code's probe |
//!
//! The proxy keeps no state between requests, so several instances behind
//! any load balancer scale out. See `docs/proxy.md` for commands and the
//! configuration reference.

pub mod config;
pub mod context;
pub mod emulate;
pub mod error;
pub mod probe;
pub mod retry;
pub mod server;
pub mod session;
pub mod stage;
pub mod translate;
pub mod upstream;

pub use config::{ConfigError, Loops, Mode, OnInvalid, ProxyConfig, ProxyLimits, Retries};
pub use error::{Api, ProxyError};
pub use retry::{Attempt, AttemptCall, Choice, RetryBuilder};
pub use server::{shutdown_signal, Proxy};
pub use session::{CallStage, Checks, Next, Session, SessionOptions, StageFactory};
pub use stage::{normalizer_factory, NormalizeStage};

//! Errors a request can end with, written in the client's own format.

use std::fmt;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The API a client speaks (chosen by the endpoint it called).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    Chat,
    /// Anthropic Messages (`/v1/messages`).
    Messages,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
}

impl Api {
    /// The name used in logs and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Messages => "messages",
            Api::Responses => "responses",
        }
    }

    /// The encoder target for this API.
    pub const fn target(self) -> crate::Target {
        match self {
            Api::Chat => crate::Target::OpenAi,
            Api::Messages => crate::Target::Anthropic,
            Api::Responses => crate::Target::Responses,
        }
    }
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyError {
    /// The request is malformed or asks for something unsupported (400).
    BadRequest(String),
    /// The inbound key is missing or wrong (401).
    Unauthorized,
    /// The body is larger than the configured limit (413).
    TooLarge(usize),
    /// Too many requests in flight (429 with `retry-after`).
    Overloaded {
        /// Seconds to wait.
        retry_after: u64,
    },
    /// The upstream could not be reached (502).
    UpstreamUnreachable(String),
    /// The upstream did not answer in time (504).
    UpstreamTimeout(String),
    /// The upstream answered with an error status: its 4xx is passed on,
    /// anything else becomes 502.
    UpstreamStatus {
        /// The upstream's status.
        status: u16,
        /// The upstream's message.
        message: String,
    },
    /// The upstream's reply failed or was cut (non-streaming requests: 502).
    UpstreamFailed(String),
    /// The proxy is shutting down (503).
    ShuttingDown,
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyError::BadRequest(m) => write!(f, "{m}"),
            ProxyError::Unauthorized => f.write_str("invalid or missing API key"),
            ProxyError::TooLarge(n) => write!(f, "request body larger than {n} bytes"),
            ProxyError::Overloaded { .. } => {
                f.write_str("too many requests in flight; retry later")
            }
            ProxyError::UpstreamUnreachable(m) => write!(f, "upstream unreachable: {m}"),
            ProxyError::UpstreamTimeout(m) => write!(f, "upstream timed out: {m}"),
            ProxyError::UpstreamStatus { status, message } => {
                write!(f, "upstream answered {status}: {message}")
            }
            ProxyError::UpstreamFailed(m) => write!(f, "upstream reply failed: {m}"),
            ProxyError::ShuttingDown => f.write_str("the proxy is shutting down"),
        }
    }
}

impl std::error::Error for ProxyError {}

impl ProxyError {
    /// The HTTP status sent to the client.
    pub fn status(&self) -> StatusCode {
        match self {
            ProxyError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ProxyError::Unauthorized => StatusCode::UNAUTHORIZED,
            ProxyError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ProxyError::Overloaded { .. } => StatusCode::TOO_MANY_REQUESTS,
            ProxyError::UpstreamUnreachable(_) | ProxyError::UpstreamFailed(_) => {
                StatusCode::BAD_GATEWAY
            }
            ProxyError::UpstreamTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ProxyError::UpstreamStatus { status, .. } if (400..500).contains(status) => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_GATEWAY)
            }
            ProxyError::UpstreamStatus { .. } => StatusCode::BAD_GATEWAY,
            ProxyError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn anthropic_type(&self) -> &'static str {
        match self.status().as_u16() {
            400 | 422 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            503 | 529 => "overloaded_error",
            _ => "api_error",
        }
    }

    fn openai_type(&self) -> &'static str {
        match self.status().as_u16() {
            400..=499 if self.status() == StatusCode::TOO_MANY_REQUESTS => "rate_limit_exceeded",
            401 => "authentication_error",
            400..=499 => "invalid_request_error",
            _ => "server_error",
        }
    }

    /// The error body in `api`'s format.
    pub fn body(&self, api: Api) -> serde_json::Value {
        let message = self.to_string();
        match api {
            Api::Messages => json!({
                "type": "error",
                "error": {"type": self.anthropic_type(), "message": message},
            }),
            Api::Chat | Api::Responses => json!({
                "error": {"message": message, "type": self.openai_type(), "param": null, "code": null},
            }),
        }
    }

    /// The whole response in `api`'s format.
    pub fn response(&self, api: Api) -> Response {
        let body = serde_json::to_vec(&self.body(api)).unwrap_or_default();
        let mut r = (
            self.status(),
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let ProxyError::Overloaded { retry_after } = self {
            if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_formats() {
        let e = ProxyError::UpstreamStatus {
            status: 404,
            message: "no model".into(),
        };
        assert_eq!(e.status(), StatusCode::NOT_FOUND);
        assert_eq!(e.body(Api::Messages)["error"]["type"], "not_found_error");
        let e = ProxyError::UpstreamStatus {
            status: 500,
            message: "boom".into(),
        };
        assert_eq!(e.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(e.body(Api::Chat)["error"]["type"], "server_error");
        let r = ProxyError::Overloaded { retry_after: 2 }.response(Api::Chat);
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(r.headers()[header::RETRY_AFTER], "2");
        assert_eq!(
            ProxyError::UpstreamTimeout("x".into()).status(),
            StatusCode::GATEWAY_TIMEOUT
        );
    }
}

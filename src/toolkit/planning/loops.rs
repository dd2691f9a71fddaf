//! Loop detection from the conversation alone (seed 001 §5.3, seed 002):
//! no state is kept between requests, so a proxy can run it on every
//! request.
//!
//! Checks, on the assistant's tool-call rounds: the same call (name and
//! normalized arguments) made [`LoopOptions::max_repeats`] times; an A/B
//! ping-pong of two calls; the same call failing again and again; and a cap
//! on rounds since the last user turn (001 uses 5, 002 10; default 10).
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::planning::loops::{detect, rounds_from_messages, LoopOptions, Verdict};
//! let call = json!({"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}}]});
//! let result = json!({"role": "tool", "tool_call_id": "1", "content": "a.txt"});
//! let msgs = json!([{"role": "user", "content": "list"}, call, result, call, result, call, result]);
//! let v = detect(&rounds_from_messages(&msgs), &LoopOptions::default());
//! assert!(matches!(v, Verdict::Repeated { .. }));
//! ```

use serde::Serialize;
use serde_json::Value;

/// One call in a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallRecord {
    /// The tool.
    pub name: String,
    /// The arguments as canonical JSON (keys sorted, no whitespace).
    pub args: String,
    /// Its result was an error.
    pub failed: bool,
}

impl CallRecord {
    /// A record with canonical arguments.
    pub fn new(name: &str, args: &Value, failed: bool) -> CallRecord {
        CallRecord {
            name: name.to_owned(),
            args: canonical(args),
            failed,
        }
    }

    fn key(&self) -> (&str, &str) {
        (&self.name, &self.args)
    }
}

/// JSON with object keys sorted and strings trimmed: two calls that differ
/// only in key order or surrounding whitespace are the same call.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&o[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        Value::String(s) => Value::String(s.trim().to_owned()).to_string(),
        other => other.to_string(),
    }
}

/// Limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LoopOptions {
    /// The same call this many times since the last user turn is a loop (3).
    pub max_repeats: usize,
    /// The same call failing this many times is a loop (2).
    pub max_failures: usize,
    /// This many alternations A, B, A, B… is a ping-pong (2 pairs).
    pub ping_pong_pairs: usize,
    /// The most tool rounds after the last user turn (10; seed 001: 5).
    pub max_rounds: usize,
}

impl Default for LoopOptions {
    fn default() -> Self {
        LoopOptions {
            max_repeats: 3,
            max_failures: 2,
            ping_pong_pairs: 2,
            max_rounds: 10,
        }
    }
}

/// What the conversation shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// No loop.
    Ok,
    /// The same call again and again.
    Repeated {
        /// The tool.
        name: String,
        /// How often.
        count: usize,
    },
    /// Two calls alternating.
    PingPong {
        /// One call's tool.
        a: String,
        /// The other's.
        b: String,
    },
    /// The same failing call retried.
    FailingRetry {
        /// The tool.
        name: String,
        /// How often it failed.
        failures: usize,
    },
    /// Too many tool rounds since the user last spoke.
    RoundCap {
        /// Rounds so far.
        rounds: usize,
    },
}

impl Verdict {
    /// Whether a loop was found.
    pub fn is_loop(&self) -> bool {
        *self != Verdict::Ok
    }

    /// The message to inject into the conversation (as a system or user
    /// note), or `None` for [`Verdict::Ok`].
    pub fn message(&self) -> Option<String> {
        match self {
            Verdict::Ok => None,
            Verdict::Repeated { name, count } => Some(format!(
                "You have called {name} with the same arguments {count} times and got the same result. Do not call it again with these arguments: use the result you have, change the arguments, or answer the user."
            )),
            Verdict::PingPong { a, b } => Some(format!(
                "You are alternating between {a} and {b} without progress. Stop, summarise what you found, and either try a different approach or answer the user."
            )),
            Verdict::FailingRetry { name, failures } => Some(format!(
                "{name} has failed {failures} times with the same arguments. Read the error, change the arguments, or tell the user what is blocking you."
            )),
            Verdict::RoundCap { rounds } => Some(format!(
                "You have made {rounds} rounds of tool calls since the user's last message. Stop calling tools and answer with what you have."
            )),
        }
    }
}

/// Checks the rounds since the last user turn (each round = the calls of
/// one assistant message).
pub fn detect(rounds: &[Vec<CallRecord>], opts: &LoopOptions) -> Verdict {
    let calls: Vec<&CallRecord> = rounds.iter().flatten().collect();
    // Failing retries first: the most specific.
    for c in &calls {
        let fails = calls
            .iter()
            .filter(|d| d.key() == c.key() && d.failed)
            .count();
        if fails >= opts.max_failures.max(1) {
            return Verdict::FailingRetry {
                name: c.name.clone(),
                failures: fails,
            };
        }
    }
    for c in &calls {
        let n = calls.iter().filter(|d| d.key() == c.key()).count();
        if n >= opts.max_repeats.max(2) {
            return Verdict::Repeated {
                name: c.name.clone(),
                count: n,
            };
        }
    }
    // Ping-pong over single-call rounds: A B A B.
    let singles: Vec<&CallRecord> = rounds
        .iter()
        .filter(|r| r.len() == 1)
        .map(|r| &r[0])
        .collect();
    let need = opts.ping_pong_pairs.max(2) * 2;
    if singles.len() >= need {
        let tail = &singles[singles.len() - need..];
        let (a, b) = (tail[0], tail[1]);
        if a.key() != b.key()
            && tail
                .iter()
                .enumerate()
                .all(|(i, c)| c.key() == if i % 2 == 0 { a.key() } else { b.key() })
        {
            return Verdict::PingPong {
                a: a.name.clone(),
                b: b.name.clone(),
            };
        }
    }
    if rounds.len() >= opts.max_rounds.max(1) {
        return Verdict::RoundCap {
            rounds: rounds.len(),
        };
    }
    Verdict::Ok
}

/// The tool-call rounds after the last user message of an OpenAI chat,
/// Anthropic or Responses message list, with each call marked failed when
/// its result says so (`is_error`, or a result starting with `Error`).
pub fn rounds_from_messages(messages: &Value) -> Vec<Vec<CallRecord>> {
    let msgs: Vec<&Value> = messages
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let is_user_turn = |m: &Value| {
        m.get("role").and_then(Value::as_str) == Some("user")
            && !m.get("content").and_then(Value::as_array).is_some_and(|c| {
                !c.is_empty()
                    && c.iter()
                        .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            })
    };
    let start = msgs
        .iter()
        .rposition(|m| is_user_turn(m))
        .map_or(0, |i| i + 1);
    let mut failed_ids: Vec<String> = Vec::new();
    for m in &msgs[start..] {
        let text_err = |c: Option<&Value>| {
            c.and_then(Value::as_str)
                .is_some_and(|s| s.trim_start().to_ascii_lowercase().starts_with("error"))
        };
        if m.get("role").and_then(Value::as_str) == Some("tool") && text_err(m.get("content")) {
            if let Some(id) = m.get("tool_call_id").and_then(Value::as_str) {
                failed_ids.push(id.to_owned());
            }
        }
        if m.get("type").and_then(Value::as_str) == Some("function_call_output")
            && text_err(m.get("output"))
        {
            if let Some(id) = m.get("call_id").and_then(Value::as_str) {
                failed_ids.push(id.to_owned());
            }
        }
        for b in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if b.get("type").and_then(Value::as_str) == Some("tool_result")
                && (b.get("is_error") == Some(&Value::Bool(true)) || text_err(b.get("content")))
            {
                if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                    failed_ids.push(id.to_owned());
                }
            }
        }
    }
    let failed = |id: Option<&str>| id.is_some_and(|id| failed_ids.iter().any(|f| f == id));
    let mut rounds = Vec::new();
    for m in &msgs[start..] {
        let round: Vec<CallRecord> = crate::toolkit::convert::message_calls(m)
            .into_iter()
            .map(|c| CallRecord::new(c.name, &c.arguments, failed(c.id)))
            .collect();
        if !round.is_empty() {
            rounds.push(round);
        }
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(name: &str, arg: i64, failed: bool) -> Vec<CallRecord> {
        vec![CallRecord::new(name, &json!({"n": arg}), failed)]
    }

    #[test]
    fn verdicts() {
        let o = LoopOptions::default();
        assert_eq!(
            detect(&[r("a", 1, false), r("a", 2, false)], &o),
            Verdict::Ok
        );
        assert!(matches!(
            detect(&[r("a", 1, true), r("a", 1, true)], &o),
            Verdict::FailingRetry { failures: 2, .. }
        ));
        assert!(matches!(
            detect(
                &[
                    r("a", 1, false),
                    r("b", 1, false),
                    r("a", 1, false),
                    r("b", 1, false)
                ],
                &o
            ),
            Verdict::PingPong { .. }
        ));
        let many: Vec<_> = (0..10).map(|i| r("a", i, false)).collect();
        assert_eq!(detect(&many, &o), Verdict::RoundCap { rounds: 10 });
        assert!(Verdict::RoundCap { rounds: 10 }
            .message()
            .unwrap()
            .contains("10 rounds"));
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        assert_eq!(
            canonical(&json!({"b": 1, "a": " x "})),
            canonical(&json!({"a": "x", "b": 1}))
        );
    }

    #[test]
    fn anthropic_errors_and_the_last_user_turn() {
        let use_ = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x"}}]});
        let err = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "ENOENT"}]});
        let msgs = json!([{"role": "user", "content": "hi"}, use_, err, use_, err]);
        let rounds = rounds_from_messages(&msgs);
        assert_eq!(rounds.len(), 2);
        assert!(rounds[0][0].failed);
        let msgs = json!([use_, err, use_, err, {"role": "user", "content": "try again"}]);
        assert!(rounds_from_messages(&msgs).is_empty());
    }
}

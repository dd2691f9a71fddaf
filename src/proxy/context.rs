//! Fitting a request into the upstream's context window with the
//! toolkit's context optimisation, before anything is sent.
//!
//! A request is measured with [`estimate_request_tokens`] (one token per 4
//! bytes of its messages and tools as JSON, plus one per line break). When
//! the window is known (`context_tokens`, else llama.cpp's `/props`) and
//! the request does not leave room for the reply (the request's
//! `max_tokens`, at most [`Shrink::reserve_percent`] of the window), it is
//! shrunk, cheapest loss first, until it fits:
//!
//! 1. **tool definitions** over RFC-136's budget (a fifth of the window):
//!    [`toolkit::search::select`](crate::toolkit::search::select) shortens
//!    descriptions, then drops the tools ranked lowest against the last
//!    user turn (tools named by `tool_choice` or already used are kept);
//! 2. **older message contents**, oldest first — tool results first, then
//!    user and assistant text; never the system prompt or the last user
//!    turn: [`toolkit::planning::shaping::cap_result`](crate::toolkit::planning::shaping::cap_result)
//!    keeps the head and the tail of each, whole lines, with a marker saying
//!    how much was cut (never below [`Shrink::min_result_tokens`]);
//! 3. **tool definitions again**, under whatever budget is left.
//!
//! What was done is a [`Shrunk`] report: logged, and sent to the client in
//! the `x-toolstream-context` header. A request that still does not fit
//! gets the 400 in the client's format. Nothing is ever cut silently.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::session::estimate_request_tokens;
use crate::toolkit::convert::{read_tools, write_tools};
use crate::toolkit::planning::shaping::{cap_result, ShapeOptions};
use crate::toolkit::search::{last_user_text, select, used_tools, SearchOptions};
use crate::toolkit::{estimate_tokens, ToolFormat};

/// How over-long requests are shrunk (the config file's `[shrink]`).
///
/// ```toml
/// [shrink]
/// enabled = true            # shrink a request over the window (else: a 400)
/// reserve_percent = 25      # room for the reply: max_tokens, at most this share of the window
/// min_result_tokens = 256   # a message content is never cut below this
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Shrink {
    /// Shrink requests that do not fit (on by default).
    pub enabled: bool,
    /// The room kept for the reply: the request's `max_tokens`, but at most
    /// this percentage of the window (and a fifth of it when the request
    /// names none).
    pub reserve_percent: u64,
    /// A message content is never cut below this many tokens.
    pub min_result_tokens: usize,
}

impl Default for Shrink {
    fn default() -> Self {
        Shrink {
            enabled: true,
            reserve_percent: 25,
            min_result_tokens: 256,
        }
    }
}

/// What was done to a request to make it fit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shrunk {
    /// The estimate before.
    pub before: u64,
    /// The estimate after.
    pub after: u64,
    /// The target (the window less the room for the reply).
    pub target: u64,
    /// Tools dropped from the request (upstream names).
    pub tools_dropped: Vec<String>,
    /// Tools whose descriptions were shortened.
    pub tools_shortened: usize,
    /// The messages whose contents were cut (head and tail kept), by
    /// index in the upstream request.
    pub contents_cut: Vec<usize>,
    /// Bytes cut from message contents.
    pub bytes_cut: usize,
}

impl Shrunk {
    /// Anything changed.
    pub fn changed(&self) -> bool {
        !self.tools_dropped.is_empty() || self.tools_shortened > 0 || !self.contents_cut.is_empty()
    }

    /// The `x-toolstream-context` header value.
    ///
    /// ```
    /// use toolstream::proxy::context::Shrunk;
    /// let s = Shrunk { before: 9000, after: 5000, target: 6000, tools_dropped: vec!["a".into()],
    ///                  tools_shortened: 2, contents_cut: vec![3], bytes_cut: 4000 };
    /// assert_eq!(s.header(), "shrunk; tokens=9000->5000; target=6000; tools_dropped=a; tools_shortened=2; contents_cut=1; bytes_cut=4000");
    /// ```
    pub fn header(&self) -> String {
        format!(
            "shrunk; tokens={}->{}; target={}; tools_dropped={}; tools_shortened={}; contents_cut={}; bytes_cut={}",
            self.before,
            self.after,
            self.target,
            self.tools_dropped.join(","),
            self.tools_shortened,
            self.contents_cut.len(),
            self.bytes_cut
        )
    }
}

/// The tokens a request may use: the window less the room for the reply
/// (`max_tokens` or `max_completion_tokens`, at most `reserve_percent` of
/// the window; a fifth of that share when the request names none).
pub fn target(body: &Map<String, Value>, window: u64, opts: &Shrink) -> u64 {
    let cap = window * opts.reserve_percent.min(90) / 100;
    let asked = ["max_tokens", "max_completion_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64));
    window - asked.map_or(cap / 5, |a| a.min(cap))
}

fn tools_tokens(body: &Map<String, Value>) -> u64 {
    body.get("tools")
        .map_or(0, |t| estimate_tokens(&t.to_string()) as u64)
}

/// Cuts the request's tool definitions to `budget` tokens with the
/// toolkit's tool search; `false` when nothing could be cut.
fn cut_tools(body: &mut Map<String, Value>, budget: usize, report: &mut Shrunk) -> bool {
    let Some(list) = body.get("tools") else {
        return false;
    };
    let Ok(tools) = read_tools(list) else {
        return false;
    };
    if tools.is_empty() {
        return false;
    }
    let messages = body.get("messages").cloned().unwrap_or(Value::Null);
    let named = body
        .get("tool_choice")
        .and_then(|c| c.pointer("/function/name"))
        .and_then(Value::as_str);
    let opts = SearchOptions {
        send_all_up_to: tools.len(),
        max_tools: tools.len(),
        budget_tokens: Some(budget),
        ..SearchOptions::default()
    };
    let sel = select(
        &tools,
        &last_user_text(&messages),
        &used_tools(&messages),
        named,
        &opts,
    );
    if sel.dropped.is_empty() && sel.shortened.is_empty() {
        return false;
    }
    report.tools_shortened += sel.shortened.len();
    report.tools_dropped.extend(sel.dropped.iter().cloned());
    if sel.tools.is_empty() {
        body.remove("tools");
        body.remove("tool_choice");
        body.remove("parallel_tool_calls");
    } else {
        body.insert(
            "tools".into(),
            write_tools(&sel.tools, ToolFormat::OpenAi).0,
        );
    }
    true
}

/// Cuts older message contents (tool results first, oldest first) until
/// `over` tokens are saved; `false` when nothing could be cut.
fn cut_contents(
    body: &mut Map<String, Value>,
    mut over: u64,
    opts: &Shrink,
    report: &mut Shrunk,
) -> bool {
    let Some(Value::Array(messages)) = body.get_mut("messages") else {
        return false;
    };
    let last_user = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    let role_of = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut order: Vec<usize> = (0..messages.len())
        .filter(|&i| {
            Some(i) != last_user
                && !matches!(role_of(&messages[i]).as_str(), "system" | "developer")
        })
        .collect();
    // Tool results first, each group oldest first.
    order.sort_by_key(|&i| (role_of(&messages[i]) != "tool", i));
    let mut cut_any = false;
    for i in order {
        if over == 0 {
            break;
        }
        let Some(Value::String(text)) = messages[i].get("content") else {
            continue;
        };
        // Measured as the request carries it (a JSON string), as the
        // window check measures it.
        let json_tokens = |t: &str| estimate_tokens(&Value::from(t).to_string());
        let have = json_tokens(text);
        let text_tokens = estimate_tokens(text);
        if text_tokens <= opts.min_result_tokens {
            continue;
        }
        let keep_json = have.saturating_sub(over as usize);
        let keep = (text_tokens * keep_json / have.max(1)).max(opts.min_result_tokens);
        let shaped = cap_result(
            text,
            &ShapeOptions {
                budget_tokens: keep,
                ..ShapeOptions::default()
            },
        );
        if !shaped.truncated || shaped.text.len() >= text.len() {
            continue;
        }
        let saved = have.saturating_sub(json_tokens(&shaped.text)) as u64;
        over = over.saturating_sub(saved);
        if !report.contents_cut.contains(&i) {
            report.contents_cut.push(i);
        }
        report.bytes_cut += text.len() - shaped.text.len();
        messages[i]["content"] = Value::String(shaped.text);
        cut_any = true;
    }
    cut_any
}

/// Shrinks `body` (a Chat Completions request) by at least `over`
/// estimated tokens where it can, adding what it did to `report`. Returns
/// `false` when nothing more can be cut. `window` sets the tool budget of
/// the first step (a fifth of it).
pub fn shrink(
    body: &mut Map<String, Value>,
    over: u64,
    window: u64,
    opts: &Shrink,
    report: &mut Shrunk,
) -> bool {
    if over == 0 {
        return true;
    }
    let start = estimate_request_tokens(body);
    let goal = start.saturating_sub(over);
    let mut cut = false;
    // 1. Tool definitions over a fifth of the window.
    let budget = (window / 5) as usize;
    if tools_tokens(body) as usize > budget {
        cut |= cut_tools(body, budget, report);
    }
    // 2. Older message contents.
    let now = estimate_request_tokens(body);
    if now > goal {
        cut |= cut_contents(body, now - goal, opts, report);
    }
    // 3. Tool definitions under what is left.
    let now = estimate_request_tokens(body);
    if now > goal {
        let left = tools_tokens(body).saturating_sub(now - goal) as usize;
        cut |= cut_tools(body, left, report);
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, desc: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "description": desc,
               "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": desc}}}}})
    }

    #[test]
    fn target_leaves_room_for_the_reply() {
        let o = Shrink::default();
        let b = json!({"max_tokens": 100});
        assert_eq!(target(b.as_object().unwrap(), 1000, &o), 900);
        let b = json!({"max_tokens": 100000});
        assert_eq!(target(b.as_object().unwrap(), 1000, &o), 750);
        assert_eq!(target(&Map::new(), 1000, &o), 950);
    }

    #[test]
    fn tools_then_old_results_are_cut_never_the_last_user_turn() {
        let long = "x".repeat(3000);
        let result: String = (0..400)
            .map(|i| format!("line {i} of the file\n"))
            .collect();
        let mut body = json!({
            "tools": (0..30).map(|i| tool(&format!("tool_{i}"), &long)).chain([tool("read_file", "Read a file.")]).collect::<Vec<_>>(),
            "messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "read a.txt"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": result},
                {"role": "user", "content": "now read the file again please"},
            ]
        })
        .as_object()
        .unwrap()
        .clone();
        let before = estimate_request_tokens(&body);
        let window = 4000;
        let goal = target(&body, window, &Shrink::default());
        assert!(before > goal);
        let mut r = Shrunk::default();
        assert!(shrink(
            &mut body,
            before - goal,
            window,
            &Shrink::default(),
            &mut r
        ));
        let after = estimate_request_tokens(&body);
        assert!(after <= goal, "{after} > {goal}: {r:?}");
        assert!(!r.tools_dropped.is_empty() || r.tools_shortened > 0);
        // The used tool is kept; the last user turn and the system prompt are intact.
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"read_file"), "{names:?}");
        assert_eq!(
            body["messages"][4]["content"],
            "now read the file again please"
        );
        assert_eq!(body["messages"][0]["content"], "You are helpful.");
    }

    #[test]
    fn results_are_cut_with_a_marker_when_tools_are_small() {
        let result: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let mut body = json!({"messages": [
            {"role": "user", "content": "run the tests"},
            {"role": "tool", "tool_call_id": "c", "content": result},
            {"role": "user", "content": "and?"},
        ]})
        .as_object()
        .unwrap()
        .clone();
        let before = estimate_request_tokens(&body);
        let mut r = Shrunk::default();
        assert!(shrink(
            &mut body,
            before - 1000,
            2000,
            &Shrink::default(),
            &mut r
        ));
        assert_eq!(r.contents_cut, [1]);
        let t = body["messages"][1]["content"].as_str().unwrap();
        assert!(t.starts_with("line 0\n") && t.contains("lines cut"), "{t}");
        assert!(t.ends_with("line 1999\n"));
        assert!(estimate_request_tokens(&body) <= before - 1000);
        // Nothing left to cut: false.
        let mut tiny = json!({"messages": [{"role": "user", "content": "x".repeat(9000)}]})
            .as_object()
            .unwrap()
            .clone();
        assert!(!shrink(
            &mut tiny,
            100,
            1000,
            &Shrink::default(),
            &mut Shrunk::default()
        ));
    }
}

//! Google Gemini / Vertex `streamGenerateContent?alt=sse` (STREAMS.md §6).
//!
//! * `text` parts → `Text`; `text` with `thought: true` → `Thinking`.
//! * A `functionCall` part with `name` (and `args`) is a whole call. With
//!   Vertex's `streamFunctionCallArguments`, a `functionCall{name,
//!   willContinue}` opens a call whose arguments then arrive as
//!   `partialArgs` (`jsonPath` + value pieces): they are turned into JSON
//!   text as they come (`{"location":"Bos`, `ton"`, …) and the call ends at
//!   an empty `functionCall{}`, at the next call, at `finishReason` or at end
//!   of stream (a missing terminator is common).
//! * Calls take the part's `id` when present (Gemini 3), else a generated one.
//! * A part's `thoughtSignature` → [`Event::Opaque`] (`thought_signature`),
//!   with the call index when the part is a function call.
//! * `finishReason` may come on an intermediate chunk; the response ends at
//!   end of stream. `usageMetadata` is cumulative: the last one wins.
//! * `executableCode`, `codeExecutionResult` and other part kinds are skipped
//!   with a diagnostic. Only candidate 0 is decoded. A payload with an
//!   `error` object is a provider error.

use super::json::{Doc, Payloads, J};
use super::{Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, FinishReason, OpaqueKind, Span};

/// One step of a JSONPath (`$.a.b[3]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(u64),
}

/// A path segment's text. The path is scanned byte by byte and a bracket
/// or quote the model left out can put a cut inside a character: the
/// segment is then decoded lossily instead of slicing the `str` (which
/// panicked on such input; fuzz finding `provider-1`).
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn parse_path(p: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let b = p.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'$'));
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                segs.push(Seg::Key(text(&b[start..j])));
                i = j;
            }
            b'[' => {
                let start = i + 1;
                if matches!(b.get(start), Some(b'\'' | b'"')) {
                    let q = b[start];
                    let mut j = start + 1;
                    let mut key = String::new();
                    while j < b.len() && b[j] != q {
                        if b[j] == b'\\' && j + 1 < b.len() {
                            j += 1;
                        }
                        let ch_end = (j + 1..=b.len())
                            .find(|&e| p.is_char_boundary(e))
                            .unwrap_or(b.len());
                        key.push_str(&text(&b[j..ch_end]));
                        j = ch_end;
                    }
                    segs.push(Seg::Key(key));
                    i = (j + 2).min(b.len());
                } else {
                    let mut j = start;
                    while j < b.len() && b[j] != b']' {
                        j += 1;
                    }
                    let inner = text(&b[start..j]);
                    segs.push(match inner.parse::<u64>() {
                        Ok(n) => Seg::Index(n),
                        Err(_) => Seg::Key(inner),
                    });
                    i = (j + 1).min(b.len());
                }
            }
            _ => {
                // A bare first key (`location` without `$.`).
                let mut j = i;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                segs.push(Seg::Key(text(&b[i..j])));
                i = j;
            }
        }
    }
    segs
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Obj,
    Arr,
}

#[derive(Debug)]
struct Container {
    kind: Kind,
    members: usize,
}

/// Turns a sequence of `partialArgs` into append-only JSON text.
#[derive(Debug)]
pub(crate) struct PathJson {
    containers: Vec<Container>,
    /// `path[k]` leads from `containers[k]` to `containers[k + 1]`.
    path: Vec<Seg>,
    /// The path of a string value still open.
    open_string: Option<Vec<Seg>>,
}

impl PathJson {
    pub(crate) fn new() -> Self {
        PathJson {
            containers: vec![Container {
                kind: Kind::Obj,
                members: 0,
            }],
            path: Vec::new(),
            open_string: None,
        }
    }

    fn kind_for(seg: &Seg) -> Kind {
        match seg {
            Seg::Key(_) => Kind::Obj,
            Seg::Index(_) => Kind::Arr,
        }
    }

    /// Writes the separator and key for a new member of the innermost container.
    fn member(&mut self, seg: &Seg, out: &mut String) {
        let c = self.containers.last_mut().expect("root container");
        if c.members > 0 {
            out.push(',');
        }
        c.members += 1;
        if c.kind == Kind::Obj {
            let key = match seg {
                Seg::Key(k) => k.clone(),
                Seg::Index(i) => i.to_string(),
            };
            out.push_str(&serde_json::Value::String(key).to_string());
            out.push(':');
        }
    }

    /// One partial argument: `value` is JSON text (for strings, the raw
    /// string content to escape); appends the JSON it adds to `out`.
    pub(crate) fn push(
        &mut self,
        path: &[Seg],
        value: PathValue<'_>,
        more: bool,
        out: &mut String,
    ) {
        if path.is_empty() {
            return;
        }
        if let Some(open) = &self.open_string {
            if open.as_slice() == path {
                if let PathValue::Str(s) = value {
                    push_escaped(s, out);
                    if !more {
                        out.push('"');
                        self.open_string = None;
                    }
                    return;
                }
            }
            out.push('"');
            self.open_string = None;
        }
        let parent = &path[..path.len() - 1];
        // Common prefix of open containers and the parent path (kinds must agree).
        let mut c = 0;
        while c < self.path.len() && c < parent.len() && self.path[c] == parent[c] {
            let next_kind = Self::kind_for(&path[c + 1]);
            if self.containers[c + 1].kind != next_kind {
                break;
            }
            c += 1;
        }
        while self.containers.len() > c + 1 {
            let k = self.containers.pop().map(|c| c.kind);
            self.path.pop();
            out.push(if k == Some(Kind::Obj) { '}' } else { ']' });
        }
        for k in c..parent.len() {
            self.member(&path[k], out);
            let kind = Self::kind_for(&path[k + 1]);
            out.push(if kind == Kind::Obj { '{' } else { '[' });
            self.containers.push(Container { kind, members: 0 });
            self.path.push(path[k].clone());
        }
        self.member(&path[path.len() - 1], out);
        match value {
            PathValue::Str(s) => {
                out.push('"');
                push_escaped(s, out);
                if more {
                    self.open_string = Some(path.to_vec());
                } else {
                    out.push('"');
                }
            }
            PathValue::Json(j) => out.push_str(j),
        }
    }

    /// Closes everything; returns true when a string was still open.
    pub(crate) fn finish(&mut self, out: &mut String) -> bool {
        let open = self.open_string.take().is_some();
        if open {
            out.push('"');
        }
        while let Some(c) = self.containers.pop() {
            out.push(if c.kind == Kind::Obj { '}' } else { ']' });
        }
        open
    }

    /// The opening brace, written when the call starts.
    pub(crate) fn begin(out: &mut String) {
        out.push('{');
    }
}

/// The value of one partial argument.
pub(crate) enum PathValue<'a> {
    /// String content (unescaped).
    Str(&'a str),
    /// A complete JSON scalar.
    Json(&'a str),
}

fn push_escaped(s: &str, out: &mut String) {
    let quoted = serde_json::Value::String(s.to_owned()).to_string();
    out.push_str(&quoted[1..quoted.len() - 1]);
}

pub(crate) struct GeminiDecoder {
    base: Base,
    /// A call whose arguments stream as `partialArgs`.
    partial: Option<(usize, PathJson)>,
    other_candidates: bool,
}

impl GeminiDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        let mut base = Base::new(cfg, "end of stream");
        base.calls.empty_ok = true;
        GeminiDecoder {
            base,
            partial: None,
            other_candidates: false,
        }
    }

    fn close_partial(&mut self, cut: bool, span: Span, out: &mut Vec<Event>) {
        if let Some((ci, mut pj)) = self.partial.take() {
            let mut tail = String::new();
            let open = pj.finish(&mut tail);
            self.base.calls.args(ci, tail.as_bytes(), span, out);
            self.base.calls.end(ci, cut || open, span, out);
        }
    }

    fn chunk(&mut self, d: &Doc<'_, '_>, span: Span, out: &mut Vec<Event>) {
        let r = d.root;
        let err = r.get("error");
        if err.exists() {
            let msg = err
                .get("message")
                .str()
                .map(str::to_owned)
                .unwrap_or_else(|| err.encode());
            let message = match err.get("status").str() {
                Some(s) => format!("{s}: {msg}"),
                None => msg,
            };
            self.close_partial(true, span, out);
            self.base.provider_error(message, span, out);
            return;
        }
        self.base.active = true;
        let u = r.get("usageMetadata");
        if u.is_object() {
            self.base.set_usage(
                u.get("promptTokenCount").u64(),
                u.get("candidatesTokenCount").u64(),
                u.get("thoughtsTokenCount").u64(),
            );
        }
        for cand in r.get("candidates").items() {
            if cand.get("index").u64().unwrap_or(0) != 0 {
                if !self.other_candidates {
                    self.other_candidates = true;
                    self.base.unknown(
                        "only candidate 0 is decoded; other candidates are skipped",
                        span,
                        out,
                    );
                }
                continue;
            }
            for part in cand.get("content").get("parts").items() {
                self.part(d, part, span, out);
            }
            if let Some(fr) = cand.get("finishReason").nonempty() {
                self.close_partial(false, span, out);
                self.base.calls.end_all(false, span, out);
                self.base.reason = Some(finish_reason(fr));
                self.base.eof_ok = true;
            }
        }
    }

    fn part(&mut self, d: &Doc<'_, '_>, part: J<'_, '_>, span: Span, out: &mut Vec<Event>) {
        let sig = part.get("thoughtSignature").nonempty();
        let fc = part.get("functionCall");
        if fc.is_object() {
            let ci = self.function_call(fc, span, out);
            if let Some(s) = sig {
                out.push(Event::Opaque {
                    kind: OpaqueKind::ThoughtSignature,
                    index: ci.and_then(|h| self.base.calls.index_of(h)),
                    data: s.to_owned(),
                    span,
                });
            }
            return;
        }
        if let Some(s) = sig {
            out.push(Event::Opaque {
                kind: OpaqueKind::ThoughtSignature,
                index: None,
                data: s.to_owned(),
                span,
            });
        }
        if let Some(t) = part.get("text").str() {
            if part.get("thought").bool() == Some(true) {
                self.base.thinking(d, t, span, out);
            } else {
                self.base.text(d, t, span, out);
            }
            return;
        }
        if let Some((kind, _)) = part
            .members()
            .find(|(k, _)| *k != "thoughtSignature" && *k != "thought")
        {
            self.base.unknown(
                format!("part `{kind}` is not represented; skipped"),
                span,
                out,
            );
        }
    }

    fn function_call(&mut self, fc: J<'_, '_>, span: Span, out: &mut Vec<Event>) -> Option<usize> {
        let name = fc.get("name").nonempty();
        let more = fc.get("willContinue").bool() == Some(true);
        let partial_args = fc.get("partialArgs");
        if let Some(name) = name {
            self.close_partial(false, span, out);
            let ci = self
                .base
                .calls
                .begin(fc.get("id").nonempty(), Some(name), span, out);
            let args = fc.get("args");
            if more && !args.exists() {
                let mut pj = PathJson::new();
                let mut text = String::new();
                PathJson::begin(&mut text);
                self.push_partials(&mut pj, partial_args, &mut text);
                self.base.calls.args(ci, text.as_bytes(), span, out);
                self.partial = Some((ci, pj));
            } else {
                if args.exists() {
                    self.base
                        .calls
                        .args(ci, args.encode().as_bytes(), span, out);
                }
                self.base.calls.end(ci, false, span, out);
            }
            return Some(ci);
        }
        let Some((ci, mut pj)) = self.partial.take() else {
            if partial_args.exists() || fc.len() > 0 {
                self.base.unknown(
                    "`functionCall` continuation without an open call; skipped",
                    span,
                    out,
                );
            }
            return None;
        };
        if partial_args.exists() {
            let mut text = String::new();
            self.push_partials(&mut pj, partial_args, &mut text);
            self.base.calls.args(ci, text.as_bytes(), span, out);
            self.partial = Some((ci, pj));
        } else if more {
            self.partial = Some((ci, pj));
        } else {
            // `functionCall: {}`: the call is complete.
            self.partial = Some((ci, pj));
            self.close_partial(false, span, out);
        }
        Some(ci)
    }

    fn push_partials(&self, pj: &mut PathJson, partial_args: J<'_, '_>, text: &mut String) {
        for pa in partial_args.items() {
            let path = parse_path(pa.get("jsonPath").str().unwrap_or_default());
            let more = pa.get("willContinue").bool() == Some(true);
            if let Some(s) = pa.get("stringValue").str() {
                pj.push(&path, PathValue::Str(s), more, text);
            } else if pa.get("numberValue").is_number() {
                pj.push(
                    &path,
                    PathValue::Json(&pa.get("numberValue").encode()),
                    false,
                    text,
                );
            } else if let Some(b) = pa.get("boolValue").bool() {
                pj.push(
                    &path,
                    PathValue::Json(if b { "true" } else { "false" }),
                    false,
                    text,
                );
            } else if pa.get("nullValue").0.is_some() {
                pj.push(&path, PathValue::Json("null"), false, text);
            }
        }
    }
}

/// Maps a Gemini `finishReason`.
pub(crate) fn finish_reason(s: &str) -> FinishReason {
    match s {
        "STOP" | "FINISH_REASON_UNSPECIFIED" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        other => FinishReason::Other(other.to_owned()),
    }
}

impl Decode for GeminiDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        let data = f.data.trim_ascii();
        if data.is_empty() || data == b"[DONE]" {
            return;
        }
        let mark = out.len();
        let res = p.parse_lenient(f.data, |d| self.chunk(d, f.span, out));
        self.base.parsed(res.map(|r| r.1), f.span, mark, out);
    }

    fn finish(&mut self, end: u64, out: &mut Vec<Event>) {
        let span = Span::new(end, end);
        let cut = !self.base.eof_ok;
        self.close_partial(cut, span, out);
        self.base.eof(end, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(steps: &[(&str, PathValue<'_>, bool)]) -> String {
        let mut pj = PathJson::new();
        let mut out = String::new();
        PathJson::begin(&mut out);
        for (p, v, more) in steps {
            let v = match v {
                PathValue::Str(s) => PathValue::Str(s),
                PathValue::Json(j) => PathValue::Json(j),
            };
            pj.push(&parse_path(p), v, *more, &mut out);
        }
        pj.finish(&mut out);
        out
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("$.recipe.ingredients[3].name"),
            vec![
                Seg::Key("recipe".into()),
                Seg::Key("ingredients".into()),
                Seg::Index(3),
                Seg::Key("name".into())
            ]
        );
        assert_eq!(
            parse_path("$['a.b'][0]"),
            vec![Seg::Key("a.b".into()), Seg::Index(0)]
        );
        // A quoted key not followed by `]`: the next segment starts inside
        // a character (this panicked: fuzz finding `provider-1`).
        assert_eq!(
            parse_path("$.ops[\"k\"\u{FFFD} [x]"),
            vec![
                Seg::Key("ops".into()),
                Seg::Key("k".into()),
                Seg::Key("\u{FFFD}\u{FFFD} ".into()),
                Seg::Key("x".into())
            ]
        );
    }

    proptest::proptest! {
        /// Any path text gives segments, never a panic.
        #[test]
        fn any_path_parses(p in "[$.\\[\\]'\"a0é日🦀 ]{0,24}") {
            let _ = parse_path(&p);
        }
    }

    #[test]
    fn builds_nested_json() {
        let out = build(&[
            ("$.location", PathValue::Str("Bos"), true),
            ("$.location", PathValue::Str("ton"), true),
            ("$.location", PathValue::Str(""), false),
        ]);
        assert_eq!(out, r#"{"location":"Boston"}"#);
        let out = build(&[
            ("$.ops[0].action", PathValue::Str("add"), false),
            ("$.ops[0].price", PathValue::Json("0.5"), false),
            ("$.ops[1].action", PathValue::Str("a\"b"), false),
            ("$.name", PathValue::Str("x"), true),
            ("$.steps[0]", PathValue::Str("s0"), false),
            ("$.steps[1]", PathValue::Json("true"), false),
        ]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"ops": [{"action": "add", "price": 0.5}, {"action": "a\"b"}], "name": "x", "steps": ["s0", true]})
        );
    }
}

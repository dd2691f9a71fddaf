//! Hermes / Qwen2.5 / Qwen3 tool-call tags.
//!
//! ```text
//! Let me check.
//! <tool_call>
//! {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! </tool_call>
//! ```
//!
//! The same reader serves the tag variants `<tool_use>`, `<function_call>`
//! (granite-20b-functioncalling repeats it without closing tags, which is
//! not a repair there), `<tools>` and `<tool_calls>` (Jamba, Hunyuan,
//! MiniMax-M1). `<function_calls>` may hold JSON or Olmo 3's pythonic calls
//! and is read by the Olmo 3 reader, which dispatches on the content. Inside the tags: one
//! JSON object, an array of objects, or several objects one after another;
//! any envelope shape ([`crate::envelope`]). A missing closing tag is
//! repaired ([`RepairKind::MissingCloseTag`]); a closing tag that arrives
//! inside an unfinished object closes it. A block that names no tool (prose
//! after the tag, an empty block) is given back as text with a diagnostic.

use super::json::JsonCalls;
use super::{Action, Block, BlockArgs, Cx, Flow, Resume, Trigger};
use crate::event::{DiagnosticKind, Repair, RepairKind, Span};
use crate::json::Status;
use crate::scan::{match_lit, Match, Pattern};

macro_rules! tag_triggers {
    ($($open:literal),*) => {
        &[$(Trigger {
            pattern: Pattern::Lit($open),
            action: Action::Block { open: open_tag, consume: true },
        }),*]
    };
}

pub(crate) const TRIGGERS: &[Trigger] = tag_triggers!(
    b"<tool_call>",
    b"<tool_use>",
    b"<function_call>",
    b"<function_calls>",
    b"<tools>",
    b"<tool_calls>"
);

fn open_tag(a: &BlockArgs<'_>) -> Box<dyn Block> {
    if a.trigger == b"<function_calls>" {
        // JSON here, pythonic calls in Olmo 3: dispatched on the content.
        return super::olmo3::open_function_calls(a);
    }
    // `<tool_call>` closes with `</tool_call>`.
    let mut close = Vec::with_capacity(a.trigger.len() + 1);
    close.push(b'<');
    close.push(b'/');
    close.extend_from_slice(&a.trigger[1..]);
    Box::new(TagBlock {
        close,
        state: State::Lead,
        jc: None,
        repairs: Vec::new(),
        limits: a.cfg.limits.clone(),
        // granite-20b-functioncalling repeats `<function_call> {…}` without closing tags.
        close_optional: a.trigger == b"<function_call>",
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Blanks before the content.
    Lead,
    /// Inside a JSON value.
    Json,
    /// After a value (or where the repairer stopped at a `<`).
    After,
}

/// A tag-delimited block of JSON calls.
pub(crate) struct TagBlock {
    close: Vec<u8>,
    state: State,
    jc: Option<JsonCalls>,
    repairs: Vec<Repair>,
    limits: crate::config::Limits,
    /// A missing closing tag is the dialect's normal form, not a repair.
    close_optional: bool,
}

impl TagBlock {
    fn end_calls(&mut self, cx: &mut Cx<'_>, end: u64) {
        let extra = std::mem::take(&mut self.repairs);
        if let Some(jc) = self.jc.as_mut() {
            if !jc.is_closed() {
                jc.close(cx, false);
            }
            jc.end_all(cx, end, extra);
        }
    }

    /// The block ended at `at` (the closing tag included, or missing).
    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing_close: bool) -> Flow {
        if let Some(jc) = self.jc.as_mut() {
            if !jc.is_closed() {
                jc.close(cx, false);
            }
            if !cx.committed() && jc.named() {
                cx.commit();
            }
        }
        if !cx.committed() {
            let span = Span::new(cx.em.span_cursor(), cx.abs(at));
            cx.diag(
                DiagnosticKind::UnparseableBlock,
                format!(
                    "`{}` block holds no tool call; kept as text",
                    String::from_utf8_lossy(&self.close[2..self.close.len() - 1])
                ),
                span,
            );
            return Flow::Reject {
                at,
                then: Resume::Text,
            };
        }
        if missing_close && !self.close_optional {
            self.repairs.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: cx.abs(at),
            });
        }
        self.end_calls(cx, cx.abs(at));
        Flow::Done(at)
    }
}

impl Block for TagBlock {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Lead | State::After => {
                    let b = input[i];
                    match b {
                        b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                        b'<' => match match_lit(&self.close, &input[i..]) {
                            Match::Full(n) => return self.done(cx, i + n, false),
                            Match::Partial => return Flow::Partial(i),
                            // Some other tag: the block ends before it.
                            Match::No => return self.done(cx, i, true),
                        },
                        b'{' | b'[' => {
                            if let Some(jc) = self.jc.as_mut() {
                                // Another value in the same block.
                                jc.end_all(cx, cx.abs(i), Vec::new());
                            }
                            self.jc = Some(JsonCalls::with_limits(&self.limits, false, true));
                            self.state = State::Json;
                        }
                        b'}' | b']' | b',' if self.state == State::After => {
                            self.repairs.push(Repair {
                                kind: RepairKind::TrailingGarbage,
                                offset: cx.abs(i),
                            });
                            i += 1;
                        }
                        _ => {
                            if self.state == State::Lead {
                                // Prose after the tag: not a call.
                                return Flow::Reject {
                                    at: i,
                                    then: Resume::Text,
                                };
                            }
                            return self.done(cx, i, true);
                        }
                    }
                }
                State::Json => {
                    let Some(jc) = self.jc.as_mut() else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    };
                    let mut sub = Cx {
                        base: cx.abs(i),
                        em: &mut *cx.em,
                        cfg: cx.cfg,
                    };
                    let p = jc.feed(&input[i..], &mut sub);
                    i += p.consumed;
                    if !sub.committed() && jc.named() {
                        sub.commit();
                    }
                    match p.status {
                        Status::NeedMore => return Flow::More,
                        Status::Done | Status::Stop | Status::Halted => self.state = State::After,
                        Status::Limit => {
                            jc.close(&mut sub, true);
                            self.state = State::After;
                            if sub.committed() {
                                return self.done(cx, i, true);
                            }
                        }
                    }
                }
            }
        }
        Flow::More
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let Some(jc) = self.jc.as_mut() else {
            return false;
        };
        let named_before = jc.named();
        jc.close(cx, true);
        if !cx.committed() && named_before {
            cx.commit();
        }
        if !cx.committed() {
            return false;
        }
        if !self.close_optional {
            self.repairs.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: cx.base,
            });
        }
        let end = cx.base;
        self.end_calls(cx, end);
        true
    }
}

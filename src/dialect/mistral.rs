//! Mistral `[TOOL_CALLS]`.
//!
//! ```text
//! [TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}]          (tokenizer < v11)
//! [TOOL_CALLS]get_weather[ARGS]{"location": "San Francisco"}              (≥ v11)
//! [TOOL_CALLS]get_weather{"location": "San Francisco"}                    (mistral_common detokenized)
//! [TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"location": "Paris"}
//! ```
//!
//! After `[TOOL_CALLS]` comes either a JSON array (or object) of call
//! envelopes, or a tool name followed by `[ARGS]` (or directly by `{`) and
//! the arguments object; a `[CALL_ID]` gives the call id. Each further call
//! repeats `[TOOL_CALLS]`. Prose after the token is text; the token as the
//! very last one (blanks or `</s>` at most after it) is markup. A closing
//! `[/TOOL_CALLS]` after the array is part of the call's span; `</s>` is
//! [markup](crate::Event::Markup). Reasoning is `[THINK]…[/THINK]`.

use super::args::{is_name_byte, ArgsJson};
use super::json::JsonCalls;
use super::{Action, Block, BlockArgs, Cx, Flow, LaneHost, Resume, Trigger};
use crate::config::Config;
use crate::event::Span;
use crate::json::Status;
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"[TOOL_CALLS]"),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"</s>"),
        action: Action::Markup,
    },
];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(MistralBlock {
        st: St::Lead,
        name: Vec::new(),
        id: Vec::new(),
        local: None,
        args: None,
        jc: None,
        cfg: a.cfg.clone(),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    Name,
    /// Blanks after the name.
    NameWs,
    Id,
    Args,
    Json,
    After,
}

const MAX_NAME: usize = 256;

struct MistralBlock {
    st: St,
    name: Vec<u8>,
    id: Vec<u8>,
    local: Option<usize>,
    args: Option<ArgsJson>,
    jc: Option<JsonCalls>,
    cfg: Config,
}

impl MistralBlock {
    fn start_call(&mut self, cx: &mut Cx<'_>, at: u64) {
        let name = String::from_utf8_lossy(&self.name).into_owned();
        let id = (!self.id.is_empty())
            .then(|| String::from_utf8_lossy(self.id.trim_ascii()).into_owned());
        self.local = Some(cx.start(name, id, Span::new(at, at)));
        self.args = Some(ArgsJson::new(&self.cfg.limits, false));
        cx.commit();
        self.st = St::Args;
    }
}

impl Block for MistralBlock {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.st {
                St::Lead => {
                    if b.is_ascii_whitespace() {
                        i += 1;
                    } else if b == b'{' || b == b'[' {
                        self.jc = Some(JsonCalls::new(&self.cfg, false, false).prose_ends());
                        self.st = St::Json;
                    } else if is_name_byte(b) && b != b'-' && b != b'.' {
                        self.st = St::Name;
                    } else if b == b'<' {
                        // `[TOOL_CALLS]</s>`: the token ended the turn with
                        // no call after it; it is markup, as at the end.
                        match match_lit(b"</s>", &input[i..]) {
                            Match::Full(_) => {
                                cx.commit();
                                return Flow::Done(i);
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No => {
                                return Flow::Reject {
                                    at: i,
                                    then: Resume::Text,
                                }
                            }
                        }
                    } else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                }
                St::Name => {
                    if is_name_byte(b) && self.name.len() < MAX_NAME {
                        self.name.push(b);
                        i += 1;
                    } else if b == b'[' {
                        match match_lit(b"[ARGS]", &input[i..]) {
                            Match::Full(n) => {
                                i += n;
                                self.start_call(cx, cx.abs(i));
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No => match match_lit(b"[CALL_ID]", &input[i..]) {
                                Match::Full(n) => {
                                    i += n;
                                    self.st = St::Id;
                                }
                                Match::Partial => return Flow::Partial(i),
                                Match::No => {
                                    return Flow::Reject {
                                        at: i,
                                        then: Resume::Text,
                                    }
                                }
                            },
                        }
                    } else if b == b'{' {
                        self.start_call(cx, cx.abs(i));
                    } else if b == b' ' || b == b'\t' {
                        self.st = St::NameWs;
                        i += 1;
                    } else {
                        // Prose after the token.
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                }
                St::NameWs => {
                    if b == b' ' || b == b'\t' {
                        i += 1;
                    } else if b == b'{' || b == b'[' {
                        self.st = St::Name;
                    } else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                }
                St::Id => {
                    if b == b'[' {
                        match match_lit(b"[ARGS]", &input[i..]) {
                            Match::Full(n) => {
                                i += n;
                                self.start_call(cx, cx.abs(i));
                                continue;
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No => {}
                        }
                    }
                    if b == b'{' {
                        self.start_call(cx, cx.abs(i));
                        continue;
                    }
                    if self.id.len() >= MAX_NAME || b == b'\n' {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                    self.id.push(b);
                    i += 1;
                }
                St::Args => {
                    let (Some(args), Some(local)) = (self.args.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let mut sub = cx.at(i);
                    let p = args.feed(&input[i..], &mut sub, local);
                    i += p.consumed;
                    match p.status {
                        Status::NeedMore => return Flow::More,
                        Status::Limit => {
                            args.close(&mut sub, local, true);
                            args.end(cx, local, cx.abs(i), Vec::new());
                            return Flow::Done(i);
                        }
                        _ => {
                            args.end(cx, local, cx.abs(i), Vec::new());
                            return Flow::Done(i);
                        }
                    }
                }
                St::Json => {
                    let Some(jc) = self.jc.as_mut() else {
                        return Flow::Done(i);
                    };
                    let mut sub = cx.at(i);
                    let p = jc.feed(&input[i..], &mut sub);
                    i += p.consumed;
                    if !sub.committed() && jc.named() {
                        sub.commit();
                    }
                    match p.status {
                        Status::NeedMore => return Flow::More,
                        Status::Limit => {
                            jc.close(&mut sub, true);
                            self.st = St::After;
                        }
                        // Prose after a blank line: the value the model
                        // left open ends there (the prose is text).
                        Status::Stop => {
                            jc.close(&mut sub, false);
                            self.st = St::After;
                        }
                        _ => self.st = St::After,
                    }
                    if !cx.committed() {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                }
                St::After => {
                    // Blanks, then maybe a closing `[/TOOL_CALLS]`.
                    // At most 64 blanks are looked through, however the
                    // input was split: a closer after more is not looked for.
                    let p = input[i..]
                        .iter()
                        .take(64)
                        .position(|b| !b.is_ascii_whitespace());
                    let p = match p {
                        Some(p) => p,
                        None if input.len() - i < 64 => return Flow::Partial(i),
                        None => 0,
                    };
                    let end = match match_lit(b"[/TOOL_CALLS]", &input[i + p..]) {
                        Match::Full(n) => i + p + n,
                        Match::Partial => return Flow::Partial(i),
                        Match::No => i,
                    };
                    if let Some(jc) = self.jc.as_mut() {
                        jc.end_all(cx, cx.abs(end), Vec::new());
                    }
                    return Flow::Done(end);
                }
            }
        }
        Flow::More
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        match (self.st, self.local) {
            (St::Json, _) => self.jc.as_mut().map(LaneHost::Calls),
            // Every byte goes to the arguments reader once the call started.
            (St::Args, Some(local)) => self.args.as_mut().map(|a| LaneHost::Args(a, local)),
            _ => None,
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        match self.st {
            // The input ended inside the name (`St::Name`): it may be the
            // start of another, so it names nothing.
            St::NameWs | St::Id if !self.name.is_empty() => {
                self.start_call(cx, cx.base);
                if let (Some(args), Some(local)) = (self.args.as_mut(), self.local) {
                    args.close(cx, local, true);
                }
            }
            St::Args => {
                if let (Some(args), Some(local)) = (self.args.as_mut(), self.local) {
                    args.close(cx, local, true);
                }
            }
            St::Json | St::After => {
                if let Some(jc) = self.jc.as_mut() {
                    let named = jc.named();
                    jc.close(cx, true);
                    if named {
                        cx.commit();
                    }
                }
            }
            // `[TOOL_CALLS]` as the very last token (blanks at most after
            // it): the model stopped where a call would begin. The token is
            // markup, not text; no call is made up.
            St::Lead => cx.commit(),
            _ => {}
        }
        if !cx.committed() {
            return false;
        }
        let end = cx.base;
        if let (Some(args), Some(local)) = (self.args.as_mut(), self.local) {
            args.end(cx, local, end, Vec::new());
        } else if let Some(jc) = self.jc.as_mut() {
            jc.end_all(cx, end, Vec::new());
        }
        true
    }
}

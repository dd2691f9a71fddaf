//! Gemma 4 and FunctionGemma calls.
//!
//! ```text
//! <|tool_call>call:get_weather{location:<|"|>Paris<|"|>,units:<|"|>metric<|"|>,days:3}<tool_call|>
//! <start_function_call>call:get_weather{city:<escape>paris<escape>}<end_function_call>
//! ```
//!
//! The arguments are an object with bare keys, strings between `<|"|>`
//! (FunctionGemma: `<escape>`) taken literally, and JSON numbers, literals,
//! arrays and objects; `"…"` strings with JSON escapes are accepted too.
//! They are transcoded to JSON as they stream (see
//! [`pyvalue`](super::pyvalue)). The closing token ends the call even
//! inside an unclosed string, and closers at the end of such a string close
//! the structure (`{command:<|"|>ls}<tool_call|>` → `{"command": "ls"}`).
//! Stray `<tool_call|>`, `<|tool_response>` and `<end_of_turn>` are
//! [markup](crate::Event::Markup). Reasoning is `<|channel>thought⏎…<channel|>`.
//!
//! **Without the wrapper tokens** (stripped by the server), a line starting
//! with `call:NAME{` is a call too: Gemma 4's when that dialect alone is
//! configured, FunctionGemma's (`<escape>` strings) when that one alone is.
//! With both (auto mode), the first string delimiter the value uses,
//! `<|"|>` or `<escape>`, decides; and in auto mode the line is a call
//! only with evidence: a delimited string, a closing token, or a value
//! read without any repair (`call:f{n:1}`). `call:me{maybe} later` stays
//! text.

use super::args::is_name_byte;
use super::pyvalue::{Flavor, VStep, ValueLexer, Writer};
use super::{enabled, Action, Block, BlockArgs, Cx, Dialect, Flow, Resume, Trigger};
use crate::config::Limits;
use crate::event::{Repair, RepairKind, Span};
use crate::scan::{match_lit, Match, Pattern};

/// Gemma's turn tokens, markup in both of its call dialects.
const TURN_TOKENS: [Trigger; 3] = [
    Trigger {
        pattern: Pattern::Lit(b"<end_of_turn>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<start_of_turn>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<eos>"),
        action: Action::Markup,
    },
];

pub(crate) const GEMMA4_TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<|tool_call>"),
        action: Action::Block {
            open: open_gemma4,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<tool_call|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|tool_response>"),
        action: Action::Markup,
    },
    TURN_TOKENS[0],
    TURN_TOKENS[1],
    TURN_TOKENS[2],
    Trigger {
        pattern: Pattern::Line { matches: bare_call },
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
];

pub(crate) const FUNCTIONGEMMA_TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Line { matches: bare_call },
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<start_function_call>"),
        action: Action::Block {
            open: open_functiongemma,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<end_function_call>"),
        action: Action::Markup,
    },
    TURN_TOKENS[0],
    TURN_TOKENS[1],
    TURN_TOKENS[2],
];

const GEMMA4_CLOSE: &[&[u8]] = &[b"<tool_call|>"];
const FG_CLOSE: &[&[u8]] = &[b"<end_function_call>"];
const BOTH_CLOSE: &[&[u8]] = &[b"<tool_call|>", b"<end_function_call>"];
const GEMMA4_DELIM: &[u8] = b"<|\"|>";
const FG_DELIM: &[u8] = b"<escape>";

fn open_gemma4(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(GemmaCall::new(GEMMA4_CLOSE, GEMMA4_DELIM, &a.cfg.limits))
}

/// A line that starts with `call:NAME{` (the wrapper tokens were stripped).
fn bare_call(at: &[u8]) -> Match {
    let n = match match_lit(b"call:", at) {
        Match::Full(n) => n,
        m => return m,
    };
    let Some(k) = at[n..].iter().take(257).position(|&b| !is_name_byte(b)) else {
        return if at.len() - n > 256 {
            Match::No
        } else {
            Match::Partial
        };
    };
    if k == 0 || k > 256 || at[n + k] != b'{' {
        return Match::No;
    }
    Match::Full(n + k)
}

/// A bare `call:NAME{…}` line, read by whichever Gemma dialects are enabled.
fn open_bare(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let g4 = enabled(a.cfg, Dialect::Gemma4);
    let fg = enabled(a.cfg, Dialect::FunctionGemma);
    let mut g = if fg && !g4 {
        GemmaCall::new(FG_CLOSE, FG_DELIM, &a.cfg.limits)
    } else {
        GemmaCall::new(GEMMA4_CLOSE, GEMMA4_DELIM, &a.cfg.limits)
    };
    if g4 && fg {
        g.close = BOTH_CLOSE;
        g.alt_delim = Some(FG_DELIM);
    }
    g.bare = true;
    g.needs_evidence = a.cfg.dialects.is_empty();
    Box::new(g)
}

fn open_functiongemma(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(GemmaCall::new(FG_CLOSE, FG_DELIM, &a.cfg.limits))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    Name,
    Value,
    After,
}

const MAX_NAME: usize = 256;

struct GemmaCall {
    close: &'static [&'static [u8]],
    delim: &'static [u8],
    st: St,
    name: Vec<u8>,
    local: Option<usize>,
    lexer: Option<ValueLexer>,
    w: Writer,
    limits: Limits,
    fixes: Vec<Repair>,
    /// A bare `call:NAME{…}` line: no wrapper tokens are expected.
    bare: bool,
    /// A second string delimiter (both Gemma dialects enabled).
    alt_delim: Option<&'static [u8]>,
    /// Not a call until the value shows it is one (a bare line in auto mode).
    needs_evidence: bool,
}

impl GemmaCall {
    fn new(close: &'static [&'static [u8]], delim: &'static [u8], limits: &Limits) -> Self {
        GemmaCall {
            close,
            delim,
            st: St::Lead,
            name: Vec::new(),
            local: None,
            lexer: None,
            w: Writer::new(limits),
            limits: limits.clone(),
            fixes: Vec::new(),
            bare: false,
            alt_delim: None,
            needs_evidence: false,
        }
    }

    fn start(&mut self, cx: &mut Cx<'_>, at: u64) {
        let name = String::from_utf8_lossy(&self.name).into_owned();
        self.local = Some(cx.start(name, None, Span::new(at, at)));
        self.w.repairs.append(&mut self.fixes);
        let mut lexer = ValueLexer::new(
            Flavor::Gemma { delim: self.delim },
            &self.limits,
            b"<",
            self.close,
        );
        if let Some(alt) = self.alt_delim {
            lexer = lexer.alt_delim(alt);
        }
        self.lexer = Some(lexer);
        if !self.needs_evidence {
            cx.commit();
        }
    }

    fn end(&mut self, cx: &mut Cx<'_>, at: u64, missing: bool, truncated: bool) {
        let Some(local) = self.local else { return };
        if let Some(lx) = self.lexer.as_mut() {
            if !lx.is_done() {
                if lx.has_begun() {
                    lx.finish(&mut self.w, at);
                } else {
                    self.w.put(b"{}", at);
                    self.w.repair(RepairKind::MissingArguments, at);
                }
            }
        }
        let extra = if missing && !self.bare {
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: at,
            }]
        } else {
            Vec::new()
        };
        self.w.end_call(cx, local, at, extra, truncated);
        self.local = None;
    }
}

impl Block for GemmaCall {
    fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        if self.st != St::Value {
            return false;
        }
        let (Some(lx), Some(local)) = (self.lexer.as_mut(), self.local) else {
            return false;
        };
        if !lx.plain_chunk(input, cx.base, &mut self.w) {
            return false;
        }
        self.w
            .flush(cx, local, Span::new(cx.base, cx.abs(input.len())));
        true
    }

    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.st {
                St::Lead => {
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    match match_lit(b"call:", &input[i..]) {
                        Match::Full(n) => {
                            i += n;
                            self.st = St::Name;
                        }
                        Match::Partial => return Flow::Partial(i),
                        Match::No if b.is_ascii_alphabetic() || b == b'_' => {
                            self.fixes.push(Repair {
                                kind: RepairKind::SyntaxFix,
                                offset: cx.abs(i),
                            });
                            self.st = St::Name;
                        }
                        Match::No => {
                            return Flow::Reject {
                                at: i,
                                then: Resume::Text,
                            }
                        }
                    }
                }
                St::Name => {
                    if b == b'{' && !self.name.is_empty() {
                        self.start(cx, cx.abs(i));
                        self.st = St::Value;
                    } else if is_name_byte(b) && self.name.len() < MAX_NAME {
                        self.name.push(b);
                        i += 1;
                    } else if b == b' ' && !self.name.is_empty() {
                        i += 1;
                    } else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    }
                }
                St::Value => {
                    let (Some(lx), Some(local)) = (self.lexer.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let base = cx.abs(i);
                    let step = lx.feed(&input[i..], base, &mut self.w);
                    let n = match step {
                        VStep::More => input.len() - i,
                        VStep::Done(n) | VStep::Partial(n) | VStep::Stop(n) => n,
                    };
                    self.w.flush(cx, local, Span::new(base, base + n as u64));
                    i += n;
                    if !cx.committed() && lx.delim_seen() {
                        cx.commit();
                    }
                    match step {
                        VStep::More => return Flow::More,
                        VStep::Done(_) => {
                            if !cx.committed() {
                                if !self.w.repairs.is_empty() {
                                    // No evidence, and not a clean value.
                                    return Flow::Reject {
                                        at: i,
                                        then: Resume::Text,
                                    };
                                }
                                cx.commit();
                            }
                            self.st = St::After;
                        }
                        VStep::Partial(_) => return Flow::Partial(i),
                        VStep::Stop(_) => match super::args::match_any(self.close, &input[i..]) {
                            (Match::Full(k), _) => {
                                cx.commit();
                                self.end(cx, cx.abs(i + k), false, false);
                                return Flow::Done(i + k);
                            }
                            (Match::Partial, _) => return Flow::Partial(i),
                            (Match::No, _) => lx.resume_stop(),
                        },
                    }
                }
                St::After => {
                    if b == b'\n' && self.bare {
                        // The line ends the call; the next may start a call.
                        self.end(cx, cx.abs(i), true, false);
                        return Flow::Done(i);
                    }
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    return match super::args::match_any(self.close, &input[i..]) {
                        (Match::Full(k), _) => {
                            self.end(cx, cx.abs(i + k), false, false);
                            Flow::Done(i + k)
                        }
                        (Match::Partial, _) => Flow::Partial(i),
                        (Match::No, _) => {
                            self.end(cx, cx.abs(i), true, false);
                            Flow::Done(i)
                        }
                    };
                }
            }
        }
        Flow::More
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        if self.needs_evidence && !cx.committed() {
            return false;
        }
        if self.local.is_none() {
            // The input ended before the name's end (its `{`): the name may
            // be the start of another, so there is no call.
            return false;
        }
        let truncated = self.st != St::After;
        let end = cx.base;
        self.end(cx, end, true, truncated);
        true
    }
}

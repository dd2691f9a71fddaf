//! GPT-OSS Harmony messages.
//!
//! ```text
//! <|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>
//! <|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>
//! ```
//!
//! A message header — `<|start|>ROLE`, `<|channel|>CHANNEL`, an optional
//! `<|constrain|>FORMAT`, then `<|message|>` — decides what its content is:
//!
//! * a recipient `to=functions.NAME` (before or after `<|channel|>`, on any
//!   channel) makes the message a call of `NAME` (other recipients such as
//!   `browser.search` name the tool as written); its content is the
//!   arguments JSON, ended by `<|call|>`, `<|end|>` or `<|return|>`. Content
//!   that is not JSON becomes `{"code": …}` for the `python` tool and
//!   `{"value": …}` otherwise ([`RepairKind::NonObjectArguments`]);
//! * the `analysis` channel is reasoning, up to `<|end|>`;
//! * `final`, `commentary` without a recipient, and messages of other roles
//!   are text.
//!
//! Channel markup belongs to the span of the event it delimits: the header
//! and end token of an analysis message are in its `Thinking` span, those of
//! a call in its `ToolEnd` span; the header of a text message and the end
//! tokens after text are [`crate::Event::Markup`].

use super::args::{find_any, match_any, ArgsJson, RawArgs};
use super::{Action, Block, BlockArgs, Cx, Flow, Trigger};
use crate::config::Config;
use crate::event::{Repair, RepairKind, Span};
use crate::json::Status;
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: call_header,
        },
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: analysis_header,
        },
        action: Action::Reasoning { close: b"<|end|>" },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: text_header,
        },
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|end|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|return|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|call|>"),
        action: Action::Markup,
    },
];

const START: &[u8] = b"<|start|>";
const CHANNEL: &[u8] = b"<|channel|>";
const CONSTRAIN: &[u8] = b"<|constrain|>";
const MESSAGE: &[u8] = b"<|message|>";
const ENDS: &[&[u8]] = &[b"<|call|>", b"<|end|>", b"<|return|>"];
const MAX_HEADER: usize = 512;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Analysis,
    Text,
    Call,
}

#[derive(Debug, PartialEq, Eq)]
struct Header<'a> {
    len: usize,
    kind: Kind,
    recipient: &'a [u8],
}

enum Hdr<'a> {
    No,
    Partial,
    Full(Header<'a>),
}

fn first_word(s: &[u8]) -> &[u8] {
    let s = s.trim_ascii_start();
    let end = s
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(s.len());
    &s[..end]
}

/// The word after `to=` in `s`.
fn recipient(s: &[u8]) -> Option<&[u8]> {
    let p = memchr::memmem::find(s, b"to=")?;
    if p > 0 && !s[p - 1].is_ascii_whitespace() {
        return None;
    }
    let w = first_word(&s[p + 3..]);
    (!w.is_empty()).then_some(w)
}

/// Parses a message header at the start of `at`.
fn parse_header(at: &[u8]) -> Hdr<'_> {
    let mut i;
    let mut role: &[u8] = &[];
    let mut channel: &[u8] = &[];
    let mut constrain: &[u8] = &[];
    let mut started = false;
    match match_lit(START, at) {
        Match::Full(n) => {
            i = n;
            started = true;
        }
        Match::Partial => return Hdr::Partial,
        Match::No => match match_lit(CHANNEL, at) {
            Match::Full(_) => i = 0,
            Match::Partial => return Hdr::Partial,
            Match::No => return Hdr::No,
        },
    }
    // Segments: text up to the next `<|`, then a known token.
    let mut seg_start = i;
    let mut seg: u8 = if started { b's' } else { 0 };
    loop {
        let rest = &at[i..];
        let Some(p) = memchr::memmem::find(rest, b"<|") else {
            return if at.len() < MAX_HEADER {
                Hdr::Partial
            } else {
                Hdr::No
            };
        };
        i += p;
        if i > MAX_HEADER {
            return Hdr::No;
        }
        let text = &at[seg_start..i];
        match seg {
            b's' => role = text,
            b'c' => channel = text,
            b'k' => constrain = text,
            _ => {}
        }
        let tok = &at[i..];
        let mut matched = None;
        for (t, k) in [(CHANNEL, b'c'), (CONSTRAIN, b'k'), (MESSAGE, b'm')] {
            match match_lit(t, tok) {
                Match::Full(n) => matched = Some((n, k)),
                Match::Partial => return Hdr::Partial,
                Match::No => {}
            }
        }
        let Some((n, k)) = matched else {
            return Hdr::No;
        };
        i += n;
        seg_start = i;
        seg = k;
        if k == b'm' {
            break;
        }
    }
    let role_word = first_word(role);
    let to = recipient(role)
        .or_else(|| recipient(channel))
        .or_else(|| recipient(constrain));
    let assistant = !started
        || role_word == b"assistant"
        || role_word.starts_with(b"to=")
        || role_word.is_empty();
    let kind = match to {
        Some(r) if assistant && !matches!(r, b"user" | b"all" | b"assistant") => Kind::Call,
        _ if !assistant => Kind::Text,
        _ if matches!(first_word(channel), b"analysis" | b"thinking" | b"thought") => {
            Kind::Analysis
        }
        _ => Kind::Text,
    };
    Hdr::Full(Header {
        len: i,
        kind,
        recipient: to.unwrap_or_default(),
    })
}

fn header_of(kind: Kind, at: &[u8]) -> Match {
    match parse_header(at) {
        Hdr::Full(h) if h.kind == kind => Match::Full(h.len),
        Hdr::Partial => Match::Partial,
        _ => Match::No,
    }
}

fn call_header(at: &[u8]) -> Match {
    header_of(Kind::Call, at)
}

fn analysis_header(at: &[u8]) -> Match {
    header_of(Kind::Analysis, at)
}

fn text_header(at: &[u8]) -> Match {
    header_of(Kind::Text, at)
}

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let recipient = match parse_header(a.trigger) {
        Hdr::Full(h) => h.recipient.to_vec(),
        _ => Vec::new(),
    };
    let recipient = String::from_utf8_lossy(&recipient).into_owned();
    let name = recipient
        .strip_prefix("functions.")
        .unwrap_or(&recipient)
        .to_owned();
    Box::new(HarmonyCall {
        name,
        st: St::Lead,
        local: None,
        json: None,
        raw: None,
        cfg: a.cfg.clone(),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    Json,
    Raw,
    After,
}

/// A message addressed to a tool.
struct HarmonyCall {
    name: String,
    st: St,
    local: Option<usize>,
    json: Option<ArgsJson>,
    raw: Option<RawArgs>,
    cfg: Config,
}

impl HarmonyCall {
    fn start(&mut self, cx: &mut Cx<'_>, at: u64) -> usize {
        let local = cx.start(self.name.clone(), None, Span::new(at, at));
        self.local = Some(local);
        cx.commit();
        local
    }

    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing: bool) -> Flow {
        let end = cx.abs(at);
        let local = match self.local {
            Some(l) => l,
            None => {
                let l = self.start(cx, end);
                self.json = Some(ArgsJson::new(&self.cfg.limits, true));
                l
            }
        };
        let extra = if missing {
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }]
        } else {
            Vec::new()
        };
        if let Some(j) = self.json.as_mut() {
            j.end(cx, local, end, extra);
        } else if let Some(r) = self.raw.as_mut() {
            r.end(cx, local, end, extra);
        }
        Flow::Done(at)
    }
}

impl Block for HarmonyCall {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            match self.st {
                St::Lead => {
                    let b = input[i];
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    if b == b'<' {
                        match match_any(ENDS, &input[i..]) {
                            (Match::Full(n), _) => return self.done(cx, i + n, false),
                            (Match::Partial, _) => return Flow::Partial(i),
                            (Match::No, _) => {}
                        }
                    }
                    let local = self.start(cx, cx.abs(i));
                    if b == b'{' || b == b'[' {
                        self.json = Some(ArgsJson::new(&self.cfg.limits, true));
                        self.st = St::Json;
                    } else {
                        let key = if self.name == "python" {
                            "code"
                        } else {
                            "value"
                        };
                        let mut raw = RawArgs::new(key, &self.cfg.limits);
                        if key == "value" {
                            // Not JSON: kept as a string.
                            raw.note(RepairKind::NonObjectArguments, cx.abs(i));
                        }
                        self.raw = Some(raw);
                        self.st = St::Raw;
                        let _ = local;
                    }
                }
                St::Json => {
                    let (Some(j), Some(local)) = (self.json.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let mut sub = cx.at(i);
                    let p = j.feed(&input[i..], &mut sub, local);
                    i += p.consumed;
                    match p.status {
                        Status::NeedMore => return Flow::More,
                        Status::Limit => {
                            j.close(&mut sub, local, true);
                            self.st = St::After;
                        }
                        _ => self.st = St::After,
                    }
                }
                St::Raw => {
                    let (Some(r), Some(local)) = (self.raw.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let rest = &input[i..];
                    let base = cx.abs(i);
                    let stops: &[&[u8]] = &[b"<|call|>", b"<|end|>", b"<|return|>", START];
                    match find_any(stops, rest) {
                        Some((p, k, full)) => {
                            r.push(&rest[..p], base);
                            r.flush(cx, local, Span::new(base, base + p as u64));
                            if !full {
                                return Flow::Partial(i + p);
                            }
                            if k == 3 {
                                return self.done(cx, i + p, true);
                            }
                            return self.done(cx, i + p + stops[k].len(), false);
                        }
                        None => {
                            r.push(rest, base);
                            r.flush(cx, local, Span::new(base, base + rest.len() as u64));
                            return Flow::More;
                        }
                    }
                }
                St::After => {
                    let b = input[i];
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    return match match_any(ENDS, &input[i..]) {
                        (Match::Full(n), _) => self.done(cx, i + n, false),
                        (Match::Partial, _) => Flow::Partial(i),
                        (Match::No, _) => self.done(cx, i, true),
                    };
                }
            }
        }
        Flow::More
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let end = cx.base;
        let local = match self.local {
            Some(l) => l,
            None => {
                let l = self.start(cx, end);
                self.json = Some(ArgsJson::new(&self.cfg.limits, true));
                l
            }
        };
        let extra = vec![Repair {
            kind: RepairKind::MissingCloseTag,
            offset: end,
        }];
        if let Some(j) = self.json.as_mut() {
            j.close(cx, local, true);
            j.end(cx, local, end, extra);
        } else if let Some(r) = self.raw.as_mut() {
            r.set_truncated();
            r.end(cx, local, end, extra);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(h: &[u8]) -> Option<(Kind, String)> {
        match parse_header(h) {
            Hdr::Full(x) => Some((x.kind, String::from_utf8_lossy(x.recipient).into_owned())),
            _ => None,
        }
    }

    #[test]
    fn headers() {
        assert_eq!(
            kind(b"<|channel|>analysis<|message|>"),
            Some((Kind::Analysis, String::new()))
        );
        assert_eq!(
            kind(b"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"),
            Some((Kind::Call, "functions.get_weather".into()))
        );
        assert_eq!(
            kind(b"<|start|>assistant to=functions.f<|channel|>commentary<|constrain|>json<|message|>"),
            Some((Kind::Call, "functions.f".into()))
        );
        assert_eq!(
            kind(b"<|start|>assistant<|channel|>final<|message|>"),
            Some((Kind::Text, String::new()))
        );
        assert_eq!(
            kind(b"<|start|>user<|message|>"),
            Some((Kind::Text, String::new()))
        );
        assert_eq!(
            kind(b"<|start|>functions.get_weather to=assistant<|message|>"),
            Some((Kind::Text, "assistant".into()))
        );
        assert!(matches!(
            parse_header(b"<|start|>assistant<|chan"),
            Hdr::Partial
        ));
        assert!(matches!(
            parse_header(b"<|start|>assistant<|foo|>"),
            Hdr::No
        ));
    }
}

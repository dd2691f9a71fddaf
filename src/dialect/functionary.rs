//! MeetKai Functionary v3.1 and v3.2.
//!
//! ```text
//! <function=get_weather>{"location": "Paris"}</function>          (v3.1)
//! >>>get_weather
//! {"location": "Paris"}>>>all
//! Here is the weather.                                            (v3.2)
//! ```
//!
//! v3.1 writes `<function=NAME>` then a JSON object: only a `{` right after
//! the `>` makes it Functionary — the same opening tag followed by
//! `<parameter=…>` is Qwen3-Coder's XML, read by another dialect. v3.1 code
//! goes through `<|python_tag|>` (the Llama 3 dialect). v3.2 writes
//! `>>>NAME` and a line break before each call's JSON; `>>>all` introduces
//! text ([markup](crate::Event::Markup)), and `>>>python` code, which
//! becomes `{"code": …}`.

use super::args::{find_any, is_name_byte, ArgsJson, RawArgs};
use super::{Action, Block, BlockArgs, Cx, Flow, LaneHost, Trigger};
use crate::config::Config;
use crate::event::{Repair, RepairKind, Span};
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: function_tag,
        },
        action: Action::Block {
            open: open_v31,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b">",
            matches: recipient_call,
        },
        action: Action::Block {
            open: open_v32,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b">",
            matches: recipient_all,
        },
        action: Action::Markup,
    },
];

const MAX_NAME: usize = 256;

/// Length of a name at the start of `at`; `None` if the input ends inside it.
fn name_at(at: &[u8]) -> Option<usize> {
    let n = at.iter().take(MAX_NAME).position(|&b| !is_name_byte(b));
    match n {
        Some(n) => Some(n),
        None if at.len() >= MAX_NAME => Some(0),
        None => None,
    }
}

/// `<function=NAME>` followed (after blanks) by `{`; the match covers the tag.
fn function_tag(at: &[u8]) -> Match {
    let n = match match_lit(b"<function=", at) {
        Match::Full(n) => n,
        m => return m,
    };
    let Some(k) = name_at(&at[n..]) else {
        return Match::Partial;
    };
    if k == 0 {
        return Match::No;
    }
    let mut i = n + k;
    match at.get(i) {
        None => return Match::Partial,
        Some(b'>') => i += 1,
        Some(_) => return Match::No,
    }
    let tag = i;
    while i < at.len() && at[i].is_ascii_whitespace() && i < tag + 16 {
        i += 1;
    }
    // The input ended (even exactly at the blanks' bound: the byte there
    // decides): wait for more.
    match at.get(i) {
        None => Match::Partial,
        Some(b'{') => Match::Full(tag),
        _ => Match::No,
    }
}

/// `>>>NAME` and a line break (not `>>>all`).
fn recipient(at: &[u8]) -> Result<(usize, usize), Match> {
    let n = match match_lit(b">>>", at) {
        Match::Full(n) => n,
        m => return Err(m),
    };
    let Some(k) = name_at(&at[n..]) else {
        return Err(Match::Partial);
    };
    if k == 0 {
        return Err(Match::No);
    }
    match at.get(n + k) {
        None => Err(Match::Partial),
        Some(b'\n') => Ok((n, n + k)),
        Some(_) => Err(Match::No),
    }
}

fn recipient_call(at: &[u8]) -> Match {
    match recipient(at) {
        Ok((s, e)) if &at[s..e] != b"all" => Match::Full(e + 1),
        Ok(_) => Match::No,
        Err(m) => m,
    }
}

fn recipient_all(at: &[u8]) -> Match {
    match recipient(at) {
        Ok((s, e)) if &at[s..e] == b"all" => Match::Full(e + 1),
        Ok(_) => Match::No,
        Err(m) => m,
    }
}

fn open_v31(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let t = a.trigger;
    let name = String::from_utf8_lossy(&t[b"<function=".len()..t.len() - 1]).into_owned();
    Box::new(FnCall::new(name, Some(b"</function>"), a.cfg))
}

fn open_v32(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let t = a.trigger;
    let name = String::from_utf8_lossy(&t[3..t.len() - 1]).into_owned();
    Box::new(FnCall::new(name, None, a.cfg))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    Json,
    Raw,
    After,
}

/// One call whose name came with its markup.
struct FnCall {
    name: String,
    close: Option<&'static [u8]>,
    st: St,
    local: Option<usize>,
    json: Option<ArgsJson>,
    raw: Option<RawArgs>,
    cfg: Config,
}

impl FnCall {
    fn new(name: String, close: Option<&'static [u8]>, cfg: &Config) -> Self {
        FnCall {
            name,
            close,
            st: St::Lead,
            local: None,
            json: None,
            raw: None,
            cfg: cfg.clone(),
        }
    }

    fn start(&mut self, cx: &mut Cx<'_>, at: u64) -> usize {
        let l = cx.start(self.name.clone(), None, Span::new(at, at));
        self.local = Some(l);
        cx.commit();
        l
    }

    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing: bool) -> Flow {
        let end = cx.abs(at);
        let local = match self.local {
            Some(l) => l,
            None => self.start(cx, end),
        };
        let extra = if missing && self.close.is_some() {
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }]
        } else {
            Vec::new()
        };
        if let Some(r) = self.raw.as_mut() {
            r.end(cx, local, end, extra);
        } else {
            let j = self
                .json
                .get_or_insert_with(|| ArgsJson::new(&self.cfg.limits, true));
            j.end(cx, local, end, extra);
        }
        Flow::Done(at)
    }
}

impl Block for FnCall {
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
                    self.start(cx, cx.abs(i));
                    if b == b'{' || b == b'[' {
                        self.json = Some(ArgsJson::new(&self.cfg.limits, self.close.is_some()));
                        self.st = St::Json;
                    } else {
                        let key = if self.name == "python" {
                            "code"
                        } else {
                            "value"
                        };
                        let mut raw = RawArgs::new(key, &self.cfg.limits);
                        if key == "value" {
                            raw.note(RepairKind::NonObjectArguments, cx.abs(i));
                        }
                        self.raw = Some(raw);
                        self.st = St::Raw;
                    }
                }
                St::Json => {
                    let (Some(j), Some(local)) = (self.json.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let Some(n) = j.feed_value(&input[i..], &mut cx.at(i), local) else {
                        return Flow::More;
                    };
                    i += n;
                    self.st = St::After;
                    if self.close.is_none() {
                        return self.done(cx, i, false);
                    }
                }
                St::Raw => {
                    let (Some(r), Some(local)) = (self.raw.as_mut(), self.local) else {
                        return Flow::Done(i);
                    };
                    let rest = &input[i..];
                    let base = cx.abs(i);
                    let stops: &[&[u8]] = match self.close {
                        Some(c) => &[c, b">>>"],
                        None => &[b">>>", b"<|eot_id|>"],
                    };
                    let stops: Vec<&[u8]> = stops.to_vec();
                    match find_any(&stops, rest) {
                        Some((p, k, full)) => {
                            r.push(&rest[..p], base);
                            r.flush(cx, local, Span::new(base, base + p as u64));
                            if !full {
                                return Flow::Partial(i + p);
                            }
                            if self.close.is_some() && k == 0 {
                                return self.done(cx, i + p + stops[0].len(), false);
                            }
                            return self.done(cx, i + p, self.close.is_some());
                        }
                        None => {
                            r.push(rest, base);
                            r.flush(cx, local, Span::new(base, base + rest.len() as u64));
                            return Flow::More;
                        }
                    }
                }
                St::After => {
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    let Some(close) = self.close else {
                        return self.done(cx, i, false);
                    };
                    return match match_lit(close, &input[i..]) {
                        Match::Full(n) => self.done(cx, i + n, false),
                        Match::Partial => Flow::Partial(i),
                        Match::No => self.done(cx, i, true),
                    };
                }
            }
        }
        Flow::More
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        // Every byte goes to the arguments reader while it reads.
        match (self.st, self.local, self.json.as_mut()) {
            (St::Json, Some(local), Some(j)) => Some(LaneHost::Args(j, local)),
            _ => None,
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let end = cx.base;
        let local = match self.local {
            Some(l) => l,
            None => self.start(cx, end),
        };
        let complete = self.st == St::After || (self.st == St::Raw && self.close.is_none());
        let extra = if self.close.is_some() {
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }]
        } else {
            Vec::new()
        };
        if let Some(r) = self.raw.as_mut() {
            if !complete {
                r.set_truncated();
            }
            r.end(cx, local, end, extra);
        } else {
            let j = self
                .json
                .get_or_insert_with(|| ArgsJson::new(&self.cfg.limits, true));
            j.close(cx, local, !complete);
            j.end(cx, local, end, extra);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers() {
        assert_eq!(
            function_tag(b"<function=get_weather>{\"a\""),
            Match::Full(22)
        );
        assert_eq!(
            function_tag(b"<function=get_weather>\n<parameter=a>"),
            Match::No
        );
        assert_eq!(function_tag(b"<function=get_wea"), Match::Partial);
        assert_eq!(recipient_call(b">>>get_weather\n{"), Match::Full(15));
        assert_eq!(recipient_call(b">>>all\nHi"), Match::No);
        assert_eq!(recipient_all(b">>>all\nHi"), Match::Full(7));
        assert_eq!(recipient_call(b">>> print(1)"), Match::No);
    }
}

//! ChatGLM / GLM-4 (9B chat): the tool name on its own line, then the JSON
//! arguments on the next line.
//!
//! ```text
//! <|assistant|>get_weather
//! {"city": "Beijing"}
//! ```
//!
//! GLM-4 starts a call as a new assistant message whose metadata is the
//! tool name. Servers that strip special tokens leave `get_weather⏎{…}` at
//! the start of a line, or glued to the end of the preceding sentence
//! (`…I'll check.get_weather⏎{…}`); both are read too. Without the token the
//! name must look like an identifier rather than a word (it contains `_` or
//! is camelCase) and the JSON must start like an object (`{"` or `{}`).
//! `<|observation|>` and `<|user|>` (the model handing over) are
//! [markup](crate::Event::Markup). (GLM-4.5 and later use XML arguments:
//! another dialect.)

use super::args::ArgsJson;
use super::{Action, Block, BlockArgs, Cx, Flow, LaneHost, Trigger};
use crate::config::Config;
use crate::event::Span;
use crate::json::Status;
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Custom {
            first: b"<",
            matches: assistant_name,
        },
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Line { matches: name_line },
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::After {
            first: b".",
            matches: name_line,
        },
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|observation|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|user|>"),
        action: Action::Markup,
    },
];

const MAX_NAME: usize = 128;
const ASSISTANT: &[u8] = b"<|assistant|>";

/// `<|assistant|>NAME⏎{`: the match covers the token, the name and its line break.
fn assistant_name(at: &[u8]) -> Match {
    let n = match match_lit(ASSISTANT, at) {
        Match::Full(n) => n,
        m => return m,
    };
    match name_then_object(&at[n..], false) {
        Match::Full(k) => Match::Full(n + k),
        m => m,
    }
}

/// `name⏎{"` where the name looks like code: the match covers the name and
/// its line break.
fn name_line(at: &[u8]) -> Match {
    name_then_object(at, true)
}

fn name_then_object(at: &[u8], strict: bool) -> Match {
    // (A line of prose or markup is ruled out by its first byte.)
    if at.first().is_some_and(|b| !b.is_ascii_alphabetic()) {
        return Match::No;
    }
    // The name, and whether it looks like code (one pass).
    let (mut underscore, mut upper) = (false, false);
    let mut n = 0;
    loop {
        let Some(&b) = at.get(n) else {
            return if at.len() > MAX_NAME {
                Match::No
            } else {
                Match::Partial
            };
        };
        if n > MAX_NAME {
            return Match::No;
        }
        match b {
            b'_' => underscore = true,
            b'A'..=b'Z' => upper = true,
            b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' => {}
            _ => break,
        }
        n += 1;
    }
    if n == 0 || !at[0].is_ascii_alphabetic() {
        return Match::No;
    }
    let camel = at[0].is_ascii_lowercase() && upper;
    if strict && !(underscore || camel) {
        return Match::No;
    }
    let mut i = n;
    if at.get(i) == Some(&b'\r') {
        i += 1;
    }
    match at.get(i) {
        None => return Match::Partial,
        Some(b'\n') => i += 1,
        Some(_) => return Match::No,
    }
    let name_end = i;
    match at.get(i) {
        None => return Match::Partial,
        Some(b'{') => i += 1,
        Some(_) => return Match::No,
    }
    if !strict {
        return Match::Full(name_end);
    }
    // An object with a string key, or an empty one.
    while i < at.len() && at[i].is_ascii_whitespace() && i < name_end + 16 {
        i += 1;
    }
    // The input ended (even exactly at the blanks' bound: the byte there
    // decides): wait for more.
    match at.get(i) {
        None => Match::Partial,
        Some(b'"' | b'}') => Match::Full(name_end),
        _ => Match::No,
    }
}

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let t = a.trigger.strip_prefix(ASSISTANT).unwrap_or(a.trigger);
    let name = String::from_utf8_lossy(t.trim_ascii()).into_owned();
    Box::new(GlmCall {
        name,
        local: None,
        json: ArgsJson::new(&a.cfg.limits, false),
        cfg: a.cfg.clone(),
    })
}
struct GlmCall {
    name: String,
    local: Option<usize>,
    json: ArgsJson,
    cfg: Config,
}

impl Block for GlmCall {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let local = match self.local {
            Some(l) => l,
            None => {
                let l = cx.start(self.name.clone(), None, Span::new(cx.base, cx.base));
                self.local = Some(l);
                cx.commit();
                l
            }
        };
        let p = self.json.feed(input, cx, local);
        match p.status {
            Status::NeedMore => Flow::More,
            Status::Limit => {
                self.json.close(cx, local, true);
                self.json.end(cx, local, cx.abs(p.consumed), Vec::new());
                Flow::Done(p.consumed)
            }
            _ => {
                self.json.end(cx, local, cx.abs(p.consumed), Vec::new());
                Flow::Done(p.consumed)
            }
        }
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        // Every byte goes to the arguments reader once the call started.
        let local = self.local?;
        Some(LaneHost::Args(&mut self.json, local))
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let _ = &self.cfg;
        let end = cx.base;
        let local = match self.local {
            Some(l) => l,
            None => {
                let l = cx.start(self.name.clone(), None, Span::new(end, end));
                cx.commit();
                l
            }
        };
        self.json.close(cx, local, true);
        self.json.end(cx, local, end, Vec::new());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(name_line(b"get_weather\n{\"a\""), Match::Full(12));
        assert_eq!(name_line(b"emailFormatValidator\n{}"), Match::Full(21));
        assert_eq!(name_line(b"get_weather\n{ x }"), Match::No);
        assert_eq!(assistant_name(b"<|assistant|>search\n{ q"), Match::Full(20));
        assert_eq!(name_line(b"Example\n{"), Match::No);
        assert_eq!(name_line(b"get_weather is"), Match::No);
        assert_eq!(name_line(b"get_wea"), Match::Partial);
    }
}

//! ChatGLM / GLM-4 (9B chat): a line with the tool name, then the JSON
//! arguments on the next line.
//!
//! ```text
//! get_weather
//! {"city": "Beijing"}
//! ```
//!
//! In text the name must look like an identifier rather than a word —
//! it contains `_` or is camelCase — and stand alone at the start of a line
//! (the start of the output counts), directly followed by a line starting
//! with `{`. (GLM-4.5 and later use XML arguments: another dialect.)

use super::args::ArgsJson;
use super::{Action, Block, BlockArgs, Cx, Flow, Trigger};
use crate::config::Config;
use crate::event::Span;
use crate::json::Status;
use crate::scan::{Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Line { matches: name_line },
    action: Action::Block {
        open,
        consume: true,
    },
}];

const MAX_NAME: usize = 128;

/// `name⏎{`: the match covers the name and its line break.
fn name_line(at: &[u8]) -> Match {
    let n = at
        .iter()
        .take(MAX_NAME + 1)
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'));
    let Some(n) = n else {
        return if at.len() > MAX_NAME {
            Match::No
        } else {
            Match::Partial
        };
    };
    if n == 0 || !at[0].is_ascii_alphabetic() {
        return Match::No;
    }
    let name = &at[..n];
    let camel = name[0].is_ascii_lowercase() && name.iter().any(u8::is_ascii_uppercase);
    if !(name.contains(&b'_') || camel) {
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
    match at.get(i) {
        None => Match::Partial,
        Some(b'{') => Match::Full(i),
        Some(_) => Match::No,
    }
}

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let name = String::from_utf8_lossy(a.trigger.trim_ascii()).into_owned();
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
        assert_eq!(name_line(b"emailFormatValidator\n{"), Match::Full(21));
        assert_eq!(name_line(b"Example\n{"), Match::No);
        assert_eq!(name_line(b"get_weather is"), Match::No);
        assert_eq!(name_line(b"get_wea"), Match::Partial);
    }
}

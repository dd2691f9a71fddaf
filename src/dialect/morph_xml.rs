//! AI SDK morph-xml tool calls: the tool's name is the tag.
//!
//! ```text
//! <get_weather>
//!   <city>Paris</city>
//!   <days>3</days>
//! </get_weather>
//! ```
//!
//! Only for tools the caller declared ([`crate::Config::tools`]): any
//! `<identifier>` in text is a candidate, and a block whose tag does not name
//! a known tool is text at once, so HTML and prose are never read as calls.
//! The block commits when a parameter tag or the closing tag follows the
//! opening tag. Values are trimmed of surrounding whitespace and typed by
//! the schema (a declared parameter also closes a value whose closing tag is
//! missing). `<get_weather>{json}</get_weather>` reads the JSON object.

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::{Match, Pattern};

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "morph-xml",
    family: Family::Morph,
    invoke: b"",
    param: b"",
    ws: Ws::Trim,
    skip_tags: &[],
    skip_words: &[],
    openers: &[],
    string_attr: false,
};

/// Longest tool name a morph-xml tag is matched for.
const MAX_NAME: usize = 64;

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Custom {
        first: b"<",
        matches: tool_tag,
    },
    action: Action::Block {
        open,
        consume: true,
    },
}];

/// `<` + an identifier + `>`.
fn tool_tag(at: &[u8]) -> Match {
    for (i, &b) in at.iter().enumerate().skip(1) {
        let ok = if i == 1 {
            b.is_ascii_alphabetic() || b == b'_'
        } else {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':')
        };
        if b == b'>' && i > 1 {
            return Match::Full(i + 1);
        }
        if !ok || i > MAX_NAME {
            return Match::No;
        }
    }
    Match::Partial
}

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let name = &a.trigger[1..a.trigger.len() - 1];
    let known = a
        .cfg
        .tools
        .as_ref()
        .is_some_and(|t| t.get(&String::from_utf8_lossy(name)).is_some());
    let start = if known {
        Start::Morph(name.to_vec())
    } else {
        Start::Reject
    };
    Box::new(XmlBlock(XmlCalls::new(
        &SYNTAX, None, start, false, false, a.cfg,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_tags() {
        assert_eq!(tool_tag(b"<get_weather>x"), Match::Full(13));
        assert_eq!(tool_tag(b"<get_wea"), Match::Partial);
        assert_eq!(tool_tag(b"<"), Match::Partial);
        assert_eq!(tool_tag(b"<>"), Match::No);
        assert_eq!(tool_tag(b"<div class=\"x\">"), Match::No);
        assert_eq!(tool_tag(b"</div>"), Match::No);
        assert_eq!(tool_tag(b"<1a>"), Match::No);
    }
}

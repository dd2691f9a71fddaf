//! DeepSeek V3.2 / V4 DSML tool calls.
//!
//! ```text
//! <｜DSML｜function_calls>
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
//! <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜function_calls>
//! ```
//!
//! V3.2 wraps the calls in `<｜DSML｜function_calls>`, V4 in
//! `<｜DSML｜tool_calls>`, V4.1 in `<｜DSML｜ calls>` with a space after the
//! marker in every tag (`<｜DSML｜ invoke name="f">`,
//! `</｜DSML｜ parameter>`); each spelling is read in every tag, so a block
//! opened one way may close another. The template's bars are full-width
//! `｜` (U+FF5C), which the parser matches even when a chunk splits them;
//! outputs (and prompts) that went through rendered text write ASCII bars
//! (`<|DSML|function_calls>`, `<|DSML|invoke name="f">`,
//! `</|DSML|parameter>`), read the same way, in any mix. An invoke written
//! with no container around it (`<｜DSML｜invoke name="f">…</｜DSML｜invoke>`
//! alone) is a call too: its block ends with the invoke. `string="true"` makes the
//! value a raw string (streamed as it arrives); `string="false"` (or no
//! attribute) makes it JSON, repaired if needed, or typed by the schema.
//! Values are kept exactly as written between the tags.

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Container, Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;
use crate::xml::Tag;

/// The markers DSML tag names start with: the template's full-width bars,
/// and the ASCII bars that outputs and prompts copied from rendered text use.
const MARKERS: &[&[u8]] = &["｜DSML｜".as_bytes(), b"|DSML|"];

/// How a DSML tag begins (opening or closing), in either spelling.
pub(crate) const TAG_STARTS: &[&[u8]] = &[
    "<｜DSML｜".as_bytes(),
    "</｜DSML｜".as_bytes(),
    b"<|DSML|",
    b"</|DSML|",
];

/// The name of a DSML tag after its marker — `invoke` for
/// `<｜DSML｜invoke name="f">` and for V4.1's spaced `<｜DSML｜ invoke name="f">`
/// — or None for a tag without the marker.
pub(crate) fn tag_name<'t>(t: &Tag<'t>) -> Option<&'t [u8]> {
    let name = t.name();
    let rest = MARKERS.iter().find_map(|m| name.strip_prefix(*m))?;
    if !rest.is_empty() {
        return Some(rest);
    }
    // Spaced: the name is the first word after the marker.
    let raw = t.raw();
    let from = usize::from(t.is_close()) + 1 + name.len();
    let body = &raw[from.min(raw.len())..raw.len().saturating_sub(1).max(from.min(raw.len()))];
    let s = body.iter().position(|b| !b.is_ascii_whitespace())?;
    let w = &body[s..];
    let e = w
        .iter()
        .position(|&b| b.is_ascii_whitespace() || b == b'=' || b == b'/' || b == b'>')
        .unwrap_or(w.len());
    (e > 0).then(|| &w[..e])
}

/// The container name of an opening trigger (`tool_calls` for
/// `<｜DSML｜tool_calls>`, `calls` for `<｜DSML｜ calls>`).
fn container(trigger: &[u8]) -> Container {
    let t = Tag::new(trigger);
    let name = tag_name(&t).unwrap_or(b"function_calls").to_vec();
    Container {
        open: name.clone(),
        close: name,
        close_slash: true,
    }
}

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<｜DSML｜function_calls>` (DeepSeek DSML)",
    family: Family::Invoke,
    invoke: b"invoke",
    param: b"parameter",
    ws: Ws::Exact,
    skip_tags: &[],
    skip_words: &[],
    openers: &[],
    string_attr: true,
};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜function_calls>".as_bytes()),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜tool_calls>".as_bytes()),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    // V4.1.
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜ calls>".as_bytes()),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜calls>".as_bytes()),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜ tool_calls>".as_bytes()),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    // ASCII bars.
    Trigger {
        pattern: Pattern::Lit(b"<|DSML|function_calls>"),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|DSML|tool_calls>"),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    // An invoke with no container around it, in every spelling: read
    // from the invoke tag (not consumed), the block ends with the invoke.
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜invoke".as_bytes()),
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Lit("<｜DSML｜ invoke".as_bytes()),
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|DSML|invoke"),
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
];

/// A bare invoke commits only once a parameter or its closing tag follows
/// (as a bare `<function=` does, see [`super::qwen3_coder`]): prose that
/// names the tag stays text.
fn open_bare(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(XmlBlock(XmlCalls::new(
        &SYNTAX,
        None,
        Start::Lead,
        false,
        false,
        a.cfg,
    )))
}

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let container = container(a.trigger);
    Box::new(XmlBlock(XmlCalls::new(
        &SYNTAX,
        Some(container),
        Start::Lead,
        true,
        true,
        a.cfg,
    )))
}

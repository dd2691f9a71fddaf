//! ByteDance Seed-OSS tool calls: Qwen3-Coder's inner syntax in a
//! `<seed:tool_call>` container.
//!
//! ```text
//! <seed:tool_call>
//! <function=get_weather>
//! <parameter=location>Barcelona, Spain</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! Values follow the Qwen3-Coder rules (one leading and one trailing newline
//! dropped, schema typing). The reasoning block `<seed:think>…</seed:think>`
//! is read by [`super::reasoning`].

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Container, Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<seed:tool_call>` (Seed-OSS)",
    family: Family::Qwen,
    invoke: b"function",
    param: b"parameter",
    ws: Ws::OneNewline,
    skip_tags: &[],
    skip_words: &[],
    openers: &[],
    string_attr: false,
};

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit(b"<seed:tool_call>"),
    action: Action::Block {
        open,
        consume: true,
    },
}];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let container = Container::tag(a.trigger);
    Box::new(XmlBlock(XmlCalls::new(
        &SYNTAX,
        Some(container),
        Start::Lead,
        true,
        true,
        a.cfg,
    )))
}

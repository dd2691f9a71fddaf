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
//! `<｜DSML｜tool_calls>`; the bars are full-width `｜` (U+FF5C), which the
//! parser matches even when a chunk splits them. `string="true"` makes the
//! value a raw string (streamed as it arrives); `string="false"` (or no
//! attribute) makes it JSON, repaired if needed, or typed by the schema.
//! Values are kept exactly as written between the tags.

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Container, Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<｜DSML｜function_calls>` (DeepSeek DSML)",
    family: Family::Invoke,
    invoke: "｜DSML｜invoke".as_bytes(),
    param: "｜DSML｜parameter".as_bytes(),
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
];

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

//! MiniMax-M2 / M2.1 / M2.5 / M2.7 tool calls.
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="city">Beijing</parameter>
//! <parameter name="date">2024-12-25</parameter>
//! </invoke>
//! <invoke name="get_time">
//! <parameter name="tz">Asia/Shanghai</parameter>
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! Several invokes per block, each its own call. Values are trimmed of
//! surrounding whitespace, as MiniMax's reference parser does, and typed by
//! the schema when known. A literal `</parameter>` inside a value (a file
//! body, vllm-project/vllm#44060) is content unless it is followed by the
//! next `<parameter …>`, `</invoke>`, `</minimax:tool_call>` or the end of
//! the input (see [`super::xmlcalls`]).

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Container, Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<minimax:tool_call>` (MiniMax-M2)",
    family: Family::Invoke,
    invoke: b"invoke",
    param: b"parameter",
    ws: Ws::Trim,
    skip_tags: &[],
    skip_words: &[],
    openers: &[],
    string_attr: false,
};

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit(b"<minimax:tool_call>"),
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

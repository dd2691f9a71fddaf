//! Qwen3-Coder / Qwen3.5+ / Qwen3.6 XML tool calls (also Nemotron-Nano-v3 and
//! Step-3.5, which use the same template).
//!
//! ```text
//! <tool_call>
//! <function=get_weather>
//! <parameter=location>
//! Hangzhou
//! </parameter>
//! <parameter=days>
//! 3
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! One `<tool_call>` wrapper per call (several `<function=…>` in one wrapper
//! are read too); Qwen3-Coder sometimes omits the wrapper, so a bare
//! `<function=NAME>…</function>` in text is read as well. Values are raw
//! text: exactly one leading and one trailing newline are dropped, strings
//! stream as they arrive, and values are typed by the tool schema when it is
//! known (see [`super::xmlcalls::value`]). `<function=NAME>{json}</function>`
//! (Functionary v3.1, Llama 3.1's custom-tool format) reads the JSON object
//! as the arguments.
//!
//! `<tool_call>` is shared with [`super::hermes`]: its block looks at what
//! the tag holds and hands `<function=` to the engine in
//! [`super::xmlcalls`], which has the delimiter rules (a literal
//! `</parameter>` inside a value, missing closing tags, nested examples).
//! A bare `<function=NAME>` commits only once a `<parameter=…>`,
//! `</function>` or a JSON body follows it (or the input ends and `NAME` is
//! a known tool), so prose that mentions the syntax stays text.

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{hermes, Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<tool_call>` (Qwen3-Coder)",
    family: Family::Qwen,
    invoke: b"function",
    param: b"parameter",
    ws: Ws::OneNewline,
    skip_tags: &[],
    skip_words: &[],
    openers: &[b"tool_call"],
    string_attr: false,
};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<tool_call>"),
        action: Action::Block {
            open: hermes::open_tag,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<function="),
        action: Action::Block {
            open: open_bare,
            consume: true,
        },
    },
];

fn open_bare(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(XmlBlock(XmlCalls::new(
        &SYNTAX,
        None,
        Start::FnName,
        false,
        false,
        a.cfg,
    )))
}

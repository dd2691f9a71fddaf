//! StepFun Step-3 `steptml` tool calls.
//!
//! ```text
//! <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
//! ```
//!
//! Each call is wrapped in `<｜tool_call_begin｜>function<｜tool_sep｜>` …
//! `<｜tool_call_end｜>`; the wrappers are skipped. The section ends with
//! `<｜tool_calls_end｜>`. The special tokens have no `▁` (unlike DeepSeek's
//! `<｜tool▁calls▁begin｜>`). Values are kept exactly and typed by the
//! schema when it is known. (Step-3.5 uses Qwen3-Coder's syntax:
//! [`super::qwen3_coder`].)

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Container, Family, Start, Syntax, XmlBlock, XmlCalls};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<｜tool_calls_begin｜>` (Step-3)",
    family: Family::Invoke,
    invoke: b"steptml:invoke",
    param: b"steptml:parameter",
    ws: Ws::Exact,
    skip_tags: &[
        "｜tool_call_begin｜".as_bytes(),
        "｜tool_sep｜".as_bytes(),
        "｜tool_call_end｜".as_bytes(),
    ],
    skip_words: &[b"function"],
    openers: &[],
    string_attr: false,
};

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit("<｜tool_calls_begin｜>".as_bytes()),
    action: Action::Block {
        open,
        consume: true,
    },
}];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let container = Container {
        open: "｜tool_calls_begin｜".as_bytes().to_vec(),
        close: "｜tool_calls_end｜".as_bytes().to_vec(),
        close_slash: false,
    };
    Box::new(XmlBlock(XmlCalls::new(
        &SYNTAX,
        Some(container),
        Start::Lead,
        true,
        true,
        a.cfg,
    )))
}

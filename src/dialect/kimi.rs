//! Kimi K2 / K2-Thinking / K2.5 tool calls.
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! The head `functions.NAME:IDX` is kept as the call id and names the tool
//! `NAME`. The singular `<|tool_call_section_begin|>` (and `…_end|>`) is
//! accepted, and so is a call token without a section token. Reasoning in
//! Kimi-VL-Thinking is `◁think▷…◁/think▷`.

use super::sectioned::{SectionSpec, Sectioned};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const SPEC: SectionSpec = SectionSpec {
    section_begin: &[
        b"<|tool_calls_section_begin|>",
        b"<|tool_call_section_begin|>",
    ],
    call_begin: &[b"<|tool_call_begin|>"],
    sep: &[b"<|tool_call_argument_begin|>"],
    call_end: &[b"<|tool_call_end|>"],
    section_end: &[b"<|tool_calls_section_end|>", b"<|tool_call_section_end|>"],
    v3_function: false,
    head_is_id: true,
};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(SPEC.section_begin[0]),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(SPEC.section_begin[1]),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(SPEC.call_begin[0]),
        action: Action::Block {
            open,
            consume: true,
        },
    },
];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Sectioned::open(SPEC, a))
}

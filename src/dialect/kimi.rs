//! Kimi K2 / K2-Thinking / K2.5 tool calls.
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! The head `functions.NAME:IDX` is kept as the call id and names the tool
//! `NAME`. The singular `<|tool_call_section_begin|>` (and `…_end|>`) is
//! accepted, and so is a call token without a section token. A section
//! with no call in it (empty, or followed by noise before its first call)
//! is markup, and so is a section end token standing alone: no marker
//! leaks into the text. Reasoning in
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
    // A section's end token standing alone (after noise, or a call read
    // without its section) is markup.
    Trigger {
        pattern: Pattern::Lit(SPEC.section_end[0]),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(SPEC.section_end[1]),
        action: Action::Markup,
    },
];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Sectioned::open(SPEC, a))
}

//! LFM2 (Liquid): pythonic calls between `<|tool_call_start|>` and
//! `<|tool_call_end|>`.
//!
//! ```text
//! Let me look that up.<|tool_call_start|>[get_status(id="123")]<|tool_call_end|>
//! ```
//!
//! The body may also be JSON. Reasoning uses `<think>…</think>`.

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit(b"<|tool_call_start|>"),
    action: Action::Block {
        open,
        consume: true,
    },
}];

const SPEC: WrapSpec = WrapSpec {
    closes: &[b"<|tool_call_end|>"],
    close_required: true,
    json: true,
    python: true,
    python_dot_call: false,
    seps: b",;",
    many: true,
    raw: None,
};

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(SPEC, a))
}

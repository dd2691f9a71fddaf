//! Olmo 3: pythonic calls between `<function_calls>` and `</function_calls>`,
//! one per line.
//!
//! ```text
//! <function_calls>get_weather(city="Paris")
//! get_time(zone="CET")</function_calls>
//! ```
//!
//! The same tag holds JSON in Hermes-style prompts; the body is dispatched
//! on its first bytes (a name and `(` or `[name(` is pythonic, `{` or `[{`
//! is JSON), so both dialects share this reader.

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit(b"<function_calls>"),
    action: Action::Block {
        open: open_function_calls,
        consume: true,
    },
}];

const SPEC: WrapSpec = WrapSpec {
    closes: &[b"</function_calls>"],
    close_required: true,
    json: true,
    python: true,
    python_dot_call: false,
    seps: b",;",
    many: true,
    raw: None,
};

/// Opens a `<function_calls>` block (JSON or pythonic body).
pub(crate) fn open_function_calls(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(SPEC, a))
}

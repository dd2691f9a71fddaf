//! IBM Granite tool calls.
//!
//! ```text
//! <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Boston"}}]
//! ```
//!
//! * Granite 3.0: `<|tool_call|>` then a JSON array of calls, read here.
//! * Granite 3.1–3.3: `<tool_call>[…]`, and Granite 4:
//!   `<tool_call>{"name", "arguments": "…stringified…"}</tool_call>` — both
//!   are the Hermes tag with any envelope, read by the Hermes dialect.
//! * granite-20b-functioncalling: `<function_call> {json}` repeated with no
//!   closing tag — the Hermes `<function_call>` tag, whose closing tag is
//!   optional.
//! * Granite 3.2+ reasoning `<think>…</think><response>…</response>`: the
//!   `<response>` wrapper is [markup](crate::Event::Markup) around text.

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<|tool_call|>"),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<response>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"</response>"),
        action: Action::Markup,
    },
];

const SPEC: WrapSpec = WrapSpec {
    closes: &[],
    close_required: false,
    json: true,
    python: false,
    python_dot_call: false,
    seps: b",",
    many: true,
    raw: None,
};

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(SPEC, a))
}

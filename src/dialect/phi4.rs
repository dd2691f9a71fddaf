//! Phi-4-mini: `functools[` + JSON call objects + `]`.
//!
//! ```text
//! functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]
//! ```

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::{Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Custom {
        first: b"f",
        matches: functools,
    },
    action: Action::Block {
        open,
        consume: true,
    },
}];

/// `functools` directly followed by `[` (the `[` is left to the JSON reader).
fn functools(at: &[u8]) -> Match {
    match crate::scan::match_lit(b"functools[", at) {
        Match::Full(n) => Match::Full(n - 1),
        m => m,
    }
}

const SPEC: WrapSpec = WrapSpec {
    closes: &[],
    close_required: false,
    json: true,
    python: false,
    python_dot_call: false,
    seps: b"",
    many: false,
    raw: None,
};

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(SPEC, a))
}

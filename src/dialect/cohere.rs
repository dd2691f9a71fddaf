//! Cohere Command R7B / Command A, and Command R / R+ (2024).
//!
//! ~~~text
//! <|START_THINKING|>I should search.<|END_THINKING|><|START_ACTION|>[
//!  {"tool_call_id": "0", "tool_name": "search", "parameters": {"query": "rust"}}
//! ]<|END_ACTION|>
//! <|START_RESPONSE|>Here it is.<|END_RESPONSE|>
//! Action: ```json
//! [{"tool_name": "internet_search", "parameters": {"query": "x"}}]
//! ```
//! ~~~
//!
//! Actions are JSON arrays of `{"tool_call_id", "tool_name", "parameters"}`
//! (the model's `tool_call_id` is kept as the call id). The response
//! wrapper tokens are [markup](crate::Event::Markup); the text between them
//! is text. Reasoning (`<|START_THINKING|>`) is handled with the other
//! reasoning conventions. Command R's `Action:` line is part of the call's
//! span; its fence is read by the JSON dialect's fence reader.

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<|START_ACTION|>"),
        action: Action::Block {
            open,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"A",
            matches: action_fence,
        },
        action: Action::Block {
            open: super::json::open_json_fence,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|START_RESPONSE|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|END_RESPONSE|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|END_OF_TURN_TOKEN|>"),
        action: Action::Markup,
    },
];

/// `Action:`, blanks (one line break at most), then a code fence.
fn action_fence(at: &[u8]) -> Match {
    let n = match match_lit(b"Action:", at) {
        Match::Full(n) => n,
        m => return m,
    };
    let mut i = n;
    let mut newlines = 0;
    while i < at.len() && matches!(at[i], b' ' | b'\t' | b'\n' | b'\r') {
        newlines += usize::from(at[i] == b'\n');
        i += 1;
        if newlines > 1 || i > n + 16 {
            return Match::No;
        }
    }
    match match_lit(b"```", &at[i..]) {
        Match::Full(k) => Match::Full(i + k),
        m => m,
    }
}

const SPEC: WrapSpec = WrapSpec {
    closes: &[b"<|END_ACTION|>"],
    close_required: true,
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

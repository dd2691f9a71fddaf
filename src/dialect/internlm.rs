//! InternLM2 / 2.5 / Intern-S1 actions.
//!
//! ```text
//! Sure.<|action_start|><|plugin|>
//! {"name": "get_current_weather", "parameters": {"location": "Shanghai"}}<|action_end|>
//! ```
//!
//! `<|action_start|><|plugin|>` holds a JSON call; `<|action_start|><|interpreter|>`
//! holds code, read as a call of `interpreter` with `{"code": "…"}`.

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<|action_start|><|plugin|>"),
        action: Action::Block {
            open: open_plugin,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|action_start|><|interpreter|>"),
        action: Action::Block {
            open: open_interpreter,
            consume: true,
        },
    },
];

const PLUGIN: WrapSpec = WrapSpec {
    closes: &[b"<|action_end|>"],
    close_required: true,
    json: true,
    python: false,
    python_dot_call: false,
    seps: b"",
    many: true,
    raw: None,
};

const INTERPRETER: WrapSpec = WrapSpec {
    closes: &[b"<|action_end|>"],
    close_required: true,
    json: false,
    python: false,
    python_dot_call: false,
    seps: b"",
    many: false,
    raw: Some(("interpreter", "code")),
};

fn open_plugin(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(PLUGIN, a))
}

fn open_interpreter(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(INTERPRETER, a))
}

//! Llama 3.1 / 3.2 / 3.3 JSON tool calls and the Llama 4 python block.
//!
//! ```text
//! <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {}}<|eom_id|>
//! <|python_tag|>brave_search.call(query="rust")<|eom_id|>
//! <|python_tag|>import math; print(math.pi)<|eom_id|>
//! <|python_start|>[get_weather(city="Paris")]<|python_end|>
//! ```
//!
//! After `<|python_tag|>`: JSON envelopes (the template's key is
//! `parameters`; `arguments` works too) separated by `;`, a built-in tool
//! call `tool.call(…)` (named `tool`), or code, which becomes a call of
//! `code_interpreter` with `{"code": "…"}`. The block ends at `<|eom_id|>`
//! or `<|eot_id|>` (part of the call's span) or where the text stops being
//! calls. Without the tag, Llama's bare `{"name", "parameters"}` JSON is
//! read by the JSON dialect. `<|python_start|>…<|python_end|>` (Llama 4)
//! holds pythonic calls or JSON. Stray `<|eot_id|>`, `<|eom_id|>` and
//! `<|end_of_text|>` are [markup](crate::Event::Markup).

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"<|python_tag|>"),
        action: Action::Block {
            open: open_python_tag,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|python_start|>"),
        action: Action::Block {
            open: open_python_start,
            consume: true,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"<|eot_id|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|eom_id|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|end_of_text|>"),
        action: Action::Markup,
    },
    // A turn header's tokens (`<|start_header_id|>assistant<|end_header_id|>`),
    // written by a model that runs on into a new turn.
    Trigger {
        pattern: Pattern::Lit(b"<|start_header_id|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|end_header_id|>"),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|python_end|>"),
        action: Action::Markup,
    },
];

const PYTHON_TAG: WrapSpec = WrapSpec {
    closes: &[b"<|eom_id|>", b"<|eot_id|>"],
    close_required: false,
    json: true,
    python: true,
    python_dot_call: true,
    seps: b";",
    many: true,
    raw: Some(("code_interpreter", "code")),
};

const PYTHON_START: WrapSpec = WrapSpec {
    closes: &[b"<|python_end|>"],
    close_required: true,
    json: true,
    python: true,
    python_dot_call: false,
    seps: b";,",
    many: true,
    raw: None,
};

fn open_python_tag(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(PYTHON_TAG, a))
}

fn open_python_start(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Wrap::new(PYTHON_START, a))
}

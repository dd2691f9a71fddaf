//! NVIDIA Nemotron (Llama-3.3-Nemotron-Super, Deci): `<TOOLCALL>[…]</TOOLCALL>`.
//!
//! ```text
//! <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "SF"}}]</TOOLCALL>
//! ```

use super::wrap::{Wrap, WrapSpec};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit(b"<TOOLCALL>"),
    action: Action::Block {
        open,
        consume: true,
    },
}];

const SPEC: WrapSpec = WrapSpec {
    closes: &[b"</TOOLCALL>"],
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

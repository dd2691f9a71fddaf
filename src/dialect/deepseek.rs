//! DeepSeek V3 / R1 and V3.1 / V3.2-Exp tool calls.
//!
//! ~~~text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"city": "Hangzhou"}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>                                  (V3, R1)
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":"Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>   (V3.1)
//! ~~~
//!
//! The tokens use the full-width `｜` (U+FF5C) and `▁` (U+2581); the ASCII
//! `|` spelling some templates and fixtures use is accepted too. The two
//! generations are told apart by the head before `<｜tool▁sep｜>`: `function`
//! followed by a name line (not `{`) is V3, anything else is the V3.1 tool
//! name. A call token without the section token also opens a block. A
//! missing separator (`name{…}`) is repaired. `<｜end▁of▁sentence｜>` is
//! [markup](crate::Event::Markup). DSML (V3.2 / V4) belongs to the XML
//! family.

use super::sectioned::{SectionSpec, Sectioned};
use super::{Action, Block, BlockArgs, Trigger};
use crate::scan::Pattern;

pub(crate) const SPEC: SectionSpec = SectionSpec {
    section_begin: &[
        "<｜tool▁calls▁begin｜>".as_bytes(),
        b"<|tool\xe2\x96\x81calls\xe2\x96\x81begin|>",
    ],
    call_begin: &[
        "<｜tool▁call▁begin｜>".as_bytes(),
        b"<|tool\xe2\x96\x81call\xe2\x96\x81begin|>",
    ],
    sep: &["<｜tool▁sep｜>".as_bytes(), b"<|tool\xe2\x96\x81sep|>"],
    call_end: &[
        "<｜tool▁call▁end｜>".as_bytes(),
        b"<|tool\xe2\x96\x81call\xe2\x96\x81end|>",
    ],
    section_end: &[
        "<｜tool▁calls▁end｜>".as_bytes(),
        b"<|tool\xe2\x96\x81calls\xe2\x96\x81end|>",
    ],
    v3_function: true,
    head_is_id: false,
};

macro_rules! open {
    ($t:expr) => {
        Trigger {
            pattern: Pattern::Lit($t),
            action: Action::Block {
                open,
                consume: true,
            },
        }
    };
}

pub(crate) const TRIGGERS: &[Trigger] = &[
    open!(SPEC.section_begin[0]),
    open!(SPEC.section_begin[1]),
    open!(SPEC.call_begin[0]),
    open!(SPEC.call_begin[1]),
    Trigger {
        pattern: Pattern::Lit("<｜end▁of▁sentence｜>".as_bytes()),
        action: Action::Markup,
    },
    Trigger {
        pattern: Pattern::Lit(b"<|end\xe2\x96\x81of\xe2\x96\x81sentence|>"),
        action: Action::Markup,
    },
];

fn open(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(Sectioned::open(SPEC, a))
}

//! Plain XML tool-call emulation (prompted tools for models without native
//! ones).
//!
//! ```text
//! <tool_call>
//!   <name>get_weather</name>
//!   <arguments>
//!     <city>Paris</city>
//!     <days>3</days>
//!   </arguments>
//! </tool_call>
//! ```
//!
//! The argument wrapper may be `<arguments>`, `<parameters>`, `<args>`,
//! `<params>` or `<input>` (or missing: parameters right after `</name>`);
//! `<arguments>{json}</arguments>` reads the JSON object. Values are trimmed
//! of surrounding whitespace (emulated XML is often indented) and typed by
//! the schema when known. Only inside a `<tool_call>` wrapper: `<name>` in
//! ordinary text or HTML is text.
//!
//! Without a schema, tags inside a value are content (`<items><i>a</i></items>`
//! gives the string `<i>a</i>`), and a missing closing tag cannot be inferred
//! from the next parameter (any tag could be content); with a schema, a
//! declared parameter the call has not had yet closes the open value.

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Family, Syntax};
use super::{hermes, Action, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<tool_call>` (XML emulation)",
    family: Family::Plain,
    invoke: b"",
    param: b"",
    ws: Ws::Trim,
    skip_tags: &[],
    skip_words: &[],
    openers: &[b"tool_call"],
    string_attr: false,
};

pub(crate) const TRIGGERS: &[Trigger] = &[Trigger {
    pattern: Pattern::Lit(b"<tool_call>"),
    action: Action::Block {
        open: hermes::open_tag,
        consume: true,
    },
}];

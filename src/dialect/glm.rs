//! GLM-4.5 / 4.6 / 4.7 / GLM-5 tool calls.
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Beijing</arg_value>
//! </tool_call>
//! ```
//!
//! GLM-4.7 and GLM-5 write the same without newlines
//! (`<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>`)
//! and a call without arguments as `<tool_call>NAME</tool_call>`. One call
//! per `<tool_call>`. Values are kept exactly and typed by the schema when it
//! is known (untyped: JSON if the whole value is a JSON number, literal,
//! object or array). `<tool_call>NAME\n{json}</tool_call>` (GLM-4's
//! `name\n{json}` inside the tag) reads the object as the arguments.
//!
//! `<tool_call>` is shared with [`super::hermes`]: a tool name (identifier
//! bytes) right after the tag hands the block to the engine in
//! [`super::xmlcalls`]. The call commits once `<arg_key>`, `</tool_call>`
//! or `{` follows the name (or the input ends after the name and a newline,
//! or after a known tool's name), so prose after a
//! `<tool_call>` tag (`Use the <tool_call> tag to …`) stays text. A key
//! without a value gets `null` ([`crate::RepairKind::MissingValue`]); a
//! missing `</arg_value>` is inferred at the next `<arg_key>`.

use super::xmlcalls::value::Ws;
use super::xmlcalls::{Family, Syntax};
use super::{hermes, Action, Trigger};
use crate::scan::Pattern;

pub(crate) static SYNTAX: Syntax = Syntax {
    label: "`<tool_call>` (GLM)",
    family: Family::Glm,
    invoke: b"",
    param: b"",
    ws: Ws::Exact,
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

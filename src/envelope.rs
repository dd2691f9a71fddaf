//! Call envelopes: normalising the many JSON shapes models give a tool call.
//!
//! A model asked for a call writes some object that names a tool and carries
//! its arguments, under whatever keys it likes:
//!
//! | shape | example |
//! |---|---|
//! | canonical | `{"name": "f", "arguments": {…}}` |
//! | other keys | `{"tool": "f", "parameters": {…}}`, `{"tool_name": "f", "input": {…}}`, `{"function": "f", "args": {…}}` |
//! | OpenAI nesting | `{"type": "function", "function": {"name": "f", "arguments": "{…}"}}` |
//! | name last | `{"arguments": {…}, "name": "f"}` |
//! | stringified | `{"name": "f", "arguments": "{\"a\": 1}"}` |
//! | double-wrapped | `{"name": "f", "arguments": {"arguments": {…}}}` |
//! | not an object | `{"name": "f", "arguments": null}` → `{}`, `"arguments": 3` → `{"value": 3}` (inside call markup: see below) |
//! | flattened | `{"name": "f", "city": "Paris"}` (no argument key) → `{"city": "Paris"}` |
//! | tool as key | `{"get_weather": {"city": "Paris"}}` (BFCL's answer format): only when the key is an offered tool ([`crate::Config::tools`]) |
//! | no name | `{"arguments": {"city": "Paris"}}`: the one offered tool whose schema accepts the arguments ([`Tools::fitting`]), an `inferred_name` repair |
//!
//! A model that repeats a tool's *definition* — `{"name": "f", "parameters":
//! {"type": "object", "properties": {"city": {"type": "string"}}}}`, often
//! the whole OpenAI tool list from its prompt — is not calling it; nor is
//! one that copies its prompt's format example (`{"name": "first_tool",
//! "arguments": {...}}`, `{"name": function name, "parameters": dictionary
//! of argument name and its value}`). In JSON written without call markup,
//! arguments that are a JSON schema, that make no object, or that are an
//! object of ellipses make no call (see [`Verdict`],
//! [`CallRouter::judging_calls`]); the call is known to be one as soon as
//! its arguments can be neither: for real arguments, at their first key.
//!
//! [`CallRouter`] is a [`Sink`] for the JSON [`Repairer`]: it watches the
//! repaired output of one top-level value (an object, or an array of objects)
//! and routes each part to the right place without parsing anything twice.
//! Arguments are streamed: their bytes are available as soon as the repairer
//! writes them, and they are the model's own bytes wherever those were valid.

use std::sync::Arc;

use crate::config::{Limits, Tools};
use crate::event::{CompactString, Repair, RepairKind};
use crate::json::{Mark, Repairer, Sink, Status, ValueKind};

/// What an envelope key says about its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyRole {
    /// Names the tool: `name`, `tool`, `tool_name`, `function`,
    /// `function_name`, `toolName`, `_name`.
    Name,
    /// Carries the arguments: `arguments`, `parameters`, `args`, `input`,
    /// `params`, `tool_input`, `argument`.
    Args,
    /// A model-written call id: `id`, `tool_call_id`, `call_id`.
    Id,
    /// Belongs to the envelope and is not an argument: `type`, `index`,
    /// `description`.
    Meta,
}

/// The role of `key` (raw JSON string text, quotes included) in an
/// envelope, if it has one (one comparison per length, not one per key).
#[inline]
fn key_role(key: &[u8]) -> Option<KeyRole> {
    Some(match unquote(key) {
        b"name" | b"tool" | b"tool_name" | b"function" | b"function_name" | b"toolName"
        | b"_name" => KeyRole::Name,
        b"arguments" | b"parameters" | b"args" | b"input" | b"params" | b"tool_input"
        | b"argument" => KeyRole::Args,
        b"id" | b"tool_call_id" | b"call_id" => KeyRole::Id,
        b"type" | b"index" | b"description" => KeyRole::Meta,
        _ => return None,
    })
}

/// Keys of an object that wraps a list of calls (xLAM's
/// `{"tool_calls": [{…}, …]}`), when they are its first key.
pub(crate) const WRAPPER_KEYS: &[&[u8]] =
    &[b"tool_calls", b"calls", b"function_calls", b"tool_uses"];
/// True when `key` (raw JSON string text, quotes included) is one of `set`.
#[inline]
fn key_in(key: &[u8], set: &[&[u8]]) -> bool {
    set.contains(&unquote(key))
}

/// The offered tool a key names (`"get_weather"` in `{"get_weather": {…}}`).
fn tool_key(key: &[u8], tools: Option<&Tools>) -> Option<CompactString> {
    let tools = tools?;
    let name = json_string(key)?;
    tools.get(&name).map(|_| CompactString::from(name))
}

/// The value of a JSON string literal (the repairer's output, so valid
/// JSON): without escapes, its bytes between the quotes, else serde_json's
/// reading.
fn json_string(lit: &[u8]) -> Option<String> {
    if let [b'"', inner @ .., b'"'] = lit {
        // (Names are short: a plain loop, not memchr's set-up.)
        if !inner.contains(&b'\\') {
            return std::str::from_utf8(inner).ok().map(str::to_owned);
        }
    }
    serde_json::from_slice(lit).ok()
}

/// [`json_string`] of the literal in `buf`, as a [`CompactString`]: a
/// name without escapes (the rule) is held inline, no allocation; `buf` is
/// left empty, its allocation kept for the next name.
fn json_string_in(buf: &mut Vec<u8>) -> Option<CompactString> {
    let name = match buf.as_slice() {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => {
            // (Not UTF-8: no name, as `json_string` reads it.)
            CompactString::from_utf8(inner).ok()
        }
        lit => json_string(lit).map(CompactString::from),
    };
    buf.clear();
    name
}

#[inline]
fn unquote(key: &[u8]) -> &[u8] {
    if key.len() >= 2 && key[0] == b'"' && key[key.len() - 1] == b'"' {
        &key[1..key.len() - 1]
    } else {
        key
    }
}

/// Where the bytes of the value under the current key go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    None,
    Name,
    Id,
    Args,
    Extra,
    /// `"function": {…}`: descend into the object as the envelope.
    Nested,
    Skip,
}

/// Whether a call-shaped object written without call markup is a call
/// (see [`CallRouter::judging_calls`]). Two kinds of JSON have a call's
/// shape and are not one: a tool's *definition* repeated from the prompt,
/// whose arguments are a JSON schema ([`is_schema`]), and a *placeholder*
/// copied from the prompt's format example, whose arguments are no object
/// (`"arguments": "dictionary of argument names"`, `[...]`, `3`) or an
/// object of ellipses only (`{...}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Not known yet: the arguments have not begun; or they are an object
    /// that may still be a schema (its first member `"type": "object"`, its
    /// keys so far all schema keywords) or a placeholder (its keys so far
    /// all ellipses); or they are a string or literal whose first bytes
    /// will tell whether it makes an object (`"{…}"`, `""`, `null`).
    Open,
    /// A call.
    Call,
    /// A tool definition or a placeholder: no call.
    NoCall,
}

/// The keys of a tool's parameter schema at its top level.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "description",
    "title",
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "additionalProperties",
    "examples",
];

/// The keys one property's schema may have.
const PROPERTY_KEYS: &[&str] = &[
    "type",
    "description",
    "enum",
    "items",
    "default",
    "format",
    "title",
    "examples",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "anyOf",
    "oneOf",
    "allOf",
    "const",
    "nullable",
    "$ref",
];

/// The keys of which a property's schema has at least one: they say what
/// the property is.
const PROPERTY_WHAT: &[&str] = &[
    "type",
    "enum",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "const",
    "items",
    "description",
];

/// True when `args` (JSON text) is a JSON schema of a tool's parameters
/// rather than arguments: an object of schema keywords whose `type` is
/// `"object"` and whose `properties` are each a property schema (an object
/// of schema keywords that says at least what the property is).
/// Schema-like arguments that are not a schema — `{"type": "object",
/// "properties": {"title": "Launch review"}}` — are arguments.
///
/// An empty `properties` object is a schema too (a tool without parameters).
/// Text that is no JSON is no schema. Read with serde's visitors, no value
/// tree is built (a schema echo is a few hundred bytes of small objects).
/// Where a key is written twice, the last `type` and `properties` count,
/// and every property written must be a property schema.
pub(crate) fn is_schema(args: &[u8]) -> bool {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(args);
    schema_check::Part::Schema
        .deserialize(&mut de)
        .is_ok_and(|yes| yes && de.end().is_ok())
}

/// The visitor of [`is_schema`]: it reads one part of the text and answers
/// whether it has the shape that part of a schema has, skipping what it
/// does not need unread.
mod schema_check {
    use std::fmt;

    use serde::de::{
        self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };

    use super::{PROPERTY_KEYS, PROPERTY_WHAT, SCHEMA_KEYS};

    /// The part of a schema a value is read as.
    #[derive(Clone, Copy)]
    pub(super) enum Part {
        /// The whole schema: its keys among [`SCHEMA_KEYS`], `type`
        /// `"object"`, `properties` property schemas.
        Schema,
        /// `properties`: an object whose every value is a property schema.
        Properties,
        /// One property's schema: its keys among [`PROPERTY_KEYS`], one of
        /// them among [`PROPERTY_WHAT`].
        Property,
        /// `type`: the string `"object"`.
        ObjectType,
    }

    impl<'de> DeserializeSeed<'de> for Part {
        type Value = bool;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Part {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a part of a schema")
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<bool, E> {
            Ok(matches!(self, Part::ObjectType) && s == "object")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(false)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            match self {
                Part::Schema => {
                    let (mut keys_ok, mut object, mut props) = (true, false, None);
                    while let Some(k) = map.next_key_seed(Key(SCHEMA_KEYS))? {
                        match k {
                            Some("type") => object = map.next_value_seed(Part::ObjectType)?,
                            Some("properties") => {
                                props = Some(map.next_value_seed(Part::Properties)?);
                            }
                            known => {
                                keys_ok &= known.is_some();
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(keys_ok && object && props == Some(true))
                }
                Part::Properties => {
                    let mut all = true;
                    while map.next_key::<IgnoredAny>()?.is_some() {
                        all &= map.next_value_seed(Part::Property)?;
                    }
                    Ok(all)
                }
                Part::Property => {
                    let (mut keys_ok, mut what) = (true, false);
                    while let Some(k) = map.next_key_seed(Key(PROPERTY_KEYS))? {
                        keys_ok &= k.is_some();
                        what |= k.is_some_and(|k| PROPERTY_WHAT.contains(&k));
                        map.next_value::<IgnoredAny>()?;
                    }
                    Ok(keys_ok && what)
                }
                Part::ObjectType => {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(false)
                }
            }
        }
    }

    /// A key, read as the name it is among these names, if it is one.
    struct Key(&'static [&'static str]);

    impl<'de> DeserializeSeed<'de> for Key {
        type Value = Option<&'static str>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_str(self)
        }
    }

    impl<'de> Visitor<'de> for Key {
        type Value = Option<&'static str>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a key")
        }
        fn visit_str<E: de::Error>(self, k: &str) -> Result<Self::Value, E> {
            Ok(self.0.iter().copied().find(|n| *n == k))
        }
    }
}

/// Whether an argument key (unquoted) is an ellipsis: `...`, `…`, the
/// placeholder a format example puts where the arguments go (`{...}`, which
/// the repairer reads as the key `"..."` with a missing value).
fn is_ellipsis(key: &str) -> bool {
    // A key that starts with any other ASCII character than a blank or a
    // dot is none (the common case, told from its first byte).
    if key
        .as_bytes()
        .first()
        .is_some_and(|&b| b.is_ascii() && b != b'.' && !b.is_ascii_whitespace())
    {
        return false;
    }
    let key = key.trim();
    let dots = key.bytes().filter(|&b| b == b'.').count();
    !key.is_empty()
        && key.chars().all(|c| c == '.' || c == '\u{2026}')
        && (dots >= 2 || key.contains('\u{2026}'))
}

/// One call found inside a JSON value.
#[derive(Debug)]
pub(crate) struct CallShape {
    /// Depth of the envelope object itself (it is open at `base + 1`).
    base: usize,
    /// Depths of enclosing envelopes while inside a nested `"function": {…}`.
    outer: Vec<usize>,
    pending: Route,
    route: Route,
    route_depth: usize,
    buf: Vec<u8>,
    buf_over: bool,
    /// The tool name, once its string is complete (and not blank).
    pub name: Option<CompactString>,
    /// The input ended inside the name's string: the object names nothing,
    /// and no name is inferred for it either.
    name_cut: bool,
    /// The model's call id, if it wrote one before the name.
    pub id: Option<String>,
    /// An argument key has been seen.
    pub has_args: bool,
    /// The name came from TGI's `_name` key: the other members are the arguments.
    pub tgi: bool,
    /// Number of keys seen at the envelope level.
    pub keys: usize,
    /// `keys` when the arguments key was read: equal to `keys` while the
    /// arguments are the envelope's last member.
    args_key: usize,
    /// The first key was not one an envelope uses.
    pub foreign_first_key: bool,
    /// A `description` member was read at the envelope level: the object
    /// may be a tool definition (see [`CallShape::described`]).
    described: bool,
    /// The envelope object has closed.
    pub closed: bool,
    /// Whether this is a call at all (see [`Verdict`]).
    verdict: Verdict,
    /// Keys seen at the top level of the arguments object while `verdict` is open.
    top_keys: usize,
    /// The keys seen at the top level of the arguments are all ellipses (`{...}`).
    ellipsis: bool,
    /// The arguments are a value other than an object (their writer tells
    /// what they make: see [`ArgsWriter::object`]).
    scalar: bool,
    /// Reading the value of the arguments' first key (`type`) into `buf`.
    reading_type: bool,
    /// The arguments.
    pub args: ArgsWriter,
    /// Members that were neither name, id nor arguments (possible flattened arguments).
    extras: Vec<u8>,
    extras_over: bool,
    /// Input offsets where this call's object began and ended.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    max_token: usize,
}

/// First allocation of an arguments buffer (bytes).
pub(crate) const ARGS_FIRST_CAPACITY: usize = 128;
/// First allocation of a name or id buffer (bytes).
const NAME_FIRST_CAPACITY: usize = 32;
/// A name buffer is kept for the next value's calls up to this capacity.
const NAME_KEEP: usize = 256;

impl CallShape {
    /// `judging`: judge whether the object is a call at all (see
    /// [`CallRouter::judging_calls`]); otherwise it is one.
    /// `buf`: an empty buffer for the name (one a settled call left: see
    /// [`CallRouter::spare`]).
    fn new(base: usize, start: u64, limits: &Limits, judging: bool, buf: Vec<u8>) -> Self {
        CallShape {
            base,
            outer: Vec::new(),
            pending: Route::None,
            route: Route::None,
            route_depth: 0,
            buf,
            buf_over: false,
            name: None,
            name_cut: false,
            id: None,
            has_args: false,
            tgi: false,
            keys: 0,
            args_key: 0,
            foreign_first_key: false,
            described: false,
            closed: false,
            verdict: if judging {
                Verdict::Open
            } else {
                Verdict::Call
            },
            top_keys: 0,
            ellipsis: false,
            scalar: false,
            reading_type: false,
            args: ArgsWriter::new(limits, true),
            extras: Vec::new(),
            extras_over: false,
            start,
            end: start,
            max_token: limits.max_token_bytes,
        }
    }

    /// Completes the arguments when the envelope had none (or only flattened members).
    /// Returns the repair to record, if any.
    pub(crate) fn finish_args(&mut self, at: u64) -> Option<Repair> {
        if self.args.started() {
            self.args.finish_open();
            return None;
        }
        if !self.extras.is_empty() && !self.extras_over {
            let mut obj = Vec::with_capacity(self.extras.len() + 2);
            obj.push(b'{');
            obj.extend_from_slice(&self.extras);
            obj.push(b'}');
            if serde_json::from_slice::<serde::de::IgnoredAny>(&obj).is_ok() {
                self.args.set_whole(&obj);
                if self.tgi {
                    // TGI's native shape: the arguments sit next to `_name`.
                    return None;
                }
                return Some(Repair {
                    kind: RepairKind::MissingArguments,
                    offset: at,
                });
            }
        }
        self.args.set_whole(b"{}");
        if self.has_args {
            None
        } else {
            Some(Repair {
                kind: RepairKind::MissingArguments,
                offset: at,
            })
        }
    }

    fn mark(&mut self, mark: Mark<'_>, depth_before: usize, tools: Option<&Tools>) {
        let level = self.base + 1;
        match mark {
            Mark::Key(k) if depth_before == level && self.route == Route::None => {
                self.keys += 1;
                let role = key_role(k);
                if self.keys == 1 && self.outer.is_empty() && role.is_none() {
                    // `{"get_weather": {…}}`: the key is an offered tool.
                    if let Some(name) = tool_key(k, tools) {
                        self.name = Some(name);
                        self.has_args = true;
                        self.pending = Route::Args;
                        return;
                    }
                    self.foreign_first_key = true;
                }
                self.pending = if role == Some(KeyRole::Name) && self.name.is_none() {
                    if unquote(k) == b"_name" {
                        self.tgi = true;
                    }
                    if unquote(k) == b"function" {
                        // A string names the tool; an object is a nested envelope.
                        Route::Nested
                    } else {
                        Route::Name
                    }
                } else if role == Some(KeyRole::Args) && !self.has_args {
                    self.has_args = true;
                    self.args_key = self.keys;
                    Route::Args
                } else if role == Some(KeyRole::Id) && self.id.is_none() && self.name.is_none() {
                    Route::Id
                } else if role.is_some() {
                    if unquote(k) == b"description" {
                        self.described = true;
                    }
                    Route::Skip
                } else {
                    if !self.extras_over {
                        if !self.extras.is_empty() {
                            self.extras.push(b',');
                        }
                        self.extras.extend_from_slice(k);
                        self.extras.push(b':');
                    }
                    Route::Extra
                };
            }
            Mark::Begin(kind) if depth_before == level && self.route == Route::None => {
                let mut route = std::mem::replace(&mut self.pending, Route::None);
                if route == Route::Nested {
                    route = match kind {
                        ValueKind::Object => {
                            self.outer.push(self.base);
                            self.base = level;
                            return;
                        }
                        ValueKind::String => Route::Name,
                        _ => Route::Skip,
                    };
                }
                if route == Route::Name && kind != ValueKind::String {
                    route = Route::Skip;
                }
                if route == Route::Id && kind != ValueKind::String && kind != ValueKind::Number {
                    route = Route::Skip;
                }
                self.route = route;
                self.route_depth = level;
                self.buf.clear();
                self.buf_over = false;
                if route == Route::Args {
                    self.args.mark(mark);
                    if kind != ValueKind::Object && self.verdict == Verdict::Open {
                        self.scalar = true;
                        self.verdict = self.judge_value();
                    }
                }
            }
            Mark::End(kind) => {
                let container = matches!(kind, ValueKind::Object | ValueKind::Array);
                let value_end = self.route != Route::None
                    && ((container && depth_before == level + 1)
                        || (!container && depth_before == level));
                if value_end {
                    match self.route {
                        Route::Args => {
                            self.args.mark(mark);
                            if self.verdict == Verdict::Open {
                                // A complete value is decided.
                                self.verdict = if self.scalar {
                                    self.judge_value()
                                } else {
                                    self.judge_object()
                                };
                            }
                        }
                        Route::Name if !self.buf_over => {
                            // A blank name names nothing (nor does `null`,
                            // which never took this route).
                            if let Some(name) =
                                json_string_in(&mut self.buf).filter(|n| !n.trim().is_empty())
                            {
                                self.name = Some(name);
                            }
                        }
                        Route::Id if !self.buf_over => {
                            let text = String::from_utf8_lossy(&self.buf).into_owned();
                            self.id = Some(match serde_json::from_str::<String>(&text) {
                                Ok(s) => s,
                                Err(_) => text,
                            });
                        }
                        _ => {}
                    }
                    self.route = Route::None;
                } else if container && depth_before == level && self.route == Route::None {
                    // The envelope object (or a nested one) closes.
                    if let Some(b) = self.outer.pop() {
                        self.base = b;
                    } else {
                        self.closed = true;
                        if self.verdict == Verdict::Open {
                            // No arguments (or flattened ones): a call.
                            self.verdict = Verdict::Call;
                        }
                    }
                } else if self.route == Route::Args {
                    self.watch_object(mark, depth_before, tools);
                    self.args.mark(mark);
                }
            }
            _ => {
                if self.route == Route::Args {
                    self.watch_object(mark, depth_before, tools);
                    self.args.mark(mark);
                }
            }
        }
    }

    /// The name, once the call is known to be one: it has a name, and its
    /// arguments are neither a schema nor a placeholder (see [`Verdict`]).
    pub(crate) fn call_name(&self) -> Option<&str> {
        self.name
            .as_deref()
            .filter(|_| self.verdict == Verdict::Call)
    }

    /// True when the object has a `description` member, as a tool
    /// definition does (`{"name": "f", "description": …}`): naming an
    /// offered tool does not make it a call by itself (corpus/POLICY.md, P4).
    pub(crate) fn described(&self) -> bool {
        self.described
    }

    /// The input ended inside a string (see [`Sink::string_cut`]): if it is
    /// the name's, the name is cut — the start of some name, not a name — and
    /// the string is skipped rather than taken.
    fn name_cut(&mut self) {
        if self.route == Route::Name {
            self.route = Route::Skip;
            self.name_cut = true;
        }
    }

    /// Follows the top level of an arguments object while it may be a
    /// schema or a placeholder. A schema: the first key must be `type` and
    /// its value the string `"object"`, and every key a schema keyword that
    /// the tool, when offered, does not declare as a parameter. A
    /// placeholder: every key an ellipsis ([`is_ellipsis`]). Anything else
    /// settles it: a call.
    fn watch_object(&mut self, mark: Mark<'_>, depth_before: usize, tools: Option<&Tools>) {
        if self.verdict != Verdict::Open || depth_before != self.base + 2 {
            return;
        }
        match mark {
            Mark::Key(k) => {
                self.top_keys += 1;
                let key = std::str::from_utf8(unquote(k)).unwrap_or("");
                // `"\u2026"` is an ellipsis too.
                let dots = if k.contains(&b'\\') {
                    serde_json::from_slice::<String>(k).is_ok_and(|k| is_ellipsis(&k))
                } else {
                    is_ellipsis(key)
                };
                if self.top_keys == 1 && dots {
                    self.ellipsis = true;
                }
                if self.ellipsis {
                    if !dots {
                        self.verdict = Verdict::Call;
                    }
                    return;
                }
                // (The tool's parameters are looked up last: most first
                // keys settle it before.)
                let declared = || match (self.name.as_deref(), tools) {
                    (Some(name), Some(tools)) => tools.has_param(name, key) == Some(true),
                    _ => false,
                };
                if (self.top_keys == 1 && key != "type")
                    || !SCHEMA_KEYS.contains(&key)
                    || declared()
                {
                    self.verdict = Verdict::Call;
                }
            }
            Mark::Begin(kind) if self.top_keys == 1 && !self.ellipsis => {
                if kind == ValueKind::String {
                    self.reading_type = true;
                    self.buf.clear();
                } else {
                    self.verdict = Verdict::Call;
                }
            }
            Mark::End(ValueKind::String) if self.reading_type => {
                self.reading_type = false;
                if self.buf != br#""object""# {
                    self.verdict = Verdict::Call;
                }
            }
            _ => {}
        }
    }

    /// Settles the verdict on an arguments object when it ends: a schema or
    /// a placeholder, or a call.
    fn judge_object(&self) -> Verdict {
        if self.ellipsis {
            return Verdict::NoCall;
        }
        let schema = !self.args.limited && is_schema(&self.args.whole());
        if schema {
            Verdict::NoCall
        } else {
            Verdict::Call
        }
    }

    /// The verdict on arguments that are no object value, as far as their
    /// writer has read them: a string of JSON (`"{\"a\": 1}"`), an empty
    /// string and `null` make an object, and so a call; any other value is
    /// a placeholder; an undecided string or literal leaves it open.
    fn judge_value(&self) -> Verdict {
        match self.args.object() {
            Some(true) => Verdict::Call,
            Some(false) => Verdict::NoCall,
            None => Verdict::Open,
        }
    }

    /// Names a call whose name the model wrote inside its arguments, as
    /// their last member (`{"arguments": {"url": …, "name": "requests_get"}`,
    /// the outer object often left unclosed, as Hermes 2 Pro writes it):
    /// when that value is an offered tool's name, it is the call's name and
    /// leaves the arguments (the bytes before it are kept as written), with
    /// a `syntax_fix` repair. Only while the arguments are the envelope's
    /// last member: a member after them (`{"arguments": {"name": "f"},
    /// "type": "object"}`) shows their closing brace where the model meant
    /// it, so the `name` inside is theirs. Runs once, on the complete
    /// arguments, before any of them were handed out (a call without a name
    /// sends none), so it decides the same for any chunking.
    fn hoist_name(&mut self, tools: &Tools) -> bool {
        if self.args.limited || self.args.any_handed_out() || self.keys != self.args_key {
            return false;
        }
        let fin = self.args.final_json();
        let (Some(b'{'), Some(close)) = (fin.first(), fin.iter().rposition(|&b| b == b'}')) else {
            return false;
        };
        // The last member, read as written (not through a map, whose order
        // is not the text's): after the last comma between members, or the
        // only one.
        let comma = last_top_level_comma(&fin);
        let mut last = b"{".to_vec();
        last.extend_from_slice(&fin[comma.map_or(1, |c| c + 1)..close]);
        last.push(b'}');
        let Ok(member) =
            serde_json::from_slice::<std::collections::BTreeMap<String, serde_json::Value>>(&last)
        else {
            return false;
        };
        let Some(serde_json::Value::String(name)) =
            member.get("name").filter(|_| member.len() == 1)
        else {
            return false;
        };
        if tools.get(name).is_none() {
            return false;
        }
        // The arguments up to the comma before that member, closed again.
        let mut json = fin[..comma.unwrap_or(1)].to_vec();
        json.push(b'}');
        self.name = Some(CompactString::from(name.as_str()));
        // Nothing was handed out: the arguments are set again, whole.
        self.args.clear();
        self.args.set_whole(&json);
        self.args.repairs.push(Repair {
            kind: RepairKind::SyntaxFix,
            offset: self.start,
        });
        true
    }

    /// Names a call that closed with its arguments but without a name after
    /// the one offered tool whose schema accepts those arguments
    /// ([`Tools::fitting`]), with an `inferred_name` repair. Runs once, on
    /// the complete arguments, so it decides the same for any chunking.
    fn infer_name(&mut self, tools: &Tools) {
        if self.args.limited {
            return;
        }
        // The keys are all it takes: the values are skipped, not built.
        let Ok(args) = serde_json::from_slice::<
            std::collections::BTreeMap<String, serde::de::IgnoredAny>,
        >(&self.args.final_json()) else {
            return;
        };
        if let Some(spec) = tools.fitting(args.keys().map(String::as_str)) {
            self.name = Some(CompactString::from(spec.name.as_str()));
            self.args.repairs.push(Repair {
                kind: RepairKind::InferredName,
                offset: self.start,
            });
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        match self.route {
            Route::Args => {
                if self.reading_type {
                    // The value of the arguments' `type`: is it `"object"`?
                    if self.buf.len() + bytes.len() <= 8 {
                        self.buf.extend_from_slice(bytes);
                    } else {
                        self.reading_type = false;
                        self.verdict = Verdict::Call;
                    }
                }
                self.args.write(bytes);
                if self.scalar && self.verdict == Verdict::Open {
                    self.verdict = self.judge_value();
                }
            }
            Route::Name | Route::Id => {
                if self.buf.len() + bytes.len() <= self.max_token {
                    if self.buf.capacity() == 0 {
                        self.buf.reserve(bytes.len().max(NAME_FIRST_CAPACITY));
                    }
                    self.buf.extend_from_slice(bytes);
                } else {
                    self.buf_over = true;
                }
            }
            Route::Extra if !self.extras_over => {
                if self.extras.len() + bytes.len() > self.max_token {
                    self.extras_over = true;
                } else {
                    self.extras.extend_from_slice(bytes);
                }
            }
            _ => {}
        }
    }
}

/// What the top-level value turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Top {
    Unknown,
    Object,
    Array,
    /// A scalar: never a call.
    Other,
}

/// A [`Sink`] that finds the calls in one repaired JSON value.
#[derive(Debug)]
pub(crate) struct CallRouter {
    depth: usize,
    pub top: Top,
    pub calls: Vec<CallShape>,
    /// An element of a top-level array that is not an object.
    pub foreign_element: bool,
    /// Bare-text mode: halt as soon as the value cannot be a call.
    strict: bool,
    limits: Limits,
    /// Where a `{"tool_calls": [...]}` wrapper stands.
    wrapper: Wrapper,
    /// The offered tools: a key naming one is a call (`{"f": {…}}`).
    tools: Option<Arc<Tools>>,
    /// Tool definitions and placeholders are no calls (see
    /// [`CallRouter::judging_calls`]).
    judging: bool,
    /// The current call's arguments are opaque (see [`Sink::opaque`]): what
    /// the repairer writes goes straight to their writer, and of its marks
    /// only the containers count (see [`CallRouter::mark`]).
    run: bool,
    /// Line breaks (up to 2) in the blanks that ended the last write (see
    /// [`Sink::blank_line_tail`]; a write of opaque arguments counts too).
    tail_breaks: u8,
    /// A name buffer for the next call (empty; its allocation kept from
    /// a call of the value before, so that a reply of many calls does not
    /// allocate one per call).
    spare: Vec<u8>,
    /// Bytes of input from the piece being read to the end of the feed
    /// ([`CallRouter::feed_left`]): how long the open call's arguments may
    /// still grow within this feed, less their repairs' additions.
    left: usize,
}

/// Progress through a `{"tool_calls": [...]}` wrapper object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wrapper {
    /// Not a wrapper (or not yet known).
    None,
    /// After the wrapper key: its value comes.
    Key,
    /// Inside the list of calls.
    List,
    /// After the list: the rest of the object is ignored.
    After,
}

impl CallRouter {
    /// Follows a `{"tool_calls": [...]}` wrapper; true when the mark was
    /// consumed here.
    #[inline]
    fn wrap(&mut self, mark: Mark<'_>, depth_before: usize, offset: u64) -> bool {
        match (self.wrapper, mark) {
            (Wrapper::None, Mark::Key(k))
                if depth_before == 1
                    && self.calls.len() == 1
                    && self.calls[0].keys == 0
                    && key_in(k, WRAPPER_KEYS) =>
            {
                self.calls.pop();
                self.wrapper = Wrapper::Key;
                true
            }
            (Wrapper::Key, Mark::Begin(kind)) if depth_before == 1 => {
                self.wrapper = if kind == ValueKind::Array {
                    Wrapper::List
                } else {
                    Wrapper::After
                };
                true
            }
            (Wrapper::List, Mark::Begin(ValueKind::Object)) if depth_before == 2 => {
                self.calls.push(CallShape::new(
                    2,
                    offset,
                    &self.limits,
                    self.judging,
                    std::mem::take(&mut self.spare),
                ));
                true
            }
            (Wrapper::List, Mark::Begin(_)) if depth_before == 2 => {
                self.foreign_element = true;
                true
            }
            (Wrapper::List, Mark::End(ValueKind::Array)) if depth_before == 2 => {
                self.wrapper = Wrapper::After;
                true
            }
            // The rest of the wrapper object holds no call.
            (Wrapper::Key | Wrapper::After, _) => self.current().is_none(),
            _ => false,
        }
    }

    pub(crate) fn new(limits: &Limits) -> Self {
        CallRouter {
            depth: 0,
            top: Top::Unknown,
            calls: Vec::new(),
            foreign_element: false,
            strict: false,
            limits: limits.clone(),
            wrapper: Wrapper::None,
            tools: None,
            judging: false,
            run: false,
            tail_breaks: 0,
            spare: Vec::new(),
            left: 0,
        }
    }

    /// Says how many bytes of input the feed holds from the next piece on
    /// (see [`ArgsWriter::write_head`]).
    #[inline]
    pub(crate) fn feed_left(&mut self, left: usize) {
        self.left = left;
    }

    /// Takes over the buffers of `old` (see [`Repairer::reuse_buffers`]).
    pub(crate) fn reuse_buffers(&mut self, mut old: CallRouter) {
        // One name buffer of the old calls is kept (names are short).
        self.spare = std::mem::take(&mut old.spare);
        if self.spare.capacity() == 0 {
            if let Some(c) = old.calls.iter_mut().find(|c| c.buf.capacity() != 0) {
                self.spare = std::mem::take(&mut c.buf);
            }
        }
        if self.spare.capacity() > NAME_KEEP {
            self.spare = Vec::new();
        }
        self.spare.clear();
        crate::json::reuse(&mut self.calls, old.calls);
    }

    /// The open call whose arguments are being written, once it is known to
    /// be a call or not (until then the call's shape must see their keys and
    /// bytes: see [`Verdict`]): only its arguments writer listens (see
    /// [`Sink::opaque`]).
    #[inline]
    fn writing_args(&self) -> Option<&CallShape> {
        self.calls
            .last()
            .filter(|c| !c.closed && c.route == Route::Args && c.verdict != Verdict::Open)
    }

    #[inline]
    fn opaque_now(&self) -> bool {
        self.writing_args().is_some_and(|c| c.args.opaque())
    }

    fn closable_now(&self) -> usize {
        self.writing_args().map_or(0, |c| c.args.opaque_closable())
    }

    /// The offered tools (a first key naming one is a call).
    pub(crate) fn with_tools(mut self, tools: Option<Arc<Tools>>) -> Self {
        self.tools = tools;
        self
    }

    /// [`CallRouter::with_tools`] in place.
    pub(crate) fn set_tools(&mut self, tools: Option<Arc<Tools>>) {
        self.tools = tools;
    }

    /// Tool definitions and placeholders are no calls: a call counts (see
    /// [`CallShape::call_name`]) once its arguments can be neither (see
    /// [`Verdict`]). For JSON written without call markup (bare, or in a
    /// code fence), which is a call only once the parser is sure of it
    /// anyway; inside call markup a call starts at its name.
    pub(crate) fn judging_calls(mut self, yes: bool) -> Self {
        self.judging = yes;
        self
    }

    /// Bare-text mode: the router halts the repairer as soon as the value
    /// cannot be a call (a scalar, a first key no envelope uses, an array
    /// whose first element is not an object).
    pub(crate) fn strict(mut self, yes: bool) -> Self {
        self.strict = yes;
        self
    }

    /// True when, in strict mode, the value cannot be a call.
    pub(crate) fn rejected(&self) -> bool {
        self.strict
            && (self.top == Top::Other
                || (self.calls.is_empty() && self.foreign_element)
                || self.calls.first().is_some_and(|c| c.foreign_first_key)
                || self
                    .calls
                    .first()
                    .is_some_and(|c| c.closed && c.call_name().is_none()))
    }

    /// The call currently being written, if any.
    #[inline]
    fn current(&mut self) -> Option<&mut CallShape> {
        self.calls.last_mut().filter(|c| !c.closed)
    }
}

impl Sink for CallRouter {
    fn halted(&self) -> bool {
        self.rejected()
    }

    fn string_cut(&mut self) {
        if let Some(c) = self.current() {
            c.name_cut();
        }
    }

    fn last_byte(&self) -> Option<u8> {
        let c = self.calls.last()?;
        if self.run || (!c.closed && matches!(c.route, Route::Args)) {
            Sink::last_byte(&c.args)
        } else {
            None
        }
    }

    fn blank_line_tail(&self) -> bool {
        match self.calls.last() {
            Some(c) if self.run || (!c.closed && matches!(c.route, Route::Args)) => {
                c.args.blank_line_tail()
            }
            _ => self.tail_breaks >= 2,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        // The line breaks in the blanks written last (the envelope keeps no
        // text of its own to look back at), whoever takes the bytes: a run
        // of opaque arguments ends the blanks written before it.
        self.note_written(bytes);
        if self.run {
            // Opaque arguments take every byte as it is.
            if let Some(c) = self.calls.last_mut() {
                c.args.put(bytes);
            }
        } else if let Some(c) = self.current() {
            c.write(bytes);
        }
    }

    /// Inside the arguments of the current call, where only their writer
    /// listens (and it needs no marks there).
    fn opaque(&self) -> bool {
        self.run || self.opaque_now()
    }

    fn opaque_closable(&self) -> usize {
        self.closable_now()
    }

    fn write_opaque(&mut self, bytes: &[u8], depth_change: isize) {
        self.note_written(bytes);
        self.depth = self.depth.saturating_add_signed(depth_change);
        let left = self.left;
        if let Some(c) = self.current() {
            c.args.left = left;
            c.args.write_opaque(bytes, depth_change);
        }
    }

    fn write_opaque_parts(&mut self, run: &[u8], depth_change: isize, parts: &[&[u8]]) {
        if !self.run {
            self.write_opaque(run, depth_change);
            for part in parts.iter().filter(|p| !p.is_empty()) {
                self.write(part);
            }
            return;
        }
        // As `write_opaque`, then `write` of each part, with one lookup.
        self.note_written(run);
        for part in parts {
            self.note_written(part);
        }
        self.depth = self.depth.saturating_add_signed(depth_change);
        if let Some(c) = self.calls.last_mut() {
            c.args.left = self.left;
            if c.closed {
                for part in parts {
                    c.args.put(part);
                }
            } else {
                c.args.write_opaque_parts(run, depth_change, parts);
            }
        }
    }

    fn mark(&mut self, mark: Mark<'_>, offset: u64) {
        if self.run {
            // Inside opaque arguments only containers count, as the router
            // and the writer would count them, until the end of one the
            // writer must see (the one closing the arguments).
            let container = matches!(mark, Mark::Begin(k) | Mark::End(k)
                if matches!(k, ValueKind::Object | ValueKind::Array));
            if !container {
                return;
            }
            if let Some(c) = self.calls.last_mut() {
                match mark {
                    Mark::Begin(_) => {
                        self.depth += 1;
                        c.args.depth += 1;
                        return;
                    }
                    _ if c.args.opaque_closable() > 0 => {
                        self.depth = self.depth.saturating_sub(1);
                        c.args.depth -= 1;
                        return;
                    }
                    _ => {}
                }
            }
        }
        self.route_mark(mark, offset);
        self.run = self.opaque_now();
    }
}

impl CallRouter {
    /// Keeps [`CallRouter::tail_breaks`] for what was just written.
    #[inline]
    fn note_written(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.tail_breaks = if matches!(last, b' ' | b'\t' | b'\n' | b'\r') {
                self.breaks_after(bytes)
            } else {
                0
            };
        }
    }

    /// [`CallRouter::tail_breaks`] after a write that ends in blanks: their
    /// line breaks, and those before them when the write is all blanks.
    #[cold]
    fn breaks_after(&self, bytes: &[u8]) -> u8 {
        let blank = |c: &&u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
        let blanks = bytes.iter().rev().take_while(blank).count();
        let breaks = bytes[bytes.len() - blanks..]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
            .min(2) as u8;
        let before = if blanks == bytes.len() {
            self.tail_breaks
        } else {
            0
        };
        before.saturating_add(breaks).min(2)
    }

    /// [`Sink::mark`] outside an opaque run.
    fn route_mark(&mut self, mark: Mark<'_>, offset: u64) {
        let depth_before = self.depth;
        match mark {
            Mark::Begin(ValueKind::Object | ValueKind::Array) => self.depth += 1,
            Mark::End(ValueKind::Object | ValueKind::Array) => {
                self.depth = self.depth.saturating_sub(1)
            }
            _ => {}
        }
        if depth_before == 0 {
            if let Mark::Begin(kind) = mark {
                self.top = match kind {
                    ValueKind::Object => Top::Object,
                    ValueKind::Array => Top::Array,
                    _ => Top::Other,
                };
                if kind == ValueKind::Object {
                    self.calls.push(CallShape::new(
                        0,
                        offset,
                        &self.limits,
                        self.judging,
                        std::mem::take(&mut self.spare),
                    ));
                }
                return;
            }
        }
        if self.top == Top::Object && self.wrap(mark, depth_before, offset) {
            return;
        }
        if self.top == Top::Array && depth_before == 1 {
            match mark {
                Mark::Begin(ValueKind::Object) => {
                    self.calls.push(CallShape::new(
                        1,
                        offset,
                        &self.limits,
                        self.judging,
                        std::mem::take(&mut self.spare),
                    ));
                    return;
                }
                Mark::Begin(_) => {
                    self.foreign_element = true;
                    return;
                }
                Mark::End(ValueKind::Array) => return,
                _ => {}
            }
        }
        // Containers are reported to the shape with the depth before the mark
        // for Begin and Key, and with the depth before the End was applied.
        let tools = self.tools.as_deref();
        if let Some(c) = self.calls.last_mut().filter(|c| !c.closed) {
            c.mark(mark, depth_before, tools);
            if c.closed {
                c.end = offset + 1;
                if c.name.is_none() && c.has_args && !c.name_cut {
                    if let Some(tools) = tools {
                        if !c.hoist_name(tools) {
                            c.infer_name(tools);
                        }
                    }
                }
            }
        }
    }
}

/// The offset of the last comma between the members of the JSON object
/// `json` (valid JSON), if it has more than one member.
fn last_top_level_comma(json: &[u8]) -> Option<usize> {
    let (mut depth, mut in_str, mut esc, mut last) = (0usize, false, false, None);
    for (i, &b) in json.iter().enumerate() {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => last = Some(i),
            _ => {}
        }
    }
    last
}

/// How an [`ArgsWriter`] is treating the arguments value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgsMode {
    /// Nothing seen yet.
    Start,
    /// `{` and whitespace held until the first key shows whether it is double-wrapped.
    ObjectHead,
    /// The first key was an argument key: waiting for its value.
    WrapKey,
    /// Passing bytes through.
    Pass,
    /// Passing the inner object of a double-wrapped value.
    Unwrap,
    /// Skipping the rest of the outer object after the inner one closed.
    UnwrapTail,
    /// A non-object value written as `{"value": …}`.
    Wrap,
    /// A literal, held until it shows whether it is `null`.
    LiteralHead,
    /// A string, held until its first non-blank character.
    StrHead,
    /// A string holding JSON: its content goes through a nested repairer.
    Stringified,
    /// A string that is not JSON: written as `{"value": "…"}`.
    StrWrap,
    /// Complete.
    Done,
}

/// A write at least this long goes to the arguments' text ([`ArgsWriter`]'s
/// `head`) at once, checked there (`simdutf8`), rather than to its byte
/// buffer: a long run is copied once and never checked again.
const HEAD_WRITE_MIN: usize = 256;

/// A byte buffer at least this long is moved to the arguments' text when
/// its bytes are handed out ([`ArgsWriter::take_delta`]).
const HEAD_MOVE_MIN: usize = 4 << 10;

/// A first write to the arguments' text at least this long sizes it for
/// the input left in the feed ([`CallRouter::feed_left`], at most
/// `max_args_bytes`): a value fed whole is then written into one
/// allocation, where doubling up to its size copied it about once more
/// and left a buffer of up to twice its size, which glibc gave back to the
/// system after every parse and faulted in again (callgrind and `perf
/// stat`, a 1 MB `write_file` call fed whole: 738 page faults a parse,
/// 1.4 with the buffer sized). A shorter first write (a value of a few
/// hundred bytes in a long feed) does not reserve for the rest of the feed,
/// unless that is at most [`HEAD_SIZED_RATIO`] times the write.
const HEAD_SIZED_MIN: usize = 32 << 10;

/// See [`HEAD_SIZED_MIN`].
const HEAD_SIZED_RATIO: usize = 4;

/// `bytes` as text, when they are UTF-8: short ones checked by std, long
/// ones by `simdutf8` (SIMD; below 64 bytes it calls std's check itself,
/// after setting up for a long one).
#[inline]
fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.len() < 64 {
        std::str::from_utf8(bytes).ok()
    } else {
        simdutf8::basic::from_utf8(bytes).ok()
    }
}

/// Normalises one arguments value to a JSON object, streaming.
///
/// The arguments JSON written so far is `head` followed by `out`. `head`
/// is a `String` built from checked text: a long write goes there (when
/// `out` is empty), and `out` moves there once it is long and handed out.
/// The final arguments are then `head` itself, moved into the event with
/// no copy and no second UTF-8 check (std's check of a long `Vec<u8>`, a
/// byte at a time from each non-ASCII character on, was a third of the
/// work of a long call fed whole: callgrind). Short arguments, written a
/// token at a time, stay in `out` as before.
#[derive(Debug)]
pub(crate) struct ArgsWriter {
    /// The arguments' first bytes, as checked text.
    head: String,
    /// The arguments JSON after `head` (append-only).
    out: Vec<u8>,
    /// How many bytes of the arguments (`head`, then `out`) have been
    /// handed out as deltas.
    emitted: usize,
    /// Bytes in `out` that were not UTF-8 on their own (never expected:
    /// the repairer writes whole characters): `head` is given up and
    /// everything stays in `out`.
    no_head: bool,
    /// Bytes of input left in the feed being read (see [`CallRouter::feed_left`]).
    left: usize,
    mode: ArgsMode,
    depth: usize,
    hold: Vec<u8>,
    /// Decoded string content held in `StrHead` (leading blanks, then at
    /// most a start of `null` and blanks).
    text: Vec<u8>,
    nested: Option<Box<Nested>>,
    allow_string: bool,
    /// Repairs made here (not by the repairer feeding us).
    pub repairs: Vec<Repair>,
    limits: Limits,
    /// `max_args_bytes` was reached: nothing more is written.
    pub limited: bool,
    /// The arguments came through a nested repairer (stringified JSON), whose
    /// output may have been cut by its own limits.
    stringified: bool,
    /// A value that is no object was written as `{"value": …}`.
    wrapped: bool,
}

#[derive(Debug)]
struct Nested {
    repairer: Repairer,
    writer: ArgsWriter,
    done: bool,
}

impl Sink for ArgsWriter {
    fn write(&mut self, bytes: &[u8]) {
        ArgsWriter::write(self, bytes);
    }
    fn mark(&mut self, mark: Mark<'_>, _offset: u64) {
        ArgsWriter::mark(self, mark);
    }
    fn opaque(&self) -> bool {
        ArgsWriter::opaque(self)
    }
    fn opaque_closable(&self) -> usize {
        ArgsWriter::opaque_closable(self)
    }
    fn write_opaque(&mut self, bytes: &[u8], depth_change: isize) {
        ArgsWriter::write_opaque(self, bytes, depth_change);
    }
    fn last_byte(&self) -> Option<u8> {
        match self.mode {
            ArgsMode::Pass | ArgsMode::Unwrap | ArgsMode::Wrap | ArgsMode::StrWrap => self.last(),
            _ => None,
        }
    }
    fn blank_line_tail(&self) -> bool {
        match self.mode {
            ArgsMode::Pass | ArgsMode::Unwrap | ArgsMode::Wrap => self.ends_in_blank_line(),
            _ => false,
        }
    }
}

impl ArgsWriter {
    pub(crate) fn new(limits: &Limits, allow_string: bool) -> Self {
        ArgsWriter {
            head: String::new(),
            out: Vec::new(),
            emitted: 0,
            no_head: false,
            left: 0,
            mode: ArgsMode::Start,
            depth: 0,
            hold: Vec::new(),
            text: Vec::new(),
            nested: None,
            allow_string,
            repairs: Vec::new(),
            limits: limits.clone(),
            limited: false,
            stringified: false,
            wrapped: false,
        }
    }

    /// True when what is inside the innermost open container is passed
    /// through unchanged and needs no marks (see [`Sink::opaque`]): the
    /// writer only counts containers there and looks at the one that closes
    /// the arguments (or the inner object of double-wrapped ones).
    pub(crate) fn opaque(&self) -> bool {
        match self.mode {
            ArgsMode::Pass | ArgsMode::Wrap => self.depth >= 1,
            ArgsMode::Unwrap => self.depth >= 2,
            _ => false,
        }
    }

    /// How many open containers an opaque run may close: all but the one
    /// whose end closes the arguments (see [`Sink::opaque_closable`]).
    pub(crate) fn opaque_closable(&self) -> usize {
        match self.mode {
            ArgsMode::Pass | ArgsMode::Wrap => self.depth.saturating_sub(1),
            ArgsMode::Unwrap => self.depth.saturating_sub(2),
            _ => 0,
        }
    }

    /// Bytes of a run inside the innermost open container (see [`Sink::write_opaque`]).
    pub(crate) fn write_opaque(&mut self, bytes: &[u8], depth_change: isize) {
        debug_assert!(self.opaque());
        self.depth = self.depth.saturating_add_signed(depth_change);
        debug_assert!(self.opaque());
        self.write(bytes);
    }

    /// [`ArgsWriter::write_opaque`] of `run`, then [`ArgsWriter::put`] of
    /// each part (as the router writes in an opaque run): a rewritten unit
    /// and the input before it, copied at once when they fit the limit.
    pub(crate) fn write_opaque_parts(&mut self, run: &[u8], depth_change: isize, parts: &[&[u8]]) {
        self.depth = self.depth.saturating_add_signed(depth_change);
        let total = run.len() + parts.iter().map(|p| p.len()).sum::<usize>();
        let fits = !self.limited && total <= self.limits.max_args_bytes.saturating_sub(self.len());
        if fits && matches!(self.mode, ArgsMode::Pass | ArgsMode::Wrap) {
            if run.len() >= HEAD_WRITE_MIN && self.write_head(run) {
                for part in parts {
                    self.put(part);
                }
                return;
            }
            if self.out.capacity() == 0 {
                self.out.reserve(total.max(ARGS_FIRST_CAPACITY));
            } else {
                self.out.reserve(total);
            }
            self.out.extend_from_slice(run);
            for part in parts {
                // Mostly a quote or a short word: copied here, not by a
                // call to `memcpy`.
                if part.len() <= 16 {
                    self.out.extend(part.iter().copied());
                } else {
                    self.out.extend_from_slice(part);
                }
            }
        } else {
            self.write(run);
            for part in parts {
                self.put(part);
            }
        }
    }

    /// Whether the arguments value makes an object, as far as it has been
    /// read: `Some(true)` for an object, a string of JSON that decodes to
    /// one, an empty string, `null` or `"null"` (`{}`); `Some(false)` for anything
    /// written as `{"value": …}`; None while a string or literal has not
    /// shown which (or nothing has begun).
    pub(crate) fn object(&self) -> Option<bool> {
        if self.wrapped {
            return Some(false);
        }
        match self.mode {
            ArgsMode::Start | ArgsMode::LiteralHead | ArgsMode::StrHead => None,
            ArgsMode::Stringified => self
                .nested
                .as_ref()
                .map_or(Some(true), |n| n.writer.object()),
            _ => Some(true),
        }
    }

    /// True once the arguments value has begun.
    pub(crate) fn started(&self) -> bool {
        self.mode != ArgsMode::Start
    }

    /// Sets the whole arguments at once (used when there was no arguments
    /// value, or to set them again before any were handed out).
    pub(crate) fn set_whole(&mut self, json: &[u8]) {
        self.out.extend_from_slice(json);
        self.mode = ArgsMode::Done;
    }

    /// The first `bytes.len()` bytes of the arguments count as handed out
    /// already (by the streaming fast path, before it handed the value to
    /// the repairer that writes here): deltas start after them. They may
    /// not all be written yet; what is written must begin with them.
    pub(crate) fn handed_out(&mut self, bytes: &[u8]) {
        debug_assert_eq!(self.emitted, 0);
        let n = self.len().min(bytes.len());
        debug_assert!(
            self.whole()[..n] == bytes[..n],
            "written {:?}, handed out {:?}",
            String::from_utf8_lossy(&self.whole()),
            String::from_utf8_lossy(bytes)
        );
        self.emitted = bytes.len();
    }

    /// The bytes written since the last call (the next delta).
    pub(crate) fn take_delta(&mut self) -> &[u8] {
        let from = self.emitted;
        if from > self.len() {
            // Handed out ahead of the writing (see `handed_out`).
            return &[];
        }
        self.emitted = self.len();
        if !self.head.is_empty()
            && (self.out.len() >= HEAD_MOVE_MIN || (from < self.head.len() && !self.out.is_empty()))
        {
            // Once a long write began the text, a long buffer joins it
            // (checked once, copied once); a delta that begins in `head`
            // is cut from it alone. Arguments streamed in short writes
            // stay in the byte buffer: moved piece by piece, the text grew
            // by doubling beside it, and under glibc's allocator that
            // gave a 1 MB value's pages back to the system after every
            // parse (criterion, `json_bare` 1 MB at 64 B: ~1,000 page
            // faults a parse, 0.82× the speed of keeping it in one buffer).
            self.move_to_head();
        }
        let h = self.head.len();
        if from >= h {
            &self.out[from - h..]
        } else {
            &self.head.as_bytes()[from..]
        }
    }

    /// Bytes of arguments written so far.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.head.len() + self.out.len()
    }

    /// The last byte of the arguments written so far.
    #[inline]
    fn last(&self) -> Option<u8> {
        self.out
            .last()
            .or_else(|| self.head.as_bytes().last())
            .copied()
    }

    /// The first byte of the arguments written so far.
    fn first(&self) -> Option<u8> {
        self.head
            .as_bytes()
            .first()
            .or_else(|| self.out.first())
            .copied()
    }

    /// The arguments written so far, in one piece (a copy only when part
    /// of them is in `head` and part in `out`).
    pub(crate) fn whole(&self) -> std::borrow::Cow<'_, [u8]> {
        if self.head.is_empty() {
            std::borrow::Cow::Borrowed(&self.out)
        } else if self.out.is_empty() {
            std::borrow::Cow::Borrowed(self.head.as_bytes())
        } else {
            let mut v = Vec::with_capacity(self.len());
            v.extend_from_slice(self.head.as_bytes());
            v.extend_from_slice(&self.out);
            std::borrow::Cow::Owned(v)
        }
    }

    /// [`crate::json::ends_in_blank_line`] of the arguments written so
    /// far: the trailing blanks may begin in `head`.
    fn ends_in_blank_line(&self) -> bool {
        let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
        if self.head.is_empty() || !self.out.iter().all(blank) {
            return crate::json::ends_in_blank_line(&self.out);
        }
        let lines = |s: &[u8]| s.iter().filter(|&&c| c == b'\n').count();
        let head = self.head.as_bytes();
        let tail = head.iter().rev().take_while(|c| blank(c)).count();
        lines(&self.out) + lines(&head[head.len() - tail..]) >= 2
    }

    /// True when every byte written was handed out.
    #[inline]
    pub(crate) fn all_handed_out(&self) -> bool {
        self.emitted == self.len()
    }

    /// True when some bytes were handed out.
    #[inline]
    pub(crate) fn any_handed_out(&self) -> bool {
        self.emitted != 0
    }

    /// The byte buffer the lane appends to ([`crate::json::Lane`]), when
    /// every byte written was handed out, and the most bytes it may hold.
    pub(crate) fn lane_buffer(&mut self) -> Option<(&mut Vec<u8>, usize)> {
        if self.limited || !self.all_handed_out() {
            return None;
        }
        let max = self.limits.max_args_bytes.saturating_sub(self.head.len());
        Some((&mut self.out, max))
    }

    /// The lane gives its buffer back, every byte in it handed out.
    pub(crate) fn lane_done(&mut self) {
        self.emitted = self.len();
    }

    /// The lane's buffer (see [`ArgsWriter::lane_buffer`]).
    pub(crate) fn lane_out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Forgets what was written (nothing was handed out).
    fn clear(&mut self) {
        debug_assert_eq!(self.emitted, 0);
        self.head.clear();
        self.out.clear();
    }

    /// Writes `bytes` to `head` when they are text and `out` is empty or
    /// moves there; false when nothing was written.
    fn write_head(&mut self, bytes: &[u8]) -> bool {
        let first = self.head.is_empty();
        if self.no_head || !self.move_to_head() {
            return false;
        }
        match as_text(bytes) {
            Some(text) => {
                if first
                    && (bytes.len() >= HEAD_SIZED_MIN
                        || self.left <= HEAD_SIZED_RATIO * bytes.len())
                {
                    // A long value fed whole: sized once from the input
                    // left in the feed, not doubled (and copied) up to it.
                    let room = self.limits.max_args_bytes.saturating_sub(self.head.len());
                    self.head.reserve(bytes.len().max(self.left.min(room)));
                }
                self.head.push_str(text);
                true
            }
            None => false,
        }
    }

    /// Moves `out` to `head`; false (and `head` given up, moved back to
    /// `out`) when its bytes are not UTF-8 on their own.
    fn move_to_head(&mut self) -> bool {
        if self.out.is_empty() {
            return true;
        }
        if !self.no_head {
            if let Some(text) = as_text(&self.out) {
                self.head.push_str(text);
                self.out.clear();
                return true;
            }
            self.no_head = true;
        }
        if !self.head.is_empty() {
            let mut all = std::mem::take(&mut self.head).into_bytes();
            all.extend_from_slice(&self.out);
            self.out = all;
        }
        false
    }

    /// Writes the held bytes ([`ArgsWriter::write`]'s head) out. As the
    /// arguments' first bytes (nothing written yet), the hold's allocation
    /// becomes the arguments buffer: one allocation less per call.
    fn put_held(&mut self) {
        let held = std::mem::take(&mut self.hold);
        if self.out.capacity() == 0 && !self.limited && held.len() <= self.limits.max_args_bytes {
            self.out = held;
        } else {
            self.put(&held);
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.limited {
            return;
        }
        let room = self.limits.max_args_bytes.saturating_sub(self.len());
        if bytes.len() > room {
            // Cut at exactly the limit (backing off to a character boundary):
            // the output bytes do not depend on chunking, so neither does the cut.
            let mut k = room;
            while k > 0 && bytes[k] & 0xC0 == 0x80 {
                k -= 1;
            }
            self.out.extend_from_slice(&bytes[..k]);
            self.limited = true;
            self.repairs.push(Repair {
                kind: RepairKind::LimitExceeded,
                offset: 0,
            });
            return;
        }
        if bytes.len() >= HEAD_WRITE_MIN && self.write_head(bytes) {
            return;
        }
        if self.out.capacity() == 0 {
            // Most arguments are short: one allocation instead of a chain
            // of doublings from 8 bytes.
            self.out.reserve(bytes.len().max(ARGS_FIRST_CAPACITY));
        }
        match bytes {
            // The repairer's punctuation (`"`, `:`, `,`): no copy call.
            [b] => self.out.push(*b),
            _ => self.out.extend_from_slice(bytes),
        }
    }

    fn repair(&mut self, kind: RepairKind) {
        // Offset 0 stands for the call's start, the lowest offset it has.
        let max = self.limits.max_repairs;
        Repair::push_bounded(&mut self.repairs, Repair { kind, offset: 0 }, max);
    }

    pub(crate) fn mark(&mut self, mark: Mark<'_>) {
        let before = self.depth;
        match mark {
            Mark::Begin(ValueKind::Object | ValueKind::Array) => self.depth += 1,
            Mark::End(ValueKind::Object | ValueKind::Array) => {
                self.depth = self.depth.saturating_sub(1)
            }
            _ => {}
        }
        match self.mode {
            ArgsMode::Start => {
                if let Mark::Begin(kind) = mark {
                    self.mode = match kind {
                        ValueKind::Object => ArgsMode::ObjectHead,
                        ValueKind::String if self.allow_string => ArgsMode::StrHead,
                        ValueKind::Literal => ArgsMode::LiteralHead,
                        _ => {
                            self.repair(RepairKind::NonObjectArguments);
                            self.put(br#"{"value":"#);
                            self.wrapped = true;
                            ArgsMode::Wrap
                        }
                    };
                }
            }
            ArgsMode::ObjectHead => match mark {
                Mark::Key(k) if key_in(k, &[b"arguments", b"parameters", b"args", b"input"]) => {
                    self.mode = ArgsMode::WrapKey;
                }
                Mark::End(_) if self.depth == 0 => {
                    self.put_held();
                    self.mode = ArgsMode::Done;
                }
                _ => {
                    self.put_held();
                    self.mode = ArgsMode::Pass;
                }
            },
            ArgsMode::WrapKey => match mark {
                Mark::Begin(ValueKind::Object) if before == 1 => {
                    self.repair(RepairKind::DoubleWrappedArguments);
                    self.hold.clear();
                    self.mode = ArgsMode::Unwrap;
                }
                _ => {
                    self.put_held();
                    self.mode = ArgsMode::Pass;
                    if let Mark::End(_) = mark {
                        if self.depth == 0 {
                            self.mode = ArgsMode::Done;
                        }
                    }
                }
            },
            ArgsMode::Pass => {
                if matches!(mark, Mark::End(_)) && self.depth == 0 {
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::Unwrap => {
                if matches!(mark, Mark::End(_)) && self.depth == 1 {
                    self.mode = ArgsMode::UnwrapTail;
                }
            }
            ArgsMode::UnwrapTail => {
                if matches!(mark, Mark::End(_)) && self.depth == 0 {
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::Wrap => {
                if matches!(mark, Mark::End(_)) && self.depth == 0 {
                    self.put(b"}");
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::LiteralHead => {
                if let Mark::End(_) = mark {
                    let held = std::mem::take(&mut self.hold);
                    if held == b"null" {
                        self.repair(RepairKind::NonObjectArguments);
                        self.put(b"{}");
                    } else {
                        self.repair(RepairKind::NonObjectArguments);
                        self.put(br#"{"value":"#);
                        self.put(&held);
                        self.put(b"}");
                        self.wrapped = true;
                    }
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::StrHead => {
                if let Mark::End(_) = mark {
                    if self.text.trim_ascii().is_empty() || self.text.trim_ascii() == b"null" {
                        // Only blanks, or `"null"` (Groq's zero-argument
                        // calls): no arguments.
                        self.repair(RepairKind::NonObjectArguments);
                        self.put(b"{}");
                    } else {
                        // A start of `null` that stopped short (`"nu"`).
                        self.begin_str_wrap();
                        self.put(b"}");
                    }
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::Stringified => {
                if let Mark::End(_) = mark {
                    self.finish_nested();
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::StrWrap => {
                if let Mark::End(_) = mark {
                    self.put(b"}");
                    self.mode = ArgsMode::Done;
                }
            }
            ArgsMode::Done => {}
        }
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        match self.mode {
            ArgsMode::ObjectHead | ArgsMode::WrapKey | ArgsMode::LiteralHead => {
                if self.hold.len() + bytes.len() <= self.limits.max_token_bytes {
                    if self.hold.capacity() == 0 {
                        // Sized as the arguments buffer it may become
                        // ([`ArgsWriter::put_held`]).
                        self.hold.reserve(bytes.len().max(ARGS_FIRST_CAPACITY));
                    }
                    self.hold.extend_from_slice(bytes);
                } else if self.mode == ArgsMode::LiteralHead {
                    // A literal longer than a token (any literal, at a
                    // `max_token_bytes` below 4) is not the `null` that
                    // makes `{}`: it is written as `{"value": …}`, as it
                    // would be at its end.
                    self.repair(RepairKind::NonObjectArguments);
                    self.wrapped = true;
                    self.put(br#"{"value":"#);
                    let held = std::mem::take(&mut self.hold);
                    self.put(&held);
                    self.put(bytes);
                    self.mode = ArgsMode::Wrap;
                } else {
                    // A huge key or blank run: stop looking for a wrapper.
                    self.put_held();
                    self.put(bytes);
                    self.mode = ArgsMode::Pass;
                }
            }
            ArgsMode::Pass | ArgsMode::Wrap => self.put(bytes),
            ArgsMode::Unwrap => {
                if self.depth >= 2 {
                    self.put(bytes);
                }
            }
            ArgsMode::StrHead => {
                self.hold.extend_from_slice(bytes);
                unescape_into(bytes, &mut self.text);
                // The string's leading blanks decide, counted in its text
                // (however its pieces arrive): more than a token's worth
                // make it plain text, else its first other byte does.
                let blanks = self
                    .text
                    .iter()
                    .take_while(|c| c.is_ascii_whitespace())
                    .count();
                if blanks > self.limits.max_token_bytes {
                    self.begin_str_wrap();
                    return;
                }
                let rest = &self.text[blanks..];
                // `"null"` makes `{}`: the string is held while it may be
                // that (its trailing blanks too, within the same limit).
                let (word, after) = rest.split_at(rest.len().min(4));
                let null_head = b"null".starts_with(word)
                    && after.iter().all(u8::is_ascii_whitespace)
                    && after.len() <= self.limits.max_token_bytes;
                match rest.first() {
                    None => {}
                    Some(_) if null_head => {}
                    Some(b'{' | b'[') => {
                        self.repair(RepairKind::StringifiedArguments);
                        let mut nested = Box::new(Nested {
                            repairer: Repairer::with_limits(&self.limits),
                            writer: ArgsWriter::new(&self.limits, false),
                            done: false,
                        });
                        let text = std::mem::take(&mut self.text);
                        nested_feed(&mut nested, &text);
                        self.nested = Some(nested);
                        self.stringified = true;
                        self.mode = ArgsMode::Stringified;
                        self.pull_nested();
                    }
                    Some(_) => self.begin_str_wrap(),
                }
            }
            ArgsMode::Stringified => {
                let mut text = std::mem::take(&mut self.text);
                text.clear();
                unescape_into(bytes, &mut text);
                if let Some(n) = self.nested.as_mut() {
                    nested_feed(n, &text);
                }
                self.text = text;
                self.pull_nested();
            }
            ArgsMode::StrWrap => self.put(bytes),
            ArgsMode::Start | ArgsMode::UnwrapTail | ArgsMode::Done => {}
        }
    }

    fn begin_str_wrap(&mut self) {
        self.repair(RepairKind::NonObjectArguments);
        self.wrapped = true;
        self.put(br#"{"value":"#);
        let held = std::mem::take(&mut self.hold);
        self.put(&held);
        self.text.clear();
        self.mode = ArgsMode::StrWrap;
    }

    /// Moves the nested writer's new output into ours.
    fn pull_nested(&mut self) {
        if let Some(n) = self.nested.as_mut() {
            let new = n.writer.take_delta().to_vec();
            // Its repairs stand at the call's start (offset 0), as
            // `finish_nested` files them: taken as they come, bounded.
            let max = self.limits.max_repairs;
            for r in n.repairer.drain_repairs() {
                let r = Repair {
                    kind: r.kind,
                    offset: 0,
                };
                Repair::push_bounded(&mut self.repairs, r, max);
            }
            self.put(&new);
        }
    }

    fn finish_nested(&mut self) {
        if let Some(mut n) = self.nested.take() {
            if !n.done {
                n.repairer.finish(&mut n.writer);
            }
            if !n.writer.started() {
                n.writer.set_whole(b"{}");
            } else {
                n.writer.finish_open();
            }
            let reps = n.repairer.take_repairs();
            self.repairs.extend(reps.into_iter().map(|r| Repair {
                kind: r.kind,
                offset: 0,
            }));
            self.repairs.append(&mut n.writer.repairs);
            self.wrapped |= n.writer.wrapped;
            let new = n.writer.take_delta().to_vec();
            self.put(&new);
        }
    }

    /// Closes a value the repairer left open (only possible after a limit).
    pub(crate) fn finish_open(&mut self) {
        match self.mode {
            ArgsMode::Done => {}
            ArgsMode::Start => self.set_whole(b"{}"),
            ArgsMode::Stringified => {
                self.finish_nested();
                self.mode = ArgsMode::Done;
            }
            _ => {
                // Only reachable when output was cut by a limit: close it minimally.
                if !self.limited
                    && serde_json::from_slice::<serde::de::IgnoredAny>(&self.whole()).is_ok()
                {
                    self.mode = ArgsMode::Done;
                }
            }
        }
    }

    /// Complete and never cut: the repairer's output (or JSON that was
    /// checked when it was set) is valid by construction.
    fn complete_as_written(&self) -> bool {
        self.mode == ArgsMode::Done
            && !self.limited
            && !self.stringified
            && self.first() == Some(b'{')
    }

    /// Ends the arguments once every delta so far was handed out
    /// ([`ArgsWriter::take_delta`]): the final JSON and the tail that closing
    /// them appended (the last delta, empty when nothing had to be closed).
    /// Arguments complete as written are moved out, not copied (a call with a
    /// megabyte of arguments is not copied once more at its end).
    /// The final JSON is text: `head` when all of it is there (no copy, no
    /// check), else checked as [`crate::json::into_string`] checks.
    pub(crate) fn take_final(&mut self) -> (String, Vec<u8>) {
        debug_assert_eq!(self.emitted, self.len());
        if self.complete_as_written() {
            self.emitted = 0;
            if !self.head.is_empty() && self.move_to_head() {
                let mut text = std::mem::take(&mut self.head);
                // Sized from the feed, it may have room far past the call
                // (up to `max_args_bytes`): the event does not keep it.
                if text.capacity() / 2 > text.len() {
                    text.shrink_to_fit();
                }
                return (text, Vec::new());
            }
            let out = std::mem::take(&mut self.out);
            return (crate::json::into_string(out), Vec::new());
        }
        let fin = self.final_json();
        let len = self.len();
        let tail = if fin.len() > len && fin[..len] == *self.whole() {
            fin[len..].to_vec()
        } else {
            Vec::new()
        };
        (crate::json::into_string(fin), tail)
    }

    /// Makes `out` valid after a limit cut it: nothing more is appended, so the
    /// final arguments fall back to what can be closed. Returns the final JSON.
    pub(crate) fn final_json(&self) -> Vec<u8> {
        let out = self.whole();
        if self.complete_as_written() {
            // Complete and never cut: the repairer's output (or JSON that was
            // checked when it was set) is valid by construction.
            debug_assert!(
                serde_json::from_slice::<serde::de::IgnoredAny>(&out).is_ok(),
                "{:?}",
                String::from_utf8_lossy(&out)
            );
            return out.into_owned();
        }
        if serde_json::from_slice::<serde::de::IgnoredAny>(&out)
            .map(|_| out.first() == Some(&b'{'))
            .unwrap_or(false)
        {
            return out.into_owned();
        }
        if out.first() == Some(&b'{') {
            // Cut short (by a size limit, inside a key, after a comma,
            // inside a number; or a stringified value whose text ended):
            // its bytes may have been handed out, so the end extends them.
            // The repairer's end-of-input policies would drop a cut key or
            // a trailing comma.
            let mut fin = out.to_vec();
            fin.extend_from_slice(&crate::json::completion(&out));
            if serde_json::from_slice::<serde::de::IgnoredAny>(&fin).is_ok() {
                return fin;
            }
        }
        // Not a JSON prefix (never expected): close it with a repairer.
        let mut r = Repairer::with_limits(&self.limits);
        let mut fixed = Vec::with_capacity(out.len() + 8);
        let p = r.feed(&out, &mut fixed);
        if p.status != Status::Done {
            r.finish(&mut fixed);
        }
        if fixed.first() == Some(&b'{')
            && serde_json::from_slice::<serde::de::IgnoredAny>(&fixed).is_ok()
        {
            fixed
        } else {
            b"{}".to_vec()
        }
    }
}

fn nested_feed(n: &mut Nested, text: &[u8]) {
    if n.done || text.is_empty() {
        return;
    }
    let p = n.repairer.feed(text, &mut n.writer);
    if p.status != Status::NeedMore {
        n.done = true;
        n.repairer.finish(&mut n.writer);
    }
}

/// Decodes JSON string output (escapes never split) into raw bytes. Raw `"`
/// (the string's own quotes) are dropped.
pub(crate) fn unescape_into(s: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < s.len() {
        match memchr::memchr2(b'\\', b'"', &s[i..]) {
            None => {
                out.extend_from_slice(&s[i..]);
                break;
            }
            Some(p) => {
                out.extend_from_slice(&s[i..i + p]);
                i += p;
            }
        }
        if s[i] == b'"' {
            i += 1;
            continue;
        }
        let Some(&e) = s.get(i + 1) else { break };
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            b'u' => {
                let hex = |h: &[u8]| -> Option<u32> {
                    std::str::from_utf8(h)
                        .ok()
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                };
                let Some(unit) = s.get(i..i + 4).and_then(hex) else {
                    break;
                };
                i += 4;
                let c = if (0xD800..0xDC00).contains(&unit) {
                    let low = s
                        .get(i..i + 6)
                        .filter(|l| l.starts_with(b"\\u"))
                        .and_then(|l| hex(&l[2..]));
                    match low {
                        Some(low) if (0xDC00..0xE000).contains(&low) => {
                            i += 6;
                            char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                        }
                        _ => None,
                    }
                } else {
                    char::from_u32(unit)
                };
                let c = c.unwrap_or('\u{FFFD}');
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_string_reads_literals_like_serde_json() {
        for lit in [
            r#""get_weather""#,
            r#""""#,
            r#""caf\u00e9""#,
            r#""a\"b""#,
            r#""tab\there""#,
            "\"naïve\"",
            "5",
            "null",
            r#""unterminated"#,
        ] {
            assert_eq!(
                json_string(lit.as_bytes()),
                serde_json::from_str::<String>(lit).ok(),
                "{lit}"
            );
        }
    }

    /// Arguments streamed in short writes stay in the byte buffer.
    #[test]
    fn arguments_streamed_in_short_writes_stay_in_one_buffer() {
        // 64-byte pieces of a 20 KB value, a delta taken after each: no
        // write is long enough for the text, and the byte buffer is not
        // moved there piece by piece (see `take_delta`).
        let json = format!(r#"{{"a": "{}"}}"#, "naïve café, 42 ÷ 7. ".repeat(1000));
        let mut w = ArgsWriter::new(&Limits::default(), false);
        let mut r = Repairer::new();
        let mut deltas = Vec::new();
        for piece in json.as_bytes().chunks(64) {
            r.feed(piece, &mut w);
            deltas.extend_from_slice(w.take_delta());
        }
        r.finish(&mut w);
        deltas.extend_from_slice(w.take_delta());
        assert!(w.head.is_empty(), "streamed arguments moved to the text");
        assert_eq!(deltas, json.as_bytes());
        assert_eq!(w.take_final().0, json);
    }

    /// The arguments writer's two parts (`head`, checked text, and `out`,
    /// bytes) read as one buffer: deltas, the last byte, a blank line
    /// across them, the final text; and a part that is no text on its own
    /// gives `head` up without losing a byte.
    #[test]
    fn args_head_and_out_read_as_one_buffer() {
        let long = "naïve café ✓ ".repeat(40);
        let json = format!(r#"{{"a": "{long}", "b": 1}}"#);
        for cut in [0, 1, 7, 8, 300, json.len() - 3, json.len()] {
            let mut w = ArgsWriter::new(&Limits::default(), false);
            let mut r = Repairer::new();
            let mut deltas = Vec::new();
            for piece in [&json.as_bytes()[..cut], &json.as_bytes()[cut..]] {
                r.feed(piece, &mut w);
                deltas.extend_from_slice(w.take_delta());
                assert!(w.all_handed_out());
            }
            r.finish(&mut w);
            deltas.extend_from_slice(w.take_delta());
            assert!(!w.head.is_empty(), "a long write goes to the text");
            assert_eq!(deltas, json.as_bytes(), "cut {cut}");
            assert_eq!(*w.whole(), *json.as_bytes());
            assert_eq!(w.last(), Some(b'}'));
            let (fin, tail) = w.take_final();
            assert!(tail.is_empty());
            assert_eq!(fin, json);
        }
        // A blank line whose newlines are split between the parts.
        let mut w = ArgsWriter::new(&Limits::default(), false);
        w.head = format!("{{\"a\": \"{long}\",\n  ");
        w.out = b" \n ".to_vec();
        assert!(w.ends_in_blank_line());
        w.out = b" x\n".to_vec();
        assert!(!w.ends_in_blank_line());
        w.out.clear();
        assert!(!w.ends_in_blank_line());
        assert_eq!(w.last(), Some(b' '));
        // Bytes that are no text on their own (never written by the
        // repairer): everything goes back to `out`, in order.
        w.out = b"\xe2\x9c".to_vec();
        w.emitted = 3;
        let whole = w.whole().into_owned();
        assert_eq!(w.take_delta(), &whole[3..]);
        assert!(w.no_head && w.head.is_empty());
        assert_eq!(w.out, whole);
        w.put(long.as_bytes());
        assert!(w.head.is_empty(), "text stays given up");
        assert!(w.out.ends_with(long.as_bytes()));
    }

    /// A long first write sizes the text for the input left in the feed,
    /// never past `max_args_bytes`; a short one does not.
    #[test]
    fn long_arguments_in_a_long_feed_do_not_keep_its_room() {
        // The text is sized for the feed left (here 2 MB of prose after
        // the call); the event's arguments keep about their own size.
        let arg = "x".repeat(2 * HEAD_SIZED_MIN);
        let input = format!(
            "<tool_call>{{\"name\": \"f\", \"arguments\": {{\"s\": \"{arg}\"}}}}</tool_call>{}",
            "Some prose. ".repeat(180_000)
        );
        // The repairer's path (the fast path for whole calls has its own).
        let cfg = crate::Config::default().with_repairer_only(true);
        let mut p = crate::Parser::new(cfg);
        let mut evs = Vec::new();
        p.feed(input.as_bytes(), &mut evs);
        p.finish(&mut evs);
        let call = evs
            .iter()
            .find_map(|e| match e {
                crate::Event::ToolEnd { call, .. } => Some(call),
                _ => None,
            })
            .expect("the call");
        let args = &call.arguments;
        assert!(args.len() > arg.len(), "{}", args.len());
        assert!(
            args.capacity() <= 2 * args.len(),
            "capacity {} for {} bytes",
            args.capacity(),
            args.len()
        );
    }

    #[test]
    fn args_head_is_sized_from_the_feed_within_the_limit() {
        let limits = Limits {
            max_args_bytes: 200_000,
            ..Limits::default()
        };
        let long = "é".repeat(HEAD_SIZED_MIN);
        for (left, first, want) in [
            (1 << 20, long.as_str(), 200_000),
            (100_000, long.as_str(), 100_000),
            (0, long.as_str(), long.len()),
        ] {
            let mut w = ArgsWriter::new(&limits, false);
            w.left = left;
            w.put(first.as_bytes());
            assert_eq!(w.head, first);
            let cap = w.head.capacity();
            assert!((want..want + 64).contains(&cap), "left {left}: {cap}");
        }
        let mut w = ArgsWriter::new(&limits, false);
        w.left = 1 << 20;
        w.put(&[b'a'; HEAD_WRITE_MIN]);
        assert!(w.head.capacity() < HEAD_SIZED_MIN, "a short first write");
        // … unless the feed holds little more than it.
        let mut w = ArgsWriter::new(&limits, false);
        w.left = 3 * HEAD_WRITE_MIN;
        w.put(&[b'a'; HEAD_WRITE_MIN]);
        assert!(w.head.capacity() >= 3 * HEAD_WRITE_MIN);
    }

    fn route(input: &str) -> CallRouter {
        let limits = Limits::default();
        let mut r = Repairer::new();
        let mut router = CallRouter::new(&limits);
        let p = r.feed(input.as_bytes(), &mut router);
        if p.status != Status::Done {
            r.finish(&mut router);
        }
        for c in &mut router.calls {
            c.finish_args(0);
        }
        router
    }

    fn one(input: &str) -> (String, String) {
        let r = route(input);
        assert_eq!(r.calls.len(), 1, "{input}");
        let c = &r.calls[0];
        let args = String::from_utf8(c.args.final_json()).unwrap();
        serde_json::from_str::<serde_json::Value>(&args).unwrap();
        (c.name.as_deref().unwrap_or_default().to_string(), args)
    }

    #[test]
    fn shapes() {
        let want = ("f".to_string(), r#"{"a": 1}"#.to_string());
        assert_eq!(one(r#"{"name": "f", "arguments": {"a": 1}}"#), want);
        assert_eq!(one(r#"{"tool": "f", "parameters": {"a": 1}}"#), want);
        assert_eq!(one(r#"{"tool_name": "f", "input": {"a": 1}}"#), want);
        assert_eq!(one(r#"{"arguments": {"a": 1}, "name": "f"}"#), want);
        assert_eq!(
            one(r#"{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}"#),
            want
        );
        assert_eq!(one(r#"{"function": "f", "args": {"a": 1}}"#), want);
        assert_eq!(
            one(r#"{"name": "f", "arguments": {"arguments": {"a": 1}}}"#),
            want
        );
        assert_eq!(one(r#"{"name": "f", "arguments": "{\"a\": 1}"}"#), want);
        assert_eq!(one(r#"{"name": "f", "arguments": null}"#).1, "{}");
        assert_eq!(one(r#"{"name": "f"}"#).1, "{}");
        assert_eq!(one(r#"{"name": "f", "arguments": ""}"#).1, "{}");
        assert_eq!(one(r#"{"name": "f", "arguments": 3}"#).1, r#"{"value":3}"#);
        assert_eq!(
            one(r#"{"name": "f", "arguments": "Paris"}"#).1,
            r#"{"value":"Paris"}"#
        );
        assert_eq!(
            one(r#"{"name": "f", "city": "Paris"}"#).1,
            r#"{"city":"Paris"}"#
        );
        assert_eq!(
            one(r#"{"name": "f", "arguments": {"a": "x", "b": {"c": [1]}}}"#).1,
            r#"{"a": "x", "b": {"c": [1]}}"#
        );
    }

    /// Delegates to a sink but never takes bulk runs: the slow path reads everything.
    struct NoFast<'a, S>(&'a mut S);

    impl<S: Sink> Sink for NoFast<'_, S> {
        fn write(&mut self, bytes: &[u8]) {
            self.0.write(bytes);
        }
        fn last_byte(&self) -> Option<u8> {
            self.0.last_byte()
        }
        fn mark(&mut self, mark: Mark<'_>, offset: u64) {
            self.0.mark(mark, offset);
        }
        fn halted(&self) -> bool {
            self.0.halted()
        }
    }

    /// What a router found, to compare the fast and slow paths.
    fn summary(input: &[u8], cut: usize, fast: bool, limits: &Limits) -> Vec<String> {
        let (mut progress, rest) = summary_cuts(input, &[cut], fast, limits);
        progress.extend(rest);
        progress
    }

    /// The feeds' progress, and what the router found, with the input cut
    /// at every offset of `cuts` (increasing).
    fn summary_cuts(
        input: &[u8],
        cuts: &[usize],
        fast: bool,
        limits: &Limits,
    ) -> (Vec<String>, Vec<String>) {
        let mut r = Repairer::with_limits(limits);
        let mut router = CallRouter::new(limits);
        let mut progress = Vec::new();
        let mut out = Vec::new();
        let mut deltas = Vec::new();
        let mut parts = Vec::new();
        let mut last = 0;
        for &c in cuts.iter().chain([input.len()].iter()) {
            parts.push(&input[last..c]);
            last = c;
        }
        for part in parts {
            let p = if fast {
                r.feed(part, &mut router)
            } else {
                r.feed(part, &mut NoFast(&mut router))
            };
            progress.push(format!("{p:?}"));
            for c in &mut router.calls {
                deltas.push(String::from_utf8_lossy(c.args.take_delta()).into_owned());
            }
            if p.status != Status::NeedMore {
                break;
            }
        }
        r.finish(&mut router);
        out.push(format!("{:?}", r.take_repairs()));
        for c in &mut router.calls {
            let rep = c.finish_args(0);
            out.push(format!(
                "{:?} {:?} {} {:?} {:?} {}",
                c.name,
                c.id,
                String::from_utf8_lossy(&c.args.final_json()),
                rep,
                c.args.repairs,
                c.closed
            ));
        }
        out.push(deltas.concat());
        (progress, out)
    }

    #[test]
    fn fast_path_routes_like_the_slow_path() {
        let small = Limits {
            max_args_bytes: 24,
            max_depth: 5,
            ..Limits::default()
        };
        for input in [
            r#"{"name": "f", "arguments": {"a": [1, {"b": "x\"y"}], "c": null}}"#,
            r#"[{"name": "a", "arguments": {"x": [1, 2]}}, {"name": "b", "arguments": {"y": {"z": "é"}}}]"#,
            r#"{"tool_calls": [{"name": "a", "arguments": {"x": {"y": [true]}}}, {"name": "b", "arguments": {}}]}"#,
            r#"{"name": "f", "arguments": {"arguments": {"a": {"b": 1}}, "x": [2]}}"#,
            r#"{"type": "function", "function": {"name": "f", "arguments": {"a": [[1], {"b": 2}]}}}"#,
            r#"{"name": "f", "arguments": "{\"a\": [1, {\"b\": 2}]}"}"#,
            r#"{"name": "f", "arguments": [1, {"a": 2}, [3]]}"#,
            r#"{"arguments": {"a": {"name": "x"}, "b": [1]}, "name": "f"}"#,
            r#"{"name": "f", "arguments": {"a": {"b": [1, 2,], c: 'd'}, "e": [1 2]}}"#,
            r#"{"name": "f", "arguments": {"a": {"b": [1, {"c": "d"#,
            r#"{"name": "f", "arguments": {"long": {"k": "a string longer than the args limit"}}}"#,
            // Units the fast path rewrites (single quotes, Python literals,
            // bare keys) before the containers that end the arguments and
            // the call (a BFCL row once kept the call's `}` in them).
            r#"[{'name': 'lawyer_finder', 'parameters': {'location': 'New York', 'specialization': ['criminal law']}}]"#,
            r#"{"name": "f", "arguments": {a: [True, {'b': None}], 'c': {d: 'e'}}}"#,
            r#"{'name': 'f', 'arguments': {'items': [{'id': 0, label: 'x', 'ok': False, 'n': None,}]}}"#,
        ] {
            let input = input.as_bytes();
            for limits in [Limits::default(), small.clone()] {
                for cut in 0..=input.len() {
                    assert_eq!(
                        summary(input, cut, true, &limits),
                        summary(input, cut, false, &limits),
                        "{} cut at {cut}",
                        String::from_utf8_lossy(input)
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// Fed in small pieces (the repairer stashes a cut unit and reads it
        /// again with the next piece; opaque runs close inner containers),
        /// a router finds what the slow path finds in the whole input:
        /// the same calls, arguments, repairs and argument bytes.
        #[test]
        fn small_pieces_route_like_the_whole_input(
            k in 0usize..FAST_INPUTS.len(),
            sizes in proptest::collection::vec(1usize..9, 1..200),
            small in proptest::bool::ANY,
        ) {
            let input = FAST_INPUTS[k].as_bytes();
            let limits = if small {
                Limits { max_args_bytes: 24, max_depth: 5, max_token_bytes: 16, ..Limits::default() }
            } else {
                Limits::default()
            };
            let mut cuts = Vec::new();
            let mut at = 0;
            for s in sizes.iter().cycle() {
                at += s;
                if at >= input.len() {
                    break;
                }
                cuts.push(at);
            }
            // The feeds' progress differs with the pieces; the rest may not.
            let (_, pieces) = summary_cuts(input, &cuts, true, &limits);
            let (_, whole) = summary_cuts(input, &[], false, &limits);
            proptest::prop_assert_eq!(pieces, whole);
        }
    }

    /// Inputs for [`small_pieces_route_like_the_whole_input`]: nested
    /// containers closing in later pieces, keys, numbers and literals cut
    /// anywhere, escapes and UTF-8, long keys and blanks, repairs.
    const FAST_INPUTS: &[&str] = &[
        r#"{"name": "store", "arguments": {"items": [{"id": 0, "label": "item 0-0", "ok": true}, {"id": 12345, "label": "é \"q\" \u00e9 \ud83d\ude00", "ok": false}, {"id": -1.5e3, "n": null}], "note": "batch"}}"#,
        r#"[{"name": "a", "arguments": {"x": [[1, 2], [3, [4, {"y": {}}]], []]}}, {"name": "b", "arguments": {"z": {"w": [true, false, null]}}}]"#,
        r#"{"name": "f", "arguments": {"arguments": {"a": {"b": [1, {"c": 2}]}}, "x": [2]}}"#,
        r#"{"name": "f", "arguments": {"a_key_longer_than_the_stash_limit_of_the_repairer": 1, "b": 123456789012345678901234567890123, "c": "x"}}"#,
        r#"{"name": "f", "arguments": {"a"                                        : [1   ,   2]   , "b"   : "c"    }}"#,
        r#"{"name": "f", "arguments": {"a": {"b": [1, 2,], c: 'd', "e": True}, "f": [1 2], "g": 00 }}"#,
        r#"{"name": "f", "arguments": {"a": {"b": [1, {"c": "d"#,
        r#"{"name": "f", "arguments": {"s": "tab\there", "t": "\u12", "u": "é"}}"#,
        r#"[{'name': 'lawyer_finder', 'parameters': {'location': 'New York', 'specialization': ['criminal law']}}]"#,
        r#"{'name': 'f', 'arguments': {'items': [{'id': 0, label: 'item 0', 'ok': True, 'note': None,}, {'id': 1, label: 'it''s', 'ok': False}], 'w': True}}"#,
    ];

    #[test]
    fn arrays_of_calls() {
        let r = route(r#"[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]"#);
        assert_eq!(r.calls.len(), 2);
        assert_eq!(r.calls[1].name.as_deref(), Some("b"));
        assert_eq!(*r.calls[1].args.whole(), *br#"{"x": 1}"#);
    }

    #[test]
    fn schemas_and_arguments() {
        let schema = |s: &str| is_schema(s.as_bytes());
        for yes in [
            r#"{"type": "object", "properties": {"city": {"type": "string", "description": "City"}}, "required": ["city"]}"#,
            r#"{"type": "object", "properties": {}}"#,
            r#"{"type": "object", "properties": {"u": {"enum": ["c", "f"]}, "l": {"type": "array", "items": {"type": "string"}}}, "additionalProperties": false}"#,
            r#"{"type": "object", "properties": {"d": {"description": "Days", "minimum": 1}}, "$schema": "x"}"#,
        ] {
            assert!(schema(yes), "{yes}");
        }
        for no in [
            r#"{"type": "object", "properties": {"title": "Launch review"}}"#,
            r#"{"type": "object", "properties": {"a": {"minimum": 1}}}"#,
            r#"{"type": "object", "properties": {"a": {"type": "string", "value": "x"}}}"#,
            r#"{"type": "object", "properties": {"a": {"type": "string"}}, "city": "Paris"}"#,
            r#"{"type": "object"}"#,
            r#"{"type": "string", "properties": {}}"#,
            r#"{"type": ["object"], "properties": {}}"#,
            r#"[{"type": "object", "properties": {}}]"#,
            r#""{\"type\": \"object\", \"properties\": {}}""#,
        ] {
            assert!(!schema(no), "{no}");
        }
    }

    /// The schema test as a value tree would answer it (the visitors in
    /// `is_schema` read the text without building one).
    fn is_schema_by_value(text: &str) -> bool {
        let Ok(serde_json::Value::Object(obj)) = serde_json::from_str::<serde_json::Value>(text)
        else {
            return false;
        };
        obj.keys().all(|k| SCHEMA_KEYS.contains(&k.as_str()))
            && obj.get("type") == Some(&serde_json::Value::from("object"))
            && obj
                .get("properties")
                .and_then(serde_json::Value::as_object)
                .is_some_and(|props| {
                    props.values().all(|p| {
                        p.as_object().is_some_and(|p| {
                            p.keys().all(|k| PROPERTY_KEYS.contains(&k.as_str()))
                                && PROPERTY_WHAT.iter().any(|k| p.contains_key(*k))
                        })
                    })
                })
    }

    /// Every combination of a few top-level members, property schemas and
    /// spellings answers as the value tree does; so does text that is no
    /// JSON or has more after it.
    #[test]
    fn schema_visitors_answer_as_a_value_tree() {
        let types = [
            r#""type": "object""#,
            r#""type": "obj\u0065ct""#,
            r#""type": "string""#,
            r#""type": ["object"]"#,
            r#""type": {"a": 1}"#,
            r#""type": null"#,
        ];
        let props = [
            r#""properties": {}"#,
            r#""properties": {"a": {"type": "string"}}"#,
            r#""properties": {"a": {"type": "string"}, "b": {"enum": [1, 2], "default": 1}}"#,
            r#""properties": {"a": {"minimum": 1}}"#,
            r#""properties": {"a": "x"}"#,
            r#""properties": {"a": {"type": "string", "value": 2}}"#,
            r#""properties": {"a": {"\u0074ype": "string"}}"#,
            r#""properties": [{"type": "string"}]"#,
            r#""properties": "none""#,
        ];
        let others = [
            "",
            r#""required": ["a"]"#,
            r#""description": "d""#,
            r#""city": "Paris""#,
            r#""$defs": {"x": {"type": 1}}"#,
        ];
        let mut n = 0;
        for t in types.iter().map(Some).chain([None]) {
            for p in props.iter().map(Some).chain([None]) {
                for o in others {
                    let members: Vec<&str> = [t.copied(), p.copied(), Some(o)]
                        .into_iter()
                        .flatten()
                        .filter(|m| !m.is_empty())
                        .collect();
                    let text = format!("{{{}}}", members.join(", "));
                    for text in [text.clone(), format!("{text} x"), format!("[{text}]")] {
                        assert_eq!(
                            is_schema(text.as_bytes()),
                            is_schema_by_value(&text),
                            "{text}"
                        );
                        n += 1;
                    }
                }
            }
        }
        assert_eq!(n, 7 * 10 * 5 * 3);
        // A key written twice: the last `type` and `properties` count.
        for text in [
            r#"{"type": "string", "type": "object", "properties": {}}"#,
            r#"{"type": "object", "type": "string", "properties": {}}"#,
            r#"{"type": "object", "properties": "x", "properties": {}}"#,
            r#"{"type": "object", "properties": {}, "properties": 1}"#,
            "{\"type\": \"object\", \"properties\": {}",
            "",
        ] {
            assert_eq!(
                is_schema(text.as_bytes()),
                is_schema_by_value(text),
                "{text}"
            );
        }
    }

    #[test]
    fn ellipses() {
        for yes in [
            "...",
            "..",
            "\u{2026}",
            " ... ",
            "....",
            "\u{2026}\u{2026}",
            ".\u{2026}",
        ] {
            assert!(is_ellipsis(yes), "{yes:?}");
        }
        for no in ["", ".", " ", "...a", "a...", ". . .", "etc", "\u{2025}"] {
            assert!(!is_ellipsis(no), "{no:?}");
        }
    }

    /// What an arguments value makes, as its bytes come.
    #[test]
    fn arguments_value_makes_an_object_or_not() {
        let limits = Limits::default();
        // (input, after each prefix length: the writer's answer)
        for (input, at, want) in [
            (r#"{"a": 1}"#, 1, Some(true)),
            (r#""""#, 1, None),
            (r#""""#, 2, Some(true)),
            (r#"" {\"a\": 1}""#, 2, None),
            (r#"" {\"a\": 1}""#, 3, Some(true)),
            (r#""ls -l""#, 2, Some(false)),
            (r#""[1]""#, 2, Some(false)),
            ("null", 3, None),
            ("null", 4, Some(true)),
            (r#""null""#, 5, None),
            (r#""null""#, 6, Some(true)),
            (r#"" null ""#, 7, None),
            (r#"" null ""#, 8, Some(true)),
            (r#""nu""#, 3, None),
            (r#""nu""#, 4, Some(false)),
            (r#""nullify""#, 6, Some(false)),
            (r#""null x""#, 7, Some(false)),
            ("true", 4, Some(false)),
            ("3", 1, Some(false)),
            ("[1]", 1, Some(false)),
        ] {
            let mut r = Repairer::new();
            let mut w = ArgsWriter::new(&limits, true);
            r.feed(&input.as_bytes()[..at], &mut w);
            if at == input.len() {
                r.finish(&mut w);
            }
            assert_eq!(w.object(), want, "{input} after {at} bytes");
        }
    }

    #[test]
    fn unescape() {
        let mut out = Vec::new();
        unescape_into(br#""a\"b\\c\n\u00e9\ud83d\ude00""#, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "a\"b\\c\né😀");
    }
}

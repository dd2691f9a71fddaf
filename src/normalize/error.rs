//! What the normalizer reports: the repairs it made ([`Fix`]) and the
//! problems it could not fix ([`CallError`]), each with a JSON pointer into
//! the arguments.

use std::fmt;

use serde::Serialize;

macro_rules! kinds {
    ($(#[$tdoc:meta])* $ty:ident { $( $(#[$doc:meta])* $variant:ident => $name:literal, )* }) => {
        $(#[$tdoc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $ty {
            $( $(#[$doc])* $variant, )*
        }

        impl $ty {
            /// The stable `snake_case` name used in CLI output and reports.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $ty::$variant => $name, )*
                }
            }

            /// Every kind, in declaration order.
            pub const ALL: &'static [$ty] = &[ $( $ty::$variant, )* ];
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

kinds! {
    /// The kinds of repair the normalizer makes.
    FixKind {
        /// The tool name differed from an offered one in case or separators.
        NameCase => "name_case",
        /// A namespace prefix was stripped from the tool name (or the bare
        /// name of an offered prefixed tool was given).
        NameNamespace => "name_namespace",
        /// The tool name was a small edit away from exactly one offered name.
        NameEdit => "name_edit",
        /// A placeholder name (`tool_name`, …) was replaced by the one tool
        /// whose schema accepts the arguments.
        NamePlaceholder => "name_placeholder",
        /// A parameter name was matched to a declared one (case, separators,
        /// one edit).
        ParameterName => "parameter_name",
        /// An undeclared parameter was dropped (`additionalProperties: false`).
        DroppedParameter => "dropped_parameter",
        /// `null` for an optional parameter that does not accept it was removed.
        NullRemoved => "null_removed",
        /// Arguments given as a JSON string (once or twice encoded) were decoded.
        StringifiedArguments => "stringified_arguments",
        /// A wrapper (`{"arguments": …}`, `{"input": …}`, `{"tool": …}`) was removed.
        UnwrappedArguments => "unwrapped_arguments",
        /// Missing or `null` arguments became `{}`.
        MissingArguments => "missing_arguments",
        /// A bare value became `{param: value}` for the one required parameter.
        BareValue => "bare_value",
        /// A string holding exactly an integer literal became the integer.
        StringToInteger => "string_to_integer",
        /// A string holding exactly a number literal became the number.
        StringToNumber => "string_to_number",
        /// `"true"` / `"false"` became the boolean.
        StringToBoolean => "string_to_boolean",
        /// `"null"` became `null`.
        StringToNull => "string_to_null",
        /// A number with no fractional part (`5.0`) became an integer.
        FloatToInteger => "float_to_integer",
        /// A number became its text for a string.
        NumberToString => "number_to_string",
        /// A boolean became its text for a string.
        BooleanToString => "boolean_to_string",
        /// A single value became a one-item array.
        ScalarToArray => "scalar_to_array",
        /// A string holding a JSON array or object became that value.
        StringifiedValue => "stringified_value",
        /// An enum value matched a declared one case- and whitespace-insensitively.
        EnumValue => "enum_value",
    }
}

impl FixKind {
    /// The BAML-style penalty of one such coercion at the top level (a
    /// nested one weighs more): used to choose between union members.
    pub(crate) const fn penalty(self) -> u32 {
        match self {
            FixKind::EnumValue | FixKind::FloatToInteger | FixKind::ParameterName => 1,
            FixKind::NullRemoved => 1,
            FixKind::StringToInteger
            | FixKind::StringToNumber
            | FixKind::StringToBoolean
            | FixKind::StringToNull
            | FixKind::StringifiedValue
            | FixKind::NumberToString => 2,
            FixKind::BooleanToString | FixKind::ScalarToArray => 3,
            FixKind::DroppedParameter => 4,
            _ => 5,
        }
    }
}

/// One repair the normalizer made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// What was repaired.
    pub kind: FixKind,
    /// JSON pointer (RFC 6901) of the repaired value in the normalized
    /// arguments; `""` for the whole call (tool name, wrappers).
    pub path: String,
    /// What was written (a name, or the value's JSON text, shortened).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// What it became.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

kinds! {
    /// The kinds of problem a call can have after normalization.
    ErrorKind {
        /// No offered tool has this name (nor resolves from it).
        UnknownTool => "unknown_tool",
        /// The arguments are not an object and could not be made one, or are
        /// a copy of the schema or a placeholder (see [`InvalidReason`]).
        InvalidArguments => "invalid_arguments",
        /// A required parameter is missing.
        MissingRequired => "missing_required",
        /// A value has the wrong type.
        TypeMismatch => "type_mismatch",
        /// A value of the right type breaks a constraint (enum, const,
        /// pattern, format, range, length, …).
        InvalidValue => "invalid_value",
        /// A parameter the schema does not declare, under
        /// `additionalProperties: false`, when dropping is disabled.
        UnknownParameter => "unknown_parameter",
    }
}

kinds! {
    /// Why arguments are [`ErrorKind::InvalidArguments`].
    InvalidReason {
        /// Not an object, and no structural fix applied.
        NotAnObject => "not_an_object",
        /// A copy of the tool's JSON schema (`{"type": "object", "properties": …}`).
        SchemaCopy => "schema_copy",
        /// A placeholder from a format example (`"<args-json-object>"`, `{"arg1": "value1"}`).
        Placeholder => "placeholder",
    }
}

/// One problem of a call, precise enough for the model to fix it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallError {
    /// The category.
    pub kind: ErrorKind,
    /// JSON pointer of the offending value in the normalized arguments
    /// (`/city`, `/items/2`); for a missing parameter, where it should be;
    /// `""` for the call as a whole.
    pub path: String,
    /// A one-line description.
    pub message: String,
    /// What the schema expects (`integer`, `one of: "c", "f"`), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What was received (shortened JSON), where there was something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// For [`ErrorKind::InvalidArguments`]: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<InvalidReason>,
    /// For [`ErrorKind::UnknownTool`]: the closest offered names, closest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
}

impl CallError {
    pub(crate) fn new(
        kind: ErrorKind,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        CallError {
            kind,
            path: path.into(),
            message: message.into(),
            expected: None,
            received: None,
            suggestion: None,
            reason: None,
            candidates: Vec::new(),
        }
    }

    /// The parameter the error is about: the first segment of
    /// [`CallError::path`], unescaped (`None` for the whole call).
    pub fn parameter(&self) -> Option<String> {
        let seg = self.path.strip_prefix('/')?.split('/').next()?;
        Some(seg.replace("~1", "/").replace("~0", "~"))
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.kind, self.message)
        } else {
            write!(f, "{} at {}: {}", self.kind, self.path, self.message)
        }
    }
}

impl std::error::Error for CallError {}

impl Fix {
    /// The BAML-style cost of this repair: its kind's penalty times the
    /// depth of its path.
    pub(crate) fn cost(&self) -> u64 {
        u64::from(self.kind.penalty()) * (1 + self.path.matches('/').count() as u64)
    }
}

/// A call's repairs as they are made: at most `max` listed (the first
/// ones), the others counted in `omitted`, so that input needing a repair
/// per item reports a bounded list and nothing silently.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fixes {
    pub(crate) list: Vec<Fix>,
    pub(crate) max: usize,
    /// Repairs made but not listed.
    pub(crate) omitted: usize,
    /// The summed [`Fix::cost`] of every repair made, listed or not.
    pub(crate) cost: u64,
    /// The kinds made, listed or not (bit `kind as u32`).
    kinds: u64,
}

impl Fixes {
    pub(crate) fn new(max: usize) -> Self {
        Fixes {
            max,
            ..Fixes::default()
        }
    }

    /// Empties the list (keeping its capacity) for a new call.
    pub(crate) fn reset(&mut self, max: usize) {
        self.list.clear();
        self.max = max;
        self.omitted = 0;
        self.cost = 0;
        self.kinds = 0;
    }

    fn add(&mut self, f: Fix) {
        if self.list.len() < self.max {
            self.list.push(f);
        } else {
            self.omitted += 1;
        }
    }

    /// Records one repair.
    pub(crate) fn push(&mut self, f: Fix) {
        self.cost += f.cost();
        self.kinds |= 1 << (f.kind as u32);
        self.add(f);
    }

    /// Records the repairs of `other` after these.
    pub(crate) fn absorb(&mut self, other: Fixes) {
        self.cost += other.cost;
        self.kinds |= other.kinds;
        self.omitted += other.omitted;
        for f in other.list {
            self.add(f);
        }
    }

    /// Whether a repair of `kind` was made (listed or not).
    pub(crate) fn made(&self, kind: FixKind) -> bool {
        self.kinds & (1 << (kind as u32)) != 0
    }
}

/// Appends `key` to JSON pointer `path` (RFC 6901 escaping).
pub(crate) fn pointer_push(path: &str, key: &str) -> String {
    let mut p = String::with_capacity(path.len() + key.len() + 1);
    p.push_str(path);
    p.push('/');
    for c in key.chars() {
        match c {
            '~' => p.push_str("~0"),
            '/' => p.push_str("~1"),
            c => p.push(c),
        }
    }
    p
}

/// A value's JSON text cut to about `max` bytes (on a character boundary) for messages.
pub(crate) fn short(v: &serde_json::Value, max: usize) -> String {
    // Written only as far as needed: a writer that stops a few bytes past
    // `max` (enough to complete a character), not the whole value.
    struct Capped {
        buf: Vec<u8>,
        cap: usize,
    }
    impl std::io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let room = self.cap.saturating_sub(self.buf.len());
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let n = b.len().min(room);
            self.buf.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let cap = max.saturating_add(4);
    let mut w = Capped {
        buf: Vec::with_capacity(cap.min(256)),
        cap,
    };
    let complete = serde_json::to_writer(&mut w, v).is_ok();
    let mut bytes = w.buf;
    if complete && bytes.len() <= max {
        return String::from_utf8(bytes).unwrap_or_default();
    }
    // A character boundary at or below `max` (the text is UTF-8; a cut
    // inside a character is backed off, as `is_char_boundary` does).
    let mut end = max.min(bytes.len());
    while end > 0 && end < bytes.len() && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    bytes.truncate(end);
    let mut s = String::from_utf8(bytes).unwrap_or_default();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_and_parameters_unescape() {
        let p = pointer_push("", "a/b~c");
        assert_eq!(p, "/a~1b~0c");
        let e = CallError::new(ErrorKind::TypeMismatch, pointer_push(&p, "0"), "x");
        assert_eq!(e.parameter().as_deref(), Some("a/b~c"));
        assert_eq!(
            CallError::new(ErrorKind::UnknownTool, "", "x").parameter(),
            None
        );
    }

    #[test]
    fn kinds_have_the_names_the_issue_lists() {
        let names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "unknown_tool",
                "invalid_arguments",
                "missing_required",
                "type_mismatch",
                "invalid_value",
                "unknown_parameter"
            ]
        );
    }
}

//! The typed events every parser and decoder in this crate emits.
//!
//! One stream of [`Event`]s describes everything a model produced: prose
//! ([`Event::Text`]), reasoning ([`Event::Thinking`]) and tool calls
//! ([`Event::ToolStart`], [`Event::ToolArgs`], [`Event::ToolEnd`]).
//!
//! # The lossless contract
//!
//! For the content parser ([`crate::Parser`]) the spans of the `Text`,
//! `Thinking`, `ToolEnd` and `Markup` events are disjoint, increasing and
//! tile the input `[0, len)` exactly: every input byte belongs to exactly one
//! of them. Markup (`<tool_call>`, a code fence, `</think>`) belongs to the
//! event it delimits; markup that frames plain text (a Harmony `final`
//! channel header, `<|START_RESPONSE|>`, an end-of-turn token) is reported as
//! [`Event::Markup`], so that it never leaks into `Text`.
//! `ToolStart`, `ToolArgs` and `Diagnostic` carry spans too, but those overlap
//! the span of the call they belong to and are not part of the tiling.

use std::fmt;

use serde::Serialize;

mod delta;
pub(crate) use delta::word;
pub use delta::Delta;

/// A tool call's id or name, as [`Event::ToolStart`] and [`ToolCall`] carry
/// it: a string of up to 24 bytes is held inline (no allocation — the
/// names and ids models write), a longer one on the heap. It derefs to
/// `str`, compares with `&str` and `String`, and converts from both
/// (`"get_weather".into()`, `CompactString::from(s)`); `to_string()` gives a
/// `String`. (The `compact_str` crate's type.)
pub use compact_str::CompactString;

/// A half-open byte range `[start, end)` in the input stream.
///
/// Offsets are absolute: they count every byte fed to the parser since it was
/// created, across chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    /// First byte of the range.
    pub start: u64,
    /// One past the last byte of the range.
    pub end: u64,
}

impl Span {
    /// Creates a span from `start` to `end`.
    #[inline]
    pub const fn new(start: u64, end: u64) -> Span {
        Span { start, end }
    }

    /// Number of bytes covered.
    #[inline]
    pub const fn len(&self) -> u64 {
        self.end - self.start
    }

    /// True when the span covers no byte.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// One repair the parser made to produce valid output, with the input offset
/// where it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Repair {
    /// Absolute input offset of the byte that triggered the repair.
    pub offset: u64,
    /// What was repaired.
    pub kind: RepairKind,
}

macro_rules! repair_kinds {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, )*) => {
        /// The kinds of repair applied to malformed tool-call output.
        ///
        /// Valid JSON never produces a repair: a clean call has an empty
        /// repair list.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum RepairKind {
            $( $(#[$doc])* $variant, )*
        }

        impl RepairKind {
            /// The stable `snake_case` name used in CLI output and reports.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( RepairKind::$variant => $name, )*
                }
            }

            /// Every repair kind, in declaration order.
            pub const ALL: &'static [RepairKind] = &[ $( RepairKind::$variant, )* ];
        }
    };
}

repair_kinds! {
    /// A comma before a closing bracket was dropped (`[1, 2,]`).
    TrailingComma => "trailing_comma",
    /// A comma with no value before it was dropped (`[,1]`, `[1,,2]`).
    ExtraComma => "extra_comma",
    /// A missing comma between two values or members was inserted.
    MissingComma => "missing_comma",
    /// A missing colon between a key and its value was inserted.
    MissingColon => "missing_colon",
    /// A single-quoted string was converted to a double-quoted one.
    SingleQuotes => "single_quotes",
    /// A string delimited by typographic quotes (`“ ”`, `‘ ’`) was converted.
    SmartQuotes => "smart_quotes",
    /// An object key without quotes was quoted.
    UnquotedKey => "unquoted_key",
    /// A bare word in value position was turned into a string.
    UnquotedString => "unquoted_string",
    /// A Python literal (`True`, `False`, `None`) became its JSON form.
    PythonLiteral => "python_literal",
    /// An upper-case or JavaScript literal (`TRUE`, `NULL`, `undefined`) became its JSON form.
    NonJsonLiteral => "non_json_literal",
    /// `NaN` or `Infinity` became `null`; a number too large for a double
    /// (`1e999`, which JSON parsers reject) became a string of its text.
    NonFiniteNumber => "non_finite_number",
    /// A number was normalised (`.5`, `1.`, `+1`, `1e`).
    NumberFormat => "number_format",
    /// A number with leading zeros was kept as a string (`007` → `"007"`).
    LeadingZeros => "leading_zeros",
    /// A `//`, `/* */` or `#` comment was removed.
    Comment => "comment",
    /// A raw control character (newline, tab, …) inside a string was escaped.
    ControlCharacter => "control_character",
    /// An invalid escape kept its backslash (`\d` → `\\d`).
    InvalidEscape => "invalid_escape",
    /// An unpaired UTF-16 surrogate escape kept its backslash.
    LoneSurrogate => "lone_surrogate",
    /// Invalid UTF-8 was replaced with U+FFFD.
    InvalidUtf8 => "invalid_utf8",
    /// A quote inside a string that did not end it was escaped.
    UnescapedQuote => "unescaped_quote",
    /// Whitespace that JSON does not allow (BOM, NBSP, …) was dropped.
    NonJsonWhitespace => "non_json_whitespace",
    /// A closing bracket with nothing to close was dropped.
    RedundantCloser => "redundant_closer",
    /// A closing bracket of the wrong kind closed the inner containers first.
    MismatchedCloser => "mismatched_closer",
    /// An opening bracket in key position was dropped (`{{"a": 1}}`).
    StrayOpener => "stray_opener",
    /// A container left open at the end of the input was closed.
    MissingCloser => "missing_closer",
    /// A string left open at the end of the input was closed.
    UnclosedString => "unclosed_string",
    /// A string value missing its closing quote before the next member or
    /// element (`{"a": "x, "b": 1}` → `{"a": "x", "b": 1}`) was closed
    /// before the comma, as jsonrepair reads it.
    MissingQuote => "missing_quote",
    /// A number or literal cut off at the end was completed or trimmed.
    TruncatedValue => "truncated_value",
    /// A key cut off at the end of the input by a limit (or inside an
    /// escape) was dropped.
    DroppedKey => "dropped_key",
    /// A missing value became `null`.
    MissingValue => "missing_value",
    /// An ellipsis standing for omitted items or members (`[1, 2, ...]`,
    /// `{"a": 1, …}`) was dropped.
    Ellipsis => "ellipsis",
    /// Arguments given as a JSON string were decoded into an object.
    StringifiedArguments => "stringified_arguments",
    /// Arguments wrapped twice (`{"arguments": {"arguments": …}}`) were unwrapped.
    DoubleWrappedArguments => "double_wrapped_arguments",
    /// Arguments that were not an object were wrapped as `{"value": …}` (or `{}` for null).
    NonObjectArguments => "non_object_arguments",
    /// Missing arguments became `{}`.
    MissingArguments => "missing_arguments",
    /// A closing tag or fence was missing.
    MissingCloseTag => "missing_close_tag",
    /// Bytes between the end of the call and its closing markup were skipped.
    TrailingGarbage => "trailing_garbage",
    /// An opening tag written again before the call's content
    /// (`<tool_call><tool_call>{…}`) was read as one opening.
    RepeatedOpenTag => "repeated_open_tag",
    /// A configured limit was reached; the call was cut there.
    LimitExceeded => "limit_exceeded",
    /// A value was converted to the type a tool schema or the value itself asked for.
    TypeCoercion => "type_coercion",
    /// An XML entity was decoded.
    EntityDecoded => "entity_decoded",
    /// A parameter given twice in one call: the later value was dropped.
    DuplicateKey => "duplicate_key",
    /// A call written in a syntax that needed a structural fix (pythonic positional argument, …).
    SyntaxFix => "syntax_fix",
    /// A call without a name was given the one offered tool whose schema
    /// accepts its arguments (every required parameter present, every key
    /// declared).
    InferredName => "inferred_name",
    /// More repairs were made than [`crate::Limits::max_repairs`] lets one
    /// list hold: from this entry's offset on, repairs were made but not all
    /// are listed.
    RepairsOmitted => "repairs_omitted",
    /// A frame of the provider stream could not be read while this call
    /// was open (a line its framing ignores, such as one that lost its
    /// `data:` prefix, or a frame over the size limit): the arguments may
    /// be missing a fragment, however well the rest joins.
    LostFrame => "lost_frame",
    /// The call was written inside the reasoning block, which it ended (a
    /// family whose real outputs do that, per
    /// [`crate::Config::calls_in_reasoning`]).
    CallInReasoning => "call_in_reasoning",
    /// An XML dialect's own closing tag (`</parameter>`, `</function>`)
    /// inside a value was kept as the value's content, because what
    /// followed it was not markup that may come next (a file or HTML being
    /// written).
    CloseTagInValue => "close_tag_in_value",
}

impl Repair {
    /// Adds `repair` to a call's list that will be cut to `max` by
    /// [`Repair::cap`]: a list twice as long as that needs is cut to the
    /// `max + 1` lowest (all that [`Repair::cap`] looks at), so an open
    /// call's repairs take bounded memory. What is kept depends on the
    /// repairs only, not on when this runs.
    pub(crate) fn push_bounded(list: &mut Vec<Repair>, repair: Repair, max: usize) {
        list.push(repair);
        Repair::bound_from(list, 0, max.saturating_add(1));
    }

    /// Of `list[from..]`, keeps the `keep` lowest (by offset, then kind),
    /// sorted, once there are more than twice as many; what stays depends on
    /// the repairs only, not on the order they came in or when this runs.
    pub(crate) fn bound_from(list: &mut Vec<Repair>, from: usize, keep: usize) {
        let from = from.min(list.len());
        if (list.len() - from) / 2 > keep {
            list[from..].sort_unstable();
            list.truncate(from + keep);
        }
    }

    /// Cuts a call's repair list to `max` repairs, the ones at the lowest
    /// offsets, and one [`RepairKind::RepairsOmitted`] at the first repair
    /// left out, if it is longer. The repairs kept depend on the list's
    /// contents only, not on the order they were made in (which can depend
    /// on where chunks end), so the cut list is chunk-invariant too.
    pub(crate) fn cap(list: &mut Vec<Repair>, max: usize) {
        if list.len() <= max {
            return;
        }
        list.sort_unstable();
        let offset = list[max].offset;
        list.truncate(max);
        list.push(Repair {
            kind: RepairKind::RepairsOmitted,
            offset,
        });
    }
}

impl fmt::Display for RepairKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RepairKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why a stream finished, as reported by a provider stream or derived from what happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// The model finished its turn.
    Stop,
    /// The model stopped to have its tool calls executed.
    ToolCalls,
    /// The token limit was reached.
    Length,
    /// Output was withheld by a content filter or refusal.
    ContentFilter,
    /// The stream ended with an error.
    Error,
    /// Any other reason, as the provider spelled it.
    Other(String),
}

/// Token accounting reported at the end of a provider stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub input_tokens: Option<u64>,
    /// Completion (output) tokens.
    pub output_tokens: Option<u64>,
    /// Reasoning tokens, where reported separately.
    pub reasoning_tokens: Option<u64>,
}

/// The category of an [`Event::Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The provider sent an error event or error payload.
    Provider,
    /// A frame or payload could not be decoded.
    Malformed,
    /// A frame exceeded a configured size limit.
    Limit,
    /// The stream ended before the provider's terminal event.
    Truncated,
}

/// The category of an [`Event::Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A block that looked like a tool call could not be parsed; its bytes were kept as text.
    UnparseableBlock,
    /// A configured limit was reached.
    LimitExceeded,
    /// Content inside a call container that was not a call was skipped (it stays in the call's span).
    SkippedContent,
    /// An event or payload of a provider stream was not understood and was skipped.
    UnknownEvent,
    /// A provider stream's call that never got a tool name (only `null` or
    /// `""`) is no call; the message holds its id and arguments.
    DroppedCall,
    /// Text or reasoning that is not UTF-8 (the parser passes bytes through
    /// as they are; the CLI reports where it wrote U+FFFD instead).
    InvalidUtf8,
    /// A line of a provider stream that its framing ignores (an SSE line
    /// without a field name, such as a `data:` prefix lost in transit)
    /// inside an open stream: the frame it belonged to may be lost.
    LostFrame,
}

/// The kind of provider state carried by an [`Event::Opaque`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OpaqueKind {
    /// Anthropic's `signature` of a thinking block (`signature_delta`), which
    /// must be sent back with the block on the next turn.
    ThinkingSignature,
    /// Anthropic's `redacted_thinking` block: encrypted reasoning, no text.
    RedactedThinking,
    /// Gemini's part-level `thoughtSignature` (also OpenAI-compatible
    /// `extra_content.google.thought_signature`); with a call index when it
    /// sat on a function call.
    ThoughtSignature,
    /// OpenAI Responses `encrypted_content` of a reasoning item (or another
    /// provider's encrypted reasoning blob).
    EncryptedReasoning,
}

impl OpaqueKind {
    /// The stable `snake_case` name used in CLI output.
    pub const fn as_str(self) -> &'static str {
        match self {
            OpaqueKind::ThinkingSignature => "thinking_signature",
            OpaqueKind::RedactedThinking => "redacted_thinking",
            OpaqueKind::ThoughtSignature => "thought_signature",
            OpaqueKind::EncryptedReasoning => "encrypted_reasoning",
        }
    }
}

/// A tool call that has ended: what [`Event::ToolEnd`] carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// Position of the call in the stream, counting from 0.
    pub index: usize,
    /// The call id: the model's own where it wrote one, else a generated one.
    pub id: CompactString,
    /// The tool name.
    pub name: CompactString,
    /// The complete arguments: always a valid JSON object text.
    pub arguments: String,
    /// The repairs applied, in input order.
    pub repairs: Vec<Repair>,
    /// True when the input ended (or a limit cut the call) before the call was complete.
    pub truncated: bool,
}

impl ToolCall {
    /// Parses [`ToolCall::arguments`] into a `serde_json::Value`.
    ///
    /// The arguments are always valid JSON, so this only fails on documents
    /// deeper than serde_json's recursion limit. A `Value` holds a number as
    /// an `i64`, `u64` or `f64`: an integer beyond 64 bits becomes the
    /// nearest double and `1.50` reads back as `1.5`; the text in
    /// [`ToolCall::arguments`] is exact.
    pub fn arguments_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(&self.arguments)
    }
}

/// One event of a parsed model output stream.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Prose for the user: a short piece held inline, a longer one a slice
    /// of the input fed as [`bytes::Bytes`] (zero-copy) or a copy (see [`Delta`]).
    Text {
        /// The text bytes (UTF-8 unless the input was not).
        text: Delta,
        /// Where it came from.
        span: Span,
    },
    /// Reasoning. The span includes the reasoning markup.
    Thinking {
        /// The reasoning text, without its markup.
        text: Delta,
        /// Where it came from.
        span: Span,
    },
    /// A tool call began; emitted as soon as its name is known — whole (its
    /// closing quote or delimiter read) and not blank. JSON written
    /// without call markup (bare, or in a code fence) is a call only once the
    /// parser is sure of it: once it has its name and its arguments can be
    /// neither a JSON schema (a tool definition the model repeated) nor a
    /// placeholder (a value that makes no object, `{...}`) — at their first
    /// key as a rule.
    ToolStart {
        /// Position of the call in the stream.
        index: usize,
        /// Call id.
        id: CompactString,
        /// Tool name.
        name: CompactString,
        /// The input that made the name known.
        span: Span,
    },
    /// The next piece of a call's arguments JSON. Concatenating every delta of
    /// a call gives exactly its final [`ToolCall::arguments`].
    ToolArgs {
        /// Position of the call in the stream.
        index: usize,
        /// Append-only fragment of the arguments JSON text.
        delta: Delta,
        /// The input that produced this fragment.
        span: Span,
    },
    /// A tool call ended. The span covers the whole call including its markup.
    ToolEnd {
        /// The finished call.
        call: Box<ToolCall>,
        /// Where the call (and its markup) came from.
        span: Span,
    },
    /// Dialect markup that frames text rather than a call or reasoning: a
    /// Harmony `final` channel header, `<|START_RESPONSE|>`, an end-of-turn
    /// token such as `<|eot_id|>`. It carries no content; it is reported so
    /// that spans stay lossless without the markup leaking into `Text`.
    Markup {
        /// Where the markup is.
        span: Span,
    },
    /// Something worth knowing that did not stop parsing (a block kept as text, a limit).
    Diagnostic {
        /// What happened.
        kind: DiagnosticKind,
        /// Human-readable detail.
        message: String,
        /// The input it is about.
        span: Span,
    },
    /// The provider stream reported the end of the response (provider decoders only).
    Finish {
        /// Why it finished.
        reason: FinishReason,
        /// Token usage, where the provider reported it.
        usage: Option<Usage>,
        /// The frame that carried it.
        span: Span,
    },
    /// Opaque provider state that a client must keep and send back (a thinking
    /// signature, encrypted reasoning), so that re-encoding can reproduce it
    /// (provider decoders only).
    Opaque {
        /// What the data is.
        kind: OpaqueKind,
        /// The call it belongs to, when it is attached to one.
        index: Option<usize>,
        /// The provider's data, verbatim.
        data: String,
        /// The frame that carried it.
        span: Span,
    },
    /// The provider stream reported an error or could not be decoded (provider decoders only).
    Error {
        /// Category.
        kind: ErrorKind,
        /// The provider's or decoder's message.
        message: String,
        /// The frame that carried it.
        span: Span,
    },
}

impl Event {
    /// The event's span.
    pub fn span(&self) -> Span {
        match self {
            Event::Text { span, .. }
            | Event::Thinking { span, .. }
            | Event::ToolStart { span, .. }
            | Event::ToolArgs { span, .. }
            | Event::ToolEnd { span, .. }
            | Event::Markup { span }
            | Event::Diagnostic { span, .. }
            | Event::Finish { span, .. }
            | Event::Opaque { span, .. }
            | Event::Error { span, .. } => *span,
        }
    }

    /// True for the events whose spans tile the input (`Text`, `Thinking`, `ToolEnd`, `Markup`).
    pub fn is_tiling(&self) -> bool {
        matches!(
            self,
            Event::Text { .. }
                | Event::Thinking { .. }
                | Event::ToolEnd { .. }
                | Event::Markup { .. }
        )
    }
}

/// The calls the `ToolEnd` events of `events` carry (for unit tests).
#[cfg(test)]
pub(crate) fn ended_calls(events: &[Event]) -> Vec<&ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolEnd { call, .. } => Some(&**call),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: RepairKind, offset: u64) -> Repair {
        Repair { kind, offset }
    }

    #[test]
    fn a_long_list_keeps_its_lowest_offsets_whatever_their_order() {
        let made: Vec<Repair> = (0..10).map(|k| r(RepairKind::ExtraComma, k)).collect();
        let mut short = made[..4].to_vec();
        Repair::cap(&mut short, 4);
        assert_eq!(short, made[..4]);
        let mut expected = made[..3].to_vec();
        expected.push(r(RepairKind::RepairsOmitted, 3));
        for order in [made.clone(), made.iter().rev().copied().collect()] {
            let mut list = order;
            Repair::cap(&mut list, 3);
            assert_eq!(list, expected);
        }
        // No room at all: the marker alone, at the lowest offset.
        let mut none = vec![r(RepairKind::Comment, 9), r(RepairKind::Comment, 7)];
        Repair::cap(&mut none, 0);
        assert_eq!(none, [r(RepairKind::RepairsOmitted, 7)]);
    }
}

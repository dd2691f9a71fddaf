//! Dialects: the in-band syntaxes models use to write tool calls.

/// A tool-call dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Generic JSON emulation: bare or fenced objects and arrays of calls.
    Json,
    /// Hermes / Qwen `<tool_call>{…}</tool_call>` and its tag variants.
    Hermes,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: &'static [Dialect] = &[Dialect::Json, Dialect::Hermes];

    /// The dialect's CLI name.
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::Json => "json",
            Dialect::Hermes => "hermes",
        }
    }
}

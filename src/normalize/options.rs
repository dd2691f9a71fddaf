//! What the normalizer may do, and the limits it works within.

/// Per-step switches of the normalizer. Every step is on by default; turn
/// one off to have what it would fix reported as an error instead.
///
/// ```
/// use toolstream::normalize::Options;
/// // Validate only: resolve nothing, coerce nothing, report everything.
/// let strict = Options::strict();
/// assert!(!strict.coerce && !strict.fuzzy_names);
/// // Everything, but never guess a tool from a placeholder name.
/// let careful = Options { placeholder_names: false, ..Options::default() };
/// assert!(careful.coerce);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Tool names that differ from an offered one only in case or separators
    /// (`Get_Weather`, `get-weather`, `getWeather`) are resolved.
    pub name_case: bool,
    /// Namespace prefixes (`functions.`, `default_api.`, `tools.`,
    /// `mcp__server__`) are stripped from a called name, and an offered
    /// prefixed name is found from its bare form when that is unique.
    pub name_namespaces: bool,
    /// A name within [`NormalizeLimits::max_name_distance`] edits of exactly
    /// one offered name (closer than any other) is resolved to it.
    pub fuzzy_names: bool,
    /// A placeholder name copied from a format example (`tool_name`,
    /// `function_name`, `<function-name>`, …) is resolved to the one offered
    /// tool whose schema accepts the arguments.
    pub placeholder_names: bool,
    /// Parameter names are matched to the schema's `properties` by case and
    /// separator, then by one edit when that match is unique.
    pub param_names: bool,
    /// A key the schema does not declare is dropped when the schema says
    /// `additionalProperties: false` (else it stays, and is reported as
    /// `unknown_parameter`).
    pub drop_unknown: bool,
    /// Structural fixes: arguments given as a JSON string, wrapped in
    /// `{"arguments": …}` (or `parameters`, `input`, `params`, `args`, the
    /// tool's own name), or a bare value for a tool with one required
    /// parameter.
    pub structure: bool,
    /// Values are coerced to the type their schema declares (`"5"` → `5`,
    /// a scalar → a one-item array, an enum in the wrong case, …).
    pub coerce: bool,
    /// `null` given for an optional parameter that does not accept `null`
    /// is removed.
    pub drop_null: bool,
    /// Limits.
    pub limits: NormalizeLimits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            name_case: true,
            name_namespaces: true,
            fuzzy_names: true,
            placeholder_names: true,
            param_names: true,
            drop_unknown: true,
            structure: true,
            coerce: true,
            drop_null: true,
            limits: NormalizeLimits::default(),
        }
    }
}

impl Options {
    /// Strict mode: nothing is resolved or coerced (an exact tool name is
    /// still required), every problem is reported.
    pub fn strict() -> Self {
        Options {
            name_case: false,
            name_namespaces: false,
            fuzzy_names: false,
            placeholder_names: false,
            param_names: false,
            drop_unknown: false,
            structure: false,
            coerce: false,
            drop_null: false,
            limits: NormalizeLimits::default(),
        }
    }
}

/// Limits of the normalizer, in the style of [`crate::Limits`]: any value is
/// safe (0 included); they bound work and memory, never correctness of what
/// is emitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormalizeLimits {
    /// Largest edit distance for a fuzzy tool-name match (also at most a
    /// third of the name's length).
    pub max_name_distance: usize,
    /// A held value (one that may need coercion, held back while it
    /// streams) longer than this is passed through as written, uncoerced.
    pub max_held_bytes: usize,
    /// Nesting depth up to which values are coerced and `$ref`s followed.
    pub max_depth: usize,
    /// Errors reported per call (validation stops there).
    pub max_errors: usize,
    /// Offered names listed in an `unknown_tool` error and its feedback.
    pub max_suggestions: usize,
    /// Repairs listed per call (default 1,000), like the parser's
    /// [`crate::Limits::max_repairs`]: the repairs are all made (the
    /// arguments do not depend on it), the first ones are listed in
    /// [`super::Report::fixes`] and the others counted in
    /// [`super::Report::fixes_omitted`]. Input needing a repair per item
    /// (100,000 numbers written as strings) so reports a bounded list.
    pub max_repairs: usize,
    /// Input bytes held back, at most, where arguments cannot stream until
    /// more is known (default 256 KiB): arguments that are not an object
    /// (a JSON string of them, a bare value), a schema's shell
    /// (`{"type": "object", "properties": …}`), a call with a placeholder
    /// name (its tool is chosen from the whole arguments), and the inner
    /// object of a wrapper (`{"arguments": {…}}`) until it is known to be
    /// alone. Past it: a wrapper's members stream and any members after it
    /// join them; other arguments pass through as written (not an object:
    /// reported as `invalid_arguments`; a placeholder name: `unknown_tool`).
    pub max_held_call_bytes: usize,
    /// Names that needed more than an exact match, remembered per
    /// [`super::Catalog`] with their resolution and closest offered names
    /// (default 64; 0: none): a model repeats its wrong names, and a
    /// server reuses one catalog per tool list.
    pub max_remembered_names: usize,
}

impl Default for NormalizeLimits {
    fn default() -> Self {
        NormalizeLimits {
            max_name_distance: 2,
            max_held_bytes: 1 << 20,
            max_depth: 32,
            max_errors: 16,
            max_suggestions: 8,
            max_repairs: 1_000,
            max_held_call_bytes: 256 << 10,
            max_remembered_names: 64,
        }
    }
}

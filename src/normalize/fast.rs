//! The fast check: a precompiled form of the common subset of JSON Schema
//! (types, `required`, string `enum`s, `items`, `additionalProperties`
//! true/false, annotations) that the arguments rewriter applies to each
//! member while it streams, so that a call that already fits its tool ends
//! without being read into a `serde_json::Value` and run through
//! `jsonschema`.
//!
//! It is one-sided: [`Fast::accepts`] true means the value is valid for
//! the schema (as `jsonschema` would judge it); false means "not known":
//! the call then goes through the full check. A schema using anything
//! outside the subset (`pattern`, `format`, ranges, lengths, unions,
//! `$ref`, …) compiles to `None` and always takes the full check.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Keywords that do not constrain a value.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "example",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$defs",
    "definitions",
];

/// One schema of the subset.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fast {
    /// No constraint (`{}`); objects are not vouched for (a value that
    /// looks like a schema may be a copied template, for the full check).
    Any,
    /// A string of at least / at most so many characters.
    String(Option<u64>, Option<u64>),
    /// A string among these.
    StringEnum(Vec<String>),
    Integer(Range),
    Number(Range),
    Boolean,
    Null,
    /// An array whose items meet the schema (`None`: any item but
    /// objects), with at least / at most so many items.
    Array(Option<Box<Fast>>, Option<u64>, Option<u64>),
    Object(Box<FastObject>),
}

/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numbers
/// exactly representable as `f64`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Range {
    min: Option<f64>,
    max: Option<f64>,
    xmin: Option<f64>,
    xmax: Option<f64>,
}

/// 2^53: integers up to it are exact as `f64`.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// A bound as an exact `f64` (`None` when it is not a number or not exact:
/// the schema is then outside the subset).
fn bound(v: &Value) -> Option<f64> {
    let n = v.as_number()?;
    let f = n.as_f64()?;
    if (n.is_i64() || n.is_u64()) && f.abs() >= EXACT {
        return None;
    }
    Some(f)
}

impl Range {
    fn read(m: &Map<String, Value>) -> Option<Range> {
        let get = |k: &str| m.get(k).map(bound);
        let r = Range {
            min: get("minimum").unwrap_or(Some(f64::NEG_INFINITY)),
            max: get("maximum").unwrap_or(Some(f64::INFINITY)),
            xmin: get("exclusiveMinimum").unwrap_or(Some(f64::NEG_INFINITY)),
            xmax: get("exclusiveMaximum").unwrap_or(Some(f64::INFINITY)),
        };
        // A bound that is not an exact number (or a draft-4 boolean): outside.
        (r.min.is_some() && r.max.is_some() && r.xmin.is_some() && r.xmax.is_some()).then_some(r)
    }

    fn holds(&self, n: &serde_json::Number) -> bool {
        let Some(f) = n.as_f64() else { return false };
        if (n.is_i64() || n.is_u64()) && f.abs() >= EXACT {
            return false;
        }
        let ge = |b: Option<f64>| b.is_none_or(|b| f >= b);
        let le = |b: Option<f64>| b.is_none_or(|b| f <= b);
        ge(self.min)
            && le(self.max)
            && self.xmin.is_none_or(|b| f > b)
            && self.xmax.is_none_or(|b| f < b)
    }
}

/// A `minLength`-style count (`None` absent; outside the subset when not
/// a non-negative integer).
fn count(m: &Map<String, Value>, k: &str) -> Result<Option<u64>, ()> {
    match m.get(k) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or(()),
    }
}

/// An object schema of the subset.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FastObject {
    /// Declared properties; `None` for one outside the subset.
    pub(crate) props: HashMap<String, Option<Fast>>,
    pub(crate) required: Vec<String>,
    pub(crate) additional: bool,
}

fn only(m: &Map<String, Value>, allowed: &[&str]) -> bool {
    m.keys()
        .all(|k| allowed.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()))
}

/// Reads an object schema's `properties`, `required` and
/// `additionalProperties` (each property compiled on its own).
pub(crate) fn object(m: &Map<String, Value>, depth: usize) -> Option<FastObject> {
    if !only(
        m,
        &["type", "properties", "required", "additionalProperties"],
    ) || m.get("type").is_some_and(|t| t != "object")
    {
        return None;
    }
    let props = match m.get("properties") {
        None => HashMap::new(),
        Some(Value::Object(p)) => p
            .iter()
            .map(|(k, s)| (k.clone(), compile(s, depth + 1)))
            .collect(),
        Some(_) => return None,
    };
    let required = match m.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) => r
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    let additional = match m.get("additionalProperties") {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Bool(false)) => false,
        Some(_) => return None,
    };
    Some(FastObject {
        props,
        required,
        additional,
    })
}

/// Compiles `schema` to the subset, or `None` when it uses more.
pub(crate) fn compile(schema: &Value, depth: usize) -> Option<Fast> {
    if depth > 16 {
        return None;
    }
    let m = match schema {
        Value::Object(m) => m,
        Value::Bool(true) => return Some(Fast::Any),
        _ => return None,
    };
    if let Some(e) = m.get("enum") {
        // A string enum, with `type: string` or no type.
        if !only(m, &["type", "enum"]) || m.get("type").is_some_and(|t| t != "string") {
            return None;
        }
        let options = e
            .as_array()?
            .iter()
            .map(|o| o.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?;
        return Some(Fast::StringEnum(options));
    }
    let ty = match m.get("type") {
        None => return only(m, &[]).then_some(Fast::Any),
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return None,
    };
    const RANGE: &[&str] = &[
        "type",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    ];
    match ty {
        "string" if only(m, &["type", "minLength", "maxLength"]) => Some(Fast::String(
            count(m, "minLength").ok()?,
            count(m, "maxLength").ok()?,
        )),
        "integer" if only(m, RANGE) => Some(Fast::Integer(Range::read(m)?)),
        "number" if only(m, RANGE) => Some(Fast::Number(Range::read(m)?)),
        "boolean" if only(m, &["type"]) => Some(Fast::Boolean),
        "null" if only(m, &["type"]) => Some(Fast::Null),
        "array" if only(m, &["type", "items", "minItems", "maxItems"]) => {
            let (lo, hi) = (count(m, "minItems").ok()?, count(m, "maxItems").ok()?);
            match m.get("items") {
                None => Some(Fast::Array(None, lo, hi)),
                Some(is @ Value::Object(_)) => {
                    Some(Fast::Array(Some(Box::new(compile(is, depth + 1)?)), lo, hi))
                }
                Some(_) => None,
            }
        }
        "object" => Some(Fast::Object(Box::new(object(m, depth)?))),
        _ => None,
    }
}

impl Fast {
    /// True when `v` is valid for this schema; false when not known.
    pub(crate) fn accepts(&self, v: &Value) -> bool {
        match (self, v) {
            (Fast::Any, v) => !v.is_object(),
            (Fast::String(lo, hi), Value::String(s)) => {
                lo.is_none() && hi.is_none() || self.length_fits(s.chars().count() as u64)
            }
            (Fast::StringEnum(options), Value::String(s)) => options.iter().any(|o| o == s),
            (Fast::Integer(r), Value::Number(n)) => (n.is_i64() || n.is_u64()) && r.holds(n),
            (Fast::Number(r), Value::Number(n)) => r.holds(n),
            (Fast::Boolean, Value::Bool(_)) => true,
            (Fast::Null, Value::Null) => true,
            (Fast::Array(items, lo, hi), Value::Array(a)) => {
                let n = a.len() as u64;
                lo.is_none_or(|lo| n >= lo)
                    && hi.is_none_or(|hi| n <= hi)
                    && match items {
                        None => a.iter().all(|x| !x.is_object()),
                        Some(is) => a.iter().all(|x| is.accepts(x)),
                    }
            }
            (Fast::Object(o), Value::Object(m)) => o.accepts(m),
            _ => false,
        }
    }

    /// True when any JSON string is valid for this schema.
    pub(crate) fn any_string(&self) -> bool {
        matches!(self, Fast::String(None, None) | Fast::Any)
    }

    /// True for a string schema with a length limit (a streamed string
    /// then has its characters counted).
    pub(crate) fn counts_chars(&self) -> bool {
        matches!(self, Fast::String(lo, hi) if lo.is_some() || hi.is_some())
    }

    /// For a string schema: whether `chars` characters meet its length limits.
    pub(crate) fn length_fits(&self, chars: u64) -> bool {
        match self {
            Fast::String(lo, hi) => {
                lo.is_none_or(|lo| chars >= lo) && hi.is_none_or(|hi| chars <= hi)
            }
            Fast::Any => true,
            _ => false,
        }
    }
}

impl FastObject {
    /// True when the object `m` is valid for this schema: its required
    /// keys present, each value accepted by its property's schema, and
    /// (conservatively) no undeclared key.
    pub(crate) fn accepts(&self, m: &Map<String, Value>) -> bool {
        self.required.iter().all(|r| m.contains_key(r))
            && m.iter().all(|(k, v)| {
                self.props
                    .get(k)
                    .and_then(Option::as_ref)
                    .is_some_and(|f| f.accepts(v))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_subset_compiles_and_the_rest_does_not() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": "string", "description": "x"},
            "b": {"type": "integer"},
            "c": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "d": {"type": "string", "pattern": "^a"},
            "e": {"type": "object", "properties": {"f": {"type": "boolean"}}, "required": ["f"]}},
            "required": ["a"], "additionalProperties": false});
        let o = object(s.as_object().unwrap(), 0).unwrap();
        assert_eq!(o.props["a"], Some(Fast::String(None, None)));
        assert_eq!(o.props["d"], None);
        assert!(!o.additional);
        let ok = json!({"a": "x", "b": 3, "c": ["y"], "e": {"f": true}});
        assert!(o.accepts(ok.as_object().unwrap()));
        for bad in [
            json!({"b": 3}),
            json!({"a": "x", "b": 3.0}),
            json!({"a": "x", "c": ["z"]}),
            json!({"a": "x", "d": "a"}),
            json!({"a": "x", "e": {}}),
            json!({"a": "x", "zzz": 1}),
        ] {
            assert!(!o.accepts(bad.as_object().unwrap()), "{bad}");
        }
        for s in [
            json!({"anyOf": [{"type": "string"}]}),
            json!({"$ref": "#/$defs/x"}),
            json!({"type": ["string", "null"]}),
            json!({"type": "string", "format": "date"}),
            json!({"type": "integer", "minimum": 0.5e300, "multipleOf": 2}),
            json!({"type": "integer", "maximum": 9007199254740993u64}),
            json!({"type": "number", "exclusiveMinimum": true}),
            json!({"enum": ["a", 1]}),
        ] {
            assert_eq!(compile(&s, 0), None, "{s}");
        }
    }

    /// Soundness: whatever the subset accepts, `jsonschema` accepts.
    #[test]
    fn what_the_subset_accepts_jsonschema_accepts() {
        let schemas = [
            json!({"type": "integer"}),
            json!({"type": "number"}),
            json!({"type": "string"}),
            json!({"enum": ["a", "b"]}),
            json!({"type": "array", "items": {"type": "integer"}}),
            json!({"type": "array"}),
            json!({}),
            json!({"type": "object", "properties": {"x": {"type": "null"}}, "required": ["x"]}),
            json!({"type": "integer", "minimum": 0, "maximum": 9007199254740991u64}),
            json!({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 2}),
            json!({"type": "number", "minimum": -1.5, "maximum": 1.5}),
            json!({"type": "string", "minLength": 1, "maxLength": 2}),
            json!({"type": "array", "minItems": 1, "maxItems": 2}),
        ];
        let values = [
            json!(1),
            json!(-1),
            json!(1.5),
            json!(2.0),
            json!(u64::MAX),
            json!(9007199254740993u64),
            json!(-2),
            json!(0),
            json!(1.5),
            json!(1.0000001),
            json!("a"),
            json!("ab"),
            json!("abc"),
            json!(""),
            json!("é€"),
            json!("c"),
            json!(null),
            json!(true),
            json!([1, 2]),
            json!([1, "a"]),
            json!([]),
            json!({"x": null}),
            json!({"x": 1}),
            json!({}),
        ];
        for s in &schemas {
            let fast = compile(s, 0).unwrap();
            let v = jsonschema::validator_for(s).unwrap();
            for x in &values {
                if fast.accepts(x) {
                    assert!(v.is_valid(x), "{s} {x}");
                }
            }
        }
    }
}

//! Coercion by JSON Schema: a value is brought to the type its schema
//! declares, recursively through objects, arrays, `$ref`/`$defs`,
//! `anyOf`/`oneOf`/`allOf` and type lists.
//!
//! A value that already conforms is never touched. For a union, the first
//! member the value conforms to as it is wins; when none does, every member
//! is tried and the one whose coercions cost least is taken — each coercion
//! has a penalty ([`FixKind`]), a nested one weighs more (the penalty times
//! its depth), as BAML's schema-aligned parsing scores them; a tie is not
//! guessed.

use serde_json::{Map, Number, Value};

use super::error::{pointer_push, short, Fix, FixKind, Fixes};
use super::options::Options;
use super::params;

/// Longest value text quoted in a [`Fix`].
const QUOTE: usize = 80;

/// What to do with one key of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyPlan {
    /// Declared (or kept undeclared): as written.
    Keep,
    /// Renamed to the declared property.
    Rename(String),
    /// Dropped, with this repair kind.
    Drop(FixKind),
}

/// Coerces values against the schemas of one tool (`root` resolves `$ref`s).
pub(crate) struct Coercer<'a> {
    pub(crate) root: &'a Value,
    pub(crate) opts: &'a Options,
}

fn types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_matches(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        // A number written with a fraction (`5.0`) is not yet an integer
        // here: many consumers would read it as a float (see `FloatToInteger`).
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// JSON equality with numbers compared by value (`1` = `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

/// True for exactly a JSON integer literal.
fn integer_literal(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
}

/// True for exactly a JSON number literal.
fn number_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int = &b[int_start..i];
    if int.is_empty() || (int.len() > 1 && int[0] == b'0') {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let s0 = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s0 {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let s0 = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s0 {
            return false;
        }
    }
    i == b.len()
}

/// An integral float within ±2^53 as an integer.
fn integral(n: &Number) -> Option<Value> {
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
}

fn fold_enum(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl<'a> Coercer<'a> {
    /// Follows `$ref` (local pointers only) from `schema`.
    pub(crate) fn resolve<'s>(&self, mut schema: &'s Value) -> &'s Value
    where
        'a: 's,
    {
        for _ in 0..self.opts.limits.max_depth.max(1) {
            let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
                return schema;
            };
            let target = match r.strip_prefix('#') {
                Some("") => Some(self.root),
                Some(ptr) => self.root.pointer(ptr),
                None => None,
            };
            match target {
                Some(t) => schema = t,
                None => return schema,
            }
        }
        schema
    }

    /// Whether `v` conforms to `schema` as far as coercion cares: types,
    /// enums, constants, required and declared properties, items, unions.
    /// String and number constraints (pattern, range, length) are left to
    /// validation: no coercion can meet them.
    pub(crate) fn conforms<'s>(&self, v: &Value, schema: &'s Value, depth: usize) -> bool
    where
        'a: 's,
    {
        if depth > self.opts.limits.max_depth {
            return true;
        }
        let s = match self.resolve(schema) {
            Value::Bool(b) => return *b,
            Value::Object(s) => s,
            _ => return true,
        };
        if let Some(Value::Array(all)) = s.get("allOf") {
            if !all.iter().all(|m| self.conforms(v, m, depth + 1)) {
                return false;
            }
        }
        if let Some(Value::Array(any)) = s.get("anyOf") {
            if !any.iter().any(|m| self.conforms(v, m, depth + 1)) {
                return false;
            }
        }
        if let Some(Value::Array(one)) = s.get("oneOf") {
            if one
                .iter()
                .filter(|m| self.conforms(v, m, depth + 1))
                .count()
                != 1
            {
                return false;
            }
        }
        let ts = types(s);
        if !ts.is_empty() && !ts.iter().any(|t| type_matches(v, t)) {
            return false;
        }
        if let Some(Value::Array(e)) = s.get("enum") {
            if !e.iter().any(|x| json_eq(x, v)) {
                return false;
            }
        }
        if let Some(c) = s.get("const") {
            if !json_eq(c, v) {
                return false;
            }
        }
        match v {
            Value::Object(m) => {
                if let Some(Value::Array(req)) = s.get("required") {
                    if !req
                        .iter()
                        .filter_map(Value::as_str)
                        .all(|r| m.contains_key(r))
                    {
                        return false;
                    }
                }
                let props = s.get("properties").and_then(Value::as_object);
                let additional = s.get("additionalProperties");
                let patterned = s.contains_key("patternProperties");
                m.iter().all(|(k, x)| match props.and_then(|p| p.get(k)) {
                    Some(ps) => self.conforms(x, ps, depth + 1),
                    None if patterned => true,
                    None => match additional {
                        Some(Value::Bool(false)) => false,
                        Some(a @ Value::Object(_)) => self.conforms(x, a, depth + 1),
                        _ => true,
                    },
                })
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .all(|(i, x)| item_schema(s, i).is_none_or(|is| self.conforms(x, is, depth + 1))),
            _ => true,
        }
    }

    /// True when `key` is listed in the schema's `required`.
    pub(crate) fn required<'s>(&self, schema: &'s Value, key: &str) -> bool
    where
        'a: 's,
    {
        self.resolve(schema)
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x == key))
    }

    /// What to do with key `key` of an object of `schema`, given the keys
    /// already kept (`taken`: a rename never lands on one). A key written
    /// twice is left as it is: which one counts is the JSON reader's rule
    /// (the last, for serde_json and Python), not the normalizer's.
    pub(crate) fn plan_key<'s>(
        &self,
        schema: &'s Value,
        key: &str,
        taken: &dyn Fn(&str) -> bool,
    ) -> KeyPlan
    where
        'a: 's,
    {
        let s = self.resolve(schema);
        let props = s.get("properties").and_then(Value::as_object);
        if props.is_some_and(|p| p.contains_key(key)) {
            return KeyPlan::Keep;
        }
        if self.opts.param_names {
            if let Some(p) = props.and_then(|p| params::resolve(key, p, taken)) {
                return KeyPlan::Rename(p);
            }
        }
        if self.opts.drop_unknown
            && s.get("additionalProperties") == Some(&Value::Bool(false))
            && s.get("patternProperties").is_none()
        {
            return KeyPlan::Drop(FixKind::DroppedParameter);
        }
        KeyPlan::Keep
    }

    /// The schema a value under (declared or kept) `key` must meet.
    pub(crate) fn value_schema<'s>(&self, schema: &'s Value, key: &str) -> Option<&'s Value>
    where
        'a: 's,
    {
        let s = self.resolve(schema);
        s.get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
    }

    /// True when a `null` under `key` is to be removed: the parameter is
    /// optional and its schema does not accept `null`.
    pub(crate) fn drops_null<'s>(&self, schema: &'s Value, key: &str) -> bool
    where
        'a: 's,
    {
        self.opts.drop_null
            && !self.required(schema, key)
            && self
                .value_schema(schema, key)
                .is_some_and(|vs| !self.conforms(&Value::Null, vs, 1))
    }

    /// True when any string meets `schema` as it is, so a string value can
    /// stream through untouched (a plain `"type": "string"` with no enum,
    /// const or union).
    pub(crate) fn any_string_conforms<'s>(&self, schema: &'s Value) -> bool
    where
        'a: 's,
    {
        let s = match self.resolve(schema) {
            Value::Object(s) => s,
            Value::Bool(b) => return *b,
            _ => return true,
        };
        let ts = types(s);
        (ts.is_empty() || ts.contains(&"string"))
            && !["enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref"]
                .iter()
                .any(|k| s.contains_key(*k))
    }

    /// `v` coerced to `schema`, or `None` when it is left as it is
    /// (conforming already, or nothing applies). Repairs go to `fixes`.
    pub(crate) fn coerce<'s>(
        &self,
        v: &Value,
        schema: &'s Value,
        path: &str,
        depth: usize,
        fixes: &mut Fixes,
    ) -> Option<Value>
    where
        'a: 's,
    {
        if depth > self.opts.limits.max_depth {
            return None;
        }
        let schema = self.resolve(schema);
        let s = schema.as_object()?;
        if self.conforms(v, schema, depth) {
            return None;
        }
        // Unions: `anyOf` / `oneOf`, and a list of several types.
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = s.get(key) {
                return self.union(v, members, path, depth, fixes);
            }
        }
        let ts = types(s);
        if ts.len() > 1 {
            let members: Vec<Value> = ts
                .iter()
                .map(|t| {
                    let mut m = s.clone();
                    m.insert("type".into(), Value::String((*t).into()));
                    Value::Object(m)
                })
                .collect();
            return self.union(v, &members, path, depth, fixes);
        }
        let mut cur: Option<Value> = None;
        if let Some(Value::Array(all)) = s.get("allOf") {
            for m in all {
                let base = cur.as_ref().unwrap_or(v);
                if let Some(n) = self.coerce(base, m, path, depth + 1, fixes) {
                    cur = Some(n);
                }
            }
        }
        let base = cur.as_ref().unwrap_or(v);
        match self.coerce_typed(base, schema, path, depth, fixes) {
            Some(n) => Some(n),
            None => cur,
        }
    }

    /// The member of a union that `v` needs the cheapest coercions for
    /// (none when `v` conforms to one as it is, or on a tie).
    fn union<'s>(
        &self,
        v: &Value,
        members: &'s [Value],
        path: &str,
        depth: usize,
        fixes: &mut Fixes,
    ) -> Option<Value>
    where
        'a: 's,
    {
        if members.iter().any(|m| self.conforms(v, m, depth + 1)) {
            return None;
        }
        let mut best: Option<(u64, Value, Fixes)> = None;
        let mut tie = false;
        for m in members {
            let mut f = Fixes::new(fixes.max);
            let Some(n) = self.coerce(v, m, path, depth + 1, &mut f) else {
                continue;
            };
            if !self.conforms(&n, m, depth + 1) {
                continue;
            }
            let c = f.cost;
            match &best {
                Some((bc, bv, _)) if c == *bc && *bv != n => tie = true,
                Some((bc, _, _)) if c < *bc => {
                    best = Some((c, n, f));
                    tie = false;
                }
                None => best = Some((c, n, f)),
                _ => {}
            }
        }
        match (best, tie) {
            (Some((_, n, f)), false) => {
                fixes.absorb(f);
                Some(n)
            }
            _ => None,
        }
    }

    fn fix(fixes: &mut Fixes, kind: FixKind, path: &str, from: &Value, to: &Value) {
        fixes.push(Fix {
            kind,
            path: path.to_owned(),
            from: Some(short(from, QUOTE)),
            to: Some(short(to, QUOTE)),
        });
    }

    /// Coercion against one schema whose `type` is one type (or none).
    fn coerce_typed<'s>(
        &self,
        v: &Value,
        schema: &'s Value,
        path: &str,
        depth: usize,
        fixes: &mut Fixes,
    ) -> Option<Value>
    where
        'a: 's,
    {
        let s = schema.as_object()?;
        let ty = types(s).first().copied().or_else(|| {
            if s.contains_key("properties") || s.contains_key("required") {
                Some("object")
            } else if s.contains_key("items") || s.contains_key("prefixItems") {
                Some("array")
            } else {
                None
            }
        });
        let scalar = |fixes: &mut Fixes, kind: FixKind, to: Value| {
            Self::fix(fixes, kind, path, v, &to);
            Some(to)
        };
        // Enums: case- and whitespace-insensitive, unique match only.
        if let Some(Value::Array(options)) = s.get("enum") {
            if self.opts.coerce && !options.iter().any(|o| json_eq(o, v)) {
                let text = match v {
                    Value::String(t) => Some(t.clone()),
                    Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
                    _ => None,
                };
                if let Some(text) = text {
                    let want = fold_enum(&text);
                    let hits: Vec<&Value> = options
                        .iter()
                        .filter(|o| match o {
                            Value::String(o) => fold_enum(o) == want,
                            Value::Number(_) | Value::Bool(_) => {
                                serde_json::to_string(o).is_ok_and(|t| t == text.trim())
                            }
                            _ => false,
                        })
                        .collect();
                    if let [one] = hits[..] {
                        return scalar(fixes, FixKind::EnumValue, one.clone());
                    }
                }
            }
            return None;
        }
        match (v, ty) {
            (Value::Object(m), Some("object") | None) => {
                self.coerce_object(m, schema, path, depth, fixes)
            }
            (Value::Array(a), Some("array") | None) => self.coerce_items(a, s, path, depth, fixes),
            (Value::String(t), Some(ty)) if self.opts.coerce => match ty {
                "integer" if integer_literal(t) => {
                    let n: Number = serde_json::from_str(t).ok()?;
                    scalar(fixes, FixKind::StringToInteger, Value::Number(n))
                }
                "integer" if number_literal(t) => {
                    let n: Number = serde_json::from_str(t).ok()?;
                    scalar(fixes, FixKind::StringToInteger, integral(&n)?)
                }
                "number" if number_literal(t) => {
                    let n: Number = serde_json::from_str(t).ok()?;
                    scalar(fixes, FixKind::StringToNumber, Value::Number(n))
                }
                "boolean" if t == "true" || t == "false" => {
                    scalar(fixes, FixKind::StringToBoolean, Value::Bool(t == "true"))
                }
                "null" if t == "null" => scalar(fixes, FixKind::StringToNull, Value::Null),
                "array" | "object" => {
                    let trimmed = t.trim();
                    let opener = if ty == "array" { '[' } else { '{' };
                    let parsed = trimmed
                        .starts_with(opener)
                        .then(|| serde_json::from_str::<Value>(trimmed).ok())
                        .flatten();
                    match parsed {
                        Some(p) => {
                            Self::fix(fixes, FixKind::StringifiedValue, path, v, &p);
                            let inner = self.coerce_typed(&p, schema, path, depth, fixes);
                            Some(inner.unwrap_or(p))
                        }
                        None if ty == "array" => self.wrap(v, s, path, depth, fixes),
                        None => None,
                    }
                }
                _ => None,
            },
            (Value::Number(n), Some(ty)) if self.opts.coerce => match ty {
                "integer" => scalar(fixes, FixKind::FloatToInteger, integral(n)?),
                "string" => scalar(fixes, FixKind::NumberToString, Value::String(n.to_string())),
                "array" => self.wrap(v, s, path, depth, fixes),
                _ => None,
            },
            (Value::Bool(b), Some(ty)) if self.opts.coerce => match ty {
                "string" => scalar(
                    fixes,
                    FixKind::BooleanToString,
                    Value::String(b.to_string()),
                ),
                "array" => self.wrap(v, s, path, depth, fixes),
                _ => None,
            },
            (Value::Object(_), Some("array")) if self.opts.coerce => {
                self.wrap(v, s, path, depth, fixes)
            }
            _ => None,
        }
    }

    /// A single value as a one-item array, its item coerced too.
    fn wrap<'s>(
        &self,
        v: &Value,
        s: &'s Map<String, Value>,
        path: &str,
        depth: usize,
        fixes: &mut Fixes,
    ) -> Option<Value>
    where
        'a: 's,
    {
        let mut inner = Fixes::new(fixes.max);
        let item = match item_schema(s, 0) {
            Some(is) => {
                let item = self
                    .coerce(v, is, &pointer_push(path, "0"), depth + 1, &mut inner)
                    .unwrap_or_else(|| v.clone());
                // Wrapped only when that makes a valid item: a string for
                // an array of numbers stays as it is (and is reported).
                if !self.conforms(&item, is, depth + 1) {
                    return None;
                }
                item
            }
            None => v.clone(),
        };
        let wrapped = Value::Array(vec![item]);
        Self::fix(fixes, FixKind::ScalarToArray, path, v, &wrapped);
        fixes.absorb(inner);
        Some(wrapped)
    }

    fn coerce_items<'s>(
        &self,
        a: &[Value],
        s: &'s Map<String, Value>,
        path: &str,
        depth: usize,
        fixes: &mut Fixes,
    ) -> Option<Value>
    where
        'a: 's,
    {
        let mut out: Option<Vec<Value>> = None;
        for (i, x) in a.iter().enumerate() {
            let Some(is) = item_schema(s, i) else {
                continue;
            };
            let p = pointer_push(path, &i.to_string());
            if let Some(n) = self.coerce(x, is, &p, depth + 1, fixes) {
                out.get_or_insert_with(|| a.to_vec())[i] = n;
            }
        }
        out.map(Value::Array)
    }

    /// Object rules: parameter names, undeclared keys, `null` for optional
    /// parameters, each value coerced to its property's schema.
    pub(crate) fn coerce_object<'s>(
        &self,
        m: &Map<String, Value>,
        schema: &'s Value,
        path: &str,
        depth: usize,
        fixes: &mut Fixes,
    ) -> Option<Value>
    where
        'a: 's,
    {
        let mut out = Map::with_capacity(m.len());
        let mut changed = false;
        for (k, v) in m {
            let key = match self.plan_key(schema, k, &|t| out.contains_key(t)) {
                KeyPlan::Keep => k.clone(),
                KeyPlan::Rename(to) => {
                    fixes.push(Fix {
                        kind: FixKind::ParameterName,
                        path: pointer_push(path, &to),
                        from: Some(k.clone()),
                        to: Some(to.clone()),
                    });
                    changed = true;
                    to
                }
                KeyPlan::Drop(kind) => {
                    fixes.push(Fix {
                        kind,
                        path: pointer_push(path, k),
                        from: Some(k.clone()),
                        to: None,
                    });
                    changed = true;
                    continue;
                }
            };
            let p = pointer_push(path, &key);
            if v.is_null() && self.drops_null(schema, &key) {
                fixes.push(Fix {
                    kind: FixKind::NullRemoved,
                    path: p,
                    from: Some("null".into()),
                    to: None,
                });
                changed = true;
                continue;
            }
            let nv = self
                .value_schema(schema, &key)
                .and_then(|vs| self.coerce(v, vs, &p, depth + 1, fixes));
            changed |= nv.is_some();
            out.insert(key, nv.unwrap_or_else(|| v.clone()));
        }
        changed.then_some(Value::Object(out))
    }
}

/// The schema of item `i` of an array schema.
fn item_schema(s: &Map<String, Value>, i: usize) -> Option<&Value> {
    if let Some(Value::Array(prefix)) = s.get("prefixItems") {
        return prefix
            .get(i)
            .or_else(|| s.get("items").filter(|x| !x.is_array()));
    }
    match s.get("items") {
        Some(Value::Array(tuple)) => tuple.get(i).or_else(|| s.get("additionalItems")),
        other => other,
    }
}

//! Catalogs compiled once per tool list: a server sees the same tool list
//! on request after request (a client sends its whole list each time), and
//! compiling every schema again per request would cost more than
//! normalizing the calls.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::Tools;

use super::{Catalog, Options};

/// A bounded cache of [`Catalog`]s keyed by the tool list (every tool's
/// name and schema, in order): [`CatalogCache::get`] compiles a list's
/// schemas the first time it is seen and hands out the same `Arc` after.
/// It is `Send + Sync`; share one per server.
///
/// ```
/// use std::sync::Arc;
/// use toolstream::normalize::{CatalogCache, Options};
/// use toolstream::Tools;
/// let cache = CatalogCache::new(Options::default(), 16);
/// let tools = Tools::from_json(r#"[{"name": "get_weather", "parameters": {"type": "object",
///     "properties": {"city": {"type": "string"}}}}]"#).unwrap();
/// let a = cache.get(&tools);
/// let b = cache.get(&tools.clone());
/// assert!(Arc::ptr_eq(&a, &b));
/// ```
#[derive(Debug)]
pub struct CatalogCache {
    options: Options,
    capacity: usize,
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<String, Arc<Catalog>>,
    /// Keys, least recently used first.
    order: VecDeque<String>,
}

impl CatalogCache {
    /// A cache of at most `capacity` catalogs (0: nothing is kept), each
    /// built with `options`.
    pub fn new(options: Options, capacity: usize) -> Self {
        CatalogCache {
            options,
            capacity,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// The catalog of `tools`: the cached one when this list was seen,
    /// else compiled now (and kept, the least recently used one dropped
    /// when the cache is full).
    pub fn get(&self, tools: &Tools) -> Arc<Catalog> {
        let key = key(tools);
        if let Ok(mut e) = self.inner.lock() {
            if let Some(c) = e.map.get(&key).cloned() {
                if let Some(at) = e.order.iter().position(|k| *k == key) {
                    let k = e.order.remove(at).unwrap_or_default();
                    e.order.push_back(k);
                }
                return c;
            }
        }
        // Compiled outside the lock: other lists are served meanwhile.
        let catalog = Arc::new(Catalog::with_options(tools, self.options.clone()));
        if self.capacity > 0 {
            if let Ok(mut e) = self.inner.lock() {
                if !e.map.contains_key(&key) {
                    while e.map.len() >= self.capacity {
                        let Some(old) = e.order.pop_front() else {
                            break;
                        };
                        e.map.remove(&old);
                    }
                    e.order.push_back(key.clone());
                    e.map.insert(key, catalog.clone());
                }
            }
        }
        catalog
    }

    /// The number of catalogs kept.
    pub fn len(&self) -> usize {
        self.inner.lock().map(|e| e.map.len()).unwrap_or(0)
    }

    /// True when no catalog is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The tool list as one text: names and schemas, in order.
fn key(tools: &Tools) -> String {
    let mut k = String::new();
    for spec in tools.specs() {
        k.push_str(&serde_json::to_string(&spec.name).unwrap_or_default());
        k.push(':');
        match &spec.parameters {
            Some(p) => k.push_str(&p.to_string()),
            None => k.push_str("null"),
        }
        k.push('\n');
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(name: &str) -> Tools {
        Tools::from_json(&format!(
            r#"[{{"name": "{name}", "parameters": {{"type": "object", "properties": {{"a": {{"type": "integer"}}}}}}}}]"#
        ))
        .unwrap()
    }

    #[test]
    fn one_compile_per_list_and_a_bounded_size() {
        let cache = CatalogCache::new(Options::default(), 2);
        let a = cache.get(&tools("a"));
        assert!(Arc::ptr_eq(&a, &cache.get(&tools("a"))));
        let b = cache.get(&tools("b"));
        assert!(!Arc::ptr_eq(&a, &b));
        // `a` used last: `b` is the one dropped for `c`.
        cache.get(&tools("a"));
        cache.get(&tools("c"));
        assert_eq!(cache.len(), 2);
        assert!(Arc::ptr_eq(&a, &cache.get(&tools("a"))));
        assert!(!Arc::ptr_eq(&b, &cache.get(&tools("b"))));
        // The cached catalog works like a fresh one.
        let out = a.normalize("A", r#"{"a": "3"}"#);
        assert_eq!(out.arguments, r#"{"a": 3}"#);
        let none = CatalogCache::new(Options::default(), 0);
        none.get(&tools("a"));
        assert!(none.is_empty());
    }
}

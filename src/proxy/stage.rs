//! The normalizer as the session's [`CallStage`]: every call checked and
//! repaired against the request's tools before it reaches the client.
//!
//! Catalogs (the tools' compiled schemas) are cached by the tool set, so
//! an agent that sends the same ~24 tools every turn pays for compiling
//! them once, not on every request.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use super::session::{CallStage, StageFactory};
use super::translate::ToolTable;
use crate::event::Event;
use crate::normalize::{Catalog, Normalizer, Options, Report};
use crate::Tools;

/// The normalizer stage of one request.
#[derive(Debug)]
pub struct NormalizeStage {
    norm: Normalizer,
    reports: Vec<(usize, Box<Report>)>,
    buf: Vec<crate::normalize::Normalized>,
}

impl NormalizeStage {
    /// A stage checking calls against `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        NormalizeStage {
            norm: Normalizer::new(catalog),
            reports: Vec::new(),
            buf: Vec::new(),
        }
    }

    fn drain_buf(&mut self, out: &mut Vec<Event>) {
        for n in self.buf.drain(..) {
            if let (Some(r), Event::ToolEnd { call, .. }) = (n.report, &n.event) {
                self.reports.push((call.index, r));
            }
            out.push(n.event);
        }
    }
}

impl CallStage for NormalizeStage {
    fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>) {
        for e in input.drain(..) {
            self.norm.push_into(e, &mut self.buf);
        }
        self.drain_buf(out);
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        self.buf.extend(self.norm.finish());
        self.drain_buf(out);
    }

    fn take_reports(&mut self, out: &mut Vec<(usize, Box<Report>)>) {
        out.append(&mut self.reports);
    }

    fn restart(&mut self) {
        self.norm = Normalizer::new(self.norm.catalog().clone());
        self.reports.clear();
        self.buf.clear();
    }
}

/// Compiled catalogs by tool set, at most `cap` of them (the cache is
/// emptied when full: tool sets change rarely, so a simple bound will do).
#[derive(Debug)]
struct CatalogCache {
    map: Mutex<HashMap<u64, Arc<Catalog>>>,
    cap: usize,
    options: Options,
}

impl CatalogCache {
    fn get(&self, tools: &ToolTable) -> Arc<Catalog> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for s in &tools.specs {
            s.name.hash(&mut h);
            match &s.parameters {
                Some(p) => p.to_string().hash(&mut h),
                None => 0u8.hash(&mut h),
            }
        }
        let key = h.finish();
        if let Some(c) = self.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return c;
        }
        let c = Arc::new(Catalog::with_options(
            &Tools::new(tools.specs.clone()),
            self.options.clone(),
        ));
        if let Ok(mut m) = self.map.lock() {
            if m.len() >= self.cap {
                m.clear();
            }
            m.insert(key, c.clone());
        }
        c
    }
}

/// The default [`StageFactory`]: a [`NormalizeStage`] with `options` for
/// every request that offers tools, its catalog taken from a cache of at
/// most `cap` tool sets.
pub fn normalizer_factory(options: Options, cap: usize) -> StageFactory {
    let cache = CatalogCache {
        map: Mutex::new(HashMap::new()),
        cap: cap.max(1),
        options,
    };
    Arc::new(move |tools: &ToolTable| {
        if tools.specs.is_empty() {
            return None;
        }
        Some(Box::new(NormalizeStage::new(cache.get(tools))) as Box<dyn CallStage>)
    })
}

//! The normalizer as the session's [`CallStage`]: every call checked and
//! repaired against the request's tools before it reaches the client.
//!
//! Catalogs (the tools' compiled schemas) are cached by the tool set, so
//! an agent that sends the same ~24 tools every turn pays for compiling
//! them once, not on every request.

use std::sync::Arc;

use super::session::{CallStage, StageFactory};
use super::translate::ToolTable;
use crate::event::Event;
use crate::normalize::{Catalog, CatalogCache, Normalizer, Options, Report};
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

/// The default [`StageFactory`]: a [`NormalizeStage`] with `options` for
/// every request that offers tools, its catalog taken from a cache of at
/// most `cap` tool sets.
pub fn normalizer_factory(options: Options, cap: usize) -> StageFactory {
    // The normalizer's own cache: keyed by the whole tool list, least
    // recently used dropped when full.
    let cache = CatalogCache::new(options, cap.max(1));
    Arc::new(move |tools: &ToolTable| {
        if tools.specs.is_empty() {
            return None;
        }
        let catalog = cache.get(&Tools::new(tools.specs.clone()));
        Some(Box::new(NormalizeStage::new(catalog)) as Box<dyn CallStage>)
    })
}

//! Parallel planning (RFC-136 §9): which calls of a reply can run at once.
//!
//! A tool is a read or a write: by its MCP annotations first
//! (`readOnlyHint: true` → read; `destructiveHint: true` or
//! `readOnlyHint: false` → write), then by the verbs in its name, then in
//! its description; anything undecided is a write. Consecutive reads form
//! one batch; a write runs alone; the order of the calls is kept. With
//! [`PlanOptions::batch_independent_writes`], consecutive writes that touch
//! different known resources (their `path`/`file`/`id`/`url`… arguments)
//! share a batch — writes to the same resource, or to an unknown one, never
//! do, so they are never reordered.
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::planning::parallel::{plan, PlanOptions, PlannedCall};
//! use toolstream::toolkit::Tool;
//! let tools = vec![
//!     Tool::new("read_file", "Read a file.", json!({"type": "object"})),
//!     Tool::new("write_file", "Write a file.", json!({"type": "object"})),
//! ];
//! let c = |n: &str, p: &str| PlannedCall { name: n.into(), arguments: json!({"path": p}) };
//! let calls = [c("read_file", "a"), c("read_file", "b"), c("write_file", "a"), c("read_file", "c")];
//! let p = plan(&calls, &tools, &PlanOptions::default());
//! assert_eq!(p.batches, vec![vec![0, 1], vec![2], vec![3]]);
//! ```

use serde::Serialize;
use serde_json::Value;

use super::super::search::terms;
use super::super::Tool;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// No side effects: safe to run alongside others.
    Read,
    /// Changes something (or unknown): runs alone.
    Write,
}

/// Why a tool was classified so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Classification {
    /// The class.
    pub access: Access,
    /// What decided it (`annotation readOnlyHint`, `name verb "list"`, …).
    pub reason: String,
}

const READ_VERBS: &[&str] = &[
    "search", "list", "get", "find", "read", "query", "fetch", "check", "validate", "inspect",
    "analyze", "analyse", "count", "exists", "view", "show", "describe", "grep", "glob", "ls",
    "cat", "lookup", "stat", "head", "tail", "download", "retrieve", "look",
];
const WRITE_VERBS: &[&str] = &[
    "write",
    "create",
    "update",
    "delete",
    "modify",
    "set",
    "post",
    "put",
    "patch",
    "remove",
    "add",
    "insert",
    "append",
    "move",
    "rename",
    "copy",
    "execute",
    "run",
    "install",
    "uninstall",
    "edit",
    "send",
    "bash",
    "exec",
    "kill",
    "push",
    "commit",
    "merge",
    "deploy",
    "upload",
    "save",
    "drop",
    "truncate",
    "replace",
    "apply",
    "submit",
    "publish",
    "rm",
    "mkdir",
    "shell",
    "terminal",
];

/// Classifies a tool.
pub fn classify(tool: &Tool) -> Classification {
    let ann = tool.annotations.as_ref();
    let hint = |k: &str| ann.and_then(|a| a.get(k)).and_then(Value::as_bool);
    if hint("destructiveHint") == Some(true) {
        return Classification {
            access: Access::Write,
            reason: "annotation destructiveHint".into(),
        };
    }
    match hint("readOnlyHint") {
        Some(true) => {
            return Classification {
                access: Access::Read,
                reason: "annotation readOnlyHint".into(),
            }
        }
        Some(false) => {
            return Classification {
                access: Access::Write,
                reason: "annotation readOnlyHint: false".into(),
            }
        }
        None => {}
    }
    let name = terms(&tool.name);
    // Writes first: `read_and_delete` is a write.
    if let Some(v) = name.iter().find(|t| WRITE_VERBS.contains(&t.as_str())) {
        return Classification {
            access: Access::Write,
            reason: format!("name verb \"{v}\""),
        };
    }
    if let Some(v) = name.iter().find(|t| READ_VERBS.contains(&t.as_str())) {
        return Classification {
            access: Access::Read,
            reason: format!("name verb \"{v}\""),
        };
    }
    let d = tool.description().to_ascii_lowercase();
    for w in [
        "modifies",
        "creates",
        "deletes",
        "changes",
        "writes",
        "overwrites",
        "executes",
        "sends",
    ] {
        if d.contains(w) {
            return Classification {
                access: Access::Write,
                reason: format!("description \"{w}\""),
            };
        }
    }
    for w in [
        "returns",
        "retrieves",
        "looks up",
        "searches",
        "lists",
        "reads",
        "read-only",
    ] {
        if d.contains(w) {
            return Classification {
                access: Access::Read,
                reason: format!("description \"{w}\""),
            };
        }
    }
    Classification {
        access: Access::Write,
        reason: "unknown: treated as a write".into(),
    }
}

/// A call to plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedCall {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

/// Options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanOptions {
    /// Run nothing in parallel.
    pub sequential: bool,
    /// Let consecutive writes to different known resources share a batch.
    pub batch_independent_writes: bool,
}

/// Batches of call indices: each batch may run in parallel, batches in
/// order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The batches.
    pub batches: Vec<Vec<usize>>,
    /// Each call's class.
    pub access: Vec<Access>,
}

impl Plan {
    /// The share of calls that run alongside another (0 … 1).
    pub fn parallelism(&self) -> f64 {
        let total: usize = self.batches.iter().map(Vec::len).sum();
        if total == 0 {
            return 0.0;
        }
        let par: usize = self
            .batches
            .iter()
            .filter(|b| b.len() > 1)
            .map(Vec::len)
            .sum();
        par as f64 / total as f64
    }
}

const RESOURCE_KEYS: &[&str] = &[
    "path",
    "file",
    "file_path",
    "filepath",
    "filename",
    "dir",
    "directory",
    "id",
    "url",
    "uri",
    "key",
    "name",
    "notebook_path",
    "resource",
    "table",
    "branch",
    "repo",
];

/// The resources a call touches: its `path`-, `id`- or `url`-like
/// arguments (`None`: unknown).
pub fn resources(args: &Value) -> Option<Vec<String>> {
    let o = args.as_object()?;
    let r: Vec<String> = o
        .iter()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            RESOURCE_KEYS.contains(&k.as_str()) || k.ends_with("_id") || k.ends_with("_path")
        })
        .filter_map(|(_, v)| match v {
            Value::String(s) => Some(s.trim().trim_start_matches("./").to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect();
    (!r.is_empty()).then_some(r)
}

/// Plans calls against the tools that were offered (a call of an unknown
/// tool is a write).
pub fn plan(calls: &[PlannedCall], tools: &[Tool], opts: &PlanOptions) -> Plan {
    let access: Vec<Access> = calls
        .iter()
        .map(|c| {
            tools
                .iter()
                .find(|t| t.name == c.name)
                .map_or(Access::Write, |t| classify(t).access)
        })
        .collect();
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut batch_kind: Option<Access> = None;
    let mut batch_res: Vec<String> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let a = access[i];
        let joins = !opts.sequential
            && batch_kind == Some(a)
            && match a {
                Access::Read => true,
                Access::Write => {
                    opts.batch_independent_writes
                        && match resources(&c.arguments) {
                            Some(r) => {
                                !batch_res.is_empty() && r.iter().all(|x| !batch_res.contains(x))
                            }
                            None => false,
                        }
                }
            };
        if joins {
            if let Some(b) = batches.last_mut() {
                b.push(i);
            }
        } else {
            batches.push(vec![i]);
            batch_kind = Some(a);
            batch_res.clear();
        }
        if a == Access::Write {
            match resources(&c.arguments) {
                Some(r) => batch_res.extend(r),
                // Unknown resource: nothing may join this write.
                None => batch_kind = None,
            }
        }
    }
    Plan { batches, access }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(name: &str, desc: &str, ann: Option<Value>) -> Tool {
        Tool {
            annotations: ann,
            ..Tool::new(name, desc, json!({"type": "object"}))
        }
    }

    #[test]
    fn classification_order() {
        assert_eq!(
            classify(&t("delete_all", "", Some(json!({"readOnlyHint": true})))).access,
            Access::Read
        );
        assert_eq!(classify(&t("Read", "", None)).access, Access::Read);
        assert_eq!(classify(&t("Bash", "", None)).access, Access::Write);
        assert_eq!(
            classify(&t("weather", "Returns the weather.", None)).access,
            Access::Read
        );
        assert_eq!(classify(&t("frobnicate", "", None)).access, Access::Write);
        assert_eq!(
            classify(&t("listAndDeleteFiles", "", None)).access,
            Access::Write
        );
    }

    #[test]
    fn independent_writes_batch_but_same_resource_never() {
        let tools = vec![t("write_file", "", None)];
        let c = |p: &str| PlannedCall {
            name: "write_file".into(),
            arguments: json!({"path": p}),
        };
        let o = PlanOptions {
            batch_independent_writes: true,
            ..PlanOptions::default()
        };
        let p = plan(&[c("a"), c("b"), c("a"), c("c")], &tools, &o);
        assert_eq!(p.batches, vec![vec![0, 1], vec![2, 3]]);
        let p = plan(&[c("a"), c("b")], &tools, &PlanOptions::default());
        assert_eq!(p.batches, vec![vec![0], vec![1]]);
        let unknown = PlannedCall {
            name: "write_file".into(),
            arguments: json!({"text": "x"}),
        };
        let p = plan(&[c("a"), unknown, c("b")], &tools, &o);
        assert_eq!(p.batches, vec![vec![0], vec![1], vec![2]]);
        assert_eq!(plan(&[], &tools, &o).parallelism(), 0.0);
    }
}

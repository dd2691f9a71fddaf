//! The capability registry against 200+ real model ids
//! (`corpus/toolkit/model_ids.tsv`): family, parameter count, native tools
//! and size class must all be right for at least 95 % of them, and always
//! for the four ids RFC-136's own matchers get wrong.
#![cfg(feature = "toolkit")]

use toolstream::toolkit::registry::Registry;

struct Row {
    id: String,
    family: String,
    params: Option<f64>,
    native: bool,
    size: String,
}

fn rows() -> Vec<Row> {
    let text = include_str!("../corpus/toolkit/model_ids.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 5, "bad row: {l}");
            Row {
                id: c[0].to_owned(),
                family: c[1].to_owned(),
                params: (c[2] != "-").then(|| c[2].parse().unwrap()),
                native: c[3] == "y",
                size: c[4].to_owned(),
            }
        })
        .collect()
}

fn check(reg: &Registry, r: &Row) -> Vec<String> {
    let m = reg.lookup(&r.id);
    let mut bad = Vec::new();
    if m.family != r.family {
        bad.push(format!("family {} (want {})", m.family, r.family));
    }
    let params_ok = match (m.params_b, r.params) {
        (Some(a), Some(b)) => (a - b).abs() < 0.01 * b.max(1.0),
        (None, None) => true,
        _ => false,
    };
    if !params_ok {
        bad.push(format!("params {:?} (want {:?})", m.params_b, r.params));
    }
    if m.capabilities.native_tools != r.native {
        bad.push(format!(
            "native {} (want {})",
            m.capabilities.native_tools, r.native
        ));
    }
    if m.size_class.name() != r.size {
        bad.push(format!("size {} (want {})", m.size_class, r.size));
    }
    bad
}

#[test]
fn at_least_95_percent_of_real_ids() {
    let reg = Registry::builtin();
    let rows = rows();
    assert!(rows.len() >= 200, "only {} ids", rows.len());
    let mut wrong = Vec::new();
    for r in &rows {
        let bad = check(&reg, r);
        if !bad.is_empty() {
            wrong.push(format!("{}: {}", r.id, bad.join(", ")));
        }
    }
    let ok = rows.len() - wrong.len();
    let share = ok as f64 / rows.len() as f64;
    eprintln!(
        "registry: {ok}/{} ids right ({:.1} %)\n{}",
        rows.len(),
        share * 100.0,
        wrong.join("\n")
    );
    assert!(share >= 0.95, "{:.1} % right", share * 100.0);
}

#[test]
fn the_four_ids_the_seed_gets_wrong() {
    let reg = Registry::builtin();
    let rows = rows();
    for id in [
        "gpt-4o",
        "qwen3-coder-30b",
        "gpt-oss-20b",
        "claude-sonnet-4-20250514",
    ] {
        let r = rows.iter().find(|r| r.id == id).expect("id in the list");
        assert_eq!(check(&reg, r), Vec::<String>::new(), "{id}");
    }
}

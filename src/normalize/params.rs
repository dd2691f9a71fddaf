//! Parameter-name resolution: a key the model wrote → the declared
//! property it meant (case and separators, then one edit when unique).

use serde_json::{Map, Value};

use super::names::{distance, fold};

/// The declared property `key` stands for, if there is exactly one and it
/// is not `taken` already: first by case and separators (`City`,
/// `file-path` for `file_path`, `filePath`), then by one edit (`ciy`).
pub(crate) fn resolve(
    key: &str,
    props: &Map<String, Value>,
    taken: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let folded = fold(key);
    let pick = |pred: &dyn Fn(&str) -> bool| -> Option<String> {
        let mut hit = None;
        for p in props.keys() {
            if pred(p) {
                if hit.is_some() {
                    return None;
                }
                hit = Some(p);
            }
        }
        hit.filter(|p| !taken(p)).cloned()
    };
    if !folded.is_empty() {
        if let Some(p) = pick(&|p| super::names::folds_to(p, &folded)) {
            return Some(p);
        }
    }
    if folded.chars().count() >= 3 {
        return pick(&|p| distance(&folded, &fold(p), 1).is_some());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props() -> Map<String, Value> {
        json!({"file_path": {}, "old_string": {}, "new_string": {}, "limit": {}, "city": {}})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn case_separators_and_one_edit() {
        let none = |_: &str| false;
        for (k, want) in [
            ("filePath", "file_path"),
            ("File-Path", "file_path"),
            ("FILE_PATH", "file_path"),
            ("limt", "limit"),
            ("ciy", "city"),
        ] {
            assert_eq!(resolve(k, &props(), &none).as_deref(), Some(want), "{k}");
        }
    }

    #[test]
    fn ambiguous_far_or_taken_stays_unresolved() {
        let none = |_: &str| false;
        // One edit from two properties: no guess.
        let two = json!({"limit": {}, "limits": {}})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(resolve("limitz", &two, &none), None);
        assert_eq!(resolve("unrelated", &props(), &none), None);
        assert_eq!(resolve("City", &props(), &|p| p == "city"), None);
        assert_eq!(
            resolve("ab", &json!({"ac": {}}).as_object().unwrap().clone(), &none),
            None
        );
    }
}

//! StepFun Step-3 `steptml`.

use crate::common::check_all;
use crate::util::{args, auto, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect};

const CATALOGUE: &str = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";

#[test]
fn catalogue_example() {
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::Step3]),
    ] {
        let p = check_all(CATALOGUE.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(p.calls[0].arguments, r#"{"city": "Paris"}"#);
        assert!(p.calls[0].repairs.is_empty());
        assert!(!p.calls[0].truncated);
        assert_eq!(p.text, "");
    }
}

#[test]
fn parallel_calls_typed() {
    let input = "Sure.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Paris</steptml:parameter><steptml:parameter name=\"days\">3</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">42</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"city": "Paris", "days": 3}));
    assert_eq!(args(&p, 1), json!({"city": "42"}));
    assert_eq!(p.text, "Sure.");
}

#[test]
fn truncated_variants() {
    let p = check_all(
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"q\">hel".as_bytes(),
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"q": "hel"}));
    for k in 0..CATALOGUE.len() {
        if CATALOGUE.is_char_boundary(k) {
            check_all(&CATALOGUE.as_bytes()[..k], &auto());
        }
    }
}

#[test]
fn garbage_in_the_section_is_text() {
    let input = "<｜tool_calls_begin｜>nothing here".as_bytes();
    let p = check_all(input, &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text.as_bytes(), input);
}

#[test]
fn delimiters_inside_values() {
    let input = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"write\"><steptml:parameter name=\"body\">a</steptml:parameter>b <｜tool_calls_end｜> c</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"body": "a</steptml:parameter>b <｜tool_calls_end｜> c"})
    );
    // A missing `</steptml:parameter>` before `</steptml:invoke>`.
    let p = check_all(
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"q\">x</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>".as_bytes(),
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"q": "x"}));
    assert!(!p.calls[0].truncated);
}

#[test]
fn split_inside_every_special_token() {
    // Every two-chunk split, including inside each three-byte `｜`.
    let input = CATALOGUE.as_bytes();
    let cfg = auto();
    let want = crate::common::summary(&crate::common::run_split(input, &[], &cfg));
    for k in 1..input.len() {
        let ev = crate::common::run_split(input, &[k], &cfg);
        crate::common::check_contracts(input, &ev);
        assert_eq!(crate::common::summary(&ev), want, "split at {k}");
    }
}

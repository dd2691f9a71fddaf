//! DeepSeek V3.2 / V4 DSML.

use crate::common::{check_all, run_split, summary};
use crate::util::{args, auto, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect};

const V32: &str = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";

#[test]
fn catalogue_example() {
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::DeepSeekDsml]),
    ] {
        let p = check_all(V32.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(p.calls[0].arguments, r#"{"city": "Paris"}"#);
        assert!(p.calls[0].repairs.is_empty());
    }
}

#[test]
fn string_attribute_types_values() {
    let input = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"s\" string=\"true\">42</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">42</｜DSML｜parameter>\n<｜DSML｜parameter name=\"o\" string=\"false\">{\"a\": [1, 2]}</｜DSML｜parameter>\n<｜DSML｜parameter name=\"r\" string=\"false\">{'a': True,}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p, 0),
        json!({"s": "42", "n": 42, "o": {"a": [1, 2]}, "r": {"a": true}})
    );
    assert!(
        !p.calls[0].repairs.is_empty(),
        "the Python-style object was repaired"
    );
}

#[test]
fn parallel_invokes_and_schema() {
    let input = "Checking.<｜DSML｜function_calls><｜DSML｜invoke name=\"get_weather\"><｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter><｜DSML｜parameter name=\"days\" string=\"false\">2</｜DSML｜parameter></｜DSML｜invoke><｜DSML｜invoke name=\"get_weather\"><｜DSML｜parameter name=\"city\" string=\"true\">Rome</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>";
    let p = check_all(input.as_bytes(), &weather_tools());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"city": "Paris", "days": 2}));
    assert_eq!(args(&p, 1), json!({"city": "Rome"}));
    assert_eq!(p.text, "Checking.");
}

#[test]
fn split_inside_the_full_width_bar() {
    // Every split point, including the three bytes of each `｜`.
    let input = V32.as_bytes();
    let want = summary(&run_split(input, &[], &auto()));
    for k in 1..input.len() {
        let got = summary(&run_split(input, &[k], &auto()));
        assert_eq!(got, want, "split at {k}");
    }
}

#[test]
fn truncated_and_literal_close() {
    let p = check_all(
        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"code\" string=\"true\">a</｜DSML｜parameter>b".as_bytes(),
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"code": "a</｜DSML｜parameter>b"}));
    for k in 0..V32.len() {
        if V32.is_char_boundary(k) {
            check_all(&V32.as_bytes()[..k], &auto());
        }
    }
}

#[test]
fn string_values_stream() {
    let p = toolstream::Parsed::from_events(crate::common::run_chunked(V32.as_bytes(), 1, &auto()));
    let d = crate::util::deltas(&p, 0);
    assert_eq!(d.concat(), r#"{"city": "Paris"}"#);
    assert!(d.iter().any(|x| x == "a"), "{d:?}");
}

#[test]
fn ascii_bars_and_an_invoke_without_its_container() {
    // Outputs that went through rendered text write ASCII bars; some drop
    // the `function_calls` container. Each spelling, in any mix, is a call.
    let bare = "<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>";
    let ascii = V32.replace('｜', "|");
    let ascii_bare = bare.replace('｜', "|");
    let spaced_bare = bare.replace("｜DSML｜", "｜DSML｜ ");
    let mixed = "<|DSML|function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<|DSML|parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</|DSML|invoke>\n</｜DSML｜function_calls>";
    let dsml = Config::default().with_dialects(vec![Dialect::DeepSeekDsml]);
    for input in [
        ascii.as_str(),
        bare,
        ascii_bare.as_str(),
        spaced_bare.as_str(),
        mixed,
    ] {
        let text = format!("Checking.\n{input}\nDone.");
        for cfg in [auto(), dsml.clone()] {
            let p = check_all(text.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input}");
            assert_eq!(p.calls[0].name, "get_weather", "{input}");
            assert_eq!(args(&p, 0), json!({"city": "Paris"}), "{input}");
            assert!(p.calls[0].repairs.is_empty(), "{input}");
            assert_eq!(p.text, "Checking.\n\nDone.", "{input}");
        }
        // Every split point, inside the bars and the markers included.
        let b = text.as_bytes();
        let want = summary(&run_split(b, &[], &auto()));
        for k in 1..b.len() {
            assert_eq!(summary(&run_split(b, &[k], &auto())), want, "split at {k}");
        }
    }
    // Two bare invokes in a row are two calls.
    let two = format!("{ascii_bare}\n{bare}");
    let p = check_all(two.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 2);
}

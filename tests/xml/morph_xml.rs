//! AI SDK morph-xml (known tools only).

use crate::common::check_all;
use crate::util::{args, auto, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect};

const CATALOGUE: &str = "<get_weather>\n  <city>Paris</city>\n  <days>3</days>\n</get_weather>";

#[test]
fn catalogue_example_with_known_tools() {
    for cfg in [
        weather_tools(),
        weather_tools().with_dialects(vec![Dialect::MorphXml]),
    ] {
        let p = check_all(CATALOGUE.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(p.calls[0].arguments, r#"{"city": "Paris", "days": 3}"#);
        assert!(p.calls[0].repairs.is_empty());
    }
}

#[test]
fn unknown_tools_are_text() {
    let p = check_all(CATALOGUE.as_bytes(), &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, CATALOGUE);
    let p = check_all(
        CATALOGUE.as_bytes(),
        &Config::default().with_dialects(vec![Dialect::MorphXml]),
    );
    assert!(p.calls.is_empty());
    let html = b"<div><p>Hello <b>world</b></p><get_time>now</get_time></div>";
    let p = check_all(html, &weather_tools());
    assert!(p.calls.is_empty());
    assert_eq!(p.text.as_bytes(), html);
}

#[test]
fn prose_after_the_tag_is_text() {
    let input = b"Call <get_weather> with a city.";
    let p = check_all(input, &weather_tools());
    assert!(p.calls.is_empty());
    assert_eq!(p.text.as_bytes(), input);
}

#[test]
fn parallel_and_truncated() {
    let p = check_all(
        b"<get_weather><city>Paris</city></get_weather>\n<set_flag><on>yes</on><tags>[\"a\"]</tags></set_flag>",
        &weather_tools(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 1), json!({"on": "yes", "tags": ["a"]}));
    let p = check_all(
        b"<write_file><path>a.txt</path><content>hello",
        &weather_tools(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"path": "a.txt", "content": "hello"}));
    for k in 0..CATALOGUE.len() {
        check_all(&CATALOGUE.as_bytes()[..k], &weather_tools());
    }
}

#[test]
fn literal_closing_tags_in_values() {
    let p = check_all(
        b"<write_file><path>x.html</path><content><p>a</content> b</p></content></write_file>",
        &weather_tools(),
    );
    assert_eq!(
        args(&p, 0),
        json!({"path": "x.html", "content": "<p>a</content> b</p>"})
    );
}

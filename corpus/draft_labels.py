#!/usr/bin/env python3
"""Draft labels for corpus/expected.jsonl (a helper, NOT the labeller).

Reads corpus/real/*.jsonl and prints one draft label per entry, applying the
rules of corpus/POLICY.md mechanically. Every draft was then read against the
entry's text by a person and corrected by hand; expected.jsonl is that
reviewed result, not this script's output. Do not use this script as an
oracle for toolstream: it is deliberately simple and is wrong on some entries
(that is what the review fixed).

  corpus/.venv/bin/python corpus/draft_labels.py > /tmp/expected.draft.jsonl
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

ARG_KEYS = ("arguments", "parameters", "args", "input")
# names copied from the format examples in the prompts (POLICY P5)
PLACEHOLDER_NAMES = {
    "tool_name", "TOOL_NAME", "func_name1", "func_name2", "first_tool", "second_tool",
    "<function-name>", "<function name>", "function name", "function_name", "<tool name>",
}


class Partial:
    """Lenient JSON / Python-literal reader that tolerates truncation at EOF."""

    def __init__(self, s, i):
        self.s, self.i, self.truncated = s, i, False

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1

    def eof(self):
        return self.i >= len(self.s)

    def value(self):
        self.ws()
        if self.eof():
            self.truncated = True
            return None
        c = self.s[self.i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "\"'":
            return self.string()
        m = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?").match(self.s, self.i)
        if m:
            self.i = m.end()
            t = m.group(0)
            return float(t) if any(ch in t for ch in ".eE") else int(t)
        for lit, v in (("true", True), ("false", False), ("null", None), ("True", True), ("False", False), ("None", None)):
            if self.s.startswith(lit, self.i):
                self.i += len(lit)
                return v
        raise ValueError(f"bad value at {self.i}")

    def string(self):
        q = self.s[self.i]
        self.i += 1
        out = []
        while True:
            if self.eof():
                self.truncated = True
                return "".join(out)
            c = self.s[self.i]
            if c == "\\":
                if self.i + 1 >= len(self.s):
                    self.i += 1
                    self.truncated = True
                    return "".join(out)
                e = self.s[self.i + 1]
                if e == "u":
                    h = self.s[self.i + 2 : self.i + 6]
                    if len(h) < 4:
                        self.i = len(self.s)
                        self.truncated = True
                        return "".join(out)
                    out.append(chr(int(h, 16)))
                    self.i += 6
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(e, e))
                self.i += 2
                continue
            if c == q:
                self.i += 1
                return "".join(out)
            out.append(c)
            self.i += 1

    def obj(self):
        self.i += 1
        out = {}
        while True:
            self.ws()
            if self.eof():
                self.truncated = True
                return out
            if self.s[self.i] == "}":
                self.i += 1
                return out
            if self.s[self.i] == ",":
                self.i += 1
                continue
            if self.s[self.i] in "\"'":
                k = self.string()
            else:
                m = re.compile(r"[A-Za-z_][\w-]*").match(self.s, self.i)
                if not m:
                    raise ValueError("bad key")
                k = m.group(0)
                self.i = m.end()
            if self.truncated:
                return out  # key cut off: dropped
            self.ws()
            if self.eof():
                self.truncated = True
                return out  # key with no colon: dropped
            if self.s[self.i] != ":":
                raise ValueError("no colon")
            self.i += 1
            self.ws()
            if self.eof():
                self.truncated = True
                out[k] = None  # cut right after the colon: null
                return out
            out[k] = self.value()
            if self.truncated:
                if k in ("name", "tool", "tool_name", "function") and isinstance(out[k], str):
                    out["__name_cut__"] = True  # P4: a cut name is no name
                return out
            self.ws()
            if not self.eof() and self.s[self.i] not in ",}":
                return out  # left unclosed before other text: closed after the last member

    def arr(self):
        self.i += 1
        out = []
        while True:
            self.ws()
            if self.eof():
                self.truncated = True
                return out
            if self.s[self.i] == "]":
                self.i += 1
                return out
            if self.s[self.i] == ",":
                self.i += 1
                continue
            out.append(self.value())
            if self.truncated:
                return out


def call_from_obj(o, truncated):
    if not isinstance(o, dict) or o.get("__name_cut__"):
        return None
    name = o.get("name")
    if not isinstance(name, str):
        for k in ("tool", "tool_name", "function"):
            if isinstance(o.get(k), str):
                name = o[k]
                break
    if not isinstance(name, str) or name in PLACEHOLDER_NAMES or not name:
        return None
    if truncated and set(o) <= {"name", *ARG_KEYS} and all(o.get(k) is None for k in ARG_KEYS):
        return {"name": name, "arguments": {}, "_truncated": truncated}  # P4: arguments not begun
    for k in ARG_KEYS:
        if k in o:
            a = o[k]
            if isinstance(a, str):
                try:
                    a = json.loads(a)
                except ValueError:
                    return None
            if not isinstance(a, dict):
                return None
            props = a.get("properties")
            if isinstance(props, dict) and props and all(isinstance(v, dict) and "type" in v for v in props.values()):
                return None  # schema echo (P8)
            if "description" in o and ("properties" in a or "type" in a):
                return None  # schema echo (P8)
            return {"name": name, "arguments": a, "_truncated": truncated}
    return None


def calls_in_value(v, truncated):
    out = []
    c = call_from_obj(v, truncated)
    if c:
        return [c]
    if isinstance(v, list):
        for x in v:
            out += calls_in_value(x, truncated)
    elif isinstance(v, dict):
        for k in ("tool_calls", "function_call", "function", "tool_call"):
            if k in v and isinstance(v[k], (list, dict)):
                out += calls_in_value(v[k], truncated)
    return out


def json_calls(text):
    found = []
    i = 0
    while i < len(text):
        if text[i] in "{[":
            p = Partial(text, i)
            try:
                v = p.value()
            except (ValueError, IndexError):
                i += 1
                continue
            cs = calls_in_value(v, p.truncated)
            if cs:
                for c in cs:
                    found.append((i, c))
                i = max(p.i, i + 1)
                continue
        i += 1
    return found


PY_CALL = re.compile(r"([A-Za-z_][\w\.]*)\(")


def py_calls(text, tool_names):
    found = []
    for m in PY_CALL.finditer(text):
        name = m.group(1)
        before = text[: m.start()].rstrip()
        bracketed = before.endswith("[") or before.endswith(",")
        if not bracketed and name not in tool_names:
            continue
        p = Partial(text, m.end())
        args, ok = {}, True
        while True:
            p.ws()
            if p.eof():
                p.truncated = True
                break
            if text[p.i] == ")":
                p.i += 1
                break
            if text[p.i] == ",":
                p.i += 1
                continue
            km = re.compile(r"([A-Za-z_]\w*)\s*=\s*").match(text, p.i)
            if not km:
                ok = False
                break
            p.i = km.end()
            try:
                args[km.group(1)] = p.value()
            except ValueError:
                ok = False
                break
            if p.truncated:
                break
        if ok:
            found.append((m.start(), {"name": name, "arguments": args, "_truncated": p.truncated}))
    return found


XML_CALL = re.compile(
    r"<tool_call>\s*<name>(.*?)</name>(.*?)(?=<tool_call>|$)", re.S
)
XML_ARGS = re.compile(r"<(arguments|parameters|args|input)>(.*?)(?:</\1>|$)", re.S)
XML_ARG = re.compile(r"<([A-Za-z_][\w-]*)>(.*?)</\1>", re.S)


def xml_value(v):
    v = v.strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", v):
        return float(v) if "." in v else int(v)
    if v in ("true", "false"):
        return v == "true"
    return v


def xml_calls(text):
    found = []
    for m in XML_CALL.finditer(text):
        name = m.group(1).strip()
        if not name or name in PLACEHOLDER_NAMES:
            continue
        args = {}
        body = XML_ARGS.search(m.group(2) or "")
        for a in XML_ARG.finditer(body.group(2) if body else ""):
            args[a.group(1)] = xml_value(a.group(2))
        found.append((m.start(), {"name": name, "arguments": args, "_truncated": False}))
    return found


def draft(entry):
    text = re.sub(r"<think>.*?(</think>|$)", "", entry["text"], flags=re.S)
    names = {t["function"]["name"] for t in entry["tools"]}
    found = json_calls(text) + py_calls(text, names) + xml_calls(text)
    found.sort(key=lambda x: x[0])
    calls = [{"name": c["name"], "arguments": c["arguments"]} for _, c in found]
    trunc = any(c["_truncated"] for _, c in found)
    return {"id": entry["id"], "calls": calls, "policy": [], "note": "DRAFT" + (" truncated" if trunc else "")}


def main():
    files = sys.argv[1:] or sorted(str(p) for p in (HERE / "real").glob("*.jsonl"))
    for f in files:
        for line in open(f, encoding="utf-8"):
            print(json.dumps(draft(json.loads(line)), ensure_ascii=False))


if __name__ == "__main__":
    main()

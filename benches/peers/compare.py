#!/usr/bin/env python3
"""Side-by-side comparison of toolstream with the installable peer parsers and JSON repairers.

    python3 benches/peers/compare.py            # from the repository root; writes BENCHMARKS.md

One run drives the same inputs through toolstream and through every peer, then writes
BENCHMARKS.md (tables + ratios) and target/peers/results.json (every raw measurement).
Python 3.11, standard library only. Nothing is wired into CI. Takes 10-20 minutes on 2 cores.

What it does
  1. Installs the peers when missing: `LITE=1 bash ../shared/peers/reinstall.sh` with
     PEERS_VENV=target/peers/venv and PEERS_NODE_DIR=target/peers/node (PyPI + npm only).
  2. Builds `toolstream` (cargo build --release --features cli --bin toolstream).
  3. Starts three long-lived workers, so process start-up is never measured:
       * `toolstream harness --serve` (src/bin/toolstream/harness.rs),
       * benches/peers/py_worker.py in the peers' venv: runs the Python harnesses of
         ../shared/peers unchanged, in-process (runpy), libraries imported once,
       * benches/peers/node_worker.mjs: the same library calls as the Node harnesses, with their
         shared helpers; checked here against the real harness processes on a few inputs.
     Every timing is the harness's in-process timing_ms.parse_median over --repeat K runs (K
     chosen so one synthetic measurement lasts ~0.3 s and one corpus measurement ~5 ms; slow cases
     run once; cheap synthetic cases are measured in ROUNDS interleaved rounds, median kept). The timed unit is the same
     everywhere: chunks are cut before timing; a new parser, every chunk fed, end-of-stream
     flush, result accumulated.
  4. Measures correctness on corpus/real (labels: corpus/expected.jsonl) and on the public BFCL
     rows (../shared/corpus/public, scored with ../shared/tools/bfcl_check.py), and speed on
     synthetic Hermes calls with a 10 KB .. 1 MB string argument, whole and in 4/16/64-byte chunks.
  5. Counts toolstream's instructions on the synthetic Hermes inputs with callgrind (when valgrind
     is installed), for a scaling exponent free of the machine's timing noise.
  A peer case that cannot finish within BUDGET_S seconds is reported as "> budget": it is either
  killed at the budget, or not started when a linear lower bound from the previous size (10x
  the size costs at least ~10x the time) already exceeds the budget. Nothing is dropped silently.

Options: --quick (small subset, for trying the script), --budget SECONDS (default 15),
         --out FILE (default BENCHMARKS.md).
"""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import math
import os
import platform
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
PEERS = os.path.join(SHARED, "peers")
TARGET = os.path.join(ROOT, "target", "peers")
VENV = os.path.join(TARGET, "venv")
NODE_DIR = os.path.join(TARGET, "node")
VPY = os.path.join(VENV, "bin", "python")
TOOLSTREAM = os.path.join(ROOT, "target", "release", "toolstream")
CHUNKS = [0, 4, 16, 64]  # 0 = whole
COMMAND = "python3 benches/peers/compare.py"


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# setup


def ensure_peers():
    ok = os.path.exists(VPY) and os.path.isdir(os.path.join(NODE_DIR, "node_modules", "@ai-sdk-tool"))
    if ok:
        r = subprocess.run([VPY, "-c", "import json_repair, partial_json_parser, agent_tool_parser, llm_router_utils"],
                           capture_output=True)
        ok = r.returncode == 0
    if ok:
        return
    log("installing the peers (LITE=1 reinstall.sh) into target/peers/ ...")
    env = dict(os.environ, PEERS_VENV=VENV, PEERS_NODE_DIR=NODE_DIR, LITE="1")
    os.makedirs(TARGET, exist_ok=True)
    with open(os.path.join(TARGET, "install.log"), "w") as f:
        subprocess.run(["bash", os.path.join(PEERS, "reinstall.sh")], cwd=ROOT, env=env, stdout=f,
                       stderr=subprocess.STDOUT, check=True)


def build_toolstream():
    log("cargo build --release --features cli --bin toolstream")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--features", "cli", "--bin", "toolstream"],
                   cwd=ROOT, check=True)


class Budget(Exception):
    pass


class Worker:
    """A long-lived JSON-lines worker process; one request at a time, with a time limit."""

    def __init__(self, name, argv, env=None):
        self.name, self.argv, self.env = name, argv, env
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
                                     env=self.env, cwd=ROOT, bufsize=1)
        self.q = q = queue.Queue()
        proc = self.proc

        def pump():  # bound to this process and its queue (a killed worker's EOF stays in its own)
            for line in proc.stdout:
                q.put(line)
            q.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def ask(self, req, timeout):
        self.proc.stdin.write(json.dumps(req, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        try:
            line = self.q.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            self.proc.wait()
            self.start()
            raise Budget()
        if line is None:
            self.proc.kill()
            self.proc.wait()
            self.start()
            return {"harness_error": f"{self.name} worker died"}
        return json.loads(line)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()


class Peers:
    def __init__(self, budget):
        self.budget = budget
        self.ts = Worker("toolstream", [TOOLSTREAM, "harness", "--serve"])
        self.py = Worker("python", [VPY, os.path.join(ROOT, "benches", "peers", "py_worker.py"), PEERS])
        self.node = Worker("node", ["node", os.path.join(ROOT, "benches", "peers", "node_worker.mjs"), PEERS],
                           env=dict(os.environ, PEERS_NODE_DIR=NODE_DIR))
        self.tmp = tempfile.mkdtemp(prefix="peers-", dir=TARGET)
        self._tools_files = {}

    def tools_file(self, tools):
        key = json.dumps(tools, sort_keys=True)
        if key not in self._tools_files:
            path = os.path.join(self.tmp, f"tools{len(self._tools_files)}.json")
            with open(path, "w") as f:
                f.write(key)
            self._tools_files[key] = path
        return self._tools_files[key]

    def close(self):
        for w in (self.ts, self.py, self.node):
            w.close()


# --------------------------------------------------------------------------------------------
# tools: one function per (tool, configuration) -> harness JSON object


def openai_tools(tools):
    """OpenAI-format tool list from an OpenAI or BFCL list."""
    out = []
    for t in tools or []:
        if "function" in t:
            out.append(t)
        else:
            fn = dict(t)
            params = fn.get("parameters") or {"type": "object", "properties": {}}
            if params.get("type") == "dict":
                params = dict(params, type="object")
            fn["parameters"] = params
            out.append({"type": "function", "function": fn})
    return out


def run_tool(P: Peers, tool, text, chunk, repeat, opts, timeout):
    """Runs one tool on one input; returns the harness object (raises Budget)."""
    if tool == "toolstream":
        req = {"input": text, "chunk": chunk, "repeat": repeat, "dialect": opts.get("dialect", "auto"),
               "tools": opts.get("tools")}
        r = P.ts.ask(req, timeout)
        r = r if "harness_error" in r else {"out": r}
    elif tool == "sglang":
        argv = ["--parser", opts["parser"], "--repeat", repeat]
        if chunk:
            argv += ["--chunk", chunk]
        if opts.get("tools"):
            argv += ["--tools", P.tools_file(openai_tools(opts["tools"]))]
        elif opts.get("tool_names"):
            argv += ["--tool-names", opts["tool_names"]]
        r = P.py.ask({"harness": "py_llm_router_utils.py", "argv": argv, "input": text}, timeout)
    elif tool == "agent-tool-parser":
        argv = ["--repeat", repeat] + (["--chunk", chunk] if chunk else [])
        r = P.py.ask({"harness": "py_agent_tool_parser.py", "argv": argv, "input": text}, timeout)
    elif tool in ("json-repair", "partial-json-parser"):
        h = "py_json_repair.py" if tool == "json-repair" else "py_partial_json_parser.py"
        argv = ["--repeat", repeat] + (["--chunk", chunk] if chunk else [])
        r = P.py.ask({"harness": h, "argv": argv, "input": text}, timeout)
    elif tool == "ai-sdk":
        req = {"harness": "js_ai_sdk_tool_parser.mjs", "input": text, "chunk": chunk, "repeat": repeat,
               "protocol": opts.get("protocol", "hermes"), "start": opts.get("start", ""),
               "end": opts.get("end", ""), "tools": openai_tools(opts.get("tools"))}
        r = P.node.ask(req, timeout)
    elif tool in ("jsonrepair", "partial-json"):
        h = "js_jsonrepair.mjs" if tool == "jsonrepair" else "js_partial_json.mjs"
        r = P.node.ask({"harness": h, "input": text, "chunk": chunk, "repeat": repeat}, timeout)
    else:
        raise ValueError(tool)
    if "out" not in r:
        return {"ok": False, "harness_error": r.get("harness_error"), "timing_ms": {}}
    return r["out"]


# Runs per corpus case for its time: the median of these. A single run of a few hundred bytes mostly
# measures the caches the previous tool's process left cold (toolstream measured 3-4x slower on its
# first run of an entry than on the second), so every tool gets warm runs: at least CORPUS_REPEAT,
# and as many as make about CORPUS_TARGET_MS of runs (judged by the correctness run's time), so that
# each tool is measured for about the same time whatever its speed. Five runs were 30 us of work
# for toolstream and 1 ms for SGLang; on 56 entries in 16-byte chunks the time-based count moved
# toolstream's total from 0.453 to 0.397 ms and SGLang's from 51.6 to 51.7 ms.
CORPUS_REPEAT = 5
CORPUS_TARGET_MS = 5.0
CORPUS_MAX_REPEAT = 2000
# Synthetic cases whose measurement (all its runs) took less than ROUND_CAP_MS are measured in
# ROUNDS interleaved rounds (see run_synthetic).
ROUNDS = 3
ROUND_CAP_MS = 2000


def corpus_ms(P, tool, text, chunk, opts, timeout, first):
    """Time of one corpus case: the median of K warm runs (CORPUS_REPEAT or more: see above), or
    the single run `first` when that run timed out or was slow enough that repeating it would not
    fit the time limit."""
    t1 = (first.get("timing_ms") or {}).get("parse_last")
    if first.get("timeout") or t1 is None or t1 * CORPUS_REPEAT * 4 > timeout * 1000:
        return t1 or 0.0
    k = max(CORPUS_REPEAT, min(CORPUS_MAX_REPEAT, math.ceil(CORPUS_TARGET_MS / max(t1, 1e-3))))
    try:
        o = run_tool(P, tool, text, chunk, k, opts, timeout)
    except Budget:
        return t1
    return (o.get("timing_ms") or {}).get("parse_median") or t1


def run_safe(P, tool, text, chunk, opts, timeout):
    """run_tool for the correctness runs: a case over the time limit gives no calls, counted apart."""
    try:
        return run_tool(P, tool, text, chunk, 1, opts, timeout)
    except Budget:
        return {"ok": False, "timeout": True, "timing_ms": {"parse_last": timeout * 1000}}


TOOL_PARSERS = ["toolstream", "sglang", "agent-tool-parser", "ai-sdk"]
REPAIRERS = ["json-repair", "jsonrepair", "partial-json-parser", "partial-json"]
LABEL = {
    "toolstream": "toolstream",
    "toolstream-json": "toolstream (JSON part only)",
    "sglang": "SGLang parsers (llm-router-utils)",
    "agent-tool-parser": "agent-tool-parser",
    "ai-sdk": "@ai-sdk-tool/parser",
    "json-repair": "json-repair (PyPI)",
    "jsonrepair": "jsonrepair (npm)",
    "partial-json-parser": "partial-json-parser (PyPI)",
    "partial-json": "partial-json (npm)",
}


# --------------------------------------------------------------------------------------------
# turning results into calls


def canon(v):
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def calls_of_tool_parser(out):
    """[{name, arguments}] from a tool-call parser's harness result."""
    res = out.get("result")
    if not out.get("ok") or res is None:
        return []
    items = res if isinstance(res, list) else res.get("tool_calls") or []
    calls = []
    for c in items:
        args = c.get("arguments")
        if args is None and isinstance(c.get("arguments_raw"), str):
            try:
                args = json.loads(c["arguments_raw"])
            except Exception:  # noqa: BLE001
                args = c["arguments_raw"]
        calls.append({"name": c.get("name"), "arguments": args if args is not None else {}})
    return calls


NAME_KEYS = ("name", "tool", "tool_name", "function")
ARG_KEYS = ("arguments", "parameters", "args", "input")


def calls_from_value(v):
    """What a JSON-repairer user does with the repaired value: an object with a name key and an
    arguments key (or a list of them) is a call; a stringified arguments value is decoded."""
    out = []
    for item in v if isinstance(v, list) else [v]:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("function"), dict) and "name" in item["function"]:
            item = item["function"]
        name = next((item[k] for k in NAME_KEYS if isinstance(item.get(k), str)), None)
        if name is None:
            continue
        args = next((item[k] for k in ARG_KEYS if k in item), {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except Exception:  # noqa: BLE001
                pass
        out.append({"name": name, "arguments": args})
    return out


FENCE = re.compile(r"```[a-zA-Z_]*\n?(.*?)(?:```|\Z)", re.S)


def json_segments(text, style, model):
    """The JSON-ish part(s) a user of a JSON repairer would hand it (see BENCHMARKS.md)."""
    if style in ("hermes", "tool_use") or (style == "native_template" and model.startswith("smollm2")):
        tag = "tool_use" if style == "tool_use" else "tool_call"
        segs = re.findall(rf"<{tag}>(.*?)(?:</{tag}>|\Z)", text, re.S)
        return [s for s in segs if s.strip()]
    if style == "json_fenced":
        segs = [s for s in FENCE.findall(text) if s.strip()]
        if segs:
            return segs
    if style in ("json_fenced", "json_bare", "json_parallel", "native_template"):
        m = re.search(r"[\[{]", text)
        return [text[m.start():]] if m else []
    return []  # xml, pythonic: no JSON to repair


# --------------------------------------------------------------------------------------------
# measurement helpers


def measure(P, tool, text, chunk, opts, budget, target_s=0.3, max_k=10000):
    """One timed measurement: a cold run, then K warm runs if cheap. Returns the harness object
    plus 'ms' (median) or raises Budget. K makes the warm runs last about `target_s`: a cap of
    15 runs left the microsecond cases (toolstream on 10 KB) a median of 15 timer-sized samples,
    and the fitted exponents moved by 0.2 from run to run."""
    first = run_tool(P, tool, text, chunk, 1, opts, budget)
    t1 = (first.get("timing_ms") or {}).get("parse_last")
    if t1 is None:
        first["ms"] = None
        return first
    if t1 / 1000 < target_s / 3:
        k = max(3, min(max_k, int(target_s * 1000 / max(t1, 1e-3))))
        again = run_tool(P, tool, text, chunk, k, opts, budget)
        if again.get("timing_ms", {}).get("parse_median") is not None:
            again["ms"] = again["timing_ms"]["parse_median"]
            return again
    first["ms"] = t1
    return first


def slope(points):
    """Least-squares slope of log(time) against log(size)."""
    pts = [(math.log(s), math.log(t)) for s, t in points if t and t > 0]
    if len(pts) < 2:
        return None
    mx = statistics.mean(p[0] for p in pts)
    my = statistics.mean(p[1] for p in pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den


# --------------------------------------------------------------------------------------------
# corpus


def corpus_plan(entry):
    """Which configuration of each tool reads this entry (documented in BENCHMARKS.md)."""
    style, model = entry["prompt_style"], entry["id"].split("-")[0]
    tools = entry["tools"]
    smol_native = style == "native_template" and model == "smollm2"
    # SGLang's parser for the prompt, and toolstream's dialect for the same prompt (`tool_use` blocks
    # are a variant of Hermes's tags; SGLang has no detector for the XML prompt's `<tool_call><name>…`,
    # which toolstream reads as its XML emulation).
    if style == "pythonic":
        sg, ts_dialect = "pythonic", "pythonic"
    elif style in ("hermes", "xml", "tool_use") or smol_native:
        sg, ts_dialect = "hermes", "xml" if style == "xml" else "hermes"
    else:  # json_fenced, json_bare, json_parallel, Gemma native (bare {"name", "parameters"})
        sg, ts_dialect = "llama3", "json"
    ai = {"protocol": "hermes", "tools": tools}
    if style == "tool_use":
        ai.update(start="<tool_use>", end="</tool_use>")
    return {
        "toolstream": {"tools": tools},
        "toolstream-notools": {},
        "toolstream-dialect": {"tools": tools, "dialect": ts_dialect},
        "sglang": {"parser": sg, "tools": tools},
        "agent-tool-parser": {},
        "ai-sdk": ai,
    }


def ms_at(stats, ch):
    """A tool's corpus time at chunking `ch`: keyed by int while measuring, by str once read back
    from results.json."""
    return stats["time_ms"].get(ch, stats["time_ms"].get(str(ch)))


def match_count(got, want):
    """Labelled calls found in got (each got call used once), and extra got calls."""
    pool = [canon(c) for c in got]
    found = 0
    for w in want:
        k = canon({"name": w["name"], "arguments": w["arguments"]})
        if k in pool:
            pool.remove(k)
            found += 1
    return found, len(pool)


def run_corpus(P, args, results):
    sys.path.insert(0, PEERS)
    sys.dont_write_bytecode = True  # nothing written into ../shared
    from _common import chunk_text  # the cut every harness makes (toolstream's --chunk too)

    entries = []
    for f in sorted(os.listdir(os.path.join(ROOT, "corpus", "real"))):
        if f.endswith(".jsonl"):
            with open(os.path.join(ROOT, "corpus", "real", f)) as fh:
                entries += [json.loads(l) for l in fh if l.strip()]
    labels = {}
    with open(os.path.join(ROOT, "corpus", "expected.jsonl")) as fh:
        for l in fh:
            if l.strip():
                r = json.loads(l)
                labels[r["id"]] = [{"name": c["name"], "arguments": c["arguments"]} for c in r["calls"]]
    if args.quick:
        entries = entries[::7]
    tools = ["toolstream", "toolstream-notools", "toolstream-dialect", "sglang", "agent-tool-parser",
             "ai-sdk"] + REPAIRERS
    per = {t: {"expected": 0, "found": 0, "extra": 0, "exact": 0, "entries": 0, "errors": 0, "timeouts": 0,
               "agree": {c: 0 for c in CHUNKS[1:]}, "time_ms": {c: 0.0 for c in CHUNKS},
               "by_style": {}} for t in tools}
    # toolstream given only the JSON part, as the repairers are (same inputs, for the speed rows)
    per["toolstream-json"] = copy.deepcopy(per["json-repair"])
    rows = []
    t0 = time.time()
    for n, e in enumerate(entries):
        want = labels[e["id"]]
        plan = corpus_plan(e)
        style = e["prompt_style"]
        segs = json_segments(e["text"], style, e["id"])
        row = {"id": e["id"], "style": style, "label": want, "tools": {}, "bytes": len(e["text"].encode()),
               "chunks": {str(c): len(chunk_text(e["text"], c)) for c in CHUNKS}, "ms": {}}
        for tool in list(per):
            st = per[tool]
            by = st["by_style"].setdefault(style, {"expected": 0, "found": 0, "exact": 0, "entries": 0})
            got_by_chunk = {}
            for chunk in CHUNKS:
                if tool in REPAIRERS or tool == "toolstream-json":
                    calls, ms, err = [], 0.0, False
                    for s in segs:
                        real = "toolstream" if tool == "toolstream-json" else tool
                        o = run_safe(P, real, s, chunk, {}, args.case_timeout)
                        ms += corpus_ms(P, real, s, chunk, {}, args.case_timeout, o)
                        err |= "harness_error" in o
                        st["timeouts"] += int(bool(o.get("timeout")))
                        if real == "toolstream":
                            calls += calls_of_tool_parser(o)
                        elif o.get("ok"):
                            calls += calls_from_value(o.get("result"))
                else:
                    real = "toolstream" if tool.startswith("toolstream") else tool
                    o = run_safe(P, real, e["text"], chunk, plan[tool], args.case_timeout)
                    ms = corpus_ms(P, real, e["text"], chunk, plan[tool], args.case_timeout, o)
                    err = "harness_error" in o
                    st["timeouts"] += int(bool(o.get("timeout")))
                    calls = calls_of_tool_parser(o)
                st["errors"] += int(err)
                st["time_ms"][chunk] += ms
                row["ms"].setdefault(tool, {})[str(chunk)] = ms
                got_by_chunk[chunk] = calls
            whole = got_by_chunk[0]
            found, extra = match_count(whole, want)
            exact = found == len(want) and extra == 0
            st["expected"] += len(want)
            st["found"] += found
            st["extra"] += extra
            st["exact"] += int(exact)
            st["entries"] += 1
            by["expected"] += len(want)
            by["found"] += found
            by["exact"] += int(exact)
            by["entries"] += 1
            for c in CHUNKS[1:]:
                st["agree"][c] += int([canon(x) for x in got_by_chunk[c]] == [canon(x) for x in whole])
            row["tools"][tool] = {str(c): v for c, v in got_by_chunk.items()}
        rows.append(row)
        if n % 40 == 0:
            log(f"corpus {n + 1}/{len(entries)} ({time.time() - t0:.0f} s)")
    results["corpus"] = {"n_entries": len(entries), "per_tool": per, "rows": rows}


# --------------------------------------------------------------------------------------------
# BFCL


def run_bfcl(P, args, results):
    sys.path.insert(0, os.path.join(SHARED, "tools"))
    import bfcl_check  # noqa: E402

    pub = os.path.join(SHARED, "corpus", "public")
    truth = {}
    with open(os.path.join(pub, "bfcl_ground_truth.jsonl")) as fh:
        for l in fh:
            r = json.loads(l)
            truth[r["id"]] = r
    rows = []
    for f in sorted(os.listdir(pub)):
        if f.startswith("bfcl_") and f.endswith(".jsonl") and "ground_truth" not in f:
            with open(os.path.join(pub, f)) as fh:
                for l in fh:
                    r = json.loads(l)
                    rec = truth.get(r["id"])
                    if rec is None or rec.get("bfcl_verdict") is None or rec["expected"] in ("exec", "rest"):
                        continue
                    if rec["expected"] == "no_call":
                        continue  # relevance rows: BFCL passes undecodable output; counted in tests/bfcl_score
                    rows.append((r, rec))
    if args.quick:
        rows = rows[::10]
    sg_parser = {"pythonic": "pythonic", "hermes": "hermes", "json_bare": "llama3"}
    plan = {
        "toolstream": lambda r, rec: {"tools": rec["tools"]},
        "sglang": lambda r, rec: ({"parser": sg_parser[r["dialect_guess"]], "tools": rec["tools"]}
                                  if r["dialect_guess"] in sg_parser else None),
        "agent-tool-parser": lambda r, rec: {},
        "ai-sdk": lambda r, rec: ({"protocol": "hermes", "tools": rec["tools"]}
                                  if r["dialect_guess"] == "hermes" else None),
    }
    outcome = {t: {} for t in plan}  # tool -> id -> pass?
    timeouts, bfcl_ms = {}, {}
    subset = {t: [] for t in plan}
    t0 = time.time()
    for n, (r, rec) in enumerate(rows):
        for tool, mk in plan.items():
            opts = mk(r, rec)
            if opts is None:
                continue
            o = run_safe(P, tool, r["raw_output"], 0, opts, args.case_timeout)
            if o.get("timeout"):
                timeouts[tool] = timeouts.get(tool, 0) + 1
            bfcl_ms[tool] = bfcl_ms.get(tool, 0.0) + ((o.get("timing_ms") or {}).get("parse_last") or 0.0)
            calls = calls_of_tool_parser(o)
            try:
                ok = bool(bfcl_check.check(calls, rec)["pass"])
            except Exception:  # noqa: BLE001  checker rejects a malformed call shape: not a pass
                ok = False
            outcome[tool][r["id"]] = ok
            subset[tool].append(r["id"])
        if n % 100 == 0:
            log(f"bfcl {n + 1}/{len(rows)} ({time.time() - t0:.0f} s)")
    verdict = {r["id"]: rec["bfcl_verdict"] for r, rec in rows}
    dialect = {r["id"]: r["dialect_guess"] for r, _ in rows}
    score = {}
    for tool in plan:
        for name, ids in (("own rows", subset[tool]), ("all rows", [r["id"] for r, _ in rows])):
            if tool != "toolstream" and name == "all rows":
                continue
            s = {"rows": len(ids), "bfcl_pass": 0, "kept": 0, "decoder_failed": 0, "rescued": 0,
                 "toolstream_kept": 0, "toolstream_rescued": 0}
            for i in ids:
                v = verdict[i]
                if v == "pass":
                    s["bfcl_pass"] += 1
                    s["kept"] += outcome[tool][i]
                    s["toolstream_kept"] += outcome["toolstream"][i]
                elif v.startswith("ast_decoder:"):
                    s["decoder_failed"] += 1
                    s["rescued"] += outcome[tool][i]
                    s["toolstream_rescued"] += outcome["toolstream"][i]
            s["dialects"] = sorted({dialect[i] for i in ids})
            score[f"{tool} ({name})"] = s
    results["bfcl"] = {"n_rows": len(rows), "score": score, "timeouts": timeouts, "time_ms": bfcl_ms}


# --------------------------------------------------------------------------------------------
# synthetic scaling inputs


def prose(n):
    base = ("The quick brown fox jumps over the lazy dog; it was a bright cold day in April, and the "
            "clocks were striking thirteen. \"Quoted\" words and a tab\t and a back\\slash. ")
    s = (base * (n // len(base) + 1))[:n]
    return s


def synthetic_inputs(sizes):
    out = []
    for size in sizes:
        args = {"path": "/tmp/notes.txt", "content": prose(size)}
        call = json.dumps({"name": "write_file", "arguments": args})
        out.append({"name": f"hermes_string_{size}", "size": size, "kind": "hermes",
                    "text": f"I will write the file now.\n<tool_call>\n{call}\n</tool_call>",
                    "json": call, "expect": [{"name": "write_file", "arguments": args}]})
    # ~10 KB broken JSON: single quotes, Python literals, unquoted key, trailing commas,
    # missing closing braces (the stream ends after the last value).
    items = [{"id": k, "label": f"item {k}", "ok": k % 2 == 0, "note": None} for k in range(140)]
    args = {"path": "/tmp/items.json", "items": items, "overwrite": True}
    body = ", ".join(f"{{'id': {i['id']}, label: 'item {i['id']}', 'ok': {i['ok']}, 'note': None,}}"
                     for i in items)
    broken = ("{'name': 'write_file', 'arguments': {'path': '/tmp/items.json', "
              f"'items': [{body},], 'overwrite': True,")
    out.append({"name": "broken_json_10k", "size": len(broken), "kind": "broken",
                "text": f"I will write the file now.\n<tool_call>\n{broken}\n</tool_call>",
                "json": broken, "expect": [{"name": "write_file", "arguments": args}]})
    return out


def run_synthetic(P, args, results):
    sizes = [10_000, 100_000, 1_000_000] if not args.quick else [10_000, 100_000]
    inputs = synthetic_inputs(sizes)
    # tool -> which text it gets, and its options
    cases = [
        ("toolstream", "text", {"tools": None}),
        ("toolstream-json", "json", {}),
        ("sglang", "text", {"parser": "hermes", "tool_names": "write_file"}),
        ("agent-tool-parser", "text", {}),
        ("ai-sdk", "text", {"protocol": "hermes",
                            "tools": [{"type": "function", "function": {"name": "write_file"}}]}),
        ("json-repair", "json", {}),
        ("jsonrepair", "json", {}),
        ("partial-json-parser", "json", {}),
        ("partial-json", "json", {}),
    ]
    meas = []
    again = []  # cheap cases, measured again in later rounds
    t0 = time.time()
    for tool, which, opts in cases:
        real = "toolstream" if tool.startswith("toolstream") else tool
        for chunk in CHUNKS:
            prev = None  # (size, ms) of the previous size, this tool and chunking
            for inp in inputs:
                text = inp[which]
                m = {"tool": tool, "input": inp["name"], "size": len(text.encode()), "arg_size": inp["size"],
                     "kind": inp["kind"], "chunk": chunk}
                if time.time() - START > args.total_budget:
                    m["status"] = "> run budget"
                    meas.append(m)
                    continue
                if inp["kind"] == "hermes" and prev and prev[1] / 1000 * (m["size"] / prev[0]) > args.budget:
                    m["status"] = "> budget"
                    m["note"] = (f"not run: {prev[1] / 1000:.1f} s at {prev[0] // 1000} KB, so at least "
                                 f"{prev[1] / 1000 * m['size'] / prev[0]:.0f} s here")
                    prev = (m["size"], prev[1] * m["size"] / prev[0])
                    meas.append(m)
                    continue
                try:
                    o = measure(P, real, text, chunk, opts, args.budget)
                except Budget:
                    m["status"] = "> budget"
                    m["note"] = f"killed after {args.budget:.0f} s"
                    if inp["kind"] == "hermes":
                        prev = (m["size"], args.budget * 1000)
                    meas.append(m)
                    continue
                if real == "toolstream" or tool in TOOL_PARSERS:
                    calls = calls_of_tool_parser(o)
                else:
                    calls = calls_from_value(o.get("result")) if o.get("ok") else []
                m.update(status="ok" if o.get("ms") is not None else "error", ms=o.get("ms"),
                         runs=(o.get("timing_ms") or {}).get("runs"), n_chunks=o.get("n_chunks", 1),
                         correct=[canon(c) for c in calls] == [canon(c) for c in inp["expect"]],
                         n_calls=len(calls), error=o.get("error") or o.get("harness_error"))
                if inp["kind"] == "hermes" and m["ms"] is not None:
                    prev = (m["size"], m["ms"])
                meas.append(m)
                if m["status"] == "ok" and m["ms"] * (m["runs"] or 1) < ROUND_CAP_MS:
                    again.append((m, real, text, chunk, opts))
            log(f"synthetic {tool} chunk={chunk or 'whole'} done ({time.time() - t0:.0f} s)")
    # A case measured once is one moment of the machine: a run of 2026-11-28 timed toolstream's
    # 10 KB JSON in 4-byte chunks at 59 µs and the same bytes in <tool_call> tags at 117 µs (both
    # ~95 µs when repeated), which moved a fitted exponent from 1.00 to 1.10. Every case whose
    # measurement is cheap is measured in ROUNDS rounds, each round over all of them in turn, and
    # keeps the median of its rounds: a slow or fast spell of the machine lands on every case.
    # This narrows the spread, it does not remove it (the first run with rounds still fitted 1.10
    # on one row whose instruction counts are linear); instruction counts are the exact measure.
    for _ in range(ROUNDS - 1):
        for m, real, text, chunk, opts in again:
            try:
                o = measure(P, real, text, chunk, opts, args.budget)
            except Budget:
                continue
            if o.get("ms") is not None:
                m.setdefault("ms_rounds", [m["ms"]]).append(o["ms"])
    for m, *_ in again:
        if len(m.get("ms_rounds", [])) > 1:
            m["ms"] = statistics.median(m["ms_rounds"])
    log(f"synthetic: {len(again)} cheap cases re-measured in {ROUNDS} rounds ({time.time() - t0:.0f} s)")
    results["synthetic"] = {"sizes": sizes, "measurements": meas}



# --------------------------------------------------------------------------------------------
# instruction counts (callgrind): toolstream's scaling without the machine's timing noise

def callgrind_instructions(text, chunk):
    """Instructions of one toolstream parse of `text` (the harness's `run`, a new parser, every
    chunk fed, `finish`), counted by callgrind: the count over 2 runs minus the count over 1,
    so that the process's one-time set-up (the dialect table, the allocator) is not in it."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    counts = []
    try:
        for repeat in (1, 2):
            out = subprocess.run(
                ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                 "--toggle-collect=*harness::run", TOOLSTREAM, "harness", "--chunk", str(chunk),
                 "--repeat", str(repeat), path],
                capture_output=True, text=True, check=True)
            m = re.search(r"Collected : (\d+)", out.stderr)
            if not m:
                raise RuntimeError(f"callgrind printed no count: {out.stderr[-300:]}")
            counts.append(int(m.group(1)))
    finally:
        os.unlink(path)
    return counts[1] - counts[0]


def run_instructions(args, results):
    """toolstream's instruction counts on the synthetic Hermes inputs, whole and streamed (see
    the report's scaling section). Skipped, with the reason in the report, without valgrind."""
    import shutil
    if shutil.which("valgrind") is None:
        results["instructions"] = {"skipped": "valgrind is not installed (`apt install valgrind`)"}
        log("instructions: skipped, valgrind is not installed")
        return
    sizes = [10_000, 100_000, 1_000_000] if not args.quick else [10_000, 100_000]
    rows = []
    t0 = time.time()
    for inp in synthetic_inputs(sizes):
        if inp["kind"] != "hermes":
            continue
        for tool, which in (("toolstream", "text"), ("toolstream-json", "json")):
            text = inp[which]
            for chunk in CHUNKS:
                rows.append({"tool": tool, "input": inp["name"], "size": len(text.encode()),
                             "chunk": chunk, "instructions": callgrind_instructions(text, chunk)})
    log(f"instructions: {len(rows)} callgrind counts ({time.time() - t0:.0f} s)")
    results["instructions"] = {"rows": rows}

# --------------------------------------------------------------------------------------------
# harness agreement check for the Node worker (it re-implements the harness bodies)


def norm(result):
    """A harness result without the harness-only extras (the AI SDK harness adds streamed_args)."""
    if isinstance(result, dict) and "tool_calls" in result:
        return canon({"content": result.get("content"),
                      "calls": [(c.get("name"), c.get("arguments")) for c in result["tool_calls"]]})
    return canon(result)


def check_node_worker(P, results):
    samples = [os.path.join(PEERS, "inputs", n) for n in ("broken.json", "hermes.txt", "hermes_broken.txt")]
    report = []
    for path in samples:
        text = open(path, encoding="utf-8").read()
        for harness, extra in (("js_jsonrepair.mjs", []), ("js_partial_json.mjs", []),
                               ("js_ai_sdk_tool_parser.mjs", ["--tool-names", "get_weather"])):
            for chunk in (0, 16):
                argv = ["node", os.path.join(PEERS, harness)] + extra + (["--chunk", str(chunk)] if chunk else [])
                real = subprocess.run(argv, input=text, capture_output=True, text=True, cwd=ROOT,
                                      env=dict(os.environ, PEERS_NODE_DIR=NODE_DIR))
                try:
                    ro = json.loads(real.stdout)
                except Exception:  # noqa: BLE001
                    ro = {"ok": None, "result": real.stderr[-200:]}
                req = {"harness": harness, "input": text, "chunk": chunk, "repeat": 1}
                if harness.startswith("js_ai_sdk"):
                    req["tools"] = [{"type": "function", "function": {"name": "get_weather"}}]
                wo = P.node.ask(req, 60).get("out", {})
                same = (ro.get("ok"), norm(ro.get("result"))) == (wo.get("ok"), norm(wo.get("result")))
                report.append({"input": os.path.basename(path), "harness": harness, "chunk": chunk, "same": same})
    results["node_worker_check"] = report
    bad = [r for r in report if not r["same"]]
    if bad:
        log("WARNING: node worker differs from the harness on", bad)


# --------------------------------------------------------------------------------------------
# report


def fmt_ms(ms):
    if ms is None:
        return "—"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 1:
        return f"{ms:.1f} ms"
    if ms >= 0.001:
        return f"{ms * 1000:.0f} µs"
    return f"{ms * 1e6:.0f} ns"


def fmt_ratio(x):
    if x is None:
        return "—"
    return f"{x:,.0f}×" if x >= 10 else f"{x:.1f}×"


def pretty(inp):
    if inp.startswith("hermes_string_"):
        n = int(inp.rsplit("_", 1)[1])
        return f"Hermes call, {n // 1000 if n < 1_000_000 else n // 1_000_000} {'KB' if n < 1_000_000 else 'MB'} string argument"
    return "Broken JSON call, ~10 KB"


def machine_facts():
    cpu = "?"
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for l in open("/proc/meminfo"):
            if l.startswith("MemTotal"):
                mem = f"{int(l.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    vpy = subprocess.run([VPY, "--version"], capture_output=True, text=True).stdout.strip()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem, "load average (1/5/15 min) at the start": load, "os": platform.platform(), "rustc": rustc,
            "python (peers venv)": vpy, "node": node}


def peer_versions():
    code = ("import json; from importlib.metadata import version as v; print(json.dumps({n: v(n) for n in "
            "['json-repair', 'partial-json-parser', 'agent-tool-parser', 'llm-router-utils']}))")
    py = json.loads(subprocess.run([VPY, "-c", code], capture_output=True, text=True).stdout)
    js = {}
    for n in ("jsonrepair", "partial-json", "@ai-sdk-tool/parser"):
        with open(os.path.join(NODE_DIR, "node_modules", n, "package.json")) as f:
            js[n] = json.load(f)["version"]
    ts = subprocess.run([TOOLSTREAM, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    # The report this run rewrites does not count: an earlier run's output left uncommitted is
    # not a change to what is measured.
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                            ":(exclude)BENCHMARKS.md"], capture_output=True,
                           text=True, cwd=ROOT).stdout.strip()
    return {"toolstream": f"{ts} (commit {commit}{', with uncommitted changes' if dirty else ''})", **py,
            **{k + " (npm)": v for k, v in js.items()}}


def cost_section(w, corpus, names):
    """Where the corpus time goes: time per reply at each chunking, and what an added chunk costs,
    for toolstream and SGLang; then what the 100x target asks of toolstream on these replies.
    Arithmetic on the totals and the chunk counts, no fitted model (an entry's time follows its
    content, its calls and echoed schemas, more than its length). Skipped for an older results file."""
    rows, per, n = corpus["rows"], corpus["per_tool"], corpus["n_entries"]
    tools = [t for t in ("toolstream", "toolstream-dialect", "sglang") if t in per]
    if not n or not tools or any("chunks" not in r for r in rows):
        return
    chunks = {ch: sum(r["chunks"][str(ch)] for r in rows) for ch in CHUNKS}

    def total_us(t, ch):
        return (ms_at(per[t], ch) or 0.0) * 1000.0

    w("### Where the corpus time goes")
    w("")
    w(f"Mean time per reply (the totals above ÷ {n} replies of {sum(r['bytes'] for r in rows) / n:,.0f} bytes "
      "on average), and what each chunk adds to the whole-input parse: (time at N B − time whole) ÷ "
      "(chunks at N B − chunks whole). SGLang parses whole input with another method (`parse_non_stream`) "
      "than streamed input, so its difference can be below zero.")
    w("")
    w("| tool | whole | 4 B | 16 B | 64 B | added per chunk at 4 / 16 / 64 B |")
    w("|---|---|---|---|---|---|")
    w("| chunks per reply | 1 | " + " | ".join(f"{chunks[ch] / n:,.1f}" for ch in CHUNKS[1:]) + " | |")
    for t in tools:
        cells = " | ".join(f"{total_us(t, ch) / n:,.2f} µs" for ch in CHUNKS)
        added = " / ".join(f"{(total_us(t, ch) - total_us(t, 0)) / (chunks[ch] - chunks[0]) * 1000:,.0f} ns"
                           for ch in CHUNKS[1:])
        w(f"| {names[t]} | {cells} | {added} |")
    w("")
    if "sglang" in per and "toolstream" in per:
        need = []
        for ch in CHUNKS[1:]:
            want_us = total_us("sglang", ch) / n / 100.0
            have_us = total_us("toolstream", ch) / n
            need.append(f"{ch} B: ≤ {want_us:,.2f} µs per reply, against {have_us:,.2f} µs "
                        f"({'met' if have_us <= want_us else f'a {have_us / want_us:.2f}× cut needed'})")
        given = (f" ({total_us('toolstream-dialect', 0) / n:,.2f} µs with the dialect given)"
                 if "toolstream-dialect" in per else "")
        w("What 100× SGLang asks of toolstream (auto-detect) on these replies, SGLang's time per reply ÷ 100: "
          + "; ".join(need) + f". For comparison, toolstream's whole-input parse takes "
          f"{total_us('toolstream', 0) / n:,.2f} µs per reply{given}.")
        w("")


def write_report(results, path):
    L = []
    w = L.append
    c = results["corpus"]
    per = c["per_tool"]
    syn = results["synthetic"]["measurements"]
    w("# BENCHMARKS — toolstream side by side with its peers")
    w("")
    w("Generated by one run of `benches/peers/compare.py`; every number below comes from that run. Regenerate "
      "(installs the peers into `target/peers/` when missing, ~15 min on 2 cores):")
    w("")
    w("```sh")
    w(COMMAND)
    w("```")
    w("")
    w(f"Date: {results['date']}. Run time: {results['run_s'] / 60:.1f} min. Time budget per peer case: "
      f"{results['budget_s']:.0f} s.")
    w("")
    w("| machine | |")
    w("|---|---|")
    for k, v in results["machine"].items():
        w(f"| {k} | {v} |")
    w("")
    w("| tool | version |")
    w("|---|---|")
    for k, v in results["versions"].items():
        w(f"| {k} | {v} |")
    w("")
    w("## How the tools are run")
    w("")
    w("* **In-process timing only.** Each tool runs in a long-lived worker (toolstream: `toolstream harness "
      "--serve`; Python peers: `benches/peers/py_worker.py`, which runs the unchanged harnesses of "
      "`../shared/peers` in-process; npm peers: `benches/peers/node_worker.mjs`, the same library calls as the "
      "Node harnesses). The time is the harness's `timing_ms.parse_median` over `--repeat K` runs (K chosen so "
      "one synthetic measurement takes about 0.3 s, and one corpus measurement about "
      f"{CORPUS_TARGET_MS:.0f} ms with at least {CORPUS_REPEAT} runs; synthetic cases slower than 0.1 s are run "
      "once). A synthetic case whose "
      f"measurement took under {ROUND_CAP_MS / 1000:.0f} s is measured in {ROUNDS} rounds, each round over every "
      "such case in turn, and keeps the median of its rounds, so that a fast or slow spell of the machine does "
      "not land on one size only (it once moved a fitted exponent by 0.1). The timed unit is the same "
      "for every tool: the chunks are cut first, then a new parser, every chunk fed, the end-of-stream flush, "
      "the result accumulated. Interpreter start-up and imports are never timed.")
    w("* **Chunks**: whole, or 4/16/64-byte chunks with each cut moved forward to the next UTF-8 boundary "
      "(the harnesses' `chunk_text`). Libraries without a streaming API re-run on the accumulated prefix after "
      "every chunk, which is how their users stream with them (json-repair with `stream_stable=True`, "
      "partial-json, agent-tool-parser); SGLang uses `parse_stream_chunk`/`parse_stream_end`, "
      "@ai-sdk-tool/parser its `createStreamParser`, npm jsonrepair its `jsonrepairTransform`.")
    w("* **Tool-call parsers get the model's whole text**, with the parser that fits the corpus entry's "
      "`prompt_style` and the entry's tool list:")
    w("")
    w("  | prompt_style | toolstream | SGLang (`--parser`) | @ai-sdk-tool/parser | agent-tool-parser |")
    w("  |---|---|---|---|---|")
    w("  | hermes | auto-detect | `hermes` | `hermesProtocol` | auto-detect |")
    w("  | tool_use | auto-detect | `hermes` (no detector for `<tool_use>`) | `hermesProtocol` with "
      "`<tool_use>`/`</tool_use>` | auto-detect |")
    w("  | xml (`<tool_call><name>…<arguments><k>v</k>`) | auto-detect | `hermes` (no detector for this XML) | "
      "`hermesProtocol` (no protocol for this XML) | auto-detect |")
    w("  | json_fenced, json_bare, json_parallel | auto-detect | `llama3` (bare JSON calls) | `hermesProtocol` "
      "(no bare-JSON protocol) | auto-detect |")
    w("  | pythonic | auto-detect | `pythonic` | `hermesProtocol` (no pythonic protocol) | auto-detect |")
    w("  | native_template | auto-detect | SmolLM2 (`<tool_call>[…]`): `hermes`; Gemma (bare JSON): `llama3` | "
      "`hermesProtocol` | auto-detect |")
    w("")
    w("  toolstream is run three times on the corpus: with the entry's tools (as the peers), auto-detecting "
      "every dialect; with the default configuration and no tools (what `tests/golden.rs` checks); and with "
      "the entry's tools and only the dialect its prompt asked for (`--dialect`: `hermes` for hermes, tool_use "
      "and SmolLM2 native, `xml` for xml, `pythonic`, else `json`), the information SGLang gets as its "
      "`--parser`. Auto-detection is the default and the headline row; the third row shows what telling "
      "toolstream the dialect costs or saves.")
    w("* **JSON repairers get the JSON part only**, because that is how they are used for tool calls: the "
      "caller cuts the payload out of the model's text and repairs it, then reads `name` and `arguments` "
      "(or `parameters`/`input`; an array gives several calls). The cut, done before timing and identical for "
      "all four: the body of each `<tool_call>` (or `<tool_use>`) block, unclosed blocks to the end "
      "(hermes, tool_use, SmolLM2 native); the body of each ```` ``` ```` fence (json_fenced); otherwise from "
      "the first `{` or `[` to the end (json_bare, json_parallel, Gemma native). xml and pythonic entries "
      "have no JSON to give them: 0 calls. On the same segments toolstream is also run "
      "(\"toolstream (JSON part only)\"), so every speed ratio compares the same bytes.")
    w("* **Correctness**: a labelled call is recovered when a call with the same name and the same arguments "
      "(as JSON values, `3` ≠ `3.0`, key order ignored) is found; each found call counts once. Entries "
      "exact = the calls equal the label (including entries where no call is expected). Stream agreement = "
      "the calls at N-byte chunks equal the whole-input calls.")
    w("")
    w("## Correctness on the project corpus (corpus/real, 336 real generations)")
    w("")
    n_exp = per["toolstream"]["expected"]
    w(f"{c['n_entries']} entries, {n_exp} labelled calls.")
    w("")
    w("| tool | labelled calls recovered | entries exact | extra calls | stream = whole at 4 / 16 / 64 B | "
      "harness errors |")
    w("|---|---|---|---|---|---|")
    order = ["toolstream", "toolstream-notools", "toolstream-dialect", "toolstream-json", "sglang",
             "agent-tool-parser", "ai-sdk"] + REPAIRERS
    # Older results files have no dialect-given run.
    order = [t for t in order if t in per]
    names = dict(LABEL, **{"toolstream": "toolstream (entry's tools)",
                           "toolstream-notools": "toolstream (default config, no tools)",
                           "toolstream-dialect": "toolstream (entry's tools and prompt dialect)"})
    for t in order:
        s = per[t]
        ag = " / ".join(f"{s['agree'][k]}" for k in ("4", "16", "64") if k in s["agree"]) or \
            " / ".join(f"{s['agree'][k]}" for k in (4, 16, 64))
        w(f"| {names[t]} | **{s['found']}**/{s['expected']} | {s['exact']}/{s['entries']} | {s['extra']} | "
          f"{ag} (of {s['entries']}) | {s['errors']} |")
    w("")
    styles = sorted(per["toolstream"]["by_style"])
    w("Labelled calls recovered, by prompt style:")
    w("")
    w("| tool | " + " | ".join(styles) + " |")
    w("|---|" + "---|" * len(styles))
    for t in order:
        by = per[t]["by_style"]
        w(f"| {names[t]} | " + " | ".join(f"{by[s]['found']}/{by[s]['expected']}" for s in styles) + " |")
    w("")
    w(f"Total parse time over the corpus (sum over the entries of the median of K in-process runs each, after the "
      f"correctness run; K is at least {CORPUS_REPEAT} and makes about {CORPUS_TARGET_MS:.0f} ms of runs, judged by "
      "the correctness run's time, so that every tool is measured for about as long; tool-call parsers on the whole "
      "text, repairers and \"toolstream (JSON part only)\" on the JSON part), and the peer ÷ toolstream ratio:")
    w("")
    w("| tool | whole | 4 B | 16 B | 64 B |")
    w("|---|---|---|---|---|")
    for t in order:
        base = "toolstream-json" if (t in REPAIRERS or t == "toolstream-json") else "toolstream"
        cells = []
        for ch in CHUNKS:
            tm = ms_at(per[t], ch)
            bm = ms_at(per[base], ch)
            r = "" if t.startswith("toolstream") or not bm else f" ({fmt_ratio(tm / bm)})"
            cells.append(f"{fmt_ms(tm)}{r}")
        w(f"| {names[t]} | " + " | ".join(cells) + " |")
    w("")
    if "toolstream-dialect" in per:
        rs = []
        for ch in CHUNKS:
            tm = ms_at(per["sglang"], ch)
            bm = ms_at(per["toolstream-dialect"], ch)
            rs.append(fmt_ratio(tm / bm) if tm and bm else "–")
        w("SGLang ÷ toolstream with the prompt's dialect given (each told the dialect): "
          + " / ".join(rs) + " (whole / 4 / 16 / 64 B).")
        w("")
    cost_section(w, results["corpus"], names)
    tmo = {t: per[t]["timeouts"] for t in order if per[t].get("timeouts")}
    if tmo:
        w("Corpus inputs over the per-input time limit (no calls counted): "
          + ", ".join(f"{names[t]} {n}" for t, n in tmo.items()) + ".")
        w("")
    best_peer = max((t for t in order if not t.startswith("toolstream")), key=lambda t: per[t]["found"])
    ts_found = per["toolstream"]["found"]
    met = all(ts_found > per[t]["found"] for t in order if not t.startswith("toolstream"))
    w(f"**Target \"more expected calls recovered than every peer\": {'met' if met else 'NOT met'}** — "
      f"toolstream {ts_found}/{n_exp}, best peer {names[best_peer]} {per[best_peer]['found']}/{n_exp}.")
    w("")
    # BFCL
    b = results["bfcl"]
    w("## Correctness on the public BFCL rows (../shared/corpus/public)")
    w("")
    w(f"{b['n_rows']} rows that expect calls and that BFCL scored itself (relevance rows, executable and REST "
      "categories excluded; see `tests/bfcl_score.rs`), scored with `../shared/tools/bfcl_check.py`. "
      "**kept** = BFCL passes that still pass with the tool's calls; **rescued** = rows BFCL's decoder could "
      "not parse that pass with the tool's calls. Each peer runs on the rows whose `dialect_guess` it has a "
      "parser for (SGLang: `pythonic`, `hermes`, `llama3` for json_bare; @ai-sdk-tool/parser: hermes; "
      "agent-tool-parser: every row, it auto-detects), with the row's tools; toolstream is scored on the same rows.")
    w("")
    w("| tool (rows) | dialects | kept | rescued | toolstream on the same rows: kept | rescued |")
    w("|---|---|---|---|---|---|")
    for k, s in b["score"].items():
        if k == "toolstream (own rows)":
            continue
        w(f"| {k.replace(' (own rows)', '').replace(' (all rows)', ' (all rows)')} ({s['rows']}) | "
          f"{', '.join(s['dialects'])} | {s['kept']}/{s['bfcl_pass']} | {s['rescued']}/{s['decoder_failed']} | "
          f"{s['toolstream_kept']}/{s['bfcl_pass']} | {s['toolstream_rescued']}/{s['decoder_failed']} |")
    w("")
    # synthetic
    w("## Speed: synthetic inputs")
    w("")
    w("One Hermes call `<tool_call>\\n{\"name\": \"write_file\", \"arguments\": {\"path\": …, \"content\": …}}"
      "\\n</tool_call>` whose `content` string argument (prose with quotes, a tab and a backslash to escape) is "
      "10 KB, 100 KB or 1 MB, plus a ~10 KB broken call (single quotes, Python `True`/`None`, an unquoted key, "
      "trailing commas, both closing braces missing). Tool-call parsers get the whole text; repairers and "
      "\"toolstream (JSON part only)\" get the JSON between the tags. ✓ = the tool returned exactly the "
      "expected call.")
    w("")
    tools_syn = ["toolstream", "toolstream-json", "sglang", "agent-tool-parser", "ai-sdk"] + REPAIRERS
    by = {}
    for m in syn:
        by[(m["tool"], m["input"], m["chunk"])] = m
    inputs = []
    for m in syn:
        if m["input"] not in inputs:
            inputs.append(m["input"])

    def cell(m):
        if m is None:
            return "—"
        if m.get("status") != "ok":
            return m.get("status", "error")
        if m.get("error"):
            return f"{fmt_ms(m['ms'])} ✗ (raised)"
        return f"{fmt_ms(m['ms'])} {'✓' if m['correct'] else '✗'}"

    for inp in inputs:
        w(f"### {pretty(inp)}")
        w("")
        w("| tool | whole | 4 B | 16 B | 64 B |")
        w("|---|---|---|---|---|")
        for t in tools_syn:
            w(f"| {LABEL[t]} | " + " | ".join(cell(by.get((t, inp, ch))) for ch in CHUNKS) + " |")
        w("")
    notes = [m for m in syn if m.get("note")]
    if notes:
        w("Cases over the budget:")
        w("")
        for m in notes:
            w(f"* {LABEL[m['tool']]}, {m['input']}, {'whole' if m['chunk'] == 0 else str(m['chunk']) + ' B'}: "
              f"> budget ({m['note']})")
        w("")
    # ratios
    w("### Speed ratios (peer time ÷ toolstream time on the same bytes, same chunking)")
    w("")
    w("Tool-call parsers are compared with toolstream on the whole text, repairers with \"toolstream (JSON part "
      "only)\". \"> N×\" = the peer was over the budget, N = budget ÷ toolstream's time. ✗ = the peer's result "
      "was wrong or it raised (the time is still what it cost); toolstream's result was right in every case.")
    w("")
    hdr = [(inp, ch) for inp in inputs for ch in CHUNKS]
    short = {"hermes_string_10000": "10K", "hermes_string_100000": "100K", "hermes_string_1000000": "1M",
             "broken_json_10k": "broken 10K"}
    w("| peer | " + " | ".join(f"{short.get(i, i)} {'whole' if ch == 0 else str(ch) + 'B'}" for i, ch in hdr) + " |")
    w("|---|" + "---|" * len(hdr))
    ratios = {}
    for t in tools_syn[2:]:
        base = "toolstream" if t in TOOL_PARSERS else "toolstream-json"
        cells = []
        for inp, ch in hdr:
            p, ts = by.get((t, inp, ch)), by.get((base, inp, ch))
            if not p or not ts or ts.get("status") != "ok" or not ts.get("ms"):
                cells.append("—")
                continue
            if p.get("status") == "ok" and p.get("ms"):
                r = p["ms"] / ts["ms"]
                ratios[(t, inp, ch)] = r
                cells.append(fmt_ratio(r) + ("" if p.get("correct") else " ✗"))
            elif p.get("status") == "> budget":
                r = results["budget_s"] * 1000 / ts["ms"]
                ratios[(t, inp, ch)] = ("gt", r)
                cells.append("> " + fmt_ratio(r))
            else:
                cells.append(p.get("status", "—"))
        w(f"| {LABEL[t]} | " + " | ".join(cells) + " |")
    w("")
    # per MB, per chunk, exponent
    w("### Time per MB, time per chunk, scaling exponent")
    w("")
    w("Exponent = least-squares slope of log(time) against log(input size) over the Hermes string inputs "
      "(10 KB → 1 MB); 1 = linear, 2 = quadratic. Fitted over the sizes that finished within the budget with the "
      "right result (npm jsonrepair's stream raises from 100 KB on, so it is not fitted there). Time per MB "
      "and per chunk at the largest such size: for a quadratic peer both grow with the size, so they are not "
      "comparable across rows of different sizes.")
    w("")
    w("| tool | chunks | exponent | sizes fitted | time per MB | time per chunk |")
    w("|---|---|---|---|---|---|")
    expo = {}
    for t in tools_syn:
        for ch in CHUNKS:
            pts = [(m["size"], m["ms"]) for m in syn if m["tool"] == t and m["chunk"] == ch
                   and m["kind"] == "hermes" and m.get("status") == "ok" and m.get("ms") and m.get("correct")]
            e = slope(pts)
            expo[(t, ch)] = e
            if pts:
                big = max(pts)
                per_mb = big[1] / (big[0] / 1e6)
                mm = next(m for m in syn if m["tool"] == t and m["chunk"] == ch and m["size"] == big[0]
                          and m["kind"] == "hermes")
                per_chunk = big[1] / mm["n_chunks"] if ch else None
                fitted = f"{pts[0][0] // 1000} KB – {big[0] // 1000} KB ({len(pts)})"
            else:
                per_mb = per_chunk = None
                fitted = "none within budget"
            w(f"| {LABEL[t]} | {'whole' if ch == 0 else str(ch) + ' B'} | "
              f"{'—' if e is None else f'{e:.2f}'} | {fitted} | {fmt_ms(per_mb)} | "
              f"{fmt_ms(per_chunk) if per_chunk is not None else '—'} |")
    w("")
    ins = results.get("instructions") or {}
    ins_expo = {}
    w("### toolstream's scaling in instructions (callgrind)")
    w("")
    if ins.get("rows"):
        w("Wall-clock exponents fitted on three sizes move with this machine's fast and slow spells (the same "
          "toolstream case has timed 2× apart minutes later). The work itself is counted exactly by callgrind: "
          "instructions of one parse (the harness's `run`: a new parser, every chunk fed, `finish`), as the "
          "count over 2 runs minus the count over 1 so that the process's one-time set-up is not in it. "
          "The same inputs as the table above; peers are not counted (they run in Python or Node, where an "
          "instruction count says little about the library).")
        w("")
        names_i = []
        for r in ins["rows"]:
            if r["input"] not in names_i:
                names_i.append(r["input"])
        arg = {"hermes_string_10000": "10 KB", "hermes_string_100000": "100 KB", "hermes_string_1000000": "1 MB"}
        w("| tool | chunks | " + " | ".join(f"{arg.get(n, n)} argument" for n in names_i)
          + " | instructions per byte (largest) | exponent |")
        w("|---|---|" + "---|" * len(names_i) + "---|---|")
        for t in ("toolstream", "toolstream-json"):
            for ch in CHUNKS:
                rs = sorted((r["size"], r["instructions"]) for r in ins["rows"]
                            if r["tool"] == t and r["chunk"] == ch)
                if not rs:
                    continue
                e = slope(rs)
                ins_expo[(t, ch)] = e
                w(f"| {LABEL[t]} | {'whole' if ch == 0 else str(ch) + ' B'} | "
                  + " | ".join(f"{n:,}" for _, n in rs)
                  + f" | {rs[-1][1] / rs[-1][0]:.1f} | {'—' if e is None else f'{e:.3f}'} |")
    else:
        w(f"_Not counted: {ins.get('skipped', 'run with the instructions part')}._")
    w("")
    # targets
    w("## Issue targets")
    w("")

    def target_line(peer, need, label):
        rs = []
        for ch in CHUNKS[1:]:
            for inp in inputs:
                r = ratios.get((peer, inp, ch))
                if r is not None:
                    rs.append((inp, ch, r))
        if not rs:
            return f"* {label}: not measurable (no common streamed case)."
        lows = [(r[1] if isinstance(r, tuple) else r, inp, ch, isinstance(r, tuple)) for inp, ch, r in rs]
        worst = min(lows)
        exact = [x for x in lows if not x[3]]
        met = all(x[0] >= need for x in lows if not x[3]) and (not exact or min(exact)[0] >= need)
        lower_bound_only = [x for x in lows if x[3] and x[0] < need]
        verdict = "met" if met and not lower_bound_only else ("NOT met" if not met else "met where measured")
        return (f"* {label}: **{verdict}** — smallest streamed ratio {fmt_ratio(worst[0])}"
                f"{' (lower bound)' if worst[3] else ''} ({worst[1]}, "
                f"{worst[2]}-byte chunks); range {fmt_ratio(min(x[0] for x in lows))} – "
                f"{fmt_ratio(max(x[0] for x in lows))} over {len(lows)} streamed cases.")

    def corpus_ratio(peer, base=None):
        base = base or ("toolstream-json" if peer in REPAIRERS else "toolstream")
        rs = []
        for ch in CHUNKS[1:]:
            tm = ms_at(per[peer], ch)
            bm = ms_at(per[base], ch)
            if tm and bm:
                rs.append(tm / bm)
        ok = bool(rs) and min(rs) >= need_of[peer]
        return ((f" On the corpus (real outputs of a few hundred bytes, streamed, totals): "
                 f"{' / '.join(fmt_ratio(r) for r in rs)} at 4 / 16 / 64 B"
                 f" — {'all' if ok else 'not all'} ≥ {need_of[peer]}×.") if rs else "", ok or not rs)

    def target_with_corpus(peer, need, label):
        # The target is on streamed input: the synthetic cases and the corpus.
        line = target_line(peer, need, label)
        text, corpus_ok = corpus_ratio(peer)
        if not corpus_ok and "**met**" in line:
            line = line.replace("**met**", "**met on the synthetic inputs, NOT on the corpus**", 1)
        if peer == "sglang" and "toolstream-dialect" in per:
            given, _ = corpus_ratio(peer, "toolstream-dialect")
            if given:
                text += (" With the prompt's dialect given to toolstream too (as SGLang is given its parser):"
                         + given.split(":", 1)[1])
        return line + text

    need_of = {"sglang": 100, "json-repair": 20}
    w(target_with_corpus("sglang", 100, "toolstream ≥ 100× faster than SGLang's parsers on streamed input"))
    w(target_with_corpus("json-repair", 20, "toolstream ≥ 20× faster than json-repair on streamed input"))
    ts_e = [expo[(t, ch)] for t in ("toolstream", "toolstream-json") for ch in CHUNKS if expo.get((t, ch)) is not None]
    ts_es = [expo[(t, ch)] for t in ("toolstream", "toolstream-json") for ch in CHUNKS[1:] if expo.get((t, ch)) is not None]
    peer_e = {(t, ch): e for (t, ch), e in expo.items() if not t.startswith("toolstream") and e is not None}
    near2 = [f"{LABEL[t]} {'whole' if ch == 0 else str(ch) + ' B'} {e:.2f}" for (t, ch), e in peer_e.items() if e >= 1.6]
    ts_range = f"{min(ts_e):.2f} – {max(ts_e):.2f}" if ts_e else "not measured"
    ie = [e for e in ins_expo.values() if e is not None]
    wall_met = bool(ts_e) and max(ts_e) <= 1.05
    ins_met = bool(ie) and max(ie) <= 1.05
    if wall_met:
        verdict = "met"
    elif ins_met:
        verdict = "met in instructions, NOT in this run's wall-clock fit"
    else:
        verdict = "NOT met"
    w(f"* scaling exponent ≤ 1.05 where peers are near 2: **{verdict}** — "
      f"toolstream's wall-clock exponents {ts_range} over every chunking"
      f"{f' (streamed only: {min(ts_es):.2f} – {max(ts_es):.2f})' if ts_es else ''}"
      f"{f'; in instructions (callgrind) {min(ie):.3f} – {max(ie):.3f}' if ie else ''}; peers at ≥ 1.6: "
      f"{'; '.join(near2) if near2 else 'none measured'}.")
    if b.get("timeouts"):
        w("* BFCL rows over the per-input time limit (counted as no calls): "
          + ", ".join(f"{LABEL[t]} {n}" for t, n in b["timeouts"].items()) + ".")
    w(f"* more expected calls recovered than every peer: **{'met' if met else 'NOT met'}** (corpus table above).")
    w("")
    w("## The Rust peer: `tool-parser` (SGLang's model gateway, lightseekorg/smg)")
    w("")
    w("The Rust `tool-parser` crate (1.6.0) cannot run in this Python/Node driver; it is "
      "compared in-process by the criterion bench `benches/smg/benches/tool_parser.rs` "
      "(`cargo bench --manifest-path benches/smg/Cargo.toml`, a crate of its own so that tool-parser's "
      "dependencies stay out of toolstream's build): "
      "the same Hermes call with a 10 KB / 100 KB / 1 MB string argument, as `<tool_call>` text (SMG "
      "`QwenParser`) and as a bare JSON object (SMG `JsonParser`), whole (`parse_complete`) and in 4/16/64-byte "
      "chunks (`parse_incremental` + `get_unstreamed_tool_args`), both checked for the right call before "
      "timing. SMG cases whose single run exceeds 2 s are reported by the bench as `> budget`. It builds with "
      "the toolchain above; it brings about 150 crates (openai-protocol with "
      "validator/schemars, rustpython-parser, tokio rt-multi-thread). Its numbers belong to the criterion "
      "results, not to this run.")
    w("")
    rust_peers = os.path.join(ROOT, "benches", "rust_peers", "RESULTS.md")
    if os.path.exists(rust_peers):
        # Written by the Rust peer comparison's own run (`--out`), not by this script.
        w("## The Rust peers in one binary (`benches/rust_peers`)")
        w("")
        w("From the last run of `cargo run --release --manifest-path benches/rust_peers/Cargo.toml -- --out "
          "benches/rust_peers/RESULTS.md` (not from this script's run; see `benches/rust_peers/README.md`):")
        w("")
        with open(rust_peers) as fh:
            w(fh.read().rstrip("\n"))
        w("")
    w("## Throughput matrix")
    w("")
    w("toolstream alone, from criterion (`cargo bench --bench matrix`, run by this script before the peers; "
      "`benches/matrix_report.py` turns its estimates into these tables): every dialect × feed (1, 4, 16, 64-byte "
      "chunks or whole, as `Bytes`) × argument size (a `content` string of 100 B, 10 KB or 1 MB in one call), "
      "auto-detection with every dialect active.")
    w("")
    w(results.get("matrix") or "_No criterion estimates: run without `--skip matrix`._")
    w("")
    w("## Raw data")
    w("")
    w("Every measurement (times, repeat counts, chunk counts, calls per corpus entry) is in "
      "`target/peers/results.json` after a run. Node worker vs the real Node harnesses on the smoke inputs: "
      f"{sum(r['same'] for r in results['node_worker_check'])}/{len(results['node_worker_check'])} identical "
      "results.")
    w("")
    # Sections other tools and people write into the same file (the #49
    # evaluation's table from corpus/eval/report.py, the proxy comparison,
    # per-issue callgrind notes): carried over verbatim, so a re-run of this
    # script keeps them.
    text = with_carried_sections("\n".join(L), path)
    with open(path, "w") as f:
        f.write(text)


def _blocks(text):
    """`text` cut at its `## ` and `### ` headings: (heading line or "",
    level, the block's text with its heading)."""
    out, cur = [], []
    for line in text.split("\n"):
        if line.startswith("## ") or line.startswith("### "):
            if cur:
                out.append(cur)
            cur = [line]
        else:
            cur.append(line)
    if cur:
        out.append(cur)
    res = []
    for b in out:
        h = b[0] if b[0].startswith("##") else ""
        level = 3 if h.startswith("### ") else 2 if h else 0
        res.append((h, level, "\n".join(b).rstrip("\n")))
    return res


def with_carried_sections(generated, path):
    """`generated` plus every `## ` / `### ` section of the existing report at
    `path` whose heading `generated` lacks, verbatim and in order: a `### `
    one at the end of the `## ` section it stood in when `generated` has that
    section, everything else at the end."""
    if not os.path.exists(path):
        return generated.rstrip("\n") + "\n"
    with open(path) as f:
        old = _blocks(f.read())
    new = _blocks(generated)
    ours = {h for h, _, _ in new if h}
    after = {}  # parent `## ` heading -> carried `### ` blocks
    tail = []
    parent = ""
    for h, level, body in old:
        if level == 2:
            parent = h
        if not h or h in ours:
            continue
        if level == 3 and parent in ours:
            after.setdefault(parent, []).append(body)
        elif level == 2 or parent not in ours:
            tail.append(body)
    out = []
    for i, (h, level, body) in enumerate(new):
        out.append(body)
        if level == 2 or level == 3:
            parent = h if level == 2 else parent
        nxt = new[i + 1][1] if i + 1 < len(new) else 2
        if nxt == 2 and parent in after:
            out.extend(after.pop(parent))
    out.extend(tail)
    return "\n\n".join(b for b in out if b) + "\n"


START = time.time()


def run_matrix(results):
    """toolstream's own throughput matrix (criterion), rendered as Markdown."""
    log("criterion: cargo bench --bench matrix (about 6 min)")
    subprocess.run(["cargo", "bench", "--bench", "matrix"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benches", "matrix_report.py"),
                          os.path.join(ROOT, "target")], check=True, capture_output=True, text=True)
    results["matrix"] = out.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small subset (to try the script)")
    ap.add_argument("--budget", type=float, default=15.0, help="seconds per peer case (default 15)")
    ap.add_argument("--case-timeout", type=float, default=10.0,
                    help="seconds per corpus/BFCL input before it counts as a time-out, no calls (default 10)")
    ap.add_argument("--total-budget", type=float, default=19 * 60, help="seconds for the synthetic part's end")
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: matrix,corpus,bfcl,synthetic,instructions")
    ap.add_argument("--report-only", action="store_true",
                    help="re-write the report from target/peers/results.json (the last run) without measuring")
    args = ap.parse_args()
    if args.report_only:
        with open(os.path.join(TARGET, "results.json")) as f:
            write_report(json.load(f), args.out)
        return
    if not os.path.isdir(PEERS):
        sys.exit(f"compare.py: {PEERS} not found (the shared folder must sit next to the repository)")
    ensure_peers()
    build_toolstream()
    P = Peers(args.budget)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "budget_s": args.budget, "machine": machine_facts(), "versions": peer_versions()}
    skip = set(args.skip.split(","))
    try:
        check_node_worker(P, results)
        if "matrix" not in skip:
            run_matrix(results)
        if "corpus" not in skip:
            run_corpus(P, args, results)
        if "bfcl" not in skip:
            run_bfcl(P, args, results)
        if "synthetic" not in skip:
            run_synthetic(P, args, results)
    finally:
        P.close()
    if "instructions" not in skip:
        run_instructions(args, results)
    results["run_s"] = time.time() - START
    results["machine"]["load average (1/5/15 min) at the end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    with open(os.path.join(TARGET, "results.json"), "w") as f:
        json.dump(results, f, ensure_ascii=False)
    if skip <= {"", "matrix", "instructions"}:
        write_report(results, args.out)
        log(f"wrote {args.out} ({results['run_s'] / 60:.1f} min)")
    else:
        log("partial run: results in target/peers/results.json, report not written")


if __name__ == "__main__":
    main()

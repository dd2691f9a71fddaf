"""After a run of the #49 evaluation: the summary, the tables in
BENCHMARKS.md and README.md, and the registry's per-size-class defaults,
all from the recorded replies. Written by the toolstream developers.

    python3 corpus/eval/report.py            # (run.py --full calls it)
    python3 corpus/eval/report.py --dry-run  # say what would change, write nothing but the summary
    python3 corpus/eval/report.py --keep-defaults  # tables regenerated, the defaults rule's choice only printed

1. `UPDATE_GOLDEN=1 cargo test --test eval_replay` rescores every
   recording into corpus/eval/summary.md and summary.json.
2. Defaults (src/toolkit/emulation_defaults.json, compiled into
   toolkit::registry::EmulationDefaults): for each lever arm (g-cut,
   g-simp, g-copy, g-two, g-retry, g-rank, g-noex, g-span: (g) with one lever flipped), the lever
   arm qualifies when it beats (g) on the dev tasks of one small model and
   loses on none (both must be measured), comparing (exact, right, valid)
   summed over the tiers, with both arms on the same number of tasks; the
   best qualifying arm's levers are flipped (one arm: a measured
   configuration, never an unmeasured combination). A tie on every model
   keeps the default. Held-out tasks are never used to choose.
   Both models of the evaluation are small (≤ 4B); medium and large are not
   touched. The small class's prompt format likewise from #40's prompt
   arms (p-FORMAT-small, `run.py --arms prompts`) when all four ran on
   every small model: another format must beat the current one on every
   model. When a default changes, (g) and the lever arms recorded so far
   describe the old defaults: the script says so, and
   `run.py --arms g,g-ls,levers --fresh-arms` re-records them.
3. BENCHMARKS.md's section "Tool-call success on small local models" and
   README.md's block between `<!-- eval:begin -->` and `<!-- eval:end -->`
   are rewritten from summary.json.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULTS = os.path.join(ROOT, "src", "toolkit", "emulation_defaults.json")
TIERS = ("simple", "medium", "complex")
SHORT = {"SmolLM2-135M-Instruct": "SmolLM2-135M", "gemma-3-270m-it": "Gemma-3-270M"}
SMALL_MODELS = ("SmolLM2-135M-Instruct", "gemma-3-270m-it")
# lever arm -> (defaults key, how the arm flips it)
LEVERS = {
    "g-cut": "max_tools",
    "g-simp": "optional_params",
    "g-copy": "copy_values",
    "g-two": "two_step",
    "g-retry": "retries",
    "g-rank": "rank_tools",
    "g-noex": "example",
    "g-rank-noex": ("rank_tools", "example"),
    "g-nospan": "copy_spans",
}


def regenerate_summary():
    env = dict(os.environ, UPDATE_GOLDEN="1")
    subprocess.run(["nice", "-n", "10", "cargo", "test", "--profile", "test-release", "--all-features", "--test",
                    "eval_replay"], cwd=ROOT, env=env, check=True)


def cells():
    with open(os.path.join(HERE, "summary.json")) as f:
        return json.load(f)["cells"]


def total(cs, arm, model, split):
    """(exact, right, valid, n) summed over the tiers."""
    e = r = v = n = 0
    for c in cs:
        if c["arm"] == arm and c["model"] == model and c["split"] == split:
            e, r, v, n = e + c["exact"], r + c["right"], v + c["valid"], n + c["n"]
    return e, r, v, n


def flipped(key, value):
    if key == "max_tools":
        return 64 if value < 64 else 5
    if key == "retries":
        return 0 if value > 0 else 1
    if key == "copy_spans":
        return 0 if value else 6
    return not value


def qualifying(cs, suffix, notes):
    """The lever arms (with `suffix`: an earlier round's) that beat that
    round's (g) on one small model's dev tasks and lose on none, best
    first, as (sums, arm, keys)."""
    winners = []
    for arm, keys in LEVERS.items():
        keys = keys if isinstance(keys, tuple) else (keys,)
        verdicts, sums = [], [0, 0, 0]
        for model in SMALL_MODELS:
            g = total(cs, "g" + suffix, model, "dev")
            lv = total(cs, arm + suffix, model, "dev")
            if g[3] == 0 or lv[3] != g[3]:
                verdicts.append(None)
                continue
            verdicts.append((lv[:3] > g[:3]) - (lv[:3] < g[:3]))
            sums = [x + y for x, y in zip(sums, lv[:3])]
            notes.append(f"{arm}{suffix} vs g{suffix}, {SHORT[model]}, dev exact/right/valid: "
                         f"{lv[0]}/{lv[1]}/{lv[2]} vs {g[0]}/{g[1]}/{g[2]} of {g[3]}")
        measured = [v for v in verdicts if v is not None]
        if len(measured) < len(SMALL_MODELS):
            if suffix == "":
                notes.append(f"{arm}: not measured on every small model (or not on the same dev tasks as (g))")
        elif min(measured) >= 0 and max(measured) > 0:
            winners.append((sums, arm, keys))
            notes.append(f"{arm}{suffix}: better than (g{suffix}) on one small model, worse on none")
    winners.sort(key=lambda w: w[0], reverse=True)
    return winners, notes


def choose_defaults(cs):
    """The small size class's defaults after the lever arms, and why."""
    with open(DEFAULTS) as f:
        table = json.load(f)
    small = dict(table["small"])
    notes = []
    # Every lever arm (one lever flipped, or several together) is a measured
    # configuration. Those no worse than (g) on any small model and better
    # on one qualify; the best of them (exact, right, valid summed over the
    # models) becomes the default — never a combination nobody measured
    # (flipping two winning levers one by one can lose: their effects
    # interact). Earlier rounds (arms.json `history`, suffix -r1) are
    # replayed the same way for the record; they change nothing.
    for suffix in ("-r1",):
        won, _ = qualifying(cs, suffix, notes)
        if won:
            notes.append(f"round {suffix[2:]}: the best qualifying arm was {won[0][1]}{suffix} "
                         f"({'+'.join(won[0][2])} flipped from that round's defaults)")
    winners, _ = qualifying(cs, "", notes)
    if winners:
        winners.sort(key=lambda w: w[0], reverse=True)
        _, arm, keys = winners[0]
        for k in keys:
            new = flipped(k, table["small"][k])
            notes.append(f"-> {k}: {table['small'][k]} -> {new} ({arm}, the best qualifying lever arm)")
            small[k] = new
    # #40: the prompt format for small models from the prompt arms
    # (p-FORMAT-small: the format alone, no constraint, normalizer or
    # retries), when every format's arm ran on every small model.
    formats = ("json", "compact", "parallel", "xml")
    scores = {f: [total(cs, f"p-{f}-small", m, "dev") for m in SMALL_MODELS] for f in formats}
    complete = all(sc[3] > 0 and sc[3] == scores[formats[0]][i][3] for f in formats
                   for i, sc in enumerate(scores[f]))
    if complete:
        cur = small["format"]
        for f in formats:
            notes.append(f"p-{f}-small dev exact/right/valid: " + "; ".join(
                f"{SHORT[m]} {sc[0]}/{sc[1]}/{sc[2]} of {sc[3]}" for m, sc in zip(SMALL_MODELS, scores[f])))
        best = [f for f in formats if f != cur and cur in scores
                and all(scores[f][i][:3] > scores[cur][i][:3] for i in range(len(SMALL_MODELS)))]
        if best:
            best.sort(key=lambda f: [x[:3] for x in scores[f]], reverse=True)
            notes.append(f"-> format: {cur} -> {best[0]} (better on every small model)")
            small["format"] = best[0]
    else:
        notes.append("prompt arms (p-*-small) not complete for every small model: format kept")
    if small["two_step"] and not small["constrain"]:
        small["two_step"] = False
        notes.append("two_step kept off: it needs the constraint")
    return table, small, notes


def row(cs, arm, model, split="all"):
    parts = []
    for tier in TIERS:
        c = next((c for c in cs if c["arm"] == arm and c["model"] == model and c["split"] == split
                  and c["tier"] == tier), None)
        parts.append(f"{c['valid']} / {c['right']} / {c['exact']} of {c['n']}" if c else "not run")
    return parts


def arm_labels():
    with open(os.path.join(HERE, "arms.json")) as f:
        a = json.load(f)
    return a["main"] + a["levers"] + a.get("history", []), {k: v["label"] for k, v in a["arms"].items()}


def seconds(cs, arm, model):
    n = sum(c["n"] for c in cs if c["arm"] == arm and c["model"] == model and c["split"] == "all")
    s = sum(c["seconds"] for c in cs if c["arm"] == arm and c["model"] == model and c["split"] == "all")
    return s / n if n else 0.0


def benchmarks_section(cs):
    order, labels = arm_labels()
    out = ["## Tool-call success on small local models (#49)", "",
           "Generated by `corpus/eval/report.py` from `corpus/eval/summary.json` (replayed by `tests/eval_replay.rs`;",
           "method, machine and command: docs/eval.md). Official `openai` SDK, `tools`, `tool_choice: auto`, temperature 0,",
           "`max_tokens` 256; first call scored valid / right / exact, of n tasks (20 per tier; lever arms: dev tasks only).",
           "", "| arm | model | simple v / r / e | medium v / r / e | complex v / r / e | s/task |", "|---|---|---|---|---|---|"]
    models = sorted({c["model"] for c in cs})
    partial = any(c["n"] < 20 for c in cs if c["split"] == "all" and c["arm"] in ("b", "g"))
    timeouts = sum(c["timeouts"] for c in cs if c["split"] == "all")
    if partial or timeouts:
        out.insert(5, f"{'**Partial run** (n < 20 in some cells); ' if partial else ''}{timeouts} request(s) timed out "
                      "(scored as no call): docs/eval.md says which run, on what machine.")
    for arm in order:
        for model in models:
            if any(c["arm"] == arm and c["model"] == model for c in cs):
                r = row(cs, arm, model)
                out.append(f"| ({arm}) {labels[arm]} | {SHORT.get(model, model)} | {r[0]} | {r[1]} | {r[2]} | "
                           f"{seconds(cs, arm, model):.1f} |")
    out += ["", "Held-out tasks (8 per tier), (b) vs the proxy's arms:", "",
            "| arm | model | simple | medium | complex |", "|---|---|---|---|---|"]
    for arm in ("b", "g", "g-ls", "g-r2", "g-ls-r2", "g-span", "g-ls-span"):
        for model in models:
            if any(c["arm"] == arm and c["model"] == model and c["split"] == "heldout" for c in cs):
                r = row(cs, arm, model, "heldout")
                out.append(f"| ({arm}) | {SHORT.get(model, model)} | {r[0]} | {r[1]} | {r[2]} |")
    with open(os.path.join(HERE, "summary.md")) as f:
        summary = f.read()
    if "## Issue #49 targets" in summary:
        out += ["", summary[summary.index("## Issue #49 targets"):].strip().replace("## ", "### ", 1)]
    return "\n".join(out) + "\n"


def replace_section(text, heading_prefix, new):
    """Replaces the `## ` section whose heading starts with heading_prefix
    (up to the next `## `), or appends it."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(heading_prefix)), None)
    if start is None:
        return text.rstrip("\n") + "\n\n" + new
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[:start]) + "\n" + new + "\n" + "\n".join(lines[end:])


def readme_block(cs, small):
    models = [m for m in SMALL_MODELS if any(c["model"] == m for c in cs)]
    out = ["<!-- eval:begin (generated by corpus/eval/report.py) -->",
           f"Small models (≤ 4B), the proxy's defaults (`src/toolkit/emulation_defaults.json`): `{small['format']}` prompt, "
           f"≤ {small['max_tools']} tools, {'required parameters only' if not small['optional_params'] else 'all parameters'}, "
           f"grammar {'on' if small['constrain'] else 'off'}, two-step {'on' if small['two_step'] else 'off'}, "
           f"{small['retries']} validation retr{'y' if small['retries'] == 1 else 'ies'}"
           + (f", string values copied from the user's request (spans of up to {small['copy_spans']} words)"
              if small.get('copy_spans') else "") + "; the prompt in the system message, or leading the first user turn "
           "where a start-up probe finds that the upstream's template drops system messages (Gemma behind "
           "`llama_cpp.server`). Medium and large models: "
           "not measured (no such model in the evaluation; defaults set by hand). Measured "
           "(right / exact, of n tasks; simple · medium · complex; a full run has n = 20):", ""]
    out += ["| model | upstream | llama.cpp's own tool handling (b) | `toolstream proxy`, round 2 defaults "
            "| `toolstream proxy --upstream URL`, today's defaults |", "|---|---|---|---|---|"]

    def re(arm, m):
        parts = []
        for tier in TIERS:
            c = next((c for c in cs if c["arm"] == arm and c["model"] == m and c["split"] == "all"
                      and c["tier"] == tier), None)
            parts.append(f"{c['right']}/{c['exact']} of {c['n']}" if c else "—")
        return " · ".join(parts)
    for m in models:
        out.append(f"| {SHORT.get(m, m)} | `llama_cpp.server` | {re('b', m)} | {re('g-r2', m)} | {re('g', m)} |")
        out.append(f"| {SHORT.get(m, m)} | `llama-server` | (direct: {re('a-ls', m)}) | {re('g-ls-r2', m)} "
                   f"| {re('g-ls', m)} |")
    out.append("<!-- eval:end -->")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--no-summary", action="store_true", help="use summary.json as it is")
    ap.add_argument("--keep-defaults", action="store_true",
                    help="regenerate the summary and tables, say what the defaults rule chooses, but leave "
                    "emulation_defaults.json (and the README's description of it) as it is")
    args = ap.parse_args()
    if not args.no_summary:
        regenerate_summary()
    cs = cells()
    table, small, notes = choose_defaults(cs)
    for n in notes:
        print(n)
    changed = small != table["small"]
    if args.dry_run:
        print("defaults would change" if changed else "defaults unchanged")
        return
    if changed and args.keep_defaults:
        print("defaults would change (--keep-defaults: not written): "
              + ", ".join(f"{k} {table['small'].get(k)!r} -> {v!r}" for k, v in small.items()
                          if table["small"].get(k) != v))
        small = table["small"]
        changed = False
    if changed:
        table["small"] = small
        with open(DEFAULTS, "w") as f:
            json.dump(table, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"{DEFAULTS} rewritten: rebuild, then re-record the arms that run the defaults:\n"
              "  python3 corpus/eval/run.py --arms g,g-ls,levers --fresh-arms && python3 corpus/eval/report.py",
              file=sys.stderr)
    bpath = os.path.join(ROOT, "BENCHMARKS.md")
    with open(bpath) as f:
        b = f.read()
    with open(bpath, "w") as f:
        f.write(replace_section(b, "## Tool-call success on small local models", benchmarks_section(cs)))
    rpath = os.path.join(ROOT, "README.md")
    with open(rpath) as f:
        r = f.read()
    block = readme_block(cs, small)
    if "<!-- eval:begin" in r and "<!-- eval:end -->" in r:
        i = r.index("<!-- eval:begin")
        j = r.index("<!-- eval:end -->") + len("<!-- eval:end -->")
        r = r[:i] + block + r[j:]
        with open(rpath, "w") as f:
            f.write(r)
    else:
        print("README.md has no <!-- eval:begin --> block: not updated", file=sys.stderr)
    print("summary, BENCHMARKS.md, README.md" + (", emulation defaults" if changed else "") + " regenerated")


if __name__ == "__main__":
    main()

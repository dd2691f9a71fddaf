"""Compares a re-run of the #49 evaluation with the recorded replies
(corpus/eval/runs*.jsonl). Written by the toolstream developers.

`run.py --reproduce` runs the main arms on a fixed subset of tasks into
target/eval-reproduce/ and then calls this script on what it recorded:

    python3 corpus/eval/reproduce.py target/eval-reproduce/runs-*.jsonl [--min-identical 0.95] [--wall S]
    python3 corpus/eval/reproduce.py --self-test   # the comparison on the recordings themselves, no model

A reply is identical when its `content` and its calls (name and arguments
text, in order) are byte for byte the recorded ones, and it is an error
(a timeout, a failed request) exactly when the recorded one is. It prints
the replies compared, identical and differing (with their model, arm and
task), per (model, arm) the re-run's scores next to the recorded scores of
the same tasks, and exits 1 when fewer than --min-identical of the compared
replies are identical (docs/eval.md, "Run time", says why 95 %).

Scores follow tests/eval_replay.rs (the first call: valid = an offered tool
with arguments valid against its JSON Schema; right = + the expected tool;
exact = + every expected value contained, case-insensitively, in the
argument of that name). Validity needs the `jsonschema` module; without it
the scores are left out (the comparison does not need them).
"""

import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIERS = ("simple", "medium", "complex")


def read_jsonl(paths):
    out = []
    for p in paths:
        with open(p) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def recorded(directory=HERE):
    """(model, arm, task) -> the recorded reply, from every runs*.jsonl of
    the corpus. A key recorded twice is an error: which one a re-run should
    match would be unclear."""
    out = {}
    for path in sorted(glob.glob(os.path.join(directory, "runs*.jsonl"))):
        for r in read_jsonl([path]):
            key = (r["model"], r["arm"], r["task"])
            if key in out:
                raise ValueError(f"{key} recorded twice (second in {path})")
            out[key] = r
    return out


def calls(r):
    return [(c.get("name"), c.get("arguments")) for c in r.get("tool_calls") or []]


def same(a, b):
    """The same reply: content, calls (name and arguments text) and error-or-not."""
    return (a.get("content") == b.get("content") and calls(a) == calls(b)
            and ("error" in a) == ("error" in b))


def compare(runs, rec):
    """(identical keys, differing keys, keys not recorded), in run order."""
    ident, diff, missing = [], [], []
    for r in runs:
        key = (r["model"], r["arm"], r["task"])
        if key not in rec:
            missing.append(key)
        elif same(r, rec[key]):
            ident.append(key)
        else:
            diff.append(key)
    return ident, diff, missing


def load_tools(path):
    tools = json.load(open(os.path.join(HERE, path)))
    out = {}
    for t in tools:
        f = t.get("function", t)
        out[f["name"]] = f.get("parameters", t.get("input_schema", {}))
    return out


def scorer():
    """score(task, reply) -> (valid, right, exact), or None without jsonschema."""
    try:
        import jsonschema
    except ImportError:
        return None
    tools = {}

    def score(task, r):
        cs = r.get("tool_calls") or []
        if not cs:
            return (False, False, False)
        name = cs[0].get("name") or ""
        if task["tools"] not in tools:
            tools[task["tools"]] = load_tools(task["tools"])
        schema = tools[task["tools"]].get(name)
        if schema is None:
            return (False, False, False)
        try:
            args = json.loads(cs[0].get("arguments") or "")
        except ValueError:
            return (False, False, False)
        valid = isinstance(args, dict) and jsonschema.validators.validator_for(schema)(schema).is_valid(args)
        right = valid and task["tool"] == name
        exact = right and all(isinstance(args.get(k), str) and str(v).lower() in args[k].lower()
                              for k, v in task["expect"].items())
        return (valid, right, exact)

    return score


def score_table(runs, score, tasks):
    """(model, arm) -> {tier: [n, valid, right, exact]}."""
    out = {}
    for r in runs:
        t = tasks[r["task"]]
        cell = out.setdefault((r["model"], r["arm"]), {}).setdefault(t["tier"], [0, 0, 0, 0])
        v, ri, e = score(t, r)
        cell[0] += 1
        cell[1] += v
        cell[2] += ri
        cell[3] += e
    return out


def fmt(cells):
    return " | ".join(f"{c[1]} / {c[2]} / {c[3]} of {c[0]}" if c else "—"
                      for c in (cells.get(t) for t in TIERS))


def report(runs, rec, min_identical, wall=None, out=sys.stdout):
    """Prints the comparison; returns the exit code (0: at least
    min_identical of the compared replies identical, and some compared)."""
    tasks = {t["id"]: t for t in json.load(open(os.path.join(HERE, "tasks.json")))}
    ident, diff, missing = compare(runs, rec)
    n = len(ident) + len(diff)
    share = len(ident) / n if n else 0.0
    print(f"replies compared with the recordings: {n}; identical: {len(ident)} ({100 * share:.1f} %); "
          f"differing: {len(diff)}" + (f"; not recorded (not compared): {len(missing)}" if missing else ""), file=out)
    both_err = [k for k in ident if "error" in rec[k]]
    if both_err:
        print(f"  of the identical, {len(both_err)} are errors in both (a timeout or failed request, no reply to "
              f"compare): " + ", ".join(f"{m} ({a}) {t}" for m, a, t in both_err), file=out)
    for m, a, t in diff:
        print(f"  differs: {m} ({a}) {t}", file=out)
    score = scorer()
    if score is None:
        print("scores left out: no `jsonschema` module in this Python", file=out)
    else:
        compared = [r for r in runs if (r["model"], r["arm"], r["task"]) in rec]
        mine = score_table(compared, score, tasks)
        theirs = score_table([rec[(r["model"], r["arm"], r["task"])] for r in compared], score, tasks)
        print("\n| model | arm | re-run: simple v / r / e | medium | complex | recorded: simple v / r / e | medium | complex |",
              file=out)
        print("|---|---|---|---|---|---|---|---|", file=out)
        for key in mine:
            print(f"| {key[0]} | ({key[1]}) | {fmt(mine[key])} | {fmt(theirs[key])} |", file=out)
    secs = sum(r.get("seconds", 0) for r in runs)
    print(f"\nrequests: {len(runs)}, their wall seconds summed: {secs:.0f}"
          + (f"; run wall time: {wall / 60:.1f} min" if wall is not None else ""), file=out)
    ok = n > 0 and share >= min_identical
    print(("PASS" if ok else "FAIL") + f": {100 * share:.1f} % identical, threshold {100 * min_identical:.0f} %", file=out)
    return 0 if ok else 1


def self_test():
    """The comparison on the recordings themselves (no model): every
    recorded reply equals itself; a changed content, a changed argument
    byte, a changed call name, a reply turned into an error and a dropped
    call are each found; the threshold decides the exit code; the scorer
    agrees with summary.json (tests/eval_replay.rs) on every recorded
    (model, arm, tier) of the main arms."""
    import copy
    import io
    rec = recorded()
    runs = [r for k, r in rec.items() if k[1] in ("a", "b", "g", "g-ls")]
    assert len(runs) >= 400, len(runs)
    ident, diff, missing = compare(runs, rec)
    assert (len(ident), diff, missing) == (len(runs), [], []), (len(ident), diff[:3], missing[:3])
    with_call = [r for r in runs if r.get("tool_calls")]
    with_text = [r for r in runs if r.get("content")]
    changed = [copy.deepcopy(r) for r in (with_text[0], with_call[0], with_call[1], with_call[2], with_call[3])]
    changed[0]["content"] += " "
    a = changed[1]["tool_calls"][0]["arguments"]
    changed[1]["tool_calls"][0]["arguments"] = a[:-1] + ("}" if a[-1:] != "}" else " ")
    changed[2]["tool_calls"][0]["name"] += "x"
    changed[3]["error"] = "APITimeoutError: Request timed out."
    changed[4]["tool_calls"] = changed[4]["tool_calls"][1:]
    ghost = dict(runs[0], task="no-such-task")
    ident, diff, missing = compare(runs[:50] + changed + [ghost], rec)
    assert len(diff) == 5 and [k[2] for k in diff] == [r["task"] for r in changed], diff
    assert missing == [(ghost["model"], ghost["arm"], "no-such-task")]
    sink = io.StringIO()
    assert report(runs[:95] + changed, rec, 0.95, out=sink) == 0, sink.getvalue()  # 95 of 100
    assert report(runs[:94] + changed, rec, 0.95, out=sink) == 1  # 94 of 99
    assert report([], rec, 0.95, out=sink) == 1
    score = scorer()
    if score is None:
        print("self-test: comparison passed; scores not checked (no jsonschema)")
        return
    tasks = {t["id"]: t for t in json.load(open(os.path.join(HERE, "tasks.json")))}
    table = score_table(list(rec.values()), score, tasks)
    cells = json.load(open(os.path.join(HERE, "summary.json")))["cells"]
    checked = 0
    for c in cells:
        if c["split"] != "all" or c["arm"] not in ("a", "a-ls", "b", "c", "d", "e", "g", "g-ls"):
            continue
        n, v, ri, e = table[(c["model"], c["arm"])][c["tier"]]
        assert (n, v, ri, e) == (c["n"], c["valid"], c["right"], c["exact"]), (c, (n, v, ri, e))
        checked += 1
    assert checked >= 40, checked
    print(f"self-test passed: {len(runs)} recorded replies equal themselves, 5 changes found, "
          f"threshold checked, scores equal summary.json's in {checked} cells")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="a re-run's replies (run.py's jsonl)")
    ap.add_argument("--min-identical", type=float, default=0.95)
    ap.add_argument("--wall", type=float, default=None, help="the run's wall seconds (printed)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if not args.files:
        ap.error("no files")
    sys.exit(report(read_jsonl(args.files), recorded(), args.min_identical, args.wall))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Scores toolstream's calls on the public BFCL rows with ../shared/tools/bfcl_check.py.

Usage: bfcl_score.py CALLS.jsonl SHARED_DIR

CALLS.jsonl has one line per public corpus row that has a BFCL ground-truth record:
{"id": ..., "calls": [{"name": ..., "arguments": {...}}, ...]} (written by tests/bfcl_score.rs).

Counts, over the records BFCL scored itself (a recorded verdict, and a call / no-call / any-call
expectation; executable and REST categories are not scored by the checker):
  kept     - rows expecting calls that BFCL's own decoder and checker passed and that also pass with
             toolstream's calls
  rescued  - rows BFCL's decoder could not parse (ast_decoder:*) that pass with toolstream's calls
Relevance rows (no call expected) are counted apart: BFCL passes any output its decoder cannot parse,
so when a model wrote a broken call where none was expected, BFCL passes the row and toolstream, which
reads the call the model did write, fails it. Those rows are listed (relevance_lost), not hidden.
Prints one JSON object: {"kept": n, "bfcl_pass": n, "rescued": n, "decoder_failed": n, ...}.
"""
import json
import os
import sys


def main(argv):
    calls_path, shared = argv
    sys.path.insert(0, os.path.join(shared, "tools"))
    import bfcl_check  # noqa: E402  (path set above)

    records = {}
    with open(os.path.join(shared, "corpus", "public", "bfcl_ground_truth.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            records[r["id"]] = r
    out = {"kept": 0, "bfcl_pass": 0, "rescued": 0, "decoder_failed": 0,
           "checker_fail_now_pass": 0, "bfcl_checker_fail": 0, "lost": [],
           "relevance_bfcl_pass": 0, "relevance_kept": 0, "relevance_lost": []}
    with open(calls_path) as f:
        for line in f:
            row = json.loads(line)
            rec = records.get(row["id"])
            if rec is None or rec.get("bfcl_verdict") is None:
                continue
            if rec["expected"] in ("exec", "rest"):
                continue
            verdict = rec["bfcl_verdict"]
            ours = bfcl_check.check(row["calls"], rec)["pass"]
            if rec["expected"] == "no_call":
                if verdict == "pass":
                    out["relevance_bfcl_pass"] += 1
                    if ours:
                        out["relevance_kept"] += 1
                    else:
                        out["relevance_lost"].append(row["id"])
                continue
            if verdict == "pass":
                out["bfcl_pass"] += 1
                if ours:
                    out["kept"] += 1
                else:
                    out["lost"].append(row["id"])
            elif verdict.startswith("ast_decoder:"):
                out["decoder_failed"] += 1
                out["rescued"] += int(bool(ours))
            else:
                out["bfcl_checker_fail"] += 1
                out["checker_fail_now_pass"] += int(bool(ours))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

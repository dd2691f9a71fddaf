#!/usr/bin/env bash
# `toolstream proxy` under load, side by side with the direct upstream and with
# LiteLLM's proxy, measured by the peer kit in ../shared/peers/proxy (its
# scripted upstream `upstream.py` and load client `load.py`, used in place,
# not copied): per-chunk one-way delay p50/p99 (proxy vs direct, same run),
# time to first chunk, concurrent streams held, CPU and RSS of the proxy.
#
#   benches/proxy_load.sh [STEP ...]      default: toolstream memory report
#   benches/proxy_load.sh target          the 1,000-stream target alone (~1 minute; prints PASS/FAIL)
#
# | step       | what |
# |------------|------|
# | target     | the issue's target: C = $TARGET_CONC (1000) streams open at once, direct vs toolstream in the same run, N = $TARGET_CHUNKS (50) chunks every $TARGET_INTERVAL_MS (100) ms, $TARGET_ROUNDS (2) requests per worker; prints added per-chunk p50/p99, TTFC, proxy CPU and RSS, and PASS when every stream completed and added p99 < 1 ms |
# | toolstream | direct vs toolstream proxy, C = $CONC (default 1,10,100,1000): N=50 chunks, one every 20 ms |
# | memory     | slow streams (N=10, I=1000 ms), C = $MEM_CONC (default 100,400,1000), proxy only: RSS per open stream |
# | litellm    | direct vs `litellm` (1 worker, the kit's cfg.yaml), C = $LITELLM_CONC (default 1,10,20,50) |
# | report     | markdown tables of every step's results ($OUT/tables.md) |
#
# Env: BIN (the toolstream binary; default target/release/toolstream, built
# with `cargo build --release --features cli` when missing), KIT (the kit's
# folder), VENV (a Python venv with uvloop, made under target/ when missing;
# `litellm[proxy]` is added to it for the litellm step), OUT (default
# target/proxy-load), UP_PORT (18000), PX_PORT (14000).
# Everything listens on 127.0.0.1; every process started here is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
KIT=${KIT:-../shared/peers/proxy}
BIN=${BIN:-target/release/toolstream}
VENV=${VENV:-target/proxy-load-venv}
OUT=${OUT:-target/proxy-load}
UP_PORT=${UP_PORT:-18000}
PX_PORT=${PX_PORT:-14000}
CONC=${CONC:-1,10,100,1000}
MEM_CONC=${MEM_CONC:-100,400,1000}
LITELLM_CONC=${LITELLM_CONC:-1,10,20,50}
TARGET_CONC=${TARGET_CONC:-1000}
TARGET_CHUNKS=${TARGET_CHUNKS:-50}
TARGET_INTERVAL_MS=${TARGET_INTERVAL_MS:-100}
TARGET_ROUNDS=${TARGET_ROUNDS:-2}
mkdir -p "$OUT"
ulimit -n 20000 2>/dev/null || true

if [ ! -f "$KIT/load.py" ]; then
  echo "SKIPPED: the peer kit is missing ($KIT/load.py)" >&2
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q uvloop httpx
fi
PY=$VENV/bin/python
# BIN=target/test-release/toolstream (opt-level 3, no LTO) skips the release build.
need_bin() { [ -x "$BIN" ] || cargo build --release --features cli; }

PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_http() { # url, seconds
  for _ in $(seq $(( ${2:-60} * 4 ))); do curl -s -o /dev/null -m 1 "$1" && return 0; sleep 0.25; done
  echo "not ready: $1" >&2; return 1
}
machine() { echo "# $(date -u +%FT%TZ) $(uptime | sed 's/^ *//') | nproc=$(nproc) | $(git rev-parse --short HEAD)"; }
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

start_upstream() {
  $PY "$KIT/upstream.py" --port "$UP_PORT" --max-seconds 1800 "$@" > "$OUT/upstream.log" 2>&1 &
  UP_PID=$!; PIDS+=("$UP_PID")
  wait_http "http://127.0.0.1:$UP_PORT/v1/models" 20
}
start_toolstream() {
  need_bin
  printf 'upstream = "http://127.0.0.1:%s"\nlisten = "127.0.0.1:%s"\n[limits]\nmax_concurrent = 8192\n' \
    "$UP_PORT" "$PX_PORT" > "$OUT/toolstream.toml"
  TOOLSTREAM_LOG=warn "$BIN" proxy --config "$OUT/toolstream.toml" > "$OUT/proxy-toolstream.log" 2>&1 &
  PX_PID=$!; PIDS+=("$PX_PID")
  wait_http "http://127.0.0.1:$PX_PORT/health" 20
}

step_toolstream() {
  machine | tee "$OUT/toolstream.txt"
  rm -f "$OUT/toolstream.jsonl"
  start_upstream; start_toolstream
  $PY "$KIT/load.py" run --label toolstream --out "$OUT/toolstream.jsonl" \
    --direct "http://127.0.0.1:$UP_PORT" --proxy "http://127.0.0.1:$PX_PORT" \
    --proxy-pid "$PX_PID" --upstream-pid "$UP_PID" --conc "$CONC" | tee -a "$OUT/toolstream.txt"
  stop_pid "$PX_PID"; stop_pid "$UP_PID"
  machine | tee -a "$OUT/toolstream.txt"
}

step_memory() {
  machine | tee "$OUT/memory-toolstream.txt"
  rm -f "$OUT/memory-toolstream.jsonl"
  start_upstream --chunks 10 --interval-ms 1000; start_toolstream
  $PY "$KIT/load.py" run --label memory-toolstream --out "$OUT/memory-toolstream.jsonl" \
    --proxy "http://127.0.0.1:$PX_PORT" --proxy-pid "$PX_PID" --upstream-pid "$UP_PID" \
    --conc "$MEM_CONC" --chunks 10 --interval-ms 1000 --rounds 2 --stop-p99-ms 5000 \
    | tee -a "$OUT/memory-toolstream.txt"
  stop_pid "$PX_PID"; stop_pid "$UP_PID"
  machine | tee -a "$OUT/memory-toolstream.txt"
}

step_target() {
  machine | tee "$OUT/target.txt"
  rm -f "$OUT/target.jsonl"
  start_upstream --chunks "$TARGET_CHUNKS" --interval-ms "$TARGET_INTERVAL_MS"; start_toolstream
  $PY "$KIT/load.py" run --label target --out "$OUT/target.jsonl" \
    --direct "http://127.0.0.1:$UP_PORT" --proxy "http://127.0.0.1:$PX_PORT" \
    --proxy-pid "$PX_PID" --upstream-pid "$UP_PID" --conc "$TARGET_CONC" \
    --chunks "$TARGET_CHUNKS" --interval-ms "$TARGET_INTERVAL_MS" --rounds "$TARGET_ROUNDS" \
    --idle-s 2 --pause-s 2 --level-timeout 300 --stop-p99-ms 1000000 | tee -a "$OUT/target.txt"
  stop_pid "$PX_PID"; stop_pid "$UP_PID"
  machine | tee -a "$OUT/target.txt"
  $PY - "$OUT/target.jsonl" <<'PY' | tee -a "$OUT/target.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {(r["conc"], r["target"]): r for r in rows if r.get("target") in ("direct", "proxy")}
ok = True
for c in sorted({c for c, _ in by}):
    d, p = by.get((c, "direct")), by.get((c, "proxy"))
    if not (d and p):
        print(f"C={c}: missing a direct or proxy row"); ok = False; continue
    dp50, dp99 = p["delay_p50_ms"] - d["delay_p50_ms"], p["delay_p99_ms"] - d["delay_p99_ms"]
    dt = p["ttfc_p50_ms"] - d["ttfc_p50_ms"]
    pc = p.get("proxy", {})
    good = p["streams_failed"] == 0 and p["missing_chunks"] == 0 and dp99 < 1.0
    ok &= good
    print(f"C={c} ({p['chunks_per_stream']} chunks every {p['interval_ms']} ms, {p['chunks_per_s']:.0f} chunks/s): "
          f"proxy {p['streams_ok']} ok / {p['streams_failed']} failed; added per chunk p50 {dp50:+.2f} ms, "
          f"p99 {dp99:+.2f} ms (direct p99 {d['delay_p99_ms']:.2f} ms); added TTFC p50 {dt:+.2f} ms; "
          f"proxy CPU {pc.get('cpu_mean')} % mean ({pc.get('cpu_peak1s')} % peak 1 s), RSS {pc.get('rss_peak_mb')} MB peak; "
          f"other CPU {p.get('other_cpu')} % -> {'PASS' if good else 'FAIL'} (target: all streams, added p99 < 1 ms)")
busy = max((by[k].get("other_cpu") or 0) for k in by)
print("target:", "PASS" if ok else "FAIL")
if busy > 20:
    print(f"WARNING: other jobs used up to {busy:.0f} % CPU (of 200) during the run: the verdict is not meaningful; run on an idle machine")
PY
}

step_litellm() {
  [ -x "$VENV/bin/litellm" ] || "$VENV/bin/pip" install -q 'litellm[proxy]'
  machine | tee "$OUT/litellm.txt"
  rm -f "$OUT/litellm.jsonl"
  start_upstream
  LITELLM_MASTER_KEY=sk-$($PY -c 'import secrets; print(secrets.token_hex(16))')
  export LITELLM_MASTER_KEY ANCHOR_API_BASE=http://127.0.0.1:$UP_PORT/v1
  export LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY_DISABLED=true LITELLM_LOG=ERROR \
         LITELLM_MODE=PRODUCTION DISABLE_ADMIN_UI=True
  timeout 1800 "$VENV/bin/litellm" --config "$KIT/cfg.yaml" --host 127.0.0.1 --port "$PX_PORT" \
    > "$OUT/proxy-litellm.log" 2>&1 &
  local tpid=$!; PIDS+=("$tpid")
  wait_http "http://127.0.0.1:$PX_PORT/health/liveliness" 180
  local lpid; lpid=$(pgrep -P "$tpid" | head -1)
  echo "# litellm $($PY -c 'import importlib.metadata as m; print(m.version("litellm"))') pid=$lpid" | tee -a "$OUT/litellm.txt"
  $PY "$KIT/load.py" run --label litellm --out "$OUT/litellm.jsonl" \
    --direct "http://127.0.0.1:$UP_PORT" --proxy "http://127.0.0.1:$PX_PORT" \
    --proxy-pid "$lpid" --upstream-pid "$UP_PID" --conc "$LITELLM_CONC" | tee -a "$OUT/litellm.txt"
  stop_pid "$tpid"; stop_pid "$UP_PID"
  machine | tee -a "$OUT/litellm.txt"
}

step_report() {
  $PY "$KIT/load.py" report --fit-labels toolstream,memory-toolstream "$OUT"/*.jsonl > "$OUT/tables.md"
  echo "wrote $OUT/tables.md"
}

for s in ${*:-toolstream memory report}; do
  case $s in
    toolstream) step_toolstream ;;
    memory) step_memory ;;
    litellm) step_litellm ;;
    target) step_target ;;
    report) step_report ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
  esac
done

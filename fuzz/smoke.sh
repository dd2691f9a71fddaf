#!/usr/bin/env bash
# Smoke-runs every fuzz target on the stable toolchain: installs cargo-fuzz
# if missing, seeds the corpora, builds, then runs each target for a fixed
# number of executions with a fixed seed (FUZZ_RUNS, FUZZ_SEED override),
# capped at SECONDS (default 30) each.
# Fails if any target crashes (the input is left in fuzz/artifacts/<target>/).
# Extra arguments after SECONDS go to libFuzzer (e.g. -jobs=2 -workers=2).
set -uo pipefail
secs="${1:-30}"
shift || true
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
# cargo-fuzz passes -Z flags to rustc (sanitizer, coverage); stable accepts
# them with RUSTC_BOOTSTRAP=1. See fuzz/README.md.
export RUSTC_BOOTSTRAP=1
start=$(date +%s)
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --version 0.13.2 --locked || exit 2
fi
./seed.sh || exit 2
targets=$(cargo fuzz list)
cargo fuzz build || exit 2
built=$(date +%s)
echo "smoke: build took $((built - start)) s"
# Executions per target in the smoke run (each takes about 10-30 s on the
# 2-core CI machine; the targets differ a lot in cost per execution).
runs() {
    case "$1" in
        content_split) echo "${FUZZ_RUNS:-20000}" ;;
        limits) echo "${FUZZ_RUNS:-20000}" ;;
        limits_any) echo "${FUZZ_RUNS:-10000}" ;;
        pythonic) echo "${FUZZ_RUNS:-40000}" ;;
        provider) echo "${FUZZ_RUNS:-3000}" ;;
        sse) echo "${FUZZ_RUNS:-20000}" ;;
        ndjson) echo "${FUZZ_RUNS:-40000}" ;;
        *) echo "${FUZZ_RUNS:-100000}" ;;
    esac
}
failed=()
for t in $targets; do
    log="$here/artifacts/smoke-$t.log"
    mkdir -p "$here/artifacts"
    # A fixed seed and a fixed number of runs make the smoke run the same
    # inputs on every machine, so CI is not red by chance; SECONDS caps it.
    cargo fuzz run "$t" -- -seed="${FUZZ_SEED:-1}" -runs="$(runs "$t")" \
        -max_total_time="$secs" -rss_limit_mb=2048 "$@" >"$log" 2>&1
    rc=$?
    runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+')
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        echo "smoke: $t: ok, ${runs:-?} executions ($cov)"
    else
        echo "smoke: $t: FAILED (exit $rc), log $log"
        grep -E "panicked at|^thread|Test unit written" -A3 "$log" | head -20
        failed+=("$t")
    fi
done
end=$(date +%s)
echo "smoke: total wall time $((end - start)) s (build $((built - start)) s)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "smoke: crashes in: ${failed[*]}"
    exit 1
fi

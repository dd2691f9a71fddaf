#!/usr/bin/env bash
# A long fuzz campaign, outside CI: runs each named target for SECONDS with
# the already built fuzz binaries (no rebuild, so the library can be edited
# meanwhile), at low priority, and appends one row per run to
# fuzz/campaign.tsv: date, commit, target, seconds, max_len, executions,
# result. The totals per target are what the closing notes quote.
#
#   fuzz/campaign.sh SECONDS MAX_LEN TARGET...
#   fuzz/campaign.sh 1800 4096 json_repair ndjson
#
# Build first (`RUSTC_BOOTSTRAP=1 cargo fuzz build`, from fuzz/). A crash
# stops that target's run; its input is in fuzz/artifacts/<target>/ and the
# row's result is `crash`. `fuzz/campaign.sh --totals` prints the totals.
#
# FUZZ_SANITIZER=none runs the binaries of
# `cargo fuzz build -s none --target-dir target-nosan` instead (5-10x the
# executions per second: the crate forbids unsafe code, and the targets
# assert the contracts themselves, so AddressSanitizer mostly costs time);
# the row's eighth column records the sanitizer (rows without one: address).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ledger="$here/campaign.tsv"
if [ "${1:-}" = "--totals" ]; then
    awk -F'\t' 'NR > 1 { n[$3] += $6; s[$3] += $4; if ($7 != "ok" && $7 != "stopped") c[$3]++ }
        END { for (t in n) printf "%-14s %12d executions  %7d s  %d crash(es)\n", t, n[t], s[t], c[t] }' \
        "$ledger" | sort
    exit 0
fi
secs="$1"
max_len="$2"
shift 2
sanitizer="${FUZZ_SANITIZER:-address}"
case "$sanitizer" in
    address) bin="$here/target/x86_64-unknown-linux-gnu/release" ;;
    none) bin="$here/target-nosan/x86_64-unknown-linux-gnu/release" ;;
    *) echo "campaign: FUZZ_SANITIZER is address or none" >&2; exit 2 ;;
esac
commit="$(git -C "$here" rev-parse --short HEAD)"
[ -f "$ledger" ] || printf 'date\tcommit\ttarget\tseconds\tmax_len\texecutions\tresult\tsanitizer\n' >"$ledger"
mkdir -p "$here/artifacts" "$here/logs"
for t in "$@"; do
    [ -x "$bin/$t" ] || { echo "campaign: $bin/$t not built" >&2; exit 2; }
    mkdir -p "$here/corpus/$t" "$here/artifacts/$t"
    log="$here/logs/$t-$(date +%Y%m%dT%H%M%S).log"
    start=$(date +%s)
    nice -n 19 "$bin/$t" "$here/corpus/$t" -max_total_time="$secs" -max_len="$max_len" \
        -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$here/artifacts/$t/" >"$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ -z "$execs" ]; then
        # A crash ends the run before the final stats: take the last status line.
        execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
    fi
    # crash / timeout / slow-unit / oom: the artifact libFuzzer wrote; a run
    # ended by a signal without one (killed, or paused past -timeout) is
    # `stopped` (a timeout found while paused is checked by hand).
    result=ok
    if [ "$rc" -ne 0 ]; then
        result=$(sed -n 's|.*Test unit written to .*/\([a-z-]*\)-[0-9a-f]*$|\1|p' "$log" | tail -1)
        result=${result:-stopped}
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$commit" "$t" "$took" "$max_len" \
        "${execs:-0}" "$result" "$sanitizer" >>"$ledger"
    echo "campaign: $t $took s, ${execs:-0} executions, $result ($log)"
done

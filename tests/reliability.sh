#!/bin/sh
# Prints the reliability table of README "Tests and measurements" (issue 20):
#   1. fuzzing: executions and findings per libFuzzer target (clang sanitizer build)
#   2. the malformed-datagram suite (tests/osc/vmc_flood): refused, taken, memory, recovery
#   3. kill -9 mid-recording: whole rows recovered from FILE.partial, and replayed
#   4. long-run memory: resident set of embody --demo --fast sampled over a run
#
#   tests/reliability.sh [BUILD [SANITIZE_BUILD]]     (defaults: build, build-sanitize)
# Environment: FUZZ_S (seconds per target, 30), DATAGRAMS (per kind, 20000), KILLS (5),
# LONG_S (seconds of the long run, 60). Needs a display-less run: everything is --no-window.
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
sanitize="${2:-build-sanitize}"
fuzz_s="${FUZZ_S:-30}"
datagrams="${DATAGRAMS:-20000}"
kills="${KILLS:-5}"
long_s="${LONG_S:-60}"
embody="$build/embody"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XR_RUNTIME_JSON=/nonexistent/runtime.json

echo "## Fuzzing ($fuzz_s s per target, one core, from the seeds; $sanitize)"
echo
echo "| target | executions | findings |"
echo "|---|---|---|"
if ls "$sanitize"/tests/fuzz/fuzz_* >/dev/null 2>&1; then
    for f in "$sanitize"/tests/fuzz/fuzz_*; do
        name=${f##*/fuzz_}
        mkdir -p "$tmp/corpus-$name" "$tmp/art-$name"
        status=0
        LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0" \
        ASAN_OPTIONS=verify_asan_link_order=0 \
            "$f" -max_total_time="$fuzz_s" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
            -print_final_stats=1 -artifact_prefix="$tmp/art-$name/" "$tmp/corpus-$name" \
            "tests/fuzz/seeds/$name" >"$tmp/fuzz-$name.log" 2>&1 || status=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz-$name.log" | tail -1)
        found=$(ls "$tmp/art-$name" | wc -l)
        [ "$status" = 0 ] || [ "$found" != 0 ] || found="exit $status"
        echo "| $name | ${execs:-?} | $found |"
    done
else
    echo "| (no fuzz targets in $sanitize: build it with clang and -DEMBODY_SANITIZE=ON) | | |"
fi

echo
echo "## Malformed datagrams ($datagrams of each kind at a VMC input on 127.0.0.1)"
echo
"$build/tests/osc/vmc_flood" "$datagrams" 2>/dev/null

echo
echo "## kill -9 mid-recording (embody --demo --no-window --record, killed after N s)"
echo
echo "| run | killed after, s | FILE.csv | whole rows in FILE.csv.partial | replayed frames |"
echo "|---|---|---|---|---|"
i=1
while [ "$i" -le "$kills" ]; do
    after=$((1 + i))
    out="$tmp/crash-$i.csv"
    "$embody" --demo --no-window --record "$out" >/dev/null 2>&1 &
    pid=$!
    sleep "$after"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    rows=$(($(wc -l <"$out.partial") - 1))
    played=$("$embody" --replay "$out.partial" --fast --no-window 2>/dev/null |
        sed -n 's/^embody: \([0-9]*\) frames from.*/\1/p')
    [ -e "$out" ] && whole="exists" || whole="absent"
    echo "| $i | $after | $whole | $rows | ${played:-refused} |"
    i=$((i + 1))
done

echo
echo "## Long run (embody --demo --fast --no-window for $long_s s)"
echo
echo "| after, s | resident memory, kB |"
echo "|---|---|"
"$embody" --demo --fast --no-window >"$tmp/long.log" 2>&1 &
pid=$!
t=0
step=$((long_s / 6))
[ "$step" -ge 1 ] || step=1
sleep 1
while [ "$t" -le "$long_s" ]; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    echo "| $((t + 1)) | $rss |"
    sleep "$step"
    t=$((t + step))
done
kill -INT "$pid"
wait "$pid" || true
frames=$(sed -n 's/^embody: \([0-9]*\) frames from.*/\1/p' "$tmp/long.log")
echo
echo "frames in the long run: ${frames:-?}"

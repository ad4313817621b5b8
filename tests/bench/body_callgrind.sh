#!/bin/sh
# Instructions per body_update, counted by valgrind's callgrind (repeatable where wall time
# is noisy): runs bench_body_update once under callgrind, collecting only inside
# body_update, and prints the count per avatar-frame with the functions that take most.
#
#   tests/bench/body_callgrind.sh [BUILD_DIR] [bench_body_update options...]
#
# BUILD_DIR defaults to build; the options go to bench_body_update (DIR, --frames N,
# --prior MODEL or --procedural). Exits non-zero when anything is missing or fails.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/tests/bench/bench_body_update"
[ -x "$bench" ] || { echo "body_callgrind.sh: $bench not found; build first" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "body_callgrind.sh: valgrind is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out/cg" \
    "$bench" "$@" --callgrind --slowest 0 >"$out/table" 2>"$out/log" ||
    { cat "$out/log" >&2; exit 1; }
frames=$(sed -n 's/^| all *| fastest of passes | *\([0-9]*\) |.*/\1/p' "$out/table")
total=$(sed -n 's/^summary: *//p' "$out/cg")
[ -n "$total" ] || total=$(sed -n 's/^totals: *//p' "$out/cg")
[ -n "$frames" ] && [ "$frames" -gt 0 ] && [ -n "$total" ] ||
    { echo "body_callgrind.sh: no count" >&2; exit 1; }
printf '| avatar-frames | instructions | instructions per body_update |\n'
printf '|---------------|--------------|------------------------------|\n'
printf '| %13d | %12d | %28d |\n' "$frames" "$total" $((total / frames))
if command -v callgrind_annotate >/dev/null; then
    printf '\nInstructions per body_update by function (inclusive, the first 25 of src/):\n\n'
    callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null |
        sed -n 's/^ *\([0-9,][0-9,]*\) ([^)]*) *\(src\/[^ ]*\) .*/\1 \2/p' | tr -d , |
        awk -v n="$frames" '!($2 in seen) { seen[$2] = 1; printf "%10d  %s\n", $1 / n, $2; k++ }
                            k >= 25 { exit }'
fi

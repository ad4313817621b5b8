#!/bin/sh
# Instructions per solve, counted by valgrind's callgrind (repeatable where wall time is
# noisy): runs ik_bench under callgrind for each problem and solve mode, collecting only
# inside the timed solves, and prints a table.
#
#   tests/bench/callgrind.sh [BUILD_DIR] [PROBLEMS_JSON] [SOLVES] [SOLVER]
#
# SOLVER: fabrik (the default), ccd, jt or dls (ik_bench --solver); the last three turn
# joints, so they have no pos rows and no predicted warm starts. The environment's
# CALLGRIND_PROBLEMS (ids separated by spaces) chooses the problems.
# BUILD_DIR defaults to build, PROBLEMS_JSON to ../shared/bench/problems.json beside the
# source tree or, without it, the copy the build unpacked from tests/data/bench
# (BUILD_DIR/tests/data/bench/problems.json); SOLVES (target sets per problem) to 2000;
# P2_chain1000 uses a tenth. Exits non-zero when anything is missing or fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
problems=${2:-$here/../../../shared/bench/problems.json}
[ -n "${2:-}" ] || [ -r "$problems" ] || problems="$build/tests/data/bench/problems.json"
solves=${3:-2000}
solver=${4:-fabrik}
# CALLGRIND_PROBLEMS: the problems to count (default all six; CCD and the Jacobian
# methods take seconds per P2_chain1000 solve under valgrind).
ids=${CALLGRIND_PROBLEMS:-P1_chain10 P2_chain100 P2_chain1000 P3_human3 P3_human5 P3_human3_track}
case "$solver" in fabrik|ccd|jt|dls) ;; *) echo "callgrind.sh: unknown solver $solver" >&2; exit 1 ;; esac
bench="$build/tests/bench/ik_bench"
[ -x "$bench" ] || { echo "callgrind.sh: $bench not found; build first" >&2; exit 1; }
[ -r "$problems" ] || { echo "callgrind.sh: $problems not readable" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '| problem          | mode   | solve  | solves | instructions per solve |\n'
printf '|------------------|--------|--------|--------|------------------------|\n'
for mode in pos full limits; do
    for id in $ids; do
        case "$mode:$id" in limits:P1*|limits:P2*) continue ;; esac
        [ "$solver" != fabrik ] && [ "$mode" = pos ] && continue
        n=$solves
        [ "$id" = P2_chain1000 ] && n=$((solves / 10))
        starts=plain
        [ "$id" = P3_human3_track ] && [ "$solver" = fabrik ] && starts="plain predict"
        for start in $starts; do
            valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out/cg" \
                "$bench" --problems "$problems" --only "$id" --mode "$mode" --solves "$n" \
                --start "$start" --solver "$solver" --callgrind >/dev/null 2>"$out/log"
            total=$(sed -n 's/^summary: *//p' "$out/cg")
            [ -n "$total" ] || total=$(sed -n 's/^totals: *//p' "$out/cg")
            [ -n "$total" ] || { echo "callgrind.sh: no count for $id ($mode)" >&2; exit 1; }
            how=cold
            [ "$id" = P3_human3_track ] && how=warm
            [ "$start" = predict ] && how=warm+p
            printf '| %-16s | %-6s | %-6s | %6d | %22d |\n' "$id" "$how" "$mode" "$n" $((total / n))
        done
    done
done

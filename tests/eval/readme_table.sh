#!/bin/sh
# Checks the accuracy table of the public clips (docs/accuracy.md) against what `embody eval` prints
# now: the MPJPE, upper, lower, hands and feet columns of the "known body | prior" and
# "height only | prior" rows of the table under "**Public clips" must be within 0.05 cm
# of the same rows of eval's "Prior and procedural side by side" table. Prints each
# figure, and fails (exit 1) naming the ones that differ.
#
#   tests/eval/readme_table.sh EMBODY docs/accuracy.md CLIP_DIR [EVAL_OUTPUT]
#
# EVAL_OUTPUT: a file with eval's output to use instead of running it (for tests).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 EMBODY docs/accuracy.md CLIP_DIR [EVAL_OUTPUT]" >&2; exit 2; }
embody=$1 readme=$2 clips=$3
[ -r "$readme" ] || { echo "readme_table.sh: $readme: not readable" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ $# -ge 4 ]; then
    cp "$4" "$out"
else
    "$embody" eval "$clips" --quiet --json - --validation - >"$out"
fi
awk -v tol=0.05 -v readme="$readme" '
    FNR == 1 { file++ }
    file == 1 && /^\*\*Public clips/ { on[1] = 1 }
    file == 2 && /^## Prior and procedural side by side/ { on[2] = 1 }
    on[file] && /^\| *(known body|height only) *\| *prior *\|/ {
        split($0, f, "|")
        mode = f[2]; gsub(/^ +| +$/, "", mode)
        if ((file, mode) in seen) next
        seen[file, mode] = 1
        for (c = 4; c <= 8; c++) { v = f[c]; gsub(/ /, "", v); value[file, mode, c] = v }
    }
    END {
        split("MPJPE upper lower hands feet", name, " ")
        bad = 0
        n = split("known body|height only", modes, "|")
        for (m = 1; m <= n; m++) {
            mode = modes[m]
            for (k = 1; k <= 2; k++)
                if (!((k, mode) in seen)) {
                    printf "readme_table.sh: no \"%s | prior\" row in %s\n", mode,
                           k == 1 ? readme " (under **Public clips)" : "eval'"'"'s output"
                    bad = 1
                }
            if (!((1, mode) in seen) || !((2, mode) in seen)) continue
            for (c = 4; c <= 8; c++) {
                r = value[1, mode, c]; e = value[2, mode, c]; d = r - e; if (d < 0) d = -d
                verdict = d <= tol ? "same" : "DIFFERS"
                printf "%-11s prior %-5s doc %6s  eval %6s  %s\n", mode, name[c - 3], r, e, verdict
                if (d > tol) bad = 1
            }
        }
        if (bad) printf "readme_table.sh: " readme " and embody eval disagree (by more than %s cm)\n", tol
        exit bad
    }' "$readme" "$out"

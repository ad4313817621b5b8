#!/bin/sh
# The README's small accuracy table must hold the figures of the tables it summarises
# (those are checked against `embody eval` by tests/eval/readme_table.sh): the 3-point
# row is docs/accuracy.md's "known body | prior" public-clip row (MPJPE, lower body), the
# 6-point row docs/trackers.md's "6 | known body" row, the do-nothing row accuracy.md's
# "do-nothing" row. Prints each pair; fails (exit 1) naming one that differs.
#   tests/docs/readme_accuracy.sh SOURCE_DIR
set -eu
src=$1
awk '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    FNR == 1 { file = FILENAME; sub(/.*\//, "", file) }
    file == "README.md" && /^\| 3-point/ { split($0, f, "|"); readme["3", 1] = trim(f[3]); readme["3", 2] = trim(f[4]) }
    file == "README.md" && /^\| 6-point/ { split($0, f, "|"); readme["6", 1] = trim(f[3]); readme["6", 2] = trim(f[4]) }
    file == "README.md" && /^\| doing nothing/ { split($0, f, "|"); readme["0", 1] = trim(f[3]); readme["0", 2] = trim(f[4]) }
    file == "accuracy.md" && /^\*\*Public clips/ { on = 1 }
    file == "accuracy.md" && on && /^\| known body +\| prior +\|/ && !(("3", 1) in doc) {
        split($0, f, "|"); doc["3", 1] = trim(f[4]); doc["3", 2] = trim(f[6]) }
    file == "accuracy.md" && on && /^\| do-nothing +\|/ && !(("0", 1) in doc) {
        split($0, f, "|"); doc["0", 1] = trim(f[4]); doc["0", 2] = trim(f[6]) }
    file == "trackers.md" && /^\| +6 \| known body +\|/ && !(("6", 1) in doc) {
        split($0, f, "|"); doc["6", 1] = trim(f[4]); doc["6", 2] = trim(f[5]) }
    END {
        split("3 6 0", rows, " "); split("3-point,6-point,doing nothing", names, ",")
        split("MPJPE,lower body", cols, ",")
        bad = 0
        for (r = 1; r <= 3; r++)
            for (c = 1; c <= 2; c++) {
                k = rows[r]
                a = (k, c) in readme ? readme[k, c] : "(none)"
                b = (k, c) in doc ? doc[k, c] : "(none)"
                ok = a != "(none)" && a == b
                printf "%-14s %-10s README %-7s docs %-7s %s\n", names[r], cols[c], a, b, ok ? "same" : "DIFFERS"
                if (!ok) bad = 1
            }
        if (bad) print "readme_accuracy.sh: the README table and the docs it summarises disagree"
        exit bad
    }' "$src/README.md" "$src/docs/accuracy.md" "$src/docs/trackers.md"

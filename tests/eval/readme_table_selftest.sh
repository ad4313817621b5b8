#!/bin/sh
# readme_table.sh must notice a changed figure: docs/accuracy.md's public-clip "known body | prior"
# MPJPE changed by 0.1 cm against an eval output holding README's own rows must fail,
# and the unchanged document must pass.
#
#   tests/eval/readme_table_selftest.sh docs/accuracy.md tests/eval/readme_table.sh
set -eu
readme=$1 check=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
    echo "## Prior and procedural side by side"
    awk '/^\*\*Public clips/ { on = 1 } on && /^\| *(known body|height only) *\| *prior *\|/' "$readme"
} >"$dir/eval.txt"
awk '/^\*\*Public clips/ { on = 1 }
     on && !done && /^\| *known body *\| *prior *\|/ {
         n = split($0, f, "|")
         line = f[1] "|" f[2] "|" f[3] "|" sprintf(" %5.2f ", f[4] + 0.1)
         for (i = 5; i <= n; i++) line = line "|" f[i]
         $0 = line
         done = 1 }
     { print }' "$readme" >"$dir/README.md"
sh "$check" none "$readme" none "$dir/eval.txt" >/dev/null || { echo "selftest: the README itself fails" >&2; exit 1; }
if sh "$check" none "$dir/README.md" none "$dir/eval.txt"; then
    echo "selftest: a README figure 0.1 cm off was not noticed" >&2
    exit 1
fi
echo "selftest: a figure 0.1 cm off is noticed"

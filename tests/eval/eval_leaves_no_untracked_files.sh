#!/bin/sh
# `embody eval` run from the repository's root, as the README shows, must leave
# `git status` clean: what it writes there (its JSON copies) is in .gitignore. Runs a short
# eval in a scratch git repository holding the repository's .gitignore, and fails naming
# any file git would report. Skipped (exit 77) without git.
#   tests/eval/eval_leaves_no_untracked_files.sh EMBODY SOURCE_DIR
set -eu
embody=$1 src=$2
command -v git >/dev/null 2>&1 || { echo "no git: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$src/.gitignore" "$dir/.gitignore"
cd "$dir"
git init -q .
git add .gitignore
"$embody" eval "$src/tests/data/mocap" --subjects 05 --frames 8 --validation - --quiet >eval.out 2>&1 ||
    { cat eval.out; echo "eval failed" >&2; exit 1; }
rm eval.out
ls "$dir" | grep -q json || { echo "eval wrote no JSON here; the check would prove nothing" >&2; exit 1; }
left=$(git status --porcelain --untracked-files=all | grep -v ' .gitignore$' || true)
if [ -n "$left" ]; then
    echo "embody eval left files git reports (add them to .gitignore):" >&2
    echo "$left" >&2
    exit 1
fi
echo "eval's files are ignored: $(ls "$dir" | tr '\n' ' ')"

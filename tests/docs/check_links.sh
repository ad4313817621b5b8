#!/bin/sh
# Walks every link of README.md and docs/*.md (and of any further .md file they link to in
# the repository) and checks that it resolves: a relative link names a file or folder that
# exists, and a "#heading" part names a heading of the target Markdown file (GitHub's
# anchors: lower case, punctuation other than - and _ dropped, spaces as -). Links to
# other sites (http:, https:, mailto:) are not followed. Prints each broken link with its
# file and line, and fails (exit 1) when there is one.
#
#   tests/docs/check_links.sh SOURCE_DIR [FILE.md...]
set -eu
[ $# -ge 1 ] || { echo "usage: $0 SOURCE_DIR [FILE.md...]" >&2; exit 2; }
src=$1
shift
cd "$src"
[ $# -gt 0 ] || set -- README.md docs/*.md
awk '
    # The anchor GitHub gives a heading line ("## The body: how" -> "the-body-how").
    function slug(h) {
        sub(/^#+[ \t]*/, "", h); sub(/[ \t]+$/, "", h)
        h = tolower(h)
        gsub(/[^a-z0-9 _-]/, "", h)
        gsub(/ /, "-", h)
        return h
    }
    function dirname(p) { if (p !~ /\//) return "."; sub(/\/[^\/]*$/, "", p); return p }
    # a/b/../c -> a/c, ./a -> a
    function normal(p,    n, i, part, out, k) {
        n = split(p, part, "/"); k = 0
        for (i = 1; i <= n; i++) {
            if (part[i] == "." || part[i] == "") continue
            if (part[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
            out[++k] = part[i]
        }
        p = ""
        for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
        return p == "" ? "." : p
    }
    function exists(p) { return system("test -e \"" p "\"") == 0 }
    # Read through a command of its own, so a file can list its headings while it is
    # being walked (getline on the same name would share its position).
    function headings(file,    line, n, cmd, fence) {
        if (file in scanned) return
        scanned[file] = 1
        fence = 0
        cmd = "cat \"" file "\""
        while ((cmd | getline line) > 0) {
            if (line ~ /^```/) fence = !fence
            if (!fence && line ~ /^#+ /) {
                s = slug(line)
                if ((file, s) in anchor) { n = ++dup[file, s]; s = s "-" n }
                anchor[file, s] = 1
            }
        }
        close(cmd)
    }
    function check(file, lineno, target,    path, frag, i) {
        if (target ~ /^(https?|mailto):/) return
        frag = ""
        i = index(target, "#")
        if (i) { frag = substr(target, i + 1); path = substr(target, 1, i - 1) } else path = target
        path = path == "" ? file : normal(dirname(file) "/" path)
        if (!exists(path)) { printf "%s:%d: %s: no such file\n", file, lineno, target; bad++; return }
        if (path ~ /\.md$/ && !(path in queued)) { queued[path] = 1; queue[++nq] = path }
        if (frag == "") return
        if (path !~ /\.md$/) { printf "%s:%d: %s: a #heading in a file that is not Markdown\n", file, lineno, target; bad++; return }
        headings(path)
        if (!((path, frag) in anchor)) { printf "%s:%d: %s: no heading \"#%s\" in %s\n", file, lineno, target, frag, path; bad++ }
    }
    function walk(file,    line, lineno, rest, m, t, fence) {
        lineno = 0; fence = 0
        while ((getline line < file) > 0) {
            lineno++
            if (line ~ /^```/) { fence = !fence; continue }
            if (fence) continue
            rest = line
            # [text](target) and ![alt](target), without a title part
            while (match(rest, /\]\([^) \t]+\)/)) {
                t = substr(rest, RSTART + 2, RLENGTH - 3)
                check(file, lineno, t)
                links++
                rest = substr(rest, RSTART + RLENGTH)
            }
        }
        close(file)
    }
    BEGIN {
        for (i = 1; i < ARGC; i++) { queued[ARGV[i]] = 1; queue[++nq] = ARGV[i] }
        for (q = 1; q <= nq; q++) walk(queue[q])
        printf "check_links: %d links in %d Markdown files, %d broken\n", links, nq, bad
        exit bad > 0
    }' "$@"

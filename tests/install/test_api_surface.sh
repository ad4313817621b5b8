#!/bin/sh
# The shared library exports exactly the functions its installed headers declare, no more
# and no fewer. The declarations come from the compiler, not from the headers' layout: each
# installed header is compiled with gcc's -aux-info, which lists every function the
# translation unit declares with its file and line, however the declaration is written;
# those in include/embody/ that are not static (the inline helpers) are the public API.
# The exports are the defined dynamic symbols of the installed libembody.so.
#   test_api_surface.sh BUILD_DIR
set -eu
build=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/embody-api.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "test_api_surface: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || {
    cat "$work/install.log"; fail "cmake --install failed"; }
pc=$(find "$prefix" -name embody.pc -path "*/pkgconfig/*")
[ -n "$pc" ] || fail "no embody.pc under $prefix"
export PKG_CONFIG_PATH="$(dirname "$pc")"
library=$(pkg-config --variable=libdir embody)/libembody.so
[ -e "$library" ] || fail "no $library"
include=$(cd "$prefix/include/embody" && pwd -P)

# Every function declared in an installed header, as "name header:line" (the prefix's
# include folder first, by its real path, so that -aux-info names the files by it).
for h in "$include"/*.h; do
    name=$(basename "$h")
    printf '#include <embody/%s>\n' "$name" >"$work/unit.c"
    gcc -std=c11 -I"$(dirname "$include")" $(pkg-config --cflags embody) -fsyntax-only -aux-info "$work/$name.aux" \
        "$work/unit.c" || fail "$name does not compile alone"
done
cat "$work"/*.aux | grep -F "/* $include/" | grep -v ' static ' |
    sed -E 's|^/\* [^ ]*/([^/ ]+\.h):([0-9]+):[A-Z]+ \*/ extern [^(]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) \(.*|\3 \1:\2|' |
    sort -u >"$work/declared.txt"
if grep -v -E '^[A-Za-z_][A-Za-z0-9_]* [a-z_0-9]+\.h:[0-9]+$' "$work/declared.txt"; then
    fail "could not read the function's name in the declarations above"
fi
[ -s "$work/declared.txt" ] || fail "no function declared in $include"
cut -d' ' -f1 "$work/declared.txt" | sort -u >"$work/declared_names.txt"
nm -D --defined-only "$library" | awk '{print $3}' | sort -u >"$work/exported.txt"

comm -23 "$work/declared_names.txt" "$work/exported.txt" >"$work/hidden.txt"
comm -13 "$work/declared_names.txt" "$work/exported.txt" >"$work/undeclared.txt"
echo "test_api_surface: $(wc -l <"$work/declared_names.txt") functions declared in the" \
    "installed headers, $(wc -l <"$work/exported.txt") symbols exported by libembody.so"
status=0
if [ -s "$work/hidden.txt" ]; then
    echo "declared in an installed header but not exported by libembody.so" \
        "($(wc -l <"$work/hidden.txt")):" >&2
    awk 'NR == FNR { hidden[$1]; next } $1 in hidden { print "    " $0 }' "$work/hidden.txt" \
        "$work/declared.txt" >&2
    status=1
fi
if [ -s "$work/undeclared.txt" ]; then
    echo "exported by libembody.so but declared in no installed header" \
        "($(wc -l <"$work/undeclared.txt")):" >&2
    sed 's/^/    /' "$work/undeclared.txt" >&2
    status=1
fi
exit $status

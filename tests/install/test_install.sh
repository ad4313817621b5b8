#!/bin/sh
# Installs embody from BUILD_DIR into a fresh prefix and checks what an embedder gets: the
# files in their places, public headers that compile alone, the examples built with
# pkg-config (shared library) and with find_package (static library) and run, and the
# installed library reading its installed data.
#   test_install.sh BUILD_DIR SOURCE_DIR STREAM.csv
set -eu
build=$1 src=$2 stream=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/embody-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "test_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || {
    cat "$work/install.log"; fail "cmake --install failed"; }

pc=$(find "$prefix" -name embody.pc -path "*/pkgconfig/*")
[ -n "$pc" ] || fail "no embody.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH="$(dirname "$pc")"
[ "$(pkg-config --variable=libdir embody)" -ef "$libdir" ] ||
    fail "embody.pc's libdir is not $libdir (the .pc must follow --prefix)"
for f in "$libdir/libembody.a" "$libdir/libembody.so" "$libdir/cmake/embody/embodyConfig.cmake" \
    "$libdir/cmake/embody/embodyConfigVersion.cmake" "$prefix/include/embody/ik.h" \
    "$prefix/include/embody/body.h" "$prefix/share/embody/config/humanoid.json" \
    "$prefix/bin/embody"; do
    [ -e "$f" ] || fail "missing $f"
done
# The other modules' contracts (src/<module>/) are not the library's API.
for f in render.h xr.h osc.h avatar.h plot.h eval.h fault.h pr_training.h; do
    [ ! -e "$prefix/include/embody/$f" ] || fail "$f installed, but it is not the library's public API"
done
soname=$(objdump -p "$libdir/libembody.so" | awk '/SONAME/ {print $2}')
version=$(pkg-config --modversion embody)
case "$soname" in
libembody.so.*) [ -e "$libdir/$soname" ] || fail "no $soname beside libembody.so" ;;
*) fail "libembody.so has no versioned SONAME (got '$soname')" ;;
esac
case "$version" in "${soname#libembody.so.}"*) ;; *) fail "SONAME $soname does not match version $version" ;; esac
if objdump -p "$libdir/libembody.so" | grep NEEDED | grep -E "libSDL|libGL|libEGL|libepoxy|libopenxr|liblo\.|libX11"; then
    fail "libembody.so needs a library an embedder should not need"
fi
# What libembody.so exports against what the headers declare: test_api_surface.sh.

# Every public header compiles on its own, and none reaches into src/.
for h in "$prefix"/include/embody/*.h; do
    if grep -n '#include "' "$h" | grep -v '"embody/'; then fail "$h includes a private header"; fi
    printf '#include <embody/%s>\n' "$(basename "$h")" >"$work/header.c"
    cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags embody) -c "$work/header.c" \
        -o "$work/header.o" || fail "$(basename "$h") does not compile alone"
done

# The examples with pkg-config and the shared library, as the README shows.
mkdir "$work/make"
cp "$src"/examples/*.c "$src"/examples/Makefile "$work/make/"
make -s -C "$work/make" CFLAGS="-O2 -Wall -Wextra -Werror" || fail "examples/Makefile failed"
"$work/make/solve_arm" || fail "solve_arm (shared) failed"
"$work/make/body_from_stream" "$stream" "$work/body.bvh" || fail "body_from_stream (shared) failed"
grep -q '^HIERARCHY' "$work/body.bvh" && grep -q '^Frames: [1-9]' "$work/body.bvh" ||
    fail "body_from_stream wrote no BVH motion"
loaded=$(ldd "$work/make/solve_arm" | awk '/libembody/ {print $3}')
[ -n "$loaded" ] && [ "$loaded" -ef "$libdir/$soname" ] ||
    fail "solve_arm does not use the installed libembody.so (it loads '$loaded')"

# The README's program, built with the README's command.
awk '/^## The library/ {s = 1} s && /^```c/ {p = 1; next} p && /^```/ {exit} p' \
    "$src/README.md" >"$work/readme_arm.c"
[ -s "$work/readme_arm.c" ] || fail "no C program in the README's section 'The library'"
# The README's command line for a prefix of one's own, as written (it runs ./arm too).
readme_cc=$(grep -E '^ +cc arm\.c .*-Wl,-rpath' "$src/README.md" | sed 's/^ *//')
[ -n "$readme_cc" ] || fail "no 'cc arm.c ... -Wl,-rpath' command in the README"
cp "$work/readme_arm.c" "$work/arm.c"
(cd "$work" && eval "$readme_cc") >"$work/arm.out" ||
    fail "the README's program does not build or run with the README's command: $readme_cc"
awk '$1 == "wrist" { d = ($2 - 0.25) ^ 2 + ($3 - 1.1) ^ 2 + ($4 - 0.3) ^ 2
    found = 1; exit !(d < 0.002 ^ 2) } END { if (!found) exit 1 }' "$work/arm.out" ||
    fail "the README's program does not bring the wrist within 2 mm of its target"

# The examples with find_package and the static library.
cmake -S "$src/examples" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DEMBODY_EXAMPLES_STATIC=ON >"$work/cmake.log" || { cat "$work/cmake.log"; fail "find_package(embody) failed"; }
cmake --build "$work/cmake" >"$work/build.log" || { cat "$work/build.log"; fail "examples/CMakeLists.txt failed"; }
"$work/cmake/solve_arm" >/dev/null || fail "solve_arm (static) failed"
"$work/cmake/body_from_stream" "$stream" | grep -q "leftHand" || fail "body_from_stream (static) printed no hands"

# The installed shared library reads the installed default avatar: spoil it, and the body
# must fail naming it (not quietly fall back to the source tree).
echo "{" >"$prefix/share/embody/config/humanoid.json"
if "$work/make/body_from_stream" "$stream" >/dev/null 2>"$work/err.txt"; then
    fail "body_from_stream ignored the installed config/humanoid.json"
fi
grep -q "$prefix/share/embody/config/humanoid.json" "$work/err.txt" ||
    { cat "$work/err.txt"; fail "the error does not name the installed humanoid.json"; }
echo "test_install: installed into $prefix, built and ran the examples (shared and static)"

#!/bin/sh
# Builds the solver's tests in builds that round floats differently and runs each, so that
# a threshold's margin can be checked against them (docs/testing.md, "Results that hold
# on every machine"). Slow (a build each, about a minute on two cores); not part of ctest.
#   tests/ik/rounding_builds.sh [WORKDIR]     (default: /tmp/embody-rounding)
set -eu
src="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-/tmp/embody-rounding}"
jobs=$(nproc 2>/dev/null || echo 2)
failed=0

variant() { # variant NAME CMAKE-OPTIONS...
    name="$1"; shift
    dir="$work/$name"
    if ! cmake -S "$src" -B "$dir" "$@" >"$dir.log" 2>&1 ||
        ! cmake --build "$dir" -j "$jobs" --target test_ik >>"$dir.log" 2>&1; then
        echo "$name: build failed (see $dir.log)"
        failed=1
        return
    fi
    if "$dir/tests/ik/test_ik" >"$dir.out" 2>&1; then result=passed; else result=FAILED; failed=1; fi
    echo "== $name: $result"
    grep "converged:" "$dir.out" || true
}

mkdir -p "$work"
variant gcc-O0 -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O0
variant gcc-O2 -DCMAKE_BUILD_TYPE=RelWithDebInfo
variant gcc-O3 -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O3
variant gcc-fma -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS=-mfma -ffp-contract=fast"
variant gcc-native -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-march=native
if command -v clang >/dev/null; then
    variant clang-O2 -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo
    variant clang-fma -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS=-mfma -ffp-contract=fast"
fi
exit $failed

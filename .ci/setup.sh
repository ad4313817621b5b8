#!/bin/sh
# Sets up embody on Debian 12 and runs it: installs the packages that are missing (with
# apt-get, when run as root), builds, then
#   .ci/setup.sh run    runs the main job (the headset if there is one, else the demo)
#   .ci/setup.sh test   runs every test: a -Werror build (gcc) and an ASan+UBSan build
#                       (clang, which checks more), under Xvfb, then a ThreadSanitizer
#                       build of the OpenXR layer and its concurrency test
set -eu
cd "$(dirname "$0")/.."
mode="${1:-run}"

PACKAGES="build-essential cmake pkg-config libcglm-dev libcjson-dev libcmocka-dev \
libsdl2-dev libepoxy-dev libopenxr-dev libopenxr-loader1 liblo-dev liblo-tools libstb-dev \
libgl1-mesa-dri xvfb xauth fonts-dejavu-core libassimp-dev libcairo2-dev \
openxr-layer-corevalidation"

# cpack's Debian packages (tests/install/test_package.sh): `file` and dpkg-shlibdeps
# (dpkg-dev) find the packages' shared-library dependencies; lintian checks them.
PACKAGES="$PACKAGES file dpkg-dev lintian"

# clang and its sanitizer runtime, for the sanitizer build of `test`.
PACKAGES="$PACKAGES clang libclang-rt-14-dev"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "embody setup: installing$missing"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
    else
        echo "embody setup: missing packages:$missing" >&2
        echo "run this script as root, or: sudo apt-get install$missing" >&2
        exit 1
    fi
fi

jobs=$(nproc 2>/dev/null || echo 2)

build() { # build DIR [cmake options...]
    dir="$1"; shift
    cmake -S . -B "$dir" "$@" >/dev/null
    cmake --build "$dir" -j "$jobs"
}

with_display() { # runs a command under Xvfb when there is no display
    if [ -n "${DISPLAY:-}" ]; then "$@"; else xvfb-run -a -s "-screen 0 1280x1024x24" "$@"; fi
}

case "$mode" in
run)
    # The program and what `cmake --install build` installs besides it (the libraries and
    # the OpenXR layer, as the README's install step needs), not the tests; warnings are
    # not errors here (a build dir left by `test` keeps EMBODY_WERROR=ON in its cache).
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEMBODY_WERROR=OFF >/dev/null
    cmake --build build -j "$jobs" --target embody embody_shared embody_static \
        embody_openxr_layer
    if [ -n "${DISPLAY:-}" ]; then
        exec ./build/embody
    fi
    echo "embody setup: no display here, so the mirror view renders off-screen under Xvfb:"
    echo "embody setup: 600 frames, then a screenshot in embody-demo.png"
    with_display ./build/embody --frames 600 --screenshot embody-demo.png
    ;;
test)
    # Every build's suite runs even when an earlier one fails (a failure in the first
    # used to hide the other two), and the summary names each that failed.
    failed=""
    suite() { # suite NAME DIR: runs the tests of the build in DIR, remembering a failure
        if ! (cd "$2" && with_display ctest --output-on-failure -j "$jobs"); then
            failed="$failed, $1"
            echo "embody setup: the $1 build's tests FAILED" >&2
        fi
    }
    # Its tests include installing into a temporary prefix and building and running the
    # examples against it (tests/install/test_install.sh).
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBODY_WERROR=ON
    suite gcc build
    # clang: its UBSan also catches value-changing implicit conversions and local array
    # bounds, and its -Werror build keeps the code clean under a second compiler. This
    # build also has the libFuzzer targets (tests/fuzz/): CTest replays their regression
    # inputs and fuzzes each parser for 20 s (EMBODY_FUZZ_SECONDS; about 70 s in all on
    # two cores). Longer runs: README, "Fuzzing".
    build build-sanitize -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DEMBODY_WERROR=ON \
        -DEMBODY_SANITIZE=ON
    suite "clang sanitizer" build-sanitize
    # ThreadSanitizer (clang): the OpenXR layer under an engine's threads
    # (tests/layer/test_layer_threads.c, through the loader over the test runtime). Only
    # the layer, the core, the test runtime and that test are built (EMBODY_TSAN).
    build build-tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DEMBODY_WERROR=ON \
        -DEMBODY_TSAN=ON
    suite TSan build-tsan
    if [ -n "$failed" ]; then
        echo "embody setup: tests failed in the ${failed#, } build" >&2
        exit 1
    fi
    echo "embody setup: all tests passed (gcc build, clang sanitizer build, TSan build)"
    ;;
*)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac

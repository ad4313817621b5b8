#!/bin/sh
# Builds the Debian packages (docs/packaging.md, cmake/EmbodyPackage.cmake): a Release
# build configured for /usr, compiled with the hardening flags Debian builds its own
# packages with (dpkg-buildflags, hardening=+all: stack protector, _FORTIFY_SOURCE,
# full RELRO with immediate binding), then cpack. Its .deb files are left in BUILD_DIR.
#   cmake/debian/build-packages.sh [BUILD_DIR [C_COMPILER]]   (build-release, cc)
set -eu
source=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-release}
cc=${2:-cc}
mkdir -p "$build"
build=$(cd "$build" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
# CMake's Release flags choose the optimisation (-O3); no debug information, as the
# packaged binaries are stripped.
export DEB_CFLAGS_MAINT_STRIP="-g -O2"
cflags="$(cd "$source" && dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
cmake -S "$source" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DEMBODY_BUILD_TESTS=OFF -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" \
    -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" \
    -DCMAKE_MODULE_LINKER_FLAGS="$ldflags"
cmake --build "$build" -j "$jobs"
rm -f "$build"/*.deb
(cd "$build" && cpack -G DEB)

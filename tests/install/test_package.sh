#!/bin/sh
# Builds the Debian packages as docs/packaging.md says (cmake/debian/build-packages.sh:
# a Release build configured for /usr with Debian's hardening flags, then cpack) in
# WORK_DIR/build, and checks them without installing them on the system:
# - lintian: no error, and no warning but those docs/packaging.md justifies (JUSTIFIED);
#   none of its hardening notes;
# - each package's files (dpkg-deb -c): the library and its SONAME link; the headers,
#   static library, pkg-config and CMake files; the program and its manual page; the
#   data with the default prior model only; the layer's library in the OpenXR plugin
#   folder and its manifest in the implicit layer folder (and no explicit one); each
#   package's copyright and changelog;
# - the control data (dpkg-deb -I, -f): shared-library dependencies found by
#   dpkg-shlibdeps, the shlibs file and the ldconfig trigger, no maintainer scripts;
# - unpacked together into one folder: the layer manifest's library_path resolves to a
#   library that exports the loader's entry point, the program plays the demo from the
#   packaged data, and examples/solve_arm.c builds with pkg-config against the packaged
#   development files and runs on the packaged library;
# - dpkg installs the five into an empty root of their own and purges them.
#   test_package.sh SOURCE_DIR WORK_DIR [C_COMPILER]
# Exits 77 (skipped) only when a tool it needs is missing.
set -eu
source=$1
work=$2
cc=${3:-cc}
for tool in lintian cpack dpkg dpkg-deb dpkg-buildflags dpkg-shlibdeps file objdump gzip \
    pkg-config; do
    command -v $tool >/dev/null 2>&1 ||
        { echo "test_package: no $tool here (.ci/setup.sh test installs it): skipped"; exit 77; }
done
# Warnings docs/packaging.md justifies, one lintian tag each ("" for none).
JUSTIFIED=""
fail() { echo "test_package: $*" >&2; exit 1; }

build=$work/build
out=$build
root=$work/root
mkdir -p "$work"
rm -rf "$root"
sh "$source/cmake/debian/build-packages.sh" "$build" "$cc" >"$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; fail "cmake/debian/build-packages.sh failed"; }

soname=$(objdump -p "$build"/libembody.so | sed -n 's/^ *SONAME *//p')
lib=$(echo "$soname" | sed -E 's/([0-9])\.so\./\1-/; s/\.so(\.|$)//; y/_/-/')
[ "$lib" = libembody0.1 ] || fail "SONAME $soname: expected libembody.so.0.1 (docs/library.md)"
deb_of() { # deb_of PACKAGE: its .deb
    set -- "$out/$1"_*.deb
    [ -f "$1" ] || { tail -n 30 "$work/build.log" >&2; fail "cpack made no package $1"; }
    echo "$1"
}
lib_deb=$(deb_of "$lib")
dev_deb=$(deb_of libembody-dev)
program_deb=$(deb_of embody)
data_deb=$(deb_of embody-data)
layer_deb=$(deb_of openxr-layer-embody)
[ "$(find "$out" -maxdepth 1 -name '*.deb' | wc -l)" -eq 5 ] || fail "more packages than expected: $(ls "$out")"

# lintian, as Debian runs it on an upload (errors and warnings; overrides are honoured,
# and the packages ship none).
lintian --no-cfg --fail-on none "$out"/*.deb >"$work/lintian.log" 2>&1 ||
    { cat "$work/lintian.log"; fail "lintian did not run"; }
grep -E '^[EW]: ' "$work/lintian.log" >"$work/tags" || true
cat "$work/tags"
grep -q '^E: ' "$work/tags" && fail "lintian reports errors (above)"
for tag in $JUSTIFIED; do
    grep -v ": $tag" "$work/tags" >"$work/tags.left" || true
    mv "$work/tags.left" "$work/tags"
done
[ -s "$work/tags" ] && fail "lintian reports warnings docs/packaging.md does not justify (above)"
# Below warnings: the binaries are built with Debian's hardening flags (build-packages.sh).
hardening='hardening-no-bindnow,hardening-no-fortify-functions,hardening-no-pie,hardening-no-relro'
lintian --no-cfg --fail-on none -I --tags "$hardening" "$out"/*.deb >"$work/hardening.log" 2>&1 ||
    { cat "$work/hardening.log"; fail "lintian did not run"; }
grep '^[EWI]: ' "$work/hardening.log" && fail "binaries built without Debian's hardening flags (above)"

files() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
has() { # has PACKAGE.deb PATTERN: a file of the package matches the (anchored) pattern
    files "$1" | grep -qx "$2" || fail "$(basename "$1") has nothing like $2"
}
hasnt() { ! files "$1" | grep -qx "$2" || fail "$(basename "$1") has $2"; }
multiarch='/usr/lib/[a-z0-9_]*-linux-gnu[a-z0-9_]*'
for deb in "$out"/*.deb; do
    p=$(dpkg-deb -f "$deb" Package)
    has "$deb" "/usr/share/doc/$p/copyright"
    has "$deb" "/usr/share/doc/$p/changelog.gz"
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/share/doc/$p/copyright" |
        grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
        fail "$p: its copyright file is not in the machine-readable format"
done
has "$lib_deb" "$multiarch/$soname"
has "$lib_deb" "$multiarch/libembody\.so\.[0-9.]*"
hasnt "$lib_deb" "$multiarch/libembody\.so"
for f in '/usr/include/embody/ik\.h' '/usr/include/embody/body\.h' "$multiarch/libembody\.so" \
    "$multiarch/libembody\.a" "$multiarch/pkgconfig/embody\.pc" \
    "$multiarch/cmake/embody/embodyConfig\.cmake"; do
    has "$dev_deb" "$f"
done
hasnt "$dev_deb" "$multiarch/$soname"
has "$program_deb" /usr/bin/embody
has "$program_deb" /usr/share/man/man1/embody.1.gz
model=$(sed -n 's/^#define PR_DEFAULT_MODEL "\(.*\)"/\1/p' "$source/include/embody/prior.h")
for f in body.json layer.json humanoid.json avatar/embody.vrm demo/demo.csv "${model#config/}"; do
    has "$data_deb" "/usr/share/embody/config/$f"
done
[ "$(files "$data_deb" | grep -c '\.bin$')" -eq 1 ] ||
    fail "embody-data ships more than the default model $model: $(files "$data_deb" | grep '\.bin$')"
[ "$(dpkg-deb -f "$data_deb" Architecture)" = all ] || fail "embody-data is not Architecture: all"
manifest=/usr/share/openxr/1/api_layers/implicit.d/embody_layer.json
has "$layer_deb" "$manifest"
has "$layer_deb" "$multiarch/openxr/1/api_layers/libembody_openxr_layer\.so"
for deb in "$out"/*.deb; do
    hasnt "$deb" '.*/explicit\.d/.*'
done

# Control data: dependencies from dpkg-shlibdeps, the library's shlibs and trigger.
for deb in "$lib_deb" "$program_deb" "$layer_deb"; do
    dpkg-deb -f "$deb" Depends | grep -q 'libc6 (>= ' ||
        fail "$(basename "$deb"): no shared-library dependencies: $(dpkg-deb -f "$deb" Depends)"
done
dpkg-deb -f "$program_deb" Depends | grep -q 'embody-data (= ' || fail "embody does not depend on embody-data"
dpkg-deb -f "$dev_deb" Depends | grep -q "$lib (= " || fail "libembody-dev does not depend on $lib"
dpkg-deb -I "$lib_deb" >"$work/control"
grep -q ' shlibs *$' "$work/control" || fail "$lib: no shlibs file"
grep -q ' triggers *$' "$work/control" || fail "$lib: no triggers file"
grep -q ' post\(inst\|rm\) *$' "$work/control" && fail "$lib: maintainer scripts (the trigger does their work)"
dpkg-deb --ctrl-tarfile "$lib_deb" | tar -xO ./shlibs |
    grep -q "^libembody ${soname#libembody.so.} $lib " || fail "$lib: its shlibs does not name it"
dpkg-deb --ctrl-tarfile "$lib_deb" | tar -xO ./triggers |
    grep -qx 'activate-noawait ldconfig' || fail "$lib: no ldconfig trigger"

# Unpacked together: the layer's manifest, the program on the packaged data, the example.
for deb in "$out"/*.deb; do dpkg-deb -x "$deb" "$root"; done
json=$root$manifest
grep -q '"name": "XR_APILAYER_EMBODY_body_tracking"' "$json" || fail "$manifest: not embody's layer"
grep -q '"disable_environment": "EMBODY_LAYER_DISABLE"' "$json" ||
    fail "$manifest: no disable_environment (required for implicit layers)"
grep -q '"enable_environment": "EMBODY_LAYER_ENABLE"' "$json" || fail "$manifest: no enable_environment"
library=$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' "$json")
case "$library" in
/*) resolved=$root$library ;;
*) resolved=$(dirname "$json")/$library ;;
esac
[ -f "$resolved" ] || fail "$manifest: library_path $library does not resolve (tried $resolved)"
objdump -T "$resolved" | grep -q xrNegotiateLoaderApiLayerInterface ||
    fail "$library does not export xrNegotiateLoaderApiLayerInterface"

(cd "$work" && EMBODY_DATA_DIR='' "$root/usr/bin/embody" --demo --no-window --frames 30) \
    >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; fail "the packaged program failed"; }
grep -q "the learned prior $root/usr/share/embody/$model" "$work/demo.log" ||
    { cat "$work/demo.log"; fail "the packaged program did not read the packaged prior"; }

libdir=$(dirname "$(ls "$root"/usr/lib/*/libembody.so)")
cflags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs embody) ||
    fail "pkg-config does not find embody in the packaged development files"
# shellcheck disable=SC2086
"$cc" "$source/examples/solve_arm.c" $cflags -o "$work/solve_arm" ||
    fail "examples/solve_arm.c does not build against the packaged development files"
LD_LIBRARY_PATH=$libdir "$work/solve_arm" >"$work/solve_arm.log" 2>&1 ||
    { cat "$work/solve_arm.log"; fail "examples/solve_arm failed on the packaged library"; }

# dpkg installs the five together into an empty root of their own (no file in two
# packages, the library's trigger accepted; dependencies on the system's libraries are
# not there, hence --force-depends) and purges them, leaving no file behind.
dpkgroot=$work/dpkg-root
rm -rf "$dpkgroot"
mkdir -p "$dpkgroot/var/lib/dpkg/info" "$dpkgroot/var/lib/dpkg/updates"
touch "$dpkgroot/var/lib/dpkg/status"
dpkg_() { dpkg --root="$dpkgroot" --log=/dev/null --force-depends --force-not-root \
    --force-script-chrootless "$@" >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg $*"; }; }
dpkg_ -i "$out"/*.deb
[ "$(dpkg --root="$dpkgroot" -l | grep -c '^ii ')" -eq 5 ] ||
    { dpkg --root="$dpkgroot" -l; fail "dpkg did not install the five packages"; }
[ -f "$dpkgroot/usr/bin/embody" ] || fail "dpkg -i installed no /usr/bin/embody"
dpkg_ --purge "$lib" libembody-dev embody embody-data openxr-layer-embody
left=$(cd "$dpkgroot" && find . ! -type d ! -path './var/lib/dpkg/*')
[ -z "$left" ] || fail "dpkg --purge left files behind: $left"

for deb in "$out"/*.deb; do
    echo "test_package: $(basename "$deb"): $(stat -c %s "$deb") bytes, $(files "$deb" | grep -vc '/$') files"
done
echo "test_package: lintian: $(grep -c '^E: ' "$work/lintian.log" || true) errors," \
    "$(grep -c '^W: ' "$work/lintian.log" || true) warnings"

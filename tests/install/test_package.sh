#!/bin/sh
# Builds the Debian package from BUILD_DIR (cpack, cmake/EmbodyPackage.cmake) into a
# scratch folder and checks it without installing it: its file list holds the program,
# the library (shared, static, SONAME link), the public headers, the pkg-config and CMake
# files, the data, the OpenXR layer's library and its manifest in the system's implicit
# layer folder (and no explicit one); unpacked, the manifest's library_path resolves to
# the layer's library, and it names the loader's enable and disable variables.
#   test_package.sh BUILD_DIR
set -eu
build=$1
for tool in cpack dpkg-deb dpkg-shlibdeps file objdump; do
    command -v $tool >/dev/null 2>&1 || { echo "no $tool: skipped"; exit 77; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/embody-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_package: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { cat "$work/cpack.log"; fail "cpack made no .deb"; }
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$work/files"

has() { grep -qx "$1" "$work/files" || fail "$(basename "$deb") has no $1"; }
has_like() { grep -q "$1" "$work/files" || fail "$(basename "$deb") has nothing like $1"; }
has /usr/bin/embody
has_like '^/usr/lib/.*libembody\.so$'
has_like '^/usr/lib/.*libembody\.so\.[0-9]'
has_like '^/usr/lib/.*libembody\.a$'
has_like '^/usr/lib/.*libembody_openxr_layer\.so$'
has_like '^/usr/lib/.*pkgconfig/embody\.pc$'
has_like '^/usr/lib/.*cmake/embody/embodyConfig\.cmake$'
for h in ik.h body.h skeleton.h prior.h; do has /usr/include/embody/$h; done
for f in body.json layer.json humanoid.json prior/body-prior-v2.bin avatar/embody.vrm; do
    has /usr/share/embody/config/$f
done
manifest=/usr/share/openxr/1/api_layers/implicit.d/embody_layer.json
has $manifest
if grep -q 'explicit.d' "$work/files"; then fail "the package also has an explicit layer manifest"; fi

control=$(dpkg-deb -f "$deb" Package Version Architecture Depends)
echo "$control" | grep -q '^Package: embody$' || fail "package name: $control"
echo "$control" | grep -q '^Depends: .*libc6' || fail "no shared-library dependencies: $control"

root=$work/root
dpkg-deb -x "$deb" "$root"
json=$root$manifest
grep -q '"name": "XR_APILAYER_EMBODY_body_tracking"' "$json" || fail "$manifest: not embody's layer"
grep -q '"disable_environment": "EMBODY_LAYER_DISABLE"' "$json" ||
    fail "$manifest: no disable_environment (required for implicit layers)"
grep -q '"enable_environment": "EMBODY_LAYER_ENABLE"' "$json" || fail "$manifest: no enable_environment"
library=$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' "$json")
[ -n "$library" ] || fail "$manifest: no library_path"
case "$library" in
/*) resolved=$root$library ;;
*) resolved=$(dirname "$json")/$library ;;
esac
[ -f "$resolved" ] || fail "$manifest: library_path $library does not resolve (tried $resolved)"
objdump -T "$resolved" | grep -q xrNegotiateLoaderApiLayerInterface ||
    fail "$library does not export xrNegotiateLoaderApiLayerInterface"
echo "test_package: $(basename "$deb"): $(wc -l <"$work/files") entries; the layer's manifest" \
    "$manifest names $library, which resolves"

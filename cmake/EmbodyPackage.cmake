# A Debian package for Linux VR users (`cd build && cpack -G DEB`):
# what `cmake --install` installs (the program, the library with its headers, pkg-config
# and CMake files, the data under share/embody, the OpenXR layer's library), with the
# layer registered as an implicit layer in the system's OpenXR folder
# (/usr/share/openxr/1/api_layers/implicit.d/) instead of the explicit one.
#
# An implicit layer is loaded by every OpenXR application the loader starts. As the
# loader documents for implicit layers (loader design, "API Layer Manifest File Format"),
# the manifest names a `disable_environment` variable (EMBODY_LAYER_DISABLE: set, the
# layer is never loaded) and an `enable_environment` one (EMBODY_LAYER_ENABLE: the layer
# is loaded only where it is set). So the package's layer is opt-in per application: a
# layer inside every game's process by default would be a surprise.
include(GNUInstallDirs)

set(EMBODY_LAYER_IMPLICIT_DIR ${CMAKE_INSTALL_DATADIR}/openxr/1/api_layers/implicit.d)
file(RELATIVE_PATH EMBODY_LAYER_IMPLICIT_RELATIVE
    "${CMAKE_INSTALL_PREFIX}/${EMBODY_LAYER_IMPLICIT_DIR}"
    "${CMAKE_INSTALL_FULL_LIBDIR}/$<TARGET_FILE_NAME:embody_openxr_layer>")
file(READ ${PROJECT_SOURCE_DIR}/src/layer/embody_layer.json.in EMBODY_LAYER_IMPLICIT)
string(REPLACE "@EMBODY_LAYER_LIBRARY@" "${EMBODY_LAYER_IMPLICIT_RELATIVE}"
    EMBODY_LAYER_IMPLICIT "${EMBODY_LAYER_IMPLICIT}")
string(REPLACE "\"api_version\""
    "\"enable_environment\": \"EMBODY_LAYER_ENABLE\",\n        \"disable_environment\": \"EMBODY_LAYER_DISABLE\",\n        \"api_version\""
    EMBODY_LAYER_IMPLICIT "${EMBODY_LAYER_IMPLICIT}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/implicit.d/embody_layer.json
    CONTENT "${EMBODY_LAYER_IMPLICIT}")
# Only in the package: `cmake --install` keeps the explicit manifest alone.
install(FILES ${PROJECT_BINARY_DIR}/package/implicit.d/embody_layer.json
    DESTINATION ${EMBODY_LAYER_IMPLICIT_DIR} COMPONENT layer_implicit EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME embody)
set(CPACK_PACKAGE_VENDOR "embody")
set(CPACK_PACKAGE_CONTACT "embody developers <embody@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "full-body VR tracking from a headset and two controllers: program, library, OpenXR layer")
set(CPACK_PACKAGE_DESCRIPTION
    "embody reconstructs a VR player's full body from the head and hands (and any body\n\
trackers): the embody program (mirror view, VMC and VRChat OSC output), the libembody\n\
library with its headers, and an OpenXR API layer answering XR_FB_body_tracking for\n\
any OpenXR application (implicit; run it with EMBODY_LAYER_ENABLE=1).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION games)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenxr-loader1")
# Everything `cmake --install` installs (the Unspecified component) but the explicit
# layer manifest, plus the implicit one; in one package.
set(CPACK_COMPONENTS_ALL Unspecified layer_implicit)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
include(CPack)

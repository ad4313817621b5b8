# Debian packages for Linux VR users, built from a Release build configured for /usr with
# Debian's hardening flags: cmake/debian/build-packages.sh [BUILD_DIR] (cmake, build, cpack)
# split as Debian splits a library (one package per install component, docs/packaging.md):
#   libembody0.1         (lib)     the shared library; package named for its SONAME
#   libembody-dev        (dev)     headers, libembody.so link, libembody.a, pkg-config, CMake
#   embody               (program) the program and its manual page (made from --help)
#   embody-data          (data)    /usr/share/embody: settings, avatar, demo, shaders and
#                                  the learned prior the body reads by default
#   openxr-layer-embody  (layer)   the OpenXR API layer, an opt-in implicit layer
# each with its copyright (DEP-5, cmake/debian/copyright) and changelog.gz, the binaries
# stripped (CPACK_STRIP_FILES). tests/install/test_package.sh builds them and runs
# lintian on them.
#
# An implicit layer is loaded by every OpenXR application the loader starts. As the
# loader documents for implicit layers (loader design, "API Layer Manifest File Format"),
# the manifest names a `disable_environment` variable (EMBODY_LAYER_DISABLE: set, the
# layer is never loaded) and an `enable_environment` one (EMBODY_LAYER_ENABLE: the layer
# is loaded only where it is set). So the package's layer is opt-in per application: a
# layer inside every game's process by default would be a surprise. Its library goes
# where Debian's own OpenXR layers go (openxr-layer-corevalidation:
# LIBDIR/openxr/1/api_layers/), a plugin folder, not the linker's path.
include(GNUInstallDirs)

# Native packages (the version is the project's, no Debian revision): the packaging is
# the project's own, kept in its source (cmake/debian/), so its changelog is changelog.gz.
set(EMBODY_DEB_VERSION ${PROJECT_VERSION})
set(EMBODY_DEB_LIB libembody${EMBODY_SOVERSION})
set(EMBODY_DEB_CONTACT "embody developers <embody@users.noreply.example.org>")

# The layer: its library in the plugin folder, its manifest in the implicit folder.
set(EMBODY_LAYER_PACKAGE_LIBDIR ${CMAKE_INSTALL_LIBDIR}/openxr/1/api_layers)
set(EMBODY_LAYER_IMPLICIT_DIR ${CMAKE_INSTALL_DATADIR}/openxr/1/api_layers/implicit.d)
file(RELATIVE_PATH EMBODY_LAYER_IMPLICIT_RELATIVE
    "${CMAKE_INSTALL_PREFIX}/${EMBODY_LAYER_IMPLICIT_DIR}"
    "${CMAKE_INSTALL_PREFIX}/${EMBODY_LAYER_PACKAGE_LIBDIR}/$<TARGET_FILE_NAME:embody_openxr_layer>")
file(READ ${PROJECT_SOURCE_DIR}/src/layer/embody_layer.json.in EMBODY_LAYER_IMPLICIT)
string(REPLACE "@EMBODY_LAYER_LIBRARY@" "${EMBODY_LAYER_IMPLICIT_RELATIVE}"
    EMBODY_LAYER_IMPLICIT "${EMBODY_LAYER_IMPLICIT}")
string(REPLACE "\"api_version\""
    "\"enable_environment\": \"EMBODY_LAYER_ENABLE\",\n        \"disable_environment\": \"EMBODY_LAYER_DISABLE\",\n        \"api_version\""
    EMBODY_LAYER_IMPLICIT "${EMBODY_LAYER_IMPLICIT}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/package/implicit.d/embody_layer.json
    CONTENT "${EMBODY_LAYER_IMPLICIT}")
# Only in the packages (EXCLUDE_FROM_ALL): `cmake --install` keeps the explicit manifest
# and the layer beside the library.
install(TARGETS embody_openxr_layer LIBRARY DESTINATION ${EMBODY_LAYER_PACKAGE_LIBDIR}
    COMPONENT layer EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_BINARY_DIR}/package/implicit.d/embody_layer.json
    DESTINATION ${EMBODY_LAYER_IMPLICIT_DIR} COMPONENT layer EXCLUDE_FROM_ALL)

# The data: config/ with only the model the body reads by default (PR_DEFAULT_MODEL);
# the older models stay in the source tree, where their tests read them.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/embody/prior.h EMBODY_DEFAULT_MODEL
    REGEX "^#define PR_DEFAULT_MODEL \"config/.*\"")
string(REGEX REPLACE ".*\"config/(.*)\".*" "\\1" EMBODY_DEFAULT_MODEL "${EMBODY_DEFAULT_MODEL}")
if(NOT EXISTS ${PROJECT_SOURCE_DIR}/config/${EMBODY_DEFAULT_MODEL})
    message(FATAL_ERROR "the default prior model config/${EMBODY_DEFAULT_MODEL} (PR_DEFAULT_MODEL) is missing")
endif()
get_filename_component(EMBODY_DEFAULT_MODEL_DIR ${EMBODY_DEFAULT_MODEL} DIRECTORY)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/config/ DESTINATION ${CMAKE_INSTALL_DATADIR}/embody/config
    COMPONENT data EXCLUDE_FROM_ALL REGEX "/prior/[^/]*\\.bin$" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/config/${EMBODY_DEFAULT_MODEL}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/embody/config/${EMBODY_DEFAULT_MODEL_DIR}
    COMPONENT data EXCLUDE_FROM_ALL)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/shaders/ DESTINATION ${CMAKE_INSTALL_DATADIR}/embody/shaders
    COMPONENT data EXCLUDE_FROM_ALL)

# The manual page, from the program's --help (cmake/debian/manpage.cmake), and the
# changelog (Debian's format), both compressed as Debian wants them (gzip -9n: no name,
# no time stamp).
find_program(EMBODY_GZIP gzip REQUIRED)
set(EMBODY_DEB_DIR ${PROJECT_BINARY_DIR}/package/debian)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${EMBODY_DEB_DIR}/changelog @ONLY)
add_custom_command(OUTPUT ${EMBODY_DEB_DIR}/embody.1.gz ${EMBODY_DEB_DIR}/changelog.gz
    COMMAND ${CMAKE_COMMAND} -DEMBODY=$<TARGET_FILE:embody> -DVERSION=${PROJECT_VERSION}
            -DOUT=${EMBODY_DEB_DIR}/embody.1 -P ${PROJECT_SOURCE_DIR}/cmake/debian/manpage.cmake
    COMMAND ${EMBODY_GZIP} -9nf ${EMBODY_DEB_DIR}/embody.1
    COMMAND ${EMBODY_GZIP} -9nkf ${EMBODY_DEB_DIR}/changelog
    DEPENDS embody ${PROJECT_SOURCE_DIR}/cmake/debian/manpage.cmake ${EMBODY_DEB_DIR}/changelog
    COMMENT "The manual page and the changelog of the Debian packages" VERBATIM)
# Built with everything, but in a sanitizer build (packages are made from Release
# builds; a sanitizer's runtime would run with the build, not under the tests' settings).
if(EMBODY_SANITIZE)
    set(EMBODY_PACKAGE_DOCS_ALL "")
else()
    set(EMBODY_PACKAGE_DOCS_ALL ALL)
endif()
add_custom_target(embody_package_docs ${EMBODY_PACKAGE_DOCS_ALL}
    DEPENDS ${EMBODY_DEB_DIR}/embody.1.gz ${EMBODY_DEB_DIR}/changelog.gz)
install(FILES ${EMBODY_DEB_DIR}/embody.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
    COMPONENT program EXCLUDE_FROM_ALL)

set(EMBODY_DEB_PACKAGES lib ${EMBODY_DEB_LIB} dev libembody-dev program embody
    data embody-data layer openxr-layer-embody)
while(EMBODY_DEB_PACKAGES)
    list(POP_FRONT EMBODY_DEB_PACKAGES component package)
    string(TOUPPER ${component} COMPONENT)
    set(CPACK_DEBIAN_${COMPONENT}_PACKAGE_NAME ${package})
    install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${EMBODY_DEB_DIR}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
endwhile()

set(CPACK_PACKAGE_NAME embody)
set(CPACK_PACKAGE_VENDOR "the embody developers")
set(CPACK_PACKAGE_CONTACT "${EMBODY_DEB_CONTACT}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev program data layer)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A shlibs file for the library (the layer has no versioned SONAME: cpack says it leaves
# it out, a plugin needs none).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

# Descriptions: the first line is the synopsis (under 80 characters), the rest the
# extended description (lines under 80 characters).
set(EMBODY_DEB_ABOUT "embody reconstructs a VR player's full body from the headset and\n\
two controllers (and any body trackers), with a learned body-pose prior and\n\
a tree-structured FABRIK IK solver.")

set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_LIB_DEPENDS data)
set(CPACK_DEBIAN_LIB_DESCRIPTION "full-body reconstruction for VR from head and hands (library)\n\
${EMBODY_DEB_ABOUT}\n\
.\n\
This package holds the shared library: skeletons, the IK solver, the body,\n\
tracking streams and the evaluation protocol (no SDL, OpenGL or OpenXR).")
# The shlibs file comes from CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS; the loader's cache is
# refreshed by dpkg's ldconfig trigger (cmake/debian/triggers), not by maintainer
# scripts, which cmake/debian/repack.cmake takes out of the package CPack makes.
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/triggers)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS lib)
# embody.pc: Requires cglm (the public headers use its types), Requires.private libcjson
# (pkg-config wants its .pc too, and libembody.a needs it to link).
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libcglm-dev, libcjson-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "full-body reconstruction for VR from head and hands (development files)\n\
${EMBODY_DEB_ABOUT}\n\
.\n\
This package holds what a program that embeds the library builds with: the\n\
headers, the static library, the pkg-config file (embody) and the CMake package\n\
(find_package(embody): embody::embody and embody::embody_static).")

set(CPACK_DEBIAN_PROGRAM_PACKAGE_SECTION misc)
set(CPACK_COMPONENT_PROGRAM_DEPENDS data)
# The window's HUD text: Debian's DejaVu Sans (src/render/r_text.c), none without it.
set(CPACK_DEBIAN_PROGRAM_PACKAGE_RECOMMENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PROGRAM_DESCRIPTION "full-body tracking for VR from a headset and two controllers\n\
${EMBODY_DEB_ABOUT}\n\
.\n\
The embody program tracks a headset through OpenXR (or plays a recorded stream\n\
or the bundled demo), shows the body on your own VRM, glTF or FBX avatar in a\n\
mirror window and sends it to VRChat (OSC trackers) and VMC applications.")

set(CPACK_DEBIAN_DATA_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_DATA_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DATA_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DATA_DESCRIPTION "full-body reconstruction for VR from head and hands (data)\n\
${EMBODY_DEB_ABOUT}\n\
.\n\
This package holds the data the library, the program and the OpenXR layer\n\
read: the default avatar and its skeleton, the body's and the layer's\n\
settings, the demo stream, the shaders and the learned body-pose prior.")

set(CPACK_DEBIAN_LAYER_PACKAGE_SECTION graphics)
set(CPACK_COMPONENT_LAYER_DEPENDS data)
set(CPACK_DEBIAN_LAYER_PACKAGE_ENHANCES "libopenxr-loader1")
set(CPACK_DEBIAN_LAYER_DESCRIPTION "full-body tracking for any OpenXR application (API layer)\n\
${EMBODY_DEB_ABOUT}\n\
.\n\
This OpenXR API layer answers XR_FB_body_tracking,\n\
XR_META_body_tracking_full_body and XR_BD_body_tracking on any runtime, from\n\
the headset and controllers. It is an implicit layer that stays off unless\n\
EMBODY_LAYER_ENABLE=1 is set for the application.")

# cpack checks the build it packages (cmake/debian/cpack-checks.cmake) and takes the
# ldconfig calls out of the library's maintainer scripts (cmake/debian/repack.cmake).
set(CPACK_EMBODY_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_EMBODY_LIB_PACKAGE ${EMBODY_DEB_LIB})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/debian/cpack-checks.cmake)
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian/repack.cmake)
include(CPack)

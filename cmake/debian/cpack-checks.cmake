# Read by cpack before it packs (CPACK_PROJECT_CONFIG_FILE, cmake/EmbodyPackage.cmake).
# The Debian packages install under /usr, and the build's paths must say so: the library
# and the layer find their data through the prefix the build was configured for
# (src/util/u_path.c), and only a /usr build puts the libraries in Debian's multiarch
# directory (/usr/lib/<triplet>), where pkg-config and the linker look for them.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_EMBODY_INSTALL_PREFIX STREQUAL "/usr")
    message(FATAL_ERROR "the Debian packages need a build configured for /usr, not "
        "${CPACK_EMBODY_INSTALL_PREFIX}: cmake/debian/build-packages.sh [BUILD_DIR] "
        "makes one and packs it (docs/packaging.md)")
endif()

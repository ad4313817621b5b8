# Run by cpack after it made the packages (CPACK_POST_BUILD_SCRIPTS,
# cmake/EmbodyPackage.cmake). CPack (3.25) gives a package with a shared library under
# /usr/lib a postinst and a postrm that call ldconfig, whatever the package's own
# control files say; Debian replaced those calls by dpkg's ldconfig trigger, which the
# library's package has (cmake/debian/triggers). So the library's package is unpacked,
# those two scripts (which do nothing else) are taken out, and it is built again with
# dpkg-deb, files owned by root as before.
find_program(EMBODY_DPKG_DEB dpkg-deb REQUIRED)
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
    get_filename_component(name ${deb} NAME)
    if(NOT name MATCHES "^${CPACK_EMBODY_LIB_PACKAGE}_.*\\.deb$")
        continue()
    endif()
    set(tree ${deb}.tree)
    file(REMOVE_RECURSE ${tree})
    execute_process(COMMAND ${EMBODY_DPKG_DEB} -R ${deb} ${tree} COMMAND_ERROR_IS_FATAL ANY)
    foreach(script postinst postrm)
        if(EXISTS ${tree}/DEBIAN/${script})
            file(STRINGS ${tree}/DEBIAN/${script} lines)
            list(FILTER lines EXCLUDE REGEX "^(#!/bin/sh|set -e|if \\[ \"\\$1\" = \"(configure|remove)\" \\]; then|[ \t]*ldconfig|fi|)$")
            if(lines)
                message(FATAL_ERROR "${name}: ${script} does more than call ldconfig: ${lines}")
            endif()
            file(REMOVE ${tree}/DEBIAN/${script})
        endif()
    endforeach()
    execute_process(COMMAND ${EMBODY_DPKG_DEB} --root-owner-group -b ${tree} ${deb}
        OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
    file(REMOVE_RECURSE ${tree})
endforeach()

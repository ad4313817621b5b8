# Installing embody for programs that embed it (`cmake --install build [--prefix DIR]`):
#   lib/libembody.a, lib/libembody.so.MAJOR  the runtime (util math hand skeleton ik stream
#                                            prior body input): no SDL, GL, OpenXR or OSC,
#                                            no tools; the shared one exports only EMBODY_API
#   include/embody/*.h                        the public headers (docs/library.md)
#   lib/pkgconfig/embody.pc                   pkg-config --cflags --libs embody
#   lib/cmake/embody/                         find_package(embody): embody::embody (shared)
#                                             and embody::embody_static
#   share/embody/{config,shaders}/, bin/embody  the data the library and program read
# Both libraries are built from the runtime modules' objects (compiled once, position
# independent), as embody_core is.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Where an installed library finds config/humanoid.json and the rest (src/util/u_path.c):
# beside itself (the shared library: LIBDIR/../share/embody, wherever the prefix was
# moved with --prefix), then the prefix the build was configured for.
file(RELATIVE_PATH EMBODY_DATA_FROM_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}"
     "${CMAKE_INSTALL_FULL_DATADIR}/embody")
target_compile_definitions(embody_mod_util PRIVATE
    EMBODY_DATA_FROM_LIBDIR="${EMBODY_DATA_FROM_LIBDIR}"
    EMBODY_DATA_INSTALL_DIR="${CMAKE_INSTALL_FULL_DATADIR}/embody")
target_link_libraries(embody_core PRIVATE ${CMAKE_DL_LIBS})

# include/embody/ holds the public headers only (the contracts of the other modules live
# in src/<module>/), so every header there is installed.
file(GLOB EMBODY_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/embody/*.h)

foreach(kind shared static)
    string(TOUPPER ${kind} KIND)
    set(objects "")
    foreach(module ${EMBODY_CORE_MODULES})
        list(APPEND objects $<TARGET_OBJECTS:embody_mod_${module}>)
    endforeach()
    add_library(embody_${kind} ${KIND} ${objects})
    target_include_directories(embody_${kind} PUBLIC
        $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
        $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    # embody_options only for the sanitizers' link flags; an embedder gets none of it.
    target_compile_definitions(embody_${kind} PUBLIC CGLM_ALL_UNALIGNED)
    target_link_libraries(embody_${kind} PUBLIC PkgConfig::CGLM m
        PRIVATE PkgConfig::CJSON ${CMAKE_DL_LIBS} $<BUILD_INTERFACE:embody_options>)
    set_target_properties(embody_${kind} PROPERTIES OUTPUT_NAME embody EXPORT_NAME embody_${kind}
)
endforeach()
# The shared library exports the public API only, the functions declared EMBODY_API
# (include/embody/export.h): the core is compiled with hidden visibility (CMakeLists.txt),
# so internal helpers (u_log, ...) cannot clash with an embedder's own names.
# tests/install/test_api_surface.sh compares the exports with the installed declarations.

add_library(embody::embody ALIAS embody_shared)
add_library(embody::embody_static ALIAS embody_static)
# Before 1.0 every minor version may change the ABI, so it is part of the SONAME.
if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(EMBODY_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
    set(EMBODY_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()
set_target_properties(embody_shared PROPERTIES EXPORT_NAME embody
    VERSION ${PROJECT_VERSION} SOVERSION ${EMBODY_SOVERSION})
install(TARGETS embody_shared embody_static EXPORT embodyTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
install(FILES ${EMBODY_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/embody
    COMPONENT dev)
install(EXPORT embodyTargets NAMESPACE embody:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/embody
    COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/embodyConfig.cmake.in
    ${PROJECT_BINARY_DIR}/embodyConfig.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/embody)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/embodyConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/embodyConfig.cmake
    ${PROJECT_BINARY_DIR}/embodyConfigVersion.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/embody COMPONENT dev)

# The .pc file finds its prefix from where it is, so `--prefix DIR` at install time works.
file(RELATIVE_PATH EMBODY_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" EMBODY_PC_TO_PREFIX "${EMBODY_PC_TO_PREFIX}")
set(EMBODY_PC_DL "")
foreach(lib ${CMAKE_DL_LIBS})
    string(APPEND EMBODY_PC_DL " -l${lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/embody.pc.in ${PROJECT_BINARY_DIR}/embody.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/embody.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    COMPONENT dev)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/config/ DESTINATION ${CMAKE_INSTALL_DATADIR}/embody/config
    COMPONENT config)
install(TARGETS embody RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT program)

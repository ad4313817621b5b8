# The module graph, stated in the build (docs/architecture.md draws it).
#
#   embody_module(<name> SOURCES <.c files> [API <include/embody headers>]
#                 [HEADERS <headers of this folder>] [PRIVATE_HEADERS <headers>]
#                 [USES <modules>] [LINKS <targets>])
#
# A module is the sources of one folder (two modules may share a folder: src/prior holds the
# runtime prior and its trainer, src/xr the program's input and the OpenXR facts the layer
# shares). Each becomes an object library, embody_mod_<name>, whose sources see one
# include folder of their own, ${PROJECT_BINARY_DIR}/modules/<name>/, and nothing else of
# the tree: links to
#   - the public headers (API, from include/embody/) and contracts (HEADERS, from the
#     module's folder) of every module it USES, and of every module those use;
#   - its own API, HEADERS and private headers: PRIVATE_HEADERS where two modules share a
#     folder, else every other header of its folder.
# So an include the graph does not allow (a body file including "eval/eval.h") fails to
# compile: "No such file or directory". A module may only use modules declared before it:
# the order of add_subdirectory in CMakeLists.txt is the order of the floors, and no
# circle can be stated. tests/build/module_graph.sh checks every pair.
#
# The libraries are made from the modules' objects (embody_library below); LINKS are the
# outside libraries a module compiles against (their include folders), which the library
# its objects go into links.

set(EMBODY_MODULES_DIR ${PROJECT_BINARY_DIR}/modules)
# The graph, for the test: one line per module, "name|folder|uses (closure)|headers".
set(EMBODY_MODULE_GRAPH_FILE ${EMBODY_MODULES_DIR}/graph.txt)
file(WRITE ${EMBODY_MODULE_GRAPH_FILE} "")

# What every module's objects are compiled with: the warnings and sanitizers
# (embody_options), cglm as the public headers want it, position independent (the shared
# library and the layer are made of the same objects), hidden unless EMBODY_API.
add_library(embody_module_base INTERFACE)
target_link_libraries(embody_module_base INTERFACE embody_options PkgConfig::CGLM)
target_compile_definitions(embody_module_base INTERFACE CGLM_ALL_UNALIGNED)

function(embody_module_link_header root header relative)
    get_filename_component(dir ${root}/${relative} DIRECTORY)
    file(MAKE_DIRECTORY ${dir})
    file(CREATE_LINK ${header} ${root}/${relative} SYMBOLIC)
endfunction()

function(embody_module name)
    cmake_parse_arguments(M "" "" "SOURCES;API;HEADERS;PRIVATE_HEADERS;USES;LINKS" ${ARGN})
    if(TARGET embody_mod_${name})
        message(FATAL_ERROR "embody_module(${name}): declared twice")
    endif()
    get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
    # The closure of what it uses; each used module must be declared already.
    set(closure "")
    foreach(used ${M_USES})
        get_property(known GLOBAL PROPERTY EMBODY_MODULE_${used}_DECLARED)
        if(NOT known)
            message(FATAL_ERROR "embody_module(${name}) USES ${used}, which is not declared "
                "before it: a module may use only the modules below it (CMakeLists.txt's "
                "order of folders)")
        endif()
        get_property(used_closure GLOBAL PROPERTY EMBODY_MODULE_${used}_CLOSURE)
        list(APPEND closure ${used} ${used_closure})
    endforeach()
    list(REMOVE_DUPLICATES closure)

    # This module's own headers: the API it declares and every header of its folder.
    set(public "")
    foreach(header ${M_API})
        list(APPEND public "${PROJECT_SOURCE_DIR}/include/${header}|${header}")
    endforeach()
    foreach(header ${M_HEADERS})
        list(APPEND public "${CMAKE_CURRENT_SOURCE_DIR}/${header}|${folder}/${header}")
    endforeach()
    set_property(GLOBAL PROPERTY EMBODY_MODULE_${name}_DECLARED TRUE)
    set_property(GLOBAL PROPERTY EMBODY_MODULE_${name}_CLOSURE "${closure}")
    set_property(GLOBAL PROPERTY EMBODY_MODULE_${name}_PUBLIC "${public}")

    set(root ${EMBODY_MODULES_DIR}/${name})
    file(REMOVE_RECURSE ${root})
    set(visible ${public})
    if(DEFINED M_PRIVATE_HEADERS)
        set(own_headers ${M_PRIVATE_HEADERS})
    else()
        file(GLOB own_headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
            ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
    endif()
    foreach(header ${own_headers})
        list(APPEND visible "${CMAKE_CURRENT_SOURCE_DIR}/${header}|${folder}/${header}")
    endforeach()
    foreach(used ${closure})
        get_property(used_public GLOBAL PROPERTY EMBODY_MODULE_${used}_PUBLIC)
        list(APPEND visible ${used_public})
    endforeach()
    list(REMOVE_DUPLICATES visible)
    foreach(entry ${visible})
        string(REPLACE "|" ";" parts "${entry}")
        list(GET parts 0 header)
        list(GET parts 1 relative)
        embody_module_link_header(${root} ${header} ${relative})
    endforeach()

    add_library(embody_mod_${name} OBJECT ${M_SOURCES})
    target_include_directories(embody_mod_${name} PRIVATE ${root})
    target_link_libraries(embody_mod_${name} PRIVATE embody_module_base ${M_LINKS})
    set_target_properties(embody_mod_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON
        C_VISIBILITY_PRESET hidden)
    set_property(GLOBAL PROPERTY EMBODY_MODULE_${name}_LINKS "${M_LINKS}")

    string(REPLACE ";" " " closure_words "${closure}")
    set(header_words "")
    foreach(entry ${public})
        string(REPLACE "|" ";" parts "${entry}")
        list(GET parts 1 relative)
        string(APPEND header_words " ${relative}")
    endforeach()
    file(APPEND ${EMBODY_MODULE_GRAPH_FILE}
        "${name}|${CMAKE_CURRENT_SOURCE_DIR}|${closure_words}|${header_words}\n")
    set(EMBODY_MODULE_ROOT_${name} ${root} PARENT_SCOPE)
endfunction()

# A library made of modules' objects, linking what those modules compile against:
#   embody_library(<target> STATIC|SHARED MODULES <modules>)
function(embody_library target kind)
    cmake_parse_arguments(L "" "" "MODULES" ${ARGN})
    set(objects "")
    set(links "")
    foreach(module ${L_MODULES})
        list(APPEND objects $<TARGET_OBJECTS:embody_mod_${module}>)
        get_property(module_links GLOBAL PROPERTY EMBODY_MODULE_${module}_LINKS)
        list(APPEND links ${module_links})
    endforeach()
    list(REMOVE_DUPLICATES links)
    add_library(${target} ${kind} ${objects})
    target_link_libraries(${target} PRIVATE embody_options ${links})
    target_compile_definitions(${target} PUBLIC CGLM_ALL_UNALIGNED)
    target_link_libraries(${target} PUBLIC PkgConfig::CGLM ${MATH_LIBRARY})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/include)
endfunction()

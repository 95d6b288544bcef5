# hoare_add_rust_library: a Rust crate of the program's own (depending on hoare with
# the `cxx` feature, with a cxx bridge of its own) built into the one static
# library the program links. See cpp/README.md, "Your own Rust code in the static
# library".
#
#   hoare_add_rust_library(<target>
#     MANIFEST_PATH <path/to/Cargo.toml>   # the crate (its own workspace, or a member)
#     [PACKAGE <name>]                     # default: the manifest's package name
#     [LIB_NAME <name>]                    # the library's crate name (default: PACKAGE, '-' -> '_')
#     [FEATURES <feature>...]              # cargo features of the crate
#     [PROFILE <profile>]                  # default: HOARE_CARGO_PROFILE
#     [CARGO_TARGET_DIR <dir>]             # default: HOARE_CARGO_TARGET_DIR
#     [CARGO_FLAGS <flag>...])             # added to HOARE_CARGO_FLAGS
#
# makes the INTERFACE target <target>: hoare's headers, the crate's and hoare's
# cxx-generated headers (e.g. "my-procs/src/lib.rs.h"), and lib<LIB_NAME>.a, which
# holds the crate, hoare's runtime and bridge, cxx's runtime and Rust's std once.
# Link <target> *instead of* hoare::hoare: a program with two Rust static libraries
# would have two copies of std and of hoare's runtime.
#
# cargo runs on every build (it decides itself what changed), through
# cargo_staticlib.cmake, which also copies the generated headers of this build to
# <binary dir>/<target>-include.

# A cache entry: the function is called from the projects that add hoare, where
# variables of hoare's directory are not seen.
set(_HOARE_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "cpp/cmake of hoare")

function(hoare_add_rust_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg ""
    "MANIFEST_PATH;PACKAGE;LIB_NAME;PROFILE;CARGO_TARGET_DIR" "FEATURES;CARGO_FLAGS")
  if(NOT arg_MANIFEST_PATH)
    message(FATAL_ERROR "hoare_add_rust_library(${target}): MANIFEST_PATH is required")
  endif()
  get_filename_component(manifest "${arg_MANIFEST_PATH}" ABSOLUTE)
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "hoare_add_rust_library(${target}): no ${manifest}")
  endif()
  set(package "${arg_PACKAGE}")
  if(NOT package)
    # The first `name = "..."` of the manifest (its [package] table comes first).
    file(STRINGS "${manifest}" _names REGEX "^[ \t]*name[ \t]*=[ \t]*\"[^\"]+\"" LIMIT_COUNT 1)
    string(REGEX REPLACE "^[ \t]*name[ \t]*=[ \t]*\"([^\"]+)\".*" "\\1" package "${_names}")
    if(NOT package)
      message(FATAL_ERROR "hoare_add_rust_library(${target}): no package name in ${manifest}: pass PACKAGE")
    endif()
  endif()
  set(lib_name "${arg_LIB_NAME}")
  if(NOT lib_name)
    string(REPLACE "-" "_" lib_name "${package}")
  endif()
  set(profile "${arg_PROFILE}")
  if(NOT profile)
    set(profile "${HOARE_CARGO_PROFILE}")
  endif()
  if(profile STREQUAL "dev")
    set(profile_dir "debug")
  else()
    set(profile_dir "${profile}")
  endif()
  set(target_dir "${arg_CARGO_TARGET_DIR}")
  if(NOT target_dir)
    set(target_dir "${HOARE_CARGO_TARGET_DIR}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${HOARE_CARGO_FLAGS}")
  list(APPEND flags ${arg_CARGO_FLAGS})
  if(arg_FEATURES)
    list(JOIN arg_FEATURES "," features)
    list(APPEND flags --features "${features}")
  endif()
  # Lists cross the command line of the driver joined by '|'.
  list(JOIN flags "|" flags_arg)

  set(staticlib "${target_dir}/${profile_dir}/lib${lib_name}.a")
  set(include_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}-include")
  file(MAKE_DIRECTORY "${include_dir}")

  add_custom_target(${target}_cargo
    COMMAND ${CMAKE_COMMAND}
            "-DCARGO=${HOARE_CARGO}"
            "-DMANIFEST=${manifest}"
            "-DPACKAGE=${package}"
            "-DPROFILE=${profile}"
            "-DTARGET_DIR=${target_dir}"
            "-DFLAGS=${flags_arg}"
            "-DINCLUDE_DIR=${include_dir}"
            -P "${_HOARE_CMAKE_DIR}/cargo_staticlib.cmake"
    BYPRODUCTS "${staticlib}"
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    USES_TERMINAL
    COMMENT "cargo: building lib${lib_name}.a (${package} with hoare, profile ${profile})")

  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_cargo)
  target_include_directories(${target} INTERFACE "${include_dir}")
  target_link_libraries(${target} INTERFACE hoare_headers "${staticlib}")
endfunction()

# Run by hoare_add_rust_library's build step (cmake -P): builds a crate as a static
# library with cargo and copies the cxx-generated headers of this build (the
# crate's, hoare's, rust/cxx.h) to INCLUDE_DIR.
#
# -DCARGO -DMANIFEST -DPACKAGE -DPROFILE -DTARGET_DIR -DINCLUDE_DIR
# -DFLAGS=a|b|c (extra cargo flags)
#
# The generated headers live in the OUT_DIR of each crate's build script, whose
# name has a hash in it: cargo's JSON messages name it (build-script-executed, also
# for build scripts that did not need to run again).
string(REPLACE "|" ";" flags "${FLAGS}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env "CARGO_TARGET_DIR=${TARGET_DIR}"
          ${CARGO} rustc --manifest-path "${MANIFEST}" -p "${PACKAGE}" --lib
          --profile "${PROFILE}" --crate-type staticlib
          --message-format=json-render-diagnostics ${flags}
  OUTPUT_VARIABLE messages
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cargo failed (${rc}) building ${PACKAGE}")
endif()
string(REGEX MATCHALL "\"out_dir\":\"[^\"]*\"" out_dirs "${messages}")
foreach(d IN LISTS out_dirs)
  string(REGEX REPLACE "^\"out_dir\":\"(.*)\"$" "\\1" d "${d}")
  set(gen "${d}/cxxbridge/include")
  if(NOT IS_DIRECTORY "${gen}")
    continue()
  endif()
  file(GLOB_RECURSE headers RELATIVE "${gen}" "${gen}/*")
  foreach(h IN LISTS headers)
    # Copies the content (symlinks followed); an unchanged header keeps its time,
    # so nothing that includes it is rebuilt.
    get_filename_component(dir "${INCLUDE_DIR}/${h}" DIRECTORY)
    file(MAKE_DIRECTORY "${dir}")
    file(COPY_FILE "${gen}/${h}" "${INCLUDE_DIR}/${h}" ONLY_IF_DIFFERENT)
  endforeach()
endforeach()

# Configures, builds and runs a project outside hoare's tree in a scratch directory:
# the check that hoare can be used from an outside CMake project.
#   tests/consumer:       add_subdirectory()s hoare's cpp/ and links hoare::hoare;
#   examples/my_procs:    also has a Rust crate of its own (hoare_add_rust_library),
#                         whose path dependency on hoare is pointed at HOARE_ROOT.
# -DCONSUMER_SRC -DEXE -DWORK_DIR -DHOARE_CPP_DIR -DHOARE_ROOT -DGENERATOR and the
# HOARE_CARGO_* settings of the enclosing build.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(COPY "${CONSUMER_SRC}/" DESTINATION "${WORK_DIR}/src" PATTERN "target" EXCLUDE)
if(EXISTS "${WORK_DIR}/src/Cargo.toml")
  file(READ "${WORK_DIR}/src/Cargo.toml" manifest)
  string(REPLACE "path = \"../../..\"" "path = \"${HOARE_ROOT}\"" manifest "${manifest}")
  file(WRITE "${WORK_DIR}/src/Cargo.toml" "${manifest}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${WORK_DIR}/src" -B "${WORK_DIR}/build" -G "${GENERATOR}"
          -DCMAKE_BUILD_TYPE=Release
          "-DHOARE_CPP_DIR=${HOARE_CPP_DIR}"
          "-DHOARE_CARGO_TARGET_DIR=${HOARE_CARGO_TARGET_DIR}"
          "-DHOARE_CARGO_PROFILE=${HOARE_CARGO_PROFILE}"
          "-DHOARE_CARGO_FLAGS=${HOARE_CARGO_FLAGS}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer: configure failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer: build failed (${rc})")
endif()
execute_process(COMMAND "${WORK_DIR}/build/${EXE}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer: run failed (${rc})")
endif()

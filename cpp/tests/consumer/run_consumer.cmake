# Configures, builds and runs tests/consumer (a project that add_subdirectory()s
# hoare's cpp/) in a scratch directory: the check that hoare can be used from an
# outside CMake project.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(COPY "${CONSUMER_SRC}/CMakeLists.txt" "${CONSUMER_SRC}/main.cpp" DESTINATION "${WORK_DIR}/src")
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
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer: run failed (${rc})")
endif()

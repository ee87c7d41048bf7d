# libFuzzer targets (clang only): the JSON-RPC decoding of one client line,
# the rollout reader, and a model provider's streamed body. The `fuzz` preset
# compiles everything with -fsanitize=fuzzer-no-link,address,undefined and
# builds only these targets; each runs for a bounded time in ctest from the
# corpus checked in here.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "PARLEY_BUILD_FUZZERS needs clang (use the `fuzz` preset)")
endif()
enable_testing()

set(PARLEY_FUZZ_SECONDS 30 CACHE STRING "How long each fuzzer runs in ctest")
set(_fuzz_dir "${PROJECT_SOURCE_DIR}/tests/fuzz")

# The store's reading code alone: the rest of parley_actors is not needed.
add_library(parley_fuzz_store STATIC
  "${PROJECT_SOURCE_DIR}/actors/core/action_records.cpp"
  "${PROJECT_SOURCE_DIR}/actors/core/counters.cpp"
  "${PROJECT_SOURCE_DIR}/actors/core/errors.cpp"
  "${PROJECT_SOURCE_DIR}/actors/core/log.cpp"
  "${PROJECT_SOURCE_DIR}/actors/core/log_json.cpp"
  "${PROJECT_SOURCE_DIR}/actors/store/action_lines.cpp"
  "${PROJECT_SOURCE_DIR}/actors/store/rollout_file.cpp"
  "${PROJECT_SOURCE_DIR}/actors/store/rollout_format.cpp"
  "${PROJECT_SOURCE_DIR}/actors/store/response_items.cpp"
  "${PROJECT_SOURCE_DIR}/actors/store/rollout_reader.cpp"
  "${PROJECT_SOURCE_DIR}/actors/store/turn_items.cpp")
target_link_libraries(parley_fuzz_store
  PUBLIC parley::protocol CAF::core spdlog::spdlog zstd::zstd PRIVATE parley_warnings)

function(parley_fuzzer name)
  add_executable(${name} "${_fuzz_dir}/${name}.cpp")
  target_link_libraries(${name} PRIVATE ${ARGN} parley_warnings)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  add_test(NAME ${name}
    COMMAND /bin/sh "${_fuzz_dir}/run_fuzzer.sh" "$<TARGET_FILE:${name}>"
            "${_fuzz_dir}/corpus/${name}" "${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/${name}"
            ${PARLEY_FUZZ_SECONDS})
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 300)
endfunction()

parley_fuzzer(jsonrpc_fuzzer parley::protocol)
parley_fuzzer(rollout_fuzzer parley_fuzz_store)
parley_fuzzer(model_stream_fuzzer parley_model_wire)
parley_fuzzer(prompt_image_fuzzer parley::protocol)

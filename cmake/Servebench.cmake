# Helpers: one static library per module, one test executable per module.

set(SB_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wcast-qual -Wformat=2 -Wimplicit-fallthrough -Wundef)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND SB_WARNINGS -Wduplicated-cond -Wlogical-op)
endif()

# sb_sanitize("address,undefined" | "thread" | ""): instruments every target defined after it
# (compile and link). UBSan findings abort (-fno-sanitize-recover=all) so they fail the test.
# Runtime options (ASAN_OPTIONS, TSAN_OPTIONS, ...) are the caller's: see .ci/run.
macro(sb_sanitize sanitizers)
  if(NOT "${sanitizers}" STREQUAL "")
    if("${sanitizers}" MATCHES "thread" AND "${sanitizers}" MATCHES "address")
      message(FATAL_ERROR "SERVEBENCH_SANITIZE: thread and address cannot be combined")
    endif()
    add_compile_options(-fsanitize=${sanitizers} -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${sanitizers})
    if("${sanitizers}" MATCHES "undefined")
      add_compile_options(-fno-sanitize-recover=all)
    endif()
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC 12's flow analysis sees through the instrumentation badly: with -fsanitize it warns
      # "may be used uninitialized" inside libstdc++ (<regex>, std::function), a false positive.
      add_compile_options(-Wno-maybe-uninitialized)
    endif()
    message(STATUS "servebench: sanitizers ${sanitizers}")
  endif()
endmacro()

function(sb_target_defaults target)
  target_compile_options(${target} PRIVATE ${SB_WARNINGS})
  if(SERVEBENCH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_compile_definitions(${target} PRIVATE $<$<CONFIG:Debug>:_GLIBCXX_ASSERTIONS>)
endfunction()

# sb_module(NAME SOURCES a.cpp b.cpp DEPS x y)
function(sb_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(sb_${name} STATIC ${ARG_SOURCES})
  target_include_directories(sb_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(sb_${name} PUBLIC ${ARG_DEPS})
  sb_target_defaults(sb_${name})
endfunction()

# sb_test(NAME SOURCES ... LIBS ... [LABELS ...] [SERIAL])
# SERIAL: timing-sensitive tests that ctest must not run beside others (ctest -j).
function(sb_test name)
  cmake_parse_arguments(ARG "SERIAL" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/support/no_user_store.cpp)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    SB_FIXTURES_DIR="${SB_FIXTURES_DIR}"
    SB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SB_BINARY="$<TARGET_FILE:servebench>")
  sb_target_defaults(${name})
  # The tests' own code is compiled unoptimised: gtest's and nlohmann::json's templates make an
  # optimised test source 3x slower to compile (store_test.cpp: 39 s at -O2 -g, 14 s at -O0 -g),
  # and what a test times runs in the libraries, which keep the build type's flags.
  if(SERVEBENCH_TEST_O0)
    target_compile_options(${name} PRIVATE -O0)
  endif()
  include(GoogleTest)
  # A list value must reach the generated ctest script with its ';' escaped.
  string(REPLACE ";" "\\;" labels "${ARG_LABELS}")
  # No test records into the user's run store (docs/store.md): the store's own tests name theirs.
  # (tests/support/no_user_store.cpp does the same for a binary run by hand.)
  set(env "SERVEBENCH_STORE=off")
  if(ARG_SERIAL)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                         PROPERTIES LABELS "${labels}" RUN_SERIAL TRUE ENVIRONMENT "${env}")
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${labels}" ENVIRONMENT "${env}")
  endif()
endfunction()

# Captured server traffic the tests read: vendored in the repository (tests/fixtures/README.md),
# so any clone builds and passes its tests. A plain variable: it also overrides the cache entry
# that older build folders kept (it used to point outside the checkout).
unset(SB_FIXTURES_DIR CACHE)
set(SB_FIXTURES_DIR "${PROJECT_SOURCE_DIR}/tests/fixtures")

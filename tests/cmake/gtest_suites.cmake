# Run as `cmake -P` after a GoogleTest binary is linked: writes OUTPUT, a CTest include file
# that registers one test per test suite of TEST_EXECUTABLE (named TEST_TARGET.Suite, running
# `TEST_EXECUTABLE --gtest_filter=Suite.*`), each with TEST_TIMEOUT seconds.
#
# One process per suite rather than per test: the fixtures start their onemodeld once per
# suite, so a suite of 191 cases starts one server, not 191 (13x faster in the dev build and
# far more under the sanitizers, where each process start costs seconds).

foreach(var TEST_EXECUTABLE TEST_TARGET TEST_TIMEOUT OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gtest_suites.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(
  COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  OUTPUT_VARIABLE listing
  ERROR_VARIABLE errors
  RESULT_VARIABLE result
  TIMEOUT 120)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n${errors}")
endif()

set(script "")
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  # Suite lines start in column 0 and end with '.', optionally followed by "  # TypeParam = ...";
  # test lines are indented.
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    set(name "${TEST_TARGET}.${suite}")
    string(APPEND script
      "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES TIMEOUT ${TEST_TIMEOUT})\n")
  endif()
endforeach()
if(script STREQUAL "")
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suites")
endif()
file(WRITE "${OUTPUT}" "${script}")

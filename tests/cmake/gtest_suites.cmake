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
# One list item per line (a ';' in a printed parameter would split a line in two).
string(REPLACE ";" "," listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  # Suite lines start in column 0 and end with '.', optionally followed by "  # TypeParam = ...";
  # test lines are indented. gtest_main's banner is the only other unindented line: anything
  # else would be a suite this pattern does not know, whose tests would silently never run.
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    set(name "${TEST_TARGET}.${suite}")
    string(APPEND script
      "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES TIMEOUT ${TEST_TIMEOUT})\n")
  elseif(NOT line MATCHES "^( |$|Running main\\(\\) from )")
    message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests printed a line that is not a "
                        "test suite this script can register: '${line}'")
  endif()
endforeach()
if(script STREQUAL "")
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suites")
endif()
file(WRITE "${OUTPUT}" "${script}")

# Test of gtest_suites.cmake (ctest gtest_suites_script), run as `cmake -D WORK_DIR=... -P`:
# fake GoogleTest binaries print listings, and the script must register exactly their suites
# (plain, parameterized, typed; a ';' in a printed parameter changes nothing) and refuse a
# listing line it cannot register, rather than let that suite's tests silently not run.

set(script "${CMAKE_CURRENT_LIST_DIR}/gtest_suites.cmake")
file(MAKE_DIRECTORY "${WORK_DIR}")

# run_script(LISTING RESULT_VAR OUTPUT_VAR): the script's exit code, and the file it wrote and
# its errors, for a fake binary whose --gtest_list_tests prints LISTING.
function(run_script listing result_var output_var)
  set(fake "${WORK_DIR}/fake_gtest")
  file(WRITE "${fake}" "#!/bin/sh\ncat <<'LISTING'\n${listing}LISTING\n")
  file(CHMOD "${fake}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  file(REMOVE "${WORK_DIR}/suites.cmake")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -D TEST_EXECUTABLE=${fake} -D TEST_TARGET=fake -D TEST_TIMEOUT=7
            -D OUTPUT=${WORK_DIR}/suites.cmake -P ${script}
    RESULT_VARIABLE result ERROR_VARIABLE errors OUTPUT_QUIET)
  set(text "")
  if(EXISTS "${WORK_DIR}/suites.cmake")
    file(READ "${WORK_DIR}/suites.cmake" text)
  endif()
  set(${result_var} "${result}" PARENT_SCOPE)
  # CMake wraps its error messages at a width: compare with runs of blanks made one space.
  string(REGEX REPLACE "[ \n]+" " " text "${text}${errors}")
  set(${output_var} "${text}" PARENT_SCOPE)
endfunction()

# expect(CONDITION_TEXT...): fails the test with a message when the condition is false.
macro(expect)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "expected: ${ARGN}\ngot:\n${output}")
  endif()
endmacro()

run_script([=[Running main() from gtest_main.cc
Plain.
  First
  Second
Table/Param.
  Row0  # GetParam() = "a;b"
Typed/0.  # TypeParam = int
  Case
]=] result output)
expect(result EQUAL 0)
string(REGEX MATCHALL "add_test\\(\\[==\\[[^]]*\\]==\\]" registered "${output}")
list(LENGTH registered count)
expect(count EQUAL 3)
string(FIND "${output}" "add_test([==[fake.Plain]==] [==[${WORK_DIR}/fake_gtest]==] [==[--gtest_filter=Plain.*]==])" plain)
expect(NOT plain EQUAL -1)
string(FIND "${output}" "[==[--gtest_filter=Table/Param.*]==]" param)
expect(NOT param EQUAL -1)
string(FIND "${output}" "[==[--gtest_filter=Typed/0.*]==]" typed)
expect(NOT typed EQUAL -1)
string(FIND "${output}" "PROPERTIES TIMEOUT 7" timeout)
expect(NOT timeout EQUAL -1)

run_script([=[Running main() from gtest_main.cc
Plain.
  First
Odd suite-name.
  Case
]=] result output)
expect(NOT result EQUAL 0)
string(FIND "${output}" "not a test suite this script can register: 'Odd suite-name.'" refused)
expect(NOT refused EQUAL -1)

run_script([=[Running main() from gtest_main.cc
]=] result output)
expect(NOT result EQUAL 0)
string(FIND "${output}" "lists no test suites" empty)
expect(NOT empty EQUAL -1)

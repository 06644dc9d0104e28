# One build check of the operation lists (ctest op_lists.*), run as `cmake -D ... -P`: compiles
# the production source SOURCE exactly as the build does (its compile_commands.json entry,
# syntax only) with one list header replaced by a copy where FIND is replaced by REPLACE (a
# row added or two rows swapped), then expects the compiler's output to match EXPECT, or, when
# EXPECT is empty, the compile to succeed. The compiler speaks in the C locale (plain quotes).
#
#   -D COMPILE_COMMANDS=<build>/compile_commands.json  -D SOURCE_DIR=<source root>
#   -D WORK_DIR=<scratch>  -D SOURCE=core/ops/elementwise.cc  -D HEADER=core/kernels/kernels.h
#   -D FIND="X(Tanh) X(Gelu)"  -D REPLACE="X(Tanh) X(Gelu) X(Erf)"  -D EXPECT=<regex or empty>

# The perturbed header, in a folder searched before the source root.
file(READ "${SOURCE_DIR}/${HEADER}" text)
string(FIND "${text}" "${FIND}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${HEADER} no longer contains '${FIND}': update this check's FIND and "
                      "REPLACE (tests/op_lists/CMakeLists.txt) to the list as it is now")
endif()
string(REPLACE "${FIND}" "${REPLACE}" text "${text}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(WRITE "${WORK_DIR}/shadow/${HEADER}" "${text}")

# The build's own command for SOURCE, made syntax-only, with the shadow folder first.
file(READ "${COMPILE_COMMANDS}" entries)
string(JSON count LENGTH "${entries}")
math(EXPR last "${count} - 1")
set(command "")
foreach(i RANGE ${last})
  string(JSON file GET "${entries}" ${i} file)
  if(file STREQUAL "${SOURCE_DIR}/${SOURCE}")
    string(JSON command GET "${entries}" ${i} command)
    string(JSON directory GET "${entries}" ${i} directory)
    break()
  endif()
endforeach()
if(command STREQUAL "")
  message(FATAL_ERROR "${COMPILE_COMMANDS} has no entry for ${SOURCE}: is it still built?")
endif()
separate_arguments(args UNIX_COMMAND "${command}")
list(POP_FRONT args compiler)
list(FIND args "-o" output_at)
if(NOT output_at EQUAL -1)
  list(REMOVE_AT args ${output_at} ${output_at})  # -o and the object file
endif()
list(REMOVE_ITEM args "-c")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${compiler} "-I${WORK_DIR}/shadow" ${args} -fsyntax-only
  WORKING_DIRECTORY "${directory}"
  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)

if(EXPECT STREQUAL "")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${SOURCE} does not compile with '${FIND}' made '${REPLACE}' in "
                        "${HEADER}:\n${output}")
  endif()
  message(STATUS "${SOURCE} compiles with '${FIND}' made '${REPLACE}' in ${HEADER}")
elseif(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiles with '${FIND}' made '${REPLACE}' in ${HEADER}: "
                      "nothing checks that list any more (expected: ${EXPECT})")
elseif(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SOURCE} fails with '${FIND}' made '${REPLACE}' in ${HEADER}, but not "
                      "with '${EXPECT}':\n${output}")
else()
  string(REGEX MATCH "[^\n]*(${EXPECT})[^\n]*" line "${output}")
  message(STATUS "${SOURCE} fails as expected:\n${line}")
endif()

# Test of the build-enforced layering (ctest cmake_layering), run as
#   cmake -D SOURCE_DIR=<repo> -D WORK_DIR=<dir> -D CXX=<compiler> -D GENERATOR=<gen> -P ...
# It configures the real project with probes added (CMAKE_PROJECT_INCLUDE defers their
# definition to the end of the top-level CMakeLists.txt) and proves each rule of DESIGN.md
# section 2 by breaking it: a probe source compiled as a folder of core/ (or client/) would be
# (an OBJECT library linking onemodel_core_<folder>, under that folder's include rules) must
# fail to build, naming the include; probes of allowed includes must build, so the refusals
# are not the probe setup failing. A second configure in which a client/ target links core
# must fail.

cmake_minimum_required(VERSION 3.25)
foreach(var SOURCE_DIR WORK_DIR CXX GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "layering_test.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The probes: name, the target whose sources it stands for (it links that target), what checks
# it: "all" (the target's include check, then its include paths, as for the target's own
# sources) or "paths" (the include paths alone, to prove they refuse on their own), OK or FAIL,
# and for a refusal the include the output must name (so it failed for that include and not
# for some other reason).
set(probes
  memory_includes_tensor    onemodel_core_memory  all   FAIL core/tensor/tensor.h
  kernels_includes_autograd onemodel_core_kernels all   FAIL core/autograd/backward_record.h
  kernels_includes_ops      onemodel_core_kernels all   FAIL core/ops/elementwise.h
  core_includes_server      onemodel_core_ops     all   FAIL server/sessions/session.h
  core_includes_proto       onemodel_core_ops     all   FAIL onemodel/v1/onemodel.pb.h
  core_includes_grpc        onemodel_core_ops     all   FAIL grpcpp/grpcpp.h
  core_includes_protobuf    onemodel_core_ops     all   FAIL google/protobuf/message.h
  ops_includes_internal     onemodel_core_ops     all   FAIL core/kernels/internal/matmul.h
  memory_includes_relative  onemodel_core_memory  all   FAIL ../tensor/tensor.h
  memory_includes_shape     onemodel_core_memory  all   OK   -
  kernels_includes_tensor   onemodel_core_kernels all   OK   -
  ops_includes_autograd     onemodel_core_ops     all   OK   -
  memory_includes_tensor    onemodel_core_memory  paths FAIL core/tensor/tensor.h
  kernels_includes_autograd onemodel_core_kernels paths FAIL core/autograd/backward_record.h
  kernels_includes_ops      onemodel_core_kernels paths FAIL core/ops/elementwise.h
  core_includes_server      onemodel_core_ops     paths FAIL server/sessions/session.h
  core_includes_proto       onemodel_core_ops     paths FAIL onemodel/v1/onemodel.pb.h
  ops_includes_autograd     onemodel_core_ops     paths OK   -
  client_includes_core      onemodel_client       all   FAIL core/dtype/dtype.h
  client_includes_server    onemodel_client       all   FAIL server/sessions/session.h)
# The probes' sources: the include under test, and code that uses it.
set(source_memory_includes_tensor [==[#include "core/tensor/tensor.h"
int f() { return 0; }
]==])
set(source_kernels_includes_autograd [==[#include "core/autograd/backward_record.h"
int f() { return 0; }
]==])
set(source_kernels_includes_ops [==[#include "core/ops/elementwise.h"
int f() { return 0; }
]==])
set(source_core_includes_server [==[#include "server/sessions/session.h"
int f() { return 0; }
]==])
set(source_core_includes_proto [==[#include "onemodel/v1/onemodel.pb.h"
int f() { return 0; }
]==])
set(source_core_includes_grpc [==[#include <grpcpp/grpcpp.h>
int f() { return 0; }
]==])
set(source_core_includes_protobuf [==[#include <google/protobuf/message.h>
int f() { return 0; }
]==])
set(source_ops_includes_internal [==[#include "core/kernels/internal/matmul.h"
int f() { return 0; }
]==])
set(source_client_includes_core [==[#include "core/dtype/dtype.h"
int f() { return 0; }
]==])
set(source_client_includes_server [==[#include "server/sessions/session.h"
int f() { return 0; }
]==])
set(source_memory_includes_relative [==[#include "../tensor/tensor.h"
int f() { return 0; }
]==])
set(source_memory_includes_shape [==[#include "core/memory/buffer_pool.h"
#include "core/shape/shape.h"
int64_t f(const onemodel::BufferPool& pool, const onemodel::Shape& s) {
  return pool.max_idle_bytes() + s.ElementCount();
}
]==])
set(source_kernels_includes_tensor [==[#include "core/kernels/internal/matmul.h"
#include "core/tensor/tensor.h"
void f(const onemodel::Tensor& a, onemodel::Tensor& out) {
  onemodel::internal::MatMulReference(a, a, out);
}
]==])
set(source_ops_includes_autograd [==[#include "core/autograd/backward_record.h"
#include "core/ops/elementwise.h"
bool f(const onemodel::Tensor& t) { return onemodel::GradFn(t) != nullptr; }
]==])

# The probes as targets, defined once every target they link exists.
set(defs "")
list(LENGTH probes n)
math(EXPR last "${n} - 1")
foreach(i RANGE 0 ${last} 5)
  list(SUBLIST probes ${i} 5 probe)
  list(GET probe 0 name)
  list(GET probe 1 like)
  list(GET probe 2 checks)
  set(file "${WORK_DIR}/probes/${name}.cc")
  file(WRITE "${file}" "${source_${name}}")
  string(APPEND defs
    "add_library(probe_${name}_${checks} OBJECT [==[${file}]==])\n"
    "target_link_libraries(probe_${name}_${checks} PRIVATE ${like})\n")
  if(checks STREQUAL "all")
    string(APPEND defs "onemodel_check_includes(probe_${name}_${checks} FILES [==[${file}]==] "
                       "LIKE ${like})\n")
  endif()
endforeach()
file(WRITE "${WORK_DIR}/probe_defs.cmake" "${defs}")
file(WRITE "${WORK_DIR}/probes.cmake"
  "cmake_language(DEFER DIRECTORY [==[${SOURCE_DIR}]==] CALL include [==[${WORK_DIR}/probe_defs.cmake]==])\n")

# configure(BUILD_DIR INJECT RESULT_VAR OUTPUT_VAR): configures the real project (no tests, no
# benchmarks) with INJECT as its CMAKE_PROJECT_INCLUDE.
function(configure build_dir inject result_var output_var)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${build_dir}" -G "${GENERATOR}"
            -D CMAKE_CXX_COMPILER=${CXX} -D CMAKE_BUILD_TYPE=Debug -D ONEMODEL_BUILD_TESTS=OFF
            -D ONEMODEL_BUILD_BENCH=OFF -D CMAKE_PROJECT_INCLUDE=${inject}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${result_var} "${result}" PARENT_SCOPE)
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()

set(failures "")
configure("${WORK_DIR}/build" "${WORK_DIR}/probes.cmake" result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configuring the project with the probes failed:\n${output}")
endif()
foreach(i RANGE 0 ${last} 5)
  list(SUBLIST probes ${i} 5 probe)
  list(GET probe 0 name)
  list(GET probe 2 checks)
  list(GET probe 3 expect)
  list(GET probe 4 named)
  set(target probe_${name}_${checks})
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --target ${target}
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(checks STREQUAL "all")
    set(refusal "includes ${named}: ")
  else()
    set(refusal "${named}: No such file|'${named}' file not found")
  endif()
  if(expect STREQUAL "OK" AND NOT result EQUAL 0)
    string(APPEND failures "${target} (allowed) failed to build:\n${out}${err}\n")
  elseif(expect STREQUAL "FAIL" AND result EQUAL 0)
    string(APPEND failures "${target} built: the build does not refuse ${named}\n")
  elseif(expect STREQUAL "FAIL" AND NOT "${out}${err}" MATCHES "${refusal}")
    string(APPEND failures "${target} failed, but not for including ${named}:\n${out}${err}\n")
  else()
    message(STATUS "${target}: ${expect} as expected")
  endif()
endforeach()

# A client/ target linking core, here through a library of its own, fails the configure.
file(WRITE "${WORK_DIR}/client_links_core.cmake"
  "cmake_language(DEFER DIRECTORY [==[${SOURCE_DIR}]==] CALL include [==[${WORK_DIR}/client_links_core_defs.cmake]==])\n")
file(WRITE "${WORK_DIR}/client_links_core_defs.cmake"
  "add_library(probe_core_user INTERFACE)\n"
  "target_link_libraries(probe_core_user INTERFACE onemodel_core_dtype)\n"
  "target_link_libraries(onemodel_client PRIVATE probe_core_user)\n")
configure("${WORK_DIR}/client_build" "${WORK_DIR}/client_links_core.cmake" result output)
string(REGEX REPLACE "[ \n]+" " " output "${output}")
if(result EQUAL 0)
  string(APPEND failures "the configure accepted onemodel_client linking onemodel_core_dtype\n")
elseif(NOT output MATCHES "onemodel_client \\(in client/\\) links onemodel_core_dtype: onemodel_client -> probe_core_user -> onemodel_core_dtype")
  string(APPEND failures "the configure with onemodel_client linking core failed, but not "
                         "for that link:\n${output}\n")
else()
  message(STATUS "client linking core: refused as expected")
endif()

if(failures)
  message(FATAL_ERROR "${failures}")
endif()

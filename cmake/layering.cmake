# The layering of DESIGN.md section 2, checked by the build (tests/cmake/layering_test.cmake
# proves each check by breaking it).

# onemodel_check_includes(<target> LABEL <name> FILES <file>... [ALLOW_CORE <folder>...]
#                         [OWN <folder>] [FORBID <regex> WHY <reason>])
# onemodel_check_includes(<target> FILES <file>... LIKE <other target>)
# Before <target> compiles, and again whenever one of FILES changes, refuses (naming file and
# include) an include of core/<folder>/ outside ALLOW_CORE, of another folder's internal/
# headers than OWN's, a path with "..", or one matching FORBID. LIKE takes the rules of a
# target checked before. Include paths already hide the core folders a target may not use;
# this also stops what they cannot: system headers (gRPC, protobuf) and relative paths.
function(onemodel_check_includes target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL;OWN;FORBID;WHY;LIKE" "FILES;ALLOW_CORE")
  if(arg_LIKE)
    get_target_property(rules ${arg_LIKE} ONEMODEL_INCLUDE_RULES)
  else()
    string(CONCAT rules "set(LABEL [==[${arg_LABEL}]==])\nset(ALLOW_CORE [==[${arg_ALLOW_CORE}]==])\n"
           "set(OWN [==[${arg_OWN}]==])\nset(FORBID [==[${arg_FORBID}]==])\n"
           "set(WHY [==[${arg_WHY}]==])\nset(ROOT [==[${PROJECT_SOURCE_DIR}]==])\n")
  endif()
  set_target_properties(${target} PROPERTIES ONEMODEL_INCLUDE_RULES "${rules}")

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/include_check)
  set(rules_file ${dir}/${target}.cmake)
  file(CONFIGURE OUTPUT ${rules_file} CONTENT "${rules}set(FILES [==[${arg_FILES}]==])\n" @ONLY)
  set(script ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake)
  add_custom_command(
    OUTPUT ${dir}/${target}.stamp
    COMMAND ${CMAKE_COMMAND} -D RULES=${rules_file} -P ${script}
    COMMAND ${CMAKE_COMMAND} -E touch ${dir}/${target}.stamp
    DEPENDS ${script} ${rules_file} ${arg_FILES}
    COMMENT "Checking the includes of ${target}"
    VERBATIM)
  add_custom_target(${target}_includes DEPENDS ${dir}/${target}.stamp)
  add_dependencies(${target} ${target}_includes)
endfunction()

# onemodel_check_links(<directory> <forbidden target prefix> <reason>): fails the configure
# when a target defined in <directory> or below links, directly or through other targets, a
# target whose name starts with the prefix; the message shows the chain. Call it deferred
# (cmake_language(DEFER)), so links added after the call are seen too.
function(onemodel_check_links directory prefix reason)
  set(targets "")
  set(dirs ${directory})
  while(dirs)
    list(POP_FRONT dirs d)
    get_property(own DIRECTORY ${d} PROPERTY BUILDSYSTEM_TARGETS)
    get_property(subdirs DIRECTORY ${d} PROPERTY SUBDIRECTORIES)
    list(APPEND targets ${own})
    list(APPEND dirs ${subdirs})
  endwhile()
  foreach(start IN LISTS targets)
    # Breadth-first over link dependencies, remembering how each was reached.
    set(queue ${start})
    set(seen ${start})
    set(chain_${start} ${start})
    while(queue)
      list(POP_FRONT queue t)
      set(deps "")
      foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
        get_target_property(more ${t} ${property})
        if(more)
          list(APPEND deps ${more})
        endif()
      endforeach()
      foreach(dep IN LISTS deps)
        # $<LINK_ONLY:x> and $<BUILD_INTERFACE:x> still link x; "::@(dir)" marks are not links.
        string(REGEX REPLACE "^\\$<(LINK_ONLY|BUILD_INTERFACE):(.*)>$" "\\2" dep "${dep}")
        if(NOT TARGET "${dep}" OR dep IN_LIST seen)
          continue()
        endif()
        get_target_property(aliased ${dep} ALIASED_TARGET)
        if(aliased)
          set(dep ${aliased})
        endif()
        list(APPEND seen ${dep})
        set(chain_${dep} "${chain_${t}} -> ${dep}")
        if(dep MATCHES "^${prefix}")
          message(FATAL_ERROR "${start} (in ${directory}/) links ${dep}: ${chain_${dep}}. "
                              "${reason}")
        endif()
        list(APPEND queue ${dep})
      endforeach()
    endwhile()
  endforeach()
endfunction()

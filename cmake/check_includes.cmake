# Run as `cmake -D RULES=<file> -P check_includes.cmake` (by onemodel_check_includes, at build
# time): fails, naming every offending file and include, when one of FILES includes
#   - a path with "..",
#   - anything matching FORBID (then WHY says why),
#   - "core/<folder>/..." for a folder not in ALLOW_CORE, or
#   - "core/<folder>/internal/..." for a folder other than OWN.
# RULES is a CMake file setting LABEL, FILES, ALLOW_CORE, OWN, FORBID, WHY and ROOT (the
# directory the message shows paths from).

cmake_minimum_required(VERSION 3.25)
include("${RULES}")

set(problems "")
foreach(file IN LISTS FILES)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)")
      continue()
    endif()
    set(path "${CMAKE_MATCH_2}")
    set(why_not "")
    if(path MATCHES "(^|/)\\.\\.(/|$)")
      set(why_not "include by the path from the repository root, not with '..'")
    elseif(FORBID AND path MATCHES "${FORBID}")
      set(why_not "${WHY}")
    elseif(path MATCHES "^core/([^/]+)/")
      set(folder "${CMAKE_MATCH_1}")
      if(NOT folder IN_LIST ALLOW_CORE)
        list(JOIN ALLOW_CORE "," allowed)
        set(why_not "${LABEL} may include only core/{${allowed}} (DESIGN.md section 2: \
dependencies point one way; move the code down, or pass in what it needs)")
      elseif(path MATCHES "^core/[^/]+/internal/" AND NOT folder STREQUAL OWN)
        set(why_not "core/${folder}/internal/ is for core/${folder} alone; use its public headers")
      endif()
    endif()
    if(why_not)
      file(RELATIVE_PATH shown "${ROOT}" "${file}")
      string(APPEND problems "  ${shown} includes ${path}: ${why_not}\n")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "Includes that break the layering of ${LABEL}:\n${problems}")
endif()

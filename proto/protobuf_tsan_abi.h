// Forced first in every translation unit that uses the protobuf headers, in the ThreadSanitizer
// build only (proto/CMakeLists.txt). Protobuf 3.21's map_field.h gives MapFieldBase two extra
// members when __SANITIZE_THREAD__ is defined, which GCC defines under -fsanitize=thread; but
// Debian's libprotobuf was built without it, so its code (reflection: SpaceUsedLong, Swap,
// DebugString of a map field) would read our map fields at the wrong offsets and crash. Reading
// map_field.h here, with the macro hidden, gives every translation unit the library's layout.
#pragma once

#pragma push_macro("__SANITIZE_THREAD__")
#undef __SANITIZE_THREAD__
#include <google/protobuf/map_field.h>
#pragma pop_macro("__SANITIZE_THREAD__")

"""Process-wide settings of the gRPC runtime, as the C++ server and client make them.

Debian's grpcio links Debian's libabsl, which is built without NDEBUG: every absl::Mutex
(all of gRPC's locks) then records its lock order in a process-wide graph, which costs each
call dozens of slow lock operations (proto/grpc_runtime.h in the C++ sources). abseil's
SetMutexDeadlockDetectionMode(kIgnore) turns that off; Python reaches it through ctypes, in
the copy of libabsl_synchronization already loaded by grpc (a grpcio with its own abseil
built in needs nothing, and is left alone).
"""

from __future__ import annotations

import ctypes
import os

# absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle), with and without the inline
# namespace Debian's build adds ("debian3" in bookworm's 20220623).
_SETTERS = (
    '_ZN4absl7debian329SetMutexDeadlockDetectionModeENS0_15OnDeadlockCycleE',
    '_ZN4absl29SetMutexDeadlockDetectionModeENS_15OnDeadlockCycleE',
)
_IGNORE = 0  # absl::OnDeadlockCycle::kIgnore
_done = False


def loaded_abseil_synchronization() -> str | None:
    """The path of the libabsl_synchronization this process has loaded, or None."""
    try:
        with open('/proc/self/maps', encoding='utf-8', errors='replace') as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path).startswith('libabsl_synchronization.so'):
                    return path
    except OSError:
        pass
    return None


def quiet_abseil_mutexes() -> bool:
    """Turns off abseil's lock-order tracking once per process; True when it is off by our call."""
    global _done
    if _done:
        return True
    path = loaded_abseil_synchronization()
    if path is None:
        return False
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
    except OSError:
        return False
    for name in _SETTERS:
        setter = getattr(lib, name, None)
        if setter is not None:
            setter.argtypes = [ctypes.c_int]
            setter.restype = None
            setter(_IGNORE)
            _done = True
            return True
    return False

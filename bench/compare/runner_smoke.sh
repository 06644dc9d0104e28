#!/bin/sh
# compare_runner_smoke RUNNER: the runner's malloc is glibc's (as in onemodeld), and with
# Debian's mimalloc preloaded (compare.py's "mimalloc" runner) it is mimalloc's; each time
# the 256-byte cases run.
set -eu
check() {  # check MALLOC_LIBRARY [env assignments...]
  expected=$1
  shift
  out=$(printf 'info\narena_256 0.01\nmalloc_256 0.01\n' | env "$@" "$runner")
  echo "$out"
  echo "$out" | grep -q "\"malloc\":\"$expected\"" || { echo "malloc is not $expected" >&2; exit 1; }
  for c in arena_256 malloc_256; do
    echo "$out" | grep -q "\"case\":\"$c\",\"seconds\"" || { echo "no timing for $c" >&2; exit 1; }
  done
}
runner=$1
check libc.so.6
check libmimalloc.so.2 LD_PRELOAD=libmimalloc.so.2

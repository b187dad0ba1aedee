#!/usr/bin/env bash
# The threads lane under ThreadSanitizer: everything that runs teams, checkers
# or writers on OS threads, built with -fsanitize=thread into ./build-tsan
# (host backends only) and run once. A data race, a lock-order inversion or a
# TSan report of any kind fails the lane, naming the command.
#
# Exit codes: 0 clean; 1 a TSan report or an unexpected exit code (the
# command and its log are printed); 2 the lane could not be built.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-tsan
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 -g1: what TSan needs (optimised code, line tables for its reports),
# and less to compile than -O2 -g; NDEBUG as in the tested build.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=None -DGFSL_CUDA=OFF -DGFSL_TESTS=ON "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g1 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null ||
  { echo "tsan: cannot configure $build" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" --target gfsl test_concurrency >/dev/null ||
  { echo "tsan: cannot build gfsl and test_concurrency in $build" >&2; exit 2; }

# 66: a TSan report (distinct from every gfsl exit code).
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
gfsl="$PWD/$build/gfsl"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Kernels with many random mmap bits refuse TSan's memory layout; without
# address randomisation it runs (the race detection is the same).
prefix=()
if "$gfsl" --help 2>&1 | grep -q "ThreadSanitizer"; then
  prefix=(setarch "$(uname -m)" -R)
  if "${prefix[@]}" "$gfsl" --help 2>&1 | grep -q "ThreadSanitizer"; then
    echo "tsan: ThreadSanitizer cannot run on this kernel, even without address randomisation" >&2
    exit 2
  fi
fi

failed=0
# lane NAME EXPECTED_EXITS COMMAND... (EXPECTED_EXITS: a code, or codes as 0|1)
lane() {
  local name=$1 want=$2
  shift 2
  local log="$work/$name.log" rc=0
  "${prefix[@]}" "$@" >"$log" 2>&1 || rc=$?
  if grep -q "WARNING: ThreadSanitizer\|ERROR: ThreadSanitizer" "$log" || [[ ! $rc =~ ^($want)$ ]]; then
    echo "tsan: $name: exit $rc (expected $want): $*" >&2
    sed -n '1,80p' "$log" >&2
    failed=1
  else
    echo "tsan: $name: clean"
  fi
}

lane concurrency 0 "$build/tests/test_concurrency" \
  --gtest_filter='Concurrency/*.OverlappingKeySets*:ConcurrencyErrors.*'
lane run-threads 0 "$gfsl" run --backend threads --teams 8 --ops 20000 --range 300 --events on --trace "$work/t.trace"
lane check-pool 0 "$gfsl" check --threads 4 "$work/t.trace"
# SlabHash's fixed variant on OS threads: its pair CASes and reads are real
# atomics, racing on few buckets (a data race here would be one in the port).
lane run-slabhash-threads 0 "$gfsl" run --subject slabhash --backend threads --teams 8 --ops 20000 --range 300 --buckets 2 --trace "$work/s.trace"
lane check-slabhash 0 "$gfsl" check --subject slabhash "$work/s.trace"
lane stress-robust 0 "$gfsl" stress --backend threads --seconds 4
# The published variant loses keys under torn reads: violations (exit 1, when
# a run meets one), reported from the team threads while the watchdog reads
# the counters.
lane stress-thesis "0|1" "$gfsl" stress --backend threads --variant thesis --seconds 4

lane fuzz-jobs 0 "$gfsl" fuzz --backend threads --jobs 2 --seconds 6 --progress off --out "$work/fzj"
exit $failed

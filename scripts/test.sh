#!/usr/bin/env bash
# The test command (CI runs it): installs what is missing, builds, runs every
# test. The CUDA sources are compiled when nvcc is found, as a quick device
# build (every kernel and instantiation, the algorithm's functions out of
# line: GFSL_CUDA_QUICK, docs/BUILD.md), gfsl-bench included; a GPU run for
# figures needs scripts/build.sh -DGFSL_CUDA_QUICK=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase() { echo "test.sh: $1 ($((SECONDS - start)) s so far)"; }
scripts/install-deps.sh
phase "building"
# Release at -O2: no debug information, about 30% less to compile than
# -O2 -g (docs/BUILD.md); -O3 would draw GCC 12's false -Wrestrict warnings.
scripts/build.sh -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_CUDA_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DGFSL_CUDA_QUICK=ON -DGFSL_BENCH=ON
phase "running the tests"
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The threads lane once more, under ThreadSanitizer (scripts/tsan.sh).
phase "the ThreadSanitizer lane"
scripts/tsan.sh
# Every reader under AddressSanitizer and UBSan: the audits' reproductions,
# then 200 rounds of damaged inputs drawn from seed 1 (scripts/hostile.sh;
# the nightly form runs for a time instead).
phase "the AddressSanitizer and UBSan lane"
scripts/hostile.sh --rounds 200 --seed 1
phase "done"

#!/usr/bin/env bash
# GPU measurements for docs/BENCHMARKS.md, on a machine with a CUDA device:
# the %globaltimer probe, then recording cost and partitioning (device_bench).
#   scripts/device-bench.sh [BUILD_DIR] [REPEATS]
set -euo pipefail
build=${1:-build}
repeats=${2:-5}
"$build/bench/clock_probe" 8192 64
"$build/bench/device_bench" 10000000 1000000 8192 "$repeats"

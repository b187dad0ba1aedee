#!/usr/bin/env bash
# GPU measurements for docs/BENCHMARKS.md, on a machine with a CUDA device.
#   scripts/device-bench.sh [BUILD_DIR] [REPEATS] [OUT_DIR]
# Writes OUT_DIR/launch.csv (Table 5.1), thesis.csv and thesis.svg (Figures
# 5.3 and 5.4, with the per-thread baseline), recording.csv, and the logs.
set -euo pipefail
build=${1:-build}
repeats=${2:-5}
out=${3:-bench-results}
for needed in "$build/gfsl-bench" "$build/bench/clock_probe" "$build/bench/device_bench"; do
  [[ -x $needed ]] || { echo "device-bench: $needed is not built (scripts/build.sh -DGFSL_BENCH=ON -DGFSL_CUDA_QUICK=OFF)" >&2; exit 2; }
done
mkdir -p "$out"
"$build/bench/clock_probe" 8192 64 | tee "$out/clock_probe.log"
"$build/gfsl" bench --suite launch --repeats "$repeats" --csv "$out/launch.csv" 2>&1 | tee "$out/launch.log"
"$build/gfsl" bench --suite thesis --launch 512/4 --repeats "$repeats" --csv "$out/thesis.csv" 2>&1 | tee "$out/thesis.log"
"$build/gfsl" bench --suite recording --launch 512/4 --repeats "$repeats" --csv "$out/recording.csv" 2>&1 | tee "$out/recording.log"
"$build/bench/device_bench" 10000000 1000000 8192 "$repeats" | tee "$out/device_bench.log"
python3 "$(dirname "$0")/plot_bench.py" "$out/thesis.csv" "$out/thesis.svg"

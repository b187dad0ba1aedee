#!/usr/bin/env bash
# The torn-read measurement of docs/FINDINGS.md, on a machine with a CUDA
# device: gfsl stress on both variants and both chunk sizes, and the
# load-relaxed amplifier that shows the oracle firing.
#   scripts/device-stress.sh [GFSL] [OUT_DIR] [SECONDS_N32] [SECONDS_N16] [SECONDS_ROBUST]
# Writes OUT_DIR/<configuration>.json (gfsl stress --json), OUT_DIR/stderr.txt,
# and a summary line per configuration on stdout.
set -uo pipefail
g=${1:-build/gfsl}
out=${2:-stress-results}
n32=${3:-200}
n16=${4:-100}
robust=${5:-200}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee "$out/device.txt"
stress() {
  local name=$1
  shift
  "$g" stress --backend cuda --progress off --json - "$@" >"$out/$name.json" 2> >(sed "s/^/$name: /" >>"$out/stderr.txt")
  echo "$name: exit $?"
  python3 "$(dirname "$0")/stress_summary.py" "$out/$name.json"
}
# The setting that reproduced the torn read on an H200 (docs/FINDINGS.md):
# 36 keys, one writer team in four.
setting=(--range 36 --writers 1/4)
stress thesis-n32 --variant thesis --chunk 32 "${setting[@]}" --seconds "$n32"
stress thesis-n16 --variant thesis --chunk 16 "${setting[@]}" --seconds "$n16"
stress amplifier-n32 --variant thesis --chunk 32 --mutant release-weakened --range 40 --writers 1/8 --seconds 20
stress robust-n32 --variant robust --chunk 32 "${setting[@]}" --seconds "$robust"

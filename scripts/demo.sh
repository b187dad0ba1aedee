#!/usr/bin/env bash
# A fresh machine's first run: installs what is missing, builds, and runs a
# workload on the CPU backend, printing its summary and checks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/gfsl run --backend host --teams 8 --ops 200000 --mix 20,20,60 --range 5000 --chunk 32 --seed 1

#!/usr/bin/env bash
# Configures and builds into ./build (CUDA backend too when nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x /usr/local/cuda/bin/nvcc && ":$PATH:" != *":/usr/local/cuda/bin:"* ]] && export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j"$(nproc)"

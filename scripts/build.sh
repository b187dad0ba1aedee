#!/usr/bin/env bash
# Configures and builds into ./build: the host parts, the tests, and the CUDA
# backend when nvcc is found. Extra arguments go to CMake's configure step
# (e.g. -DGFSL_BENCH=ON for gfsl-bench, -DCMAKE_CUDA_ARCHITECTURES=80).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x /usr/local/cuda/bin/nvcc && ":$PATH:" != *":/usr/local/cuda/bin:"* ]] && export PATH="/usr/local/cuda/bin:$PATH"
# GFSL_CUDA and GFSL_TESTS are said each time: a build folder that
# scripts/demo.sh configured host-only gets them back.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFSL_CUDA=ON -DGFSL_TESTS=ON "${launcher[@]}" "$@"
cmake --build build -j"$(nproc)"

#!/usr/bin/env bash
# Builds record_versioned_tree against MVGpuBTree's headers as shipped.
#   examples/versioned_tree/build.sh MVGPUBTREE_DIR OUT_DIR      (from the project's root)
# MVGPUBTREE_DIR holds include/gpu_btree.h (owensgroup/MVGpuBTree f755006).
# The headers are copied to a temporary folder with the versioned tree's
# `private:` made `public:` (its kernels are friends; this one is not), and
# nothing else changed.
set -euo pipefail
peer=${1:?usage: build.sh MVGPUBTREE_DIR OUT_DIR}
out=${2:?usage: build.sh MVGPUBTREE_DIR OUT_DIR}
[ -f "$peer/include/gpu_btree.h" ] || { echo "build.sh: $peer/include/gpu_btree.h not found (MVGpuBTree's headers)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$peer/include" "$tmp/include"
sed -i 's/^ private:/ public:/' "$tmp/include/gpu_versioned_blink_tree.hpp"
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$nvcc" -std=c++20 -arch=${ARCH:-sm_90} -O3 --expt-extended-lambda --expt-relaxed-constexpr \
  -I"$tmp/include" -I"$here/../../include" "$here/record_versioned_tree.cu" -o "$out/record_versioned_tree"
echo "built $out/record_versioned_tree"

// For code that includes <cuda_runtime.h>: with this folder first on the
// include path (-I.../include/gfsl/cpu/shadow), the include brings the CPU
// layer instead of the toolkit's header (docs/CUDA-ON-CPU.md).
#pragma once
#include "../cuda.hpp"

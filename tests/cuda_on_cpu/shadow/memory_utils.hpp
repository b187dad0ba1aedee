// The shadow of original/memory_utils.hpp, first on the include path: the
// same functions in C++ the layer runs. An RMW that adds 0 is a scheduling
// point and an acquire-or-stronger read in the model, where a plain load
// would be neither.
#pragma once
#include <cuda_runtime.h>
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) { return atomicAdd(const_cast<unsigned*>(p), 0u); }

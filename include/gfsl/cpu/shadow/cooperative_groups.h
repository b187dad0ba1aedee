// <cooperative_groups.h> on the CPU layer (docs/CUDA-ON-CPU.md).
#pragma once
#include "../cooperative_groups.hpp"

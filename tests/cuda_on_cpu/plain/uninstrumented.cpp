#define GFSL_PLAIN_NS uninstrumented
#include "kernels.inc"

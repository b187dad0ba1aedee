#define GFSL_PLAIN_NS instrumented
#include "kernels.inc"

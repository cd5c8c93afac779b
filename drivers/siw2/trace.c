// SPDX-License-Identifier: GPL-2.0
/* The one instance of siw2's tracepoints (trace.h). */
#define CREATE_TRACE_POINTS
#include "trace.h"

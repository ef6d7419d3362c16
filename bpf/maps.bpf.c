// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Defines the shared maps once; see maps.h. */
#define VNET_DEFINE_MAPS
#include "maps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

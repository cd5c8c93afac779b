// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Refuses a libibverbs of another release than the one libsiw2 was built
 * for.
 *
 * The PABI in the file name (lib<name>-rdmav<PABI>.so) and in the
 * registration symbol keeps libibverbs of another generation from loading
 * this provider at all. Inside one generation it does not: PABI 34's
 * libibverbs 39, 44 and 50 all load a provider built for any of them, yet
 * their struct verbs_qp differ (ibv_qp_ex grew; pabi_layout.c), and one
 * built for 44 would read the comp_mask the library writes for 50 eight
 * bytes off. libibverbs offers no run-time version call, but its file
 * name carries the release it came from: libibverbs.so.1.<ABI>.<release>.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pabi.h"

#define PABI_STR2(x) #x
#define PABI_STR(x) PABI_STR2(x)

bool pabi_library_ok(void)
{
	unsigned int abi, release, patch;
	char path[PATH_MAX];
	const char *base;
	Dl_info info;
	int end = 0;

	/* The library that defines the symbol this file registers with. */
	if (!dladdr((void *)pabi_register_driver, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, path)) {
		fprintf(stderr,
			"libsiw2: cannot locate libibverbs to check its release; not registering\n");
		return false;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (sscanf(base, "libibverbs.so.1.%u.%u.%u%n", &abi, &release, &patch,
		   &end) == 3 && !base[end] && release == SIW2_RDMA_CORE)
		return true;
	fprintf(stderr,
		"libsiw2: built for rdma-core " PABI_STR(SIW2_RDMA_CORE)
		" (PABI " PABI_STR(PABI_VERSION)
		"), but libibverbs is %s; not registering: rebuild libsiw2 for this rdma-core\n",
		path);
	return false;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Opens ("window open") or closes ("window close") a counting window of
 * the tcg_blocks plugin: reads one of the two fixed user addresses the
 * plugin watches. Without the plugin it does nothing visible.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define WINDOW_OPEN	0x133700000000UL
#define WINDOW_CLOSE	0x133700001000UL

int main(int argc, char **argv)
{
	volatile const char *p;
	unsigned long addr;

	if (argc != 2 || (strcmp(argv[1], "open") && strcmp(argv[1], "close"))) {
		fprintf(stderr, "usage: window open|close\n");
		return 2;
	}
	addr = strcmp(argv[1], "open") ? WINDOW_CLOSE : WINDOW_OPEN;
	p = mmap((void *)addr, 4096, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		perror("window: mmap");
		return 1;
	}
	(void)p[0];
	return 0;
}

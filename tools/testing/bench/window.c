// SPDX-License-Identifier: GPL-2.0
/*
 * Opens ("window open") or closes ("window close") a counting window of
 * the tcg_blocks and tcg_times plugins: reads one of two fixed user
 * pages (what tcg_blocks.c watches) and calls the code there (what
 * tcg_times.c watches). Without a plugin it does nothing visible.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* Far above any identity mapping of the guest's boot code. */
#define WINDOW_OPEN	0x133700000000UL
#define WINDOW_CLOSE	0x133700001000UL

int main(int argc, char **argv)
{
	volatile unsigned char *p;
	unsigned long addr;
	void (*code)(void);

	if (argc != 2 || (strcmp(argv[1], "open") && strcmp(argv[1], "close"))) {
		fprintf(stderr, "usage: window open|close\n");
		return 2;
	}
	addr = strcmp(argv[1], "open") ? WINDOW_CLOSE : WINDOW_OPEN;
	p = mmap((void *)addr, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		perror("window: mmap");
		return 1;
	}
	p[0] = 0xc3;	/* ret */
	if (mprotect((void *)p, 4096, PROT_READ | PROT_EXEC)) {
		perror("window: mprotect");
		return 1;
	}
	(void)p[0];
	code = (void (*)(void))addr;
	code();
	return 0;
}

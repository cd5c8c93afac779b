// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts, per counting window, how often each
 * translated block of guest code is executed (the kernel's and user
 * space's), and how many data accesses fall into each guest kernel page.
 * Under TCG the cost of code follows the blocks it executes, the calls
 * and returns between them and the pages it touches far more than its
 * instruction count, so these counts say where emulated time goes
 * without timing anything.
 *
 * The guest opens a window by reading the user address WINDOW_OPEN and
 * closes it by reading WINDOW_CLOSE (tools/testing/bench/window.c);
 * outside windows nothing is counted. At exit the counts go to the file
 * named by the plugin's "out=" argument, one line each:
 *
 *	B <window> <block start address> <executions>
 *	D <window> <page address> <data accesses>
 *	J <window> <block start address> <misses of the jump cache model>
 *
 * With a "marks=FILE" argument, the plugin also reads FILE each time a
 * window opens: one guest address per line, in hex, optionally followed
 * by a name. Each execution of a block starting at one of them is logged
 * in order, with every vCPU's counts so far in the window, so that the
 * work between two marks can be counted per vCPU (the path a message
 * takes from one mark to the next): blocks, instructions and memory
 * accesses executed, locked (atomic) instructions, instructions that
 * change the interrupt flag (cli, sti, popf), each of which ends a block
 * and sends the vCPU back to its dispatch loop, and the data accesses
 * that miss a model of QEMU's software TLB (direct-mapped, 2^tlb_bits
 * entries per privilege level, "tlb_bits=" argument, default 8, with
 * a victim TLB of 8 entries; QEMU resizes its own between 2^6 and more,
 * so the model shows pressure, not QEMU's exact misses). A miss costs a
 * walk of the guest's page tables, about 90 ns in this guest. Then the
 * blocks entered by a lookup instead of a chained jump (after a return,
 * an indirect jump or call, an interrupt flag change, or a jump to
 * another page), and those of them that miss a model of QEMU's per-vCPU
 * jump cache (4096 entries, QEMU 7.2's hash), which costs a search of
 * the global table of translated blocks.
 *
 *	M <window> <mark's line, from 0> <vCPU> <the eight counts of vCPU 0>
 *	<... of vCPU 1> ...
 *
 * User blocks are keyed by their virtual address alone: the guest runs
 * the processes it wants told apart without address randomisation, so
 * that one process's memory map names them all (blocks_report.py).
 *
 * One lock serialises the counting of all vCPUs, which makes a guest
 * several times slower than TCG alone; the counts do not depend on it.
 *
 * Written against QEMU 7.2's plugin interface (version 1). Debian ships
 * no header for it, so the few entry points used are declared here.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;

enum { CB_NO_REGS = 0 };
enum { MEM_RW = 3 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
	void (*cb)(unsigned int vcpu, void *data), int flags, void *data);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
	void (*cb)(unsigned int vcpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *data),
	int flags, int rw, void *data);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *data), void *data);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/*
 * Far above any identity mapping: while the guest boots, its code runs at
 * physical addresses, and the decompressed kernel lands at a random one.
 */
#define WINDOW_OPEN	0x133700000000ULL
#define WINDOW_CLOSE	0x133700001000ULL
#define PAGE_SHIFT	12
/* x86-64 kernel addresses, with four or five paging levels. */
#define KERNEL_START	0xff00000000000000ULL
#define MAX_WINDOWS	32
#define TABLE_BITS	20
#define TABLE_SIZE	(1u << TABLE_BITS)
#define MAX_VCPUS	8
#define MAX_MARKS	32
#define MAX_EVENTS	(1u << 18)

struct count {
	uint64_t key;	/* 0: free */
	uint64_t n;
};

enum {
	SEEN_BLOCKS, SEEN_INSNS, SEEN_ACCESSES, SEEN_LOCKED, SEEN_IRQ,
	SEEN_TLB_MISSES, SEEN_LOOKUPS, SEEN_JC_MISSES, NR_SEEN
};

struct event {
	uint8_t mark;
	uint8_t vcpu;
	uint64_t seen[MAX_VCPUS][NR_SEEN];
};

/* What the execution callback of a block gets. */
struct block {
	uint64_t start;
	uint32_t insns;
	uint16_t locked;
	uint16_t irq;
	bool indirect;	/* the next block is found by a lookup */
};

struct window {
	struct count *blocks;
	struct count *pages;
	struct count *misses;
	struct event *events;	/* allocated when the window has marks */
	uint32_t nr_events;
};

static struct window windows[MAX_WINDOWS];
static int nr_windows;
static int current = -1;	/* the open window, -1 for none */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path;
static const char *marks_path;
static uint64_t marks[MAX_MARKS];
static int nr_marks;
static unsigned int nr_vcpus = 1;
/* Work per vCPU in the open window. */
static uint64_t seen[MAX_VCPUS][NR_SEEN];

#define MAX_TLB_BITS	16
#define VICTIMS		8

/* The TLB model of one privilege level of one vCPU: page numbers + 1. */
struct tlb {
	uint64_t entry[1u << MAX_TLB_BITS];
	uint64_t victim[VICTIMS];
	unsigned int next_victim;
};

static struct tlb tlbs[MAX_VCPUS][2];

#define JC_BITS		12
#define JC_PAGE_BITS	(JC_BITS / 2)

/* QEMU 7.2's tb_jmp_cache_hash_func() for 4 KiB pages. */
static unsigned int jc_hash(uint64_t pc)
{
	uint64_t tmp = pc ^ (pc >> (PAGE_SHIFT - JC_PAGE_BITS));

	return (unsigned int)(((tmp >> (PAGE_SHIFT - JC_PAGE_BITS)) &
			       (((1u << JC_BITS) - 1) & ~((1u << JC_PAGE_BITS) - 1))) |
			      (tmp & ((1u << JC_PAGE_BITS) - 1)));
}

static uint64_t jump_cache[MAX_VCPUS][1u << JC_BITS];
static const struct block *last_block[MAX_VCPUS];

/*
 * Under @lock. A full table drops the count: TABLE_SIZE is far above
 * what one window touches.
 */
static void bump(struct count *table, uint64_t key)
{
	uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - TABLE_BITS));
	uint32_t tries;

	for (tries = 0; tries < TABLE_SIZE; tries++, i = (i + 1) % TABLE_SIZE) {
		if (table[i].key == key || !table[i].key) {
			table[i].key = key;
			table[i].n++;
			return;
		}
	}
}

/* Under @lock: @b runs on @vcpu; was it looked up, and did that miss? */
static void enter(struct window *w, unsigned int vcpu, const struct block *b)
{
	const struct block *prev = last_block[vcpu];
	uint64_t *slot;

	last_block[vcpu] = b;
	if (!prev || (!prev->indirect &&
		      (prev->start >> PAGE_SHIFT) == (b->start >> PAGE_SHIFT)))
		return;
	seen[vcpu][SEEN_LOOKUPS]++;
	slot = &jump_cache[vcpu][jc_hash(b->start)];
	if (*slot != b->start) {
		*slot = b->start;
		seen[vcpu][SEEN_JC_MISSES]++;
		bump(w->misses, b->start);
	}
}

static unsigned int tlb_bits = 8;

/* Under @lock: does an access to @page miss? */
static bool tlb_miss(struct tlb *t, uint64_t page)
{
	uint64_t key = page + 1, *e = &t->entry[page & ((1u << tlb_bits) - 1)];
	unsigned int i;

	if (*e == key)
		return false;
	for (i = 0; i < VICTIMS; i++) {
		if (t->victim[i] == key) {
			t->victim[i] = *e;
			*e = key;
			return false;
		}
	}
	t->victim[t->next_victim] = *e;
	t->next_victim = (t->next_victim + 1) % VICTIMS;
	*e = key;
	return true;
}

/* Under @lock, as a window opens: this window's marks. */
static void load_marks(struct window *w)
{
	char line[256];
	FILE *f;

	nr_marks = 0;
	memset(seen, 0, sizeof(seen));
	if (!marks_path)
		return;
	f = fopen(marks_path, "r");
	if (!f)
		return;
	while (nr_marks < MAX_MARKS && fgets(line, sizeof(line), f))
		marks[nr_marks++] = strtoull(line, NULL, 16);
	fclose(f);
	if (nr_marks && !w->events)
		w->events = calloc(MAX_EVENTS, sizeof(*w->events));
	if (!w->events)
		nr_marks = 0;
}

/* Under @lock: log the block at @key if it is a mark. */
static void mark(struct window *w, unsigned int vcpu, uint64_t key)
{
	struct event *e;
	int i;

	for (i = 0; i < nr_marks; i++)
		if (marks[i] == key)
			break;
	if (i == nr_marks || w->nr_events == MAX_EVENTS)
		return;
	e = &w->events[w->nr_events++];
	e->mark = (uint8_t)i;
	e->vcpu = (uint8_t)vcpu;
	memcpy(e->seen, seen, sizeof(seen));
}

/*
 * @b a block executed, or @vaddr accessed (@page its page if the kernel's,
 * else 0)
 */
static void count(unsigned int vcpu, const struct block *b, uint64_t vaddr,
		  uint64_t page)
{
	int w = __atomic_load_n(&current, __ATOMIC_RELAXED);

	if (w < 0)
		return;
	pthread_mutex_lock(&lock);
	w = current;
	if (w >= 0 && vcpu < MAX_VCPUS) {
		if (vcpu >= nr_vcpus)
			nr_vcpus = vcpu + 1;
		if (b) {
			seen[vcpu][SEEN_BLOCKS]++;
			seen[vcpu][SEEN_INSNS] += b->insns;
			seen[vcpu][SEEN_LOCKED] += b->locked;
			seen[vcpu][SEEN_IRQ] += b->irq;
			enter(&windows[current], vcpu, b);
		} else {
			seen[vcpu][SEEN_ACCESSES]++;
			if (tlb_miss(&tlbs[vcpu][vaddr >= KERNEL_START],
				     vaddr >> PAGE_SHIFT))
				seen[vcpu][SEEN_TLB_MISSES]++;
		}
	}
	if (w >= 0 && b) {
		bump(windows[w].blocks, b->start);
		if (vcpu < MAX_VCPUS)
			mark(&windows[w], vcpu, b->start);
	} else if (w >= 0 && page) {
		bump(windows[w].pages, page);
	}
	pthread_mutex_unlock(&lock);
}

static void block_exec(unsigned int vcpu, void *data)
{
	count(vcpu, data, 0, 0);
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
		       uint64_t vaddr, void *data)
{
	uint64_t page = vaddr >> PAGE_SHIFT;

	if (vaddr >= KERNEL_START) {
		count(vcpu, NULL, vaddr, page << PAGE_SHIFT);
		return;
	}
	count(vcpu, NULL, vaddr, 0);
	if (page == WINDOW_OPEN >> PAGE_SHIFT) {
		pthread_mutex_lock(&lock);
		if (current < 0 && nr_windows < MAX_WINDOWS) {
			load_marks(&windows[nr_windows]);
			__atomic_store_n(&current, nr_windows++,
					 __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&lock);
	} else if (page == WINDOW_CLOSE >> PAGE_SHIFT) {
		pthread_mutex_lock(&lock);
		__atomic_store_n(&current, -1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&lock);
	}
}

/*
 * Classifies an x86 instruction: locked (a lock prefix, or xchg with
 * memory) or one that changes the interrupt flag (cli, sti, popf).
 */
static void classify(const uint8_t *p, size_t len, struct block *b)
{
	bool lock = false;
	size_t i = 0;
	uint8_t reg;

	for (; i < len; i++) {
		if (p[i] == 0xf0)
			lock = true;
		else if (p[i] != 0x66 && p[i] != 0x67 && p[i] != 0xf2 &&
			 p[i] != 0xf3 && p[i] != 0x2e && p[i] != 0x3e &&
			 p[i] != 0x26 && p[i] != 0x36 && p[i] != 0x64 &&
			 p[i] != 0x65 && (p[i] & 0xf0) != 0x40)
			break;
	}
	if (i == len)
		return;
	/* Only a block's last instruction decides how the next is found. */
	reg = i + 1 < len ? (p[i + 1] >> 3) & 7 : 0;
	b->indirect = p[i] == 0xc3 || p[i] == 0xc2 || p[i] == 0xcb ||
		      p[i] == 0xca || p[i] == 0xcf ||
		      p[i] == 0xfa || p[i] == 0xfb || p[i] == 0x9d ||
		      (p[i] == 0xff && reg >= 2 && reg <= 5) ||
		      (p[i] == 0x0f && i + 1 < len &&
		       (p[i + 1] == 0x05 || p[i + 1] == 0x07 ||
			p[i + 1] == 0x01));
	if (p[i] == 0xfa || p[i] == 0xfb || p[i] == 0x9d)
		b->irq++;
	else if (lock || ((p[i] == 0x86 || p[i] == 0x87) && i + 1 < len &&
			  (p[i + 1] & 0xc0) != 0xc0))
		b->locked++;
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct block *b = malloc(sizeof(*b));

	/* Kept for the plugin's life: the block may run until then. */
	if (b) {
		b->start = qemu_plugin_tb_vaddr(tb);
		b->insns = (uint32_t)n;
		b->locked = 0;
		b->irq = 0;
		b->indirect = false;
		for (i = 0; i < n; i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

			classify(qemu_plugin_insn_data(insn),
				 qemu_plugin_insn_size(insn), b);
		}
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, CB_NO_REGS,
						     b);
	}
	/* User accesses too: that is how the guest opens a window. */
	for (i = 0; i < n; i++)
		qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i),
						 mem_access, CB_NO_REGS, MEM_RW,
						 NULL);
}

static void dump(FILE *f, char tag, int w, const struct count *table)
{
	uint32_t i;

	for (i = 0; i < TABLE_SIZE; i++)
		if (table[i].key)
			fprintf(f, "%c %d %llx %llu\n", tag, w,
				(unsigned long long)table[i].key,
				(unsigned long long)table[i].n);
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	FILE *f = fopen(out_path, "w");
	int w;

	if (!f) {
		perror(out_path);
		return;
	}
	for (w = 0; w < nr_windows; w++) {
		struct window *win = &windows[w];
		uint32_t e;
		unsigned int v;

		dump(f, 'B', w, win->blocks);
		dump(f, 'D', w, win->pages);
		dump(f, 'J', w, win->misses);
		for (e = 0; e < win->nr_events; e++) {
			fprintf(f, "M %d %u %u", w, win->events[e].mark,
				win->events[e].vcpu);
			for (v = 0; v < nr_vcpus; v++) {
				int k;

				for (k = 0; k < NR_SEEN; k++)
					fprintf(f, " %llu", (unsigned long long)
						win->events[e].seen[v][k]);
			}
			fputc('\n', f);
		}
	}
	if (fclose(f))
		perror(out_path);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
		else if (!strncmp(argv[i], "marks=", 6))
			marks_path = strdup(argv[i] + 6);
		else if (!strncmp(argv[i], "tlb_bits=", 9))
			tlb_bits = (unsigned int)atoi(argv[i] + 9);
	if (!out_path) {
		fprintf(stderr, "tcg_blocks: no out=FILE argument\n");
		return -1;
	}
	if (tlb_bits < 1 || tlb_bits > MAX_TLB_BITS) {
		fprintf(stderr, "tcg_blocks: tlb_bits must be 1 to %d\n",
			MAX_TLB_BITS);
		return -1;
	}
	for (i = 0; i < MAX_WINDOWS; i++) {
		windows[i].blocks = calloc(TABLE_SIZE, sizeof(struct count));
		windows[i].pages = calloc(TABLE_SIZE, sizeof(struct count));
		windows[i].misses = calloc(TABLE_SIZE, sizeof(struct count));
		if (!windows[i].blocks || !windows[i].pages ||
		    !windows[i].misses)
			return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that times a message's way through the guest: it
 * takes the host's clock at each execution of a few marked guest blocks,
 * and when a vCPU goes idle and when it resumes. Apart from those blocks
 * it instruments nothing, so the guest runs at about TCG's own speed and
 * the times are those of an ordinary run. tcg_blocks.c counts the work
 * of the same legs; this one says how long they take.
 *
 * The guest opens a window by calling the code at WINDOW_OPEN and closes
 * it by calling the code at WINDOW_CLOSE (tools/testing/bench/window.c).
 * As a window opens, the plugin reads the file named by its "marks="
 * argument (one guest address per line, in hex, optionally followed by a
 * name) and has QEMU drop its translated code, so that the marked blocks
 * are translated again with a callback. At exit it writes to the file
 * named by "out=", one line per event, in the order they happened:
 *
 *	T <window> <mark's line, from 0> <vCPU> <nanoseconds>
 *	I <window> <vCPU> <nanoseconds>	(the vCPU went idle)
 *	R <window> <vCPU> <nanoseconds>	(the vCPU resumed)
 *
 * Written against QEMU 7.2's plugin interface (version 1), declared here
 * as Debian ships no header for it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;

enum { CB_NO_REGS = 0 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
	void (*cb)(unsigned int vcpu, void *data), int flags, void *data);
void qemu_plugin_register_vcpu_idle_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, unsigned int vcpu));
void qemu_plugin_register_vcpu_resume_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, unsigned int vcpu));
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *data), void *data);
void qemu_plugin_reset(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t id));
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* window.c's code pages, far above any identity mapping of the boot */
#define WINDOW_OPEN	0x133700000000ULL
#define WINDOW_CLOSE	0x133700001000ULL
#define MAX_MARKS	32
#define MAX_EVENTS	(1u << 21)
/* What a block's callback gets besides its mark number. */
#define OPEN_KEY	((void *)(uintptr_t)(MAX_MARKS + 1))
#define CLOSE_KEY	((void *)(uintptr_t)(MAX_MARKS + 2))

enum { EV_MARK = 'T', EV_IDLE = 'I', EV_RESUME = 'R' };

struct event {
	uint64_t ns;
	uint8_t type;
	uint8_t window;
	uint8_t mark;
	uint8_t vcpu;
};

static qemu_plugin_id_t self;
static const char *out_path;
static const char *marks_path;
static uint64_t marks[MAX_MARKS];
static int nr_marks;
static int nr_windows;
static int current = -1;	/* the open window, -1 for none */
static int opening = -1;	/* a window waiting for the code flush */
static struct event *events;
static uint32_t nr_events;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under @lock. */
static void log_event(uint8_t type, unsigned int vcpu, int mark)
{
	struct event *e;

	if (current < 0 || nr_events == MAX_EVENTS)
		return;
	e = &events[nr_events++];
	e->ns = now();
	e->type = type;
	e->window = (uint8_t)current;
	e->mark = (uint8_t)mark;
	e->vcpu = (uint8_t)vcpu;
}

static void read_marks(void)
{
	char line[256];
	FILE *f;

	nr_marks = 0;
	f = marks_path ? fopen(marks_path, "r") : NULL;
	if (!f)
		return;
	while (nr_marks < MAX_MARKS && fgets(line, sizeof(line), f))
		marks[nr_marks++] = strtoull(line, NULL, 16);
	fclose(f);
}

static void setup(qemu_plugin_id_t id);

/* The translated code is gone: the marks take effect, the window opens. */
static void flushed(qemu_plugin_id_t id)
{
	setup(id);
	pthread_mutex_lock(&lock);
	current = opening;
	opening = -1;
	pthread_mutex_unlock(&lock);
}

static void block_exec(unsigned int vcpu, void *data)
{
	uintptr_t key = (uintptr_t)data;
	int flush = 0;

	pthread_mutex_lock(&lock);
	if (data == OPEN_KEY) {
		if (current < 0 && opening < 0 && nr_windows < 256) {
			opening = nr_windows++;
			read_marks();
			flush = 1;
		}
	} else if (data == CLOSE_KEY) {
		current = -1;
	} else {
		log_event(EV_MARK, vcpu, (int)key - 1);
	}
	pthread_mutex_unlock(&lock);
	if (flush)
		qemu_plugin_reset(self, flushed);
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t start = qemu_plugin_tb_vaddr(tb);
	void *key = NULL;
	int i;

	if (start == WINDOW_OPEN)
		key = OPEN_KEY;
	else if (start == WINDOW_CLOSE)
		key = CLOSE_KEY;
	pthread_mutex_lock(&lock);
	for (i = 0; !key && i < nr_marks; i++)
		if (marks[i] == start)
			key = (void *)(uintptr_t)(i + 1);
	pthread_mutex_unlock(&lock);
	if (key)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, CB_NO_REGS,
						     key);
}

static void idle(qemu_plugin_id_t id, unsigned int vcpu)
{
	pthread_mutex_lock(&lock);
	log_event(EV_IDLE, vcpu, 0);
	pthread_mutex_unlock(&lock);
}

static void resume(qemu_plugin_id_t id, unsigned int vcpu)
{
	pthread_mutex_lock(&lock);
	log_event(EV_RESUME, vcpu, 0);
	pthread_mutex_unlock(&lock);
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	FILE *f = fopen(out_path, "w");
	uint32_t i;

	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < nr_events; i++) {
		const struct event *e = &events[i];

		if (e->type == EV_MARK)
			fprintf(f, "T %u %u %u %llu\n", e->window, e->mark,
				e->vcpu, (unsigned long long)e->ns);
		else
			fprintf(f, "%c %u %u %llu\n", e->type, e->window,
				e->vcpu, (unsigned long long)e->ns);
	}
	if (fclose(f))
		perror(out_path);
}

/* Every callback; again after each reset, which drops them all. */
static void setup(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	qemu_plugin_register_vcpu_idle_cb(id, idle);
	qemu_plugin_register_vcpu_resume_cb(id, resume);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
		else if (!strncmp(argv[i], "marks=", 6))
			marks_path = strdup(argv[i] + 6);
	}
	if (!out_path) {
		fprintf(stderr, "tcg_times: no out=FILE argument\n");
		return -1;
	}
	events = calloc(MAX_EVENTS, sizeof(*events));
	if (!events)
		return -1;
	self = id;
	setup(id);
	return 0;
}

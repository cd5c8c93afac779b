// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim that keeps rping's teardown race out of the guest
 * suites' verdicts; lib.sh preloads it into every program a suite runs,
 * and it changes nothing in programs of any other name.
 *
 * rping of the rdma-core releases before 61.0 (Debian 12 ships 44) leaves
 * its RDMA CM event thread running when it ends: main() destroys the
 * event channel, and a thread that has just acknowledged the last event
 * (DISCONNECTED) and comes back to rdma_get_cm_event() finds the channel
 * gone, prints "rdma_get_cm_event: Bad file descriptor" and calls
 * exit(-1). A run whose every ping was verified then ends with status
 * 255, on any device and whatever the driver did, as often as the
 * scheduler puts main() between the thread's acknowledgement and its next
 * read; under TCG it does, now and then. rdma-core fixed rping in 61.0
 * (the thread is told to stop and joined before the channel goes).
 *
 * In rping, rdma_destroy_event_channel() does nothing: the channel, its
 * file and the blocked thread go with the process, which is about to
 * exit. Every other program gets librdmacm's own function.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <rdma/rdma_cma.h>

typedef void (*destroy_channel_fn)(struct rdma_event_channel *);

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	static destroy_channel_fn next;

	if (!strcmp(program_invocation_short_name, "rping"))
		return;
	if (!next)
		next = (destroy_channel_fn)dlsym(RTLD_NEXT,
						 "rdma_destroy_event_channel");
	if (next)
		next(channel);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * libtscclock.so: a gettimeofday() for perftest in siw2's benchmark, preloaded
 * (LD_PRELOAD) into perftest's processes by tools/testing/bench/run.
 *
 * perftest converts its cycle counter readings (rdtsc) into time with a
 * rate it measures when it reports: a regression of rdtsc against
 * gettimeofday() over a fraction of a second. In a TCG guest on a busy host
 * that regression often fails (r^2 < 0.9: perftest then reports 0 or inf)
 * or lands off, because the vCPU is preempted at random, and the guest's
 * gettimeofday() is a slow system call there (the HPET is its clock).
 *
 * The run therefore takes perftest's latencies in cycles (-C) and converts
 * them itself, and times bandwidth runs on the wall clock, from perftest's
 * result header to the end of the data phase. This library gives it that
 * end: perftest calls gettimeofday() first when its data phase is over (to
 * calibrate), so with BENCH_TSC_LOG set, the CLOCK_MONOTONIC time of every
 * call that follows 50 ms without one is appended to that file as
 * "gettimeofday SECONDS".
 *
 * With BENCH_TSC_MHZ set (the TSC rate the guest kernel calibrated at
 * boot, "cpu MHz" in /proc/cpuinfo), gettimeofday() counts the TSC at that
 * rate from the real time at process start, which keeps the calibration
 * loop free of system calls; the process must then stay on one vCPU (the
 * run pins it: the guest's TSCs are not synchronized). Without it, or with
 * a value that is not a positive number, the real gettimeofday() answers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static double mhz;
static unsigned long long tsc0, last_call;
static long long usec0;
static const char *log_path;
static int called;

__attribute__((constructor)) static void tscclock_init(void)
{
	const char *s = getenv("BENCH_TSC_MHZ");
	struct timespec ts;

	mhz = s ? strtod(s, NULL) : 0;
	if (!(mhz > 0))
		mhz = 0;
	log_path = getenv("BENCH_TSC_LOG");
	if (log_path && !*log_path)
		log_path = NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	usec0 = ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
	tsc0 = __rdtsc();
}

/* Appends the monotonic time of a call that starts a burst. */
static void note_burst(void)
{
	struct timespec ts;
	char line[64];
	int fd, len;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	len = snprintf(line, sizeof(line), "gettimeofday %lld.%06ld\n",
		       (long long)ts.tv_sec, ts.tv_nsec / 1000);
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, len) != len)
		len = 0;
	close(fd);
}

int gettimeofday(struct timeval *tv, void *tz)
{
	unsigned long long now = __rdtsc();
	long long usec;

	/* 50 ms at the TSC's rate, or at 1 GHz when it is unknown. */
	if (log_path && (!called || now - last_call > (mhz ? mhz : 1000) * 50000))
		note_burst();
	called = 1;
	last_call = now;
	if (!mhz || tz)
		return syscall(SYS_gettimeofday, tv, tz);
	usec = usec0 + (long long)((now - tsc0) / mhz);
	tv->tv_sec = usec / 1000000;
	tv->tv_usec = usec % 1000000;
	return 0;
}

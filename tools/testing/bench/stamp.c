// SPDX-License-Identifier: GPL-2.0
/*
 * stamp: runs a command and prefixes each line of its output (stdout and
 * stderr together) with the CLOCK_MONOTONIC time it was read, in seconds.
 * Part of siw2's benchmark: it times perftest's data phase on the wall
 * clock (from its result header to its result row), independently of
 * perftest's own cycle counter calibration, which a busy TCG guest can
 * get wrong.
 *
 *   stamp COMMAND [ARG...]
 *
 * Exits with COMMAND's status (128+N if a signal N ended it). SIGTERM,
 * SIGINT and SIGHUP are passed on to COMMAND. The command should flush
 * its lines (stdbuf -oL for stdio programs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = pass_on };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int fds[2], status;
	FILE *in;

	if (argc < 2) {
		fprintf(stderr, "usage: stamp COMMAND [ARG...]\n");
		return 2;
	}
	if (pipe(fds)) {
		perror("stamp: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("stamp: fork");
		return 1;
	}
	if (child == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[1]);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "stamp: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	in = fdopen(fds[0], "r");
	if (!in) {
		perror("stamp: fdopen");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		errno = 0;
		len = getline(&line, &cap, in);
		if (len < 0) {
			if (errno == EINTR) {
				clearerr(in);
				continue;
			}
			break;
		}
		printf("%.6f %s%s", now_s(), line,
		       len && line[len - 1] == '\n' ? "" : "\n");
	}
	free(line);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("stamp: waitpid");
			return 1;
		}
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

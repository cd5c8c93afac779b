// SPDX-License-Identifier: GPL-2.0
/*
 * Standalone driver for the gcc build: checks the shims against known
 * answers, then replays files (or every file in a directory) through the
 * fuzz harness, so a saved crash reproduces without libFuzzer.
 *
 *   selftest [FILE|DIR]...
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <asm/unaligned.h>
#include <linux/bits.h>
#include <linux/crc32c.h>
#include <linux/kernel.h>
#include <linux/minmax.h>

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "selftest: %s:%d: %s\n", __FILE__,	\
			__LINE__, #cond);				\
		failures++;						\
	}								\
} while (0)

static u32 crc32c_full(const void *p, unsigned int len)
{
	return ~crc32c(~0U, p, len);
}

/* RFC 3720 B.4 and the common "123456789" check value. */
static void check_crc32c(void)
{
	u8 buf[32];
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	CHECK(crc32c_full(buf, sizeof(buf)) == 0x8A9136AA);
	memset(buf, 0xff, sizeof(buf));
	CHECK(crc32c_full(buf, sizeof(buf)) == 0x62A8AB43);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i;
	CHECK(crc32c_full(buf, sizeof(buf)) == 0x46DD794E);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = 31 - i;
	CHECK(crc32c_full(buf, sizeof(buf)) == 0x113FDB5C);
	CHECK(crc32c_full("123456789", 9) == 0xE3069283);
	/* Chaining the raw register equals one pass. */
	CHECK(~crc32c(crc32c(~0U, "12345", 5), "6789", 4) == 0xE3069283);
}

static void check_shims(void)
{
	u8 buf[9] = { 0 };
	u32 a = 3, b = 7;

	put_unaligned_be32(0x01020304, buf + 1);
	CHECK(buf[1] == 1 && buf[2] == 2 && buf[3] == 3 && buf[4] == 4);
	CHECK(get_unaligned_be32(buf + 1) == 0x01020304);
	put_unaligned_be64(0x1122334455667788ULL, buf + 1);
	CHECK(get_unaligned_be64(buf + 1) == 0x1122334455667788ULL);
	CHECK(buf[1] == 0x11 && buf[8] == 0x88);
	put_unaligned_be16(0xabcd, buf + 3);
	CHECK(get_unaligned_be16(buf + 3) == 0xabcd && buf[3] == 0xab);
	CHECK(be32_to_cpu(cpu_to_be32(0xdeadbeef)) == 0xdeadbeef);
	CHECK(((u8 *)&(__be32){ cpu_to_be32(0x0a0b0c0d) })[0] == 0x0a);
	CHECK(min(a, b) == 3 && max(a, b) == 7);
	CHECK(min_t(u16, 70000, 5) == 5);
	CHECK(clamp(b, 4U, 6U) == 6);
	CHECK(GENMASK(7, 4) == 0xf0 && BIT(3) == 8);
	CHECK(GENMASK_ULL(63, 62) == 0xc000000000000000ULL);
	CHECK(round_up(5U, 4U) == 8 && ALIGN(8U, 4U) == 8);
	CHECK(ARRAY_SIZE(buf) == 9);
	CHECK(U16_MAX == 0xffff && U32_MAX == 0xffffffffU);
	BUILD_BUG_ON(sizeof(__be64) != 8);
}

static int replay_file(const char *path)
{
	struct stat st;
	u8 *data;
	FILE *f;
	size_t n;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st)) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	data = malloc(st.st_size ? st.st_size : 1);
	n = data ? fread(data, 1, st.st_size, f) : 0;
	fclose(f);
	if (!data || n != (size_t)st.st_size) {
		fprintf(stderr, "selftest: cannot read %s\n", path);
		free(data);
		return -1;
	}
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	return 0;
}

static int replay(const char *path, unsigned int *count)
{
	struct dirent *de;
	struct stat st;
	char sub[4096];
	DIR *dir;
	int ret = 0;

	if (stat(path, &st)) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	dir = opendir(path);
	if (!dir) {
		perror(path);
		return -1;
	}
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (replay(sub, count))
			ret = -1;
	}
	closedir(dir);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int count = 0;
	int i;

	check_crc32c();
	check_shims();
	/* The empty input is the first thing a fuzzer tries. */
	LLVMFuzzerTestOneInput((const u8 *)"", 0);
	for (i = 1; i < argc; i++)
		if (replay(argv[i], &count))
			failures++;
	printf("selftest: shims ok%s, %u input(s) replayed\n",
	       failures ? " NOT" : "", count);
	return failures ? 1 : 0;
}

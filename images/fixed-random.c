// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD for mkfs tools that take random numbers (generation counters,
 * UUIDs) from /dev/urandom or getrandom(): the same bytes on every run, so
 * that the images they make are reproducible.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned int next = 1;

static void fill(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len--) {
		next = next * 1103515245 + 12345;
		*p++ = next >> 16;
	}
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	(void)flags;
	fill(buf, len);
	return len;
}

static int is_random(const char *path)
{
	return !strcmp(path, "/dev/urandom") || !strcmp(path, "/dev/random");
}

/* A memfd of fixed bytes stands in for the device. */
static int fake_random(void)
{
	unsigned char buf[65536];
	int fd = memfd_create("fixed-random", 0);

	fill(buf, sizeof(buf));
	if (fd >= 0 && (write(fd, buf, sizeof(buf)) != sizeof(buf) || lseek(fd, 0, SEEK_SET)))
		return -1;
	return fd;
}

/* open() and open64() differ only in name. */
#define FIXED_RANDOM_OPEN(name)							\
int name(const char *path, int flags, ...)					\
{										\
	static int (*real)(const char *, int, ...);				\
	va_list ap;								\
	mode_t mode;								\
										\
	va_start(ap, flags);							\
	mode = va_arg(ap, mode_t);						\
	va_end(ap);								\
	if (is_random(path))							\
		return fake_random();						\
	if (!real)								\
		real = dlsym(RTLD_NEXT, #name);					\
	return real(path, flags, mode);						\
}

FIXED_RANDOM_OPEN(open)
FIXED_RANDOM_OPEN(open64)

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	if (is_random(path))
		return fake_random();
	if (!real)
		real = dlsym(RTLD_NEXT, "openat");
	return real(dirfd, path, flags, mode);
}

/* libuuid may take its randomness by a raw system call. */
void uuid_generate(unsigned char out[16])
{
	fill(out, 16);
	out[6] = (out[6] & 0x0f) | 0x40;	/* version 4 */
	out[8] = (out[8] & 0x3f) | 0x80;	/* variant */
}

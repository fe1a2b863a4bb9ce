/*
 * bench_util.h
 *	  Small helpers shared by the server-free benchmark programs
 *	  (bench_core.c, bench_formats.c, bench_mlp.c): fatal errors, malloc
 *	  that exits on failure, clocks in seconds, reading a file, and the
 *	  median of timings.
 *
 * Header-only, static inline functions: include it once per program, after
 * defining BENCH_NAME as the program's name, which prefixes the messages of
 * die():
 *
 *	  #define BENCH_NAME "bench_formats"
 *	  #include "bench_util.h"
 *
 * Programs are built with -D_GNU_SOURCE (clock_gettime, clockid_t).
 */
#ifndef GS_BENCH_UTIL_H
#define GS_BENCH_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name) before including bench_util.h"
#endif

/* Print "BENCH_NAME: message" to stderr and exit with status 1. */
static inline void die(const char *fmt,...)
			__attribute__((format(printf, 1, 2), noreturn));

static inline void
die(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	fputs(BENCH_NAME ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* malloc that exits on failure; a size of 0 allocates 1 byte. */
static inline void *
xmalloc(size_t n)
{
	void	   *p = malloc(n > 0 ? n : 1);

	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

/* Seconds of the given clock (CLOCK_MONOTONIC or a CPU-time clock). */
static inline double
clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Seconds on the monotonic clock. */
static inline double
now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/*
 * Read the first want bytes of a file into a new buffer; want = 0 reads the
 * whole file.  *len gets the number of bytes read.  Exits on any failure,
 * and when the file is shorter than want.
 */
static inline unsigned char *
read_file(const char *path, size_t want, size_t *len)
{
	FILE	   *fp = fopen(path, "rb");
	unsigned char *buf;
	long		size;

	if (fp == NULL)
		die("cannot open %s", path);
	if (fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0)
		die("cannot seek in %s", path);
	if (want == 0)
		want = (size_t) size;
	else if ((size_t) size < want)
		die("%s is shorter than the rows asked for", path);
	buf = xmalloc(want);
	if (fread(buf, 1, want, fp) != want)
		die("cannot read %s", path);
	fclose(fp);
	*len = want;
	return buf;
}

/* Comparison of doubles for qsort (ascending). */
static inline int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * Median of n values (sorts v in place): the middle one, or the mean of the
 * two middle ones when n is even.
 */
static inline double
median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif							/* GS_BENCH_UTIL_H */

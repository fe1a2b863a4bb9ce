/*
 * image_util.h
 *	  Helpers of the forest image tests (test_image.c, test_image_corrupt.c):
 *	  an allocator that fills, counts and fails on demand, loading a
 *	  fixture, writing an image into a buffer of exactly its size, and
 *	  reading one from an exact copy (so that ASan sees any read past it).
 *	  Include after test_util.h.
 */
#ifndef GS_TEST_IMAGE_UTIL_H
#define GS_TEST_IMAGE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/forest_image.h"
#include "model.h"

/*
 * An allocator on malloc that fills new memory with a byte, counts what is
 * live and can fail its fail_at-th allocation (1-based; 0: never).
 */
typedef struct TestAlloc
{
	int			fill;
	long		live;
	long		n_alloc;
	long		fail_at;
	size_t		largest;		/* largest request seen */
} TestAlloc;

/* Requests above this fail (and show in largest): never touch gigabytes. */
#define TEST_ALLOC_MAX ((size_t) 256 * 1024 * 1024)

static inline void *
test_alloc(void *ctx, size_t size)
{
	TestAlloc  *t = ctx;
	void	   *p;

	t->n_alloc++;
	if (size > t->largest)
		t->largest = size;
	if ((t->fail_at > 0 && t->n_alloc == t->fail_at) || size > TEST_ALLOC_MAX)
		return NULL;
	p = malloc(size ? size : 1);
	if (p)
	{
		memset(p, t->fill, size);
		t->live++;
	}
	return p;
}

static inline void
test_free(void *ctx, void *ptr)
{
	TestAlloc  *t = ctx;

	if (ptr == NULL)
	{
		/* the glue's pfree() fails on NULL: make it show as a leak */
		t->live += 1000000;
		return;
	}
	free(ptr);
	t->live--;
}

static inline GsAllocator
allocator_of(TestAlloc *t)
{
	GsAllocator a = {test_alloc, test_free, t};

	return a;
}

/* Load a fixture with gs_model_load (format detected); NULL on failure. */
static inline GsModel *
load_model(const char *path, const GsAllocator *alloc, GsStatus *st)
{
	size_t		len;
	unsigned char *b = gs_read_file(path, &len);
	GsModel    *m = NULL;

	if (!b)
	{
		gs_status_set(st, GS_ERR_INTERNAL, "cannot read %s", path);
		return NULL;
	}
	gs_model_load(b, len, GS_FORMAT_AUTO, NULL, alloc, &m, st);
	free(b);
	return m;
}

/*
 * The image of f in a new buffer (malloc'd; exactly its size, so that ASan
 * sees a read past it), written over bytes set to fill.  *guard_ok says
 * whether the writer stayed inside the size it announced.
 */
static inline unsigned char *
image_of(const GsForest *f, size_t *len, int fill, int *guard_ok)
{
	size_t		n = gs_forest_image_size(f);
	unsigned char *tmp = malloc(n + 16);
	unsigned char *b = malloc(n ? n : 1);
	int			ok = 1;

	memset(tmp, fill, n + 16);
	gs_forest_image_write(f, tmp);
	for (size_t k = n; k < n + 16; k++)
		ok &= tmp[k] == (unsigned char) fill;
	memcpy(b, tmp, n);
	free(tmp);
	if (guard_ok)
		*guard_ok = ok;
	*len = n;
	return b;
}

/* Read an image of len bytes from a copy at exactly len bytes (ASan bounds). */
static inline GsCode
read_copy(const unsigned char *img, size_t len, const GsLimits *lim,
		  const GsAllocator *alloc, GsForest **out, GsStatus *st)
{
	unsigned char *b = malloc(len ? len : 1);
	GsCode		rc;

	memcpy(b, img, len);
	rc = gs_forest_image_read(b, len, lim, alloc, out, st);
	free(b);
	return rc;
}


#endif							/* GS_TEST_IMAGE_UTIL_H */

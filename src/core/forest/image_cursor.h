/*
 * image_cursor.h
 *	  A sequential writer and reader over a byte buffer, for the forest
 *	  image (forest_image.c, catboost_ctr_image.c): values in host byte
 *	  order, at any alignment.  The reader's caller checks beforehand that
 *	  the bytes it reads are there.
 */
#ifndef GS_IMAGE_CURSOR_H
#define GS_IMAGE_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct GsImageCursor
{
	unsigned char *w;			/* writer */
	const unsigned char *r;		/* reader */
	size_t		left;			/* reader: bytes left */
} GsImageCursor;

static inline void
gs_put(GsImageCursor *c, const void *src, size_t n)
{
	if (n > 0)
		memcpy(c->w, src, n);
	c->w += n;
}

static inline void
gs_put_u32(GsImageCursor *c, uint32_t v)
{
	gs_put(c, &v, 4);
}

static inline void
gs_put_i64(GsImageCursor *c, int64_t v)
{
	gs_put(c, &v, 8);
}

static inline void
gs_get(GsImageCursor *c, void *dst, size_t n)
{
	if (n > 0)
		memcpy(dst, c->r, n);
	c->r += n;
	c->left -= n;
}

static inline uint32_t
gs_get_u32(GsImageCursor *c)
{
	uint32_t	v;

	gs_get(c, &v, 4);
	return v;
}

static inline int64_t
gs_get_i64(GsImageCursor *c)
{
	int64_t		v;

	gs_get(c, &v, 8);
	return v;
}

#endif							/* GS_IMAGE_CURSOR_H */

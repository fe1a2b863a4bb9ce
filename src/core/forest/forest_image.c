/*
 * forest_image.c
 *	  Writing a validated forest as a flat byte image and reading it back,
 *	  checked by gs_forest_check (forest_check.c).  See forest_image.h for
 *	  the layout and why images exist.
 */
#include "forest_image.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cat_names.h"
#include "catboost_ctr.h"
#include "image_cursor.h"
#include "forest_bins.h"
#include "forest_complete.h"
#include "forest_qs.h"

#define IMAGE_MAGIC "GSFOREST"
#define IMAGE_BOM	0x01020304u

/* Bits of the header's flags word. */
#define IMAGE_LEAF_LO	0x1u		/* leaf_lo follows nodes */
#define IMAGE_CAT_NAMES	0x2u		/* category names follow the feature
									 * names (version 3) */
#define IMAGE_MISSING	0x4u		/* the missing value follows the header
									 * (version 4) */
#define IMAGE_LINEAR	0x8u		/* linear leaves: their term count after
									 * the missing value, their arrays after
									 * leaf_lo (version 5) */
#define IMAGE_TPARAM	0x10u		/* the transform's two parameters follow
									 * the term count (version 6) */
#define IMAGE_CB_CTRS	0x20u		/* CatBoost's categorical features: their
									 * region's length after the parameters,
									 * the region after cat_words (version 7,
									 * catboost_ctr_image.c) */
#define IMAGE_FLAGS		0x3Fu

/* Header: magic, then these fields in this order, then the names. */
#define HEADER_INTS 14			/* 32-bit fields after the magic */
#define HEADER_BYTES (8 + 4 * HEADER_INTS + 3 * 8 + 64 + 16 + 32)

/* Bytes of the feature names, each NUL-terminated; 0 when there are none. */
static size_t
names_bytes(const GsForest *f)
{
	size_t		n = 0;

	if (f->feature_names)
		for (int32_t i = 0; i < f->n_features; i++)
			n += strlen(f->feature_names[i]) + 1;
	return n;
}

/*
 * Bytes of the category names: each feature's kind, count (32-bit words)
 * and value for an unknown name (a float), then every name NUL-terminated;
 * 0 when there are none.
 */
static size_t
cat_names_bytes(const GsForest *f)
{
	/* names found by hash are rebuilt from the CatBoost tables */
	if (f->cat_names == NULL || f->cat_names->hashes != NULL)
		return 0;
	return 12 * (size_t) f->n_features + f->cat_names->text_bytes;
}

/* Bytes of the linear leaves' arrays and their term count; 0 without. */
static size_t
linear_bytes(const GsForest *f)
{
	if (f->linear == NULL)
		return 0;
	return 8 + (sizeof(double) + sizeof(uint32_t)) * (size_t) f->n_nodes + sizeof(uint32_t) +
		(sizeof(int32_t) + sizeof(double)) * (size_t) f->linear->n_terms;
}

/* Size of the image of f; see forest_image.h. */
size_t
gs_forest_image_size(const GsForest *f)
{
	return HEADER_BYTES + (f->has_missing_value ? sizeof(float) : 0) + linear_bytes(f) +
		(f->transform == GS_TRANSFORM_ISOLATION ? 2 * sizeof(float) : 0) +
		sizeof(float) * (size_t) f->n_groups +
		(sizeof(uint32_t) + 2 * sizeof(int32_t)) * (size_t) f->n_trees +
		sizeof(GsNode) * (size_t) f->n_nodes +
		(f->leaf_lo ? sizeof(float) * (size_t) f->n_nodes : 0) +
		sizeof(uint32_t) * (size_t) f->n_cat_words + names_bytes(f) + cat_names_bytes(f) +
		(f->cb_ctrs ? 8 + gs_cb_ctrs_image_size(f->cb_ctrs) : 0);
}

/* Write the image of f; see forest_image.h. */
void
gs_forest_image_write(const GsForest *f, unsigned char *buf)
{
	GsImageCursor c = {buf, NULL, 0};

	gs_put(&c, IMAGE_MAGIC, 8);
	gs_put_u32(&c, GS_IMAGE_VERSION);
	gs_put_u32(&c, IMAGE_BOM);
	gs_put_u32(&c, (uint32_t) f->format);
	gs_put_u32(&c, (uint32_t) f->transform);
	gs_put_u32(&c, (uint32_t) f->n_features);
	gs_put_u32(&c, (uint32_t) f->n_groups);
	gs_put_u32(&c, (uint32_t) f->n_outputs);
	gs_put_u32(&c, (uint32_t) f->n_trees);
	gs_put_u32(&c, (uint32_t) f->max_depth);
	gs_put_u32(&c, (uint32_t) f->n_cat_splits);
	gs_put_u32(&c, f->split_kinds);
	gs_put_u32(&c, f->feature_names != NULL);
	gs_put_u32(&c, (f->leaf_lo ? IMAGE_LEAF_LO : 0) | (cat_names_bytes(f) ? IMAGE_CAT_NAMES : 0) |
			(f->has_missing_value ? IMAGE_MISSING : 0) | (f->linear ? IMAGE_LINEAR : 0) |
			(f->transform == GS_TRANSFORM_ISOLATION ? IMAGE_TPARAM : 0) |
			(f->cb_ctrs ? IMAGE_CB_CTRS : 0));	/* flags */
	gs_put_u32(&c, (uint32_t) cat_names_bytes(f));	/* reserved before version 3 */
	gs_put_i64(&c, f->n_nodes);
	gs_put_i64(&c, f->n_cat_words);
	gs_put_i64(&c, (int64_t) names_bytes(f));
	gs_put(&c, f->objective, sizeof(f->objective));
	gs_put(&c, f->booster, sizeof(f->booster));
	gs_put(&c, f->saved_by, sizeof(f->saved_by));

	if (f->has_missing_value)
		gs_put(&c, &f->missing_value, sizeof(float));
	if (f->linear)
		gs_put_i64(&c, f->linear->n_terms);
	if (f->transform == GS_TRANSFORM_ISOLATION)
		gs_put(&c, f->transform_param, 2 * sizeof(float));
	if (f->cb_ctrs)
		gs_put_i64(&c, (int64_t) gs_cb_ctrs_image_size(f->cb_ctrs));
	gs_put(&c, f->base_margin, sizeof(float) * (size_t) f->n_groups);
	gs_put(&c, f->tree_offset, sizeof(uint32_t) * (size_t) f->n_trees);
	gs_put(&c, f->tree_group, sizeof(int32_t) * (size_t) f->n_trees);
	gs_put(&c, f->tree_depth, sizeof(int32_t) * (size_t) f->n_trees);
	gs_put(&c, f->nodes, sizeof(GsNode) * (size_t) f->n_nodes);
	if (f->leaf_lo)
		gs_put(&c, f->leaf_lo, sizeof(float) * (size_t) f->n_nodes);
	if (f->linear)
	{
		gs_put(&c, f->linear->constant, sizeof(double) * (size_t) f->n_nodes);
		gs_put(&c, f->linear->start, sizeof(uint32_t) * ((size_t) f->n_nodes + 1));
		gs_put(&c, f->linear->feature, sizeof(int32_t) * (size_t) f->linear->n_terms);
		gs_put(&c, f->linear->coef, sizeof(double) * (size_t) f->linear->n_terms);
	}
	gs_put(&c, f->cat_words, sizeof(uint32_t) * (size_t) f->n_cat_words);
	if (f->cb_ctrs)
	{
		gs_cb_ctrs_image_write(f->cb_ctrs, f->cat_names && f->cat_names->hashes, c.w);
		c.w += gs_cb_ctrs_image_size(f->cb_ctrs);
	}
	if (f->feature_names)
		for (int32_t i = 0; i < f->n_features; i++)
			gs_put(&c, f->feature_names[i], strlen(f->feature_names[i]) + 1);
	if (cat_names_bytes(f))
	{
		const GsCatNames *cn = f->cat_names;

		for (int32_t j = 0; j < f->n_features; j++)
			gs_put_u32(&c, cn->kind[j]);
		for (int32_t j = 0; j < f->n_features; j++)
			gs_put_u32(&c, (uint32_t) gs_catnames_count(cn, j));
		gs_put(&c, cn->unknown, sizeof(float) * (size_t) f->n_features);
		gs_put(&c, cn->text, cn->text_bytes);
	}
}

/* GS_ERR_INVALID_MODEL for a damaged image, with what is wrong as detail. */
static GsCode
bad_image(GsStatus *st, const char *what)
{
	gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid forest image");
	gs_status_detail(st, "%s", what);
	return st->code;
}

/* Allocate n bytes (at least 1) through the forest's allocator. */
static void *
image_alloc(GsForest *f, size_t n)
{
	return f->alloc.alloc(f->alloc.ctx, n > 0 ? n : 1);
}

/* Split the names region into n_features strings; see gs_forest_image_read. */
static GsCode
read_names(GsForest *f, const unsigned char *p, size_t n, GsStatus *st)
{
	const unsigned char *end = p + n;

	if (n == 0 || p[n - 1] != '\0')
		return bad_image(st, "the feature names are not terminated");
	/* each name takes at least its NUL: no allocation for names not there */
	if (n < (size_t) f->n_features)
		return bad_image(st, "fewer feature names than features");
	/* valid UTF-8: gs_forest_check's job, as for a parsed forest */
	f->feature_names = image_alloc(f, sizeof(char *) * (size_t) f->n_features);
	if (!f->feature_names)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
	memset(f->feature_names, 0, sizeof(char *) * (size_t) f->n_features);
	for (int32_t i = 0; i < f->n_features; i++)
	{
		size_t		len;

		if (p >= end)
			return bad_image(st, "fewer feature names than features");
		len = strlen((const char *) p);
		f->feature_names[i] = image_alloc(f, len + 1);
		if (!f->feature_names[i])
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
		memcpy(f->feature_names[i], p, len + 1);
		p += len + 1;
	}
	if (p != end)
		return bad_image(st, "more feature names than features");
	return GS_OK;
}

/* Read the category names region (see cat_names_bytes) of n bytes. */
static GsCode
read_cat_names(GsForest *f, const unsigned char *p, size_t n, GsStatus *st)
{
	const unsigned char *end = p + n;
	const unsigned char *unknown = p + 8 * (size_t) f->n_features;
	size_t		words = 12 * (size_t) f->n_features;
	uint8_t    *kind;
	int64_t    *count;
	int64_t		total = 0;
	GsCode		rc;

	if (n < words || (n > words && end[-1] != '\0'))
		return bad_image(st, "the category names are not terminated");
	kind = image_alloc(f, (size_t) f->n_features);
	count = image_alloc(f, sizeof(int64_t) * (size_t) f->n_features);
	if (!kind || !count)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
		goto done;
	}
	for (int32_t j = 0; j < f->n_features; j++)
	{
		uint32_t	k,
					m;

		memcpy(&k, p + 4 * (size_t) j, 4);
		memcpy(&m, p + 4 * ((size_t) f->n_features + (size_t) j), 4);
		if (k > GS_CATNAMES_INT || (k == GS_CATNAMES_NONE) != (m == 0))
		{
			rc = bad_image(st, "impossible category name counts");
			goto done;
		}
		kind[j] = (uint8_t) k;
		count[j] = m;
		total += m;
	}
	p += words;
	/* each name takes at least its NUL: no allocation for names not there */
	if ((size_t) (end - p) < (size_t) total)
	{
		rc = bad_image(st, "fewer category names than counted");
		goto done;
	}
	rc = gs_catnames_new(&f->cat_names, &f->alloc, f->n_features, kind, count,
						 (size_t) (end - p) - (size_t) total, st);
	for (int32_t j = 0; j < f->n_features && rc == GS_OK; j++)
	{
		float		u;

		memcpy(&u, unknown + 4 * (size_t) j, 4);
		if (!isnan(u) && !isfinite(u))
			rc = bad_image(st, "an infinite value for an unknown category");
		gs_catnames_set_unknown(f->cat_names, j, u);
	}
	while (rc == GS_OK && p < end)
	{
		size_t		len = strlen((const char *) p);

		rc = gs_catnames_add(f->cat_names, (const char *) p, len, st);
		p += len + 1;
	}
	if (rc == GS_OK)
		rc = gs_catnames_finish(f->cat_names, st);
	if (rc == GS_ERR_INVALID_MODEL)
		rc = bad_image(st, "the category names are damaged");

done:
	if (kind)
		f->alloc.free(f->alloc.ctx, kind);
	if (count)
		f->alloc.free(f->alloc.ctx, count);
	return rc;
}

/* The counts of an image's header that are not the forest's own. */
typedef struct ImageHeader
{
	uint32_t	version;
	uint32_t	flags;			/* IMAGE_* */
	uint32_t	has_names;
	uint32_t	cat_bytes;		/* bytes of the category names */
	int64_t		n_names;		/* bytes of the feature names */
	int64_t		n_terms;		/* terms of the linear leaves */
	int64_t		ctr_bytes;		/* bytes of CatBoost's CTR tables */
} ImageHeader;

/* Read and check an image's header into f and *h. */
static GsCode
read_header(GsImageCursor *c, GsForest *f, ImageHeader *h, GsStatus *st)
{
	uint32_t	fmt,
				transform;

	if (c->left < HEADER_BYTES || memcmp(c->r, IMAGE_MAGIC, 8) != 0)
		return bad_image(st, "the bytes are not a forest image");
	c->r += 8;
	c->left -= 8;
	h->version = gs_get_u32(c);
	if (h->version < 1 || h->version > GS_IMAGE_VERSION)
		return bad_image(st, "the image was written by another version of pg_gpuscore");
	if (gs_get_u32(c) != IMAGE_BOM)
		return bad_image(st, "the image was written on a machine of another byte order");
	fmt = gs_get_u32(c);
	transform = gs_get_u32(c);
	f->n_features = (int32_t) gs_get_u32(c);
	f->n_groups = (int32_t) gs_get_u32(c);
	f->n_outputs = (int32_t) gs_get_u32(c);
	f->n_trees = (int32_t) gs_get_u32(c);
	f->max_depth = (int32_t) gs_get_u32(c);
	f->n_cat_splits = (int32_t) gs_get_u32(c);
	f->split_kinds = gs_get_u32(c);
	h->has_names = gs_get_u32(c);
	h->flags = gs_get_u32(c);
	h->cat_bytes = gs_get_u32(c);
	f->n_nodes = gs_get_i64(c);
	f->n_cat_words = gs_get_i64(c);
	h->n_names = gs_get_i64(c);
	gs_get(c, f->objective, sizeof(f->objective));
	gs_get(c, f->booster, sizeof(f->booster));
	gs_get(c, f->saved_by, sizeof(f->saved_by));

	if (fmt < GS_FORMAT_XGBOOST_JSON || fmt > GS_FORMAT_LAST ||
		fmt == GS_FORMAT_ONNX_AUTOENCODER)
		return bad_image(st, "unknown model format");
	f->format = (GsModelFormat) fmt;

	/*
	 * Version 1 had no flags (the word was reserved, 0) and is otherwise
	 * this layout: its XGBoost and ONNX forests are read as they are, so
	 * an upgrade does not make every session parse those models again.
	 * Its LightGBM forests have float leaves only: refused, the model is
	 * parsed again and gets its double leaves.  LightGBM and CatBoost
	 * forests, and they alone, have leaf_lo.
	 */
	if (h->version == 1 && fmt == GS_FORMAT_LIGHTGBM)
		return bad_image(st, "the image of a LightGBM model was written before its leaves were kept in double");
	if ((h->version == 1 && h->flags != 0) ||
		(h->version < 3 && (h->cat_bytes != 0 || (h->flags & IMAGE_CAT_NAMES))) ||
		(h->version < 4 && (h->flags & IMAGE_MISSING)) ||
		(h->version < 5 && (h->flags & IMAGE_LINEAR)) ||
		(h->version < 6 && (h->flags & IMAGE_TPARAM)) ||
		(h->version < 7 && (h->flags & IMAGE_CB_CTRS)) ||
		((h->flags & IMAGE_CB_CTRS) && fmt != GS_FORMAT_CATBOOST_JSON))
		return bad_image(st, "impossible counts in the header");
	if ((fmt == GS_FORMAT_LIGHTGBM || fmt == GS_FORMAT_CATBOOST_JSON) != ((h->flags & IMAGE_LEAF_LO) != 0))
		return bad_image(st, "the leaves' low parts do not match the model format");
	if (transform > GS_TRANSFORM_LAST)
		return bad_image(st, "unknown output transform");
	f->transform = (GsTransform) transform;
	if ((transform == GS_TRANSFORM_ISOLATION) != ((h->flags & IMAGE_TPARAM) != 0))
		return bad_image(st, "the transform's parameters do not match the transform");
	if (f->n_trees < 1 || f->n_groups < 1 || f->n_features < 1 ||
		f->n_nodes < f->n_trees || f->n_nodes > (int64_t) UINT32_MAX ||
		f->n_cat_words < 0 || f->n_cat_words > (int64_t) UINT32_MAX ||
		h->n_names < 0 || h->has_names > 1 || (!h->has_names && h->n_names != 0) ||
		(h->flags & ~IMAGE_FLAGS) != 0 ||
		((h->flags & IMAGE_LINEAR) && !(h->flags & IMAGE_LEAF_LO)) ||
		((h->flags & IMAGE_CAT_NAMES) != 0) != (h->cat_bytes != 0))
		return bad_image(st, "impossible counts in the header");
	return GS_OK;
}

/*
 * Check that the image's length is what its header says, reading the
 * counts that follow the header (linear terms, the CTR region's length)
 * into *h without moving the cursor.
 */
static GsCode
check_length(const GsImageCursor *c, const GsForest *f, ImageHeader *h, GsStatus *st)
{
	uint64_t	need;

	/* all counts are below 2^32 and elements at most 16 bytes: no overflow */
	need = 4 * (uint64_t) f->n_groups + 12 * (uint64_t) f->n_trees +
		sizeof(GsNode) * (uint64_t) f->n_nodes + 4 * (uint64_t) f->n_cat_words +
		((h->flags & IMAGE_LEAF_LO) ? 4 * (uint64_t) f->n_nodes : 0);
	need += h->cat_bytes + ((h->flags & IMAGE_MISSING) ? 4 : 0) + ((h->flags & IMAGE_TPARAM) ? 8 : 0);
	if (h->flags & IMAGE_LINEAR)
	{
		/* the term count follows the missing value */
		need += 8 + 12 * (uint64_t) f->n_nodes + 4;
		if (need > c->left)
			return bad_image(st, "the image's length does not match its header");
		memcpy(&h->n_terms, c->r + ((h->flags & IMAGE_MISSING) ? 4 : 0), 8);
		if (h->n_terms < 0 || h->n_terms >= (int64_t) UINT32_MAX)
			return bad_image(st, "impossible counts in the header");
		need += 12 * (uint64_t) h->n_terms;
	}
	if (h->flags & IMAGE_CB_CTRS)
	{
		/* the region's length follows the missing value, term count and parameters */
		size_t		at = ((h->flags & IMAGE_MISSING) ? 4 : 0) + ((h->flags & IMAGE_LINEAR) ? 8 : 0) +
			((h->flags & IMAGE_TPARAM) ? 8 : 0);

		need += 8;
		if (need > c->left)
			return bad_image(st, "the image's length does not match its header");
		memcpy(&h->ctr_bytes, c->r + at, 8);
		if (h->ctr_bytes < 0 || (uint64_t) h->ctr_bytes > c->left - need)
			return bad_image(st, "the image's length does not match its header");
		need += (uint64_t) h->ctr_bytes;
	}
	if (need > c->left || (uint64_t) h->n_names != c->left - need)
		return bad_image(st, "the image's length does not match its header");
	return GS_OK;
}

/* Allocate f's arrays and read them, the missing value and parameters first. */
static GsCode
read_arrays(GsImageCursor *c, GsForest *f, const ImageHeader *h, GsStatus *st)
{
	if ((h->flags & IMAGE_LINEAR) &&
		(f->linear = gs_linear_leaves_new(&f->alloc, f->n_nodes, h->n_terms)) == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");

	f->base_margin = image_alloc(f, sizeof(float) * (size_t) f->n_groups);
	f->tree_offset = image_alloc(f, sizeof(uint32_t) * (size_t) f->n_trees);
	f->tree_group = image_alloc(f, sizeof(int32_t) * (size_t) f->n_trees);
	f->tree_depth = image_alloc(f, sizeof(int32_t) * (size_t) f->n_trees);
	f->nodes = image_alloc(f, sizeof(GsNode) * (size_t) f->n_nodes);
	if (h->flags & IMAGE_LEAF_LO)
		f->leaf_lo = image_alloc(f, sizeof(float) * (size_t) f->n_nodes);
	if (f->n_cat_words > 0)
		f->cat_words = image_alloc(f, sizeof(uint32_t) * (size_t) f->n_cat_words);
	if (!f->base_margin || !f->tree_offset || !f->tree_group || !f->tree_depth || !f->nodes ||
		((h->flags & IMAGE_LEAF_LO) && !f->leaf_lo) || (f->n_cat_words > 0 && !f->cat_words))
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
	if (h->flags & IMAGE_MISSING)
	{
		gs_get(c, &f->missing_value, sizeof(float));
		f->has_missing_value = true;
		if (isnan(f->missing_value) || isinf(f->missing_value))
			return bad_image(st, "the missing value is not finite");
	}
	if (f->linear)
		gs_get_i64(c);				/* the term count, read above */
	if (h->flags & IMAGE_TPARAM)
		gs_get(c, f->transform_param, 2 * sizeof(float));
	if (h->flags & IMAGE_CB_CTRS)
		gs_get_i64(c);				/* the region's length, read above */
	gs_get(c, f->base_margin, sizeof(float) * (size_t) f->n_groups);
	gs_get(c, f->tree_offset, sizeof(uint32_t) * (size_t) f->n_trees);
	gs_get(c, f->tree_group, sizeof(int32_t) * (size_t) f->n_trees);
	gs_get(c, f->tree_depth, sizeof(int32_t) * (size_t) f->n_trees);
	gs_get(c, f->nodes, sizeof(GsNode) * (size_t) f->n_nodes);
	if (f->leaf_lo)
		gs_get(c, f->leaf_lo, sizeof(float) * (size_t) f->n_nodes);
	if (f->linear)
	{
		gs_get(c, f->linear->constant, sizeof(double) * (size_t) f->n_nodes);
		gs_get(c, f->linear->start, sizeof(uint32_t) * ((size_t) f->n_nodes + 1));
		gs_get(c, f->linear->feature, sizeof(int32_t) * (size_t) f->linear->n_terms);
		gs_get(c, f->linear->coef, sizeof(double) * (size_t) f->linear->n_terms);
	}
	if (f->n_cat_words > 0)
		gs_get(c, f->cat_words, sizeof(uint32_t) * (size_t) f->n_cat_words);
	return GS_OK;
}

/* Read the header and arrays into f; checks sizes, not the trees. */
static GsCode
read_image(GsImageCursor *c, const GsLimits *lim, GsForest *f, GsStatus *st)
{
	ImageHeader hd = {0},
			   *h = &hd;
	const unsigned char *ctr_at;

	if (read_header(c, f, h, st) != GS_OK)
		return st->code;
	/* caps before allocating (gs_forest_check repeats them) */
	if (gs_forest_check_caps(f, lim, st) != GS_OK)
		return st->code;
	if (check_length(c, f, h, st) != GS_OK || read_arrays(c, f, h, st) != GS_OK)
		return st->code;
	ctr_at = c->r;
	c->r += h->ctr_bytes;
	c->left -= (size_t) h->ctr_bytes;
	if (h->has_names && read_names(f, c->r, (size_t) h->n_names, st) != GS_OK)
		return st->code;
	if (h->cat_bytes > 0 && read_cat_names(f, c->r + h->n_names, h->cat_bytes, st) != GS_OK)
		return st->code;
	if (h->flags & IMAGE_CB_CTRS)
		return gs_cb_ctrs_image_read(ctr_at, (size_t) h->ctr_bytes, f, st);
	return GS_OK;
}

/* Read an image into a checked forest; see forest_image.h. */
GsCode
gs_forest_image_read(const unsigned char *buf, size_t len, const GsLimits *lim,
					 const GsAllocator *alloc, GsForest **out, GsStatus *st)
{
	GsImageCursor c = {NULL, buf, len};
	GsForest   *f;
	GsCode		rc;

	gs_status_clear(st);
	*out = NULL;
	if (lim == NULL)
		lim = &gs_default_limits;
	if (buf == NULL)
		return bad_image(st, "the bytes are not a forest image");
	f = alloc->alloc(alloc->ctx, sizeof(GsForest));
	if (f == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
	memset(f, 0, sizeof(GsForest));
	f->alloc = *alloc;
	rc = read_image(&c, lim, f, st);
	if (rc == GS_OK)
		rc = gs_forest_check(f, lim, alloc, st);
	if (rc == GS_OK)
		rc = gs_forest_bins_build(f, st);
	if (rc == GS_OK)
		rc = gs_forest_complete_build(f, st);
	if (rc == GS_OK)
		rc = gs_forest_qs_build(f, st);
	if (rc != GS_OK)
	{
		/* arrays not yet allocated are NULL, names NULL-filled: all freed */
		gs_forest_free(f);
		return rc;
	}
	*out = f;
	return GS_OK;
}

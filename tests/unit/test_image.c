/*
 * test_image.c
 *	  Unit tests of forest images (src/core/forest_image.c): a validated
 *	  forest written as one flat byte image and read back, the reader's
 *	  refusal of damaged images, its caps, and gs_forest_check on forests
 *	  broken in memory.  Prints TAP lines and a final "N passed, N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan; under ASan and
 * UBSan a read past an image, a misaligned load or a leak fails the run).
 *	- Round trip: every tree-ensemble fixture (the .json, .ubj, .model and lgb*.txt
 *	  files of models/, the .onnx files of onnx/trees/) is loaded twice
 *	  through allocators that fill new memory with different bytes; both
 *	  images must be byte-identical (no uninitialised byte reaches an
 *	  image), every byte of the buffer written, the image read back from an
 *	  unaligned copy must be the same forest field by field, score a random
 *	  batch bit for bit as the original does, image to the same bytes again
 *	  and free everything it allocated.  One TAP line per model.  So must a
 *	  forest with more output groups than trees, which the XGBoost loader
 *	  accepts.
 *	- Rejection: every truncation, a trailing byte, a changed magic,
 *	  version or byte-order mark must give GS_ERR_INVALID_MODEL and no
 *	  forest; every byte flipped with 0x01, 0x80 and 0xFF must be refused
 *	  cleanly or give a forest that passes gs_forest_check and an
 *	  independent check written here, and scores without a fault (the same
 *	  as a batch and row by row).
 *	- Caps one below the model's give GS_ERR_LIMIT, caps equal to it none;
 *	  every failing allocation gives GS_ERR_NOMEM and leaks nothing; a huge
 *	  feature count in a header allocates nothing in proportion to it.
 *	- Targeted corruptions of a loaded forest (children, features, leaves,
 *	  groups, depths, category sets, split kinds, names) must make
 *	  gs_forest_check and the reading of the forest's image fail with
 *	  GS_ERR_INVALID_MODEL, each on a fresh load.
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "forest_image.h"
#include "model.h"
#include "utf8_valid.h"
#include "../common/test_util.h"

#define FIXTURES "../fixtures"

/* The random batch every forest is scored on: N_ROWS rows, leading dimension LD. */
#define N_ROWS 97
#define LD 104

/* No caps at all (0 means no cap). */
static const GsLimits no_caps;

/* ---- allocators ---- */

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

static void *
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

static void
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

static GsAllocator
allocator_of(TestAlloc *t)
{
	GsAllocator a = {test_alloc, test_free, t};

	return a;
}

/* ---- loading, imaging, comparing ---- */

/* Load a fixture with gs_model_load (format detected); NULL on failure. */
static GsModel *
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
static unsigned char *
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
static GsCode
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

/* Whether two forests are identical field by field; else the first difference in why. */
static int
forest_same(const GsForest *a, const GsForest *b, char *why, size_t whylen)
{
#define DIFF(...) do { snprintf(why, whylen, __VA_ARGS__); return 0; } while (0)
#define SAME_SCALAR(field) \
	if (a->field != b->field) \
		DIFF("%s %lld, read back %lld", #field, (long long) a->field, (long long) b->field)
#define SAME_ARRAY(field, n) \
	if ((n) > 0 && memcmp(a->field, b->field, sizeof(*a->field) * (size_t) (n)) != 0) \
		DIFF("%s differs", #field)

	SAME_SCALAR(format);
	SAME_SCALAR(n_cat_splits);
	SAME_SCALAR(split_kinds);
	SAME_SCALAR(transform);
	SAME_SCALAR(n_features);
	SAME_SCALAR(n_groups);
	SAME_SCALAR(n_outputs);
	SAME_SCALAR(n_trees);
	SAME_SCALAR(max_depth);
	SAME_SCALAR(n_nodes);
	SAME_SCALAR(n_cat_words);
	if (memcmp(a->objective, b->objective, sizeof(a->objective)) != 0)
		DIFF("objective \"%.64s\", read back \"%.64s\"", a->objective, b->objective);
	if (memcmp(a->booster, b->booster, sizeof(a->booster)) != 0)
		DIFF("booster \"%.16s\", read back \"%.16s\"", a->booster, b->booster);
	if (memcmp(a->saved_by, b->saved_by, sizeof(a->saved_by)) != 0)
		DIFF("saved_by \"%.32s\", read back \"%.32s\"", a->saved_by, b->saved_by);
	SAME_ARRAY(base_margin, a->n_groups);
	SAME_ARRAY(tree_offset, a->n_trees);
	SAME_ARRAY(tree_group, a->n_trees);
	SAME_ARRAY(tree_depth, a->n_trees);
	SAME_ARRAY(nodes, a->n_nodes);
	if ((a->leaf_lo == NULL) != (b->leaf_lo == NULL))
		DIFF("leaf_lo %s, read back %s", a->leaf_lo ? "set" : "NULL",
			 b->leaf_lo ? "set" : "NULL");
	if (a->leaf_lo)
		SAME_ARRAY(leaf_lo, a->n_nodes);
	if ((a->linear == NULL) != (b->linear == NULL))
		DIFF("linear leaves %s, read back %s", a->linear ? "set" : "NULL",
			 b->linear ? "set" : "NULL");
	if (a->linear)
	{
		if (a->linear->n_terms != b->linear->n_terms)
			DIFF("linear leaves of %lld terms, read back %lld",
				 (long long) a->linear->n_terms, (long long) b->linear->n_terms);
		SAME_ARRAY(linear->constant, a->n_nodes);
		SAME_ARRAY(linear->start, a->n_nodes + 1);
		SAME_ARRAY(linear->feature, a->linear->n_terms);
		SAME_ARRAY(linear->coef, a->linear->n_terms);
	}
	if ((a->cat_words == NULL) != (b->cat_words == NULL))
		DIFF("cat_words %s, read back %s", a->cat_words ? "set" : "NULL",
			 b->cat_words ? "set" : "NULL");
	SAME_ARRAY(cat_words, a->n_cat_words);
	if ((a->feature_names == NULL) != (b->feature_names == NULL))
		DIFF("feature names %s, read back %s", a->feature_names ? "present" : "absent",
			 b->feature_names ? "present" : "absent");
	if (a->feature_names)
		for (int32_t i = 0; i < a->n_features; i++)
			if (b->feature_names[i] == NULL || strcmp(a->feature_names[i], b->feature_names[i]) != 0)
				DIFF("feature name %d \"%s\", read back \"%s\"", i, a->feature_names[i],
					 b->feature_names[i] ? b->feature_names[i] : "(null)");
	return 1;
#undef DIFF
#undef SAME_SCALAR
#undef SAME_ARRAY
}

/*
 * An independent check of the invariants forest.h promises (written here,
 * not shared with forest_image.c; the child rule is "after the parent and
 * reached once", weaker than the breadth-first layout the loaders write).
 * 1 when f holds them, else 0 with what broke in why.
 */
static int
indep_check(const GsForest *f, char *why, size_t whylen)
{
	int32_t    *refs = NULL,
			   *depth = NULL;
	int32_t		deepest_all = 0;
	uint32_t	kinds = 0;
	int64_t		n_cat = 0;
	int			ok = 0;

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); goto done; } while (0)
	if (f->n_trees < 1 || f->n_groups < 1 || f->n_features < 1 || f->n_nodes < f->n_trees)
		FAIL("bad shape");
	if (f->n_outputs != (f->transform == GS_TRANSFORM_ARGMAX ? 1 : f->n_groups))
		FAIL("%d outputs for %d groups", f->n_outputs, f->n_groups);
	if (memchr(f->objective, '\0', sizeof(f->objective)) == NULL ||
		memchr(f->booster, '\0', sizeof(f->booster)) == NULL ||
		memchr(f->saved_by, '\0', sizeof(f->saved_by)) == NULL)
		FAIL("unterminated name");
	for (int32_t g = 0; g < f->n_groups; g++)
		if (!isfinite(f->base_margin[g]))
			FAIL("base margin %d not finite", g);
	if (f->feature_names)
		for (int32_t i = 0; i < f->n_features; i++)
			if (f->feature_names[i] == NULL ||
				!gs_utf8_valid((const unsigned char *) f->feature_names[i],
							   strlen(f->feature_names[i])))
				FAIL("feature name %d missing or not UTF-8", i);
	if ((f->cat_words == NULL) != (f->n_cat_words == 0) || f->n_cat_words < 0)
		FAIL("cat_words and n_cat_words disagree");
	refs = calloc((size_t) f->n_nodes, sizeof(int32_t));
	depth = calloc((size_t) f->n_nodes, sizeof(int32_t));
	if (!refs || !depth)
		FAIL("out of memory in the checker");
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		off = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;
		int64_t		size = end - off;
		int32_t		deepest = 0;

		if ((t == 0 && off != 0) || size < 1 || end > f->n_nodes)
			FAIL("tree %d spans [%lld, %lld)", t, (long long) off, (long long) end);
		if (f->tree_group[t] < 0 || f->tree_group[t] >= f->n_groups)
			FAIL("tree %d in group %d", t, f->tree_group[t]);
		for (int64_t i = 0; i < size; i++)
		{
			GsNode		n = f->nodes[off + i];

			if (i > 0 && refs[off + i] != 1)
				FAIL("tree %d node %lld reached %d times", t, (long long) i, refs[off + i]);
			if (n.info & GS_NODE_LEAF)
			{
				if (!isfinite(n.value))
					FAIL("tree %d leaf %lld not finite", t, (long long) i);
				if (n.info & (GS_NODE_FEATURE_MASK | GS_NODE_CATEGORICAL))
					FAIL("tree %d leaf %lld has split bits", t, (long long) i);
				/* the low part: at most half a float ulp of the leaf (or of 2^-126) */
				if (f->leaf_lo &&
					!(fabsf(f->leaf_lo[off + i]) <=
					  (fabsf(n.value) < FLT_MIN ? FLT_MIN : fabsf(n.value)) * FLT_EPSILON))
					FAIL("tree %d leaf %lld has low part %g for %g", t, (long long) i,
						 f->leaf_lo[off + i], n.value);
				if (depth[off + i] > deepest)
					deepest = depth[off + i];
				continue;
			}
			if ((int64_t) n.left <= i || (int64_t) n.left + 1 >= size)
				FAIL("tree %d node %lld has children %u of %lld", t, (long long) i, n.left,
					 (long long) size);
			if (f->leaf_lo && f->leaf_lo[off + i] != 0.0f)
				FAIL("tree %d split %lld has a leaf's low part", t, (long long) i);
			if ((int64_t) (n.info & GS_NODE_FEATURE_MASK) >= (int64_t) f->n_features + f->n_derived)
				FAIL("tree %d node %lld splits on feature %u", t, (long long) i,
					 n.info & GS_NODE_FEATURE_MASK);
			if (n.info & GS_NODE_CATEGORICAL)
			{
				uint32_t	at;
				int64_t		words;

				memcpy(&at, &n.value, sizeof(at));
				if ((int64_t) at >= f->n_cat_words)
					FAIL("tree %d node %lld: category set at %u", t, (long long) i, at);
				words = f->cat_words[at] & GS_CAT_WORDS_MASK;
				if (words > (int64_t) GS_CAT_MAX_WORDS || (int64_t) at + 1 + words > f->n_cat_words)
					FAIL("tree %d node %lld: category set past cat_words", t, (long long) i);
				n_cat++;
			}
			else if (isnan(n.value))
				FAIL("tree %d node %lld: NaN threshold", t, (long long) i);
			kinds |= n.info & (GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING | GS_NODE_EQUAL);
			refs[off + n.left]++;
			refs[off + n.left + 1]++;
			depth[off + n.left] = depth[off + n.left + 1] = depth[off + i] + 1;
		}
		if (deepest != f->tree_depth[t])
			FAIL("tree %d is %d deep, says %d", t, deepest, f->tree_depth[t]);
		if (deepest > deepest_all)
			deepest_all = deepest;
	}
	if (deepest_all != f->max_depth)
		FAIL("forest is %d deep, says %d", deepest_all, f->max_depth);
	if (kinds != f->split_kinds || n_cat != f->n_cat_splits)
		FAIL("split kinds %x / %lld categorical, says %x / %d", kinds, (long long) n_cat,
			 f->split_kinds, f->n_cat_splits);
	if (f->linear)
	{
		/* each node's terms inside the term arrays, splits without any */
		const GsLinearLeaves *lin = f->linear;

		if (f->leaf_lo == NULL)
			FAIL("linear leaves without double leaves");
		for (int64_t i = 0; i < f->n_nodes; i++)
		{
			int			leaf = (f->nodes[i].info & GS_NODE_LEAF) != 0;

			if (lin->start[i] > lin->start[i + 1] || (int64_t) lin->start[i + 1] > lin->n_terms)
				FAIL("node %lld's terms run from %u to %u of %lld", (long long) i,
					 lin->start[i], lin->start[i + 1], (long long) lin->n_terms);
			if (!leaf && (lin->start[i] != lin->start[i + 1] || lin->constant[i] != 0.0))
				FAIL("split node %lld has a leaf model", (long long) i);
			if (!isfinite(lin->constant[i]))
				FAIL("node %lld's constant is not finite", (long long) i);
		}
		for (int64_t k = 0; k < lin->n_terms; k++)
			if (lin->feature[k] < 0 || lin->feature[k] >= f->n_features || !isfinite(lin->coef[k]))
				FAIL("term %lld: feature %d of %d, coefficient %g", (long long) k,
					 lin->feature[k], f->n_features, lin->coef[k]);
	}
	ok = 1;
done:
	free(refs);
	free(depth);
	return ok;
#undef FAIL
}

/* A random batch for f (column-major, LD x n_features); malloc'd. */
static float *
batch_for(const GsForest *f)
{
	float	   *x = malloc(sizeof(float) * (size_t) f->n_features * LD);

	gs_fill_batch(f, x, N_ROWS, LD);
	return x;
}

/*
 * Score a few random rows of f, as a batch and one by one, for the forests
 * read from damaged images: they must score without a fault.  Returns
 * whether both paths agree.
 */
static int
score_a_few(const GsForest *f)
{
	enum
	{
	N = 5};
	size_t		nf = (size_t) f->n_features;
	float	   *x = malloc(sizeof(float) * nf * N),
			   *row = malloc(sizeof(float) * nf),
			   *margin = malloc(sizeof(float) * (size_t) f->n_groups * N),
			   *out = malloc(sizeof(float) * (size_t) f->n_outputs * N),
			   *out1 = malloc(sizeof(float) * (size_t) f->n_outputs);
	int			same = 1;

	gs_fill_batch(f, x, N, N);
	gs_cpu_predict(f, x, N, N, margin, out);
	for (size_t r = 0; r < N; r++)
	{
		for (size_t k = 0; k < nf; k++)
			row[k] = x[k * N + r];
		gs_cpu_predict_row(f, row, margin, out1);
		same &= memcmp(out1, out + r * (size_t) f->n_outputs,
					   sizeof(float) * (size_t) f->n_outputs) == 0;
	}
	free(x);
	free(row);
	free(margin);
	free(out);
	free(out1);
	return same;
}

/*
 * Margins then outputs of f on batch x, into one malloc'd array of
 * N_ROWS * (n_groups + n_outputs) floats.
 */
static float *
scores_of(const GsForest *f, const float *x)
{
	size_t		ng = (size_t) N_ROWS * (size_t) f->n_groups;
	float	   *s = malloc(sizeof(float) * (ng + (size_t) N_ROWS * (size_t) f->n_outputs));
	float	   *scratch = malloc(sizeof(float) * ng);

	gs_cpu_margins(f, x, LD, N_ROWS, s);
	gs_cpu_predict(f, x, LD, N_ROWS, scratch, s + ng);
	free(scratch);
	return s;
}

/* Whether a and b score batch x bit for bit alike (same shape assumed). */
static int
scores_same(const GsForest *a, const GsForest *b, const float *x)
{
	float	   *sa = scores_of(a, x);
	float	   *sb = scores_of(b, x);
	size_t		n = (size_t) N_ROWS * (size_t) (a->n_groups + a->n_outputs);
	int			same = memcmp(sa, sb, sizeof(float) * n) == 0;

	free(sa);
	free(sb);
	return same;
}

/* ---- round trip of every fixture ---- */

/* Round-trip one fixture: one TAP line; returns 1 when it was a forest. */
static int
roundtrip(const char *path, const char *name)
{
	TestAlloc	ta = {0x5A, 0, 0, 0, 0},
				tb = {0xA5, 0, 0, 0, 0},
				tr = {0x77, 0, 0, 0, 0};
	GsAllocator aa = allocator_of(&ta),
				ab = allocator_of(&tb),
				ar = allocator_of(&tr);
	GsStatus	st;
	GsModel    *m1 = load_model(path, &aa, &st),
			   *m2;
	GsForest   *f,
			   *g = NULL;
	unsigned char *img,
			   *img_ff,
			   *img2,
			   *img_back,
			   *buf;
	size_t		len,
				len_ff,
				len2,
				len_back;
	int			guard1,
				guard2;
	char		why[600] = "",
				diff[500] = "",
				what[800];
	int			ok = 1;
	float	   *x;
	GsCode		rc;

	if (m1 == NULL || m1->forest == NULL)
	{
		printf("# skipped %s: %s\n", name, m1 ? "not a tree ensemble" : st.msg);
		gs_model_free(m1);
		return 0;
	}
	f = m1->forest;
	m2 = load_model(path, &ab, &st);

#define CHECK(cond, ...) \
	do { if (ok && !(cond)) { ok = 0; snprintf(why, sizeof(why), __VA_ARGS__); } } while (0)

	/* the loaders' forests hold what the reader will demand of an image */
	rc = gs_forest_check(f, &no_caps, &gs_malloc_allocator, &st);
	CHECK(rc == GS_OK, "gs_forest_check refuses the loaded forest: %s", st.msg);
	CHECK(indep_check(f, diff, sizeof(diff)), "the independent check refuses the loaded forest: %s", diff);

	if (ok && f->cb_ctrs)
	{
		/*
		 * CatBoost's CTRs are in no image: the catalog stores none for such
		 * a model (each session parses it), and its image, which reads
		 * derived features the image has not, is refused when read back
		 */
		img = image_of(f, &len, 0x00, NULL);
		rc = gs_forest_image_read(img, len, &gs_default_limits, &ar, &g, &st);
		CHECK(rc == GS_ERR_INVALID_MODEL && g == NULL, "the image of a forest with CTRs is read back");
		CHECK(tr.live == 0, "%ld allocations of the reader left after a refusal", tr.live);
		snprintf(what, sizeof(what), "%d trees with CTRs: %s", f->n_trees,
				 ok ? "its image is refused when read back (the model is parsed instead)" : why);
		gs_tap(ok, name, what);
		free(img);
		gs_model_free(m1);
		gs_model_free(m2);
		return 1;
	}

	/* the image is deterministic and fills its buffer */
	img = image_of(f, &len, 0x00, &guard1);
	img_ff = image_of(f, &len_ff, 0xFF, &guard2);
	CHECK(guard1 && guard2, "the writer wrote past gs_forest_image_size");
	CHECK(len_ff == len && memcmp(img, img_ff, len) == 0,
		  "bytes of the buffer the writer does not write (image over 0x00 and 0xFF differ)");
	CHECK(m2 != NULL && m2->forest != NULL, "second load failed");
	if (ok)
	{
		img2 = image_of(m2->forest, &len2, 0x00, NULL);
		CHECK(len2 == len && memcmp(img, img2, len) == 0,
			  "images of two loads differ (uninitialised bytes in the image)");
		free(img2);
	}
	/* writing to an unaligned buffer */
	buf = malloc(len + 1);
	gs_forest_image_write(f, buf + 1);
	CHECK(memcmp(buf + 1, img, len) == 0, "image written at an odd address differs");
	free(buf);

	/* read back from an unaligned copy (a bytea's data is not aligned) */
	buf = malloc(len + 3);
	memcpy(buf + 3, img, len);
	rc = gs_forest_image_read(buf + 3, len, &gs_default_limits, &ar, &g, &st);
	free(buf);
	CHECK(rc == GS_OK && g != NULL && st.code == GS_OK, "read back: %.200s (%.200s)", st.msg, st.detail);
	if (ok)
	{
		CHECK(forest_same(f, g, diff, sizeof(diff)), "read back: %s", diff);
		CHECK(g->alloc.ctx == &tr, "the forest read does not keep the caller's allocator");
	}
	if (ok)
	{
		x = batch_for(f);
		CHECK(scores_same(f, g, x), "scores of the forest read back differ");
		free(x);
		img_back = image_of(g, &len_back, 0x00, NULL);
		CHECK(len_back == len && memcmp(img_back, img, len) == 0,
			  "the forest read back images to other bytes");
		free(img_back);
	}
	gs_forest_free(g);
	CHECK(tr.live == 0, "%ld allocations of the reader left after gs_forest_free", tr.live);
#undef CHECK

	snprintf(what, sizeof(what), "%d trees, %lld nodes, image of %zu bytes: %s", f->n_trees,
			 (long long) f->n_nodes, len, ok ? "same forest, same scores bit for bit" : why);
	gs_tap(ok, name, what);
	free(img);
	free(img_ff);
	gs_model_free(m1);
	gs_model_free(m2);
	return 1;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t		n = strlen(s),
				k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int
is_model_file(const struct dirent *e)
{
	return has_suffix(e->d_name, ".json") || has_suffix(e->d_name, ".ubj") ||
		has_suffix(e->d_name, ".model") ||
		(strncmp(e->d_name, "lgb", 3) == 0 && has_suffix(e->d_name, ".txt"));
}

static int
is_onnx_file(const struct dirent *e)
{
	return has_suffix(e->d_name, ".onnx");
}

/* Round-trip every fixture model of a directory; returns how many were forests. */
static int
roundtrip_dir(const char *dir, int (*filter) (const struct dirent *))
{
	struct dirent **names;
	int			n = scandir(dir, &names, filter, alphasort),
				done = 0;

	if (n < 0)
	{
		gs_tap(0, dir, "directory readable");
		return 0;
	}
	for (int i = 0; i < n; i++)
	{
		char		path[1024];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		done += roundtrip(path, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return done;
}

static void
test_roundtrip(void)
{
	int			n = roundtrip_dir(FIXTURES "/models", is_model_file) +
		roundtrip_dir(FIXTURES "/onnx/trees", is_onnx_file);
	char		what[64];

	snprintf(what, sizeof(what), "%d models, at least 40", n);
	gs_tap(n >= 40, "round trip", what);
}

/*
 * A forest with more output groups than trees (3 classes, one tree: the
 * other classes score their base margin), as the XGBoost loader accepts it,
 * must round-trip like any other.
 */
static void
test_more_groups_than_trees(void)
{
	static const char json[] =
		"{\"learner\":{\"attributes\":{},\"feature_names\":[],\"feature_types\":[],"
		"\"gradient_booster\":{\"name\":\"gbtree\",\"model\":{\"gbtree_model_param\":"
		"{\"num_parallel_tree\":\"1\",\"num_trees\":\"1\"},\"iteration_indptr\":[],"
		"\"tree_info\":[0],\"trees\":[{\"base_weights\":[],\"categories\":[],"
		"\"categories_nodes\":[],\"categories_segments\":[],\"categories_sizes\":[],\"id\":0,"
		"\"left_children\":[1,-1,-1],\"right_children\":[2,-1,-1],\"split_indices\":[1,0,0],"
		"\"default_left\":[1,0,0],\"split_conditions\":[0.5,-1.0,1.0],\"split_type\":[0,0,0],"
		"\"tree_param\":{\"num_nodes\":\"3\"}}]}},\"learner_model_param\":{\"base_score\":\"0.5\","
		"\"num_class\":\"3\",\"num_feature\":\"2\",\"num_target\":\"1\"},"
		"\"objective\":{\"name\":\"multi:softprob\"}},\"version\":[1,7,4]}";
	GsForest   *f = NULL,
			   *g = NULL;
	GsStatus	st;
	GsCode		rc;
	unsigned char *img;
	size_t		len;
	char		why[600] = "",
				what[800];

	rc = gs_forest_load((const unsigned char *) json, sizeof(json) - 1, GS_FORMAT_AUTO, NULL,
						&gs_malloc_allocator, &f, &st);
	gs_tap(rc == GS_OK && f->n_groups == 3 && f->n_trees == 1 &&
		   gs_forest_check(f, &no_caps, &gs_malloc_allocator, &st) == GS_OK,
		   "3 groups, 1 tree", "loads and passes gs_forest_check");
	if (rc != GS_OK)
		return;
	img = image_of(f, &len, 0, NULL);
	rc = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	if (rc == GS_OK && !forest_same(f, g, why, sizeof(why)))
		rc = GS_ERR_INTERNAL;
	snprintf(what, sizeof(what), "its image reads back as the same forest (%.200s%s%.300s)",
			 rc == GS_OK ? "ok" : st.msg, rc == GS_OK ? "" : ": ", rc == GS_OK ? "" : (why[0] ? why : st.detail));
	gs_tap(rc == GS_OK, "3 groups, 1 tree", what);
	gs_forest_free(g);
	gs_forest_free(f);
	free(img);
}

/* ---- damaged images ---- */

/* A clean refusal: *out NULL, the status says the code, a message. */
static int
clean_refusal(GsCode rc, const GsForest *out, const GsStatus *st)
{
	return rc != GS_OK && out == NULL && st->code == rc && st->msg[0] != '\0' &&
		memchr(st->msg, '\0', sizeof(st->msg)) != NULL &&
		(rc == GS_ERR_INVALID_MODEL || rc == GS_ERR_LIMIT || rc == GS_ERR_NOMEM);
}

/* Whether reading img (len bytes) gives GS_ERR_INVALID_MODEL and no forest. */
static int
refused_invalid(const unsigned char *img, size_t len)
{
	GsForest   *g = NULL;
	GsStatus	st;
	GsCode		rc = read_copy(img, len, &gs_default_limits, &gs_malloc_allocator, &g, &st);

	if (rc == GS_OK)
	{
		gs_forest_free(g);
		return 0;
	}
	return rc == GS_ERR_INVALID_MODEL && clean_refusal(rc, g, &st);
}

/*
 * Truncations, a trailing byte, the header's identification and every
 * byte flipped, on the image of one fixture.
 */
static void
test_damaged(const char *file)
{
	char		path[512],
				what[400];
	GsStatus	st;
	GsModel    *m;
	unsigned char *img,
			   *b;
	size_t		len;
	long		bad = 0;
	uint32_t	u;
	static const unsigned char patterns[] = {0x01, 0x80, 0xFF};
	long		rejected = 0,
				accepted = 0,
				identical = 0,
				broken = 0;
	char		first_broken[600] = "";

	snprintf(path, sizeof(path), FIXTURES "/models/%s", file);
	m = load_model(path, &gs_malloc_allocator, &st);
	if (m == NULL || m->forest == NULL)
	{
		gs_tap(0, file, "loads as a tree ensemble");
		gs_model_free(m);
		return;
	}
	img = image_of(m->forest, &len, 0, NULL);

	/* every truncation */
	for (size_t n = 0; n < len; n++)
		bad += !refused_invalid(img, n);
	snprintf(what, sizeof(what), "all %zu truncations refused as invalid (%ld not)", len, bad);
	gs_tap(bad == 0, file, what);

	/* one byte more, of either value */
	b = malloc(len + 1);
	memcpy(b, img, len);
	b[len] = 0;
	bad = !refused_invalid(b, len + 1);
	b[len] = 0xFF;
	bad += !refused_invalid(b, len + 1);
	free(b);
	gs_tap(bad == 0, file, "an image with a trailing byte refused as invalid");

	/* magic, version, byte order */
	b = malloc(len);
	bad = 0;
	memcpy(&u, img + 8, 4);
	if (memcmp(img, "GSFOREST", 8) != 0 || u != GS_IMAGE_VERSION ||
		(img[12] == img[15] && img[13] == img[14]))
		bad = 1000;				/* the layout of forest_image.h is not where expected */
	for (int k = 0; k < 8; k++)
	{
		memcpy(b, img, len);
		b[k] ^= 0x20;			/* "gSFOREST", ... */
		bad += !refused_invalid(b, len);
	}
	for (int k = 0; k < 3; k++)
	{
		uint32_t	v[3] = {GS_IMAGE_VERSION + 1, 0, GS_IMAGE_VERSION | 0x01000000u};

		memcpy(b, img, len);
		memcpy(b + 8, &v[k], 4);
		bad += !refused_invalid(b, len);
	}
	memcpy(b, img, len);
	for (int k = 0; k < 4; k++)
		b[12 + k] = img[15 - k];	/* the mark as the other byte order writes it */
	bad += !refused_invalid(b, len);
	snprintf(what, sizeof(what), "changed magic (8 bytes), version (3 values) and byte-order mark refused as invalid (%ld not)", bad);
	gs_tap(bad == 0, file, what);

	/* every byte flipped by each pattern */
	memcpy(b, img, len);
	for (size_t pos = 0; pos < len; pos++)
		for (size_t p = 0; p < sizeof(patterns); p++)
		{
			GsForest   *g = NULL;
			GsCode		rc;
			char		why[400];

			b[pos] ^= patterns[p];
			rc = gs_forest_image_read(b, len, &gs_default_limits, &gs_malloc_allocator, &g, &st);
			if (rc != GS_OK)
			{
				if (clean_refusal(rc, g, &st))
					rejected++;
				else if (broken++ == 0)
					snprintf(first_broken, sizeof(first_broken),
							 "byte %zu ^ 0x%02x: unclean refusal (code %d, forest %p, \"%s\")",
							 pos, patterns[p], (int) rc, (void *) g, st.msg);
			}
			else if (g == NULL)
			{
				if (broken++ == 0)
					snprintf(first_broken, sizeof(first_broken),
							 "byte %zu ^ 0x%02x: GS_OK without a forest", pos, patterns[p]);
			}
			else
			{
				GsStatus	st2;

				if (gs_forest_check(g, &no_caps, &gs_malloc_allocator, &st2) != GS_OK)
				{
					if (broken++ == 0)
						snprintf(first_broken, sizeof(first_broken),
								 "byte %zu ^ 0x%02x: accepted, but gs_forest_check says %s",
								 pos, patterns[p], st2.msg);
				}
				else if (!indep_check(g, why, sizeof(why)))
				{
					if (broken++ == 0)
						snprintf(first_broken, sizeof(first_broken),
								 "byte %zu ^ 0x%02x: accepted, but %s", pos, patterns[p], why);
				}
				else if (!score_a_few(g))
				{
					if (broken++ == 0)
						snprintf(first_broken, sizeof(first_broken),
								 "byte %zu ^ 0x%02x: accepted, but a batch and row by row score differently",
								 pos, patterns[p]);
				}
				else
				{
					accepted++;
					identical += forest_same(m->forest, g, why, sizeof(why));
				}
				gs_forest_free(g);
			}
			b[pos] ^= patterns[p];
		}
	snprintf(what, sizeof(what),
			 "%zu bytes x 3 flips: %ld refused cleanly, %ld accepted and valid (%ld unchanged), %ld broken%s%s",
			 len, rejected, accepted, identical, broken, broken ? "; first: " : "", first_broken);
	gs_tap(broken == 0 && rejected > 0 && rejected + accepted == (long) (3 * len), file, what);
	free(b);
	free(img);
	gs_model_free(m);
}

/* ---- caps and allocation failures ---- */

/* Each cap one below the model's gives GS_ERR_LIMIT; equal to it, the forest. */
static void
test_caps(const char *file)
{
	char		path[512],
				what[600];
	GsStatus	st;
	GsModel    *m;
	GsForest   *f;
	unsigned char *img;
	size_t		len;
	const char *caps[] = {"max_trees", "max_nodes", "max_depth", "max_features"};

	snprintf(path, sizeof(path), FIXTURES "/models/%s", file);
	m = load_model(path, &gs_malloc_allocator, &st);
	if (m == NULL || m->forest == NULL)
	{
		gs_tap(0, file, "loads as a tree ensemble");
		gs_model_free(m);
		return;
	}
	f = m->forest;
	img = image_of(f, &len, 0, NULL);
	for (int c = 0; c < 4; c++)
	{
		GsLimits	below = no_caps,
					at = no_caps;
		GsForest   *g = NULL,
				   *h = NULL;
		GsCode		rc_below,
					rc_at;
		GsStatus	st_below;

		switch (c)
		{
			case 0:
				below.max_trees = f->n_trees - 1;
				at.max_trees = f->n_trees;
				break;
			case 1:
				below.max_nodes = f->n_nodes - 1;
				at.max_nodes = f->n_nodes;
				break;
			case 2:
				below.max_depth = f->max_depth - 1;
				at.max_depth = f->max_depth;
				break;
			default:
				below.max_features = f->n_features - 1;
				at.max_features = f->n_features;
				break;
		}
		rc_below = read_copy(img, len, &below, &gs_malloc_allocator, &g, &st_below);
		rc_at = read_copy(img, len, &at, &gs_malloc_allocator, &h, &st);
		snprintf(what, sizeof(what), "%s one below the model's gives GS_ERR_LIMIT (%.200s), equal to it reads (%.200s)",
				 caps[c], st_below.msg, rc_at == GS_OK ? "ok" : st.msg);
		gs_tap(rc_below == GS_ERR_LIMIT && clean_refusal(rc_below, g, &st_below) &&
			   rc_at == GS_OK && h != NULL, file, what);
		gs_forest_free(g);
		gs_forest_free(h);
	}
	free(img);
	gs_model_free(m);
}

/* Every allocation of a read failing in turn: GS_ERR_NOMEM, nothing left. */
static void
test_nomem(const char *file)
{
	char		path[512],
				what[200];
	GsStatus	st;
	GsModel    *m;
	unsigned char *img;
	size_t		len;
	TestAlloc	t = {0, 0, 0, 0, 0};
	GsAllocator a = allocator_of(&t);
	GsForest   *g = NULL;
	long		n,
				bad = 0;

	snprintf(path, sizeof(path), FIXTURES "/models/%s", file);
	m = load_model(path, &gs_malloc_allocator, &st);
	if (m == NULL || m->forest == NULL)
	{
		gs_tap(0, file, "loads as a tree ensemble");
		gs_model_free(m);
		return;
	}
	img = image_of(m->forest, &len, 0, NULL);
	read_copy(img, len, NULL, &a, &g, &st);
	gs_forest_free(g);
	n = t.n_alloc;
	for (long k = 1; k <= n; k++)
	{
		GsCode		rc;

		t.n_alloc = 0;
		t.live = 0;
		t.fail_at = k;
		g = NULL;
		rc = read_copy(img, len, NULL, &a, &g, &st);
		if (rc != GS_ERR_NOMEM || !clean_refusal(rc, g, &st) || t.live != 0)
		{
			bad++;
			gs_forest_free(g);
		}
	}
	snprintf(what, sizeof(what),
			 "each of the read's %ld allocations failing gives GS_ERR_NOMEM and frees all (%ld not)",
			 n, bad);
	gs_tap(bad == 0 && n >= 7, file, what);
	free(img);
	gs_model_free(m);
}

/*
 * An image whose header claims 2^30 - 1 features (pg_gpuscore.max_features
 * allows that many) but holds the names of a few: refused as invalid, and
 * without first asking for memory in proportion to the claim (the names
 * region holds at least one byte per name).
 */
static void
test_huge_feature_count(void)
{
	char		what[700];
	GsStatus	st;
	GsModel    *m = load_model(FIXTURES "/models/lgb_tiny.txt", &gs_malloc_allocator, &st);
	TestAlloc	t = {0, 0, 0, 0, 0};
	GsAllocator a = allocator_of(&t);
	GsLimits	lim = gs_default_limits;
	GsForest   *g = NULL;
	unsigned char *img;
	size_t		len;
	uint32_t	u,
				huge = 0x3FFFFFFF;
	GsCode		rc;

	if (m == NULL || m->forest == NULL || m->forest->feature_names == NULL)
	{
		gs_tap(0, "lgb_tiny.txt", "loads as a tree ensemble with feature names");
		gs_model_free(m);
		return;
	}
	img = image_of(m->forest, &len, 0, NULL);
	/* n_features: the fifth 32-bit field after the magic (forest_image.c) */
	memcpy(&u, img + 24, 4);
	if (u != (uint32_t) m->forest->n_features)
	{
		gs_tap(0, "huge feature count", "n_features found at byte 24 of the image");
		free(img);
		gs_model_free(m);
		return;
	}
	memcpy(img + 24, &huge, 4);
	lim.max_features = (int32_t) huge;
	rc = read_copy(img, len, &lim, &a, &g, &st);
	snprintf(what, sizeof(what),
			 "2^30-1 features claimed, %d named: refused as invalid (%.200s%s%.200s), largest allocation %zu bytes",
			 m->forest->n_features, st.msg, st.detail[0] ? ": " : "", st.detail, t.largest);
	gs_tap(rc == GS_ERR_INVALID_MODEL && g == NULL && t.live == 0 &&
		   t.largest < (size_t) 1024 * 1024, "huge feature count", what);
	gs_forest_free(g);
	free(img);
	gs_model_free(m);
}

/* ---- forests broken in memory ---- */

typedef enum Corruption
{
	C_CHILD_OUT_OF_RANGE,
	C_CHILD_HUGE,
	C_CHILD_BEFORE_PARENT,
	C_NODE_TWICE,
	C_UNREACHED_NODES,
	C_FEATURE_OUT_OF_RANGE,
	C_FEATURE_MAX,
	C_NAN_LEAF,
	C_INF_LEAF,
	C_NAN_THRESHOLD,
	C_LEAF_SPLIT_BITS,
	C_GROUP_TOO_LARGE,
	C_GROUP_NEGATIVE,
	C_TREE_DEPTH_LOW,
	C_TREE_DEPTH_HIGH,
	C_MAX_DEPTH,
	C_OFFSETS_EQUAL,
	C_OFFSET_FIRST,
	C_OUTPUTS,
	C_BASE_NAN,
	C_OBJECTIVE_UNTERMINATED,
	C_KINDS_CLEARED,
	C_KINDS_EXTRA,
	C_N_CAT_SPLITS,
	C_CAT_SET_INDEX,
	C_CAT_SET_WORDS,
	C_CAT_AND_EQUAL,
	C_NAME_NOT_UTF8,
	C_LEAF_LO_NAN,
	C_LEAF_LO_LARGE,
	C_LEAF_LO_ON_SPLIT,
	C_LIN_FEATURE,
	C_LIN_COEF_NAN,
	C_LIN_CONST_INF,
	C_LIN_CONST_ON_SPLIT,
	C_LIN_TERMS_ON_SPLIT,
	C_LIN_START_END,
	C_SYM_LEVEL,
	C_SYM_CLAIMED
} Corruption;

/* Index (in nodes) of the first split node with a split child; -1 if none. */
static int64_t
split_with_split_child(const GsForest *f, int32_t *tree, int64_t *off)
{
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		o = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

		for (int64_t i = o; i < end; i++)
		{
			GsNode		n = f->nodes[i];

			if (!(n.info & GS_NODE_LEAF) && !(f->nodes[o + n.left].info & GS_NODE_LEAF))
			{
				*tree = t;
				*off = o;
				return i;
			}
		}
	}
	return -1;
}

/* Index of the first node whose flags satisfy (info & mask) == want; -1 if none. */
static int64_t
find_node(const GsForest *f, uint32_t mask, uint32_t want)
{
	for (int64_t i = 0; i < f->n_nodes; i++)
		if ((f->nodes[i].info & mask) == want)
			return i;
	return -1;
}

/* Apply corruption c to f; 0 when f has no place for it. */
static int
corrupt(GsForest *f, Corruption c)
{
	int32_t		t;
	int64_t		off,
				i,
				j;

	switch (c)
	{
		case C_CHILD_OUT_OF_RANGE:
		case C_CHILD_HUGE:
		case C_CHILD_BEFORE_PARENT:
			if ((i = split_with_split_child(f, &t, &off)) < 0)
				return 0;
			{
				int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

				f->nodes[i].left = c == C_CHILD_OUT_OF_RANGE ? (uint32_t) (end - off - 1) :
					c == C_CHILD_HUGE ? UINT32_MAX : (uint32_t) (i - off);
			}
			return 1;
		case C_NODE_TWICE:

			/*
			 * Split nodes p < q of one tree with q before p's children: q
			 * takes p's children (reached twice; q's own, never).
			 */
			for (t = 0; t < f->n_trees; t++)
			{
				int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

				off = f->tree_offset[t];
				for (i = off; i < end; i++)
					for (j = i + 1; j < end && j < off + (int64_t) f->nodes[i].left; j++)
						if (!(f->nodes[i].info & GS_NODE_LEAF) && !(f->nodes[j].info & GS_NODE_LEAF))
						{
							f->nodes[j].left = f->nodes[i].left;
							return 1;
						}
			}
			return 0;
		case C_UNREACHED_NODES:
			/* a split node made a leaf, its subtree left in place */
			if ((i = split_with_split_child(f, &t, &off)) < 0)
				return 0;
			f->nodes[i].info = GS_NODE_LEAF;
			f->nodes[i].value = 0.5f;
			f->nodes[i].left = 0;
			return 1;
		case C_FEATURE_OUT_OF_RANGE:
		case C_FEATURE_MAX:
			if ((i = find_node(f, GS_NODE_LEAF, 0)) < 0)
				return 0;
			f->nodes[i].info = (f->nodes[i].info & ~GS_NODE_FEATURE_MASK) |
				(c == C_FEATURE_MAX ? GS_NODE_FEATURE_MASK : (uint32_t) f->n_features);
			return 1;
		case C_NAN_LEAF:
		case C_INF_LEAF:
			if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
				return 0;
			f->nodes[i].value = c == C_NAN_LEAF ? NAN : -INFINITY;
			return 1;
		case C_NAN_THRESHOLD:
			if ((i = find_node(f, GS_NODE_LEAF | GS_NODE_CATEGORICAL, 0)) < 0)
				return 0;
			f->nodes[i].value = NAN;
			return 1;
		case C_LEAF_SPLIT_BITS:
			if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
				return 0;
			f->nodes[i].info |= 1;
			return 1;
		case C_GROUP_TOO_LARGE:
			f->tree_group[f->n_trees - 1] = f->n_groups;
			return 1;
		case C_GROUP_NEGATIVE:
			f->tree_group[0] = -1;
			return 1;
		case C_TREE_DEPTH_LOW:
			for (t = 0; t < f->n_trees; t++)
				if (f->tree_depth[t] > 0)
				{
					f->tree_depth[t]--;
					return 1;
				}
			return 0;
		case C_TREE_DEPTH_HIGH:
			/* a tree shallower than the forest: max_depth stays right */
			for (t = 0; t < f->n_trees; t++)
				if (f->tree_depth[t] < f->max_depth)
				{
					f->tree_depth[t]++;
					return 1;
				}
			return 0;
		case C_MAX_DEPTH:
			f->max_depth++;
			return 1;
		case C_OFFSETS_EQUAL:
			if (f->n_trees < 2)
				return 0;
			f->tree_offset[1] = f->tree_offset[0];
			return 1;
		case C_OFFSET_FIRST:
			f->tree_offset[0] = 1;
			return 1;
		case C_OUTPUTS:
			f->n_outputs++;
			return 1;
		case C_BASE_NAN:
			f->base_margin[0] = NAN;
			return 1;
		case C_OBJECTIVE_UNTERMINATED:
			memset(f->objective, 'x', sizeof(f->objective));
			return 1;
		case C_KINDS_CLEARED:
			if (f->split_kinds == 0)
				return 0;
			f->split_kinds = 0;
			return 1;
		case C_KINDS_EXTRA:
			if (f->split_kinds & GS_NODE_CATEGORICAL)
				return 0;
			f->split_kinds |= GS_NODE_CATEGORICAL;
			return 1;
		case C_N_CAT_SPLITS:
			if (f->n_cat_splits == 0)
				return 0;
			f->n_cat_splits--;
			return 1;
		case C_CAT_SET_INDEX:
		case C_CAT_SET_WORDS:
		case C_CAT_AND_EQUAL:
			if ((i = find_node(f, GS_NODE_LEAF | GS_NODE_CATEGORICAL, GS_NODE_CATEGORICAL)) < 0)
				return 0;
			if (c == C_CAT_SET_INDEX)
			{
				uint32_t	at = (uint32_t) f->n_cat_words;

				memcpy(&f->nodes[i].value, &at, sizeof(at));
			}
			else if (c == C_CAT_SET_WORDS)
			{
				uint32_t	at;

				memcpy(&at, &f->nodes[i].value, sizeof(at));
				f->cat_words[at] = (f->cat_words[at] & ~GS_CAT_WORDS_MASK) |
					(uint32_t) (f->n_cat_words - at);
			}
			else
			{
				f->nodes[i].info |= GS_NODE_EQUAL;
				f->split_kinds |= GS_NODE_EQUAL;
			}
			return 1;
		case C_LEAF_LO_NAN:
		case C_LEAF_LO_LARGE:
		case C_LEAF_LO_ON_SPLIT:
			if (f->leaf_lo == NULL)
				return 0;
			if (c == C_LEAF_LO_ON_SPLIT)
			{
				if ((i = find_node(f, GS_NODE_LEAF, 0)) < 0)
					return 0;
				f->leaf_lo[i] = 1e-3f;
			}
			else
			{
				if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
					return 0;
				/* a hundredth of the leaf: no rounding leaves that much */
				f->leaf_lo[i] = c == C_LEAF_LO_NAN ? NAN : f->nodes[i].value * 0.01f + 1.0f;
			}
			return 1;
		case C_LIN_FEATURE:
		case C_LIN_COEF_NAN:
			if (f->linear == NULL || f->linear->n_terms == 0)
				return 0;
			if (c == C_LIN_FEATURE)
				f->linear->feature[f->linear->n_terms - 1] = f->n_features;
			else
				f->linear->coef[0] = NAN;
			return 1;
		case C_LIN_CONST_INF:
		case C_LIN_CONST_ON_SPLIT:
		case C_LIN_TERMS_ON_SPLIT:
			if (f->linear == NULL)
				return 0;
			if (c == C_LIN_CONST_INF)
			{
				if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
					return 0;
				f->linear->constant[i] = INFINITY;
				return 1;
			}
			if ((i = find_node(f, GS_NODE_LEAF, 0)) < 0)
				return 0;
			if (c == C_LIN_CONST_ON_SPLIT)
			{
				f->linear->constant[i] = 0.5;
				return 1;
			}
			/* the split takes the first term of the leaves after it */
			if (f->linear->start[i] == f->linear->start[f->n_nodes])
				return 0;
			for (int64_t k = i + 1; k < f->n_nodes; k++)
				if (f->linear->start[k] == f->linear->start[i])
					f->linear->start[k]++;
				else
					break;
			return 1;
		case C_LIN_START_END:
			if (f->linear == NULL)
				return 0;
			f->linear->start[f->n_nodes]--;
			return 1;
		case C_SYM_LEVEL:
			/* a symmetric tree's second node of level 1 gets another threshold */
			if (!gs_forest_symmetric(f) || f->tree_depth[0] < 1)
				return 0;
			f->nodes[2].value = nextafterf(f->nodes[2].value, INFINITY);
			return 1;
		case C_SYM_CLAIMED:
			/* a CatBoost forest of non-symmetric trees claims to be symmetric */
			if (f->format != GS_FORMAT_CATBOOST_JSON || gs_forest_symmetric(f))
				return 0;
			snprintf(f->booster, sizeof(f->booster), "symmetric");
			return 1;
		case C_NAME_NOT_UTF8:
			if (f->feature_names == NULL)
				return 0;
			for (int32_t k = 0; k < f->n_features; k++)
				if (f->feature_names[k][0] != '\0')
				{
					f->feature_names[k][0] = (char) 0xC0;	/* an overlong lead byte */
					return 1;
				}
			return 0;
	}
	return 0;
}

/*
 * Corruption c on a fresh load of file: gs_forest_check must say
 * GS_ERR_INVALID_MODEL, and so must the reading of the forest's image.
 */
static void
test_corruption(const char *file, Corruption c, const char *label)
{
	char		path[512],
				what[1200],
				check_msg[GS_MSG_LEN] = "",
				read_msg[GS_MSG_LEN + GS_MSG_LEN + 8] = "";
	GsStatus	st;
	GsModel    *m;
	GsForest   *f,
			   *g = NULL;
	GsCode		rc_before,
				rc_check,
				rc_read;
	unsigned char *img;
	size_t		len;

	snprintf(path, sizeof(path), FIXTURES "/models/%s", file);
	m = load_model(path, &gs_malloc_allocator, &st);
	if (m == NULL || m->forest == NULL)
	{
		gs_tap(0, label, "fixture loads as a tree ensemble");
		gs_model_free(m);
		return;
	}
	f = m->forest;
	rc_before = gs_forest_check(f, &no_caps, &gs_malloc_allocator, &st);
	if (!corrupt(f, c))
	{
		snprintf(what, sizeof(what), "%s has a place for the corruption", file);
		gs_tap(0, label, what);
		gs_model_free(m);
		return;
	}
	gs_status_clear(&st);
	rc_check = gs_forest_check(f, &no_caps, &gs_malloc_allocator, &st);
	snprintf(check_msg, sizeof(check_msg), "%s", st.msg);
	img = image_of(f, &len, 0, NULL);
	rc_read = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	if (rc_read != GS_OK)
		snprintf(read_msg, sizeof(read_msg), "%s%s%s", st.msg, st.detail[0] ? ": " : "", st.detail);
	snprintf(what, sizeof(what), "%s: gs_forest_check says \"%s\", reading its image \"%s\"",
			 file, rc_check == GS_OK ? "ok" : check_msg, rc_read == GS_OK ? "ok" : read_msg);
	gs_tap(rc_before == GS_OK && rc_check == GS_ERR_INVALID_MODEL && check_msg[0] != '\0' &&
		   rc_read == GS_ERR_INVALID_MODEL && g == NULL, label, what);
	gs_forest_free(g);
	free(img);
	gs_model_free(m);
}

static void
test_corruptions(void)
{
	/* fraud_binary: numerical; x3_cat_binary: categorical; lgb_tiny: names */
	static const struct
	{
		const char *file;
		Corruption	c;
		const char *label;
	}			cases[] = {
		{"fraud_binary.json", C_CHILD_OUT_OF_RANGE, "child index out of range"},
		{"fraud_binary.json", C_CHILD_HUGE, "child index 2^32-1"},
		{"fraud_binary.json", C_CHILD_BEFORE_PARENT, "child pointing at its parent"},
		{"fraud_binary.json", C_NODE_TWICE, "node reached twice"},
		{"fraud_binary.json", C_UNREACHED_NODES, "nodes no split reaches"},
		{"fraud_binary.json", C_FEATURE_OUT_OF_RANGE, "feature index n_features"},
		{"fraud_binary.json", C_FEATURE_MAX, "feature index 2^27-1"},
		{"fraud_binary.json", C_NAN_LEAF, "NaN leaf"},
		{"fraud_binary.json", C_INF_LEAF, "infinite leaf"},
		{"fraud_binary.json", C_NAN_THRESHOLD, "NaN threshold"},
		{"fraud_binary.json", C_LEAF_SPLIT_BITS, "leaf with a feature"},
		{"wine_softprob.json", C_GROUP_TOO_LARGE, "tree_group n_groups"},
		{"wine_softprob.json", C_GROUP_NEGATIVE, "tree_group -1"},
		{"fraud_binary.json", C_TREE_DEPTH_LOW, "tree_depth too small"},
		{"x2_lossguide.json", C_TREE_DEPTH_HIGH, "tree_depth too large"},
		{"fraud_binary.json", C_MAX_DEPTH, "max_depth above every tree's"},
		{"fraud_binary.json", C_OFFSETS_EQUAL, "an empty tree (equal offsets)"},
		{"fraud_binary.json", C_OFFSET_FIRST, "first tree offset not 0"},
		{"wine_softprob.json", C_OUTPUTS, "n_outputs not n_groups"},
		{"fraud_binary.json", C_BASE_NAN, "NaN base margin"},
		{"fraud_binary.json", C_OBJECTIVE_UNTERMINATED, "objective not terminated"},
		{"x3_cat_binary.json", C_KINDS_CLEARED, "split_kinds cleared with categorical nodes"},
		{"lgb_zero_missing.txt", C_KINDS_CLEARED, "split_kinds cleared with zero-as-missing nodes"},
		{"fraud_binary.json", C_KINDS_EXTRA, "split_kinds claims categorical nodes"},
		{"x3_cat_binary.json", C_N_CAT_SPLITS, "n_cat_splits one short"},
		{"x3_cat_binary.json", C_CAT_SET_INDEX, "category set index past cat_words"},
		{"x3_cat_binary.json", C_CAT_SET_WORDS, "category set longer than cat_words"},
		{"x3_cat_binary.json", C_CAT_AND_EQUAL, "node both categorical and equality"},
		{"lgb_tiny.txt", C_NAME_NOT_UTF8, "feature name not UTF-8"},
		{"lgb_fair_leaves.txt", C_LEAF_LO_NAN, "NaN low part of a double leaf"},
		{"lgb_fair_leaves.txt", C_LEAF_LO_LARGE, "low part of a double leaf above half an ulp"},
		{"lgb_fair_leaves.txt", C_LEAF_LO_ON_SPLIT, "low part on a split node"},
		{"lgb_linear_regression.txt", C_LIN_FEATURE, "linear leaf term on feature n_features"},
		{"lgb_linear_regression.txt", C_LIN_COEF_NAN, "NaN coefficient of a linear leaf"},
		{"lgb_linear_regression.txt", C_LIN_CONST_INF, "infinite constant of a linear leaf"},
		{"lgb_linear_regression.txt", C_LIN_CONST_ON_SPLIT, "linear leaf constant on a split node"},
		{"lgb_linear_regression.txt", C_LIN_TERMS_ON_SPLIT, "linear leaf term on a split node"},
		{"lgb_linear_regression.txt", C_LIN_START_END, "linear leaves' last start not the term count"},
		{"cb_nanmax.json", C_SYM_LEVEL, "a symmetric tree's level with two thresholds"},
		{"cb_depthwise.json", C_SYM_CLAIMED, "non-symmetric CatBoost trees claimed symmetric"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_corruption(cases[i].file, cases[i].c, cases[i].label);
}

/*
 * Image versions: an image of version 1 (the flags word then reserved,
 * 0) of an XGBoost model reads as the same forest; of a LightGBM model
 * (written before leaves were kept in double, so without leaf_lo) it is
 * refused, so that the model is parsed again.  A version-2 image whose
 * low parts do not match its format (a LightGBM forest without them, an
 * XGBoost forest with them) is refused too.
 */
static void
test_versions(void)
{
	GsStatus	st;
	GsModel    *x = load_model(FIXTURES "/models/fraud_binary.json", &gs_malloc_allocator, &st);
	GsModel    *l = load_model(FIXTURES "/models/lgb_fair_leaves.txt", &gs_malloc_allocator, &st);
	const uint32_t v1 = 1;
	unsigned char *img;
	size_t		len;
	GsForest   *g = NULL;
	GsCode		rc;
	char		why[GS_MSG_LEN + 128] = "";
	float	   *lo;

	if (!x || !x->forest || !l || !l->forest || !l->forest->leaf_lo || x->forest->leaf_lo)
	{
		gs_tap(0, "image versions", "fraud_binary.json and lgb_fair_leaves.txt load, only the latter with leaf_lo");
		gs_model_free(x);
		gs_model_free(l);
		return;
	}

	/* XGBoost, version 1: the same forest */
	img = image_of(x->forest, &len, 0, NULL);
	memcpy(img + 8, &v1, 4);
	rc = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	gs_tap(rc == GS_OK && g && forest_same(x->forest, g, why, sizeof(why)),
		   "image versions", "a version-1 image of an XGBoost model reads as the same forest");
	gs_forest_free(g);
	g = NULL;
	free(img);

	/* LightGBM without low parts (what version 1 wrote), as version 1 and as version 2 */
	lo = l->forest->leaf_lo;
	l->forest->leaf_lo = NULL;
	img = image_of(l->forest, &len, 0, NULL);
	l->forest->leaf_lo = lo;
	rc = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	snprintf(why, sizeof(why), "a version-2 LightGBM image without low parts refused (%s)", st.detail);
	gs_tap(rc == GS_ERR_INVALID_MODEL && g == NULL, "image versions", why);
	memcpy(img + 8, &v1, 4);
	rc = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	snprintf(why, sizeof(why), "a version-1 LightGBM image refused, to be parsed again (%s)", st.detail);
	gs_tap(rc == GS_ERR_INVALID_MODEL && g == NULL && strstr(st.detail, "LightGBM") != NULL,
		   "image versions", why);
	free(img);

	/* XGBoost with low parts */
	x->forest->leaf_lo = calloc((size_t) x->forest->n_nodes, sizeof(float));
	img = image_of(x->forest, &len, 0, NULL);
	free(x->forest->leaf_lo);
	x->forest->leaf_lo = NULL;
	rc = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	snprintf(why, sizeof(why), "an XGBoost image with low parts refused (%s)", st.detail);
	gs_tap(rc == GS_ERR_INVALID_MODEL && g == NULL, "image versions", why);
	free(img);
	gs_model_free(x);
	gs_model_free(l);
}

int
main(void)
{
	test_roundtrip();
	test_versions();
	test_more_groups_than_trees();
	test_damaged("fraud_binary.json");
	test_damaged("x3_cat_poisson.json");
	test_damaged("lgb_tiny.txt");
	test_damaged("lgb_zero_missing.txt");
	test_damaged("lgb_linear_rf.txt");
	test_caps("fraud_binary.json");
	test_caps("x3_cat_binary.json");
	test_caps("lgb_binary.txt");
	test_nomem("lgb_tiny.txt");
	test_nomem("x3_cat_poisson.json");
	test_huge_feature_count();
	test_corruptions();
	printf("1..%d\n", n_pass + n_fail);
	printf("image: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

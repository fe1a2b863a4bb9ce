/*
 * test_image.c
 *	  Unit tests of forest images (src/core/forest/forest_image.c): a validated
 *	  forest written as one flat byte image and read back, the reader's
 *	  refusal of damaged images and its caps (test_image_corrupt.c: forests
 *	  broken in memory).  Prints TAP lines and a final "N passed, N failed".
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
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "forest/forest_image.h"
#include "model.h"
#include "util/utf8_valid.h"
#include "../common/test_util.h"
#include "image_util.h"
#include "image_check.h"

#define FIXTURES "../fixtures"

/* No caps at all (0 means no cap). */
static const GsLimits no_caps;

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
	test_damaged("cb_cat_int.json");
	test_damaged("cb_cat_int_nopool.json");
	test_caps("fraud_binary.json");
	test_caps("x3_cat_binary.json");
	test_caps("lgb_binary.txt");
	test_nomem("lgb_tiny.txt");
	test_nomem("x3_cat_poisson.json");
	test_nomem("cb_cat_int.json");
	test_nomem("cb_cat_int_nopool.json");
	test_huge_feature_count();
	printf("1..%d\n", n_pass + n_fail);
	printf("image: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

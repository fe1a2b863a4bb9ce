/*
 * fuzz_common.h
 *	  Shared checks of the libFuzzer targets in tests/fuzz: the caps the
 *	  targets load with, the invariants a validated GsForest must hold (the
 *	  ones forest_eval.h and the engines trust), and scoring a loaded forest
 *	  through both CPU engine paths.
 *
 * A broken invariant or a disagreement calls fuzz_fail(), which prints what
 * broke and abort()s, so libFuzzer records the input as a crash.  Everything
 * here is static and used by one target per executable; all memory is
 * malloc'd and freed before returning.
 */
#ifndef GS_FUZZ_COMMON_H
#define GS_FUZZ_COMMON_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_eval.h"
#include "forest/forest_image.h"
#include "forest/forest_shap.h"
#include "../common/test_util.h"
#include "frontend/frontend.h"
#include "frontend/catboost/catboost.h"
#include "frontend/lightgbm/lightgbm.h"
#include "frontend/xgboost/xgboost.h"

/*
 * Caps the targets load with: smaller than the defaults so that one input
 * cannot make a run slow, but large enough for every seed model.
 */
static const GsLimits fuzz_limits = {
	.max_model_bytes = (size_t) 4 * 1024 * 1024,
	.max_trees = 4096,
	.max_nodes = 1 << 20,
	.max_depth = 64,
	.max_features = 1 << 16,
};

/* The most contributions (doubles) a row the checker explains: 32 MB. */
#define FUZZ_MAX_EXPLAIN_WIDTH ((size_t) 1 << 22)

/* Report a broken invariant and abort (libFuzzer saves the input). */
static inline void
fuzz_fail(const char *fmt,...)
__attribute__((format(printf, 1, 2), noreturn));

static inline void
fuzz_fail(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "FUZZ INVARIANT BROKEN: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/*
 * A failed load must leave *out NULL and give a known code and a non-empty,
 * NUL-terminated message.
 */
static inline void
fuzz_check_failure(GsCode rc, const GsForest *f, const GsStatus *st)
{
	if (f != NULL)
		fuzz_fail("load failed with code %d but returned a forest", (int) rc);
	if (rc != st->code)
		fuzz_fail("returned code %d but status says %d", (int) rc, (int) st->code);
	if (rc < GS_ERR_INVALID_MODEL || rc > GS_ERR_INTERNAL)
		fuzz_fail("unknown failure code %d", (int) rc);
	if (rc == GS_ERR_INTERNAL)
		fuzz_fail("internal error on hostile input: %s", st->msg);
	if (memchr(st->msg, '\0', sizeof(st->msg)) == NULL || st->msg[0] == '\0')
		fuzz_fail("failure without a message");
	if (memchr(st->detail, '\0', sizeof(st->detail)) == NULL)
		fuzz_fail("detail not terminated");
}

/*
 * The invariants of a validated forest (forest.h): nodes of each tree are
 * breadth-first, children adjacent and after their parent and inside the
 * tree, every node reached exactly once, feature indices in range, values
 * finite, the recorded depth the real depth, within the caps.
 */
static inline void
fuzz_check_forest(const GsForest *f, const GsLimits *lim)
{
	int32_t    *depth;
	int		   *refs;

	if (f->n_trees < 1 || f->n_groups < 1 || f->n_features < 1 || f->n_nodes < f->n_trees)
		fuzz_fail("bad shape: %d trees, %d groups, %d features, %lld nodes",
				  f->n_trees, f->n_groups, f->n_features, (long long) f->n_nodes);
	if (lim->max_trees > 0 && f->n_trees > lim->max_trees)
		fuzz_fail("%d trees over the cap", f->n_trees);
	if (lim->max_features > 0 && f->n_features > lim->max_features)
		fuzz_fail("%d features over the cap", f->n_features);
	if (lim->max_nodes > 0 && f->n_nodes > lim->max_nodes)
		fuzz_fail("%lld nodes over the cap", (long long) f->n_nodes);
	if (lim->max_depth > 0 && f->max_depth > lim->max_depth)
		fuzz_fail("depth %d over the cap", f->max_depth);
	if (f->n_outputs != (f->transform == GS_TRANSFORM_ARGMAX ? 1 : f->n_groups))
		fuzz_fail("%d outputs for %d groups", f->n_outputs, f->n_groups);
	if (memchr(f->objective, '\0', sizeof(f->objective)) == NULL ||
		memchr(f->booster, '\0', sizeof(f->booster)) == NULL ||
		memchr(f->saved_by, '\0', sizeof(f->saved_by)) == NULL)
		fuzz_fail("unterminated name");
	for (int g = 0; g < f->n_groups; g++)
		if (!isfinite(f->base_margin[g]))
			fuzz_fail("base margin of group %d is %g", g, (double) f->base_margin[g]);
	if (f->feature_names)
		for (int32_t i = 0; i < f->n_features; i++)
			if (f->feature_names[i] == NULL)
				fuzz_fail("feature name %d is NULL", i);

	depth = malloc(sizeof(int32_t) * (size_t) f->n_nodes);
	refs = malloc(sizeof(int) * (size_t) f->n_nodes);
	if (!depth || !refs)
		fuzz_fail("out of memory in the checker");
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		off = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;
		int64_t		size = end - off;
		const GsNode *tree = f->nodes + off;
		int32_t		deepest = 0;

		if (off < 0 || size < 1 || end > f->n_nodes)
			fuzz_fail("tree %d spans [%lld, %lld) of %lld nodes", t,
					  (long long) off, (long long) end, (long long) f->n_nodes);
		if (f->tree_group[t] < 0 || f->tree_group[t] >= f->n_groups)
			fuzz_fail("tree %d in group %d of %d", t, f->tree_group[t], f->n_groups);
		memset(refs, 0, sizeof(int) * (size_t) size);
		depth[0] = 0;
		for (int64_t i = 0; i < size; i++)
		{
			GsNode		n = tree[i];

			if (!(n.info & GS_NODE_LEAF) && (n.info & GS_NODE_CATEGORICAL))
			{
				/* value is, as bits, the index of the node's category set */
				uint32_t	at;
				int64_t		words;

				memcpy(&at, &n.value, sizeof(at));
				if (f->cat_words == NULL || (int64_t) at >= f->n_cat_words)
					fuzz_fail("tree %d node %lld: category set %u of %lld words", t,
							  (long long) i, at, (long long) f->n_cat_words);
				words = f->cat_words[at] & GS_CAT_WORDS_MASK;
				if (words > (int64_t) GS_CAT_MAX_WORDS || (int64_t) at + 1 + words > f->n_cat_words)
					fuzz_fail("tree %d node %lld: category set of %lld words at %u of %lld", t,
							  (long long) i, (long long) words, at, (long long) f->n_cat_words);
			}
			else if ((n.info & GS_NODE_LEAF) ? !isfinite(n.value) : isnan(n.value))
			{
				/*
				 * Leaves are finite; a split threshold may be +-inf (LightGBM
				 * and onnxmltools write "every present value one way" so, and
				 * it is exact for the finite inputs the glue admits), never NaN.
				 */
				fuzz_fail("tree %d node %lld has value %g", t, (long long) i, (double) n.value);
			}
			if (i > 0 && refs[i] != 1)
				fuzz_fail("tree %d node %lld is reached %d times", t, (long long) i, refs[i]);
			if (n.info & GS_NODE_LEAF)
			{
				if (n.info & (GS_NODE_FEATURE_MASK | GS_NODE_CATEGORICAL))
					fuzz_fail("tree %d leaf %lld has split bits", t, (long long) i);
				/* a double leaf's low part: what rounding it to float left */
				if (f->leaf_lo && !(fabs((double) f->leaf_lo[off + i]) <=
									fmax(fabs((double) n.value), 0x1p-126) * 0x1p-23))
					fuzz_fail("tree %d leaf %lld has low part %g for %g", t, (long long) i,
							  (double) f->leaf_lo[off + i], (double) n.value);
				if (depth[i] > deepest)
					deepest = depth[i];
				continue;
			}
			if ((int64_t) n.left <= i || (int64_t) n.left + 1 >= size)
				fuzz_fail("tree %d node %lld has children %u, %u of %lld nodes", t,
						  (long long) i, n.left, n.left + 1, (long long) size);
			if (f->leaf_lo && f->leaf_lo[off + i] != 0.0f)
				fuzz_fail("tree %d split %lld has a leaf's low part", t, (long long) i);
			if ((int64_t) (n.info & GS_NODE_FEATURE_MASK) >= (int64_t) f->n_features + f->n_derived)
				fuzz_fail("tree %d node %lld splits on feature %u of %d", t, (long long) i,
						  n.info & GS_NODE_FEATURE_MASK, f->n_features + f->n_derived);
			refs[n.left]++;
			refs[n.left + 1]++;
			depth[n.left] = depth[n.left + 1] = depth[i] + 1;
		}
		if (deepest != f->tree_depth[t])
			fuzz_fail("tree %d is %d deep but says %d", t, deepest, f->tree_depth[t]);
		if (deepest > f->max_depth)
			fuzz_fail("tree %d is deeper than the forest's max_depth", t);
	}
	/* derived features only for a CatBoost model's CTRs and one-hot values */
	if (f->cb_ctrs ? f->n_derived != f->cb_ctrs->n_onehot + f->cb_ctrs->n_ctr ||
		f->cb_ctrs->n_input != f->n_features : f->n_derived != 0)
		fuzz_fail("%d derived features, CTR tables %s", f->n_derived, f->cb_ctrs ? "set" : "none");
	if (f->linear)
	{
		/* linear leaves: terms in node order, on leaves only, features in range */
		const GsLinearLeaves *lin = f->linear;

		if (f->leaf_lo == NULL || lin->start[0] != 0 || (int64_t) lin->start[f->n_nodes] != lin->n_terms)
			fuzz_fail("linear leaves: %lld terms, the last start %u", (long long) lin->n_terms,
					  lin->start[f->n_nodes]);
		for (int64_t i = 0; i < f->n_nodes; i++)
			if (lin->start[i + 1] < lin->start[i] || !isfinite(lin->constant[i]) ||
				(!(f->nodes[i].info & GS_NODE_LEAF) &&
				 (lin->start[i + 1] != lin->start[i] || lin->constant[i] != 0.0)))
				fuzz_fail("linear leaves: node %lld has terms %u..%u, constant %g", (long long) i,
						  lin->start[i], lin->start[i + 1], lin->constant[i]);
		for (int64_t k = 0; k < lin->n_terms; k++)
			if (lin->feature[k] < 0 || lin->feature[k] >= f->n_features || !isfinite(lin->coef[k]))
				fuzz_fail("linear leaves: term %lld on feature %d of %d, coefficient %g", (long long) k,
						  lin->feature[k], f->n_features, lin->coef[k]);
	}
	free(depth);
	free(refs);
}

/* Outputs equal, NaN equal to NaN. */
static inline int
fuzz_same(float a, float b)
{
	return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof(float)) == 0;
}

/*
 * Score four rows (all missing, all zero, values taken from seed, extremes)
 * as one column-major batch and row by row; the two paths must agree
 * exactly, and a sigmoid output must lie in [0, 1].
 */
static inline void
fuzz_score_forest(const GsForest *f, const uint8_t *seed, size_t seed_len)
{
	enum
	{
	N_ROWS = 4};
	size_t		nf = (size_t) f->n_features,
				width = nf + (size_t) f->n_derived;	/* a CatBoost model's CTRs after */
	float	   *cols = malloc(sizeof(float) * width * N_ROWS);
	float	   *row = malloc(sizeof(float) * width);
	float	   *xe = malloc(sizeof(float) * width * N_ROWS);
	float	   *margin = malloc(sizeof(float) * (size_t) f->n_groups * N_ROWS);
	float	   *out = malloc(sizeof(float) * (size_t) f->n_outputs * N_ROWS);
	float	   *out1 = malloc(sizeof(float) * (size_t) f->n_outputs);
	float	   *m1 = malloc(sizeof(float) * (size_t) f->n_groups);

	if (!cols || !row || !xe || !margin || !out || !out1 || !m1)
		fuzz_fail("out of memory in the checker");
	for (size_t k = 0; k < nf; k++)
	{
		uint8_t		b = seed_len ? seed[k % seed_len] : 0;

		cols[k * N_ROWS + 0] = NAN;
		cols[k * N_ROWS + 1] = 0.0f;
		cols[k * N_ROWS + 2] = ((float) b - 128.0f) / 16.0f;
		cols[k * N_ROWS + 3] = (k & 1) ? -3.0e38f : 3.0e38f;
	}
	if (f->cb_ctrs)
	{
		/* the derived features, as gs_model_predict computes them */
		gs_cb_ctrs_expand(f->cb_ctrs, cols, N_ROWS, N_ROWS, xe);
		memcpy(cols, xe, sizeof(float) * width * N_ROWS);
	}
	gs_cpu_predict(f, cols, N_ROWS, N_ROWS, margin, out);
	for (size_t r = 0; r < N_ROWS; r++)
	{
		for (size_t k = 0; k < width; k++)
			row[k] = cols[k * N_ROWS + r];
		gs_cpu_predict_row(f, row, m1, out1);
		for (int o = 0; o < f->n_outputs; o++)
		{
			float		v = out[r * (size_t) f->n_outputs + (size_t) o];

			if (!fuzz_same(out1[o], v))
				fuzz_fail("row %zu output %d: batch %a, row by row %a", r, o,
						  (double) v, (double) out1[o]);
			if (f->transform == GS_TRANSFORM_SIGMOID && !(v >= 0.0f && v <= 1.0f) && !isnan(v))
				fuzz_fail("sigmoid output %g", (double) v);
		}
	}
	free(cols);
	free(row);
	free(xe);
	free(margin);
	free(out);
	free(out1);
	free(m1);
}

/* A tree-ensemble loader: gs_xgb_load, gs_lgbm_load, gs_forest_load. */
typedef GsCode (*FuzzForestLoader) (const unsigned char *bytes, size_t len,
									GsModelFormat fmt, const GsLimits *lim,
									const GsAllocator *alloc, GsForest **out,
									GsStatus *st);

/* Load bytes with loader as format fmt and check whatever comes back. */
/*
 * Explain a forest with covers (forest_shap.h) on rows like
 * fuzz_score_forest's: the covers the loader kept must pass gs_shap_new
 * (or be refused for depth, or a CatBoost leaf no row reached that has a
 * value), and where nothing overflows each output's contributions add up
 * to the row's margin (its leaves summed in double; not asked of CatBoost
 * MultiClass models, see below).
 */
static inline void
fuzz_explain_forest(const GsForest *f, const uint8_t *seed, size_t seed_len)
{
	size_t		nf = (size_t) f->n_features,
				width = (size_t) f->n_groups * (nf + 1);
	float	   *row;
	double	   *m1;
	double	   *phi;
	GsShap	   *s = NULL;
	GsStatus	st;
	GsCode		rc;
	bool		check_sums = true;

	/*
	 * The contributions take n_groups * (n_features + 1) doubles a row: a
	 * few bytes can declare 100000 classes over 65536 features (gigabytes,
	 * past libFuzzer's memory limit).  The glue refuses what palloc cannot
	 * hold (explain.c); the checker explains what fits its own budget.
	 */
	if (width > FUZZ_MAX_EXPLAIN_WIDTH)
		return;
	row = malloc(sizeof(float) * nf);
	m1 = malloc(sizeof(double) * (size_t) f->n_groups);
	phi = malloc(sizeof(double) * width);
	if (!row || !m1 || !phi)
		fuzz_fail("out of memory in the checker");
	rc = gs_shap_new(f, &gs_malloc_allocator, &s, &st);
	if (f->linear)
	{
		/* linear trees have no contributions (LightGBM has none either) */
		if (rc != GS_ERR_UNSUPPORTED || s != NULL)
			fuzz_fail("gs_shap_new did not refuse linear trees: %d %s", (int) rc, st.msg);
		free(row);
		free(m1);
		free(phi);
		return;
	}
	/*
	 * CatBoost: a leaf no training row reached that has a value is refused;
	 * a MultiClass model's contributions (CatBoost's) add up to its margin
	 * only when its classes' leaves sum to 0, as CatBoost trains them
	 */
	if (f->format == GS_FORMAT_CATBOOST_JSON && rc == GS_ERR_UNSUPPORTED &&
		strstr(st.msg, "no training row reached") != NULL)
		rc = GS_OK;
	if (rc != GS_OK && !(rc == GS_ERR_LIMIT && f->max_depth > GS_SHAP_MAX_DEPTH))
		fuzz_fail("gs_shap_new refused a forest with covers: %d %s", (int) rc, st.msg);
	if (f->format == GS_FORMAT_CATBOOST_JSON && f->n_groups > 1 &&
		(strcmp(f->objective, "MultiClass") == 0 || strcmp(f->objective, "none") == 0))
		check_sums = false;
	for (int r = 0; s && r < 3; r++)
	{
		for (size_t k = 0; k < nf; k++)
		{
			uint8_t		b = seed_len ? seed[(k + (size_t) r) % seed_len] : 0;

			row[k] = r == 0 ? NAN : r == 1 ? 0.0f : ((float) b - 128.0f) / 16.0f;
		}
		gs_shap_row(s, row, phi);
		gs_margins_double(f, row, m1);
		for (int g = 0; g < f->n_groups; g++)
		{
			const double *p = phi + (size_t) g * (nf + 1);
			double		sum = 0.0,
						mag = fabs((double) m1[g]) + 1.0;
			bool		finite = isfinite(m1[g]);

			for (size_t j = 0; j <= nf; j++)
			{
				sum += p[j];
				mag += fabs(p[j]);
				finite = finite && isfinite(p[j]);
			}
			if (check_sums && finite && isfinite(mag) && fabs(sum - (double) m1[g]) > 1e-4 * mag)
				fuzz_fail("row %d output %d: contributions add up to %.9g, the margin is %.9g",
						  r, g, sum, m1[g]);
		}
	}
	gs_shap_free(s);
	free(row);
	free(m1);
	free(phi);
}

/*
 * What a loader accepted is what gpu_load_model stores the image of: it
 * must pass gs_forest_check, and its image must read back as a forest
 * that images to the same bytes.
 */
static inline void
fuzz_image_roundtrip(const GsForest *f)
{
	size_t		len = gs_forest_image_size(f);
	unsigned char *img = malloc(len),
			   *again;
	GsForest   *g = NULL;
	GsStatus	st;

	if (!img)
		fuzz_fail("out of memory in the checker");
	if (gs_forest_check(f, &fuzz_limits, &gs_malloc_allocator, &st) != GS_OK)
		fuzz_fail("a loaded forest fails gs_forest_check: %s", st.msg);
	gs_forest_image_write(f, img);
	if (gs_forest_image_read(img, len, &fuzz_limits, &gs_malloc_allocator, &g, &st) != GS_OK)
		fuzz_fail("the image of a loaded forest is refused: %s (%s)", st.msg, st.detail);
	if (gs_forest_image_size(g) != len || !(again = malloc(len)))
		fuzz_fail("the forest read from an image images to %zu bytes, not %zu",
				  gs_forest_image_size(g), len);
	gs_forest_image_write(g, again);
	if (memcmp(img, again, len) != 0)
		fuzz_fail("the forest read from an image images to other bytes");
	free(again);
	free(img);
	gs_forest_free(g);
}

static inline void
fuzz_load_and_check(FuzzForestLoader loader, const uint8_t *data, size_t size,
					GsModelFormat fmt)
{
	GsForest   *f = NULL;
	GsStatus	st;
	GsCode		rc;

	/* half the inputs keep node covers and are explained too */
	GsLimits	lim = fuzz_limits;

	lim.keep_covers = (size & 1) != 0;
	rc = loader(data, size, fmt, &lim, &gs_malloc_allocator, &f, &st);
	if (rc != GS_OK)
	{
		fuzz_check_failure(rc, f, &st);
		return;
	}
	if (f == NULL)
		fuzz_fail("load succeeded without a forest");
	fuzz_check_forest(f, &fuzz_limits);
	fuzz_score_forest(f, data, size);
	fuzz_image_roundtrip(f);
	if (f->cover)
		fuzz_explain_forest(f, data, size);
	gs_forest_free(f);
}

#endif							/* GS_FUZZ_COMMON_H */

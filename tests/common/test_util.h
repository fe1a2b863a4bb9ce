/*
 * test_util.h
 *	  Helpers shared by the server-free test and benchmark programs (C and
 *	  CUDA C++): TAP results, reading fixture files, and deterministic
 *	  column-major batches drawn around a model's own thresholds.
 *
 * Header-only, static functions: include it once per program.  Memory from
 * gs_read_file is malloc'd and freed by the caller.
 */
#ifndef GS_TEST_UTIL_H
#define GS_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/forest/catboost_ctr.h"
#include "../../src/core/forest/forest.h"
#include "../../src/core/forest/forest_eval.h"
#include "frontend/frontend.h"
#include "frontend/catboost/catboost.h"
#include "frontend/lightgbm/lightgbm.h"
#include "frontend/xgboost/xgboost.h"

static int	n_pass __attribute__((unused)) = 0,
			n_fail __attribute__((unused)) = 0;

/* Record one TAP result: "ok N - label: what". */
static inline void
gs_tap(int ok, const char *label, const char *what)
{
	printf("%s %d - %s: %s\n", ok ? "ok" : "not ok", n_pass + n_fail + 1, label, what);
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
}

/* Read a whole file; NULL if it cannot be opened. */
static inline unsigned char *
gs_read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *buf;
	long		n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = (unsigned char *) malloc(n > 0 ? (size_t) n : 1);
	*len = fread(buf, 1, n > 0 ? (size_t) n : 0, f);
	fclose(f);
	return buf;
}

/*
 * Load dir/name as a forest if it is a tree-model fixture (.json, .ubj,
 * .model: XGBoost; .txt: LightGBM).  Returns 1 with *f set (gs_forest_free it), 0
 * when name is no such file or cannot be read, -1 when it does not load
 * (st says why).
 */
static inline int
gs_load_fixture_forest(const char *dir, const char *name, GsForest **f, GsStatus *st)
{
	size_t		len = strlen(name),
				blen;
	char		path[1024];
	unsigned char *b;
	GsCode		rc;

	*f = NULL;
	if (len < 5 || (strcmp(name + len - 5, ".json") != 0 && strcmp(name + len - 4, ".ubj") != 0 &&
					strcmp(name + len - 4, ".txt") != 0 && (len < 7 || strcmp(name + len - 6, ".model") != 0)))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	b = gs_read_file(path, &blen);
	if (!b)
		return 0;
	rc = gs_forest_load(b, blen, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, f, st);
	free(b);
	return rc == GS_OK ? 1 : -1;
}

/* Deterministic pseudo-random numbers in [0, 1) (xorshift). */
static unsigned long long gs_rng_state __attribute__((unused)) = 88172645463325252ULL;

static inline double
gs_rnd(void)
{
	gs_rng_state ^= gs_rng_state << 13;
	gs_rng_state ^= gs_rng_state >> 7;
	gs_rng_state ^= gs_rng_state << 17;
	return (double) (gs_rng_state >> 11) / 9007199254740992.0;
}

/*
 * Fill a column-major batch x[f * ld + r] of n rows (rows n..ld-1 NaN) with
 * values taken from the model's nodes (thresholds exactly, or nudged), 10%
 * missing; every feature a node reads (a CatBoost model's derived ones
 * too: f->n_features + f->n_derived columns).
 */
static inline void
gs_fill_batch(const GsForest *f, float *x, size_t n, size_t ld)
{
	for (int k = 0; k < f->n_features + f->n_derived; k++)
		for (size_t r = 0; r < ld; r++)
		{
			double		u = gs_rnd();
			float		v;

			if (r >= n || u < 0.1)
				v = NAN;
			else
			{
				const GsNode *nd = &f->nodes[(size_t) (gs_rnd() * (double) f->n_nodes)];

				v = (nd->info & GS_NODE_LEAF) ? (float) (gs_rnd() * 200 - 100) : nd->value;
				if (u > 0.5)
					v += (float) ((gs_rnd() - 0.5) * 0.01 * (fabsf(v) + 1));
			}
			x[(size_t) k * ld + r] = v;
		}
}

/* Rows of a fixture case and the reference library's outputs for them. */
typedef struct GsCases
{
	int			n_rows,
				nf,
				nout;
	float	   *x;				/* row-major, n_rows x nf */
	float	   *want;			/* row-major, n_rows x nout */
} GsCases;

/*
 * Read tests/fixtures/cases/NAME.csv (header-less "id,f_1..f_nf,o_1..o_nout"
 * per line, NaN as "NaN") into c; returns 0, or -1 when the file cannot be
 * opened.  The caller frees c->x and c->want.  (Also compiled as C++ by
 * nvcc for the GPU tests and benchmarks: casts on malloc.)
 */
static inline int
gs_read_cases(const char *path, int nf, int nout, GsCases *c)
{
	FILE	   *f = fopen(path, "r");
	static char line[1 << 16];
	int			cap = 256;

	if (!f)
		return -1;
	c->nf = nf;
	c->nout = nout;
	c->n_rows = 0;
	c->x = (float *) malloc(sizeof(float) * cap * nf);
	c->want = (float *) malloc(sizeof(float) * cap * nout);
	while (fgets(line, sizeof(line), f))
	{
		char	   *p = line,
				   *end;

		if (c->n_rows == cap)
		{
			cap *= 2;
			c->x = (float *) realloc(c->x, sizeof(float) * cap * nf);
			c->want = (float *) realloc(c->want, sizeof(float) * cap * nout);
		}
		strtod(p, &end);		/* id */
		p = end + 1;
		for (int k = 0; k < nf; k++)
		{
			c->x[c->n_rows * nf + k] = strtof(p, &end);
			p = end + 1;
		}
		for (int k = 0; k < nout; k++)
		{
			c->want[c->n_rows * nout + k] = strtof(p, &end);
			p = end + 1;
		}
		c->n_rows++;
	}
	fclose(f);
	return 0;
}

/* Distance in ulps (NaN == NaN is 0, NaN against a number or a sign change is huge). */
static inline long
gs_ulp_diff(float a, float b)
{
	int32_t		ia,
				ib;

	if (a == b || (isnan(a) && isnan(b)))
		return 0;
	if (isnan(a) || isnan(b) || (a < 0) != (b < 0))
		return 1L << 30;
	memcpy(&ia, &a, 4);
	memcpy(&ib, &b, 4);
	return labs((long) ia - (long) ib);
}

/*
 * A row's margins summed in double, tree by tree (the engines sum XGBoost
 * models in float, as XGBoost does): what explanations, computed in double,
 * must add up to.  x[f] is feature f; margin has n_groups entries.
 */
static inline void
gs_margins_double(const GsForest *f, const float *x, double *margin)
{
	float	   *xe = NULL;

	if (f->cb_ctrs)
	{
		/* a CatBoost model's categories: the row with its derived features */
		xe = (float *) malloc(sizeof(float) * ((size_t) f->n_features + (size_t) f->n_derived));
		gs_cb_ctrs_expand(f->cb_ctrs, x, 1, 1, xe);
		x = xe;
	}
	for (int32_t g = 0; g < f->n_groups; g++)
		margin[g] = (double) f->base_margin[g];
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		const GsNode *tree = f->nodes + f->tree_offset[t];
		uint32_t	leaf = gs_tree_leaf_index(tree, x, 1, f->cat_words);

		margin[f->tree_group[t]] += f->leaf_lo ?
			gs_leaf_double(tree, f->leaf_lo + f->tree_offset[t], leaf) : (double) tree[leaf].value;
	}
	free(xe);
}

#endif							/* GS_TEST_UTIL_H */

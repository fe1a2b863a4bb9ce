/*
 * core_util.h
 *	  Helpers of the scoring core's unit tests (test_core.c, test_core_api.c):
 *	  a TAP line, the largest error against a library's outputs, scoring
 *	  through CatBoost's CTR expansion when a forest has it, checking a
 *	  model's fixture cases in several batchings, and loading a model file.
 *	  Include after test_util.h.
 */
#ifndef GS_TEST_CORE_UTIL_H
#define GS_TEST_CORE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_complete.h"
#include "forest/forest_qs.h"
#include "forest/forest_eval.h"
#include "frontend/frontend.h"
#include "frontend/catboost/catboost.h"
#include "frontend/lightgbm/lightgbm.h"
#include "frontend/xgboost/xgboost.h"

#ifndef FIXTURES
#define FIXTURES "../fixtures"
#endif

/* Record one TAP result. */
static inline void
check(int ok, const char *fmt, const char *a, const char *b)
{
	printf("%s %d - ", ok ? "ok" : "not ok", n_pass + n_fail + 1);
	printf(fmt, a, b);
	printf("\n");
	if (ok)
		n_pass++;
	else
		n_fail++;
}

typedef GsCases Cases;

/* Largest error of outputs against expectations, relative above 1. */
static inline double
max_err(const float *got, const float *want, size_t n)
{
	double		worst = 0.0;

	for (size_t i = 0; i < n; i++)
	{
		double		d = fabs((double) got[i] - (double) want[i]) / fmax(1.0, fabs(want[i]));

		if (isnan(got[i]) || d > worst)
			worst = isnan(got[i]) ? INFINITY : d;
	}
	return worst;
}

/* Score cases with forest f in several batchings; check each against XGBoost. */
/*
 * gs_cpu_predict, after the derived features of a CatBoost model with
 * categorical features (what gs_model_predict does for it).
 */
static inline void
predict_cols(const GsForest *f, const float *col, size_t n, float *margin, float *out)
{
	float	   *xe;

	if (f->cb_ctrs == NULL)
	{
		gs_cpu_predict(f, col, n, n, margin, out);
		return;
	}
	xe = malloc(sizeof(float) * n * (size_t) (f->n_features + f->n_derived));
	gs_cb_ctrs_expand(f->cb_ctrs, col, n, n, xe);
	gs_cpu_predict(f, xe, n, n, margin, out);
	free(xe);
}

/* gs_cpu_predict_row, the same way. */
static inline void
predict_row(const GsForest *f, const float *row, float *margin, float *out)
{
	float	   *xe;

	if (f->cb_ctrs == NULL)
	{
		gs_cpu_predict_row(f, row, margin, out);
		return;
	}
	xe = malloc(sizeof(float) * (size_t) (f->n_features + f->n_derived));
	gs_cb_ctrs_expand(f->cb_ctrs, row, 1, 1, xe);
	gs_cpu_predict_row(f, xe, margin, out);
	free(xe);
}

/*
 * Whether the portable path of the CPU engine (gs_cpu_simd_set) gives the
 * same bits as out, the outputs of the n-row batch col on the path the CPU
 * chose (AVX-512 where it has it), and on a CPU with AVX-512 the AVX2 path
 * too; the CPU's path is restored.
 */
static inline int
portable_same(const GsForest *f, const float *col, size_t n, const float *out)
{
	float	   *m2 = malloc(sizeof(float) * n * f->n_groups);
	float	   *o2 = malloc(sizeof(float) * n * f->n_outputs);
	int			same;

	gs_cpu_simd_set(GS_CPU_SIMD_PORTABLE);
	predict_cols(f, col, n, m2, o2);
	gs_cpu_simd_set(GS_CPU_SIMD_AUTO);
	same = memcmp(o2, out, sizeof(float) * n * f->n_outputs) == 0;
	if (gs_cpu_simd() == GS_CPU_SIMD_AVX512)
	{
		/* and the AVX2 path, which AVX-512 CPUs take for some forests */
		gs_cpu_simd_set(GS_CPU_SIMD_AVX2);
		predict_cols(f, col, n, m2, o2);
		gs_cpu_simd_set(GS_CPU_SIMD_AUTO);
		same &= memcmp(o2, out, sizeof(float) * n * f->n_outputs) == 0;
	}
	free(m2);
	free(o2);
	return same;
}

/*
 * Whether the walk of forest f's nodes (its complete-tree form,
 * forest_complete.h, or its leaf bit vectors, forest_qs.h, put aside), on
 * the CPU's path and on the portable one, gives the margins and outputs of the n-row batch
 * col that the CPU's path gave (margin, out); for forests with such a
 * form, which the CPU's path takes instead of the nodes.  f is restored.
 */
static inline int
complete_same(const GsForest *f, const float *col, size_t n, const float *margin,
			  const float *out)
{
	GsForest   *mf = (GsForest *) f;
	GsForestComplete *keep = mf->complete;
	GsForestQs *keep_qs = mf->qs;
	float	   *m2 = malloc(sizeof(float) * n * f->n_groups);
	float	   *o2 = malloc(sizeof(float) * n * f->n_outputs);
	int			same = 1;

	for (int path = 0; path < 2; path++)
	{
		if (path == 0)
		{
			mf->complete = NULL;
			mf->qs = NULL;
		}
		else
			gs_cpu_simd_set(GS_CPU_SIMD_PORTABLE);
		predict_cols(f, col, n, m2, o2);
		same &= memcmp(m2, margin, sizeof(float) * n * f->n_groups) == 0 &&
			memcmp(o2, out, sizeof(float) * n * f->n_outputs) == 0;
	}
	mf->complete = keep;
	mf->qs = keep_qs;
	gs_cpu_simd_set(GS_CPU_SIMD_AUTO);
	free(m2);
	free(o2);
	return same;
}

static inline void
check_model(const char *label, const GsForest *f, const Cases *c, double tol)
{
	size_t		n = c->n_rows;
	float	   *col = malloc(sizeof(float) * n * c->nf);
	float	   *margin = malloc(sizeof(float) * n * f->n_groups);
	float	   *out = malloc(sizeof(float) * n * f->n_outputs);
	char		what[256];
	size_t		sizes[] = {1, 31, 33, 64, 65};
	float	   *rows = malloc(sizeof(float) * n * c->nf);

	check(f->n_features == c->nf && f->n_outputs == c->nout,
		  "%s: %s", label, "feature and output counts match xgboost");
	/* the rows as the glue hands them over: the model's missing values made NaN */
	memcpy(rows, c->x, sizeof(float) * n * c->nf);
	for (size_t r = 0; r < n; r++)
		gs_forest_mark_missing(f, rows + r * c->nf, 1, 1);

	/* one batch */
	for (size_t r = 0; r < n; r++)
		for (int k = 0; k < c->nf; k++)
			col[(size_t) k * n + r] = rows[r * c->nf + k];
	predict_cols(f, col, n, margin, out);
	snprintf(what, sizeof(what), "one batch of %zu rows within %g of the library (max error %.3g)",
			 n, tol, max_err(out, c->want, n * c->nout));
	check(max_err(out, c->want, n * c->nout) <= tol, "%s: %s", label, what);
	check(portable_same(f, col, n, out), "%s: %s", label,
		  gs_cpu_simd() == GS_CPU_SIMD_AVX512 ? "AVX-512, AVX2 and portable paths give the same bits" :
		  gs_cpu_simd() == GS_CPU_SIMD_AVX2 ? "AVX2 and portable paths give the same bits" :
		  "portable path (no AVX2 here) gives the same bits forced");
	if (f->complete)
		check(complete_same(f, col, n, margin, out), "%s: %s", label,
			  "complete trees, node walk and portable path give the same margins and outputs");
	if (f->qs)
		check(complete_same(f, col, n, margin, out), "%s: %s", label,
			  "leaf bit vectors, node walk and portable path give the same margins and outputs");

	/* odd batch sizes, exercising block tails */
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		size_t		bs = sizes[s];
		double		worst = 0.0;
		int			same = 1;

		for (size_t r0 = 0; r0 < n; r0 += bs)
		{
			size_t		m = r0 + bs < n ? bs : n - r0;

			for (size_t r = 0; r < m; r++)
				for (int k = 0; k < c->nf; k++)
					col[(size_t) k * m + r] = rows[(r0 + r) * c->nf + k];
			predict_cols(f, col, m, margin, out);
			worst = fmax(worst, max_err(out, c->want + r0 * c->nout, m * c->nout));
			same &= portable_same(f, col, m, out);
			if (f->complete || f->qs)
				same &= complete_same(f, col, m, margin, out);
		}
		snprintf(what, sizeof(what), "batches of %zu rows within %g", bs, tol);
		check(worst <= tol, "%s: %s", label, what);
		check(same, "%s: %s", label, "the same bits on the portable path in those batches");
	}

	/* row by row (the gpu_score path) */
	{
		double		worst = 0.0;

		for (size_t r = 0; r < n; r++)
		{
			predict_row(f, rows + r * c->nf, margin, out);
			worst = fmax(worst, max_err(out, c->want + r * c->nout, c->nout));
		}
		check(worst <= tol, "%s: %s", label, "row by row within the tolerance");
	}
	free(rows);
	free(col);
	free(margin);
	free(out);
}

/* Load one model file; returns NULL (and records a failure) on error. */
static inline GsForest *
load(const char *path, GsStatus *st)
{
	size_t		len;
	unsigned char *b = gs_read_file(path, &len);
	GsForest   *f = NULL;

	if (!b)
		return NULL;
	gs_forest_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, st);
	free(b);
	return f;
}

/* Load the file NAME.EXT of the fixture models. */
static inline GsForest *
load_fixture(const char *name, const char *ext, GsStatus *st)
{
	char		path[512];

	snprintf(path, sizeof(path), FIXTURES "/models/%s.%s", name, ext);
	return load(path, st);
}

#endif							/* GS_TEST_CORE_UTIL_H */

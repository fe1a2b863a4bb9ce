/*
 * bench_explain.c
 *	  Server-free benchmark of explanations (src/core/forest/forest_shap.c) against
 *	  XGBoost's own TreeSHAP on the same rows, side by side in one run.
 *
 * Usage: bench_explain MODEL.json ROWS.f32 N_ROWS [REPEATS]
 *
 *	 MODEL.json  an XGBoost model (JSON or UBJ), loaded with covers
 *	 ROWS.f32	 float32 rows, row-major, the model's feature count per row
 *				 (bench/make_models.py writes one)
 *	 N_ROWS		 rows to explain in each timed run
 *	 REPEATS	 timed runs of each (median reported; default 5)
 *
 * Timed, one thread each, after one warm-up run:
 *	 ours     gs_shap_row for each row, as gpu_explain calls it
 *	 xgboost  XGBoosterPredictFromDMatrix with "type": 2 (pred_contribs) on
 *			  a DMatrix of all rows (built before the timing; in-place
 *			  prediction has no contributions), the booster's nthread 1
 *	 score    gs_cpu_predict_row for each row (what gpu_score costs), for scale
 * Then every contribution of ours is compared with XGBoost's (relative to
 * the largest term of its row; exits 1 above 1e-4).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "frontend/frontend.h"
#include "forest/forest_shap.h"

#define BENCH_NAME "bench_explain"
#include "bench_util.h"

#define MAX_REPEATS 64

static void
xgb_check(int rc, const char *what)
{
	if (rc != 0)
		die("XGBoost %s failed: %s", what, XGBGetLastError());
}

int
main(int argc, char **argv)
{
	size_t		model_len,
				rows_len,
				n_rows;
	unsigned char *model_bytes;
	float	   *rows,
			   *out,
			   *margin;
	double	   *phi,
				ours[MAX_REPEATS],
				xgbt[MAX_REPEATS],
				score[MAX_REPEATS],
				worst = 0.0;
	int			repeats = 5,
				nf,
				width;
	GsLimits	lim = gs_default_limits;
	GsForest   *f = NULL;
	GsShap	   *s = NULL;
	GsStatus	st;
	BoosterHandle bst;
	DMatrixHandle dmat;
	int			xmaj,
				xmin,
				xpatch;
	const float *xres = NULL;
	static const char *config =
		"{\"type\": 2, \"training\": false, \"iteration_begin\": 0, "
		"\"iteration_end\": 0, \"strict_shape\": false}";

	if (argc != 4 && argc != 5)
		die("usage: bench_explain MODEL.json ROWS.f32 N_ROWS [REPEATS]");
	n_rows = (size_t) strtoull(argv[3], NULL, 10);
	if (argc == 5)
		repeats = atoi(argv[4]);
	if (n_rows < 1 || repeats < 1 || repeats > MAX_REPEATS)
		die("N_ROWS must be positive and REPEATS 1 to %d", MAX_REPEATS);
	setenv("OMP_NUM_THREADS", "1", 1);

	model_bytes = read_file(argv[1], 0, &model_len);
	lim.keep_covers = true;
	if (gs_forest_load(model_bytes, model_len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st) != GS_OK ||
		gs_shap_new(f, &gs_malloc_allocator, &s, &st) != GS_OK)
		die("%s: %s", argv[1], st.msg);
	nf = f->n_features;
	width = f->n_groups * (nf + 1);
	rows = (float *) read_file(argv[2], n_rows * (size_t) nf * sizeof(float), &rows_len);
	phi = xmalloc(sizeof(double) * n_rows * (size_t) width);
	out = xmalloc(sizeof(float) * (size_t) f->n_outputs);
	margin = xmalloc(sizeof(float) * (size_t) f->n_groups);

	XGBoostVersion(&xmaj, &xmin, &xpatch);
	xgb_check(XGBoosterCreate(NULL, 0, &bst), "create booster");
	xgb_check(XGBoosterSetParam(bst, "nthread", "1"), "set nthread");
	xgb_check(XGBoosterLoadModelFromBuffer(bst, model_bytes, (bst_ulong) model_len), "load model");
	/* the DMatrix is built once, outside the timing: only the contributions are timed */
	xgb_check(XGDMatrixCreateFromMat(rows, (bst_ulong) n_rows, (bst_ulong) nf, NAN, &dmat), "create DMatrix");

	for (int k = -1; k < repeats; k++)
	{
		double		t0,
					t1,
					t2,
					t3;
		const bst_ulong *shape;
		bst_ulong	dim,
					total = 1;

		t0 = now_s();
		for (size_t r = 0; r < n_rows; r++)
			gs_shap_row(s, rows + r * (size_t) nf, phi + r * (size_t) width);
		t1 = now_s();
		xgb_check(XGBoosterPredictFromDMatrix(bst, dmat, config, &shape, &dim, &xres),
				  "predict contributions");
		t2 = now_s();
		for (bst_ulong d = 0; d < dim; d++)
			total *= shape[d];
		if (total != (bst_ulong) n_rows * (bst_ulong) width)
			die("XGBoost returned %llu contributions, expected %zu x %d",
				(unsigned long long) total, n_rows, width);
		for (size_t r = 0; r < n_rows; r++)
			gs_cpu_predict_row(f, rows + r * (size_t) nf, margin, out);
		t3 = now_s();
		if (k >= 0)
		{
			ours[k] = t1 - t0;
			xgbt[k] = t2 - t1;
			score[k] = t3 - t2;
		}
	}
	for (size_t r = 0; r < n_rows; r++)
		for (int g = 0; g < f->n_groups; g++)
		{
			const double *p = phi + r * (size_t) width + (size_t) g * (nf + 1);
			const float *x = xres + r * (size_t) width + (size_t) g * (nf + 1);
			double		scale = 1.0;

			for (int j = 0; j <= nf; j++)
				scale = fmax(scale, fabs(x[j]));
			for (int j = 0; j <= nf; j++)
				worst = fmax(worst, fabs(p[j] - x[j]) / scale);
		}

	{
		double		mo = median(ours, repeats),
					mx = median(xgbt, repeats),
					ms = median(score, repeats);

		printf("model: %s, %d trees, %lld nodes, max depth %d, %d features, %d output(s); "
			   "%zu rows; XGBoost %d.%d.%d; 1 thread each; median of %d runs after 1 warm-up\n\n",
			   argv[1], f->n_trees, (long long) f->n_nodes, f->max_depth, nf, f->n_groups,
			   n_rows, xmaj, xmin, xpatch, repeats);
		printf("| what | median s | rows/s | us/row | vs XGBoost |\n|---|---:|---:|---:|---:|\n");
		printf("| ours: gs_shap_row (gpu_explain) | %.4f | %.0f | %.1f | %.2fx |\n",
			   mo, n_rows / mo, 1e6 * mo / n_rows, mx / mo);
		printf("| XGBoost PredictFromDMatrix pred_contribs (nthread 1) | %.4f | %.0f | %.1f | 1.00x |\n",
			   mx, n_rows / mx, 1e6 * mx / n_rows);
		printf("| ours: scoring the same rows (gs_cpu_predict_row) | %.4f | %.0f | %.2f | |\n",
			   ms, n_rows / ms, 1e6 * ms / n_rows);
		printf("\n\"vs XGBoost\" is XGBoost's time / ours (>1 means ours is faster). "
			   "Contributions compared on %zu x %d values: worst difference %.2g of the row's largest term.\n",
			   n_rows, width, worst);
	}
	XGDMatrixFree(dmat);
	XGBoosterFree(bst);
	gs_shap_free(s);
	gs_forest_free(f);
	free(model_bytes);
	free(rows);
	free(phi);
	free(out);
	free(margin);
	return worst > 1e-4;
}

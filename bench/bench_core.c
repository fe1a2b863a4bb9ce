/*
 * bench_core.c
 *	  Server-free benchmark of pg_gpuscore's CPU engine against XGBoost's own
 *	  predictor, one thread each, on the same rows.
 *
 * Usage: bench_core MODEL.json ROWS.f32 N_ROWS [REPEATS=5]
 *
 *	 MODEL.json  an XGBoost model (JSON or UBJ), loaded with gs_forest_load
 *	 ROWS.f32	 float32 rows, row-major, little-endian, n_features per row,
 *				 NaN = missing (bench/make_models.py writes one)
 *	 N_ROWS		 how many rows of the file to score
 *	 REPEATS	 timed runs of each predictor (median reported)
 *
 * Both predictors score the rows in chunks of 65,536 rows (the default
 * pg_gpuscore.batch_size):
 *
 *	 ours	  each chunk is transposed into a column-major float32 batch (the
 *			  layout gpu_score_query builds; ld = rows in the chunk) and
 *			  scored with gs_cpu_predict.  The transpose is timed on its own
 *			  and reported, and "ours" rows/s is shown with and without it.
 *	 xgboost  XGBoosterPredictFromDense on the row-major chunk, with the
 *			  booster's nthread set to 1.
 *
 * Each predictor runs once as a warm-up, then REPEATS times, alternating
 * ours/xgboost so that drifts of the machine hit both alike.  The outputs of
 * the two are compared; a difference above 1e-6 makes the program fail.
 * Results are printed as Markdown tables on stdout.  Build with
 * "make bench/bench_core" (same -O2 as the extension).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xgboost/c_api.h>

#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "frontend/frontend.h"

#define BENCH_NAME "bench_core"
#include "bench_util.h"

#define CHUNK_ROWS		65536
#define MAX_REPEATS		101
#define MAX_ABS_DIFF	1e-6

/* What one timed run of "ours" measured. */
typedef struct OursRun
{
	double		convert_s;		/* row-major -> column-major transposes */
	double		predict_s;		/* gs_cpu_predict calls */
	double		cpu_s;			/* process CPU time over the whole run */
} OursRun;

/* What one timed run of XGBoost's predictor measured. */
typedef struct XgbRun
{
	double		predict_s;		/* XGBoosterPredictFromDense calls + copy-out */
	double		cpu_s;			/* process CPU time over the whole run */
} XgbRun;

/* Exit with XGBoost's last error if an XGBoost call failed. */
static void
xgb_check(int rc, const char *what)
{
	if (rc != 0)
		die("XGBoost %s failed: %s", what, XGBGetLastError());
}

/*
 * One pass of our engine over all rows: per chunk, transpose the row-major
 * rows into the column-major batch xcol and score it into out (n_outputs per
 * row).  margin is scratch for one chunk.
 */
static OursRun
run_ours(const GsForest *f, const float *rows, size_t n_rows, float *xcol,
		 float *margin, float *out)
{
	const size_t nf = (size_t) f->n_features;
	OursRun		res = {0, 0, 0};
	double		cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

	for (size_t r0 = 0; r0 < n_rows; r0 += CHUNK_ROWS)
	{
		size_t		n = n_rows - r0 < CHUNK_ROWS ? n_rows - r0 : CHUNK_ROWS;
		const float *src = rows + r0 * nf;
		double		t0,
					t1,
					t2;

		t0 = now_s();
		gs_rows_to_columns(src, n, (int) nf, xcol, n);
		t1 = now_s();
		gs_cpu_predict(f, xcol, n, n, margin, out + r0 * (size_t) f->n_outputs);
		t2 = now_s();
		res.convert_s += t1 - t0;
		res.predict_s += t2 - t1;
	}
	res.cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	return res;
}

/*
 * One pass of XGBoost's predictor over all rows, chunk by chunk, copying
 * each chunk's outputs (owned by the booster) into out.
 */
static XgbRun
run_xgb(BoosterHandle bst, const float *rows, size_t n_rows, int nf,
		int n_outputs, float *out)
{
	static const char *config =
		"{\"type\": 0, \"training\": false, \"iteration_begin\": 0, "
		"\"iteration_end\": 0, \"strict_shape\": false, \"cache_id\": 0, "
		"\"missing\": NaN}";
	XgbRun		res = {0, 0};
	double		cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	double		t0 = now_s();

	for (size_t r0 = 0; r0 < n_rows; r0 += CHUNK_ROWS)
	{
		size_t		n = n_rows - r0 < CHUNK_ROWS ? n_rows - r0 : CHUNK_ROWS;
		char		iface[256];
		const bst_ulong *shape;
		bst_ulong	dim,
					total = 1;
		const float *res_ptr;

		snprintf(iface, sizeof(iface),
				 "{\"data\": [%" PRIuPTR ", false], \"shape\": [%zu, %d], "
				 "\"typestr\": \"<f4\", \"version\": 3}",
				 (uintptr_t) (rows + r0 * (size_t) nf), n, nf);
		xgb_check(XGBoosterPredictFromDense(bst, iface, config, NULL,
											&shape, &dim, &res_ptr),
				  "predict");
		for (bst_ulong d = 0; d < dim; d++)
			total *= shape[d];
		if (total != (bst_ulong) n * (bst_ulong) n_outputs)
			die("XGBoost returned an unexpected number of outputs (shape)");
		memcpy(out + r0 * (size_t) n_outputs, res_ptr, sizeof(float) * n * (size_t) n_outputs);
	}
	res.predict_s = now_s() - t0;
	res.cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	return res;
}

/* Largest |a[i] - b[i]| over n values; a NaN on one side only counts as inf. */
static double
max_abs_diff(const float *a, const float *b, size_t n)
{
	double		worst = 0.0;

	for (size_t i = 0; i < n; i++)
	{
		double		d;

		if (isnan(a[i]) || isnan(b[i]))
			d = isnan(a[i]) && isnan(b[i]) ? 0.0 : INFINITY;
		else
			d = fabs((double) a[i] - (double) b[i]);
		if (d > worst)
			worst = d;
	}
	return worst;
}

/* Parse a positive integer argument or exit. */
static long
parse_count(const char *s, const char *what)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0)
		die("%s must be a positive integer", what);
	return v;
}

/* Load the model and rows, run both predictors, print the tables. */
int
main(int argc, char **argv)
{
	const char *model_path,
			   *rows_path;
	size_t		n_rows,
				model_len,
				rows_len;
	int			repeats = 5;
	unsigned char *model_bytes;
	float	   *rows,
			   *xcol,
			   *margin,
			   *ours_out,
			   *xgb_out;
	GsForest   *f = NULL;
	GsStatus	st;
	BoosterHandle bst;
	int			nf,
				nout,
				xmaj,
				xmin,
				xpatch;
	double		conv[MAX_REPEATS],
				pred[MAX_REPEATS],
				total[MAX_REPEATS],
				xgbt[MAX_REPEATS],
				ours_cpu[MAX_REPEATS],
				xgb_cpu[MAX_REPEATS];
	double		m_conv,
				m_pred,
				m_total,
				m_xgb,
				diff;

	if (argc < 4 || argc > 5)
	{
		fprintf(stderr, "usage: bench_core MODEL.json ROWS.f32 N_ROWS [REPEATS=5]\n");
		return 2;
	}
	model_path = argv[1];
	rows_path = argv[2];
	n_rows = (size_t) parse_count(argv[3], "N_ROWS");
	if (argc == 5)
		repeats = (int) parse_count(argv[4], "REPEATS");
	if (repeats > MAX_REPEATS)
		die("REPEATS must be at most %d", MAX_REPEATS);

	/*
	 * Belt and braces: XGBoost's thread count comes from the booster's
	 * nthread parameter below; libgomp reads OMP_NUM_THREADS when it is
	 * loaded, so this mainly covers anything that consults it later.
	 */
	setenv("OMP_NUM_THREADS", "1", 1);

	/* our loader */
	model_bytes = read_file(model_path, 0, &model_len);
	if (gs_forest_load(model_bytes, model_len, GS_FORMAT_AUTO, &gs_default_limits,
					&gs_malloc_allocator, &f, &st) != GS_OK)
	{
		fprintf(stderr, "bench_core: gs_forest_load %s: %s%s%s\n", model_path, st.msg,
				st.detail[0] ? ": " : "", st.detail);
		return 1;
	}
	nf = f->n_features;
	nout = f->n_outputs;

	/* rows */
	rows = (float *) read_file(rows_path, n_rows * (size_t) nf * sizeof(float), &rows_len);

	/* XGBoost's predictor on the same model bytes */
	XGBoostVersion(&xmaj, &xmin, &xpatch);
	xgb_check(XGBoosterCreate(NULL, 0, &bst), "create booster");
	xgb_check(XGBoosterSetParam(bst, "nthread", "1"), "set nthread");
	xgb_check(XGBoosterLoadModelFromBuffer(bst, model_bytes, (bst_ulong) model_len),
			  "load model");

	xcol = xmalloc(sizeof(float) * CHUNK_ROWS * (size_t) nf);
	margin = xmalloc(sizeof(float) * CHUNK_ROWS * (size_t) f->n_groups);
	ours_out = xmalloc(sizeof(float) * n_rows * (size_t) nout);
	xgb_out = xmalloc(sizeof(float) * n_rows * (size_t) nout);

	/* warm-up, then alternate */
	run_ours(f, rows, n_rows, xcol, margin, ours_out);
	run_xgb(bst, rows, n_rows, nf, nout, xgb_out);
	for (int i = 0; i < repeats; i++)
	{
		OursRun		o = run_ours(f, rows, n_rows, xcol, margin, ours_out);
		XgbRun		x = run_xgb(bst, rows, n_rows, nf, nout, xgb_out);

		conv[i] = o.convert_s;
		pred[i] = o.predict_s;
		total[i] = o.convert_s + o.predict_s;
		ours_cpu[i] = o.cpu_s / total[i];
		xgbt[i] = x.predict_s;
		xgb_cpu[i] = x.cpu_s / x.predict_s;
	}

	diff = max_abs_diff(ours_out, xgb_out, n_rows * (size_t) nout);
	m_conv = median(conv, repeats);
	m_pred = median(pred, repeats);
	m_total = median(total, repeats);
	m_xgb = median(xgbt, repeats);

	printf("### bench_core: %s\n\n", model_path);
	printf("model: %s, %d trees, %" PRId64 " nodes, max depth %d, %d features, "
		   "%d output(s); %zu rows in chunks of %d; XGBoost %d.%d.%d; "
		   "1 thread each; median of %d runs after 1 warm-up\n\n",
		   f->objective, f->n_trees, f->n_nodes, f->max_depth, nf, nout,
		   n_rows, CHUNK_ROWS, xmaj, xmin, xpatch, repeats);
	printf("| predictor | median s | rows/s | vs XGBoost | CPU/wall |\n");
	printf("|---|---:|---:|---:|---:|\n");
	printf("| ours: transpose + gs_cpu_predict | %.4f | %.0f | %.2fx | %.2f |\n",
		   m_total, n_rows / m_total, m_xgb / m_total, median(ours_cpu, repeats));
	printf("| ours: gs_cpu_predict only | %.4f | %.0f | %.2fx | |\n",
		   m_pred, n_rows / m_pred, m_xgb / m_pred);
	printf("| ours: row->column transpose only | %.4f | %.0f | | |\n",
		   m_conv, n_rows / m_conv);
	printf("| XGBoost PredictFromDense (nthread 1) | %.4f | %.0f | 1.00x | %.2f |\n",
		   m_xgb, n_rows / m_xgb, median(xgb_cpu, repeats));
	printf("\n\"vs XGBoost\" is ours/XGBoost in rows/s (>1 means ours is faster). "
		   "The transpose takes %.1f%% of ours. Outputs compared on %zu values: "
		   "max abs diff %.3g (limit %.0e).\n\n",
		   100.0 * m_conv / m_total, n_rows * (size_t) nout, diff, MAX_ABS_DIFF);

	if (!(diff <= MAX_ABS_DIFF))
	{
		fprintf(stderr, "bench_core: FAILED: outputs of ours and XGBoost differ by %g (> %g)\n",
				diff, MAX_ABS_DIFF);
		return 1;
	}

	XGBoosterFree(bst);
	gs_forest_free(f);
	free(model_bytes);
	free(rows);
	free(xcol);
	free(margin);
	free(ours_out);
	free(xgb_out);
	return 0;
}

/*
 * bench_formats.c
 *	  Server-free benchmark of pg_gpuscore's loaders and CPU engine on one
 *	  model file of any format, for bench/bench_formats.sh, which runs the
 *	  format's own library on the same file and rows (bench_formats.py).
 *
 * Usage: bench_formats MODEL ROWS.f32 N_ROWS REF.f32 [REPEATS=5]
 *
 *	 MODEL		a model file (XGBoost JSON/UBJ, LightGBM text, ONNX), loaded
 *				with gs_model_load and format detection, as gpu_load_model
 *				does with format 'auto'
 *	 ROWS.f32	float32 rows, row-major, n_features per row, NaN = missing
 *	 N_ROWS		rows to score
 *	 REF.f32	the library's P(class 1) for those rows, to compare against
 *	 REPEATS	timed runs of loading and of scoring (medians reported)
 *
 * Loading is timed from the bytes in memory to a validated model (parse,
 * validate, lay out), as a backend does it; reading the file is not timed.
 * Scoring goes in chunks of 65,536 rows (the default pg_gpuscore.batch_size),
 * each transposed to the column-major batch gpu_score_query builds (by
 * gs_rows_to_columns, 64 rows at a time, as the extension's glue stages
 * rows) and scored with gs_model_predict, one thread; the transposes are
 * included.  One
 * warm-up run first.  With BENCH_CLOCK=cpu in the environment scoring is
 * timed in CPU seconds of the process (CLOCK_PROCESS_CPUTIME_ID) instead of
 * wall seconds, for machines whose cores other work shares
 * (bench_cpu_peers.sh).  BENCH_SIMD=portable forces the CPU engine's
 * portable path (gs_cpu_simd_set), BENCH_SIMD=avx2 its AVX2 path on an AVX-512 CPU.  The last
 * output of each row (P(class 1)) is compared
 * with REF; a difference above 1e-5 makes the program fail.
 * Prints one line: "load_s predict_s rows_per_s max_abs_diff".
 *
 * Usage: bench_formats --load-only MODEL [REPEATS=5]
 *
 * Times only what a session pays at its first use of a stored tree-ensemble
 * model: parsing MODEL (as above) against reading the image of its forest
 * (forest_image.h), which the glue stores at load and reads instead.  Prints
 * "parse_s image_read_s image_bytes".
 *
 * Usage: bench_formats --loop MODEL ROWS.f32 N_ROWS K
 *
 * Loads MODEL once and scores the rows K times, printing nothing: for
 * instruction and cache-miss counts by difference (perf stat or cachegrind
 * at two values of K; bench_cpu_peers.sh).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forest/cpu_engine.h"
#include "forest/forest_image.h"
#include "model.h"

#define BENCH_NAME "bench_formats"
#include "bench_util.h"

#define CHUNK_ROWS		65536
#define MAX_REPEATS		101
#define MAX_ABS_DIFF	1e-5

/* Load the model from bytes or exit; the caller frees it. */
static GsModel *
load(const unsigned char *bytes, size_t len, const char *path)
{
	GsModel    *m = NULL;
	GsStatus	st;

	if (gs_model_load(bytes, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &m, &st) != GS_OK)
		die("%s: %s", path, st.msg);
	return m;
}

/* The clock scoring is timed with (BENCH_CLOCK, see the top). */
static clockid_t score_clock = CLOCK_MONOTONIC;

/* Score all rows chunk by chunk into out (n_outputs per row); returns seconds. */
static double
score_all(const GsModel *m, const float *rows, size_t n_rows, float *xcol,
		  float *scratch, float *out)
{
	const size_t nf = (size_t) m->n_features;
	double		t0 = clock_s(score_clock);

	for (size_t r0 = 0; r0 < n_rows; r0 += CHUNK_ROWS)
	{
		size_t		n = n_rows - r0 < CHUNK_ROWS ? n_rows - r0 : CHUNK_ROWS;
		const float *src = rows + r0 * nf;

		gs_rows_to_columns(src, n, (int) nf, xcol, n);
		gs_model_predict(m, xcol, n, n, scratch, out + r0 * (size_t) m->n_outputs);
	}
	return clock_s(score_clock) - t0;
}

/* --load-only: median parse time vs median image read time; see the top. */
static int
load_only(const char *path, int repeats)
{
	size_t		len,
				image_len;
	unsigned char *bytes = read_file(path, 0, &len),
			   *image;
	double		parse_t[MAX_REPEATS],
				image_t[MAX_REPEATS];
	GsModel    *m = load(bytes, len, path);

	if (m->forest == NULL)
		die("%s: not a tree ensemble", path);
	image_len = gs_forest_image_size(m->forest);
	image = xmalloc(image_len);
	gs_forest_image_write(m->forest, image);
	gs_model_free(m);
	/*
	 * Image reads first: after a parse has freed its millions of small
	 * document nodes, glibc consolidates them at the next large malloc,
	 * which would be charged to the image read.
	 */
	for (int r = 0; r < repeats; r++)
	{
		GsModel    *img;
		GsStatus	st;
		double		t0 = now_s();

		if (gs_model_load_image(image, image_len, NULL, &gs_malloc_allocator, &img, &st) != GS_OK)
			die("%s: its image does not read back: %s", path, st.msg);
		image_t[r] = now_s() - t0;
		gs_model_free(img);
	}
	for (int r = 0; r < repeats; r++)
	{
		double		t0 = now_s();

		m = load(bytes, len, path);
		parse_t[r] = now_s() - t0;
		gs_model_free(m);
	}
	printf("%.6f %.6f %zu\n", median(parse_t, repeats), median(image_t, repeats), image_len);
	free(image);
	free(bytes);
	return 0;
}

/* --loop: see the top. */
static int
loop(const char *path, const char *rows_path, const char *n_arg, const char *k_arg)
{
	size_t		len,
				rows_len;
	unsigned char *bytes = read_file(path, 0, &len);
	GsModel    *m = load(bytes, len, path);
	long		n = strtol(n_arg, NULL, 10),
				k = strtol(k_arg, NULL, 10);
	float	   *rows,
			   *xcol,
			   *scratch,
			   *out;

	if (n <= 0 || k < 0)
		die("N_ROWS must be positive, K not negative");
	rows = (float *) read_file(rows_path, sizeof(float) * (size_t) n * (size_t) m->n_features, &rows_len);
	xcol = xmalloc(sizeof(float) * CHUNK_ROWS * (size_t) m->n_features);
	scratch = xmalloc(sizeof(float) * (gs_model_scratch_floats(m, CHUNK_ROWS) + 1));
	out = xmalloc(sizeof(float) * (size_t) n * (size_t) m->n_outputs);
	for (long i = 0; i < k; i++)
		score_all(m, rows, (size_t) n, xcol, scratch, out);
	gs_model_free(m);
	free(bytes);
	free(rows);
	free(xcol);
	free(scratch);
	free(out);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t		model_len,
				rows_len,
				ref_len,
				n_rows;
	unsigned char *bytes;
	float	   *rows,
			   *ref,
			   *xcol,
			   *scratch,
			   *out;
	double		load_t[MAX_REPEATS],
				pred_t[MAX_REPEATS],
				worst = 0.0;
	int			repeats = 5;
	GsModel    *m;
	long		v;
	char	   *end;
	const char *clk = getenv("BENCH_CLOCK");

	const char *simd = getenv("BENCH_SIMD");

	if (clk != NULL && strcmp(clk, "cpu") == 0)
		score_clock = CLOCK_PROCESS_CPUTIME_ID;
	if (simd != NULL && strcmp(simd, "portable") == 0)
		gs_cpu_simd_set(GS_CPU_SIMD_PORTABLE);
	else if (simd != NULL && strcmp(simd, "avx2") == 0)
		gs_cpu_simd_set(GS_CPU_SIMD_AVX2);
	if (argc >= 3 && argc <= 4 && strcmp(argv[1], "--load-only") == 0)
	{
		v = argc == 4 ? strtol(argv[3], &end, 10) : 5;
		if ((argc == 4 && *end) || v <= 0 || v > MAX_REPEATS)
			die("REPEATS must be 1 to %d", MAX_REPEATS);
		return load_only(argv[2], (int) v);
	}
	if (argc == 6 && strcmp(argv[1], "--loop") == 0)
		return loop(argv[2], argv[3], argv[4], argv[5]);
	if (argc < 5 || argc > 6)
		die("usage: bench_formats MODEL ROWS.f32 N_ROWS REF.f32 [REPEATS]\n"
			"       bench_formats --load-only MODEL [REPEATS]");
	errno = 0;
	v = strtol(argv[3], &end, 10);
	if (errno || *end || v <= 0)
		die("N_ROWS must be a positive integer");
	n_rows = (size_t) v;
	if (argc == 6)
	{
		v = strtol(argv[5], &end, 10);
		if (*end || v <= 0 || v > MAX_REPEATS)
			die("REPEATS must be 1 to %d", MAX_REPEATS);
		repeats = (int) v;
	}

	bytes = read_file(argv[1], 0, &model_len);
	m = load(bytes, model_len, argv[1]);
	rows = (float *) read_file(argv[2], sizeof(float) * n_rows * (size_t) m->n_features, &rows_len);
	ref = (float *) read_file(argv[4], sizeof(float) * n_rows, &ref_len);
	xcol = xmalloc(sizeof(float) * CHUNK_ROWS * (size_t) m->n_features);
	scratch = xmalloc(sizeof(float) * (gs_model_scratch_floats(m, CHUNK_ROWS) + 1));
	out = xmalloc(sizeof(float) * n_rows * (size_t) m->n_outputs);

	/* loading: the first load above was the warm-up */
	gs_model_free(m);
	for (int i = 0; i < repeats; i++)
	{
		double		t0 = now_s();

		m = load(bytes, model_len, argv[1]);
		load_t[i] = now_s() - t0;
		if (i + 1 < repeats)
			gs_model_free(m);
	}

	score_all(m, rows, n_rows, xcol, scratch, out);	/* warm-up */
	for (int i = 0; i < repeats; i++)
		pred_t[i] = score_all(m, rows, n_rows, xcol, scratch, out);

	for (size_t r = 0; r < n_rows; r++)
	{
		float		ours = out[r * (size_t) m->n_outputs + (size_t) m->n_outputs - 1];
		double		d = isnan(ours) || isnan(ref[r]) ? INFINITY : fabs((double) ours - (double) ref[r]);

		if (d > worst)
			worst = d;
	}
	{
		double		lm = median(load_t, repeats),
					pm = median(pred_t, repeats);

		printf("%.6f %.6f %.0f %.3g\n", lm, pm, (double) n_rows / pm, worst);
	}
	gs_model_free(m);
	free(bytes);
	free(rows);
	free(ref);
	free(xcol);
	free(scratch);
	free(out);
	if (worst > MAX_ABS_DIFF)
		die("outputs differ from the library's by %g (more than %g)", worst, MAX_ABS_DIFF);
	return 0;
}

/*
 * diff_score.c
 *	  One step of the differential campaign (tests/diff/campaign.py): load a
 *	  model file that a real library wrote, score rows with the CPU engine
 *	  and compare with that library's own predictions for the same rows.
 *
 * Usage: diff_score MODEL ROWS.f32 N_ROWS REF.f32 N_OUT TOL [NAMES.json]
 *
 *	 MODEL		a model file of any format, loaded with gs_model_load and
 *				format detection, as gpu_load_model does with 'auto'; a name
 *				ending in .ae.onnx is loaded as 'onnx-autoencoder' (the score
 *				is the reconstruction error)
 *	 ROWS.f32	float32 rows, row-major, the model's n_features per row
 *	 N_ROWS		rows in ROWS.f32
 *	 REF.f32	the library's outputs, row-major, N_OUT per row
 *	 N_OUT		outputs per row the library gave (must equal ours)
 *	 TOL		allowed |ours - ref| <= TOL * max(1, |ref|)
 *	 NAMES.json	optional: the category names the model must keep, a JSON array
 *				of one entry per feature, null (no names) or the names in code
 *				order; each must also be found as its code
 *
 * And where ROWS.f32's directory holds contribs.f64, the library's SHAP
 * contributions for the rows, the explanations too (check_contribs).
 *
 * The rows are scored three ways: as one column-major batch with a padded
 * leading dimension, in slices of gs_model_slice_rows rows (as a backend
 * does), and one row at a time; for a tree ensemble all three must agree bit
 * for bit (for a network within TOL: BLAS picks other kernels for other
 * batch sizes), and with the reference within TOL.  A tree ensemble is also
 * written as its forest image (what gpu_load_model stores) and read back:
 * that model must score the batch bit for bit the same and keep the same
 * names (check_image).  Exit status: 0 agree, 1 disagree (the first
 * differences are printed), 2 the model was refused (our message printed:
 * the campaign decides whether the refusal is documented), 3 usage or I/O.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cat_names.h"
#include "forest/cpu_engine.h"
#include "forest/forest_image.h"
#include "forest/forest_shap.h"
#include "model.h"
#include "../common/test_util.h"

static void *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *buf;
	long		n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
	{
		fprintf(stderr, "cannot read %s\n", path);
		exit(3);
	}
	buf = malloc((size_t) n + 1);
	if (!buf || fread(buf, 1, (size_t) n, f) != (size_t) n)
	{
		fprintf(stderr, "cannot read %s\n", path);
		exit(3);
	}
	fclose(f);
	*len = (size_t) n;
	return buf;
}

/* Score rows [r0, r0 + n) column-major with leading dimension ld into out. */
static void
score_slice(const GsModel *m, const float *rows, size_t r0, size_t n, size_t ld, float *out)
{
	const size_t nf = (size_t) m->n_features;
	float	   *x = malloc(sizeof(float) * nf * ld + 1);
	float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, n) + 1);

	if (!x || !scratch)
	{
		fprintf(stderr, "out of memory\n");
		exit(3);
	}
	for (size_t k = 0; k < nf; k++)
		for (size_t r = 0; r < ld; r++)
			x[k * ld + r] = r < n ? rows[(r0 + r) * nf + k] : NAN;
	/* as the glue does: values the model takes as missing besides NaN */
	gs_model_mark_missing(m, x, ld, n);
	gs_model_predict(m, x, ld, n, scratch, out + r0 * (size_t) m->n_outputs);
	free(x);
	free(scratch);
}

/* Compare the model's category names with NAMES.json; the number of mismatches. */
static int
check_names(const GsModel *m, const char *path)
{
	json_error_t err;
	json_t	   *want = json_load_file(path, 0, &err);
	const GsCatNames *cn = gs_model_cat_names(m);
	int			bad = 0;

	if (!json_is_array(want) || json_array_size(want) != (size_t) m->n_features)
	{
		printf("DIFF: %s is not an array of %d entries\n", path, m->n_features);
		json_decref(want);
		return 1;
	}
	for (int j = 0; j < m->n_features; j++)
	{
		json_t	   *w = json_array_get(want, (size_t) j);
		int			n = json_is_array(w) ? (int) json_array_size(w) : 0;

		if (gs_catnames_count(cn, j) != n)
		{
			if (bad++ < 5)
				printf("DIFF: feature %d has %d category names, the library %d\n", j, gs_catnames_count(cn, j), n);
			continue;
		}
		for (int c = 0; c < n; c++)
		{
			const char *name = json_string_value(json_array_get(w, (size_t) c));
			size_t		len = json_string_length(json_array_get(w, (size_t) c));

			if (name == NULL || strlen(gs_catnames_name(cn, j, c)) != len ||
				memcmp(gs_catnames_name(cn, j, c), name, len) != 0 ||
				gs_catnames_code(cn, j, name, len) != c)
			{
				if (bad++ < 5)
					printf("DIFF: feature %d category %d is \"%s\", the library's \"%s\"\n", j, c,
						   gs_catnames_name(cn, j, c), name ? name : "?");
			}
		}
	}
	json_decref(want);
	return bad;
}

/*
 * When ROWS.f32's directory holds contribs.f64 (the library's SHAP
 * contributions, written by the campaign for XGBoost and LightGBM models),
 * explain every row (forest_shap.h, a load with covers, as gpu_explain does)
 * and compare: within 1e-4 of the row's largest term, and adding up to the
 * margin summed in double (the engine's float sum of a thousand trees can
 * be 1e-4 off it).  The number of differences.
 */
static int
check_contribs(const unsigned char *bytes, size_t len, const char *rows_path,
			   const float *rows, size_t n_rows)
{
	char		path[4096];
	const char *slash = strrchr(rows_path, '/');
	FILE	   *fh;
	size_t		clen,
				width;
	double	   *want,
			   *phi;
	double	   *margin;
	float	   *x;
	GsLimits	lim = gs_default_limits;
	GsForest   *f = NULL;
	GsShap	   *s = NULL;
	GsStatus	st;
	int			bad = 0;
	double		worst = 0.0;

	snprintf(path, sizeof(path), "%.*scontribs.f64", slash ? (int) (slash - rows_path + 1) : 0, rows_path);
	if ((fh = fopen(path, "rb")) == NULL)
		return 0;
	fclose(fh);
	want = read_file(path, &clen);
	lim.keep_covers = true;
	if (gs_forest_load(bytes, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st) != GS_OK ||
		gs_shap_new(f, &gs_malloc_allocator, &s, &st) != GS_OK)
	{
		printf("DIFF: not explained: %s\n", st.msg);
		gs_forest_free(f);
		free(want);
		return 1;
	}
	width = (size_t) f->n_groups * ((size_t) f->n_features + 1);
	if (clen != n_rows * width * sizeof(double))
	{
		printf("DIFF: %zu contributions per row, the library gave %zu\n", width,
			   clen / sizeof(double) / (n_rows ? n_rows : 1));
		gs_shap_free(s);
		gs_forest_free(f);
		free(want);
		return 1;
	}
	phi = malloc(sizeof(double) * width);
	margin = malloc(sizeof(double) * (size_t) f->n_groups);
	x = malloc(sizeof(float) * (size_t) f->n_features);
	for (size_t r = 0; r < n_rows; r++)
	{
		/* as the glue does: values the model takes as missing besides NaN */
		memcpy(x, rows + r * (size_t) f->n_features, sizeof(float) * (size_t) f->n_features);
		gs_forest_mark_missing(f, x, 1, 1);
		gs_shap_row(s, x, phi);
		gs_margins_double(f, x, margin);
		for (int g = 0; g < f->n_groups; g++)
		{
			const double *p = phi + (size_t) g * (f->n_features + 1);
			const double *w = want + r * width + (size_t) g * (f->n_features + 1);
			double		scale = 1.0,
						sum = 0.0,
						mag = 1.0;

			for (int j = 0; j <= f->n_features; j++)
				scale = fmax(scale, fabs(w[j]));
			for (int j = 0; j <= f->n_features; j++)
			{
				double		d = fabs(p[j] - w[j]) / scale;

				sum += p[j];
				mag += fabs(p[j]);
				if (!(d <= 1e-4) && bad++ < 5)
					printf("DIFF: row %zu output %d feature %d: contribution %.9g, the library's %.9g\n",
						   r, g, j, p[j], w[j]);
				worst = fmax(worst, d);
			}
			if (!(fabs(sum - margin[g]) <= 1e-6 * mag) && bad++ < 5)
				printf("DIFF: row %zu output %d: contributions add up to %.9g, the margin is %.9g\n",
					   r, g, sum, margin[g]);
		}
	}
	if (!bad)
		printf("OK: contributions of %zu rows x %d outputs, worst %.2g of a row's largest term\n",
			   n_rows, f->n_groups, worst);
	free(phi);
	free(margin);
	free(x);
	free(want);
	gs_shap_free(s);
	gs_forest_free(f);
	return bad;
}

/*
 * The forest of m through its image (forest_image.h), as a session reads a
 * stored model: the batch scored bit for bit as whole, the names (argv's
 * NAMES.json, when given) kept.  Returns the count of problems.
 */
static int
check_image(const GsModel *m, const float *rows, size_t n_rows, size_t n_out,
			const float *whole, const char *names_json)
{
	size_t		len = gs_forest_image_size(m->forest);
	unsigned char *img = malloc(len);
	float	   *again = malloc(sizeof(float) * n_rows * n_out + 1);
	GsModel    *g = NULL;
	GsStatus	st;
	int			bad = 0;

	gs_forest_image_write(m->forest, img);
	if (gs_model_load_image(img, len, NULL, &gs_malloc_allocator, &g, &st) != GS_OK)
	{
		printf("DIFF: the model's forest image is refused: %s%s%s\n", st.msg,
			   st.detail[0] ? " | " : "", st.detail);
		bad = 1;
	}
	else
	{
		score_slice(g, rows, 0, n_rows, n_rows + 3, again);
		if (memcmp(again, whole, sizeof(float) * n_rows * n_out) != 0)
		{
			printf("DIFF: the model read from its forest image scores otherwise\n");
			bad = 1;
		}
		if (names_json)
			bad += check_names(g, names_json);
	}
	gs_model_free(g);
	free(img);
	free(again);
	return bad;
}

int
main(int argc, char **argv)
{
	size_t		model_len,
				rows_len,
				ref_len,
				n_rows,
				n_out,
				slice;
	unsigned char *bytes;
	float	   *rows,
			   *ref,
			   *whole,
			   *sliced,
			   *single;
	double		tol,
				max_diff = 0;
	GsModel    *m = NULL;
	GsStatus	st;
	int			bad = 0;

	if (argc != 7 && argc != 8)
	{
		fprintf(stderr, "usage: diff_score MODEL ROWS.f32 N_ROWS REF.f32 N_OUT TOL [NAMES.json]\n");
		return 3;
	}
	bytes = read_file(argv[1], &model_len);
	rows = read_file(argv[2], &rows_len);
	n_rows = strtoul(argv[3], NULL, 10);
	ref = read_file(argv[4], &ref_len);
	n_out = strtoul(argv[5], NULL, 10);
	tol = strtod(argv[6], NULL);

	if (gs_model_load(bytes, model_len,
					  strlen(argv[1]) > 8 && strcmp(argv[1] + strlen(argv[1]) - 8, ".ae.onnx") == 0 ?
					  GS_FORMAT_ONNX_AUTOENCODER : GS_FORMAT_AUTO,
					  NULL, &gs_malloc_allocator, &m, &st) != GS_OK)
	{
		/* nothing of a refused model may be left: LeakSanitizer checks at exit */
		printf("REFUSED: %s%s%s\n", st.msg, st.detail[0] ? " | " : "", st.detail);
		free(bytes);
		free(rows);
		free(ref);
		return 2;
	}
	if ((size_t) m->n_outputs != n_out)
	{
		printf("DIFF: %d outputs per row, the library gave %zu\n", m->n_outputs, n_out);
		gs_model_free(m);
		free(bytes);
		free(rows);
		free(ref);
		return 1;
	}
	if (rows_len != n_rows * (size_t) m->n_features * sizeof(float) ||
		ref_len != n_rows * n_out * sizeof(float))
	{
		fprintf(stderr, "file sizes do not match %zu rows of %d features, %zu outputs\n",
				n_rows, m->n_features, n_out);
		return 3;
	}

	whole = malloc(sizeof(float) * n_rows * n_out + 1);
	sliced = malloc(sizeof(float) * n_rows * n_out + 1);
	single = malloc(sizeof(float) * n_rows * n_out + 1);
	score_slice(m, rows, 0, n_rows, n_rows + 3, whole);
	slice = gs_model_slice_rows(m);
	for (size_t r0 = 0; r0 < n_rows; r0 += slice)
		score_slice(m, rows, r0, n_rows - r0 < slice ? n_rows - r0 : slice,
					n_rows - r0 < slice ? n_rows - r0 : slice, sliced);
	for (size_t r = 0; r < n_rows; r++)
		score_slice(m, rows, r, 1, 1, single);

	for (size_t i = 0; i < n_rows * n_out; i++)
	{
		double		d = fabs((double) whole[i] - (double) ref[i]);
		int			same_special = (isnan(whole[i]) && isnan(ref[i])) ||
			(isinf(whole[i]) && whole[i] == ref[i]);	/* a linear model's overflow */

		/* exact engines: trees, and XGBoost's linear booster (its sums in its order) */
		if (m->kind == GS_MODEL_FOREST || m->mlp->linear_booster ?
			(memcmp(&whole[i], &sliced[i], 4) != 0 || memcmp(&whole[i], &single[i], 4) != 0) :
			!(fabs((double) sliced[i] - whole[i]) <= tol * fmax(1.0, fabs((double) whole[i])) &&
			  fabs((double) single[i] - whole[i]) <= tol * fmax(1.0, fabs((double) whole[i]))))
		{
			if (bad++ < 5)
				printf("DIFF: row %zu output %zu: batchings disagree (%.9g, %.9g, %.9g)\n",
					   i / n_out, i % n_out, whole[i], sliced[i], single[i]);
			continue;
		}
		if (same_special)
			continue;
		if (!(d <= tol * fmax(1.0, fabs((double) ref[i]))))
		{
			if (bad++ < 5)
				printf("DIFF: row %zu output %zu: ours %.9g, library %.9g\n",
					   i / n_out, i % n_out, whole[i], ref[i]);
			continue;
		}
		if (d > max_diff)
			max_diff = d;
	}
	if (argc == 8)
		bad += check_names(m, argv[7]);
	if (m->kind == GS_MODEL_FOREST)
	{
		bad += check_image(m, rows, n_rows, n_out, whole, argc == 8 ? argv[7] : NULL);
		bad += check_contribs(bytes, model_len, argv[2], rows, n_rows);
	}
	free(bytes);
	if (bad)
		printf("DIFF: %d of %zu outputs differ (or names)\n", bad, n_rows * n_out);
	else
		printf("OK: %zu rows, %zu outputs, max |diff| %.3g\n", n_rows, n_out, max_diff);
	gs_model_free(m);
	free(rows);
	free(ref);
	free(whole);
	free(sliced);
	free(single);
	return bad ? 1 : 0;
}

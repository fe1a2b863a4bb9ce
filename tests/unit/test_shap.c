/*
 * test_shap.c
 *	  Explanations (src/core/forest/forest_shap.c): per-feature contributions of
 *	  fixture models' rows against the libraries' own TreeSHAP.
 *
 * References: tests/fixtures/shap/NAME.csv, written by
 * tests/fixtures/gen_fixtures_shap.py from XGBoost's
 * predict(pred_contribs=True) (1.7.4 and 3.2.0) and LightGBM's
 * predict(pred_contrib=True) (4.7.0 on model files of 4.7.0 and 3.3.5) on
 * the rows of cases/NAME.csv.  Each row's contributions must agree within
 * 2e-5 relative to the largest of the row's terms (XGBoost adds them in
 * float; the cases that differ say why), and they must add up to the
 * row's margin (its leaves summed in double).
 * Then: what has no covers (a load that did not ask for them, an ONNX-ML
 * forest, a forest image, damaged or missing covers in the file) is
 * refused or dropped, never used.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/forest.h"
#include "forest/forest_image.h"
#include "forest/forest_shap.h"
#include "model.h"
#include "../common/test_util.h"

#define FIXTURES "../fixtures"

typedef struct ShapCase
{
	const char *model;			/* under models/ */
	const char *shap;			/* under shap/ (and cases/ with .csv/.meta) */
	const char *cases;
	double		scale;			/* ours = the library's x scale (0: 1) */
	double		tol;			/* relative tolerance (0: 2e-5) */
} ShapCase;

static const ShapCase cases[] = {
	{"fraud_binary.json", "fraud_binary", "fraud_binary", 0, 0},
	{"fraud_binary.ubj", "fraud_binary_ubj", "fraud_binary", 0, 0},
	{"wine_softprob.json", "wine_softprob", "wine_softprob", 0, 0},
	{"dart_binary.json", "dart_binary", "dart_binary", 0, 0},
	{"diabetes_reg.json", "diabetes_reg", "diabetes_reg", 0, 0},
	{"rf_parallel.json", "rf_parallel", "rf_parallel", 0, 0},
	/*
	 * 509-node trees: XGBoost's float path weights drift; its own
	 * contributions miss its margin by up to 9e-4 (terms up to 5), ours add
	 * up to it within 2e-6.
	 */
	{"lossguide_deep.json", "lossguide_deep", "lossguide_deep", 0, 3e-4},
	{"obj_poisson.json", "obj_poisson", "obj_poisson", 0, 0},
	{"stumps.json", "stumps", "stumps", 0, 0},
	{"tiny_base.json", "tiny_base", "tiny_base", 0, 0},
	{"x17_cat_binary.json", "x17_cat_binary", "x17_cat_binary", 0, 0},
	{"x17_cat_softprob.json", "x17_cat_softprob", "x17_cat_softprob", 0, 0},
	{"x3_cat_binary.json", "x3_cat_binary", "x3_cat_binary", 0, 0},
	{"x3_cat_softprob.json", "x3_cat_softprob", "x3_cat_softprob", 0, 0},
	{"x3_cat_dart_reg.json", "x3_cat_dart_reg", "x3_cat_dart_reg", 0, 0},
	{"x3_multi_target.json", "x3_multi_target", "x3_multi_target", 0, 0},
	{"x3_catnames.json", "x3_catnames", "x3_catnames", 0, 0},
	{"lgb_binary.txt", "lgb_binary", "lgb_binary", 0, 0},
	{"lgb_multiclass.txt", "lgb_multiclass", "lgb_multiclass", 0, 0},
	{"lgb_dart.txt", "lgb_dart", "lgb_dart", 0, 0},
	/*
	 * LightGBM's rf: predict averages its 10 trees, but raw_score and
	 * pred_contrib are their plain sums; ours add up to the averaged margin.
	 */
	{"lgb_rf.txt", "lgb_rf", "lgb_rf", 0.1, 0},
	{"lgb_zero_missing.txt", "lgb_zero_missing", "lgb_zero_missing", 0, 0},
	{"lgb_no_missing.txt", "lgb_no_missing", "lgb_no_missing", 0, 0},
	{"lgb_cat_wide.txt", "lgb_cat_wide", "lgb_cat_wide", 0, 0},
	{"lgb_catnames.txt", "lgb_catnames", "lgb_catnames", 0, 0},
	/* sigmoid:2.5: LightGBM's raw score is 1/2.5 of the log-odds, ours is the log-odds */
	{"lgb_sigmoid_binary.txt", "lgb_sigmoid_binary", "lgb_sigmoid_binary", 2.5, 0},
	{"lgb_poisson.txt", "lgb_poisson", "lgb_poisson", 0, 0},
	{"lgb3_binary.txt", "lgb3_binary", "lgb3_binary", 0, 0},
	{"lgb3_multiclass.txt", "lgb3_multiclass", "lgb3_multiclass", 0, 0},
	/* CatBoost: get_feature_importance(type="ShapValues"), in double */
	{"cb_binary.json", "cb_binary", "cb_binary", 0, 1e-9},
	{"cb_nanmax.json", "cb_nanmax", "cb_nanmax", 0, 1e-9},
	{"cb_multiclass.json", "cb_multiclass", "cb_multiclass", 0, 1e-9},
	{"cb_ova.json", "cb_ova", "cb_ova", 0, 1e-9},
	{"cb_regression.json", "cb_regression", "cb_regression", 0, 1e-9},
	{"cb_poisson.json", "cb_poisson", "cb_poisson", 0, 1e-9},
	{"cb_multirmse.json", "cb_multirmse", "cb_multirmse", 0, 1e-9},
	{"cb_yetirank.json", "cb_yetirank", "cb_yetirank", 0, 1e-9},
	{"cb_depthwise.json", "cb_depthwise", "cb_depthwise", 0, 1e-9},
	{"cb_lossguide.json", "cb_lossguide", "cb_lossguide", 0, 1e-9},
	{"cb_deep.json", "cb_deep", "cb_deep", 0, 1e-9},
	/*
	 * CatBoost with categorical features (gen_fixtures_catboost_cats.py):
	 * TreeSHAP over CatBoost's combination classes, a combination's share
	 * split equally among its categories
	 */
	{"cb_cat_binary.json", "cb_cat_binary", "cb_cat_binary", 0, 1e-9},
	{"cb_cat_multiclass.json", "cb_cat_multiclass", "cb_cat_multiclass", 0, 1e-9},
	{"cb_cat_regression.json", "cb_cat_regression", "cb_cat_regression", 0, 1e-9},
	{"cb_cat_combo.json", "cb_cat_combo", "cb_cat_combo", 0, 1e-9},
	{"cb_cat_depthwise.json", "cb_cat_depthwise", "cb_cat_depthwise", 0, 1e-9},
};

static void
ok(int cond, const char *label, const char *what)
{
	gs_tap(cond, label, what);
}

/* The larger of two errors, a NaN being the worst of all. */
static double
worse(double a, double b)
{
	return isnan(a) || isnan(b) ? INFINITY : fmax(a, b);
}

/* Load model bytes with covers (or without); NULL and st set when it fails. */
static GsForest *
load_bytes(const unsigned char *b, size_t len, bool covers, GsStatus *st)
{
	GsLimits	lim = gs_default_limits;
	GsForest   *f = NULL;

	lim.keep_covers = covers;
	if (gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, st) != GS_OK)
		return NULL;
	return f;
}

static GsForest *
load_file(const char *name, bool covers, GsStatus *st)
{
	char		path[512];
	size_t		len;
	unsigned char *b;
	GsForest   *f;

	snprintf(path, sizeof(path), FIXTURES "/models/%s", name);
	if ((b = gs_read_file(path, &len)) == NULL)
		return NULL;
	f = load_bytes(b, len, covers, st);
	free(b);
	return f;
}

/* Read shap/NAME.csv: n_rows lines of id and width doubles. */
static double *
read_shap(const char *name, int n_rows, int width)
{
	char		path[512];
	static char line[1 << 16];
	FILE	   *fh;
	double	   *v = malloc(sizeof(double) * (size_t) n_rows * (size_t) width);
	int			r = 0;

	snprintf(path, sizeof(path), FIXTURES "/shap/%s.csv", name);
	if ((fh = fopen(path, "r")) == NULL)
	{
		free(v);
		return NULL;
	}
	while (r < n_rows && fgets(line, sizeof(line), fh))
	{
		char	   *p = line,
				   *end;

		strtol(p, &end, 10);
		p = end;
		for (int k = 0; k < width; k++)
		{
			if (*p != ',')
				break;
			v[(size_t) r * width + k] = strtod(p + 1, &end);
			p = end;
		}
		r++;
	}
	fclose(fh);
	if (r != n_rows)
	{
		free(v);
		return NULL;
	}
	return v;
}

/* One fixture: every row against the library and against the margin. */
static void
check_case(const ShapCase *c)
{
	GsStatus	st;
	GsForest   *f = load_file(c->model, true, &st);
	GsShap	   *s = NULL;
	GsCases		rows;
	char		path[512],
				what[256];
	FILE	   *meta;
	int			nf = 0,
				nout = 0,
				width;
	double	   *want,
			   *phi;
	double	   *margin;
	double		worst = 0.0,
				worst_sum = 0.0;

	if (f == NULL)
	{
		ok(0, c->model, "loads with covers");
		return;
	}
	ok(f->cover != NULL, c->model, "keeps covers");
	if (gs_shap_new(f, &gs_malloc_allocator, &s, &st) != GS_OK)
	{
		ok(0, c->model, st.msg);
		gs_forest_free(f);
		return;
	}
	snprintf(path, sizeof(path), FIXTURES "/cases/%s.meta", c->cases);
	meta = fopen(path, "r");
	if (meta == NULL || fscanf(meta, "%d %d", &nf, &nout) != 2)
		nf = 0;
	if (meta)
		fclose(meta);
	snprintf(path, sizeof(path), FIXTURES "/cases/%s.csv", c->cases);
	if (nf != f->n_features || gs_read_cases(path, nf, nout, &rows) != 0)
	{
		ok(0, c->model, "reads its cases");
		gs_shap_free(s);
		gs_forest_free(f);
		return;
	}
	width = f->n_groups * (f->n_features + 1);
	want = read_shap(c->shap, rows.n_rows, width);
	ok(want != NULL, c->model, "reads its reference contributions");
	phi = malloc(sizeof(double) * (size_t) width);
	margin = malloc(sizeof(double) * (size_t) f->n_groups);
	for (int r = 0; want && r < rows.n_rows; r++)
	{
		const float *x = rows.x + (size_t) r * nf;

		gs_shap_row(s, x, phi);
		gs_margins_double(f, x, margin);
		for (int g = 0; g < f->n_groups; g++)
		{
			const double *p = phi + g * (f->n_features + 1);
			const double *w = want + (size_t) r * width + g * (f->n_features + 1);
			double		scale = 1.0,
						sum = 0.0,
						k = c->scale != 0.0 ? c->scale : 1.0;

			for (int j = 0; j <= f->n_features; j++)
				scale = fmax(scale, fabs(k * w[j]));
			for (int j = 0; j <= f->n_features; j++)
			{
				worst = worse(worst, fabs(p[j] - k * w[j]) / scale);
				sum += p[j];
			}
			worst_sum = worse(worst_sum, fabs(sum - margin[g]) / fmax(1.0, fabs(sum)));
		}
	}
	snprintf(what, sizeof(what), "%d rows x %d outputs agree with the library (worst %.2g of the row's largest term)",
			 rows.n_rows, f->n_groups, worst);
	ok(want != NULL && worst <= (c->tol != 0.0 ? c->tol : 2e-5), c->model, what);
	snprintf(what, sizeof(what), "contributions add up to the margin (worst %.2g relative)", worst_sum);
	ok(want != NULL && worst_sum <= 1e-9, c->model, what);
	free(phi);
	free(margin);
	free(want);
	free(rows.x);
	free(rows.want);
	gs_shap_free(s);
	gs_forest_free(f);
}

/*
 * A CatBoost fixture on shap/NAME_wide.csv (gen_fixtures_shap.py): rows
 * spread over the model's borders, which reach many leaves no training row
 * reached (CatBoost's explanations skip those branches), each line the
 * row's features then CatBoost's contributions; when additive, they must
 * also add up to the margin.  Returns how many rows reach such a leaf in
 * some tree, so that the caller knows the skipping was exercised.
 */
static int
check_wide(const ShapCase *c, bool additive)
{
	GsStatus	st;
	GsForest   *f = load_file(c->model, true, &st);
	GsShap	   *s = NULL;
	char		path[512],
				what[256],
				label[300];
	static char line[1 << 16];
	FILE	   *fh;
	int			width,
				n_rows = 0,
				n_unreached = 0;
	double		worst = 0.0,
				worst_sum = 0.0;
	float	   *x;
	double	   *phi,
			   *margin;

	snprintf(label, sizeof(label), "%s (wide rows)", c->model);
	snprintf(path, sizeof(path), FIXTURES "/shap/%s_wide.csv", c->shap);
	if (f == NULL || gs_shap_new(f, &gs_malloc_allocator, &s, &st) != GS_OK ||
		(fh = fopen(path, "r")) == NULL)
	{
		ok(0, label, "loads, explains and has its wide rows");
		gs_shap_free(s);
		gs_forest_free(f);
		return 0;
	}
	width = f->n_groups * (f->n_features + 1);
	x = malloc(sizeof(float) * (size_t) f->n_features);
	phi = malloc(sizeof(double) * (size_t) width);
	margin = malloc(sizeof(double) * (size_t) f->n_groups);
	while (fgets(line, sizeof(line), fh))
	{
		char	   *p = line,
				   *end;
		int			unreached = 0;

		strtol(p, &end, 10);
		p = end;
		for (int j = 0; j < f->n_features; j++, p = end)
			x[j] = strtof(p + 1, &end);
		gs_shap_row(s, x, phi);
		gs_margins_double(f, x, margin);
		for (int32_t t = 0; t < f->n_trees; t++)
		{
			uint32_t	leaf = gs_tree_leaf_index(f->nodes + f->tree_offset[t], x, 1, f->cat_words);

			unreached |= f->cover[f->tree_offset[t] + leaf] == 0.0;
		}
		n_unreached += unreached;
		for (int g = 0; g < f->n_groups; g++)
		{
			const double *pg = phi + g * (f->n_features + 1);
			double		w[1024],
						scale = 1.0,
						sum = 0.0;

			for (int j = 0; j <= f->n_features && j < 1024; j++, p = end)
			{
				w[j] = strtod(p + 1, &end);
				scale = fmax(scale, fabs(w[j]));
			}
			for (int j = 0; j <= f->n_features && j < 1024; j++)
			{
				worst = worse(worst, fabs(pg[j] - w[j]) / scale);
				sum += pg[j];
			}
			worst_sum = worse(worst_sum, fabs(sum - margin[g]) / fmax(1.0, fabs(sum)));
		}
		n_rows++;
	}
	fclose(fh);
	snprintf(what, sizeof(what), "%d rows (%d reach a leaf no training row reached) x %d outputs agree with CatBoost (worst %.2g of the row's largest term)",
			 n_rows, n_unreached, f->n_groups, worst);
	ok(n_rows == 300 && worst <= c->tol, label, what);
	snprintf(what, sizeof(what), "contributions %s the margin (worst %.2g relative)",
			 additive ? "add up to" : "need not add up to (nor do CatBoost's)", worst_sum);
	ok(!additive || worst_sum <= 1e-9, label, what);
	free(x);
	free(phi);
	free(margin);
	gs_shap_free(s);
	gs_forest_free(f);
	return n_unreached;
}

/* An allocator on malloc that refuses everything once `full` is set. */
static bool alloc_full = false;

static void *
alloc_until_full(void *ctx, size_t size)
{
	(void) ctx;
	return alloc_full ? NULL : malloc(size);
}

static void
free_any(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

/*
 * The contributions of a symmetric tree are kept by leaf once computed (at
 * the first row that reaches it): explaining the wide rows of cb_binary a
 * second time (every leaf kept), in reverse order with a fresh explainer,
 * and with one that can keep nothing (its allocator refuses after
 * gs_shap_new) must give the same doubles, bit for bit.
 */
static void
check_leaf_cache(void)
{
	GsStatus	st;
	GsForest   *f = load_file("cb_binary.json", true, &st);
	const GsAllocator full = {alloc_until_full, free_any, NULL};
	GsShap	   *kept = NULL,
			   *rev = NULL,
			   *none = NULL;
	char		path[512];
	static char line[1 << 16];
	FILE	   *fh;
	float	   *x;
	double	   *first,
			   *phi;
	int			n = 0,
				width,
				bad_again = 0,
				bad_rev = 0,
				bad_none = 0;

	snprintf(path, sizeof(path), FIXTURES "/shap/cb_binary_wide.csv");
	if (f == NULL || (fh = fopen(path, "r")) == NULL ||
		gs_shap_new(f, &gs_malloc_allocator, &kept, &st) != GS_OK ||
		gs_shap_new(f, &gs_malloc_allocator, &rev, &st) != GS_OK ||
		gs_shap_new(f, &full, &none, &st) != GS_OK)
	{
		ok(0, "leaf cache", "cb_binary explains its wide rows");
		gs_forest_free(f);
		return;
	}
	alloc_full = true;
	width = f->n_features + 1;
	x = malloc(sizeof(float) * 300 * (size_t) f->n_features);
	first = malloc(sizeof(double) * 300 * (size_t) width);
	phi = malloc(sizeof(double) * (size_t) width);
	while (n < 300 && fgets(line, sizeof(line), fh))
	{
		char	   *p = line,
				   *end;

		strtol(p, &end, 10);
		p = end;
		for (int j = 0; j < f->n_features; j++, p = end)
			x[(size_t) n * f->n_features + j] = strtof(p + 1, &end);
		n++;
	}
	fclose(fh);
	for (int r = 0; r < n; r++)
		gs_shap_row(kept, x + (size_t) r * f->n_features, first + (size_t) r * width);
	for (int r = 0; r < n; r++)
	{
		gs_shap_row(kept, x + (size_t) r * f->n_features, phi);
		bad_again += memcmp(phi, first + (size_t) r * width, sizeof(double) * (size_t) width) != 0;
		gs_shap_row(none, x + (size_t) r * f->n_features, phi);
		bad_none += memcmp(phi, first + (size_t) r * width, sizeof(double) * (size_t) width) != 0;
	}
	for (int r = n - 1; r >= 0; r--)
	{
		gs_shap_row(rev, x + (size_t) r * f->n_features, phi);
		bad_rev += memcmp(phi, first + (size_t) r * width, sizeof(double) * (size_t) width) != 0;
	}
	alloc_full = false;
	snprintf(path, sizeof(path), "%d rows again: %d differ; in reverse order: %d; keeping nothing: %d",
			 n, bad_again, bad_rev, bad_none);
	ok(n == 300 && bad_again == 0 && bad_rev == 0 && bad_none == 0, "leaf cache", path);
	free(x);
	free(first);
	free(phi);
	gs_shap_free(kept);
	gs_shap_free(rev);
	gs_shap_free(none);
	gs_forest_free(f);
}

/* Replace the first occurrence of from by to in a copy of text. */
static char *
edited(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t		n = strlen(text),
				lf = strlen(from),
				lt = strlen(to);
	char	   *out;

	if (at == NULL)
		return NULL;
	out = malloc(n - lf + lt + 1);
	memcpy(out, text, (size_t) (at - text));
	memcpy(out + (at - text), to, lt);
	strcpy(out + (at - text) + lt, at + lf);
	return out;
}

/* Each edit of a fixture model's text (first occurrence) loads without covers. */
static void
check_damaged_covers(const char *file, const char *const edits[][2], size_t n)
{
	char		path[512];
	size_t		len;
	unsigned char *b;
	char	   *text;
	GsStatus	st;

	snprintf(path, sizeof(path), FIXTURES "/models/%s", file);
	if ((b = gs_read_file(path, &len)) == NULL)
	{
		ok(0, "damaged covers", file);
		return;
	}
	text = malloc(len + 1);
	memcpy(text, b, len);
	text[len] = '\0';
	free(b);
	for (size_t i = 0; i < n; i++)
	{
		char	   *bad = edited(text, edits[i][0], edits[i][1]);
		GsForest   *f = bad ? load_bytes((unsigned char *) bad, strlen(bad), true, &st) : NULL;

		ok(f && f->cover == NULL, "damaged covers", edits[i][1]);
		gs_forest_free(f);
		free(bad);
	}
	free(text);
}

/* Covers that are absent, damaged or not asked for: none kept, scores unchanged. */
static void
check_no_covers(void)
{
	GsStatus	st;
	GsForest   *f;
	GsShap	   *s = NULL;
	size_t		len;
	unsigned char *b;
	GsModel    *m = NULL;
	GsLimits	lim = gs_default_limits;

	f = load_file("fraud_binary.json", false, &st);
	ok(f && f->cover == NULL, "no covers", "a load that does not ask keeps none");
	ok(f && gs_shap_new(f, &gs_malloc_allocator, &s, &st) == GS_ERR_UNSUPPORTED && s == NULL,
	   "no covers", "explaining it is refused (GS_ERR_UNSUPPORTED)");
	gs_forest_free(f);

	/* a forest image does not keep them */
	f = load_file("lgb_binary.txt", true, &st);
	if (f)
	{
		size_t		n = gs_forest_image_size(f);
		unsigned char *img = malloc(n);
		GsForest   *g = NULL;

		gs_forest_image_write(f, img);
		ok(gs_forest_image_read(img, n, NULL, &gs_malloc_allocator, &g, &st) == GS_OK &&
		   g->cover == NULL, "no covers", "a forest image holds none");
		gs_forest_free(g);
		free(img);
	}
	gs_forest_free(f);

	/* XGBoost: a negative root, a root its children do not add up to, a long and a missing sum_hessian */
	{
		const char *edits[][2] = {
			{"\"sum_hessian\":[3.75E3", "\"sum_hessian\":[-3.75E3"},
			{"\"sum_hessian\":[3.75E3", "\"sum_hessian\":[3.76E3"},
			{"\"sum_hessian\":[", "\"sum_hessian\":[1,"},
			{"\"sum_hessian\":", "\"sum_hessian_x\":"},
		};

		check_damaged_covers("stumps.json", edits, sizeof(edits) / sizeof(edits[0]));
	}
	/* LightGBM: leaf_count gone, internal_count not numbers, a split (the root) of count 0 */
	{
		const char *edits[][2] = {
			{"leaf_count=", "leaf_kount="},
			{"internal_count=", "internal_count=x "},
			{"internal_count=5000", "internal_count=0"},
		};

		check_damaged_covers("lgb_binary.txt", edits, sizeof(edits) / sizeof(edits[0]));
	}

	/* CatBoost: leaf_weights gone, a negative weight, a leaf's weight not a number */
	{
		const char *edits[][2] = {
			{"\"leaf_weights\"", "\"leaf_weightz\""},
			{"\"leaf_weights\":\n          [\n            541,", "\"leaf_weights\": [-541,"},
			{"\"leaf_weights\":\n          [\n            541,", "\"leaf_weights\": [\"x\","},
		};
		const char *nonsym[][2] = {{"\"weight\":", "\"weight\":-"}};

		check_damaged_covers("cb_binary.json", edits, sizeof(edits) / sizeof(edits[0]));
		check_damaged_covers("cb_depthwise.json", nonsym, 1);
	}
	/* CatBoost with a scale other than 1: CatBoost explains no such model */
	f = load_file("cb_scaled.json", true, &st);
	ok(f && f->cover == NULL && gs_shap_new(f, &gs_malloc_allocator, &s, &st) == GS_ERR_UNSUPPORTED,
	   "no covers", "a scaled CatBoost model keeps none and is refused");
	gs_forest_free(f);
	/* CatBoost: a leaf no training row reached whose value is not 0 */
	f = load_file("cb_binary.json", true, &st);
	if (f && f->cover)
	{
		int64_t		i = 0;

		while (i < f->n_nodes && !((f->nodes[i].info & GS_NODE_LEAF) && f->cover[i] == 0.0))
			i++;
		ok(i < f->n_nodes, "unreached leaf", "cb_binary has a leaf no training row reached");
		if (i < f->n_nodes)
		{
			f->nodes[i].value = 0.5f;
			ok(gs_shap_new(f, &gs_malloc_allocator, &s, &st) == GS_ERR_UNSUPPORTED && s == NULL &&
			   strstr(st.msg, "no training row reached") != NULL,
			   "unreached leaf", "a value other than 0 there is refused");
		}
	}
	else
		ok(0, "unreached leaf", "cb_binary loads with covers");
	gs_forest_free(f);

	/* an ONNX-ML forest has no covers */
	lim.keep_covers = true;
	b = gs_read_file(FIXTURES "/onnx/trees/onnx_cb_binary.onnx", &len);
	if (b && gs_model_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &m, &st) == GS_OK)
	{
		ok(m->forest && m->forest->cover == NULL &&
		   gs_shap_new(m->forest, &gs_malloc_allocator, &s, &st) == GS_ERR_UNSUPPORTED,
		   "no covers", "an ONNX-ML forest is refused");
		gs_model_free(m);
	}
	else
		ok(0, "no covers", "an ONNX-ML fixture loads");
	free(b);
}

int
main(void)
{
	int			unreached = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		check_case(&cases[i]);
		if (strncmp(cases[i].model, "cb_", 3) == 0 && strncmp(cases[i].model, "cb_cat_", 7) != 0)
			unreached += check_wide(&cases[i], true);
	}
	ok(unreached >= 100, "CatBoost", "wide rows reach leaves no training row reached");
	{
		/*
		 * cb_multiclass with 0.25 more in class 0 of each reached leaf: the
		 * classes' leaves no longer sum to 0, so CatBoost's MultiClass shift
		 * of the leaves changes the contributions of rows that reach an
		 * unreached leaf
		 */
		const ShapCase shifted = {"../shap/cb_multiclass_shifted.json", "cb_multiclass_shifted",
		NULL, 0, 1e-9};

		unreached = check_wide(&shifted, false);
		ok(unreached > 0, "cb_multiclass_shifted", "some rows reach a leaf no training row reached");
	}
	check_leaf_cache();
	check_no_covers();
	printf("1..%d\nshap: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail > 0;
}

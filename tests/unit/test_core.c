/*
 * test_core.c
 *	  Unit tests of the PostgreSQL-free scoring core, against XGBoost's own
 *	  predictions (fixtures made by tests/fixtures/gen_fixtures.py with the
 *	  real XGBoost).  Prints TAP lines and a final "N passed, N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan).  For every
 * tests/fixtures/cases/NAME.meta: loads NAME.json (and NAME.ubj if present),
 * scores the case rows as one column-major batch, as odd-sized batches and
 * row by row, and requires |ours - xgboost| <= 1e-6 (relative above 1).
 * Every file in tests/fixtures/models/bad must be rejected with the expected
 * status code, and random corruptions of valid models must never crash.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catboost_ctr.h"
#include "cpu_engine.h"
#include "forest.h"
#include "forest_eval.h"
#include "../common/test_util.h"

#define FIXTURES "../fixtures"

/* Record one TAP result. */
static void
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
static double
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
static void
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
static void
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

static void
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

	/* odd batch sizes, exercising block tails */
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		size_t		bs = sizes[s];
		double		worst = 0.0;

		for (size_t r0 = 0; r0 < n; r0 += bs)
		{
			size_t		m = r0 + bs < n ? bs : n - r0;

			for (size_t r = 0; r < m; r++)
				for (int k = 0; k < c->nf; k++)
					col[(size_t) k * m + r] = rows[(r0 + r) * c->nf + k];
			predict_cols(f, col, m, margin, out);
			worst = fmax(worst, max_err(out, c->want + r0 * c->nout, m * c->nout));
		}
		snprintf(what, sizeof(what), "batches of %zu rows within %g", bs, tol);
		check(worst <= tol, "%s: %s", label, what);
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
static GsForest *
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

/* Every fixture model against its XGBoost cases. */
static void
test_fixtures(void)
{
	DIR		   *d = opendir(FIXTURES "/cases");
	struct dirent *e;
	int			n_models = 0;

	if (!d)
	{
		check(0, "%s%s", "fixtures directory present", "");
		return;
	}
	while ((e = readdir(d)) != NULL)
	{
		char		name[256],
					path[512];
		int			nf,
					nout;
		char		obj[64];
		FILE	   *mf;
		Cases		c;
		const char *exts[] = {"json", "ubj", "txt", "model"};
		double		tol = 1e-6;
		size_t		len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".meta") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int) (len - 5), e->d_name);
		snprintf(path, sizeof(path), FIXTURES "/cases/%s", e->d_name);
		mf = fopen(path, "r");
		if (!mf || fscanf(mf, "%d %d %63s", &nf, &nout, obj) != 3)
		{
			check(0, "%s: %s", name, "meta file readable");
			if (mf)
				fclose(mf);
			continue;
		}
		/*
		 * more words of the objective ("regression sqrt"), then an optional
		 * tolerance: LightGBM computes in double, we in float
		 */
		{
			char		word[64],
					   *end;

			while (fscanf(mf, "%63s", word) == 1)
			{
				double		v = strtod(word, &end);

				if (*end == '\0' && end != word)
				{
					tol = v;
					break;
				}
				if (strlen(obj) + 1 + strlen(word) < sizeof(obj))
					strcat(strcat(obj, " "), word);
			}
		}
		fclose(mf);
		snprintf(path, sizeof(path), FIXTURES "/cases/%s.csv", name);
		if (gs_read_cases(path, nf, nout, &c) != 0)
		{
			check(0, "%s: %s", name, "cases readable");
			continue;
		}
		for (int x = 0; x < 4; x++)
		{
			GsStatus	st;
			GsForest   *f;
			char		label[400];

			snprintf(path, sizeof(path), FIXTURES "/models/%s.%s", name, exts[x]);
			snprintf(label, sizeof(label), "%s.%s (%s)", name, exts[x], obj);
			st.code = GS_OK;
			f = load(path, &st);
			if (f == NULL && st.code == GS_OK)
				continue;		/* no such file */
			check(f != NULL, "%s: loads (%s)", label, f ? "ok" : st.msg);
			if (f)
			{
				check(strcmp(f->objective, obj) == 0, "%s: %s", label, "objective recorded");
				check_model(label, f, &c, tol);
				gs_forest_free(f);
				n_models++;
			}
		}
		free(c.x);
		free(c.want);
	}
	closedir(d);
	check(n_models >= 20, "%s%s", "at least 20 fixture model files checked", "");
}

/* Bad models: each must fail with the expected code. */
static void
test_bad_models(void)
{
	struct
	{
		const char *file;
		GsCode		code;
	}			bad[] = {
		{"gblinear.json", GS_ERR_UNSUPPORTED},
		{"xb17_gblinear.model", GS_ERR_UNSUPPORTED},
		{"lgb_bad_linear_feature.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_count.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_coeff.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_lines.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_flag.txt", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_nopool_no_own.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_uncertainty.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_loss.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_split_type.json", GS_ERR_INVALID_MODEL},	/* OnlineCtr without CTRs */
		{"cb_bad_cat_subset.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_cat_ctr_type.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_cat_stride.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_key_number.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_key_twice.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_count.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_ctr_border.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_ctr_split_index.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_onehot_value.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_prior.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_target_border.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_element.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_cat_no_table.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_flat_index.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_name_hash.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_child.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_truncated.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_feature.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_border.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_border_huge.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_leaf_count.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_leaf_value.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_nan_mode.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_flat_index.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_bias.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_scale.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_no_trees.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_depth.json", GS_ERR_LIMIT},
		{"lgb_bad_child_out_of_range.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_cycle.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_shared_child.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_feature_out_of_range.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_leaf_count.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_nan_leaf.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_decision_type.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_bitset_bounds.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_cat_index.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_objective.txt", GS_ERR_UNSUPPORTED},
		{"lgb_bad_numbering.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_no_trees.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_truncated.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_num_class.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_sigmoid.txt", GS_ERR_UNSUPPORTED},
		{"unknown_objective.json", GS_ERR_UNSUPPORTED},
		{"vector_leaf_index.json", GS_ERR_INVALID_MODEL},
		{"vector_leaf_size.json", GS_ERR_INVALID_MODEL},
		{"vector_leaf_missing.json", GS_ERR_INVALID_MODEL},
		{"vector_leaf_short.json", GS_ERR_INVALID_MODEL},
		{"truncated.json", GS_ERR_INVALID_MODEL},
		{"truncated.ubj", GS_ERR_INVALID_MODEL},
		{"child_out_of_range.json", GS_ERR_INVALID_MODEL},
		{"cycle.json", GS_ERR_INVALID_MODEL},
		{"feature_out_of_range.json", GS_ERR_INVALID_MODEL},
		{"nonfinite_threshold.json", GS_ERR_INVALID_MODEL},
		{"wrong_lengths.json", GS_ERR_INVALID_MODEL},
		{"not_a_model.json", GS_ERR_INVALID_MODEL},
		{"empty.json", GS_ERR_INVALID_MODEL},
		{"negative_child.json", GS_ERR_INVALID_MODEL},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		char		path[512];
		GsStatus	st;
		GsForest   *f;
		size_t		len;
		unsigned char *b;

		snprintf(path, sizeof(path), FIXTURES "/models/bad/%s", bad[i].file);
		b = gs_read_file(path, &len);
		if (!b)
		{
			check(0, "bad/%s: %s", bad[i].file, "file present");
			continue;
		}
		gs_forest_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
		check(f == NULL && st.code == bad[i].code, "bad/%s rejected: %s", bad[i].file, st.msg);
		gs_forest_free(f);
		free(b);
	}
}

/* Caps: a model over each limit is refused with GS_ERR_LIMIT. */
static void
test_limits(void)
{
	size_t		len;
	unsigned char *b = gs_read_file(FIXTURES "/models/lossguide_deep.json", &len);
	GsLimits	lim;
	GsForest   *f;
	GsStatus	st;

	if (!b)
	{
		check(0, "%s%s", "lossguide_deep.json present", "");
		return;
	}
	lim = gs_default_limits;
	lim.max_depth = 10;
	gs_xgb_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT, "depth cap: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_trees = 5;
	gs_xgb_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT, "tree cap: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_model_bytes = 1000;
	gs_xgb_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT, "size cap: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_features = 29;
	gs_xgb_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT, "feature cap: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_nodes = 100;
	gs_xgb_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT, "node cap: %s%s", st.msg, "");
	free(b);
}

/* Random corruptions of valid models must load or fail, never crash. */
static void
test_corruption(void)
{
	const char *files[] = {FIXTURES "/models/tiny_base.json", FIXTURES "/models/tiny_base.ubj",
	FIXTURES "/models/lgb_tiny.txt", FIXTURES "/models/x3_cat_binary.ubj", FIXTURES "/models/xb10_rf.model"};
	unsigned int seed = 12345;
	int			loaded = 0,
				rejected = 0;

	for (int fi = 0; fi < 5; fi++)
	{
		size_t		len;
		unsigned char *orig = gs_read_file(files[fi], &len);

		if (!orig)
		{
			check(0, "%s: %s", files[fi], "present");
			continue;
		}
		for (int it = 0; it < 3000; it++)
		{
			unsigned char *b = malloc(len);
			size_t		n = len;
			GsForest   *f;
			GsStatus	st;

			memcpy(b, orig, len);
			for (int k = 0; k < 1 + it % 4; k++)
			{
				seed = seed * 1103515245u + 12345u;
				b[(seed >> 8) % len] = (unsigned char) (seed >> 3);
			}
			if (it % 5 == 0)
				n = (seed >> 4) % len;
			gs_forest_load(b, n, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
			if (f)
			{
				/* whatever loaded must score without faults */
				float		x[64],
							m[8],
							o[8];

				for (int k = 0; k < 64; k++)
					x[k] = k % 3 ? (float) k : NAN;
				if (f->n_features <= 64 && f->n_groups <= 8)
					gs_cpu_predict_row(f, x, m, o);
				loaded++;
				gs_forest_free(f);
			}
			else
				rejected++;
			free(b);
		}
		free(orig);
	}
	check(rejected > 0, "%s%s", "corrupted models: no crash, bad ones rejected", "");
	(void) loaded;
}

/* Load the file NAME.EXT of the fixture models. */
static GsForest *
load_fixture(const char *name, const char *ext, GsStatus *st)
{
	char		path[512];

	snprintf(path, sizeof(path), FIXTURES "/models/%s.%s", name, ext);
	return load(path, st);
}

/*
 * XGBoost's legacy binary format: detected with and without its magic, the
 * same forest as the JSON file the same XGBoost saved, and damaged files
 * refused.  (Its scores against XGBoost's: test_fixtures, xb*.model.)
 */
static void
test_binary_format(void)
{
	const char *twins[] = {"xb10_logistic", "xb15_rf", "xb17_dart", "xb17_sklearn_early",
	"xb20_softprob", "xb20_deep"};
	size_t		len;
	unsigned char *b;
	GsModelFormat fmt;
	int			truncated_ok = 1;

	for (int i = 0; i < 6; i++)
	{
		GsStatus	st1,
					st2;
		GsForest   *bin = load_fixture(twins[i], "model", &st1);
		GsForest   *json = load_fixture(twins[i], "json", &st2);
		char		want[40];

		if (bin == NULL || json == NULL)
		{
			check(0, "%s: both files load (%s)", twins[i], bin ? st2.msg : st1.msg);
			gs_forest_free(bin);
			gs_forest_free(json);
			continue;
		}
		check(bin->format == GS_FORMAT_XGBOOST_BINARY && bin->n_trees == json->n_trees &&
			  bin->n_nodes == json->n_nodes && bin->n_groups == json->n_groups &&
			  strcmp(bin->objective, json->objective) == 0 &&
			  strcmp(bin->booster, json->booster) == 0 &&
			  memcmp(bin->nodes, json->nodes, sizeof(GsNode) * (size_t) bin->n_nodes) == 0 &&
			  memcmp(bin->base_margin, json->base_margin, sizeof(float) * (size_t) bin->n_groups) == 0 &&
			  memcmp(bin->tree_group, json->tree_group, sizeof(int32_t) * (size_t) bin->n_trees) == 0,
			  "%s: the binary file gives the forest of the JSON file%s", twins[i], "");
		snprintf(want, sizeof(want), "%.*s (binary)",
				 (int) (strrchr(json->saved_by, '.') - json->saved_by), json->saved_by);
		check(strcmp(bin->saved_by, want) == 0, "%s: saved_by \"%s\"", twins[i], bin->saved_by);
		gs_forest_free(bin);
		gs_forest_free(json);
	}

	b = gs_read_file(FIXTURES "/models/xb17_logistic.model", &len);
	if (b == NULL)
	{
		check(0, "%s%s", "xb17_logistic.model present", "");
		return;
	}
	check(gs_model_detect_format(b, len) == GS_FORMAT_XGBOOST_BINARY &&
		  gs_model_format_parse("xgboost-binary", &fmt) == 0 && fmt == GS_FORMAT_XGBOOST_BINARY,
		  "%s%s", "detects the binary format by its magic; format name xgboost-binary", "");
	/* every truncation is refused as invalid, none read out of bounds (ASan) */
	for (size_t n = 0; n < len; n++)
	{
		GsForest   *f = NULL;
		GsStatus	st;

		gs_xgb_load(b, n, GS_FORMAT_XGBOOST_BINARY, NULL, &gs_malloc_allocator, &f, &st);
		if (f != NULL || st.code != GS_ERR_INVALID_MODEL)
		{
			truncated_ok = 0;
			gs_forest_free(f);
		}
	}
	check(truncated_ok, "%s%s", "every truncation of a binary model is an invalid model", "");
	/* before XGBoost 1.0 the header held no version */
	{
		GsForest   *f = NULL;
		GsStatus	st;

		memset(b + 4 + 20, 0, 8);
		gs_xgb_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
		check(f == NULL && st.code == GS_ERR_UNSUPPORTED, "binary model without a version: %s%s",
			  st.msg, "");
	}
	free(b);
	b = gs_read_file(FIXTURES "/models/xb10_logistic.model", &len);
	check(b != NULL && memcmp(b, "binf", 4) != 0 &&
		  gs_model_detect_format(b, len) == GS_FORMAT_XGBOOST_BINARY,
		  "%s%s", "detects XGBoost 1.0's binary files, which have no magic", "");
	free(b);
}

/*
 * A missing value given at load (gpu_load_model's missing_value): the
 * Booster trained on a DMatrix(missing=-999) scores as XGBoost's predict
 * told missing=-999 does (cases x3_booster_missing_m999), and, without it,
 * as XGBoost's predict without it (test_fixtures).
 */
static void
test_missing_value(void)
{
	GsStatus	st;
	GsForest   *f = load_fixture("x3_booster_missing", "json", &st);
	GsCases		c;

	if (f == NULL || gs_read_cases(FIXTURES "/cases/x3_booster_missing_m999.csv", 8, 1, &c) != 0)
	{
		check(0, "%s%s", "x3_booster_missing.json and its _m999 cases present", "");
		gs_forest_free(f);
		return;
	}
	check(!f->has_missing_value, "%s%s", "a Booster's file holds no missing value", "");
	f->has_missing_value = true;
	f->missing_value = -999.0f;
	check_model("x3_booster_missing.json with missing_value -999", f, &c, 1e-6);
	gs_forest_free(f);
	free(c.x);
	free(c.want);
}

/*
 * Files that are no model are named, with how to export the model: the
 * first bytes of each kind (a pickle of protocol 4, a joblib file written
 * with compress, a zip archive as torch.save and Keras 3 write, a Keras 2
 * .h5, a CatBoost .cbm or JSON model, XGBoost's and LightGBM's dumps, PMML), each left
 * undetected as a model; no model fixture is taken for one of them.
 */
static void
test_foreign_kinds(void)
{
	static const struct
	{
		const char *bytes;
		size_t		len;
		const char *kind;
	}			cases[] = {
		{"\x80\x04\x95\x10\x00\x00\x00", 7, "pickled"},
		{"\x1f\x8b\x08\x00", 4, "gzip"},
		{"PK\x03\x04\x14\x00", 6, "zip"},
		{"\x89HDF\r\n\x1a\n\x00", 9, "HDF5"},
		{"CBM1\x10\x00", 6, "CatBoost"},
		{"booster[0]:\n0:[f0<0.5] yes=1,no=2\n", 34, "text dump"},
		{"  [\n  { \"nodeid\": 0, \"depth\": 0 }]", 34, "JSON dump"},
		{"{\"name\": \"tree\", \"version\": \"v4\", \"tree_info\": []}", 50, "LightGBM's JSON dump"},
		{"<?xml version=\"1.0\"?><PMML>", 27, "PMML"},
	};
	const char *hint;
	const char *kind;
	int			named = 0,
				n = 0;
	char		counts[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const unsigned char *b = (const unsigned char *) cases[i].bytes;

		kind = gs_model_foreign_kind(b, cases[i].len, &hint);
		check(kind && strstr(kind, cases[i].kind) && hint && hint[0] &&
			  gs_model_detect_format(b, cases[i].len) == GS_FORMAT_AUTO,
			  "foreign file %s: named \"%s\", not detected as a model", cases[i].kind,
			  kind ? kind : "(none)");
	}
	check(gs_model_foreign_kind((const unsigned char *) "a,b,c\n1,2,3\n", 12, &hint) == NULL &&
		  hint == NULL, "%s%s", "a CSV file is no known kind", "");
	for (int d = 0; d < 2; d++)
	{
		const char *dname = d == 0 ? FIXTURES "/models" : FIXTURES "/onnx";
		DIR		   *dir = opendir(dname);
		struct dirent *e;

		while (dir && (e = readdir(dir)) != NULL)
		{
			char		path[1024];
			size_t		len;
			unsigned char *b;
			struct stat sb;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dname, e->d_name);
			if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
				continue;		/* bad/, trees/ */
			b = (unsigned char *) gs_read_file(path, &len);
			if (b == NULL)
				continue;
			n++;
			if (gs_model_foreign_kind(b, len, &hint) != NULL)
			{
				named++;
				fprintf(stderr, "# %s taken for a foreign file\n", e->d_name);
			}
			free(b);
		}
		if (dir)
			closedir(dir);
	}
	snprintf(counts, sizeof(counts), "%d files, %d named", n, named);
	check(n > 200 && named == 0, "no model fixture is taken for a foreign file (%s)%s", counts, "");
}

/* Format detection and names. */
static void
test_formats(void)
{
	GsModelFormat fmt;
	const char *hint;

	check(gs_model_detect_format((const unsigned char *) "  {\"learner\": 1}", 16) == GS_FORMAT_XGBOOST_JSON,
		  "%s%s", "detects JSON", "");
	check(gs_model_detect_format((const unsigned char *) "{L\0\0", 4) == GS_FORMAT_XGBOOST_UBJ,
		  "%s%s", "detects UBJ", "");
	check(gs_model_detect_format((const unsigned char *) "PK\3\4", 4) == GS_FORMAT_AUTO,
		  "%s%s", "rejects other bytes", "");
	check(gs_model_format_parse("xgboost-ubj", &fmt) == 0 && fmt == GS_FORMAT_XGBOOST_UBJ &&
		  gs_model_format_parse("LightGBM", &fmt) == 0 && fmt == GS_FORMAT_LIGHTGBM &&
		  gs_model_format_parse("pmml", &fmt) != 0, "%s%s", "parses format names", "");
	check(gs_model_detect_format((const unsigned char *) "tree\nversion=v4\n", 16) == GS_FORMAT_LIGHTGBM,
		  "%s%s", "detects LightGBM text", "");
	check(gs_model_detect_format((const unsigned char *) "{\n  \"features_info\":\n    {", 28) == GS_FORMAT_CATBOOST_JSON &&
		  gs_model_foreign_kind((const unsigned char *) "{\"features_info\": {}}", 21, &hint) == NULL,
		  "%s%s", "detects CatBoost JSON, a model and no foreign file", "");
	check(gs_model_format_parse("catboost-json", &fmt) == 0 && fmt == GS_FORMAT_CATBOOST_JSON &&
		  gs_model_format_parse("CatBoost", &fmt) == 0 && fmt == GS_FORMAT_CATBOOST_JSON &&
		  strcmp(gs_model_format_name(GS_FORMAT_CATBOOST_JSON), "catboost-json") == 0,
		  "%s%s", "parses and names catboost-json", "");
	test_foreign_kinds();
}

/* Transform helpers agree with XGBoost's definitions on edge values. */
static void
test_transforms(void)
{
	float		m[3] = {1000.0f, -1000.0f, 0.0f},
				o[3];

	gs_transform_row(GS_TRANSFORM_SOFTMAX, NULL, m, 3, o);
	check(o[0] == 1.0f && o[1] == 0.0f && isfinite(o[2]), "%s%s", "softmax stable on extreme margins", "");
	check(gs_sigmoid(-1000.0f) >= 0.0f && gs_sigmoid(1000.0f) == 1.0f && gs_sigmoid(0.0f) == 0.5f,
		  "%s%s", "sigmoid bounded", "");
	gs_transform_row(GS_TRANSFORM_ARGMAX, NULL, m, 3, o);
	check(o[0] == 0.0f, "%s%s", "argmax picks the largest margin", "");
}

/* A GsInterrupt that counts its polls and fires at poll fire_at (0: never). */
typedef struct PollCount
{
	long		polls;
	long		fire_at;
} PollCount;

static bool
poll_count(void *arg)
{
	PollCount  *p = arg;

	p->polls++;
	return p->fire_at > 0 && p->polls >= p->fire_at;
}

/*
 * A load of bytes polls its GsInterrupt (at least min_polls times), and an
 * interrupt at any of those polls stops it with GS_ERR_CANCELLED and no
 * forest (ASan's leak check: nothing built so far is left behind).
 */
static void
check_interruptible(const char *label, const unsigned char *b, size_t len, long min_polls)
{
	GsLimits	lim = gs_default_limits;
	PollCount	pc = {0, 0};
	GsForest   *f;
	GsStatus	st;
	GsCode		rc;
	char		what[128];
	long		n,
				bad = 0;

	lim.interrupt.pending = poll_count;
	lim.interrupt.arg = &pc;
	rc = gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	n = pc.polls;
	snprintf(what, sizeof(what), "%ld polls, at least %ld", n, min_polls);
	check(rc == GS_OK && n >= min_polls, "%s: loads, checking for interrupts (%s)", label, what);
	gs_forest_free(f);
	for (long k = 1; k <= n; k++)
	{
		pc.polls = 0;
		pc.fire_at = k;
		rc = gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
		if (rc != GS_ERR_CANCELLED || f != NULL || pc.polls != k ||
			strcmp(st.msg, "loading the model was interrupted") != 0)
		{
			bad++;
			gs_forest_free(f);
		}
	}
	snprintf(what, sizeof(what), "%ld of %ld wrong", bad, n);
	check(bad == 0, "%s: an interrupt at any poll stops the load (%s)", label, what);
}

/*
 * LightGBM text with the trees of lgb_binary.txt repeated copies times
 * (renumbered); malloc'd, NULL when the fixture is missing.
 */
static char *
repeat_lgbm_trees(int copies, size_t *len)
{
	size_t		n;
	char	   *text = (char *) gs_read_file(FIXTURES "/models/lgb_binary.txt", &n);
	char	   *first,
			   *end,
			   *out,
			   *o;
	int			per_copy = 0;

	if (!text)
		return NULL;
	text = realloc(text, n + 1);
	text[n] = '\0';
	first = strstr(text, "\nTree=0\n") + 1;
	end = strstr(first, "\nend of trees") + 1;
	for (char *q = first; q < end; q = strchr(q, '\n') + 1)
		per_copy += strncmp(q, "Tree=", 5) == 0;
	out = o = malloc(n + (size_t) copies * (size_t) (end - first + 16 * per_copy));
	memcpy(o, text, (size_t) (first - text));
	o += first - text;
	for (int c = 0; c < copies; c++)
		for (char *q = first; q < end;)
		{
			char	   *eol = strchr(q, '\n') + 1;

			if (strncmp(q, "Tree=", 5) == 0)
				o += sprintf(o, "Tree=%d\n", c * per_copy + atoi(q + 5));
			else
			{
				memcpy(o, q, (size_t) (eol - q));
				o += eol - q;
			}
			q = eol;
		}
	memcpy(o, end, n - (size_t) (end - text));
	o += n - (size_t) (end - text);
	*len = (size_t) (o - out);
	free(text);
	return out;
}

/* Every loader of a large model can be interrupted (see GsInterrupt). */
static void
test_interrupt(void)
{
	const char *files[] = {"lossguide_deep.json", "demo_fraud.ubj"};
	size_t		len;
	char	   *lgb;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
	{
		char		path[256];
		unsigned char *b;

		snprintf(path, sizeof(path), FIXTURES "/models/%s", files[i]);
		b = gs_read_file(path, &len);
		check(b != NULL, "%s%s present", files[i], "");
		if (b)
			check_interruptible(files[i], b, len, 2);
		free(b);
	}
	/* 300 trees: one poll per 64 trees in each of the loader's two passes */
	lgb = repeat_lgbm_trees(10, &len);
	check(lgb != NULL, "%s%s", "lgb_binary.txt present", "");
	if (lgb)
		check_interruptible("lgb_binary.txt x 10", (unsigned char *) lgb, len, 8);
	free(lgb);
}

/*
 * gs_rows_to_columns: every element lands at x[f * ld + r], for row counts
 * around its block size, several feature counts and ld > n_rows; nothing
 * is written outside the n_rows entries of each column.
 */
static void
test_rows_to_columns(void)
{
	static const size_t ns[] = {0, 1, 63, 64, 65, 200, 4099};
	static const int nfs[] = {1, 3, 30, 31};
	int			bad = 0;

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(nfs) / sizeof(nfs[0]); b++)
		{
			size_t		n = ns[a],
						ld = n + 5;
			int			nf = nfs[b];
			float	   *rows = malloc(sizeof(float) * (n * nf + 1));
			float	   *x = malloc(sizeof(float) * (ld * nf + 1));

			for (size_t i = 0; i < n * nf; i++)
				rows[i] = (float) i;
			for (size_t i = 0; i < ld * nf; i++)
				x[i] = -1.0f;
			gs_rows_to_columns(rows, n, nf, x, ld);
			for (int f = 0; f < nf; f++)
				for (size_t r = 0; r < ld; r++)
					bad += x[(size_t) f * ld + r] != (r < n ? rows[r * nf + f] : -1.0f);
			free(rows);
			free(x);
		}
	gs_tap(bad == 0, "gs_rows_to_columns", "every value in place, nothing past n_rows, 28 shapes");
}

int
main(void)
{
	test_formats();
	test_binary_format();
	test_missing_value();
	test_transforms();
	test_fixtures();
	test_bad_models();
	test_limits();
	test_corruption();
	test_interrupt();
	test_rows_to_columns();
	printf("1..%d\n", n_pass + n_fail);
	printf("core: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

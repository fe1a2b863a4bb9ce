/*
 * verify.c
 *	  gpu_verify_model: score generated rows with our engine and with
 *	  XGBoost's own predictor (XGBoost C API) and report the difference.
 *
 * The XGBoost library is loaded at run time (dlopen) from the superuser
 * setting pg_gpuscore.xgboost_library (empty: the system's libxgboost.so.0,
 * then libxgboost.so), so models saved by a newer XGBoost than the
 * system's can be verified by pointing it at that version's library (for
 * example the lib/libxgboost.so inside a pip-installed xgboost).  The
 * library is opened once per backend and path and never closed (XGBoost
 * starts threads); the result rows say which library and version were used,
 * and a library that cannot read the model gives a clear ERROR.
 * Categorical features get generated category codes (in range, unseen and
 * negative) instead of thresholds.
 *
 * Rows are drawn around the model's own split thresholds (exactly on them,
 * one float step below, a little above or below, or anywhere in range),
 * with about one value in ten missing, so every branch and every default
 * direction is exercised.  The generator is seeded, so a run is repeatable.
 * Where a GPU is present (and pg_gpuscore.device is not 'cpu') the GPU
 * engine is compared too, as a second result row.
 * The stored model bytes are handed to XGBoost only after our validator has
 * accepted them (they are in the catalog).  The booster handle is freed on
 * every exit path, ERROR included.
 */
#include "postgres.h"

#include <dlfcn.h>
#include <float.h>
#include <math.h>

#include <xgboost/c_api.h>

#include "common/pg_prng.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "core/forest/cpu_engine.h"
#include "gpuscore.h"
#include "provider.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_verify_model);

#define VERIFY_MAX_ROWS 10000000
#define VERIFY_CHUNK 65536
#define VERIFY_TOLERANCE 1e-6

/* Split thresholds of each feature, CSR style. */
typedef struct Thresholds
{
	int64	   *start;			/* [n_features + 1] */
	float	   *value;			/* all thresholds grouped by feature */
	float	   *lo;				/* [n_features] smallest threshold */
	float	   *hi;				/* [n_features] largest threshold */
	int32	   *max_code;		/* [n_features] categorical: codes in the
								 * sets are below this; -1: numerical */
	bool	   *negated;		/* [n_features] some set holds negated codes
								 * (GS_CAT_NEGATED) */
} Thresholds;

/* The XGBoost C API functions gpu_verify_model uses, from the loaded library. */
typedef struct XgbApi
{
	char		path[MAXPGPATH];	/* the name it was opened by */
	void	   *handle;
	void		(*version) (int *, int *, int *);
	const char *(*last_error) (void);
	int			(*create) (const DMatrixHandle[], bst_ulong, BoosterHandle *);
	int			(*set_param) (BoosterHandle, const char *, const char *);
	int			(*load_buffer) (BoosterHandle, const void *, bst_ulong);
	int			(*predict_dense) (BoosterHandle, const char *, const char *, DMatrixHandle,
								  const bst_ulong **, bst_ulong *, const float **);
	int			(*free_booster) (BoosterHandle);
	int			(*get_attr) (BoosterHandle, const char *, const char **, int *);
	/* for the linear booster, which has no in-place prediction */
	int			(*dmatrix_from_mat) (const float *, bst_ulong, bst_ulong, float, DMatrixHandle *);
	int			(*dmatrix_free) (DMatrixHandle);
	int			(*predict_dmatrix) (BoosterHandle, DMatrixHandle, const char *,
									const bst_ulong **, bst_ulong *, const float **);
} XgbApi;

static XgbApi xgb_api;

/*
 * Open the XGBoost library named by pg_gpuscore.xgboost_library (once per
 * backend and name) and resolve the functions.  ERROR when it cannot be
 * opened or lacks a function.
 */
static const XgbApi *
xgb_api_load(void)
{
	const char *names[2];
	int			n_names = 0;
	void	   *h = NULL;
	const char *used = NULL;
	char		errs[1024] = "";
	XgbApi		api;

	if (gs_xgboost_library && gs_xgboost_library[0])
		names[n_names++] = gs_xgboost_library;
	else
	{
		names[n_names++] = "libxgboost.so.0";
		names[n_names++] = "libxgboost.so";
	}
	if (xgb_api.handle && strcmp(xgb_api.path, names[0]) == 0)
		return &xgb_api;
	for (int i = 0; i < n_names && !h; i++)
	{
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			used = names[i];
		else
			snprintf(errs + strlen(errs), sizeof(errs) - strlen(errs), "%s%s",
					 errs[0] ? "; " : "", dlerror());
	}
	if (!h)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("could not load the XGBoost library \"%s\"", names[0]),
				 errdetail("%s", errs),
				 errhint("Set pg_gpuscore.xgboost_library to the path of a libxgboost.so (for example the lib/libxgboost.so of a pip-installed xgboost).")));
	memset(&api, 0, sizeof(api));
	strlcpy(api.path, gs_xgboost_library && gs_xgboost_library[0] ? gs_xgboost_library : used,
			sizeof(api.path));
	api.handle = h;
#define XGB_SYM(field, sym) \
	do { \
		*(void **) &api.field = dlsym(h, sym); \
		if (api.field == NULL) \
			ereport(ERROR, \
					(errcode(ERRCODE_UNDEFINED_FUNCTION), \
					 errmsg("library \"%s\" is not a usable XGBoost library", used), \
					 errdetail("It has no function %s.", sym))); \
	} while (0)
	XGB_SYM(version, "XGBoostVersion");
	XGB_SYM(last_error, "XGBGetLastError");
	XGB_SYM(create, "XGBoosterCreate");
	XGB_SYM(set_param, "XGBoosterSetParam");
	XGB_SYM(load_buffer, "XGBoosterLoadModelFromBuffer");
	XGB_SYM(predict_dense, "XGBoosterPredictFromDense");
	XGB_SYM(free_booster, "XGBoosterFree");
	XGB_SYM(get_attr, "XGBoosterGetAttr");
	XGB_SYM(dmatrix_from_mat, "XGDMatrixCreateFromMat");
	XGB_SYM(dmatrix_free, "XGDMatrixFree");
	XGB_SYM(predict_dmatrix, "XGBoosterPredictFromDMatrix");
#undef XGB_SYM
	/* the previous library, if any, stays loaded: XGBoost may hold threads */
	xgb_api = api;
	return &xgb_api;
}

/* Collect each feature's split thresholds from the forest. */
static void
collect_thresholds(const GsForest *f, Thresholds *th)
{
	int			nf = f->n_features;
	int64	   *fill;

	th->start = palloc0(sizeof(int64) * (nf + 1));
	th->lo = palloc(sizeof(float) * nf);
	th->hi = palloc(sizeof(float) * nf);
	th->max_code = palloc(sizeof(int32) * nf);
	th->negated = palloc0(sizeof(bool) * nf);
	for (int k = 0; k < nf; k++)
		th->max_code[k] = -1;
	for (int64 i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].info & GS_NODE_CATEGORICAL && !(f->nodes[i].info & GS_NODE_LEAF))
		{
			uint32		set;
			int32		words;
			int			k = f->nodes[i].info & GS_NODE_FEATURE_MASK;

			memcpy(&set, &f->nodes[i].value, sizeof(set));
			words = (int32) (f->cat_words[set] & GS_CAT_WORDS_MASK);
			th->max_code[k] = Max(th->max_code[k], words * 32);
			if (f->cat_words[set] & GS_CAT_NEGATED)
				th->negated[k] = true;
		}
	for (int64 i = 0; i < f->n_nodes; i++)
		if (!(f->nodes[i].info & (GS_NODE_LEAF | GS_NODE_CATEGORICAL)))
			th->start[(f->nodes[i].info & GS_NODE_FEATURE_MASK) + 1]++;
	for (int k = 0; k < nf; k++)
		th->start[k + 1] += th->start[k];
	th->value = palloc(sizeof(float) * Max(th->start[nf], 1));
	fill = palloc(sizeof(int64) * nf);
	memcpy(fill, th->start, sizeof(int64) * nf);
	for (int64 i = 0; i < f->n_nodes; i++)
		if (!(f->nodes[i].info & (GS_NODE_LEAF | GS_NODE_CATEGORICAL)))
			th->value[fill[f->nodes[i].info & GS_NODE_FEATURE_MASK]++] = f->nodes[i].value;
	for (int k = 0; k < nf; k++)
	{
		th->lo[k] = th->hi[k] = 0.0f;
		for (int64 j = th->start[k]; j < th->start[k + 1]; j++)
		{
			if (j == th->start[k] || th->value[j] < th->lo[k])
				th->lo[k] = th->value[j];
			if (j == th->start[k] || th->value[j] > th->hi[k])
				th->hi[k] = th->value[j];
		}
	}
}

/*
 * One generated value of feature k of forest f: NaN, or (one in twenty) the
 * value f takes as missing besides NaN, where it has one.
 */
static float
draw_value(pg_prng_state *rng, const GsForest *f, const Thresholds *th, int k)
{
	int64		n = th->start[k + 1] - th->start[k];
	double		u = pg_prng_double(rng);
	float		t,
				span;

	if (u < 0.10)
		return (f->has_missing_value && u < 0.05) ? f->missing_value : NAN;
	/* a category code: in the sets' range, a little past it, or negative */
	if (th->max_code[k] >= 0)
	{
		float		c = (float) ((int64) pg_prng_uint64_range(rng, 0, th->max_code[k] + 3) - 1);

		return th->negated[k] && pg_prng_bool(rng) ? -c : c;
	}
	if (n == 0)
		return (float) (pg_prng_double(rng) * 200.0 - 100.0);
	t = th->value[th->start[k] + (int64) pg_prng_uint64_range(rng, 0, n - 1)];
	span = th->hi[k] - th->lo[k];
	if (span <= 0.0f)
		span = fabsf(t) + 1.0f;
	if (u < 0.35)
		return t;
	if (u < 0.50)
		return nextafterf(t, -INFINITY);
	if (u < 0.80)
		return t + (float) ((pg_prng_double(rng) - 0.5) * 0.1 * span);
	return th->lo[k] - 0.1f * span + (float) (pg_prng_double(rng) * 1.2 * span);
}

/* Differences of one engine's outputs from XGBoost's. */
typedef struct EngineStats
{
	double		max_diff;
	int64		mismatches;
	int64		compared;		/* rows */
} EngineStats;

/* Compare n outputs with XGBoost's reference and update st. */
static void
compare_outputs(const float *ours, const float *ref, int64 n, EngineStats *st)
{
	for (int64 i = 0; i < n; i++)
	{
		double		diff = fabs((double) ours[i] - (double) ref[i]);

		if (isnan(ours[i]) != isnan(ref[i]))
			diff = INFINITY;
		else if (isnan(ours[i]))
			diff = 0.0;
		if (diff > st->max_diff)
			st->max_diff = diff;
		if (diff > VERIFY_TOLERANCE * Max(1.0, fabs((double) ref[i])))
			st->mismatches++;
	}
}

/*
 * XGBoost's last error message, palloc'd, cut to its first line without the
 * "[hh:mm:ss] /path/file.cc:123: " prefix: XGBoost appends candidate lists
 * and a native stack trace that say nothing to a user.
 */
static char *
xgb_error_text(const XgbApi *api)
{
	const char *e = api->last_error();
	const char *p;
	char	   *out;

	if (e == NULL)
		return pstrdup("(no message)");
	/* skip "[time] file:line: " when the line starts with '[' */
	if (e[0] == '[' && (p = strchr(e, ']')) != NULL)
	{
		const char *colon = strstr(p, ": ");

		if (colon != NULL && (strchr(p, '\n') == NULL || colon < strchr(p, '\n')))
			e = colon + 2;
	}
	out = pnstrdup(e, strcspn(e, "\n"));
	return out;
}

/*
 * The rounds XGBoost's predict should use for model booster: as the loader
 * does (best_iteration_trees in src/core/xgb_load.c), best_iteration + 1
 * for a model saved by the scikit-learn API after early stopping, else 0
 * (every round).
 */
static int64
verify_iteration_end(const XgbApi *api, BoosterHandle booster)
{
	const char *sk = NULL,
			   *best = NULL;
	int			has_sk = 0,
				has_best = 0;
	char	   *end;
	long long	b;

	if (api->get_attr(booster, "scikit_learn", &sk, &has_sk) != 0 || !has_sk ||
		api->get_attr(booster, "best_iteration", &best, &has_best) != 0 || !has_best || best == NULL)
		return 0;
	b = strtoll(best, &end, 10);
	return (*end == '\0' && b >= 0) ? (int64) b + 1 : 0;
}

/* ERROR with XGBoost's last error message. */
static void
xgb_fail(const XgbApi *api, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("XGBoost could not %s", what),
			 errdetail("%s", xgb_error_text(api))));
}

/*
 * ERROR (0A000) unless model name (forest f, NULL for a network; linear: an
 * XGBoost linear booster) is one XGBoost can score.
 */
static void
check_xgboost_model(const char *name, const GsForest *f, bool linear)
{
	if (f == NULL && !linear)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" is a neural network: gpu_verify_model compares XGBoost models with XGBoost", name),
				 errhint("Neural networks are checked against onnxruntime's outputs by the test suite (tests/fixtures/onnx).")));
	if (f && f->format == GS_FORMAT_ONNX)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" is an ONNX tree ensemble: gpu_verify_model compares with XGBoost", name),
				 errhint("ONNX tree ensembles are checked against onnxruntime's scores by the test suite (tests/fixtures/gen_onnx_tree_fixtures.py).")));
	if (f && f->format == GS_FORMAT_CATBOOST_JSON)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" is a CatBoost model: gpu_verify_model compares with XGBoost", name),
				 errhint("CatBoost models are checked against CatBoost's own predictions by the test suite (tests/fixtures/gen_fixtures_catboost.py).")));
	if (f && f->format == GS_FORMAT_LIGHTGBM)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" is a LightGBM model: gpu_verify_model compares with XGBoost", name),
				 errhint("LightGBM models are checked against LightGBM's own scores by the test suite (tests/fixtures/gen_fixtures_formats.py).")));
}

/* WARNING when f was saved by an XGBoost newer than the one it is compared with. */
static void
warn_if_newer(const char *name, const GsForest *f, int major, int minor, int patch)
{
	int			smaj,
				smin,
				spat;

	/* an older XGBoost may misread a newer model without failing */
	if (sscanf(f->saved_by, "xgboost %d.%d.%d", &smaj, &smin, &spat) == 3 &&
		(smaj > major || (smaj == major && smin > minor)))
		ereport(WARNING,
				(errmsg("model \"%s\" was saved by %s, newer than the XGBoost %d.%d.%d it is compared with",
						name, f->saved_by, major, minor, patch),
				 errdetail("XGBoost %d.%d.%d may not read every part of the model correctly, so differences can come from it.",
						   major, minor, patch),
				 errhint("Set pg_gpuscore.xgboost_library to the libxgboost.so of XGBoost %d.%d or newer.",
						 smaj, smin)));
}

/*
 * XGBoost's outputs for the n rows of rowmajor (n x nf), and in *total how
 * many there are; they belong to the booster, valid until its next predict.
 */
static const float *
xgb_predict_rows(const XgbApi *api, BoosterHandle booster, const char *predict_config,
				 const GsForest *f, bool linear, const float *rowmajor, int64 n, int nf,
				 bst_ulong *total)
{
	const bst_ulong *shape;
	bst_ulong	dim;
	const float *ref;

	if (linear)
	{
		/* gblinear predicts from a DMatrix only */
		DMatrixHandle dmat = NULL;
		int			rc = api->dmatrix_from_mat(rowmajor, (bst_ulong) n, (bst_ulong) nf,
											   f->has_missing_value ? f->missing_value : NAN,
											   &dmat);

		if (rc == 0)
			rc = api->predict_dmatrix(booster, dmat, predict_config, &shape, &dim, &ref);
		if (dmat)
			api->dmatrix_free(dmat);	/* ref stays valid: it is the booster's */
		if (rc != 0)
			xgb_fail(api, "predict");
	}
	else
	{
		char	   *iface = psprintf("{\"data\": [%lu, false], \"shape\": [%lld, %d], "
									 "\"typestr\": \"<f4\", \"version\": 3}",
									 (unsigned long) (uintptr_t) rowmajor, (long long) n, nf);

		if (api->predict_dense(booster, iface, predict_config,
							   NULL, &shape, &dim, &ref) != 0)
			xgb_fail(api, "predict");
		pfree(iface);
	}
	*total = 1;
	for (bst_ulong d = 0; d < dim; d++)
		*total *= shape[d];
	return ref;
}

/*
 * n random rows of nf features for f (draw_value), both row-major (for
 * XGBoost) and column-major (for our engines).
 */
static void
draw_rows(pg_prng_state *rng, const GsForest *f, const Thresholds *th, int64 n, int nf,
		  float *rowmajor, float *colmajor)
{
	for (int64 r = 0; r < n; r++)
		for (int k = 0; k < nf; k++)
		{
			float		v = draw_value(rng, f, th, k);

			rowmajor[r * nf + k] = v;
			colmajor[(size_t) k * n + r] = v;
		}
}

/*
 * Our CPU engine's outputs for the n column-major rows x (missing values
 * marked in place): the model's own for a linear booster, else forest f's.
 */
static void
score_ours(const GsModelRef *m, const GsForest *f, bool linear, float *x, int64 n,
		   float *margin, float *ours)
{
	if (linear)
	{
		gs_model_mark_missing(m->model, x, n, n);
		gs_model_predict(m->model, x, n, n, margin, ours);
	}
	else
	{
		gs_forest_mark_missing(f, x, n, n);
		gs_cpu_predict(f, x, n, n, margin, ours);
	}
}

/*
 * Whether m is compared on the GPU too: there is one, pg_gpuscore.device
 * does not switch it off, the model is a forest and its upload passed.
 */
static bool
gpu_ready(GsModelRef *m, bool linear)
{
	char		why[512];

	if (gs_device_mode == GS_DEVICE_CPU || linear)
		return false;
	gs_provider_load();
	gs_provider_apply_fault();
	return gs_provider.usable && gs_device_upload(m, why, sizeof(why));
}

/* The GPU's outputs for the same rows; ERROR when it fails. */
static void
score_gpu(const GsModelRef *m, const char *name, const float *x, int64 n, float *out)
{
	char		why[512];
	int			rc = gs_provider.predict((GsCudaModel *) m->device_model, x,
										 n, out, why, sizeof(why));

	if (rc != GS_CUDA_OK)
	{
		if (rc == GS_CUDA_DEVICE_LOST)
			gs_provider_lost(why);
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("GPU scoring failed for model \"%s\"", name),
				 errdetail("%s", why)));
	}
}

/* One row of gpu_verify_model's result: what engine scored against XGBoost. */
static void
put_result_row(ReturnSetInfo *rsinfo, const char *name, int32 version, const char *engine,
			   const EngineStats *st, int nout, const char *xgb_version, const char *xgb_path)
{
	Datum		values[10];
	bool		nulls[10] = {0};

	values[0] = CStringGetTextDatum(name);
	values[1] = Int32GetDatum(version);
	values[2] = CStringGetTextDatum(engine);
	values[3] = Int64GetDatum(st->compared);
	values[4] = Int64GetDatum(st->compared * nout);
	values[5] = Float8GetDatum(st->max_diff);
	values[6] = Int64GetDatum(st->mismatches);
	values[7] = CStringGetTextDatum(xgb_version);
	values[8] = BoolGetDatum(st->mismatches == 0);
	values[9] = CStringGetTextDatum(xgb_path);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * gpu_verify_model(name text, n_rows integer DEFAULT 10000) RETURNS
 * TABLE(model, version, engine, rows_compared, outputs_compared,
 * max_abs_diff, mismatches, xgboost_version, passed, xgboost_library).
 */
Datum
gpuscore_gpu_verify_model(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *name = gs_model_name_arg(fcinfo, 0);
	int32		n_rows = PG_ARGISNULL(1) ? 10000 : PG_GETARG_INT32(1);
	GsModelRef *m;
	const GsForest *f;
	int64		model_id;
	int32		version;
	GsModelFormat fmt;
	bytea	   *bytes;
	Thresholds	th;
	pg_prng_state rng;
	BoosterHandle volatile booster = NULL;
	char	   *predict_config;
	EngineStats stats[2] = {{0}};	/* cpu, gpu */
	bool		with_gpu;
	bool		linear;
	float	   *theirs_gpu = NULL;
	int			major,
				minor,
				patch;
	const XgbApi *api;
	int			nf,
				nout;
	float	   *rowmajor,
			   *colmajor,
			   *margin,
			   *ours;

	if (n_rows < 1 || n_rows > VERIFY_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n_rows must be between 1 and %d", VERIFY_MAX_ROWS)));
	InitMaterializedSRF(fcinfo, 0);
	m = gs_model_acquire(name, fcinfo->flinfo->fn_mcxt);
	f = m->forest;
	linear = f == NULL && m->model->mlp->linear_booster;
	check_xgboost_model(name, f, linear);
	if (!gs_catalog_fetch(name, &model_id, &version, &fmt, &bytes, NULL, NULL) || model_id != m->model_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" changed while being verified", name)));
	if (linear)
	{
		/*
		 * XGBoost's linear booster: what its learner says (saved_by, the
		 * missing value) from the tree-less forest of its weights; scored
		 * below by the model itself
		 */
		GsAllocator a = gs_context_allocator(CurrentMemoryContext);
		GsLimits	lim = gs_current_limits();
		GsForest   *lf;
		GsStatus	st;

		if (gs_model_load_weights((unsigned char *) VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
								  fmt, &lim, &a, &lf, &st) != GS_OK)
			gs_report_status(&st);
		lf->has_missing_value = gs_model_missing_value(m->model, &lf->missing_value);
		f = lf;
	}
	nf = m->model->n_features;
	nout = m->model->n_outputs;

	collect_thresholds(f, &th);
	pg_prng_seed(&rng, 20261123);
	rowmajor = palloc(sizeof(float) * VERIFY_CHUNK * nf);
	colmajor = palloc(sizeof(float) * VERIFY_CHUNK * nf);
	margin = palloc(sizeof(float) * (linear ? gs_model_scratch_floats(m->model, VERIFY_CHUNK) :
									 (size_t) VERIFY_CHUNK * f->n_groups));
	ours = palloc(sizeof(float) * VERIFY_CHUNK * nout);
	api = xgb_api_load();
	api->version(&major, &minor, &patch);
	warn_if_newer(name, f, major, minor, patch);

	/* the GPU engine too, when there is one and it is not switched off */
	with_gpu = gpu_ready(m, linear);
	if (with_gpu)
		theirs_gpu = palloc(sizeof(float) * VERIFY_CHUNK * nout);

	PG_TRY();
	{
		char		nthread[16];

		if (api->create(NULL, 0, (BoosterHandle *) &booster) != 0)
			xgb_fail(api, "create a booster");
		snprintf(nthread, sizeof(nthread), "%d", gs_verify_threads);
		if (api->set_param(booster, "nthread", nthread) != 0)
			xgb_fail(api, "set its thread count");
		if (api->load_buffer(booster, VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("XGBoost %d.%d.%d from \"%s\" cannot read model \"%s\"",
							major, minor, patch, api->path, name),
					 errdetail("The model was saved by %s. XGBoost said: %s",
							   f->saved_by[0] ? f->saved_by : "an unknown XGBoost version",
							   xgb_error_text(api)),
					 errhint("Set pg_gpuscore.xgboost_library to the libxgboost.so of the XGBoost version that saved the model (or a newer one).")));

		/* XGBoost's scikit-learn predict passes its `missing`, as we take it */
		predict_config = psprintf("{\"type\": 0, \"training\": false, \"iteration_begin\": 0, "
								  "\"iteration_end\": " INT64_FORMAT ", \"strict_shape\": false, "
								  "\"cache_id\": 0, \"missing\": %s}",
								  linear ? (int64) 0 : verify_iteration_end(api, booster),
								  f->has_missing_value ? psprintf("%.9g", (double) f->missing_value) : "NaN");
		for (int64 done = 0; done < n_rows; done += VERIFY_CHUNK)
		{
			int64		n = Min((int64) VERIFY_CHUNK, n_rows - done);
			bst_ulong	total;
			const float *ref;

			CHECK_FOR_INTERRUPTS();
			draw_rows(&rng, f, &th, n, nf, rowmajor, colmajor);
			score_ours(m, f, linear, colmajor, n, margin, ours);
			if (with_gpu)
				score_gpu(m, name, colmajor, n, theirs_gpu);

			ref = xgb_predict_rows(api, booster, predict_config, f, linear, rowmajor, n, nf, &total);
			if (total != (bst_ulong) (n * nout))
				ereport(ERROR,
						(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
						 errmsg("XGBoost returned %lu outputs for %lld rows, expected %d per row",
								(unsigned long) total, (long long) n, nout)));
			compare_outputs(ours, ref, n * nout, &stats[0]);
			stats[0].compared += n;
			if (with_gpu)
			{
				compare_outputs(theirs_gpu, ref, n * nout, &stats[1]);
				stats[1].compared += n;
			}
		}
	}
	PG_FINALLY();
	{
		if (booster)
			api->free_booster(booster);
	}
	PG_END_TRY();

	for (int e = 0; e < (with_gpu ? 2 : 1); e++)
		put_result_row(rsinfo, name, m->version, e ? "gpu" : "cpu", &stats[e], nout,
					   psprintf("%d.%d.%d", major, minor, patch), api->path);
	return (Datum) 0;
}

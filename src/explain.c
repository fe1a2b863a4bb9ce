/*
 * explain.c
 *	  gpu_explain: why one row got its score, feature by feature.
 *
 * Each feature's contribution to a tree ensemble's margin (SHAP values, the
 * path-dependent TreeSHAP of src/core/forest_shap.h, as XGBoost's
 * pred_contribs and LightGBM's pred_contrib), and the expected margin, so
 * that an analyst can say which features made a transaction look like
 * fraud.  (XGBoost's linear booster: its own contributions, each feature's
 * value times its weight, from a tree-less forest of its weights read again
 * with gs_model_load_weights.)  TreeSHAP needs the node covers that scoring does not keep (nor
 * the forest image): the first explanation of a model version in a backend
 * parses the stored model bytes again with covers, into a child context of
 * the model's own, so it lives and dies with that version in the cache.
 * Always on the CPU.  gpu_explain takes one row as an array;
 * gpu_explain_query the rows of a query, columns read as gpu_score_query
 * reads them (text categories by name), optionally only each row's top
 * reasons.
 */
#include "postgres.h"

#include <math.h>

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/cat_names.h"
#include "core/forest/forest_shap.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_explain);
PG_FUNCTION_INFO_V1(gpuscore_gpu_explain_query);

/* What a call site keeps between calls of one statement (cf. scalar.c). */
typedef struct ExplainState
{
	MemoryContext cxt;
	GsModelRef *model;
	float	   *row;			/* [n_features] */
	double	   *phi;			/* [n_groups * (n_features + 1)] */
} ExplainState;

/*
 * Output groups of an explanation: the forest's (multi:softmax: one output,
 * a group per class), a linear booster's outputs.
 */
int
gs_explain_groups(const GsModelRef *m)
{
	return m->forest ? m->forest->n_groups : m->model->n_outputs;
}

/* The model's explainer, made at its first use in this backend; see gpuscore.h. */
GsShap *
gs_model_explainer(GsModelRef *m)
{
	int64		model_id;
	int32		version;
	GsModelFormat fmt;
	bytea	   *bytes = NULL;
	MemoryContext cxt;
	GsShap	   *shap = NULL;

	if (m->shap)
		return m->shap;
	if (m->forest == NULL && !m->model->mlp->linear_booster)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" is a neural network: gpu_explain explains tree ensembles and XGBoost's linear boosters", m->name)));
	if (m->forest && m->forest->linear)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" has linear trees, whose scores cannot be explained", m->name),
				 errdetail("LightGBM does not compute contributions of linear trees either (predict with pred_contrib=True fails)."),
				 errhint("To explain its scores, train the model with linear_tree=false.")));
	if ((Size) gs_explain_groups(m) * (Size) (m->model->n_features + 1) > MaxAllocSize / sizeof(double))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model \"%s\" has too many outputs and features to explain", m->name),
				 errdetail("A row's explanation would hold %d outputs of %d features and a bias each, more than one allocation can hold.",
						   gs_explain_groups(m), m->model->n_features)));
	if (!gs_catalog_fetch(m->name, &model_id, &version, &fmt, &bytes, NULL, NULL) ||
		model_id != m->model_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" was replaced or dropped while it was being explained", m->name),
				 errhint("Run the statement again.")));

	cxt = AllocSetContextCreate(m->mcxt, "pg_gpuscore explanations", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSetIdentifier(cxt, m->mcxt->ident);
	PG_TRY();
	{
		GsAllocator a = gs_context_allocator(cxt);
		const GsForest *forest;
		GsStatus	st;
		GsCode		rc;

		if (m->forest)
			forest = gs_model_parse_with_covers(m->name, (unsigned char *) VARDATA_ANY(bytes),
												VARSIZE_ANY_EXHDR(bytes), fmt, cxt)->forest;
		else
		{
			/* a linear booster: its weights, as the XGBoost loader reads them */
			GsLimits	lim = gs_current_limits();
			GsForest   *lf;

			if (gs_model_load_weights((unsigned char *) VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
									  fmt, &lim, &a, &lf, &st) != GS_OK)
				gs_report_status(&st);
			forest = lf->linear_w ? lf : NULL;
		}
		if (forest == NULL || forest->n_features != m->model->n_features ||
			forest->n_groups != gs_explain_groups(m))
			elog(ERROR, "model \"%s\" parsed again is not the model being scored", m->name);
		rc = gs_shap_new(forest, &a, &shap, &st);
		if (rc == GS_ERR_UNSUPPORTED && forest->format == GS_FORMAT_ONNX)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" cannot be explained: %s", m->name, st.msg),
					 errdetail("Explanations weigh each branch by the training rows that reached it "
							   "(XGBoost's \"sum_hessian\", LightGBM's internal_count and leaf_count); "
							   "ONNX-ML tree ensembles do not store them."),
					 errhint("Load the model in its library's own format (XGBoost JSON or UBJSON, LightGBM text).")));
		if (rc == GS_ERR_UNSUPPORTED && forest->format == GS_FORMAT_CATBOOST_JSON)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" cannot be explained: %s", m->name, st.msg),
					 errdetail("Explanations of CatBoost models weigh each branch by the model's leaf_weights, "
							   "as CatBoost's ShapValues do; CatBoost computes none for a model with a scale "
							   "other than 1 (set_scale_and_bias), and needs a dataset for one without "
							   "leaf weights or with a value in a leaf that no training row reached."),
					 errhint("CatBoost computes them itself: model.get_feature_importance(data, type=\"ShapValues\").")));
		if (rc == GS_ERR_UNSUPPORTED)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" cannot be explained: %s", m->name, st.msg),
					 errdetail("Its covers (XGBoost's \"sum_hessian\", LightGBM's internal_count and leaf_count) "
							   "are missing or damaged: not numbers, negative, or not the sum of each node's "
							   "children's.")));
		if (rc == GS_ERR_LIMIT)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("model \"%s\" cannot be explained: %s", m->name, st.msg)));
		if (rc != GS_OK)
			gs_report_status(&st);
	}
	PG_CATCH();
	{
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pfree(bytes);
	m->shap = shap;
	return shap;
}

/* The call site's state for the model named in argument 0. */
static ExplainState *
explain_state(FunctionCallInfo fcinfo)
{
	ExplainState *s = (ExplainState *) fcinfo->flinfo->fn_extra;
	text	   *name_t;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model name must not be null")));
	name_t = PG_GETARG_TEXT_PP(0);
	if (s == NULL || VARSIZE_ANY_EXHDR(name_t) != strlen(s->model->name) ||
		memcmp(VARDATA_ANY(name_t), s->model->name, VARSIZE_ANY_EXHDR(name_t)) != 0)
	{
		const char *name = gs_model_name_arg(fcinfo, 0);
		MemoryContext mcxt;
		GsModelRef *m;

		if (s != NULL)
		{
			fcinfo->flinfo->fn_extra = NULL;
			MemoryContextDelete(s->cxt);
		}
		mcxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "pg_gpuscore call site",
									 ALLOCSET_SMALL_SIZES);
		m = gs_model_acquire(name, mcxt);
		s = MemoryContextAlloc(mcxt, sizeof(ExplainState));
		s->cxt = mcxt;
		s->model = m;
		s->row = MemoryContextAlloc(mcxt, sizeof(float) * m->model->n_features);
		s->phi = NULL;
		fcinfo->flinfo->fn_extra = s;
	}
	if (s->phi == NULL)
	{
		gs_model_explainer(s->model);
		s->phi = MemoryContextAlloc(s->cxt, sizeof(double) * gs_explain_groups(s->model) *
									(s->model->model->n_features + 1));
	}
	return s;
}

/*
 * The category name of value v of feature f, for a feature whose categories
 * have names (the code truncated, as the trees read it); NULL otherwise.
 */
static Datum
category_datum(const GsModelRef *m, int f, float v, bool *isnull)
{
	const GsCatNames *cn = gs_model_cat_names(m->model);
	int32_t		n = gs_catnames_count(cn, f);
	const char *name;

	*isnull = true;
	if (n <= 0 || !(v >= 0.0f && v < (float) n))
		return (Datum) 0;
	/* NULL for a model that keeps only the categories' hashes */
	name = gs_catnames_name(cn, f, (int32_t) v);
	if (name == NULL)
		return (Datum) 0;
	*isnull = false;
	return CStringGetTextDatum(name);
}

/* A contribution as real: finite by construction, but never store Inf. */
static Datum
contribution_datum(const GsModelRef *m, double v)
{
	float		f = (float) v;

	if (!isfinite(f))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("a contribution to model \"%s\"'s margin is out of range for type real", m->name)));
	return Float4GetDatum(f);
}

/*
 * gpu_explain(model text, features real[] | double precision[] | numeric[]
 * | integer[] | bigint[]) RETURNS TABLE(output, feature, feature_name,
 * value, contribution): for each output group, one row per feature (1-based,
 * its name, the row's value, NULL when missing, and its contribution to the
 * margin), then the expected margin as a row with feature NULL.  A NULL
 * array gives no rows.
 */
Datum
gpuscore_gpu_explain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ExplainState *s;
	const GsModelRef *m;
	const char *const *names;
	int			nf,
				n_groups;

	s = explain_state(fcinfo);
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(1))
		return (Datum) 0;
	m = s->model;
	nf = m->model->n_features;
	n_groups = gs_explain_groups(m);
	names = (const char *const *) m->model->feature_names;
	gs_array_to_row(PG_GETARG_ARRAYTYPE_P(1), m, s->row);
	gs_model_mark_missing(m->model, s->row, 1, 1);
	gs_shap_row(m->shap, s->row, s->phi);

	for (int g = 0; g < n_groups; g++)
	{
		const double *phi = s->phi + (size_t) g * (nf + 1);

		for (int j = 0; j <= nf; j++)
		{
			Datum		values[6];
			bool		nulls[6] = {false, false, false, false, false, true};
			bool		bias = j == nf;

			values[0] = Int32GetDatum(g + 1);
			values[1] = Int32GetDatum(j + 1);
			nulls[1] = bias;
			if (bias || names == NULL || names[j] == NULL || names[j][0] == '\0')
				nulls[2] = true;
			else
				values[2] = CStringGetTextDatum(names[j]);
			if (bias || isnan(s->row[j]))
				nulls[3] = true;
			else
			{
				values[3] = Float4GetDatum(s->row[j]);
				values[5] = category_datum(m, j, s->row[j], &nulls[5]);
			}
			values[4] = contribution_datum(m, phi[j]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

/* The receiver of gpu_explain_query's rows: explains and emits each. */
typedef struct ExplainReceiver
{
	DestReceiver pub;			/* must be first */
	ReturnSetInfo *rsinfo;
	GsModelRef *m;
	int			top;			/* reasons per row and output; 0: all */
	MemoryContext query_cxt;	/* the whole call */
	MemoryContext row_cxt;		/* one row's conversions */
	GsQueryShape shape;
	float	   *row;
	double	   *phi;
	int		   *order;			/* [n_features] */
} ExplainReceiver;

/* The contributions order_cmp sorts by (qsort passes no argument). */
static const double *order_phi;

/* Larger contributions first; ties in feature order. */
static int
order_cmp(const void *a, const void *b)
{
	int			i = *(const int *) a,
				j = *(const int *) b;

	if (order_phi[i] != order_phi[j])
		return order_phi[i] > order_phi[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* Features by decreasing contribution; see gpuscore.h. */
void
gs_rank_contributions(const double *phi, int n, int *order)
{
	for (int j = 0; j < n; j++)
		order[j] = j;
	order_phi = phi;
	qsort(order, n, sizeof(int), order_cmp);
}

static void
explain_receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	ExplainReceiver *r = (ExplainReceiver *) self;
	int			nf = r->m->model->n_features;
	MemoryContext old = MemoryContextSwitchTo(r->query_cxt);

	gs_query_shape(typeinfo, r->m, &r->shape);
	r->row = palloc(sizeof(float) * nf);
	r->phi = palloc(sizeof(double) * gs_explain_groups(r->m) * (nf + 1));
	r->order = palloc(sizeof(int) * nf);
	MemoryContextSwitchTo(old);
}

/* One query row: explain it and emit its rows, best reasons first. */
static bool
explain_receiver_row(TupleTableSlot *slot, DestReceiver *self)
{
	ExplainReceiver *r = (ExplainReceiver *) self;
	const GsModelRef *m = r->m;
	const char *const *names = (const char *const *) m->model->feature_names;
	int			nf = m->model->n_features;
	int			n = r->top > 0 && r->top < nf ? r->top : nf;
	int64		key;
	bool		key_null;
	MemoryContext old;

	CHECK_FOR_INTERRUPTS();
	slot_getallattrs(slot);
	old = MemoryContextSwitchTo(r->row_cxt);
	gs_query_row(&r->shape, m, slot->tts_values, slot->tts_isnull, r->row, &key, &key_null);
	gs_model_mark_missing(m->model, r->row, 1, 1);
	gs_shap_row(m->shap, r->row, r->phi);
	for (int g = 0; g < gs_explain_groups(m); g++)
	{
		const double *phi = r->phi + (size_t) g * (nf + 1);

		gs_rank_contributions(phi, nf, r->order);
		for (int k = 0; k <= n; k++)
		{
			Datum		values[8];
			bool		nulls[8] = {key_null, false, false, false, false, false, false, true};
			int			j = k < n ? r->order[k] : nf;

			if (k == n && r->top > 0)
				break;			/* the bias is no reason */
			values[0] = Int64GetDatum(key);
			values[1] = Int32GetDatum(g + 1);
			values[2] = Int32GetDatum(k + 1);
			values[3] = Int32GetDatum(j + 1);
			nulls[2] = nulls[3] = j == nf;
			if (j == nf || names == NULL || names[j] == NULL || names[j][0] == '\0')
				nulls[4] = true;
			else
				values[4] = CStringGetTextDatum(names[j]);
			if (j == nf || isnan(r->row[j]))
				nulls[5] = true;
			else
			{
				values[5] = Float4GetDatum(r->row[j]);
				values[7] = category_datum(m, j, r->row[j], &nulls[7]);
			}
			values[6] = contribution_datum(m, phi[j]);
			tuplestore_putvalues(r->rsinfo->setResult, r->rsinfo->setDesc, values, nulls);
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(r->row_cxt);
	return true;
}

static void
explain_receiver_shutdown(DestReceiver *self)
{
}

static void
explain_receiver_destroy(DestReceiver *self)
{
}

/*
 * gpu_explain_query(model text, query text, top integer DEFAULT NULL)
 * RETURNS TABLE(id, output, rank, feature, feature_name, value,
 * contribution): gpu_explain for every row of a query shaped as for
 * gpu_score_query.  Per row and output, the features by decreasing
 * contribution (rank 1 pushed the score up most), then the expected margin
 * (rank and feature NULL); with top, only the first top features.
 */
Datum
gpuscore_gpu_explain_query(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *query;
	GsModelRef *m;
	ExplainReceiver r;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query must not be null")));
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	memset(&r, 0, sizeof(r));
	if (!PG_ARGISNULL(2))
	{
		r.top = PG_GETARG_INT32(2);
		if (r.top < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("top must be at least 1, not %d", r.top),
					 errhint("Pass NULL for every feature and the expected margin.")));
	}

	InitMaterializedSRF(fcinfo, 0);
	m = gs_model_acquire(name, fcinfo->flinfo->fn_mcxt);
	gs_model_explainer(m);

	r.pub.receiveSlot = explain_receiver_row;
	r.pub.rStartup = explain_receiver_startup;
	r.pub.rShutdown = explain_receiver_shutdown;
	r.pub.rDestroy = explain_receiver_destroy;
	r.pub.mydest = DestNone;
	r.rsinfo = rsinfo;
	r.m = m;
	r.query_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_gpuscore explained query",
										ALLOCSET_DEFAULT_SIZES);
	r.row_cxt = AllocSetContextCreate(r.query_cxt, "pg_gpuscore explained row",
									  ALLOCSET_SMALL_SIZES);

	SPI_connect();
	gs_run_query(query, &r.pub, "gpu_explain_query");
	SPI_finish();
	MemoryContextDelete(r.query_cxt);
	return (Datum) 0;
}

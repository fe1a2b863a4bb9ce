/*
 * explain.c
 *	  gpu_explain: why one row got its score, feature by feature.
 *
 * Each feature's contribution to a tree ensemble's margin (SHAP values, the
 * path-dependent TreeSHAP of src/core/forest_shap.h, as XGBoost's
 * pred_contribs and LightGBM's pred_contrib), and the expected margin, so
 * that an analyst can say which features made a transaction look like
 * fraud.  TreeSHAP needs the node covers that scoring does not keep (nor
 * the forest image): the first explanation of a model version in a backend
 * parses the stored model bytes again with covers, into a child context of
 * the model's own, so it lives and dies with that version in the cache.
 * Always on the CPU.
 */
#include "postgres.h"

#include <math.h>

#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/forest_shap.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_explain);

/* What a call site keeps between calls of one statement (cf. scalar.c). */
typedef struct ExplainState
{
	MemoryContext cxt;
	GsModelRef *model;
	float	   *row;			/* [n_features] */
	double	   *phi;			/* [n_groups * (n_features + 1)] */
} ExplainState;

/* The model's explainer, made at its first use in this backend. */
static GsShap *
explainer(GsModelRef *m)
{
	int64		model_id;
	int32		version;
	GsModelFormat fmt;
	bytea	   *bytes = NULL;
	MemoryContext cxt;
	GsShap	   *shap = NULL;

	if (m->shap)
		return m->shap;
	if (m->forest == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model \"%s\" is a neural network: gpu_explain explains tree ensembles", m->name)));
	if (!gs_catalog_fetch(m->name, &model_id, &version, &fmt, &bytes, NULL) ||
		model_id != m->model_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" was replaced or dropped while it was being explained", m->name),
				 errhint("Run the statement again.")));

	cxt = AllocSetContextCreate(m->mcxt, "pg_gpuscore explanations", ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		GsModel    *parsed = gs_model_parse_with_covers(m->name,
														(unsigned char *) VARDATA_ANY(bytes),
														VARSIZE_ANY_EXHDR(bytes), fmt, cxt);
		GsAllocator a = gs_context_allocator(cxt);
		GsStatus	st;
		GsCode		rc;

		if (parsed->forest == NULL || parsed->n_features != m->model->n_features ||
			parsed->forest->n_groups != m->forest->n_groups)
			elog(ERROR, "model \"%s\" parsed again is not the model being scored", m->name);
		rc = gs_shap_new(parsed->forest, &a, &shap, &st);
		if (rc == GS_ERR_UNSUPPORTED && parsed->forest->format == GS_FORMAT_ONNX)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" cannot be explained: %s", m->name, st.msg),
					 errdetail("Explanations weigh each branch by the training rows that reached it "
							   "(XGBoost's \"sum_hessian\", LightGBM's internal_count and leaf_count); "
							   "ONNX-ML tree ensembles do not store them."),
					 errhint("Load the model in its library's own format (XGBoost JSON or UBJSON, LightGBM text).")));
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
		explainer(s->model);
		s->phi = MemoryContextAlloc(s->cxt, sizeof(double) * s->model->forest->n_groups *
									(s->model->model->n_features + 1));
	}
	return s;
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
	n_groups = m->forest->n_groups;
	names = (const char *const *) m->model->feature_names;
	gs_array_to_row(PG_GETARG_ARRAYTYPE_P(1), m, s->row);
	gs_shap_row(m->shap, s->row, s->phi);

	for (int g = 0; g < n_groups; g++)
	{
		const double *phi = s->phi + (size_t) g * (nf + 1);

		for (int j = 0; j <= nf; j++)
		{
			Datum		values[5];
			bool		nulls[5] = {false, false, false, false, false};
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
				values[3] = Float4GetDatum(s->row[j]);
			values[4] = contribution_datum(m, phi[j]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

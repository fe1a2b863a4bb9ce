/*
 * scalar.c
 *	  One-row scoring: gpu_score and gpu_predict.
 *
 * Always on the CPU engine: a GPU round trip per row would be slower.  The
 * model is looked up once per statement (and again only if the model name
 * changes between rows); fn_extra keeps the reference and a scratch row.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/cpu_engine.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score);
PG_FUNCTION_INFO_V1(gpuscore_gpu_predict);

/*
 * What a call site keeps between rows of one statement, in its own memory
 * context (a child of fn_mcxt) whose deletion also releases the model.
 */
typedef struct ScalarState
{
	MemoryContext cxt;
	GsModelRef *model;
	float	   *row;			/* [n_features] */
	float	   *margin;			/* engine scratch for one row */
	float	   *out;			/* [n_outputs] */
} ScalarState;

/*
 * Score the row in argument 1 with the model named in argument 0; returns
 * the call-site state whose out[] holds the outputs, or NULL when the row
 * (the array) is NULL.
 */
static ScalarState *
score_row(FunctionCallInfo fcinfo)
{
	ScalarState *s = (ScalarState *) fcinfo->flinfo->fn_extra;
	text	   *name_t;
	ArrayType  *arr;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model name must not be null")));
	if (PG_ARGISNULL(1))
		return NULL;
	name_t = PG_GETARG_TEXT_PP(0);

	if (s == NULL || VARSIZE_ANY_EXHDR(name_t) != strlen(s->model->name) ||
		memcmp(VARDATA_ANY(name_t), s->model->name, VARSIZE_ANY_EXHDR(name_t)) != 0)
	{
		const char *name = gs_model_name_arg(fcinfo, 0);
		MemoryContext mcxt;
		GsModelRef *m;
		const GsModel *f;

		/* a different model than the previous row: drop the old state */
		if (s != NULL)
		{
			fcinfo->flinfo->fn_extra = NULL;
			MemoryContextDelete(s->cxt);
		}
		mcxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "pg_gpuscore call site",
									 ALLOCSET_SMALL_SIZES);
		m = gs_model_acquire(name, mcxt);
		f = m->model;
		s = MemoryContextAlloc(mcxt, sizeof(ScalarState));
		s->cxt = mcxt;
		s->model = m;
		s->row = MemoryContextAlloc(mcxt, sizeof(float) * f->n_features);
		s->margin = MemoryContextAlloc(mcxt, sizeof(float) * gs_model_scratch_floats(f, 1));
		s->out = MemoryContextAlloc(mcxt, sizeof(float) * f->n_outputs);
		fcinfo->flinfo->fn_extra = s;
	}

	arr = PG_GETARG_ARRAYTYPE_P(1);
	gs_array_to_row(arr, s->model, s->row);
	gs_model_mark_missing(s->model->model, s->row, 1, 1);
	gs_model_predict(s->model->model, s->row, 1, 1, s->margin, s->out);
	return s;
}

/*
 * gpu_score(model text, features real[] | double precision[]) RETURNS real:
 * the score of one row for a single-output model.  A NULL array gives NULL.
 */
Datum
gpuscore_gpu_score(PG_FUNCTION_ARGS)
{
	ScalarState *s;

	s = score_row(fcinfo);
	if (s == NULL)
		PG_RETURN_NULL();
	if (s->model->model->n_outputs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" has %d outputs per row", s->model->name,
						s->model->model->n_outputs),
				 errhint("Use gpu_predict() to get all outputs of a multi-output model.")));
	PG_RETURN_FLOAT4(s->out[0]);
}

/*
 * gpu_predict(model text, features real[] | double precision[]) RETURNS
 * real[]: every output of one row (class probabilities of a multi-class
 * model).  A NULL array gives NULL.
 */
Datum
gpuscore_gpu_predict(PG_FUNCTION_ARGS)
{
	ScalarState *s;
	int			n;
	Datum	   *elems;

	s = score_row(fcinfo);
	if (s == NULL)
		PG_RETURN_NULL();
	n = s->model->model->n_outputs;
	elems = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		elems[i] = Float4GetDatum(s->out[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, n, FLOAT4OID, sizeof(float4),
										  true, TYPALIGN_INT));
}

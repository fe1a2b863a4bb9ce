/*
 * scalar.c
 *	  One-row scoring: gpu_score and gpu_predict, with the features as an
 *	  array or as a table's row (the whole-row forms), evaluated row by row.
 *
 * This is what a call does where the planner leaves it row by row (see
 * batch_plan.c for where it does not): always the CPU engine, since a GPU
 * round trip per row would be slower.  The model is looked up once per
 * statement (and again only if the model name changes between rows);
 * fn_extra keeps the reference, a scratch row and, for the whole-row forms,
 * which column is which feature for the row type last seen.  The batched
 * calls check their rows with the same functions (features.c,
 * row_features.c), so both raise the same errors.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score);
PG_FUNCTION_INFO_V1(gpuscore_gpu_predict);
PG_FUNCTION_INFO_V1(gpuscore_gpu_score_row);
PG_FUNCTION_INFO_V1(gpuscore_gpu_predict_row);

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
	/* the whole-row forms: the map of the row type last seen */
	Oid			map_type;
	int32		map_typmod;
	GsRowMap	map;
	Datum	   *values;			/* [map_natts] */
	bool	   *nulls;
	int			map_natts;
} ScalarState;

/*
 * The call site's state for the model named in argument 0 (checked by the
 * caller not to be NULL), made or remade when the name changes.
 */
static ScalarState *
call_state(FunctionCallInfo fcinfo)
{
	ScalarState *s = (ScalarState *) fcinfo->flinfo->fn_extra;
	text	   *name_t = PG_GETARG_TEXT_PP(0);

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
		s = MemoryContextAllocZero(mcxt, sizeof(ScalarState));
		s->cxt = mcxt;
		s->model = m;
		s->row = MemoryContextAlloc(mcxt, sizeof(float) * f->n_features);
		s->margin = MemoryContextAlloc(mcxt, sizeof(float) * gs_model_scratch_floats(f, 1));
		s->out = MemoryContextAlloc(mcxt, sizeof(float) * f->n_outputs);
		fcinfo->flinfo->fn_extra = s;
	}
	return s;
}

/* Score s->row into s->out. */
static void
predict(ScalarState *s)
{
	gs_model_mark_missing(s->model->model, s->row, 1, 1);
	gs_model_predict(s->model->model, s->row, 1, 1, s->margin, s->out);
}

/*
 * Score the row in argument 1 (an array) with the model named in argument
 * 0; returns the call-site state whose out[] holds the outputs, or NULL
 * when the row (the array) is NULL.
 */
static ScalarState *
score_array(FunctionCallInfo fcinfo)
{
	ScalarState *s;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model name must not be null")));
	if (PG_ARGISNULL(1))
		return NULL;
	s = call_state(fcinfo);
	gs_array_to_row(PG_GETARG_ARRAYTYPE_P(1), s->model, s->row);
	predict(s);
	return s;
}

/*
 * The same with argument 1 a row of any type: each feature from the column
 * named like it.
 */
static ScalarState *
score_record(FunctionCallInfo fcinfo)
{
	ScalarState *s;
	HeapTupleHeader th;
	HeapTupleData tuple;
	Oid			type;
	int32		typmod;
	TupleDesc	desc;
	GsRowError	err;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model name must not be null")));
	if (PG_ARGISNULL(1))
		return NULL;
	s = call_state(fcinfo);
	th = PG_GETARG_HEAPTUPLEHEADER(1);
	type = HeapTupleHeaderGetTypeId(th);
	typmod = HeapTupleHeaderGetTypMod(th);
	desc = lookup_rowtype_tupdesc(type, typmod);
	if (s->map.column == NULL || s->map_type != type || s->map_typmod != typmod)
	{
		MemoryContext old = MemoryContextSwitchTo(s->cxt);

		gs_row_map_build(desc, s->model, &s->map);
		s->map_type = type;
		s->map_typmod = typmod;
		s->map_natts = desc->natts;
		s->values = palloc(sizeof(Datum) * desc->natts);
		s->nulls = palloc(sizeof(bool) * desc->natts);
		MemoryContextSwitchTo(old);
	}
	tuple.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = th;
	heap_deform_tuple(&tuple, desc, s->values, s->nulls);
	ReleaseTupleDesc(desc);
	if (!gs_row_map_convert(&s->map, s->model, s->values, s->nulls, s->row, &err))
		gs_row_error_raise(&err);
	predict(s);
	return s;
}

/* The error of gpu_score for a model with more than one output; see gpuscore.h. */
void
gs_one_output_error(const GsModelRef *m, GsRowError *err)
{
	gs_row_error_set(err, ERRCODE_INVALID_PARAMETER_VALUE, "model \"%s\" has %d outputs per row",
					 m->name, m->model->n_outputs);
	gs_row_error_hint(err, "Use gpu_predict() to get all outputs of a multi-output model.");
}

/* ERROR unless the model of s has one output. */
static void
check_one_output(const ScalarState *s)
{
	GsRowError	err;

	if (s->model->model->n_outputs == 1)
		return;
	gs_one_output_error(s->model, &err);
	gs_row_error_raise(&err);
}

/* Every output of s->out as real[]. */
static Datum
outputs_array(const ScalarState *s)
{
	int			n = s->model->model->n_outputs;
	Datum	   *elems = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		elems[i] = Float4GetDatum(s->out[i]);
	return PointerGetDatum(construct_array(elems, n, FLOAT4OID, sizeof(float4), true, TYPALIGN_INT));
}

/*
 * gpu_score(model text, features real[] | double precision[] | ...)
 * RETURNS real: the score of one row for a single-output model.  A NULL
 * array gives NULL.
 */
Datum
gpuscore_gpu_score(PG_FUNCTION_ARGS)
{
	ScalarState *s = score_array(fcinfo);

	if (s == NULL)
		PG_RETURN_NULL();
	check_one_output(s);
	PG_RETURN_FLOAT4(s->out[0]);
}

/*
 * gpu_predict(model text, features real[] | ...) RETURNS real[]: every
 * output of one row (class probabilities of a multi-class model).  A NULL
 * array gives NULL.
 */
Datum
gpuscore_gpu_predict(PG_FUNCTION_ARGS)
{
	ScalarState *s = score_array(fcinfo);

	if (s == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(outputs_array(s));
}

/*
 * gpu_score(model text, features record) RETURNS real: the whole-row form,
 * each feature from the row's column named like it.  A NULL row gives NULL.
 */
Datum
gpuscore_gpu_score_row(PG_FUNCTION_ARGS)
{
	ScalarState *s = score_record(fcinfo);

	if (s == NULL)
		PG_RETURN_NULL();
	check_one_output(s);
	PG_RETURN_FLOAT4(s->out[0]);
}

/* gpu_predict(model text, features record) RETURNS real[]: the same, every output. */
Datum
gpuscore_gpu_predict_row(PG_FUNCTION_ARGS)
{
	ScalarState *s = score_record(fcinfo);

	if (s == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(outputs_array(s));
}

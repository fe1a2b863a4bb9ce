/*
 * score_query.c
 *	  gpu_score_query and gpu_predict_query: score every row a query returns,
 *	  streaming in batches.
 *
 * The query runs through an SPI cursor as the calling user.  Each fetch of
 * pg_gpuscore.batch_size rows is turned into a column-major float32 batch,
 * scored by the selected engine and appended to the result tuplestore
 * (which spills to disk past work_mem).  All per-batch memory lives in one
 * context that is reset after every batch, so memory stays constant however
 * many rows the query returns; the loop checks for interrupts between
 * batches.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_query);
PG_FUNCTION_INFO_V1(gpuscore_gpu_predict_query);

/* The validated shape of the user's query. */
typedef struct QueryShape
{
	GsColKind	key_kind;
	bool		array_features; /* one array column holds every feature */
	GsColKind  *kinds;			/* [natts], index 0 unused */
} QueryShape;

/* Check the query's columns against the model; ERRORs with the culprit. */
static void
check_shape(TupleDesc desc, const GsModelRef *m, QueryShape *shape)
{
	int			nf = m->model->n_features;
	Form_pg_attribute key;

	if (desc->natts < 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return a key column followed by the features of model \"%s\"", m->name),
				 errdetail("The query returns %d column(s).", desc->natts)));
	key = TupleDescAttr(desc, 0);
	if (key->atttypid != INT2OID && key->atttypid != INT4OID && key->atttypid != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("first query column \"%s\" must be an integer row key, not %s",
						NameStr(key->attname), format_type_be(key->atttypid)),
				 errhint("Cast it to bigint, or use a surrogate key such as row_number().")));
	gs_column_kind(key->atttypid, &shape->key_kind);
	shape->kinds = palloc0(sizeof(GsColKind) * desc->natts);
	shape->array_features = false;
	if (desc->natts == 2 && gs_column_kind(TupleDescAttr(desc, 1)->atttypid, &shape->kinds[1]) &&
		(shape->kinds[1] == GS_COL_FLOAT4_ARRAY || shape->kinds[1] == GS_COL_FLOAT8_ARRAY))
	{
		shape->array_features = true;
		return;
	}
	if (desc->natts - 1 != nf)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" expects %d features, the query returns %d feature columns",
						m->name, nf, desc->natts - 1),
				 errhint("The first column is the row key; the others are the features in model order.")));
	for (int i = 1; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!gs_column_kind(att->atttypid, &shape->kinds[i]) ||
			shape->kinds[i] == GS_COL_FLOAT4_ARRAY || shape->kinds[i] == GS_COL_FLOAT8_ARRAY)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("query column \"%s\" has type %s, which cannot be a feature",
							NameStr(att->attname), format_type_be(att->atttypid)),
					 errhint("Features must be real, double precision, numeric, integer or boolean.")));
	}
}

/*
 * Fill the column-major batch x (ld = number of rows) and keys from the rows
 * SPI fetched.  values/nulls are scratch of one entry per query column; each
 * tuple is deformed once (heap_getattr per column is quadratic with NULLs).
 */
static void
build_batch(SPITupleTable *tt, uint64 n, const QueryShape *shape,
			const GsModelRef *m, float *x, int64 *keys, bool *key_null,
			Datum *values, bool *nulls, float *row)
{
	TupleDesc	desc = tt->tupdesc;
	int			nf = m->model->n_features;

	for (uint64 r = 0; r < n; r++)
	{
		heap_deform_tuple(tt->vals[r], desc, values, nulls);
		key_null[r] = nulls[0];
		keys[r] = nulls[0] ? 0 :
			shape->key_kind == GS_COL_INT2 ? DatumGetInt16(values[0]) :
			shape->key_kind == GS_COL_INT4 ? DatumGetInt32(values[0]) : DatumGetInt64(values[0]);

		if (shape->array_features)
		{
			if (nulls[1])
				for (int f = 0; f < nf; f++)
					row[f] = NAN;
			else
				gs_array_to_row(DatumGetArrayTypeP(values[1]), m, row);
			for (int f = 0; f < nf; f++)
				x[(size_t) f * n + r] = row[f];
			continue;
		}
		for (int f = 0; f < nf; f++)
		{
			float		v;

			if (nulls[f + 1])
				v = NAN;
			else if (shape->kinds[f + 1] == GS_COL_FLOAT4)
			{
				v = DatumGetFloat4(values[f + 1]);
				if (isinf(v))
					gs_check_infinite(m, f, v);
			}
			else
			{
				double		dv = gs_datum_to_double(values[f + 1], shape->kinds[f + 1]);

				gs_check_infinite(m, f, dv);
				v = (float) dv;
			}
			x[(size_t) f * n + r] = v;
		}
	}
}

/* Append one finished batch's (key, output) rows to the result. */
static void
emit_batch(ReturnSetInfo *rsinfo, const float *out, size_t n, int nout,
		   const int64 *keys, const bool *key_null, bool all_outputs)
{
	Datum	   *elems = all_outputs ? palloc(sizeof(Datum) * nout) : NULL;

	for (size_t r = 0; r < n; r++)
	{
		Datum		values[2];
		bool		nulls[2] = {key_null[r], false};

		values[0] = Int64GetDatum(keys[r]);
		if (all_outputs)
		{
			ArrayType  *arr;

			for (int k = 0; k < nout; k++)
				elems[k] = Float4GetDatum(out[r * nout + k]);
			arr = construct_array(elems, nout, FLOAT4OID, sizeof(float4), true, TYPALIGN_INT);
			values[1] = PointerGetDatum(arr);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			pfree(arr);
		}
		else
		{
			values[1] = Float4GetDatum(out[r]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	if (elems)
		pfree(elems);
}

/*
 * Shared body of gpu_score_query and gpu_predict_query: run the query in
 * batches through the batch scorer and put (key, output) rows into the
 * result tuplestore.  With the GPU, building batch k+1 overlaps scoring
 * batch k.
 */
static Datum
score_query(FunctionCallInfo fcinfo, bool all_outputs)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *query;
	GsModelRef *m;
	const GsModel *f;
	SPIPlanPtr	plan;
	Portal		portal;
	MemoryContext query_cxt;
	MemoryContext rows_cxt;
	GsBatchScorer *scorer = NULL;
	QueryShape	shape;
	int			nout;
	size_t		batch_rows = (size_t) gs_batch_size;
	Datum	   *values = NULL;
	bool	   *nulls = NULL;
	float	   *row = NULL;
	int64	   *keys[GS_SCORER_SLOTS];
	bool	   *key_null[GS_SCORER_SLOTS];
	const float *out;
	int			slot;
	size_t		n_done;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query must not be null")));
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));

	InitMaterializedSRF(fcinfo, 0);
	m = gs_model_acquire(name, fcinfo->flinfo->fn_mcxt);
	f = m->model;
	nout = f->n_outputs;
	if (!all_outputs && nout != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" has %d outputs per row", name, nout),
				 errhint("Use gpu_predict_query() to get all outputs of a multi-output model.")));

	/* everything of this call, GPU buffers included, dies with query_cxt */
	query_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_gpuscore query batches",
									  ALLOCSET_DEFAULT_SIZES);
	rows_cxt = AllocSetContextCreate(query_cxt, "pg_gpuscore query rows",
									 ALLOCSET_DEFAULT_SIZES);
	for (int k = 0; k < GS_SCORER_SLOTS; k++)
	{
		keys[k] = MemoryContextAllocHuge(query_cxt, sizeof(int64) * batch_rows);
		key_null[k] = MemoryContextAllocHuge(query_cxt, sizeof(bool) * batch_rows);
	}

	SPI_connect();
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_DEFINITION),
				 errmsg("query for gpu_score_query must return rows"),
				 errhint("Pass a SELECT (or a statement with RETURNING).")));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);

	for (;;)
	{
		uint64		n;
		float	   *x;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, (long) batch_rows);
		n = SPI_processed;
		if (scorer == NULL)
		{
			old = MemoryContextSwitchTo(query_cxt);
			check_shape(SPI_tuptable->tupdesc, m, &shape);
			values = palloc(sizeof(Datum) * SPI_tuptable->tupdesc->natts);
			nulls = palloc(sizeof(bool) * SPI_tuptable->tupdesc->natts);
			row = palloc(sizeof(float) * f->n_features);
			MemoryContextSwitchTo(old);
			scorer = gs_scorer_begin(m, batch_rows, query_cxt);
		}
		if (n == 0)
			break;

		/* a slot still holding results must be emitted before refilling */
		while ((out = gs_scorer_next(scorer, false, &slot, &n_done)) != NULL)
			emit_batch(rsinfo, out, n_done, nout, keys[slot], key_null[slot], all_outputs);

		x = gs_scorer_input(scorer, &slot);
		/* conversions (numeric, detoasted arrays) allocate: per batch only */
		old = MemoryContextSwitchTo(rows_cxt);
		build_batch(SPI_tuptable, n, &shape, m, x, keys[slot], key_null[slot],
					values, nulls, row);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rows_cxt);
		SPI_freetuptable(SPI_tuptable);
		gs_scorer_submit(scorer, n);
	}
	while ((out = gs_scorer_next(scorer, true, &slot, &n_done)) != NULL)
		emit_batch(rsinfo, out, n_done, nout, keys[slot], key_null[slot], all_outputs);

	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(query_cxt);
	return (Datum) 0;
}

/*
 * gpu_score_query(model text, query text) RETURNS TABLE(id bigint, score
 * real): the query's first column is the row key, the others the features
 * in model order (or one real[]/double precision[] column of all features).
 */
Datum
gpuscore_gpu_score_query(PG_FUNCTION_ARGS)
{
	return score_query(fcinfo, false);
}

/*
 * gpu_predict_query(model text, query text) RETURNS TABLE(id bigint, scores
 * real[]): like gpu_score_query, with every output of the model.
 */
Datum
gpuscore_gpu_predict_query(PG_FUNCTION_ARGS)
{
	return score_query(fcinfo, true);
}

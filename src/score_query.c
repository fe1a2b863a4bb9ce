/*
 * score_query.c
 *	  gpu_score_query and gpu_predict_query: score every row a query returns,
 *	  streaming in batches.
 *
 * The query runs through SPI as the calling user, read-only, with its rows
 * delivered to a DestReceiver of ours (ScoreReceiver) instead of an SPI
 * tuple table: each row's values are read straight from the executor's
 * slot into a column-major float32 batch (no copy of the row is formed and
 * deformed again, which cost about as much as the scan itself).  When
 * pg_gpuscore.batch_size rows are in, the batch is scored by the selected
 * engine, and finished batches are appended to the result tuplestore
 * (which spills to disk past work_mem).  Per-row conversions (numeric,
 * detoasted arrays) allocate in a context reset after every batch, so
 * memory stays constant however many rows the query returns; interrupts
 * are checked between batches (and by the executor between rows).  The
 * query's shape, the conversion of its rows and the SPI run are shared with
 * gpu_explain_query (gs_query_shape, gs_query_row, gs_run_query).  On a
 * Citus coordinator, a query on distributed tables is first offered to
 * citus_query.c, which has the workers score it.
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

#include "core/forest/cpu_engine.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_query);
PG_FUNCTION_INFO_V1(gpuscore_gpu_predict_query);

/*
 * Rows staged row-major before gs_rows_to_columns writes them to the
 * column-major batch a block at a time.  Written directly, a row's features
 * go to addresses batch_size * 4 bytes apart: with the default 65536 rows a
 * multiple of 4 KB, so every feature of a row falls into the same L1 cache
 * set and the stores evict each other (measured: converting the rows took
 * half as long as the scan).
 */
#define STAGE_ROWS 64

/* Check a query's columns against the model; see gpuscore.h. */
void
gs_query_shape(TupleDesc desc, const GsModelRef *m, GsQueryShape *shape)
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
		gs_col_kind_is_array(shape->kinds[1]))
	{
		shape->array_features = true;
		return;
	}
	if (desc->natts == 2 && type_is_array(TupleDescAttr(desc, 1)->atttypid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query column \"%s\" has type %s, which cannot hold the features",
						NameStr(TupleDescAttr(desc, 1)->attname),
						format_type_be(TupleDescAttr(desc, 1)->atttypid)),
				 errhint("A feature array must be real[], double precision[], numeric[], smallint[], integer[] or bigint[].")));
	if (desc->natts - 1 != nf)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_plural("model \"%s\" expects %d features, the query returns %d feature column",
							   "model \"%s\" expects %d features, the query returns %d feature columns",
							   desc->natts - 1, m->name, nf, desc->natts - 1),
				 errhint("The first column is the row key; the others are the features in model order.")));
	shape->all_float4 = true;
	for (int i = 1; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!gs_column_kind(att->atttypid, &shape->kinds[i]) || gs_col_kind_is_array(shape->kinds[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("query column \"%s\" has type %s, which cannot be a feature",
							NameStr(att->attname), format_type_be(att->atttypid)),
					 errhint("Features must be real, double precision, numeric, integer or boolean, or text for a categorical feature with named categories.")));
		gs_check_feature_order(m, i - 1, NameStr(att->attname), "query column");
		if (gs_col_kind_is_text(shape->kinds[i]))
			gs_check_text_feature(m, i - 1, psprintf("query column \"%s\"", NameStr(att->attname)));
		else
			gs_check_number_feature(m, i - 1, psprintf("query column \"%s\"", NameStr(att->attname)));
		shape->all_float4 &= shape->kinds[i] == GS_COL_FLOAT4;
	}
}

/*
 * The receiver of the query's rows: builds batches and scores them.  Lives
 * in score_query's frame; everything it allocates is in query_cxt.
 */
typedef struct ScoreReceiver
{
	DestReceiver pub;			/* must be first */
	ReturnSetInfo *rsinfo;
	bool		all_outputs;
	GsModelRef *m;
	MemoryContext query_cxt;	/* scorer, buffers: the whole call */
	MemoryContext rows_cxt;		/* per-row conversions: one batch */
	GsQueryShape shape;
	GsBatchScorer *scorer;		/* set up at rStartup */
	size_t		batch_rows;
	float	   *x;				/* batch being filled (ld = batch_rows), or
								 * NULL */
	int			slot;			/* its scorer slot */
	size_t		n;				/* rows in it, staged ones included */
	float	   *stage;			/* [STAGE_ROWS * n_features], row-major */
	int			staged;			/* its rows: batch rows n - staged .. n - 1 */
	int64	   *keys[GS_SCORER_SLOTS];
	bool	   *key_null[GS_SCORER_SLOTS];
} ScoreReceiver;

/* Write the staged rows to their place in the column-major batch. */
static void
flush_stage(ScoreReceiver *r)
{
	gs_rows_to_columns(r->stage, r->staged, r->m->model->n_features,
					   r->x + (r->n - r->staged), r->batch_rows);
	r->staged = 0;
}

/* One row of a query as the model's float input; see gpuscore.h. */
void
gs_query_row(const GsQueryShape *shape, const GsModelRef *m, const Datum *values,
			 const bool *nulls, float *row, int64 *key, bool *key_null)
{
	int			nf = m->model->n_features;

	*key_null = nulls[0];
	*key = nulls[0] ? 0 :
		shape->key_kind == GS_COL_INT2 ? DatumGetInt16(values[0]) :
		shape->key_kind == GS_COL_INT4 ? DatumGetInt32(values[0]) : DatumGetInt64(values[0]);

	if (shape->array_features)
	{
		if (nulls[1])
			for (int f = 0; f < nf; f++)
				row[f] = NAN;
		else
			gs_array_to_row(DatumGetArrayTypeP(values[1]), m, row);
	}
	else if (shape->all_float4)
	{
		bool		any_inf = false;

		for (int f = 0; f < nf; f++)
		{
			float		v = nulls[f + 1] ? NAN : DatumGetFloat4(values[f + 1]);

			any_inf |= isinf(v);
			row[f] = v;
		}
		if (any_inf)
			for (int f = 0; f < nf; f++)
				if (isinf(row[f]))
					gs_check_infinite(m, f, row[f]);
	}
	else
		for (int f = 0; f < nf; f++)
		{
			float		v;

			if (nulls[f + 1])
				v = gs_col_kind_is_text(shape->kinds[f + 1]) ? gs_text_null(m, f) : NAN;
			else if (shape->kinds[f + 1] == GS_COL_FLOAT4)
			{
				v = DatumGetFloat4(values[f + 1]);
				if (isinf(v))
					gs_check_infinite(m, f, v);
			}
			else if (gs_col_kind_is_text(shape->kinds[f + 1]))
				v = gs_text_feature(m, f, values[f + 1], shape->kinds[f + 1], NULL);
			else
			{
				double		dv = gs_datum_to_double(values[f + 1], shape->kinds[f + 1]);

				gs_check_infinite(m, f, dv);
				v = (float) dv;
			}
			row[f] = v;
		}
}

/*
 * Add one row (the query's values and nulls) as row r->n of the batch: its
 * key, and its features into the stage.  Conversions that allocate do so
 * in the current memory context (the caller's rows_cxt).
 */
static void
add_row(ScoreReceiver *r, const Datum *values, const bool *nulls)
{
	size_t		i = r->n;

	gs_query_row(&r->shape, r->m, values, nulls,
				 r->stage + (size_t) r->staged * r->m->model->n_features,
				 &r->keys[r->slot][i], &r->key_null[r->slot][i]);
	r->n++;
	if (++r->staged == STAGE_ROWS)
		flush_stage(r);
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

/* Emit every batch the scorer has finished (all of them when drain). */
static void
emit_finished(ScoreReceiver *r, bool drain)
{
	const float *out;
	int			slot;
	size_t		n_done;

	while ((out = gs_scorer_next(r->scorer, drain, &slot, &n_done)) != NULL)
		emit_batch(r->rsinfo, out, n_done, r->m->model->n_outputs, r->keys[slot],
				   r->key_null[slot], r->all_outputs);
}

/*
 * Score the batch being filled.  A short (last) batch is first compacted
 * to ld = its row count, the layout the scorer takes.
 */
static void
submit_batch(ScoreReceiver *r)
{
	int			nf = r->m->model->n_features;

	flush_stage(r);
	if (r->n < r->batch_rows)
		for (int f = 1; f < nf; f++)
			memmove(r->x + (size_t) f * r->n, r->x + (size_t) f * r->batch_rows,
					sizeof(float) * r->n);
	gs_scorer_submit(r->scorer, r->n);
	MemoryContextReset(r->rows_cxt);
	r->x = NULL;
	r->n = 0;
}

/* DestReceiver startup: check the query's columns, set up the scorer. */
static void
receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	ScoreReceiver *r = (ScoreReceiver *) self;
	MemoryContext old = MemoryContextSwitchTo(r->query_cxt);

	gs_query_shape(typeinfo, r->m, &r->shape);
	r->stage = palloc(sizeof(float) * STAGE_ROWS * r->m->model->n_features);
	MemoryContextSwitchTo(old);
	r->scorer = gs_scorer_begin(r->m, r->batch_rows, r->query_cxt);
}

/* DestReceiver row: add it to the batch; score the batch when full. */
static bool
receiver_row(TupleTableSlot *slot, DestReceiver *self)
{
	ScoreReceiver *r = (ScoreReceiver *) self;
	MemoryContext old;

	if (r->x == NULL)
	{
		/* a slot still holding results must be emitted before refilling */
		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(r->rows_cxt);
		emit_finished(r, false);
		MemoryContextSwitchTo(old);
		r->x = gs_scorer_input(r->scorer, &r->slot);
	}
	slot_getallattrs(slot);
	old = MemoryContextSwitchTo(r->rows_cxt);
	add_row(r, slot->tts_values, slot->tts_isnull);
	MemoryContextSwitchTo(old);
	if (r->n == r->batch_rows)
		submit_batch(r);
	return true;
}

/* DestReceiver shutdown and destroy: nothing to do (score_query finishes). */
static void
receiver_shutdown(DestReceiver *self)
{
}

static void
receiver_destroy(DestReceiver *self)
{
}

/* Run a user's query into dest (inside SPI_connect); see gpuscore.h. */
void
gs_run_query(const char *query, DestReceiver *dest, const char *function)
{
	SPIPlanPtr	plan;
	SPIExecuteOptions options;
	int			rc;

	/*
	 * Run to completion (not through a cursor), the query may use parallel
	 * workers: a filtered scan of a big table is then shared out, while this
	 * backend builds and scores the batches.
	 */
	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_PARALLEL_OK);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_DEFINITION),
				 errmsg("query for %s must return rows", function),
				 errhint("Pass a SELECT (or a statement with RETURNING).")));
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = dest;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(rc));
}

/*
 * Shared body of gpu_score_query and gpu_predict_query: run the query,
 * scoring its rows in batches through the batch scorer, and put (key,
 * output) rows into the result tuplestore.  With the GPU, building batch
 * k+1 overlaps scoring batch k.
 */
static Datum
score_query(FunctionCallInfo fcinfo, bool all_outputs)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *query;
	GsModelRef *m;
	ScoreReceiver r;
	int			nout;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query must not be null")));
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));

	InitMaterializedSRF(fcinfo, 0);
	m = gs_model_acquire(name, fcinfo->flinfo->fn_mcxt);
	nout = m->model->n_outputs;
	if (!all_outputs && nout != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" has %d outputs per row", name, nout),
				 errhint("Use gpu_predict_query() to get all outputs of a multi-output model.")));

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = receiver_row;
	r.pub.rStartup = receiver_startup;
	r.pub.rShutdown = receiver_shutdown;
	r.pub.rDestroy = receiver_destroy;
	r.pub.mydest = DestNone;
	r.rsinfo = rsinfo;
	r.all_outputs = all_outputs;
	r.m = m;
	r.batch_rows = gs_batch_rows(m->model);
	/* everything of this call, GPU buffers included, dies with query_cxt */
	r.query_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_gpuscore query batches",
										ALLOCSET_DEFAULT_SIZES);
	r.rows_cxt = AllocSetContextCreate(r.query_cxt, "pg_gpuscore query rows",
									   ALLOCSET_DEFAULT_SIZES);
	for (int k = 0; k < GS_SCORER_SLOTS; k++)
	{
		r.keys[k] = MemoryContextAllocHuge(r.query_cxt, sizeof(int64) * r.batch_rows);
		r.key_null[k] = MemoryContextAllocHuge(r.query_cxt, sizeof(bool) * r.batch_rows);
	}

	SPI_connect();
	/* on a Citus coordinator, a query on distributed tables scores on the workers */
	if (gs_citus_score_query(m, query, rsinfo, all_outputs))
	{
		SPI_finish();
		MemoryContextDelete(r.query_cxt);
		return (Datum) 0;
	}
	gs_run_query(query, &r.pub, "gpu_score_query");

	if (r.n > 0)
		submit_batch(&r);
	if (r.scorer)
	{
		MemoryContext old = MemoryContextSwitchTo(r.rows_cxt);

		emit_finished(&r, true);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	MemoryContextDelete(r.query_cxt);
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

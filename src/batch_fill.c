/*
 * batch_fill.c
 *	  Building the GpuScore node's batches (batch_exec.c): rows pulled from
 *	  the child, their kept columns copied, each call's features read into
 *	  its scorer's column-major input (staged row-major STAGE_ROWS rows at a
 *	  time), the batch submitted to every call's scorer and its scores
 *	  taken back.  The calls' models are looked up, and their scorers set
 *	  up, when the first batch is built (resolve_calls).
 *
 * A batch's copies of by-reference values and its rows' errors live in the
 * batch's memory context (Batch.cxt), reset when its rows have been
 * returned; the scorers' buffers belong to the scorers (device.c).
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "core/forest/cpu_engine.h"
#include "batch_exec.h"

/* The text of an error, made once in the node's context. */
static Datum
fixed_error(BatchState *st, const GsRowError *err)
{
	MemoryContext old = MemoryContextSwitchTo(st->node_cxt);
	Datum		d = gs_row_error_datum(err);

	MemoryContextSwitchTo(old);
	return d;
}

/*
 * A descriptor of the columns a GS_FORM_COLUMNS call reads: their names
 * and the types of its inputs.
 */
static TupleDesc
columns_desc(CallState *c, CustomScan *cs, int first_input)
{
	TupleDesc	desc = CreateTemplateTupleDesc(c->n_inputs);
	ListCell   *name = list_head(c->names);

	for (int k = 0; k < c->n_inputs; k++)
	{
		Node	   *e = list_nth(cs->custom_exprs, first_input + k);

		TupleDescInitEntry(desc, k + 1, strVal(lfirst(name)), exprType(e), exprTypmod(e), 0);
		name = lnext(c->names, name);
	}
	return desc;
}

/*
 * Look up the calls' models (at the first row, so that an empty input
 * looks up nothing) and set up their scorers; errors that every row with
 * features would raise are kept, not raised.
 */
static void
resolve_calls(BatchState *st)
{
	CustomScan *cs = (CustomScan *) st->css.ss.ps.plan;
	MemoryContext old = MemoryContextSwitchTo(st->node_cxt);
	size_t		max_rows = 0;
	int			first_input = 0;

	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];
		bool		isnull;
		Datum		name_d;
		char	   *name = NULL;
		GsRowError	err;

		first_input++;			/* the model expression */
		name_d = ExecEvalExpr(c->model_expr, st->fill_econtext, &isnull);
		if (!isnull)
			name = TextDatumGetCString(name_d);
		if (!gs_model_name_ok(name, &err))
		{
			c->name_null = isnull;
			c->model_bad = true;
			c->model_err = fixed_error(st, &err);
		}
		else if ((c->m = gs_model_try_acquire(name, st->node_cxt)) == NULL)
		{
			gs_model_missing_error(name, &err);
			c->model_bad = true;
			c->model_err = fixed_error(st, &err);
		}
		else
		{
			size_t		rows = gs_batch_rows(c->m->model);

			c->nf = c->m->model->n_features;
			c->nout = c->m->model->n_outputs;
			c->stage = palloc(sizeof(float) * STAGE_ROWS * c->nf);
			c->direct_float4 = c->form == GS_FORM_ELEMENTS && c->elemtype == FLOAT4OID &&
				c->n_inputs == c->nf;
			for (int k = 0; k < c->n_inputs; k++)
				c->direct_float4 &= c->input_col[k] > 0;
			max_rows = max_rows == 0 ? rows : Min(max_rows, rows);
			if (c->form == GS_FORM_ELEMENTS && c->n_inputs != c->nf)
			{
				gs_feature_count_error(c->m, c->n_inputs, &err);
				c->count_err = fixed_error(st, &err);
			}
			if (c->kind == GS_CALL_SCORE && c->nout != 1)
			{
				gs_one_output_error(c->m, &err);
				c->outputs_err = fixed_error(st, &err);
			}
			if (c->form == GS_FORM_COLUMNS)
			{
				TupleDesc	desc = columns_desc(c, cs, first_input);

				gs_row_map_build(desc, c->m, &c->map);
				c->row_values = palloc(sizeof(Datum) * c->n_inputs);
				c->row_nulls = palloc(sizeof(bool) * c->n_inputs);
				c->row_natts = c->n_inputs;
			}
		}
		first_input += c->n_inputs;
	}
	if (max_rows > 0)
		st->max_rows = max_rows;
	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];

		if (c->m != NULL)
			c->scorer = gs_scorer_begin(c->m, st->max_rows, st->node_cxt);
		for (int k = 0; k < GS_SCORER_SLOTS; k++)
		{
			c->state[k] = palloc(sizeof(uint8) * st->max_rows);
			c->err[k] = palloc(sizeof(Datum) * st->max_rows);
		}
	}
	st->next_target = Min(st->next_target, st->max_rows);
	st->resolved = true;
	MemoryContextSwitchTo(old);
}

/* The value of input k of c for the row in the fill context's outer slot. */
static Datum
input_value(BatchState *st, CallState *c, int k, TupleTableSlot *slot, bool *isnull)
{
	if (c->input_col[k] > 0)
	{
		*isnull = slot->tts_isnull[c->input_col[k] - 1];
		return slot->tts_values[c->input_col[k] - 1];
	}
	return ExecEvalExpr(c->inputs[k], st->fill_econtext, isnull);
}

/*
 * Read call c's features of the row in slot into row[nf]; false with err set
 * when the row cannot be scored.  d: the value of the features expression
 * for GS_FORM_ARRAY and GS_FORM_ROW (not NULL).  Allocates in the current
 * memory context (the fill context's per-row memory).
 */
static bool
row_features(BatchState *st, CallState *c, TupleTableSlot *slot, Datum d, float *row,
			 GsRowError *err)
{
	bool		isnull;

	switch (c->form)
	{
		case GS_FORM_ELEMENTS:
			if (c->direct_float4)
			{
				/* the common case: real columns, as gs_element_to_float reads them */
				const Datum *values = slot->tts_values;
				const bool *nulls = slot->tts_isnull;
				bool		any_inf = false;

				for (int k = 0; k < c->n_inputs; k++)
				{
					int			a = c->input_col[k] - 1;
					float		v = nulls[a] ? NAN : DatumGetFloat4(values[a]);

					any_inf |= isinf(v);
					row[k] = v;
				}
				for (int k = 0; any_inf && k < c->n_inputs; k++)
					if (isinf(row[k]) && !gs_value_ok(c->m, k, row[k], err))
						return false;
				return true;
			}
			for (int k = 0; k < c->n_inputs; k++)
			{
				Datum		e = input_value(st, c, k, slot, &isnull);

				if (isnull)
					row[k] = NAN;
				else if (!gs_element_to_float(e, c->elemtype, c->m, k, &row[k], err))
					return false;
			}
			return true;
		case GS_FORM_ARRAY:
			return gs_array_to_row_checked(DatumGetArrayTypeP(d), c->m, row, err);
		case GS_FORM_COLUMNS:
			for (int k = 0; k < c->n_inputs; k++)
				c->row_values[k] = input_value(st, c, k, slot, &c->row_nulls[k]);
			return gs_row_map_convert(&c->map, c->m, c->row_values, c->row_nulls, row, err);
		case GS_FORM_ROW:
			{
				HeapTupleHeader th = DatumGetHeapTupleHeader(d);
				Oid			type = HeapTupleHeaderGetTypeId(th);
				int32		typmod = HeapTupleHeaderGetTypMod(th);
				TupleDesc	desc = lookup_rowtype_tupdesc(type, typmod);
				HeapTupleData tuple;

				if (c->row_values == NULL || c->map_type != type || c->map_typmod != typmod)
				{
					MemoryContext old = MemoryContextSwitchTo(st->node_cxt);

					gs_row_map_build(desc, c->m, &c->map);
					c->map_type = type;
					c->map_typmod = typmod;
					c->row_values = palloc(sizeof(Datum) * desc->natts);
					c->row_nulls = palloc(sizeof(bool) * desc->natts);
					c->row_natts = desc->natts;
					MemoryContextSwitchTo(old);
				}
				tuple.t_len = HeapTupleHeaderGetDatumLength(th);
				ItemPointerSetInvalid(&tuple.t_self);
				tuple.t_tableOid = InvalidOid;
				tuple.t_data = th;
				heap_deform_tuple(&tuple, desc, c->row_values, c->row_nulls);
				ReleaseTupleDesc(desc);
				return gs_row_map_convert(&c->map, c->m, c->row_values, c->row_nulls, row, err);
			}
	}
	return false;
}

/* Write the staged rows of c to their place in the column-major batch. */
static void
flush_stage(CallState *c, size_t n, size_t ld)
{
	gs_rows_to_columns(c->stage, c->staged, c->nf, c->x + (n - c->staged), ld);
	c->staged = 0;
}

/*
 * Add the row in slot as row i of batch slot k for call c: its features, or
 * NaN where it gets NULL or an error (kept in batch_cxt).  The checks come
 * in the order of the row-by-row call: the model name, NULL features, the
 * model, the features, the number of outputs.
 */
static void
add_call_row(BatchState *st, CallState *c, int k, size_t i, size_t ld, TupleTableSlot *slot,
			 MemoryContext batch_cxt)
{
	GsRowError	err;
	uint8		state = ROW_ERROR;
	Datum		error = (Datum) 0;
	float	   *dst = c->scorer ? c->stage + (size_t) c->staged * c->nf : NULL;

	if (c->name_null)
		error = c->model_err;
	else
	{
		Datum		d = (Datum) 0;
		bool		isnull = false;

		if (c->form == GS_FORM_ARRAY || c->form == GS_FORM_ROW)
			d = input_value(st, c, 0, slot, &isnull);
		if (isnull)
			state = ROW_NULL;
		else if (c->model_bad)
			error = c->model_err;
		else if (c->count_err)
			error = c->count_err;
		else if (!row_features(st, c, slot, d, dst, &err))
		{
			MemoryContext old = MemoryContextSwitchTo(batch_cxt);

			error = gs_row_error_datum(&err);
			MemoryContextSwitchTo(old);
		}
		else if (c->outputs_err)
			error = c->outputs_err;
		else
			state = ROW_SCORED;
	}
	c->state[k][i] = state;
	c->err[k][i] = error;
	if (c->scorer == NULL)
		return;
	/* a row not scored is scored as all missing, and its score not used */
	if (state != ROW_SCORED)
		for (int f = 0; f < c->nf; f++)
			dst[f] = NAN;
	if (++c->staged == STAGE_ROWS)
		flush_stage(c, i + 1, ld);
}

/* Is a batch of some call still running on the GPU? */
bool
gs_batch_any_in_flight(BatchState *st)
{
	for (int i = 0; i < st->n_calls; i++)
		if (st->calls[i].scorer && gs_scorer_in_flight(st->calls[i].scorer))
			return true;
	return false;
}

/*
 * Build the next batch from the child's rows and submit it to every call's
 * scorer; false when the child had no row left.
 */
bool
gs_batch_fill(BatchState *st)
{
	PlanState  *child = outerPlanState(st);
	int			k = st->fill_slot;
	Batch	   *b = &st->batch[k];
	Size		budget = (Size) gs_batch_memory_kb * 1024;
	TupleTableSlot *slot;
	MemoryContext old;

	slot = ExecProcNode(child);
	if (TupIsNull(slot))
	{
		st->child_done = true;
		return false;
	}
	st->fill_econtext->ecxt_outertuple = slot;
	if (!st->resolved)
		resolve_calls(st);
	MemoryContextReset(b->cxt);
	b->target = Min(st->next_target, st->max_rows);
	b->values = MemoryContextAllocHuge(b->cxt, sizeof(Datum) * b->target * Max(st->n_kept, 1));
	b->nulls = MemoryContextAllocHuge(b->cxt, sizeof(bool) * b->target * Max(st->n_kept, 1));
	b->n = 0;
	b->bytes = 0;
	st->next_target = Min(Max(b->target * RAMP_FACTOR, RAMP_SECOND), st->max_rows);
	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];
		int			slot_no = k;

		c->staged = 0;
		if (c->scorer)
		{
			c->x = gs_scorer_input(c->scorer, &slot_no);
			Assert(slot_no == k);
		}
	}
	for (;;)
	{
		Datum	   *values = b->values + b->n * st->n_kept;
		bool	   *nulls = b->nulls + b->n * st->n_kept;

		CHECK_FOR_INTERRUPTS();
		slot_getsomeattrs(slot, st->max_attno);
		/* the columns read above, by-reference values copied */
		b->bytes += sizeof(Datum) * st->n_kept;
		for (int k = 0; k < st->n_kept; k++)
		{
			int			a = st->kept[k] - 1;

			nulls[k] = slot->tts_isnull[a];
			if (nulls[k] || st->kept_byval[k])
				values[k] = slot->tts_values[a];
			else
			{
				Size		len = datumGetSize(slot->tts_values[a], false, st->kept_len[k]);

				old = MemoryContextSwitchTo(b->cxt);
				values[k] = datumCopy(slot->tts_values[a], false, st->kept_len[k]);
				MemoryContextSwitchTo(old);
				b->bytes += len;
			}
		}
		ResetExprContext(st->fill_econtext);
		st->fill_econtext->ecxt_outertuple = slot;
		old = MemoryContextSwitchTo(st->fill_econtext->ecxt_per_tuple_memory);
		for (int i = 0; i < st->n_calls; i++)
			add_call_row(st, &st->calls[i], k, b->n, b->target, slot, b->cxt);
		MemoryContextSwitchTo(old);
		b->n++;
		if (b->n >= b->target || b->bytes >= budget)
			break;
		slot = ExecProcNode(child);
		if (TupIsNull(slot))
		{
			st->child_done = true;
			break;
		}
	}
	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];

		if (c->scorer == NULL)
			continue;
		flush_stage(c, b->n, b->target);
		/* a short batch goes to the scorer with ld = its row count */
		if (b->n < b->target)
			for (int f = 1; f < c->nf; f++)
				memmove(c->x + (size_t) f * b->n, c->x + (size_t) f * b->target,
						sizeof(float) * b->n);
		gs_scorer_submit(c->scorer, b->n);
	}
	st->queue[st->n_queued++] = k;
	st->fill_slot = (k + 1) % GS_SCORER_SLOTS;
	st->n_batches++;
	st->largest = Max(st->largest, b->n);
	return true;
}

/* Take the oldest submitted batch's scores: its rows are returned next. */
void
gs_batch_take(BatchState *st)
{
	int			k = st->queue[0];

	for (int i = 1; i < st->n_queued; i++)
		st->queue[i - 1] = st->queue[i];
	st->n_queued--;
	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];
		int			slot = -1;
		size_t		n = 0;

		if (c->scorer == NULL)
			continue;
		c->out = gs_scorer_next(c->scorer, true, &slot, &n);
		if (c->out == NULL || slot != k || n != st->batch[k].n)
			elog(ERROR, "pg_gpuscore: batch scorer out of step (slot %d of %d, %zu rows of %zu)",
				 slot, k, n, st->batch[k].n);
	}
	gs_batch_report_worker_stats(st);
	st->emit_slot = k;
	st->emit_pos = 0;
}

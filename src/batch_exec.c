/*
 * batch_exec.c
 *	  The GpuScore custom scan node: scores the gpu_score and gpu_predict
 *	  calls that batch_plan.c gave it in columnar batches of its child's
 *	  rows, through the batch scorer (device.c: the GPU pipeline or the CPU
 *	  engine, as pg_gpuscore.device says), and returns the child's rows with
 *	  the scores as columns.
 *
 * A batch: the node pulls rows from its child, keeps the columns of each
 * that the plan above reads (by-reference values copied into the batch's
 * memory context; the other columns are NULL when the row is returned) and
 * reads each call's
 * features from the row straight into the scorer's column-major float32
 * input (an ARRAY[...] argument element by element, a whole row column by
 * column: no array or row is formed per row), then submits the batch to
 * every call's scorer and returns the rows one by one, each with its
 * scores.  On the GPU the next batch is built while the previous one is
 * scored.  Batches grow 1, 64, 1024, 16384 rows and then stay at the
 * model's batch size (gs_batch_rows), so that a LIMIT or a cursor's FETCH
 * does not score a full batch; a LIMIT found at plan time sets the first
 * batch.  A batch also ends when its rows' copies reach
 * pg_gpuscore.batch_memory.
 *
 * Row by row semantics: a call's model is looked up at the first row (the
 * statement's snapshot fixes the version for workers too), and every check
 * a row-by-row call makes of its row is made here, with the same messages
 * (row_error.c); its error is kept with the row and raised by the
 * gpu_batch_result() that stands for the call, when the row's value is
 * used.  A NULL feature array or row gives NULL.
 *
 * Memory: the node's context ("pg_gpuscore batch calls") holds the calls'
 * state, model references and scorers (whose GPU pipelines memory context
 * callbacks release, also on ERROR); each batch has a context for its rows
 * and errors, reset when its rows have been returned.  Backward scans
 * (SCROLL cursors) keep the returned rows in a tuplestore, as Material does.
 * Under Gather, each worker's scoring statistics go to shared memory so
 * that EXPLAIN ANALYZE counts them.
 *
 * This file sets the node up and returns its rows; batch_fill.c builds and
 * submits the batches, batch_parallel.c holds the shared memory of parallel
 * query, batch_explain.c the EXPLAIN output; batch_exec.h is the state they
 * share.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "catalog/objectaccess.h"
#include "batch_plan.h"
#include "gpuscore.h"
#include "batch_exec.h"

static void begin_batch(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_batch(CustomScanState *node);
static void end_batch(CustomScanState *node);
static void rescan_batch(CustomScanState *node);

static const CustomExecMethods batch_exec_methods = {
	.CustomName = GS_BATCH_NODE_NAME,
	.BeginCustomScan = begin_batch,
	.ExecCustomScan = exec_batch,
	.EndCustomScan = end_batch,
	.ReScanCustomScan = rescan_batch,
	.EstimateDSMCustomScan = gs_batch_estimate_dsm,
	.InitializeDSMCustomScan = gs_batch_init_dsm,
	.ReInitializeDSMCustomScan = gs_batch_reinit_dsm,
	.InitializeWorkerCustomScan = gs_batch_init_worker,
	.ShutdownCustomScan = gs_batch_shutdown,
	.ExplainCustomScan = gs_batch_explain,
};

/* The node's state for a plan node; see batch_plan.h. */
Node *
gs_batch_create_state(CustomScan *cscan)
{
	BatchState *st = (BatchState *) newNode(sizeof(BatchState), T_CustomScanState);

	st->css.methods = &batch_exec_methods;
	return (Node *) st;
}

/* ---- setting up ---- */

/* The calls of the plan's private list, with their expressions initialized. */
static void
init_calls(BatchState *st, CustomScan *cs)
{
	List	   *calls = (List *) lthird(cs->custom_private);
	ListCell   *lc,
			   *ex = list_head(cs->custom_exprs);
	int			i = 0;

	st->n_calls = list_length(calls);
	st->calls = palloc0(sizeof(CallState) * st->n_calls);
	foreach(lc, calls)
	{
		List	   *p = (List *) lfirst(lc);
		CallState  *c = &st->calls[i++];
		AclResult	acl;

		c->funcid = (Oid) intVal(list_nth(p, 0));
		c->kind = (GsCallKind) intVal(list_nth(p, 1));
		c->form = (GsFeatureForm) intVal(list_nth(p, 2));
		c->elemtype = (Oid) intVal(list_nth(p, 3));
		c->n_inputs = intVal(list_nth(p, 4));
		c->score_col = intVal(list_nth(p, 5)) - 1;
		c->names = (List *) list_nth(p, 6);

		/* the call is not evaluated as such: check what ExecInitFunc would */
		acl = pg_proc_aclcheck(c->funcid, GetUserId(), ACL_EXECUTE);
		if (acl != ACLCHECK_OK)
			aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(c->funcid));
		InvokeFunctionExecuteHook(c->funcid);

		c->model_expr = ExecInitExpr((Expr *) lfirst(ex), &st->css.ss.ps);
		ex = lnext(cs->custom_exprs, ex);
		c->inputs = palloc0(sizeof(ExprState *) * c->n_inputs);
		c->input_col = palloc0(sizeof(AttrNumber) * c->n_inputs);
		for (int k = 0; k < c->n_inputs; k++)
		{
			Expr	   *e = (Expr *) lfirst(ex);

			ex = lnext(cs->custom_exprs, ex);
			/* a column of the element type: read from the row directly */
			if (IsA(e, Var) && ((Var *) e)->varno == OUTER_VAR &&
				(c->form == GS_FORM_COLUMNS ||
				 (c->form == GS_FORM_ELEMENTS && ((Var *) e)->vartype == c->elemtype)))
				c->input_col[k] = ((Var *) e)->varattno;
			else
				c->inputs[k] = ExecInitExpr(e, &st->css.ss.ps);
		}
	}
}

/*
 * The child's columns the node keeps of each row, how to copy them, and how
 * far to deform a child row (those and the features read directly).
 */
static void
init_kept(BatchState *st, CustomScan *cs)
{
	TupleDesc	desc = ExecGetResultType(outerPlanState(st));
	ListCell   *lc;
	int			k = 0;

	st->kept = MemoryContextAlloc(st->node_cxt, sizeof(AttrNumber) * Max(st->n_kept, 1));
	st->kept_byval = MemoryContextAlloc(st->node_cxt, sizeof(bool) * Max(st->n_kept, 1));
	st->kept_len = MemoryContextAlloc(st->node_cxt, sizeof(int16) * Max(st->n_kept, 1));
	st->max_attno = 0;
	foreach(lc, (List *) lfourth(cs->custom_private))
	{
		AttrNumber	a = (AttrNumber) intVal(lfirst(lc));
		Form_pg_attribute att;

		if (a < 1 || a > desc->natts || a > st->n_child_cols)
			elog(ERROR, "pg_gpuscore: kept column %d out of range", a);
		att = TupleDescAttr(desc, a - 1);
		st->kept[k] = a;
		st->kept_byval[k] = att->attbyval;
		st->kept_len[k] = att->attlen;
		st->max_attno = Max(st->max_attno, a);
		k++;
	}
	for (int i = 0; i < st->n_calls; i++)
		for (int j = 0; j < st->calls[i].n_inputs; j++)
			st->max_attno = Max(st->max_attno, st->calls[i].input_col[j]);
}

/* BeginCustomScan: calls, the child, batch contexts. */
static void
begin_batch(CustomScanState *node, EState *estate, int eflags)
{
	BatchState *st = (BatchState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	Plan	   *child = outerPlan(cs);
	MemoryContext old;

	st->n_child_cols = intVal(linitial(cs->custom_private));
	st->bound = intVal(lsecond(cs->custom_private));
	st->n_kept = list_length((List *) lfourth(cs->custom_private));
	st->node_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_gpuscore batch calls",
										 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(st->node_cxt);
	init_calls(st, cs);
	MemoryContextSwitchTo(old);

	/* the rows are read back in the child's layout; backward scans are ours */
	outerPlanState(st) = ExecInitNode(child, estate,
									  eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	init_kept(st, cs);
	st->fill_econtext = CreateExprContext(estate);
	for (int k = 0; k < GS_SCORER_SLOTS; k++)
		st->batch[k].cxt = AllocSetContextCreate(st->node_cxt, "pg_gpuscore batch rows",
												 ALLOCSET_DEFAULT_SIZES);
	st->emit_slot = -1;
	st->next_target = st->bound > 0 ? st->bound : RAMP_FIRST;
	st->max_rows = (size_t) gs_batch_size;
	if (eflags & EXEC_FLAG_BACKWARD)
	{
		st->store = tuplestore_begin_heap(true, false, work_mem);
		st->store_slot = ExecInitExtraTupleSlot(estate, node->ss.ps.ps_ResultTupleDesc,
												&TTSOpsMinimalTuple);
	}
}

/* ---- returning rows ---- */

/* Row i of the batch being returned, with its scores, as the scan tuple. */
static TupleTableSlot *
scan_tuple(BatchState *st, size_t i)
{
	TupleTableSlot *scan = st->css.ss.ss_ScanTupleSlot;
	Batch	   *b = &st->batch[st->emit_slot];
	int			k = st->emit_slot;

	ExecClearTuple(scan);
	/* columns nobody above reads are NULL */
	memset(scan->tts_isnull, true, sizeof(bool) * st->n_child_cols);
	for (int k = 0; k < st->n_kept; k++)
	{
		scan->tts_values[st->kept[k] - 1] = b->values[i * st->n_kept + k];
		scan->tts_isnull[st->kept[k] - 1] = b->nulls[i * st->n_kept + k];
	}
	for (int j = 0; j < st->n_calls; j++)
	{
		CallState  *c = &st->calls[j];
		int			col = c->score_col;
		uint8		state = c->state[k][i];

		scan->tts_isnull[col] = state != ROW_SCORED;
		scan->tts_values[col] = (Datum) 0;
		scan->tts_isnull[col + 1] = state != ROW_ERROR;
		scan->tts_values[col + 1] = state == ROW_ERROR ? c->err[k][i] : (Datum) 0;
		if (state != ROW_SCORED)
			continue;
		if (c->kind == GS_CALL_SCORE)
			scan->tts_values[col] = Float4GetDatum(c->out[i]);
		else
		{
			/* in the row's memory, reset before the next row */
			MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
			Datum	   *elems = palloc(sizeof(Datum) * c->nout);

			for (int o = 0; o < c->nout; o++)
				elems[o] = Float4GetDatum(c->out[i * c->nout + o]);
			scan->tts_values[col] = PointerGetDatum(construct_array(elems, c->nout, FLOAT4OID,
																	sizeof(float4), true,
																	TYPALIGN_INT));
			MemoryContextSwitchTo(old);
		}
	}
	return ExecStoreVirtualTuple(scan);
}

/*
 * The next scan tuple: the next row of the batch being returned, building
 * and taking batches as needed; NULL at the end.  While a batch is on the
 * GPU, the next one is built.
 */
static TupleTableSlot *
next_scan_tuple(BatchState *st)
{
	for (;;)
	{
		if (st->emit_slot >= 0)
		{
			if (st->emit_pos < st->batch[st->emit_slot].n)
				return scan_tuple(st, st->emit_pos++);
			st->emit_slot = -1;
		}
		if (!st->child_done &&
			(st->n_queued == 0 || (st->n_queued < GS_SCORER_SLOTS && gs_batch_any_in_flight(st))))
		{
			gs_batch_fill(st);
			continue;
		}
		if (st->n_queued == 0)
			return NULL;
		gs_batch_take(st);
	}
}

/* The next row that passes the node's filter, projected. */
static TupleTableSlot *
next_row(BatchState *st)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	ExprState  *qual = st->css.ss.ps.qual;
	ProjectionInfo *proj = st->css.ss.ps.ps_ProjInfo;

	for (;;)
	{
		TupleTableSlot *scan;

		/* (the child runs in the executor's context, as it expects) */
		ResetExprContext(econtext);
		scan = next_scan_tuple(st);
		if (scan == NULL)
			return NULL;
		econtext->ecxt_scantuple = scan;
		if (qual != NULL && !ExecQual(qual, econtext))
		{
			InstrCountFiltered1(st, 1);
			continue;
		}
		return proj ? ExecProject(proj) : scan;
	}
}

/*
 * ExecCustomScan: the next row.  With backward scans allowed, returned rows
 * are kept in a tuplestore and read back from it, as Material does.
 */
static TupleTableSlot *
exec_batch(CustomScanState *node)
{
	BatchState *st = (BatchState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	bool		eof_store;
	TupleTableSlot *slot;

	if (st->store == NULL)
		return next_row(st);

	eof_store = tuplestore_ateof(st->store);
	if (!forward && eof_store)
	{
		/* reversing at the end: the first fetch gives the last row returned */
		if (!st->store_eof && !tuplestore_advance(st->store, forward))
			return NULL;
		eof_store = false;
	}
	if (!eof_store)
	{
		if (tuplestore_gettupleslot(st->store, forward, false, st->store_slot))
			return st->store_slot;
		if (forward)
			eof_store = true;
	}
	if (eof_store && !st->store_eof)
	{
		slot = next_row(st);
		if (TupIsNull(slot))
		{
			st->store_eof = true;
			return NULL;
		}
		tuplestore_puttupleslot(st->store, slot);
		return slot;
	}
	return NULL;
}

/* Drop the batches not returned yet, taking their results from the scorers. */
static void
discard_batches(BatchState *st)
{
	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];
		int			slot;
		size_t		n;

		while (c->scorer && gs_scorer_next(c->scorer, true, &slot, &n) != NULL)
			;
	}
	for (int k = 0; k < GS_SCORER_SLOTS; k++)
		MemoryContextReset(st->batch[k].cxt);
	st->n_queued = 0;
	st->emit_slot = -1;
}

/* ReScanCustomScan: start over (the models stay those of the statement). */
static void
rescan_batch(CustomScanState *node)
{
	BatchState *st = (BatchState *) node;
	PlanState  *child = outerPlanState(st);

	discard_batches(st);
	st->child_done = false;
	st->next_target = Min((size_t) (st->bound > 0 ? st->bound : RAMP_FIRST), st->max_rows);
	if (st->store)
	{
		tuplestore_clear(st->store);
		st->store_eof = false;
	}
	if (child->chgParam == NULL)
		ExecReScan(child);
}

/*
 * EndCustomScan: the child, and the tuplestore.  The node's context goes
 * with the executor's (FreeExecutorState, right after), releasing the
 * scorers' GPU pipelines and the models: the executor still frees
 * expression contexts whose callbacks may point into the calls' expression
 * states, so they must outlive the node's end.
 */
static void
end_batch(CustomScanState *node)
{
	BatchState *st = (BatchState *) node;

	ExecEndNode(outerPlanState(st));
	if (st->store)
		tuplestore_end(st->store);
	st->store = NULL;
}

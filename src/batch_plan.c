/*
 * batch_plan.c
 *	  The planner side of batched gpu_score and gpu_predict calls: a plain
 *	  `SELECT gpu_score('fraud', ARRAY[...]) FROM t` is scored in columnar
 *	  batches by a GpuScore custom scan node (batch_exec.c) that this file
 *	  puts into the finished plan.
 *
 * The planner hook rewrites the PlannedStmt that the standard planner (or
 * the next hook) made, as TimescaleDB and Hydra add their nodes to finished
 * plans: there the final target list of every statement kind is visible
 * (SELECT, INSERT ... SELECT, UPDATE ... SET, CREATE TABLE AS, the source of
 * MERGE), and parallel plans are already split into the part below Gather
 * that workers run.  A call qualifies when its model argument is fixed for
 * the statement (a constant, a parameter, a stable expression of those) and
 * its features are plain expressions (no volatile functions, sub-selects or
 * other scoring calls).  Two places get a node:
 *
 *   over a node that evaluates calls in its target list or filter (a scan,
 *   a join, a Result, an Agg's or WindowAgg's output): the node keeps its
 *   other work and outputs the values the calls and the rest of its target
 *   list need; GpuScore above it scores the calls in batches and computes
 *   the node's original target list and the filter clauses from the first
 *   one with a call on, with the calls replaced by the batch's scores;
 *
 *   under an Agg whose aggregate arguments or FILTER clauses hold calls
 *   (`count(*) FILTER (WHERE gpu_score(...) > 0.9)`, `avg(gpu_score(...))`),
 *   a WindowAgg whose window functions do, or a MERGE whose actions do:
 *   GpuScore passes the parent's input through with the scores added.
 *
 * Under Gather the node is in each worker's part, so workers score their own
 * rows (a partial Agg over scores stays in the workers).  Each call becomes
 * gpu_batch_result(score, error) over two columns of the node's scan tuple:
 * the error a call would raise for a row (row_error.c) is raised only where
 * the value is used, so a call in a CASE branch, a COALESCE or an aggregate
 * with FILTER fails for exactly the rows the call itself would fail for.
 * Feature expressions, though, are evaluated for every row of a batch; a
 * call whose evaluation depends on a condition (later CASE branches, later
 * COALESCE, AND and OR arguments, an aggregate's arguments under FILTER, a
 * target list behind a filter) is batched only when its features cannot
 * raise an error themselves (columns, constants, parameters, casts that
 * cannot fail); otherwise it stays a row-by-row call.  So do calls in a
 * single-row Result (PL/pgSQL's simple expressions), in plans estimated at
 * one row, in join conditions, RETURNING and ON CONFLICT, in MERGE actions
 * that read the target row, and in foreign and other custom scans.
 *
 * This file holds the planner support function, the walk over a finished
 * plan that decides where nodes go, and the hooks; batch_calls.c recognises
 * and collects the calls, batch_node.c builds the nodes (batch_build.h is
 * what they share).
 *
 * Loading without shared_preload_libraries: gpu_score's planner support
 * function (below) loads the library while the first query using it is
 * planned, too late for the planner hook of that query; the ExecutorStart
 * hook rewrites a copy of that one plan, and resets the plan cache so that a
 * cached copy of it is planned again, through the hook.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"

#include "batch_build.h"
#include "batch_plan.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_support);

CustomScanMethods gs_batch_scan_methods = {
	GS_BATCH_NODE_NAME,
	gs_batch_create_state
};

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_executor_start = NULL;

/* Our planner hook's nesting depth, and whether it has run at all. */
static int	planner_depth = 0;
static bool hook_has_planned = false;

/* The support function ran in a planning that our hook did not see. */
static bool unhooked_plan = false;

/* Calls of the support function: tells a planning that saw no call. */
static uint64 support_calls = 0;

/* gpu_score_support's Oid as last called, and gpu_batch_result's for it. */
Oid			gs_batch_support_oid = InvalidOid;
Oid			gs_batch_result_fn_oid = InvalidOid;
static Oid	result_fn_for = InvalidOid;

/* ---- the support function ---- */

/*
 * Node steps of a row for a tree ensemble, weights over 16 for a network:
 * the work gs_model_slice_rows weighs.
 */
static double
row_work(const GsModel *m)
{
	double		work = 0;

	if (m->kind == GS_MODEL_MLP)
		return (double) m->mlp->n_params / 16.0;
	for (int32_t t = 0; t < m->forest->n_trees; t++)
		work += m->forest->tree_depth[t] > 1 ? m->forest->tree_depth[t] : 1;
	return work;
}

/*
 * gpu_score_support(internal) RETURNS internal: the planner support
 * function of gpu_score and gpu_predict.  For SupportRequestCost, the cost of
 * a row for the model named by a constant, if this backend has parsed it
 * (the planner must not read the catalog or parse models to cost a call):
 * about 1/25 of an operator per node step, so the 500-tree depth-8 model
 * costs 160 operators; else the function's COST.  Its first call in a
 * backend is what loads the library during planning.
 */
Datum
gpuscore_gpu_score_support(PG_FUNCTION_ARGS)
{
	Node	   *req = (Node *) PG_GETARG_POINTER(0);

	gs_batch_support_oid = fcinfo->flinfo->fn_oid;
	support_calls++;
	if (planner_depth == 0 && !hook_has_planned)
		unhooked_plan = true;
	if (IsA(req, SupportRequestCost))
	{
		SupportRequestCost *c = (SupportRequestCost *) req;
		FuncExpr   *call = c->node != NULL && IsA(c->node, FuncExpr) ? (FuncExpr *) c->node : NULL;
		Node	   *model = call != NULL && list_length(call->args) == 2 ? linitial(call->args) : NULL;
		const GsModel *m = NULL;

		if (model != NULL && IsA(model, Const) && !((Const *) model)->constisnull &&
			((Const *) model)->consttype == TEXTOID)
			m = gs_model_cached(TextDatumGetCString(((Const *) model)->constvalue));
		if (m != NULL)
		{
			c->startup = 0;
			c->per_tuple = row_work(m) * cpu_operator_cost / 25.0;
			PG_RETURN_POINTER(c);
		}
	}
	PG_RETURN_POINTER(NULL);
}

/*
 * Rewrite plan and its children: children first, then a GpuScore node
 * under an Agg, then over the node.  bound: the rows a LIMIT above takes
 * of plan's output, through nodes that pass rows on one for one (0: all);
 * parallel: plan runs below a Gather; mark_inner: plan is a merge join's
 * inner side, which must support mark and restore.
 */
static Plan *
rewrite_plan(Plan *plan, Rewrite *rw, int bound, bool parallel, bool mark_inner)
{
	int			child_bound = 0;
	bool		child_parallel = parallel;
	ListCell   *lc;

	if (plan == NULL)
		return NULL;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_Limit:
			child_bound = gs_batch_limit_bound((Limit *) plan);
			break;
		case T_Gather:
		case T_GatherMerge:
			child_bound = plan->qual == NIL ? bound : 0;
			child_parallel = true;
			break;
		case T_Result:
		case T_SubqueryScan:
			child_bound = plan->qual == NIL ? bound : 0;
			break;
		default:
			break;
	}
	plan->lefttree = rewrite_plan(plan->lefttree, rw, child_bound, child_parallel, false);
	plan->righttree = rewrite_plan(plan->righttree, rw, 0, child_parallel, IsA(plan, MergeJoin));
	switch (nodeTag(plan))
	{
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				lfirst(lc) = rewrite_plan(lfirst(lc), rw, child_bound, child_parallel, false);
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				lfirst(lc) = rewrite_plan(lfirst(lc), rw, 0, child_parallel, false);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				rewrite_plan(((SubqueryScan *) plan)->subplan, rw, child_bound, child_parallel, false);
			break;
		case T_Agg:
		case T_WindowAgg:
			gs_batch_under_agg(plan, rw, parallel);
			break;
		case T_ModifyTable:
			gs_batch_under_merge((ModifyTable *) plan, rw, parallel);
			break;
		default:
			break;
	}
	if (mark_inner)
		return plan;
	return gs_batch_above(plan, rw, bound, parallel);
}

/* The largest plan_node_id in a plan tree. */
static int
max_node_id(Plan *plan)
{
	int			m;
	ListCell   *lc;

	if (plan == NULL)
		return -1;
	m = Max(plan->plan_node_id, Max(max_node_id(plan->lefttree), max_node_id(plan->righttree)));
	switch (nodeTag(plan))
	{
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				m = Max(m, max_node_id(lfirst(lc)));
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				m = Max(m, max_node_id(lfirst(lc)));
			break;
		case T_SubqueryScan:
			m = Max(m, max_node_id(((SubqueryScan *) plan)->subplan));
			break;
		case T_CustomScan:
			foreach(lc, ((CustomScan *) plan)->custom_plans)
				m = Max(m, max_node_id(lfirst(lc)));
			break;
		case T_BitmapAnd:
			foreach(lc, ((BitmapAnd *) plan)->bitmapplans)
				m = Max(m, max_node_id(lfirst(lc)));
			break;
		case T_BitmapOr:
			foreach(lc, ((BitmapOr *) plan)->bitmapplans)
				m = Max(m, max_node_id(lfirst(lc)));
			break;
		default:
			break;
	}
	return m;
}

/* gpu_batch_result's Oid (in the schema of the support function), or InvalidOid. */
static Oid
lookup_result_fn(void)
{
	Oid			nsp;
	Oid			argtypes[2] = {ANYELEMENTOID, TEXTOID};

	if (result_fn_for == gs_batch_support_oid && OidIsValid(gs_batch_result_fn_oid) &&
		OidIsValid(get_func_namespace(gs_batch_result_fn_oid)))
		return gs_batch_result_fn_oid;
	gs_batch_result_fn_oid = InvalidOid;
	result_fn_for = gs_batch_support_oid;
	nsp = get_func_namespace(gs_batch_support_oid);
	if (OidIsValid(nsp))
		gs_batch_result_fn_oid = LookupFuncName(list_make2(makeString(get_namespace_name(nsp)),
												  makeString("gpu_batch_result")),
									   2, argtypes, true);
	return gs_batch_result_fn_oid;
}

/*
 * Put GpuScore nodes into stmt (in place) for its batchable calls; true
 * when anything changed.
 */
static bool
rewrite_stmt(PlannedStmt *stmt)
{
	Rewrite		rw;
	ListCell   *lc;

	if (stmt->commandType == CMD_UTILITY || !OidIsValid(gs_batch_support_oid) ||
		!OidIsValid(lookup_result_fn()))
		return false;
	rw.stmt = stmt;
	rw.changed = false;
	rw.next_node_id = max_node_id(stmt->planTree);
	foreach(lc, stmt->subplans)
		rw.next_node_id = Max(rw.next_node_id, max_node_id(lfirst(lc)));
	rw.next_node_id++;
	stmt->planTree = rewrite_plan(stmt->planTree, &rw, 0, false, false);
	foreach(lc, stmt->subplans)
		lfirst(lc) = rewrite_plan(lfirst(lc), &rw, 0, false, false);
	return rw.changed;
}

/* ---- hooks ---- */

/* planner_hook: plan, then batch the plan's gpu_score calls. */
static PlannedStmt *
gs_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	uint64		calls_before = support_calls;

	hook_has_planned = true;
	planner_depth++;
	PG_TRY();
	{
		if (prev_planner_hook)
			stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		planner_depth--;
	}
	PG_END_TRY();
	/* no call of gpu_score's support function: no call in the plan */
	if (gs_batch_calls && support_calls != calls_before)
		rewrite_stmt(stmt);
	return stmt;
}

/*
 * ExecutorStart_hook: the plan during whose making the library was loaded
 * did not pass our planner hook; batch a copy of it, and have cached plans
 * planned again.
 */
static void
gs_executor_start(QueryDesc *qd, int eflags)
{
	if (unhooked_plan && !IsParallelWorker())
	{
		unhooked_plan = false;
		if (gs_batch_calls)
		{
			PlannedStmt *copy = copyObject(qd->plannedstmt);

			if (rewrite_stmt(copy))
				qd->plannedstmt = copy;
		}
		ResetPlanCache();
	}
	if (prev_executor_start)
		prev_executor_start(qd, eflags);
	else
		standard_ExecutorStart(qd, eflags);
}

/* Install the hooks; see batch_plan.h. */
void
gs_batch_plan_init(void)
{
	RegisterCustomScanMethods(&gs_batch_scan_methods);
	prev_planner_hook = planner_hook;
	planner_hook = gs_planner;
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = gs_executor_start;
}

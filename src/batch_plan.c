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
 * Loading without shared_preload_libraries: gpu_score's planner support
 * function (below) loads the library while the first query using it is
 * planned, too late for the planner hook of that query; the ExecutorStart
 * hook rewrites a copy of that one plan, and resets the plan cache so that a
 * cached copy of it is planned again, through the hook.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/typcache.h"

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
static Oid	support_oid = InvalidOid;
static Oid	result_fn_oid = InvalidOid;
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

	support_oid = fcinfo->flinfo->fn_oid;
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

/* ---- recognising calls ---- */

/* Is node a call of gpu_score or gpu_predict (any form)? */
static bool
is_score_call(Node *node)
{
	return node != NULL && IsA(node, FuncExpr) && OidIsValid(support_oid) &&
		get_func_support(((FuncExpr *) node)->funcid) == support_oid;
}

static bool
contains_score_call_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (is_score_call(node))
		return true;
	return expression_tree_walker(node, contains_score_call_walker, context);
}

/*
 * Is a model argument fixed for the statement: no column, no value set
 * per row or per rescan, nothing volatile?
 */
static bool
model_arg_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, Aggref) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc) || IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return true;
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN)
		return true;
	return expression_tree_walker(node, model_arg_walker, context);
}

/*
 * Can evaluating e raise an error?  Not for columns, constants, parameters,
 * values computed below (aggregates), and casts that cannot fail.
 */
static bool
expr_is_safe(Node *e)
{
	static const Oid safe_casts[] = {
		F_FLOAT8_INT2, F_FLOAT4_INT2, F_FLOAT8_FLOAT4, F_INT4_INT2, F_FLOAT8_INT4,
		F_FLOAT4_INT4, F_INT8_INT4, F_FLOAT8_INT8, F_FLOAT4_INT8, F_INT8_INT2,
		F_NUMERIC_INT4, F_NUMERIC_INT8, F_NUMERIC_INT2, F_NUMERIC_FLOAT8, F_NUMERIC_FLOAT4
	};

	if (e == NULL)
		return true;
	switch (nodeTag(e))
	{
		case T_Var:
		case T_Const:
		case T_Param:
		case T_Aggref:
		case T_WindowFunc:
		case T_GroupingFunc:
			return true;
		case T_RelabelType:
			return expr_is_safe((Node *) ((RelabelType *) e)->arg);
		case T_ArrayExpr:
			{
				ListCell   *lc;

				if (((ArrayExpr *) e)->multidims)
					return false;
				foreach(lc, ((ArrayExpr *) e)->elements)
					if (!expr_is_safe(lfirst(lc)))
						return false;
				return true;
			}
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) e;

				if (list_length(f->args) != 1)
					return false;
				for (size_t i = 0; i < lengthof(safe_casts); i++)
					if (f->funcid == safe_casts[i])
						return expr_is_safe(linitial(f->args));
				return false;
			}
		default:
			return false;
	}
}

/*
 * Can call be scored in a batch where it is evaluated (conditional: only
 * for some of the rows that reach it)?
 */
static bool
call_batchable(FuncExpr *call, bool conditional)
{
	Node	   *model,
			   *features;

	if (list_length(call->args) != 2 || call->funcretset)
		return false;
	model = linitial(call->args);
	features = lsecond(call->args);
	if (model_arg_walker(model, NULL) || contain_volatile_functions(model) ||
		expression_returns_set(model))
		return false;
	if (contain_volatile_functions(features) || contain_subplans(features) ||
		expression_returns_set(features) || contains_score_call_walker(features, NULL))
		return false;
	if (IsA(features, ArrayExpr) && ((ArrayExpr *) features)->multidims)
		return false;
	return !conditional || expr_is_safe(features);
}

/* ---- building a GpuScore node ---- */

/* The rewriting of one PlannedStmt. */
typedef struct Rewrite
{
	PlannedStmt *stmt;
	int			next_node_id;
	bool		changed;
} Rewrite;

/* One call a GpuScore node scores. */
typedef struct Call
{
	FuncExpr   *expr;			/* as the node that evaluated it had it */
	GsFeatureForm form;
	List	   *columns;		/* GS_FORM_COLUMNS: Vars of the row's columns */
	List	   *names;			/* and their names (String) */
	int			score_attno;	/* scan attribute of the score; error next */
} Call;

/* A GpuScore node being built. */
typedef struct Build
{
	Plan	   *scan;			/* a Scan the node goes over (whole rows), or NULL */
	PlannedStmt *stmt;
	bool		atomic_aggs;	/* aggregates are values of the node's input */
	List	   *calls;			/* Call * */
	List	   *leaves;			/* what the child computes, in output order */
	Oid			result_fn;
	int			input_varno;	/* features must be Vars of it, or 0 */
} Build;

/* The Call of b scoring an expression equal to node, or NULL. */
static Call *
find_call(Build *b, Node *node)
{
	ListCell   *lc;

	if (!IsA(node, FuncExpr))
		return NULL;
	foreach(lc, b->calls)
		if (equal(((Call *) lfirst(lc))->expr, node))
			return (Call *) lfirst(lc);
	return NULL;
}

/*
 * The form of a call's features.  A whole-row Var of the table that b's scan
 * reads is read as that table's columns (no row is formed per row).
 */
static GsFeatureForm
feature_form(Build *b, Call *c)
{
	Node	   *features = lsecond(c->expr->args);
	Oid			type = exprType(features);

	if (!type_is_rowtype(type))
		return IsA(features, ArrayExpr) ? GS_FORM_ELEMENTS : GS_FORM_ARRAY;
	if (b->scan != NULL && IsA(features, Var) && ((Var *) features)->varattno == 0 &&
		((Var *) features)->varno == ((Scan *) b->scan)->scanrelid &&
		((Var *) features)->varlevelsup == 0)
	{
		Var		   *whole = (Var *) features;
		RangeTblEntry *rte = rt_fetch(whole->varno, b->stmt->rtable);

		if (rte->rtekind == RTE_RELATION && get_rel_type_id(rte->relid) == whole->vartype)
		{
			TupleDesc	desc = lookup_rowtype_tupdesc(whole->vartype, -1);

			for (int i = 0; i < desc->natts; i++)
			{
				Form_pg_attribute att = TupleDescAttr(desc, i);

				if (att->attisdropped)
					continue;
				c->columns = lappend(c->columns,
									 makeVar(whole->varno, att->attnum, att->atttypid,
											 att->atttypmod, att->attcollation, 0));
				c->names = lappend(c->names, makeString(pstrdup(NameStr(att->attname))));
			}
			ReleaseTupleDesc(desc);
			return GS_FORM_COLUMNS;
		}
	}
	return GS_FORM_ROW;
}

/* Does node hold a Var of another varno than varno? */
static bool
other_var_walker(Node *node, int *varno)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varno != *varno;
	return expression_tree_walker(node, other_var_walker, varno);
}

/* INNER_VAR Vars as OUTER_VAR ones (MERGE's source row as GpuScore's input). */
static Node *
inner_to_outer_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == INNER_VAR)
	{
		Var		   *v = (Var *) copyObject(node);

		v->varno = OUTER_VAR;
		return (Node *) v;
	}
	return expression_tree_mutator(node, inner_to_outer_mutator, context);
}

/* Add call to b, once for equal calls. */
static void
add_call(Build *b, FuncExpr *call)
{
	Call	   *c;

	if (b->input_varno != 0 && other_var_walker((Node *) call->args, &b->input_varno))
		return;
	if (find_call(b, (Node *) call) != NULL)
		return;
	c = palloc0(sizeof(Call));
	c->expr = call;
	c->form = feature_form(b, c);
	b->calls = lappend(b->calls, c);
}

/* Where collect_calls is in an expression. */
typedef struct Collect
{
	Build	   *b;
	bool		conditional;	/* evaluated for some rows only */
} Collect;

static bool collect_walker(Node *node, Collect *cx);

/* Walk node with conditional as given. */
static void
collect_in(Node *node, Collect *cx, bool conditional)
{
	bool		saved = cx->conditional;

	cx->conditional = saved || conditional;
	collect_walker(node, cx);
	cx->conditional = saved;
}

/*
 * Find the batchable calls of an expression.  Tracks where evaluation is
 * conditional: CASE past its first test, COALESCE past its first argument,
 * AND and OR past their first argument, row comparisons past their first
 * pair.  Aggregates are values of the input where b->atomic_aggs, else the
 * caller walks their arguments (collect_agg_calls).
 */
static bool
collect_walker(Node *node, Collect *cx)
{
	ListCell   *lc;

	if (node == NULL)
		return false;
	if (is_score_call(node) && call_batchable((FuncExpr *) node, cx->conditional))
	{
		add_call(cx->b, (FuncExpr *) node);
		return false;
	}
	switch (nodeTag(node))
	{
		case T_Aggref:
		case T_WindowFunc:
		case T_GroupingFunc:
		case T_SubPlan:
		case T_AlternativeSubPlan:
			return false;
		case T_CaseExpr:
			{
				CaseExpr   *ce = (CaseExpr *) node;
				bool		first = true;

				collect_in((Node *) ce->arg, cx, false);
				foreach(lc, ce->args)
				{
					CaseWhen   *w = lfirst_node(CaseWhen, lc);

					collect_in((Node *) w->expr, cx, !first);
					collect_in((Node *) w->result, cx, true);
					first = false;
				}
				collect_in((Node *) ce->defresult, cx, true);
				return false;
			}
		case T_CoalesceExpr:
			foreach(lc, ((CoalesceExpr *) node)->args)
				collect_in(lfirst(lc), cx, lc != list_head(((CoalesceExpr *) node)->args));
			return false;
		case T_BoolExpr:
			foreach(lc, ((BoolExpr *) node)->args)
				collect_in(lfirst(lc), cx, lc != list_head(((BoolExpr *) node)->args));
			return false;
		case T_RowCompareExpr:
			{
				RowCompareExpr *rc = (RowCompareExpr *) node;
				ListCell   *l,
						   *r;

				forboth(l, rc->largs, r, rc->rargs)
				{
					collect_in(lfirst(l), cx, l != list_head(rc->largs));
					collect_in(lfirst(r), cx, l != list_head(rc->largs));
				}
				return false;
			}
		default:
			break;
	}
	return expression_tree_walker(node, collect_walker, cx);
}

/*
 * Find the calls in the arguments and FILTER clauses of the aggregates of
 * an Agg's expression: evaluated for every input row, its arguments only
 * for the rows its FILTER lets through.  Direct arguments of ordered-set
 * aggregates are evaluated per group: left alone.
 */
static bool
collect_agg_walker(Node *node, Collect *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;

		collect_in((Node *) agg->args, cx, agg->aggfilter != NULL);
		collect_in((Node *) agg->aggfilter, cx, false);
		return false;
	}
	if (IsA(node, WindowFunc))
	{
		/* a window function reads the rows of its frame: some of them */
		collect_in((Node *) ((WindowFunc *) node)->args, cx, true);
		collect_in((Node *) ((WindowFunc *) node)->aggfilter, cx, true);
		return false;
	}
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return false;
	return expression_tree_walker(node, collect_agg_walker, cx);
}

/* The position (1-based) of leaf e in b's leaves, adding it. */
static int
leaf_index(Build *b, Node *e)
{
	ListCell   *lc;
	int			i = 1;

	foreach(lc, b->leaves)
	{
		if (equal(lfirst(lc), e))
			return i;
		i++;
	}
	b->leaves = lappend(b->leaves, e);
	return i;
}

/* What the child of the node computes for it: Vars, and aggregates where atomic. */
static bool
is_leaf(Build *b, Node *node)
{
	return IsA(node, Var) ||
		(b->atomic_aggs && (IsA(node, Aggref) || IsA(node, WindowFunc) || IsA(node, GroupingFunc)));
}

/* Gather the leaves node needs, those of its calls' features included. */
static bool
gather_leaves_walker(Node *node, Build *b)
{
	Call	   *c;

	if (node == NULL)
		return false;
	if ((c = find_call(b, node)) != NULL)
	{
		if (c->form == GS_FORM_COLUMNS)
		{
			ListCell   *lc;

			foreach(lc, c->columns)
				leaf_index(b, lfirst(lc));
			return false;
		}
		return expression_tree_walker((Node *) c->expr->args, gather_leaves_walker, b);
	}
	if (is_leaf(b, node))
	{
		leaf_index(b, node);
		return false;
	}
	return expression_tree_walker(node, gather_leaves_walker, b);
}

/* Leaves as OUTER_VAR Vars: an expression of the child's output. */
static Node *
to_outer_mutator(Node *node, Build *b)
{
	if (node == NULL)
		return NULL;
	if (is_leaf(b, node))
		return (Node *) makeVar(OUTER_VAR, leaf_index(b, node), exprType(node),
								exprTypmod(node), exprCollation(node), 0);
	return expression_tree_mutator(node, to_outer_mutator, b);
}

/* gpu_batch_result(score, error) over the scan columns of c, as varno. */
static Node *
result_expr(Build *b, Call *c, int varno)
{
	Oid			type = c->expr->funcresulttype;
	Var		   *score = makeVar(varno, c->score_attno, type, -1, InvalidOid, 0);
	Var		   *error = makeVar(varno, c->score_attno + 1, TEXTOID, -1, DEFAULT_COLLATION_OID, 0);

	return (Node *) makeFuncExpr(b->result_fn, type, list_make2(score, error),
								 InvalidOid, DEFAULT_COLLATION_OID, COERCE_EXPLICIT_CALL);
}

/* An expression of the node made one of GpuScore's scan tuple. */
static Node *
to_scan_mutator(Node *node, Build *b)
{
	Call	   *c;

	if (node == NULL)
		return NULL;
	if ((c = find_call(b, node)) != NULL)
		return result_expr(b, c, INDEX_VAR);
	if (is_leaf(b, node))
		return (Node *) makeVar(INDEX_VAR, leaf_index(b, node), exprType(node),
								exprTypmod(node), exprCollation(node), 0);
	return expression_tree_mutator(node, to_scan_mutator, b);
}

/* Inside aggregates' arguments and filters: calls as the child's score columns. */
static Node *
agg_args_mutator(Node *node, Build *b)
{
	Call	   *c;

	if (node == NULL)
		return NULL;
	if ((c = find_call(b, node)) != NULL)
		return result_expr(b, c, OUTER_VAR);
	return expression_tree_mutator(node, agg_args_mutator, b);
}

/* An Agg's expression with its aggregates' calls replaced. */
static Node *
agg_mutator(Node *node, Build *b)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) copyObject(node);

		agg->args = (List *) agg_args_mutator((Node *) agg->args, b);
		agg->aggfilter = (Expr *) agg_args_mutator((Node *) agg->aggfilter, b);
		return (Node *) agg;
	}
	if (IsA(node, WindowFunc))
	{
		WindowFunc *wf = (WindowFunc *) copyObject(node);

		wf->args = (List *) agg_args_mutator((Node *) wf->args, b);
		wf->aggfilter = (Expr *) agg_args_mutator((Node *) wf->aggfilter, b);
		return (Node *) wf;
	}
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return node;
	return expression_tree_mutator(node, agg_mutator, b);
}

/* What used_columns_walker looks for. */
typedef struct UsedColumns
{
	int			varno;			/* Vars of it */
	int			n;				/* attnos 1..n count */
	Bitmapset  *used;
} UsedColumns;

/* Add the attnos of u->varno's Vars in node to u->used. */
static bool
used_columns_walker(Node *node, UsedColumns *u)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) && ((Var *) node)->varno == u->varno)
	{
		Var		   *v = (Var *) node;

		if (v->varattno >= 1 && v->varattno <= u->n)
			u->used = bms_add_member(u->used, v->varattno);
		return false;
	}
	return expression_tree_walker(node, used_columns_walker, u);
}

/* The columns 1..n of varno that node reads. */
static Bitmapset *
used_columns(Node *node, int varno, int n, Bitmapset *used)
{
	UsedColumns u = {varno, n, used};

	used_columns_walker(node, &u);
	return u.used;
}

/* used as a List of Integer, for custom_private; all of 1..n when all is set. */
static List *
column_list(Bitmapset *used, int n, bool all)
{
	List	   *l = NIL;

	for (int i = 1; i <= n; i++)
		if (all || bms_is_member(i, used))
			l = lappend(l, makeInteger(i));
	return l;
}

/* A target entry of expression e at position resno. */
static TargetEntry *
make_tle(Expr *e, int resno)
{
	return makeTargetEntry(e, resno, NULL, false);
}

/*
 * The GpuScore node over child for b's calls, whose leaves are already
 * known (the first scan columns): score columns, custom_scan_tlist,
 * custom_exprs and custom_private.  The caller sets the target list and
 * filter.
 */
static CustomScan *
make_node(Build *b, Rewrite *rw, Plan *child, Plan *costs_of, int bound, bool parallel)
{
	CustomScan *cs = makeNode(CustomScan);
	List	   *scan_tlist = NIL;
	List	   *exprs = NIL;
	List	   *calls = NIL;
	int			n_leaves = list_length(b->leaves);
	int			attno = n_leaves + 1;
	ListCell   *lc;

	foreach(lc, b->leaves)
	{
		Node	   *leaf = lfirst(lc);

		scan_tlist = lappend(scan_tlist,
							 make_tle((Expr *) makeVar(OUTER_VAR, list_length(scan_tlist) + 1,
													   exprType(leaf), exprTypmod(leaf),
													   exprCollation(leaf), 0),
									  list_length(scan_tlist) + 1));
	}
	foreach(lc, b->calls)
	{
		Call	   *c = (Call *) lfirst(lc);
		Node	   *features = lsecond(c->expr->args);
		List	   *inputs;
		List	   *call;
		Oid			elemtype = InvalidOid;
		Node	   *shown;

		c->score_attno = attno;
		attno += 2;
		/*
		 * the call, as EXPLAIN VERBOSE shows the score column; a row read as
		 * its columns shows as ROW() of the columns the node reads (the
		 * whole row is none of the child's outputs)
		 */
		shown = (Node *) c->expr;
		if (c->form == GS_FORM_COLUMNS)
		{
			FuncExpr   *copy = copyObject(c->expr);
			RowExpr    *row = makeNode(RowExpr);

			row->args = copyObject(c->columns);
			row->row_typeid = RECORDOID;
			row->row_format = COERCE_EXPLICIT_CALL;
			row->colnames = copyObject(c->names);
			row->location = -1;
			lsecond(copy->args) = row;
			shown = (Node *) copy;
		}
		scan_tlist = lappend(scan_tlist,
							 make_tle((Expr *) to_outer_mutator(inner_to_outer_mutator(shown, NULL), b),
									  c->score_attno));
		scan_tlist = lappend(scan_tlist,
							 make_tle((Expr *) makeNullConst(TEXTOID, -1, DEFAULT_COLLATION_OID),
									  c->score_attno + 1));
		switch (c->form)
		{
			case GS_FORM_ELEMENTS:
				inputs = ((ArrayExpr *) features)->elements;
				elemtype = ((ArrayExpr *) features)->element_typeid;
				break;
			case GS_FORM_COLUMNS:
				inputs = c->columns;
				break;
			default:
				inputs = list_make1(features);
				break;
		}
		exprs = lappend(exprs, to_outer_mutator(inner_to_outer_mutator(linitial(c->expr->args), NULL), b));
		exprs = list_concat(exprs, (List *) to_outer_mutator(inner_to_outer_mutator((Node *) inputs, NULL), b));
		call = list_make5(makeInteger((int) c->expr->funcid),
						  makeInteger(c->expr->funcresulttype == FLOAT4OID ?
									  GS_CALL_SCORE : GS_CALL_PREDICT),
						  makeInteger(c->form),
						  makeInteger((int) elemtype),
						  makeInteger(list_length(inputs)));
		call = lappend(call, makeInteger(c->score_attno));
		call = lappend(call, c->form == GS_FORM_COLUMNS ? c->names : NIL);
		calls = lappend(calls, call);
	}

	/* every value the calls read is one of the child's output columns */
	if (list_length(b->leaves) != n_leaves)
		elog(ERROR, "pg_gpuscore: a batched call reads a value its input lacks");
	cs->scan.plan.startup_cost = costs_of->startup_cost;
	cs->scan.plan.total_cost = costs_of->total_cost;
	cs->scan.plan.plan_rows = costs_of->plan_rows;
	cs->scan.plan.plan_width = costs_of->plan_width;
	cs->scan.plan.parallel_aware = parallel;
	cs->scan.plan.parallel_safe = child->parallel_safe;
	cs->scan.plan.plan_node_id = rw->next_node_id++;
	cs->scan.plan.lefttree = child;
	cs->scan.plan.extParam = bms_copy(costs_of->extParam);
	cs->scan.plan.allParam = bms_copy(costs_of->allParam);
	cs->scan.scanrelid = 0;
	cs->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	cs->custom_scan_tlist = scan_tlist;
	cs->custom_exprs = exprs;
	cs->custom_private = list_make4(makeInteger(n_leaves), makeInteger(bound), calls, NIL);
	cs->methods = &gs_batch_scan_methods;
	rw->changed = true;
	return cs;
}

/* A Build for the node's calls. */
static void
build_init(Build *b, Rewrite *rw, Plan *scan, bool atomic_aggs)
{
	memset(b, 0, sizeof(*b));
	b->scan = scan;
	b->stmt = rw->stmt;
	b->atomic_aggs = atomic_aggs;
	b->result_fn = result_fn_oid;
}

/*
 * A GpuScore node over child for b's calls, returning child's columns as
 * they are, then the scores: for a parent that reads the scores from its
 * input (an Agg's aggregates, MERGE's actions).
 */
static CustomScan *
make_passthrough_node(Build *b, Rewrite *rw, Plan *child, bool parallel, List *kept)
{
	CustomScan *cs;
	ListCell   *lc;
	List	   *tlist = NIL;

	/* the child's output columns come first, unchanged */
	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		b->leaves = lappend(b->leaves, makeVar(OUTER_VAR, tle->resno, exprType((Node *) tle->expr),
											   exprTypmod((Node *) tle->expr),
											   exprCollation((Node *) tle->expr), 0));
	}
	cs = make_node(b, rw, child, child, 0, parallel);
	foreach(lc, cs->custom_scan_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		TargetEntry *out = make_tle((Expr *) makeVar(INDEX_VAR, tle->resno,
													 exprType((Node *) tle->expr),
													 exprTypmod((Node *) tle->expr),
													 exprCollation((Node *) tle->expr), 0),
									tle->resno);

		/* the child's names and junk marks: ModifyTable finds "ctid" so */
		if (tle->resno <= list_length(child->targetlist))
		{
			TargetEntry *orig = list_nth_node(TargetEntry, child->targetlist, tle->resno - 1);

			out->resname = orig->resname;
			out->resjunk = orig->resjunk;
			out->ressortgroupref = orig->ressortgroupref;
			out->resorigtbl = orig->resorigtbl;
			out->resorigcol = orig->resorigcol;
		}
		else
			out->resjunk = true;
		tlist = lappend(tlist, out);
	}
	cs->scan.plan.targetlist = tlist;
	lfourth(cs->custom_private) = kept;
	return cs;
}

/*
 * The columns of its input (1..n) that an Agg or WindowAgg reads once its
 * calls read the scores: its expressions' Vars and its grouping,
 * partitioning and ordering columns; all of them for grouping sets.
 */
static List *
agg_input_columns(Plan *agg, int n)
{
	Bitmapset  *used = NULL;

	used = used_columns((Node *) agg->targetlist, OUTER_VAR, n, used);
	used = used_columns((Node *) agg->qual, OUTER_VAR, n, used);
	if (IsA(agg, Agg))
	{
		Agg		   *a = (Agg *) agg;

		if (a->groupingSets != NIL || a->chain != NIL)
			return column_list(NULL, n, true);
		for (int i = 0; i < a->numCols; i++)
			used = bms_add_member(used, a->grpColIdx[i]);
	}
	else
	{
		WindowAgg  *w = (WindowAgg *) agg;

		used = used_columns((Node *) w->runCondition, OUTER_VAR, n, used);
		used = used_columns(w->startOffset, OUTER_VAR, n, used);
		used = used_columns(w->endOffset, OUTER_VAR, n, used);
		for (int i = 0; i < w->partNumCols; i++)
			used = bms_add_member(used, w->partColIdx[i]);
		for (int i = 0; i < w->ordNumCols; i++)
			used = bms_add_member(used, w->ordColIdx[i]);
	}
	return column_list(used, n, false);
}

/*
 * GpuScore under an Agg or a WindowAgg, for the calls in the arguments
 * and FILTER clauses of its aggregates or window functions; agg then reads
 * their scores from its input.  (A window function reads the arguments of
 * some rows of its frame only: conditional, so safe features only.)
 */
static void
batch_under_agg(Plan *agg, Rewrite *rw, bool parallel)
{
	Plan	   *child = outerPlan(agg);
	Build		b;
	Collect		cx;
	CustomScan *cs;

	/* a final Agg combines partial states: its arguments are not evaluated */
	if (child == NULL || child->plan_rows <= 1 ||
		(IsA(agg, Agg) && DO_AGGSPLIT_COMBINE(((Agg *) agg)->aggsplit)))
		return;
	build_init(&b, rw, NULL, false);
	cx.b = &b;
	cx.conditional = false;
	collect_agg_walker((Node *) agg->targetlist, &cx);
	collect_agg_walker((Node *) agg->qual, &cx);
	if (b.calls == NIL)
		return;
	cs = make_passthrough_node(&b, rw, child, parallel, NIL);
	agg->targetlist = (List *) agg_mutator((Node *) agg->targetlist, &b);
	agg->qual = (List *) agg_mutator((Node *) agg->qual, &b);
	if (IsA(agg, WindowAgg))
		((WindowAgg *) agg)->runCondition =
			(List *) agg_mutator((Node *) ((WindowAgg *) agg)->runCondition, &b);
	outerPlan(agg) = (Plan *) cs;
	lfourth(cs->custom_private) = agg_input_columns(agg, list_length(child->targetlist));
}

/* In MERGE's actions: calls as the source rows' score columns. */
static Node *
merge_mutator(Node *node, Build *b)
{
	Call	   *c;

	if (node == NULL)
		return NULL;
	if ((c = find_call(b, node)) != NULL)
		return result_expr(b, c, INNER_VAR);
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return node;
	return expression_tree_mutator(node, merge_mutator, b);
}

/*
 * GpuScore under MERGE, for the calls in its WHEN clauses and actions that
 * read only the source rows (its subplan's output, INNER_VAR there): each
 * is evaluated for some rows only, so their features must be safe.
 */
static void
batch_under_merge(ModifyTable *mt, Rewrite *rw, bool parallel)
{
	Plan	   *child = outerPlan(mt);
	Build		b;
	Collect		cx;
	ListCell   *l1,
			   *l2;

	if (mt->operation != CMD_MERGE || child == NULL || child->plan_rows <= 1)
		return;
	build_init(&b, rw, NULL, false);
	b.input_varno = INNER_VAR;
	cx.b = &b;
	cx.conditional = true;
	foreach(l1, mt->mergeActionLists)
		foreach(l2, (List *) lfirst(l1))
		{
			MergeAction *action = lfirst_node(MergeAction, l2);

			collect_walker((Node *) action->targetList, &cx);
			collect_walker(action->qual, &cx);
		}
	if (b.calls == NIL)
		return;
	/* ModifyTable reads its junk columns and more by position: keep all */
	outerPlan(mt) = (Plan *) make_passthrough_node(&b, rw, child, parallel,
												   column_list(NULL, list_length(child->targetlist), true));
	foreach(l1, mt->mergeActionLists)
		foreach(l2, (List *) lfirst(l1))
		{
			MergeAction *action = lfirst_node(MergeAction, l2);

			action->targetList = (List *) merge_mutator((Node *) action->targetList, &b);
			action->qual = merge_mutator(action->qual, &b);
		}
}

/* Can a GpuScore node take over node's target list and filter? */
static bool
can_batch_above(Plan *node)
{
	switch (nodeTag(node))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_TableFuncScan:
		case T_ValuesScan:
		case T_CteScan:
		case T_NamedTuplestoreScan:
		case T_WorkTableScan:
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
		case T_Agg:
		case T_WindowAgg:
		case T_Gather:
			return true;
		case T_Result:
			/* one row (and PL/pgSQL's simple expressions): nothing to batch */
			return outerPlan(node) != NULL;
		default:
			return false;
	}
}

/* Is node a scan of one range table entry (whole-row Vars of it)? */
static bool
is_scan(Plan *node)
{
	switch (nodeTag(node))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			return true;
		default:
			return false;
	}
}

/*
 * A GpuScore node over node for the calls in its target list and in its
 * filter from the first clause with a call on; node keeps the rest and
 * outputs what those expressions need.  Returns what takes node's place.
 */
static Plan *
batch_above(Plan *node, Rewrite *rw, int bound, bool parallel)
{
	Build		b;
	Collect		cx;
	List	   *kept = NIL;
	List	   *moved = NIL;
	List	   *tlist = NIL;
	CustomScan *cs;
	ListCell   *lc;
	int			resno = 1;

	if (!can_batch_above(node) || node->plan_rows <= 1)
		return node;
	build_init(&b, rw, is_scan(node) ? node : NULL, IsA(node, Agg) || IsA(node, WindowAgg));
	cx.b = &b;
	cx.conditional = false;
	/* the filter clauses before the first with a call stay below */
	foreach(lc, node->qual)
	{
		Node	   *qual = lfirst(lc);

		if (moved == NIL)
		{
			collect_walker(qual, &cx);
			if (b.calls == NIL)
			{
				kept = lappend(kept, qual);
				continue;
			}
		}
		else
			collect_in(qual, &cx, true);
		moved = lappend(moved, qual);
	}
	/* the target list is evaluated only for rows the moved filter passes */
	collect_in((Node *) node->targetlist, &cx, moved != NIL);
	if (b.calls == NIL)
		return node;

	gather_leaves_walker((Node *) node->targetlist, &b);
	gather_leaves_walker((Node *) moved, &b);
	cs = make_node(&b, rw, node, node, moved == NIL ? bound : 0, parallel);
	cs->scan.plan.targetlist = (List *) to_scan_mutator((Node *) node->targetlist, &b);
	cs->scan.plan.qual = (List *) to_scan_mutator((Node *) moved, &b);
	if (list_length(b.leaves) != intVal(linitial(cs->custom_private)))
		elog(ERROR, "pg_gpuscore: a batched node's expression reads a value its input lacks");
	{
		int			n = list_length(b.leaves);
		Bitmapset  *used = used_columns((Node *) cs->scan.plan.targetlist, INDEX_VAR, n, NULL);

		used = used_columns((Node *) cs->scan.plan.qual, INDEX_VAR, n, used);
		lfourth(cs->custom_private) = column_list(used, n, false);
	}
	/* node now computes the leaves */
	foreach(lc, b.leaves)
		tlist = lappend(tlist, make_tle((Expr *) lfirst(lc), resno++));
	node->targetlist = tlist;
	node->qual = kept;
	return (Plan *) cs;
}

/* The rows a Limit needs of its input, or 0 when not known at plan time. */
static int
limit_bound(Limit *limit)
{
	Const	   *count = (Const *) limit->limitCount;
	Const	   *offset = (Const *) limit->limitOffset;
	int64		n;

	if (limit->limitOption != LIMIT_OPTION_COUNT || count == NULL || !IsA(count, Const) ||
		count->constisnull || (offset != NULL && (!IsA(offset, Const))))
		return 0;
	n = DatumGetInt64(count->constvalue);
	if (offset != NULL && !offset->constisnull)
		n += Max(DatumGetInt64(offset->constvalue), 0);
	return n > 0 && n < INT_MAX ? (int) n : 0;
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
			child_bound = limit_bound((Limit *) plan);
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
			batch_under_agg(plan, rw, parallel);
			break;
		case T_ModifyTable:
			batch_under_merge((ModifyTable *) plan, rw, parallel);
			break;
		default:
			break;
	}
	if (mark_inner)
		return plan;
	return batch_above(plan, rw, bound, parallel);
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

	if (result_fn_for == support_oid && OidIsValid(result_fn_oid) &&
		OidIsValid(get_func_namespace(result_fn_oid)))
		return result_fn_oid;
	result_fn_oid = InvalidOid;
	result_fn_for = support_oid;
	nsp = get_func_namespace(support_oid);
	if (OidIsValid(nsp))
		result_fn_oid = LookupFuncName(list_make2(makeString(get_namespace_name(nsp)),
												  makeString("gpu_batch_result")),
									   2, argtypes, true);
	return result_fn_oid;
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

	if (stmt->commandType == CMD_UTILITY || !OidIsValid(support_oid) ||
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

/*
 * batch_node.c
 *	  Building GpuScore nodes (batch_plan.h) into a finished plan: over a
 *	  node that evaluates calls in its target list or filter, under an Agg
 *	  or WindowAgg whose aggregates' arguments hold calls, and under a MERGE
 *	  whose actions do (see batch_plan.c for which calls qualify).
 *
 * The nodes and the expressions rewritten for them are allocated in the
 * planner's memory context and belong to the PlannedStmt.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"

#include "batch_build.h"
#include "batch_plan.h"

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
	if ((c = gs_batch_find_call(b, node)) != NULL)
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

/*
 * An expression of a call as GpuScore's input reads it: its leaves as the
 * child's output columns.  Under MERGE the calls read the source rows as
 * INNER_VAR, which are GpuScore's child's output (OUTER_VAR) there; above
 * any other node (a join's INNER_VAR is its inner side, a leaf of its own)
 * the Vars are the leaves as they are.
 */
static Node *
call_input(Node *node, Build *b)
{
	if (b->input_varno == INNER_VAR)
		node = gs_batch_inner_to_outer_mutator(node, NULL);
	return to_outer_mutator(node, b);
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
	if ((c = gs_batch_find_call(b, node)) != NULL)
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
	if ((c = gs_batch_find_call(b, node)) != NULL)
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
							 make_tle((Expr *) call_input(shown, b),
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
		exprs = lappend(exprs, call_input(linitial(c->expr->args), b));
		exprs = list_concat(exprs, (List *) call_input((Node *) inputs, b));
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
	b->result_fn = gs_batch_result_fn_oid;
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
void
gs_batch_under_agg(Plan *agg, Rewrite *rw, bool parallel)
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
	gs_batch_collect_agg_walker((Node *) agg->targetlist, &cx);
	gs_batch_collect_agg_walker((Node *) agg->qual, &cx);
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
	if ((c = gs_batch_find_call(b, node)) != NULL)
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
void
gs_batch_under_merge(ModifyTable *mt, Rewrite *rw, bool parallel)
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

			gs_batch_collect_walker((Node *) action->targetList, &cx);
			gs_batch_collect_walker(action->qual, &cx);
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
Plan *
gs_batch_above(Plan *node, Rewrite *rw, int bound, bool parallel)
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
			gs_batch_collect_walker(qual, &cx);
			if (b.calls == NIL)
			{
				kept = lappend(kept, qual);
				continue;
			}
		}
		else
			gs_batch_collect_in(qual, &cx, true);
		moved = lappend(moved, qual);
	}
	/* the target list is evaluated only for rows the moved filter passes */
	gs_batch_collect_in((Node *) node->targetlist, &cx, moved != NIL);
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
int
gs_batch_limit_bound(Limit *limit)
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

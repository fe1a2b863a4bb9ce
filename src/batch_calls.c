/*
 * batch_calls.c
 *	  Recognising the gpu_score and gpu_predict calls a GpuScore node can
 *	  batch (batch_plan.c says which qualify), and collecting them from the
 *	  expressions of a plan node into the node being built (batch_node.c).
 *
 * A call is recognised by its planner support function (gpu_score_support,
 * whose Oid batch_plan.c notes).  What is collected is allocated in the
 * planner's memory context.
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "batch_build.h"
#include "batch_plan.h"

/* Is node a call of gpu_score or gpu_predict (any form)? */
static bool
is_score_call(Node *node)
{
	return node != NULL && IsA(node, FuncExpr) && OidIsValid(gs_batch_support_oid) &&
		get_func_support(((FuncExpr *) node)->funcid) == gs_batch_support_oid;
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

/* The Call of b scoring an expression equal to node, or NULL. */
Call *
gs_batch_find_call(Build *b, Node *node)
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
Node *
gs_batch_inner_to_outer_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == INNER_VAR)
	{
		Var		   *v = (Var *) copyObject(node);

		v->varno = OUTER_VAR;
		return (Node *) v;
	}
	return expression_tree_mutator(node, gs_batch_inner_to_outer_mutator, context);
}

/* Add call to b, once for equal calls. */
static void
add_call(Build *b, FuncExpr *call)
{
	Call	   *c;

	if (b->input_varno != 0 && other_var_walker((Node *) call->args, &b->input_varno))
		return;
	if (gs_batch_find_call(b, (Node *) call) != NULL)
		return;
	c = palloc0(sizeof(Call));
	c->expr = call;
	c->form = feature_form(b, c);
	b->calls = lappend(b->calls, c);
}

/* Walk node with conditional as given. */
void
gs_batch_collect_in(Node *node, Collect *cx, bool conditional)
{
	bool		saved = cx->conditional;

	cx->conditional = saved || conditional;
	gs_batch_collect_walker(node, cx);
	cx->conditional = saved;
}

/*
 * Find the batchable calls of an expression.  Tracks where evaluation is
 * conditional: CASE past its first test, COALESCE past its first argument,
 * AND and OR past their first argument, row comparisons past their first
 * pair.  Aggregates are values of the input where b->atomic_aggs, else the
 * caller walks their arguments (collect_agg_calls).
 */
bool
gs_batch_collect_walker(Node *node, Collect *cx)
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

				gs_batch_collect_in((Node *) ce->arg, cx, false);
				foreach(lc, ce->args)
				{
					CaseWhen   *w = lfirst_node(CaseWhen, lc);

					gs_batch_collect_in((Node *) w->expr, cx, !first);
					gs_batch_collect_in((Node *) w->result, cx, true);
					first = false;
				}
				gs_batch_collect_in((Node *) ce->defresult, cx, true);
				return false;
			}
		case T_CoalesceExpr:
			foreach(lc, ((CoalesceExpr *) node)->args)
				gs_batch_collect_in(lfirst(lc), cx, lc != list_head(((CoalesceExpr *) node)->args));
			return false;
		case T_BoolExpr:
			foreach(lc, ((BoolExpr *) node)->args)
				gs_batch_collect_in(lfirst(lc), cx, lc != list_head(((BoolExpr *) node)->args));
			return false;
		case T_RowCompareExpr:
			{
				RowCompareExpr *rc = (RowCompareExpr *) node;
				ListCell   *l,
						   *r;

				forboth(l, rc->largs, r, rc->rargs)
				{
					gs_batch_collect_in(lfirst(l), cx, l != list_head(rc->largs));
					gs_batch_collect_in(lfirst(r), cx, l != list_head(rc->largs));
				}
				return false;
			}
		default:
			break;
	}
	return expression_tree_walker(node, gs_batch_collect_walker, cx);
}

/*
 * Find the calls in the arguments and FILTER clauses of the aggregates of
 * an Agg's expression: evaluated for every input row, its arguments only
 * for the rows its FILTER lets through.  Direct arguments of ordered-set
 * aggregates are evaluated per group: left alone.
 */
bool
gs_batch_collect_agg_walker(Node *node, Collect *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;

		gs_batch_collect_in((Node *) agg->args, cx, agg->aggfilter != NULL);
		gs_batch_collect_in((Node *) agg->aggfilter, cx, false);
		return false;
	}
	if (IsA(node, WindowFunc))
	{
		/* a window function reads the rows of its frame: some of them */
		gs_batch_collect_in((Node *) ((WindowFunc *) node)->args, cx, true);
		gs_batch_collect_in((Node *) ((WindowFunc *) node)->aggfilter, cx, true);
		return false;
	}
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return false;
	return expression_tree_walker(node, gs_batch_collect_agg_walker, cx);
}

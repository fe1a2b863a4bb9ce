/*
 * batch_build.h
 *	  What the files that plan batched calls share: batch_plan.c (the hooks
 *	  and the walk over a finished plan), batch_calls.c (recognising and
 *	  collecting calls) and batch_node.c (building GpuScore nodes).
 *
 * Everything here is allocated in the planner's memory context
 * (CurrentMemoryContext while a plan is rewritten) and goes with it.
 */
#ifndef GS_BATCH_BUILD_H
#define GS_BATCH_BUILD_H

#include "nodes/plannodes.h"
#include "nodes/primnodes.h"

#include "batch_plan.h"

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

/* Where collect_calls is in an expression. */
typedef struct Collect
{
	Build	   *b;
	bool		conditional;	/* evaluated for some rows only */
} Collect;

/* gpu_score_support's Oid as last called (batch_plan.c). */
extern Oid	gs_batch_support_oid;

/* gpu_batch_result's Oid for it (batch_plan.c). */
extern Oid	gs_batch_result_fn_oid;

/* ---- batch_calls.c ---- */

/* The Call of b scoring an expression equal to node, or NULL. */
extern Call *gs_batch_find_call(Build *b, Node *node);

/* INNER_VAR Vars as OUTER_VAR ones (MERGE's source row as GpuScore's input). */
extern Node *gs_batch_inner_to_outer_mutator(Node *node, void *context);

/* Walk node with conditional as given. */
extern void gs_batch_collect_in(Node *node, Collect *cx, bool conditional);

/*
 * Find the batchable calls of an expression.  Tracks where evaluation is
 * conditional: CASE past its first test, COALESCE past its first argument,
 * AND and OR past their first argument, row comparisons past their first
 * pair.  Aggregates are values of the input where b->atomic_aggs, else the
 * caller walks their arguments (gs_batch_collect_agg_walker).
 */
extern bool gs_batch_collect_walker(Node *node, Collect *cx);

/*
 * Find the calls in the arguments and FILTER clauses of the aggregates of
 * an Agg's expression: evaluated for every input row, its arguments only
 * for the rows its FILTER lets through.  Direct arguments of ordered-set
 * aggregates are evaluated per group: left alone.
 */
extern bool gs_batch_collect_agg_walker(Node *node, Collect *cx);

/* ---- batch_node.c ---- */

/*
 * A GpuScore node over node for the calls in its target list and in its
 * filter from the first clause with a call on; node keeps the rest and
 * outputs what those expressions need.  Returns what takes node's place.
 */
extern Plan *gs_batch_above(Plan *node, Rewrite *rw, int bound, bool parallel);

/*
 * GpuScore under an Agg or a WindowAgg, for the calls in the arguments
 * and FILTER clauses of its aggregates or window functions; agg then reads
 * their scores from its input.
 */
extern void gs_batch_under_agg(Plan *agg, Rewrite *rw, bool parallel);

/*
 * GpuScore under MERGE, for the calls in its WHEN clauses and actions that
 * read only the source rows (its subplan's output, INNER_VAR there).
 */
extern void gs_batch_under_merge(ModifyTable *mt, Rewrite *rw, bool parallel);

/* The rows a Limit needs of its input, or 0 when not known at plan time. */
extern int	gs_batch_limit_bound(Limit *limit);

#endif							/* GS_BATCH_BUILD_H */

/*
 * batch_plan.h
 *	  What the planner side of batched gpu_score calls (batch_plan.c) and
 *	  the GpuScore custom scan node that runs them (batch_exec.c) share: the
 *	  layout of the node's private lists.
 *
 * A GpuScore node sits over one child plan.  Its scan tuple is the child's
 * output columns followed, for each call it scores, by the call's score
 * and error columns (scan attributes score_attno and score_attno + 1).
 * custom_exprs holds each call's model expression and its feature
 * expressions, in the child's output space (OUTER_VAR Vars).
 * custom_private is a list:
 *
 *   [0] Integer: columns of the child's output (the first scan columns)
 *   [1] Integer: tuple bound from a LIMIT above (0: none)
 *   [2] List of calls, each a List (below)
 *   [3] List of Integer: the child's columns that the node's own target list
 *       and filter, or its parent, read (1-based); the others are NULL in
 *       the scan tuple, so a batch keeps only these of its rows
 *
 * A call:
 *       [0] Integer: the function's Oid (its EXECUTE privilege is checked)
 *       [1] Integer: GS_CALL_SCORE or GS_CALL_PREDICT
 *       [2] Integer: a GsFeatureForm
 *       [3] Integer: element type of the feature array (FORM_ELEMENTS)
 *       [4] Integer: number of feature expressions after the model's
 *       [5] Integer: score_attno (1-based scan attribute)
 *       [6] List of String: column names (FORM_COLUMNS), else NIL
 */
#ifndef GS_BATCH_PLAN_H
#define GS_BATCH_PLAN_H

#include "nodes/extensible.h"

#define GS_BATCH_NODE_NAME "GpuScore"

typedef enum GsCallKind
{
	GS_CALL_SCORE,				/* gpu_score: one real */
	GS_CALL_PREDICT				/* gpu_predict: real[] of every output */
} GsCallKind;

/* How a call's features are read from each row. */
typedef enum GsFeatureForm
{
	GS_FORM_ELEMENTS,			/* ARRAY[e1, ..., en]: each element, no array */
	GS_FORM_ARRAY,				/* one expression giving the array */
	GS_FORM_COLUMNS,			/* a table's row, as its columns by name */
	GS_FORM_ROW					/* one expression giving a row (record) */
} GsFeatureForm;

extern CustomScanMethods gs_batch_scan_methods;

/* Install the planner and executor hooks (from _PG_init). */
extern void gs_batch_plan_init(void);

/* The executor's node methods (batch_exec.c). */
extern Node *gs_batch_create_state(CustomScan *cscan);

#endif							/* GS_BATCH_PLAN_H */

/*
 * batch_exec.h
 *	  The state of the GpuScore custom scan node (batch_plan.h), shared by
 *	  the files that run it: batch_exec.c (setting up, returning rows),
 *	  and the others named below.
 *
 * All of it lives in the node's memory context ("pg_gpuscore batch calls");
 * each Batch has a context of its own for its rows and errors.
 */
#ifndef GS_BATCH_EXEC_H
#define GS_BATCH_EXEC_H

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/tuplestore.h"

#include "batch_plan.h"
#include "gpuscore.h"

/* Rows staged row-major before going column-major (see score_query.c). */
#define STAGE_ROWS 64

/* The ramp of batch sizes: the first, and the factor from 64 rows on. */
#define RAMP_FIRST 1
#define RAMP_SECOND 64
#define RAMP_FACTOR 16

/* How a row stands for one call. */
typedef enum RowState
{
	ROW_SCORED,					/* its score is in the scorer's output */
	ROW_NULL,					/* NULL features: NULL */
	ROW_ERROR					/* the call raises an error for it */
} RowState;

/* One call the node scores. */
typedef struct CallState
{
	/* from the plan */
	Oid			funcid;
	GsCallKind	kind;
	GsFeatureForm form;
	Oid			elemtype;		/* GS_FORM_ELEMENTS */
	int			n_inputs;
	int			score_col;		/* 0-based scan column of the score; error next */
	List	   *names;			/* GS_FORM_COLUMNS: the columns' names */
	ExprState  *model_expr;
	ExprState **inputs;			/* [n_inputs]; NULL where read directly */
	AttrNumber *input_col;		/* [n_inputs]: child column (1-based) or 0 */

	/* found at the first row */
	bool		name_null;		/* every row fails, NULL features too */
	bool		model_bad;		/* rows with features fail with model_err */
	Datum		model_err;		/* text of that error */
	GsModelRef *m;
	GsBatchScorer *scorer;		/* NULL when the model could not be had */
	int			nf;
	int			nout;
	Datum		count_err;		/* every row with features: wrong length */
	Datum		outputs_err;	/* every row scored: gpu_score of several outputs */
	GsRowMap	map;			/* GS_FORM_COLUMNS, GS_FORM_ROW */
	Oid			map_type;		/* GS_FORM_ROW: the row type map is for */
	int32		map_typmod;
	Datum	   *row_values;		/* GS_FORM_COLUMNS, GS_FORM_ROW: a row deformed */
	bool	   *row_nulls;
	int			row_natts;

	/* the batch being built */
	float	   *x;				/* scorer input, ld = the batch's target */
	float	   *stage;			/* [STAGE_ROWS * nf] */
	int			staged;
	bool		direct_float4;	/* ARRAY[] of real columns: read in one loop */

	/* per batch slot */
	uint8	   *state[GS_SCORER_SLOTS];
	Datum	   *err[GS_SCORER_SLOTS];
	const float *out;			/* the emitted batch's outputs */
} CallState;

/* The rows of one batch: the kept columns of each, row-major. */
typedef struct Batch
{
	MemoryContext cxt;			/* copies of by-reference values, errors */
	Datum	   *values;			/* [target * n_kept] */
	bool	   *nulls;
	size_t		n;
	size_t		target;			/* rows it was to have (the scorer's ld) */
	Size		bytes;
} Batch;

/* What workers report to the leader, per worker and call. */
typedef struct BatchShared
{
	int			n_workers;
	int			n_calls;
	GsScorerStats stats[FLEXIBLE_ARRAY_MEMBER];
} BatchShared;

typedef struct BatchState
{
	CustomScanState css;		/* must be first */
	int			n_child_cols;
	int			n_kept;			/* child columns read above the node */
	AttrNumber *kept;			/* [n_kept], 1-based */
	bool	   *kept_byval;
	int16	   *kept_len;
	AttrNumber	max_attno;		/* the child columns to deform */
	int			bound;
	int			n_calls;
	CallState  *calls;
	MemoryContext node_cxt;
	ExprContext *fill_econtext; /* features of the row being batched */
	Batch		batch[GS_SCORER_SLOTS];
	int			fill_slot;		/* where the next batch goes */
	int			queue[GS_SCORER_SLOTS];	/* submitted, not yet returned: oldest first */
	int			n_queued;
	int			emit_slot;		/* batch being returned, or -1 */
	size_t		emit_pos;
	bool		child_done;
	bool		resolved;		/* models looked up (at the first row) */
	size_t		max_rows;
	size_t		next_target;
	int64		n_batches;
	size_t		largest;
	/* backward scans */
	Tuplestorestate *store;
	TupleTableSlot *store_slot;
	bool		store_eof;
	/* parallel */
	BatchShared *shared;
	GsScorerStats *worker_seen; /* [n_workers * n_calls]: latest reports */
	GsScorerStats *worker_done; /* [n_calls]: of earlier rounds of workers */
	int			n_workers_seen;
} BatchState;

/* ---- batch_fill.c ---- */

/*
 * Build the next batch from the child's rows and submit it to every call's
 * scorer; false when the child had no row left.
 */
extern bool gs_batch_fill(BatchState *st);

/* Is a batch of some call still running on the GPU? */
extern bool gs_batch_any_in_flight(BatchState *st);

/* Take the oldest submitted batch's scores: its rows are returned next. */
extern void gs_batch_take(BatchState *st);

/* ---- batch_parallel.c ---- */

/* d += s. */
extern void gs_batch_stats_add(GsScorerStats *d, const GsScorerStats *s);

/*
 * Keep what the last workers reported, in the leader's memory; round_done:
 * those workers have finished.
 */
extern void gs_batch_collect_workers(BatchState *st, bool round_done);

/* In a worker: copy each call's statistics to its place in shared memory. */
extern void gs_batch_report_worker_stats(BatchState *st);

/* The node's parallel methods (CustomExecMethods). */
extern Size gs_batch_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
extern void gs_batch_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gs_batch_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gs_batch_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void gs_batch_shutdown(CustomScanState *node);

/* ---- batch_explain.c ---- */

/* ExplainCustomScan: the models, the device policy, the batches. */
extern void gs_batch_explain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif							/* GS_BATCH_EXEC_H */

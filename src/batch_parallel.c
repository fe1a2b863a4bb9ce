/*
 * batch_parallel.c
 *	  The GpuScore node (batch_exec.c) under Gather: its shared memory,
 *	  where each worker reports its scoring statistics per call so that the
 *	  leader's EXPLAIN ANALYZE counts every row scored.
 *
 * The shared memory (a BatchShared) belongs to the parallel context and goes
 * with it; what the leader keeps of it (worker_seen, worker_done) lives in
 * the node's memory context.
 */
#include "postgres.h"

#include "access/parallel.h"

#include "batch_exec.h"

/* d += s. */
void
gs_batch_stats_add(GsScorerStats *d, const GsScorerStats *s)
{
	for (int e = 0; e < 2; e++)
	{
		d->batches[e] += s->batches[e];
		d->rows[e] += s->rows[e];
	}
	d->cpu_ms += s->cpu_ms;
	d->gpu_wait_ms += s->gpu_wait_ms;
	d->copy_in_ms += s->copy_in_ms;
	d->kernel_ms += s->kernel_ms;
	d->copy_out_ms += s->copy_out_ms;
}

/* EstimateDSMCustomScan: a place per worker and call. */
Size
gs_batch_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	BatchState *st = (BatchState *) node;

	return offsetof(BatchShared, stats) +
		sizeof(GsScorerStats) * (Size) pcxt->nworkers * st->n_calls;
}

/* InitializeDSMCustomScan: the places zeroed, the leader pointed at them. */
void
gs_batch_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	BatchState *st = (BatchState *) node;
	BatchShared *sh = (BatchShared *) coordinate;

	memset(sh, 0, gs_batch_estimate_dsm(node, pcxt));
	sh->n_workers = pcxt->nworkers;
	sh->n_calls = st->n_calls;
	st->shared = sh;
}

/* Keep what the last workers reported, in the leader's memory. */
void
gs_batch_collect_workers(BatchState *st, bool round_done)
{
	BatchShared *sh = st->shared;
	int			n;

	if (sh == NULL || IsParallelWorker())
		return;
	n = sh->n_workers * sh->n_calls;
	if (st->worker_done == NULL)
		st->worker_done = MemoryContextAllocZero(st->node_cxt, sizeof(GsScorerStats) * st->n_calls);
	if (st->worker_seen == NULL || st->n_workers_seen < sh->n_workers)
	{
		st->worker_seen = MemoryContextAllocZero(st->node_cxt, sizeof(GsScorerStats) * Max(n, 1));
		st->n_workers_seen = sh->n_workers;
	}
	memcpy(st->worker_seen, sh->stats, sizeof(GsScorerStats) * n);
	if (!round_done)
		return;
	/* a new round of workers starts from zero */
	for (int w = 0; w < sh->n_workers; w++)
		for (int i = 0; i < st->n_calls; i++)
			gs_batch_stats_add(&st->worker_done[i], &st->worker_seen[w * st->n_calls + i]);
	memset(st->worker_seen, 0, sizeof(GsScorerStats) * Max(n, 1));
	memset(sh->stats, 0, sizeof(GsScorerStats) * n);
}

/* ReInitializeDSMCustomScan: a rescan; the last workers' reports are kept. */
void
gs_batch_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	BatchState *st = (BatchState *) node;

	gs_batch_collect_workers(st, true);
}

/* InitializeWorkerCustomScan: the worker pointed at the places. */
void
gs_batch_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	((BatchState *) node)->shared = (BatchShared *) coordinate;
}

/* ShutdownCustomScan: the workers are done; their shared memory goes next. */
void
gs_batch_shutdown(CustomScanState *node)
{
	BatchState *st = (BatchState *) node;

	if (IsParallelWorker())
		gs_batch_report_worker_stats(st);
	else
		gs_batch_collect_workers(st, false);
	st->shared = NULL;
}

/* Copy each call's statistics to this worker's place in shared memory. */
void
gs_batch_report_worker_stats(BatchState *st)
{
	if (st->shared == NULL || !IsParallelWorker() || ParallelWorkerNumber < 0 ||
		ParallelWorkerNumber >= st->shared->n_workers)
		return;
	for (int i = 0; i < st->n_calls; i++)
		if (st->calls[i].scorer)
			st->shared->stats[ParallelWorkerNumber * st->n_calls + i] =
				*gs_scorer_stats(st->calls[i].scorer);
}

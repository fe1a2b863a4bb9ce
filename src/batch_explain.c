/*
 * batch_explain.c
 *	  EXPLAIN of the GpuScore custom scan node (batch_exec.c): the models it
 *	  scores, the device policy, its batches and, with ANALYZE, where its
 *	  rows were scored (the workers' too, from shared memory).
 *
 * Everything is allocated in the caller's (EXPLAIN's) memory context.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "utils/builtins.h"
#include "utils/ruleutils.h"

#include "batch_exec.h"
#include "provider.h"

/* The name of the device policy. */
static const char *
device_policy(void)
{
	switch (gs_device_mode)
	{
		case GS_DEVICE_CPU:
			return "cpu";
		case GS_DEVICE_GPU:
			return "gpu";
		default:
			return psprintf("auto (GPU for batches of %d rows or more)", gs_gpu_min_rows);
	}
}

/* "fraud (version 3)" for call c, as it is now or as the run used it. */
static char *
model_label(BatchState *st, CallState *c, CustomScan *cs, int first_expr)
{
	Node	   *model = list_nth(cs->custom_exprs, first_expr);
	char	   *name;
	int64		model_id;
	int32		version;

	if (c->m != NULL)
		return psprintf("%s (version %d)", c->m->name, c->m->version);
	if (!IsA(model, Const))
		return psprintf("%s", deparse_expression(model, NIL, false, false));
	if (((Const *) model)->constisnull)
		return pstrdup("NULL");
	name = TextDatumGetCString(((Const *) model)->constvalue);
	if (strlen(name) > 0 && strlen(name) < NAMEDATALEN && OidIsValid(gs_catalog_relid()) &&
		gs_catalog_identity(name, &model_id, &version))
		return psprintf("%s (version %d)", name, version);
	return psprintf("%s (not loaded)", name);
}

/* ExplainCustomScan: the models, the device policy, the batches. */
void
gs_batch_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BatchState *st = (BatchState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *models = NIL;
	GsScorerStats total;
	int			first_expr = 0;

	for (int i = 0; i < st->n_calls; i++)
	{
		CallState  *c = &st->calls[i];

		models = lappend(models, model_label(st, c, cs, first_expr));
		first_expr += 1 + c->n_inputs;
	}
	ExplainPropertyList("Models", models, es);
	ExplainPropertyText("Device", device_policy(), es);
	ExplainPropertyInteger("Batch Size", "rows", (int64) st->max_rows, es);
	if (st->bound > 0)
		ExplainPropertyInteger("First Batch", "rows", st->bound, es);
	if (!es->analyze)
		return;

	gs_batch_collect_workers(st, false);
	memset(&total, 0, sizeof(total));
	for (int i = 0; i < st->n_calls; i++)
	{
		if (st->calls[i].scorer)
			gs_batch_stats_add(&total, gs_scorer_stats(st->calls[i].scorer));
		if (st->worker_done)
			gs_batch_stats_add(&total, &st->worker_done[i]);
		for (int w = 0; st->worker_seen && w < st->n_workers_seen; w++)
			gs_batch_stats_add(&total, &st->worker_seen[w * st->n_calls + i]);
	}
	ExplainPropertyInteger("Rows Scored on GPU", NULL, total.rows[1], es);
	ExplainPropertyInteger("Rows Scored on CPU", NULL, total.rows[0], es);
	ExplainPropertyInteger("Batches on GPU", NULL, total.batches[1], es);
	ExplainPropertyInteger("Batches on CPU", NULL, total.batches[0], es);
	/* whose GPU: the GPU service's, or this session's own provider */
	if (total.batches[1] > 0)
		ExplainPropertyText("GPU Provider", gs_provider.service ? "service" : "session", es);
	if (es->timing)
	{
		ExplainPropertyFloat("CPU Scoring Time", "ms", total.cpu_ms, 3, es);
		if (total.batches[1] > 0)
		{
			ExplainPropertyFloat("GPU Wait Time", "ms", total.gpu_wait_ms, 3, es);
			ExplainPropertyFloat("GPU Transfer Time", "ms", total.copy_in_ms + total.copy_out_ms, 3, es);
			ExplainPropertyFloat("GPU Kernel Time", "ms", total.kernel_ms, 3, es);
		}
	}
}

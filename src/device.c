/*
 * device.c
 *	  The batch scorer: the one place that decides, batch by batch, whether
 *	  rows are scored on the CPU or the GPU (pg_gpuscore.device), and that
 *	  drives the GPU provider's two-slot pipeline.
 *
 * Callers (gpu_score_query, and later the aggregate and triggers) ask for
 * an input buffer, fill it with a column-major batch, submit it, and take
 * finished results in submission order.  On the GPU, submitting slot k
 * starts its transfer and kernel and returns, so the caller fetches and
 * builds the next batch while the device works; a slot's results are
 * waited for only when its buffer is needed again or at the end.
 *
 * Engine choice: 'cpu' never touches the GPU.  'gpu' uses it for every
 * batch and turns any failure into an ERROR carrying the provider's
 * message.  'auto' uses it for batches of at least pg_gpuscore.gpu_min_rows
 * rows (setting it up at the first such batch) when a provider loads, finds
 * a device and passes the model's self-test; otherwise, or when the GPU
 * fails mid-query, the batch is scored on the CPU from the same host buffer
 * (a NOTICE says so once per backend, unless the machine simply has no
 * GPU).  A sticky device error disables the GPU for the backend.
 *
 * Memory: the scorer and its CPU buffers live in the caller's memory
 * context; a reset callback on that context frees the GPU pipeline (which
 * first waits for work in flight), so ERROR and cancel release everything.
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"

#include "gpuscore.h"
#include "provider.h"
#include "service.h"

StaticAssertDecl(GS_SCORER_SLOTS == GS_CUDA_SLOTS, "scorer and provider slot counts differ");

struct GsBatchScorer
{
	GsModelRef *m;
	size_t		max_rows;
	GsCudaPipeline *pipe;		/* NULL: CPU only */
	float	   *cpu_in[GS_CUDA_SLOTS];	/* input buffers when pipe is NULL */
	float	   *cpu_out[GS_CUDA_SLOTS];
	float	   *margin;			/* CPU engine scratch for one slice */
	size_t		slice_rows;		/* rows per CPU slice (gs_model_slice_rows) */
	bool		gpu_deferred;	/* 'auto': GPU set up at the first batch for it */
	int			cur;			/* slot the next batch goes into */
	bool		pending[GS_CUDA_SLOTS];
	bool		on_gpu[GS_CUDA_SLOTS];
	size_t		n_rows[GS_CUDA_SLOTS];
	GsScorerStats stats;
	MemoryContextCallback cb;
};

static bool fallback_noticed = false;

/* What this backend scored where, for gpu_engine_stats(). */
static int64 stat_batches[2],
			stat_rows[2],
			stat_fallbacks;

/*
 * Score rows on the CPU in interruptible slices of slice_rows rows; scratch
 * holds gs_model_scratch_floats(m, slice_rows) floats (or for n_rows, if
 * fewer).
 */
static void
cpu_score(const GsModel *m, const float *x, size_t ld, size_t n_rows,
		  size_t slice_rows, float *scratch, float *out)
{
	for (size_t r0 = 0; r0 < n_rows; r0 += slice_rows)
	{
		size_t		n = Min(slice_rows, n_rows - r0);

		CHECK_FOR_INTERRUPTS();
		gs_model_predict(m, x + r0, ld, n, scratch, out + r0 * m->n_outputs);
	}
}

/*
 * The GPU is not used for a query in 'auto' mode: say why, once per
 * backend, unless the machine simply has no GPU.
 */
static void
note_fallback(const char *why)
{
	if (fallback_noticed || !gs_fallback_notice)
		return;
	fallback_noticed = true;
	ereport(NOTICE,
			(errmsg("pg_gpuscore is scoring on the CPU instead of the GPU"),
			 errdetail("%s", why),
			 errhint("gpu_device_info() shows what this session sees; pg_gpuscore.fallback_notice turns this notice off.")));
}

/* A GPU failure: ERROR when the GPU was demanded, else fall back. */
static void
gpu_failed(const GsModelRef *m, int rc, const char *why)
{
	if (rc == GS_CUDA_DEVICE_LOST)
		gs_provider_lost(why);
	if (gs_device_mode == GS_DEVICE_GPU)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("GPU scoring failed for model \"%s\"", m->name),
				 errdetail("%s", why),
				 rc == GS_CUDA_DEVICE_LOST ?
				 errhint("The GPU is disabled for the rest of this session.") : 0));
	stat_fallbacks++;
	note_fallback(why);
}

/* Memory context callback: release the GPU pipeline. */
static void
scorer_release(void *arg)
{
	GsBatchScorer *s = (GsBatchScorer *) arg;

	if (s->pipe && gs_provider.pipeline_free)
		gs_provider.pipeline_free(s->pipe);
	s->pipe = NULL;
}

/*
 * Set up the GPU side of a scorer: the provider, the model on the device
 * and the pipeline.  ERRORs only in 'gpu' mode; in 'auto' a failure leaves
 * the scorer on the CPU.
 */
static void
scorer_open_gpu(GsBatchScorer *s)
{
	char		why[512];
	int			rc;

	gs_provider_load();
	gs_provider_apply_fault();
	if (!gs_provider.usable)
	{
		if (gs_device_mode == GS_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("no GPU engine is available"),
					 errdetail("%s", gs_provider.reason),
					 errhint("Set pg_gpuscore.device to 'auto' or 'cpu'; gpu_device_info() shows what this session sees.")));
		if (!gs_provider.expected)
			note_fallback(gs_provider.reason);
		return;
	}
	if (!gs_device_upload(s->m, why, sizeof(why)))
	{
		if (gs_device_mode == GS_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("could not use model \"%s\" on the GPU", s->m->name),
					 errdetail("%s", why)));
		note_fallback(why);
		return;
	}
	rc = gs_provider.pipeline_create((GsCudaModel *) s->m->device_model, s->max_rows,
									 &s->pipe, why, sizeof(why));
	if (rc != GS_CUDA_OK)
	{
		s->pipe = NULL;
		gpu_failed(s->m, rc, why);
	}
}

/*
 * Decide whether this query may use the GPU.  'gpu' sets it up now, so that
 * a missing GPU is an ERROR before any row is read.  'auto' waits for the
 * first batch large enough for it (gs_scorer_submit): a query whose batches
 * are all smaller than gpu_min_rows never loads the provider, uploads the
 * model or pins the pipeline's buffers (~7 ms a query on an H100, ~60 ms
 * the first time a network opens cuBLAS).
 */
static void
scorer_attach_gpu(GsBatchScorer *s)
{
	const char *cpu_only;

	if (gs_device_mode == GS_DEVICE_CPU)
		return;

	/*
	 * XGBoost's linear booster (one dot product per row, summed in
	 * XGBoost's order on the CPU; a GPU round trip would cost more) and
	 * LightGBM's linear trees: the CPU engine only
	 */
	if ((cpu_only = gs_model_cpu_only(s->m->model)) != NULL)
	{
		if (gs_device_mode == GS_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" is %s, which only the CPU engine scores",
							s->m->name, cpu_only),
					 errhint("Set pg_gpuscore.device to 'auto' or 'cpu' to score it.")));
		return;
	}
	if (gs_device_mode == GS_DEVICE_GPU)
		scorer_open_gpu(s);
	/* 'auto' never sends batches this small to the GPU: don't set it up */
	else if (s->max_rows >= (size_t) gs_gpu_min_rows)
		s->gpu_deferred = true;
}

/* Rows per batch for model f; see gpuscore.h. */
size_t
gs_batch_rows(const GsModel *f)
{
	size_t		rows = (size_t) gs_batch_size;
	size_t		row_bytes = sizeof(float) * ((size_t) f->n_features + (size_t) f->n_outputs);
	size_t		budget = (size_t) gs_batch_memory_kb * 1024;

	if (rows * row_bytes > budget)
		rows = Max(budget / row_bytes, Min(rows, (size_t) gs_gpu_min_rows));
	return Max(rows, 1);
}

/* Start scoring batches of at most max_rows rows; see gpuscore.h. */
GsBatchScorer *
gs_scorer_begin(GsModelRef *m, size_t max_rows, MemoryContext mcxt)
{
	GsBatchScorer *s = MemoryContextAllocZero(mcxt, sizeof(GsBatchScorer));
	const GsModel *f = m->model;

	s->m = m;
	s->max_rows = Max(max_rows, 1);
	s->cb.func = scorer_release;
	s->cb.arg = s;
	MemoryContextRegisterResetCallback(mcxt, &s->cb);
	scorer_attach_gpu(s);
	for (int k = 0; k < GS_CUDA_SLOTS; k++)
	{
		if (s->pipe == NULL)
			s->cpu_in[k] = MemoryContextAllocHuge(mcxt, sizeof(float) * s->max_rows * f->n_features);
		s->cpu_out[k] = MemoryContextAllocHuge(mcxt, sizeof(float) * s->max_rows * f->n_outputs);
	}
	s->slice_rows = gs_model_slice_rows(f);
	s->margin = MemoryContextAllocHuge(mcxt, sizeof(float) *
									   gs_model_scratch_floats(f, Min(s->max_rows, s->slice_rows)));
	return s;
}

/* Where the next batch goes; see gpuscore.h. */
float *
gs_scorer_input(GsBatchScorer *s, int *slot)
{
	*slot = s->cur;
	return s->pipe ? gs_provider.pipeline_input(s->pipe, s->cur) : s->cpu_in[s->cur];
}

/* Is the GPU the engine for a batch of n rows? */
static bool
use_gpu_for(GsBatchScorer *s, size_t n)
{
	if (s->pipe == NULL || !gs_provider.usable)
		return false;
	return gs_device_mode == GS_DEVICE_GPU || n >= (size_t) gs_gpu_min_rows;
}

/* Score the batch now in the current slot; see gpuscore.h. */
void
gs_scorer_submit(GsBatchScorer *s, size_t n_rows)
{
	int			k = s->cur;
	float	   *x;
	char		why[512];

	Assert(!s->pending[k] && n_rows <= s->max_rows);
	x = s->pipe ? gs_provider.pipeline_input(s->pipe, k) : s->cpu_in[k];
	/* values the model takes as missing besides NaN, for both engines */
	gs_model_mark_missing(s->m->model, x, n_rows, n_rows);
	if (s->gpu_deferred && n_rows >= (size_t) gs_gpu_min_rows)
	{
		/*
		 * The first batch for the GPU: set it up and copy the batch into its
		 * buffer (the caller's buffer keeps the same values: the trigger's
		 * reasons read it later)
		 */
		s->gpu_deferred = false;
		scorer_open_gpu(s);
		if (s->pipe)
		{
			x = gs_provider.pipeline_input(s->pipe, k);
			memcpy(x, s->cpu_in[k], sizeof(float) * n_rows * (size_t) s->m->model->n_features);
		}
	}
	s->on_gpu[k] = false;
	if (use_gpu_for(s, n_rows))
	{
		int			rc = gs_provider.pipeline_submit(s->pipe, k, n_rows, why, sizeof(why));

		if (rc == GS_CUDA_OK)
			s->on_gpu[k] = true;
		else
			gpu_failed(s->m, rc, why);
	}
	if (!s->on_gpu[k])
	{
		instr_time	t0,
					t1;

		INSTR_TIME_SET_CURRENT(t0);
		cpu_score(s->m->model, x, n_rows, n_rows, s->slice_rows, s->margin, s->cpu_out[k]);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		s->stats.cpu_ms += INSTR_TIME_GET_MILLISEC(t1);
	}
	stat_batches[s->on_gpu[k]]++;
	stat_rows[s->on_gpu[k]] += n_rows;
	s->stats.batches[s->on_gpu[k]]++;
	s->stats.rows[s->on_gpu[k]] += n_rows;
	s->n_rows[k] = n_rows;
	s->pending[k] = true;
	s->cur = (k + 1) % GS_CUDA_SLOTS;
}

/* Take the oldest finished batch; see gpuscore.h. */
const float *
gs_scorer_next(GsBatchScorer *s, bool drain, int *slot, size_t *n_rows)
{
	int			k = s->cur;
	const float *out;
	char		why[512];
	bool		on_gpu = false;
	double		device_ms = 0;

	/* the oldest pending slot is the next one to be filled */
	if (!s->pending[k])
	{
		if (!drain)
			return NULL;
		k = (k + 1) % GS_CUDA_SLOTS;
		if (!s->pending[k])
			return NULL;
	}
	out = s->cpu_out[k];
	if (s->on_gpu[k])
	{
		instr_time	t0,
					t1;
		int			rc;
		float		ms[3];

		on_gpu = true;
		INSTR_TIME_SET_CURRENT(t0);
		rc = gs_provider.pipeline_wait(s->pipe, k, &out, why, sizeof(why));
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		s->stats.gpu_wait_ms += INSTR_TIME_GET_MILLISEC(t1);
		device_ms = INSTR_TIME_GET_MILLISEC(t1);
		if (rc == GS_CUDA_OK && gs_provider.pipeline_times &&
			gs_provider.pipeline_times(s->pipe, k, ms) == 0)
		{
			s->stats.copy_in_ms += ms[0];
			s->stats.kernel_ms += ms[1];
			s->stats.copy_out_ms += ms[2];
			device_ms = ms[0] + ms[1] + ms[2];
		}
		if (rc != GS_CUDA_OK)
		{
			on_gpu = false;
			device_ms = 0;
			/* the input is still in the host buffer: score it here */
			gpu_failed(s->m, rc, why);
			stat_batches[1]--;
			stat_rows[1] -= s->n_rows[k];
			stat_batches[0]++;
			stat_rows[0] += s->n_rows[k];
			s->stats.batches[1]--;
			s->stats.rows[1] -= s->n_rows[k];
			s->stats.batches[0]++;
			s->stats.rows[0] += s->n_rows[k];
			out = s->cpu_out[k];
			INSTR_TIME_SET_CURRENT(t0);
			cpu_score(s->m->model, gs_provider.pipeline_input(s->pipe, k), s->n_rows[k],
					  s->n_rows[k], s->slice_rows, s->margin, s->cpu_out[k]);
			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			s->stats.cpu_ms += INSTR_TIME_GET_MILLISEC(t1);
		}
	}
	s->pending[k] = false;
	*slot = k;
	*n_rows = s->n_rows[k];
	/* gpu_model_stats: where it was scored, the device's time, the scores */
	gs_svc_record(s->m, on_gpu, s->n_rows[k], out, s->m->model->n_outputs, device_ms);
	return out;
}

/* What this scorer scored where; see gpuscore.h. */
const GsScorerStats *
gs_scorer_stats(const GsBatchScorer *s)
{
	return &s->stats;
}

/* Is the last submitted batch still running on the GPU; see gpuscore.h. */
bool
gs_scorer_in_flight(const GsBatchScorer *s)
{
	int			last = (s->cur + GS_CUDA_SLOTS - 1) % GS_CUDA_SLOTS;

	return s->pending[last] && s->on_gpu[last];
}

/* Name of the engine a query would use now; see gpuscore.h. */
const char *
gs_engine_name(void)
{
	if (gs_device_mode == GS_DEVICE_CPU)
		return "cpu";
	gs_provider_load();
	return gs_provider.usable ? "gpu" : "cpu";
}

PG_FUNCTION_INFO_V1(gpuscore_gpu_engine_stats);

/*
 * gpu_engine_stats() RETURNS TABLE(engine text, batches bigint, rows bigint,
 * fallbacks bigint): batches and rows this session scored on each engine
 * through the batch paths, and GPU failures that fell back to the CPU.
 */
Datum
gpuscore_gpu_engine_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int e = 0; e < 2; e++)
	{
		Datum		values[4];
		bool		nulls[4] = {0};

		values[0] = CStringGetTextDatum(e ? "gpu" : "cpu");
		values[1] = Int64GetDatum(stat_batches[e]);
		values[2] = Int64GetDatum(stat_rows[e]);
		values[3] = Int64GetDatum(e ? stat_fallbacks : 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

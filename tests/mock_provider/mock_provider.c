/*
 * mock_provider.c
 *	  A GPU provider that runs on the CPU, to test the extension's GPU paths
 *	  (provider loading, upload, the two-slot pipeline, fallbacks, fault
 *	  injection, memory release) on machines without a GPU, such as CI.
 *
 * It implements cuda/gs_cuda.h with the core's CPU engines (trees and
 * networks).  To behave like
 * an asynchronous device, a submitted slot is scored only when it is waited
 * for, so a caller that reads results before waiting sees garbage (the
 * output buffer is filled with NaN at submit).  It counts live models and
 * pipelines so tests can check that everything is released
 * (gs_mock_live_objects, read through gpu_device_info's free memory).
 * Never installed; tests point pg_gpuscore.provider at it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forest/cpu_engine.h"
#include "gs_cuda.h"
#include "mlp/mlp.h"
#include "provider_fault.h"

/* Pretend device memory: 1 GiB, minus 1 MiB per live model or pipeline. */
#define MOCK_TOTAL ((size_t) 1 << 30)
#define MOCK_UNIT ((size_t) 1 << 20)

struct GsCudaModel
{
	const GsForest *f;			/* the caller's forest: it outlives the model */
	const GsMlp *mlp;			/* or the caller's network */
	int32_t		n_features;
	int32_t		n_outputs;
};

/* Floats of engine scratch for n rows. */
static size_t
scratch_floats(const GsCudaModel *m, size_t n)
{
	if (m->mlp)
		return gs_mlp_scratch_floats(m->mlp, n);
	return (n ? n : 1) * (size_t) m->f->n_groups;
}

/* Score a column-major batch with the model's CPU engine. */
static void
mock_score(const GsCudaModel *m, const float *x, size_t n, float *scratch, float *out)
{
	if (m->mlp)
		gs_mlp_predict(m->mlp, x, n, n, scratch, out);
	else
		gs_cpu_predict(m->f, x, n, n, scratch, out);
}

struct GsCudaPipeline
{
	GsCudaModel *m;
	size_t		max_rows;
	float	   *in[GS_CUDA_SLOTS];
	float	   *out[GS_CUDA_SLOTS];
	float	   *margin;
	size_t		n_rows[GS_CUDA_SLOTS];
	int			pending[GS_CUDA_SLOTS];
	int			timed[GS_CUDA_SLOTS];	/* a batch of the slot was waited for */
	float		score_ms[GS_CUDA_SLOTS];	/* and took this long to score */
};

static int	live_objects = 0;
static int	lost = 0;

/* Injected failure: message and code. */
static int
injected(const char *what, char *err, size_t errlen)
{
	if (gs_fault == GS_FAULT_DEVICE_LOST)
		lost = 1;
	snprintf(err, errlen, "%s failed: injected fault%s", what,
			 lost ? " (device lost)" : "");
	return lost ? GS_CUDA_DEVICE_LOST : GS_CUDA_ERROR;
}

#define CHECK_LOST() \
	do { \
		if (lost) { \
			snprintf(err, errlen, "the GPU is unusable after an earlier error: injected fault (device lost)"); \
			return GS_CUDA_DEVICE_LOST; \
		} \
	} while (0)

int
gs_cuda_abi_version(void)
{
	return GS_CUDA_ABI_VERSION;
}

int
gs_cuda_set_fault(const char *point)
{
	return gs_fault_set(point);
}

/* A device that always exists; free memory shows live objects. */
int
gs_cuda_probe(GsCudaInfo *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof(*info));
	CHECK_LOST();
	info->device_count = 1;
	snprintf(info->name, sizeof(info->name), "pg_gpuscore mock device (CPU)");
	info->total_mem = MOCK_TOTAL;
	info->free_mem = MOCK_TOTAL - (size_t) live_objects * MOCK_UNIT;
	info->driver_version = 0;
	info->runtime_version = 0;
	return GS_CUDA_OK;
}

int
gs_cuda_model_upload(const GsForest *f, GsCudaModel **out, char *err, size_t errlen)
{
	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_UPLOAD || gs_fault == GS_FAULT_OOM || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("uploading the model", err, errlen);
	*out = calloc(1, sizeof(GsCudaModel));
	if (*out == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	(*out)->f = f;
	(*out)->n_features = f->n_features;
	(*out)->n_outputs = f->n_outputs;
	live_objects++;
	return GS_CUDA_OK;
}

int
gs_cuda_mlp_upload(const GsMlp *mlp, GsCudaModel **out, char *err, size_t errlen)
{
	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_UPLOAD || gs_fault == GS_FAULT_OOM || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("uploading the model", err, errlen);
	*out = calloc(1, sizeof(GsCudaModel));
	if (*out == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	(*out)->mlp = mlp;
	(*out)->n_features = mlp->n_features;
	(*out)->n_outputs = mlp->n_outputs;
	live_objects++;
	return GS_CUDA_OK;
}

void
gs_cuda_model_free(GsCudaModel *m)
{
	if (m == NULL)
		return;
	free(m);
	live_objects--;
}

int
gs_cuda_predict(GsCudaModel *m, const float *x, size_t n_rows, float *out,
				char *err, size_t errlen)
{
	float	   *margin;

	CHECK_LOST();
	margin = malloc(sizeof(float) * scratch_floats(m, n_rows));
	if (margin == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	mock_score(m, x, n_rows, margin, out);
	free(margin);
	return GS_CUDA_OK;
}

void
gs_cuda_pipeline_free(GsCudaPipeline *p)
{
	if (p == NULL)
		return;
	for (int s = 0; s < GS_CUDA_SLOTS; s++)
	{
		free(p->in[s]);
		free(p->out[s]);
	}
	free(p->margin);
	free(p);
	live_objects--;
}

int
gs_cuda_pipeline_create(GsCudaModel *m, size_t max_rows, GsCudaPipeline **out,
						char *err, size_t errlen)
{
	GsCudaPipeline *p;
	int			ok = 1;

	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_PIPELINE || gs_fault == GS_FAULT_OOM || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("creating the batch pipeline", err, errlen);
	p = calloc(1, sizeof(GsCudaPipeline));
	if (p == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	live_objects++;
	p->m = m;
	p->max_rows = max_rows;
	for (int s = 0; s < GS_CUDA_SLOTS; s++)
	{
		p->in[s] = malloc(sizeof(float) * max_rows * m->n_features);
		p->out[s] = malloc(sizeof(float) * max_rows * m->n_outputs);
		ok &= p->in[s] != NULL && p->out[s] != NULL;
	}
	p->margin = malloc(sizeof(float) * scratch_floats(m, max_rows));
	if (!ok || p->margin == NULL)
	{
		gs_cuda_pipeline_free(p);
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	*out = p;
	return GS_CUDA_OK;
}

float *
gs_cuda_pipeline_input(GsCudaPipeline *p, int slot)
{
	return p->in[slot];
}

/* Accept a slot; its scores appear only when it is waited for. */
int
gs_cuda_pipeline_submit(GsCudaPipeline *p, int slot, size_t n_rows, char *err, size_t errlen)
{
	CHECK_LOST();
	if (gs_fault == GS_FAULT_SUBMIT || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("submitting a batch", err, errlen);
	if (n_rows > p->max_rows)
	{
		snprintf(err, errlen, "batch of %zu rows exceeds the pipeline's %zu", n_rows, p->max_rows);
		return GS_CUDA_ERROR;
	}
	for (size_t i = 0; i < n_rows * p->m->n_outputs; i++)
		p->out[slot][i] = NAN;
	p->n_rows[slot] = n_rows;
	p->pending[slot] = 1;
	return GS_CUDA_OK;
}

int
gs_cuda_pipeline_wait(GsCudaPipeline *p, int slot, const float **out, char *err, size_t errlen)
{
	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_WAIT || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("waiting for a batch", err, errlen);
	if (!p->pending[slot])
	{
		snprintf(err, errlen, "slot %d was not submitted", slot);
		return GS_CUDA_ERROR;
	}
	{
		struct timespec t0,
					t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		mock_score(p->m, p->in[slot], p->n_rows[slot], p->margin, p->out[slot]);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		p->score_ms[slot] = (float) ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	p->pending[slot] = 0;
	p->timed[slot] = 1;
	*out = p->out[slot];
	return GS_CUDA_OK;
}

/* The mock copies nothing: scoring is the time of the CPU engine's call. */
int
gs_cuda_pipeline_times(GsCudaPipeline *p, int slot, float ms[3])
{
	if (!p->timed[slot])
		return -1;
	ms[0] = 0;
	ms[1] = p->score_ms[slot];
	ms[2] = 0;
	return 0;
}

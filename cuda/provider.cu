/*
 * provider.cu
 *	  The CUDA provider: device probing, model upload, and the two-slot
 *	  batch pipeline (gs_cuda.h).
 *
 * Pipeline: each slot has a pinned host input and output buffer, device
 * buffers and its own stream.  Submitting slot k enqueues the host-to-device
 * copy, the kernel and the device-to-host copy on stream k and returns at
 * once, so the backend fills slot 1-k while slot k is on the way; waiting
 * synchronises stream k.  Kernels come from forest_kernel.cu and
 * forest_binned.cu (traversal shared with the CPU engine through
 * src/core/forest/forest_eval.h); neural networks are scored by mlp_gemm.cu
 * (cuBLAS, one run per slot).
 *
 * Errors: every CUDA call is checked; sticky errors (the context is
 * corrupt: illegal address, launch failure, ...) mark the device lost for
 * the process, and every later call says so.  Memory: a GsCudaModel owns
 * its device forest; a GsCudaPipeline owns its buffers and streams and
 * waits for them before freeing.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cuda.h"
#include "forest_kernel.h"
#include "mlp_gemm.h"
#include "provider_fault.h"

struct GsCudaModel
{
	GsDeviceForest *df;			/* a tree ensemble, or */
	GsDeviceMlp *dm;			/* a neural network */
	int32_t		n_features;
	int32_t		n_outputs;
};

typedef struct Slot
{
	float	   *h_in;			/* pinned, max_rows * n_features */
	float	   *h_out;			/* pinned, max_rows * n_outputs */
	float	   *d_in;
	float	   *d_out;
	cudaStream_t stream;
	GsDmlpRun  *mrun;			/* cuBLAS handle + activations (networks) */
	size_t		n_rows;			/* of the batch in flight */
	cudaEvent_t ev[4];			/* before the copy in, after it, after
								 * scoring, after the copy back (NULL when
								 * they could not be made: no times) */
	bool		timed;			/* ev hold a batch's times */
} Slot;

struct GsCudaPipeline
{
	GsCudaModel *model;
	size_t		max_rows;
	Slot		slot[GS_CUDA_SLOTS];
};

/* Set once a sticky error has been seen: the context is unusable. */
static char device_lost[256] = "";

/* Is this error sticky (the CUDA context cannot be used any more)? */
static bool
is_sticky(cudaError_t rc)
{
	switch (rc)
	{
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorHardwareStackError:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorECCUncorrectable:
		case cudaErrorLaunchTimeout:
		case cudaErrorAssert:
		case cudaErrorContextIsDestroyed:
			return true;
		default:
			return false;
	}
}

/* Turn a CUDA failure into a return code and message. */
static int
cuda_fail(cudaError_t rc, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s failed: %s (%s)", what, cudaGetErrorString(rc),
			 cudaGetErrorName(rc));
	if (is_sticky(rc))
	{
		snprintf(device_lost, sizeof(device_lost), "%s", err);
		return GS_CUDA_DEVICE_LOST;
	}
	return GS_CUDA_ERROR;
}

/* Injected failure (testing): a message and the code the point implies. */
static int
injected(const char *what, char *err, size_t errlen)
{
	if (gs_fault == GS_FAULT_DEVICE_LOST)
	{
		snprintf(device_lost, sizeof(device_lost),
				 "%s failed: injected fault (device lost)", what);
		snprintf(err, errlen, "%s", device_lost);
		return GS_CUDA_DEVICE_LOST;
	}
	snprintf(err, errlen, "%s failed: injected fault", what);
	return GS_CUDA_ERROR;
}

/* A kernel-module return code: CUDA error (> 0) or argument error (< 0). */
static int
kernel_fail(int rc, const char *what, char *err, size_t errlen)
{
	if (rc > 0)
		return cuda_fail((cudaError_t) rc, what, err, errlen);
	snprintf(err, errlen, "%s failed: %s", what, gs_dforest_strerror(rc));
	return GS_CUDA_ERROR;
}

/* A mlp_gemm.cu return code: CUDA error (> 0) or its own (< 0). */
static int
mlp_fail(int rc, const char *what, char *err, size_t errlen)
{
	if (rc > 0)
		return cuda_fail((cudaError_t) rc, what, err, errlen);
	snprintf(err, errlen, "%s failed: %s", what, gs_dmlp_strerror(rc));
	return GS_CUDA_ERROR;
}

/* Refuse work once the device is lost. */
#define CHECK_LOST() \
	do { \
		if (device_lost[0]) { \
			snprintf(err, errlen, "the GPU is unusable after an earlier error: %s", device_lost); \
			return GS_CUDA_DEVICE_LOST; \
		} \
	} while (0)

#define CUDA_TRY(call, what) \
	do { \
		cudaError_t rc_ = (call); \
		if (rc_ != cudaSuccess) \
			return cuda_fail(rc_, what, err, errlen); \
	} while (0)

extern "C" int
gs_cuda_abi_version(void)
{
	return GS_CUDA_ABI_VERSION;
}

extern "C" int
gs_cuda_set_fault(const char *point)
{
	return gs_fault_set(point);
}

/* Probe the driver and device 0; see gs_cuda.h. */
extern "C" int
gs_cuda_probe(GsCudaInfo *info, char *err, size_t errlen)
{
	cudaDeviceProp prop;

	memset(info, 0, sizeof(*info));
	CUDA_TRY(cudaDriverGetVersion(&info->driver_version), "cudaDriverGetVersion");
	CUDA_TRY(cudaRuntimeGetVersion(&info->runtime_version), "cudaRuntimeGetVersion");
	CUDA_TRY(cudaGetDeviceCount(&info->device_count), "cudaGetDeviceCount");
	if (info->device_count < 1)
	{
		snprintf(err, errlen, "no CUDA device found");
		return GS_CUDA_ERROR;
	}
	CHECK_LOST();
	CUDA_TRY(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	CUDA_TRY(cudaMemGetInfo(&info->free_mem, &info->total_mem), "cudaMemGetInfo");
	return GS_CUDA_OK;
}

/* Release a model; see gs_cuda.h. */
extern "C" void
gs_cuda_model_free(GsCudaModel *m)
{
	if (m == NULL)
		return;
	gs_dforest_free(m->df);
	gs_dmlp_free(m->dm);
	free(m);
}

/* Copy a validated network to the device; see gs_cuda.h. */
extern "C" int
gs_cuda_mlp_upload(const GsMlp *mlp, GsCudaModel **out, char *err, size_t errlen)
{
	GsCudaModel *m;
	int			rc;

	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_UPLOAD || gs_fault == GS_FAULT_OOM || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("uploading the model", err, errlen);
	m = (GsCudaModel *) calloc(1, sizeof(GsCudaModel));
	if (m == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	m->n_features = mlp->n_features;
	m->n_outputs = mlp->n_outputs;
	rc = gs_dmlp_create(mlp, &m->dm);
	if (rc != 0)
	{
		free(m);
		return mlp_fail(rc, "uploading the model", err, errlen);
	}
	*out = m;
	return GS_CUDA_OK;
}

/* Copy a validated forest to the device; see gs_cuda.h. */
extern "C" int
gs_cuda_model_upload(const GsForest *f, GsCudaModel **out, char *err, size_t errlen)
{
	GsCudaModel *m;
	int			rc;

	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_UPLOAD || gs_fault == GS_FAULT_OOM || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("uploading the model", err, errlen);
	m = (GsCudaModel *) calloc(1, sizeof(GsCudaModel));
	if (m == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	m->n_features = f->n_features;
	m->n_outputs = f->n_outputs;
	rc = gs_dforest_create(f, &m->df);
	if (rc != 0)
	{
		free(m);
		if (rc > 0)
			return cuda_fail((cudaError_t) rc, "uploading the model", err, errlen);
		snprintf(err, errlen, "%s", gs_dforest_strerror(rc));
		return GS_CUDA_ERROR;
	}
	*out = m;
	return GS_CUDA_OK;
}

/* Score a host batch synchronously; see gs_cuda.h. */
extern "C" int
gs_cuda_predict(GsCudaModel *m, const float *x, size_t n_rows, float *out,
				char *err, size_t errlen)
{
	float	   *d_x = NULL,
			   *d_out = NULL;
	cudaError_t rc;
	int			ret = GS_CUDA_OK;

	CHECK_LOST();
	if (n_rows == 0)
		return GS_CUDA_OK;
	int			krc = 0;

	if ((rc = cudaMalloc((void **) &d_x, sizeof(float) * n_rows * m->n_features)) != cudaSuccess ||
		(rc = cudaMalloc((void **) &d_out, sizeof(float) * n_rows * m->n_outputs)) != cudaSuccess ||
		(rc = cudaMemcpy(d_x, x, sizeof(float) * n_rows * m->n_features, cudaMemcpyHostToDevice)) != cudaSuccess)
		ret = cuda_fail(rc, "scoring a batch", err, errlen);
	else if (m->dm)
	{
		GsDmlpRun  *run = NULL;

		/* the legacy default stream: the copy back below waits for it */
		if ((krc = gs_dmlp_run_create(m->dm, n_rows, NULL, &run)) != 0 ||
			(krc = gs_dmlp_predict(m->dm, run, d_x, n_rows, d_out)) != 0)
			ret = mlp_fail(krc, "scoring a batch", err, errlen);
		else if ((rc = cudaMemcpy(out, d_out, sizeof(float) * n_rows * m->n_outputs, cudaMemcpyDeviceToHost)) != cudaSuccess)
			ret = cuda_fail(rc, "scoring a batch", err, errlen);
		cudaDeviceSynchronize();
		gs_dmlp_run_free(run);
	}
	else if ((krc = gs_dforest_predict(m->df, d_x, n_rows, n_rows, d_out, NULL)) != 0)
		ret = kernel_fail(krc, "scoring a batch", err, errlen);
	else if ((rc = cudaMemcpy(out, d_out, sizeof(float) * n_rows * m->n_outputs, cudaMemcpyDeviceToHost)) != cudaSuccess)
		ret = cuda_fail(rc, "scoring a batch", err, errlen);
	cudaFree(d_x);
	cudaFree(d_out);
	return ret;
}

/* Free a pipeline after its work is done; see gs_cuda.h. */
extern "C" void
gs_cuda_pipeline_free(GsCudaPipeline *p)
{
	if (p == NULL)
		return;
	for (int s = 0; s < GS_CUDA_SLOTS; s++)
	{
		Slot	   *sl = &p->slot[s];

		if (sl->stream)
			cudaStreamSynchronize(sl->stream);
		gs_dmlp_run_free(sl->mrun);
		for (int e = 0; e < 4; e++)
			if (sl->ev[e])
				cudaEventDestroy(sl->ev[e]);
		if (sl->stream)
			cudaStreamDestroy(sl->stream);
		cudaFreeHost(sl->h_in);
		cudaFreeHost(sl->h_out);
		cudaFree(sl->d_in);
		cudaFree(sl->d_out);
	}
	free(p);
}

/* Create a two-slot pipeline; see gs_cuda.h. */
extern "C" int
gs_cuda_pipeline_create(GsCudaModel *m, size_t max_rows, GsCudaPipeline **out,
						char *err, size_t errlen)
{
	GsCudaPipeline *p;
	size_t		in_bytes = sizeof(float) * max_rows * m->n_features;
	size_t		out_bytes = sizeof(float) * max_rows * m->n_outputs;
	cudaError_t rc = cudaSuccess;

	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_PIPELINE || gs_fault == GS_FAULT_OOM || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("creating the batch pipeline", err, errlen);
	p = (GsCudaPipeline *) calloc(1, sizeof(GsCudaPipeline));
	if (p == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return GS_CUDA_ERROR;
	}
	p->model = m;
	p->max_rows = max_rows;
	for (int s = 0; s < GS_CUDA_SLOTS && rc == cudaSuccess; s++)
	{
		Slot	   *sl = &p->slot[s];

		if ((rc = cudaHostAlloc((void **) &sl->h_in, in_bytes, cudaHostAllocDefault)) != cudaSuccess ||
			(rc = cudaHostAlloc((void **) &sl->h_out, out_bytes, cudaHostAllocDefault)) != cudaSuccess ||
			(rc = cudaMalloc((void **) &sl->d_in, in_bytes)) != cudaSuccess ||
			(rc = cudaMalloc((void **) &sl->d_out, out_bytes)) != cudaSuccess ||
			(rc = cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking)) != cudaSuccess)
			break;
		/* times are optional: without events, batches are not timed */
		for (int e = 0; e < 4; e++)
			if (cudaEventCreate(&sl->ev[e]) != cudaSuccess)
			{
				(void) cudaGetLastError();
				for (int k = 0; k < e; k++)
					cudaEventDestroy(sl->ev[k]);
				memset(sl->ev, 0, sizeof(sl->ev));
				break;
			}
	}
	if (rc != cudaSuccess)
	{
		gs_cuda_pipeline_free(p);
		return cuda_fail(rc, "creating the batch pipeline", err, errlen);
	}
	for (int s = 0; s < GS_CUDA_SLOTS && m->dm; s++)
	{
		int			mrc = gs_dmlp_run_create(m->dm, max_rows, (void *) p->slot[s].stream,
											 &p->slot[s].mrun);

		if (mrc != 0)
		{
			gs_cuda_pipeline_free(p);
			return mlp_fail(mrc, "creating the batch pipeline", err, errlen);
		}
	}
	*out = p;
	return GS_CUDA_OK;
}

/* Host input buffer of a slot; see gs_cuda.h. */
extern "C" float *
gs_cuda_pipeline_input(GsCudaPipeline *p, int slot)
{
	return p->slot[slot].h_in;
}

/* Enqueue copy in, kernel, copy out for a slot; see gs_cuda.h. */
extern "C" int
gs_cuda_pipeline_submit(GsCudaPipeline *p, int slot, size_t n_rows, char *err, size_t errlen)
{
	Slot	   *sl = &p->slot[slot];
	GsCudaModel *m = p->model;

	CHECK_LOST();
	if (gs_fault == GS_FAULT_SUBMIT || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("submitting a batch", err, errlen);
	if (n_rows > p->max_rows)
	{
		snprintf(err, errlen, "batch of %zu rows exceeds the pipeline's %zu", n_rows, p->max_rows);
		return GS_CUDA_ERROR;
	}
	sl->n_rows = n_rows;
	sl->timed = false;
	if (n_rows == 0)
		return GS_CUDA_OK;
	if (sl->ev[0])
		CUDA_TRY(cudaEventRecord(sl->ev[0], sl->stream), "timing a batch");
	CUDA_TRY(cudaMemcpyAsync(sl->d_in, sl->h_in, sizeof(float) * n_rows * m->n_features,
							 cudaMemcpyHostToDevice, sl->stream), "copying a batch to the GPU");
	if (sl->ev[1])
		CUDA_TRY(cudaEventRecord(sl->ev[1], sl->stream), "timing a batch");
	if (m->dm)
	{
		int			krc = gs_dmlp_predict(m->dm, sl->mrun, sl->d_in, n_rows, sl->d_out);

		if (krc != 0)
			return mlp_fail(krc, "launching the network's GEMMs", err, errlen);
	}
	else
	{
		int			krc = gs_dforest_predict(m->df, sl->d_in, n_rows, n_rows, sl->d_out,
											 (void *) sl->stream);

		if (krc != 0)
			return kernel_fail(krc, "launching the scoring kernel", err, errlen);
	}
	if (sl->ev[2])
		CUDA_TRY(cudaEventRecord(sl->ev[2], sl->stream), "timing a batch");
	CUDA_TRY(cudaMemcpyAsync(sl->h_out, sl->d_out, sizeof(float) * n_rows * m->n_outputs,
							 cudaMemcpyDeviceToHost, sl->stream), "copying scores from the GPU");
	if (sl->ev[3])
	{
		CUDA_TRY(cudaEventRecord(sl->ev[3], sl->stream), "timing a batch");
		sl->timed = true;
	}
	return GS_CUDA_OK;
}

/* Device times of a slot's last batch; see gs_cuda.h. */
extern "C" int
gs_cuda_pipeline_times(GsCudaPipeline *p, int slot, float ms[3])
{
	Slot	   *sl = &p->slot[slot];

	if (!sl->timed)
		return -1;
	for (int e = 0; e < 3; e++)
		if (cudaEventElapsedTime(&ms[e], sl->ev[e], sl->ev[e + 1]) != cudaSuccess)
		{
			(void) cudaGetLastError();
			return -1;
		}
	return 0;
}

/* Wait for a slot's scores; see gs_cuda.h. */
extern "C" int
gs_cuda_pipeline_wait(GsCudaPipeline *p, int slot, const float **out, char *err, size_t errlen)
{
	Slot	   *sl = &p->slot[slot];

	*out = NULL;
	CHECK_LOST();
	if (gs_fault == GS_FAULT_WAIT || gs_fault == GS_FAULT_DEVICE_LOST)
		return injected("waiting for a batch", err, errlen);
	CUDA_TRY(cudaStreamSynchronize(sl->stream), "scoring a batch on the GPU");
	*out = sl->h_out;
	return GS_CUDA_OK;
}

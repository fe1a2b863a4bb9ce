/*
 * gs_cuda.h
 *	  The C interface of a GPU provider: the CUDA provider
 *	  (pg_gpuscore_cuda.so, cuda/provider.cu) or the CPU mock used to test the
 *	  GPU paths without a GPU (tests/mock_provider/).
 *
 * The extension dlopen()s a provider lazily, in a backend, the first time a
 * GPU is wanted; never in the postmaster.  The interface is narrow and batch
 * oriented (probe, upload a model, run batches through a pipeline, release),
 * so that a shared GPU service process could later replace the in-backend
 * provider.  No PostgreSQL headers here.
 *
 * Return codes: GS_CUDA_OK, GS_CUDA_ERROR (this call failed, the device is
 * still usable) or GS_CUDA_DEVICE_LOST (a sticky error: the device is
 * unusable for the rest of the process), with a message naming the CUDA
 * error in err.
 *
 * Ownership: a GsCudaModel owns the device copy of one forest or network; a
 * GsCudaPipeline owns pinned host buffers, device buffers and a stream for
 * one model.  Whoever creates them frees them (gs_cuda_pipeline_free first,
 * it waits for work in flight).  A pipeline has two slots: the caller fills
 * slot k's input while slot 1-k is being transferred and scored.
 */
#ifndef GS_CUDA_H
#define GS_CUDA_H

#include <stddef.h>

#include "forest/forest.h"
#include "mlp/mlp.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define GS_CUDA_ABI_VERSION 3

#define GS_CUDA_OK 0
#define GS_CUDA_ERROR (-1)
#define GS_CUDA_DEVICE_LOST (-2)

#define GS_CUDA_SLOTS 2

typedef struct GsCudaInfo
{
	int			device_count;
	char		name[256];		/* device 0 */
	int			cc_major;
	int			cc_minor;
	size_t		total_mem;
	size_t		free_mem;
	int			driver_version; /* e.g. 13000 */
	int			runtime_version;
} GsCudaInfo;

typedef struct GsCudaModel GsCudaModel;
typedef struct GsCudaPipeline GsCudaPipeline;

/* ABI version, to refuse a provider built for another interface. */
int			gs_cuda_abi_version(void);

/* Probe the driver and device 0 (memory figures are current). */
int			gs_cuda_probe(GsCudaInfo *info, char *err, size_t errlen);

/* Copy a validated forest to the device. */
int			gs_cuda_model_upload(const GsForest *f, GsCudaModel **out,
								 char *err, size_t errlen);

/*
 * Copy a validated neural network to the device (weights resident; scored
 * with cuBLAS SGEMMs).  The GsCudaModel is used like a forest's.
 */
int			gs_cuda_mlp_upload(const GsMlp *m, GsCudaModel **out,
							   char *err, size_t errlen);

/* Release a model's device memory; NULL is allowed. */
void		gs_cuda_model_free(GsCudaModel *m);

/*
 * Score n_rows of a column-major host batch (x[f * n_rows + r]) into host
 * out[r * n_outputs + k], synchronously (used for the upload self-test).
 */
int			gs_cuda_predict(GsCudaModel *m, const float *x, size_t n_rows,
							float *out, char *err, size_t errlen);

/* A two-slot pipeline for batches of at most max_rows rows of model m. */
int			gs_cuda_pipeline_create(GsCudaModel *m, size_t max_rows,
									GsCudaPipeline **out, char *err, size_t errlen);

/* Host input buffer of a slot: max_rows * n_features floats (pinned). */
float	   *gs_cuda_pipeline_input(GsCudaPipeline *p, int slot);

/*
 * Start scoring n_rows rows of a slot's input, column-major with ld =
 * n_rows: copy in, score, copy back, all asynchronously.
 */
int			gs_cuda_pipeline_submit(GsCudaPipeline *p, int slot, size_t n_rows,
									char *err, size_t errlen);

/*
 * Wait for a submitted slot; *out then points at its n_rows * n_outputs
 * scores (pinned host memory, valid until the slot is submitted again).
 */
int			gs_cuda_pipeline_wait(GsCudaPipeline *p, int slot, const float **out,
								  char *err, size_t errlen);

/* Wait for work in flight and free everything; NULL is allowed. */
void		gs_cuda_pipeline_free(GsCudaPipeline *p);

/*
 * Optional (the extension looks it up, and does without it): how long the
 * last batch of a slot, waited for, took on the device, in milliseconds:
 * ms[0] the copy in, ms[1] scoring, ms[2] the copy back.  Returns 0, or -1
 * when the provider has no times for it.
 */
int			gs_cuda_pipeline_times(GsCudaPipeline *p, int slot, float ms[3]);

/*
 * Testing only: make the next calls fail at a point: "" (none), "upload",
 * "pipeline", "submit", "wait", "oom" (allocations) or "device_lost"
 * (every call reports a sticky error).  Returns 0, or -1 for an unknown
 * point.
 */
int			gs_cuda_set_fault(const char *point);

#ifdef __cplusplus
}
#endif

#endif							/* GS_CUDA_H */

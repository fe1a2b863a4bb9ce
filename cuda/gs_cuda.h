/*
 * gs_cuda.h
 *	  The C interface of the CUDA provider (pg_gpuscore_cuda.so).
 *
 * The provider is a separate shared object that the extension dlopen()s
 * lazily, in a backend, the first time the GPU engine is asked for; it is
 * never loaded in the postmaster.  The interface is narrow and batch
 * oriented (probe, upload a model, score a batch, release), so that a shared
 * GPU service process could later replace the in-backend provider.  No
 * PostgreSQL headers here; every call returns 0 on success or -1 with a
 * message (including the CUDA error name) in err.
 *
 * Ownership: a GsCudaModel owns device memory for one uploaded forest and
 * must be released with gs_cuda_model_free by whoever uploaded it.  Score
 * buffers are host memory of the caller.
 */
#ifndef GS_CUDA_H
#define GS_CUDA_H

#include <stddef.h>

#include "../src/core/forest.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define GS_CUDA_ABI_VERSION 1

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

/* ABI version of the provider, to refuse a mismatched build. */
typedef int (*gs_cuda_abi_version_fn) (void);

/* Probe the CUDA driver and device 0; -1 when no usable device. */
typedef int (*gs_cuda_probe_fn) (GsCudaInfo *info, char *err, size_t errlen);

/* Copy a validated forest to the device. */
typedef int (*gs_cuda_model_upload_fn) (const GsForest *f, GsCudaModel **out,
										char *err, size_t errlen);

/*
 * Score n_rows of a column-major batch (x[f * ld + r], host memory) into
 * out[r * n_outputs + k] (host memory).
 */
typedef int (*gs_cuda_predict_fn) (GsCudaModel *m, const float *x, size_t ld,
								   size_t n_rows, float *out, char *err,
								   size_t errlen);

/* Release a model's device memory; NULL is allowed. */
typedef void (*gs_cuda_model_free_fn) (GsCudaModel *m);

/* Symbols the provider exports (C linkage). */
int			gs_cuda_abi_version(void);
int			gs_cuda_probe(GsCudaInfo *info, char *err, size_t errlen);
int			gs_cuda_model_upload(const GsForest *f, GsCudaModel **out,
								 char *err, size_t errlen);
int			gs_cuda_predict(GsCudaModel *m, const float *x, size_t ld,
							size_t n_rows, float *out, char *err, size_t errlen);
void		gs_cuda_model_free(GsCudaModel *m);

#ifdef __cplusplus
}
#endif

#endif							/* GS_CUDA_H */

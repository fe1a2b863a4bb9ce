/*
 * provider.cu
 *	  The CUDA provider: device probing, model upload, batch scoring.
 *
 * This first engine is the correct simple one: one thread per row walks
 * every tree with the traversal of src/core/forest_eval.h (shared with the
 * CPU engine), accumulating margins in tree order in float exactly as the
 * CPU engine does, then applies the same output transform.  Batches are
 * copied in, scored and copied out synchronously on one stream; pinned
 * buffers, overlap and faster kernels belong to the GPU engine work.
 *
 * Memory: a GsCudaModel holds the forest's arrays on the device (freed by
 * gs_cuda_model_free); per-batch device buffers are kept in the model and
 * grown on demand, so repeated batches do not reallocate.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cuda.h"
#include "../src/core/forest_eval.h"

/* Most margins per row kept in registers; larger models use global scratch. */
#define GS_CUDA_MAX_GROUPS 32

struct GsCudaModel
{
	GsNode	   *nodes;
	uint32_t   *tree_offset;
	int32_t    *tree_group;
	float	   *base_margin;
	int32_t		n_trees;
	int32_t		n_groups;
	int32_t		n_outputs;
	int32_t		n_features;
	GsTransform transform;
	/* per-batch buffers, grown as needed */
	float	   *d_x;
	size_t		cap_x;
	float	   *d_out;
	size_t		cap_out;
};

/* Format a CUDA failure into err; returns -1. */
static int
cuda_fail(cudaError_t rc, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s failed: %s (%s)", what, cudaGetErrorString(rc),
			 cudaGetErrorName(rc));
	return -1;
}

#define CUDA_TRY(call, what) \
	do { \
		cudaError_t rc_ = (call); \
		if (rc_ != cudaSuccess) \
			return cuda_fail(rc_, what, err, errlen); \
	} while (0)

/*
 * One thread per row: sum the leaves of every tree into the row's margins,
 * then transform them into outputs.
 */
__global__ void
forest_predict_kernel(const GsNode *nodes, const uint32_t *tree_offset,
					  const int32_t *tree_group, const float *base_margin,
					  int32_t n_trees, int32_t n_groups, GsTransform transform,
					  int32_t n_outputs, const float *x, size_t ld,
					  size_t n_rows, float *out)
{
	size_t		r = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	float		margin[GS_CUDA_MAX_GROUPS];
	float		res[GS_CUDA_MAX_GROUPS];

	if (r >= n_rows)
		return;
	for (int g = 0; g < n_groups; g++)
		margin[g] = base_margin[g];
	for (int32_t t = 0; t < n_trees; t++)
		margin[tree_group[t]] += gs_tree_leaf(nodes + tree_offset[t], x + r, ld);
	gs_transform_row(transform, margin, n_groups, res);
	for (int k = 0; k < n_outputs; k++)
		out[r * n_outputs + k] = res[k];
}

extern "C" int
gs_cuda_abi_version(void)
{
	return GS_CUDA_ABI_VERSION;
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
		return -1;
	}
	CUDA_TRY(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	CUDA_TRY(cudaMemGetInfo(&info->free_mem, &info->total_mem), "cudaMemGetInfo");
	return 0;
}

/* Free whatever part of a model exists. */
extern "C" void
gs_cuda_model_free(GsCudaModel *m)
{
	if (m == NULL)
		return;
	cudaFree(m->nodes);
	cudaFree(m->tree_offset);
	cudaFree(m->tree_group);
	cudaFree(m->base_margin);
	cudaFree(m->d_x);
	cudaFree(m->d_out);
	free(m);
}

/* Allocate device memory and copy host bytes into it. */
static cudaError_t
upload(void **dst, const void *src, size_t bytes)
{
	cudaError_t rc = cudaMalloc(dst, bytes ? bytes : 1);

	if (rc != cudaSuccess)
	{
		*dst = NULL;
		return rc;
	}
	return cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice);
}

/* Copy a validated forest to the device; see gs_cuda.h. */
extern "C" int
gs_cuda_model_upload(const GsForest *f, GsCudaModel **out, char *err, size_t errlen)
{
	GsCudaModel *m;
	cudaError_t rc;

	*out = NULL;
	if (f->n_groups > GS_CUDA_MAX_GROUPS)
	{
		snprintf(err, errlen, "the GPU engine supports at most %d outputs per row, the model has %d",
				 GS_CUDA_MAX_GROUPS, f->n_groups);
		return -1;
	}
	m = (GsCudaModel *) calloc(1, sizeof(GsCudaModel));
	if (m == NULL)
	{
		snprintf(err, errlen, "out of host memory");
		return -1;
	}
	m->n_trees = f->n_trees;
	m->n_groups = f->n_groups;
	m->n_outputs = f->n_outputs;
	m->n_features = f->n_features;
	m->transform = f->transform;
	if ((rc = upload((void **) &m->nodes, f->nodes, sizeof(GsNode) * (size_t) f->n_nodes)) != cudaSuccess ||
		(rc = upload((void **) &m->tree_offset, f->tree_offset, sizeof(uint32_t) * (size_t) f->n_trees)) != cudaSuccess ||
		(rc = upload((void **) &m->tree_group, f->tree_group, sizeof(int32_t) * (size_t) f->n_trees)) != cudaSuccess ||
		(rc = upload((void **) &m->base_margin, f->base_margin, sizeof(float) * (size_t) f->n_groups)) != cudaSuccess)
	{
		gs_cuda_model_free(m);
		return cuda_fail(rc, "uploading the model", err, errlen);
	}
	*out = m;
	return 0;
}

/* Grow a device buffer to hold at least need floats. */
static cudaError_t
ensure(float **buf, size_t *cap, size_t need)
{
	cudaError_t rc;

	if (*cap >= need)
		return cudaSuccess;
	cudaFree(*buf);
	*buf = NULL;
	*cap = 0;
	rc = cudaMalloc((void **) buf, need * sizeof(float));
	if (rc == cudaSuccess)
		*cap = need;
	return rc;
}

/* Score a column-major host batch; see gs_cuda.h. */
extern "C" int
gs_cuda_predict(GsCudaModel *m, const float *x, size_t ld, size_t n_rows,
				float *out, char *err, size_t errlen)
{
	const int	threads = 256;
	size_t		blocks;

	if (n_rows == 0)
		return 0;
	if (ld != n_rows)
	{
		snprintf(err, errlen, "the GPU engine needs a dense batch (ld == n_rows)");
		return -1;
	}
	CUDA_TRY(ensure(&m->d_x, &m->cap_x, n_rows * (size_t) m->n_features), "cudaMalloc(batch)");
	CUDA_TRY(ensure(&m->d_out, &m->cap_out, n_rows * (size_t) m->n_outputs), "cudaMalloc(scores)");
	CUDA_TRY(cudaMemcpy(m->d_x, x, sizeof(float) * n_rows * m->n_features,
						cudaMemcpyHostToDevice), "cudaMemcpy(batch)");
	blocks = (n_rows + threads - 1) / threads;
	forest_predict_kernel<<<(unsigned int) blocks, threads>>>(m->nodes, m->tree_offset, m->tree_group,
															  m->base_margin, m->n_trees, m->n_groups,
															  m->transform, m->n_outputs, m->d_x,
															  n_rows, n_rows, m->d_out);
	CUDA_TRY(cudaGetLastError(), "forest_predict_kernel launch");
	CUDA_TRY(cudaMemcpy(out, m->d_out, sizeof(float) * n_rows * m->n_outputs,
						cudaMemcpyDeviceToHost), "cudaMemcpy(scores)");
	return 0;
}

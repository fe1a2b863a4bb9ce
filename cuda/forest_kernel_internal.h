/*
 * forest_kernel_internal.h
 *	  What the two translation units of the GPU tree kernels share, and
 *	  nothing else includes: the GsDeviceForest struct (opaque in
 *	  forest_kernel.h), the occupancy bounds of the kernels, two small
 *	  host helpers, and the entry points of the binned kernel
 *	  (forest_binned.cu) that forest_kernel.cu dispatches to.  CUDA C++,
 *	  for nvcc only.
 *
 * forest_kernel.cu: the rows and tiled kernels, gs_dforest_create_ex (which
 * hands binned plans to gs_dforest_create_binned), gs_dforest_predict and
 * the rest of forest_kernel.h.  forest_binned.cu: the binned kernel, its
 * binning pass, their plans and launches, and gs_dforest_bin.
 *
 * The functions declared here are hidden: the provider exports only the C
 * interfaces of forest_kernel.h, gs_cuda.h and mlp_gemm.h.
 */
#ifndef GS_FOREST_KERNEL_INTERNAL_H
#define GS_FOREST_KERNEL_INTERNAL_H

#include <cuda_runtime.h>

#include <stddef.h>

#include "forest_kernel.h"
#include "forest_layout.h"
#include "forest_binned.h"

/* Not exported from the provider's shared object. */
#define GS_DFOREST_INTERNAL __attribute__((visibility("hidden")))

struct GsDeviceForest
{
	int			device;			/* ordinal the memory lives on */
	int			n_sm;			/* multiprocessors of that device */
	int			blocks_per_sm;	/* resident blocks of the chosen kernel */
	GsLayout	plan;			/* the plan only: its arrays are freed */
	int32_t		n_trees;
	int32_t		n_features;
	int32_t		n_groups;
	int32_t		n_outputs;
	GsTransform transform;
	float		transform_param[2];
	GsVec4	   *d_nodes;
	GsTreeDesc *d_trees;
	GsTile	   *d_tiles;
	float	   *d_base_margin;
	float	   *d_leaf_lo;		/* GsLayout.leaf_lo on the device, or NULL:
								 * the kernels with double margins run */
	uint32_t   *d_cats;			/* category sets; NULL without categorical splits */
	uint32_t	split_kinds;	/* GsForest.split_kinds */
	/* binned plans (GS_KERNEL_BINNED): d_nodes holds the tree words */
	int			binned;
	GsBinnedLayout bplan;		/* the plan only: its arrays are freed */
	float	   *d_thr;
	uint32_t   *d_thr_off;
	cudaMemPool_t pool;			/* separate binning pass: bins scratch */
	size_t		device_bytes;
	char		name[256];
};

/*
 * The instances of a kernel template K<NGB, RPT, FLAG> as a dispatch table
 * [group bucket 1..32][rows per thread 1, 2, 4][FLAG false, true]; NULL
 * where NGB * RPT > 32 (the planners never ask for those).  The tiled
 * kernel's flag is "rows staged", the binned kernel's "binning fused".
 */
#define GS_KERNEL_PAIR(K, NG, R) { K<NG, R, false>, K<NG, R, true> }
#define GS_KERNEL_TABLE(K) { \
	{GS_KERNEL_PAIR(K, 1, 1), GS_KERNEL_PAIR(K, 1, 2), GS_KERNEL_PAIR(K, 1, 4)}, \
	{GS_KERNEL_PAIR(K, 2, 1), GS_KERNEL_PAIR(K, 2, 2), GS_KERNEL_PAIR(K, 2, 4)}, \
	{GS_KERNEL_PAIR(K, 4, 1), GS_KERNEL_PAIR(K, 4, 2), GS_KERNEL_PAIR(K, 4, 4)}, \
	{GS_KERNEL_PAIR(K, 8, 1), GS_KERNEL_PAIR(K, 8, 2), GS_KERNEL_PAIR(K, 8, 4)}, \
	{GS_KERNEL_PAIR(K, 16, 1), GS_KERNEL_PAIR(K, 16, 2), {NULL, NULL}}, \
	{GS_KERNEL_PAIR(K, 32, 1), {NULL, NULL}, {NULL, NULL}}, \
}

/*
 * Resident blocks per multiprocessor the register allocation must allow
 * (__launch_bounds__).  Without a minimum, ptxas aims at full occupancy
 * (32 registers at 256 threads) and spills the tiled kernels' lockstep
 * state; the tiled kernel is limited to about 2 blocks by shared memory
 * anyway (128 registers allowed), the rows kernel wants many warps to hide
 * global-memory latency (64 registers allowed).  The binned kernel is
 * bounded as the tiled one.
 */
#define GS_TILED_MIN_BLOCKS 2
#define GS_ROWS_MIN_BLOCKS 4

/* log2 of a power of two up to 32. */
static inline int
log2_small(int v)
{
	int			l = 0;

	while ((1 << l) < v)
		l++;
	return l;
}

/* cudaMalloc bytes and copy src into them; counts the bytes into *total. */
static inline cudaError_t
upload(void **dst, const void *src, size_t bytes, size_t *total)
{
	cudaError_t rc = cudaMalloc(dst, bytes ? bytes : 16);

	if (rc != cudaSuccess)
	{
		*dst = NULL;
		return rc;
	}
	*total += bytes ? bytes : 16;
	return bytes ? cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice) : cudaSuccess;
}

/*
 * The binned half of gs_dforest_create_ex (forest_binned.cu): lay f out
 * under options lo (lo->kernel == GS_KERNEL_BINNED, budget resolved; optin
 * the device's per-block limit) into df, whose device, n_sm and model
 * fields are filled.  0 with *out = df, or an error code with df freed.
 */
GS_DFOREST_INTERNAL int gs_dforest_create_binned(const GsForest *f,
												 const GsLayoutOptions *lo,
												 size_t optin,
												 GsDeviceForest *df,
												 GsDeviceForest **out);

/*
 * Score a batch with binned plan df (forest_binned.cu): outputs, or margins
 * with raw.  Arguments checked and the device verified by the caller
 * (gs_dforest_predict / gs_dforest_predict_margins).
 */
GS_DFOREST_INTERNAL int gs_dforest_predict_binned(const GsDeviceForest *df,
												  const float *d_x, size_t ld,
												  size_t n_rows, float *d_out,
												  void *stream, int raw);

#endif							/* GS_FOREST_KERNEL_INTERNAL_H */

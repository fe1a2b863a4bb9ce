/*
 * kernel_phases.h
 *	  The per-thread phases of the GPU scoring kernels, written once as
 *	  __host__ __device__ functions so that the CUDA kernels
 *	  (forest_kernel.cu, forest_binned.cu) and a CPU emulation of them
 *	  (tests/unit/test_kernel_emulation.c) run the very same code.
 *
 * Nothing here allocates or owns memory.  Every phase takes the thread
 * index, the block size, the block index and (where it uses one) the
 * shared-memory pointer explicitly, instead of reading threadIdx,
 * blockDim, blockIdx or an extern __shared__ array, so a plain C loop over
 * thread indices can stand in for a thread block.  The __global__ kernels
 * are thin shells: they call these phases with __syncthreads() between
 * them.  The emulation runs a phase for every thread index of a block
 * before starting the next phase, which is exactly what the barriers
 * guarantee on the device.
 *
 * Per-node logic (comparison, missing values, leaf test) is that of
 * src/core/forest/forest_eval.h, shared with the CPU engine; per row, margins
 * start at base_margin[g] and trees are added in model order, in float (in
 * double for forests with double leaves: kernel_margins.h), so the margins
 * are bit-identical to gs_cpu_margins().  The output transform
 * is forest_eval.h's gs_transform_row, whose gs_expf computes glibc's expf
 * algorithm on both sides, so outputs are bit-identical to gs_cpu_predict()
 * on the device too.
 *
 * This header is C11 when __CUDACC__ is not defined (GS_HD is then
 * "static inline") and CUDA C++ under nvcc.  Loop bounds that the kernels
 * pass as template constants (rows per thread, group bucket) arrive here as
 * ordinary int parameters: after inlining they are constants, the loops
 * marked GS_UNROLL unroll and the small per-thread arrays (margins, node
 * indices) live in registers.
 */
#ifndef GS_KERNEL_PHASES_H
#define GS_KERNEL_PHASES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "forest/forest_eval.h"

/* Full unrolling in device code only (host compilers would warn). */
#ifdef __CUDA_ARCH__
#define GS_UNROLL _Pragma("unroll")
#else
#define GS_UNROLL
#endif

#ifdef __cplusplus
#define GS_ALIGN16 alignas(16)
#else
#define GS_ALIGN16 _Alignas(16)
#endif

/* ---------------------------------------------------------------- */
/* output transform, bit-identical to the host's libm                */
/* ---------------------------------------------------------------- */

/* ---------------------------------------------------------------- */
/* kernel phases                                                     */
/* ---------------------------------------------------------------- */

/* Threads per block of every kernel here (a multiple of the warp size). */
#define GS_KTHREADS 256
/* Most margins per row kept in registers; models with more are refused. */
#define GS_KMAX_GROUPS 32
/* Most rows one thread of the tiled kernel scores at once (in lockstep). */
#define GS_KMAX_RPT 4
/* Trees up to this depth are walked branch-free for exactly depth steps. */
#define GS_KLOCKSTEP_MAX_DEPTH 16

/* 16 bytes: the unit in which nodes are copied into shared memory. */
typedef struct GsVec4
{
	GS_ALIGN16 uint32_t w[4];
} GsVec4;

/*
 * One tree as the kernels see it (16 bytes, one vector load).  first is the
 * index of the tree's first node in the device node array (GsNode units);
 * the tree's nodes are the n_nodes that follow, in the BFS order of
 * forest.h (child indices relative to first).
 */
typedef struct GsTreeDesc
{
	GS_ALIGN16 uint32_t first;
	uint32_t	n_nodes;
	int32_t		group;			/* output group the leaves add to */
	int32_t		depth;			/* edges from root to deepest leaf */
} GsTreeDesc;

/*
 * A tile: consecutive trees whose nodes are consecutive in the device node
 * array and fit in the tile region of shared memory together.  first_node
 * is a multiple of 4, so the tile starts on a 16-byte boundary (4 nodes =
 * 48 bytes = 3 vectors); n_vec vectors cover its nodes (rounded up to 4).
 */
typedef struct GsTile
{
	GS_ALIGN16 uint32_t first_tree;
	uint32_t	n_trees;
	uint32_t	first_node;
	uint32_t	n_vec;
} GsTile;

/*
 * Everything a kernel launch needs, passed by value.  Pointers are device
 * memory in a kernel and host memory in the emulation; the kernels never
 * write anything but out.
 */
typedef struct GsKernelArgs
{
	const GsVec4 *nodes;		/* node array (GsNode[] seen as vectors) */
	const GsTreeDesc *trees;	/* [n_trees] */
	const GsTile *tiles;		/* [n_tiles] */
	const float *base_margin;	/* [n_groups] */
	const float *leaf_lo;		/* [nodes] GsForest.leaf_lo by device node
								 * index (GsTreeDesc.first + i), or NULL:
								 * set exactly when the *_dbl phases run */
	const uint32_t *cats;		/* forest's category sets (cat_words), or
								 * NULL when it has no categorical split */
	uint32_t	split_kinds;	/* GsForest.split_kinds: 0 selects the
								 * branch-free gs_node_step_num */
	const float *x;				/* column-major batch: x[f * ld + r] */
	float	   *out;			/* outputs out[r * n_outputs + k], or margins
								 * out[r * n_groups + g] when raw_margins */
	size_t		ld;
	size_t		n_rows;
	int32_t		n_trees;
	uint32_t	n_tiles;
	uint32_t	tile_vecs;		/* tile region of shared memory, in vectors */
	int32_t		n_features;
	int32_t		n_groups;
	int32_t		n_outputs;
	int32_t		transform;		/* GsTransform */
	float		transform_param[2];	/* GsForest.transform_param */
	int32_t		raw_margins;	/* 1: write margins, 0: transformed outputs */
} GsKernelArgs;

/*
 * First row of block `block` when each of its nthreads threads owns rpt
 * rows.  Thread tid owns rows row0 + tid + k * nthreads (k < rpt), so for
 * each k a warp's rows are consecutive: coalesced reads of a column-major
 * batch, and conflict-free reads of the staged rows in shared memory.
 */
GS_HD size_t
gs_block_row0(size_t block, int nthreads, int rpt)
{
	return block * (size_t) nthreads * (size_t) rpt;
}

/*
 * Phase "stage rows" (tiled kernel, staged variant): thread tid of the
 * block copies its share of the block's nthreads * rpt rows, all features,
 * from the column-major batch into shared memory srows, also column-major
 * with stride chunk = nthreads * rpt: srows[f * chunk + r].  Consecutive
 * threads copy consecutive rows of one feature, so the global reads are
 * coalesced.  Rows past the end of the batch are filled with 0.
 */
GS_HD void
gs_phase_stage_rows(const GsKernelArgs *a, size_t block, int tid, int nthreads,
					int rpt, float *srows)
{
	const uint32_t chunk = (uint32_t) nthreads * (uint32_t) rpt;
	const uint32_t total = chunk * (uint32_t) a->n_features;
	const size_t row0 = gs_block_row0(block, nthreads, rpt);

	for (uint32_t i = (uint32_t) tid; i < total; i += (uint32_t) nthreads)
	{
		uint32_t	f = i / chunk;
		uint32_t	r = i - f * chunk;

		srows[i] = row0 + r < a->n_rows ? a->x[(size_t) f * a->ld + row0 + r] : 0.0f;
	}
}

/*
 * Phase "load tile": thread tid copies its share of tile `tile`'s nodes
 * from the device node array into the tile region smem (the start of
 * dynamic shared memory), 16 bytes at a time; consecutive threads copy
 * consecutive vectors, so the reads are coalesced.
 */
GS_HD void
gs_phase_load_tile(const GsKernelArgs *a, uint32_t tile, int tid, int nthreads,
				   GsVec4 *smem)
{
	const GsTile t = a->tiles[tile];
	const GsVec4 *src = a->nodes + (size_t) t.first_node / 4 * 3;

	for (uint32_t i = (uint32_t) tid; i < t.n_vec; i += (uint32_t) nthreads)
		smem[i] = src[i];
}

/*
 * The phases that hold a thread's margins, twice: with float margins
 * (gs_phase_init, ...: every forest without GsForest.leaf_lo, summed as
 * XGBoost sums) and with double margins (gs_phase_init_dbl, ...: forests
 * with double leaves, summed as LightGBM sums).  kernel_margins.h is
 * written once over the margin type, in the manner of PostgreSQL's
 * lib/sort_template.h.
 */
#define GS_M_T float
#define GS_M(name) name
#define GS_M_DOUBLE 0
#include "kernel_margins.h"

#define GS_M_T double
#define GS_M(name) name##_dbl
#define GS_M_DOUBLE 1
#include "kernel_margins.h"

#endif							/* GS_KERNEL_PHASES_H */

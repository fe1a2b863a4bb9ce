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
 * src/core/forest_eval.h, shared with the CPU engine; per row, margins
 * start at base_margin[g] and trees are added in model order in float, so
 * the margins are bit-identical to gs_cpu_margins().  The output transform
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

#include "../src/core/forest_eval.h"

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
	int32_t		raw_margins;	/* 1: write margins, 0: transformed outputs */
} GsKernelArgs;

/*
 * Add leaf value v to margin g of one row whose margins are m[0..ngb).
 * The group index is a run-time value, so instead of m[g] (which would
 * force the margins into local memory) every slot compares its index: with
 * ngb a constant the loop unrolls into ngb predicated adds on registers.
 * The add itself is the same single float add as the CPU engine's.
 */
GS_HD void
gs_margin_add(float *m, int ngb, int32_t g, float v)
{
	if (ngb == 1)
	{
		m[0] += v;
		return;
	}
	GS_UNROLL
	for (int s = 0; s < ngb; s++)
		if (s == g)
			m[s] += v;
}

/*
 * Add the leaves of trees t0..t1-1 (in that order) to the margins of rpt
 * rows of one thread.
 *
 * nodes holds the trees' nodes, with tree t's first node at
 * nodes[trees[t].first - node_base] (shared memory with node_base = the
 * tile's first node, or the whole device array with node_base = 0).  Row k
 * of the thread (k < rpt) is row min(row_first + k * row_step, row_last) of
 * x, whose feature f is x[row + f * stride]; rows past row_last are
 * clamped onto it so that every lane walks valid data (their results are
 * never written).  m[k * ngb + g] is margin g of row k.
 *
 * Trees of depth <= GS_KLOCKSTEP_MAX_DEPTH are walked with the branch-free
 * gs_node_step_num (gs_node_step when kinds, the forest's split_kinds, says
 * it has categorical or zero-as-missing splits) for exactly depth steps (a
 * leaf absorbs), the rpt rows
 * interleaved so their independent loads overlap; the loop bound is the
 * same for every lane of a warp, since they all walk the same tree.
 * Deeper trees use the plain gs_tree_leaf walk.
 */
GS_HD void
gs_walk_trees(const GsNode *nodes, uint32_t node_base,
			  const GsTreeDesc *trees, uint32_t t0, uint32_t t1,
			  const float *x, size_t stride, size_t row_first, size_t row_step,
			  size_t row_last, int rpt, int ngb, float *m, const uint32_t *cats,
			  uint32_t kinds)
{
	const float *xr[GS_KMAX_RPT];
	GsTreeDesc	next;

	GS_UNROLL
	for (int k = 0; k < rpt; k++)
	{
		size_t		r = row_first + (size_t) k * row_step;

		xr[k] = x + (r < row_last ? r : row_last);
	}
	if (t0 >= t1)
		return;
	next = trees[t0];
	for (uint32_t t = t0; t < t1; t++)
	{
		const GsTreeDesc d = next;
		const GsNode *tree = nodes + (d.first - node_base);
		float		leaf[GS_KMAX_RPT];

		/* fetch the next descriptor while this tree is walked */
		next = trees[t + 1 < t1 ? t + 1 : t];

		if (d.depth <= GS_KLOCKSTEP_MAX_DEPTH)
		{
			uint32_t	idx[GS_KMAX_RPT];

			GS_UNROLL
			for (int k = 0; k < rpt; k++)
				idx[k] = 0;
			/* kinds is the same for every thread: a uniform branch */
			if (kinds == 0)
				for (int32_t s = 0; s < d.depth; s++)
				{
					GS_UNROLL
					for (int k = 0; k < rpt; k++)
						idx[k] = gs_node_step_num(tree, idx[k], xr[k], stride);
				}
			else
				for (int32_t s = 0; s < d.depth; s++)
				{
					GS_UNROLL
					for (int k = 0; k < rpt; k++)
						idx[k] = gs_node_step(tree, idx[k], xr[k], stride, cats);
				}
			GS_UNROLL
			for (int k = 0; k < rpt; k++)
				leaf[k] = tree[idx[k]].value;
		}
		else
		{
			GS_UNROLL
			for (int k = 0; k < rpt; k++)
				leaf[k] = gs_tree_leaf(tree, xr[k], stride, cats);
		}
		GS_UNROLL
		for (int k = 0; k < rpt; k++)
			gs_margin_add(m + k * ngb, ngb, d.group, leaf[k]);
	}
}

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
 * Phase "init": set the thread's rpt x ngb margins to the base margins
 * (slots past n_groups, which exist only to round ngb up, to 0).
 */
GS_HD void
gs_phase_init(const GsKernelArgs *a, int rpt, int ngb, float *m)
{
	GS_UNROLL
	for (int k = 0; k < rpt; k++)
	{
		GS_UNROLL
		for (int g = 0; g < ngb; g++)
			m[k * ngb + g] = g < a->n_groups ? a->base_margin[g] : 0.0f;
	}
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
 * Phase "walk tile": thread tid adds the leaves of tile `tile`'s trees (in
 * tree order) to the margins m of its rpt rows.  The tile's nodes are in
 * smem (loaded by gs_phase_load_tile); the rows are read from the staged
 * copy after the tile region (staged = 1) or from the batch in global
 * memory (staged = 0).
 */
GS_HD void
gs_phase_walk_tile(const GsKernelArgs *a, uint32_t tile, size_t block, int tid,
				   int nthreads, int rpt, int ngb, int staged,
				   const GsVec4 *smem, float *m)
{
	const GsTile t = a->tiles[tile];
	const GsNode *nodes = (const GsNode *) smem;

	if (staged)
	{
		const size_t chunk = (size_t) nthreads * (size_t) rpt;

		gs_walk_trees(nodes, t.first_node, a->trees, t.first_tree,
					  t.first_tree + t.n_trees,
					  (const float *) (smem + a->tile_vecs), chunk,
					  (size_t) tid, (size_t) nthreads, chunk - 1, rpt, ngb, m, a->cats, a->split_kinds);
	}
	else
		gs_walk_trees(nodes, t.first_node, a->trees, t.first_tree,
					  t.first_tree + t.n_trees, a->x, a->ld,
					  gs_block_row0(block, nthreads, rpt) + (size_t) tid,
					  (size_t) nthreads, a->n_rows - 1, rpt, ngb, m, a->cats, a->split_kinds);
}

/*
 * Phase "output": thread tid writes, for each of its rows inside the
 * batch, either its margins (raw_margins) or the transformed outputs
 * (gs_transform_row: the CPU engine's gs_transform_row, bit for
 * bit).  With ngb == 1 the group count is
 * the constant 1, so the transform stays in registers; otherwise the
 * margins are copied into a small array for it.
 */
GS_HD void
gs_phase_output(const GsKernelArgs *a, size_t block, int tid, int nthreads,
				int rpt, int ngb, const float *m)
{
	const size_t row0 = gs_block_row0(block, nthreads, rpt) + (size_t) tid;
	const int	ng = ngb == 1 ? 1 : a->n_groups;

	GS_UNROLL
	for (int k = 0; k < rpt; k++)
	{
		size_t		r = row0 + (size_t) k * (size_t) nthreads;
		float		mm[GS_KMAX_GROUPS];
		float		o[GS_KMAX_GROUPS];
		int			no;

		if (r >= a->n_rows)
			continue;
		GS_UNROLL
		for (int g = 0; g < ngb; g++)
			mm[g] = m[k * ngb + g];
		if (a->raw_margins)
		{
			for (int g = 0; g < ng; g++)
				a->out[r * (size_t) ng + (size_t) g] = mm[g];
			continue;
		}
		gs_transform_row((GsTransform) a->transform, mm, ng, o);
		no = ngb == 1 ? 1 : a->n_outputs;
		for (int j = 0; j < no; j++)
			a->out[r * (size_t) no + (size_t) j] = o[j];
	}
}

/*
 * The whole of the rows kernel for one thread (it has no shared memory and
 * no barrier): one row per thread, every tree from the device node array.
 */
GS_HD void
gs_rows_thread(const GsKernelArgs *a, size_t block, int tid, int nthreads,
			   int ngb, float *m)
{
	gs_phase_init(a, 1, ngb, m);
	gs_walk_trees((const GsNode *) a->nodes, 0, a->trees, 0,
				  (uint32_t) a->n_trees, a->x, a->ld,
				  gs_block_row0(block, nthreads, 1) + (size_t) tid, 0,
				  a->n_rows - 1, 1, ngb, m, a->cats, a->split_kinds);
	gs_phase_output(a, block, tid, nthreads, 1, ngb, m);
}

#endif							/* GS_KERNEL_PHASES_H */

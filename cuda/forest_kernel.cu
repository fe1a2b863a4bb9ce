/*
 * forest_kernel.cu
 *	  The GPU scoring kernels and their host side: per-model device layout
 *	  (gs_dforest_create), kernel choice and launch (gs_dforest_predict).
 *	  Interface and ownership rules: forest_kernel.h.
 *
 * Two kernels, both thin shells around the phases of kernel_phases.h (the
 * code a CPU emulation runs too, tests/unit/test_kernel_emulation.c):
 *
 *	forest_rows_kernel<NGB>: one thread per row walks every tree from the
 *	  node array in global memory (read through the read-only data cache),
 *	  margins in registers.  The baseline, and the fallback when a single
 *	  tree is too large for shared memory.
 *
 *	forest_tiled_kernel<NGB, RPT, STAGED>: a block of GS_KTHREADS threads
 *	  owns GS_KTHREADS * RPT rows (RPT per thread, margins in registers)
 *	  and streams the forest through shared memory one tile (consecutive
 *	  trees) at a time: all threads copy the tile in, barrier, each walks
 *	  the tile's trees for its rows in tree order, barrier, next tile.
 *	  With STAGED the block's rows are first copied into shared memory
 *	  too (column-major, conflict-free reads), otherwise they are read
 *	  from the batch in global memory.
 *
 *	forest_binned_kernel<NGB, RPT, FUSED> (GS_KERNEL_BINNED, never chosen
 *	  automatically until measured): forests laid out by forest_binned.h,
 *	  phases in binned_phases.h.  Each row's features are quantized once
 *	  to uint16 bins (number of the feature's split thresholds <= value),
 *	  staged in shared memory, and every tree is a complete tree walked
 *	  level by level for exactly its depth with 4-byte nodes compared as
 *	  small integers, no leaf test and no data-dependent branch.  FUSED:
 *	  the block bins its own rows from the float batch; otherwise
 *	  forest_bin_kernel bins the batch first into device scratch (see
 *	  predict_binned).  The tiles stream through shared memory exactly as
 *	  in the tiled kernel.
 *
 * Every kernel ends with the output transform of kernel_phases.h
 * (gs_transform_row of forest_eval.h, whose gs_expf is glibc's expf algorithm),
 * so margins and outputs are bit-identical to the CPU engine's.
 *
 * NGB is the number of margins per row rounded up to a power of two (at
 * most 32); RPT is 1, 2 or 4 with NGB * RPT <= 32.  The tile plan (which
 * kernel, tile size, staging, rows per thread) is made on the host by
 * forest_layout.h from the device's shared-memory limits.
 *
 * Device memory: gs_dforest_create cudaMalloc's the node array, the tree
 * descriptors, the tiles and the base margins (binned plans: the tree
 * words and the threshold tables too); gs_dforest_free releases them.
 * Nothing is allocated per batch, except by binned plans with a separate
 * binning pass, whose bins scratch comes from a stream-ordered memory pool
 * owned by the GsDeviceForest (see predict_binned).
 */
#include <cuda_runtime.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest_kernel.h"
#include "forest_layout.h"
#include "forest_binned.h"

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
	GsVec4	   *d_nodes;
	GsTreeDesc *d_trees;
	GsTile	   *d_tiles;
	float	   *d_base_margin;
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
 * Resident blocks per multiprocessor the register allocation must allow
 * (__launch_bounds__).  Without a minimum, ptxas aims at full occupancy
 * (32 registers at 256 threads) and spills the tiled kernels' lockstep
 * state; the tiled kernel is limited to about 2 blocks by shared memory
 * anyway (128 registers allowed), the rows kernel wants many warps to hide
 * global-memory latency (64 registers allowed).
 */
#define GS_TILED_MIN_BLOCKS 2
#define GS_ROWS_MIN_BLOCKS 4

typedef void (*GsKernelFn) (const GsKernelArgs, const GsVec4 *,
							const GsTreeDesc *, const float *, float *);

/*
 * The kernel arguments with the pointers the kernel reads replaced by the
 * same pointers received as const __restrict__ kernel parameters.  The
 * compiler proves a load read-only (and sends it through the read-only
 * data cache, LDG.E.CONSTANT) only for memory reached from such
 * parameters, not from pointers inside a struct parameter.
 */
static __device__ __forceinline__ GsKernelArgs
with_restrict(GsKernelArgs a, const GsVec4 *__restrict__ nodes,
			  const GsTreeDesc *__restrict__ trees, const float *__restrict__ x,
			  float *__restrict__ out)
{
	a.nodes = nodes;
	a.trees = trees;
	a.x = x;
	a.out = out;
	return a;
}

/*
 * Kernel (a): one thread per row; see the file header and gs_rows_thread.
 */
template <int NGB>
__global__ void __launch_bounds__(GS_KTHREADS, GS_ROWS_MIN_BLOCKS)
forest_rows_kernel(const GsKernelArgs args, const GsVec4 *__restrict__ nodes,
				   const GsTreeDesc *__restrict__ trees,
				   const float *__restrict__ x, float *__restrict__ out)
{
	const GsKernelArgs a = with_restrict(args, nodes, trees, x, out);
	float		m[NGB];

	gs_rows_thread(&a, blockIdx.x, (int) threadIdx.x, GS_KTHREADS, NGB, m);
}

/*
 * Kernel (b): trees tiled through shared memory while the block's rows
 * stay put.  Dynamic shared memory: [tile region: a.tile_vecs vectors]
 * [staged rows, STAGED only].  The barrier before a tile's load keeps the
 * previous tile alive until every thread has walked it; the barrier after
 * it publishes the tile (and, for the first tile, the staged rows).
 */
template <int NGB, int RPT, bool STAGED>
__global__ void __launch_bounds__(GS_KTHREADS, GS_TILED_MIN_BLOCKS)
forest_tiled_kernel(const GsKernelArgs args, const GsVec4 *__restrict__ nodes,
					const GsTreeDesc *__restrict__ trees,
					const float *__restrict__ x, float *__restrict__ out)
{
	extern __shared__ GsVec4 gs_smem[];
	const GsKernelArgs a = with_restrict(args, nodes, trees, x, out);
	float		m[NGB * RPT];
	const int	tid = (int) threadIdx.x;
	const size_t block = blockIdx.x;

	gs_phase_init(&a, RPT, NGB, m);
	if (STAGED)
		gs_phase_stage_rows(&a, block, tid, GS_KTHREADS, RPT,
							(float *) (gs_smem + a.tile_vecs));
	for (uint32_t i = 0; i < a.n_tiles; i++)
	{
		if (i > 0)
			__syncthreads();
		gs_phase_load_tile(&a, i, tid, GS_KTHREADS, gs_smem);
		__syncthreads();
		gs_phase_walk_tile(&a, i, block, tid, GS_KTHREADS, RPT, NGB, STAGED,
						   gs_smem, m);
	}
	gs_phase_output(&a, block, tid, GS_KTHREADS, RPT, NGB, m);
}

/*
 * Kernel (c): the binned kernel; see the file header and binned_phases.h.
 * Dynamic shared memory: [tile region: a.k.tile_vecs vectors][the block's
 * bins, GS_KTHREADS * RPT rows x n_features uint16].  The trees go through
 * shared-memory tiles rather than the read-only cache: a level-order walk
 * of complete trees sends the 32 lanes of a warp to up to 32 scattered
 * words per level (up to 32 sectors through a cache, a few bank conflicts
 * in shared memory), and each tile, loaded once with coalesced 16-byte
 * copies, serves the block's GS_KTHREADS * RPT rows.  Bins are staged as
 * uint16: half the bytes of staged floats, so more rows per thread fit.
 */
typedef void (*GsBinnedKernelFn) (const GsBinnedArgs, const GsVec4 *,
								  const GsTreeDesc *, const float *,
								  const uint16_t *, const float *, float *);

template <int NGB, int RPT, bool FUSED>
__global__ void __launch_bounds__(GS_KTHREADS, GS_TILED_MIN_BLOCKS)
forest_binned_kernel(const GsBinnedArgs args, const GsVec4 *__restrict__ words,
					 const GsTreeDesc *__restrict__ trees,
					 const float *__restrict__ x, const uint16_t *__restrict__ bins,
					 const float *__restrict__ thr, float *__restrict__ out)
{
	extern __shared__ GsVec4 gs_smem[];
	GsBinnedArgs a = args;
	float		m[NGB * RPT];
	const int	tid = (int) threadIdx.x;
	const size_t block = blockIdx.x;

	/* the pointers as const __restrict__ parameters: see with_restrict */
	a.k.nodes = words;
	a.k.trees = trees;
	a.k.x = x;
	a.k.out = out;
	a.bins = (uint16_t *) bins;
	a.thr = thr;
	gs_phase_init(&a.k, RPT, NGB, m);
	gs_phase_stage_bins(&a, block, tid, GS_KTHREADS, RPT, FUSED ? 1 : 0,
						(uint16_t *) (gs_smem + a.k.tile_vecs));
	for (uint32_t i = 0; i < a.k.n_tiles; i++)
	{
		if (i > 0)
			__syncthreads();
		gs_phase_load_btile(&a, i, tid, GS_KTHREADS, gs_smem);
		__syncthreads();
		gs_phase_walk_btile(&a, i, tid, GS_KTHREADS, RPT, NGB, gs_smem, m);
	}
	gs_phase_output(&a.k, block, tid, GS_KTHREADS, RPT, NGB, m);
}

/*
 * Kernel (d): the separate binning pass of binned plans (a grid-stride
 * loop over the batch's n_rows x n_features values; gs_bin_thread).
 */
__global__ void __launch_bounds__(GS_KTHREADS)
forest_bin_kernel(const GsBinnedArgs args, const float *__restrict__ x,
				  const float *__restrict__ thr, uint16_t *__restrict__ bins)
{
	GsBinnedArgs a = args;

	a.k.x = x;
	a.thr = thr;
	a.bins = bins;
	gs_bin_thread(&a, (size_t) blockIdx.x * blockDim.x + threadIdx.x,
				  (size_t) gridDim.x * blockDim.x);
}

/* Binned kernels by [group bucket][rows per thread 1, 2, 4][fused]. */
#define GS_BINNED_PAIR(NG, R) \
	{ forest_binned_kernel<NG, R, false>, forest_binned_kernel<NG, R, true> }
static const GsBinnedKernelFn binned_table[6][3][2] = {
	{GS_BINNED_PAIR(1, 1), GS_BINNED_PAIR(1, 2), GS_BINNED_PAIR(1, 4)},
	{GS_BINNED_PAIR(2, 1), GS_BINNED_PAIR(2, 2), GS_BINNED_PAIR(2, 4)},
	{GS_BINNED_PAIR(4, 1), GS_BINNED_PAIR(4, 2), GS_BINNED_PAIR(4, 4)},
	{GS_BINNED_PAIR(8, 1), GS_BINNED_PAIR(8, 2), GS_BINNED_PAIR(8, 4)},
	{GS_BINNED_PAIR(16, 1), GS_BINNED_PAIR(16, 2), {NULL, NULL}},
	{GS_BINNED_PAIR(32, 1), {NULL, NULL}, {NULL, NULL}},
};

/* Rows kernels by group bucket (1, 2, 4, ..., 32). */
static const GsKernelFn rows_table[6] = {
	forest_rows_kernel<1>, forest_rows_kernel<2>, forest_rows_kernel<4>,
	forest_rows_kernel<8>, forest_rows_kernel<16>, forest_rows_kernel<32>
};

/*
 * Tiled kernels by [group bucket][rows per thread 1, 2, 4][staged]; NULL
 * where NGB * RPT > 32 (the planner never asks for those).
 */
#define GS_TILED_PAIR(NG, R) \
	{ forest_tiled_kernel<NG, R, false>, forest_tiled_kernel<NG, R, true> }
static const GsKernelFn tiled_table[6][3][2] = {
	{GS_TILED_PAIR(1, 1), GS_TILED_PAIR(1, 2), GS_TILED_PAIR(1, 4)},
	{GS_TILED_PAIR(2, 1), GS_TILED_PAIR(2, 2), GS_TILED_PAIR(2, 4)},
	{GS_TILED_PAIR(4, 1), GS_TILED_PAIR(4, 2), GS_TILED_PAIR(4, 4)},
	{GS_TILED_PAIR(8, 1), GS_TILED_PAIR(8, 2), GS_TILED_PAIR(8, 4)},
	{GS_TILED_PAIR(16, 1), GS_TILED_PAIR(16, 2), {NULL, NULL}},
	{GS_TILED_PAIR(32, 1), {NULL, NULL}, {NULL, NULL}},
};

/* log2 of a power of two up to 32. */
static int
log2_small(int v)
{
	int			l = 0;

	while ((1 << l) < v)
		l++;
	return l;
}

/* The kernel for plan p launched with rpt rows per thread (NULL: none). */
static GsKernelFn
pick_kernel(const GsLayout *p, int rpt)
{
	int			g = log2_small(p->ngb);

	if (g > 5)
		return NULL;
	if (p->kernel == GS_KERNEL_ROWS)
		return rows_table[g];
	return tiled_table[g][log2_small(rpt)][p->staged ? 1 : 0];
}

/* The binned kernel for binned plan p at rpt rows per thread (or NULL). */
static GsBinnedKernelFn
pick_binned(const GsBinnedLayout *p, int rpt)
{
	int			g = log2_small(p->ngb);

	if (g > 5)
		return NULL;
	return binned_table[g][log2_small(rpt)][p->fused ? 1 : 0];
}

/*
 * Default shared-memory budget of a tiled block on the current device:
 * half of a multiprocessor's shared memory (less the per-block reserve),
 * so that two blocks fit on each multiprocessor and one can load its tile
 * while the other walks; never above the per-block opt-in limit.  The
 * conservative GS_SMEM_FALLBACK when the device cannot be asked.
 */
static size_t
default_budget(int dev, size_t *optin_out)
{
	int			optin = 0,
				per_sm = 0,
				reserved = 0;
	size_t		b;

	*optin_out = GS_SMEM_FALLBACK;
	if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
		cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
		cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess ||
		optin <= 0 || per_sm <= 0)
	{
		cudaGetLastError();		/* clear it: this is not fatal */
		return GS_SMEM_FALLBACK;
	}
	*optin_out = (size_t) optin;
	b = (size_t) per_sm / 2 - (size_t) reserved;
	if (b > (size_t) optin)
		b = (size_t) optin;
	if (b < GS_SMEM_FALLBACK)
		b = GS_SMEM_FALLBACK < (size_t) optin ? GS_SMEM_FALLBACK : (size_t) optin;
	return b;
}

/* cudaMalloc bytes and copy src into them; counts the bytes into *total. */
static cudaError_t
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

/* Release a device forest; see forest_kernel.h. */
extern "C" void
gs_dforest_free(GsDeviceForest *df)
{
	if (df == NULL)
		return;
	cudaFree(df->d_nodes);
	cudaFree(df->d_trees);
	cudaFree(df->d_tiles);
	cudaFree(df->d_base_margin);
	cudaFree(df->d_cats);
	cudaFree(df->d_thr);
	cudaFree(df->d_thr_off);
	if (df->pool)
		cudaMemPoolDestroy(df->pool);
	free(df);
}

/*
 * The binned half of gs_dforest_create_ex: lay f out with forest_binned.h
 * under options lo (budget already resolved; optin the device's per-block
 * limit), upload it into df and fill df's plan and name.  For a separate
 * binning pass, also create df's memory pool for the bins scratch: a
 * stream-ordered pool (cudaMallocFromPoolAsync / cudaFreeAsync per predict
 * call) whose release threshold keeps its memory after the first call, so
 * later calls allocate without a device synchronisation or an OS call, and
 * concurrent calls on different streams each get their own scratch (the
 * GsDeviceForest stays immutable and shareable).  On failure df is freed.
 */
static int
create_binned(const GsForest *f, const GsLayoutOptions *lo, size_t optin,
			  GsDeviceForest *df, GsDeviceForest **out)
{
	GsBinnedLayout l;
	cudaError_t rc;
	int			lrc = gs_binned_build(f, lo, &l);

	if (lrc != GS_LAYOUT_OK)
	{
		free(df);
		return lrc;				/* GS_LAYOUT_E*, GS_BINNED_E* == GS_DFOREST_E* */
	}
	df->binned = 1;
	if ((rc = upload((void **) &df->d_nodes, l.words, sizeof(uint32_t) * l.n_words, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_trees, l.trees, sizeof(GsTreeDesc) * (size_t) l.n_trees, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_tiles, l.tiles, sizeof(GsTile) * (size_t) l.n_tiles, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_base_margin, f->base_margin, sizeof(float) * (size_t) f->n_groups, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_thr, l.thr, sizeof(float) * (size_t) l.n_thr, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_thr_off, l.thr_off, sizeof(uint32_t) * ((size_t) f->n_features + 1), &df->device_bytes)) != cudaSuccess)
	{
		gs_binned_free(&l);
		gs_dforest_free(df);
		return (int) rc;
	}
	gs_binned_free(&l);			/* keep the plan, drop the host arrays */
	df->bplan = l;

	if (!df->bplan.fused)
	{
		cudaMemPoolProps props;
		int			supported = 0;
		uint64_t	keep = UINT64_MAX;

		memset(&props, 0, sizeof(props));
		props.allocType = cudaMemAllocationTypePinned;
		props.location.type = cudaMemLocationTypeDevice;
		props.location.id = df->device;
		if ((rc = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, df->device)) != cudaSuccess ||
			(supported == 0 && (rc = cudaErrorNotSupported) != cudaSuccess) ||
			(rc = cudaMemPoolCreate(&df->pool, &props)) != cudaSuccess ||
			(rc = cudaMemPoolSetAttribute(df->pool, cudaMemPoolAttrReleaseThreshold, &keep)) != cudaSuccess)
		{
			gs_dforest_free(df);
			return (int) rc;
		}
	}

	/* as for the tiled kernel: the opt-in maximum, and the occupancy */
	for (int rpt = 1; rpt <= df->bplan.max_rpt; rpt *= 2)
	{
		GsBinnedKernelFn fn = pick_binned(&df->bplan, rpt);
		int			nb = 0;

		if (fn == NULL)
		{
			gs_dforest_free(df);
			return GS_DFOREST_EINVAL;
		}
		if ((rc = cudaFuncSetAttribute((const void *) fn,
									   cudaFuncAttributeMaxDynamicSharedMemorySize,
									   (int) optin)) != cudaSuccess ||
			(rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, GS_KTHREADS,
																gs_binned_smem_bytes(&df->bplan, rpt))) != cudaSuccess)
		{
			gs_dforest_free(df);
			return (int) rc;
		}
		if (rpt == df->bplan.max_rpt)
			df->blocks_per_sm = nb;
	}
	snprintf(df->name, sizeof(df->name),
			 "forest_binned_kernel<%d> (%s binning, %u thresholds, <= %d rows/thread, %u tiles of <= %u B, "
			 "complete trees of depth <= %d, smem <= %zu B, %d blocks/SM)",
			 df->bplan.ngb, df->bplan.fused ? "fused" : "separate", df->bplan.n_thr,
			 df->bplan.max_rpt, df->bplan.n_tiles, df->bplan.tile_vecs * 16u,
			 df->bplan.max_depth, gs_binned_smem_bytes(&df->bplan, df->bplan.max_rpt),
			 df->blocks_per_sm);
	*out = df;
	return 0;
}

/* Build and upload a device forest with options; see forest_kernel.h. */
extern "C" int
gs_dforest_create_ex(const GsForest *f, const GsDForestOptions *opt,
					 GsDeviceForest **out)
{
	GsLayoutOptions lo;
	GsLayout	l;
	GsDeviceForest *df;
	size_t		optin;
	cudaError_t rc;
	int			lrc;

	if (out == NULL)
		return GS_DFOREST_EINVAL;
	*out = NULL;
	if (f == NULL || f->n_groups < 1 || f->n_outputs < 1 || f->n_features < 1)
		return GS_DFOREST_EINVAL;
	if (f->n_groups > GS_KMAX_GROUPS)
		return GS_DFOREST_ETOO_MANY_GROUPS;

	df = (GsDeviceForest *) calloc(1, sizeof(GsDeviceForest));
	if (df == NULL)
		return GS_DFOREST_ENOMEM;
	if ((rc = cudaGetDevice(&df->device)) != cudaSuccess ||
		(rc = cudaDeviceGetAttribute(&df->n_sm, cudaDevAttrMultiProcessorCount, df->device)) != cudaSuccess)
	{
		free(df);
		return (int) rc;
	}

	memset(&lo, 0, sizeof(lo));
	if (opt)
	{
		lo.kernel = opt->kernel;
		lo.smem_budget = opt->smem_budget;
		lo.max_rpt = opt->max_rpt;
		lo.stage_rows = opt->stage_rows;
		lo.bin_pass = opt->bin_pass;
	}
	{
		size_t		def = default_budget(df->device, &optin);

		if (lo.smem_budget == 0)
			lo.smem_budget = def;
		else if (lo.smem_budget > optin)
		{
			free(df);
			return GS_DFOREST_EINVAL;
		}
	}
	df->n_trees = f->n_trees;
	df->n_features = f->n_features;
	df->n_groups = f->n_groups;
	df->n_outputs = f->n_outputs;
	df->transform = f->transform;
	df->split_kinds = f->split_kinds;
	if (lo.kernel == GS_KERNEL_BINNED)
		return create_binned(f, &lo, optin, df, out);
	lrc = gs_layout_build(f, &lo, &l);
	if (lrc != GS_LAYOUT_OK)
	{
		free(df);
		return lrc;				/* GS_LAYOUT_E* == GS_DFOREST_E* */
	}

	if ((rc = upload((void **) &df->d_nodes, l.nodes, sizeof(GsVec4) * l.n_vecs, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_trees, l.trees, sizeof(GsTreeDesc) * (size_t) l.n_trees, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_tiles, l.tiles, sizeof(GsTile) * (size_t) l.n_tiles, &df->device_bytes)) != cudaSuccess ||
		(rc = upload((void **) &df->d_base_margin, f->base_margin, sizeof(float) * (size_t) f->n_groups, &df->device_bytes)) != cudaSuccess ||
		(f->n_cat_words > 0 &&
		 (rc = upload((void **) &df->d_cats, f->cat_words, sizeof(uint32_t) * (size_t) f->n_cat_words, &df->device_bytes)) != cudaSuccess))
	{
		gs_layout_free(&l);
		gs_dforest_free(df);
		return (int) rc;
	}
	gs_layout_free(&l);			/* keep the plan, drop the host arrays */
	df->plan = l;

	/*
	 * Allow the kernels this model may launch the opt-in shared memory.
	 * Always the device maximum (not this model's need), so that models
	 * sharing a kernel never lower each other's limit.
	 */
	df->blocks_per_sm = 0;
	for (int rpt = 1; rpt <= df->plan.max_rpt; rpt *= 2)
	{
		GsKernelFn	fn = pick_kernel(&df->plan, rpt);
		size_t		smem = gs_layout_smem_bytes(&df->plan, rpt, df->n_features);
		int			nb = 0;

		if (fn == NULL)
		{
			gs_dforest_free(df);
			return GS_DFOREST_EINVAL;
		}
		if (df->plan.kernel == GS_KERNEL_TILED &&
			(rc = cudaFuncSetAttribute((const void *) fn,
									   cudaFuncAttributeMaxDynamicSharedMemorySize,
									   (int) optin)) != cudaSuccess)
		{
			gs_dforest_free(df);
			return (int) rc;
		}
		if ((rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, GS_KTHREADS, smem)) != cudaSuccess)
		{
			gs_dforest_free(df);
			return (int) rc;
		}
		if (rpt == df->plan.max_rpt)
			df->blocks_per_sm = nb;
	}

	if (df->plan.kernel == GS_KERNEL_TILED)
		snprintf(df->name, sizeof(df->name),
				 "forest_tiled_kernel<%d> (%s rows, <= %d rows/thread, %u tiles of <= %u B, smem <= %zu B, %d blocks/SM)",
				 df->plan.ngb, df->plan.staged ? "staged" : "global",
				 df->plan.max_rpt, df->plan.n_tiles, df->plan.tile_vecs * 16u,
				 gs_layout_smem_bytes(&df->plan, df->plan.max_rpt, df->n_features),
				 df->blocks_per_sm);
	else
		snprintf(df->name, sizeof(df->name), "forest_rows_kernel<%d> (%s)",
				 df->plan.ngb, df->plan.why);
	*out = df;
	return 0;
}

/* Build and upload a device forest; see forest_kernel.h. */
extern "C" int
gs_dforest_create(const GsForest *f, GsDeviceForest **out)
{
	return gs_dforest_create_ex(f, NULL, out);
}

/* Kernel arguments of binned plan df for a batch (pointers but bins). */
static GsBinnedArgs
binned_args(const GsDeviceForest *df, const float *d_x, size_t ld, size_t n_rows,
			float *d_out, int raw)
{
	GsBinnedArgs a;

	memset(&a, 0, sizeof(a));
	a.k.nodes = df->d_nodes;
	a.k.trees = df->d_trees;
	a.k.tiles = df->d_tiles;
	a.k.base_margin = df->d_base_margin;
	a.k.x = d_x;
	a.k.out = d_out;
	a.k.ld = ld;
	a.k.n_rows = n_rows;
	a.k.n_trees = df->n_trees;
	a.k.n_tiles = df->bplan.n_tiles;
	a.k.tile_vecs = df->bplan.tile_vecs;
	a.k.n_features = df->n_features;
	a.k.n_groups = df->n_groups;
	a.k.n_outputs = df->n_outputs;
	a.k.transform = (int32_t) df->transform;
	a.k.raw_margins = raw;
	a.thr = df->d_thr;
	a.thr_off = df->d_thr_off;
	return a;
}

/*
 * Launch the binning kernel on a (a.k.x, a.k.ld, a.k.n_rows into a.bins,
 * a.bins_ld): enough blocks for one value per thread, at most 32 blocks
 * per multiprocessor (the loop strides over the rest).
 */
static int
launch_bin(const GsDeviceForest *df, const GsBinnedArgs *a, cudaStream_t stream)
{
	size_t		total = a->k.n_rows * (size_t) df->n_features,
				blocks = (total + GS_KTHREADS - 1) / GS_KTHREADS,
				cap = (size_t) (df->n_sm > 0 ? df->n_sm : 1) * 32;

	if (blocks > cap)
		blocks = cap;
	forest_bin_kernel<<<(unsigned int) blocks, GS_KTHREADS, 0, stream>>>(*a, a->k.x, a->thr, a->bins);
	return (int) cudaGetLastError();
}

/* Launch the binned scoring kernel on a (rows per thread picked here). */
static int
launch_binned(const GsDeviceForest *df, const GsBinnedArgs *a, cudaStream_t stream)
{
	int			rpt = gs_binned_pick_rpt(&df->bplan, a->k.n_rows, df->n_sm);
	GsBinnedKernelFn fn = pick_binned(&df->bplan, rpt);
	size_t		rows_per_block = (size_t) GS_KTHREADS * (size_t) rpt,
				blocks = (a->k.n_rows + rows_per_block - 1) / rows_per_block;

	if (fn == NULL || blocks > (size_t) INT_MAX)
		return GS_DFOREST_EINVAL;
	fn<<<(unsigned int) blocks, GS_KTHREADS, gs_binned_smem_bytes(&df->bplan, rpt), stream>>>(
		*a, a->k.nodes, a->k.trees, a->k.x, a->bins, a->thr, a->k.out);
	return (int) cudaGetLastError();
}

/*
 * Score a batch with a binned plan.  Fused: one launch.  Separate binning
 * pass: the batch is cut into chunks of at most bplan.chunk_rows rows
 * (64 MB of bins: about 1.1M rows at 30 features); the bins scratch for one
 * chunk is taken from df's memory pool on the caller's stream and given
 * back on it after the last chunk (stream-ordered, so no synchronisation;
 * the pool keeps the memory for the next call), and each chunk is binned
 * and then scored, both on that stream.
 */
static int
predict_binned(const GsDeviceForest *df, const float *d_x, size_t ld, size_t n_rows,
			   float *d_out, void *stream, int raw)
{
	cudaStream_t s = (cudaStream_t) stream;
	GsBinnedArgs a = binned_args(df, d_x, ld, n_rows, d_out, raw);
	size_t		chunk,
				per_row = (size_t) (raw ? df->n_groups : df->n_outputs);
	void	   *scratch = NULL;
	cudaError_t crc;
	int			rc = 0;

	if (df->bplan.fused)
		return launch_binned(df, &a, s);
	chunk = n_rows < df->bplan.chunk_rows ? n_rows : df->bplan.chunk_rows;
	crc = cudaMallocFromPoolAsync(&scratch, chunk * (size_t) df->n_features * sizeof(uint16_t),
								  df->pool, s);
	if (crc != cudaSuccess)
		return (int) crc;
	for (size_t r0 = 0; r0 < n_rows && rc == 0; r0 += chunk)
	{
		size_t		nc = n_rows - r0 < chunk ? n_rows - r0 : chunk;

		a.k.x = d_x + r0;
		a.k.out = d_out + r0 * per_row;
		a.k.n_rows = nc;
		a.bins = (uint16_t *) scratch;
		a.bins_ld = nc;
		rc = launch_bin(df, &a, s);
		if (rc == 0)
			rc = launch_binned(df, &a, s);
	}
	crc = cudaFreeAsync(scratch, s);
	return rc != 0 ? rc : (int) crc;
}

/* The binning pass alone; see forest_kernel.h. */
extern "C" int
gs_dforest_bin(const GsDeviceForest *df, const float *d_x, size_t ld, size_t n_rows,
			   unsigned short *d_bins, void *stream)
{
	GsBinnedArgs a;
	int			dev;
	cudaError_t rc;

	if (df == NULL || !df->binned || d_x == NULL || d_bins == NULL || ld < n_rows)
		return GS_DFOREST_EINVAL;
	if (n_rows == 0)
		return 0;
	if ((rc = cudaGetDevice(&dev)) != cudaSuccess)
		return (int) rc;
	if (dev != df->device)
		return (int) cudaErrorInvalidDevice;
	a = binned_args(df, d_x, ld, n_rows, NULL, 1);
	a.bins = d_bins;
	a.bins_ld = n_rows;
	return launch_bin(df, &a, (cudaStream_t) stream);
}

/* Launch the chosen kernel on a batch: outputs, or margins with raw. */
static int
predict(const GsDeviceForest *df, const float *d_x, size_t ld, size_t n_rows,
		float *d_out, void *stream, int raw)
{
	GsKernelArgs a;
	GsKernelFn	fn;
	int			rpt,
				dev;
	size_t		rows_per_block,
				blocks;
	cudaError_t rc;

	if (df == NULL || d_x == NULL || d_out == NULL || ld < n_rows)
		return GS_DFOREST_EINVAL;
	if (n_rows == 0)
		return 0;
	if ((rc = cudaGetDevice(&dev)) != cudaSuccess)
		return (int) rc;
	if (dev != df->device)
		return (int) cudaErrorInvalidDevice;
	if (df->binned)
		return predict_binned(df, d_x, ld, n_rows, d_out, stream, raw);

	rpt = gs_layout_pick_rpt(&df->plan, n_rows, df->n_sm);
	fn = pick_kernel(&df->plan, rpt);
	rows_per_block = (size_t) GS_KTHREADS * (size_t) rpt;
	blocks = (n_rows + rows_per_block - 1) / rows_per_block;
	if (fn == NULL || blocks > (size_t) INT_MAX)
		return GS_DFOREST_EINVAL;

	memset(&a, 0, sizeof(a));
	a.nodes = df->d_nodes;
	a.trees = df->d_trees;
	a.tiles = df->d_tiles;
	a.base_margin = df->d_base_margin;
	a.cats = df->d_cats;
	a.split_kinds = df->split_kinds;
	a.x = d_x;
	a.out = d_out;
	a.ld = ld;
	a.n_rows = n_rows;
	a.n_trees = df->n_trees;
	a.n_tiles = df->plan.n_tiles;
	a.tile_vecs = df->plan.tile_vecs;
	a.n_features = df->n_features;
	a.n_groups = df->n_groups;
	a.n_outputs = df->n_outputs;
	a.transform = (int32_t) df->transform;
	a.raw_margins = raw;

	fn<<<(unsigned int) blocks, GS_KTHREADS,
		gs_layout_smem_bytes(&df->plan, rpt, df->n_features),
		(cudaStream_t) stream>>>(a, a.nodes, a.trees, a.x, a.out);
	return (int) cudaGetLastError();
}

/* Score a device batch; see forest_kernel.h. */
extern "C" int
gs_dforest_predict(const GsDeviceForest *df, const float *d_x, size_t ld,
				   size_t n_rows, float *d_out, void *stream)
{
	return predict(df, d_x, ld, n_rows, d_out, stream, 0);
}

/* Raw margins of a device batch; see forest_kernel.h. */
extern "C" int
gs_dforest_predict_margins(const GsDeviceForest *df, const float *d_x,
						   size_t ld, size_t n_rows, float *d_margin,
						   void *stream)
{
	return predict(df, d_x, ld, n_rows, d_margin, stream, 1);
}

/* Device bytes of a model; see forest_kernel.h. */
extern "C" size_t
gs_dforest_device_bytes(const GsDeviceForest *df)
{
	return df ? df->device_bytes : 0;
}

/* Kernel and plan description; see forest_kernel.h. */
extern "C" const char *
gs_dforest_kernel_name(const GsDeviceForest *df)
{
	return df ? df->name : "(none)";
}

/* Describe a return code; see forest_kernel.h. */
extern "C" const char *
gs_dforest_strerror(int rc)
{
	switch (rc)
	{
		case 0:
			return "success";
		case GS_DFOREST_ETOO_MANY_GROUPS:
			return "the GPU kernels keep at most 32 margins per row";
		case GS_DFOREST_ENOMEM:
			return "out of host memory";
		case GS_DFOREST_EINVAL:
			return "invalid argument";
		case GS_DFOREST_ETILE:
			return "a tree does not fit the tiled (or binned) kernel's shared memory";
		case GS_DFOREST_ESPLITS:
			return "binned kernel: the forest has splits other than plain numerical ones";
		case GS_DFOREST_EDEPTH:
			return "binned kernel: a tree is deeper than 12";
		case GS_DFOREST_ETHRESHOLDS:
			return "binned kernel: a feature has more than 65534 distinct thresholds";
		case GS_DFOREST_EFEATURES:
			return "binned kernel: more than 32768 features";
		case GS_DFOREST_ESIZE:
			return "binned kernel: the complete trees exceed 256 MB";
		default:
			return rc > 0 ? cudaGetErrorString((cudaError_t) rc) : "unknown error";
	}
}

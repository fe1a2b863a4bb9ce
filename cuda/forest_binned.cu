/*
 * forest_binned.cu
 *	  The binned GPU scoring kernel (kernel 3, GS_KERNEL_BINNED) and its
 *	  host side: forest_binned_kernel, the separate binning pass
 *	  forest_bin_kernel, the upload of a binned plan
 *	  (gs_dforest_create_binned, called by gs_dforest_create_ex) and its
 *	  launches (gs_dforest_predict_binned, called by gs_dforest_predict;
 *	  gs_dforest_bin).  Interface: forest_kernel.h; what this file shares
 *	  with forest_kernel.cu: forest_kernel_internal.h.
 *
 * Forests laid out by forest_binned.h, phases in binned_phases.h (the code
 * a CPU emulation runs too, tests/unit/test_binned.c).  Each row's features
 * are quantized once to uint16 bins (number of the feature's split
 * thresholds <= value), staged in shared memory, and every tree is a
 * complete tree walked level by level for exactly its depth with 4-byte
 * nodes compared as small integers, no leaf test and no data-dependent
 * branch.  FUSED: the block bins its own rows from the float batch;
 * otherwise forest_bin_kernel bins the batch first into device scratch (see
 * gs_dforest_predict_binned).  The tiles stream through shared memory
 * exactly as in the tiled kernel of forest_kernel.cu.  Never chosen
 * automatically until measured.
 *
 * NGB and RPT as in forest_kernel.cu (margins per row rounded up to a power
 * of two; 1, 2 or 4 rows per thread with NGB * RPT <= 32); the kernel ends
 * with the same output transform, so margins and outputs are bit-identical
 * to the CPU engine's.
 *
 * Device memory: gs_dforest_create_binned cudaMalloc's the tree words, the
 * tree descriptors, the tiles, the base margins and the threshold tables
 * (gs_dforest_free releases them).  Plans with a separate binning pass take
 * their bins scratch per batch from a stream-ordered memory pool owned by
 * the GsDeviceForest (see gs_dforest_predict_binned).
 */
#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest_kernel_internal.h"

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

	/* as const __restrict__ parameters: see forest_kernel.cu's with_restrict */
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
static const GsBinnedKernelFn binned_table[6][3][2] = GS_KERNEL_TABLE(forest_binned_kernel);

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
 * The binned half of gs_dforest_create_ex (forest_kernel_internal.h): lay
 * f out with forest_binned.h under options lo (budget already resolved;
 * optin the device's per-block limit), upload it into df and fill df's
 * plan and name.  For a separate
 * binning pass, also create df's memory pool for the bins scratch: a
 * stream-ordered pool (cudaMallocFromPoolAsync / cudaFreeAsync per predict
 * call) whose release threshold keeps its memory after the first call, so
 * later calls allocate without a device synchronisation or an OS call, and
 * concurrent calls on different streams each get their own scratch (the
 * GsDeviceForest stays immutable and shareable).  On failure df is freed.
 */
int
gs_dforest_create_binned(const GsForest *f, const GsLayoutOptions *lo,
						 size_t optin, GsDeviceForest *df, GsDeviceForest **out)
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
	a.k.transform_param[0] = df->transform_param[0];
	a.k.transform_param[1] = df->transform_param[1];
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
int
gs_dforest_predict_binned(const GsDeviceForest *df, const float *d_x, size_t ld,
						  size_t n_rows, float *d_out, void *stream, int raw)
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

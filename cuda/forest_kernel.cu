/*
 * forest_kernel.cu
 *	  The GPU scoring kernels and their host side: per-model device layout
 *	  (gs_dforest_create), kernel choice and launch (gs_dforest_predict).
 *	  Interface and ownership rules: forest_kernel.h.  The binned kernel
 *	  (kernel 3) lives in forest_binned.cu; what the two files share
 *	  (GsDeviceForest, its entry points): forest_kernel_internal.h.
 *
 * Two kernels here, both thin shells around the phases of kernel_phases.h
 * (the code a CPU emulation runs too, tests/unit/test_kernel_emulation.c),
 * and a third in forest_binned.cu:
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
 *	  automatically until measured; forest_binned.cu): features quantized
 *	  to uint16 bins, complete trees walked level by level, tiles as in
 *	  the tiled kernel.  gs_dforest_create_ex hands binned plans to
 *	  gs_dforest_create_binned, predict to gs_dforest_predict_binned.
 *
 * Each of the rows and tiled kernels has a twin with double margins
 * (forest_rows_kernel_dbl, forest_tiled_kernel_dbl) for forests with
 * double leaves (GsForest.leaf_lo: LightGBM), summed as the CPU engine
 * sums them; the binned kernel refuses such forests.
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
 * owned by the GsDeviceForest (see gs_dforest_predict_binned).
 */
#include <cuda_runtime.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest_kernel_internal.h"

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
 * The margin-holding phases of kernel_phases.h by margin type: float
 * margins call gs_phase_init and the rest, double margins (forests with
 * double leaves) gs_phase_init_dbl and the rest.
 */
#define GS_MARGIN_OVERLOADS(M, SFX) \
static __device__ __forceinline__ void \
phase_init(const GsKernelArgs *a, int rpt, int ngb, M *m) \
{ gs_phase_init##SFX(a, rpt, ngb, m); } \
static __device__ __forceinline__ void \
phase_walk_tile(const GsKernelArgs *a, uint32_t tile, size_t block, int tid, \
				int rpt, int ngb, int staged, const GsVec4 *smem, M *m) \
{ gs_phase_walk_tile##SFX(a, tile, block, tid, GS_KTHREADS, rpt, ngb, staged, smem, m); } \
static __device__ __forceinline__ void \
phase_output(const GsKernelArgs *a, size_t block, int tid, int rpt, int ngb, const M *m) \
{ gs_phase_output##SFX(a, block, tid, GS_KTHREADS, rpt, ngb, m); } \
static __device__ __forceinline__ void \
rows_thread(const GsKernelArgs *a, size_t block, int tid, int ngb, M *m) \
{ gs_rows_thread##SFX(a, block, tid, GS_KTHREADS, ngb, m); }
GS_MARGIN_OVERLOADS(float,)
GS_MARGIN_OVERLOADS(double, _dbl)

/*
 * Kernel (a): one thread per row; see the file header and gs_rows_thread.
 * M is the margin type (float, or double for double leaves).
 */
template <int NGB, typename M>
static __device__ __forceinline__ void
rows_body(const GsKernelArgs &a)
{
	M			m[NGB];

	rows_thread(&a, blockIdx.x, (int) threadIdx.x, NGB, m);
}

template <int NGB>
__global__ void __launch_bounds__(GS_KTHREADS, GS_ROWS_MIN_BLOCKS)
forest_rows_kernel(const GsKernelArgs args, const GsVec4 *__restrict__ nodes,
				   const GsTreeDesc *__restrict__ trees,
				   const float *__restrict__ x, float *__restrict__ out)
{
	rows_body<NGB, float>(with_restrict(args, nodes, trees, x, out));
}

template <int NGB>
__global__ void __launch_bounds__(GS_KTHREADS, GS_ROWS_MIN_BLOCKS)
forest_rows_kernel_dbl(const GsKernelArgs args, const GsVec4 *__restrict__ nodes,
					   const GsTreeDesc *__restrict__ trees,
					   const float *__restrict__ x, float *__restrict__ out)
{
	rows_body<NGB, double>(with_restrict(args, nodes, trees, x, out));
}

/*
 * Kernel (b): trees tiled through shared memory while the block's rows
 * stay put.  Dynamic shared memory: [tile region: a.tile_vecs vectors]
 * [staged rows, STAGED only].  The barrier before a tile's load keeps the
 * previous tile alive until every thread has walked it; the barrier after
 * it publishes the tile (and, for the first tile, the staged rows).
 */
template <int NGB, int RPT, bool STAGED, typename M>
static __device__ __forceinline__ void
tiled_body(const GsKernelArgs &a)
{
	extern __shared__ GsVec4 gs_smem[];
	M			m[NGB * RPT];
	const int	tid = (int) threadIdx.x;
	const size_t block = blockIdx.x;

	phase_init(&a, RPT, NGB, m);
	if (STAGED)
		gs_phase_stage_rows(&a, block, tid, GS_KTHREADS, RPT,
							(float *) (gs_smem + a.tile_vecs));
	for (uint32_t i = 0; i < a.n_tiles; i++)
	{
		if (i > 0)
			__syncthreads();
		gs_phase_load_tile(&a, i, tid, GS_KTHREADS, gs_smem);
		__syncthreads();
		phase_walk_tile(&a, i, block, tid, RPT, NGB, STAGED, gs_smem, m);
	}
	phase_output(&a, block, tid, RPT, NGB, m);
}

template <int NGB, int RPT, bool STAGED>
__global__ void __launch_bounds__(GS_KTHREADS, GS_TILED_MIN_BLOCKS)
forest_tiled_kernel(const GsKernelArgs args, const GsVec4 *__restrict__ nodes,
					const GsTreeDesc *__restrict__ trees,
					const float *__restrict__ x, float *__restrict__ out)
{
	tiled_body<NGB, RPT, STAGED, float>(with_restrict(args, nodes, trees, x, out));
}

template <int NGB, int RPT, bool STAGED>
__global__ void __launch_bounds__(GS_KTHREADS, GS_TILED_MIN_BLOCKS)
forest_tiled_kernel_dbl(const GsKernelArgs args, const GsVec4 *__restrict__ nodes,
						const GsTreeDesc *__restrict__ trees,
						const float *__restrict__ x, float *__restrict__ out)
{
	tiled_body<NGB, RPT, STAGED, double>(with_restrict(args, nodes, trees, x, out));
}

/* Rows kernels by [double margins][group bucket (1, 2, 4, ..., 32)]. */
static const GsKernelFn rows_table[2][6] = {
	{forest_rows_kernel<1>, forest_rows_kernel<2>, forest_rows_kernel<4>,
	 forest_rows_kernel<8>, forest_rows_kernel<16>, forest_rows_kernel<32>},
	{forest_rows_kernel_dbl<1>, forest_rows_kernel_dbl<2>, forest_rows_kernel_dbl<4>,
	 forest_rows_kernel_dbl<8>, forest_rows_kernel_dbl<16>, forest_rows_kernel_dbl<32>}
};

/* Tiled kernels by [group bucket][rows per thread 1, 2, 4][staged]. */
static const GsKernelFn tiled_table[6][3][2] = GS_KERNEL_TABLE(forest_tiled_kernel);
static const GsKernelFn tiled_table_dbl[6][3][2] = GS_KERNEL_TABLE(forest_tiled_kernel_dbl);

/*
 * The kernel for plan p launched with rpt rows per thread, with double
 * margins when dbl (NULL: none).
 */
static GsKernelFn
pick_kernel(const GsLayout *p, int rpt, int dbl)
{
	int			g = log2_small(p->ngb);

	if (g > 5)
		return NULL;
	if (p->kernel == GS_KERNEL_ROWS)
		return rows_table[dbl ? 1 : 0][g];
	return (dbl ? tiled_table_dbl : tiled_table)[g][log2_small(rpt)][p->staged ? 1 : 0];
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
	cudaFree(df->d_leaf_lo);
	cudaFree(df->d_cats);
	cudaFree(df->d_thr);
	cudaFree(df->d_thr_off);
	if (df->pool)
		cudaMemPoolDestroy(df->pool);
	free(df);
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
	if (f->linear || f->cb_ctrs)
		return GS_DFOREST_ELINEAR;

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
	df->transform_param[0] = f->transform_param[0];
	df->transform_param[1] = f->transform_param[1];
	df->split_kinds = f->split_kinds;
	if (lo.kernel == GS_KERNEL_BINNED)
		return gs_dforest_create_binned(f, &lo, optin, df, out);
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
		 (rc = upload((void **) &df->d_cats, f->cat_words, sizeof(uint32_t) * (size_t) f->n_cat_words, &df->device_bytes)) != cudaSuccess) ||
		(l.leaf_lo &&
		 (rc = upload((void **) &df->d_leaf_lo, l.leaf_lo, sizeof(float) * (l.n_vecs / 3 * 4), &df->device_bytes)) != cudaSuccess))
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
		GsKernelFn	fn = pick_kernel(&df->plan, rpt, df->d_leaf_lo != NULL);
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
				 "forest_tiled_kernel%s<%d> (%s rows, <= %d rows/thread, %u tiles of <= %u B, smem <= %zu B, %d blocks/SM)",
				 df->d_leaf_lo ? "_dbl" : "", df->plan.ngb, df->plan.staged ? "staged" : "global",
				 df->plan.max_rpt, df->plan.n_tiles, df->plan.tile_vecs * 16u,
				 gs_layout_smem_bytes(&df->plan, df->plan.max_rpt, df->n_features),
				 df->blocks_per_sm);
	else
		snprintf(df->name, sizeof(df->name), "forest_rows_kernel%s<%d> (%s)",
				 df->d_leaf_lo ? "_dbl" : "", df->plan.ngb, df->plan.why);
	*out = df;
	return 0;
}

/* Build and upload a device forest; see forest_kernel.h. */
extern "C" int
gs_dforest_create(const GsForest *f, GsDeviceForest **out)
{
	return gs_dforest_create_ex(f, NULL, out);
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
		return gs_dforest_predict_binned(df, d_x, ld, n_rows, d_out, stream, raw);

	rpt = gs_layout_pick_rpt(&df->plan, n_rows, df->n_sm);
	fn = pick_kernel(&df->plan, rpt, df->d_leaf_lo != NULL);
	rows_per_block = (size_t) GS_KTHREADS * (size_t) rpt;
	blocks = (n_rows + rows_per_block - 1) / rows_per_block;
	if (fn == NULL || blocks > (size_t) INT_MAX)
		return GS_DFOREST_EINVAL;

	memset(&a, 0, sizeof(a));
	a.nodes = df->d_nodes;
	a.trees = df->d_trees;
	a.tiles = df->d_tiles;
	a.base_margin = df->d_base_margin;
	a.leaf_lo = df->d_leaf_lo;
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
	a.transform_param[0] = df->transform_param[0];
	a.transform_param[1] = df->transform_param[1];
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
		case GS_DFOREST_EDOUBLE:
			return "binned kernel: the forest's leaves are summed in double (LightGBM, CatBoost)";
		case GS_DFOREST_ELINEAR:
			return "the forest has linear leaves (LightGBM's linear trees) or categorical features (CatBoost's CTRs), which only the CPU engine scores";
		default:
			return rc > 0 ? cudaGetErrorString((cudaError_t) rc) : "unknown error";
	}
}

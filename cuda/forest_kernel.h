/*
 * forest_kernel.h
 *	  C interface of the GPU scoring kernels (cuda/forest_kernel.cu; the
 *	  binned kernel: cuda/forest_binned.cu): a forest copied to the device
 *	  in a layout chosen per model, scored on device-resident column-major
 *	  batches.  No PostgreSQL here; callable from C and C++.
 *
 * Ownership: a GsDeviceForest owns the device memory of one model (nodes,
 * tree descriptors, tiles, base margins; cudaMalloc'd by gs_dforest_create
 * on the device current at that time) and is released with
 * gs_dforest_free; binned plans with a separate binning pass also own a
 * stream-ordered memory pool from which each predict call takes and gives
 * back its bins scratch.  Batches and score buffers are device memory
 * owned by the caller.  A GsDeviceForest is immutable after creation, so several
 * host threads may score with it at once on different streams.
 *
 * Results are bit-identical to the CPU engine's margins (gs_cpu_margins):
 * per row margin[g] = base_margin[g], then the leaf of every tree, in model
 * order, added in float to margin[tree_group[t]]; NaN is missing and takes
 * the node's default direction, otherwise x < threshold goes left.  The
 * output transform is gs_transform_row of src/core/forest/forest_eval.h with
 * glibc's expf algorithm (gs_transform_row and gs_expf in forest_eval.h), so
 * outputs are bit-identical to the CPU engine's too (see
 * gs_dforest_predict).
 *
 * Return codes: 0 on success, a cudaError_t (positive) from the CUDA
 * runtime, or one of the negative GS_DFOREST_E* codes below;
 * gs_dforest_strerror() describes any of them.
 */
#ifndef GS_FOREST_KERNEL_H
#define GS_FOREST_KERNEL_H

#include <stddef.h>

#include "forest/forest.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define GS_DFOREST_ETOO_MANY_GROUPS	(-1)	/* more than 32 outputs groups per
											 * row: score on the CPU */
#define GS_DFOREST_ENOMEM		(-2)	/* host memory */
#define GS_DFOREST_EINVAL		(-3)	/* bad argument or option */
#define GS_DFOREST_ETILE		(-4)	/* tiled kernel imposed, a tree does
										 * not fit its shared memory */
/* Refusals of the binned kernel (kernel 3; == GS_BINNED_E* of forest_binned.h) */
#define GS_DFOREST_ESPLITS		(-5)	/* not only plain numerical splits */
#define GS_DFOREST_EDEPTH		(-6)	/* a tree deeper than 12 */
#define GS_DFOREST_ETHRESHOLDS	(-7)	/* a feature with more than 65534
										 * distinct thresholds */
#define GS_DFOREST_EFEATURES	(-8)	/* more than 32768 features */
#define GS_DFOREST_ESIZE		(-9)	/* complete trees above 256 MB */
#define GS_DFOREST_EDOUBLE		(-10)	/* leaves summed in double (LightGBM, CatBoost) */
#define GS_DFOREST_ELINEAR		(-11)	/* linear leaves (LightGBM's linear
										 * trees) or CatBoost CTRs: CPU only */

typedef struct GsDeviceForest GsDeviceForest;	/* opaque */

/*
 * Optional choices for gs_dforest_create_ex (benchmarks, tests); all zero
 * means what gs_dforest_create does.
 */
typedef struct GsDForestOptions
{
	int			kernel;			/* 0 auto, 1 rows kernel, 2 tiled kernel,
								 * 3 binned kernel (never chosen by auto;
								 * refused with GS_DFOREST_ESPLITS ..
								 * EDOUBLE or ETILE for forests it cannot
								 * score) */
	size_t		smem_budget;	/* dynamic shared memory per tiled block;
								 * 0: sized for 2 blocks per multiprocessor */
	int			max_rpt;		/* tiled: rows per thread cap (1, 2, 4); 0 auto */
	int			stage_rows;		/* tiled: 0 auto, 1 stage rows in shared
								 * memory when possible, -1 never */
	int			bin_pass;		/* binned: 0 the scoring kernel bins its
								 * rows itself, 1 a separate binning
								 * kernel first (device scratch from a
								 * memory pool of the GsDeviceForest,
								 * batches cut into chunks of at most
								 * 64 MB of bins) */
} GsDForestOptions;

/*
 * Build the layout for f and copy it to the current device.  *out is NULL
 * on failure.  Models with more than 32 output groups are refused
 * (GS_DFOREST_ETOO_MANY_GROUPS): the caller scores them on the CPU.
 */
int			gs_dforest_create(const GsForest *f, GsDeviceForest **out);

/* The same with imposed choices; opt NULL is gs_dforest_create. */
int			gs_dforest_create_ex(const GsForest *f, const GsDForestOptions *opt,
								 GsDeviceForest **out);

/*
 * Score n_rows of a column-major DEVICE batch d_x (feature f of row r at
 * d_x[f * ld + r], ld >= n_rows) into DEVICE d_out[r * n_outputs + k], on
 * stream (a cudaStream_t passed as void *; NULL is the default stream).
 * d_out must not overlap d_x.  Asynchronous: returns after the launch
 * (launch errors are returned, execution errors surface at the next
 * synchronisation).  Returns GS_DFOREST_EINVAL (negative) for NULL
 * pointers or ld < n_rows, else 0 or a cudaError_t.
 *
 * Margins and outputs are bit-identical to the CPU engine's on a host whose
 * libm is glibc >= 2.28 running its FMA variant (any x86-64 CPU with FMA,
 * aarch64).  With glibc's non-FMA variant, sigmoid/exp/softmax outputs can
 * differ by 1 ulp for 2 of the 2^32 float margins (x = 0x1.04845ep+5 and
 * -0x1.f8cbb2p+5 for exp); other libms may differ by an ulp more often.
 */
int			gs_dforest_predict(const GsDeviceForest *df, const float *d_x,
							   size_t ld, size_t n_rows, float *d_out,
							   void *stream);

/*
 * Like gs_dforest_predict, but write the raw margins
 * d_margin[r * n_groups + g] (no transform): bit-identical to
 * gs_cpu_margins, for parity tests and benchmarks.
 */
int			gs_dforest_predict_margins(const GsDeviceForest *df, const float *d_x,
									   size_t ld, size_t n_rows, float *d_margin,
									   void *stream);

/*
 * Binned plans only (kernel 3, else GS_DFOREST_EINVAL): the binning pass
 * alone, for benchmarks and tests: d_bins[f * n_rows + r] (DEVICE,
 * n_features * n_rows uint16) = the bin of feature f of row r of d_x (see
 * cuda/binned_phases.h).  Asynchronous like gs_dforest_predict.
 */
int			gs_dforest_bin(const GsDeviceForest *df, const float *d_x, size_t ld,
						   size_t n_rows, unsigned short *d_bins, void *stream);

/* Release the device copy; NULL is allowed. */
void		gs_dforest_free(GsDeviceForest *df);

/* Device memory the model occupies, in bytes. */
size_t		gs_dforest_device_bytes(const GsDeviceForest *df);

/*
 * Which kernel and plan the layout chose, e.g.
 * "forest_tiled_kernel (staged rows, <= 2 rows/thread, 9 tiles of <= 55296 B)",
 * for reports.  Valid while df lives.
 */
const char *gs_dforest_kernel_name(const GsDeviceForest *df);

/* Description of a return code of the functions above. */
const char *gs_dforest_strerror(int rc);

#ifdef __cplusplus
}
#endif

#endif							/* GS_FOREST_KERNEL_H */

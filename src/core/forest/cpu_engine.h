/*
 * cpu_engine.h
 *	  Batch scoring of a validated forest on the CPU.
 *
 * The caller owns every buffer; the engine allocates nothing and cannot
 * fail, so it has no status.  Batches are column-major float32: feature f of
 * row r is x[f * ld + r] with ld >= n_rows (the layout the GPU engine uses
 * too).  Missing values are NaN.
 */
#ifndef GS_CPU_ENGINE_H
#define GS_CPU_ENGINE_H

#include <stddef.h>

#include "forest.h"

/*
 * The vector path of the engine, found from the CPU at the first use
 * (__builtin_cpu_supports): AVX-512 where it has it (gs_cpu_margins walks
 * plain numerical trees sixteen rows to a register), else AVX2 where it
 * has it, else the portable C.  The complete-tree walk (forest_complete.h)
 * and CatBoost's bins (forest_bins.h) take AVX2 on both vector paths; leaf bit vectors
 * (forest_qs.h) take sixteen rows with AVX-512, eight with AVX2.  All give the same
 * bits.  gs_cpu_simd_set(GS_CPU_SIMD_PORTABLE) forces the
 * portable path (for tests and benchmarks), GS_CPU_SIMD_AVX2 the AVX2 path
 * on a CPU with AVX-512 (elsewhere it changes nothing); any other value
 * goes back to what the CPU has.
 */
typedef enum GsCpuSimd
{
	GS_CPU_SIMD_AUTO = -1,		/* not detected yet */
	GS_CPU_SIMD_PORTABLE = 0,
	GS_CPU_SIMD_AVX512 = 1,
	GS_CPU_SIMD_AVX2 = 2		/* AVX2, no AVX-512: the complete-tree walk
								 * (forest_complete.h) and the node walk
								 * (cpu_walk_avx2.c) are vectorized */
} GsCpuSimd;

extern GsCpuSimd gs_cpu_simd(void);
extern void gs_cpu_simd_set(GsCpuSimd s);

/*
 * Raw margins: margin[r * n_groups + g] = base_margin[g] + sum of the leaves
 * of the trees of group g, summed in tree order in float as XGBoost does.
 */
extern void gs_cpu_margins(const GsForest *f, const float *x, size_t ld,
						   size_t n_rows, float *margin);

/*
 * Outputs: out[r * n_outputs + k].  margin is scratch of n_rows * n_groups
 * floats given by the caller (it may not alias out).
 */
extern void gs_cpu_predict(const GsForest *f, const float *x, size_t ld,
						   size_t n_rows, float *margin, float *out);

/* Outputs of one row given row-major (x[f], f < n_features). */
extern void gs_cpu_predict_row(const GsForest *f, const float *x, float *margin,
							   float *out);

/*
 * Copy n_rows row-major rows (rows[r * n_features + f]) into the
 * column-major batch x (x[f * ld + r]).  Blocked: written row by row, a
 * row's features would land ld * 4 bytes apart, a multiple of 4 KB for the
 * usual power-of-two batch sizes, so every store of a row would fall into
 * the same L1 cache set; blocks of rows are written column by column.
 */
extern void gs_rows_to_columns(const float *rows, size_t n_rows, int n_features,
							   float *x, size_t ld);

#endif							/* GS_CPU_ENGINE_H */

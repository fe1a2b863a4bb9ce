/*
 * cpu_engine_int.h
 *	  What the files of the CPU engine share: block sizes, the x86-64 vector
 *	  switch and the entry points of its paths.  Internal to the engine
 *	  (cpu_engine.c dispatches, cpu_complete.c walks complete trees,
 *	  cpu_bins.c scores binned symmetric trees); callers use cpu_engine.h.
 */
#ifndef GS_CPU_ENGINE_INT_H
#define GS_CPU_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu_engine.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define GS_CPU_X86_SIMD 1
#include <immintrin.h>
#endif

/* Rows of a block of the node walks, and rows walking a tree in lockstep */
#define GS_CPU_BLOCK 64
#define GS_CPU_LANES 8

/* Output groups the complete-tree walk takes at most (more: the node walk) */
#define GS_CPU_COMPLETE_GROUPS 16

/*
 * Margins of a batch of a forest with a complete-tree form (f->complete,
 * at most GS_CPU_COMPLETE_GROUPS groups): cpu_complete.c.
 */
extern void gs_cpu_complete_margins(const GsForest *f, const float *x, size_t ld,
									size_t n_rows, float *margin);

/*
 * Leaf indices (relative to the tree) of rows r0..r1 of the batch in one
 * tree of a forest of split kinds kinds (GsForest.split_kinds) into
 * leaf[0..), by the AVX2 lockstep walk eight rows at a time (cpu_walk_avx2.c):
 * the rows done, r1 - r0 rounded down to eight.  Caller must check that the
 * CPU has AVX2 and that every feature offset of the batch, node word and
 * category word index fits in 31 bits (cpu_engine.c's avx2_walk).
 */
extern size_t gs_cpu_walk_avx2(const GsNode *tree, int depth, const float *x, size_t ld,
							   size_t r0, size_t r1, uint32_t *leaf, const uint32_t *cats,
							   uint32_t kinds);

/*
 * acc[i] += gs_leaf_double(tree, lo, leaf[i]) for i < n rounded down to
 * four (returned), four rows at a time with AVX2 (cpu_walk_avx2.c).
 */
extern size_t gs_cpu_add_leaves_double_avx2(const GsNode *tree, const float *lo,
											const uint32_t *leaf, size_t n, double *acc);

/*
 * Margins of a batch of a forest with a leaf-bit-vector form (f->qs):
 * cpu_qs.c.
 */
extern void gs_cpu_qs_margins(const GsForest *f, const float *x, size_t ld,
							  size_t n_rows, float *margin);

/* Margins of a batch of a forest with bins (f->bins): cpu_bins.c. */
extern void gs_cpu_bins_margins(const GsForest *f, const float *x, size_t ld,
								size_t n_rows, float *margin);

/* Margins of one row-major row of a forest with bins: cpu_bins.c. */
extern void gs_cpu_bins_row_margins(const GsForest *f, const float *x, float *margin);

#endif							/* GS_CPU_ENGINE_INT_H */

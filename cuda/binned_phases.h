/*
 * binned_phases.h
 *	  The per-thread phases of the binned GPU kernel (forest_binned_kernel
 *	  and forest_bin_kernel in forest_binned.cu), written once as
 *	  __host__ __device__ functions so that a CPU emulation
 *	  (tests/unit/test_binned.c) runs the very same code, in the style of
 *	  kernel_phases.h (read its header first: thread index, block size,
 *	  block index and shared memory are passed explicitly; the emulation
 *	  runs each phase for every thread index before the next phase).
 *
 * The binned kernel scores forests laid out by forest_binned.h:
 *	- features are quantized once per row: bin(v) = number of distinct
 *	  split thresholds t of that feature with t <= v, a uint16; NaN gets
 *	  GS_BIN_MISSING (0xFFFF);
 *	- every tree is a complete binary tree of its own depth D, stored as a
 *	  block of 2^(D+1) 4-byte words: words 0 .. 2^D - 2 are the internal
 *	  nodes level by level (children of node i at 2i+1 and 2i+2), word
 *	  2^D - 1 is padding, words 2^D .. 2^(D+1) - 1 the 2^D leaf values
 *	  (float bits).  An internal node word is
 *	    j << 16 | default_left << 15 | feature
 *	  (j the index of the node's threshold in its feature's sorted
 *	  thresholds), and the row goes left when
 *	    bin <= j  or  (bin == GS_BIN_MISSING and default_left);
 *	  forest_binned.h proves this equals gs_node_step_num's v < t test.
 *	  After exactly D such steps from the root, i is in
 *	  [2^D - 1, 2^(D+1) - 1) and its leaf is word i + 1, so the walk has
 *	  no leaf test and no data-dependent branch at all.
 *
 * Margins start at base_margin[g] and trees are added in model order in
 * float (gs_phase_init / gs_margin_add / gs_phase_output of
 * kernel_phases.h, shared with the other kernels), so margins and outputs
 * are bit-identical to gs_cpu_margins / gs_cpu_predict.
 *
 * Nothing here allocates or owns memory.
 */
#ifndef GS_BINNED_PHASES_H
#define GS_BINNED_PHASES_H

#include "kernel_phases.h"

/* Bin of a missing value (NaN); never a real bin (those are <= 65534). */
#define GS_BIN_MISSING		0xFFFFu
/* Threshold index of an "always left" padding node: bin <= j for every bin. */
#define GS_BIN_ALWAYS_LEFT	0xFFFFu
/* Bits of an internal node word. */
#define GS_BNODE_DEFAULT_LEFT	0x8000u
#define GS_BNODE_FEATURE_MASK	0x7FFFu
/* Most features a binned forest may have (15 feature bits). */
#define GS_BIN_MAX_FEATURES	32768

/*
 * Everything a binned launch needs, passed by value.  k holds the fields
 * shared with the other kernels, with k.nodes the binned tree words seen
 * as 16-byte vectors, k.tiles runs of consecutive trees (first_node is a
 * word index, a multiple of 4; n_vec the tile's size in vectors),
 * k.trees[t].first the word index of tree t's block, k.trees[t].n_nodes
 * its size in words, and k.tile_vecs the tile region in vectors;
 * k.cats and k.split_kinds are unused.  thr[thr_off[f] .. thr_off[f+1])
 * are feature f's sorted distinct thresholds.  bins, bins_ld: the
 * column-major bins of a separate binning pass (bins[f * bins_ld + r]),
 * written by gs_bin_thread and read by gs_phase_stage_bins when not
 * fused; unused when fused.
 */
typedef struct GsBinnedArgs
{
	GsKernelArgs k;
	const float *thr;
	const uint32_t *thr_off;	/* [n_features + 1] */
	uint16_t   *bins;
	size_t		bins_ld;
} GsBinnedArgs;

/* The float whose bits are w (a leaf value of a binned tree). */
GS_HD float
gs_float_of_bits(uint32_t w)
{
#ifdef __CUDA_ARCH__
	return __uint_as_float(w);
#else
	float		v;

	memcpy(&v, &w, sizeof(v));
	return v;
#endif
}

/*
 * Bin of value v among the n sorted distinct thresholds t[0..n): NaN gives
 * GS_BIN_MISSING, anything else the number of thresholds <= v (an upper
 * bound found by binary search; the loop runs about log2(n) + 1 times and
 * its selects are predicated on the device).  -0.0 and 0.0 compare equal,
 * so they get the same bin; +-Inf compare as usual.
 */
GS_HD uint32_t
gs_bin_value(const float *t, uint32_t n, float v)
{
	uint32_t	base = 0,
				len = n;

	if (v != v)
		return GS_BIN_MISSING;
	while (len > 0)
	{
		uint32_t	half = len >> 1;
		uint32_t	le = (uint32_t) (t[base + half] <= v);

		base = le ? base + half + 1u : base;
		len = le ? len - half - 1u : half;
	}
	return base;
}

/* Bin of value v of feature f (see gs_bin_value). */
GS_HD uint32_t
gs_bin_feature(const float *thr, const uint32_t *thr_off, int32_t f, float v)
{
	uint32_t	lo = thr_off[f];

	return gs_bin_value(thr + lo, thr_off[f + 1] - lo, v);
}

/*
 * Whether internal node word w sends a row whose bin of w's feature is b
 * to the left child: the binned form of gs_node_step_num's
 * (v < t) | (isnan(v) & default_left); see forest_binned.h for the proof.
 */
GS_HD uint32_t
gs_bnode_goes_left(uint32_t w, uint32_t b)
{
	return (uint32_t) (b <= (w >> 16)) |
		((uint32_t) (b == GS_BIN_MISSING) & ((w & GS_BNODE_DEFAULT_LEFT) != 0));
}

/*
 * Leaf value one row reaches in one binned tree of depth depth: tree
 * points to the tree's block of 2^(depth+1) words, the row's bin of
 * feature f is bins[f * stride].  Exactly depth branch-free steps
 * (child = 2i + 1 + go_right), then the leaf at word i + 1; with depth a
 * compile-time constant the loop unrolls fully.
 */
GS_HD float
gs_binned_tree_leaf(const uint32_t *tree, int depth, const uint16_t *bins,
					size_t stride)
{
	uint32_t	i = 0;

	GS_UNROLL
	for (int s = 0; s < depth; s++)
	{
		uint32_t	w = tree[i];
		uint32_t	b = bins[(size_t) (w & GS_BNODE_FEATURE_MASK) * stride];

		i = 2u * i + 2u - gs_bnode_goes_left(w, b);
	}
	return gs_float_of_bits(tree[i + 1u]);
}

/*
 * Add the leaves of trees t0..t1-1 (in that order) to the margins of rpt
 * rows of one thread.  words holds the trees' blocks, tree t's block at
 * words[trees[t].first - word_base] (the tile in shared memory, word_base
 * = the tile's first word).  Row k of the thread has its bins at
 * bins[row_first + k * row_step + f * stride] (the block's staged bins;
 * rows past the batch hold bin 0 and are never written out).  The rpt rows
 * walk each tree in lockstep, so their independent loads overlap; the
 * depth is the same for every lane of a warp (they walk the same tree).
 */
GS_HD void
gs_binned_walk_trees(const uint32_t *words, uint32_t word_base,
					 const GsTreeDesc *trees, uint32_t t0, uint32_t t1,
					 const uint16_t *bins, size_t stride, size_t row_first,
					 size_t row_step, int rpt, int ngb, float *m)
{
	for (uint32_t t = t0; t < t1; t++)
	{
		const GsTreeDesc d = trees[t];
		const uint32_t *tree = words + (d.first - word_base);
		uint32_t	idx[GS_KMAX_RPT];

		GS_UNROLL
		for (int k = 0; k < rpt; k++)
			idx[k] = 0;
		for (int32_t s = 0; s < d.depth; s++)
		{
			GS_UNROLL
			for (int k = 0; k < rpt; k++)
			{
				uint32_t	w = tree[idx[k]];
				uint32_t	b = bins[row_first + (size_t) k * row_step +
									 (size_t) (w & GS_BNODE_FEATURE_MASK) * stride];

				idx[k] = 2u * idx[k] + 2u - gs_bnode_goes_left(w, b);
			}
		}
		GS_UNROLL
		for (int k = 0; k < rpt; k++)
			gs_margin_add(m + k * ngb, ngb, d.group, gs_float_of_bits(tree[idx[k] + 1u]));
	}
}

/*
 * The binning pass for one thread of forest_bin_kernel: element i (grid
 * stride loop from thread gtid over nthreads_total threads) is feature
 * f = i / n_rows of row r = i % n_rows; bins[f * bins_ld + r] = its bin.
 * Consecutive threads take consecutive rows of one feature: coalesced
 * reads of x and writes of bins, and the whole warp searches the same
 * feature's thresholds (cached).
 */
GS_HD void
gs_bin_thread(const GsBinnedArgs *a, size_t gtid, size_t nthreads_total)
{
	const size_t total = a->k.n_rows * (size_t) a->k.n_features;

	for (size_t i = gtid; i < total; i += nthreads_total)
	{
		size_t		f = i / a->k.n_rows,
					r = i - f * a->k.n_rows;

		a->bins[f * a->bins_ld + r] = (uint16_t)
			gs_bin_feature(a->thr, a->thr_off, (int32_t) f, a->k.x[f * a->k.ld + r]);
	}
}

/*
 * Phase "stage bins": thread tid of the block writes its share of the
 * block's nthreads * rpt rows' bins, all features, into shared memory
 * sbins, column-major with stride chunk = nthreads * rpt:
 * sbins[f * chunk + r].  fused: computed here from the float batch
 * (gs_bin_feature); otherwise copied from the bins of a separate binning
 * pass.  Consecutive threads take consecutive rows of one feature
 * (coalesced global reads).  Rows past the batch get bin 0.
 */
GS_HD void
gs_phase_stage_bins(const GsBinnedArgs *a, size_t block, int tid, int nthreads,
					int rpt, int fused, uint16_t *sbins)
{
	const uint32_t chunk = (uint32_t) nthreads * (uint32_t) rpt;
	const uint32_t total = chunk * (uint32_t) a->k.n_features;
	const size_t row0 = gs_block_row0(block, nthreads, rpt);

	for (uint32_t i = (uint32_t) tid; i < total; i += (uint32_t) nthreads)
	{
		uint32_t	f = i / chunk;
		uint32_t	r = i - f * chunk;
		uint32_t	b = 0;

		if (row0 + r < a->k.n_rows)
			b = fused ?
				gs_bin_feature(a->thr, a->thr_off, (int32_t) f,
							   a->k.x[(size_t) f * a->k.ld + row0 + r]) :
				a->bins[(size_t) f * a->bins_ld + row0 + r];
		sbins[i] = (uint16_t) b;
	}
}

/*
 * Phase "load tile": thread tid copies its share of tile `tile`'s words
 * (16 bytes at a time, consecutive threads consecutive vectors) into the
 * tile region smem.
 */
GS_HD void
gs_phase_load_btile(const GsBinnedArgs *a, uint32_t tile, int tid, int nthreads,
					GsVec4 *smem)
{
	const GsTile t = a->k.tiles[tile];
	const GsVec4 *src = a->k.nodes + t.first_node / 4u;

	for (uint32_t i = (uint32_t) tid; i < t.n_vec; i += (uint32_t) nthreads)
		smem[i] = src[i];
}

/*
 * Phase "walk tile": thread tid adds the leaves of tile `tile`'s trees to
 * the margins m of its rpt rows (rows tid + k * nthreads of the block),
 * reading the tile from smem and the bins staged after the tile region.
 */
GS_HD void
gs_phase_walk_btile(const GsBinnedArgs *a, uint32_t tile, int tid, int nthreads,
					int rpt, int ngb, const GsVec4 *smem, float *m)
{
	const GsTile t = a->k.tiles[tile];

	gs_binned_walk_trees((const uint32_t *) smem, t.first_node, a->k.trees,
						 t.first_tree, t.first_tree + t.n_trees,
						 (const uint16_t *) (smem + a->k.tile_vecs),
						 (size_t) nthreads * (size_t) rpt, (size_t) tid,
						 (size_t) nthreads, rpt, ngb, m);
}

#endif							/* GS_BINNED_PHASES_H */

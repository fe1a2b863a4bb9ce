/*
 * cpu_engine.c
 *	  The CPU engine: scores column-major float32 batches with the traversal
 *	  of forest_eval.h.
 *
 * Rows are processed in blocks so that one tree's nodes and the block's
 * slice of every feature column stay in cache while the block walks the
 * tree.  Within a block, GS_CPU_LANES rows walk each tree in lockstep with
 * the branch-free gs_node_step_num (gs_node_step for forests with
 * categorical or zero-as-missing splits), for as many steps as the tree is deep: the
 * independent rows hide each other's load latency and nothing mispredicts.
 * Very deep (unbalanced) trees use the plain per-row walk instead.  Within a
 * row, trees are added in model order, matching XGBoost's float summation;
 * for forests with double leaves (GsForest.leaf_lo: LightGBM, CatBoost)
 * each output group's trees are summed in double, in model order, as those
 * libraries do, and rounded to float once; a leaf of a linear tree (GsForest.linear)
 * adds its linear model of the row (gs_linear_leaf).  The leaves of symmetric
 * trees (CatBoost's, gs_forest_symmetric) are found level by level, with no
 * traversal: from the block's features binned once to bytes when the
 * forest has bins (forest_bins.h; cpu_bins.c), from one float column slice
 * per level when it has none.  A forest of plain numerical trees with float
 * leaves that has a complete-tree form (forest_complete.h) is walked by
 * cpu_complete.c; a forest of trees of at most 64 leaves with double
 * leaves (LightGBM's) that has leaf bit vectors (forest_qs.h) is scored
 * without walking a tree by cpu_qs.c.  This file holds the node walks and
 * the dispatch.
 *
 * On x86-64 CPUs with AVX-512 (found at run time, gs_cpu_simd) the lockstep
 * walk of plain numerical trees runs sixteen rows to a vector register
 * (tree_leaves_avx512: the same gs_node_step_num decisions on gathered
 * nodes and feature values, so the same leaves; with one output group the
 * leaves are added sixteen rows at a time too).  Binned blocks
 * (cpu_bins.c) take the AVX2 path on AVX-512 CPUs too: eight values binned
 * at a time, bins compared 32 rows to an instruction, leaves added eight
 * rows at a time.  On CPUs with AVX2 (AVX-512 ones too, for the forests the
 * AVX-512 walk does not take: categorical, zero-as-missing or equality
 * splits) the lockstep walk runs eight rows to a register, every split kind
 * vectorized and the walk stopped once all lanes sit on leaves
 * (cpu_walk_avx2.c), and double leaves are added four rows at a time.
 * Every row gets the same operations in the same order, so the same bits;
 * gs_cpu_simd_set forces the portable path (the unit tests compare the
 * paths bit for bit; test_kernel_emulation's synthetic forests, checked
 * against this engine, take every categorical rule).
 *
 * Tried and left out for the node walk (LightGBM's leaf-wise trees,
 * lgb500cat: every tree of depth 8, rows' paths 5 long on average; such
 * forests now take leaf bit vectors): stopping the lockstep walk per
 * register of eight rows rarely fires, as one of eight rows nearly always
 * goes the full depth; lanes that take the next row when theirs reaches a
 * leaf (no wasted steps) lost more to the scalar hand-over than they saved;
 * a branch-free scalar step for the portable walk ran at half the speed of
 * gs_node_step's few, mostly predicted branches.
 */
#include "cpu_engine_int.h"

#include "forest_eval.h"

/* Groups of sixteen rows the AVX-512 walk keeps in flight (more spill). */
#define GS_CPU_SIMD_GROUPS 2


/* Trees deeper than this are walked row by row (lockstep would waste steps). */
#define GS_CPU_LOCKSTEP_MAX_DEPTH 16

/*
 * The vector path in use (GS_CPU_SIMD_AUTO: not detected yet).  The core's
 * one piece of process state: what the processor can do, found once (a
 * race between threads writes the same value), or what a test forced.
 */
static GsCpuSimd cpu_simd = GS_CPU_SIMD_AUTO;

/* The vector path the engine uses; see cpu_engine.h. */
GsCpuSimd
gs_cpu_simd(void)
{
	if (cpu_simd == GS_CPU_SIMD_AUTO)
	{
		cpu_simd = GS_CPU_SIMD_PORTABLE;
#ifdef GS_CPU_X86_SIMD
		__builtin_cpu_init();
		/*
		 * the AVX-512 paths use AVX-512F (and CD, checked where used); BW
		 * too keeps out the first AVX-512 chips (Xeon Phi), not measured
		 */
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
			cpu_simd = GS_CPU_SIMD_AVX512;
		else if (__builtin_cpu_supports("avx2"))
			cpu_simd = GS_CPU_SIMD_AVX2;
#endif
	}
	return cpu_simd;
}

/* Force a vector path (or detect again); see cpu_engine.h. */
void
gs_cpu_simd_set(GsCpuSimd s)
{
	cpu_simd = GS_CPU_SIMD_AUTO;
	if (s == GS_CPU_SIMD_PORTABLE)
		cpu_simd = s;
	else if (s == GS_CPU_SIMD_AVX2 && gs_cpu_simd() == GS_CPU_SIMD_AVX512)
		cpu_simd = s;			/* AVX-512 CPUs have AVX2 */
	(void) gs_cpu_simd();
}

#ifdef GS_CPU_X86_SIMD
/*
 * Leaf indices of rows r..r + 16 * nv of a tree of plain numerical splits
 * (split_kinds == 0), nv groups of sixteen rows in lockstep for depth
 * steps: per lane, gs_node_step_num on the node gathered from the tree
 * (value, info and left are the node's three 32-bit words) and the row's
 * feature value gathered from the batch at feature * ld + lane (the caller
 * checks that these offsets fit in 32 bits).  The comparisons are those of
 * gs_node_step_num: v < threshold goes left, NaN (unordered) follows the
 * default direction, a leaf keeps its index.
 */
__attribute__((target("avx512f")))
static void
tree_leaves_avx512(const GsNode *tree, int depth, const float *x, size_t ld,
				   size_t r, int nv, uint32_t *leaf)
{
	const int  *w = (const int *) tree;
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i one = _mm512_set1_epi32(1);
	const __m512i two = _mm512_set1_epi32(2);
	const __m512i fmask = _mm512_set1_epi32((int) GS_NODE_FEATURE_MASK);
	const __m512i dleft = _mm512_set1_epi32((int) GS_NODE_DEFAULT_LEFT);
	const __m512i leafbit = _mm512_set1_epi32((int) GS_NODE_LEAF);
	const __m512i ldv = _mm512_set1_epi32((int) ld);
	__m512i		idx[GS_CPU_SIMD_GROUPS];

	for (int v = 0; v < nv; v++)
		idx[v] = _mm512_setzero_si512();
	for (int d = 0; d < depth; d++)
		for (int v = 0; v < nv; v++)
		{
			__m512i		i3 = _mm512_add_epi32(_mm512_add_epi32(idx[v], idx[v]), idx[v]);
			__m512		thr = _mm512_i32gather_ps(i3, (const void *) w, 4);
			__m512i		info = _mm512_i32gather_epi32(_mm512_add_epi32(i3, one), (const void *) w, 4);
			__m512i		left = _mm512_i32gather_epi32(_mm512_add_epi32(i3, two), (const void *) w, 4);
			__m512i		off = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_and_si512(info, fmask), ldv),
											   lane);
			__m512		val = _mm512_i32gather_ps(off, (const void *) (x + r + 16 * (size_t) v), 4);
			__mmask16	go_left = _mm512_cmp_ps_mask(val, thr, _CMP_LT_OQ) |
				(_mm512_cmp_ps_mask(val, val, _CMP_UNORD_Q) & _mm512_test_epi32_mask(info, dleft));
			__m512i		next = _mm512_mask_add_epi32(left, (__mmask16) ~go_left, left, one);

			idx[v] = _mm512_mask_blend_epi32(_mm512_test_epi32_mask(info, leafbit), next, idx[v]);
		}
	for (int v = 0; v < nv; v++)
		_mm512_storeu_si512((void *) (leaf + 16 * v), idx[v]);
}

/*
 * margin[i] += the value of leaf leaf[i] of tree, for i < n rounded down to
 * sixteen (returned): the float additions of tree_block, one per row.
 */
__attribute__((target("avx512f")))
static size_t
add_leaves_avx512(const GsNode *tree, const uint32_t *leaf, size_t n, float *margin)
{
	size_t		i = 0;

	for (; i + 16 <= n; i += 16)
	{
		__m512i		l = _mm512_loadu_si512((const void *) (leaf + i));
		__m512		v = _mm512_i32gather_ps(_mm512_add_epi32(_mm512_add_epi32(l, l), l),
											(const void *) tree, 4);

		_mm512_storeu_ps(margin + i, _mm512_add_ps(_mm512_loadu_ps(margin + i), v));
	}
	return i;
}
#endif



/*
 * Whether batches of leading dimension ld of forest f may take the vector
 * walk: plain numerical splits, and every feature offset within 32 bits.
 */
static inline bool
simd_walk(const GsForest *f, size_t ld)
{
	return f->split_kinds == 0 && gs_cpu_simd() == GS_CPU_SIMD_AVX512 &&
		(size_t) f->n_features * ld < ((size_t) 1 << 31);
}

/*
 * Whether batches of leading dimension ld of forest f may take the AVX2
 * walk (cpu_walk_avx2.c), for trees the AVX-512 walk does not take: a CPU
 * with AVX2, and every feature offset, node word and category word index
 * within 31 bits.
 */
static inline bool
avx2_walk(const GsForest *f, size_t ld)
{
	return gs_cpu_simd() != GS_CPU_SIMD_PORTABLE && !simd_walk(f, ld) &&
		(size_t) f->n_features * ld < ((size_t) 1 << 31) &&
		f->n_nodes < ((int64_t) 1 << 29) && f->n_cat_words < ((int64_t) 1 << 30);
}

/*
 * Leaf indices (relative to the tree) that rows r0..r1 of the batch reach
 * in one tree, written to leaf[0..r1-r0), GS_CPU_LANES rows at a time in
 * lockstep (16 with AVX-512 when simd, 8 with AVX2 when avx2).
 */
static inline void
tree_block_leaves(const GsNode *tree, int depth, const float *x, size_t ld,
				  size_t r0, size_t r1, uint32_t *leaf, const uint32_t *cats,
				  uint32_t kinds, bool simd, bool avx2)
{
	size_t		r = r0;

#ifdef GS_CPU_X86_SIMD
	if (simd && depth <= GS_CPU_LOCKSTEP_MAX_DEPTH)
	{
		for (; r + 16 * GS_CPU_SIMD_GROUPS <= r1; r += 16 * GS_CPU_SIMD_GROUPS)
			tree_leaves_avx512(tree, depth, x, ld, r, GS_CPU_SIMD_GROUPS, leaf + (r - r0));
		for (; r + 16 <= r1; r += 16)
			tree_leaves_avx512(tree, depth, x, ld, r, 1, leaf + (r - r0));
	}
	else if (avx2 && depth <= GS_CPU_LOCKSTEP_MAX_DEPTH)
		r += gs_cpu_walk_avx2(tree, depth, x, ld, r0, r1, leaf, cats, kinds);
#else
	(void) simd;
	(void) avx2;
#endif
	if (depth <= GS_CPU_LOCKSTEP_MAX_DEPTH)
	{
		for (; r + GS_CPU_LANES <= r1; r += GS_CPU_LANES)
		{
			uint32_t	idx[GS_CPU_LANES] = {0};

			if (kinds == 0)
				for (int d = 0; d < depth; d++)
					for (int k = 0; k < GS_CPU_LANES; k++)
						idx[k] = gs_node_step_num(tree, idx[k], x + r + k, ld);
			else
				for (int d = 0; d < depth; d++)
					for (int k = 0; k < GS_CPU_LANES; k++)
						idx[k] = gs_node_step(tree, idx[k], x + r + k, ld, cats);
			for (int k = 0; k < GS_CPU_LANES; k++)
				leaf[r - r0 + k] = idx[k];
		}
	}
	for (; r < r1; r++)
		leaf[r - r0] = gs_tree_leaf_index(tree, x + r, ld, cats);
}

/*
 * Add one tree's leaves for rows r0..r1 (at most GS_CPU_BLOCK) of the
 * batch to their margins.
 */
static inline void
tree_block(const GsNode *tree, int depth, const float *x, size_t ld,
		   size_t r0, size_t r1, float *margin, int ng, int g,
		   const uint32_t *cats, uint32_t kinds, bool simd, bool avx2)
{
	uint32_t	leaf[GS_CPU_BLOCK];
	size_t		r = r0;

	tree_block_leaves(tree, depth, x, ld, r0, r1, leaf, cats, kinds, simd, avx2);
#ifdef GS_CPU_X86_SIMD
	if (simd && ng == 1)
		r = r0 + add_leaves_avx512(tree, leaf, r1 - r0, margin + r0);
#endif
	for (; r < r1; r++)
		margin[r * ng + g] += tree[leaf[r - r0]].value;
}

/*
 * Leaf indices of rows r0..r1 in a symmetric tree (gs_forest_symmetric) of
 * depth d: level by level, each row's path gains the bit "went right", the
 * decision of gs_node_step_num (right unless x < threshold; NaN right unless
 * the default is left), over contiguous column slices with no branch.  A
 * full block runs loops of a constant GS_CPU_BLOCK rows, which the compiler
 * vectorizes at -O2; a short last block takes the same steps one row at a
 * time.
 */
static inline uint32_t
symmetric_bit(float v, float t, uint32_t nan_right)
{
	return (uint32_t) (v >= t) | ((uint32_t) (v != v) & nan_right);
}

static void
symmetric_block_leaves(const GsNode *tree, int d, const float *x, size_t ld,
					   size_t r0, size_t r1, uint32_t *leaf)
{
	const size_t n = r1 - r0;
	uint32_t	acc[GS_CPU_BLOCK];

	for (size_t i = 0; i < GS_CPU_BLOCK; i++)
		acc[i] = 0;
	for (int k = 0; k < d; k++)
	{
		const GsNode s = tree[(1u << k) - 1];
		const float *col = x + (size_t) (s.info & GS_NODE_FEATURE_MASK) * ld + r0;
		const float t = s.value;
		const uint32_t nan_right = (s.info & GS_NODE_DEFAULT_LEFT) ? 0u : 1u;

		if (n == GS_CPU_BLOCK)
			for (size_t i = 0; i < GS_CPU_BLOCK; i++)
				acc[i] = (acc[i] << 1) | symmetric_bit(col[i], t, nan_right);
		else
			for (size_t i = 0; i < n; i++)
				acc[i] = (acc[i] << 1) | symmetric_bit(col[i], t, nan_right);
	}
	for (size_t i = 0; i < n; i++)
		leaf[i] = acc[i] + (1u << d) - 1;
}


/*
 * Margins of rows r0..r1 (at most GS_CPU_BLOCK) of a forest with double
 * leaves: one output group at a time, its trees summed in double.
 */
static void
block_margins_double(const GsForest *f, const float *x, size_t ld,
					 size_t r0, size_t r1, float *margin)
{
	const int	ng = f->n_groups;
	const bool	symmetric = gs_forest_symmetric(f);
	const bool	simd = simd_walk(f, ld);
	const bool	avx2 = avx2_walk(f, ld);
	/* AVX2 leaf additions: leaf index * 3 within 31 bits */
	const bool	add4 = (simd || avx2) && f->n_nodes < ((int64_t) 1 << 29);
	double		acc[GS_CPU_BLOCK];
	uint32_t	leaf[GS_CPU_BLOCK];

	for (int g = 0; g < ng; g++)
	{
		for (size_t r = r0; r < r1; r++)
			acc[r - r0] = (double) f->base_margin[g];
		for (int32_t t = 0; t < f->n_trees; t++)
		{
			const GsNode *tree = f->nodes + f->tree_offset[t];
			const float *lo = f->leaf_lo + f->tree_offset[t];

			if (f->tree_group[t] != g)
				continue;
			if (symmetric)
				symmetric_block_leaves(tree, f->tree_depth[t], x, ld, r0, r1, leaf);
			else
				tree_block_leaves(tree, f->tree_depth[t], x, ld, r0, r1, leaf,
								  f->cat_words, f->split_kinds, simd, avx2);
			if (f->linear)
				for (size_t r = r0; r < r1; r++)
					acc[r - r0] += gs_linear_leaf(f->nodes, f->leaf_lo, f->linear,
												  f->tree_offset[t] + leaf[r - r0], x + r, ld);
			else
			{
				size_t		r = r0;

#ifdef GS_CPU_X86_SIMD
				if (add4)
					r += gs_cpu_add_leaves_double_avx2(tree, lo, leaf, r1 - r0, acc);
#else
				(void) add4;
#endif
				for (; r < r1; r++)
					acc[r - r0] += gs_leaf_double(tree, lo, leaf[r - r0]);
			}
		}
		for (size_t r = r0; r < r1; r++)
			margin[r * ng + g] = (float) acc[r - r0];
	}
}

/* Margins for a batch; see cpu_engine.h. */
void
gs_cpu_margins(const GsForest *f, const float *x, size_t ld, size_t n_rows,
			   float *margin)
{
	const int	ng = f->n_groups;
	const bool	simd = simd_walk(f, ld);
	const bool	avx2 = avx2_walk(f, ld);
	size_t		r0;

	if (f->complete != NULL && ng <= GS_CPU_COMPLETE_GROUPS)
	{
		gs_cpu_complete_margins(f, x, ld, n_rows, margin);
		return;
	}
	if (f->bins)
	{
		gs_cpu_bins_margins(f, x, ld, n_rows, margin);
		return;
	}
	if (f->qs)
	{
		gs_cpu_qs_margins(f, x, ld, n_rows, margin);
		return;
	}
	if (f->leaf_lo)
	{
		for (r0 = 0; r0 < n_rows; r0 += GS_CPU_BLOCK)
			block_margins_double(f, x, ld, r0,
								 r0 + GS_CPU_BLOCK < n_rows ? r0 + GS_CPU_BLOCK : n_rows,
								 margin);
		return;
	}

	for (r0 = 0; r0 < n_rows; r0 += GS_CPU_BLOCK)
	{
		size_t		r1 = r0 + GS_CPU_BLOCK < n_rows ? r0 + GS_CPU_BLOCK : n_rows;
		size_t		r;
		int32_t		t;

		for (r = r0; r < r1; r++)
			for (int g = 0; g < ng; g++)
				margin[r * ng + g] = f->base_margin[g];

		for (t = 0; t < f->n_trees; t++)
			tree_block(f->nodes + f->tree_offset[t], f->tree_depth[t], x, ld,
					   r0, r1, margin, ng, f->tree_group[t], f->cat_words, f->split_kinds, simd, avx2);
	}
}

/* Outputs for a batch; see cpu_engine.h. */
void
gs_cpu_predict(const GsForest *f, const float *x, size_t ld, size_t n_rows,
			   float *margin, float *out)
{
	size_t		r;

	gs_cpu_margins(f, x, ld, n_rows, margin);
	for (r = 0; r < n_rows; r++)
		gs_transform_row(f->transform, f->transform_param, margin + r * f->n_groups, f->n_groups,
						 out + r * f->n_outputs);
}


/*
 * Outputs for one row-major row; see cpu_engine.h.  With a single row there
 * are no rows to interleave, so GS_CPU_LANES trees walk in lockstep
 * instead; their leaves are then added in tree order.  A forest with bins
 * takes gs_cpu_bins_row_margins.
 */
void
gs_cpu_predict_row(const GsForest *f, const float *x, float *margin, float *out)
{
	int32_t		t = 0;

	if (f->bins)
	{
		gs_cpu_bins_row_margins(f, x, margin);
		gs_transform_row(f->transform, f->transform_param, margin, f->n_groups, out);
		return;
	}
	if (f->leaf_lo)
	{
		/* double leaves: each group's trees summed in double, in order */
		for (int g = 0; g < f->n_groups; g++)
		{
			double		acc = (double) f->base_margin[g];

			for (t = 0; t < f->n_trees; t++)
				if (f->tree_group[t] == g)
				{
					const GsNode *tree = f->nodes + f->tree_offset[t];
					uint32_t	leaf = gs_tree_leaf_index(tree, x, 1, f->cat_words);

					acc += f->linear ?
						gs_linear_leaf(f->nodes, f->leaf_lo, f->linear, f->tree_offset[t] + leaf, x, 1) :
						gs_leaf_double(tree, f->leaf_lo + f->tree_offset[t], leaf);
				}
			margin[g] = (float) acc;
		}
		gs_transform_row(f->transform, f->transform_param, margin, f->n_groups, out);
		return;
	}

	for (int g = 0; g < f->n_groups; g++)
		margin[g] = f->base_margin[g];
	for (; t + GS_CPU_LANES <= f->n_trees; t += GS_CPU_LANES)
	{
		uint32_t	idx[GS_CPU_LANES] = {0};
		int			depth = 0;

		for (int k = 0; k < GS_CPU_LANES; k++)
			depth = f->tree_depth[t + k] > depth ? f->tree_depth[t + k] : depth;
		if (depth > GS_CPU_LOCKSTEP_MAX_DEPTH)
		{
			for (int k = 0; k < GS_CPU_LANES; k++)
				margin[f->tree_group[t + k]] += gs_tree_leaf(f->nodes + f->tree_offset[t + k], x, 1, f->cat_words);
			continue;
		}
		if (f->split_kinds == 0)
			for (int d = 0; d < depth; d++)
				for (int k = 0; k < GS_CPU_LANES; k++)
					idx[k] = gs_node_step_num(f->nodes + f->tree_offset[t + k], idx[k], x, 1);
		else
			for (int d = 0; d < depth; d++)
				for (int k = 0; k < GS_CPU_LANES; k++)
					idx[k] = gs_node_step(f->nodes + f->tree_offset[t + k], idx[k], x, 1, f->cat_words);
		for (int k = 0; k < GS_CPU_LANES; k++)
			margin[f->tree_group[t + k]] += f->nodes[f->tree_offset[t + k] + idx[k]].value;
	}
	for (; t < f->n_trees; t++)
		margin[f->tree_group[t]] += gs_tree_leaf(f->nodes + f->tree_offset[t], x, 1, f->cat_words);
	gs_transform_row(f->transform, f->transform_param, margin, f->n_groups, out);
}

/* Row-major rows into a column-major batch; see cpu_engine.h. */
void
gs_rows_to_columns(const float *rows, size_t n_rows, int n_features, float *x, size_t ld)
{
	const size_t nf = (size_t) n_features;

	for (size_t r0 = 0; r0 < n_rows; r0 += GS_CPU_BLOCK)
	{
		size_t		k = n_rows - r0 < GS_CPU_BLOCK ? n_rows - r0 : GS_CPU_BLOCK;
		const float *src = rows + r0 * nf;

		for (size_t f = 0; f < nf; f++)
		{
			float	   *col = x + f * ld + r0;

			for (size_t i = 0; i < k; i++)
				col[i] = src[i * nf + f];
		}
	}
}

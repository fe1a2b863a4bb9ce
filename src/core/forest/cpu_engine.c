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
 * forest has bins (forest_bins.h), from one float column slice per level
 * when it has none.
 *
 * A forest of plain numerical trees with float leaves (XGBoost's, ONNX-ML's)
 * usually has a complete-tree form (forest_complete.h): every tree a
 * complete tree of the forest's depth in separate arrays, walked
 * i = 2i + 1 + (went right) with no leaf test (complete_margins).  The
 * portable walk copies blocks of rows to a row-major block and runs eight
 * rows in lockstep; on CPUs with AVX2 (AVX-512 ones included) the batch's
 * columns are read in place 32 rows at a time, the first three levels
 * decided on whole column loads and blended per lane, the deeper ones
 * gathered (complete_cols_avx2).  The same decisions and the same float
 * additions in tree order, so the same bits.
 *
 * On x86-64 CPUs with AVX-512 (found at run time, gs_cpu_simd) the lockstep
 * walk of plain numerical trees runs sixteen rows to a vector register
 * (tree_leaves_avx512: the same gs_node_step_num decisions on gathered
 * nodes and feature values, so the same leaves; with one output group the
 * leaves are added sixteen rows at a time too), and binned blocks are
 * binned sixteen values and compared 64 rows to an instruction
 * (bins_block_margins_avx512: the same code compiled for AVX-512, the
 * binary search of gs_bins_of vectorized).  Every row gets the same
 * operations in the same order, so the same bits; gs_cpu_simd_set forces
 * the portable path (the unit tests compare the two bit for bit).  Trees
 * with categorical, zero-as-missing or equality splits stay on the
 * portable walk.
 */
#include "cpu_engine.h"

#include "forest_bins.h"
#include "forest_complete.h"
#include "forest_eval.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define GS_CPU_X86_SIMD 1
#include <immintrin.h>
#endif

#define GS_CPU_BLOCK 64
#define GS_CPU_LANES 8
/* Groups of sixteen rows the AVX-512 walk keeps in flight (more spill). */
#define GS_CPU_SIMD_GROUPS 2


/*
 * Binned blocks (forest_bins.h): at most this many rows, and about this
 * many bytes of bins (at least a GS_CPU_BLOCK of rows: up to 64 KB for the
 * widest forests, a CatBoost model's hundreds of CTRs)
 */
#define GS_CPU_BINS_ROWS 512
#define GS_CPU_BINS_BYTES (256 * 128)
#define GS_CPU_BINS_MAX_BYTES (GS_BINS_MAX_USED * GS_CPU_BLOCK > GS_CPU_BINS_BYTES ? \
							   GS_BINS_MAX_USED * GS_CPU_BLOCK : GS_CPU_BINS_BYTES)
/* Trees whose leaves a row of a binned block adds at once (still in order;
 * bins_block_margins names four). */
#define GS_CPU_BINS_TREES 4
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
		/* the vector paths use AVX-512F and, for CatBoost's bins, AVX-512BW */
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
	cpu_simd = s == GS_CPU_SIMD_PORTABLE ? s : GS_CPU_SIMD_AUTO;
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
 * The complete-tree walk (forest_complete.h): the rows a block takes, output
 * groups at most, rows in lockstep on the portable path, and the most bytes
 * of rows copied to a row-major block.
 */
#define GS_CPU_COMPLETE_ROWS 128
#define GS_CPU_COMPLETE_GROUPS 16
#define GS_CPU_COMPLETE_LANES 8
/* Registers of eight rows the AVX2 walk keeps in flight (its gathers' latency) */
#define GS_CPU_COMPLETE_VREGS 4
#define GS_CPU_COMPLETE_ROW_BYTES (32 * 1024)

/*
 * Whether a row goes right at split w, t of a complete tree
 * (forest_complete.h; feature j of the row at x[j * fs]): x >= t, or NaN
 * where the split sends NaN right; gs_node_step_num's decision.
 */
static inline __attribute__((always_inline)) uint32_t
complete_step(uint32_t w, float t, const float *x, size_t fs)
{
	float		v = x[(size_t) (w & GS_COMPLETE_FEATURE_MASK) * fs];

	return (uint32_t) (v >= t) | ((uint32_t) (v != v) & (w >> 31));
}

/*
 * Add to m[g][0..n) the leaves of the trees of group g that n rows reach
 * (feature j of row i at xs[i * rs + j * fs]): the trees one at a time, in
 * order, the rows GS_CPU_COMPLETE_LANES at a time in lockstep, i = 2i + 1
 * + (went right) for the forest's depth steps.  Inlined with fs = 1 (rows
 * copied to a row-major block) or rs = 1 (the batch's columns).
 */
static inline __attribute__((always_inline)) void
complete_rows(const GsForest *f, const float *xs, size_t rs, size_t fs, size_t n,
			  float (*m)[GS_CPU_COMPLETE_ROWS])
{
	const GsForestComplete *c = f->complete;
	const int	d = c->depth;
	const size_t splits = ((size_t) 1 << d) - 1;

	for (int32_t t = 0; t < f->n_trees; t++)
	{
		const uint32_t *fe = c->feature + (size_t) t * splits;
		const float *th = c->threshold + (size_t) t * splits;
		const float *lf = c->leaf + (size_t) t * (splits + 1);
		float	   *mg = m[f->tree_group[t]];
		size_t		i = 0;

		for (; i + GS_CPU_COMPLETE_LANES <= n; i += GS_CPU_COMPLETE_LANES)
		{
			uint32_t	idx[GS_CPU_COMPLETE_LANES];

			for (int k = 0; k < GS_CPU_COMPLETE_LANES; k++)
				idx[k] = 1 + complete_step(fe[0], th[0], xs + (i + k) * rs, fs);
			for (int l = 1; l < d; l++)
				for (int k = 0; k < GS_CPU_COMPLETE_LANES; k++)
					idx[k] = 2 * idx[k] + 1 + complete_step(fe[idx[k]], th[idx[k]], xs + (i + k) * rs, fs);
			for (int k = 0; k < GS_CPU_COMPLETE_LANES; k++)
				mg[i + k] += lf[idx[k] - splits];
		}
		for (; i < n; i++)
		{
			uint32_t	h = 0;

			for (int l = 0; l < d; l++)
				h = 2 * h + 1 + complete_step(fe[h], th[h], xs + i * rs, fs);
			mg[i] += lf[h - splits];
		}
	}
}

#ifdef GS_CPU_X86_SIMD
/*
 * Which lanes go right at a complete-tree split of feature word w (its NaN
 * direction) and threshold t, as complete_step decides: x >= t, or NaN
 * where the split sends NaN right; all ones for right.
 */
__attribute__((target("avx2"), always_inline))
static inline __m256
complete_right_avx2(__m256 x, __m256 t, __m256 nan_right)
{
	return _mm256_or_ps(_mm256_cmp_ps(x, t, _CMP_GE_OQ),
						_mm256_and_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q), nan_right));
}

/* The same at a split known to the caller (fe[h], th[h]), eight rows loaded from col. */
__attribute__((target("avx2"), always_inline))
static inline __m256
complete_right_at(const int *fe, const float *th, uint32_t h, const float *xr, size_t ld)
{
	const float *col = xr + (size_t) ((uint32_t) fe[h] & GS_COMPLETE_FEATURE_MASK) * ld;

	return complete_right_avx2(_mm256_loadu_ps(col), _mm256_set1_ps(th[h]),
							   _mm256_castsi256_ps(_mm256_set1_epi32(fe[h] < 0 ? -1 : 0)));
}

/*
 * complete_rows on the batch's columns (feature j of row i at xr[j * ld +
 * i]; the caller checks that n_features * ld fits 31 bits) with AVX2,
 * 32 rows (GS_CPU_COMPLETE_VREGS registers of eight) at a time: levels 0 to 2 from the
 * columns their splits read, loaded whole (one, two, four a tree), each
 * lane taking its own node's decision; deeper levels from each lane's split
 * and value gathered.  The same decisions as complete_step, so the same
 * leaves, added to each row's margin in tree order.  The last n % 32 rows
 * take complete_step one at a time.
 */
__attribute__((target("avx2")))
static void
complete_cols_avx2(const GsForest *f, const float *xr, size_t ld, size_t n,
				   float (*m)[GS_CPU_COMPLETE_ROWS])
{
	const GsForestComplete *c = f->complete;
	const int	d = c->depth;
	const size_t splits = ((size_t) 1 << d) - 1;
	const __m256i one = _mm256_set1_epi32(1);
	const __m256i two = _mm256_set1_epi32(2);
	const __m256i three = _mm256_set1_epi32(3);
	const __m256i fmask = _mm256_set1_epi32((int) GS_COMPLETE_FEATURE_MASK);
	const __m256i nsplits = _mm256_set1_epi32((int) splits);
	const __m256i ldv = _mm256_set1_epi32((int) ld);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const size_t nv = n - n % (8 * GS_CPU_COMPLETE_VREGS);

	for (int32_t t = 0; t < f->n_trees; t++)
	{
		const int  *fe = (const int *) (c->feature + (size_t) t * splits);
		const float *th = c->threshold + (size_t) t * splits;
		const float *lf = c->leaf + (size_t) t * (splits + 1);
		float	   *mg = m[f->tree_group[t]];

		for (size_t i = 0; i < nv; i += 8 * GS_CPU_COMPLETE_VREGS)
		{
			__m256i		idx[GS_CPU_COMPLETE_VREGS];

			for (int v = 0; v < GS_CPU_COMPLETE_VREGS; v++)
			{
				const float *x8 = xr + i + 8 * v;
				__m256		r = complete_right_at(fe, th, 0, x8, ld);

				idx[v] = _mm256_sub_epi32(one, _mm256_castps_si256(r));
				if (d > 1)
				{
					/* nodes 1 and 2: lanes at 2 take the second */
					__m256		at2 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(idx[v], two));

					r = _mm256_blendv_ps(complete_right_at(fe, th, 1, x8, ld),
										 complete_right_at(fe, th, 2, x8, ld), at2);
					idx[v] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(idx[v], idx[v]), one),
											  _mm256_castps_si256(r));
				}
				if (d > 2)
				{
					/* nodes 3 to 6: bit 0 and bit 1 of idx - 3 pick the lane's */
					__m256i		p = _mm256_sub_epi32(idx[v], three);
					__m256		b0 = _mm256_castsi256_ps(_mm256_slli_epi32(p, 31));
					__m256		b1 = _mm256_castsi256_ps(_mm256_slli_epi32(p, 30));
					__m256		lo = _mm256_blendv_ps(complete_right_at(fe, th, 3, x8, ld),
													  complete_right_at(fe, th, 4, x8, ld), b0);
					__m256		hi = _mm256_blendv_ps(complete_right_at(fe, th, 5, x8, ld),
													  complete_right_at(fe, th, 6, x8, ld), b0);

					r = _mm256_blendv_ps(lo, hi, b1);
					idx[v] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(idx[v], idx[v]), one),
											  _mm256_castps_si256(r));
				}
			}
			for (int l = 3; l < d; l++)
				for (int v = 0; v < GS_CPU_COMPLETE_VREGS; v++)
				{
					__m256i		w = _mm256_i32gather_epi32(fe, idx[v], 4);
					__m256		tv = _mm256_i32gather_ps(th, idx[v], 4);
					__m256i		off = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_and_si256(w, fmask), ldv),
													   lane);
					__m256		x = _mm256_i32gather_ps(xr + i + 8 * v, off, 4);
					__m256		r = complete_right_avx2(x, tv, _mm256_castsi256_ps(_mm256_srai_epi32(w, 31)));

					idx[v] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(idx[v], idx[v]), one),
											  _mm256_castps_si256(r));
				}
			for (int v = 0; v < GS_CPU_COMPLETE_VREGS; v++)
			{
				__m256		lv = _mm256_i32gather_ps(lf, _mm256_sub_epi32(idx[v], nsplits), 4);

				_mm256_storeu_ps(mg + i + 8 * v, _mm256_add_ps(_mm256_loadu_ps(mg + i + 8 * v), lv));
			}
		}
		for (size_t i = nv; i < n; i++)
		{
			uint32_t	h = 0;

			for (int l = 0; l < d; l++)
				h = 2 * h + 1 + complete_step((uint32_t) fe[h], th[h], xr + i, ld);
			mg[i] += lf[h - splits];
		}
	}
}
#endif

/*
 * Margins of a batch of a forest with a complete-tree form on the portable
 * path (gs_cpu_margins; at most GS_CPU_COMPLETE_GROUPS output groups), in
 * blocks of GS_CPU_COMPLETE_ROWS rows, each copied to a row-major block
 * first when its rows fit GS_CPU_COMPLETE_ROW_BYTES (a row's features then
 * one base and an index: no multiply a step), then complete_rows; a row's
 * margin gets its trees' leaves in tree order, float additions as
 * tree_block's, so the same bits.
 */
static void
complete_margins(const GsForest *f, const float *x, size_t ld, size_t n_rows, float *margin)
{
	const bool	simd = gs_cpu_simd() != GS_CPU_SIMD_PORTABLE;
	const int	ng = f->n_groups;
	const size_t nf = (size_t) f->n_features;
	const bool	rowwise = nf * GS_CPU_COMPLETE_ROWS * sizeof(float) <= GS_CPU_COMPLETE_ROW_BYTES;
	float		m[GS_CPU_COMPLETE_GROUPS][GS_CPU_COMPLETE_ROWS];
	float		xb[GS_CPU_COMPLETE_ROW_BYTES / sizeof(float)];

	for (size_t r0 = 0; r0 < n_rows; r0 += GS_CPU_COMPLETE_ROWS)
	{
		const size_t n = n_rows - r0 < GS_CPU_COMPLETE_ROWS ? n_rows - r0 : GS_CPU_COMPLETE_ROWS;

		for (int g = 0; g < ng; g++)
			for (size_t i = 0; i < n; i++)
				m[g][i] = f->base_margin[g];
#ifdef GS_CPU_X86_SIMD
		if (simd && nf * ld < ((size_t) 1 << 31))
			complete_cols_avx2(f, x + r0, ld, n, m);
		else
#else
		(void) simd;
#endif
		if (rowwise)
		{
			for (size_t j = 0; j < nf; j++)
				for (size_t i = 0; i < n; i++)
					xb[i * nf + j] = x[j * ld + r0 + i];
			complete_rows(f, xb, nf, 1, n, m);
		}
		else
			complete_rows(f, x + r0, 1, ld, n, m);
		for (size_t i = 0; i < n; i++)
			for (int g = 0; g < ng; g++)
				margin[(r0 + i) * ng + g] = m[g][i];
	}
}


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
 * Leaf indices (relative to the tree) that rows r0..r1 of the batch reach
 * in one tree, written to leaf[0..r1-r0), GS_CPU_LANES rows at a time in
 * lockstep.
 */
static inline void
tree_block_leaves(const GsNode *tree, int depth, const float *x, size_t ld,
				  size_t r0, size_t r1, uint32_t *leaf, const uint32_t *cats,
				  uint32_t kinds, bool simd)
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
#else
	(void) simd;
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
		   const uint32_t *cats, uint32_t kinds, bool simd)
{
	uint32_t	leaf[GS_CPU_BLOCK];
	size_t		r = r0;

	tree_block_leaves(tree, depth, x, ld, r0, r1, leaf, cats, kinds, simd);
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
 * Leaf indices of GS_CPU_BLOCK binned rows (q[u * stride + i]: the bin of
 * used feature u in row i) in a symmetric tree whose d levels read used
 * features u[k] at thresholds j[k]: level by level, each row's index gains
 * the bit "bin > j" (forest_bins.h).  Byte-wide for trees of depth 8 or
 * less, sixteen rows to an SSE2 instruction.
 */
static inline __attribute__((always_inline)) void
bins_leaves(const uint8_t *q, size_t stride, int d, const uint16_t *u, const uint8_t *j,
			uint16_t *leaf)
{
	if (d <= 8)
	{
		uint8_t		acc[GS_CPU_BLOCK] = {0};

		for (int k = 0; k < d; k++)
		{
			const uint8_t *col = q + u[k] * stride;
			const uint8_t jk = j[k];

			for (size_t i = 0; i < GS_CPU_BLOCK; i++)
				acc[i] = (uint8_t) ((acc[i] << 1) | (col[i] > jk));
		}
		for (size_t i = 0; i < GS_CPU_BLOCK; i++)
			leaf[i] = acc[i];
	}
	else
	{
		uint16_t	acc[GS_CPU_BLOCK] = {0};

		for (int k = 0; k < d; k++)
		{
			const uint8_t *col = q + u[k] * stride;
			const uint8_t jk = j[k];

			for (size_t i = 0; i < GS_CPU_BLOCK; i++)
				acc[i] = (uint16_t) ((acc[i] << 1) | (col[i] > jk));
		}
		for (size_t i = 0; i < GS_CPU_BLOCK; i++)
			leaf[i] = acc[i];
	}
}

/*
 * Rows a binned block takes: as many as fit GS_CPU_BINS_BYTES of bins (at
 * most GS_CPU_BINS_ROWS, at least GS_CPU_BLOCK), a multiple of GS_CPU_BLOCK.  The more rows, the
 * more of them share each tree's leaves while those are in cache.
 */
static size_t
bins_block_rows(const GsForestBins *b)
{
	size_t		rows = GS_CPU_BINS_BYTES / (size_t) (b->n_used > 0 ? b->n_used : 1);

	rows -= rows % GS_CPU_BLOCK;
	if (rows < GS_CPU_BLOCK)
		return GS_CPU_BLOCK;
	return rows > GS_CPU_BINS_ROWS ? GS_CPU_BINS_ROWS : rows;
}

/*
 * Margins of rows r0..r1 (at most bins_block_rows) of a forest with bins:
 * the block's features binned once (rows past r1, up to a whole
 * GS_CPU_BLOCK, get bin 0 and are dropped), then each output group's trees,
 * GS_CPU_BINS_TREES at a time, their double leaves added to each row in
 * tree order, as block_margins_double does.
 */
#ifdef GS_CPU_X86_SIMD
/*
 * The bins of n values of one column (gs_bins_of) sixteen at a time: the
 * same branch-free binary search over the nt thresholds t, whose steps
 * depend only on nt, with the threshold of each lane gathered and compared
 * as gs_bins_of compares it (t <= v, false for NaN); NaN gets nan_bin.
 * The last n % 16 values take gs_bins_of.
 */
__attribute__((target("avx512f,avx512bw")))
static void
bins_column_avx512(const float *col, size_t n, const float *t, uint32_t nt,
				   uint8_t nan_bin, uint8_t *q)
{
	const __m512i nanv = _mm512_set1_epi32(nan_bin);
	size_t		i = 0;

	for (; i + 16 <= n; i += 16)
	{
		__m512		v = _mm512_loadu_ps(col + i);
		__m512i		base = _mm512_setzero_si512();
		uint32_t	len = nt;

		while (len > 1)
		{
			uint32_t	half = len / 2;
			__m512		tv = _mm512_i32gather_ps(_mm512_add_epi32(base, _mm512_set1_epi32((int) half - 1)),
												 (const void *) t, 4);

			base = _mm512_mask_add_epi32(base, _mm512_cmp_ps_mask(tv, v, _CMP_LE_OQ), base,
										 _mm512_set1_epi32((int) half));
			len -= half;
		}
		if (len == 1)
		{
			__m512		tv = _mm512_i32gather_ps(base, (const void *) t, 4);

			base = _mm512_mask_add_epi32(base, _mm512_cmp_ps_mask(tv, v, _CMP_LE_OQ), base,
										 _mm512_set1_epi32(1));
		}
		base = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), base, nanv);
		_mm_storeu_si128((__m128i *) (q + i), _mm512_cvtepi32_epi8(base));
	}
	for (; i < n; i++)
		q[i] = gs_bins_of(col[i], t, nt, nan_bin);
}
#endif

/* The bins of n values of one column: gs_bins_of, or sixteen at a time. */
static inline __attribute__((always_inline)) void
bins_column(const float *col, size_t n, const float *t, uint32_t nt, uint8_t nan_bin,
			uint8_t *q, bool simd)
{
#ifdef GS_CPU_X86_SIMD
	if (simd)
	{
		bins_column_avx512(col, n, t, nt, nan_bin, q);
		return;
	}
#else
	(void) simd;
#endif
	for (size_t i = 0; i < n; i++)
		q[i] = gs_bins_of(col[i], t, nt, nan_bin);
}

static inline __attribute__((always_inline)) void
bins_block_margins_impl(const GsForest *f, const float *x, size_t ld, size_t r0, size_t r1,
						float *margin, bool simd)
{
	const GsForestBins *b = f->bins;
	const size_t n = r1 - r0;
	const size_t stride = (n + GS_CPU_BLOCK - 1) / GS_CPU_BLOCK * GS_CPU_BLOCK;
	const int	ng = f->n_groups;
	uint8_t		q[GS_CPU_BINS_MAX_BYTES];
	uint16_t	leaf[GS_CPU_BINS_TREES][GS_CPU_BINS_ROWS];
	double		acc[GS_CPU_BINS_ROWS];

	for (int32_t u = 0; u < b->n_used; u++)
	{
		const float *col = x + (size_t) b->feature[u] * ld + r0;
		const float *t = b->border + b->border_start[u];
		const uint32_t nt = b->border_start[u + 1] - b->border_start[u];
		uint8_t    *qu = q + (size_t) u * stride;

		bins_column(col, n, t, nt, b->nan_bin[u], qu, simd);
		for (size_t i = n; i < stride; i++)
			qu[i] = 0;
	}
	for (int g = 0; g < ng; g++)
	{
		int32_t		t = 0;

		for (size_t i = 0; i < n; i++)
			acc[i] = (double) f->base_margin[g];
		while (t < f->n_trees)
		{
			const double *lv[GS_CPU_BINS_TREES];
			int			m = 0;

			/* the group's next trees, in order */
			for (; t < f->n_trees && m < GS_CPU_BINS_TREES; t++)
			{
				if (f->tree_group[t] != g)
					continue;
				for (size_t c = 0; c < stride; c += GS_CPU_BLOCK)
					bins_leaves(q + c, stride, f->tree_depth[t],
								b->level_used + b->level_start[t],
								b->level_bin + b->level_start[t], leaf[m] + c);
				lv[m++] = b->leaf + b->leaf_start[t];
			}
			if (m == GS_CPU_BINS_TREES)
			{
				const double *l0 = lv[0], *l1 = lv[1], *l2 = lv[2], *l3 = lv[3];

				for (size_t i = 0; i < n; i++)
					acc[i] = acc[i] + l0[leaf[0][i]] + l1[leaf[1][i]] + l2[leaf[2][i]] + l3[leaf[3][i]];
			}
			else
				for (int k = 0; k < m; k++)
					for (size_t i = 0; i < n; i++)
						acc[i] += lv[k][leaf[k][i]];
		}
		for (size_t i = 0; i < n; i++)
			margin[(r0 + i) * ng + g] = (float) acc[i];
	}
}

static void
bins_block_margins(const GsForest *f, const float *x, size_t ld, size_t r0, size_t r1,
				   float *margin)
{
	bins_block_margins_impl(f, x, ld, r0, r1, margin, false);
}

#ifdef GS_CPU_X86_SIMD
/*
 * The same compiled for AVX-512 (the byte compares of bins_leaves 64 rows
 * to an instruction, the binning sixteen values at a time): the same
 * operations in the same order on each row, so the same bits.
 */
__attribute__((target("avx512f,avx512bw")))
static void
bins_block_margins_avx512(const GsForest *f, const float *x, size_t ld, size_t r0, size_t r1,
						  float *margin)
{
	bins_block_margins_impl(f, x, ld, r0, r1, margin, true);
}
#endif

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
								  f->cat_words, f->split_kinds, simd_walk(f, ld));
			if (f->linear)
				for (size_t r = r0; r < r1; r++)
					acc[r - r0] += gs_linear_leaf(f->nodes, f->leaf_lo, f->linear,
												  f->tree_offset[t] + leaf[r - r0], x + r, ld);
			else
				for (size_t r = r0; r < r1; r++)
					acc[r - r0] += gs_leaf_double(tree, lo, leaf[r - r0]);
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
	size_t		r0;

	if (f->complete != NULL && ng <= GS_CPU_COMPLETE_GROUPS)
	{
		complete_margins(f, x, ld, n_rows, margin);
		return;
	}

	if (f->bins)
	{
		const size_t rows = bins_block_rows(f->bins);

		for (r0 = 0; r0 < n_rows; r0 += rows)
		{
			size_t		r1 = r0 + rows < n_rows ? r0 + rows : n_rows;

#ifdef GS_CPU_X86_SIMD
			if (gs_cpu_simd() == GS_CPU_SIMD_AVX512)
			{
				bins_block_margins_avx512(f, x, ld, r0, r1, margin);
				continue;
			}
#endif
			bins_block_margins(f, x, ld, r0, r1, margin);
		}
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
					   r0, r1, margin, ng, f->tree_group[t], f->cat_words, f->split_kinds, simd);
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
 * Margins of one row-major row of a forest with bins: its features binned,
 * then each tree's leaf index from a byte comparison per level, the leaves
 * summed in double in tree order, as bins_block_margins does.  A tree's
 * levels are three bytes each and its leaves contiguous: far fewer cache
 * lines than walking its nodes.
 */
static void
bins_row_margins(const GsForest *f, const float *x, float *margin)
{
	const GsForestBins *b = f->bins;
	uint8_t		q[GS_BINS_MAX_USED];

	for (int32_t u = 0; u < b->n_used; u++)
		q[u] = gs_bins_of(x[b->feature[u]], b->border + b->border_start[u],
						  b->border_start[u + 1] - b->border_start[u], b->nan_bin[u]);
	for (int g = 0; g < f->n_groups; g++)
	{
		double		acc = (double) f->base_margin[g];

		for (int32_t t = 0; t < f->n_trees; t++)
		{
			const uint16_t *u = b->level_used + b->level_start[t];
			const uint8_t *j = b->level_bin + b->level_start[t];
			uint32_t	leaf = 0;

			if (f->tree_group[t] != g)
				continue;
			for (int k = 0; k < f->tree_depth[t]; k++)
				leaf = (leaf << 1) | (uint32_t) (q[u[k]] > j[k]);
			acc += b->leaf[b->leaf_start[t] + leaf];
		}
		margin[g] = (float) acc;
	}
}

/*
 * Outputs for one row-major row; see cpu_engine.h.  With a single row there
 * are no rows to interleave, so GS_CPU_LANES trees walk in lockstep
 * instead; their leaves are then added in tree order.  A forest with bins
 * takes bins_row_margins.
 */
void
gs_cpu_predict_row(const GsForest *f, const float *x, float *margin, float *out)
{
	int32_t		t = 0;

	if (f->bins)
	{
		bins_row_margins(f, x, margin);
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

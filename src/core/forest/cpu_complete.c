/*
 * cpu_complete.c
 *	  The CPU engine's walk of complete trees (forest_complete.h): the
 *	  forests of plain numerical trees with float leaves (XGBoost's,
 *	  ONNX-ML's) that have a complete-tree form.
 *
 * Every tree is a complete tree of the forest's depth in separate arrays,
 * walked i = 2i + 1 + (went right) with no leaf test.  The portable walk
 * copies blocks of rows to a row-major block and runs eight rows in
 * lockstep; on CPUs with AVX2 (AVX-512 ones included) the batch's columns
 * are read in place 32 rows at a time, the first three levels decided on
 * whole column loads and blended per lane, the deeper ones gathered
 * (complete_cols_avx2).  The same decisions and the same float additions
 * in tree order as the node walk of cpu_engine.c, so the same bits.  No
 * memory is allocated: blocks live on the stack.
 */
#include "cpu_engine_int.h"

#include "forest_complete.h"
#include "forest_eval.h"

/*
 * The complete-tree walk (forest_complete.h): the rows a block takes (and,
 * on the AVX2 path, the most it takes when the trees do not fit the cache
 * anyway, GS_CPU_COMPLETE_BIG_TREES bytes or more: then the more rows share
 * each tree while it is in L1, the fewer times the trees stream from L3,
 * as long as the block's rows stay in L2, GS_CPU_COMPLETE_BLOCK_BYTES), rows
 * in lockstep on the portable path, and the most bytes of rows copied to a
 * row-major block.
 */
#define GS_CPU_COMPLETE_ROWS 128
#define GS_CPU_COMPLETE_MAX_ROWS 1024
#define GS_CPU_COMPLETE_BIG_TREES (512 * 1024)
#define GS_CPU_COMPLETE_BLOCK_BYTES (256 * 1024)
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
			  float (*m)[GS_CPU_COMPLETE_MAX_ROWS])
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
				   float (*m)[GS_CPU_COMPLETE_MAX_ROWS])
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
 * Rows a block of the AVX2 walk takes: GS_CPU_COMPLETE_ROWS, or for trees
 * of GS_CPU_COMPLETE_BIG_TREES bytes or more as many as keep the block's
 * features within GS_CPU_COMPLETE_BLOCK_BYTES (up to
 * GS_CPU_COMPLETE_MAX_ROWS, a multiple of 32).  The block size changes
 * which rows share a pass over the trees, never a row's operations.
 */
static size_t
complete_block_rows(const GsForest *f)
{
	size_t		row_bytes = (size_t) (f->n_features > 0 ? f->n_features : 1) * sizeof(float);
	size_t		rows;

	if (gs_forest_complete_bytes(f) < GS_CPU_COMPLETE_BIG_TREES)
		return GS_CPU_COMPLETE_ROWS;
	rows = GS_CPU_COMPLETE_BLOCK_BYTES / row_bytes;
	rows -= rows % 32;
	if (rows < GS_CPU_COMPLETE_ROWS)
		return GS_CPU_COMPLETE_ROWS;
	return rows > GS_CPU_COMPLETE_MAX_ROWS ? GS_CPU_COMPLETE_MAX_ROWS : rows;
}

/*
 * Margins of a batch of a forest with a complete-tree form (gs_cpu_margins;
 * at most GS_CPU_COMPLETE_GROUPS output groups), in blocks of
 * complete_block_rows rows walked by complete_cols_avx2, or on the portable
 * path of GS_CPU_COMPLETE_ROWS rows, each copied to a row-major block
 * first when its rows fit GS_CPU_COMPLETE_ROW_BYTES (a row's features then
 * one base and an index: no multiply a step), then complete_rows; a row's
 * margin gets its trees' leaves in tree order, float additions as
 * tree_block's, so the same bits.
 */
void
gs_cpu_complete_margins(const GsForest *f, const float *x, size_t ld, size_t n_rows, float *margin)
{
	const int	ng = f->n_groups;
	const size_t nf = (size_t) f->n_features;
	const bool	rowwise = nf * GS_CPU_COMPLETE_ROWS * sizeof(float) <= GS_CPU_COMPLETE_ROW_BYTES;
	bool		simd = gs_cpu_simd() != GS_CPU_SIMD_PORTABLE;
	size_t		rows = GS_CPU_COMPLETE_ROWS;
	float		m[GS_CPU_COMPLETE_GROUPS][GS_CPU_COMPLETE_MAX_ROWS];
	float		xb[GS_CPU_COMPLETE_ROW_BYTES / sizeof(float)];

#ifdef GS_CPU_X86_SIMD
	simd = simd && nf * ld < ((size_t) 1 << 31);
	if (simd)
		rows = complete_block_rows(f);
#else
	(void) simd;
#endif
	for (size_t r0 = 0; r0 < n_rows; r0 += rows)
	{
		const size_t n = n_rows - r0 < rows ? n_rows - r0 : rows;

		for (int g = 0; g < ng; g++)
			for (size_t i = 0; i < n; i++)
				m[g][i] = f->base_margin[g];
#ifdef GS_CPU_X86_SIMD
		if (simd)
			complete_cols_avx2(f, x + r0, ld, n, m);
		else
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

/*
 * cpu_bins.c
 *	  The CPU engine's scoring of forests with bins (forest_bins.h): the
 *	  symmetric trees of CatBoost models, found level by level from bytes.
 *
 * A block of rows has its features binned once (a branch-free binary search
 * over each feature's thresholds); every level of every tree is then a byte
 * comparison of a whole column of bins, and each row adds its trees' double
 * leaves in tree order, as block_margins_double of cpu_engine.c does, so the
 * same bits.  On CPUs with AVX2 (AVX-512 ones too: the portable code built
 * for AVX-512, with the binning sixteen values at a time, ran at 0.73x of
 * this path on a Sapphire Rapids VM) bins_block_margins_avx2 keeps the bins biased by 0x80,
 * so that a level is one signed byte compare of 32 rows; it bins four times
 * eight values at once (gathered thresholds, the steps of gs_bins_of), keeps
 * byte leaf indices for trees of depth 8 or less, and adds eight trees'
 * leaves to eight rows at a time, each row a lane of a vector adding in
 * tree order: the same bits again (the unit tests compare the paths bit for
 * bit).  No memory is allocated: blocks live on the stack.
 */
#include <string.h>

#include "cpu_engine_int.h"

#include "forest_bins.h"

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
/* The bins of n values of one column (gs_bins_of). */
static inline __attribute__((always_inline)) void
bins_column(const float *col, size_t n, const float *t, uint32_t nt, uint8_t nan_bin,
			uint8_t *q)
{
	for (size_t i = 0; i < n; i++)
		q[i] = gs_bins_of(col[i], t, nt, nan_bin);
}

static void
bins_block_margins(const GsForest *f, const float *x, size_t ld, size_t r0, size_t r1,
				   float *margin)
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

		bins_column(col, n, t, nt, b->nan_bin[u], qu);
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

#ifdef GS_CPU_X86_SIMD
/*
 * The AVX2 path.  Its bins are kept biased (bin ^ 0x80, qb below), so that
 * "bin > j" is one signed byte compare of 32 rows against j ^ 0x80; leaf
 * indices of trees of depth 8 or less are bytes, computed 32 rows to a
 * register; the leaves are still added to each row in tree order, as
 * bins_block_margins adds them, so the same bits.
 */
#define GS_CPU_BINS_AVX2_TREES 8	/* trees a row adds at once */

/*
 * The biased bins (gs_bins_of ^ 0x80) of nv * 8 values v of one column
 * (nv a constant, 1 to 4): the branch-free binary search of gs_bins_of,
 * whose steps depend only on nt, each lane's threshold gathered and
 * compared as gs_bins_of compares it (t <= v, false for NaN); NaN gets
 * nan_bin.  The nv searches are independent, so their gathers overlap.
 */
static inline __attribute__((always_inline, target("avx2"))) void
bins_values_avx2(const float *col, int nv, const float *t, uint32_t nt,
				 uint8_t nan_bin, uint8_t *qb)
{
	__m256		v[4];
	__m256i		base[4];
	uint32_t	len = nt;

#pragma GCC unroll 4
	for (int w = 0; w < nv; w++)
	{
		v[w] = _mm256_loadu_ps(col + 8 * w);
		base[w] = _mm256_setzero_si256();
	}
	while (len > 1)
	{
		uint32_t	half = len / 2;
		const __m256i off = _mm256_set1_epi32((int) half - 1);
		const __m256i step = _mm256_set1_epi32((int) half);

#pragma GCC unroll 4
		for (int w = 0; w < nv; w++)
		{
			__m256		tv = _mm256_i32gather_ps(t, _mm256_add_epi32(base[w], off), 4);
			__m256i		le = _mm256_castps_si256(_mm256_cmp_ps(tv, v[w], _CMP_LE_OQ));

			base[w] = _mm256_add_epi32(base[w], _mm256_and_si256(le, step));
		}
		len -= half;
	}
#pragma GCC unroll 4
	for (int w = 0; w < nv; w++)
	{
		__m128i		b16;

		if (len == 1)
		{
			__m256		tv = _mm256_i32gather_ps(t, base[w], 4);

			base[w] = _mm256_sub_epi32(base[w], _mm256_castps_si256(_mm256_cmp_ps(tv, v[w], _CMP_LE_OQ)));
		}
		base[w] = _mm256_blendv_epi8(base[w], _mm256_set1_epi32(nan_bin),
									 _mm256_castps_si256(_mm256_cmp_ps(v[w], v[w], _CMP_UNORD_Q)));
		/* eight values 0..255 to bytes */
		b16 = _mm_packus_epi32(_mm256_castsi256_si128(base[w]), _mm256_extracti128_si256(base[w], 1));
		_mm_storel_epi64((__m128i *) (qb + 8 * w),
						 _mm_xor_si128(_mm_packus_epi16(b16, b16), _mm_set1_epi8((char) 0x80)));
	}
}

/*
 * The biased bins (gs_bins_of ^ 0x80) of n values of one column:
 * bins_values_avx2 32 values at a time, then eight, the last n % 8 values
 * gs_bins_of.
 */
__attribute__((target("avx2")))
static void
bins_column_avx2(const float *col, size_t n, const float *t, uint32_t nt,
				 uint8_t nan_bin, uint8_t *qb)
{
	size_t		i = 0;

	for (; i + 32 <= n; i += 32)
		bins_values_avx2(col + i, 4, t, nt, nan_bin, qb + i);
	for (; i + 8 <= n; i += 8)
		bins_values_avx2(col + i, 1, t, nt, nan_bin, qb + i);
	for (; i < n; i++)
		qb[i] = (uint8_t) (gs_bins_of(col[i], t, nt, nan_bin) ^ 0x80);
}

/*
 * Byte leaf indices of the nc * 32 rows of a tree of depth d <= 8 from the
 * biased bins qb (stride bytes a used feature): level k reads the column
 * of used feature u[k], and each row's index doubles and gains 1 where its
 * bin exceeds j[k] (the compare gives -1).  With d a constant the columns
 * and thresholds stay in registers (gcc -O2 unrolls the levels only when
 * told).
 */
static inline __attribute__((always_inline, target("avx2"))) void
bins_leaves8_avx2_d(const uint8_t *qb, size_t stride, size_t nc, int d,
					const uint16_t *u, const uint8_t *j, uint8_t *leaf)
{
	const uint8_t *col[8];
	__m256i		jb[8];

#pragma GCC unroll 8
	for (int k = 0; k < d; k++)
	{
		col[k] = qb + u[k] * stride;
		jb[k] = _mm256_set1_epi8((char) (j[k] ^ 0x80));
	}
	for (size_t c = 0; c < nc * 32; c += 32)
	{
		__m256i		a = _mm256_setzero_si256();

#pragma GCC unroll 8
		for (int k = 0; k < d; k++)
		{
			__m256i		gt = _mm256_cmpgt_epi8(_mm256_loadu_si256((const __m256i *) (col[k] + c)), jb[k]);

			a = _mm256_sub_epi8(_mm256_add_epi8(a, a), gt);
		}
		_mm256_storeu_si256((__m256i *) (leaf + c), a);
	}
}

/* bins_leaves8_avx2_d with d a constant of each case. */
__attribute__((target("avx2")))
static void
bins_leaves8_avx2(const uint8_t *qb, size_t stride, size_t nc, int d,
				  const uint16_t *u, const uint8_t *j, uint8_t *leaf)
{
	switch (d)
	{
		case 0:
			memset(leaf, 0, nc * 32);
			break;
		case 1:
			bins_leaves8_avx2_d(qb, stride, nc, 1, u, j, leaf);
			break;
		case 2:
			bins_leaves8_avx2_d(qb, stride, nc, 2, u, j, leaf);
			break;
		case 3:
			bins_leaves8_avx2_d(qb, stride, nc, 3, u, j, leaf);
			break;
		case 4:
			bins_leaves8_avx2_d(qb, stride, nc, 4, u, j, leaf);
			break;
		case 5:
			bins_leaves8_avx2_d(qb, stride, nc, 5, u, j, leaf);
			break;
		case 6:
			bins_leaves8_avx2_d(qb, stride, nc, 6, u, j, leaf);
			break;
		case 7:
			bins_leaves8_avx2_d(qb, stride, nc, 7, u, j, leaf);
			break;
		default:
			bins_leaves8_avx2_d(qb, stride, nc, 8, u, j, leaf);
			break;
	}
}

/*
 * 16-bit leaf indices of the nc * 32 rows of a tree of any depth (up to
 * GS_BINS_MAX_DEPTH), as bins_leaves8_avx2 finds them, sixteen rows to a
 * register.
 */
__attribute__((target("avx2")))
static void
bins_leaves16_avx2(const uint8_t *qb, size_t stride, size_t nc, int d,
				   const uint16_t *u, const uint8_t *j, uint16_t *leaf)
{
	for (size_t c = 0; c < nc * 32; c += 16)
	{
		__m256i		a = _mm256_setzero_si256();

		for (int k = 0; k < d; k++)
		{
			__m128i		gt = _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *) (qb + u[k] * stride + c)),
											_mm_set1_epi8((char) (j[k] ^ 0x80)));

			a = _mm256_sub_epi16(_mm256_add_epi16(a, a), _mm256_cvtepi8_epi16(gt));
		}
		_mm256_storeu_si256((__m256i *) (leaf + c), a);
	}
}

/*
 * acc[i] = acc[i] + l_0[leaf8[0][i]] + ... + l_7[leaf8[7][i]] (lv the
 * GS_CPU_BINS_AVX2_TREES trees' leaves, added in tree order, as
 * bins_block_margins adds them) for rows 0..n: eight rows at a time,
 * each row a lane of two vectors of four doubles, the eight byte indices
 * of a tree one load.
 */
static inline __attribute__((always_inline, target("avx2"))) void
bins_add_leaves8_avx2(double *acc, size_t n, const double *const *lv,
					  const uint8_t (*leaf8)[GS_CPU_BINS_ROWS])
{
	size_t		i = 0;

	for (; i + 8 <= n; i += 8)
	{
		__m256d		a0 = _mm256_loadu_pd(acc + i);
		__m256d		a1 = _mm256_loadu_pd(acc + i + 4);

#pragma GCC unroll 16
		for (int k = 0; k < GS_CPU_BINS_AVX2_TREES; k++)
		{
			const double *l = lv[k];
			uint64_t	w;
			__m128d		p0,
						p1,
						p2,
						p3;

			memcpy(&w, leaf8[k] + i, 8);	/* row i + r in byte r */
			p0 = _mm_loadh_pd(_mm_load_sd(l + (w & 0xff)), l + ((w >> 8) & 0xff));
			p1 = _mm_loadh_pd(_mm_load_sd(l + ((w >> 16) & 0xff)), l + ((w >> 24) & 0xff));
			p2 = _mm_loadh_pd(_mm_load_sd(l + ((w >> 32) & 0xff)), l + ((w >> 40) & 0xff));
			p3 = _mm_loadh_pd(_mm_load_sd(l + ((w >> 48) & 0xff)), l + (w >> 56));
			a0 = _mm256_add_pd(a0, _mm256_set_m128d(p1, p0));
			a1 = _mm256_add_pd(a1, _mm256_set_m128d(p3, p2));
		}
		_mm256_storeu_pd(acc + i, a0);
		_mm256_storeu_pd(acc + i + 4, a1);
	}
	for (; i < n; i++)
	{
		double		s = acc[i];

		for (int k = 0; k < GS_CPU_BINS_AVX2_TREES; k++)
			s += lv[k][leaf8[k][i]];
		acc[i] = s;
	}
}

/*
 * Margins of rows r0..r1 (at most bins_block_rows) of a forest with bins,
 * as bins_block_margins finds them: the block binned once (rows past
 * r1, up to a whole GS_CPU_BLOCK, get bin 0 and are dropped), then each
 * output group's trees GS_CPU_BINS_AVX2_TREES at a time, each row adding
 * their double leaves in tree order.  A pass whose trees all have depth 8
 * or less keeps byte indices; one with a deeper tree 16-bit ones.
 */
__attribute__((target("avx2")))
static void
bins_block_margins_avx2(const GsForest *f, const float *x, size_t ld, size_t r0, size_t r1,
						float *margin)
{
	const GsForestBins *b = f->bins;
	const size_t n = r1 - r0;
	const size_t stride = (n + GS_CPU_BLOCK - 1) / GS_CPU_BLOCK * GS_CPU_BLOCK;
	const size_t nc = stride / 32;
	const int	ng = f->n_groups;
	uint8_t		qb[GS_CPU_BINS_MAX_BYTES];
	uint8_t		leaf8[GS_CPU_BINS_AVX2_TREES][GS_CPU_BINS_ROWS];
	uint16_t	leaf16[GS_CPU_BINS_AVX2_TREES][GS_CPU_BINS_ROWS];
	double		acc[GS_CPU_BINS_ROWS];

	for (int32_t u = 0; u < b->n_used; u++)
	{
		const float *col = x + (size_t) b->feature[u] * ld + r0;
		const float *t = b->border + b->border_start[u];
		const uint32_t nt = b->border_start[u + 1] - b->border_start[u];
		uint8_t    *qu = qb + (size_t) u * stride;

		bins_column_avx2(col, n, t, nt, b->nan_bin[u], qu);
		memset(qu + n, 0x80, stride - n);
	}
	for (int g = 0; g < ng; g++)
	{
		int32_t		t = 0;

		for (size_t i = 0; i < n; i++)
			acc[i] = (double) f->base_margin[g];
		while (t < f->n_trees)
		{
			int32_t		tr[GS_CPU_BINS_AVX2_TREES];
			const double *lv[GS_CPU_BINS_AVX2_TREES];
			int			m = 0;
			bool		wide = false;

			/* the group's next trees, in order */
			for (; t < f->n_trees && m < GS_CPU_BINS_AVX2_TREES; t++)
			{
				if (f->tree_group[t] != g)
					continue;
				wide |= f->tree_depth[t] > 8;
				lv[m] = b->leaf + b->leaf_start[t];
				tr[m++] = t;
			}
			if (!wide)
			{
				for (int k = 0; k < m; k++)
					bins_leaves8_avx2(qb, stride, nc, f->tree_depth[tr[k]],
									  b->level_used + b->level_start[tr[k]],
									  b->level_bin + b->level_start[tr[k]], leaf8[k]);
				if (m == GS_CPU_BINS_AVX2_TREES)
					bins_add_leaves8_avx2(acc, n, lv, leaf8);
				else
					for (int k = 0; k < m; k++)
						for (size_t i = 0; i < n; i++)
							acc[i] += lv[k][leaf8[k][i]];
			}
			else
			{
				for (int k = 0; k < m; k++)
					bins_leaves16_avx2(qb, stride, nc, f->tree_depth[tr[k]],
									   b->level_used + b->level_start[tr[k]],
									   b->level_bin + b->level_start[tr[k]], leaf16[k]);
				for (int k = 0; k < m; k++)
					for (size_t i = 0; i < n; i++)
						acc[i] += lv[k][leaf16[k][i]];
			}
		}
		for (size_t i = 0; i < n; i++)
			margin[(r0 + i) * ng + g] = (float) acc[i];
	}
}
#endif

/*
 * Margins of one row-major row of a forest with bins: its features binned,
 * then each tree's leaf index from a byte comparison per level, the leaves
 * summed in double in tree order, as bins_block_margins does.  A tree's
 * levels are three bytes each and its leaves contiguous: far fewer cache
 * lines than walking its nodes.
 */
void
gs_cpu_bins_row_margins(const GsForest *f, const float *x, float *margin)
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
/* Margins of a batch of a forest with bins; see cpu_engine_int.h. */
void
gs_cpu_bins_margins(const GsForest *f, const float *x, size_t ld, size_t n_rows,
					float *margin)
{
	const size_t rows = bins_block_rows(f->bins);

	for (size_t r0 = 0; r0 < n_rows; r0 += rows)
	{
		size_t		r1 = r0 + rows < n_rows ? r0 + rows : n_rows;

#ifdef GS_CPU_X86_SIMD
		/* AVX-512 CPUs too: the AVX-512 build of the portable code was slower */
		if (gs_cpu_simd() != GS_CPU_SIMD_PORTABLE)
		{
			bins_block_margins_avx2(f, x, ld, r0, r1, margin);
			continue;
		}
#endif
		bins_block_margins(f, x, ld, r0, r1, margin);
	}
}

/*
 * cpu_qs.c
 *	  The CPU engine's scoring of forests with a leaf-bit-vector form
 *	  (forest_qs.h): LightGBM's leaf-wise trees of up to 64 leaves.
 *
 * For each block of trees, a group of rows starts with every leaf bit set
 * in every tree, then, feature by feature, clears the left-subtree bits of
 * the splits it goes right at: the numerical splits whose threshold its
 * value reaches (a prefix of the sorted list, scanned until no row of the
 * group reaches the next threshold), the splits a missing value goes right
 * at, and the categorical splits of the value's category class.  Then each
 * tree's leaf is the lowest bit left, and the rows add the trees' leaves
 * in tree order in double, as the node walk does (block_margins_double),
 * so the margins have the same bits.
 *
 * The portable path takes one row at a time.  With AVX-512 (F and CD) a
 * group is sixteen rows, a 64-bit lane of two registers each: a split is
 * one compare of sixteen values with its threshold and two masked
 * and-nots of the tree's bit vectors, and the leaves are found and added
 * eight rows to an instruction (ctz as 63 - lzcnt of the lowest bit); with
 * AVX2 eight rows in four registers, their leaves added four to an
 * instruction.  Category classes are found per row in every path.  A
 * block's bit vectors (GS_QS_BLOCK_TREES trees x 16 rows x 8 bytes, 16 KiB)
 * stay in the L1 cache while the splits stream past.
 */
#include "cpu_engine_int.h"

#include "forest_eval.h"
#include "forest_qs.h"

/*
 * The category class (forest_qs.h) of non-missing value v of categorical
 * feature j: its code, or n_codes[j] for no valid code or one past every
 * set.  The tests of gs_cat_test, so a class's values all take the same
 * decisions.
 */
static inline uint32_t
qs_class(const GsForestQs *q, uint32_t j, float v)
{
	uint32_t	valid = (uint32_t) (v >= 0.0f) |
		((uint32_t) (v > -1.0f) & (uint32_t) q->trunc_negative[j]);
	uint32_t	c;

	valid &= (uint32_t) (v < 16777216.0f);
	if (!valid)
		return q->n_codes[j];
	c = (uint32_t) (int32_t) v;
	return c < q->n_codes[j] ? c : q->n_codes[j];
}

/* The splits of a list clear their left masks in lane l of R lanes. */
static inline void
qs_clear_list(uint64_t *bv, int lanes, int l, const GsQsSplit *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		bv[(size_t) s[i].tree * lanes + l] &= ~s[i].left;
}

/*
 * Categorical splits of block k for a group of R lanes, lane l the row
 * whose values are x[j * ld + l] (feature j).
 */
static inline void
qs_clear_classes(const GsForestQs *q, const GsQsBlock *k, const float *x, size_t ld,
				 uint64_t *bv, int lanes)
{
	for (int l = 0; l < lanes; l++)
		for (uint32_t c = 0; c < q->n_cat_features; c++)
		{
			uint32_t	j = q->cat_feature[c];
			float		v = x[(size_t) j * ld + l];
			uint32_t	at;

			if (v != v)
				continue;		/* the NaN list has them */
			at = q->code_base[j] + qs_class(q, j, v);
			qs_clear_list(bv, lanes, l, k->cat + k->cat_start[at],
						  k->cat_start[at + 1] - k->cat_start[at]);
		}
}

/*
 * Add the leaves of block k's trees for each of R lanes to its margins,
 * acc[l * ng + g], in tree order.
 */
static inline void
qs_add_leaves(const GsForest *f, const GsForestQs *q, const GsQsBlock *k,
			  const uint64_t *bv, int lanes, double *acc)
{
	for (int l = 0; l < lanes; l++)
		for (int32_t t = 0; t < k->n_trees; t++)
		{
			int32_t		tree = k->first_tree + t;

			acc[l * f->n_groups + f->tree_group[tree]] +=
				q->leaf[q->leaf_start[tree] + (uint32_t) __builtin_ctzll(bv[(size_t) t * lanes + l])];
		}
}

/* The margins of R lanes start at the base margins, in double. */
static inline void
qs_acc_start(const GsForest *f, int lanes, double *acc)
{
	for (int l = 0; l < lanes; l++)
		for (int g = 0; g < f->n_groups; g++)
			acc[l * f->n_groups + g] = (double) f->base_margin[g];
}

/* The margins of rows r..r + R, rounded to float once. */
static inline void
qs_acc_store(const GsForest *f, int lanes, const double *acc, size_t r, float *margin)
{
	const int	ng = f->n_groups;

	for (int l = 0; l < lanes; l++)
		for (int g = 0; g < ng; g++)
			margin[(r + l) * ng + g] = (float) acc[l * ng + g];
}

/* Row r of the batch, one row at a time: the portable path. */
static void
qs_row(const GsForest *f, const float *x, size_t ld, size_t r, float *margin)
{
	const GsForestQs *q = f->qs;
	double		acc[GS_QS_MAX_GROUPS];
	uint64_t	bv[GS_QS_BLOCK_TREES];

	qs_acc_start(f, 1, acc);
	for (int32_t b = 0; b < q->n_blocks; b++)
	{
		const GsQsBlock *k = &q->blocks[b];

		for (int32_t t = 0; t < k->n_trees; t++)
			bv[t] = ~(uint64_t) 0;
		for (int32_t j = 0; j < f->n_features; j++)
		{
			float		v = x[(size_t) j * ld + r];

			if (v != v)
				qs_clear_list(bv, 1, 0, k->nan + k->nan_start[j],
							  k->nan_start[j + 1] - k->nan_start[j]);
			else
			{
				const GsQsSplit *sp = k->num + k->num_start[j];
				const GsQsSplit *end = k->num + k->num_start[j + 1];

				for (; sp < end && v >= sp->thr; sp++)
					bv[sp->tree] &= ~sp->left;
			}
		}
		qs_clear_classes(q, k, x + r, ld, bv, 1);
		qs_add_leaves(f, q, k, bv, 1, acc);
	}
	qs_acc_store(f, 1, acc, r, margin);
}

#ifdef GS_CPU_X86_SIMD
/* Clear left masks in the lanes go (16 lanes: two registers) of tree vector p. */
__attribute__((target("avx512f")))
static inline void
qs_clear16(uint64_t *p, __mmask16 go, uint64_t left)
{
	__m512i		m = _mm512_set1_epi64((long long) left);
	__m512i		w0 = _mm512_load_si512((void *) p);
	__m512i		w1 = _mm512_load_si512((void *) (p + 8));

	_mm512_store_si512((void *) p, _mm512_mask_andnot_epi64(w0, (__mmask8) go, m, w0));
	_mm512_store_si512((void *) (p + 8), _mm512_mask_andnot_epi64(w1, (__mmask8) (go >> 8), m, w1));
}

/* acc += the leaves of the eight lanes of bit vectors w (leaves from base). */
__attribute__((target("avx512f,avx512cd")))
static inline __m512d
qs_add8(__m512d acc, __m512i w, const double *base)
{
	__m512i		low = _mm512_and_si512(w, _mm512_sub_epi64(_mm512_setzero_si512(), w));
	__m512i		at = _mm512_sub_epi64(_mm512_set1_epi64(63), _mm512_lzcnt_epi64(low));

	return _mm512_add_pd(acc, _mm512_i64gather_pd(at, base, 8));
}

/* Rows r..r + 16 with AVX-512: sixteen 64-bit lanes of bit vectors a tree. */
__attribute__((target("avx512f,avx512cd")))
static void
qs_rows16_avx512(const GsForest *f, const float *x, size_t ld, size_t r, float *margin)
{
	const GsForestQs *q = f->qs;
	const int	ng = f->n_groups;
	double		acc[16 * GS_QS_MAX_GROUPS];
	__m512d		acc0 = _mm512_set1_pd((double) f->base_margin[0]);
	__m512d		acc1 = acc0;
	uint64_t	bv[16 * GS_QS_BLOCK_TREES] __attribute__((aligned(64)));
	const __m512i ones = _mm512_set1_epi64(-1);

	qs_acc_start(f, 16, acc);
	for (int32_t b = 0; b < q->n_blocks; b++)
	{
		const GsQsBlock *k = &q->blocks[b];
		/* in locals: the stores to bv would make the compiler reload them */
		const GsQsSplit *const num = k->num;
		const uint32_t *const num_start = k->num_start;

		for (int32_t t = 0; t < 2 * k->n_trees; t++)
			_mm512_store_si512((void *) (bv + 8 * t), ones);
		for (int32_t j = 0; j < f->n_features; j++)
		{
			__m512		v = _mm512_loadu_ps(x + (size_t) j * ld + r);
			__mmask16	nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);

			for (const GsQsSplit *sp = num + num_start[j], *end = num + num_start[j + 1]; sp < end; sp++)
			{
				__mmask16	go = _mm512_cmp_ps_mask(v, _mm512_set1_ps(sp->thr), _CMP_GE_OQ);

				if (go == 0)
					break;
				qs_clear16(bv + 16 * (size_t) sp->tree, go, sp->left);
			}
			if (nan != 0)
				for (uint32_t i = k->nan_start[j]; i < k->nan_start[j + 1]; i++)
					qs_clear16(bv + 16 * (size_t) k->nan[i].tree, nan, k->nan[i].left);
		}
		qs_clear_classes(q, k, x + r, ld, bv, 16);
		if (ng == 1)
			for (int32_t t = 0; t < k->n_trees; t++)
			{
				const double *base = q->leaf + q->leaf_start[k->first_tree + t];

				acc0 = qs_add8(acc0, _mm512_load_si512((void *) (bv + 16 * t)), base);
				acc1 = qs_add8(acc1, _mm512_load_si512((void *) (bv + 16 * t + 8)), base);
			}
		else
			qs_add_leaves(f, q, k, bv, 16, acc);
	}
	if (ng == 1)
	{
		_mm512_storeu_pd(acc, acc0);
		_mm512_storeu_pd(acc + 8, acc1);
	}
	qs_acc_store(f, 16, acc, r, margin);
}

/*
 * Clear left mask m in the lanes go (eight lanes: two registers of four;
 * go's 32-bit lanes all ones or zeros) of tree vector p.
 */
__attribute__((target("avx2")))
static inline void
qs_clear8(uint64_t *p, __m256 go, __m256i m)
{
	__m256i		g = _mm256_castps_si256(go);
	__m256i		g0 = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(g));
	__m256i		g1 = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(g, 1));

	_mm256_store_si256((__m256i *) p,
					   _mm256_andnot_si256(_mm256_and_si256(g0, m), _mm256_load_si256((__m256i *) p)));
	_mm256_store_si256((__m256i *) (p + 4),
					   _mm256_andnot_si256(_mm256_and_si256(g1, m), _mm256_load_si256((__m256i *) (p + 4))));
}

/* Rows r..r + 8 with AVX2: eight 64-bit lanes (two registers) of bit vectors a tree. */
__attribute__((target("avx2")))
static void
qs_rows8_avx2(const GsForest *f, const float *x, size_t ld, size_t r, float *margin)
{
	const GsForestQs *q = f->qs;
	const int	ng = f->n_groups;
	double		acc[8 * GS_QS_MAX_GROUPS];
	__m256d		acc0 = _mm256_set1_pd((double) f->base_margin[0]);
	__m256d		acc1 = acc0;
	uint64_t	bv[8 * GS_QS_BLOCK_TREES] __attribute__((aligned(32)));
	const __m256i ones = _mm256_set1_epi64x(-1);

	qs_acc_start(f, 8, acc);
	for (int32_t b = 0; b < q->n_blocks; b++)
	{
		const GsQsBlock *k = &q->blocks[b];
		const GsQsSplit *const num = k->num;
		const uint32_t *const num_start = k->num_start;

		for (int32_t t = 0; t < 2 * k->n_trees; t++)
			_mm256_store_si256((__m256i *) (bv + 4 * t), ones);
		for (int32_t j = 0; j < f->n_features; j++)
		{
			__m256		v = _mm256_loadu_ps(x + (size_t) j * ld + r);
			__m256		nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);

			for (const GsQsSplit *sp = num + num_start[j], *end = num + num_start[j + 1]; sp < end; sp++)
			{
				__m256		go = _mm256_cmp_ps(v, _mm256_set1_ps(sp->thr), _CMP_GE_OQ);

				if (_mm256_movemask_ps(go) == 0)
					break;
				qs_clear8(bv + 8 * (size_t) sp->tree, go, _mm256_set1_epi64x((long long) sp->left));
			}
			if (_mm256_movemask_ps(nan) != 0)
				for (uint32_t i = k->nan_start[j]; i < k->nan_start[j + 1]; i++)
					qs_clear8(bv + 8 * (size_t) k->nan[i].tree, nan,
							  _mm256_set1_epi64x((long long) k->nan[i].left));
		}
		qs_clear_classes(q, k, x + r, ld, bv, 8);
		if (ng == 1)
			for (int32_t t = 0; t < k->n_trees; t++)
			{
				const double *base = q->leaf + q->leaf_start[k->first_tree + t];
				const uint64_t *w = bv + 8 * t;

				acc0 = _mm256_add_pd(acc0, _mm256_set_pd(base[__builtin_ctzll(w[3])], base[__builtin_ctzll(w[2])],
														 base[__builtin_ctzll(w[1])], base[__builtin_ctzll(w[0])]));
				acc1 = _mm256_add_pd(acc1, _mm256_set_pd(base[__builtin_ctzll(w[7])], base[__builtin_ctzll(w[6])],
														 base[__builtin_ctzll(w[5])], base[__builtin_ctzll(w[4])]));
			}
		else
			qs_add_leaves(f, q, k, bv, 8, acc);
	}
	if (ng == 1)
	{
		_mm256_storeu_pd(acc, acc0);
		_mm256_storeu_pd(acc + 4, acc1);
	}
	qs_acc_store(f, 8, acc, r, margin);
}
#endif

/* Margins of a batch of a forest with f->qs; see cpu_engine_int.h. */
void
gs_cpu_qs_margins(const GsForest *f, const float *x, size_t ld, size_t n_rows,
				  float *margin)
{
	size_t		r = 0;

#ifdef GS_CPU_X86_SIMD
	GsCpuSimd	simd = gs_cpu_simd();

	if (simd == GS_CPU_SIMD_AVX512 && __builtin_cpu_supports("avx512cd"))
		for (; r + 16 <= n_rows; r += 16)
			qs_rows16_avx512(f, x, ld, r, margin);
	else if (simd != GS_CPU_SIMD_PORTABLE)
		for (; r + 8 <= n_rows; r += 8)
			qs_rows8_avx2(f, x, ld, r, margin);
#endif
	for (; r < n_rows; r++)
		qs_row(f, x, ld, r, margin);
}

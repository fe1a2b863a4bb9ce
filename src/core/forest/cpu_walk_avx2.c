/*
 * cpu_walk_avx2.c
 *	  The CPU engine's AVX2 node walk: eight rows to a ymm register walk a
 *	  tree of any split kind in lockstep (categorical, zero-as-missing and
 *	  equality splits included), and the double leaves of LightGBM and
 *	  CatBoost forests are added four rows at a time.
 *
 * Used by cpu_engine.c on x86-64 CPUs with AVX2 (AVX-512 ones included,
 * for trees the AVX-512 walk does not take) when every feature offset of
 * the batch, node word and category word index fits in 31 bits
 * (cpu_engine.c's avx2_walk).  Per lane, every step makes exactly the
 * decision of gs_node_goes_left (forest_eval.h) on the node read from the
 * tree (value, info and left are the node's three 32-bit words) and the
 * row's feature value read from the batch; a leaf keeps its index.  Those
 * four words are loaded lane by lane by scalar loads into a register
 * (_mm256_setr_epi32), which measured faster than vpgatherdd on AMD Zen 3
 * (lgb500cat: 73K -> 80K rows/s); the category words, needed only on some
 * lanes, are masked gathers (scalar loads measured slower there).  The
 * walk stops as soon as every lane of its registers sits on a leaf (the
 * leaf bit is the sign bit of info, so one movemask tells), which in the
 * unbalanced trees of leaf-wise growth (LightGBM) is often well before the
 * tree's depth.  The leaf additions are those of gs_leaf_double in tree
 * order, one per row, so every row gets the same bits as on the portable
 * path.  Nothing is allocated.
 */
#include "cpu_engine_int.h"

#ifdef GS_CPU_X86_SIMD

#include "forest_eval.h"

/* Registers of eight rows walking in lockstep (their gathers' latency) */
#define GS_CPU_WALK_VREGS 8

/* All 32-bit lanes of a whose bits in mask are all set. */
#define HAS_BITS(a, mask) \
	_mm256_cmpeq_epi32(_mm256_and_si256((a), _mm256_set1_epi32((int) (mask))), \
					   _mm256_set1_epi32((int) (mask)))

/*
 * The lanes (all ones) of categorical split nodes (info, value's bits set,
 * row values v; cat: the lanes on categorical splits) that gs_cat_test
 * sends left, with *missing gaining those it sends to the default
 * direction (codes outside a set marked GS_CAT_INVALID_DEFAULT).  The same
 * tests as gs_cat_test: a set marked GS_CAT_NEGATED tests -v (the sign bit
 * flipped, as C's negation does), a valid code is 0 <= v < 2^24 (or
 * -1 < v for GS_CAT_TRUNC_NEGATIVE), truncated toward zero, within the
 * set's words, and goes right when its bit is set.
 */
__attribute__((target("avx2"), always_inline))
static inline __m256i
cat_goes_left(const uint32_t *cats, __m256i set, __m256 v, __m256i cat, __m256i *missing)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i		hdr = _mm256_mask_i32gather_epi32(zero, (const int *) cats, set, cat, 4);
	__m256i		neg = HAS_BITS(hdr, GS_CAT_NEGATED);
	__m256		vv = _mm256_xor_ps(v, _mm256_and_ps(_mm256_castsi256_ps(neg),
													_mm256_set1_ps(-0.0f)));
	__m256		ge0 = _mm256_cmp_ps(vv, _mm256_setzero_ps(), _CMP_GE_OQ);
	__m256		gtm1 = _mm256_and_ps(_mm256_cmp_ps(vv, _mm256_set1_ps(-1.0f), _CMP_GT_OQ),
									 _mm256_castsi256_ps(_mm256_srai_epi32(hdr, 31)));
	__m256		lt24 = _mm256_cmp_ps(vv, _mm256_set1_ps(16777216.0f), _CMP_LT_OQ);
	__m256i		valid = _mm256_castps_si256(_mm256_and_ps(_mm256_or_ps(ge0, gtm1), lt24));
	__m256i		c = _mm256_cvttps_epi32(vv);
	__m256i		word = _mm256_srli_epi32(c, 5);
	__m256i		nw = _mm256_and_si256(hdr, _mm256_set1_epi32((int) GS_CAT_WORDS_MASK));
	__m256i		bits;
	__m256i		right;
	__m256i		invdef = HAS_BITS(hdr, GS_CAT_INVALID_DEFAULT);

	/* word < words: both below 2^29 on valid lanes, so signed is fine */
	valid = _mm256_and_si256(_mm256_and_si256(valid, _mm256_cmpgt_epi32(nw, word)), cat);
	bits = _mm256_mask_i32gather_epi32(zero, (const int *) cats + 1,
									   _mm256_add_epi32(set, word), valid, 4);
	bits = _mm256_srlv_epi32(bits, _mm256_and_si256(c, _mm256_set1_epi32(31)));
	right = _mm256_slli_epi32(bits, 31);	/* bit set: all-ones after srai */
	right = _mm256_srai_epi32(right, 31);
	*missing = _mm256_or_si256(*missing, _mm256_andnot_si256(valid, _mm256_and_si256(invdef, cat)));
	/* valid: left unless the bit is set; invalid: left (or the default) */
	return _mm256_andnot_si256(_mm256_and_si256(valid, right), _mm256_set1_epi32(-1));
}

/*
 * One lockstep step of eight rows (the batch's values of the row of lane k
 * at xr[feature * ld + k]) from nodes idx, whose info words are info: the
 * node each lane moves to, or idx for lanes on leaves.  kinds is the
 * forest's split_kinds: the tests of kinds it lacks are skipped.
 */
__attribute__((target("avx2"), always_inline))
static inline __m256i
walk_step(const int *w, const uint32_t *cats, const float *xr, __m256i ldv,
		  uint32_t kinds, __m256i idx, __m256i info)
{
	const __m256i one = _mm256_set1_epi32(1);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256i fmask = _mm256_set1_epi32((int) GS_NODE_FEATURE_MASK);
	int32_t		ix[8] __attribute__((aligned(32)));
	int32_t		of[8] __attribute__((aligned(32)));
	__m256		thr;
	__m256		v;
	__m256i		left;
	__m256i		missing;
	__m256i		go_left;
	__m256i		next;

	_mm256_store_si256((__m256i *) ix, idx);
	_mm256_store_si256((__m256i *) of,
					   _mm256_add_epi32(_mm256_mullo_epi32(_mm256_and_si256(info, fmask), ldv), lane));
	thr = _mm256_castsi256_ps(_mm256_setr_epi32(w[3 * ix[0]], w[3 * ix[1]], w[3 * ix[2]], w[3 * ix[3]],
												 w[3 * ix[4]], w[3 * ix[5]], w[3 * ix[6]], w[3 * ix[7]]));
	left = _mm256_setr_epi32(w[3 * ix[0] + 2], w[3 * ix[1] + 2], w[3 * ix[2] + 2], w[3 * ix[3] + 2],
							 w[3 * ix[4] + 2], w[3 * ix[5] + 2], w[3 * ix[6] + 2], w[3 * ix[7] + 2]);
	v = _mm256_setr_ps(xr[of[0]], xr[of[1]], xr[of[2]], xr[of[3]],
					   xr[of[4]], xr[of[5]], xr[of[6]], xr[of[7]]);
	missing = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
	go_left = _mm256_castps_si256(_mm256_cmp_ps(v, thr, _CMP_LT_OQ));

	if (kinds & GS_NODE_ZERO_MISSING)
	{
		__m256		av = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
		__m256i		small = _mm256_castps_si256(_mm256_cmp_ps(av, _mm256_set1_ps(1e-35f), _CMP_LE_OQ));

		missing = _mm256_or_si256(missing,
								  _mm256_and_si256(small, HAS_BITS(info, GS_NODE_ZERO_MISSING)));
	}
	if (kinds & GS_NODE_EQUAL)
		go_left = _mm256_blendv_epi8(go_left,
									 _mm256_castps_si256(_mm256_cmp_ps(v, thr, _CMP_NEQ_UQ)),
									 HAS_BITS(info, GS_NODE_EQUAL));
	if (kinds & GS_NODE_CATEGORICAL)
	{
		/* categorical splits, not leaves */
		__m256i		cat = _mm256_cmpeq_epi32(_mm256_and_si256(info,
															  _mm256_set1_epi32((int) (GS_NODE_CATEGORICAL | GS_NODE_LEAF))),
											 _mm256_set1_epi32((int) GS_NODE_CATEGORICAL));

		if (!_mm256_testz_si256(cat, cat))
			go_left = _mm256_blendv_epi8(go_left,
										 cat_goes_left(cats, _mm256_castps_si256(thr), v, cat, &missing),
										 cat);
	}
	go_left = _mm256_blendv_epi8(go_left, HAS_BITS(info, GS_NODE_DEFAULT_LEFT), missing);
	/* left + 1, or left where go_left is all ones (-1) */
	next = _mm256_add_epi32(left, _mm256_add_epi32(go_left, one));
	/* the leaf bit is info's sign bit: leaves keep their index */
	return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(next),
												_mm256_castsi256_ps(idx),
												_mm256_castsi256_ps(info)));
}

/*
 * Leaf indices of rows r..r + 8 * nv of a tree (nv <= GS_CPU_WALK_VREGS
 * registers of eight rows) into leaf[0..8 * nv): steps of walk_step until
 * every lane sits on a leaf (at most depth of them).
 */
__attribute__((target("avx2"), always_inline))
static inline void
walk_rows(const GsNode *tree, int depth, const float *x, size_t ld, size_t r,
		  int nv, uint32_t *leaf, const uint32_t *cats, uint32_t kinds)
{
	const int  *w = (const int *) tree;
	const __m256i ldv = _mm256_set1_epi32((int) ld);
	__m256i		idx[GS_CPU_WALK_VREGS];
	__m256i		info[GS_CPU_WALK_VREGS];

	for (int v = 0; v < nv; v++)
		idx[v] = _mm256_setzero_si256();
	for (int d = 0; d < depth; d++)
	{
		int			leaves = 0xff;

		for (int v = 0; v < nv; v++)
		{
			int32_t		ix[8] __attribute__((aligned(32)));

			_mm256_store_si256((__m256i *) ix, idx[v]);
			info[v] = _mm256_setr_epi32(w[3 * ix[0] + 1], w[3 * ix[1] + 1], w[3 * ix[2] + 1], w[3 * ix[3] + 1],
										w[3 * ix[4] + 1], w[3 * ix[5] + 1], w[3 * ix[6] + 1], w[3 * ix[7] + 1]);
			leaves &= _mm256_movemask_ps(_mm256_castsi256_ps(info[v]));
		}
		if (leaves == 0xff)
			break;
		for (int v = 0; v < nv; v++)
			idx[v] = walk_step(w, cats, x + r + 8 * (size_t) v, ldv, kinds, idx[v], info[v]);
	}
	for (int v = 0; v < nv; v++)
		_mm256_storeu_si256((__m256i *) (leaf + 8 * v), idx[v]);
}

/* Leaf indices of a block's rows by the AVX2 walk; see cpu_engine_int.h. */
__attribute__((target("avx2")))
size_t
gs_cpu_walk_avx2(const GsNode *tree, int depth, const float *x, size_t ld,
				 size_t r0, size_t r1, uint32_t *leaf, const uint32_t *cats,
				 uint32_t kinds)
{
	size_t		r = r0;

	for (; r + 8 * GS_CPU_WALK_VREGS <= r1; r += 8 * GS_CPU_WALK_VREGS)
		walk_rows(tree, depth, x, ld, r, GS_CPU_WALK_VREGS, leaf + (r - r0), cats, kinds);
	for (; r + 8 <= r1; r += 8)
		walk_rows(tree, depth, x, ld, r, 1, leaf + (r - r0), cats, kinds);
	return r - r0;
}

/* Add a tree's double leaves four rows at a time; see cpu_engine_int.h. */
__attribute__((target("avx2")))
size_t
gs_cpu_add_leaves_double_avx2(const GsNode *tree, const float *lo, const uint32_t *leaf,
							  size_t n, double *acc)
{
	size_t		i = 0;

	for (; i + 4 <= n; i += 4)
	{
		__m128i		l = _mm_loadu_si128((const __m128i *) (leaf + i));
		__m128		hi = _mm_i32gather_ps((const float *) tree,
										  _mm_add_epi32(_mm_add_epi32(l, l), l), 4);
		__m128		low = _mm_i32gather_ps(lo, l, 4);
		__m256d		val = _mm256_add_pd(_mm256_cvtps_pd(hi), _mm256_cvtps_pd(low));

		_mm256_storeu_pd(acc + i, _mm256_add_pd(_mm256_loadu_pd(acc + i), val));
	}
	return i;
}

#endif							/* GS_CPU_X86_SIMD */

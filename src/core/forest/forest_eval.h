/*
 * forest_eval.h
 *	  Tree traversal and output transforms, written once for the CPU engine
 *	  (cpu_engine.c) and the CUDA kernels (cuda/), which include this header.
 *
 * Everything here is a static inline function with no side effects and no
 * allocation.  The forest must have been validated (forest.h): these
 * functions trust child indices and feature indices.
 *
 * Feature values are read through a base pointer and a stride, so the same
 * code serves a row-major row (stride 1) and a column-major batch (stride =
 * number of rows in the batch).
 */
#ifndef GS_FOREST_EVAL_H
#define GS_FOREST_EVAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "forest.h"

#ifdef __CUDACC__
#define GS_HD static __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif

/* The bits of a float (a categorical node's category set index). */
GS_HD uint32_t
gs_float_bits(float v)
{
#ifdef __CUDA_ARCH__
	return __float_as_uint(v);
#else
	uint32_t	u;

	memcpy(&u, &v, sizeof(u));
	return u;
#endif
}

/*
 * Where the category set starting at cats[set] sends non-missing value v:
 * 1 (right) when v is a valid code (0 <= v < 2^24, or -1 < v for sets
 * marked GS_CAT_TRUNC_NEGATIVE), truncated toward zero, whose bit is set;
 * 0 (left) otherwise -- or 2 (the default direction) for a code that is
 * invalid or past the end of the bitset in sets marked
 * GS_CAT_INVALID_DEFAULT.  This is XGBoost's Decision()
 * (common/categorical.h; 1.6 and before for GS_CAT_INVALID_DEFAULT)
 * negated, and LightGBM's CategoricalDecision with its children swapped.
 * A set marked GS_CAT_NEGATED tests -v (see forest.h).
 */
GS_HD uint32_t
gs_cat_test(const uint32_t *cats, uint32_t set, float v)
{
	uint32_t	hdr = cats[set];
	uint32_t	outside = (hdr & GS_CAT_INVALID_DEFAULT) ? 2u : 0u;
	uint32_t	valid;
	uint32_t	c;

	v = (hdr & GS_CAT_NEGATED) ? -v : v;
	valid = (uint32_t) (v >= 0.0f) |
		((uint32_t) (v > -1.0f) & (uint32_t) ((hdr & GS_CAT_TRUNC_NEGATIVE) != 0));
	valid &= (uint32_t) (v < 16777216.0f);
	if (!valid)
		return outside;
	c = (uint32_t) (int32_t) v;
	if (c / 32u >= (hdr & GS_CAT_WORDS_MASK))
		return outside;
	return (cats[set + 1u + c / 32u] >> (c % 32u)) & 1u;
}

/*
 * Whether value v is missing at node info: NaN, or with
 * GS_NODE_ZERO_MISSING also a value within LightGBM's kZeroThreshold
 * (1e-35) of zero.
 */
GS_HD uint32_t
gs_node_missing(uint32_t info, float v)
{
	return (uint32_t) (v != v) |
		((uint32_t) ((info & GS_NODE_ZERO_MISSING) != 0) & (uint32_t) (fabsf(v) <= 1e-35f));
}

/*
 * Whether split node n sends value v to its left child: a missing value
 * follows the node's default direction; otherwise v < threshold goes left
 * (XGBoost's RegTree::GetNext), for a categorical node a value outside its
 * category set goes left (see gs_cat_test), and for an equality node
 * (GS_NODE_EQUAL) a value other than the threshold goes left.  cats is the
 * forest's cat_words (may be NULL when the forest has no categorical split).
 */
GS_HD uint32_t
gs_node_goes_left(GsNode n, float v, const uint32_t *cats)
{
	uint32_t	go_left,
				missing = gs_node_missing(n.info, v);

	if (n.info & GS_NODE_CATEGORICAL)
	{
		uint32_t	t = gs_cat_test(cats, gs_float_bits(n.value), v);

		go_left = (uint32_t) (t == 0u);
		missing |= (uint32_t) (t == 2u);
	}
	else if (n.info & GS_NODE_EQUAL)
		go_left = (uint32_t) (v != n.value);
	else
		go_left = (uint32_t) (v < n.value);
	if (missing)
		go_left = (uint32_t) ((n.info & GS_NODE_DEFAULT_LEFT) != 0);
	return go_left;
}

/*
 * Index of the child of split node n that value v leads to (relative to the
 * tree start); see gs_node_goes_left.
 */
GS_HD uint32_t
gs_node_next(GsNode n, float v, const uint32_t *cats)
{
	return n.left + (gs_node_goes_left(n, v, cats) ^ 1u);
}

/*
 * One branch-free step down a tree of a forest with only plain numerical
 * splits (GsForest.split_kinds == 0): the index of the node that row x
 * moves to from node i, or i itself when i is a leaf (leaves absorb), so
 * that several rows can walk a tree in lockstep for as many steps as the
 * tree is deep.  The comparisons are exactly those of gs_node_next for such
 * nodes.  A leaf's feature bits are 0, so reading x[0] for it is harmless.
 */
GS_HD uint32_t
gs_node_step_num(const GsNode *tree, uint32_t i, const float *x, size_t stride)
{
	GsNode		n = tree[i];
	float		v = x[(size_t) (n.info & GS_NODE_FEATURE_MASK) * stride];
	uint32_t	go_left = (uint32_t) (v < n.value) |
		((uint32_t) (v != v) & ((n.info & GS_NODE_DEFAULT_LEFT) != 0));
	uint32_t	next = n.left + (go_left ^ 1u);

	return (n.info & GS_NODE_LEAF) ? i : next;
}

/*
 * The same step for any node (categorical splits, zero-as-missing, equality
 * splits): the decisions of gs_node_next, with the categorical and equality
 * tests as the only branches.
 */
GS_HD uint32_t
gs_node_step(const GsNode *tree, uint32_t i, const float *x, size_t stride,
			 const uint32_t *cats)
{
	GsNode		n = tree[i];
	float		v = x[(size_t) (n.info & GS_NODE_FEATURE_MASK) * stride];
	uint32_t	next = n.left + (gs_node_goes_left(n, v, cats) ^ 1u);

	return (n.info & GS_NODE_LEAF) ? i : next;
}

/*
 * Index (relative to the tree's first node) of the leaf that one row
 * reaches in one tree.  tree points to the tree's first node;
 * x[f * stride] is the row's value of feature f; cats is the forest's
 * cat_words.
 */
GS_HD uint32_t
gs_tree_leaf_index(const GsNode *tree, const float *x, size_t stride,
				   const uint32_t *cats)
{
	uint32_t	i = 0;
	GsNode		n = tree[0];

	while (!(n.info & GS_NODE_LEAF))
	{
		i = gs_node_next(n, x[(size_t) (n.info & GS_NODE_FEATURE_MASK) * stride], cats);
		n = tree[i];
	}
	return i;
}

/* Leaf value that one row reaches in one tree; see gs_tree_leaf_index. */
GS_HD float
gs_tree_leaf(const GsNode *tree, const float *x, size_t stride,
			 const uint32_t *cats)
{
	GsNode		n = tree[0];

	while (!(n.info & GS_NODE_LEAF))
		n = tree[gs_node_next(n, x[(size_t) (n.info & GS_NODE_FEATURE_MASK) * stride], cats)];
	return n.value;
}

/*
 * Node i's leaf value as a double, for forests with GsForest.leaf_lo
 * (lo): the high and the low float added exactly.
 */
GS_HD double
gs_leaf_double(const GsNode *nodes, const float *lo, uint32_t i)
{
	return (double) nodes[i].value + (double) lo[i];
}

/*
 * Node i's output for a forest with linear leaves (GsForest.linear; nodes
 * and lo as for gs_leaf_double), for the row whose feature j is
 * x[j * stride]: LightGBM's Tree::Predict for a linear tree.
 */
GS_HD double
gs_linear_leaf(const GsNode *nodes, const float *lo, const GsLinearLeaves *lin,
			   uint32_t i, const float *x, size_t stride)
{
	double		out = lin->constant[i];

	for (uint32_t k = lin->start[i]; k < lin->start[i + 1]; k++)
	{
		float		v = x[(size_t) lin->feature[k] * stride];

		if (v != v)
			return gs_leaf_double(nodes, lo, i);
		if (fabsf(v) > 1e-35f)
			out += lin->coef[k] * (double) v;
	}
	return out;
}

/*
 * expf for the output transforms, written once for both engines: CUDA's
 * expf differs from glibc's by up to 2 ulp, so using each platform's own
 * would make GPU and CPU outputs differ.  gs_expf below is glibc's expf
 * (2.28 and later: the algorithm of sysdeps/ieee754/flt-32/e_expf.c, from
 * Arm's optimized-routines) as the
 * x86-64 FMA variant (__expf_fma, which glibc picks on every CPU with FMA)
 * computes it: x * 32/ln2 = k + r (k integer, |r| <= 1/2), 2^(k/32) from a
 * 32-entry table, 2^(r/32) by a cubic, all in double with the
 * multiply-adds fused exactly where GCC fuses them in that build, and one
 * final rounding to float.  Checked equal to glibc 2.36's expf on x86-64
 * for all 2^32 float inputs; glibc's non-FMA variant (CPUs without FMA)
 * differs from it on 2 of them (x = 0x1.04845ep+5 and -0x1.f8cbb2p+5).
 * The double operations are explicit round-to-nearest intrinsics on the
 * device, so nvcc can not contract or reorder them; host compilers must
 * not contract either (ISO C modes such as -std=c11 do not).
 */
#ifdef __CUDA_ARCH__
#define GS_DMUL(a, b)		__dmul_rn((a), (b))
#define GS_DADD(a, b)		__dadd_rn((a), (b))
#define GS_DFMA(a, b, c)	__fma_rn((a), (b), (c))
#define GS_DDIV(a, b)		__ddiv_rn((a), (b))
#else
#define GS_DMUL(a, b)		((a) * (b))
#define GS_DADD(a, b)		((a) + (b))
#define GS_DFMA(a, b, c)	fma((a), (b), (c))
#define GS_DDIV(a, b)		((a) / (b))
#endif

/* 2^(i/32) as doubles' bits, minus i << 47 (glibc's __exp2f_data.tab). */
#define GS_EXP2F_TABLE { \
	0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull, \
	0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull, \
	0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull, \
	0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull, \
	0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull, \
	0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull, \
	0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull, \
	0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull \
}
#ifdef __CUDACC__
static __device__ const uint64_t gs_exp2f_tab_dev[32] = GS_EXP2F_TABLE;
#endif
static const uint64_t gs_exp2f_tab[32] = GS_EXP2F_TABLE;

/*
 * 2^(k/32) * (c0 r^3 + c1 r^2 + c2 r + 1) rounded to float, ki holding k in
 * its low bits: the common end of glibc's expf and exp2f.
 */
GS_HD float
gs_exp2_table_poly(uint64_t ki, double r, double c0, double c1, double c2)
{
	uint64_t	t;
	double		s,
				z,
				r2,
				y;

#ifdef __CUDA_ARCH__
	t = gs_exp2f_tab_dev[ki % 32];
#else
	t = gs_exp2f_tab[ki % 32];
#endif
	t += ki << (52 - 5);
	memcpy(&s, &t, sizeof(s));
	z = GS_DFMA(c0, r, c1);
	r2 = GS_DMUL(r, r);
	y = GS_DFMA(c2, r, 1.0);
	y = GS_DFMA(z, r2, y);
	y = GS_DMUL(y, s);
	return (float) y;
}

/* expf(x), bit-identical to glibc's on FMA hardware; see above. */
GS_HD float
gs_expf(float x)
{
	const double inv_ln2_n = 0x1.71547652b82fep+0 * 32;
	const double shift = 0x1.8p+52;
	const double c0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32;
	const double c1 = 0x1.ebfce50fac4f3p-3 / 32 / 32;
	const double c2 = 0x1.62e42ff0c52d6p-1 / 32;
	const double xd = (double) x;
	uint32_t	ux;
	uint32_t	abstop;
	uint64_t	ki;
	double		kd,
				r;

	memcpy(&ux, &x, sizeof(ux));
	abstop = (ux >> 20) & 0x7ff;
	if (abstop >= 0x42b)		/* |x| >= 88, or x is NaN or infinite */
	{
		if (ux == 0xff800000u)	/* -inf */
			return 0.0f;
		if (abstop >= 0x7f8)	/* +inf, NaN */
			return x + x;
		if (x > 0x1.62e42ep6f)	/* overflows */
			return INFINITY;
		if (x < -0x1.9fe368p6f) /* underflows */
			return 0.0f;
	}
	/* x * 32/ln2 = k + r, k rounded to nearest even through the shift */
	kd = GS_DFMA(inv_ln2_n, xd, shift);
	memcpy(&ki, &kd, sizeof(ki));
	kd = GS_DADD(kd, -shift);
	r = GS_DFMA(inv_ln2_n, xd, -kd);
	/* 2^(k/32) * 2^(r/32), the latter ~ c0 r^3 + c1 r^2 + c2 r + 1 */
	return gs_exp2_table_poly(ki, r, c0, c1, c2);
}

/*
 * 2^x, bit-identical to glibc's exp2f (the algorithm of gs_expf above with
 * the table's unscaled polynomial: x = k/32 + r, 2^(k/32) from the table,
 * 2^r ~ c0 r^3 + c1 r^2 + c2 r + 1 in double, rounded to float once).
 */
GS_HD float
gs_exp2f(float x)
{
	const double shift = 0x1.8p+52 / 32;
	const double c0 = 0x1.c6af84b912394p-5;
	const double c1 = 0x1.ebfce50fac4f3p-3;
	const double c2 = 0x1.62e42ff0c52d6p-1;
	const double xd = (double) x;
	uint32_t	ux;
	uint64_t	ki;
	double		kd,
				r;

	memcpy(&ux, &x, sizeof(ux));
	if (((ux >> 20) & 0x7ff) >= 0x430)	/* |x| >= 128, or x is NaN */
	{
		if (ux == 0xff800000u)	/* -inf */
			return 0.0f;
		if (((ux >> 20) & 0x7ff) >= 0x7f8)	/* +inf, NaN */
			return x + x;
		if (x > 0.0f)
			return INFINITY;
		if (x <= -150.0f)
			return 0.0f;
	}
	kd = GS_DADD(xd, shift);
	memcpy(&ki, &kd, sizeof(ki));
	kd = GS_DADD(kd, -shift);
	r = GS_DADD(xd, -kd);
	return gs_exp2_table_poly(ki, r, c0, c1, c2);
}

/* Logistic function as XGBoost computes it in float (common/math.h). */
GS_HD float
gs_sigmoid(float x)
{
	float		e = -x;

	if (e > 88.7f)
		e = 88.7f;
	return 1.0f / (gs_expf(e) + 1.0f);
}

/*
 * onnxruntime's ComputeLogistic (core/providers/cpu/ml/ml_common.h), in
 * float: 1 / (1 + exp(-|x|)), mirrored for negative x.
 */
GS_HD float
gs_ort_logistic(float x)
{
	float		v = 1.0f / (1.0f + gs_expf(-fabsf(x)));

	return x < 0.0f ? 1.0f - v : v;
}

/*
 * log(1 + exp(x)) (LightGBM's cross_entropy_lambda output), the same bits on
 * both engines: max(x, 0) + log1p(e) with e = exp(-|x|) in (0, 1] from
 * gs_expf, and log1p(e) = 2 atanh(s), s = e / (2 + e) <= 1/3, summed as
 * its series 2 s (1 + s^2/3 + s^4/5 + ...) in double with explicitly
 * rounded operations (no libm log, whose last bit differs between glibc and
 * CUDA).  20 terms leave a truncation error below 1e-19 relative.
 */
GS_HD float
gs_softplus(float x)
{
	double		e = (double) gs_expf(-fabsf(x));
	double		s = GS_DDIV(e, GS_DADD(2.0, e));
	double		s2 = GS_DMUL(s, s);
	double		sum = 1.0 / 41.0;

	if (x != x)
		return x;
	for (int k = 19; k >= 0; k--)
		sum = GS_DFMA(sum, s2, 1.0 / (double) (2 * k + 1));
	return (float) GS_DADD(x > 0.0f ? (double) x : 0.0,
						   GS_DMUL(GS_DMUL(2.0, s), sum));
}

/*
 * Turn one row's margins m[0..n_groups) into outputs o[0..n_outputs);
 * param: the forest's transform_param.  m and o may not alias for the
 * softmax/argmax transforms.
 */
GS_HD void
gs_transform_row(GsTransform t, const float *param, const float *m, int n_groups, float *o)
{
	int			g;

	switch (t)
	{
		case GS_TRANSFORM_IDENTITY:
			for (g = 0; g < n_groups; g++)
				o[g] = m[g];
			break;
		case GS_TRANSFORM_SIGMOID:
			for (g = 0; g < n_groups; g++)
				o[g] = gs_sigmoid(m[g]);
			break;
		case GS_TRANSFORM_EXP:
			for (g = 0; g < n_groups; g++)
				o[g] = gs_expf(m[g]);
			break;
		case GS_TRANSFORM_HINGE:
			for (g = 0; g < n_groups; g++)
				o[g] = m[g] > 0.0f ? 1.0f : 0.0f;
			break;
		case GS_TRANSFORM_SOFTPLUS:
			for (g = 0; g < n_groups; g++)
				o[g] = gs_softplus(m[g]);
			break;
		case GS_TRANSFORM_ISOLATION:
			/*
			 * skl2onnx's Div, Neg, Pow(2, .), Neg, Add: offset - 2^(-m / d),
			 * each step rounded to float
			 */
			for (g = 0; g < n_groups; g++)
			{
				float		q = m[g] / param[0];

				o[g] = -gs_exp2f(-q) + param[1];
			}
			break;
		case GS_TRANSFORM_SIGNED_SQUARE:
			/* LightGBM's Sign(x) * x * x: -0 becomes 0, NaN stays */
			for (g = 0; g < n_groups; g++)
				o[g] = m[g] > 0.0f ? m[g] * m[g] :
					m[g] < 0.0f ? -(m[g] * m[g]) :
					m[g] == m[g] ? 0.0f : m[g];
			break;
		case GS_TRANSFORM_SOFTMAX:
			{
				/* as XGBoost's common::Softmax: max shift, double sum */
				float		wmax = m[0];
				double		wsum = 0.0;

				for (g = 1; g < n_groups; g++)
					wmax = m[g] > wmax ? m[g] : wmax;
				if (wmax > 3.40282347e+38f || wmax < -3.40282347e+38f)
				{
					/*
					 * an infinite largest margin (a double sum past float's
					 * range: LightGBM's linear trees on extreme inputs), where
					 * inf - inf would give NaN: the classes at the limit share
					 * the probability, as the double softmax gives it to the
					 * largest (all of it when one class is there)
					 */
					for (g = 0; g < n_groups; g++)
					{
						o[g] = m[g] == wmax ? 1.0f : 0.0f;
						wsum += o[g];
					}
				}
				else
					for (g = 0; g < n_groups; g++)
					{
						o[g] = gs_expf(m[g] - wmax);
						wsum += o[g];
					}
				for (g = 0; g < n_groups; g++)
					o[g] /= (float) wsum;
				break;
			}
		case GS_TRANSFORM_ARGMAX:
			{
				/* first index of the largest margin, as XGBoost's softmax */
				int			best = 0;

				for (g = 1; g < n_groups; g++)
					if (m[g] > m[best])
						best = g;
				o[0] = (float) best;
				break;
			}
		case GS_TRANSFORM_ORT_LOGISTIC:
			for (g = 0; g < n_groups; g++)
				o[g] = gs_ort_logistic(m[g]);
			break;
		case GS_TRANSFORM_ORT_SOFTMAX:
		case GS_TRANSFORM_ORT_SOFTMAX_ZERO:
			{
				/*
				 * onnxruntime's ComputeSoftmax / ComputeSoftmaxZero: max
				 * shift, float sum in order; SOFTMAX_ZERO leaves margins
				 * within 1e-7 of zero out of the sum and scales them by
				 * exp(-max) instead
				 */
				float		vmax = -3.40282347e+38f;
				float		sum = 0.0f,
							eneg = 0.0f;

				for (g = 0; g < n_groups; g++)
					vmax = m[g] > vmax ? m[g] : vmax;
				if (t == GS_TRANSFORM_ORT_SOFTMAX_ZERO)
					eneg = gs_expf(-vmax);
				for (g = 0; g < n_groups; g++)
				{
					if (t == GS_TRANSFORM_ORT_SOFTMAX ||
						m[g] > 0.0000001f || m[g] < -0.0000001f)
					{
						o[g] = gs_expf(m[g] - vmax);
						sum += o[g];
					}
					else
						o[g] = m[g] * eneg;
				}
				for (g = 0; g < n_groups; g++)
					o[g] = o[g] / sum;
				break;
			}
	}
}

#endif							/* GS_FOREST_EVAL_H */

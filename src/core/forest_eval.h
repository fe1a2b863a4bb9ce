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

#include "forest.h"

#ifdef __CUDACC__
#define GS_HD static __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif

/*
 * Index of the child of split node n that value v leads to (relative to the
 * tree start).  NaN is missing and follows the node's default direction;
 * otherwise v < threshold goes left, exactly as XGBoost's RegTree::GetNext.
 */
GS_HD uint32_t
gs_node_next(GsNode n, float v)
{
	int			go_left;

	if (isnan(v))
		go_left = (n.info & GS_NODE_DEFAULT_LEFT) != 0;
	else
		go_left = v < n.value;
	return n.left + (go_left ? 0u : 1u);
}

/*
 * One branch-free step down a tree: the index of the node that row x moves
 * to from node i, or i itself when i is a leaf (leaves absorb), so that
 * several rows can walk a tree in lockstep for as many steps as the tree is
 * deep.  The comparisons are exactly those of gs_node_next.  A leaf's
 * feature bits are 0, so reading x[0] for it is harmless.
 */
GS_HD uint32_t
gs_node_step(const GsNode *tree, uint32_t i, const float *x, size_t stride)
{
	GsNode		n = tree[i];
	float		v = x[(size_t) (n.info & GS_NODE_FEATURE_MASK) * stride];
	uint32_t	go_left = (uint32_t) (v < n.value) |
		((uint32_t) (v != v) & ((n.info & GS_NODE_DEFAULT_LEFT) != 0));
	uint32_t	next = n.left + (go_left ^ 1u);

	return (n.info & GS_NODE_LEAF) ? i : next;
}

/*
 * Leaf value that one row reaches in one tree.  tree points to the tree's
 * first node; x[f * stride] is the row's value of feature f.
 */
GS_HD float
gs_tree_leaf(const GsNode *tree, const float *x, size_t stride)
{
	GsNode		n = tree[0];

	while (!(n.info & GS_NODE_LEAF))
		n = tree[gs_node_next(n, x[(size_t) (n.info & GS_NODE_FEATURE_MASK) * stride])];
	return n.value;
}

/* Logistic function as XGBoost computes it in float (common/math.h). */
GS_HD float
gs_sigmoid(float x)
{
	float		e = -x;

	if (e > 88.7f)
		e = 88.7f;
	return 1.0f / (expf(e) + 1.0f);
}

/*
 * Turn one row's margins m[0..n_groups) into outputs o[0..n_outputs).
 * m and o may not alias for the softmax/argmax transforms.
 */
GS_HD void
gs_transform_row(GsTransform t, const float *m, int n_groups, float *o)
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
				o[g] = expf(m[g]);
			break;
		case GS_TRANSFORM_HINGE:
			for (g = 0; g < n_groups; g++)
				o[g] = m[g] > 0.0f ? 1.0f : 0.0f;
			break;
		case GS_TRANSFORM_SOFTMAX:
			{
				/* as XGBoost's common::Softmax: max shift, double sum */
				float		wmax = m[0];
				double		wsum = 0.0;

				for (g = 1; g < n_groups; g++)
					wmax = m[g] > wmax ? m[g] : wmax;
				for (g = 0; g < n_groups; g++)
				{
					o[g] = expf(m[g] - wmax);
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
	}
}

#endif							/* GS_FOREST_EVAL_H */

/*
 * lgbm_linear.c
 *	  The leaves of LightGBM's linear trees (linear_tree=true): checking a
 *	  parsed tree's leaf models and laying them out in the forest's node
 *	  order (GsForest.linear, forest.h).
 *
 * lgbm_text.c parses each tree's leaf_const, num_features, leaf_features
 * and leaf_coeff lines into its LTree; lgbm_load.c walks the tree
 * breadth-first (walk_ltree) and then calls gs_lgbm_linear_leaves with the
 * walk's queue, which holds the tree's items in node order.  The engines'
 * arithmetic is gs_linear_leaf (forest_eval.h).
 */
#include "lgbm_internal.h"

#include <math.h>
#include <string.h>

#define LGBM_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* Check and lay out one tree's leaf models; see lgbm_internal.h. */
GsCode
gs_lgbm_linear_leaves(const LTree *t, int32_t ti, int32_t n_features, double leaf_scale,
					  const int32_t *items, int64_t n, GsLinearLeaves *lin, int64_t off,
					  int64_t *pos, GsStatus *st)
{
	int64_t		n_int = t->num_leaves - 1;

	/*
	 * each leaf's model: features in range, values finite once scaled;
	 * checked in the first pass (lin NULL), which the second pass follows
	 * on the same text, as walk_ltree's passes do
	 */
	if (t->leaf_const && lin == NULL)
		for (int64_t j = 0; j < t->num_leaves; j++)
		{
			if (!isfinite(t->leaf_const[j] * leaf_scale))
				return LGBM_ERR(st, "invalid LightGBM model: linear tree %d leaf %lld has a non-finite constant",
								ti, (long long) j);
			for (int32_t k = t->term_start[j]; k < t->term_start[j + 1]; k++)
			{
				if (t->leaf_features[k] >= n_features)
					return LGBM_ERR(st, "invalid LightGBM model: linear tree %d leaf %lld uses feature %d, but the model has %d features",
									ti, (long long) j, t->leaf_features[k], n_features);
				if (!isfinite(t->leaf_coeff[k] * leaf_scale))
					return LGBM_ERR(st, "invalid LightGBM model: linear tree %d leaf %lld has a non-finite coefficient",
									ti, (long long) j);
			}
		}
	if (lin == NULL)
		return GS_OK;

	/*
	 * Node order: items[i] is the tree's internal node items[i] or, from
	 * n_int on, its leaf items[i] - n_int.  A tree without is_linear in a
	 * model with linear trees: its leaf values, no terms.
	 */
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		j = (int64_t) items[i] - n_int;

		lin->start[off + i] = (uint32_t) *pos;
		lin->constant[off + i] = 0.0;
		if (j < 0)
			continue;
		if (t->leaf_const == NULL)
		{
			lin->constant[off + i] = t->leaf_value[j] * leaf_scale;
			continue;
		}
		lin->constant[off + i] = t->leaf_const[j] * leaf_scale;
		for (int32_t k = t->term_start[j]; k < t->term_start[j + 1]; k++)
		{
			lin->feature[*pos] = t->leaf_features[k];
			lin->coef[*pos] = t->leaf_coeff[k] * leaf_scale;
			(*pos)++;
		}
	}
	return GS_OK;
}

/*
 * lgbm_linear.c
 *	  The leaves of LightGBM's linear trees (linear_tree=true): checking a
 *	  parsed tree's leaf models and laying them out in the forest's node
 *	  order (GsForest.linear, forest.h).
 *
 * lgbm_text.c parses each tree's leaf_const, num_features, leaf_features
 * and leaf_coeff lines into its LTree; lgbm_trees.c has the forest builder
 * lay the tree out breadth-first and then calls gs_lgbm_linear_append with
 * the builder's order of the tree's items, growing the linear leaves (an
 * LgbmLinear around the forest's own GsLinearLeaves, so gs_forest_free
 * releases them on any failure) one tree at a time.  The engines'
 * arithmetic is gs_linear_leaf (forest_eval.h).
 */
#include "lgbm_internal.h"

#include <math.h>
#include <string.h>

#define LGBM_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* Check one tree's leaf models; see lgbm_internal.h. */
GsCode
gs_lgbm_linear_check(const LTree *t, int32_t ti, int32_t n_features, double leaf_scale,
					 GsStatus *st)
{
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
	return GS_OK;
}

/*
 * Resize *p, from a, from n_old to n_new elements of size bytes (at least
 * one byte), keeping the first min(n_old, n_new); the rest zeroed.  false
 * when out of memory (*p unchanged).
 */
static bool
resize(const GsAllocator *a, void **p, int64_t n_old, int64_t n_new, size_t size)
{
	void	   *q = gs_lgbm_lalloc(a, size * (size_t) n_new);

	if (q == NULL)
		return false;
	if (*p != NULL)
	{
		memcpy(q, *p, size * (size_t) (n_old < n_new ? n_old : n_new));
		a->free(a->ctx, *p);
	}
	*p = q;
	return true;
}

/* cap doubled (from 64) until it holds need. */
static int64_t
grown_cap(int64_t cap, int64_t need)
{
	if (cap < 64)
		cap = 64;
	while (cap < need)
		cap *= 2;
	return cap;
}

/* Room in ll for n_nodes nodes and n_terms terms in all; false when out of memory. */
static bool
reserve(const GsAllocator *a, LgbmLinear *ll, int64_t n_nodes, int64_t n_terms)
{
	GsLinearLeaves *lin = ll->lin;

	if (n_nodes > ll->node_cap)
	{
		int64_t		cap = grown_cap(ll->node_cap, n_nodes);

		if (!resize(a, (void **) &lin->constant, ll->n_nodes, cap, sizeof(double)) ||
			!resize(a, (void **) &lin->start, ll->n_nodes + 1, cap + 1, sizeof(uint32_t)))
			return false;
		ll->node_cap = cap;
	}
	if (n_terms > ll->term_cap)
	{
		int64_t		cap = grown_cap(ll->term_cap, n_terms);

		if (!resize(a, (void **) &lin->feature, lin->n_terms, cap, sizeof(int32_t)) ||
			!resize(a, (void **) &lin->coef, lin->n_terms, cap, sizeof(double)))
			return false;
		ll->term_cap = cap;
	}
	return true;
}

/* Append one tree's linear leaves; see lgbm_internal.h. */
GsCode
gs_lgbm_linear_append(const GsAllocator *a, const LTree *t, double leaf_scale,
					  const int64_t *items, int64_t n, LgbmLinear *ll, GsStatus *st)
{
	GsLinearLeaves *lin = ll->lin;
	int64_t		n_int = t->num_leaves - 1,
				off = ll->n_nodes,
				pos = lin->n_terms;

	if (lin->n_terms + t->n_terms >= (int64_t) UINT32_MAX)
		return gs_status_set(st, GS_ERR_LIMIT, "the leaves of the linear trees have more than %lld terms",
							 (long long) UINT32_MAX - 1);
	if (!reserve(a, ll, off + n, lin->n_terms + t->n_terms))
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");

	/*
	 * Node order: items[i] is the tree's internal node items[i] or, from
	 * n_int on, its leaf items[i] - n_int.  A tree without is_linear in a
	 * model with linear trees: its leaf values, no terms.
	 */
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		j = items[i] - n_int;

		lin->start[off + i] = (uint32_t) pos;
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
			lin->feature[pos] = t->leaf_features[k];
			lin->coef[pos] = t->leaf_coeff[k] * leaf_scale;
			pos++;
		}
	}
	ll->n_nodes = off + n;
	lin->n_terms = pos;
	return GS_OK;
}

/* Close the linear leaves; see lgbm_internal.h. */
GsCode
gs_lgbm_linear_finish(const GsAllocator *a, LgbmLinear *ll, GsStatus *st)
{
	GsLinearLeaves *lin = ll->lin;

	/* the arrays' exact sizes, as gs_linear_leaves_new gives them */
	if (!resize(a, (void **) &lin->constant, ll->n_nodes, ll->n_nodes, sizeof(double)) ||
		!resize(a, (void **) &lin->start, ll->n_nodes + 1, ll->n_nodes + 1, sizeof(uint32_t)) ||
		!resize(a, (void **) &lin->feature, lin->n_terms, lin->n_terms, sizeof(int32_t)) ||
		!resize(a, (void **) &lin->coef, lin->n_terms, lin->n_terms, sizeof(double)))
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	ll->node_cap = ll->n_nodes;
	ll->term_cap = lin->n_terms;
	lin->start[ll->n_nodes] = (uint32_t) lin->n_terms;
	return GS_OK;
}

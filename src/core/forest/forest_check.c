/*
 * forest_check.c
 *	  The check of a forest's invariants (every loader guarantees them; the
 *	  reader of a forest image demands them, forest_image.c) and of the caps
 *	  of a GsLimits.  See gs_forest_check in forest_image.h.
 */
#include "forest_image.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "catboost_ctr.h"
#include "util/utf8_valid.h"

/* The caps of lim; see forest_image.h. */
GsCode
gs_forest_check_caps(const GsForest *f, const GsLimits *lim, GsStatus *st)
{
	if (lim->max_trees > 0 && f->n_trees > lim->max_trees)
		return gs_status_limit(st, GS_LIMIT_TREES, lim->max_trees, "%d trees, more than the limit of %d",
							   f->n_trees, lim->max_trees);
	if (lim->max_nodes > 0 && f->n_nodes > lim->max_nodes)
		return gs_status_limit(st, GS_LIMIT_NODES, lim->max_nodes, "%lld tree nodes, more than the limit of %lld",
							 (long long) f->n_nodes, (long long) lim->max_nodes);
	if (lim->max_features > 0 && f->n_features > lim->max_features)
		return gs_status_limit(st, GS_LIMIT_FEATURES, lim->max_features, "%d features, more than the limit of %d",
							 f->n_features, lim->max_features);
	if (lim->max_depth > 0 && f->max_depth > lim->max_depth)
		return gs_status_limit(st, GS_LIMIT_DEPTH, lim->max_depth, "a tree of depth %d, deeper than the limit of %d",
							 f->max_depth, lim->max_depth);
	return GS_OK;
}

/* GS_ERR_INVALID_MODEL naming tree t and node i of a forest that fails a check. */
static GsCode
bad_node(GsStatus *st, int32_t t, int64_t i, const char *what)
{
	gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid forest: node %lld of tree %d %s",
				  (long long) i, t, what);
	return st->code;
}

static GsCode
bad_forest(GsStatus *st, const char *what)
{
	gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid forest: %s", what);
	return st->code;
}

/* Check one tree of f (nodes [off, end)); adds to *kinds and *n_cat. */
static GsCode
check_tree(const GsForest *f, int32_t t, int64_t off, int64_t end, int32_t *depth,
		   uint32_t *kinds, int64_t *n_cat, GsStatus *st)
{
	const GsNode *tree = f->nodes + off;
	const float *lo = f->leaf_lo ? f->leaf_lo + off : NULL;
	int64_t		size = end - off,
				next_child = 1;
	int32_t		deepest = 0;

	/*
	 * Breadth-first layout, as every loader writes it: the split nodes, in
	 * order, own the consecutive pairs 1-2, 3-4, ... after themselves, so
	 * every node but the root is reached exactly once and depth only grows.
	 */
	depth[0] = 0;
	for (int64_t i = 0; i < size; i++)
	{
		GsNode		n = tree[i];
		uint32_t	feature = n.info & GS_NODE_FEATURE_MASK;

		if (i > 0 && i >= next_child)
			return bad_node(st, t, i, "is not reached from the root");
		if (n.info & GS_NODE_LEAF)
		{
			if (feature != 0 || (n.info & GS_NODE_CATEGORICAL))
				return bad_node(st, t, i, "is a leaf with split bits");
			if (!isfinite(n.value))
				return bad_node(st, t, i, "is a leaf with a value that is not finite");
			/* the low part is what rounding the leaf to float left: <= ulp/2 */
			if (lo && !(fabs((double) lo[i]) <= fabs((double) n.value) * 0x1p-24 + 0x1p-149))
				return bad_node(st, t, i, "is a leaf whose low part is not a rounding remainder");
			if (depth[i] > deepest)
				deepest = depth[i];
			continue;
		}
		if ((int64_t) n.left != next_child || n.left <= i || (int64_t) n.left + 1 >= size)
			return bad_node(st, t, i, "has children out of breadth-first order");
		if (lo && lo[i] != 0.0f)
			return bad_node(st, t, i, "is a split with a leaf's low part");
		next_child += 2;
		/* a CatBoost model's derived features follow its columns */
		if ((int64_t) feature >= (int64_t) f->n_features + f->n_derived)
			return bad_node(st, t, i, "splits on a feature past the model's features");
		if ((n.info & GS_NODE_CATEGORICAL) && (n.info & GS_NODE_EQUAL))
			return bad_node(st, t, i, "is both a categorical and an equality split");
		if (n.info & GS_NODE_CATEGORICAL)
		{
			uint32_t	at;
			int64_t		words;

			memcpy(&at, &n.value, sizeof(at));
			if (f->cat_words == NULL || (int64_t) at >= f->n_cat_words)
				return bad_node(st, t, i, "has a category set outside the forest's");
			words = f->cat_words[at] & GS_CAT_WORDS_MASK;
			if (words > (int64_t) GS_CAT_MAX_WORDS || (int64_t) at + 1 + words > f->n_cat_words)
				return bad_node(st, t, i, "has a category set outside the forest's");
			(*n_cat)++;
		}
		else if (isnan(n.value))
			return bad_node(st, t, i, "has a NaN threshold");
		*kinds |= n.info & (GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING | GS_NODE_EQUAL);
		depth[n.left] = depth[n.left + 1] = depth[i] + 1;
	}
	if (next_child != size)
		return bad_forest(st, "a tree has nodes no split reaches");
	if (deepest != f->tree_depth[t])
		return bad_forest(st, "a tree's recorded depth is wrong");
	return GS_OK;
}

/*
 * Check that tree t (nodes [off, end), already checked by check_tree) is
 * symmetric, as gs_forest_symmetric claims of its forest.
 */
static GsCode
check_symmetric(const GsForest *f, int32_t t, int64_t off, int64_t end, GsStatus *st)
{
	const GsNode *tree = f->nodes + off;
	int32_t		d = f->tree_depth[t];

	if (d > 30 || end - off != ((int64_t) 2 << d) - 1)
		return bad_forest(st, "a symmetric tree is not complete");
	for (int32_t k = 0; k < d; k++)
	{
		const GsNode *first = tree + ((int64_t) 1 << k) - 1;

		for (int64_t j = ((int64_t) 1 << k) - 1; j < ((int64_t) 2 << k) - 1; j++)
			if (tree[j].info != first->info || memcmp(&tree[j].value, &first->value, sizeof(float)) != 0)
				return bad_node(st, t, j, "differs from its level's split in a symmetric tree");
	}
	return GS_OK;
}

/*
 * Check linear leaves: only with leaf_lo, terms in node order and only on
 * leaves, features in range, constants and coefficients finite.
 */
static GsCode
check_linear(const GsForest *f, GsStatus *st)
{
	const GsLinearLeaves *lin = f->linear;

	if (f->leaf_lo == NULL || lin->n_terms < 0 || lin->n_terms >= (int64_t) UINT32_MAX ||
		lin->start[0] != 0 || (int64_t) lin->start[f->n_nodes] != lin->n_terms)
		return bad_forest(st, "impossible counts of the linear leaves");
	for (int64_t i = 0; i < f->n_nodes; i++)
	{
		bool		leaf = (f->nodes[i].info & GS_NODE_LEAF) != 0;

		if (lin->start[i + 1] < lin->start[i] || (!leaf && lin->start[i + 1] != lin->start[i]))
			return bad_forest(st, "the linear leaves' terms are out of order or on a split");
		if (!isfinite(lin->constant[i]) || (!leaf && lin->constant[i] != 0.0))
			return bad_forest(st, "a linear leaf's constant is not finite, or a split has one");
	}
	for (int64_t k = 0; k < lin->n_terms; k++)
		if (lin->feature[k] < 0 || lin->feature[k] >= f->n_features || !isfinite(lin->coef[k]))
			return bad_forest(st, "a linear leaf's term has a feature past the model's or a coefficient that is not finite");
	return GS_OK;
}

/* Check a forest's invariants; see forest_image.h. */
GsCode
gs_forest_check(const GsForest *f, const GsLimits *lim, const GsAllocator *alloc, GsStatus *st)
{
	int64_t		largest = 0,
				n_cat = 0;
	int32_t		deepest = 0;
	uint32_t	kinds = 0;
	int32_t    *depth;
	GsCode		rc = GS_OK;

	if (lim == NULL)
		lim = &gs_default_limits;
	if (f->n_trees < 1 || f->n_groups < 1 || f->n_features < 1 || f->n_nodes < f->n_trees ||
		f->n_nodes > (int64_t) UINT32_MAX || f->n_cat_words < 0 ||
		(f->cat_words == NULL) != (f->n_cat_words == 0))
		return bad_forest(st, "impossible counts");
	if (gs_forest_check_caps(f, lim, st) != GS_OK)
		return st->code;
	if ((int) f->transform < 0 || f->transform > GS_TRANSFORM_LAST)
		return bad_forest(st, "unknown output transform");
	if (f->n_outputs != (f->transform == GS_TRANSFORM_ARGMAX ? 1 : f->n_groups))
		return bad_forest(st, "the number of outputs does not match the output groups");
	if (f->transform == GS_TRANSFORM_ISOLATION &&
		(!(f->transform_param[0] > 0.0f) || !isfinite(f->transform_param[0]) ||
		 !isfinite(f->transform_param[1]) || f->n_groups != 1))
		return bad_forest(st, "the isolation forest's parameters are not a positive denominator and a finite offset");
	if (memchr(f->objective, '\0', sizeof(f->objective)) == NULL ||
		memchr(f->booster, '\0', sizeof(f->booster)) == NULL ||
		memchr(f->saved_by, '\0', sizeof(f->saved_by)) == NULL)
		return bad_forest(st, "a name is not terminated");
	for (int32_t g = 0; g < f->n_groups; g++)
		if (!isfinite(f->base_margin[g]))
			return bad_forest(st, "a base score is not finite");
	if (f->feature_names)
		for (int32_t i = 0; i < f->n_features; i++)
		{
			if (f->feature_names[i] == NULL)
				return bad_forest(st, "a feature name is missing");
			if (!gs_utf8_valid((const unsigned char *) f->feature_names[i],
							   strlen(f->feature_names[i])))
				return bad_forest(st, "a feature name is not valid UTF-8");
		}

	/* trees tile the nodes in order */
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		off = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

		if ((t == 0 && off != 0) || end <= off || end > f->n_nodes)
			return bad_forest(st, "the trees do not tile the nodes");
		if (f->tree_group[t] < 0 || f->tree_group[t] >= f->n_groups)
			return bad_forest(st, "a tree's output group is out of range");
		if (f->tree_depth[t] < 0 || f->tree_depth[t] > f->max_depth)
			return bad_forest(st, "a tree's depth is out of range");
		if (end - off > largest)
			largest = end - off;
		if (f->tree_depth[t] > deepest)
			deepest = f->tree_depth[t];
	}
	if (deepest != f->max_depth)
		return bad_forest(st, "the forest's depth is not that of its deepest tree");

	depth = alloc->alloc(alloc->ctx, sizeof(int32_t) * (size_t) largest);
	if (depth == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory checking a forest");
	for (int32_t t = 0; t < f->n_trees && rc == GS_OK; t++)
	{
		int64_t		off = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

		if ((t & 1023) == 1023 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			break;
		rc = check_tree(f, t, off, end, depth, &kinds, &n_cat, st);
		if (rc == GS_OK && f->format == GS_FORMAT_CATBOOST_JSON && strcmp(f->booster, "symmetric") == 0)
			rc = check_symmetric(f, t, off, end, st);
	}
	alloc->free(alloc->ctx, depth);
	if (rc != GS_OK)
		return rc;
	if (kinds != f->split_kinds || n_cat != f->n_cat_splits)
		return bad_forest(st, "the recorded kinds of splits do not match the nodes");
	if (f->cb_ctrs)
		return gs_cb_ctrs_check(f->cb_ctrs, f, alloc, st);
	if (f->n_derived != 0)
		return bad_forest(st, "derived features without their CatBoost tables");
	if (f->linear)
		return check_linear(f, st);
	return GS_OK;
}

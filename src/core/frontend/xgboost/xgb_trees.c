/*
 * xgb_trees.c
 *	  One XGBoost tree translated for the forest builder (xgb_load.c): the
 *	  category lists of its categorical splits, their bitsets, and each node
 *	  read from the tree's arrays (forest/forest_build.h walks, checks and
 *	  lays out the tree).
 *
 * A tree arrives as a RawTree of borrowed, untrusted jansson arrays.  A tree
 * with vector leaves arrives once per target (RawTree.target) and is built
 * as the scalar tree of that target.  The scratch array cat_idx belongs to
 * the caller, build_forest in xgb_load.c.
 */
#include "xgb_internal.h"

#include <math.h>
#include <string.h>

/*
 * Map the nodes of tree t to their entry in the tree's category lists:
 * cat_idx[node] = j when categories_nodes[j] == node, -1 otherwise.
 * Checks that the four category arrays agree in length, that listed nodes
 * exist and are listed once, and that every segment lies inside
 * "categories".  cat_idx is scratch of num_nodes entries.
 */
GsCode
gs_xgb_tree_cat_index(const RawTree *rt, int32_t t, int32_t *cat_idx, GsStatus *st)
{
	size_t		n,
				n_cats;

	for (int64_t i = 0; i < rt->num_nodes; i++)
		cat_idx[i] = -1;
	if (rt->cat_nodes == NULL)
		return GS_OK;
	n = json_array_size(rt->cat_nodes);
	n_cats = json_array_size(rt->categories);
	if (json_array_size(rt->cat_segments) != n || json_array_size(rt->cat_sizes) != n)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d has category arrays of different lengths", t);
	for (size_t j = 0; j < n; j++)
	{
		int64_t		node,
					seg,
					size;

		if (elem_int(rt->cat_nodes, j, &node) || node < 0 || node >= rt->num_nodes ||
			cat_idx[node] != -1)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d lists an invalid or repeated node in \"categories_nodes\"", t);
		if (elem_int(rt->cat_segments, j, &seg) || elem_int(rt->cat_sizes, j, &size) ||
			seg < 0 || size < 0 || (uint64_t) seg > n_cats || (uint64_t) size > n_cats - (uint64_t) seg)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %lld has a category segment outside \"categories\"",
								 t, (long long) node);
		cat_idx[node] = (int32_t) j;
	}
	return GS_OK;
}

/*
 * The category set of categorical split node id of the tree (entry j of its
 * category lists, -1 if none), appended to the forest through the builder:
 * the bitset of the listed categories, which must be integers in [0, 2^24)
 * (XGBoost's valid range), with the header flags of the tree
 * (GS_CAT_INVALID_DEFAULT for models of XGBoost before 1.7).
 */
static GsCode
cat_split(const XgbTreeCtx *c, int64_t id, int32_t j, uint32_t *set, GsStatus *st)
{
	const RawTree *rt = c->rt;
	int32_t		t = rt->src;
	int64_t		seg,
				size,
				maxc = -1;
	uint32_t   *bits;
	GsCode		rc;

	if (j < 0)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d node %lld is a categorical split without categories",
							 t, (long long) id);
	elem_int(rt->cat_segments, (size_t) j, &seg);
	elem_int(rt->cat_sizes, (size_t) j, &size);
	for (int64_t k = 0; k < size; k++)
	{
		int64_t		cat;

		if (elem_int(rt->categories, (size_t) (seg + k), &cat) || cat < 0 ||
			cat >= (int64_t) GS_CAT_MAX_WORDS * 32)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %lld has a category that is not an integer in [0, 16777216)",
								 t, (long long) id);
		if (cat > maxc)
			maxc = cat;
	}
	rc = gs_build_cat_set(c->b, maxc < 0 ? 0 : (uint32_t) (maxc / 32 + 1), rt->cat_flags, set,
						  &bits, st);
	if (rc != GS_OK)
		return rc;
	for (int64_t k = 0; k < size; k++)
	{
		int64_t		cat;

		elem_int(rt->categories, (size_t) (seg + k), &cat);
		bits[cat / 32] |= 1u << (cat % 32);
	}
	return GS_OK;
}

/*
 * Translate node id of a tree (ctx: its XgbTreeCtx) for the forest builder:
 * a leaf (scaled by the tree's dart weight; a vector leaf's value for the
 * copy's target) or a split (numerical, or categorical with its category
 * set).  Checks what only XGBoost's arrays can get wrong: integers where
 * integers belong, split types, finite conditions, the leaf vectors.
 */
GsCode
gs_xgb_tree_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st)
{
	const XgbTreeCtx *c = ctx;
	const RawTree *rt = c->rt;
	int32_t		t = rt->src;
	int64_t		l,
				r,
				feat = 0,
				dl = 0,
				stype = 0;
	float		cond = 0.0f;

	if (elem_int(rt->left, (size_t) id, &l) || elem_int(rt->right, (size_t) id, &r))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d node %lld has a non-integer child index",
							 t, (long long) id);
	if (rt->split_type && (elem_int(rt->split_type, (size_t) id, &stype) || stype < 0 || stype > 1))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d node %lld has an invalid split_type",
							 t, (long long) id);
	if (l == -1 && rt->leaf_weights)
	{
		/* vector leaf: its values by leaf index (3.x) or by node (2.x) */
		int64_t		slot = rt->leaf_by_index ? r : id;

		if (slot < 0 || (!rt->leaf_by_index && r != -1) ||
			slot >= (int64_t) (json_array_size(rt->leaf_weights) / (size_t) rt->size_leaf_vector) ||
			elem_float(rt->leaf_weights, (size_t) (slot * rt->size_leaf_vector + rt->target), &cond) ||
			!isfinite(cond))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %lld has no finite leaf vector",
								 t, (long long) id);
		r = -1;
		stype = 0;
	}
	else
	{
		if (l == -1 && r == -1)
			stype = 0;
		/* a categorical split's condition is unused (XGBoost writes NaN or junk) */
		if (stype == 0 && (elem_float(rt->cond, (size_t) id, &cond) || !isfinite(cond)))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %lld has a non-finite split condition or leaf value",
								 t, (long long) id);
	}
	if (c->covers)
	{
		/*
		 * XGBoost keeps covers in float32; its JSON holds their shortest
		 * decimals, which read as doubles are near that float but not it.
		 * Rounded, JSON, UBJSON and binary files of a model give the same
		 * covers (and explanations) as the model XGBoost holds.
		 */
		json_t	   *v = json_array_get(rt->sum_hess, (size_t) id);

		node->cover = json_is_number(v) ? (double) (float) json_number_value(v) : NAN;
	}
	if (l == -1 && r == -1)
	{
		/* a dart weight can push a finite leaf past float (found by fuzzing) */
		if (!isfinite(cond * rt->weight))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %lld has a leaf value that overflows when scaled by the tree's dart weight",
								 t, (long long) id);
		node->leaf = true;
		node->value = (double) (cond * rt->weight);
		return GS_OK;
	}
	if (elem_int(rt->feature, (size_t) id, &feat))
		feat = -1;
	if (elem_int(rt->default_left, (size_t) id, &dl))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d node %lld has an invalid default_left",
							 t, (long long) id);
	node->left = l;
	node->right = r;
	node->feature = feat;
	node->flags = dl ? GS_NODE_DEFAULT_LEFT : 0;
	node->threshold = cond;
	if (stype == 1)
	{
		node->flags |= GS_NODE_CATEGORICAL;
		return cat_split(c, id, id >= 0 && id < rt->num_nodes ? c->cat_idx[id] : -1,
						 &node->cat_set, st);
	}
	return GS_OK;
}

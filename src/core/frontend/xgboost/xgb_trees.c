/*
 * xgb_trees.c
 *	  Validation and layout of one XGBoost tree (xgb_load.c): the category
 *	  lists of its categorical splits, their bitsets, and the breadth-first
 *	  walk that checks child indices, reachability (no cycles, no shared
 *	  nodes), feature indices and finite values, and relabels the nodes into
 *	  the forest's node array.
 *
 * A tree arrives as a RawTree of borrowed, untrusted jansson arrays.  A tree
 * with vector leaves arrives once per target (RawTree.target) and is laid
 * out as the scalar tree of that target.  The
 * scratch arrays (queue, level, seen, cat_idx) and the output arrays (nodes,
 * cat_words) belong to the caller, build_forest in xgb_load.c, which sizes
 * them from a first walk that only counts.
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
 * Category set of categorical split node id of tree t (entry j of its
 * category lists, -1 if none).  Appends the set at *cat_pos: a header word
 * (number of bitset words) and the bitset of the listed categories, which
 * must be integers in [0, 2^24) (XGBoost's valid range).  With cat_words
 * NULL only counts.  *set receives the set's index.  hdr_flags go into the
 * header (GS_CAT_INVALID_DEFAULT for models of XGBoost before 1.7).
 */
static GsCode
cat_split(const RawTree *rt, int32_t t, int32_t id, int32_t j, uint32_t hdr_flags,
		  uint32_t *cat_words, int64_t *cat_pos, int64_t *set, GsStatus *st)
{
	int64_t		seg,
				size,
				maxc = -1;
	uint32_t	words;

	if (j < 0)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d node %d is a categorical split without categories", t, id);
	elem_int(rt->cat_segments, (size_t) j, &seg);
	elem_int(rt->cat_sizes, (size_t) j, &size);
	for (int64_t k = 0; k < size; k++)
	{
		int64_t		c;

		if (elem_int(rt->categories, (size_t) (seg + k), &c) || c < 0 ||
			c >= (int64_t) GS_CAT_MAX_WORDS * 32)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has a category that is not an integer in [0, 16777216)", t, id);
		if (c > maxc)
			maxc = c;
	}
	words = maxc < 0 ? 0 : (uint32_t) (maxc / 32 + 1);
	if (*cat_pos + 1 + (int64_t) words > GS_CAT_MAX_TOTAL_WORDS)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "the category sets of the model's categorical splits exceed the limit of %lld words",
							 (long long) GS_CAT_MAX_TOTAL_WORDS);
	*set = *cat_pos;
	if (cat_words)
	{
		uint32_t   *bits = cat_words + *cat_pos + 1;

		cat_words[*cat_pos] = words | hdr_flags;
		memset(bits, 0, sizeof(uint32_t) * words);
		for (int64_t k = 0; k < size; k++)
		{
			int64_t		c;

			elem_int(rt->categories, (size_t) (seg + k), &c);
			bits[c / 32] |= 1u << (c % 32);
		}
	}
	*cat_pos += 1 + (int64_t) words;
	return GS_OK;
}

/*
 * Walk tree t breadth-first from its root, checking child indices, that every
 * node is reached at most once (no cycles, no shared children), feature
 * indices and finite values.  When nodes is not NULL also writes the
 * relabelled nodes there.  queue and seen are scratch of num_nodes entries.
 * Returns the number of reachable nodes in *n_out and the depth in *depth.
 */
GsCode
gs_xgb_walk_tree(const RawTree *rt, int32_t t, int32_t n_features, int32_t max_depth,
				 int32_t *queue, int32_t *level, unsigned char *seen, GsNode *nodes,
				 int64_t *n_out, int32_t *depth, const int32_t *cat_idx,
				 uint32_t *cat_words, int64_t *cat_pos, int32_t *n_cat, GsStatus *st)
{
	int64_t		head = 0,
				tail = 0;
	int32_t		deepest = 0;

	memset(seen, 0, (size_t) rt->num_nodes);
	queue[tail] = 0;
	level[tail++] = 0;
	seen[0] = 1;
	while (head < tail)
	{
		int32_t		id = queue[head];
		int32_t		lv = level[head];
		int64_t		l,
					r,
					feat = 0,
					dl = 0,
					stype = 0;
		float		cond = 0.0f;

		if (elem_int(rt->left, (size_t) id, &l) || elem_int(rt->right, (size_t) id, &r))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has a non-integer child index", t, id);
		if (rt->split_type && (elem_int(rt->split_type, (size_t) id, &stype) || stype < 0 || stype > 1))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has an invalid split_type", t, id);
		if (l == -1 && rt->leaf_weights)
		{
			/* vector leaf: its values by leaf index (3.x) or by node (2.x) */
			int64_t		slot = rt->leaf_by_index ? r : id;

			if (slot < 0 || (!rt->leaf_by_index && r != -1) ||
				slot >= (int64_t) (json_array_size(rt->leaf_weights) / (size_t) rt->size_leaf_vector) ||
				elem_float(rt->leaf_weights, (size_t) (slot * rt->size_leaf_vector + rt->target), &cond) ||
				!isfinite(cond))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: tree %d node %d has no finite leaf vector",
									 t, id);
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
									 "invalid XGBoost model: tree %d node %d has a non-finite split condition or leaf value", t, id);
		}
		if (l == -1 && r == -1)
		{
			/* a dart weight can push a finite leaf past float (found by fuzzing) */
			if (!isfinite(cond * rt->weight))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: tree %d node %d has a leaf value that overflows when scaled by the tree's dart weight", t, id);
			if (nodes)
			{
				nodes[head].value = cond * rt->weight;
				nodes[head].info = GS_NODE_LEAF;
				nodes[head].left = 0;
			}
			if (lv > deepest)
				deepest = lv;
			head++;
			continue;
		}
		if (l < 0 || l >= rt->num_nodes || r < 0 || r >= rt->num_nodes)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has child index out of range (%lld, %lld; %lld nodes)",
								 t, id, (long long) l, (long long) r, (long long) rt->num_nodes);
		if (seen[l] || seen[r] || l == r)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d is not a tree (node %d links to an already reached node)", t, id);
		if (elem_int(rt->feature, (size_t) id, &feat) || feat < 0 || feat >= n_features)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d splits on feature %lld, but the model has %d features",
								 t, id, (long long) feat, n_features);
		if (elem_int(rt->default_left, (size_t) id, &dl))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has an invalid default_left", t, id);
		if (lv + 1 > max_depth)
			return gs_status_limit(st, GS_LIMIT_DEPTH, max_depth,
								   "tree %d is deeper than the limit of %d levels", t, max_depth);
		if (nodes)
		{
			nodes[head].value = cond;
			nodes[head].info = (uint32_t) feat | (dl ? GS_NODE_DEFAULT_LEFT : 0);
			nodes[head].left = (uint32_t) tail;
		}
		if (stype == 1)
		{
			int64_t		set = 0;
			GsCode		rc = cat_split(rt, t, id, cat_idx[id], rt->cat_flags,
									   nodes ? cat_words : NULL, cat_pos, &set, st);

			if (rc)
				return rc;
			(*n_cat)++;
			if (nodes)
			{
				uint32_t	set32 = (uint32_t) set;

				memcpy(&nodes[head].value, &set32, sizeof(set32));
				nodes[head].info |= GS_NODE_CATEGORICAL;
			}
		}
		seen[l] = seen[r] = 1;
		queue[tail] = (int32_t) l;
		level[tail++] = lv + 1;
		queue[tail] = (int32_t) r;
		level[tail++] = lv + 1;
		head++;
	}
	*n_out = tail;
	*depth = deepest;
	return GS_OK;
}

/* Covers of a walked tree; see xgb_internal.h. */
void
gs_xgb_tree_covers(const RawTree *rt, const int32_t *queue, int64_t n, double *cover)
{
	bool		ok = json_is_array(rt->sum_hess) &&
		(int64_t) json_array_size(rt->sum_hess) == rt->num_nodes;

	for (int64_t k = 0; k < n; k++)
	{
		json_t	   *v = ok ? json_array_get(rt->sum_hess, (size_t) queue[k]) : NULL;

		/*
		 * XGBoost keeps covers in float32; its JSON holds their shortest
		 * decimals, which read as doubles are near that float but not it.
		 * Rounded, JSON, UBJSON and binary files of a model give the same
		 * covers (and explanations) as the model XGBoost holds.
		 */
		cover[k] = json_is_number(v) ? (double) (float) json_number_value(v) : NAN;
	}
}

/*
 * lgbm_trees.c
 *	  LightGBM's trees through the forest builder (forest/forest_build.h):
 *	  each "Tree=" block parsed (lgbm_text.c), its nodes translated one at a
 *	  time as the builder walks them, its linear leaves laid out beside
 *	  (lgbm_linear.c), and the parsed tree freed before the next.
 *
 * A tree's items are numbered as LightGBM's arrays hold them: internal
 * node i as i, leaf j as num_leaves - 1 + j (a child index c < 0 in
 * left_child/right_child is leaf ~c), so its 2 * num_leaves - 1 items are
 * the builder's source ids and the root is item 0 (a one-leaf tree's root
 * is its leaf).  The builder checks child ids, reachability, features, NaN
 * thresholds, finite leaves and the caps; what is LightGBM's own
 * (decision_type, category set indices, every node reached) is checked
 * here.
 *
 * LightGBM's decisions map onto the forest's as follows (see
 * include/LightGBM/tree.h, NumericalDecision / CategoricalDecision):
 *	- numerical: x <= threshold goes left.  The threshold is a double and the
 *	  row's float is compared in double, so we store the float just above the
 *	  largest float <= threshold and compare with <; |x| <= 1e-35 counts as
 *	  0.0, as LightGBM's predictor drops it from the row (lgbm_threshold).
 *	  Missing type None: NaN
 *	  is taken as 0.0 (default direction = where 0.0 goes); type Zero: NaN and
 *	  |x| <= 1e-35 take the default direction (GS_NODE_ZERO_MISSING); type
 *	  NaN: NaN takes the default direction.
 *	- categorical: a code (truncated toward zero, so (-1, 0) is code 0) in
 *	  the node's bitset goes LEFT, anything else (NaN, negative, past the
 *	  bitset) right.  The forest's rule is the mirror image (in the set goes
 *	  right), so the node's children are given swapped and NaN defaults to
 *	  the (stored) left child.  Each categorical node gets its own copy of
 *	  its bitset, appended in the order the builder reaches the nodes.
 * Leaf values are doubles: the builder keeps each as a float and the float
 * nearest the rest (GS_BUILD_DOUBLE_LEAVES, GsForest.leaf_lo).
 *
 * Memory: the parsed tree (LTree) is the only memory of this file's own,
 * from the forest's allocator, freed after each tree and on every error;
 * what the builder lays out belongs to the forest.
 */
#include "lgbm_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LGBM_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/*
 * LightGBM's kZeroThreshold.  Its predictor leaves a value with |x| <= this
 * out of a dense row (as a sparse zero), so such a value reaches every tree
 * as 0.0, whatever the node's missing type.
 */
#define LGBM_ZERO_THRESHOLD 1e-35f

/* One tree being built (lgbm_tree_node's context). */
typedef struct LTreeCtx
{
	const LTree *t;
	int32_t		ti;				/* its number in the model */
	double		leaf_scale;		/* multiplies its leaf values */
	GsForestBuilder *b;			/* for its category sets */
} LTreeCtx;

/*
 * The float whose "x < value" equals LightGBM's decision "x <= t" for every
 * float x: the next float above the largest float <= t.  A threshold among
 * the values that count as 0.0 (|x| <= 1e-35) decides them all as it decides
 * 0.0: all left (x <= 1e-35 goes left) when 0 <= t, all right (only
 * x < -1e-35 goes left) when t < 0; LightGBM writes such thresholds
 * (+-1.0000000180025095e-35, kZeroThreshold itself) for splits at zero.
 */
static float
lgbm_threshold(double t)
{
	float		f = (float) t;

	if (t >= -(double) LGBM_ZERO_THRESHOLD && t < (double) LGBM_ZERO_THRESHOLD)
		return 0.0 <= t ? nextafterf(LGBM_ZERO_THRESHOLD, INFINITY) : -LGBM_ZERO_THRESHOLD;
	if ((double) f > t)
		f = nextafterf(f, -INFINITY);
	return nextafterf(f, INFINITY);
}

/*
 * The category set of categorical split item of the tree (its threshold
 * indexes the tree's cat_boundaries), copied from cat_threshold into a new
 * set of the forest (codes truncated toward zero: GS_CAT_TRUNC_NEGATIVE).
 */
static GsCode
cat_split(const LTreeCtx *c, int64_t item, uint32_t *set, GsStatus *st)
{
	const LTree *t = c->t;
	double		th = t->threshold[item];
	int64_t		ci,
				w0,
				nw;
	uint32_t   *bits;
	GsCode		rc;

	if (!(th >= 0.0 && th < (double) t->num_cat) || th != floor(th))
		return LGBM_ERR(st, "invalid LightGBM model: tree %d node %lld has category set index %g, but the tree has %lld",
						c->ti, (long long) item, th, (long long) t->num_cat);
	ci = (int64_t) th;
	w0 = t->cat_boundaries[ci];
	nw = t->cat_boundaries[ci + 1] - w0;
	rc = gs_build_cat_set(c->b, (uint32_t) nw, GS_CAT_TRUNC_NEGATIVE, set, &bits, st);
	if (rc != GS_OK)
		return rc;
	memcpy(bits, t->cat_threshold + w0, sizeof(uint32_t) * (size_t) nw);
	return GS_OK;
}

/*
 * Translate item id of a tree (ctx: its LTreeCtx) for the forest builder
 * (a GsBuildNodeFn): a leaf (its value times leaf_scale) or a split
 * (numerical, its threshold and missing rule; or categorical, its set and
 * children swapped), with its training-row count as cover when the tree
 * has counts.
 */
static GsCode
lgbm_tree_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st)
{
	const LTreeCtx *c = ctx;
	const LTree *t = c->t;
	int64_t		n_int = t->num_leaves - 1;
	int32_t		dt,
				missing;
	double		th;

	if (id >= n_int)
	{
		double		v = t->leaf_value[id - n_int] * c->leaf_scale;

		/* LightGBM's numbering of the leaf in the message */
		if (!isfinite(v) || !isfinite((float) v))
			return LGBM_ERR(st, "invalid LightGBM model: tree %d leaf %lld has a non-finite value",
							c->ti, (long long) (id - n_int));
		node->leaf = true;
		node->value = v;
		node->cover = t->leaf_count ? t->leaf_count[id - n_int] : NAN;
		return GS_OK;
	}
	dt = t->decision_type[id];
	missing = (dt >> 2) & 3;
	if (missing == 3 || (dt & ~15) != 0)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d node %lld has invalid decision_type %d",
						c->ti, (long long) id, dt);
	node->feature = t->split_feature[id];
	node->left = t->left[id] >= 0 ? t->left[id] : n_int + ~t->left[id];
	node->right = t->right[id] >= 0 ? t->right[id] : n_int + ~t->right[id];
	node->cover = t->internal_count ? t->internal_count[id] : NAN;
	if (dt & 1)
	{
		/* in the set goes to LightGBM's left: children swapped */
		int64_t		tmp = node->left;

		node->left = node->right;
		node->right = tmp;
		node->flags = GS_NODE_CATEGORICAL | GS_NODE_DEFAULT_LEFT;
		return cat_split(c, id, &node->cat_set, st);
	}

	/*
	 * LightGBM writes "inf" (or "-inf") when a split sends every present
	 * value one way and only missing ones the other; lgbm_threshold maps it
	 * to float +inf (-FLT_MAX), exact for every finite input, and inputs are
	 * never infinite (the glue rejects them).  A NaN threshold stays NaN,
	 * which the builder refuses.
	 */
	th = t->threshold[id];
	node->threshold = lgbm_threshold(th);
	if (missing == 0)
		node->flags = 0.0 <= th ? GS_NODE_DEFAULT_LEFT : 0;
	else
		node->flags = ((dt & 2) ? GS_NODE_DEFAULT_LEFT : 0) |
			(missing == 1 ? GS_NODE_ZERO_MISSING : 0);
	return GS_OK;
}

/*
 * Tree ti, whose block starts at p, through the builder b: parsed into *lt
 * (which the caller frees), built, every item checked reached, its leaf
 * models checked and, with ll, appended.  *linear is set when the tree is
 * linear.
 */
static GsCode
build_tree(GsForestBuilder *b, const char *p, int32_t ti, int32_t per_iter, double leaf_scale,
		   LTree *lt, LgbmLinear *ll, bool *linear, GsStatus *st)
{
	GsForest   *f = b->f;
	const GsLimits *lim = b->lim;
	int64_t		max_leaves = lim->max_nodes > 0 ? lim->max_nodes : INT32_MAX / 4;
	LTreeCtx	c = {lt, ti, leaf_scale, b};
	char		label[32];
	GsBuildTree bt = {label, ti % per_iter, 0, 0, lgbm_tree_node, &c};
	const int64_t *order;
	int64_t		n;
	GsCode		rc;

	if ((rc = gs_lgbm_parse_tree(&f->alloc, p, ti, max_leaves, lim->keep_covers, lt, st)) != GS_OK)
		return rc;
	snprintf(label, sizeof(label), "tree %d", ti);
	bt.n_ids = 2 * lt->num_leaves - 1;
	if ((rc = gs_build_tree(b, &bt, st)) != GS_OK)
		return rc;
	order = gs_build_order(b, &n);
	if (n != bt.n_ids)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has %lld nodes not reachable from its root",
						ti, (long long) (bt.n_ids - n));
	if (lt->leaf_const)
	{
		*linear = true;
		/* gs_lgbm_build_trees found its "is_linear=1" line: cannot happen */
		if (ll == NULL)
			return gs_status_set(st, GS_ERR_INTERNAL,
								 "LightGBM tree %d is linear, but no \"is_linear=1\" line was found", ti);
		if ((rc = gs_lgbm_linear_check(lt, ti, f->n_features, leaf_scale, st)) != GS_OK)
			return rc;
	}
	if (ll)
		return gs_lgbm_linear_append(&f->alloc, lt, leaf_scale, order, n, ll, st);
	return GS_OK;
}

/* Build every tree; see lgbm_internal.h. */
GsCode
gs_lgbm_build_trees(const char *const *tree_at, int32_t n_trees, int32_t per_iter,
					double leaf_scale, bool maybe_linear, const GsLimits *lim, GsForest *f,
					GsStatus *st)
{
	GsForestBuilder b;
	LgbmLinear	ll;
	LTree		lt;
	bool		any_linear = false;
	GsCode		rc;

	memset(&ll, 0, sizeof(ll));
	memset(&lt, 0, sizeof(lt));
	gs_build_begin(&b, f, lim, "invalid LightGBM model: ",
				   GS_BUILD_DOUBLE_LEAVES | (lim->keep_covers ? GS_BUILD_COVERS : 0));
	if ((rc = gs_build_reserve(&b, n_trees, 0, st)) != GS_OK)
		goto done;
	if (maybe_linear)
	{
		if ((f->linear = gs_linear_leaves_new(&f->alloc, 0, 0)) == NULL)
		{
			rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			goto done;
		}
		ll.lin = f->linear;
	}
	for (int32_t t = 0; t < n_trees; t++)
	{
		rc = build_tree(&b, tree_at[t], t, per_iter, leaf_scale, &lt, ll.lin ? &ll : NULL,
						&any_linear, st);
		gs_lgbm_ltree_free(&f->alloc, &lt);
		if (rc != GS_OK)
			goto done;
	}
	if ((rc = gs_build_finish(&b, st)) != GS_OK)
		goto done;
	if (ll.lin && any_linear)
		rc = gs_lgbm_linear_finish(&f->alloc, &ll, st);
	else if (ll.lin)
	{
		/* an "is_linear=1" line, but no tree kept it */
		gs_linear_leaves_free(&f->alloc, f->linear);
		f->linear = NULL;
	}

done:
	gs_build_end(&b);
	return rc;
}

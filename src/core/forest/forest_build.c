/*
 * forest_build.c
 *	  The one forest builder (see forest_build.h): the breadth-first walk
 *	  that checks and lays out every loader's trees, and the growth of the
 *	  forest's arrays.
 *
 * The forest's arrays (nodes, leaf_lo, cover, tree_offset/group/depth,
 * cat_words) grow by doubling from the forest's allocator and belong to
 * the forest from the first tree on, so a failed load frees them with the
 * forest.  The walk's scratch (order, level, stamp) belongs to the builder
 * and dies in gs_build_end.  "Reached" is a stamp per source id, renewed
 * per tree, so a format whose ids span the whole model (ONNX) costs no
 * clearing per tree.
 */
#include "forest_build.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Bytes of an array of n elements of size each, 0 when it would overflow. */
static size_t
array_bytes(int64_t n, size_t size)
{
	if (n < 0 || (uint64_t) n > SIZE_MAX / size)
		return 0;
	return (size_t) n * size;
}

/*
 * Grow *p (n_old elements of size bytes, from alloc) to n_new elements,
 * keeping its contents; the rest zeroed.  false when out of memory (*p
 * unchanged).
 */
static bool
grow(const GsAllocator *a, void **p, int64_t n_old, int64_t n_new, size_t size)
{
	size_t		bytes = array_bytes(n_new, size);
	void	   *q;

	if (bytes == 0)
		return false;
	q = a->alloc(a->ctx, bytes);
	if (q == NULL)
		return false;
	memset(q, 0, bytes);
	if (*p != NULL)
	{
		memcpy(q, *p, (size_t) (n_old < n_new ? n_old : n_new) * size);
		a->free(a->ctx, *p);
	}
	*p = q;
	return true;
}

static GsCode
nomem(GsStatus *st)
{
	return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
}

/* Start a build; see forest_build.h. */
void
gs_build_begin(GsForestBuilder *b, GsForest *f, const GsLimits *lim, const char *prefix,
			   uint32_t options)
{
	memset(b, 0, sizeof(*b));
	b->f = f;
	b->lim = lim ? lim : &gs_default_limits;
	b->prefix = prefix ? prefix : "";
	b->options = options;
}

/* Room for at least n_nodes nodes in all; false when out of memory. */
static bool
grow_nodes(GsForestBuilder *b, int64_t n_nodes)
{
	GsForest   *f = b->f;
	int64_t		cap = b->node_cap > 0 ? b->node_cap : 64;

	if (n_nodes <= b->node_cap)
		return true;
	while (cap < n_nodes)
		cap *= 2;
	/* the tree being walked lies past f->n_nodes: keep all that is there */
	if (!grow(&f->alloc, (void **) &f->nodes, b->node_cap, cap, sizeof(GsNode)))
		return false;
	if ((b->options & GS_BUILD_DOUBLE_LEAVES) &&
		!grow(&f->alloc, (void **) &f->leaf_lo, b->node_cap, cap, sizeof(float)))
		return false;
	if ((b->options & GS_BUILD_COVERS) &&
		!grow(&f->alloc, (void **) &f->cover, b->node_cap, cap, sizeof(double)))
		return false;
	b->node_cap = cap;
	return true;
}

/* Room for at least n_trees trees; false when out of memory. */
static bool
grow_trees(GsForestBuilder *b, int64_t n_trees)
{
	GsForest   *f = b->f;
	int64_t		cap = b->tree_cap > 0 ? b->tree_cap : 16;

	if (n_trees <= b->tree_cap)
		return true;
	while (cap < n_trees)
		cap *= 2;
	if (cap > INT32_MAX)
		cap = INT32_MAX;
	if (!grow(&f->alloc, (void **) &f->tree_offset, f->n_trees, cap, sizeof(uint32_t)) ||
		!grow(&f->alloc, (void **) &f->tree_group, f->n_trees, cap, sizeof(int32_t)) ||
		!grow(&f->alloc, (void **) &f->tree_depth, f->n_trees, cap, sizeof(int32_t)))
		return false;
	b->tree_cap = (int32_t) cap;
	return true;
}

/* Room to walk a tree of n_ids source ids; false when out of memory. */
static bool
grow_scratch(GsForestBuilder *b, int64_t n_ids)
{
	const GsAllocator *a = &b->f->alloc;

	if (n_ids > b->stamp_cap)
	{
		if (!grow(a, (void **) &b->stamp, 0, n_ids, sizeof(uint32_t)))
			return false;
		b->stamp_cap = n_ids;
		b->stamp_now = 0;
	}
	if (n_ids > b->order_cap)
	{
		if (!grow(a, (void **) &b->order, 0, n_ids, sizeof(int64_t)) ||
			!grow(a, (void **) &b->level, 0, n_ids, sizeof(int32_t)))
			return false;
		b->order_cap = n_ids;
	}
	/* a new stamp for this tree; all clear once the counter wraps */
	if (++b->stamp_now == 0)
	{
		memset(b->stamp, 0, sizeof(uint32_t) * (size_t) b->stamp_cap);
		b->stamp_now = 1;
	}
	return true;
}

/* Reserve room; see forest_build.h. */
GsCode
gs_build_reserve(GsForestBuilder *b, int64_t n_trees, int64_t n_nodes, GsStatus *st)
{
	if (n_trees > 0 && !grow_trees(b, b->f->n_trees + n_trees))
		return nomem(st);
	if (n_nodes > 0 && !grow_nodes(b, b->f->n_nodes + n_nodes))
		return nomem(st);
	return GS_OK;
}

/* Append a category set; see forest_build.h. */
GsCode
gs_build_cat_set(GsForestBuilder *b, uint32_t n_words, uint32_t flags, uint32_t *set,
				 uint32_t **bits, GsStatus *st)
{
	GsForest   *f = b->f;
	int64_t		need = f->n_cat_words + 1 + (int64_t) n_words;

	if (n_words > GS_CAT_MAX_WORDS || need > GS_BUILD_MAX_CAT_WORDS)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "the category sets of the model's categorical splits exceed the limit of %lld words",
							 (long long) GS_BUILD_MAX_CAT_WORDS);
	if (need > b->cat_cap)
	{
		int64_t		cap = b->cat_cap > 0 ? b->cat_cap : 64;

		while (cap < need)
			cap *= 2;
		if (!grow(&f->alloc, (void **) &f->cat_words, f->n_cat_words, cap, sizeof(uint32_t)))
			return nomem(st);
		b->cat_cap = cap;
	}
	*set = (uint32_t) f->n_cat_words;
	f->cat_words[f->n_cat_words] = n_words | flags;
	memset(f->cat_words + f->n_cat_words + 1, 0, sizeof(uint32_t) * n_words);
	*bits = f->cat_words + f->n_cat_words + 1;
	f->n_cat_words = need;
	return GS_OK;
}

/* GS_ERR_INVALID_MODEL: the builder's prefix, the tree's label, then fmt. */
static GsCode bad_tree(const GsForestBuilder *b, const GsBuildTree *t, GsStatus *st,
					   const char *fmt,...) __attribute__((format(printf, 4, 5)));

static GsCode
bad_tree(const GsForestBuilder *b, const GsBuildTree *t, GsStatus *st, const char *fmt,...)
{
	char		what[200];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return gs_status_set(st, GS_ERR_INVALID_MODEL, "%s%s %s", b->prefix, t->label, what);
}

/* Check a split node n (id) of tree t; GS_OK or the error. */
static GsCode
check_split(const GsForestBuilder *b, const GsBuildTree *t, int64_t id, const GsBuildNode *n,
			GsStatus *st)
{
	const GsForest *f = b->f;
	int64_t		n_features = (int64_t) f->n_features + f->n_derived;

	if (n->left < 0 || n->left >= t->n_ids || n->right < 0 || n->right >= t->n_ids)
		return bad_tree(b, t, st, "node %lld has a child index out of range (%lld, %lld; %lld nodes)",
						(long long) id, (long long) n->left, (long long) n->right,
						(long long) t->n_ids);
	if (n->feature < 0 || n->feature >= n_features || n->feature > (int64_t) GS_NODE_FEATURE_MASK)
		return bad_tree(b, t, st, "node %lld splits on feature %lld, but the model has %d features",
						(long long) id, (long long) n->feature, f->n_features);
	if ((n->flags & ~(GS_NODE_DEFAULT_LEFT | GS_NODE_ZERO_MISSING | GS_NODE_EQUAL |
					  GS_NODE_CATEGORICAL)) != 0 ||
		((n->flags & GS_NODE_CATEGORICAL) && (n->flags & GS_NODE_EQUAL)))
		return bad_tree(b, t, st, "node %lld has an impossible kind of split", (long long) id);
	if (n->flags & GS_NODE_CATEGORICAL)
	{
		if ((int64_t) n->cat_set >= f->n_cat_words)
			return bad_tree(b, t, st, "node %lld has a category set the model lacks", (long long) id);
	}
	else if (isnan(n->threshold))
		return bad_tree(b, t, st, "node %lld has a NaN threshold", (long long) id);
	return GS_OK;
}

/* Write leaf n at position at of the forest's nodes (see GsForest.leaf_lo). */
static GsCode
put_leaf(GsForestBuilder *b, const GsBuildTree *t, int64_t id, const GsBuildNode *n, int64_t at,
		 GsStatus *st)
{
	GsForest   *f = b->f;
	float		hi = (float) n->value;

	if (!isfinite(n->value) || !isfinite(hi))
		return bad_tree(b, t, st, "node %lld is a leaf whose value is not a finite float",
						(long long) id);
	f->nodes[at].value = hi;
	f->nodes[at].info = GS_NODE_LEAF;
	f->nodes[at].left = 0;
	if (b->options & GS_BUILD_DOUBLE_LEAVES)
		f->leaf_lo[at] = (float) (n->value - (double) hi);
	return GS_OK;
}

/* Build one tree; see forest_build.h. */
GsCode
gs_build_tree(GsForestBuilder *b, const GsBuildTree *t, GsStatus *st)
{
	GsForest   *f = b->f;
	const GsLimits *lim = b->lim;
	int32_t		max_depth = lim->max_depth > 0 ? lim->max_depth : INT32_MAX - 1;
	int64_t		max_nodes = lim->max_nodes > 0 ? lim->max_nodes : (int64_t) UINT32_MAX;
	int64_t		base = f->n_nodes,
				head = 0,
				tail = 1;
	int32_t		deepest = 0;
	GsCode		rc;

	b->order_n = 0;
	if ((f->n_trees & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)) != GS_OK)
		return rc;
	if (lim->max_trees > 0 && f->n_trees >= lim->max_trees)
		return gs_status_limit(st, GS_LIMIT_TREES, lim->max_trees,
							   "more than the limit of %d trees", lim->max_trees);
	if (f->n_trees >= INT32_MAX / 2)
		return gs_status_set(st, GS_ERR_LIMIT, "too many trees");
	if (t->n_ids < 1 || t->root < 0 || t->root >= t->n_ids)
		return bad_tree(b, t, st, "has no root node");
	if (t->group < 0 || t->group >= f->n_groups)
		return bad_tree(b, t, st, "adds to output %d of %d", t->group, f->n_groups);
	if (!grow_trees(b, (int64_t) f->n_trees + 1) || !grow_scratch(b, t->n_ids))
		return nomem(st);

	b->order[0] = t->root;
	b->level[0] = 0;
	b->stamp[t->root] = b->stamp_now;
	while (head < tail)
	{
		int64_t		id = b->order[head],
					at = base + head;
		int32_t		lv = b->level[head];
		GsBuildNode n;

		if (at + 1 > max_nodes || !grow_nodes(b, at + 1))
			goto too_big;
		memset(&n, 0, sizeof(n));
		n.cover = NAN;
		if ((rc = t->node(t->ctx, id, &n, st)) != GS_OK)
			return rc;
		if (b->options & GS_BUILD_COVERS)
			f->cover[at] = n.cover;
		if (n.leaf)
		{
			if ((rc = put_leaf(b, t, id, &n, at, st)) != GS_OK)
				return rc;
			if (lv > deepest)
				deepest = lv;
			head++;
			continue;
		}
		if ((rc = check_split(b, t, id, &n, st)) != GS_OK)
			return rc;
		if (b->stamp[n.left] == b->stamp_now || b->stamp[n.right] == b->stamp_now ||
			n.left == n.right)
			return bad_tree(b, t, st, "is not a tree: node %lld links to node %lld, which is already reached",
							(long long) id,
							(long long) (b->stamp[n.left] == b->stamp_now ? n.left : n.right));
		if (lv + 1 > max_depth)
			return gs_status_limit(st, GS_LIMIT_DEPTH, max_depth,
								   "%s is deeper than the limit of %d levels", t->label, max_depth);
		f->nodes[at].info = (uint32_t) n.feature | n.flags;
		f->nodes[at].left = (uint32_t) tail;
		if (n.flags & GS_NODE_CATEGORICAL)
			memcpy(&f->nodes[at].value, &n.cat_set, sizeof(n.cat_set));
		else
			f->nodes[at].value = n.threshold;
		if (b->options & GS_BUILD_DOUBLE_LEAVES)
			f->leaf_lo[at] = 0.0f;
		/* every id is reached once, so the queue never outgrows n_ids */
		b->stamp[n.left] = b->stamp[n.right] = b->stamp_now;
		b->order[tail] = n.left;
		b->level[tail++] = lv + 1;
		b->order[tail] = n.right;
		b->level[tail++] = lv + 1;
		head++;
	}
	f->tree_offset[f->n_trees] = (uint32_t) base;
	f->tree_group[f->n_trees] = t->group;
	f->tree_depth[f->n_trees] = deepest;
	f->n_trees++;
	f->n_nodes = base + tail;
	if (deepest > f->max_depth)
		f->max_depth = deepest;
	b->order_n = tail;
	return GS_OK;

too_big:
	if (base + head + 1 > max_nodes)
		return gs_status_limit(st, lim->max_nodes > 0 ? GS_LIMIT_NODES : GS_LIMIT_FIXED, max_nodes,
							   "more than the limit of %lld tree nodes", (long long) max_nodes);
	return nomem(st);
}

/* The last tree's source ids in layout order; see forest_build.h. */
const int64_t *
gs_build_order(const GsForestBuilder *b, int64_t *n)
{
	*n = b->order_n;
	return b->order;
}

/* Shrink *p from cap to n elements of size bytes; false when out of memory. */
static bool
trim(const GsAllocator *a, void **p, int64_t cap, int64_t n, size_t size)
{
	if (*p == NULL || n >= cap || n < 1)
		return true;
	return grow(a, p, n, n, size);
}

/* Finish a build; see forest_build.h. */
GsCode
gs_build_finish(GsForestBuilder *b, GsStatus *st)
{
	GsForest   *f = b->f;
	const GsAllocator *a = &f->alloc;

	if (f->n_trees < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "%sit has no trees", b->prefix);
	if (!trim(a, (void **) &f->nodes, b->node_cap, f->n_nodes, sizeof(GsNode)) ||
		!trim(a, (void **) &f->leaf_lo, b->node_cap, f->n_nodes, sizeof(float)) ||
		!trim(a, (void **) &f->cover, b->node_cap, f->n_nodes, sizeof(double)) ||
		!trim(a, (void **) &f->tree_offset, b->tree_cap, f->n_trees, sizeof(uint32_t)) ||
		!trim(a, (void **) &f->tree_group, b->tree_cap, f->n_trees, sizeof(int32_t)) ||
		!trim(a, (void **) &f->tree_depth, b->tree_cap, f->n_trees, sizeof(int32_t)) ||
		!trim(a, (void **) &f->cat_words, b->cat_cap, f->n_cat_words, sizeof(uint32_t)))
		return nomem(st);
	b->node_cap = f->n_nodes;
	b->tree_cap = f->n_trees;
	b->cat_cap = f->n_cat_words;
	f->split_kinds = 0;
	f->n_cat_splits = 0;
	for (int64_t i = 0; i < f->n_nodes; i++)
		if (!(f->nodes[i].info & GS_NODE_LEAF))
		{
			f->split_kinds |= f->nodes[i].info &
				(GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING | GS_NODE_EQUAL);
			if (f->nodes[i].info & GS_NODE_CATEGORICAL)
				f->n_cat_splits++;
		}
	gs_forest_check_covers(f);
	return GS_OK;
}

/* Release the scratch; see forest_build.h. */
void
gs_build_end(GsForestBuilder *b)
{
	const GsAllocator *a;

	if (b->f == NULL)
		return;
	a = &b->f->alloc;
	if (b->order)
		a->free(a->ctx, b->order);
	if (b->level)
		a->free(a->ctx, b->level);
	if (b->stamp)
		a->free(a->ctx, b->stamp);
	b->order = NULL;
	b->level = NULL;
	b->stamp = NULL;
}

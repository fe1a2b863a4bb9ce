/*
 * forest_qs.c
 *	  Building the leaf-bit-vector form of a forest (forest_qs.h).
 *
 * Each tree's leaves are numbered left to right by a walk from its root,
 * which gives every split the mask of its left subtree's leaves.  Then,
 * block by block of trees, the splits are counted into their features'
 * lists, placed, and each feature's numerical splits sorted by threshold.
 * Which list a split joins is decided by gs_node_goes_left itself (on NaN,
 * and on a representative of each category class), so the form takes
 * exactly the decisions of the node walk.  All memory comes from the
 * forest's allocator; the form belongs to the forest.
 */
#include "forest_qs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forest_eval.h"

/* Release a form; see forest_qs.h. */
void
gs_forest_qs_free(const GsAllocator *alloc, GsForestQs *q)
{
	if (q == NULL)
		return;
	if (q->blocks != NULL)
		for (int32_t b = 0; b < q->n_blocks; b++)
		{
			GsQsBlock  *k = &q->blocks[b];

			gs_release(alloc, k->num_start);
			gs_release(alloc, k->num);
			gs_release(alloc, k->nan_start);
			gs_release(alloc, k->nan);
			gs_release(alloc, k->cat_start);
			gs_release(alloc, k->cat);
		}
	gs_release(alloc, q->blocks);
	gs_release(alloc, q->n_codes);
	gs_release(alloc, q->code_base);
	gs_release(alloc, q->trunc_negative);
	gs_release(alloc, q->cat_feature);
	gs_release(alloc, q->leaf_start);
	gs_release(alloc, q->leaf);
	alloc->free(alloc->ctx, q);
}

/* Bytes of the form; see forest_qs.h. */
size_t
gs_forest_qs_bytes(const GsForest *f)
{
	return f->qs != NULL ? f->qs->bytes : 0;
}

/* Bits first .. first + n - 1 (n < 64). */
static inline uint64_t
bit_range(int first, int n)
{
	return (((uint64_t) 1 << n) - 1) << first;
}

/*
 * Number the leaves of the subtree of node i from first, left to right:
 * leaf_node[first + k] gets the k-th leaf's node index, left[i] (indexed
 * by node, relative to the tree) each split's left-subtree mask.  Returns
 * the subtree's leaves, or -1 when the tree has more than GS_QS_MAX_LEAVES.
 */
static int
number_leaves(const GsNode *tree, uint32_t i, int first, uint32_t *leaf_node,
			  uint64_t *left, uint32_t n_tree_nodes)
{
	int			nl,
				nr;

	if (i >= n_tree_nodes)
		return -1;
	if (tree[i].info & GS_NODE_LEAF)
	{
		if (first >= GS_QS_MAX_LEAVES)
			return -1;
		leaf_node[first] = i;
		return 1;
	}
	nl = number_leaves(tree, tree[i].left, first, leaf_node, left, n_tree_nodes);
	if (nl < 0)
		return -1;
	nr = number_leaves(tree, tree[i].left + 1, first + nl, leaf_node, left, n_tree_nodes);
	if (nr < 0)
		return -1;
	left[i] = bit_range(first, nl);
	return nl + nr;
}

/* Nodes of tree t: up to the next tree's first node (gs_forest_check: they tile the nodes). */
static uint32_t
tree_nodes(const GsForest *f, int32_t t)
{
	uint32_t	end = t + 1 < f->n_trees ? f->tree_offset[t + 1] : (uint32_t) f->n_nodes;

	return end - f->tree_offset[t];
}

/*
 * Whether f is a forest the form takes (see forest_qs.h), filling the
 * per-feature category facts of q (n_codes, trunc_negative, code_base,
 * n_classes).
 */
static bool
qs_fits(const GsForest *f, GsForestQs *q)
{
	int64_t		evaluations = 0;

	for (int64_t i = 0; i < f->n_nodes; i++)
	{
		GsNode		n = f->nodes[i];
		uint32_t	j = n.info & GS_NODE_FEATURE_MASK;
		uint32_t	hdr,
					codes;
		uint8_t		trunc;

		if ((n.info & GS_NODE_LEAF) || !(n.info & GS_NODE_CATEGORICAL))
			continue;
		hdr = f->cat_words[gs_float_bits(n.value)];
		if (hdr & GS_CAT_NEGATED)
			return false;
		if ((hdr & GS_CAT_WORDS_MASK) > GS_QS_MAX_CODES / 32)
			return false;
		codes = 32u * (hdr & GS_CAT_WORDS_MASK);
		trunc = (hdr & GS_CAT_TRUNC_NEGATIVE) ? 2 : 1;	/* 0: no set seen yet */
		if (q->trunc_negative[j] != 0 && q->trunc_negative[j] != trunc)
			return false;
		q->trunc_negative[j] = trunc;
		if (codes > q->n_codes[j])
			q->n_codes[j] = codes;
	}
	q->n_classes = 0;
	q->n_cat_features = 0;
	for (int32_t j = 0; j < f->n_features; j++)
	{
		bool		categorical = q->trunc_negative[j] != 0;

		q->trunc_negative[j] = q->trunc_negative[j] == 2;
		q->code_base[j] = q->n_classes;
		if (!categorical)
			continue;
		/* a feature whose every set is empty still has the outside class */
		q->cat_feature[q->n_cat_features++] = (uint32_t) j;
		q->n_classes += q->n_codes[j] + 1;
	}
	/* the classes are evaluated for every categorical split once a block */
	for (int64_t i = 0; i < f->n_nodes; i++)
		if (!(f->nodes[i].info & GS_NODE_LEAF) && (f->nodes[i].info & GS_NODE_CATEGORICAL))
			evaluations += q->n_codes[f->nodes[i].info & GS_NODE_FEATURE_MASK] + 1;
	return evaluations <= ((int64_t) 1 << 26);
}

/* Order numerical splits by threshold. */
static int
qs_num_cmp(const void *a, const void *b)
{
	float		x = ((const GsQsSplit *) a)->thr,
				y = ((const GsQsSplit *) b)->thr;

	return (x > y) - (x < y);
}

/* A representative value of class k of feature j (see forest_qs.h). */
static inline float
class_value(const GsForestQs *q, uint32_t j, uint32_t k)
{
	return k < q->n_codes[j] ? (float) k : -2.0f;
}

/*
 * Add split e to list at (cursor at[at]) of a pass of qs_block_pass: the
 * splits of one tree in one list are one entry, their left masks joined
 * (a row clears them all or none).
 */
static inline void
qs_add(GsQsSplit *list, uint32_t *at_of, uint32_t *last, uint32_t at, GsQsSplit e,
	   bool fill)
{
	if (last[at] == e.tree)
	{
		if (fill)
			list[at_of[at] - 1].left |= e.left;
		return;
	}
	last[at] = e.tree;
	if (fill)
		list[at_of[at]] = e;
	at_of[at]++;
}

/*
 * Count (fill false) or place (fill true) the splits of trees t0..t1 into
 * block k's lists; with fill, the starts hold the cursors, advanced.
 */
static void
qs_block_pass(const GsForest *f, const GsForestQs *q, int32_t t0, int32_t t1,
			  const uint64_t *left_of, uint32_t *num_at, GsQsSplit *num,
			  uint32_t *nan_at, GsQsSplit *nan, uint32_t *cat_at, GsQsSplit *cat,
			  uint32_t *last, bool fill)
{
	const uint32_t nf = (uint32_t) f->n_features;

	/* the tree last added to each NaN list (last[j]) and class list (last[nf + at]) */
	for (uint32_t i = 0; i < nf + q->n_classes; i++)
		last[i] = UINT32_MAX;
	for (int32_t t = t0; t < t1; t++)
	{
		const GsNode *tree = f->nodes + f->tree_offset[t];
		const uint64_t *left = left_of + f->tree_offset[t];
		uint32_t	n = tree_nodes(f, t);

		for (uint32_t i = 0; i < n; i++)
		{
			GsNode		s = tree[i];
			uint32_t	j = s.info & GS_NODE_FEATURE_MASK;
			GsQsSplit	e = {left[i], (uint32_t) (t - t0), 0.0f};

			if (s.info & GS_NODE_LEAF)
				continue;
			if (!gs_node_goes_left(s, NAN, f->cat_words))
				qs_add(nan, nan_at, last, j, e, fill);
			if (!(s.info & GS_NODE_CATEGORICAL))
			{
				if (fill)
				{
					num[num_at[j]] = e;
					num[num_at[j]].thr = s.value;
				}
				num_at[j]++;
				continue;
			}
			for (uint32_t c = 0; c <= q->n_codes[j]; c++)
				if (!gs_node_goes_left(s, class_value(q, j, c), f->cat_words))
					qs_add(cat, cat_at, last + nf, q->code_base[j] + c, e, fill);
		}
	}
}

/* Counts to starts: start[i] = sum of count[0..i), start[n] the total. */
static uint32_t
qs_starts(uint32_t *v, uint32_t n)
{
	uint32_t	sum = 0;

	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	c = v[i];

		v[i] = sum;
		sum += c;
	}
	v[n] = sum;
	return sum;
}

/* Build block k (trees t0..t1) of q; false when out of memory. */
static bool
qs_block_build(const GsForest *f, GsForestQs *q, GsQsBlock *k, int32_t t0, int32_t t1,
			   const uint64_t *left_of)
{
	const GsAllocator *a = &f->alloc;
	const uint32_t nf = (uint32_t) f->n_features;
	uint32_t   *num_at,
			   *nan_at,
			   *cat_at,
			   *last;
	uint32_t	n_num,
				n_nan,
				n_cat;
	bool		ok = false;

	k->first_tree = t0;
	k->n_trees = t1 - t0;
	k->num_start = gs_zalloc(a, sizeof(uint32_t) * (nf + 1), &q->bytes);
	k->nan_start = gs_zalloc(a, sizeof(uint32_t) * (nf + 1), &q->bytes);
	k->cat_start = gs_zalloc(a, sizeof(uint32_t) * (q->n_classes + 1), &q->bytes);
	num_at = gs_zalloc(a, sizeof(uint32_t) * (nf + 1), NULL);
	nan_at = gs_zalloc(a, sizeof(uint32_t) * (nf + 1), NULL);
	cat_at = gs_zalloc(a, sizeof(uint32_t) * (q->n_classes + 1), NULL);
	last = gs_zalloc(a, sizeof(uint32_t) * (nf + q->n_classes), NULL);
	if (k->num_start == NULL || k->nan_start == NULL || k->cat_start == NULL ||
		num_at == NULL || nan_at == NULL || cat_at == NULL || last == NULL)
		goto done;
	qs_block_pass(f, q, t0, t1, left_of, k->num_start, NULL, k->nan_start, NULL,
				  k->cat_start, NULL, last, false);
	n_num = qs_starts(k->num_start, nf);
	n_nan = qs_starts(k->nan_start, nf);
	n_cat = qs_starts(k->cat_start, q->n_classes);
	memcpy(num_at, k->num_start, sizeof(uint32_t) * (nf + 1));
	memcpy(nan_at, k->nan_start, sizeof(uint32_t) * (nf + 1));
	memcpy(cat_at, k->cat_start, sizeof(uint32_t) * (q->n_classes + 1));
	k->num = gs_zalloc(a, sizeof(GsQsSplit) * n_num, &q->bytes);
	k->nan = gs_zalloc(a, sizeof(GsQsSplit) * n_nan, &q->bytes);
	k->cat = gs_zalloc(a, sizeof(GsQsSplit) * n_cat, &q->bytes);
	if (k->num == NULL || k->nan == NULL || k->cat == NULL)
		goto done;
	qs_block_pass(f, q, t0, t1, left_of, num_at, k->num, nan_at, k->nan, cat_at, k->cat, last, true);
	for (uint32_t j = 0; j < nf; j++)
	{
		uint32_t	s = k->num_start[j],
					e = k->num_start[j + 1];

		qsort(k->num + s, e - s, sizeof(GsQsSplit), qs_num_cmp);
	}
	ok = true;
done:
	gs_release(a, num_at);
	gs_release(a, nan_at);
	gs_release(a, cat_at);
	gs_release(a, last);
	return ok;
}

/* Build the form; see forest_qs.h. */
GsCode
gs_forest_qs_build(GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	GsForestQs *q;
	uint64_t   *left_of = NULL;
	uint32_t	leaves = 0;

	if (f->qs != NULL || f->n_trees <= 0 || f->leaf_lo == NULL || f->linear != NULL ||
		f->bins != NULL || f->cb_ctrs != NULL || f->linear_w != NULL ||
		f->n_groups > GS_QS_MAX_GROUPS || f->n_features <= 0 ||
		(f->split_kinds & ~GS_NODE_CATEGORICAL) != 0 || gs_forest_symmetric(f))
		return GS_OK;
	q = gs_zalloc(a, sizeof(GsForestQs), NULL);
	if (q == NULL)
		goto nomem;
	q->bytes = sizeof(GsForestQs);
	q->n_codes = gs_zalloc(a, sizeof(uint32_t) * (size_t) f->n_features, &q->bytes);
	q->code_base = gs_zalloc(a, sizeof(uint32_t) * (size_t) f->n_features, &q->bytes);
	q->trunc_negative = gs_zalloc(a, (size_t) f->n_features, &q->bytes);
	q->cat_feature = gs_zalloc(a, sizeof(uint32_t) * (size_t) f->n_features, &q->bytes);
	q->leaf_start = gs_zalloc(a, sizeof(uint32_t) * ((size_t) f->n_trees + 1), &q->bytes);
	left_of = gs_zalloc(a, sizeof(uint64_t) * (size_t) f->n_nodes, NULL);
	q->leaf = gs_zalloc(a, sizeof(double) * GS_QS_MAX_LEAVES * (size_t) f->n_trees, &q->bytes);
	if (q->n_codes == NULL || q->code_base == NULL || q->trunc_negative == NULL ||
		q->cat_feature == NULL || q->leaf_start == NULL || left_of == NULL || q->leaf == NULL)
		goto nomem_free;
	if (!qs_fits(f, q))
		goto none;
	/* leaves left to right, and every split's left mask */
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		const GsNode *tree = f->nodes + f->tree_offset[t];
		const float *lo = f->leaf_lo + f->tree_offset[t];
		uint32_t	leaf_node[GS_QS_MAX_LEAVES];
		int			n = number_leaves(tree, 0, 0, leaf_node, left_of + f->tree_offset[t],
									  tree_nodes(f, t));

		if (n < 0)
			goto none;
		q->leaf_start[t] = leaves;
		for (int k = 0; k < n; k++)
			q->leaf[leaves + k] = gs_leaf_double(tree, lo, leaf_node[k]);
		leaves += (uint32_t) n;
	}
	q->leaf_start[f->n_trees] = leaves;
	q->n_blocks = (f->n_trees + GS_QS_BLOCK_TREES - 1) / GS_QS_BLOCK_TREES;
	q->blocks = gs_zalloc(a, sizeof(GsQsBlock) * (size_t) q->n_blocks, &q->bytes);
	if (q->blocks == NULL)
		goto nomem_free;
	for (int32_t b = 0; b < q->n_blocks; b++)
	{
		int32_t		t0 = b * GS_QS_BLOCK_TREES;
		int32_t		t1 = t0 + GS_QS_BLOCK_TREES < f->n_trees ? t0 + GS_QS_BLOCK_TREES : f->n_trees;

		if (!qs_block_build(f, q, &q->blocks[b], t0, t1, left_of))
			goto nomem_free;
		if (q->bytes > GS_QS_MAX_GROWTH * (size_t) f->n_nodes * sizeof(GsNode) + ((size_t) 1 << 20))
			goto none;			/* large category sets: walked from the nodes */
	}
	gs_release(a, left_of);
	f->qs = q;
	return GS_OK;

none:
	gs_release(a, left_of);
	gs_forest_qs_free(a, q);
	return GS_OK;
nomem_free:
	gs_release(a, left_of);
	gs_forest_qs_free(a, q);
nomem:
	return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing a model's leaf bit vectors");
}

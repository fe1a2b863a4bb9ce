/*
 * forest_complete.c
 *	  Building the complete-tree form of a forest (forest_complete.h).
 *
 * Each loaded tree is copied into its complete tree of the forest's depth
 * by a walk from the root: a split keeps its feature, threshold and
 * default direction at its heap position, a leaf fills the leaves of its
 * whole heap subtree with its value (the splits above them padding).  All
 * memory comes from the forest's allocator; the form belongs to the forest.
 */
#include "forest_complete.h"

#include <string.h>

/* Release a complete-tree form; see forest_complete.h. */
void
gs_forest_complete_free(const GsAllocator *alloc, GsForestComplete *c)
{
	if (c == NULL)
		return;
	if (c->feature)
		alloc->free(alloc->ctx, c->feature);
	if (c->threshold)
		alloc->free(alloc->ctx, c->threshold);
	if (c->leaf)
		alloc->free(alloc->ctx, c->leaf);
	alloc->free(alloc->ctx, c);
}

/* Bytes of the form; see forest_complete.h. */
size_t
gs_forest_complete_bytes(const GsForest *f)
{
	const GsForestComplete *c = f->complete;
	size_t		splits;

	if (c == NULL)
		return 0;
	splits = ((size_t) 1 << c->depth) - 1;
	return sizeof(GsForestComplete) +
		(size_t) f->n_trees * (splits * (sizeof(uint32_t) + sizeof(float)) +
							   (splits + 1) * sizeof(float));
}

/*
 * Copy the subtree of loaded node i of tree (nodes relative to the tree)
 * to heap position h at level k of a complete tree of depth d whose splits
 * are feature/threshold and leaves leaf.
 */
static void
complete_fill(const GsNode *tree, uint32_t i, uint32_t h, int k, int d,
			  uint32_t *feature, float *threshold, float *leaf)
{
	GsNode		n = tree[i];

	if (n.info & GS_NODE_LEAF)
	{
		/* its heap subtree: padding splits, then 2^(d - k) copies of it */
		uint32_t	first = ((h + 1) << (d - k)) - (1u << d);
		uint32_t	count = 1u << (d - k);

		for (int j = k; j < d; j++)
		{
			uint32_t	lo = ((h + 1) << (j - k)) - 1;

			for (uint32_t p = lo; p < lo + (1u << (j - k)); p++)
			{
				feature[p] = 0;
				threshold[p] = 0.0f;
			}
		}
		for (uint32_t p = first; p < first + count; p++)
			leaf[p] = n.value;
		return;
	}
	feature[h] = (n.info & GS_NODE_FEATURE_MASK) |
		((n.info & GS_NODE_DEFAULT_LEFT) ? 0u : GS_COMPLETE_NAN_RIGHT);
	threshold[h] = n.value;
	complete_fill(tree, n.left, 2 * h + 1, k + 1, d, feature, threshold, leaf);
	complete_fill(tree, n.left + 1, 2 * h + 2, k + 1, d, feature, threshold, leaf);
}

/* Build the complete-tree form; see forest_complete.h. */
GsCode
gs_forest_complete_build(GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	GsForestComplete *c;
	size_t		splits,
				bytes;
	int			d = f->max_depth;

	if (f->complete != NULL || f->n_trees <= 0 || f->split_kinds != 0 ||
		f->leaf_lo != NULL || f->linear != NULL || f->bins != NULL ||
		f->cb_ctrs != NULL || f->linear_w != NULL ||
		d < 1 || d > GS_COMPLETE_MAX_DEPTH)
		return GS_OK;
	splits = ((size_t) 1 << d) - 1;
	bytes = (size_t) f->n_trees * (splits * 8 + (splits + 1) * 4);
	if (bytes > GS_COMPLETE_MAX_GROWTH * (size_t) f->n_nodes * sizeof(GsNode) + ((size_t) 1 << 20))
		return GS_OK;			/* sparse deep trees: walked from their nodes */
	c = a->alloc(a->ctx, sizeof(GsForestComplete));
	if (c == NULL)
		goto nomem;
	memset(c, 0, sizeof(GsForestComplete));
	c->depth = d;
	c->feature = a->alloc(a->ctx, (size_t) f->n_trees * splits * sizeof(uint32_t));
	c->threshold = a->alloc(a->ctx, (size_t) f->n_trees * splits * sizeof(float));
	c->leaf = a->alloc(a->ctx, (size_t) f->n_trees * (splits + 1) * sizeof(float));
	if (c->feature == NULL || c->threshold == NULL || c->leaf == NULL)
	{
		gs_forest_complete_free(a, c);
		goto nomem;
	}
	for (int32_t t = 0; t < f->n_trees; t++)
		complete_fill(f->nodes + f->tree_offset[t], 0, 0, 0, d,
					  c->feature + (size_t) t * splits, c->threshold + (size_t) t * splits,
					  c->leaf + (size_t) t * (splits + 1));
	f->complete = c;
	return GS_OK;

nomem:
	return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing a model's complete trees");
}

/*
 * forest_qs.h
 *	  The leaf-bit-vector form (QuickScorer's) of a forest of small trees
 *	  with double leaves (LightGBM's) that the CPU engine scores without
 *	  walking a tree.
 *
 * A tree of at most 64 leaves numbers its leaves left to right; a row's
 * leaf is the leftmost one that none of the splits the row goes right at
 * rules out, where a split that sends the row right rules out the leaves
 * of its left subtree.  So a row starts every tree with all 64 bits set,
 * clears, at every split it goes right at, that split's left-subtree bits
 * (its "left" mask), and reaches the leaf of the lowest bit left (Lucchese
 * et al., QuickScorer, SIGIR 2015).  No tree is walked: the splits are
 * visited feature by feature, in sorted order of their thresholds, so that
 * the splits a value x goes right at (x >= t) are a prefix of its
 * feature's list, read sequentially, with one branch that mispredicts
 * once per feature.  The same leaves as gs_node_next, so the same sums.
 *
 * The form holds, for trees in blocks of at most GS_QS_BLOCK_TREES (a
 * block's bit vectors stay in the L1 cache), and per feature:
 * - the numerical splits sorted by threshold (threshold, tree within the
 *   block, left mask): x goes right at a prefix of them when x is not
 *   missing (thresholds are never NaN: gs_forest_check);
 * - the splits, numerical and categorical, that a missing value (NaN) goes
 *   right at (default direction right);
 * - for a feature with categorical splits, for each category code c below
 *   its n_codes (32 x the longest category set on it), the categorical
 *   splits that code c goes right at, and at index n_codes those that a
 *   value that is no valid code, or a code past every set, goes right at
 *   (gs_node_goes_left on a representative value of each class).
 * Leaves, per tree, in left-to-right order, as the doubles gs_leaf_double
 * gives.
 *
 * Derived from the nodes when a forest is loaded (gs_forest_qs_build:
 * frontend.c after gs_forest_check, forest_image.c), never in the image,
 * owned by the forest and freed with it.  Built only for forests with
 * double leaves (leaf_lo) that are not linear, binned, symmetric or
 * CatBoost's with derived features, with numerical and categorical splits
 * only (no zero-as-missing, no equality splits), trees of at most 64
 * leaves, at most GS_QS_MAX_GROUPS output groups, category sets that agree
 * per feature on the truncation of (-1, 0) and are not negated, at most
 * GS_QS_MAX_CODES codes per feature, and a form within GS_QS_MAX_GROWTH
 * times the nodes' bytes (plus 1 MiB).  Other forests have none and are
 * walked from their nodes, with the same results.
 */
#ifndef GS_FOREST_QS_H
#define GS_FOREST_QS_H

#include <stddef.h>
#include <stdint.h>

#include "forest.h"

#define GS_QS_MAX_LEAVES	64
#define GS_QS_BLOCK_TREES	128
#define GS_QS_MAX_GROUPS	16
#define GS_QS_MAX_CODES		4096
#define GS_QS_MAX_GROWTH	8

/* One split in a list: its tree within the block and its left mask. */
typedef struct GsQsSplit
{
	uint64_t	left;			/* bits of the leaves of its left subtree */
	uint32_t	tree;			/* tree index within its block */
	float		thr;			/* a numerical split's threshold (0 in the
								 * other lists) */
} GsQsSplit;

/*
 * The lists of one block of trees.  For feature j: numerical splits
 * num[num_start[j] .. num_start[j + 1]), by ascending threshold; NaN-right splits nan[nan_start[j] .. nan_start[j + 1]);
 * categorical lists, when n_codes[j] > 0: for class k <= n_codes[j],
 * cat[cat_start[code_base[j] + k] .. cat_start[code_base[j] + k + 1]).
 */
typedef struct GsQsBlock
{
	int32_t		first_tree;
	int32_t		n_trees;
	uint32_t   *num_start;		/* [n_features + 1] */
	GsQsSplit  *num;
	uint32_t   *nan_start;		/* [n_features + 1] */
	GsQsSplit  *nan;
	uint32_t   *cat_start;		/* [n_classes + 1] */
	GsQsSplit  *cat;
} GsQsBlock;

struct GsForestQs
{
	int32_t		n_blocks;
	GsQsBlock  *blocks;
	/* per feature, shared by the blocks */
	uint32_t   *n_codes;		/* [n_features]: 0 without categorical splits */
	uint32_t   *code_base;		/* [n_features] first class of the feature */
	uint8_t    *trunc_negative; /* [n_features]: (-1, 0) is category 0 */
	uint32_t	n_classes;		/* sum of n_codes[j] + 1 over categorical ones */
	uint32_t	n_cat_features; /* features with categorical splits */
	uint32_t   *cat_feature;	/* [n_cat_features] of them, ascending */
	/* leaf k of tree t: leaf[leaf_start[t] + k], left to right */
	uint32_t   *leaf_start;		/* [n_trees + 1] */
	double	   *leaf;
	size_t		bytes;			/* what all of the above occupies */
};

/*
 * Build f->qs when f fits (see above); leave it NULL otherwise.  Returns
 * GS_OK, or GS_ERR_NOMEM (st filled, f->qs NULL).
 */
extern GsCode gs_forest_qs_build(GsForest *f, GsStatus *st);

/* Release a form built from alloc; NULL is allowed. */
extern void gs_forest_qs_free(const GsAllocator *alloc, GsForestQs *q);

/* Bytes the form of f occupies (0 without). */
extern size_t gs_forest_qs_bytes(const GsForest *f);

#endif							/* GS_FOREST_QS_H */

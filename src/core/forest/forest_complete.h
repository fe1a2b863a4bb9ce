/*
 * forest_complete.h
 *	  The complete-tree form of a forest of plain numerical trees with float
 *	  leaves (XGBoost's, ONNX-ML's) that the CPU engine's vector path walks.
 *
 * Every tree is re-laid as a complete binary tree of the forest's depth D
 * (its deepest leaf), in heap order, in separate arrays: node h's children
 * are 2h + 1 and 2h + 2, so a row descends i = 2i + 1 + (went right) for
 * exactly D steps, with no leaf test and no child index to load, and ends at
 * leaf i - (2^D - 1).  A leaf of the loaded tree above depth D becomes a
 * split whose both subtrees hold its value in all their leaves (its
 * feature 0 and threshold 0: whichever way a row goes, it gets the same
 * value), so every row reaches the value it reaches in the loaded tree.
 *
 * A split's decision is gs_node_step_num's: right unless x < threshold,
 * NaN right unless the default is left.  Thresholds are never NaN
 * (gs_forest_check refuses them), so for x not NaN "right" is x >= t; the
 * default direction of NaN is bit GS_COMPLETE_NAN_RIGHT of the node's
 * feature word.
 *
 * Derived from the nodes when a forest is loaded (gs_forest_complete_build:
 * frontend.c after gs_forest_check, forest_image.c), never in the image,
 * owned by the forest (its allocator) and freed with it.  A forest that
 * does not fit (other split kinds, double leaves, too deep, or a layout
 * more than GS_COMPLETE_MAX_GROWTH times its nodes' size) has none and is
 * walked from its nodes, with the same results.
 */
#ifndef GS_FOREST_COMPLETE_H
#define GS_FOREST_COMPLETE_H

#include <stdint.h>

#include "forest.h"

#define GS_COMPLETE_MAX_DEPTH	12	/* D: 4,095 splits and 4,096 leaves a tree */
#define GS_COMPLETE_MAX_GROWTH	8	/* bytes of the layout per byte of nodes */
#define GS_COMPLETE_NAN_RIGHT	0x80000000u
#define GS_COMPLETE_FEATURE_MASK 0x7FFFFFFFu

struct GsForestComplete
{
	int32_t		depth;			/* D >= 1: every tree's */
	uint32_t   *feature;		/* [n_trees * (2^D - 1)] feature | NaN right */
	float	   *threshold;		/* [n_trees * (2^D - 1)] */
	float	   *leaf;			/* [n_trees * 2^D] */
};

/*
 * Build f->complete when f fits (see above); leave it NULL otherwise.
 * Returns GS_OK, or GS_ERR_NOMEM (st filled, f->complete NULL).
 */
extern GsCode gs_forest_complete_build(GsForest *f, GsStatus *st);

/* Release a complete-tree form built from alloc; NULL is allowed. */
extern void gs_forest_complete_free(const GsAllocator *alloc, GsForestComplete *c);

/* Bytes the complete-tree form of f occupies (0 without). */
extern size_t gs_forest_complete_bytes(const GsForest *f);

#endif							/* GS_FOREST_COMPLETE_H */

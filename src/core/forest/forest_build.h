/*
 * forest_build.h
 *	  The one forest builder every format's loader feeds: trees in, as nodes
 *	  the loader translates from its format one at a time, and out a forest's
 *	  trees laid out breadth-first and validated.
 *
 * A loader sets the forest's model-level fields (format, counts of features
 * and groups, transform, base margins, names), then for each tree calls
 * gs_build_tree with a function that translates one node of its format
 * (GsBuildNode) by the node's id in the tree's source.  The builder walks
 * each tree from its root breadth-first, asking for every reached node once
 * and in order, and checks what every format shares: child ids in range, no
 * node reached twice (no cycles, no shared children), features in range,
 * thresholds not NaN, leaves finite, the depth and size caps; it lays the
 * nodes out (a split's children adjacent, after it), splits double leaves
 * into value and leaf_lo, keeps covers, and appends category sets.  What
 * only one format has (its own decision types, vector leaves, dart weights,
 * a leaf's linear model) stays in the loader's translation.
 * gs_build_finish moves the trees into the forest; the frontend then runs
 * gs_forest_check (forest_image.h) on every loaded forest, the same check a
 * forest image passes.
 *
 * Memory: the builder grows the forest's own arrays (from the forest's
 * allocator, so gs_forest_free releases them whatever happens) and keeps
 * scratch of its own, released by gs_build_end, which the loader calls
 * once whether the build succeeded or not.
 */
#ifndef GS_FOREST_BUILD_H
#define GS_FOREST_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "forest.h"
#include "gs_status.h"

/* Options of a build (GsForestBuilder.options). */
#define GS_BUILD_DOUBLE_LEAVES	0x1u	/* leaves are doubles: fill leaf_lo */
#define GS_BUILD_COVERS			0x2u	/* keep each node's cover (f->cover) */

/* Most 32-bit words of category sets in one forest (64 MiB). */
#define GS_BUILD_MAX_CAT_WORDS	((int64_t) 1 << 24)

/*
 * One node as a loader translates it.  A split has leaf false, its two
 * children's ids in the tree's source (left: the child "x < threshold", not
 * in the category set, not equal), its feature and flags
 * (GS_NODE_DEFAULT_LEFT, GS_NODE_ZERO_MISSING, GS_NODE_EQUAL,
 * GS_NODE_CATEGORICAL) and either its threshold or, categorical, the set
 * gs_build_cat_set returned.  A leaf has leaf true and its value (a float
 * forest keeps the float nearest it).  cover: the node's cover, read only
 * with GS_BUILD_COVERS (NaN when the tree has none).
 */
typedef struct GsBuildNode
{
	bool		leaf;
	int64_t		left;
	int64_t		right;
	int64_t		feature;
	uint32_t	flags;
	float		threshold;
	uint32_t	cat_set;
	double		value;
	double		cover;
} GsBuildNode;

/*
 * Translate node id of a tree into *node (zeroed by the builder), or fail
 * with the loader's own message in st.  Called once for every node reached
 * from the root, in breadth-first order.
 */
typedef GsCode (*GsBuildNodeFn) (void *ctx, int64_t id, GsBuildNode *node, GsStatus *st);

/* One tree for gs_build_tree. */
typedef struct GsBuildTree
{
	const char *label;			/* the tree in messages, e.g. "tree 3" */
	int32_t		group;			/* output group its leaves add to */
	int64_t		n_ids;			/* its nodes' ids are in [0, n_ids) */
	int64_t		root;			/* id of its root */
	GsBuildNodeFn node;			/* translates one node */
	void	   *ctx;			/* passed to node */
} GsBuildTree;

typedef struct GsForestBuilder
{
	/* set by gs_build_begin */
	GsForest   *f;
	const GsLimits *lim;
	const char *prefix;			/* before every message: "invalid XGBoost model: " */
	uint32_t	options;
	/* capacities of the forest's arrays the builder grows */
	int64_t		node_cap;
	int32_t		tree_cap;
	int64_t		cat_cap;
	/* scratch: the tree being walked */
	int64_t    *order;			/* source ids in layout order */
	int32_t    *level;			/* their depths */
	int64_t		order_cap;
	int64_t		order_n;		/* nodes of the last tree built */
	uint32_t   *stamp;			/* [id] == stamp_now: reached in this tree */
	int64_t		stamp_cap;
	uint32_t	stamp_now;
} GsForestBuilder;

/*
 * Start building the trees of f, which has its allocator and n_features
 * (and n_derived) set and no trees yet.  prefix starts every message of
 * the builder ("" for none); options: GS_BUILD_*.  Never fails.
 */
extern void gs_build_begin(GsForestBuilder *b, GsForest *f, const GsLimits *lim,
						   const char *prefix, uint32_t options);

/*
 * Reserve room for n_trees more trees of n_nodes nodes in all, when the
 * loader knows (or bounds) them; saves growing.  GS_ERR_NOMEM or GS_OK.
 */
extern GsCode gs_build_reserve(GsForestBuilder *b, int64_t n_trees, int64_t n_nodes,
							   GsStatus *st);

/*
 * Append a category set of n_words bitset words (bit c of the set: bit
 * c % 32 of word c / 32) with header flags (GS_CAT_*) to the forest; *set
 * receives its index for GsBuildNode.cat_set and *bits where to write its
 * words, zeroed, valid until the next call into the builder.  GS_ERR_LIMIT
 * past GS_BUILD_MAX_CAT_WORDS words in all.
 */
extern GsCode gs_build_cat_set(GsForestBuilder *b, uint32_t n_words, uint32_t flags,
							   uint32_t *set, uint32_t **bits, GsStatus *st);

/*
 * Walk, check and lay out one tree (see the header comment).  Errors:
 * GS_ERR_INVALID_MODEL, GS_ERR_LIMIT (caps of trees, nodes and depth),
 * GS_ERR_NOMEM, GS_ERR_CANCELLED, or what the loader's node function
 * returned.  The forest keeps what was built before a failure, for
 * gs_forest_free.
 */
extern GsCode gs_build_tree(GsForestBuilder *b, const GsBuildTree *t, GsStatus *st);

/*
 * The source ids of the last tree's nodes in the order they were laid out
 * (*n of them): for what a loader keeps per node beside the forest's own
 * arrays (LightGBM's linear leaves).
 */
extern const int64_t *gs_build_order(const GsForestBuilder *b, int64_t *n);

/*
 * Finish: trim the forest's arrays to their size and set what follows from
 * the nodes (n_nodes, max_depth, split_kinds, n_cat_splits); drop covers
 * explanations could not use (gs_forest_check_covers).  GS_ERR_INVALID_MODEL
 * when no tree was built, GS_ERR_NOMEM.
 */
extern GsCode gs_build_finish(GsForestBuilder *b, GsStatus *st);

/* Release the builder's scratch (never the forest's arrays); always called. */
extern void gs_build_end(GsForestBuilder *b);

#endif							/* GS_FOREST_BUILD_H */

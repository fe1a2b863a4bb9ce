/*
 * lgbm_internal.h
 *	  What the parts of the LightGBM loader share: the parsed tree (LTree),
 *	  the text helpers of lgbm_text.c, the trees' build (lgbm_trees.c) and
 *	  the linear leaves growing beside it (lgbm_linear.c).  Not an API: only
 *	  the LightGBM loader's files (lgbm_*.c) include it.
 */
#ifndef GS_LGBM_INTERNAL_H
#define GS_LGBM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forest/forest.h"
#include "forest/forest_build.h"

/* One tree's arrays as parsed, not yet trusted beyond their lengths. */
typedef struct LTree
{
	int64_t		num_leaves;
	int64_t		num_cat;
	int32_t    *split_feature;	/* [num_leaves - 1] */
	double	   *threshold;
	int32_t    *decision_type;
	int32_t    *left;
	int32_t    *right;
	double	   *leaf_value;		/* [num_leaves] */
	int32_t    *cat_boundaries; /* [num_cat + 1] */
	uint32_t   *cat_threshold;	/* [cat_boundaries[num_cat]] */
	int64_t		n_cat_threshold;
	/* training rows per node, when asked for and readable; else NULL */
	double	   *internal_count; /* [num_leaves - 1] */
	double	   *leaf_count;		/* [num_leaves] */
	/* a linear tree's leaf models (is_linear=1), else NULL and 0 */
	double	   *leaf_const;		/* [num_leaves] */
	int32_t    *term_start;		/* [num_leaves + 1]: leaf j's terms are
								 * term_start[j] .. term_start[j + 1] - 1 */
	int32_t    *leaf_features;	/* [n_terms], not yet checked against the
								 * model's features */
	double	   *leaf_coeff;		/* [n_terms] */
	int64_t		n_terms;
} LTree;

/* Zeroed memory (at least 1 byte) from allocator a; NULL when out of memory. */
extern void *gs_lgbm_lalloc(const GsAllocator *a, size_t size);

/* Free the arrays of a parsed tree and zero it. */
extern void gs_lgbm_ltree_free(const GsAllocator *a, LTree *t);

/* Start of the line after p, or NULL at the end of the text. */
extern const char *gs_lgbm_next_line(const char *p);

/* Whether the line at p is "key=..."; sets *val to the value. */
extern int	gs_lgbm_line_key(const char *p, const char *key, const char **val);

/* Whether the line at p is exactly word (a trailing '\r' allowed). */
extern int	gs_lgbm_line_is(const char *p, const char *word);
extern int	gs_lgbm_trees_end(const char *p);

/* p past blanks (not line ends). */
extern const char *gs_lgbm_skip_blanks(const char *p);

/* Parse a decimal integer on the current line, advancing *pp; 0 on success. */
extern int	gs_lgbm_parse_int(const char **pp, int64_t *out);

/* Whether only blanks remain on the line. */
extern int	gs_lgbm_at_line_end(const char *p);

/*
 * Parse the tree block whose first line is p (just after "Tree=N") into t:
 * counts, array lengths and value ranges that do not depend on other trees,
 * and a linear tree's leaf models (leaf_const ... leaf_coeff).  With counts, also
 * internal_count and leaf_count, left NULL when absent or unreadable (they
 * only serve explanations).  On error t may hold
 * arrays; the caller frees them with gs_lgbm_ltree_free either way.
 */
extern GsCode gs_lgbm_parse_tree(const GsAllocator *a, const char *p, int32_t ti,
								 int64_t max_leaves, bool counts, LTree *t, GsStatus *st);

/*
 * The linear leaves of a forest being built (GsForest.linear, indexed like
 * its nodes), grown tree by tree as the builder lays the trees out.  lin
 * is the forest's own (gs_forest_free releases it, whatever happens);
 * lin->n_terms counts the terms written so far.
 */
typedef struct LgbmLinear
{
	GsLinearLeaves *lin;
	int64_t		n_nodes;		/* nodes written */
	int64_t		node_cap;		/* room for nodes (start has one more) */
	int64_t		term_cap;		/* room for terms */
} LgbmLinear;

/*
 * Check the leaf models of parsed linear tree t, number ti: features below
 * n_features, constants and coefficients finite once multiplied by
 * leaf_scale.
 */
extern GsCode gs_lgbm_linear_check(const LTree *t, int32_t ti, int32_t n_features,
								   double leaf_scale, GsStatus *st);

/*
 * Append the linear leaves of parsed tree t, whose n nodes the builder has
 * just laid out: items[i] is node i's item as the loader numbers them
 * (internal node i as i, leaf j as num_leaves - 1 + j; gs_build_order).  A
 * tree that is not linear gets its scaled leaf values as constants and no
 * terms.  Grows ll's arrays from a; GS_ERR_NOMEM, GS_ERR_LIMIT (terms past
 * UINT32_MAX - 1) or GS_OK.
 */
extern GsCode gs_lgbm_linear_append(const GsAllocator *a, const LTree *t, double leaf_scale,
									const int64_t *items, int64_t n, LgbmLinear *ll,
									GsStatus *st);

/*
 * Close ll once every tree is appended: the end of the last node's terms,
 * and the arrays trimmed to their size.  GS_ERR_NOMEM or GS_OK.
 */
extern GsCode gs_lgbm_linear_finish(const GsAllocator *a, LgbmLinear *ll, GsStatus *st);

/*
 * Build the n_trees trees whose blocks start at tree_at[t] (the line after
 * "Tree=t") into f, whose model-level fields (n_features, n_groups) are
 * set: each tree parsed, translated for the forest builder, laid out and
 * freed in turn (lgbm_trees.c).  Tree t adds to group t % per_iter; leaf
 * values (and linear models) are multiplied by leaf_scale.  maybe_linear:
 * some tree may be linear (an "is_linear=1" line), so the forest's linear
 * leaves are grown beside its nodes, and dropped when no tree was.
 */
extern GsCode gs_lgbm_build_trees(const char *const *tree_at, int32_t n_trees, int32_t per_iter,
								  double leaf_scale, bool maybe_linear, const GsLimits *lim,
								  GsForest *f, GsStatus *st);

/*
 * Read the "pandas_categorical" line of the model text into f->cat_names
 * (lgbm_cats.c); GS_OK leaving it NULL when there are no names to keep
 * (f->cat_note says why when there was a line).
 */
extern GsCode gs_lgbm_read_cats(const char *text, GsForest *f, GsStatus *st);

#endif							/* GS_LGBM_INTERNAL_H */

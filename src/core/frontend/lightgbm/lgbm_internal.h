/*
 * lgbm_internal.h
 *	  What the two halves of the LightGBM loader share: the parsed tree
 *	  (LTree) and the text helpers of lgbm_text.c used by lgbm_load.c.
 *	  Not an API: only the LightGBM loader's files (lgbm_*.c) include it.
 */
#ifndef GS_LGBM_INTERNAL_H
#define GS_LGBM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forest/forest.h"

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
 * With lin NULL (the loader's first pass), check the leaf models of parsed
 * tree t, number ti (features below n_features, constants and coefficients
 * finite once multiplied by leaf_scale); otherwise (the second pass, on the
 * same text) write them for the tree's n nodes,
 * which start at node off of the forest: items[i] is node i's item as
 * walk_ltree numbers them (internal nodes, then leaves from num_leaves - 1
 * on); *pos is the forest's next term and advances.  A tree that is not
 * linear gets its scaled leaf values as constants.
 */
extern GsCode gs_lgbm_linear_leaves(const LTree *t, int32_t ti, int32_t n_features,
									double leaf_scale, const int32_t *items, int64_t n,
									GsLinearLeaves *lin, int64_t off, int64_t *pos,
									GsStatus *st);

/*
 * Read the "pandas_categorical" line of the model text into f->cat_names
 * (lgbm_cats.c); GS_OK leaving it NULL when there are no names to keep
 * (f->cat_note says why when there was a line).
 */
extern GsCode gs_lgbm_read_cats(const char *text, GsForest *f, GsStatus *st);

#endif							/* GS_LGBM_INTERNAL_H */

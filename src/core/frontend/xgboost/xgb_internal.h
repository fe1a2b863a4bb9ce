/*
 * xgb_internal.h
 *	  What the files of the XGBoost loader share: the per-tree view
 *	  of the document (RawTree), the value helpers of xgb_json.c, the
 *	  tree walk of xgb_trees.c and the learner readers of xgb_learner.c,
 *	  used by xgb_load.c.
 *	  Not an API: only the XGBoost loader's files (xgb_*.c) include it.
 */
#ifndef GS_XGB_INTERNAL_H
#define GS_XGB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "forest/forest.h"
#include "forest/forest_build.h"
#include "gs_status.h"

/* Per-tree arrays as found in the model, not yet trusted. */
typedef struct RawTree
{
	int64_t		num_nodes;
	json_t	   *left;
	json_t	   *right;
	json_t	   *feature;
	json_t	   *cond;
	json_t	   *default_left;
	json_t	   *split_type;		/* NULL: all numerical */
	json_t	   *categories;
	json_t	   *cat_nodes;
	json_t	   *cat_segments;
	json_t	   *cat_sizes;
	json_t	   *sum_hess;		/* "sum_hessian" (node covers), or NULL */
	float		weight;			/* dart tree weight, 1 otherwise */
	uint32_t	cat_flags;		/* header flags of its category sets */
	int32_t		src;			/* index of the tree in the model (messages) */
	/*
	 * A tree with vector leaves (multi_strategy="multi_output_tree") becomes
	 * one scalar tree per target; this copy takes value `target` of each
	 * leaf's vector.  XGBoost 3.x writes the vectors in "leaf_weights"
	 * (size_leaf_vector values per leaf, a leaf's right_children entry is its
	 * leaf index: leaf_by_index), 2.x in "base_weights" (size_leaf_vector
	 * values per node, leaves have no children).  NULL for an ordinary tree.
	 */
	json_t	   *leaf_weights;
	bool		leaf_by_index;
	int64_t		size_leaf_vector;
	int32_t		target;
} RawTree;

/* xgb_json.c */

/* Member of an object, or NULL when obj is not an object. */
extern json_t *gs_xgb_member(json_t *obj, const char *key);

/*
 * Read an integer that XGBoost writes either as a number or as a decimal
 * string ("30").  Returns 0 on success.
 */
extern int	gs_xgb_json_to_int64(json_t *v, int64_t *out);

/*
 * Read base_score: a number, a string with one number ("5E-1", "[5E-1]"),
 * or (XGBoost 3.1 and later) a bracketed list of one value per output
 * group ("[1E-1,2E-1,7E-1]"), or a JSON array of numbers.  Writes the
 * values to out[0..*n) and returns 0 when there is one value or exactly
 * n_groups of them.
 */
extern int	gs_xgb_parse_base_score(json_t *v, float *out, int n_groups, int *n);

/* Fetch a required array member of tree t with exactly n elements. */
extern GsCode gs_xgb_tree_array(json_t *tree, const char *key, int64_t n,
								int32_t t, json_t **out, GsStatus *st);

/* Element i of an array of numbers as int64; returns 0 on success. */
static inline int
elem_int(json_t *arr, size_t i, int64_t *out)
{
	json_t	   *v = json_array_get(arr, i);

	if (json_is_integer(v))
	{
		*out = (int64_t) json_integer_value(v);
		return 0;
	}
	if (json_is_boolean(v))
	{
		*out = json_is_true(v) ? 1 : 0;
		return 0;
	}
	return gs_xgb_json_to_int64(v, out);
}

/* Element i of an array of numbers as float; returns 0 on success. */
static inline int
elem_float(json_t *arr, size_t i, float *out)
{
	json_t	   *v = json_array_get(arr, i);

	if (!json_is_number(v))
		return -1;
	*out = (float) json_number_value(v);
	return 0;
}

/* xgb_trees.c */

/*
 * Map the nodes of tree t to their entry in the tree's category lists:
 * cat_idx[node] = j when categories_nodes[j] == node, -1 otherwise.
 * Checks that the four category arrays agree in length, that listed nodes
 * exist and are listed once, and that every segment lies inside
 * "categories".  cat_idx is scratch of num_nodes entries.
 */
extern GsCode gs_xgb_tree_cat_index(const RawTree *rt, int32_t t,
									int32_t *cat_idx, GsStatus *st);

/* One tree being built (gs_xgb_tree_node's context). */
typedef struct XgbTreeCtx
{
	const RawTree *rt;
	const int32_t *cat_idx;		/* gs_xgb_tree_cat_index of the tree */
	GsForestBuilder *b;			/* for its category sets */
	bool		covers;			/* read each node's cover ("sum_hessian") */
} XgbTreeCtx;

/*
 * Translate node id of the tree of ctx (an XgbTreeCtx) for the forest
 * builder (a GsBuildNodeFn); the builder checks the rest.
 */
extern GsCode gs_xgb_tree_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st);

/* xgb_learner.c */

/*
 * Early stopping: for a model saved by XGBoost's scikit-learn API with a
 * "best_iteration" attribute, cut *num_trees to the trees of the rounds up
 * to it (as its predict_proba scores) and say so in f->load_note.
 */
extern GsCode gs_xgb_best_iteration_trees(json_t *learner, json_t *model, GsForest *f,
										  int64_t *num_trees, GsStatus *st);

/* The scikit-learn API's saved `missing` (1.x) into f->missing_value. */
extern GsCode gs_xgb_sklearn_missing(json_t *learner, GsForest *f, GsStatus *st);

/*
 * A linear booster's "weights" into f->linear_w: (n_features + 1) x
 * n_groups finite floats; f->n_features and f->n_groups must be set.
 */
extern GsCode gs_xgb_linear_weights(json_t *weights, const GsLimits *lim, GsForest *f,
									GsStatus *st);

/* xgb_cats.c */

/*
 * Read the category names of the tree model object `model` ("cats", XGBoost
 * 3.1 and later) into f->cat_names; GS_OK leaving it NULL when the model
 * has none.  f->n_features must be set.
 */
extern GsCode gs_xgb_read_cats(json_t *model, GsForest *f, GsStatus *st);

#endif							/* GS_XGB_INTERNAL_H */

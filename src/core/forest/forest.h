/*
 * forest.h
 *	  The validated, flat tree ensemble ("forest") every loader builds and
 *	  every engine scores.
 *
 * A GsForest is built once by a format's loader (frontend/<format>/, reached
 * through frontend/frontend.h, the only dispatch), validated there, and is
 * immutable afterwards: engines trust it.  Nodes of every tree are stored in
 * one array in breadth-first order, so a node's two children are adjacent
 * (right = left + 1) and always come after their parent; traversal therefore
 * terminates by construction.  All memory of a forest comes from the
 * GsAllocator given to the loader and is released by gs_forest_free().
 */
#ifndef GS_FOREST_H
#define GS_FOREST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_status.h"

/* Node flags, packed with the feature index into GsNode.info. */
#define GS_NODE_LEAF			0x80000000u
#define GS_NODE_DEFAULT_LEFT	0x40000000u
#define GS_NODE_CATEGORICAL		0x20000000u
#define GS_NODE_ZERO_MISSING	0x10000000u
#define GS_NODE_EQUAL			0x08000000u	/* ONNX-ML BRANCH_EQ / BRANCH_NEQ */
#define GS_NODE_FEATURE_MASK	0x07FFFFFFu

/*
 * Header word of a category set in GsForest.cat_words: the number of bitset
 * words that follow (at most GS_CAT_MAX_WORDS), plus GS_CAT_TRUNC_NEGATIVE
 * when values in (-1, 0) count as category 0 (LightGBM truncates toward
 * zero; XGBoost treats every negative value as no category), plus
 * GS_CAT_INVALID_DEFAULT for models of XGBoost before 1.7, plus
 * GS_CAT_NEGATED for a set of non-positive categories, which holds their
 * negations and is tested with the value negated (a OneHotEncoder's
 * negative integer category in an ONNX pipeline: truncation toward zero
 * commutes with negation, so category -2 still takes (-3, -2]).
 */
#define GS_CAT_TRUNC_NEGATIVE	0x80000000u
#define GS_CAT_INVALID_DEFAULT	0x40000000u	/* XGBoost < 1.7: invalid codes and
											 * codes past the set take the
											 * default direction */
#define GS_CAT_NEGATED			0x20000000u
#define GS_CAT_WORDS_MASK		0x1FFFFFFFu
#define GS_CAT_MAX_WORDS		(1u << 19)	/* categories < 2^24 */

/*
 * One tree node, 12 bytes.  For a numerical split: go left when
 * x[feature] < value, right otherwise.  For a categorical split
 * (GS_NODE_CATEGORICAL): value holds, as its bit pattern, the index in
 * cat_words of the node's category set; go right when x[feature] is a valid
 * category code (truncated to an integer) in the set, left otherwise,
 * exactly XGBoost's rule (LightGBM trees are stored with their children
 * swapped to fit it).  For an equality split (GS_NODE_EQUAL, ONNX-ML's
 * BRANCH_EQ / BRANCH_NEQ): go right when x[feature] == value, left
 * otherwise.  A missing value (NaN; with GS_NODE_ZERO_MISSING also
 * |x| <= 1e-35, LightGBM's zero-as-missing) follows GS_NODE_DEFAULT_LEFT.
 * For a leaf: value is the leaf's contribution to its output group.  left is
 * the index of the left child relative to the tree's first node.
 */
typedef struct GsNode
{
	float		value;
	uint32_t	info;
	uint32_t	left;
} GsNode;

/* How raw tree sums (margins) become outputs. */
typedef enum GsTransform
{
	GS_TRANSFORM_IDENTITY,		/* regression, logitraw, rank:* */
	GS_TRANSFORM_SIGMOID,		/* binary:logistic, reg:logistic */
	GS_TRANSFORM_EXP,			/* count:poisson, reg:gamma, reg:tweedie */
	GS_TRANSFORM_HINGE,			/* binary:hinge: 1 if margin > 0 else 0 */
	GS_TRANSFORM_SOFTMAX,		/* multi:softprob: probabilities */
	GS_TRANSFORM_ARGMAX,		/* multi:softmax: index of the best class */
	/* onnxruntime's post-transforms of ONNX-ML tree ensembles (ml_common.h) */
	GS_TRANSFORM_ORT_LOGISTIC,	/* LOGISTIC, per output */
	GS_TRANSFORM_ORT_SOFTMAX,	/* SOFTMAX: float sum */
	GS_TRANSFORM_ORT_SOFTMAX_ZERO,	/* SOFTMAX_ZERO: zeros stay zero */
	/* new transforms go last: forest images store the number */
	GS_TRANSFORM_SOFTPLUS,		/* LightGBM cross_entropy_lambda: log(1 + e^m) */
	GS_TRANSFORM_SIGNED_SQUARE,	/* LightGBM reg_sqrt: sign(m) * m^2 */
	GS_TRANSFORM_ISOLATION		/* scikit-learn's IsolationForest (through
								 * skl2onnx): param[1] - 2^(-m / param[0]),
								 * m the sum of the trees' path lengths */
} GsTransform;

#define GS_TRANSFORM_LAST GS_TRANSFORM_ISOLATION

typedef enum GsModelFormat
{
	GS_FORMAT_AUTO = 0,
	GS_FORMAT_XGBOOST_JSON,
	GS_FORMAT_XGBOOST_UBJ,
	GS_FORMAT_ONNX,				/* feed-forward network or ONNX-ML tree
								 * ensemble (onnx_load.h) */
	GS_FORMAT_ONNX_AUTOENCODER,	/* the same, scored by reconstruction error */
	GS_FORMAT_LIGHTGBM,			/* LightGBM text model (lgbm_load.c) */
	GS_FORMAT_XGBOOST_BINARY,	/* XGBoost's legacy binary format (xgb_binary.c) */
	GS_FORMAT_CATBOOST_JSON		/* CatBoost's JSON model (catboost_load.c) */
} GsModelFormat;

#define GS_FORMAT_LAST GS_FORMAT_CATBOOST_JSON

/* Resource caps, checked before allocating. 0 means "no cap". */
typedef struct GsLimits
{
	size_t		max_model_bytes;
	int32_t		max_trees;
	int64_t		max_nodes;		/* summed over all trees */
	int32_t		max_depth;		/* edges from root to deepest leaf */
	int32_t		max_features;
	int32_t		max_layers;		/* dense layers of a network */
	int64_t		max_parameters;	/* weights + biases of a network */
	GsInterrupt interrupt;		/* polled while loading; not a cap, but it
								 * goes wherever the caps go */
	bool		keep_covers;	/* fill GsForest.cover where the model has
								 * covers (for explanations; 8 bytes a node) */
} GsLimits;

/* Category names of categorical features (cat_names.h). */
typedef struct GsCatNames GsCatNames;

/* The categorical features of a CatBoost model (catboost_ctr.h). */
typedef struct GsCbCtrs GsCbCtrs;

/* The quantized form of a forest of symmetric trees (forest_bins.h). */
typedef struct GsForestBins GsForestBins;

/* The complete-tree form of a forest of plain numerical trees (forest_complete.h). */
typedef struct GsForestComplete GsForestComplete;

/* The leaf-bit-vector form of a forest of small trees (forest_qs.h). */
typedef struct GsForestQs GsForestQs;

/*
 * The linear models in the leaves of LightGBM's linear trees
 * (linear_tree=true), indexed like GsForest.nodes.  Leaf i's output is
 * constant[i] + sum of coef[k] * x[feature[k]] over k in
 * [start[i], start[i + 1]), summed in double in that order, as LightGBM's
 * Tree::Predict does; a value within 1e-35 of zero counts as 0 (LightGBM's
 * predictor drops it from the row), and when any of the leaf's features is
 * NaN the leaf's plain value (the node's, with leaf_lo) is its output
 * instead.  Split nodes have constant 0 and no terms.  A tree of the model
 * saved without is_linear has its leaf values as constants and no terms.
 */
typedef struct GsLinearLeaves
{
	double	   *constant;		/* [n_nodes] */
	uint32_t   *start;			/* [n_nodes + 1], start[0] = 0 */
	int32_t    *feature;		/* [n_terms] */
	double	   *coef;			/* [n_terms] */
	int64_t		n_terms;
} GsLinearLeaves;

typedef struct GsForest
{
	GsModelFormat format;
	char		objective[64];	/* as written in the model, e.g. binary:logistic */
	char		booster[16];	/* gbtree or dart */
	char		saved_by[32];	/* "xgboost 1.7.4" when the model says */
	/*
	 * What the loader decided that a user should hear about ("" when
	 * nothing): set by a load, not kept in the forest's image.
	 */
	char		load_note[192];
	/* the same about category names (cat_names.h): why some are not kept */
	char		cat_note[256];
	/*
	 * A value that stands for a missing one besides NaN: the `missing` of
	 * XGBoost's scikit-learn API (XGBClassifier(missing=-999)), whose
	 * predict takes x == missing_value as missing.  The scorers' callers
	 * turn such values into NaN (gs_forest_mark_missing) before scoring.
	 */
	bool		has_missing_value;
	float		missing_value;
	int32_t		n_cat_splits;	/* categorical split nodes */
	uint32_t	split_kinds;	/* GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING |
								 * GS_NODE_EQUAL of any split node; 0: plain
								 * numerical splits, scored by the faster
								 * gs_node_step_num */
	GsTransform transform;
	float		transform_param[2];	/* GS_TRANSFORM_ISOLATION's; 0 otherwise */
	int32_t		n_features;
	int32_t		n_groups;		/* margins per row (classes or targets) */
	int32_t		n_outputs;		/* outputs per row after transform */
	int32_t		n_trees;
	int32_t		max_depth;		/* deepest leaf over all trees */
	int64_t		n_nodes;
	float	   *base_margin;	/* [n_groups] added before the trees */
	uint32_t   *tree_offset;	/* [n_trees] first node of each tree in nodes */
	int32_t    *tree_group;		/* [n_trees] output group of each tree */
	int32_t    *tree_depth;		/* [n_trees] depth of each tree (0: a lone leaf) */
	GsNode	   *nodes;			/* [n_nodes] */
	/*
	 * [n_nodes] or NULL.  NULL (XGBoost, ONNX-ML): a leaf's value is
	 * nodes[i].value and a row's margins are float sums, in tree order, as
	 * XGBoost and onnxruntime add them.  Set (LightGBM and CatBoost, which
	 * keep leaves in double and sum doubles): leaf i is the double
	 * nodes[i].value + leaf_lo[i] (the float nearest the library's double,
	 * then the float nearest what is left; about 48 bits), and margins are
	 * double sums in tree order, rounded to float once at the end.  0 for
	 * split nodes.
	 */
	float	   *leaf_lo;
	/*
	 * [n_nodes] or NULL: each node's cover, what the library recorded of
	 * the training rows that reached it (XGBoost's "sum_hessian", LightGBM's
	 * internal_count / leaf_count, CatBoost's leaf weights summed up the
	 * tree), in the order of nodes.  Only explanations use it
	 * (forest_shap.h); engines never read it, and the forest image does not
	 * keep it.  Filled only when the loader is asked (GsLimits.keep_covers);
	 * a CatBoost forest loaded so keeps its bias as the base margin, not in
	 * its first trees' leaves.  NULL when not asked, when the model has none
	 * or they are unusable (gs_forest_check_covers).
	 */
	double	   *cover;
	uint32_t   *cat_words;		/* [n_cat_words] category sets of the
								 * categorical splits (header word + bitset;
								 * bit c of a set is bit c % 32 of word
								 * c / 32); NULL when there are none */
	int64_t		n_cat_words;
	char	  **feature_names;	/* [n_features] or NULL when the model has none */
	GsCatNames *cat_names;		/* category names of categorical features,
								 * or NULL when the model keeps none */
	/*
	 * Only from gs_xgb_load_any, for XGBoost's linear booster (gblinear): its
	 * [(n_features + 1) * n_groups] weights, weight of feature i for group
	 * g at i * n_groups + g, the biases last; the forest has no trees and is
	 * not a model to score: xgb_linear.h makes it a network.  NULL otherwise.
	 */
	float	   *linear_w;
	/*
	 * Only from the LightGBM loader (or an image of its forest), for a model
	 * with linear trees (always with leaf_lo): the leaves' linear models.
	 * Only the CPU engine scores such a forest.  NULL otherwise.
	 */
	GsLinearLeaves *linear;
	/*
	 * The bins the CPU engine scores a symmetric forest with
	 * (forest_bins.h), derived from the nodes when the forest is loaded
	 * (not with keep_covers) or read from its image; not in the image.
	 * NULL for other forests and for symmetric ones that do not fit.
	 */
	GsForestBins *bins;
	/*
	 * The complete trees the CPU engine's vector path walks a forest of
	 * plain numerical trees with float leaves in (forest_complete.h),
	 * derived from the nodes when the forest is loaded (not with
	 * keep_covers) or read from its image; not in the image.  NULL for
	 * other forests and for those that do not fit.
	 */
	GsForestComplete *complete;
	/*
	 * The leaf bit vectors the CPU engine scores a forest of trees of at
	 * most 64 leaves with double leaves by (forest_qs.h: LightGBM's),
	 * derived from the nodes like complete; not in the image.  NULL for
	 * other forests and for those that do not fit.
	 */
	GsForestQs *qs;
	/*
	 * Only from the CatBoost loader, for a model with categorical features:
	 * how the n_derived features after the n_features input columns
	 * (one-hot indicators and CTRs) are computed from a row
	 * (gs_cb_ctrs_expand).  Split nodes read features up to n_features +
	 * n_derived; gs_model_predict expands each batch first.  Only the CPU
	 * engine scores such a forest, and it has no image.  NULL and 0
	 * otherwise.
	 */
	GsCbCtrs   *cb_ctrs;
	int32_t		n_derived;
	GsAllocator alloc;			/* the allocator everything above came from */
} GsForest;

/*
 * Keep f->cover only when every value is finite and not negative and every
 * split node's cover is positive (or, in a CatBoost tree, 0 below the
 * root) and, within 1e-3 of it, the sum of its children's (they split its
 * rows); otherwise free it and set it to NULL.
 * Inconsistent covers would make the explanations' fractions exceed 1 and
 * their arithmetic meaningless.
 */
extern void gs_forest_check_covers(GsForest *f);

/* Default caps used when the caller has none. */
extern const GsLimits gs_default_limits;

/* Release a forest and everything it owns; NULL is allowed. */
extern void gs_forest_free(GsForest *f);

/*
 * Zeroed linear leaves (GsForest.linear) for n_nodes nodes and n_terms
 * terms, from alloc; NULL when out of memory (nothing left allocated).
 * gs_forest_free releases them with gs_linear_leaves_free.
 */
extern GsLinearLeaves *gs_linear_leaves_new(const GsAllocator *alloc, int64_t n_nodes,
											int64_t n_terms);
extern void gs_linear_leaves_free(const GsAllocator *alloc, GsLinearLeaves *lin);

/*
 * Turn the values of a column-major batch (x[j * ld + r], n_rows rows; one
 * row-major row is ld = n_rows = 1) that equal f->missing_value into NaN,
 * when the forest has one (has_missing_value); a no-op otherwise.
 */
extern void gs_forest_mark_missing(const GsForest *f, float *x, size_t ld, size_t n_rows);

/*
 * Whether every tree of f is symmetric (CatBoost's oblivious trees, what
 * gs_catboost_load builds for booster "symmetric"): a complete tree of its
 * depth d in breadth-first order whose nodes of each level share one split
 * (feature, threshold, default direction), so that a row's leaf is
 * 2^d - 1 + sum of (went right at level k) << (d - 1 - k), with numerical
 * splits only and double leaves.  gs_forest_check refuses a forest that
 * claims it falsely; the CPU engine then finds leaves level by level.
 */
extern bool gs_forest_symmetric(const GsForest *f);

/* Bytes a forest occupies in memory (for reporting and device uploads). */
extern size_t gs_forest_memory_bytes(const GsForest *f);

#endif							/* GS_FOREST_H */

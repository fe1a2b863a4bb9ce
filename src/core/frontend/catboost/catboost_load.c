/*
 * catboost_load.c
 *	  CatBoost models saved as JSON (model.save_model("model.json",
 *	  format="json")) to a validated forest.
 *
 * A CatBoost model over numerical features is a sum of trees: symmetric
 * ("oblivious_trees", the default grow policy) or not ("trees", grow_policy
 * Depthwise or Lossguide).  A split sends a row right when
 * x[feature] > border (as float32), and a NaN where its feature's
 * nan_value_treatment says: right for "AsTrue" (nan_mode Max), left
 * otherwise.  A symmetric tree of depth d applies its splits[i] at every
 * node of one level and reads leaf_values[leaf * dim + class], leaf being
 * the sum of (went right) << i; it is laid out here as the complete binary
 * tree of its splits, splits[d - 1] at the root.  A tree with dim outputs
 * becomes dim trees, one per output group, in CatBoost's order.  The model's
 * raw value is scale * (sum of the leaves) + bias[class] in double
 * (scale_and_bias), kept here in the double leaves (GsForest.leaf_lo): each
 * leaf is scale * value, and the first tree of each group carries the bias.
 * The loss function (model_info.params.loss_function.type) names the
 * output transform, as CatBoost's predict applies it; a model without one
 * (catboost.sum_models writes none) gives raw values, objective "none".
 *
 * Categorical features (catboost_ctr.c) become derived features after the
 * input columns: a OneHotFeature split reads the indicator of its value, an
 * OnlineCtr split (found by its split_index) the CTR's value, both with
 * x > border as for numbers.  Models with text or embedding features
 * (CatBoost's estimated features) are refused.
 *
 * The trees go into the forest through the forest builder
 * (forest/forest_build.h), which walks, checks and lays them out: this file
 * reads each CatBoost tree once (cb_sym_read, cb_nonsym_read: what only
 * CatBoost's JSON can get wrong) and translates its nodes by id for each
 * output group (cb_sym_node: the complete tree of a symmetric tree's
 * splits; cb_nonsym_node: a non-symmetric tree's nodes numbered
 * breadth-first), then fills the splits' covers from their children's.
 *
 * Memory: the forest (and what hangs off it) is from the caller's
 * allocator and freed with it on failure; CbModel's arrays and the flat
 * form of a non-symmetric tree are scratch, freed before returning.
 */
#include "catboost_read.h"
#include "cat_names.h"
#include "forest/forest.h"
#include "forest/forest_build.h"
#include "forest/forest_bins.h"
#include "util/utf8_valid.h"
#include "catboost.h"
#include "frontend/common/json_decode.h"
#include "frontend/common/load_checks.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CB_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* Deepest tree read: 2^(depth + 1) nodes must stay countable (CatBoost stops at 16). */
#define CB_MAX_DEPTH 30

/* One float feature of the model. */
typedef struct CbFeature
{
	int32_t		flat;			/* input column (flat_feature_index) */
	bool		nan_right;		/* nan_value_treatment AsTrue */
} CbFeature;

/* What the whole model says, read before its trees. */
typedef struct CbModel
{
	CbFeature  *feat;			/* [n_float] */
	int32_t		n_float;
	int32_t		n_features;		/* input columns: largest flat index + 1 */
	int32_t		dim;			/* outputs of each tree */
	double		scale;
	double	   *bias;			/* [dim] */
	json_t	   *trees;			/* oblivious_trees or trees */
	bool		oblivious;
	double		max_abs_bias;
	GsTransform tf;
	const char *loss;
	GsCbCtrs   *ctrs;			/* categorical features, or NULL */
} CbModel;

/* The output group of a tree being built and what is added to its leaves. */
typedef struct CbGroup
{
	int32_t		g;
	double		add;
} CbGroup;

/* One split as cb_split reads it: left when x < thr, NaN right or left. */
typedef struct CbSplit
{
	int32_t		feat;
	float		thr;
	bool		nan_right;
} CbSplit;

/* A symmetric tree being built (cb_sym_node's context). */
typedef struct CbSymTree
{
	const CbModel *cm;
	json_t	   *leaves;			/* leaf_values */
	json_t	   *weights;		/* leaf_weights, or NULL */
	const CbSplit *level;		/* [depth]: the split of each level, root first */
	int64_t		n_leaves;
	CbGroup		out;			/* the group being built */
} CbSymTree;

/* A node of a non-symmetric tree numbered breadth-first (cb_nonsym_read). */
typedef struct CbFlatNode
{
	json_t	   *obj;			/* its object in the document */
	int64_t		left;			/* a split's left child (right: left + 1); -1 for a leaf */
	CbSplit		split;
} CbFlatNode;

/* A non-symmetric tree being built (cb_nonsym_node's context). */
typedef struct CbNonsymTree
{
	const CbModel *cm;
	const CbFlatNode *flat;		/* its nodes */
	CbGroup		out;			/* the group being built */
} CbNonsymTree;

/* The build of a model's trees (cb_build_forest). */
typedef struct CbBuild
{
	const CbModel *cm;
	GsForestBuilder b;
	int32_t		max_depth;		/* levels of a tree at most */
	int64_t		cap_nodes;		/* nodes of the model at most */
	bool		keep_covers;	/* the load is for explanations */
	CbFlatNode *flat;			/* scratch of non-symmetric trees, flat_cap nodes */
	int64_t		flat_cap;
} CbBuild;

/* Zeroed memory (at least 1 byte) from allocator a. */
static void *
cb_alloc(const GsAllocator *a, size_t size)
{
	void	   *p = a->alloc(a->ctx, size > 0 ? size : 1);

	if (p)
		memset(p, 0, size > 0 ? size : 1);
	return p;
}

/*
 * An integer member of obj in [lo, hi] (the document's numbers are all
 * reals, see gs_json_decode); 0 on success.
 */
static int
cb_int(json_t *obj, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	json_t	   *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	double		d;

	if (gs_cb_json_double(v, &d) || !(d >= (double) lo && d <= (double) hi) || d != floor(d))
		return -1;
	*out = (int64_t) d;
	return 0;
}

/* A finite number (integer or real); 0 on success. */
static int
cb_number(json_t *v, double *out)
{
	return gs_cb_json_double(v, out) == 0 && isfinite(*out) ? 0 : -1;
}

/* Read features_info into cm: GS_OK or the error. */
static GsCode
cb_read_features(json_t *root, const GsLimits *lim, const GsAllocator *a, CbModel *cm,
				 GsStatus *st)
{
	static const char *const other[] = {"text_features", "embedding_features"};
	json_t	   *info = json_object_get(root, "features_info"),
			   *ff = json_object_get(info, "float_features");
	int64_t		cap = lim->max_features > 0 ? lim->max_features : INT32_MAX - 1;
	unsigned char *seen;

	/*
	 * CatBoost leaves float_features out of a model with no numeric
	 * feature (every feature categorical), and loads such a file itself
	 */
	if (!json_is_object(info) || (ff != NULL && !json_is_array(ff)))
		return CB_ERR(st, "invalid CatBoost model: no features_info object with a float_features array");
	for (int k = 0; k < 2; k++)
	{
		json_t	   *o = json_object_get(info, other[k]);

		if (o && (!json_is_array(o) || json_array_size(o) > 0))
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "CatBoost models with %s are not supported",
						  k == 0 ? "text features" : "embedding features");
			gs_status_detail(st, "CatBoost turns such features into estimated features computed by "
							 "models of their own, which pg_gpuscore does not evaluate.");
			return st->code;
		}
	}
	if (json_array_size(ff) > (size_t) cap)
		return gs_status_limit(st, GS_LIMIT_FEATURES, cap, "the model has %zu features, more than the limit of %lld",
							 json_array_size(ff), (long long) cap);
	cm->n_float = (int32_t) json_array_size(ff);
	cm->feat = cb_alloc(a, sizeof(CbFeature) * (size_t) cm->n_float);
	if (!cm->feat)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	cm->n_features = 0;
	for (int32_t i = 0; i < cm->n_float; i++)
	{
		json_t	   *f = json_array_get(ff, i);
		json_t	   *nan = json_object_get(f, "nan_value_treatment");
		int64_t		idx,
					flat;
		const char *t = json_is_string(nan) ? json_string_value(nan) : NULL;

		if (cb_int(f, "feature_index", i, i, &idx) ||
			cb_int(f, "flat_feature_index", 0, cap - 1, &flat))
			return CB_ERR(st, "invalid CatBoost model: float feature %d has an invalid feature_index or flat_feature_index", i);
		if (nan && (!t || (strcmp(t, "AsIs") != 0 && strcmp(t, "AsFalse") != 0 && strcmp(t, "AsTrue") != 0)))
			return CB_ERR(st, "invalid CatBoost model: float feature %d has an unknown nan_value_treatment", i);
		cm->feat[i].flat = (int32_t) flat;
		cm->feat[i].nan_right = t && strcmp(t, "AsTrue") == 0;
		if (flat + 1 > cm->n_features)
			cm->n_features = (int32_t) flat + 1;
	}
	if (cm->n_float == 0 &&
		json_array_size(json_object_get(info, "categorical_features")) == 0)
		return CB_ERR(st, "invalid CatBoost model: it has no features");
	/* flat indices are distinct */
	seen = cb_alloc(a, (size_t) cm->n_features);
	if (!seen)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t i = 0; i < cm->n_float; i++)
	{
		if (seen[cm->feat[i].flat])
		{
			a->free(a->ctx, seen);
			return CB_ERR(st, "invalid CatBoost model: two float features read column %d", cm->feat[i].flat);
		}
		seen[cm->feat[i].flat] = 1;
	}
	a->free(a->ctx, seen);
	return GS_OK;
}

/* [scale, [bias per output]] (CatBoost 0.20 - 0.2x: [scale, bias]) into cm. */
static GsCode
cb_read_scale_and_bias(json_t *sb, const GsAllocator *a, CbModel *cm, GsStatus *st)
{
	json_t	   *bias = json_array_get(sb, 1);

	if (!json_is_array(sb) || json_array_size(sb) != 2 ||
		cb_number(json_array_get(sb, 0), &cm->scale) ||
		!(json_is_array(bias) ? json_array_size(bias) >= 1 && json_array_size(bias) <= 100000 :
		  json_is_number(bias)))
		return CB_ERR(st, "invalid CatBoost model: scale_and_bias is not [scale, [bias, ...]]");
	cm->dim = json_is_array(bias) ? (int32_t) json_array_size(bias) : 1;
	cm->bias = cb_alloc(a, sizeof(double) * (size_t) cm->dim);
	if (!cm->bias)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t g = 0; g < cm->dim; g++)
		if (cb_number(json_is_array(bias) ? json_array_get(bias, g) : bias, &cm->bias[g]))
			return CB_ERR(st, "invalid CatBoost model: a bias in scale_and_bias is not a finite number");
		else if (fabs(cm->bias[g]) > cm->max_abs_bias)
			cm->max_abs_bias = fabs(cm->bias[g]);
	if (cm->max_abs_bias > FLT_MAX)
		return CB_ERR(st, "invalid CatBoost model: a bias in scale_and_bias is beyond float's range");
	return GS_OK;
}

/*
 * A model written before scale_and_bias (CatBoost before 0.20), which
 * CatBoost reads as scale 1 and a bias of 0 for each output: as many
 * outputs as the first tree's leaves hold values (those releases wrote
 * symmetric trees only).
 */
static GsCode
cb_no_scale_and_bias(const GsAllocator *a, CbModel *cm, GsStatus *st)
{
	json_t	   *t0 = json_array_get(cm->trees, 0);
	size_t		n_splits = json_array_size(json_object_get(t0, "splits")),
				n_values = json_array_size(json_object_get(t0, "leaf_values"));

	if (!cm->oblivious || n_splits > 16 || n_values == 0 ||
		n_values % ((size_t) 1 << n_splits) != 0 || n_values >> n_splits > 100000)
		return CB_ERR(st, "invalid CatBoost model: no scale_and_bias, and its first tree does not say how many outputs it has");
	cm->scale = 1.0;
	cm->dim = (int32_t) (n_values >> n_splits);
	cm->bias = cb_alloc(a, sizeof(double) * (size_t) cm->dim);
	if (!cm->bias)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t g = 0; g < cm->dim; g++)
		cm->bias[g] = 0.0;
	cm->max_abs_bias = 0.0;
	return GS_OK;
}

/* Read the loss, scale_and_bias and the tree array into cm: GS_OK or the error. */
static GsCode
cb_read_model(json_t *root, const GsAllocator *a, CbModel *cm, GsStatus *st)
{
	json_t	   *params = json_object_get(json_object_get(root, "model_info"), "params");
	json_t	   *loss = json_object_get(json_object_get(params, "loss_function"), "type");
	json_t	   *sb = json_object_get(root, "scale_and_bias"),
			   *ob = json_object_get(root, "oblivious_trees"),
			   *nt = json_object_get(root, "trees");
	GsCode		rc;

	/*
	 * A model made by catboost.sum_models names no loss function: CatBoost's
	 * predict gives its raw values, and so do we ("none"; the SQL glue
	 * says so at load)
	 */
	if (loss != NULL && !json_is_string(loss))
		return CB_ERR(st, "invalid CatBoost model: model_info.params.loss_function.type is not a string");
	cm->loss = loss ? json_string_value(loss) : "none";
	if ((ob != NULL) == (nt != NULL) || !json_is_array(ob ? ob : nt))
		return CB_ERR(st, "invalid CatBoost model: it needs one array of trees, oblivious_trees or trees");
	cm->oblivious = ob != NULL;
	cm->trees = ob ? ob : nt;
	if (json_array_size(cm->trees) == 0)
		return CB_ERR(st, "invalid CatBoost model: it has no trees");

	if ((rc = sb ? cb_read_scale_and_bias(sb, a, cm, st) : cb_no_scale_and_bias(a, cm, st)) != GS_OK)
		return rc;
	if (strcmp(cm->loss, "RMSEWithUncertainty") == 0)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED, "CatBoost's loss function \"RMSEWithUncertainty\" is not supported");
		gs_status_detail(st, "Its two outputs are a mean and a log-scale variance, not scores.");
		return st->code;
	}
	if (loss == NULL)
	{
		cm->tf = GS_TRANSFORM_IDENTITY;
		return GS_OK;
	}
	return gs_cb_loss(cm->loss, cm->dim, &cm->tf, st);
}

/*
 * A split of tree t as a node's feature, threshold (left when x < it) and
 * NaN direction: a float feature's border, a one-hot value's indicator or
 * a CTR's border.  GS_OK, or the error.
 */
static GsCode
cb_split(const CbModel *cm, json_t *s, int32_t t, CbSplit *out, GsStatus *st)
{
	json_t	   *type = json_object_get(s, "split_type");
	const char *ty = json_is_string(type) ? json_string_value(type) : NULL;
	int64_t		fi,
				idx,
				tb;
	double		b;

	if (!json_is_object(s))
		return CB_ERR(st, "invalid CatBoost model: tree %d has a split that is not an object", t);
	if (ty && strcmp(ty, "OneHotFeature") == 0)
	{
		json_t	   *v = json_object_get(s, "value");

		if (cb_int(s, "cat_feature_index", 0, INT32_MAX, &idx) || cb_number(v, &b) ||
			b != floor(b) || !(b >= (double) INT32_MIN && b <= (double) UINT32_MAX) ||
			(out->feat = gs_cb_onehot_feature(cm->ctrs, idx, (int64_t) b)) < 0)
			return CB_ERR(st, "invalid CatBoost model: tree %d has a one-hot split on a value its feature lacks", t);
		out->thr = 0.5f;
		out->nan_right = false;
		return GS_OK;
	}
	if (ty && strcmp(ty, "OnlineCtr") == 0)
	{
		if (cb_int(s, "split_index", 0, INT32_MAX, &idx) ||
			cb_int(s, "ctr_target_border_idx", 0, 255, &tb) ||
			cb_number(json_object_get(s, "border"), &b) ||
			(out->feat = gs_cb_ctr_feature(cm->ctrs, idx, b, tb)) < 0)
			return CB_ERR(st, "invalid CatBoost model: tree %d has a CTR split that names no CTR border of the model", t);
		out->thr = nextafterf((float) b, INFINITY);
		out->nan_right = false;
		return GS_OK;
	}
	if (type && (!ty || strcmp(ty, "FloatFeature") != 0))
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED, "CatBoost splits of type \"%.32s\" are not supported (tree %d)",
					  ty ? ty : "?", t);
		gs_status_detail(st, "Splits on numerical features (FloatFeature), one-hot categories (OneHotFeature) "
						 "and CTRs (OnlineCtr) can be scored.");
		return st->code;
	}
	if (cb_int(s, "float_feature_index", 0, cm->n_float - 1, &fi))
		return CB_ERR(st, "invalid CatBoost model: tree %d splits on a float feature the model lacks", t);
	if (cb_number(json_object_get(s, "border"), &b) || !isfinite((float) b))
		return CB_ERR(st, "invalid CatBoost model: tree %d has a border that is no finite float", t);
	out->feat = cm->feat[fi].flat;
	out->thr = nextafterf((float) b, INFINITY);
	out->nan_right = cm->feat[fi].nan_right;
	return GS_OK;
}

/* Whether leaf value v, scaled and with any bias added, is a finite float. */
static bool
cb_leaf_ok(const CbModel *cm, double v)
{
	double		w = v * cm->scale;

	return isfinite(w) && fabs(w) + cm->max_abs_bias <= FLT_MAX;
}

/* A leaf's value for output g: a number (dim 1) or an array of dim numbers. */
static int
cb_leaf_value(json_t *v, int32_t dim, int32_t g, double *out)
{
	if (json_is_array(v))
		return json_array_size(v) == (size_t) dim ? cb_number(json_array_get(v, g), out) : -1;
	return dim == 1 ? cb_number(v, out) : -1;
}

/* Weight k of array w of n weights; NaN when there is none. */
static double
cb_weight(json_t *w, int64_t k, int64_t n)
{
	double		v = NAN;

	if (w != NULL && (!json_is_array(w) || json_array_size(w) == (size_t) n))
		cb_number(json_is_array(w) ? json_array_get(w, (size_t) k) : w, &v);
	return isfinite(v) && v >= 0.0 ? v : NAN;
}

/* A split as the builder takes it: left when x < thr (x <= the border), NaN right or left. */
static void
cb_split_node(const CbSplit *s, int64_t left, GsBuildNode *node)
{
	node->left = left;
	node->right = left + 1;
	node->feature = s->feat;
	node->flags = s->nan_right ? 0 : GS_NODE_DEFAULT_LEFT;
	node->threshold = s->thr;
}

/*
 * Node id of symmetric tree (ctx: its CbSymTree) for the forest builder:
 * the complete binary tree of its splits, node j's children 2j + 1 and
 * 2j + 2, level k (0 at the root) splitting on splits[d - 1 - k]; leaf p
 * of CatBoost's order (the sum of (went right) << i) is node
 * n_leaves - 1 + p, scaled, with add added.  Its cover: leaf_weights[p]
 * (NaN where there is none; a split's is filled by cb_split_covers).
 */
static GsCode
cb_sym_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st)
{
	const CbSymTree *c = ctx;
	const CbModel *cm = c->cm;
	int64_t		p = id - (c->n_leaves - 1);
	double		v = 0.0;

	(void) st;
	if (p < 0)
	{
		int32_t		k = 0;

		while (((int64_t) 2 << k) - 1 <= id)
			k++;
		cb_split_node(&c->level[k], 2 * id + 1, node);
		return GS_OK;
	}
	/* cb_sym_read checked every value */
	cb_number(json_array_get(c->leaves, (size_t) (p * cm->dim + c->out.g)), &v);
	node->leaf = true;
	node->value = v * cm->scale + c->out.add;
	node->cover = cb_weight(c->weights, p, c->n_leaves);
	return GS_OK;
}

/*
 * Node id of a non-symmetric tree (ctx: its CbNonsymTree) for the forest
 * builder: node id of the tree's flat form (cb_nonsym_read), a leaf's
 * value for output g scaled, with add added, and its cover ("weight", NaN
 * where there is none; a split's is filled by cb_split_covers).
 */
static GsCode
cb_nonsym_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st)
{
	const CbNonsymTree *c = ctx;
	const CbFlatNode *n = &c->flat[id];
	double		v = 0.0;

	(void) st;
	if (n->left >= 0)
	{
		cb_split_node(&n->split, n->left, node);
		return GS_OK;
	}
	/* cb_nonsym_read checked every output's value */
	cb_leaf_value(json_object_get(n->obj, "value"), c->cm->dim, c->out.g, &v);
	node->leaf = true;
	node->value = v * c->cm->scale + c->out.add;
	node->cover = cb_weight(json_object_get(n->obj, "weight"), 0, 1);
	return GS_OK;
}

/*
 * Read symmetric tree t: its depth into *depth (at most max_depth), the
 * split of each level into level[] (level[k]: splits[d - 1 - k]), and check
 * that it has a leaf value for every leaf and output, each a finite number
 * that stays a finite float scaled and with the bias added.
 */
static GsCode
cb_sym_read(const CbModel *cm, json_t *tree, int32_t t, int32_t max_depth, CbSplit *level,
			int32_t *depth, GsStatus *st)
{
	json_t	   *splits = json_object_get(tree, "splits"),
			   *leaves = json_object_get(tree, "leaf_values");
	int32_t		d;
	int64_t		n_leaves;

	/* a tree without a split (a lone leaf) has "splits": null */
	if (!json_is_object(tree) || !(json_is_array(splits) || json_is_null(splits)) ||
		!json_is_array(leaves))
		return CB_ERR(st, "invalid CatBoost model: tree %d lacks splits or leaf_values", t);
	if (json_array_size(splits) > (size_t) max_depth)
		return gs_status_limit(st, GS_LIMIT_DEPTH, max_depth, "tree %d is %zu levels deep, more than the limit of %d",
							 t, json_array_size(splits), max_depth);
	d = (int32_t) json_array_size(splits);
	n_leaves = (int64_t) 1 << d;
	if (json_array_size(leaves) != (size_t) (n_leaves * cm->dim))
		return CB_ERR(st, "invalid CatBoost model: tree %d has %zu leaf values, not %lld",
					  t, json_array_size(leaves), (long long) (n_leaves * cm->dim));
	for (int32_t i = 0; i < d; i++)
	{
		GsCode		rc = cb_split(cm, json_array_get(splits, i), t, &level[d - 1 - i], st);

		if (rc)
			return rc;
	}
	for (int64_t k = 0; k < n_leaves * cm->dim; k++)
	{
		double		v = 0.0;

		if (cb_number(json_array_get(leaves, k), &v) || !cb_leaf_ok(cm, v))
			return CB_ERR(st, "invalid CatBoost model: tree %d has a leaf value that is not a finite number", t);
	}
	*depth = d;
	return GS_OK;
}

/*
 * Read non-symmetric tree t ({"split", "left", "right"} or {"value"}
 * objects, nested) into its flat form in B->flat: its nodes numbered
 * breadth-first from the root, a split's children adjacent (what the
 * builder's ids need; the builder walks, checks and lays out the tree).
 * Checks what only CatBoost's objects can get wrong: objects, splits,
 * children, a finite leaf value for each output; *n_nodes receives the
 * count, at most max_nodes.  It stops at the depth cap, before reading
 * deeper nodes, as the builder would refuse the tree anyway.
 */
static GsCode
cb_nonsym_read(CbBuild *B, json_t *tree, int32_t t, int64_t max_nodes, int64_t *n_nodes,
			   GsStatus *st)
{
	const CbModel *cm = B->cm;
	const GsAllocator *a = &B->b.f->alloc;
	int64_t		head = 0,
				tail = 1,
				level_end = 1;
	int32_t		d = 0;

	B->flat[0].obj = tree;
	for (; head < tail; head++)
	{
		CbFlatNode *n = &B->flat[head];
		json_t	   *split = json_object_get(n->obj, "split"),
				   *l,
				   *r;
		GsCode		rc;

		if (head == level_end)
		{
			/* the next level starts */
			level_end = tail;
			if (++d > B->max_depth)
				return gs_status_limit(st, GS_LIMIT_DEPTH, B->max_depth, "tree %d is deeper than the limit of %d levels",
									 t, B->max_depth);
		}
		if (!json_is_object(n->obj))
			return CB_ERR(st, "invalid CatBoost model: tree %d has a node that is not an object", t);
		n->left = -1;
		if (split == NULL)
		{
			double		v = 0.0;

			for (int32_t k = 0; k < cm->dim; k++)
				if (cb_leaf_value(json_object_get(n->obj, "value"), cm->dim, k, &v) ||
					!cb_leaf_ok(cm, v))
					return CB_ERR(st, "invalid CatBoost model: tree %d has a leaf without a finite value for each output", t);
			continue;
		}
		if ((rc = cb_split(cm, split, t, &n->split, st)) != GS_OK)
			return rc;
		l = json_object_get(n->obj, "left");
		r = json_object_get(n->obj, "right");
		if (!json_is_object(l) || !json_is_object(r))
			return CB_ERR(st, "invalid CatBoost model: a split of tree %d lacks its left or right child", t);
		if (tail + 2 > max_nodes)
			return gs_status_limit(st, GS_LIMIT_NODES, max_nodes, "tree %d has more nodes than the limit of %lld",
								 t, (long long) max_nodes);
		if (tail + 2 > B->flat_cap)
		{
			int64_t		cap = B->flat_cap * 2;
			CbFlatNode *q = a->alloc(a->ctx, sizeof(CbFlatNode) * (size_t) cap);

			if (q == NULL)
				return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			memcpy(q, B->flat, sizeof(CbFlatNode) * (size_t) tail);
			a->free(a->ctx, B->flat);
			B->flat = q;
			B->flat_cap = cap;
			n = &B->flat[head];
		}
		n->left = tail;
		B->flat[tail++].obj = l;
		B->flat[tail++].obj = r;
	}
	*n_nodes = tail;
	return GS_OK;
}

/*
 * Covers of the splits of the forest's last tree, each the sum of its
 * children's (the leaves' are the model's weights), from the last node
 * back to the root.
 */
static void
cb_split_covers(GsForest *f)
{
	int64_t		base = f->tree_offset[f->n_trees - 1];
	GsNode	   *nodes = f->nodes + base;
	double	   *cover = f->cover + base;

	for (int64_t i = f->n_nodes - base - 1; i >= 0; i--)
		if (!(nodes[i].info & GS_NODE_LEAF))
			cover[i] = cover[nodes[i].left] + cover[nodes[i].left + 1];
}

/*
 * CatBoost's tree t once per output group, through the builder: node fn
 * of ctx (a CbSymTree or CbNonsymTree) over n_ids ids, *out (in ctx) set
 * to each group in turn; the first tree carries the bias unless covers are
 * kept (build_catboost keeps it apart then).  Refuses first a model whose
 * nodes pass the cap.
 */
static GsCode
cb_build_groups(CbBuild *B, int32_t t, int64_t n_ids, GsBuildNodeFn fn, void *ctx,
				CbGroup *out, GsStatus *st)
{
	const CbModel *cm = B->cm;
	GsForest   *f = B->b.f;
	char		label[32];
	GsCode		rc;

	if (n_ids * cm->dim > B->cap_nodes - f->n_nodes)
		return gs_status_limit(st, GS_LIMIT_NODES, B->cap_nodes, "the model has more nodes than the limit of %lld",
							 (long long) B->cap_nodes);
	if ((rc = gs_build_reserve(&B->b, 0, n_ids * cm->dim, st)) != GS_OK)
		return rc;
	snprintf(label, sizeof(label), "tree %d", t);
	for (int32_t g = 0; g < cm->dim; g++)
	{
		GsBuildTree bt = {label, g, n_ids, 0, fn, ctx};

		out->g = g;
		out->add = t == 0 && !B->keep_covers ? cm->bias[g] : 0.0;
		if ((rc = gs_build_tree(&B->b, &bt, st)) != GS_OK)
			return rc;
		if (B->b.options & GS_BUILD_COVERS)
			cb_split_covers(f);
	}
	return GS_OK;
}

/* Read and build CatBoost's tree t (symmetric or not); GS_OK or the error. */
static GsCode
cb_build_tree(CbBuild *B, json_t *tree, int32_t t, GsStatus *st)
{
	GsCode		rc;

	if (B->cm->oblivious)
	{
		CbSplit		level[CB_MAX_DEPTH];
		CbSymTree	c = {B->cm, json_object_get(tree, "leaf_values"),
		json_object_get(tree, "leaf_weights"), level, 0, {0, 0.0}};
		int32_t		d = 0;

		if ((rc = cb_sym_read(B->cm, tree, t, B->max_depth, level, &d, st)) != GS_OK)
			return rc;
		c.n_leaves = (int64_t) 1 << d;
		return cb_build_groups(B, t, 2 * c.n_leaves - 1, cb_sym_node, &c, &c.out, st);
	}
	else
	{
		CbNonsymTree c = {B->cm, NULL, {0, 0.0}};
		int64_t		n = 0;

		if ((rc = cb_nonsym_read(B, tree, t, B->cap_nodes, &n, st)) != GS_OK)
			return rc;
		c.flat = B->flat;
		return cb_build_groups(B, t, n, cb_nonsym_node, &c, &c.out, st);
	}
}

/*
 * Every tree of the model into f through the forest builder: double leaves
 * (scale * value, the first tree of each group with its bias unless covers
 * are kept), covers when asked and the model is not scaled (CatBoost
 * explains no such model), CB_MAX_DEPTH levels at most.
 */
static GsCode
cb_build_forest(const CbModel *cm, int32_t n_cb, const GsLimits *lim, GsForest *f, GsStatus *st)
{
	CbBuild		B;
	GsLimits	blim = *lim;
	const GsAllocator *a = &f->alloc;
	bool		covers = lim->keep_covers && cm->scale == 1.0;
	GsCode		rc;

	memset(&B, 0, sizeof(B));
	B.cm = cm;
	B.keep_covers = lim->keep_covers;
	B.max_depth = lim->max_depth > 0 && lim->max_depth < CB_MAX_DEPTH ? lim->max_depth : CB_MAX_DEPTH;
	B.cap_nodes = lim->max_nodes > 0 && lim->max_nodes < (int64_t) UINT32_MAX ?
		lim->max_nodes : (int64_t) UINT32_MAX;
	blim.max_depth = B.max_depth;
	gs_build_begin(&B.b, f, &blim, "invalid CatBoost model: ",
				   GS_BUILD_DOUBLE_LEAVES | (covers ? GS_BUILD_COVERS : 0));
	if (!cm->oblivious)
	{
		B.flat_cap = 1024;
		if (!(B.flat = a->alloc(a->ctx, sizeof(CbFlatNode) * (size_t) B.flat_cap)))
		{
			rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			goto done;
		}
	}
	if ((rc = gs_build_reserve(&B.b, (int64_t) n_cb * cm->dim, 0, st)) != GS_OK)
		goto done;
	for (int32_t t = 0; t < n_cb; t++)
		if ((rc = cb_build_tree(&B, json_array_get(cm->trees, t), t, st)) != GS_OK)
			goto done;
	rc = gs_build_finish(&B.b, st);
done:
	gs_build_end(&B.b);
	if (B.flat)
		a->free(a->ctx, B.flat);
	return rc;
}

/* "catboost 1.2.10" from model_info.catboost_version_info ("... tags/v1.2.10 ..."). */
static void
cb_saved_by(json_t *root, char *out, size_t size)
{
	json_t	   *v = json_object_get(json_object_get(root, "model_info"), "catboost_version_info");
	const char *s = json_is_string(v) ? strstr(json_string_value(v), "tags/v") : NULL;
	size_t		n = s ? strspn(s + 6, "0123456789.") : 0;

	if (n > 0 && n < 16)
		snprintf(out, size, "catboost %.*s", (int) n, s + 6);
	else
		snprintf(out, size, "catboost");
}

/* The feature_id of column col's feature (float or categorical), or NULL. */
static json_t *
cb_feature_id(json_t *root, const CbModel *cm, int32_t col)
{
	json_t	   *info = json_object_get(root, "features_info"),
			   *ff = json_object_get(info, "float_features"),
			   *cf = json_object_get(info, "categorical_features");

	for (int32_t i = 0; i < cm->n_float; i++)
		if (cm->feat[i].flat == col)
			return json_object_get(json_array_get(ff, i), "feature_id");
	for (int32_t j = 0; cm->ctrs && j < cm->ctrs->n_catf; j++)
		if (cm->ctrs->catf_col[j] == col)
			return json_object_get(json_array_get(cf, j), "feature_id");
	return NULL;
}

/* Feature names: every column's feature_id, when each is a non-empty UTF-8 string. */
static GsCode
cb_feature_names(json_t *root, const CbModel *cm, GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;

	if (cm->n_float + (cm->ctrs ? cm->ctrs->n_catf : 0) != cm->n_features)
		return GS_OK;
	for (int32_t i = 0; i < cm->n_features; i++)
	{
		json_t	   *id = cb_feature_id(root, cm, i);

		if (!json_is_string(id) || json_string_length(id) == 0 || json_string_length(id) > 1024 ||
			!gs_utf8_valid((const unsigned char *) json_string_value(id), json_string_length(id)))
			return GS_OK;
	}
	f->feature_names = cb_alloc(a, sizeof(char *) * (size_t) f->n_features);
	if (!f->feature_names)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t i = 0; i < cm->n_features; i++)
	{
		json_t	   *id = cb_feature_id(root, cm, i);
		char	   *name = cb_alloc(a, json_string_length(id) + 1);

		if (!name)
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		memcpy(name, json_string_value(id), json_string_length(id));
		f->feature_names[i] = name;
	}
	return GS_OK;
}

/* The categorical features of the model into cm->ctrs and f: GS_OK or the error. */
static GsCode
cb_read_categorical(json_t *root, const GsLimits *lim, CbModel *cm, GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	int32_t    *col = cb_alloc(a, sizeof(int32_t) * (size_t) cm->n_float);
	bool	   *nan_right = cb_alloc(a, sizeof(bool) * (size_t) cm->n_float);
	GsCode		rc;

	if (!col || !nan_right)
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	else
	{
		for (int32_t i = 0; i < cm->n_float; i++)
		{
			col[i] = cm->feat[i].flat;
			nan_right[i] = cm->feat[i].nan_right;
		}
		rc = gs_cb_ctrs_read(root, cm->n_float, col, nan_right, lim, a, &cm->n_features,
							 &cm->ctrs, &f->cat_names, st);
	}
	if (col)
		a->free(a->ctx, col);
	if (nan_right)
		a->free(a->ctx, nan_right);
	if (rc == GS_OK && cm->ctrs)
	{
		f->cb_ctrs = cm->ctrs;	/* the forest frees them from now on */
		f->n_derived = cm->ctrs->n_onehot + cm->ctrs->n_ctr;
		if ((int64_t) cm->n_features + f->n_derived > (int64_t) GS_NODE_FEATURE_MASK)
			return gs_status_set(st, GS_ERR_LIMIT, "the model has too many features and CTRs");
	}
	return rc;
}

/* The forest of a decoded CatBoost document: GS_OK or the error. */
static GsCode
build_catboost(json_t *root, const GsLimits *lim, GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	CbModel		cm;
	int64_t		cap_trees = lim->max_trees > 0 ? lim->max_trees : INT32_MAX / 2;
	int32_t		n_cb;
	GsCode		rc;

	memset(&cm, 0, sizeof(cm));
	if (!json_is_object(root))
		return CB_ERR(st, "invalid CatBoost model: not a JSON object");
	if ((rc = cb_read_features(root, lim, a, &cm, st)) ||
		(rc = cb_read_model(root, a, &cm, st)) ||
		(rc = cb_read_categorical(root, lim, &cm, f, st)))
		goto done;
	n_cb = json_array_size(cm.trees) > (size_t) INT32_MAX ? INT32_MAX : (int32_t) json_array_size(cm.trees);
	if ((int64_t) n_cb * cm.dim > cap_trees)
	{
		rc = gs_status_limit(st, GS_LIMIT_TREES, cap_trees, "the model has %lld trees, more than the limit of %lld",
						   (long long) n_cb * cm.dim, (long long) cap_trees);
		goto done;
	}
	f->n_groups = cm.dim;
	f->n_outputs = cm.dim;
	f->n_features = cm.n_features;
	f->transform = cm.tf;
	f->base_margin = cb_alloc(a, sizeof(float) * (size_t) f->n_groups);
	if (!f->base_margin)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	if ((rc = cb_build_forest(&cm, n_cb, lim, f, st)) != GS_OK)
		goto done;

	/*
	 * explanations weigh each tree's own leaves: the bias is kept apart, as
	 * the base margin
	 */
	if (lim->keep_covers)
		for (int32_t g = 0; g < cm.dim; g++)
			f->base_margin[g] = (float) cm.bias[g];
	snprintf(f->objective, sizeof(f->objective), "%s", cm.loss);
	snprintf(f->booster, sizeof(f->booster), "%s", cm.oblivious ? "symmetric" : "non-symmetric");
	cb_saved_by(root, f->saved_by, sizeof(f->saved_by));
	rc = cb_feature_names(root, &cm, f, st);

done:
	if (cm.feat)
		a->free(a->ctx, cm.feat);
	if (cm.bias)
		a->free(a->ctx, cm.bias);
	return rc;
}

/* Parse, validate and build; see catboost.h. */
GsCode
gs_catboost_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
				 const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
				 GsStatus *st)
{
	GsForest   *f;
	json_t	   *root;
	GsCode		rc;

	*out = NULL;
	if ((rc = gs_load_open(len, &lim, st)) != GS_OK)
		return rc;
	if (fmt != GS_FORMAT_AUTO && fmt != GS_FORMAT_CATBOOST_JSON)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "not a CatBoost model format");
	if (len >= 4 && memcmp(bytes, "CBM1", 4) == 0)
	{
		gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid CatBoost JSON model: the bytes are CatBoost's binary format (.cbm)");
		gs_status_detail(st, "Convert it to JSON with CatBoost: m = catboost.CatBoost(); m.load_model(\"model.cbm\"); m.save_model(\"model.json\", format=\"json\").");
		return st->code;
	}
	root = gs_json_decode(bytes, len, GS_FORMAT_CATBOOST_JSON, &lim->interrupt, st);
	if (root == NULL)
		return st->code;
	f = cb_alloc(alloc, sizeof(GsForest));
	if (f == NULL)
	{
		json_decref(root);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	}
	f->alloc = *alloc;
	f->format = GS_FORMAT_CATBOOST_JSON;
	rc = build_catboost(root, lim, f, st);
	json_decref(root);
	/* bins for scoring; a load for explanations (keep_covers) is never scored */
	if (rc == GS_OK && !lim->keep_covers)
		rc = gs_forest_bins_build(f, st);
	if (rc != GS_OK)
	{
		gs_forest_free(f);
		return rc;
	}
	*out = f;
	return GS_OK;
}

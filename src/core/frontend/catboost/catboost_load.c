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
 */
#include "catboost_read.h"
#include "cat_names.h"
#include "forest/forest.h"
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
cb_split(const CbModel *cm, json_t *s, int32_t t, int32_t *feat, float *thr, bool *nan_right,
		 GsStatus *st)
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
			(*feat = gs_cb_onehot_feature(cm->ctrs, idx, (int64_t) b)) < 0)
			return CB_ERR(st, "invalid CatBoost model: tree %d has a one-hot split on a value its feature lacks", t);
		*thr = 0.5f;
		*nan_right = false;
		return GS_OK;
	}
	if (ty && strcmp(ty, "OnlineCtr") == 0)
	{
		if (cb_int(s, "split_index", 0, INT32_MAX, &idx) ||
			cb_int(s, "ctr_target_border_idx", 0, 255, &tb) ||
			cb_number(json_object_get(s, "border"), &b) ||
			(*feat = gs_cb_ctr_feature(cm->ctrs, idx, b, tb)) < 0)
			return CB_ERR(st, "invalid CatBoost model: tree %d has a CTR split that names no CTR border of the model", t);
		*thr = nextafterf((float) b, INFINITY);
		*nan_right = false;
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
	*feat = cm->feat[fi].flat;
	*thr = nextafterf((float) b, INFINITY);
	*nan_right = cm->feat[fi].nan_right;
	return GS_OK;
}

/* Whether leaf value v, scaled and with any bias added, is a finite float. */
static bool
cb_leaf_ok(const CbModel *cm, double v)
{
	double		w = v * cm->scale;

	return isfinite(w) && fabs(w) + cm->max_abs_bias <= FLT_MAX;
}

/* A split node: left when x < thr (x <= the border), NaN right or left. */
static GsNode
cb_split_node(int32_t feat, float thr, bool nan_right, uint32_t left)
{
	GsNode		n;

	n.value = thr;
	n.info = (uint32_t) feat | (nan_right ? 0 : GS_NODE_DEFAULT_LEFT);
	n.left = left;
	return n;
}

/* A leaf of value v (double: the nearest float, and the float nearest the rest). */
static void
cb_leaf(GsNode *n, float *lo, double v)
{
	n->value = (float) v;
	n->info = GS_NODE_LEAF;
	n->left = 0;
	*lo = (float) (v - (double) n->value);
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

/*
 * Symmetric tree t: check it (nodes NULL) and count its nodes and depth, or
 * lay out output group g into nodes / lo.  add is added to every leaf.
 * With cover, the leaves' weights (leaf_weights, NaN where there are none)
 * and each split's, the sum of its children's.
 */
static GsCode
cb_oblivious(const CbModel *cm, json_t *tree, int32_t t, int32_t max_depth, int32_t g,
			 double add, GsNode *nodes, float *lo, double *cover, int64_t *n_nodes,
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
	*n_nodes = 2 * n_leaves - 1;
	*depth = d;
	if (nodes == NULL)
	{
		for (int32_t i = 0; i < d; i++)
		{
			int32_t		feat;
			float		thr;
			bool		nan_right;
			GsCode		rc = cb_split(cm, json_array_get(splits, i), t, &feat, &thr, &nan_right, st);

			if (rc)
				return rc;
		}
		for (int64_t k = 0; k < n_leaves * cm->dim; k++)
		{
			double		v = 0.0;

			if (cb_number(json_array_get(leaves, k), &v) || !cb_leaf_ok(cm, v))
				return CB_ERR(st, "invalid CatBoost model: tree %d has a leaf value that is not a finite number", t);
		}
		return GS_OK;
	}
	/* level k (0 at the root) splits on splits[d - 1 - k]; node j's left child is 2j + 1 */
	for (int32_t k = 0; k < d; k++)
	{
		int32_t		feat;
		float		thr;
		bool		nan_right;

		cb_split(cm, json_array_get(splits, d - 1 - k), t, &feat, &thr, &nan_right, st);
		for (int64_t j = ((int64_t) 1 << k) - 1; j < ((int64_t) 2 << k) - 1; j++)
			nodes[j] = cb_split_node(feat, thr, nan_right, (uint32_t) (2 * j + 1));
	}
	for (int64_t p = 0; p < n_leaves; p++)
	{
		double		v = 0.0;

		cb_number(json_array_get(leaves, p * cm->dim + g), &v);
		cb_leaf(&nodes[n_leaves - 1 + p], &lo[n_leaves - 1 + p], v * cm->scale + add);
		if (cover)
			cover[n_leaves - 1 + p] = cb_weight(json_object_get(tree, "leaf_weights"), p, n_leaves);
	}
	for (int64_t j = n_leaves - 2; cover && j >= 0; j--)
		cover[j] = cover[2 * j + 1] + cover[2 * j + 2];
	return GS_OK;
}

/*
 * Non-symmetric tree t ({"split", "left", "right"} or {"value"} objects),
 * walked breadth-first with queue (room for *queue_cap entries, grown from
 * a as needed): check it (nodes NULL) and count its nodes and depth, or lay
 * out output group g into nodes / lo.  add is added to every leaf.  With
 * cover, the leaves' weights ("weight", NaN where there is none) and each
 * split's, the sum of its children's.
 */
static GsCode
cb_nonsym(const CbModel *cm, json_t *tree, int32_t t, int32_t max_depth, int64_t max_nodes,
		  int32_t g, double add, json_t ***queue, int64_t *queue_cap, const GsAllocator *a,
		  GsNode *nodes, float *lo, double *cover, int64_t *n_nodes, int32_t *depth, GsStatus *st)
{
	int64_t		head = 0,
				tail = 1,
				level_end = 1;
	int32_t		d = 0;

	(*queue)[0] = tree;
	while (head < tail)
	{
		json_t	   *node = (*queue)[head];
		json_t	   *split = json_object_get(node, "split");

		if (!json_is_object(node))
			return CB_ERR(st, "invalid CatBoost model: tree %d has a node that is not an object", t);
		if (split == NULL)
		{
			double		v = 0.0;

			/* the first pass checks every output's value, the second reads group g's */
			for (int32_t k = nodes ? g : 0; k < (nodes ? g + 1 : cm->dim); k++)
				if (cb_leaf_value(json_object_get(node, "value"), cm->dim, k, &v) ||
					!cb_leaf_ok(cm, v))
					return CB_ERR(st, "invalid CatBoost model: tree %d has a leaf without a finite value for each output", t);
			if (nodes)
				cb_leaf(&nodes[head], &lo[head], v * cm->scale + add);
			if (cover)
				cover[head] = cb_weight(json_object_get(node, "weight"), 0, 1);
		}
		else
		{
			json_t	   *l = json_object_get(node, "left"),
					   *r = json_object_get(node, "right");
			int32_t		feat;
			float		thr;
			bool		nan_right;
			GsCode		rc = cb_split(cm, split, t, &feat, &thr, &nan_right, st);

			if (rc)
				return rc;
			if (!json_is_object(l) || !json_is_object(r))
				return CB_ERR(st, "invalid CatBoost model: a split of tree %d lacks its left or right child", t);
			if (tail + 2 > max_nodes)
				return gs_status_limit(st, GS_LIMIT_NODES, max_nodes, "tree %d has more nodes than the limit of %lld",
									 t, (long long) max_nodes);
			if (tail + 2 > *queue_cap)
			{
				int64_t		cap = *queue_cap * 2;
				json_t	  **q = a->alloc(a->ctx, sizeof(json_t *) * (size_t) cap);

				if (q == NULL)
					return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
				memcpy(q, *queue, sizeof(json_t *) * (size_t) tail);
				a->free(a->ctx, *queue);
				*queue = q;
				*queue_cap = cap;
			}
			if (nodes)
				nodes[head] = cb_split_node(feat, thr, nan_right, (uint32_t) tail);
			(*queue)[tail++] = l;
			(*queue)[tail++] = r;
		}
		if (++head == level_end && head < tail)
		{
			/* the next level starts */
			level_end = tail;
			if (++d > max_depth)
				return gs_status_limit(st, GS_LIMIT_DEPTH, max_depth, "tree %d is deeper than the limit of %d levels",
									 t, max_depth);
		}
	}
	*n_nodes = tail;
	*depth = d;
	for (int64_t i = tail - 1; cover && i >= 0; i--)
		if (!(nodes[i].info & GS_NODE_LEAF))
			cover[i] = cover[nodes[i].left] + cover[nodes[i].left + 1];
	return GS_OK;
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
	int64_t		cap_trees = lim->max_trees > 0 ? lim->max_trees : INT32_MAX / 2,
				cap_nodes = lim->max_nodes > 0 ? lim->max_nodes : (int64_t) UINT32_MAX,
				total = 0,
				queue_cap = 1024;
	int32_t		max_depth = lim->max_depth > 0 && lim->max_depth < CB_MAX_DEPTH ? lim->max_depth : CB_MAX_DEPTH;
	int32_t		n_cb;
	json_t	  **queue = NULL;
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
	if (cap_nodes > (int64_t) UINT32_MAX)
		cap_nodes = (int64_t) UINT32_MAX;
	queue = a->alloc(a->ctx, sizeof(json_t *) * (size_t) queue_cap);
	if (!queue)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	f->n_trees = n_cb * cm.dim;
	f->n_groups = cm.dim;
	f->n_outputs = cm.dim;
	f->n_features = cm.n_features;
	f->transform = cm.tf;
	f->tree_offset = cb_alloc(a, sizeof(uint32_t) * (size_t) f->n_trees);
	f->tree_group = cb_alloc(a, sizeof(int32_t) * (size_t) f->n_trees);
	f->tree_depth = cb_alloc(a, sizeof(int32_t) * (size_t) f->n_trees);
	f->base_margin = cb_alloc(a, sizeof(float) * (size_t) f->n_groups);
	if (!f->tree_offset || !f->tree_group || !f->tree_depth || !f->base_margin)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}

	/* first pass: check every tree, count nodes */
	for (int32_t t = 0; t < n_cb; t++)
	{
		json_t	   *tree = json_array_get(cm.trees, t);
		int64_t		n;
		int32_t		depth;

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		rc = cm.oblivious ?
			cb_oblivious(&cm, tree, t, max_depth, 0, 0.0, NULL, NULL, NULL, &n, &depth, st) :
			cb_nonsym(&cm, tree, t, max_depth, cap_nodes, 0, 0.0, &queue, &queue_cap, a,
					  NULL, NULL, NULL, &n, &depth, st);
		if (rc)
			goto done;
		if (n * cm.dim > cap_nodes - total)
		{
			rc = gs_status_limit(st, GS_LIMIT_NODES, cap_nodes, "the model has more nodes than the limit of %lld",
							   (long long) cap_nodes);
			goto done;
		}
		for (int32_t g = 0; g < cm.dim; g++)
		{
			int32_t		ft = t * cm.dim + g;

			f->tree_offset[ft] = (uint32_t) total;
			f->tree_group[ft] = g;
			f->tree_depth[ft] = depth;
			total += n;
		}
		if (depth > f->max_depth)
			f->max_depth = depth;
	}
	f->n_nodes = total;
	f->nodes = cb_alloc(a, sizeof(GsNode) * (size_t) total);
	f->leaf_lo = cb_alloc(a, sizeof(float) * (size_t) total);
	/* covers, for explanations: none when scaled (CatBoost explains no such model) */
	if (lim->keep_covers && cm.scale == 1.0)
		f->cover = cb_alloc(a, sizeof(double) * (size_t) total);
	if (!f->nodes || !f->leaf_lo || (lim->keep_covers && cm.scale == 1.0 && !f->cover))
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}

	/*
	 * second pass: lay out each tree once per output group; the first
	 * carries the bias (kept apart as the base margin for explanations,
	 * which weigh each tree's own leaves)
	 */
	for (int32_t t = 0; t < n_cb; t++)
	{
		json_t	   *tree = json_array_get(cm.trees, t);

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		for (int32_t g = 0; g < cm.dim; g++)
		{
			uint32_t	off = f->tree_offset[t * cm.dim + g];
			double		add = t == 0 && !lim->keep_covers ? cm.bias[g] : 0.0;
			int64_t		n;
			int32_t		depth;

			rc = cm.oblivious ?
				cb_oblivious(&cm, tree, t, max_depth, g, add, f->nodes + off, f->leaf_lo + off,
							 f->cover ? f->cover + off : NULL, &n, &depth, st) :
				cb_nonsym(&cm, tree, t, max_depth, cap_nodes, g, add, &queue, &queue_cap, a,
						  f->nodes + off, f->leaf_lo + off, f->cover ? f->cover + off : NULL,
						  &n, &depth, st);
			if (rc)
				goto done;
		}
	}

	if (lim->keep_covers)
		for (int32_t g = 0; g < cm.dim; g++)
			f->base_margin[g] = (float) cm.bias[g];
	gs_forest_check_covers(f);
	snprintf(f->objective, sizeof(f->objective), "%s", cm.loss);
	snprintf(f->booster, sizeof(f->booster), "%s", cm.oblivious ? "symmetric" : "non-symmetric");
	cb_saved_by(root, f->saved_by, sizeof(f->saved_by));
	rc = cb_feature_names(root, &cm, f, st);

done:
	if (queue)
		a->free(a->ctx, queue);
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

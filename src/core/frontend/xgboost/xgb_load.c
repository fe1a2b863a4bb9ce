/*
 * xgb_load.c
 *	  Reads XGBoost models (JSON and UBJSON, as saved by XGBoost 1.0-3.x
 *	  save_model/save_raw), validates them and builds a GsForest.
 *
 * Beyond plain numerical trees this reads categorical splits (split_type 1,
 * with the node's category list in categories / categories_nodes /
 * categories_segments / categories_sizes, turned into a bitset in the
 * forest's cat_words), dart tree weights, num_parallel_tree > 1 (trees are
 * assigned to output groups by tree_info), multi-class and multi-target
 * models (one tree per class or target), and base_score in every form
 * XGBoost has written: a number, a string ("5E-1"), a bracketed string
 * ("[5E-1]"), and from 3.1 on one value per class or target
 * ("[a,b,c]").
 *
 * The bytes are decoded into a jansson document (xgb_decode.c), the
 * document is checked field by field (values read with the helpers of
 * xgb_json.c), and every tree of the ensemble is validated and re-laid out
 * breadth-first into the forest's node array (xgb_trees.c).  This file holds
 * the objectives table, the model-level checks and the entry point.
 * Everything untrusted is checked here: lengths, child indices, reachability
 * (no cycles, no shared nodes), feature indices, finite values, and the
 * caller's caps before each allocation.  The jansson tree is temporary and
 * freed before returning; the forest is allocated with the caller's
 * allocator and owned by the caller.
 */
#include "xgb_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgboost.h"
#include "frontend/common/json_decode.h"
#include "frontend/common/load_checks.h"

/* How an objective turns margins into outputs, and base_score into a margin. */
typedef enum BaseLink
{
	LINK_IDENTITY,
	LINK_LOGIT,
	LINK_LOG
} BaseLink;

typedef struct ObjectiveInfo
{
	const char *name;
	GsTransform transform;
	BaseLink	link;
} ObjectiveInfo;

static const ObjectiveInfo objectives[] = {
	{"binary:logistic", GS_TRANSFORM_SIGMOID, LINK_LOGIT},
	{"reg:logistic", GS_TRANSFORM_SIGMOID, LINK_LOGIT},
	{"binary:logitraw", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"binary:hinge", GS_TRANSFORM_HINGE, LINK_IDENTITY},
	{"reg:squarederror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:linear", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:squaredlogerror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:pseudohubererror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:absoluteerror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:quantileerror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"count:poisson", GS_TRANSFORM_EXP, LINK_LOG},
	{"reg:gamma", GS_TRANSFORM_EXP, LINK_LOG},
	{"reg:tweedie", GS_TRANSFORM_EXP, LINK_LOG},
	{"survival:cox", GS_TRANSFORM_EXP, LINK_LOG},
	{"survival:aft", GS_TRANSFORM_EXP, LINK_LOG},
	{"multi:softprob", GS_TRANSFORM_SOFTMAX, LINK_IDENTITY},
	{"multi:softmax", GS_TRANSFORM_ARGMAX, LINK_IDENTITY},
	{"rank:pairwise", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"rank:ndcg", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"rank:map", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
};

/* Allocate zeroed memory from the forest's allocator. */
static void *
forest_alloc(GsForest *f, size_t size)
{
	void	   *p = f->alloc.alloc(f->alloc.ctx, size);

	if (p)
		memset(p, 0, size);
	return p;
}

/* Look up an objective by name. */
static const ObjectiveInfo *
find_objective(const char *name)
{
	for (size_t i = 0; i < sizeof(objectives) / sizeof(objectives[0]); i++)
		if (strcmp(objectives[i].name, name) == 0)
			return &objectives[i];
	return NULL;
}

/* Copy a string with the forest's allocator. */
static char *
forest_strdup(GsForest *f, const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *p = f->alloc.alloc(f->alloc.ctx, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/* The XGBoost that saved the model into f->saved_by; *cat_flags for its category sets. */
static void
read_version(json_t *version, GsForest *f, uint32_t *cat_flags)
{
	*cat_flags = 0;
	if (json_is_array(version) && json_array_size(version) == 3)
	{
		int64_t		vmaj = 0,
					vmin = 0,
					vpat = 0;

		elem_int(version, 0, &vmaj);
		elem_int(version, 1, &vmin);
		elem_int(version, 2, &vpat);
		snprintf(f->saved_by, sizeof(f->saved_by), "xgboost %lld.%lld.%lld",
				 (long long) vmaj, (long long) vmin, (long long) vpat);
		/* before 1.7, invalid category codes took the default direction */
		if (vmaj < 1 || (vmaj == 1 && vmin < 7))
			*cat_flags = GS_CAT_INVALID_DEFAULT;
	}
}

/*
 * The objective (f->objective, f->transform; *oi_out its row) and the
 * learner's counts of features, groups and outputs.
 */
static GsCode
read_objective(json_t *learner, json_t *mparam, const GsLimits *lim, GsForest *f,
			   const ObjectiveInfo **oi_out, GsStatus *st)
{
	json_t	   *objective = gs_xgb_member(learner, "objective");
	const char *oname;
	const ObjectiveInfo *oi;
	int64_t		num_feature,
				num_class = 0,
				num_target = 1;

	if (!json_is_string(gs_xgb_member(objective, "name")))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no objective name");
	oname = json_string_value(gs_xgb_member(objective, "name"));
	oi = find_objective(oname);
	if (oi == NULL)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED,
					  "XGBoost objective \"%.64s\" is not supported", oname);
		gs_status_detail(st, "Supported objectives: binary:logistic, binary:logitraw, binary:hinge, reg:squarederror, reg:squaredlogerror, reg:logistic, reg:pseudohubererror, reg:absoluteerror, reg:quantileerror, count:poisson, reg:gamma, reg:tweedie, survival:cox, survival:aft, multi:softprob, multi:softmax, rank:pairwise, rank:ndcg, rank:map.");
		return st->code;
	}
	snprintf(f->objective, sizeof(f->objective), "%s", oname);
	f->transform = oi->transform;
	*oi_out = oi;


	/* learner parameters */
	if (gs_xgb_json_to_int64(gs_xgb_member(mparam, "num_feature"), &num_feature) || num_feature < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"num_feature\" is missing or not a positive integer");
	if (lim->max_features > 0 && num_feature > lim->max_features)
		return gs_status_limit(st, GS_LIMIT_FEATURES, lim->max_features,
							   "%lld features, more than the limit of %d",
							 (long long) num_feature, lim->max_features);
	if (num_feature > (int64_t) GS_NODE_FEATURE_MASK)
		return gs_status_set(st, GS_ERR_LIMIT, "too many features");
	if (gs_xgb_member(mparam, "num_class") && (gs_xgb_json_to_int64(gs_xgb_member(mparam, "num_class"), &num_class) || num_class < 0 || num_class > 100000))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"num_class\" is not a valid class count");
	if (gs_xgb_member(mparam, "num_target") && (gs_xgb_json_to_int64(gs_xgb_member(mparam, "num_target"), &num_target) || num_target < 1 || num_target > 100000))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"num_target\" is not a valid target count");
	if (num_class > 1 && num_target > 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: both \"num_class\" and \"num_target\" are above 1");
	f->n_features = (int32_t) num_feature;
	f->n_groups = (int32_t) (num_class > 1 ? num_class : num_target);
	if ((oi->transform == GS_TRANSFORM_SOFTMAX || oi->transform == GS_TRANSFORM_ARGMAX) && num_class < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: objective \"%s\" needs \"num_class\"", oname);
	f->n_outputs = oi->transform == GS_TRANSFORM_ARGMAX ? 1 : f->n_groups;
	return GS_OK;
}

/* The base margins of the groups, as the objective's ProbToMargin does in float. */
static GsCode
read_base_margin(json_t *mparam, const ObjectiveInfo *oi, GsForest *f, GsStatus *st)
{
	f->base_margin = forest_alloc(f, sizeof(float) * (size_t) f->n_groups);
	if (f->base_margin == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	{
		float	   *bs = f->base_margin;
		int			n_bs = 1;

		bs[0] = 0.5f;
		if (gs_xgb_member(mparam, "base_score") &&
			gs_xgb_parse_base_score(gs_xgb_member(mparam, "base_score"), bs, f->n_groups, &n_bs))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: \"base_score\" is not a number or a list of %d numbers",
								 f->n_groups);
		for (int g = n_bs; g < f->n_groups; g++)
			bs[g] = bs[0];		/* one value for every group */
		for (int g = 0; g < f->n_groups; g++)
		{
			float		base_score = bs[g],
						m = base_score;

			if (!isfinite(base_score))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: \"base_score\" is not finite");
			if (oi->link == LINK_LOGIT)
			{
				if (!(base_score > 0.0f && base_score < 1.0f))
					return gs_status_set(st, GS_ERR_INVALID_MODEL,
										 "invalid XGBoost model: base_score %g must be between 0 and 1 for objective \"%s\"",
										 (double) base_score, f->objective);
				m = -logf(1.0f / base_score - 1.0f);
			}
			else if (oi->link == LINK_LOG)
			{
				if (!(base_score > 0.0f))
					return gs_status_set(st, GS_ERR_INVALID_MODEL,
										 "invalid XGBoost model: base_score %g must be positive for objective \"%s\"",
										 (double) base_score, f->objective);
				m = logf(base_score);
			}
			/* e.g. a subnormal base_score under the logit link (found by fuzzing) */
			if (!isfinite(m))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: base_score %g gives a non-finite margin for objective \"%s\"",
									 (double) base_score, f->objective);
			bs[g] = m;
		}
	}
	return GS_OK;
}

/*
 * The trees of a tree booster's model: the arrays checked against their
 * declared counts, early stopping and the saved `missing` applied, and the
 * number of trees of the forest (a vector-leaf tree counts once per output)
 * in *n_exp.
 */
static GsCode
count_trees(json_t *learner, json_t *model, json_t *weights, const GsLimits *lim, GsForest *f,
			int64_t *num_trees_out, int64_t *n_exp_out, GsStatus *st)
{
	json_t	   *trees,
			   *tree_info;
	int64_t		num_trees,
				n_exp = 0;
	GsCode		rc;

	trees = gs_xgb_member(model, "trees");
	tree_info = gs_xgb_member(model, "tree_info");
	if (!json_is_array(trees) || !json_is_array(tree_info))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no \"trees\" and \"tree_info\" arrays");
	num_trees = (int64_t) json_array_size(trees);
	{
		int64_t		declared;

		if (gs_xgb_json_to_int64(gs_xgb_member(gs_xgb_member(model, "gbtree_model_param"), "num_trees"), &declared) || declared != num_trees)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: \"num_trees\" does not match the %lld trees present",
								 (long long) num_trees);
	}
	if ((int64_t) json_array_size(tree_info) != num_trees)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"tree_info\" has %zu entries for %lld trees",
							 json_array_size(tree_info), (long long) num_trees);
	if (weights && (int64_t) json_array_size(weights) != num_trees)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"weight_drop\" has %zu entries for %lld trees",
							 json_array_size(weights), (long long) num_trees);
	if (num_trees < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid XGBoost model: it has no trees");
	if ((rc = gs_xgb_best_iteration_trees(learner, model, f, &num_trees, st)) != GS_OK ||
		(rc = gs_xgb_sklearn_missing(learner, f, st)) != GS_OK)
		return rc;
	/*
	 * A tree with vector leaves (multi_strategy="multi_output_tree": one
	 * value per target or class in each leaf) becomes one scalar tree per
	 * target, so it counts n_groups times.
	 */
	for (int32_t t = 0; t < num_trees; t++)
	{
		json_t	   *tparam = gs_xgb_member(json_array_get(trees, (size_t) t), "tree_param");
		int64_t		slv = 0;

		if (gs_xgb_member(tparam, "size_leaf_vector") &&
			(gs_xgb_json_to_int64(gs_xgb_member(tparam, "size_leaf_vector"), &slv) || slv < 0))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d has an invalid \"size_leaf_vector\"", t);
		if (slv > 1 && slv != f->n_groups)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d has leaves of %lld values for %d outputs",
								 t, (long long) slv, f->n_groups);
		n_exp += slv > 1 ? slv : 1;
		if (n_exp > INT32_MAX / 2)
			return gs_status_set(st, GS_ERR_LIMIT, "too many trees");
		if (lim->max_trees > 0 && n_exp > lim->max_trees)
		{
			if (n_exp == t + 1)
				return gs_status_limit(st, GS_LIMIT_TREES, lim->max_trees, "%lld trees, more than the limit of %d",
									 (long long) num_trees, lim->max_trees);
			gs_status_limit(st, GS_LIMIT_TREES, lim->max_trees,
							"more than the limit of %d trees, counting a tree with vector leaves once per output",
						  lim->max_trees);
			gs_status_detail(st, "The model has %lld trees with leaves of %d values.",
							 (long long) num_trees, f->n_groups);
			return st->code;
		}
	}
	*num_trees_out = num_trees;
	*n_exp_out = n_exp;
	return GS_OK;
}

/*
 * Each tree's arrays as a RawTree (raw[e], e the tree in the forest; a
 * vector-leaf tree once per output) and its output group, checked for
 * their lengths; the largest declared tree in *max_nodes_in_tree and their
 * declared nodes in all (a bound of the reachable ones) in *total_nodes.
 */
static GsCode
read_raw_trees(json_t *model, json_t *weights, int64_t num_trees, uint32_t cat_flags,
			   const GsLimits *lim, GsForest *f, RawTree *raw, int32_t *group,
			   int64_t *max_nodes_in_tree, int64_t *total_nodes_out, GsStatus *st)
{
	json_t	   *trees = gs_xgb_member(model, "trees");
	json_t	   *tree_info = gs_xgb_member(model, "tree_info");
	int64_t		largest = 1,
				total_nodes = 0;
	int32_t		t,
				e;
	GsCode		rc;

	for (t = 0, e = 0; t < num_trees; t++)
	{
		json_t	   *tree = json_array_get(trees, (size_t) t);
		json_t	   *tparam = gs_xgb_member(tree, "tree_param");
		json_t	   *split_type = gs_xgb_member(tree, "split_type");
		json_t	   *cat_nodes = gs_xgb_member(tree, "categories_nodes");
		int64_t		tgroup,
					slv = 0;
		RawTree    *rt = &raw[e];

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			return rc;
		if (gs_xgb_json_to_int64(gs_xgb_member(tparam, "num_nodes"), &rt->num_nodes) || rt->num_nodes < 1 || rt->num_nodes > INT32_MAX / 2)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
							   "invalid XGBoost model: tree %d has no valid \"num_nodes\"", t);
		if (gs_xgb_member(tparam, "size_leaf_vector"))
			gs_xgb_json_to_int64(gs_xgb_member(tparam, "size_leaf_vector"), &slv);	/* checked */
		rt->src = (int32_t) t;
		rt->leaf_weights = NULL;
		rt->leaf_by_index = false;
		rt->size_leaf_vector = 1;
		rt->target = 0;
		if (slv > 1)
		{
			/* XGBoost 3.x: "leaf_weights" per leaf; 2.x: "base_weights" per node */
			rt->leaf_weights = gs_xgb_member(tree, "leaf_weights");
			rt->leaf_by_index = rt->leaf_weights != NULL;
			if (rt->leaf_weights == NULL)
				rt->leaf_weights = gs_xgb_member(tree, "base_weights");
			rt->size_leaf_vector = slv;
			if (!json_is_array(rt->leaf_weights) ||
				json_array_size(rt->leaf_weights) % (size_t) slv != 0)
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
								   "invalid XGBoost model: tree %d has vector leaves without their values (\"leaf_weights\" or \"base_weights\", %lld per leaf)",
								   t, (long long) slv);
		}
		rt->sum_hess = lim->keep_covers ? gs_xgb_member(tree, "sum_hessian") : NULL;
		rt->split_type = NULL;
		rt->categories = rt->cat_nodes = rt->cat_segments = rt->cat_sizes = NULL;
		if (split_type && (rc = gs_xgb_tree_array(tree, "split_type", rt->num_nodes, t, &rt->split_type, st)))
			return rc;
		if (cat_nodes)
		{
			rt->cat_nodes = cat_nodes;
			rt->categories = gs_xgb_member(tree, "categories");
			rt->cat_segments = gs_xgb_member(tree, "categories_segments");
			rt->cat_sizes = gs_xgb_member(tree, "categories_sizes");
			if (!json_is_array(cat_nodes) || !json_is_array(rt->categories) ||
				!json_is_array(rt->cat_segments) || !json_is_array(rt->cat_sizes))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
								   "invalid XGBoost model: tree %d has categories_nodes without categories, categories_segments and categories_sizes arrays", t);
		}
		if ((rc = gs_xgb_tree_array(tree, "left_children", rt->num_nodes, t, &rt->left, st)) ||
			(rc = gs_xgb_tree_array(tree, "right_children", rt->num_nodes, t, &rt->right, st)) ||
			(rc = gs_xgb_tree_array(tree, "split_indices", rt->num_nodes, t, &rt->feature, st)) ||
			(rc = gs_xgb_tree_array(tree, "split_conditions", rt->num_nodes, t, &rt->cond, st)) ||
			(rc = gs_xgb_tree_array(tree, "default_left", rt->num_nodes, t, &rt->default_left, st)))
			return rc;
		if (elem_int(tree_info, (size_t) t, &tgroup) || tgroup < 0 || tgroup >= f->n_groups)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
							   "invalid XGBoost model: tree %d belongs to output group %lld of %d",
							   t, (long long) tgroup, f->n_groups);
		group[e] = (int32_t) tgroup;
		rt->weight = 1.0f;
		rt->cat_flags = cat_flags;
		if (weights && (elem_float(weights, (size_t) t, &rt->weight) || !isfinite(rt->weight)))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
							   "invalid XGBoost model: dart weight of tree %d is not a finite number", t);
		if (rt->num_nodes > largest)
			largest = rt->num_nodes;
		/* a vector-leaf tree: one copy per target, each taking its value */
		for (int64_t k = 0; k < rt->size_leaf_vector; k++)
		{
			if (k > 0)
			{
				raw[e + k] = *rt;
				raw[e + k].target = (int32_t) k;
				group[e + k] = (int32_t) k;
			}
			else if (rt->leaf_weights)
				group[e] = 0;
			total_nodes += rt->num_nodes;
			if (lim->max_nodes > 0 && total_nodes > lim->max_nodes)
				return gs_status_limit(st, GS_LIMIT_NODES, lim->max_nodes,
									 "more than the limit of %lld tree nodes",
								   (long long) lim->max_nodes);
		}
		e += rt->size_leaf_vector;
	}
	*max_nodes_in_tree = largest;
	*total_nodes_out = total_nodes;
	return GS_OK;
}

/*
 * The trees of a tree booster's model (gbtree or dart: weights its dart
 * weights, or NULL) into f, through the forest builder.
 */
static GsCode
build_trees(json_t *learner, json_t *model, json_t *weights, uint32_t cat_flags,
			const GsLimits *lim, GsForest *f, GsStatus *st)
{
	int64_t		num_trees = 0,
				n_exp = 0,
				max_nodes_in_tree = 1,
				total_nodes = 0;
	RawTree    *raw = NULL;
	int32_t    *group = NULL,
			   *cat_idx = NULL;
	GsForestBuilder b = {0};
	GsCode		rc;

	if ((rc = count_trees(learner, model, weights, lim, f, &num_trees, &n_exp, st)) != GS_OK)
		return rc;
	raw = f->alloc.alloc(f->alloc.ctx, sizeof(RawTree) * (size_t) n_exp);
	group = f->alloc.alloc(f->alloc.ctx, sizeof(int32_t) * (size_t) n_exp);
	if (!raw || !group)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	if ((rc = read_raw_trees(model, weights, num_trees, cat_flags, lim, f, raw, group,
							 &max_nodes_in_tree, &total_nodes, st)) != GS_OK)
		goto done;

	cat_idx = f->alloc.alloc(f->alloc.ctx, sizeof(int32_t) * (size_t) max_nodes_in_tree);
	if (!cat_idx)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	gs_build_begin(&b, f, lim, "invalid XGBoost model: ", lim->keep_covers ? GS_BUILD_COVERS : 0);
	/* the declared node counts bound the reachable ones */
	if ((rc = gs_build_reserve(&b, n_exp, total_nodes, st)) != GS_OK)
		goto done;
	for (int32_t t = 0; t < n_exp; t++)
	{
		XgbTreeCtx	c = {&raw[t], cat_idx, &b,
			lim->keep_covers && json_is_array(raw[t].sum_hess) &&
		(int64_t) json_array_size(raw[t].sum_hess) == raw[t].num_nodes};
		char		label[32];
		GsBuildTree bt = {label, group[t], raw[t].num_nodes, 0, gs_xgb_tree_node, &c};

		snprintf(label, sizeof(label), "tree %d", raw[t].src);
		if ((rc = gs_xgb_tree_cat_index(&raw[t], raw[t].src, cat_idx, st)) != GS_OK ||
			(rc = gs_build_tree(&b, &bt, st)) != GS_OK)
			goto done;
	}
	if ((rc = gs_build_finish(&b, st)) != GS_OK)
		goto done;

done:
	gs_build_end(&b);
	if (raw)
		f->alloc.free(f->alloc.ctx, raw);
	if (group)
		f->alloc.free(f->alloc.ctx, group);
	if (cat_idx)
		f->alloc.free(f->alloc.ctx, cat_idx);
	return rc;
}

/* The feature names, when the model has one per feature. */
static GsCode
read_feature_names(json_t *learner, GsForest *f, GsStatus *st)
{
	json_t	   *fnames = gs_xgb_member(learner, "feature_names");

	if (json_is_array(fnames) && (int64_t) json_array_size(fnames) == f->n_features)
	{
		f->feature_names = forest_alloc(f, sizeof(char *) * (size_t) f->n_features);
		if (!f->feature_names)
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		for (int32_t i = 0; i < f->n_features; i++)
		{
			json_t	   *s = json_array_get(fnames, (size_t) i);

			f->feature_names[i] = forest_strdup(f, json_is_string(s) ? json_string_value(s) : "");
			if (!f->feature_names[i])
				return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		}
	}
	return GS_OK;
}

/*
 * Build a forest from a decoded XGBoost model document.  f has been
 * allocated and zeroed by the caller, who frees it on failure.  With
 * linear, a linear booster (gblinear) is accepted: f gets everything but
 * trees (objective, base margins, feature names, missing value) and its
 * weights in f->linear_w (linear_weights).
 */
static GsCode
build_forest(json_t *root, const GsLimits *lim, GsForest *f, bool linear,
			 GsStatus *st)
{
	json_t	   *learner = gs_xgb_member(root, "learner");
	json_t	   *mparam = gs_xgb_member(learner, "learner_model_param");
	json_t	   *booster = gs_xgb_member(learner, "gradient_booster");
	json_t	   *model = NULL,
			   *weights = NULL;
	const char *bname;
	const ObjectiveInfo *oi = NULL;
	uint32_t	cat_flags;
	GsCode		rc;

	if (!json_is_object(learner) || !json_is_object(mparam) || !json_is_object(booster))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no \"learner\" object with \"learner_model_param\" and \"gradient_booster\"");
	read_version(gs_xgb_member(root, "version"), f, &cat_flags);
	if ((rc = read_objective(learner, mparam, lim, f, &oi, st)) != GS_OK ||
		(rc = read_base_margin(mparam, oi, f, st)) != GS_OK)
		return rc;

	/* the booster: trees (gbtree, dart) or a linear model */
	if (!json_is_string(gs_xgb_member(booster, "name")))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no booster name");
	bname = json_string_value(gs_xgb_member(booster, "name"));
	if (strcmp(bname, "gbtree") == 0)
		model = gs_xgb_member(booster, "model");
	else if (strcmp(bname, "dart") == 0)
	{
		model = gs_xgb_member(gs_xgb_member(booster, "gbtree"), "model");
		weights = gs_xgb_member(booster, "weight_drop");
		if (!json_is_array(weights))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: dart booster without \"weight_drop\"");
	}
	else if (strcmp(bname, "gblinear") == 0)
	{
		if (!linear)
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "XGBoost booster \"gblinear\" is not a tree ensemble");
			gs_status_detail(st, "gs_model_load reads it as a linear model.");
			return st->code;
		}
		if (f->format == GS_FORMAT_XGBOOST_BINARY)
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED,
						  "XGBoost's linear booster (gblinear) in the legacy binary format is not supported");
			gs_status_detail(st, "Save the model as JSON or UBJSON: booster.save_model(\"model.json\").");
			return st->code;
		}
		snprintf(f->booster, sizeof(f->booster), "%s", bname);
		if ((rc = gs_xgb_linear_weights(gs_xgb_member(gs_xgb_member(booster, "model"), "weights"),
								 lim, f, st)) != GS_OK ||
			(rc = gs_xgb_sklearn_missing(learner, f, st)) != GS_OK)
			return rc;
		return read_feature_names(learner, f, st);
	}
	else
		return gs_status_set(st, GS_ERR_UNSUPPORTED,
							 "XGBoost booster \"%.32s\" is not supported", bname);
	snprintf(f->booster, sizeof(f->booster), "%s", bname);
	if ((rc = build_trees(learner, model, weights, cat_flags, lim, f, st)) != GS_OK ||
		(rc = read_feature_names(learner, f, st)) != GS_OK)
		return rc;
	/* category names of a model trained on a DataFrame (3.1 and later) */
	return gs_xgb_read_cats(model, f, st);
}

/* Parse, validate and build a forest; a linear booster too with linear. */
static GsCode
xgb_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
		 const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
		 bool linear, GsStatus *st)
{
	json_t	   *root = NULL;
	GsForest   *f;
	GsCode		rc;

	*out = NULL;
	if ((rc = gs_load_open(len, &lim, st)) != GS_OK)
		return rc;
	if (fmt != GS_FORMAT_XGBOOST_JSON && fmt != GS_FORMAT_XGBOOST_UBJ &&
		fmt != GS_FORMAT_XGBOOST_BINARY)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "not an XGBoost model format");

	root = fmt == GS_FORMAT_XGBOOST_BINARY ?
		gs_xgb_binary_decode(bytes, len, &lim->interrupt, st) :
		gs_json_decode(bytes, len, fmt, &lim->interrupt, st);
	if (root == NULL)
		return st->code;

	f = alloc->alloc(alloc->ctx, sizeof(GsForest));
	if (f == NULL)
	{
		json_decref(root);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	}
	memset(f, 0, sizeof(GsForest));
	f->alloc = *alloc;
	f->format = fmt;
	rc = build_forest(root, lim, f, linear, st);
	json_decref(root);
	/* the binary format records major.minor only */
	if (rc == GS_OK && fmt == GS_FORMAT_XGBOOST_BINARY)
	{
		char	   *last_dot = strrchr(f->saved_by, '.');

		if (last_dot != NULL)
			snprintf(last_dot, sizeof(f->saved_by) - (size_t) (last_dot - f->saved_by), " (binary)");
		else if (f->saved_by[0] == '\0')
			snprintf(f->saved_by, sizeof(f->saved_by), "xgboost before 1.0 (binary)");
	}
	if (rc != GS_OK)
	{
		gs_forest_free(f);
		return rc;
	}
	*out = f;
	return GS_OK;
}

/* Parse, validate and build a forest; see xgboost.h. */
GsCode
gs_xgb_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
			GsStatus *st)
{
	return xgb_load(bytes, len, fmt, lim, alloc, out, false, st);
}

/* The same, linear boosters too; see xgboost.h. */
GsCode
gs_xgb_load_any(const unsigned char *bytes, size_t len, GsModelFormat fmt,
				const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
				GsStatus *st)
{
	return xgb_load(bytes, len, fmt, lim, alloc, out, true, st);
}

/*
 * lgbm_load.c
 *	  Reads LightGBM text models (Booster.save_model / model_to_string,
 *	  format version v2-v4), validates them and builds a GsForest.
 *
 * Our own parser: LightGBM's loader never sees the bytes.  The text is
 * copied once into a NUL-terminated buffer (malloc'd from the caller's
 * allocator, freed before returning; lgbm_text.c reads lines and numbers
 * from it and parses tree blocks); the header (num_class,
 * num_tree_per_iteration, max_feature_idx, objective, average_output,
 * feature_names) is read, the "Tree=" blocks are located, and each tree is
 * parsed twice: a first pass checks counts, indices, decision types,
 * category bitsets and reachability (every node and leaf reached exactly
 * once from the root: no cycles, no sharing) and sizes the forest against
 * the caller's caps; the second pass lays the tree out breadth-first into
 * the forest, as for XGBoost (forest.h).
 *
 * LightGBM's decisions map onto the forest's as follows (see
 * include/LightGBM/tree.h, NumericalDecision / CategoricalDecision):
 *	- numerical: x <= threshold goes left.  The threshold is a double and the
 *	  row's float is compared in double, so we store the float just above the
 *	  largest float <= threshold and compare with <; |x| <= 1e-35 counts as
 *	  0.0, as LightGBM's predictor drops it from the row (lgbm_threshold).
 *	  Missing type None: NaN
 *	  is taken as 0.0 (default direction = where 0.0 goes); type Zero: NaN and
 *	  |x| <= 1e-35 take the default direction (GS_NODE_ZERO_MISSING); type
 *	  NaN: NaN takes the default direction.
 *	- categorical: a code (truncated toward zero, so (-1, 0) is code 0) in
 *	  the node's bitset goes LEFT, anything else (NaN, negative, past the
 *	  bitset) right.  The forest's rule is the mirror image (in the set goes
 *	  right), so the node's children are stored swapped and NaN defaults to
 *	  the (stored) left child.
 * Linear trees (linear_tree=true) also keep a linear model per leaf, laid
 * out by lgbm_linear.c into GsForest.linear.
 * Leaf values and thresholds are doubles in LightGBM and become floats here;
 * LightGBM also sums and transforms in double, so scores agree to about
 * 1e-6 relative, not bit for bit (docs/reference.md).
 */
#include "lgbm_internal.h"
#include "lightgbm.h"
#include "frontend/common/load_checks.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8_valid.h"

#define LGBM_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* What the whole model says, from its header. */
typedef struct LHeader
{
	int64_t		num_class;
	int64_t		per_iter;		/* num_tree_per_iteration */
	int			has_per_iter;	/* the header says it (LightGBM 2.0 on) */
	int64_t		max_feature_idx;
	int			average_output;
	const char *objective;		/* points into the text, up to end of line */
	const char *feature_names;
	char		version[16];
} LHeader;

/*
 * LightGBM's kZeroThreshold.  Its predictor leaves a value with |x| <= this
 * out of a dense row (as a sparse zero), so such a value reaches every tree
 * as 0.0, whatever the node's missing type.
 */
#define LGBM_ZERO_THRESHOLD 1e-35f

/*
 * The float whose "x < value" equals LightGBM's decision "x <= t" for every
 * float x: the next float above the largest float <= t.  A threshold among
 * the values that count as 0.0 (|x| <= 1e-35) decides them all as it decides
 * 0.0: all left (x <= 1e-35 goes left) when 0 <= t, all right (only
 * x < -1e-35 goes left) when t < 0; LightGBM writes such thresholds
 * (+-1.0000000180025095e-35, kZeroThreshold itself) for splits at zero.
 */
static float
lgbm_threshold(double t)
{
	float		f = (float) t;

	if (t >= -(double) LGBM_ZERO_THRESHOLD && t < (double) LGBM_ZERO_THRESHOLD)
		return 0.0 <= t ? nextafterf(LGBM_ZERO_THRESHOLD, INFINITY) : -LGBM_ZERO_THRESHOLD;
	if ((double) f > t)
		f = nextafterf(f, -INFINITY);
	return nextafterf(f, INFINITY);
}

/*
 * Check tree t (walk from the root: children in range, everything reached
 * once, features in range, decision types valid, category indices valid)
 * and, when nodes is not NULL, lay it out breadth-first into nodes with its
 * category sets appended to cat_words at *cat_pos.  Counts go to *n_nodes,
 * *depth, *cat_pos (words) and *n_cat.  scratch holds 2 * (2 * num_leaves)
 * int32 and 2 * num_leaves bytes.  leaf_scale multiplies leaf values; a
 * leaf's double goes to nodes (the nearest float) and leaf_lo (the float
 * nearest the rest), see GsForest.leaf_lo.  cover (or NULL) takes each
 * node's training-row count (NaN when the tree has none).
 */
static GsCode
walk_ltree(const LTree *t, int32_t ti, int32_t n_features, int32_t max_depth,
		   double leaf_scale, int32_t *queue, int32_t *level, unsigned char *seen,
		   GsNode *nodes, float *leaf_lo, double *cover, uint32_t *cat_words, int64_t *cat_pos,
		   int32_t *n_cat, int64_t *n_nodes, int32_t *depth, GsStatus *st)
{
	int64_t		n_int = t->num_leaves - 1;
	int64_t		head = 0,
				tail = 0;
	int32_t		deepest = 0;

	/* items: internal node i as i, leaf j as n_int + j */
	memset(seen, 0, (size_t) (2 * t->num_leaves));
	queue[tail] = n_int > 0 ? 0 : (int32_t) n_int;
	level[tail++] = 0;
	seen[queue[0]] = 1;
	while (head < tail)
	{
		int32_t		item = queue[head];
		int32_t		lv = level[head];

		if (item >= n_int)
		{
			double		lvv = t->leaf_value[item - n_int] * leaf_scale;

			if (!isfinite(lvv) || !isfinite((float) lvv))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d leaf %lld has a non-finite value",
								ti, (long long) (item - n_int));
			if (nodes)
			{
				nodes[head].value = (float) lvv;
				nodes[head].info = GS_NODE_LEAF;
				nodes[head].left = 0;
				leaf_lo[head] = (float) (lvv - (double) (float) lvv);
			}
			if (cover)
				cover[head] = t->leaf_count ? t->leaf_count[item - n_int] : NAN;
			if (lv > deepest)
				deepest = lv;
		}
		else
		{
			int32_t		dt = t->decision_type[item];
			int32_t		feat = t->split_feature[item];
			int32_t		c[2];
			int			cat = dt & 1;
			int			missing = (dt >> 2) & 3;
			uint32_t	info = (uint32_t) feat;
			float		value;

			if (feat >= n_features)
				return LGBM_ERR(st, "invalid LightGBM model: tree %d node %d splits on feature %d, but the model has %d features",
								ti, item, feat, n_features);
			if (missing == 3 || (dt & ~15) != 0)
				return LGBM_ERR(st, "invalid LightGBM model: tree %d node %d has invalid decision_type %d", ti, item, dt);
			if (lv + 1 > max_depth)
				return gs_status_limit(st, GS_LIMIT_DEPTH, max_depth,
									   "tree %d is deeper than the limit of %d levels", ti, max_depth);
			c[0] = t->left[item] >= 0 ? t->left[item] : (int32_t) (n_int + ~t->left[item]);
			c[1] = t->right[item] >= 0 ? t->right[item] : (int32_t) (n_int + ~t->right[item]);
			if (seen[c[0]] || seen[c[1]] || c[0] == c[1])
				return LGBM_ERR(st, "invalid LightGBM model: tree %d is not a tree (node %d links to an already reached node)", ti, item);
			if (cat)
			{
				double		th = t->threshold[item];
				int64_t		ci,
							w0,
							nw;
				uint32_t	set32;

				if (!(th >= 0.0 && th < (double) t->num_cat) || th != floor(th))
					return LGBM_ERR(st, "invalid LightGBM model: tree %d node %d has category set index %g, but the tree has %lld",
									ti, item, th, (long long) t->num_cat);
				ci = (int64_t) th;
				w0 = t->cat_boundaries[ci];
				nw = t->cat_boundaries[ci + 1] - w0;
				if (*cat_pos + 1 + nw > ((int64_t) 1 << 24))
					return gs_status_set(st, GS_ERR_LIMIT,
										 "the category sets of the model's categorical splits exceed the limit of %lld words",
										 (long long) 1 << 24);
				set32 = (uint32_t) *cat_pos;
				if (nodes)
				{
					cat_words[*cat_pos] = (uint32_t) nw | GS_CAT_TRUNC_NEGATIVE;
					memcpy(cat_words + *cat_pos + 1, t->cat_threshold + w0, sizeof(uint32_t) * (size_t) nw);
				}
				*cat_pos += 1 + nw;
				(*n_cat)++;
				memcpy(&value, &set32, sizeof(value));
				/* in the set goes to LightGBM's left: store children swapped */
				{
					int32_t		tmp = c[0];

					c[0] = c[1];
					c[1] = tmp;
				}
				info |= GS_NODE_CATEGORICAL | GS_NODE_DEFAULT_LEFT;
			}
			else
			{
				double		th = t->threshold[item];

				/*
				 * LightGBM writes "inf" (or "-inf") when a split sends every
				 * present value one way and only missing ones the other;
				 * lgbm_threshold maps it to float +inf (-FLT_MAX), exact for
				 * every finite input, and inputs are never infinite (the glue
				 * rejects them).  NaN is no threshold.
				 */
				if (isnan(th))
					return LGBM_ERR(st, "invalid LightGBM model: tree %d node %d has a NaN threshold", ti, item);
				value = lgbm_threshold(th);
				if (missing == 0)
					info |= 0.0 <= th ? GS_NODE_DEFAULT_LEFT : 0;
				else
				{
					info |= (dt & 2) ? GS_NODE_DEFAULT_LEFT : 0;
					if (missing == 1)
						info |= GS_NODE_ZERO_MISSING;
				}
			}
			if (nodes)
			{
				nodes[head].value = value;
				nodes[head].info = info;
				nodes[head].left = (uint32_t) tail;
			}
			if (cover)
				cover[head] = t->internal_count ? t->internal_count[item] : NAN;
			seen[c[0]] = seen[c[1]] = 1;
			queue[tail] = c[0];
			level[tail++] = lv + 1;
			queue[tail] = c[1];
			level[tail++] = lv + 1;
		}
		head++;
	}
	if (tail != 2 * t->num_leaves - 1)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has %lld nodes not reachable from its root",
						ti, (long long) (2 * t->num_leaves - 1 - tail));
	*n_nodes = tail;
	*depth = deepest;
	return GS_OK;
}

/* Objective name to transform; sets n_groups rules.  Returns 0 if known. */
static int
lgbm_objective(const char *obj, size_t n, GsTransform *tf, int *multiclass,
			   double *sigmoid, int *sqrt_out)
{
	/* sqrt: the objective honours reg_sqrt ("sqrt" after the name) */
	static const struct
	{
		const char *name;
		GsTransform tf;
		int			multi;
		int			sqrt;
	}			objs[] = {
		{"binary", GS_TRANSFORM_SIGMOID, 0, 0},
		{"cross_entropy", GS_TRANSFORM_SIGMOID, 0, 0},
		{"xentropy", GS_TRANSFORM_SIGMOID, 0, 0},
		{"cross_entropy_lambda", GS_TRANSFORM_SOFTPLUS, 0, 0},
		{"xentlambda", GS_TRANSFORM_SOFTPLUS, 0, 0},
		{"regression", GS_TRANSFORM_IDENTITY, 0, 1},
		{"regression_l1", GS_TRANSFORM_IDENTITY, 0, 1},
		{"huber", GS_TRANSFORM_IDENTITY, 0, 0},
		{"fair", GS_TRANSFORM_IDENTITY, 0, 1},
		{"quantile", GS_TRANSFORM_IDENTITY, 0, 1},
		{"mape", GS_TRANSFORM_IDENTITY, 0, 1},
		{"poisson", GS_TRANSFORM_EXP, 0, 0},
		{"gamma", GS_TRANSFORM_EXP, 0, 0},
		{"tweedie", GS_TRANSFORM_EXP, 0, 0},
		{"lambdarank", GS_TRANSFORM_IDENTITY, 0, 0},
		{"rank_xendcg", GS_TRANSFORM_IDENTITY, 0, 0},
		{"multiclass", GS_TRANSFORM_SOFTMAX, 1, 0},
		{"multiclassova", GS_TRANSFORM_SIGMOID, 1, 0},
	};
	size_t		nl = 0;

	while (nl < n && obj[nl] != ' ')
		nl++;
	*sigmoid = 1.0;
	*sqrt_out = 0;
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		if (strlen(objs[i].name) == nl && strncmp(objs[i].name, obj, nl) == 0)
		{
			*tf = objs[i].tf;
			*multiclass = objs[i].multi;
			/* parameters: "sigmoid:1", "num_class:3", "sqrt" */
			for (size_t k = nl; k < n;)
			{
				while (k < n && obj[k] == ' ')
					k++;
				if (k + 8 <= n && strncmp(obj + k, "sigmoid:", 8) == 0)
					*sigmoid = strtod(obj + k + 8, NULL);
				else if (k + 4 <= n && strncmp(obj + k, "sqrt", 4) == 0 &&
						 (k + 4 == n || obj[k + 4] == ' '))
					*sqrt_out = objs[i].sqrt;	/* others ignore it, as LightGBM */
				while (k < n && obj[k] != ' ')
					k++;
			}
			return 0;
		}
	return -1;
}

/*
 * Build the forest from the NUL-terminated text.  f is zeroed, with its
 * allocator set; the caller frees it on failure.
 */
static GsCode
build_lgbm(const char *text, const GsLimits *lim, GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	LHeader		h;
	const char *p;
	const char **tree_at = NULL;
	int64_t		n_trees = 0,
				cap_trees = lim->max_trees > 0 ? lim->max_trees : INT32_MAX / 2;
	int64_t		max_leaves = lim->max_nodes > 0 ? lim->max_nodes : INT32_MAX / 4;
	int64_t		total_nodes = 0,
				cat_pos = 0,
				max_tree_leaves = 1,
				total_terms = 0,
				term_pos = 0;
	bool		any_linear = false;
	int32_t		n_cat = 0;
	int32_t    *queue = NULL,
			   *level = NULL;
	unsigned char *seen = NULL;
	LTree		lt;
	GsCode		rc = GS_OK;
	GsTransform tf = GS_TRANSFORM_IDENTITY;
	int			multiclass = 0,
				use_sqrt = 0;
	double		sigmoid = 1.0,
				leaf_scale = 1.0;
	int32_t		max_depth = lim->max_depth > 0 ? lim->max_depth : INT32_MAX - 1;

	memset(&h, 0, sizeof(h));
	memset(&lt, 0, sizeof(lt));
	h.num_class = 1;
	h.per_iter = 1;
	h.max_feature_idx = -1;
	if (strncmp(text, "tree", 4) != 0 || (text[4] != '\n' && text[4] != '\r'))
		return LGBM_ERR(st, "invalid LightGBM model: it does not start with \"tree\"");

	/* header: up to the first tree */
	for (p = gs_lgbm_next_line(text); p && *p && strncmp(p, "Tree=", 5) != 0 && !gs_lgbm_trees_end(p);
		 p = gs_lgbm_next_line(p))
	{
		const char *v;

		if (gs_lgbm_line_key(p, "version", &v))
			snprintf(h.version, sizeof(h.version), "%.*s", (int) strcspn(v, " \r\n"), v);
		else if (gs_lgbm_line_key(p, "num_class", &v))
		{
			if (gs_lgbm_parse_int(&v, &h.num_class) || h.num_class < 1 || h.num_class > 100000)
				return LGBM_ERR(st, "invalid LightGBM model: invalid num_class");
		}
		else if (gs_lgbm_line_key(p, "num_tree_per_iteration", &v))
		{
			if (gs_lgbm_parse_int(&v, &h.per_iter) || h.per_iter < 1 || h.per_iter > 100000)
				return LGBM_ERR(st, "invalid LightGBM model: invalid num_tree_per_iteration");
			h.has_per_iter = 1;
		}
		else if (gs_lgbm_line_key(p, "max_feature_idx", &v))
		{
			if (gs_lgbm_parse_int(&v, &h.max_feature_idx) || h.max_feature_idx < 0)
				return LGBM_ERR(st, "invalid LightGBM model: invalid max_feature_idx");
		}
		else if (gs_lgbm_line_key(p, "objective", &v))
			h.objective = v;
		else if (gs_lgbm_line_key(p, "feature_names", &v))
			h.feature_names = v;
		else if (gs_lgbm_line_is(p, "average_output"))
			h.average_output = 1;
	}
	if (h.max_feature_idx < 0)
		return LGBM_ERR(st, "invalid LightGBM model: no max_feature_idx");
	if (lim->max_features > 0 && h.max_feature_idx + 1 > lim->max_features)
		return gs_status_limit(st, GS_LIMIT_FEATURES, lim->max_features, "%lld features, more than the limit of %d",
							 (long long) h.max_feature_idx + 1, lim->max_features);
	if (h.max_feature_idx + 1 > (int64_t) GS_NODE_FEATURE_MASK)
		return gs_status_set(st, GS_ERR_LIMIT, "too many features");
	f->n_features = (int32_t) (h.max_feature_idx + 1);
	snprintf(f->saved_by, sizeof(f->saved_by), "lightgbm (format %.8s)",
			 h.version[0] ? h.version : "unknown");

	/* objective */
	if (h.objective == NULL)
	{
		/*
		 * A model trained with a custom objective (a callable, or
		 * objective="none") names none: LightGBM's predict, and the
		 * scikit-learn API's predict_proba, give its raw scores, one per
		 * class when it has several.
		 */
		tf = GS_TRANSFORM_IDENTITY;
		multiclass = h.num_class > 1;
		snprintf(f->objective, sizeof(f->objective), "custom");
	}
	else
	{
		size_t		n = strcspn(h.objective, "\r\n");

		if (lgbm_objective(h.objective, n, &tf, &multiclass, &sigmoid, &use_sqrt))
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "LightGBM objective \"%.*s\" is not supported",
						  (int) (strcspn(h.objective, " \r\n") < 64 ? strcspn(h.objective, " \r\n") : 64),
						  h.objective);
			gs_status_detail(st, "Supported objectives: binary, cross_entropy, cross_entropy_lambda, regression, regression_l1, huber, fair, quantile, mape, poisson, gamma, tweedie, multiclass, multiclassova, lambdarank, rank_xendcg.");
			return st->code;
		}
		/*
		 * LightGBM's sigmoid parameter: p = 1 / (1 + exp(-sigmoid * score)).
		 * The leaves are scaled by it instead (exact up to float rounding:
		 * LightGBM multiplies the double sum).
		 */
		if (!(isfinite(sigmoid) && sigmoid > 0.0 && sigmoid <= 1e6) ||
			(sigmoid != 1.0 && tf != GS_TRANSFORM_SIGMOID))
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "LightGBM sigmoid parameter %g is not supported", sigmoid);
			gs_status_detail(st, "The sigmoid parameter must be a positive number, and only objectives with a sigmoid transform (binary, multiclassova) use it.");
			return st->code;
		}
		/*
		 * reg_sqrt: trained on sign(y) sqrt(|y|), so predict squares back;
		 * gpu_models says "regression sqrt", as the file
		 */
		if (use_sqrt)
			tf = GS_TRANSFORM_SIGNED_SQUARE;
		snprintf(f->objective, sizeof(f->objective), "%.*s%s",
				 (int) strcspn(h.objective, " \r\n") < 58 ? (int) strcspn(h.objective, " \r\n") : 58,
				 h.objective, use_sqrt ? " sqrt" : "");
	}
	if (multiclass ? h.num_class != h.per_iter || h.num_class < 2 : h.per_iter != 1 || h.num_class != 1)
		return LGBM_ERR(st, "invalid LightGBM model: num_class %lld and num_tree_per_iteration %lld do not fit objective \"%s\"",
						(long long) h.num_class, (long long) h.per_iter, f->objective);
	f->transform = tf;
	f->n_groups = (int32_t) h.per_iter;
	f->n_outputs = f->n_groups;
	snprintf(f->booster, sizeof(f->booster), "%s", h.average_output ? "rf" : "gbdt");

	/*
	 * locate the trees; "end of trees" (or, before LightGBM 2.2, "feature
	 * importances:") must follow them, else the file is truncated
	 */
	{
		const char *q;

		for (q = p; q && *q && !gs_lgbm_trees_end(q); q = gs_lgbm_next_line(q))
			if (strncmp(q, "Tree=", 5) == 0)
			{
				if (++n_trees > cap_trees)
					return gs_status_limit(st, GS_LIMIT_TREES, cap_trees, "more than the limit of %lld trees",
										 (long long) cap_trees);
			}
		if (!q || !*q)
			return LGBM_ERR(st, "invalid LightGBM model: no \"end of trees\" line (the model is truncated)");
		/* files of LightGBM before 2.0: another layout, which LightGBM no longer reads */
		if (!gs_lgbm_line_is(q, "end of trees") && !h.has_per_iter)
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "LightGBM model files from before LightGBM 2.0 are not supported");
			gs_status_detail(st, "The header has no num_tree_per_iteration line; LightGBM 2.0 and later do not read such files either. Load the model with the LightGBM that wrote it and save it with a current one.");
			return st->code;
		}
	}
	if (n_trees < 1)
		return LGBM_ERR(st, "invalid LightGBM model: it has no trees");
	if (n_trees % h.per_iter != 0)
		return LGBM_ERR(st, "invalid LightGBM model: %lld trees is not a multiple of num_tree_per_iteration %lld",
						(long long) n_trees, (long long) h.per_iter);
	if (h.average_output)
		leaf_scale = 1.0 / (double) (n_trees / h.per_iter);
	leaf_scale *= sigmoid;		/* 1 unless a sigmoid transform has its parameter */
	f->n_trees = (int32_t) n_trees;
	tree_at = gs_lgbm_lalloc(a, sizeof(char *) * (size_t) n_trees);
	f->tree_offset = gs_lgbm_lalloc(a, sizeof(uint32_t) * (size_t) n_trees);
	f->tree_group = gs_lgbm_lalloc(a, sizeof(int32_t) * (size_t) n_trees);
	f->tree_depth = gs_lgbm_lalloc(a, sizeof(int32_t) * (size_t) n_trees);
	f->base_margin = gs_lgbm_lalloc(a, sizeof(float) * (size_t) f->n_groups);
	if (!tree_at || !f->tree_offset || !f->tree_group || !f->tree_depth || !f->base_margin)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	n_trees = 0;
	for (const char *q = p; q && *q && !gs_lgbm_trees_end(q); q = gs_lgbm_next_line(q))
		if (strncmp(q, "Tree=", 5) == 0)
		{
			int64_t		idx;
			const char *v = q + 5;

			if (gs_lgbm_parse_int(&v, &idx) || idx != n_trees || !gs_lgbm_at_line_end(v))
			{
				rc = LGBM_ERR(st, "invalid LightGBM model: tree %lld is not numbered %lld",
							  (long long) n_trees, (long long) n_trees);
				goto done;
			}
			tree_at[n_trees++] = gs_lgbm_next_line(q);
		}

	/* pass 1: parse and validate every tree, count */
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		n;
		int32_t		depth;

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		if ((rc = gs_lgbm_parse_tree(a, tree_at[t], t, max_leaves, false, &lt, st)))
			goto done;
		if (lt.num_leaves > max_tree_leaves)
		{
			if (queue)
				a->free(a->ctx, queue);
			if (level)
				a->free(a->ctx, level);
			if (seen)
				a->free(a->ctx, seen);
			max_tree_leaves = lt.num_leaves;
			queue = gs_lgbm_lalloc(a, sizeof(int32_t) * (size_t) (2 * max_tree_leaves));
			level = gs_lgbm_lalloc(a, sizeof(int32_t) * (size_t) (2 * max_tree_leaves));
			seen = gs_lgbm_lalloc(a, (size_t) (2 * max_tree_leaves));
		}
		else if (!queue)
		{
			queue = gs_lgbm_lalloc(a, sizeof(int32_t) * 2);
			level = gs_lgbm_lalloc(a, sizeof(int32_t) * 2);
			seen = gs_lgbm_lalloc(a, 2);
		}
		if (!queue || !level || !seen)
		{
			rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			goto done;
		}
		rc = walk_ltree(&lt, t, f->n_features, max_depth, leaf_scale, queue, level, seen,
						NULL, NULL, NULL, NULL, &cat_pos, &n_cat, &n, &depth, st);
		if (rc == GS_OK)
			rc = gs_lgbm_linear_leaves(&lt, t, f->n_features, leaf_scale, queue, n,
									   NULL, 0, NULL, st);
		if (lt.leaf_const)
			any_linear = true;
		total_terms += lt.n_terms;
		gs_lgbm_ltree_free(a, &lt);
		if (rc)
			goto done;
		if (total_terms >= (int64_t) UINT32_MAX)
		{
			rc = gs_status_set(st, GS_ERR_LIMIT, "the leaves of the linear trees have more than %lld terms",
							   (long long) UINT32_MAX - 1);
			goto done;
		}
		f->tree_offset[t] = (uint32_t) total_nodes;
		f->tree_group[t] = (int32_t) (t % h.per_iter);
		f->tree_depth[t] = depth;
		if (depth > f->max_depth)
			f->max_depth = depth;
		total_nodes += n;
		if ((lim->max_nodes > 0 && total_nodes > lim->max_nodes) || total_nodes > (int64_t) UINT32_MAX)
		{
			rc = gs_status_limit(st, GS_LIMIT_NODES, lim->max_nodes > 0 ? lim->max_nodes : (int64_t) UINT32_MAX,
								 "more than the limit of %lld tree nodes",
								 (long long) (lim->max_nodes > 0 ? lim->max_nodes : (int64_t) UINT32_MAX));
			goto done;
		}
	}

	/* pass 2: lay out */
	f->n_nodes = total_nodes;
	f->nodes = gs_lgbm_lalloc(a, sizeof(GsNode) * (size_t) total_nodes);
	f->leaf_lo = gs_lgbm_lalloc(a, sizeof(float) * (size_t) total_nodes);
	if (cat_pos > 0)
		f->cat_words = gs_lgbm_lalloc(a, sizeof(uint32_t) * (size_t) cat_pos);
	if (lim->keep_covers)
		f->cover = gs_lgbm_lalloc(a, sizeof(double) * (size_t) total_nodes);
	if (any_linear)
		f->linear = gs_linear_leaves_new(a, total_nodes, total_terms);
	if (!f->nodes || !f->leaf_lo || (cat_pos > 0 && !f->cat_words) ||
		(lim->keep_covers && !f->cover) || (any_linear && !f->linear))
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	f->n_cat_words = cat_pos;
	f->n_cat_splits = n_cat;
	cat_pos = 0;
	n_cat = 0;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		n;
		int32_t		depth;

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		if ((rc = gs_lgbm_parse_tree(a, tree_at[t], t, max_leaves, f->cover != NULL, &lt, st)))
			goto done;
		rc = walk_ltree(&lt, t, f->n_features, INT32_MAX - 1, leaf_scale, queue, level, seen,
						f->nodes + f->tree_offset[t], f->leaf_lo + f->tree_offset[t],
						f->cover ? f->cover + f->tree_offset[t] : NULL,
						f->cat_words, &cat_pos, &n_cat,
						&n, &depth, st);
		if (rc == GS_OK && f->linear)
			rc = gs_lgbm_linear_leaves(&lt, t, f->n_features, leaf_scale, queue, n,
									   f->linear, f->tree_offset[t], &term_pos, st);
		gs_lgbm_ltree_free(a, &lt);
		if (rc)
			goto done;
	}
	if (f->linear)
	{
		if (term_pos != total_terms)
		{
			/* the same text parsed twice: cannot differ */
			rc = LGBM_ERR(st, "invalid LightGBM model: the linear trees' terms changed between passes");
			goto done;
		}
		f->linear->start[f->n_nodes] = (uint32_t) term_pos;
	}

	gs_forest_check_covers(f);
	for (int64_t i = 0; i < f->n_nodes; i++)
		if (!(f->nodes[i].info & GS_NODE_LEAF))
			f->split_kinds |= f->nodes[i].info & (GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING);

	/* feature names, when there is one per feature */
	if (h.feature_names)
	{
		const char *v = h.feature_names;
		int32_t		k = 0;
		bool		keep;

		f->feature_names = gs_lgbm_lalloc(a, sizeof(char *) * (size_t) f->n_features);
		if (!f->feature_names)
		{
			rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			goto done;
		}
		while (k < f->n_features && !gs_lgbm_at_line_end(v))
		{
			size_t		len;

			v = gs_lgbm_skip_blanks(v);
			len = strcspn(v, " \t\r\n");
			f->feature_names[k] = gs_lgbm_lalloc(a, len + 1);
			if (!f->feature_names[k])
			{
				rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
				goto done;
			}
			memcpy(f->feature_names[k++], v, len);
			v += len;
		}
		keep = k == f->n_features && gs_lgbm_at_line_end(v);
		/* names become PostgreSQL text: each valid UTF-8 */
		for (int32_t i = 0; keep && i < k; i++)
			keep = gs_utf8_valid((const unsigned char *) f->feature_names[i],
								 strlen(f->feature_names[i]));
		if (!keep)
		{
			/* not one name per feature, or one not UTF-8: keep none */
			for (int32_t i = 0; i < k; i++)
				a->free(a->ctx, f->feature_names[i]);
			a->free(a->ctx, f->feature_names);
			f->feature_names = NULL;
		}
	}

	/* category names of a model trained on a pandas DataFrame */
	rc = gs_lgbm_read_cats(text, f, st);

done:
	gs_lgbm_ltree_free(a, &lt);
	if (tree_at)
		a->free(a->ctx, (void *) tree_at);
	if (queue)
		a->free(a->ctx, queue);
	if (level)
		a->free(a->ctx, level);
	if (seen)
		a->free(a->ctx, seen);
	return rc;
}

/* Parse, validate and build; see lightgbm.h. */
GsCode
gs_lgbm_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			 const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
			 GsStatus *st)
{
	GsForest   *f;
	char	   *text;
	GsCode		rc;

	*out = NULL;
	if ((rc = gs_load_open(len, &lim, st)) != GS_OK)
		return rc;
	if (fmt != GS_FORMAT_AUTO && fmt != GS_FORMAT_LIGHTGBM)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "not a LightGBM model format");
	if (memchr(bytes, '\0', len) != NULL)
		return LGBM_ERR(st, "invalid LightGBM model: it contains a zero byte");
	text = alloc->alloc(alloc->ctx, len + 1);
	if (text == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	memcpy(text, bytes, len);
	text[len] = '\0';
	f = gs_lgbm_lalloc(alloc, sizeof(GsForest));
	if (f == NULL)
	{
		alloc->free(alloc->ctx, text);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	}
	f->alloc = *alloc;
	f->format = GS_FORMAT_LIGHTGBM;
	rc = build_lgbm(text, lim, f, st);
	alloc->free(alloc->ctx, text);
	if (rc != GS_OK)
	{
		gs_forest_free(f);
		return rc;
	}
	*out = f;
	return GS_OK;
}

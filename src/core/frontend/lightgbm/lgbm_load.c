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
 * feature_names) is read here, the "Tree=" blocks are located (a scan of
 * lines, no parse: the count of trees sets the leaf scale of a random
 * forest), and lgbm_trees.c parses each tree once and feeds it to the
 * forest builder (forest/forest_build.h), which lays it out breadth-first
 * and checks it.  The frontend then runs gs_forest_check on the forest.
 *
 * How LightGBM's decisions map onto the forest's is told in lgbm_trees.c.
 * Linear trees (linear_tree=true) also keep a linear model per leaf, laid
 * out by lgbm_linear.c into GsForest.linear.
 * Leaf values and thresholds are doubles in LightGBM and become floats here;
 * LightGBM also sums and transforms in double, so scores agree to about
 * 1e-6 relative, not bit for bit (docs/reference.md).
 */
#include "lgbm_internal.h"
#include "lightgbm.h"
#include "frontend/common/load_checks.h"

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
 * Read the header of the NUL-terminated text, up to its first tree, into
 * *h; *trees receives the line where the trees start (the first "Tree=",
 * or the end of the trees, or NULL).
 */
static GsCode
read_header(const char *text, LHeader *h, const char **trees, GsStatus *st)
{
	const char *p;

	memset(h, 0, sizeof(*h));
	h->num_class = 1;
	h->per_iter = 1;
	h->max_feature_idx = -1;
	if (strncmp(text, "tree", 4) != 0 || (text[4] != '\n' && text[4] != '\r'))
		return LGBM_ERR(st, "invalid LightGBM model: it does not start with \"tree\"");
	for (p = gs_lgbm_next_line(text); p && *p && strncmp(p, "Tree=", 5) != 0 && !gs_lgbm_trees_end(p);
		 p = gs_lgbm_next_line(p))
	{
		const char *v;

		if (gs_lgbm_line_key(p, "version", &v))
			snprintf(h->version, sizeof(h->version), "%.*s", (int) strcspn(v, " \r\n"), v);
		else if (gs_lgbm_line_key(p, "num_class", &v))
		{
			if (gs_lgbm_parse_int(&v, &h->num_class) || h->num_class < 1 || h->num_class > 100000)
				return LGBM_ERR(st, "invalid LightGBM model: invalid num_class");
		}
		else if (gs_lgbm_line_key(p, "num_tree_per_iteration", &v))
		{
			if (gs_lgbm_parse_int(&v, &h->per_iter) || h->per_iter < 1 || h->per_iter > 100000)
				return LGBM_ERR(st, "invalid LightGBM model: invalid num_tree_per_iteration");
			h->has_per_iter = 1;
		}
		else if (gs_lgbm_line_key(p, "max_feature_idx", &v))
		{
			if (gs_lgbm_parse_int(&v, &h->max_feature_idx) || h->max_feature_idx < 0)
				return LGBM_ERR(st, "invalid LightGBM model: invalid max_feature_idx");
		}
		else if (gs_lgbm_line_key(p, "objective", &v))
			h->objective = v;
		else if (gs_lgbm_line_key(p, "feature_names", &v))
			h->feature_names = v;
		else if (gs_lgbm_line_is(p, "average_output"))
			h->average_output = 1;
	}
	if (h->max_feature_idx < 0)
		return LGBM_ERR(st, "invalid LightGBM model: no max_feature_idx");
	*trees = p;
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
 * The model-level fields of f from header h: its features (against the
 * caps), saved_by, objective, transform, groups and booster.  *sigmoid
 * receives LightGBM's sigmoid parameter (1 unless the objective has one).
 */
static GsCode
model_kind(const LHeader *h, const GsLimits *lim, GsForest *f, double *sigmoid, GsStatus *st)
{
	GsTransform tf = GS_TRANSFORM_IDENTITY;
	int			multiclass = 0,
				use_sqrt = 0;

	*sigmoid = 1.0;
	if (lim->max_features > 0 && h->max_feature_idx + 1 > lim->max_features)
		return gs_status_limit(st, GS_LIMIT_FEATURES, lim->max_features, "%lld features, more than the limit of %d",
							   (long long) h->max_feature_idx + 1, lim->max_features);
	if (h->max_feature_idx + 1 > (int64_t) GS_NODE_FEATURE_MASK)
		return gs_status_set(st, GS_ERR_LIMIT, "too many features");
	f->n_features = (int32_t) (h->max_feature_idx + 1);
	snprintf(f->saved_by, sizeof(f->saved_by), "lightgbm (format %.8s)",
			 h->version[0] ? h->version : "unknown");

	if (h->objective == NULL)
	{
		/*
		 * A model trained with a custom objective (a callable, or
		 * objective="none") names none: LightGBM's predict, and the
		 * scikit-learn API's predict_proba, give its raw scores, one per
		 * class when it has several.
		 */
		tf = GS_TRANSFORM_IDENTITY;
		multiclass = h->num_class > 1;
		snprintf(f->objective, sizeof(f->objective), "custom");
	}
	else
	{
		size_t		n = strcspn(h->objective, "\r\n");
		int			name_len = (int) strcspn(h->objective, " \r\n");

		if (lgbm_objective(h->objective, n, &tf, &multiclass, sigmoid, &use_sqrt))
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "LightGBM objective \"%.*s\" is not supported",
						  name_len < 64 ? name_len : 64, h->objective);
			gs_status_detail(st, "Supported objectives: binary, cross_entropy, cross_entropy_lambda, regression, regression_l1, huber, fair, quantile, mape, poisson, gamma, tweedie, multiclass, multiclassova, lambdarank, rank_xendcg.");
			return st->code;
		}

		/*
		 * LightGBM's sigmoid parameter: p = 1 / (1 + exp(-sigmoid * score)).
		 * The leaves are scaled by it instead (exact up to float rounding:
		 * LightGBM multiplies the double sum).
		 */
		if (!(isfinite(*sigmoid) && *sigmoid > 0.0 && *sigmoid <= 1e6) ||
			(*sigmoid != 1.0 && tf != GS_TRANSFORM_SIGMOID))
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED, "LightGBM sigmoid parameter %g is not supported", *sigmoid);
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
				 name_len < 58 ? name_len : 58, h->objective, use_sqrt ? " sqrt" : "");
	}
	if (multiclass ? h->num_class != h->per_iter || h->num_class < 2 : h->per_iter != 1 || h->num_class != 1)
		return LGBM_ERR(st, "invalid LightGBM model: num_class %lld and num_tree_per_iteration %lld do not fit objective \"%s\"",
						(long long) h->num_class, (long long) h->per_iter, f->objective);
	f->transform = tf;
	f->n_groups = (int32_t) h->per_iter;
	f->n_outputs = f->n_groups;
	snprintf(f->booster, sizeof(f->booster), "%s", h->average_output ? "rf" : "gbdt");
	return GS_OK;
}

/*
 * Locate the trees from line p (read_header's *trees) on: *n_trees of
 * them, tree t's block starting at (*tree_at)[t], an array from a that
 * the caller frees (NULL on error).  "end of trees" (or, before LightGBM
 * 2.2, "feature importances:") must follow them, else the file is
 * truncated; each must be numbered in order.  *maybe_linear: some tree
 * has an "is_linear=1" line (lgbm_text.c reads the same lines).
 */
static GsCode
locate_trees(const char *p, const LHeader *h, const GsLimits *lim, const GsAllocator *a,
			 const char ***tree_at, int64_t *n_trees, bool *maybe_linear, GsStatus *st)
{
	int64_t		cap_trees = lim->max_trees > 0 ? lim->max_trees : INT32_MAX / 2,
				n = 0;
	const char *q;

	*tree_at = NULL;
	*maybe_linear = false;
	for (q = p; q && *q && !gs_lgbm_trees_end(q); q = gs_lgbm_next_line(q))
		if (strncmp(q, "Tree=", 5) == 0 && ++n > cap_trees)
			return gs_status_limit(st, GS_LIMIT_TREES, cap_trees, "more than the limit of %lld trees",
								   (long long) cap_trees);
	if (!q || !*q)
		return LGBM_ERR(st, "invalid LightGBM model: no \"end of trees\" line (the model is truncated)");
	/* files of LightGBM before 2.0: another layout, which LightGBM no longer reads */
	if (!gs_lgbm_line_is(q, "end of trees") && !h->has_per_iter)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED, "LightGBM model files from before LightGBM 2.0 are not supported");
		gs_status_detail(st, "The header has no num_tree_per_iteration line; LightGBM 2.0 and later do not read such files either. Load the model with the LightGBM that wrote it and save it with a current one.");
		return st->code;
	}
	if (n < 1)
		return LGBM_ERR(st, "invalid LightGBM model: it has no trees");
	if (n % h->per_iter != 0)
		return LGBM_ERR(st, "invalid LightGBM model: %lld trees is not a multiple of num_tree_per_iteration %lld",
						(long long) n, (long long) h->per_iter);
	if ((*tree_at = gs_lgbm_lalloc(a, sizeof(char *) * (size_t) n)) == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	*n_trees = n;
	n = 0;
	for (q = p; q && *q && !gs_lgbm_trees_end(q); q = gs_lgbm_next_line(q))
	{
		const char *v;
		int64_t		x;

		if (strncmp(q, "Tree=", 5) == 0)
		{
			v = q + 5;
			if (gs_lgbm_parse_int(&v, &x) || x != n || !gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %lld is not numbered %lld",
								(long long) n, (long long) n);
			(*tree_at)[n++] = gs_lgbm_next_line(q);
		}
		else if (gs_lgbm_line_key(q, "is_linear", &v) && gs_lgbm_parse_int(&v, &x) == 0 && x == 1)
			*maybe_linear = true;
	}
	return GS_OK;
}

/*
 * The feature names of the header's feature_names line v into f, when it
 * holds one valid UTF-8 name per feature; otherwise none.
 */
static GsCode
read_feature_names(const char *v, GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	int32_t		k = 0;
	bool		keep;

	f->feature_names = gs_lgbm_lalloc(a, sizeof(char *) * (size_t) f->n_features);
	if (!f->feature_names)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	while (k < f->n_features && !gs_lgbm_at_line_end(v))
	{
		size_t		len;

		v = gs_lgbm_skip_blanks(v);
		len = strcspn(v, " \t\r\n");
		/* gs_forest_free releases the names kept so far */
		f->feature_names[k] = gs_lgbm_lalloc(a, len + 1);
		if (!f->feature_names[k])
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
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
	return GS_OK;
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
	const char *p = NULL;
	const char **tree_at = NULL;
	int64_t		n_trees = 0;
	bool		maybe_linear;
	double		sigmoid,
				leaf_scale = 1.0;
	GsCode		rc;

	if ((rc = read_header(text, &h, &p, st)) != GS_OK ||
		(rc = model_kind(&h, lim, f, &sigmoid, st)) != GS_OK)
		return rc;
	if ((rc = locate_trees(p, &h, lim, a, &tree_at, &n_trees, &maybe_linear, st)) != GS_OK)
		goto done;
	if (h.average_output)
		leaf_scale = 1.0 / (double) (n_trees / h.per_iter);
	leaf_scale *= sigmoid;		/* 1 unless a sigmoid transform has its parameter */
	f->base_margin = gs_lgbm_lalloc(a, sizeof(float) * (size_t) f->n_groups);
	if (!f->base_margin)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	if ((rc = gs_lgbm_build_trees(tree_at, (int32_t) n_trees, f->n_groups, leaf_scale,
								  maybe_linear, lim, f, st)) != GS_OK)
		goto done;
	/* feature names, when there is one per feature */
	if (h.feature_names && (rc = read_feature_names(h.feature_names, f, st)) != GS_OK)
		goto done;
	/* category names of a model trained on a pandas DataFrame */
	rc = gs_lgbm_read_cats(text, f, st);

done:
	if (tree_at)
		a->free(a->ctx, (void *) tree_at);
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

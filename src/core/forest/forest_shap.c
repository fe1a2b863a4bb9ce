/*
 * forest_shap.c
 *	  TreeSHAP over a forest with covers; see forest_shap.h.
 *
 * The walk follows the row down the branch it takes ("hot") and also down
 * the other one ("cold"), carrying the path of distinct features met so
 * far.  Each path element holds the fraction of the training rows
 * (covers) that would come this way if the feature were unknown (zero),
 * whether the row itself comes this way when the feature is known (one),
 * and the weight of the subsets of features of each size.  A feature met
 * twice on one path is taken out of it (unwound) and put back with both
 * splits' fractions combined.  At a leaf every feature on the path gets
 * its share of the leaf value.  A subtree that no subset of features can
 * reach (its fractions are both 0: a cold child with cover 0) adds nothing
 * and is skipped.  The tree decisions are the engines' (forest_eval.h),
 * so NaN, categorical and LightGBM zero-as-missing splits go where scoring
 * sends them.
 *
 * CatBoost's trees (its ShapValues, "Regular"): covers are the leaf
 * weights, and a child that no training row reached (weight <= 1e-13) is
 * skipped, the one the row takes too; its leaves are 0 (a model whose
 * unreached leaves are not is refused: CatBoost then weighs them by a
 * dataset's rows).  For a MultiClass model each leaf's share is of its
 * value less the mean over the classes of its tree's expected values, as
 * CatBoost computes it.
 *
 * In a symmetric tree every node of a level splits alike, so the branch a
 * row takes at any node of level k is the one it takes on its own path:
 * the tree's contributions depend only on the leaf the row reaches.  They
 * are computed once per (tree, leaf), at the first row that reaches it,
 * and kept (up to GS_SHAP_LEAF_CACHE_BYTES), as CatBoost's ShapValues
 * prepare them per leaf; each tree's are added to the row's as a whole,
 * so a row's contributions are the same whether they were kept or not.
 *
 * A CatBoost model with categorical features splits on derived features
 * (catboost_ctr.h): as CatBoost's ShapValues do, the path's features are
 * then their combination classes (a column, or a combination of
 * categories), the row is expanded with its derived features first, and
 * each class's contribution is shared equally among its columns.
 */
#include "forest_shap.h"
#include "catboost_ctr.h"
#include "forest_eval.h"

#include <math.h>
#include <string.h>

typedef struct PathElem
{
	int32_t		feature;		/* -1 for the root's element */
	double		zero;			/* fraction of covers flowing this way */
	double		one;			/* 1 when the row flows this way, else 0 */
	double		weight;			/* weight of subsets of this size */
} PathElem;

struct GsShap
{
	const GsForest *f;
	GsAllocator alloc;
	double	   *mean;			/* [n_nodes] cover-weighted mean leaf value
								 * of each node's subtree (0 where the
								 * cover is) */
	double	   *shift;			/* [n_trees] subtracted from each tree's
								 * leaves: CatBoost MultiClass; else NULL */
	bool		catboost;		/* CatBoost's skipping of unreached branches */
	PathElem   *paths;			/* scratch: the path of every level */
	/* the tree and row being explained */
	const GsNode *tree;
	const double *cover;
	const float *leaf_lo;
	const float *x;
	double	   *phi;
	double		leaf_shift;
	/*
	 * symmetric trees, by leaf (see the header comment): NULL tfeat for
	 * other forests, NULL slot when there are too many leaves to keep
	 */
	int32_t    *tfeat_start;	/* [n_trees + 1] each tree's features in tfeat */
	int32_t    *tfeat;			/* each tree's distinct split features */
	double	   *scratch;		/* [n_class]: 0 between trees */
	/* CatBoost categorical features (NULL / 0 otherwise) */
	GsCbShapClasses cls;
	int32_t		n_class;		/* path features: n_features, or cls.n_class */
	float	   *xe;				/* the row with its derived features */
	double	   *cphi;			/* [n_groups * n_class] the classes' shares */
	double	   *one;			/* [max_depth]: a leaf's, when not kept */
	int64_t    *slot_start;		/* [n_trees] each tree's leaves in slot */
	int64_t    *slot;			/* where a leaf's contributions are kept:
								 * chunk * LEAF_CHUNK + offset, or -1 */
	double	  **chunk;			/* [max_chunks] of LEAF_CHUNK doubles */
	int32_t		n_chunks,
				max_chunks,
				chunk_used;		/* doubles used in the last chunk */
};

/* Doubles a chunk of the kept contributions holds. */
#define LEAF_CHUNK 8192
/* Most leaves (summed over the trees) whose contributions are kept. */
#define LEAF_SLOTS_MAX ((int64_t) 1 << 22)

/* CatBoost's test for a weight of 0 (FuzzyEquals(1 + w, 1)). */
#define CB_ZERO_WEIGHT 1e-13

/* Add a feature with fractions (zero, one) as element d of path p. */
static void
path_extend(PathElem *p, int d, double zero, double one, int32_t feature)
{
	p[d].feature = feature;
	p[d].zero = zero;
	p[d].one = one;
	p[d].weight = d == 0 ? 1.0 : 0.0;
	for (int i = d - 1; i >= 0; i--)
	{
		p[i + 1].weight += one * p[i].weight * (i + 1) / (double) (d + 1);
		p[i].weight = zero * p[i].weight * (d - i) / (double) (d + 1);
	}
}

/* Take element k out of path p of last element d (undoing its extend). */
static void
path_unwind(PathElem *p, int d, int k)
{
	double		one = p[k].one,
				zero = p[k].zero,
				next = p[d].weight;

	for (int i = d - 1; i >= 0; i--)
	{
		if (one != 0.0)
		{
			double		w = p[i].weight;

			p[i].weight = next * (d + 1) / ((i + 1) * one);
			next = w - p[i].weight * zero * (d - i) / (double) (d + 1);
		}
		else
			p[i].weight = p[i].weight * (d + 1) / (zero * (d - i));
	}
	for (int i = k; i < d; i++)
	{
		p[i].feature = p[i + 1].feature;
		p[i].zero = p[i + 1].zero;
		p[i].one = p[i + 1].one;
	}
}

/* Total weight of path p without element k (path_unwind, summed only). */
static double
path_unwound_sum(const PathElem *p, int d, int k)
{
	double		one = p[k].one,
				zero = p[k].zero,
				next = p[d].weight,
				total = 0.0;

	for (int i = d - 1; i >= 0; i--)
	{
		if (one != 0.0)
		{
			double		w = next * (d + 1) / ((i + 1) * one);

			total += w;
			next = p[i].weight - w * zero * ((d - i) / (double) (d + 1));
		}
		else if (zero != 0.0)
			total += (p[i].weight / zero) / ((d - i) / (double) (d + 1));
	}
	return total;
}

static double
leaf_value(const GsShap *s, uint32_t j)
{
	return s->leaf_lo ? gs_leaf_double(s->tree, s->leaf_lo, j) : (double) s->tree[j].value;
}

/*
 * Visit node j, reached with path parent (elements 0..d-1) and, for the
 * split above, fractions (zero, one) on feature: this node's path is built
 * just after its parent's in the scratch.
 */
static void
shap_node(GsShap *s, uint32_t j, PathElem *parent, int d, double zero, double one,
		  int32_t feature)
{
	PathElem   *p = parent + d + 1;
	GsNode		n = s->tree[j];
	int32_t		col,
				split;
	uint32_t	hot,
				cold;
	double		hot_zero,
				cold_zero,
				in_zero = 1.0,
				in_one = 1.0;
	int			k;

	memcpy(p, parent, sizeof(PathElem) * (size_t) d);
	path_extend(p, d, zero, one, feature);
	if (n.info & GS_NODE_LEAF)
	{
		double		v = leaf_value(s, j) - s->leaf_shift;

		for (int i = 1; i <= d; i++)
			s->phi[p[i].feature] += path_unwound_sum(p, d, i) * (p[i].one - p[i].zero) * v;
		return;
	}
	col = (int32_t) (n.info & GS_NODE_FEATURE_MASK);
	split = s->cls.class_of ? s->cls.class_of[col] : col;
	hot = gs_node_next(n, s->x[col], s->f->cat_words);
	cold = hot == n.left ? n.left + 1 : n.left;
	hot_zero = s->cover[hot] / s->cover[j];
	cold_zero = s->cover[cold] / s->cover[j];

	/* a feature already on the path: take it out, to come back combined */
	for (k = 0; k <= d; k++)
		if (p[k].feature == split)
			break;
	if (k <= d)
	{
		in_zero = p[k].zero;
		in_one = p[k].one;
		path_unwind(p, d, k);
		d--;
	}
	if (s->catboost)
	{
		/* CatBoost: a branch no training row reached is left out, taken or not */
		if (s->cover[hot] > CB_ZERO_WEIGHT)
			shap_node(s, hot, p, d + 1, hot_zero * in_zero, in_one, split);
		if (s->cover[cold] > CB_ZERO_WEIGHT)
			shap_node(s, cold, p, d + 1, cold_zero * in_zero, 0.0, split);
		return;
	}
	if (hot_zero * in_zero != 0.0 || in_one != 0.0)
		shap_node(s, hot, p, d + 1, hot_zero * in_zero, in_one, split);
	if (cold_zero * in_zero != 0.0)
		shap_node(s, cold, p, d + 1, cold_zero * in_zero, 0.0, split);
}

/*
 * Whether CatBoost takes the forest for MultiClass: its loss says so, or,
 * without one (catboost.sum_models), the last class's leaves are all 0.
 */
static bool
catboost_multiclass(const GsForest *f)
{
	if (strcmp(f->objective, "MultiClass") == 0)
		return true;
	if (strcmp(f->objective, "none") != 0 || f->n_groups < 2)
		return false;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

		if (f->tree_group[t] != f->n_groups - 1)
			continue;
		for (int64_t i = f->tree_offset[t]; i < end; i++)
			if ((f->nodes[i].info & GS_NODE_LEAF) &&
				fabs(gs_leaf_double(f->nodes, f->leaf_lo, (uint32_t) i)) > 1e-12)
				return false;
	}
	return true;
}

/*
 * CatBoost's part of preparing: refuse leaves no training row reached whose
 * values are not 0, and for MultiClass the shift of each tree (the mean
 * over the classes of the expected values of the trees made from one of
 * CatBoost's, which are n_groups consecutive trees).
 */
static GsCode
shap_catboost(GsShap *s, GsStatus *st)
{
	const GsForest *f = s->f;
	const int32_t ng = f->n_groups;

	for (int64_t i = 0; i < f->n_nodes; i++)
		if ((f->nodes[i].info & GS_NODE_LEAF) && f->cover[i] <= CB_ZERO_WEIGHT &&
			gs_leaf_double(f->nodes, f->leaf_lo, (uint32_t) i) != 0.0)
			return gs_status_set(st, GS_ERR_UNSUPPORTED,
								 "the model has leaves that no training row reached whose values are not 0 "
								 "(CatBoost explains such a model only with the leaf counts of a dataset)");
	if (!catboost_multiclass(f))
		return GS_OK;
	s->shift = s->alloc.alloc(s->alloc.ctx, sizeof(double) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	if (s->shift == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
	for (int32_t t0 = 0; t0 < f->n_trees; t0 += ng)
	{
		double		sum = 0.0;

		for (int32_t g = 0; g < ng && t0 + g < f->n_trees; g++)
			sum += s->mean[f->tree_offset[t0 + g]];
		for (int32_t g = 0; g < ng && t0 + g < f->n_trees; g++)
			s->shift[t0 + g] = sum / ng;
	}
	return GS_OK;
}

/*
 * For a symmetric forest: each tree's distinct split features, the scratch,
 * and when the leaves are few enough the slots of the kept contributions.
 */
static GsCode
shap_by_leaf(GsShap *s, GsStatus *st)
{
	const GsForest *f = s->f;
	const GsAllocator *a = &s->alloc;
	int64_t		n_feat = 0,
				n_leaves = 0;

	for (int32_t t = 0; t < f->n_trees; t++)
	{
		n_feat += f->tree_depth[t];
		n_leaves += (int64_t) 1 << f->tree_depth[t];
	}
	s->tfeat_start = a->alloc(a->ctx, sizeof(int32_t) * ((size_t) f->n_trees + 1));
	s->tfeat = a->alloc(a->ctx, sizeof(int32_t) * (size_t) (n_feat > 0 ? n_feat : 1));
	s->scratch = a->alloc(a->ctx, sizeof(double) * (size_t) (s->n_class > 0 ? s->n_class : 1));
	s->one = a->alloc(a->ctx, sizeof(double) * (size_t) (f->max_depth > 0 ? f->max_depth : 1));
	if (!s->tfeat_start || !s->tfeat || !s->scratch || !s->one)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
	memset(s->scratch, 0, sizeof(double) * (size_t) s->n_class);
	n_feat = 0;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		s->tfeat_start[t] = (int32_t) n_feat;
		for (int32_t k = 0; k < f->tree_depth[t]; k++)
		{
			int32_t		feat = (int32_t) (f->nodes[f->tree_offset[t] + (1u << k) - 1].info & GS_NODE_FEATURE_MASK);
			int64_t		i = s->tfeat_start[t];

			if (s->cls.class_of)
				feat = s->cls.class_of[feat];

			while (i < n_feat && s->tfeat[i] != feat)
				i++;
			if (i == n_feat)
				s->tfeat[n_feat++] = feat;
		}
	}
	s->tfeat_start[f->n_trees] = (int32_t) n_feat;
	if (n_leaves > LEAF_SLOTS_MAX)
		return GS_OK;
	s->max_chunks = (int32_t) (GS_SHAP_LEAF_CACHE_BYTES / (LEAF_CHUNK * sizeof(double)));
	s->slot_start = a->alloc(a->ctx, sizeof(int64_t) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	s->slot = a->alloc(a->ctx, sizeof(int64_t) * (size_t) n_leaves);
	s->chunk = a->alloc(a->ctx, sizeof(double *) * (size_t) s->max_chunks);
	if (!s->slot_start || !s->slot || !s->chunk)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
	n_leaves = 0;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		s->slot_start[t] = n_leaves;
		n_leaves += (int64_t) 1 << f->tree_depth[t];
	}
	for (int64_t i = 0; i < n_leaves; i++)
		s->slot[i] = -1;
	return GS_OK;
}

/*
 * Room for n doubles of kept contributions, or NULL when the cache is full
 * (or cannot grow); *at is where they will be found again.
 */
static double *
leaf_room(GsShap *s, int32_t n, int64_t *at)
{
	if (s->n_chunks == 0 || s->chunk_used + n > LEAF_CHUNK)
	{
		double	   *c;

		if (s->n_chunks == s->max_chunks ||
			(c = s->alloc.alloc(s->alloc.ctx, sizeof(double) * LEAF_CHUNK)) == NULL)
			return NULL;
		s->chunk[s->n_chunks++] = c;
		s->chunk_used = 0;
	}
	*at = (int64_t) (s->n_chunks - 1) * LEAF_CHUNK + s->chunk_used;
	s->chunk_used += n;
	return s->chunk[s->n_chunks - 1] + (*at % LEAF_CHUNK);
}

/*
 * The contributions of symmetric tree t (its node array set up in s) for
 * the row s->x, which reaches leaf `leaf` of it: one per feature of
 * tfeat[tfeat_start[t]..], kept ones when there are, else computed (and
 * kept when there is room).
 */
static const double *
leaf_contributions(GsShap *s, int32_t t, uint32_t leaf)
{
	int32_t		lo = s->tfeat_start[t],
				n = s->tfeat_start[t + 1] - lo;
	int64_t    *slot = s->slot ? &s->slot[s->slot_start[t] + leaf] : NULL;
	int64_t		at = -1;
	double	   *out;

	if (slot && *slot >= 0)
		return s->chunk[*slot / LEAF_CHUNK] + *slot % LEAF_CHUNK;
	s->phi = s->scratch;
	shap_node(s, 0, s->paths, 0, 1.0, 1.0, -1);
	out = slot ? leaf_room(s, n, &at) : NULL;
	if (out == NULL)
		out = s->one;
	for (int32_t i = 0; i < n; i++)
	{
		out[i] = s->scratch[s->tfeat[lo + i]];
		s->scratch[s->tfeat[lo + i]] = 0.0;
	}
	if (slot && at >= 0)
		*slot = at;
	return out;
}

/* Prepare explanations; see forest_shap.h. */
GsCode
gs_shap_new(const GsForest *f, const GsAllocator *alloc, GsShap **out, GsStatus *st)
{
	GsShap	   *s;
	size_t		levels;
	GsCode		rc;

	*out = NULL;
	if (f->linear)
		return gs_status_set(st, GS_ERR_UNSUPPORTED,
							 "the model has linear trees, whose contributions are not defined here (nor by LightGBM)");
	if (f->cover == NULL && f->linear_w == NULL)
		return gs_status_set(st, GS_ERR_UNSUPPORTED,
							 "the model has no usable node covers (how many training rows reached each tree node)");
	if (f->max_depth > GS_SHAP_MAX_DEPTH)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "the model has trees %d levels deep; explanations walk at most %d",
							 f->max_depth, GS_SHAP_MAX_DEPTH);
	s = alloc->alloc(alloc->ctx, sizeof(GsShap));
	if (s == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
	memset(s, 0, sizeof(*s));
	s->f = f;
	s->alloc = *alloc;
	s->catboost = f->format == GS_FORMAT_CATBOOST_JSON;
	s->n_class = f->n_features;
	if (f->cb_ctrs)
	{
		/* CatBoost's classes of features; a row's derived features */
		if ((rc = gs_cb_shap_classes(f->cb_ctrs, alloc, &s->cls, st)) != GS_OK)
		{
			gs_shap_free(s);
			return rc;
		}
		s->n_class = s->cls.n_class;
		s->xe = alloc->alloc(alloc->ctx, sizeof(float) * ((size_t) f->n_features + (size_t) f->n_derived));
		s->cphi = alloc->alloc(alloc->ctx, sizeof(double) * (size_t) f->n_groups * (size_t) s->n_class);
		if (s->xe == NULL || s->cphi == NULL)
		{
			gs_shap_free(s);
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
		}
	}
	if (f->linear_w)
	{
		/* a linear booster: no trees to walk (gs_shap_row) */
		*out = s;
		return GS_OK;
	}
	/* level L's path (L + 1 elements) starts after L's parents' and one spare */
	levels = (size_t) f->max_depth + 3;
	s->mean = alloc->alloc(alloc->ctx, sizeof(double) * (size_t) (f->n_nodes > 0 ? f->n_nodes : 1));
	s->paths = alloc->alloc(alloc->ctx, sizeof(PathElem) * (levels * (levels + 1) / 2 + levels));
	if (s->mean == NULL || s->paths == NULL)
	{
		gs_shap_free(s);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
	}

	/* children come after their parent: fill the means from the end */
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		uint32_t	off = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;
		const GsNode *tree = f->nodes + off;
		const double *cover = f->cover + off;
		double	   *mean = s->mean + off;

		for (int64_t i = end - off - 1; i >= 0; i--)
		{
			if (tree[i].info & GS_NODE_LEAF)
				mean[i] = f->leaf_lo ? gs_leaf_double(tree, f->leaf_lo + off, (uint32_t) i)
					: (double) tree[i].value;
			else
			{
				uint32_t	l = tree[i].left;

				mean[i] = cover[i] > 0.0 ?
					(mean[l] * cover[l] + mean[l + 1] * cover[l + 1]) / cover[i] : 0.0;
			}
		}
	}
	if ((s->catboost && (rc = shap_catboost(s, st)) != GS_OK) ||
		(gs_forest_symmetric(f) && (rc = shap_by_leaf(s, st)) != GS_OK))
	{
		gs_shap_free(s);
		return rc;
	}
	*out = s;
	return GS_OK;
}

/* Contributions for one row; see forest_shap.h. */
void
gs_shap_row(GsShap *s, const float *x, double *phi)
{
	const GsForest *f = s->f;
	int32_t		width = f->n_features + 1;

	memset(phi, 0, sizeof(double) * (size_t) f->n_groups * (size_t) width);
	if (f->linear_w)
	{
		/*
		 * XGBoost's gblinear contributions: each present feature's value
		 * times its weight; the bias plus the first base margin (which
		 * gblinear adds to every group) as the expected margin
		 */
		for (int32_t g = 0; g < f->n_groups; g++)
		{
			for (int32_t j = 0; j < f->n_features; j++)
				if (!isnan(x[j]))
					phi[g * width + j] = (double) (x[j] * f->linear_w[(size_t) j * f->n_groups + g]);
			phi[g * width + f->n_features] =
				(double) (f->linear_w[(size_t) f->n_features * f->n_groups + g] + f->base_margin[0]);
		}
		return;
	}
	for (int32_t g = 0; g < f->n_groups; g++)
		phi[g * width + f->n_features] = (double) f->base_margin[g];
	s->x = x;
	if (s->cphi)
	{
		/* CatBoost's categories: the row's derived features, the classes' shares */
		gs_cb_ctrs_expand(f->cb_ctrs, x, 1, 1, s->xe);
		s->x = s->xe;
		memset(s->cphi, 0, sizeof(double) * (size_t) f->n_groups * (size_t) s->n_class);
	}
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		uint32_t	off = f->tree_offset[t];
		double	   *group = phi + (size_t) f->tree_group[t] * (size_t) width;
		double	   *share = s->cphi ? s->cphi + (size_t) f->tree_group[t] * (size_t) s->n_class : group;

		s->tree = f->nodes + off;
		s->cover = f->cover + off;
		s->leaf_lo = f->leaf_lo ? f->leaf_lo + off : NULL;
		s->phi = share;
		s->leaf_shift = s->shift ? s->shift[t] : 0.0;
		group[f->n_features] += s->mean[off];
		if (s->tfeat)
		{
			/* a symmetric tree: by the leaf the row reaches */
			uint32_t	first = (1u << f->tree_depth[t]) - 1;
			const double *v = leaf_contributions(s, t, gs_tree_leaf_index(s->tree, s->x, 1, NULL) - first);

			for (int32_t i = s->tfeat_start[t]; i < s->tfeat_start[t + 1]; i++)
				share[s->tfeat[i]] += v[i - s->tfeat_start[t]];
		}
		else
			shap_node(s, 0, s->paths, 0, 1.0, 1.0, -1);
	}
	if (s->cphi)
		/* each class's share, equally among its columns */
		for (int32_t g = 0; g < f->n_groups; g++)
			for (int32_t c = 0; c < s->n_class; c++)
			{
				const int32_t *m = s->cls.member + s->cls.member_start[c];
				int32_t		k = s->cls.member_start[c + 1] - s->cls.member_start[c];

				for (int32_t i = 0; i < k; i++)
					phi[g * width + m[i]] += s->cphi[(size_t) g * (size_t) s->n_class + (size_t) c] / k;
			}
}

void
gs_shap_free(GsShap *s)
{
	if (s == NULL)
		return;
	if (s->mean)
		s->alloc.free(s->alloc.ctx, s->mean);
	if (s->shift)
		s->alloc.free(s->alloc.ctx, s->shift);
	for (int32_t i = 0; i < s->n_chunks; i++)
		s->alloc.free(s->alloc.ctx, s->chunk[i]);
	{
		void	   *arrays[] = {s->tfeat_start, s->tfeat, s->scratch, s->one, s->slot_start,
		s->slot, s->chunk};

		for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
			if (arrays[i])
				s->alloc.free(s->alloc.ctx, arrays[i]);
	}
	if (s->paths)
		s->alloc.free(s->alloc.ctx, s->paths);
	gs_cb_shap_classes_free(&s->alloc, &s->cls);
	if (s->xe)
		s->alloc.free(s->alloc.ctx, s->xe);
	if (s->cphi)
		s->alloc.free(s->alloc.ctx, s->cphi);
	s->alloc.free(s->alloc.ctx, s);
}

/*
 * onnx_trees.c
 *	  ONNX-ML tree ensembles (ai.onnx.ml TreeEnsembleRegressor and
 *	  TreeEnsembleClassifier, as skl2onnx and onnxmltools write them for
 *	  scikit-learn, XGBoost and LightGBM models; the opset-5 TreeEnsemble,
 *	  converted to the regressor's form by onnx_trees_v5.c as onnxruntime
 *	  does) -> the validated GsForest
 *	  that XGBoost and LightGBM models become (forest.h), so that every
 *	  engine scores them with no ONNX-specific code.
 *
 * Reached from gs_onnx_load (onnx_load.c) with the decoded protobuf tree
 * when the graph holds a TreeEnsemble* node; the decoded tree is owned and
 * freed by gs_onnx_load.  This file: how targets become output groups and
 * transforms, which trees the forest gets (each fed to the forest builder,
 * forest/forest_build.h, which walks, checks and lays them out), the entry
 * point; onnx_trees_runs.c checks the nodes, attaches the leaf weights and
 * translates each node for the builder;
 * onnx_trees_graph.c reads the attributes and checks the graph around the
 * tree node; onnx_trees_v5.c converts TreeEnsemble (shared declarations:
 * onnx_trees.h).  Arrays used while building come from the
 * Loader's allocator and are freed before onnx_trees_build returns; the
 * forest (and everything it points to) is owned by the caller on success,
 * freed here on failure.
 *
 * The reference is onnxruntime's CPU kernel (core/providers/cpu/ml:
 * tree_ensemble_common.h, tree_ensemble_aggregator.h, ml_common.h), whose
 * semantics are mirrored exactly, quirks included, or refused:
 *	- A tree is a run of consecutive nodes with one tree id; its root is the
 *	  run's first node.  Child ids name nodes of the same tree.  A branch
 *	  sends x to its true child when "x MODE threshold" holds, or when x is
 *	  NaN and the node's nodes_missing_value_tracks_true is 1.  Inputs and
 *	  thresholds are float, so the tests are float comparisons, mapped onto
 *	  the forest's "x < value goes left" (GS_NODE_EQUAL: "x != value goes
 *	  left") exactly: LEQ is x < nextafterf(t, +inf), GT its negation (the
 *	  true child stored right), GTE the negation of LT; EQ and NEQ are
 *	  equality nodes.  NaN fails every comparison but NEQ, so with NEQ it
 *	  always takes the true child.
 *	- Leaves add their weights (target_* / class_* attributes) to their
 *	  target's or class's float sum, in tree order; base values are added
 *	  last.  A leaf feeding several targets becomes one forest tree per
 *	  (tree, target) pair; the base values become a one-leaf tree added
 *	  last, so the float additions are onnxruntime's, in its order.
 *	  AVERAGE (regressors) divides the sum by the number of trees; here the
 *	  leaves are divided instead, so AVERAGE agrees to rounding, not bit
 *	  for bit.  MIN and MAX are refused.
 *	- Post-transforms: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO as onnxruntime
 *	  computes them in float (GS_TRANSFORM_ORT_* in forest_eval.h).  A
 *	  single-target regressor ignores its post_transform (onnxruntime applies
 *	  only PROBIT there).  PROBIT is refused.
 *	- Binary classifiers (two class labels) give one output, the
 *	  probability of the second class (onnxruntime's probabilities[:, 1]),
 *	  as XGBoost binary models do.  With the weights all on class 0 (what
 *	  the converters write) that is the sum plus base_values[0], through
 *	  LOGISTIC if that is the post_transform, else the sum itself (SOFTMAX
 *	  too: onnxruntime then outputs [-s, s] or [1 - s, s]); with weights on
 *	  both classes it is class 1's sum through the element-wise transform.
 *	  (onnxruntime before 1.2x skipped LOGISTIC when every weight was >= 0;
 *	  1.32, the fixtures' reference, does not.)
 * Everything is validated before use: list lengths, node ids, children in
 * the same tree, every node reached once from its root (no cycles, no
 * shared children, nothing unreachable), feature ids below the input's
 * width, finite thresholds and weights, weights on existing nodes, every
 * leaf weighted, target/class ids in range, and the caps of GsLimits before
 * anything sized by them is allocated.
 *
 * The graph around the tree node may only hold what the converters put
 * there: the node reads the graph's one float input [N, F], directly or
 * through the preprocessing of a scikit-learn pipeline (imputers, scalers,
 * a ColumnTransformer's column picks), which onnx_trees_prep.c folds into
 * the splits exactly; after it, Identity, Cast, ZipMap, ArgMax, Constant
 * and Mul by a constant 1.  A graph output must carry the scores.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_trees.h"

/* Allocate from allocator a, zeroed (the forest's arrays). */
static void *
fz_alloc(const GsAllocator *a, size_t size)
{
	void	   *p = a->alloc(a->ctx, size ? size : 1);

	if (p)
		memset(p, 0, size ? size : 1);
	return p;
}

/* Free every working array. */
static void
onnx_trees_free_work(Loader *L, TWork *w)
{
	void	   *arrs[] = {w->mode, w->slot, w->run_start, w->run_sorted, w->w_sorted, w->w_run,
	w->w_first, w->w_count, w->stamp, w->used};

	for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++)
		if (arrs[i])
			L->alloc.free(L->alloc.ctx, arrs[i]);
	memset(w, 0, sizeof(*w));
}

/* qsort: int32 ascending. */
static int
cmp_int32(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a,
				y = *(const int32_t *) b;

	return x < y ? -1 : x > y;
}

/* ---- the forest ---- */

/*
 * How targets/classes become output groups: group_of[k] is the group of
 * target k or -1 (not scored), and the transform, per the rules in the
 * header comment.  Sets *n_groups, *tf; base[g] the base value of group g.
 */
static GsCode
plan_outputs(Loader *L, const TAttrs *A, TWork *w, int32_t *group_of, int32_t *n_groups,
			 GsTransform *tf, float *base, char *objective, size_t objlen)
{
	static const char *const posts[] = {"NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"};
	GsTransform elementwise = A->post == TP_LOGISTIC ? GS_TRANSFORM_ORT_LOGISTIC :
		A->post == TP_SOFTMAX ? GS_TRANSFORM_ORT_SOFTMAX :
		A->post == TP_SOFTMAX_ZERO ? GS_TRANSFORM_ORT_SOFTMAX_ZERO : GS_TRANSFORM_IDENTITY;
	int64_t		T = A->n_targets;

	for (int64_t k = 0; k < T; k++)
		group_of[k] = (int32_t) k;
	for (int64_t k = 0; k < T; k++)
		base[k] = 0.0f;
	if (!A->classifier)
	{
		if (T == 1)
		{
			/* onnxruntime adds base_values[0] when it is the only one and
			 * applies no post_transform but PROBIT to a single target */
			if (A->n_base > 1)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "%s has %zu base_values for one target", L->label, A->n_base);
			base[0] = A->n_base ? A->base[0] : 0.0f;
			*tf = GS_TRANSFORM_IDENTITY;
		}
		else
		{
			if (A->n_base != 0 && A->n_base != (size_t) T)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "%s has %zu base_values for %lld targets", L->label, A->n_base,
									 (long long) T);
			for (size_t k = 0; k < A->n_base; k++)
				base[k] = A->base[k];
			*tf = elementwise;
		}
		*n_groups = (int32_t) T;
		snprintf(objective, objlen, "%s:%s%s", A->v5 ? "ensemble" : "regressor",
				 A->average ? "AVERAGE:" : "", posts[A->post]);
		return GS_OK;
	}
	if (T > 2)
	{
		if (A->n_base != 0 && A->n_base != (size_t) T)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s has %zu base_values for %lld classes", L->label, A->n_base,
								 (long long) T);
		for (size_t k = 0; k < A->n_base; k++)
			base[k] = A->base[k];
		*tf = elementwise;
		*n_groups = (int32_t) T;
		snprintf(objective, objlen, "classifier:multiclass:%s", posts[A->post]);
		return GS_OK;
	}
	/* two classes: one output, the probability of class 1 */
	{
		bool		has0 = false,
					has1 = false;

		for (size_t k = 0; k < A->nw; k++)
		{
			has0 |= A->w_ids[k] == 0;
			has1 |= A->w_ids[k] == 1;
		}
		if (A->n_base > 1)
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "%s is a binary classifier with %zu base_values", L->label, A->n_base);
			gs_status_detail(L->st, "onnxruntime's result then ignores part of the model; the converters write one base value.");
			return L->st->code;
		}
		*n_groups = 1;
		if (has0 && !has1)
		{
			/* onnxruntime's "binary case": the sum is the score of class 1 */
			group_of[1] = -1;
			base[0] = A->n_base ? A->base[0] : 0.0f;
			*tf = A->post == TP_LOGISTIC ? GS_TRANSFORM_ORT_LOGISTIC : GS_TRANSFORM_IDENTITY;
		}
		else if (has0 && has1)
		{
			/*
			 * Two real classes: class 1's sum through the transform, which
			 * onnxruntime computes only when class 1 has a score in every
			 * row: some tree must weight class 1 in each of its leaves.
			 */
			bool		always = false;

			for (int64_t r = 0; r < w->n_runs && !always; r++)
			{
				bool		all = true;

				for (int64_t i = w->run_start[r]; i < w->run_start[r + 1] && all; i++)
				{
					bool		has;

					if (w->mode[i] == TM_LEAF)
					{
						(void) onnx_trees_leaf_weight(A, w, (int32_t) i, 1, &has);
						all = has;
					}
				}
				always = all;
			}
			if (!always || A->post == TP_SOFTMAX || A->post == TP_SOFTMAX_ZERO)
			{
				gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							  "%s is a binary classifier weighting both classes in a form that is not supported",
							  L->label);
				gs_status_detail(L->st, "Supported with weights for both classes: post_transform NONE or LOGISTIC, "
								 "and at least one tree weighting class 1 in every leaf.");
				return L->st->code;
			}
			group_of[0] = -1;
			group_of[1] = 0;
			*tf = elementwise;
		}
		else
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "%s is a binary classifier weighting only class 1", L->label);
			gs_status_detail(L->st, "onnxruntime scores such a model inconsistently; the converters weight class 0.");
			return L->st->code;
		}
		snprintf(objective, objlen, "classifier:binary:%s", posts[A->post]);
	}
	return GS_OK;
}

/* One forest's build (build_forest and its parts). */
typedef struct TBuild
{
	Loader	   *L;
	const TAttrs *A;
	TWork	   *w;
	GsForest   *f;
	GsForestBuilder b;			/* f's trees */
	int32_t    *group_of;		/* [n_targets] output group of each target, or -1 */
	float	   *base;			/* [n_targets] base value of each group */
	int32_t		n_groups;
	uint32_t   *set_of;			/* [A->n] category set of each TM_CAT node, or NULL */
	double		scale;			/* of every leaf: 1 / trees with AVERAGE */
	/* trees that feed no output, built only to be checked (check_run) */
	GsForest   *check;
	GsForestBuilder cb;
	GsLimits	check_lim;
} TBuild;

/*
 * The targets tree r feeds (those of its leaves' weights that go to an
 * output group), in increasing order, into w->used; their count.  A target
 * k is marked with w->stamp[k] = r, so the runs must be taken in order
 * from stamps all -1.
 */
static int32_t
run_targets(TBuild *B, int64_t r)
{
	const TAttrs *A = B->A;
	TWork	   *w = B->w;
	int32_t		n_used = 0;

	for (int64_t i = w->run_start[r]; i < w->run_start[r + 1]; i++)
		if (w->mode[i] == TM_LEAF)
			for (int32_t q = 0; q < w->w_count[i]; q++)
			{
				int32_t		k = (int32_t) A->w_ids[w->w_sorted[w->w_first[i] + q]];

				if (B->group_of[k] >= 0 && w->stamp[k] != (int32_t) r)
				{
					w->stamp[k] = (int32_t) r;
					w->used[n_used++] = k;
				}
			}
	qsort(w->used, (size_t) n_used, sizeof(int32_t), cmp_int32);
	return n_used;
}

/*
 * Count the forest's trees (one per tree and target it feeds, one per group
 * with a non-zero base value) and their nodes, against the caps of GsLimits
 * before anything is built.
 */
static GsCode
count_trees(TBuild *B, int64_t *n_trees, int64_t *n_nodes)
{
	Loader	   *L = B->L;
	TWork	   *w = B->w;
	int64_t		max_trees = L->lim->max_trees > 0 ? L->lim->max_trees : INT32_MAX / 2;
	int64_t		max_nodes = L->lim->max_nodes > 0 ? L->lim->max_nodes : (int64_t) UINT32_MAX;

	*n_trees = 0;
	*n_nodes = 0;
	for (int64_t k = 0; k < B->A->n_targets; k++)
		w->stamp[k] = -1;
	for (int64_t r = 0; r < w->n_runs; r++)
	{
		int32_t		n_used = run_targets(B, r);

		*n_trees += n_used;
		*n_nodes += n_used * (w->run_start[r + 1] - w->run_start[r]);
		if (*n_trees > max_trees || *n_nodes > max_nodes)
			break;
	}
	for (int32_t g = 0; g < B->n_groups; g++)
		if (B->base[g] != 0.0f)
		{
			(*n_trees)++;
			(*n_nodes)++;
		}
	if (*n_trees > max_trees)
		return gs_status_limit(L->st, GS_LIMIT_TREES, max_trees, "%s makes more than the limit of %lld trees",
							   L->label, (long long) max_trees);
	if (*n_nodes > max_nodes || *n_nodes > (int64_t) UINT32_MAX)
		return gs_status_limit(L->st, GS_LIMIT_NODES, max_nodes, "%s makes more than the limit of %lld tree nodes",
							   L->label, (long long) max_nodes);
	return GS_OK;
}

/* Words of category sets, at most (as for XGBoost's categorical splits). */
#define TREES_MAX_CAT_WORDS		GS_BUILD_MAX_CAT_WORDS

/*
 * The category sets of a forest's folded one-hot splits (TM_CAT nodes,
 * onnx_trees_fold.c), appended through the builder in the order of their
 * codes' first nodes: one set per distinct code, holding that code alone,
 * with GS_CAT_TRUNC_NEGATIVE (values in (-1, 0) are code 0, as onnxruntime
 * truncates); a negative code is held negated, in a set marked
 * GS_CAT_NEGATED.  B->set_of[i] is node i's set (NULL when there is no such
 * split).
 */
static GsCode
cat_sets(TBuild *B)
{
	Loader	   *L = B->L;
	const TAttrs *A = B->A;
	float	   *codes = NULL;
	uint32_t   *set = NULL;
	int64_t		n_codes = 0,
				total = 0;
	GsCode		rc = GS_OK;

	for (size_t i = 0; i < A->n; i++)
		if (B->w->mode[i] == TM_CAT)
			total++;
	if (total == 0)
		return GS_OK;
	codes = onnx_alloc(L, sizeof(float) * (size_t) total);
	set = onnx_alloc(L, sizeof(uint32_t) * (size_t) total);
	B->set_of = onnx_alloc(L, sizeof(uint32_t) * A->n);
	if (!codes || !set || !B->set_of)
	{
		rc = onnx_nomem(L);
		goto done;
	}
	/* the distinct codes, and their words in all */
	total = 0;
	for (size_t i = 0; i < A->n; i++)
	{
		int64_t		k = 0;

		if (B->w->mode[i] != TM_CAT)
			continue;
		while (k < n_codes && codes[k] != A->values[i])
			k++;
		if (k == n_codes)
		{
			codes[n_codes++] = A->values[i];
			total += 1 + (int64_t) fabsf(A->values[i]) / 32 + 1;
			if (total > TREES_MAX_CAT_WORDS)
			{
				rc = gs_status_set(L->st, GS_ERR_LIMIT,
								   "the one-hot splits of %s need category sets of more than %lld words",
								   L->label, (long long) TREES_MAX_CAT_WORDS);
				goto done;
			}
		}
	}
	for (int64_t k = 0; k < n_codes; k++)
	{
		uint32_t	c = (uint32_t) fabsf(codes[k]);
		uint32_t   *bits;

		if ((rc = gs_build_cat_set(&B->b, c / 32u + 1u,
								   GS_CAT_TRUNC_NEGATIVE | (codes[k] < 0.0f ? GS_CAT_NEGATED : 0u),
								   &set[k], &bits, L->st)) != GS_OK)
			goto done;
		bits[c / 32u] = 1u << (c % 32u);
	}
	for (size_t i = 0; i < A->n; i++)
	{
		int64_t		k = 0;

		if (B->w->mode[i] != TM_CAT)
			continue;
		while (codes[k] != A->values[i])
			k++;
		B->set_of[i] = set[k];
	}

done:
	if (codes)
		L->alloc.free(L->alloc.ctx, codes);
	if (set)
		L->alloc.free(L->alloc.ctx, set);
	return rc;
}

/*
 * Build run r's copy for target into group of builder b (target -1: every
 * leaf 0, a copy only checked), and require every node of the run reached.
 */
static GsCode
build_copy(TBuild *B, GsForestBuilder *b, int64_t r, int32_t group, int64_t target)
{
	Loader	   *L = B->L;
	const TAttrs *A = B->A;
	const TWork *w = B->w;
	int64_t		a = w->run_start[r],
				size = w->run_start[r + 1] - a,
				reached;
	TTree		c = {L, A, w, A->treeids[a], target, B->scale, B->set_of};
	char		label[40 + sizeof(L->label)];
	GsBuildTree t = {label, group, (int64_t) A->n, A->nodeids[a], onnx_trees_node, &c};
	GsCode		rc;

	snprintf(label, sizeof(label), "tree %lld of %s", (long long) c.tree, L->label);
	if ((rc = gs_build_tree(b, &t, L->st)) != GS_OK)
		return rc;
	(void) gs_build_order(b, &reached);
	if (reached != size)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "tree %lld of %s has %lld nodes not reachable from its first node",
							 (long long) c.tree, L->label, (long long) (size - reached));
	return GS_OK;
}

/*
 * Check tree r, which feeds no output (a binary classifier's tree weighting
 * only class 0 when class 1's sum is scored), as every tree is checked: built
 * into a forest of its own, thrown away with the build.
 */
static GsCode
check_run(TBuild *B, int64_t r)
{
	if (B->check == NULL)
	{
		B->check = fz_alloc(&B->L->alloc, sizeof(GsForest));
		if (B->check == NULL)
			return onnx_nomem(B->L);
		B->check->alloc = B->L->alloc;
		B->check->n_features = B->f->n_features;
		B->check->n_groups = 1;
		B->check->n_outputs = 1;
		/* the caps of the forest's own trees, but depth, are counted there */
		B->check_lim = *B->L->lim;
		B->check_lim.max_trees = 0;
		B->check_lim.max_nodes = 0;
		gs_build_begin(&B->cb, B->check, &B->check_lim, "", 0);
	}
	return build_copy(B, &B->cb, r, 0, -1);
}

/* A base-value tree's one leaf (base_node's context). */
typedef struct TBase
{
	Loader	   *L;
	float		value;
} TBase;

/* Translate the one node of a base-value tree (a GsBuildNodeFn). */
static GsCode
base_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st)
{
	const TBase *c = ctx;

	(void) id;
	if (!isfinite(c->value))
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "a leaf weight of %s overflows",
							 c->L->label);
	node->leaf = true;
	node->value = c->value;
	return GS_OK;
}

/*
 * The forest's trees: for every tree, one copy per group its leaves feed
 * (groups in increasing order), then one single-leaf tree per group with a
 * non-zero base value, so that the float additions are onnxruntime's.
 */
static GsCode
build_trees(TBuild *B)
{
	TWork	   *w = B->w;
	GsCode		rc = GS_OK;

	for (int64_t k = 0; k < B->A->n_targets; k++)
		w->stamp[k] = -1;
	for (int64_t r = 0; r < w->n_runs && rc == GS_OK; r++)
	{
		int32_t		n_used = run_targets(B, r);

		onnx_trees_slot_run(B->A, w, r);
		if (n_used == 0)
			rc = check_run(B, r);
		for (int32_t u = 0; u < n_used && rc == GS_OK; u++)
			rc = build_copy(B, &B->b, r, B->group_of[w->used[u]], w->used[u]);
		onnx_trees_unslot_run(B->A, w, r);
	}
	for (int32_t g = 0; g < B->n_groups && rc == GS_OK; g++)
		if (B->base[g] != 0.0f)
		{
			TBase		c = {B->L, B->base[g]};
			GsBuildTree t = {B->L->label, g, 1, 0, base_node, &c};

			rc = gs_build_tree(&B->b, &t, B->L->st);
		}
	return rc;
}

/*
 * Plan the outputs and build the forest's trees through the forest builder
 * (forest/forest_build.h).  f is zeroed with its allocator and n_features
 * set.
 */
static GsCode
build_forest(Loader *L, const TAttrs *A, TWork *w, GsForest *f)
{
	TBuild		B;
	int64_t		T = A->n_targets,
				n_trees = 0,
				n_nodes = 0;
	GsTransform tf = GS_TRANSFORM_IDENTITY;
	GsCode		rc = GS_OK;

	memset(&B, 0, sizeof(B));
	B.L = L;
	B.A = A;
	B.w = w;
	B.f = f;
	B.scale = A->average ? 1.0 / (double) w->n_runs : 1.0;
	B.group_of = onnx_alloc(L, sizeof(int32_t) * (size_t) T);
	B.base = onnx_alloc(L, sizeof(float) * (size_t) T);
	w->stamp = onnx_alloc(L, sizeof(int32_t) * (size_t) T);
	w->used = onnx_alloc(L, sizeof(int32_t) * (size_t) T);
	if (!B.group_of || !B.base || !w->stamp || !w->used)
	{
		rc = onnx_nomem(L);
		goto done;
	}
	if ((rc = plan_outputs(L, A, w, B.group_of, &B.n_groups, &tf, B.base, f->objective,
						   sizeof(f->objective))) != GS_OK ||
		(rc = count_trees(&B, &n_trees, &n_nodes)) != GS_OK)
		goto done;

	f->n_groups = B.n_groups;
	f->n_outputs = B.n_groups;
	f->transform = tf;
	f->base_margin = fz_alloc(&f->alloc, sizeof(float) * (size_t) B.n_groups);
	if (!f->base_margin)
	{
		rc = onnx_nomem(L);
		goto done;
	}
	gs_build_begin(&B.b, f, L->lim, "", 0);
	if ((rc = gs_build_reserve(&B.b, n_trees, n_nodes, L->st)) != GS_OK ||
		(rc = cat_sets(&B)) != GS_OK ||
		(rc = build_trees(&B)) != GS_OK)
		goto done;
	if (f->n_trees == 0)
	{
		rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no tree that feeds an output", L->label);
		goto done;
	}
	rc = gs_build_finish(&B.b, L->st);

done:
	gs_build_end(&B.b);
	gs_build_end(&B.cb);
	if (B.check)
		gs_forest_free(B.check);
	if (B.group_of)
		L->alloc.free(L->alloc.ctx, B.group_of);
	if (B.base)
		L->alloc.free(L->alloc.ctx, B.base);
	if (B.set_of)
		L->alloc.free(L->alloc.ctx, B.set_of);
	return rc;
}

/* Build and validate the forest; see onnx_internal.h. */
GsCode
onnx_trees_build(Loader *L, const Onnx__ModelProto *model, GsForest **out)
{
	const Onnx__GraphProto *g = model->graph;
	const Onnx__NodeProto *tree = NULL;
	TAttrs		A;
	TPrep		P;
	int32_t		n_features = 0;
	int			n_trees = 0;
	GsCode		rc;

	*out = NULL;
	if (onnx_iforest_applies(g))
		return onnx_iforest_build(L, model, out);
	for (size_t i = 0; i < g->n_node; i++)
		if (onnx_trees_is_tree_node(g->node[i]))
		{
			tree = g->node[i];
			n_trees++;
		}
	if (n_trees != 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "the graph has %d tree-ensemble nodes, expected one", n_trees);
	{
		char		nname[80];

		onnx_safe_name(nname, sizeof(nname), tree->name);
		snprintf(L->label, sizeof(L->label), "node \"%s\" (%s)", nname, tree->op_type);
	}
	rc = onnx_trees_check_graph(L, tree, &n_features, &P);
	if (rc == GS_OK && strcmp(tree->op_type, "TreeEnsemble") == 0)
		rc = onnx_trees_read_v5(L, tree, &A);
	else if (rc == GS_OK)
		rc = onnx_trees_read_attrs(L, tree, strcmp(tree->op_type, "TreeEnsembleClassifier") == 0, &A);
	else
		memset(&A, 0, sizeof(A));
	if (rc == GS_OK && P.tree_cols)
		rc = onnx_trees_fold(L, &P, &A);
	if (rc != GS_OK)
	{
		onnx_trees_prep_free(L, &P);
		onnx_trees_free_attrs(L, &A);
		return rc;
	}

	rc = onnx_trees_forest(L, model, &A, &P, n_features, out);
	onnx_trees_free_attrs(L, &A);
	return rc;
}

/*
 * The forest of tree attributes A over n_features features, with the
 * names of P's inputs when it has them (P is freed here; a zeroed P has
 * none).  On success *out is a new forest owned by the caller; A stays the
 * caller's.
 */
GsCode
onnx_trees_forest(Loader *L, const Onnx__ModelProto *model, const TAttrs *A, TPrep *P,
				  int32_t n_features, GsForest **out)
{
	GsForest   *f;
	TWork		w;
	GsCode		rc;

	*out = NULL;
	f = fz_alloc(&L->alloc, sizeof(GsForest));
	if (f == NULL)
	{
		onnx_trees_prep_free(L, P);
		return onnx_nomem(L);
	}
	f->alloc = L->alloc;
	f->format = GS_FORMAT_ONNX;
	f->n_features = n_features;
	snprintf(f->booster, sizeof(f->booster), "onnx-ml");
	if (model->producer_name && model->producer_name[0])
		onnx_producer(f->saved_by, sizeof(f->saved_by), model->producer_name, model->producer_version);
	memset(&w, 0, sizeof(w));
	rc = P->names ? onnx_trees_prep_names(L, P, &f->feature_names) : GS_OK;
	if (rc == GS_OK)
		rc = onnx_prep_cat_names(L, P, &f->cat_names);
	onnx_trees_prep_free(L, P);
	if (rc == GS_OK)
		rc = onnx_trees_runs(L, A, n_features, &w);
	if (rc == GS_OK)
		rc = onnx_trees_attach_weights(L, A, &w);
	if (rc == GS_OK)
		rc = build_forest(L, A, &w, f);
	onnx_trees_free_work(L, &w);
	if (rc != GS_OK)
	{
		gs_forest_free(f);
		return rc;
	}
	*out = f;
	return GS_OK;
}

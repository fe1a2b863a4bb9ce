/*
 * onnx_trees_runs.c
 *	  The nodes of an ONNX-ML tree ensemble's trees and their leaf weights
 *	  (see onnx_trees.c for the semantics, onnx_trees.h for the shared
 *	  types): trees as runs of one tree id, each node's mode, id, feature
 *	  and threshold; weights attached to their leaves in onnxruntime's
 *	  order; and each node translated for the forest builder
 *	  (forest/forest_build.h), which walks every tree breadth-first from its
 *	  first node, checking reachability and depth: here only what ONNX's
 *	  attributes can get wrong (children that are no node of the tree) and
 *	  which child is the forest's left.  Working arrays go into TWork (freed
 *	  by onnx_trees_free_work); nothing else is allocated past return.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_trees.h"

static const char *const tmode_names[] = {
	"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", NULL, "LEAF"
};

/* Mode of node i; see onnx_trees.h. */
int
onnx_trees_mode(const TAttrs *A, size_t i)
{
	int			k;

	if (A->mode_codes)
		return A->mode_codes[i] <= TM_LEAF ? A->mode_codes[i] : TM_LEAF + 1;
	for (k = 0; k <= TM_LEAF; k++)
		if (tmode_names[k] != NULL && A->modes[i].len == strlen(tmode_names[k]) &&
			memcmp(A->modes[i].data, tmode_names[k], A->modes[i].len) == 0)
			break;
	return k;
}

/* qsort: int64 pairs by first, then second element. */
static int
cmp_pair64(const void *a, const void *b)
{
	const int64_t *x = a,
			   *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Run (tree index) of tree id t, or -1 (binary search of run_sorted). */
static int64_t
find_run(const TWork *w, int64_t t)
{
	int64_t		lo = 0,
				hi = w->n_runs;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (w->run_sorted[2 * mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->n_runs && w->run_sorted[2 * lo] == t ? w->run_sorted[2 * lo + 1] : -1;
}

/*
 * qsort: weights as int64 4-tuples (run, node id, target, index).  Each
 * leaf's weights end up adjacent and ordered by target (a leaf has at most
 * one weight per target, so the order within a leaf changes no sum).
 */
static int
cmp_weight_key(const void *a, const void *b)
{
	const int64_t *x = a,
			   *y = b;

	for (int k = 0; k < 4; k++)
		if (x[k] != y[k])
			return x[k] < y[k] ? -1 : 1;
	return 0;
}

/*
 * Check node i on its own: a known mode, a feature below n_features, a node
 * id in [0, n), a branch's threshold not NaN.  Sets w->mode[i].
 */
static GsCode
check_node(Loader *L, const TAttrs *A, int32_t n_features, TWork *w, int64_t i)
{
	int64_t		n = (int64_t) A->n;
	int			k = onnx_trees_mode(A, (size_t) i);

	if (k > TM_LEAF)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "node %lld of tree %lld of %s has an unknown mode",
							 (long long) A->nodeids[i], (long long) A->treeids[i], L->label);
	w->mode[i] = (uint8_t) k;
	if (A->featureids[i] < 0 || A->featureids[i] >= n_features)
	{
		gs_status_set(L->st, GS_ERR_INVALID_MODEL,
					  "node %lld of tree %lld of %s uses feature %lld, but the model has %d features",
					  (long long) A->nodeids[i], (long long) A->treeids[i], L->label,
					  (long long) A->featureids[i], n_features);
		return L->st->code;
	}
	if (A->nodeids[i] < 0 || A->nodeids[i] >= n)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "node id %lld of tree %lld of %s is out of range [0, %lld)",
							 (long long) A->nodeids[i], (long long) A->treeids[i], L->label,
							 (long long) n);

	/*
	 * +-inf is a threshold converters write (onnxmltools turns LightGBM's
	 * "every present value left" split into x <= inf): x < inf, x <
	 * nextafterf(inf) = inf and x < -FLT_MAX (LEQ of -inf) decide exactly
	 * as onnxruntime does for every finite x, and inputs are never infinite
	 * (the glue rejects them).
	 */
	if (k != TM_LEAF && isnan(A->values[i]))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "node %lld of tree %lld of %s has threshold %g",
							 (long long) A->nodeids[i], (long long) A->treeids[i], L->label,
							 (double) A->values[i]);
	return GS_OK;
}

/* Point w->slot at the nodes of run r; see onnx_trees.h. */
void
onnx_trees_slot_run(const TAttrs *A, TWork *w, int64_t r)
{
	for (int64_t i = w->run_start[r]; i < w->run_start[r + 1]; i++)
		w->slot[A->nodeids[i]] = (int32_t) i;
}

/* Clear w->slot of the nodes of run r; see onnx_trees.h. */
void
onnx_trees_unslot_run(const TAttrs *A, TWork *w, int64_t r)
{
	for (int64_t i = w->run_start[r]; i < w->run_start[r + 1]; i++)
		w->slot[A->nodeids[i]] = -1;
}

/*
 * Split the nodes into trees (runs of one tree id) and check each node
 * (check_node), that the runs' tree ids are distinct and that no tree
 * defines a node id twice.  The trees' structure (children in the same
 * tree, every node reached once from the first) is checked as the forest
 * builder walks them (onnx_trees_node, build_copy in onnx_trees.c).
 */
GsCode
onnx_trees_runs(Loader *L, const TAttrs *A, int32_t n_features, TWork *w)
{
	int64_t		n = (int64_t) A->n;
	GsCode		rc;

	w->mode = onnx_alloc(L, (size_t) n);
	w->slot = onnx_alloc(L, sizeof(int32_t) * (size_t) n);
	w->run_start = onnx_alloc(L, sizeof(int64_t) * (size_t) (n + 1));
	if (!w->mode || !w->slot || !w->run_start)
		return onnx_nomem(L);
	for (int64_t i = 0; i < n; i++)
	{
		if ((rc = check_node(L, A, n_features, w, i)) != GS_OK)
			return rc;
		w->slot[i] = -1;
		if (i == 0 || A->treeids[i] != A->treeids[i - 1])
			w->run_start[w->n_runs++] = i;
	}
	w->run_start[w->n_runs] = n;

	/* tree ids must form contiguous runs: each id once */
	w->run_sorted = onnx_alloc(L, sizeof(int64_t) * 2 * (size_t) w->n_runs);
	if (!w->run_sorted)
		return onnx_nomem(L);
	for (int64_t r = 0; r < w->n_runs; r++)
	{
		w->run_sorted[2 * r] = A->treeids[w->run_start[r]];
		w->run_sorted[2 * r + 1] = r;
	}
	qsort(w->run_sorted, (size_t) w->n_runs, 2 * sizeof(int64_t), cmp_pair64);
	for (int64_t r = 1; r < w->n_runs; r++)
		if (w->run_sorted[2 * r] == w->run_sorted[2 * r - 2])
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						  "the nodes of tree %lld of %s are not listed together",
						  (long long) w->run_sorted[2 * r], L->label);
			gs_status_detail(L->st, "onnxruntime would score each run of nodes as a separate tree.");
			return L->st->code;
		}

	/* node ids: each once in its tree */
	for (int64_t r = 0; r < w->n_runs; r++)
	{
		rc = GS_OK;
		for (int64_t i = w->run_start[r]; i < w->run_start[r + 1] && rc == GS_OK; i++)
		{
			if (w->slot[A->nodeids[i]] >= 0)
				rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								   "node %lld of tree %lld of %s is defined twice",
								   (long long) A->nodeids[i], (long long) A->treeids[i], L->label);
			else
				w->slot[A->nodeids[i]] = (int32_t) i;
		}
		onnx_trees_unslot_run(A, w, r);
		if (rc != GS_OK)
			return rc;
	}
	return GS_OK;
}

/*
 * Attach the weights to their leaves: every weight names an existing node
 * of an existing tree (weights of branch nodes are ignored, as onnxruntime
 * does), ids in range, finite values, at most one weight per (leaf,
 * target), every leaf weighted.
 */
GsCode
onnx_trees_attach_weights(Loader *L, const TAttrs *A, TWork *w)
{
	int64_t		n = (int64_t) A->n;
	const char *what = A->classifier ? "class" : "target";

	w->w_sorted = onnx_alloc(L, sizeof(int32_t) * (A->nw ? A->nw : 1));
	w->w_run = onnx_alloc(L, sizeof(int64_t) * (A->nw ? A->nw : 1));
	w->w_first = onnx_alloc(L, sizeof(int32_t) * (size_t) n);
	w->w_count = tz_alloc(L, sizeof(int32_t) * (size_t) n);
	if (!w->w_sorted || !w->w_run || !w->w_first || !w->w_count)
		return onnx_nomem(L);
	for (size_t k = 0; k < A->nw; k++)
	{
		w->w_sorted[k] = (int32_t) k;
		w->w_run[k] = find_run(w, A->w_treeids[k]);
		if (w->w_run[k] < 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "a %s weight of %s names tree %lld, which does not exist",
								 what, L->label, (long long) A->w_treeids[k]);
		if (A->w_ids[k] < 0 || A->w_ids[k] >= A->n_targets)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "a weight of %s is for %s %lld, but there are %lld",
								 L->label, what, (long long) A->w_ids[k], (long long) A->n_targets);
		if (!isfinite(A->w_values[k]))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "a %s weight of %s is not finite", what, L->label);
	}
	for (int64_t i = 0; i < n; i++)
		w->w_first[i] = -1;
	if (A->nw > 0)
	{
		int64_t    *key = onnx_alloc(L, sizeof(int64_t) * 4 * A->nw);

		if (key == NULL)
			return onnx_nomem(L);
		for (size_t k = 0; k < A->nw; k++)
		{
			key[4 * k] = w->w_run[k];
			key[4 * k + 1] = A->w_nodeids[k];
			key[4 * k + 2] = A->w_ids[k];
			key[4 * k + 3] = (int64_t) k;
		}
		qsort(key, A->nw, 4 * sizeof(int64_t), cmp_weight_key);
		for (size_t k = 0; k < A->nw; k++)
			w->w_sorted[k] = (int32_t) key[4 * k + 3];
		L->alloc.free(L->alloc.ctx, key);
	}
	for (size_t s = 0; s < A->nw;)
	{
		int64_t		r = w->w_run[w->w_sorted[s]];
		int64_t		a = w->run_start[r],
					b = w->run_start[r + 1];
		size_t		e = s;

		for (int64_t i = a; i < b; i++)
			w->slot[A->nodeids[i]] = (int32_t) i;
		for (; e < A->nw && w->w_run[w->w_sorted[e]] == r; e++)
		{
			int32_t		k = w->w_sorted[e];
			int64_t		id = A->w_nodeids[k];
			int32_t		i = id >= 0 && id < n ? w->slot[id] : -1;

			if (i < 0)
			{
				for (int64_t j = a; j < b; j++)
					w->slot[A->nodeids[j]] = -1;
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "a %s weight of %s names node %lld of tree %lld, which does not exist",
									 what, L->label, (long long) id, (long long) A->treeids[a]);
			}
			if (w->mode[i] != TM_LEAF)
				continue;		/* onnxruntime ignores weights of branch nodes */
			if (w->w_first[i] < 0)
				w->w_first[i] = (int32_t) e;
			else if (A->w_ids[w->w_sorted[e - 1]] == A->w_ids[k])
			{
				/* sorted by target within the leaf: a repeat is the one before */
				for (int64_t j = a; j < b; j++)
					w->slot[A->nodeids[j]] = -1;
				gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							  "leaf %lld of tree %lld of %s has two weights for %s %lld",
							  (long long) id, (long long) A->treeids[a], L->label, what,
							  (long long) A->w_ids[k]);
				return L->st->code;
			}
			w->w_count[i]++;
		}
		for (int64_t i = a; i < b; i++)
			w->slot[A->nodeids[i]] = -1;
		s = e;
	}
	for (int64_t i = 0; i < n; i++)
		if (w->mode[i] == TM_LEAF && w->w_count[i] == 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "leaf %lld of tree %lld of %s has no weight",
								 (long long) A->nodeids[i], (long long) A->treeids[i], L->label);
	return GS_OK;
}

/* Weight of leaf i for target k, or 0 when it has none; *has set. */
float
onnx_trees_leaf_weight(const TAttrs *A, const TWork *w, int32_t i, int64_t k, bool *has)
{
	int32_t		lo = 0,
				hi = w->w_count[i];

	/* the leaf's weights are sorted by target: binary search */
	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;

		if (A->w_ids[w->w_sorted[w->w_first[i] + mid]] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	*has = lo < w->w_count[i] && A->w_ids[w->w_sorted[w->w_first[i] + lo]] == k;
	return *has ? A->w_values[w->w_sorted[w->w_first[i] + lo]] : 0.0f;
}

/* Translate one node for the forest builder; see onnx_trees.h. */
GsCode
onnx_trees_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st)
{
	const TTree *c = ctx;
	const TAttrs *A = c->A;
	const TWork *w = c->w;
	int32_t		i = w->slot[id];	/* the builder asks only for ids given it */
	TMode		m = (TMode) w->mode[i];
	bool		tracks = A->tracks && A->tracks[i] == 1;
	int64_t		ids[2] = {A->truenodeids[i], A->falsenodeids[i]};
	int			swap;

	if (m == TM_LEAF)
	{
		bool		has;
		double		v = c->target < 0 ? 0.0 :
			(double) onnx_trees_leaf_weight(A, w, i, c->target, &has) * c->scale;

		if (!isfinite((float) v))
			return gs_status_set(st, GS_ERR_INVALID_MODEL, "a leaf weight of %s overflows",
								 c->L->label);
		node->leaf = true;
		node->value = (double) (float) v;
		return GS_OK;
	}
	for (int k = 0; k < 2; k++)
		if (ids[k] < 0 || ids[k] >= (int64_t) A->n || w->slot[ids[k]] < 0)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "node %lld of tree %lld of %s has %s child %lld, which is not a node of the tree",
								 (long long) id, (long long) c->tree, c->L->label,
								 k == 0 ? "true" : "false", (long long) ids[k]);
	/* the child the forest's left ("x < value", "x != value", not the category) is */
	swap = (m == TM_GTE || m == TM_GT || m == TM_EQ || m == TM_CAT);
	node->left = ids[swap];
	node->right = ids[!swap];
	node->feature = A->featureids[i];
	node->threshold = A->values[i];
	/* see onnx_trees.c's header comment: which child is left, where NaN goes */
	switch (m)
	{
		case TM_LEQ:
			node->threshold = nextafterf(A->values[i], INFINITY);
			/* FALLTHROUGH */
		case TM_LT:
			node->flags = tracks ? GS_NODE_DEFAULT_LEFT : 0;
			break;
		case TM_GT:
			node->threshold = nextafterf(A->values[i], INFINITY);
			/* FALLTHROUGH */
		case TM_GTE:
			node->flags = tracks ? 0 : GS_NODE_DEFAULT_LEFT;
			break;
		case TM_EQ:
			node->flags = GS_NODE_EQUAL | (tracks ? 0 : GS_NODE_DEFAULT_LEFT);
			break;
		case TM_NEQ:
			node->flags = GS_NODE_EQUAL | GS_NODE_DEFAULT_LEFT;
			break;
		case TM_CAT:
			node->cat_set = c->set_of[i];
			node->flags = GS_NODE_CATEGORICAL | (tracks ? 0 : GS_NODE_DEFAULT_LEFT);
			break;
		case TM_LEAF:
			break;
	}
	return GS_OK;
}

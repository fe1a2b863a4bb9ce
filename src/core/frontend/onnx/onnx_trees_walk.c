/*
 * onnx_trees_walk.c
 *	  The structure of an ONNX-ML tree ensemble's trees and their leaf
 *	  weights (see onnx_trees.c for the semantics, onnx_trees.h for the
 *	  shared types): trees as runs of one tree id, node ids, children in the
 *	  same tree, every node reached once breadth-first from the root, the
 *	  forest's left child of each branch, depth caps; weights attached to
 *	  their leaves in onnxruntime's order.  Working arrays go into TWork
 *	  (freed by onnx_trees_free_work); nothing else is allocated past return.
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
 * Split the nodes into trees (runs of one tree id), parse the modes, and
 * walk every tree from its root breadth-first: children in the same tree,
 * reached once, everything reached, features in range, depth capped.
 * Fills w->order / order_left / level / run_depth.
 */
GsCode
onnx_trees_walk(Loader *L, const TAttrs *A, int32_t n_features, TWork *w)
{
	int32_t		max_depth = L->lim->max_depth > 0 ? L->lim->max_depth : INT32_MAX - 1;
	int64_t		n = (int64_t) A->n;

	w->mode = onnx_alloc(L, (size_t) n);
	w->slot = onnx_alloc(L, sizeof(int32_t) * (size_t) n);
	w->run_start = onnx_alloc(L, sizeof(int64_t) * (size_t) (n + 1));
	w->order = onnx_alloc(L, sizeof(int32_t) * (size_t) n);
	w->order_left = onnx_alloc(L, sizeof(uint32_t) * (size_t) n);
	w->level = onnx_alloc(L, sizeof(int32_t) * (size_t) n);
	if (!w->mode || !w->slot || !w->run_start || !w->order || !w->order_left || !w->level)
		return onnx_nomem(L);
	for (int64_t i = 0; i < n; i++)
	{
		int			k = onnx_trees_mode(A, (size_t) i);

		if (k > TM_LEAF)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "node %lld of tree %lld of %s has an unknown mode",
								 (long long) A->nodeids[i], (long long) A->treeids[i], L->label);
		w->mode[i] = (uint8_t) k;
		w->slot[i] = -1;
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
		if (k != TM_LEAF)
		{
			float		t = A->values[i];

			/*
			 * +-inf is a threshold converters write (onnxmltools turns
			 * LightGBM's "every present value left" split into x <= inf):
			 * x < inf, x < nextafterf(inf) = inf and x < -FLT_MAX (LEQ of
			 * -inf) decide exactly as onnxruntime does for every finite x,
			 * and inputs are never infinite (the glue rejects them).
			 */
			if (isnan(t))
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "node %lld of tree %lld of %s has threshold %g",
									 (long long) A->nodeids[i], (long long) A->treeids[i], L->label,
									 (double) t);
		}
		if (i == 0 || A->treeids[i] != A->treeids[i - 1])
			w->run_start[w->n_runs++] = i;
	}
	w->run_start[w->n_runs] = n;

	/* tree ids must form contiguous runs: each id once */
	w->run_sorted = onnx_alloc(L, sizeof(int64_t) * 2 * (size_t) w->n_runs);
	w->run_depth = onnx_alloc(L, sizeof(int32_t) * (size_t) w->n_runs);
	if (!w->run_sorted || !w->run_depth)
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

	for (int64_t r = 0; r < w->n_runs; r++)
	{
		int64_t		a = w->run_start[r],
					b = w->run_start[r + 1],
					head = 0,
					tail = 1;
		int64_t		tree = A->treeids[a];
		int32_t		deepest = 0;
		int32_t    *order = w->order + a;
		int32_t    *level = w->level + a;
		uint32_t   *oleft = w->order_left + a;
		GsCode		rc = GS_OK;

		if ((r & 63) == 63 && (rc = gs_check_interrupt(&L->lim->interrupt, L->st)))
			return rc;
		for (int64_t i = a; i < b; i++)
		{
			if (w->slot[A->nodeids[i]] >= 0)
			{
				rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								   "node %lld of tree %lld of %s is defined twice",
								   (long long) A->nodeids[i], (long long) tree, L->label);
				break;
			}
			w->slot[A->nodeids[i]] = (int32_t) i;
		}
		/* breadth-first from the run's first node; mark reached as -2 - index */
		order[0] = (int32_t) a;
		level[0] = 0;
		if (rc == GS_OK)
			w->slot[A->nodeids[a]] = -2 - (int32_t) a;
		while (rc == GS_OK && head < tail)
		{
			int32_t		i = order[head];

			if (w->mode[i] != TM_LEAF)
			{
				int64_t		ids[2] = {A->truenodeids[i], A->falsenodeids[i]};
				int32_t		c[2];
				TMode		m = (TMode) w->mode[i];
				int			swap;

				if (level[head] + 1 > max_depth)
				{
					rc = gs_status_limit(L->st, GS_LIMIT_DEPTH, max_depth,
										 "tree %lld of %s is deeper than the limit of %d levels",
									   (long long) tree, L->label, max_depth);
					break;
				}
				for (int k = 0; k < 2 && rc == GS_OK; k++)
				{
					int32_t		s = ids[k] >= 0 && ids[k] < (int64_t) A->n ? w->slot[ids[k]] : -1;

					if (s == -1 || (s >= 0 && (s < a || s >= b)))
						rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL,
										   "node %lld of tree %lld of %s has %s child %lld, which is not a node of the tree",
										   (long long) A->nodeids[i], (long long) tree, L->label,
										   k == 0 ? "true" : "false", (long long) ids[k]);
					else if (s <= -2)
						rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL,
										   "tree %lld of %s is not a tree: node %lld links to node %lld, which is already reached",
										   (long long) tree, L->label, (long long) A->nodeids[i],
										   (long long) ids[k]);
					else
					{
						c[k] = s;
						w->slot[ids[k]] = -2 - s;
					}
				}
				if (rc != GS_OK)
					break;
				if (c[0] == c[1])
				{
					rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									   "tree %lld of %s is not a tree: node %lld links to node %lld, which is already reached",
									   (long long) tree, L->label, (long long) A->nodeids[i],
									   (long long) ids[1]);
					break;
				}
				/* the child the forest's left ("x < value", "x != value", not the category) is */
				swap = (m == TM_GTE || m == TM_GT || m == TM_EQ || m == TM_CAT);
				oleft[head] = (uint32_t) tail;
				order[tail] = c[swap];
				level[tail++] = level[head] + 1;
				order[tail] = c[!swap];
				level[tail++] = level[head] + 1;
			}
			else if (level[head] > deepest)
				deepest = level[head];
			head++;
		}
		for (int64_t i = a; i < b; i++)
			w->slot[A->nodeids[i]] = -1;
		if (rc != GS_OK)
			return rc;
		if (tail != b - a)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "tree %lld of %s has %lld nodes not reachable from its first node",
								 (long long) tree, L->label, (long long) (b - a - tail));
		w->run_depth[r] = deepest;
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

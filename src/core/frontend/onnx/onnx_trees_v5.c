/*
 * onnx_trees_v5.c
 *	  ai.onnx.ml TreeEnsemble (opset 5) -> the attributes of a
 *	  TreeEnsembleRegressor (TAttrs, onnx_trees.h), which onnx_trees.c then
 *	  validates and builds like any other: onnxruntime itself scores the
 *	  operator this way (TreeEnsembleAttributesV5::convert_to_v3 in
 *	  core/providers/cpu/ml/tree_ensemble_attribute.h), and this file mirrors
 *	  that conversion.
 *
 * Opset 5 describes branch nodes (nodes_*) and leaves (leaf_*) in separate
 * arrays; a child is a branch index or, where nodes_trueleafs /
 * nodes_falseleafs says so, a leaf index; tree_roots lists the root branch
 * of each tree (a root whose true and false children are equal is itself a
 * leaf, as onnxruntime reads it).  Each tree is expanded depth-first into
 * nodes numbered in preorder; a BRANCH_MEMBER node with membership values
 * v1..vk (membership_values holds each MEMBER node's values in node order,
 * each list ended by NaN) becomes a chain of BRANCH_EQ nodes x == v1, x ==
 * v2, ..., each sending a match to the true subtree and a mismatch to the
 * next test, the last one to the false subtree.  Shared subtrees are
 * duplicated, as onnxruntime does; a cycle or an exponential expansion
 * stops at the node and depth caps.  There are no base values; mode,
 * aggregate function and post-transform are the integers of the operator's
 * definition.  Only float tensors are taken (double splits and weights
 * would be compared and summed in double by onnxruntime).
 *
 * The converted arrays come from the Loader's allocator and are listed in
 * TAttrs.owned, freed by onnx_trees_free_attrs; the expansion stack and
 * the membership index are freed before onnx_trees_read_v5 returns.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_trees.h"

#define V5_MEMBER 6				/* BRANCH_MEMBER in nodes_modes */

/* The operator's attributes (pointing into the protobuf or owned arrays). */
typedef struct V5
{
	size_t		nb,				/* branch nodes */
				nl,				/* leaves */
				n_roots,
				n_member;
	const int64_t *featureids,
			   *truenodeids,
			   *trueleafs,
			   *falsenodeids,
			   *falseleafs,
			   *tracks,			/* NULL: none */
			   *roots,
			   *leaf_targetids;
	uint8_t    *modes;			/* [nb] */
	float	   *splits;			/* [nb] */
	float	   *leaf_weights;	/* [nl] */
	float	   *member;			/* [n_member] */
	int64_t    *member_start;	/* [nb] first value of a MEMBER node's list */
	int64_t    *member_len;		/* [nb] */
} V5;

/* One pending node of the depth-first expansion. */
typedef struct V5Frame
{
	int64_t		cur;			/* branch or leaf index */
	int64_t		mem;			/* position in a MEMBER node's value list */
	int64_t		parent;			/* output node whose false child this is, or -1 */
	int32_t		depth;
	bool		leaf;
} V5Frame;

/* A new owned array of A; see onnx_trees.h. */
void *
onnx_trees_own(Loader *L, TAttrs *A, size_t size)
{
	void	   *p;

	if (A->n_owned >= TREES_MAX_OWNED)
	{
		gs_status_set(L->st, GS_ERR_INTERNAL, "too many converted arrays");
		return NULL;
	}
	p = tz_alloc(L, size);
	if (p == NULL)
	{
		onnx_nomem(L);
		return NULL;
	}
	A->owned[A->n_owned++] = p;
	return p;
}

/* Free the arrays a conversion allocated; see onnx_trees.h. */
void
onnx_trees_free_attrs(Loader *L, TAttrs *A)
{
	for (int i = 0; i < A->n_owned; i++)
		L->alloc.free(L->alloc.ctx, A->owned[i]);
	A->n_owned = 0;
}

/* An ints attribute, or none (*n = 0). */
static GsCode
v5_ints(Loader *L, const Onnx__NodeProto *node, const char *name, size_t *n, const int64_t **v)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);

	*n = 0;
	*v = NULL;
	if (a == NULL)
		return GS_OK;
	if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) || a->n_floats || a->n_strings)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not a list of integers", name, L->label);
	*n = a->n_ints;
	*v = a->ints;
	return GS_OK;
}

/*
 * A tensor attribute as a new owned array: float (NaN allowed: membership
 * values use it as a separator) or uint8.  Absent: *n = 0.
 */
static GsCode
v5_tensor(Loader *L, TAttrs *A, const Onnx__NodeProto *node, const char *name, int32_t type,
		  size_t *n, void **out)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);
	const Onnx__TensorProto *t;
	int64_t		count;
	size_t		esize = type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? 4 : 1;
	unsigned char *dst;

	*n = 0;
	*out = NULL;
	if (a == NULL)
		return GS_OK;
	if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR) || (t = a->t) == NULL)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not a tensor", name, L->label);
	if (!t->has_data_type || t->data_type != type)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "attribute \"%s\" of %s has element type %s, expected %s",
					  name, L->label, onnx_elem_type_name(t->has_data_type ? t->data_type : 0),
					  onnx_elem_type_name(type));
		if (type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
			gs_status_detail(L->st, "Double thresholds and weights are compared and summed in double by "
							 "onnxruntime; pg_gpuscore scores in float.");
		return L->st->code;
	}
	if (onnx_tensor_check(L, t, type, INT32_MAX / 4, &count) != GS_OK)
		return L->st->code;
	if (t->has_raw_data ? t->raw_data.len != (size_t) count * esize :
		(type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? t->n_float_data : t->n_int32_data) != (size_t) count)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s holds the wrong amount of data", name, L->label);
	dst = onnx_trees_own(L, A, (size_t) count * esize);
	if (dst == NULL)
		return L->st->code;
	for (int64_t i = 0; i < count; i++)
	{
		if (type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		{
			uint32_t	u;

			if (t->has_raw_data)
			{
				const uint8_t *b = t->raw_data.data + 4 * i;

				u = (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 | (uint32_t) b[3] << 24;
			}
			else
				memcpy(&u, &t->float_data[i], 4);
			memcpy(dst + 4 * i, &u, 4);
		}
		else
		{
			int32_t		v = t->has_raw_data ? t->raw_data.data[i] : t->int32_data[i];

			if (v < 0 || v > 255)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "attribute \"%s\" of %s holds %d, not a uint8", name, L->label, v);
			dst[i] = (unsigned char) v;
		}
	}
	*n = (size_t) count;
	*out = dst;
	return GS_OK;
}

/* Read the operator's attributes into V and check their lengths. */
static GsCode
v5_read(Loader *L, TAttrs *A, const Onnx__NodeProto *node, V5 *V)
{
	static const char *const allowed[] = {
		"aggregate_function", "leaf_targetids", "leaf_weights", "membership_values", "n_targets",
		"nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
		"nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits", "nodes_trueleafs",
		"nodes_truenodeids", "post_transform", "tree_roots", NULL
	};
	size_t		n_ft,
				n_tn,
				n_tl,
				n_fn,
				n_fl,
				n_tr,
				n_mode,
				n_split,
				n_lt,
				n_lw;
	int64_t		agg,
				post;
	void	   *p;

	memset(V, 0, sizeof(*V));
	if (onnx_attrs_allowed(L, node, allowed) != GS_OK)
		return L->st->code;
	if (v5_ints(L, node, "nodes_featureids", &n_ft, &V->featureids) != GS_OK ||
		v5_ints(L, node, "nodes_truenodeids", &n_tn, &V->truenodeids) != GS_OK ||
		v5_ints(L, node, "nodes_trueleafs", &n_tl, &V->trueleafs) != GS_OK ||
		v5_ints(L, node, "nodes_falsenodeids", &n_fn, &V->falsenodeids) != GS_OK ||
		v5_ints(L, node, "nodes_falseleafs", &n_fl, &V->falseleafs) != GS_OK ||
		v5_ints(L, node, "nodes_missing_value_tracks_true", &n_tr, &V->tracks) != GS_OK ||
		v5_ints(L, node, "tree_roots", &V->n_roots, &V->roots) != GS_OK ||
		v5_ints(L, node, "leaf_targetids", &n_lt, &V->leaf_targetids) != GS_OK)
		return L->st->code;
	if (v5_tensor(L, A, node, "nodes_modes", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, &n_mode, &p) != GS_OK)
		return L->st->code;
	V->modes = p;
	if (v5_tensor(L, A, node, "nodes_splits", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &n_split, &p) != GS_OK)
		return L->st->code;
	V->splits = p;
	if (v5_tensor(L, A, node, "leaf_weights", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &n_lw, &p) != GS_OK)
		return L->st->code;
	V->leaf_weights = p;
	if (v5_tensor(L, A, node, "membership_values", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &V->n_member, &p) != GS_OK)
		return L->st->code;
	V->member = p;
	V->nb = n_ft;
	V->nl = n_lt;
	if (n_tn != V->nb || n_tl != V->nb || n_fn != V->nb || n_fl != V->nb || n_mode != V->nb ||
		n_split != V->nb || (n_tr != 0 && n_tr != V->nb) || n_lw != V->nl)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "the nodes_* or leaf_* attributes of %s have different lengths", L->label);
	if (n_tr == 0)
		V->tracks = NULL;
	if (V->n_roots == 0 || V->nb == 0)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no trees", L->label);
	if (onnx_attr_int(L, node, "n_targets", 0, &A->n_targets) != GS_OK ||
		onnx_attr_int(L, node, "aggregate_function", 1, &agg) != GS_OK ||
		onnx_attr_int(L, node, "post_transform", 0, &post) != GS_OK)
		return L->st->code;
	if (A->n_targets < 1 || A->n_targets > TREES_MAX_TARGETS)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has n_targets %lld", L->label,
							 (long long) A->n_targets);
	if (agg < 0 || agg > 3 || post < 0 || post > 4)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "%s has an unknown aggregate_function or post_transform", L->label);
	if (agg >= 2)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "aggregate_function %s of %s is not supported",
					  agg == 2 ? "MIN" : "MAX", L->label);
		gs_status_detail(L->st, "Only SUM and AVERAGE: a forest's trees are added up.");
		return L->st->code;
	}
	if (post == TP_PROBIT)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "post_transform PROBIT of %s is not supported",
							 L->label);
	A->average = agg == 0;
	A->post = (TPost) post;

	/* each MEMBER node's values: the next run of membership_values up to a NaN */
	V->member_start = onnx_trees_own(L, A, sizeof(int64_t) * V->nb);
	V->member_len = onnx_trees_own(L, A, sizeof(int64_t) * V->nb);
	if (V->member_start == NULL || V->member_len == NULL)
		return L->st->code;
	{
		size_t		at = 0;

		for (size_t b = 0; b < V->nb; b++)
		{
			if (V->modes[b] > V5_MEMBER)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "branch %zu of %s has unknown mode %d", b, L->label, V->modes[b]);
			if (V->modes[b] != V5_MEMBER)
				continue;
			V->member_start[b] = (int64_t) at;
			while (at < V->n_member && !isnan(V->member[at]))
				at++;
			V->member_len[b] = (int64_t) at - V->member_start[b];
			at++;
			if (V->member_len[b] == 0)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "BRANCH_MEMBER node %zu of %s has no membership values", b, L->label);
		}
	}
	return GS_OK;
}

/*
 * Expand every tree depth-first, as onnxruntime's convert_to_v3 does:
 * count the nodes (out == NULL) or write them into A's arrays.
 */
static GsCode
v5_expand(Loader *L, const V5 *V, TAttrs *A, bool fill, V5Frame *stack, int32_t max_depth,
		  int64_t cap, int64_t *n_nodes, int64_t *n_leaves)
{
	int64_t		o = 0,
				nl = 0;
	int64_t    *treeids = (int64_t *) A->treeids,
			   *nodeids = (int64_t *) A->nodeids,
			   *featureids = (int64_t *) A->featureids,
			   *truenodeids = (int64_t *) A->truenodeids,
			   *falsenodeids = (int64_t *) A->falsenodeids,
			   *tracks = (int64_t *) A->tracks;
	float	   *values = (float *) A->values;
	uint8_t    *codes = (uint8_t *) A->mode_codes;
	int64_t    *w_ids = (int64_t *) A->w_ids,
			   *w_nodeids = (int64_t *) A->w_nodeids,
			   *w_treeids = (int64_t *) A->w_treeids;
	float	   *w_values = (float *) A->w_values;

	for (size_t r = 0; r < V->n_roots; r++)
	{
		int64_t		root = V->roots[r],
					local = 0;
		int32_t		top = 0;

		if (root < 0 || (size_t) root >= V->nb)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "tree %zu of %s has root %lld, but there are %zu branch nodes",
								 r, L->label, (long long) root, V->nb);
		stack[top++] = (V5Frame) {root, 0, -1, 0, V->falsenodeids[root] == V->truenodeids[root]};
		while (top > 0)
		{
			V5Frame		f = stack[--top];
			int64_t		id = local++;

			if (o >= cap)
				return gs_status_set(L->st, GS_ERR_LIMIT,
									 "%s expands to more than the limit of %lld tree nodes",
									 L->label, (long long) cap);
			if (fill)
			{
				treeids[o] = (int64_t) r;
				nodeids[o] = id;
				if (f.parent >= 0)
					falsenodeids[f.parent] = id;
			}
			if (f.leaf)
			{
				if (f.cur < 0 || (size_t) f.cur >= V->nl)
					return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
										 "tree %zu of %s names leaf %lld, but there are %zu leaves",
										 r, L->label, (long long) f.cur, V->nl);
				if (fill)
				{
					codes[o] = TM_LEAF;
					w_ids[nl] = V->leaf_targetids[f.cur];
					w_nodeids[nl] = id;
					w_treeids[nl] = (int64_t) r;
					w_values[nl] = V->leaf_weights[f.cur];
				}
				nl++;
				o++;
				continue;
			}
			if (f.cur < 0 || (size_t) f.cur >= V->nb)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "tree %zu of %s names branch node %lld, but there are %zu",
									 r, L->label, (long long) f.cur, V->nb);
			if (f.depth + 1 > max_depth)
				return gs_status_limit(L->st, GS_LIMIT_DEPTH, max_depth,
									   "tree %zu of %s is deeper than the limit of %d levels",
									 r, L->label, max_depth);
			if (fill)
			{
				bool		member = V->modes[f.cur] == V5_MEMBER;

				codes[o] = member ? TM_EQ : V->modes[f.cur];
				featureids[o] = V->featureids[f.cur];
				values[o] = member ? V->member[V->member_start[f.cur] + f.mem] : V->splits[f.cur];
				truenodeids[o] = id + 1;
				if (tracks)
					tracks[o] = V->tracks[f.cur];
			}
			/* the false child waits for the whole true subtree; popped in turn */
			if (V->modes[f.cur] == V5_MEMBER && f.mem + 1 < V->member_len[f.cur])
				stack[top++] = (V5Frame) {f.cur, f.mem + 1, o, f.depth + 1, false};
			else
				stack[top++] = (V5Frame) {V->falsenodeids[f.cur], 0, o, f.depth + 1,
					V->falseleafs[f.cur] != 0};
			stack[top++] = (V5Frame) {V->truenodeids[f.cur], 0, -1, f.depth + 1, V->trueleafs[f.cur] != 0};
			o++;
		}
	}
	*n_nodes = o;
	*n_leaves = nl;
	return GS_OK;
}

/* Convert a TreeEnsemble node into A; see onnx_trees.h. */
GsCode
onnx_trees_read_v5(Loader *L, const Onnx__NodeProto *node, TAttrs *A)
{
	V5			V;
	V5Frame    *stack;
	int32_t		max_depth = L->lim->max_depth > 0 ? L->lim->max_depth : 100000;
	int64_t		cap = L->lim->max_nodes > 0 ? L->lim->max_nodes : (int64_t) INT32_MAX / 4;
	int64_t		n,
				nl;
	GsCode		rc;

	memset(A, 0, sizeof(*A));
	A->v5 = true;
	if (cap > (int64_t) INT32_MAX / 4)
		cap = (int64_t) INT32_MAX / 4;
	if (v5_read(L, A, node, &V) != GS_OK)
		return L->st->code;
	/* pending frames: at most one per level, plus the one being expanded */
	stack = onnx_alloc(L, sizeof(V5Frame) * ((size_t) max_depth + 2));
	if (stack == NULL)
		return onnx_nomem(L);
	rc = v5_expand(L, &V, A, false, stack, max_depth, cap, &n, &nl);
	if (rc == GS_OK)
	{
		A->n = (size_t) n;
		A->nw = (size_t) nl;
		A->treeids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) n);
		A->nodeids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) n);
		A->featureids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) n);
		A->truenodeids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) n);
		A->falsenodeids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) n);
		A->tracks = V.tracks ? onnx_trees_own(L, A, sizeof(int64_t) * (size_t) n) : NULL;
		A->values = onnx_trees_own(L, A, sizeof(float) * (size_t) n);
		A->mode_codes = onnx_trees_own(L, A, (size_t) n);
		A->w_ids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) nl);
		A->w_nodeids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) nl);
		A->w_treeids = onnx_trees_own(L, A, sizeof(int64_t) * (size_t) nl);
		A->w_values = onnx_trees_own(L, A, sizeof(float) * (size_t) nl);
		if (!A->treeids || !A->nodeids || !A->featureids || !A->truenodeids || !A->falsenodeids ||
			(V.tracks && !A->tracks) || !A->values || !A->mode_codes || !A->w_ids || !A->w_nodeids ||
			!A->w_treeids || !A->w_values)
			rc = L->st->code;
		else
			rc = v5_expand(L, &V, A, true, stack, max_depth, cap, &n, &nl);
	}
	L->alloc.free(L->alloc.ctx, stack);
	return rc;
}

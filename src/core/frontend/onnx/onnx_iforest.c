/*
 * onnx_iforest.c
 *	  scikit-learn's IsolationForest as skl2onnx writes it, read into one
 *	  forest whose leaves are path lengths and whose transform is
 *	  IsolationForest's score (GS_TRANSFORM_ISOLATION).
 *
 * skl2onnx (1.20) writes each of the K trees as its own TreeEnsembleRegressor,
 * reading the graph's input directly or through a Gather of its columns,
 * whose output is the id of the leaf a row reaches (one weight per leaf).
 * Element-wise nodes then turn that id into the tree's path length:
 * LabelEncoders give the leaf's depth and training-sample count n, and
 * Cast / Equal / Greater / Max / Log / Mul / Add nodes compute depth +
 * c(n) - 1 (c the average path length of an unsuccessful search in a
 * binary tree of n samples).  A Sum adds the K path lengths; then
 *	scores = Add(Neg(Pow(2, Neg(Div(sum, d)))), offset)
 * with d = K * c(max_samples) and offset scikit-learn's -offset_, which is
 * its decision_function (negative: an outlier).
 *
 * Since a tree's path length depends only on the leaf its row reaches, each
 * leaf's weight is replaced by the path length computed from it at load
 * time, by interpreting that tree's element-wise nodes on the leaf's value
 * in float32 as onnxruntime computes them (int64 for the casts, bool for
 * the comparisons).  The K trees become one forest summing path lengths in
 * tree order (onnxruntime's Sum adds them in that order, in float), and the
 * transform applies the Div / Neg / Pow / Neg / Add at the end on both
 * engines (forest_eval.h).  onnxruntime's Log may differ from the C
 * library's by an ulp, so a leaf's path length may too: scores agree within
 * 1e-6, not bit for bit.
 *
 * onnx_iforest_eval.c interprets the element-wise nodes.  Anything else
 * in the way (another op, a tree whose output feeds another tree's path
 * length) is refused with the node named; a leaf with several weights is
 * refused by onnx_trees_runs.c, as for any forest.  Nothing outlives the
 * call but the forest: the merged attributes are freed here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_iforest.h"

/* The input of tree node n: the graph's input, or a Gather of its columns. */
static GsCode
tree_columns(IfCtx *C, const Onnx__NodeProto *n, int32_t n_features, int64_t **cols, int64_t *n_cols)
{
	int64_t		p;
	const Onnx__NodeProto *gather;
	const Onnx__TensorProto *t;
	int64_t		axis = 0,
				cnt = 0;

	*cols = NULL;
	*n_cols = 0;
	if (n->n_input != 1)
		return if_refuse_at(C, n, "does not read one input");
	if (strcmp(n->input[0], C->input) == 0)
		return GS_OK;
	p = if_producer_of(C, n->input[0]);
	gather = p >= 0 ? C->g->node[p] : NULL;
	if (gather == NULL || !if_is_op(gather, "Gather") || gather->n_input != 2 ||
		strcmp(gather->input[0], C->input) != 0)
		return if_refuse_at(C, n, "reads neither the graph's input nor a Gather of its columns");
	if (onnx_attr_int(C->L, gather, "axis", 0, &axis) != GS_OK)
		return C->L->st->code;
	t = if_const_tensor(C, gather->input[1]);
	if (axis != 1 || t == NULL || t->n_dims != 1)
		return if_refuse_at(C, gather, "is not a Gather of columns (axis 1) by a constant list");
	*cols = onnx_alloc(C->L, sizeof(int64_t) * (size_t) (n_features + 1));
	if (*cols == NULL)
		return onnx_nomem(C->L);
	if (onnx_tensor_int64s(C->L, t, n_features, &cnt, *cols) != GS_OK)
		return C->L->st->code;
	for (int64_t k = 0; k < cnt; k++)
		if ((*cols)[k] < 0 || (*cols)[k] >= n_features)
			return if_refuse_at(C, gather, "gathers a column the input does not have");
	*n_cols = cnt;
	return GS_OK;
}

/* Does the graph look like an IsolationForest (see onnx_trees.h)? */
bool
onnx_iforest_applies(const Onnx__GraphProto *g)
{
	bool		trees = false,
				pow = false;

	for (size_t i = 0; i < g->n_node; i++)
	{
		trees |= onnx_node_is(g->node[i], "TreeEnsembleRegressor", true) ||
			onnx_node_is(g->node[i], "TreeEnsemble", true);
		pow |= onnx_node_is(g->node[i], "Pow", false);
	}
	return trees && pow;
}

/*
 * Match scores = Add(Neg(Pow(2, Neg(Div(sum, d)))), offset): the terms of
 * the Sum (*terms points into the graph) and the two constants.
 */
static GsCode
match_score(IfCtx *C, const char *scores, const char *const **terms, size_t *n_terms,
			float *den, float *off)
{
	const Onnx__NodeProto *n;
	const char *x;
	Val			v;
	int64_t		p = if_producer_of(C, scores);
	const char *why = "does not compute offset - 2^(-sum / d) as skl2onnx writes it";

	n = p >= 0 ? C->g->node[p] : NULL;
	if (n == NULL || !if_is_op(n, "Add") || n->n_input != 2)
		return if_refuse_at(C, n, why);
	if (if_const_scalar(C, n->input[1], &v) && v.k == V_F32)
		x = n->input[0];
	else if (if_const_scalar(C, n->input[0], &v) && v.k == V_F32)
		x = n->input[1];
	else
		return if_refuse_at(C, n, why);
	*off = v.f;
	/* Neg */
	if ((p = if_producer_of(C, x)) < 0 || !if_is_op(n = C->g->node[p], "Neg") || n->n_input != 1)
		return if_refuse_at(C, p >= 0 ? C->g->node[p] : NULL, why);
	/* Pow(2, y) */
	if ((p = if_producer_of(C, n->input[0])) < 0 || !if_is_op(n = C->g->node[p], "Pow") || n->n_input != 2 ||
		!if_const_scalar(C, n->input[0], &v) || v.k != V_F32 || v.f != 2.0f)
		return if_refuse_at(C, p >= 0 ? C->g->node[p] : NULL, why);
	/* Neg */
	if ((p = if_producer_of(C, n->input[1])) < 0 || !if_is_op(n = C->g->node[p], "Neg") || n->n_input != 1)
		return if_refuse_at(C, p >= 0 ? C->g->node[p] : NULL, why);
	/* Div(sum, d) */
	if ((p = if_producer_of(C, n->input[0])) < 0 || !if_is_op(n = C->g->node[p], "Div") || n->n_input != 2 ||
		!if_const_scalar(C, n->input[1], &v) || v.k != V_F32)
		return if_refuse_at(C, p >= 0 ? C->g->node[p] : NULL, why);
	*den = v.f;
	if (!(*den > 0.0f) || !isfinite(*den) || !isfinite(*off))
		return if_refuse_at(C, n, "divides by a denominator that is not positive and finite");
	/* Sum(terms), or a single term */
	p = if_producer_of(C, n->input[0]);
	if (p >= 0 && if_is_op(C->g->node[p], "Sum"))
	{
		*terms = (const char *const *) C->g->node[p]->input;
		*n_terms = C->g->node[p]->n_input;
	}
	else
	{
		*terms = (const char *const *) &n->input[0];
		*n_terms = 1;
	}
	return GS_OK;
}

/* Build the forest; see onnx_trees.h. */
GsCode
onnx_iforest_build(Loader *L, const Onnx__ModelProto *model, GsForest **out)
{
	const Onnx__GraphProto *g = L->g;
	IfCtx		C;
	TAttrs		M,
			   *A = NULL;
	TPrep		P;
	const char *const *terms = NULL;
	const char *scores = NULL;
	size_t		n_terms = 0,
				n_outputs = 0,
				n_nodes = 0,
				n_w = 0,
				at = 0,
				wat = 0;
	int64_t    *tree_of = NULL;
	int64_t		max_trees = L->lim->max_trees > 0 ? L->lim->max_trees : INT32_MAX / 2;
	int32_t		n_features = 0;
	float		den = 0.0f,
				off = 0.0f;
	bool		any_tracks = false;
	GsCode		rc = GS_OK;

	*out = NULL;
	memset(&C, 0, sizeof(C));
	memset(&M, 0, sizeof(M));
	memset(&P, 0, sizeof(P));
	snprintf(L->label, sizeof(L->label), "the IsolationForest graph");
	C.L = L;
	C.g = g;
	C.cur = 0;
	if (onnx_graph_input(L, (int32_t) GS_NODE_FEATURE_MASK, &C.input, &n_features) != GS_OK)
		return L->st->code;

	/* the scored output: the one float output (skl2onnx's "scores") */
	for (size_t i = 0; i < g->n_output; i++)
	{
		const Onnx__ValueInfoProto *o = g->output[i];

		if (o->type && o->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
			o->type->tensor_type && o->type->tensor_type->has_elem_type &&
			o->type->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		{
			if (scores != NULL)
				return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
									 "IsolationForest graph: more than one float output");
			scores = o->name;
		}
	}
	if (scores == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "IsolationForest graph: no float output");

	/* the producers, for lookups by name */
	for (size_t i = 0; i < g->n_node; i++)
		n_outputs += g->node[i]->n_output;
	C.prod = onnx_alloc(L, sizeof(Producer) * (n_outputs + 1));
	C.stamp = onnx_alloc(L, sizeof(int32_t) * (g->n_node + 1));
	C.seen = onnx_alloc(L, sizeof(int32_t) * (g->n_node + 1));
	C.memo = onnx_alloc(L, sizeof(Val) * (g->n_node + 1));
	if (!C.prod || !C.stamp || !C.seen || !C.memo)
	{
		rc = onnx_nomem(L);
		goto done;
	}
	for (size_t i = 0; i < g->n_node; i++)
	{
		C.stamp[i] = -1;
		C.seen[i] = 0;
		for (size_t k = 0; k < g->node[i]->n_output; k++)
			if (g->node[i]->output[k] && g->node[i]->output[k][0])
			{
				C.prod[C.n_prod].name = g->node[i]->output[k];
				C.prod[C.n_prod++].node = (int32_t) i;
			}
	}
	qsort(C.prod, C.n_prod, sizeof(Producer), if_cmp_producer);
	for (size_t i = 1; i < C.n_prod; i++)
		if (strcmp(C.prod[i - 1].name, C.prod[i].name) == 0)
		{
			rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL, "two nodes write the same value");
			goto done;
		}

	if ((rc = match_score(&C, scores, &terms, &n_terms, &den, &off)) != GS_OK)
		goto done;
	if ((int64_t) n_terms > max_trees)
	{
		rc = gs_status_limit(L->st, GS_LIMIT_TREES, max_trees, "the model has %zu trees, more than the limit of %lld",
						   n_terms, (long long) max_trees);
		goto done;
	}

	/* each term's tree node, read */
	tree_of = onnx_alloc(L, sizeof(int64_t) * n_terms);
	A = onnx_alloc(L, sizeof(TAttrs) * n_terms);
	if (!tree_of || !A)
	{
		rc = onnx_nomem(L);
		goto done;
	}
	memset(A, 0, sizeof(TAttrs) * n_terms);
	for (size_t k = 0; k < n_terms && rc == GS_OK; k++)
	{
		const Onnx__NodeProto *tn;

		if ((k & 63) == 63 && (rc = gs_check_interrupt(&L->lim->interrupt, L->st)) != GS_OK)
			break;
		C.term = (int32_t) k + 1;
		C.n_seen = 0;
		tree_of[k] = if_term_tree(&C, terms[k], 0, -1);
		if (tree_of[k] < 0)
		{
			rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							   "IsolationForest graph: term %zu of the Sum does not depend on exactly one tree node "
							   "through at most %d element-wise nodes",
							   k + 1, IF_MAX_TERM_NODES);
			break;
		}
		for (size_t j = 0; j < k; j++)
			if (tree_of[j] == tree_of[k])
				rc = if_refuse_at(&C, g->node[tree_of[k]], "is read by two terms of the Sum");
		if (rc != GS_OK)
			break;
		tn = g->node[tree_of[k]];
		{
			char		nname[80];

			onnx_safe_name(nname, sizeof(nname), tn->name);
			snprintf(L->label, sizeof(L->label), "node \"%s\" (%s)", nname, tn->op_type);
		}
		rc = strcmp(tn->op_type, "TreeEnsemble") == 0 ? onnx_trees_read_v5(L, tn, &A[k]) :
			onnx_trees_read_attrs(L, tn, false, &A[k]);
		if (rc != GS_OK)
			break;
		if (A[k].classifier || A[k].n_targets != 1 || A[k].post != TP_NONE ||
			(A[k].n_base > 0 && A[k].base[0] != 0.0f))
			rc = if_refuse_at(&C, tn, "is not a single-target regressor without a base value or post_transform");
		for (size_t i = 1; rc == GS_OK && i < A[k].n; i++)
			if (A[k].treeids[i] != A[k].treeids[0])
				rc = if_refuse_at(&C, tn, "holds more than one tree");
		any_tracks |= A[k].tracks != NULL;
	}
	if (rc != GS_OK)
		goto done;

	/* the merged attributes: tree k's nodes and its leaves' path lengths */
	for (size_t k = 0; k < n_terms; k++)
	{
		n_nodes += A[k].n;
		n_w += A[k].nw;
	}
	M.n = n_nodes;
	M.nw = n_w;
	M.n_targets = 1;
	M.post = TP_NONE;
	{
		int64_t    *treeids = onnx_trees_own(L, &M, sizeof(int64_t) * (n_nodes + 1));
		int64_t    *nodeids = onnx_trees_own(L, &M, sizeof(int64_t) * (n_nodes + 1));
		int64_t    *featureids = onnx_trees_own(L, &M, sizeof(int64_t) * (n_nodes + 1));
		int64_t    *trues = onnx_trees_own(L, &M, sizeof(int64_t) * (n_nodes + 1));
		int64_t    *falses = onnx_trees_own(L, &M, sizeof(int64_t) * (n_nodes + 1));
		int64_t    *tracks = any_tracks ? onnx_trees_own(L, &M, sizeof(int64_t) * (n_nodes + 1)) : NULL;
		float	   *values = onnx_trees_own(L, &M, sizeof(float) * (n_nodes + 1));
		uint8_t    *codes = onnx_trees_own(L, &M, n_nodes + 1);
		int64_t    *w_ids = onnx_trees_own(L, &M, sizeof(int64_t) * (n_w + 1));
		int64_t    *w_nodeids = onnx_trees_own(L, &M, sizeof(int64_t) * (n_w + 1));
		int64_t    *w_treeids = onnx_trees_own(L, &M, sizeof(int64_t) * (n_w + 1));
		float	   *w_values = onnx_trees_own(L, &M, sizeof(float) * (n_w + 1));

		if (!treeids || !nodeids || !featureids || !trues || !falses || (any_tracks && !tracks) ||
			!values || !codes || !w_ids || !w_nodeids || !w_treeids || !w_values)
		{
			rc = L->st->code != GS_OK ? L->st->code : onnx_nomem(L);
			goto done;
		}
		for (size_t k = 0; k < n_terms && rc == GS_OK; k++)
		{
			const Onnx__NodeProto *tn = g->node[tree_of[k]];
			int64_t    *cols = NULL,
						n_cols = 0;

			if ((rc = tree_columns(&C, tn, n_features, &cols, &n_cols)) != GS_OK)
			{
				if (cols)
					L->alloc.free(L->alloc.ctx, cols);
				break;
			}
			for (size_t i = 0; i < A[k].n; i++, at++)
			{
				int64_t		f = A[k].featureids[i];
				int			mode = onnx_trees_mode(&A[k], i);

				treeids[at] = (int64_t) k;
				nodeids[at] = A[k].nodeids[i];
				trues[at] = A[k].truenodeids[i];
				falses[at] = A[k].falsenodeids[i];
				if (tracks)
					tracks[at] = A[k].tracks ? A[k].tracks[i] : 0;
				values[at] = A[k].values[i];
				codes[at] = (uint8_t) mode;
				/* a leaf's feature is not read; a branch's goes through the Gather */
				if (cols && mode != TM_LEAF && (f < 0 || f >= n_cols))
					rc = if_refuse_at(&C, tn, "splits on a column its Gather does not give");
				featureids[at] = cols && mode != TM_LEAF && rc == GS_OK ? cols[f] : f;
			}
			if (cols)
				L->alloc.free(L->alloc.ctx, cols);
			/* each leaf's path length, from its weight */
			C.tree = tree_of[k];
			for (size_t i = 0; i < A[k].nw && rc == GS_OK; i++, wat++)
			{
				Val			v;

				C.cur++;
				C.leaf = A[k].w_values[i];
				if ((rc = if_eval(&C, terms[k], 0, &v)) != GS_OK)
					break;
				if (v.k != V_F32 || !isfinite(v.f))
				{
					rc = if_refuse_at(&C, tn, "has a leaf whose path length is not a finite float");
					break;
				}
				w_ids[wat] = 0;
				w_nodeids[wat] = A[k].w_nodeids[i];
				w_treeids[wat] = (int64_t) k;
				w_values[wat] = v.f;
			}
		}
		if (rc != GS_OK)
			goto done;
		M.treeids = treeids;
		M.nodeids = nodeids;
		M.featureids = featureids;
		M.truenodeids = trues;
		M.falsenodeids = falses;
		M.tracks = tracks;
		M.values = values;
		M.modes = NULL;
		M.mode_codes = codes;
		M.w_ids = w_ids;
		M.w_nodeids = w_nodeids;
		M.w_treeids = w_treeids;
		M.w_values = w_values;
	}

	snprintf(L->label, sizeof(L->label), "the IsolationForest graph");
	rc = onnx_trees_forest(L, model, &M, &P, n_features, out);
	if (rc == GS_OK)
	{
		GsForest   *f = *out;

		f->transform = GS_TRANSFORM_ISOLATION;
		f->transform_param[0] = den;
		f->transform_param[1] = off;
		snprintf(f->objective, sizeof(f->objective), "isolation_forest");
	}

done:
	if (rc != GS_ERR_NOMEM && L->lost_alloc)
	{
		if (*out)
		{
			gs_forest_free(*out);
			*out = NULL;
		}
		rc = onnx_nomem(L);
	}
	for (size_t k = 0; A && k < n_terms; k++)
		onnx_trees_free_attrs(L, &A[k]);
	onnx_trees_free_attrs(L, &M);
	if (A)
		L->alloc.free(L->alloc.ctx, A);
	if (tree_of)
		L->alloc.free(L->alloc.ctx, tree_of);
	if (C.prod)
		L->alloc.free(L->alloc.ctx, C.prod);
	if (C.stamp)
		L->alloc.free(L->alloc.ctx, C.stamp);
	if (C.seen)
		L->alloc.free(L->alloc.ctx, C.seen);
	if (C.memo)
		L->alloc.free(L->alloc.ctx, C.memo);
	return rc;
}

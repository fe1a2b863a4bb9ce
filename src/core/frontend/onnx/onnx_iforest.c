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

/* The scored output: the graph's one float output (skl2onnx's "scores"). */
static GsCode
scored_output(Loader *L, const Onnx__GraphProto *g, const char **scores)
{
	*scores = NULL;
	for (size_t i = 0; i < g->n_output; i++)
	{
		const Onnx__ValueInfoProto *o = g->output[i];

		if (o->type && o->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
			o->type->tensor_type && o->type->tensor_type->has_elem_type &&
			o->type->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		{
			if (*scores != NULL)
				return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
									 "IsolationForest graph: more than one float output");
			*scores = o->name;
		}
	}
	if (*scores == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "IsolationForest graph: no float output");
	return GS_OK;
}

/*
 * C's producers (every node's outputs, sorted by name, for lookups) and
 * its per-node scratch (stamp, seen, memo), from L's allocator; freed by
 * onnx_iforest_build.
 */
static GsCode
index_producers(IfCtx *C)
{
	Loader	   *L = C->L;
	const Onnx__GraphProto *g = C->g;
	size_t		n_outputs = 0;

	for (size_t i = 0; i < g->n_node; i++)
		n_outputs += g->node[i]->n_output;
	C->prod = onnx_alloc(L, sizeof(Producer) * (n_outputs + 1));
	C->stamp = onnx_alloc(L, sizeof(int32_t) * (g->n_node + 1));
	C->seen = onnx_alloc(L, sizeof(int32_t) * (g->n_node + 1));
	C->memo = onnx_alloc(L, sizeof(Val) * (g->n_node + 1));
	if (!C->prod || !C->stamp || !C->seen || !C->memo)
		return onnx_nomem(L);
	for (size_t i = 0; i < g->n_node; i++)
	{
		C->stamp[i] = -1;
		C->seen[i] = 0;
		for (size_t k = 0; k < g->node[i]->n_output; k++)
			if (g->node[i]->output[k] && g->node[i]->output[k][0])
			{
				C->prod[C->n_prod].name = g->node[i]->output[k];
				C->prod[C->n_prod++].node = (int32_t) i;
			}
	}
	qsort(C->prod, C->n_prod, sizeof(Producer), if_cmp_producer);
	for (size_t i = 1; i < C->n_prod; i++)
		if (strcmp(C->prod[i - 1].name, C->prod[i].name) == 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "two nodes write the same value");
	return GS_OK;
}

/*
 * The tree node of each of the Sum's n_terms terms (tree_of[k], a node of
 * the graph, each read by one term) and its attributes A[k], which must be
 * one tree of a single-target regressor without base value or
 * post_transform.  *any_tracks: some tree has missing-value directions.
 */
static GsCode
read_terms(IfCtx *C, const char *const *terms, size_t n_terms, int64_t *tree_of, TAttrs *A,
		   bool *any_tracks)
{
	Loader	   *L = C->L;
	const Onnx__GraphProto *g = C->g;
	GsCode		rc = GS_OK;

	for (size_t k = 0; k < n_terms && rc == GS_OK; k++)
	{
		const Onnx__NodeProto *tn;
		char		nname[80];

		if ((k & 63) == 63 && (rc = gs_check_interrupt(&L->lim->interrupt, L->st)) != GS_OK)
			break;
		C->term = (int32_t) k + 1;
		C->n_seen = 0;
		tree_of[k] = if_term_tree(C, terms[k], 0, -1);
		if (tree_of[k] < 0)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "IsolationForest graph: term %zu of the Sum does not depend on exactly one tree node "
								 "through at most %d element-wise nodes",
								 k + 1, IF_MAX_TERM_NODES);
		for (size_t j = 0; j < k; j++)
			if (tree_of[j] == tree_of[k])
				rc = if_refuse_at(C, g->node[tree_of[k]], "is read by two terms of the Sum");
		if (rc != GS_OK)
			break;
		tn = g->node[tree_of[k]];
		onnx_safe_name(nname, sizeof(nname), tn->name);
		snprintf(L->label, sizeof(L->label), "node \"%s\" (%s)", nname, tn->op_type);
		rc = strcmp(tn->op_type, "TreeEnsemble") == 0 ? onnx_trees_read_v5(L, tn, &A[k]) :
			onnx_trees_read_attrs(L, tn, false, &A[k]);
		if (rc != GS_OK)
			break;
		if (A[k].classifier || A[k].n_targets != 1 || A[k].post != TP_NONE ||
			(A[k].n_base > 0 && A[k].base[0] != 0.0f))
			rc = if_refuse_at(C, tn, "is not a single-target regressor without a base value or post_transform");
		for (size_t i = 1; rc == GS_OK && i < A[k].n; i++)
			if (A[k].treeids[i] != A[k].treeids[0])
				rc = if_refuse_at(C, tn, "holds more than one tree");
		*any_tracks |= A[k].tracks != NULL;
	}
	return rc;
}

/* The arrays of merged attributes (merge_trees), owned by the merged TAttrs. */
typedef struct IfMerged
{
	int64_t    *treeids,
			   *nodeids,
			   *featureids,
			   *trues,
			   *falses,
			   *tracks;			/* NULL when no tree has them */
	float	   *values;
	uint8_t    *codes;
	int64_t    *w_ids,
			   *w_nodeids,
			   *w_treeids;
	float	   *w_values;
} IfMerged;

/*
 * Append tree k (A, the node tn, term term) to the merged arrays at *at
 * (nodes) and *wat (weights): its nodes, their features through tn's
 * Gather, and each leaf's weight replaced by its path length.
 */
static GsCode
merge_tree(IfCtx *C, const Onnx__NodeProto *tn, const char *term, const TAttrs *A, int64_t k,
		   int32_t n_features, IfMerged *o, size_t *at, size_t *wat)
{
	Loader	   *L = C->L;
	int64_t    *cols = NULL,
				n_cols = 0;
	GsCode		rc;

	if ((rc = tree_columns(C, tn, n_features, &cols, &n_cols)) != GS_OK)
	{
		if (cols)
			L->alloc.free(L->alloc.ctx, cols);
		return rc;
	}
	for (size_t i = 0; i < A->n; i++, (*at)++)
	{
		int64_t		f = A->featureids[i];
		int			mode = onnx_trees_mode(A, i);

		o->treeids[*at] = k;
		o->nodeids[*at] = A->nodeids[i];
		o->trues[*at] = A->truenodeids[i];
		o->falses[*at] = A->falsenodeids[i];
		if (o->tracks)
			o->tracks[*at] = A->tracks ? A->tracks[i] : 0;
		o->values[*at] = A->values[i];
		o->codes[*at] = (uint8_t) mode;
		/* a leaf's feature is not read; a branch's goes through the Gather */
		if (cols && mode != TM_LEAF && (f < 0 || f >= n_cols))
			rc = if_refuse_at(C, tn, "splits on a column its Gather does not give");
		o->featureids[*at] = cols && mode != TM_LEAF && rc == GS_OK ? cols[f] : f;
	}
	if (cols)
		L->alloc.free(L->alloc.ctx, cols);
	/* each leaf's path length, from its weight */
	for (size_t i = 0; i < A->nw && rc == GS_OK; i++, (*wat)++)
	{
		Val			v;

		C->cur++;
		C->leaf = A->w_values[i];
		if ((rc = if_eval(C, term, 0, &v)) != GS_OK)
			break;
		if (v.k != V_F32 || !isfinite(v.f))
			return if_refuse_at(C, tn, "has a leaf whose path length is not a finite float");
		o->w_ids[*wat] = 0;
		o->w_nodeids[*wat] = A->w_nodeids[i];
		o->w_treeids[*wat] = k;
		o->w_values[*wat] = v.f;
	}
	return rc;
}

/*
 * The merged attributes M of the n_terms trees (A, their nodes tree_of,
 * their terms): tree k's nodes as tree k, and its leaves' path lengths as
 * their weights.  M's arrays are owned by M (onnx_trees_free_attrs).
 */
static GsCode
merge_trees(IfCtx *C, const TAttrs *A, size_t n_terms, const int64_t *tree_of,
			const char *const *terms, int32_t n_features, bool any_tracks, TAttrs *M)
{
	Loader	   *L = C->L;
	size_t		n_nodes = 0,
				n_w = 0,
				at = 0,
				wat = 0;
	IfMerged	o;
	GsCode		rc = GS_OK;

	for (size_t k = 0; k < n_terms; k++)
	{
		n_nodes += A[k].n;
		n_w += A[k].nw;
	}
	M->n = n_nodes;
	M->nw = n_w;
	M->n_targets = 1;
	M->post = TP_NONE;
	o.treeids = onnx_trees_own(L, M, sizeof(int64_t) * (n_nodes + 1));
	o.nodeids = onnx_trees_own(L, M, sizeof(int64_t) * (n_nodes + 1));
	o.featureids = onnx_trees_own(L, M, sizeof(int64_t) * (n_nodes + 1));
	o.trues = onnx_trees_own(L, M, sizeof(int64_t) * (n_nodes + 1));
	o.falses = onnx_trees_own(L, M, sizeof(int64_t) * (n_nodes + 1));
	o.tracks = any_tracks ? onnx_trees_own(L, M, sizeof(int64_t) * (n_nodes + 1)) : NULL;
	o.values = onnx_trees_own(L, M, sizeof(float) * (n_nodes + 1));
	o.codes = onnx_trees_own(L, M, n_nodes + 1);
	o.w_ids = onnx_trees_own(L, M, sizeof(int64_t) * (n_w + 1));
	o.w_nodeids = onnx_trees_own(L, M, sizeof(int64_t) * (n_w + 1));
	o.w_treeids = onnx_trees_own(L, M, sizeof(int64_t) * (n_w + 1));
	o.w_values = onnx_trees_own(L, M, sizeof(float) * (n_w + 1));
	if (!o.treeids || !o.nodeids || !o.featureids || !o.trues || !o.falses || (any_tracks && !o.tracks) ||
		!o.values || !o.codes || !o.w_ids || !o.w_nodeids || !o.w_treeids || !o.w_values)
		return L->st->code != GS_OK ? L->st->code : onnx_nomem(L);
	for (size_t k = 0; k < n_terms && rc == GS_OK; k++)
	{
		C->tree = tree_of[k];
		rc = merge_tree(C, C->g->node[tree_of[k]], terms[k], &A[k], (int64_t) k, n_features, &o,
						&at, &wat);
	}
	if (rc != GS_OK)
		return rc;
	M->treeids = o.treeids;
	M->nodeids = o.nodeids;
	M->featureids = o.featureids;
	M->truenodeids = o.trues;
	M->falsenodeids = o.falses;
	M->tracks = o.tracks;
	M->values = o.values;
	M->modes = NULL;
	M->mode_codes = o.codes;
	M->w_ids = o.w_ids;
	M->w_nodeids = o.w_nodeids;
	M->w_treeids = o.w_treeids;
	M->w_values = o.w_values;
	return GS_OK;
}

/*
 * Build the forest; see onnx_trees.h.  The merged trees go through
 * onnx_trees_forest, and so through the forest builder, as any ONNX tree
 * ensemble's do.
 */
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
	size_t		n_terms = 0;
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
	if ((rc = scored_output(L, g, &scores)) != GS_OK)
		return rc;
	if ((rc = index_producers(&C)) != GS_OK ||
		(rc = match_score(&C, scores, &terms, &n_terms, &den, &off)) != GS_OK)
		goto done;
	if ((int64_t) n_terms > max_trees)
	{
		rc = gs_status_limit(L->st, GS_LIMIT_TREES, max_trees, "the model has %zu trees, more than the limit of %lld",
							 n_terms, (long long) max_trees);
		goto done;
	}

	/* each term's tree node, read; then the trees merged */
	tree_of = onnx_alloc(L, sizeof(int64_t) * n_terms);
	A = onnx_alloc(L, sizeof(TAttrs) * n_terms);
	if (!tree_of || !A)
	{
		rc = onnx_nomem(L);
		goto done;
	}
	memset(A, 0, sizeof(TAttrs) * n_terms);
	if ((rc = read_terms(&C, terms, n_terms, tree_of, A, &any_tracks)) != GS_OK ||
		(rc = merge_trees(&C, A, n_terms, tree_of, terms, n_features, any_tracks, &M)) != GS_OK)
		goto done;

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

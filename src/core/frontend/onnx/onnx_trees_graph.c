/*
 * onnx_trees_graph.c
 *	  The tree-ensemble node's attributes (read and length-checked, pointing
 *	  into the decoded protobuf owned by gs_onnx_load) and the graph around
 *	  it: one float input [N, F] read by the tree node directly or through
 *	  preprocessing (onnx_trees_prep.c), post-processing by Identity, Cast,
 *	  ZipMap, ArgMax, Constant and Mul by 1 only, a graph output carrying
 *	  the scores.  See onnx_trees.c for the semantics; the
 *	  only memory allocated here is freed before each function returns.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_trees.h"

/* Is attribute a of the given list type (or untyped with such values)? */
static GsCode
attr_list(Loader *L, const Onnx__NodeProto *node, const char *name,
		  Onnx__AttributeProto__AttributeType type, size_t *n, const void **vals)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);

	*n = 0;
	*vals = NULL;
	if (a == NULL)
		return GS_OK;
	if ((a->has_type && a->type != type) ||
		(type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS && a->n_ints) ||
		(type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS && a->n_floats) ||
		(type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS && a->n_strings))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not a list of %s", name, L->label,
							 type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS ? "integers" :
							 type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ? "floats" : "strings");
	switch (type)
	{
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
			*n = a->n_ints;
			*vals = a->ints;
			break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
			*n = a->n_floats;
			*vals = a->floats;
			break;
		default:
			*n = a->n_strings;
			*vals = a->strings;
			break;
	}
	return GS_OK;
}

/* A string attribute matched against names[0..count); def when absent. */
static GsCode
attr_enum(Loader *L, const Onnx__NodeProto *node, const char *name,
		  const char *const *names, int count, int def, int *v)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);
	char		sval[48];

	*v = def;
	if (a == NULL)
		return GS_OK;
	if (!a->has_s || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not a string", name, L->label);
	for (int k = 0; k < count; k++)
		if (a->s.len == strlen(names[k]) &&
			(a->s.len == 0 || memcmp(a->s.data, names[k], a->s.len) == 0))
		{
			*v = k;
			return GS_OK;
		}
	{
		char		raw[48];
		size_t		len = a->s.len < sizeof(raw) - 1 ? a->s.len : sizeof(raw) - 1;

		/* an empty string may come with no buffer at all (data NULL) */
		if (len > 0)
			memcpy(raw, a->s.data, len);
		raw[len] = '\0';
		onnx_safe_name(sval, sizeof(sval), raw);
	}
	return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						 "attribute \"%s\" of %s has the unknown value \"%s\"", name, L->label, sval);
}

/* Read and check the lengths of the tree node's attributes. */
GsCode
onnx_trees_read_attrs(Loader *L, const Onnx__NodeProto *node, bool classifier, TAttrs *A)
{
	static const char *const reg_attrs[] = {
		"aggregate_function", "base_values", "base_values_as_tensor", "n_targets",
		"nodes_falsenodeids", "nodes_featureids", "nodes_hitrates", "nodes_hitrates_as_tensor",
		"nodes_missing_value_tracks_true", "nodes_modes", "nodes_nodeids", "nodes_treeids",
		"nodes_truenodeids", "nodes_values", "nodes_values_as_tensor", "post_transform",
		"target_ids", "target_nodeids", "target_treeids", "target_weights",
		"target_weights_as_tensor", NULL
	};
	static const char *const cls_attrs[] = {
		"base_values", "base_values_as_tensor", "class_ids", "class_nodeids", "class_treeids",
		"class_weights", "class_weights_as_tensor", "classlabels_int64s", "classlabels_strings",
		"nodes_falsenodeids", "nodes_featureids", "nodes_hitrates", "nodes_hitrates_as_tensor",
		"nodes_missing_value_tracks_true", "nodes_modes", "nodes_nodeids", "nodes_treeids",
		"nodes_truenodeids", "nodes_values", "nodes_values_as_tensor", "post_transform", NULL
	};
	static const char *const posts[] = {"NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"};
	static const char *const aggs[] = {"SUM", "AVERAGE", "MIN", "MAX"};
	static const char *const as_tensor[] = {"base_values_as_tensor", "nodes_values_as_tensor",
	"target_weights_as_tensor", "class_weights_as_tensor", NULL};
	const char *pre = classifier ? "class" : "target";
	char		an[40];
	size_t		k,
				n_ft,
				n_tr,
				n_fl,
				n_nid,
				n_val,
				n_mode,
				n_track,
				nw_id,
				nw_nid,
				nw_tid;
	int			post,
				agg = 0;
	const void *p;

	memset(A, 0, sizeof(*A));
	A->classifier = classifier;
	if (onnx_attrs_allowed(L, node, classifier ? cls_attrs : reg_attrs) != GS_OK)
		return L->st->code;
	for (int i = 0; as_tensor[i]; i++)
		if (onnx_attr_find(node, as_tensor[i]))
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "attribute \"%s\" of %s is not supported", as_tensor[i], L->label);
			gs_status_detail(L->st, "Double-precision thresholds and weights are compared and summed in double by "
							 "onnxruntime; pg_gpuscore scores in float. Convert the model with float attributes.");
			return L->st->code;
		}
#define LIST(name, type, np, dst) \
	do { \
		if (attr_list(L, node, (name), ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##type, (np), &p) != GS_OK) \
			return L->st->code; \
		(dst) = p; \
	} while (0)
	LIST("nodes_treeids", INTS, &A->n, A->treeids);
	LIST("nodes_nodeids", INTS, &n_nid, A->nodeids);
	LIST("nodes_featureids", INTS, &n_ft, A->featureids);
	LIST("nodes_truenodeids", INTS, &n_tr, A->truenodeids);
	LIST("nodes_falsenodeids", INTS, &n_fl, A->falsenodeids);
	LIST("nodes_values", FLOATS, &n_val, A->values);
	LIST("nodes_modes", STRINGS, &n_mode, A->modes);
	LIST("nodes_missing_value_tracks_true", INTS, &n_track, A->tracks);
	snprintf(an, sizeof(an), "%s_ids", pre);
	LIST(an, INTS, &nw_id, A->w_ids);
	snprintf(an, sizeof(an), "%s_nodeids", pre);
	LIST(an, INTS, &nw_nid, A->w_nodeids);
	snprintf(an, sizeof(an), "%s_treeids", pre);
	LIST(an, INTS, &nw_tid, A->w_treeids);
	snprintf(an, sizeof(an), "%s_weights", pre);
	LIST(an, FLOATS, &A->nw, A->w_values);
	LIST("base_values", FLOATS, &A->n_base, A->base);
#undef LIST
	if (A->n == 0)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no nodes", L->label);
	if (n_nid != A->n || n_ft != A->n || n_tr != A->n || n_fl != A->n || n_val != A->n ||
		n_mode != A->n || (n_track != 0 && n_track != A->n))
	{
		gs_status_set(L->st, GS_ERR_INVALID_MODEL,
					  "the nodes_* attributes of %s have different lengths", L->label);
		gs_status_detail(L->st, "nodes_treeids has %zu values, nodes_nodeids %zu, nodes_featureids %zu, "
						 "nodes_modes %zu, nodes_values %zu, nodes_truenodeids %zu, nodes_falsenodeids %zu, "
						 "nodes_missing_value_tracks_true %zu.",
						 A->n, n_nid, n_ft, n_mode, n_val, n_tr, n_fl, n_track);
		return L->st->code;
	}
	if (n_track == 0)
		A->tracks = NULL;
	if (nw_id != A->nw || nw_nid != A->nw || nw_tid != A->nw)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "the %s_* attributes of %s have different lengths", pre, L->label);
	if (A->nw > (size_t) INT32_MAX / 2 || A->n > (size_t) INT32_MAX / 2)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has too many nodes or weights", L->label);
	if (L->lim->max_nodes > 0 && (int64_t) A->n > L->lim->max_nodes)
		return gs_status_limit(L->st, GS_LIMIT_NODES, L->lim->max_nodes, "%s has %zu nodes, more than the limit of %lld",
							 L->label, A->n, (long long) L->lim->max_nodes);
	for (k = 0; k < A->n_base; k++)
		if (!isfinite(A->base[k]))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "base_values of %s holds a non-finite value", L->label);

	if (attr_enum(L, node, "post_transform", posts, 5, TP_NONE, &post) != GS_OK)
		return L->st->code;
	A->post = (TPost) post;
	if (classifier)
	{
		size_t		n_int,
					n_str;

		if (attr_list(L, node, "classlabels_int64s", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &n_int, &p) != GS_OK ||
			attr_list(L, node, "classlabels_strings", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS, &n_str, &p) != GS_OK)
			return L->st->code;
		if ((n_int == 0) == (n_str == 0))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s must have exactly one of classlabels_int64s and classlabels_strings", L->label);
		A->n_targets = (int64_t) (n_int ? n_int : n_str);
		if (A->n_targets < 2)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s has %lld class, expected at least two", L->label, (long long) A->n_targets);
	}
	else
	{
		if (onnx_attr_int(L, node, "n_targets", 0, &A->n_targets) != GS_OK)
			return L->st->code;
		if (A->n_targets < 1)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s has n_targets %lld, expected at least 1", L->label, (long long) A->n_targets);
		if (attr_enum(L, node, "aggregate_function", aggs, 4, 0, &agg) != GS_OK)
			return L->st->code;
		if (agg >= 2)
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "aggregate_function \"%s\" of %s is not supported", aggs[agg], L->label);
			gs_status_detail(L->st, "Only SUM and AVERAGE: a forest's trees are added up.");
			return L->st->code;
		}
		A->average = agg == 1;
	}
	if (A->n_targets > TREES_MAX_TARGETS)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has %lld %s, more than the limit of %d",
							 L->label, (long long) A->n_targets, classifier ? "classes" : "targets",
							 TREES_MAX_TARGETS);
	if (A->post == TP_PROBIT)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "post_transform PROBIT of %s is not supported", L->label);
		gs_status_detail(L->st, "Supported: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO.");
		return L->st->code;
	}
	return GS_OK;
}

/* ---- the graph around the tree node ---- */

typedef enum TKind
{
	TK_INPUT,					/* the graph's input */
	TK_CONST,					/* initializer or Constant output */
	TK_SCORE,					/* the tree node's scores, unchanged */
	TK_OTHER,					/* labels, or anything else derived */
	TK_FEAT						/* computed from the input by preprocessing */
} TKind;

typedef struct TName
{
	const char *name;
	TKind		kind;
} TName;

/* Kind of a known tensor name, or -1. */
static int
name_kind(const TName *names, int32_t n, const char *name)
{
	for (int32_t i = 0; i < n; i++)
		if (strcmp(names[i].name, name) == 0)
			return (int) names[i].kind;
	return -1;
}

/* Does node read the graph's input or a value computed from it? */
static bool
reads_features(const TName *names, int32_t n, const Onnx__NodeProto *node)
{
	for (size_t k = 0; k < node->n_input; k++)
	{
		int			kind = node->input[k] && node->input[k][0] ?
			name_kind(names, n, node->input[k]) : -1;

		if (kind == TK_INPUT || kind == TK_FEAT)
			return true;
	}
	return false;
}

/*
 * Is constant tensor t a float tensor of ones (Mul by it is a no-op)?  Sets
 * *ones; fails only when out of memory.
 */
static GsCode
check_ones(Loader *L, const Onnx__TensorProto *t, bool *ones)
{
	int64_t		n;
	float	   *v;
	GsStatus	scratch,
			   *saved = L->st;
	GsCode		rc;

	*ones = false;
	L->st = &scratch;			/* a non-float or odd tensor is simply "no" */
	rc = onnx_tensor_floats(L, t, 65536, &n, &v);
	L->st = saved;
	if (rc == GS_ERR_NOMEM)
		return onnx_nomem(L);
	if (rc != GS_OK)
		return GS_OK;
	*ones = n >= 1;
	for (int64_t i = 0; i < n; i++)
		*ones &= v[i] == 1.0f;
	L->alloc.free(L->alloc.ctx, v);
	return GS_OK;
}

/* The values named so far in the graph (TName), room counted in advance. */
typedef struct TNames
{
	TName	   *v;
	int32_t		n;
} TNames;

/* Name a value of kind k (room was counted by names_init). */
static void
name_add(TNames *T, const char *name, TKind k)
{
	T->v[T->n].name = name;
	T->v[T->n++].kind = k;
}

/*
 * The graph's inputs and initializers named in T, with room for every
 * node's outputs (at most 16 a node); T->v from L's allocator.
 */
static GsCode
names_init(Loader *L, const TPrep *P, TNames *T)
{
	const Onnx__GraphProto *g = L->g;
	size_t		cap = g->n_initializer + (size_t) P->n_inputs;

	T->v = NULL;
	T->n = 0;
	for (size_t i = 0; i < g->n_node; i++)
	{
		if (g->node[i]->n_output > 16)
		{
			char		nname[80];

			onnx_safe_name(nname, sizeof(nname), g->node[i]->name);
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "node \"%s\" has %zu outputs", nname,
								 g->node[i]->n_output);
		}
		cap += g->node[i]->n_output;
	}
	T->v = onnx_alloc(L, sizeof(TName) * cap);
	if (T->v == NULL)
		return onnx_nomem(L);
	for (int32_t k = 0; k < P->n_inputs; k++)
		name_add(T, P->inputs[k]->name, TK_INPUT);
	for (size_t k = 0; k < g->n_initializer; k++)
		if (g->initializer[k]->name && g->initializer[k]->name[0])
			name_add(T, g->initializer[k]->name, TK_CONST);
	return GS_OK;
}

/*
 * The tree node: it reads the graph's input or a preprocessed value (what
 * P then gives it); its outputs are named, the regressor's values or the
 * classifier's probabilities as the scores.
 */
static GsCode
graph_tree_node(Loader *L, TPrep *P, const Onnx__NodeProto *tree, TNames *T)
{
	bool		cls = strcmp(tree->op_type, "TreeEnsembleClassifier") == 0;
	int			kind = tree->n_input == 1 && tree->input[0] ?
		name_kind(T->v, T->n, tree->input[0]) : -1;
	GsCode		rc;

	if (kind != TK_INPUT && kind != TK_FEAT)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s does not read the graph's input", L->label);
		gs_status_detail(L->st, "The tree-ensemble node must read the graph's input, directly or "
						 "after preprocessing.");
		return L->st->code;
	}
	if ((rc = onnx_trees_prep_tree(L, P, tree->input[0])) != GS_OK)
		return rc;

	/* regressor: Y; classifier: label, probabilities */
	for (size_t k = 0; k < tree->n_output; k++)
		if (tree->output[k] && tree->output[k][0])
			name_add(T, tree->output[k], k == (cls ? 1u : 0u) ? TK_SCORE : TK_OTHER);
	return GS_OK;
}

/*
 * A node reading the graph's input or a value computed from it, not the
 * tree node: preprocessing, translated into P (onnx_trees_prep.c); the
 * value it computes is features too.  label names it.
 */
static GsCode
graph_prep_node(Loader *L, TPrep *P, const Onnx__NodeProto *node, TNames *T, const char *label)
{
	char		saved[sizeof(L->label)];
	GsCode		rc;

	memcpy(saved, L->label, sizeof(saved));
	snprintf(L->label, sizeof(L->label), "%s", label);
	rc = onnx_trees_prep_node(L, P, node);
	memcpy(L->label, saved, sizeof(saved));
	if (rc != GS_OK)
		return rc;
	if (name_kind(T->v, T->n, node->output[0]) >= 0)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s redefines a value", label);
	name_add(T, node->output[0], TK_FEAT);
	return GS_OK;
}

/*
 * The kind of what post-processing node (op; data_in: the kind of its
 * non-constant input) computes: the scores again after Identity, ZipMap,
 * a Cast to float or double and a Mul by a constant 1 (else refused), of
 * the scores; anything else is no longer the scores.
 */
static GsCode
post_kind(Loader *L, const Onnx__NodeProto *node, const char *op, int data_in, const char *label,
		  TKind *out_kind)
{
	*out_kind = TK_OTHER;
	if (strcmp(op, "Mul") == 0)
	{
		const Onnx__TensorProto *c = NULL;
		bool		ones = false;
		GsCode		rc;

		for (size_t k = 0; k < node->n_input && c == NULL; k++)
			c = onnx_find_const(L, node->input[k]);
		if (c && (rc = check_ones(L, c, &ones)) != GS_OK)
			return rc;
		if (node->n_input != 2 || !ones)
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s multiplies by something other than a constant 1",
						  label);
			return L->st->code;
		}
		*out_kind = data_in == TK_SCORE ? TK_SCORE : TK_OTHER;
	}
	else if (strcmp(op, "Cast") == 0)
	{
		int64_t		to;

		if (onnx_attr_int(L, node, "to", 0, &to) != GS_OK)
			return L->st->code;
		*out_kind = data_in == TK_SCORE && (to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
											to == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE)
			? TK_SCORE : TK_OTHER;
	}
	else if (strcmp(op, "Identity") == 0 || strcmp(op, "ZipMap") == 0)
		*out_kind = data_in == TK_SCORE ? TK_SCORE : TK_OTHER;
	return GS_OK;
}

/*
 * A node after the trees: Identity, Cast, ZipMap, ArgMax, Constant or Mul
 * by 1 only, with at most two inputs, each defined before it; its outputs
 * are named with their kind (post_kind).  nname and oname: the node's and
 * its operator's printable names, label both.
 */
static GsCode
graph_post_node(Loader *L, const Onnx__NodeProto *node, TNames *T, const char *nname,
				const char *oname, const char *label)
{
	const char *op = node->op_type ? node->op_type : "";
	const char *dom = node->domain ? node->domain : "";
	bool		ml = strcmp(dom, "ai.onnx.ml") == 0;
	bool		std = dom[0] == '\0' || strcmp(dom, "ai.onnx") == 0;
	TKind		out_kind = TK_OTHER;
	int			data_in = -1;	/* kind of the non-constant input */
	GsCode		rc;

	if (!((std && (strcmp(op, "Identity") == 0 || strcmp(op, "Cast") == 0 ||
				   strcmp(op, "ArgMax") == 0 || strcmp(op, "Mul") == 0 ||
				   strcmp(op, "Constant") == 0)) ||
		  (ml && strcmp(op, "ZipMap") == 0)))
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "unsupported ONNX operator \"%s\" in node \"%s\"",
					  oname, nname);
		gs_status_detail(L->st, "Besides its tree-ensemble node, a model may only hold Identity, Cast, "
						 "ZipMap, ArgMax, Constant and Mul-by-1 nodes after the trees.");
		return L->st->code;
	}
	if (node->n_input > 2)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has %zu inputs", label, node->n_input);
	if (strcmp(op, "Constant") == 0)
	{
		if (node->n_output != 1 || node->output[0] == NULL || node->output[0][0] == '\0' ||
			name_kind(T->v, T->n, node->output[0]) >= 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no output", label);
		name_add(T, node->output[0], TK_CONST);
		return GS_OK;
	}
	for (size_t k = 0; k < node->n_input; k++)
	{
		int			kind;

		if (node->input[k] == NULL || node->input[k][0] == '\0')
			continue;
		kind = name_kind(T->v, T->n, node->input[k]);
		if (kind < 0)
		{
			char		iname[80];

			onnx_safe_name(iname, sizeof(iname), node->input[k]);
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "input \"%s\" of %s is not defined before it", iname, label);
		}
		if (kind != TK_CONST)
			data_in = data_in == TK_SCORE ? TK_SCORE : kind;
	}
	if ((rc = post_kind(L, node, op, data_in, label, &out_kind)) != GS_OK)
		return rc;
	for (size_t k = 0; k < node->n_output; k++)
	{
		if (node->output[k] == NULL || node->output[k][0] == '\0')
			continue;
		if (name_kind(T->v, T->n, node->output[k]) >= 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s redefines a value", label);
		name_add(T, node->output[k], out_kind);
	}
	return GS_OK;
}

/* Every graph output is computed, and some output carries the scores. */
static GsCode
check_scored(Loader *L, const TNames *T)
{
	const Onnx__GraphProto *g = L->g;
	bool		scored = false;

	for (size_t k = 0; k < g->n_output; k++)
	{
		int			kind = g->output[k]->name ? name_kind(T->v, T->n, g->output[k]->name) : -1;

		if (kind < 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "a graph output is not computed by any node");
		scored |= kind == TK_SCORE;
	}
	if (!scored)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "no output of the graph carries the scores of %s", L->label);
		gs_status_detail(L->st, "The graph must output the regressor's values or the classifier's probabilities.");
		return L->st->code;
	}
	return GS_OK;
}

/*
 * Check the graph: its input is float [N, F] (or several [N, w]: the
 * columns of a pandas DataFrame, side by side); the nodes that read it
 * (or what they compute from it) before the tree node are preprocessing,
 * translated into P (onnx_trees_prep.c); the tree node reads the input or
 * a preprocessed value; the other nodes post-process the tree node's
 * outputs with Identity, Cast, ZipMap, ArgMax, Constant or Mul by 1; some
 * graph output carries the scores unchanged.  Sets *n_features (F) and P,
 * which the caller releases with onnx_trees_prep_free.
 */
GsCode
onnx_trees_check_graph(Loader *L, const Onnx__NodeProto *tree, int32_t *n_features, TPrep *P)
{
	const Onnx__GraphProto *g = L->g;
	TNames		T;
	GsCode		rc = GS_OK;

	if (onnx_trees_prep_inputs(L, P, (int32_t) GS_NODE_FEATURE_MASK, n_features) != GS_OK)
		return L->st->code;
	P->onehot = true;			/* one-hot columns fold into category splits */

	if (tree->n_output < 1 || (strcmp(tree->op_type, "TreeEnsembleClassifier") == 0 && tree->n_output < 2))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has too few outputs", L->label);
	if ((rc = names_init(L, P, &T)) != GS_OK)
		return rc;

	for (size_t i = 0; i < g->n_node && rc == GS_OK; i++)
	{
		const Onnx__NodeProto *node = g->node[i];
		char		nname[80],
					oname[48],
					label[160];

		onnx_safe_name(nname, sizeof(nname), node->name);
		onnx_safe_name(oname, sizeof(oname), node->op_type ? node->op_type : "");
		snprintf(label, sizeof(label), "node \"%s\" (%s)", nname, oname);
		if (node == tree)
			rc = graph_tree_node(L, P, tree, &T);
		else if (reads_features(T.v, T.n, node))
			rc = graph_prep_node(L, P, node, &T, label);
		else
			rc = graph_post_node(L, node, &T, nname, oname, label);
	}
	if (rc == GS_OK)
		rc = check_scored(L, &T);
	L->alloc.free(L->alloc.ctx, T.v);
	return rc;
}

/* Is node a tree-ensemble node of ai.onnx.ml? */
bool
onnx_trees_is_tree_node(const Onnx__NodeProto *node)
{
	return node->op_type && node->domain && strcmp(node->domain, "ai.onnx.ml") == 0 &&
		(strcmp(node->op_type, "TreeEnsembleRegressor") == 0 ||
		 strcmp(node->op_type, "TreeEnsembleClassifier") == 0 ||
		 strcmp(node->op_type, "TreeEnsemble") == 0);
}

/* Does the graph hold a tree-ensemble node?  See onnx_internal.h. */
bool
onnx_graph_has_trees(const Onnx__GraphProto *g)
{
	if (g == NULL)
		return false;
	for (size_t i = 0; i < g->n_node; i++)
		if (onnx_trees_is_tree_node(g->node[i]))
			return true;
	return false;
}

/*
 * onnx_output.c
 *	  Which output of a network's graph is scored, and the nodes it depends
 *	  on (for onnx_load.c).
 *
 * The scored output is the graph's only output, or of several outputs the
 * one float tensor (a classifier's probabilities beside its int64 label, as
 * skl2onnx writes them), or, when none is a float tensor, the input of an
 * ai.onnx.ml ZipMap output (skl2onnx's default for a classifier); anything
 * else is refused.  Only the nodes that output depends on are translated,
 * found by an iterative walk backwards by value names (each node visited
 * once, over a sorted index of the node outputs, which must be unique): the
 * label branch (ArgMax, ArrayFeatureExtractor, Reshape, Cast to int64...)
 * and any other dead end is ignored.  A binary classifier's probabilities
 * Concat(Sub(1, p), p) over the columns are scored as p alone, the
 * probability of the second class (one output, as for binary tree
 * classifiers), and a linear classifier's scores Concat(Mul(s, -1), s) as s;
 * any other Concat is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/*
 * Named node outputs indexed, at most: far more than any network needs
 * (2 per node where Dropout keeps its mask), bounding the index.
 */
#define MAX_NAMED_OUTPUTS	(4 * GS_ONNX_MAX_NODES)

/*
 * Inputs of a node followed backwards: no supported op takes more, and a
 * node with more is refused when it is translated.
 */
#define MAX_WALKED_INPUTS	8

/* Is s a non-empty name? */
static inline bool
named(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* A value and the node producing it. */
typedef struct Producer
{
	const char *name;
	int32_t		node;
} Producer;

/* Order of Producer: by name, then node. */
static int
producer_cmp(const void *a, const void *b)
{
	const Producer *pa = (const Producer *) a;
	const Producer *pb = (const Producer *) b;
	int			c = strcmp(pa->name, pb->name);

	if (c != 0)
		return c;
	return (pa->node > pb->node) - (pa->node < pb->node);
}

/* Index of the node producing name in the sorted prod[n], or -1. */
static int32_t
find_producer(const Producer *prod, int32_t n, const char *name)
{
	int32_t		lo = 0,
				hi = n;

	if (!named(name))
		return -1;
	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;
		int			c = strcmp(prod[mid].name, name);

		if (c == 0)
			return prod[mid].node;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The output of an ai.onnx.ml ZipMap node among the graph's outputs
 * (skl2onnx's default for a classifier's probabilities: a sequence of maps
 * from class to probability), or NULL.  *in is the ZipMap's input, the
 * probabilities as a float tensor [N, C].
 */
static const Onnx__ValueInfoProto *
zipmap_output(const Loader *L, const char **in)
{
	for (size_t i = 0; i < L->g->n_node; i++)
	{
		const Onnx__NodeProto *n = L->g->node[i];

		if (!onnx_node_is(n, "ZipMap", true) || n->n_input != 1 || n->n_output != 1 ||
			!named(n->input[0]) || !named(n->output[0]))
			continue;
		for (size_t k = 0; k < L->g->n_output; k++)
			if (L->g->output[k]->name && strcmp(L->g->output[k]->name, n->output[0]) == 0)
			{
				*in = n->input[0];
				return L->g->output[k];
			}
	}
	return NULL;
}

/*
 * The output to score: the graph's only output, or of several the one
 * float tensor (a classifier's probabilities beside its int64 label), or,
 * when none is a float tensor, the probabilities a ZipMap output is made
 * of (*zipped set: the scored value is then the ZipMap's input, whose
 * type the graph does not declare).
 */
static GsCode
choose_output(Loader *L, const Onnx__ValueInfoProto **chosen, const char **zipped)
{
	const Onnx__ValueInfoProto *f = NULL;
	int			n_float = 0,
				n_unknown = 0;

	*zipped = NULL;

	if (L->g->n_output == 0)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the graph has no output");
	if (L->g->n_output == 1)
	{
		*chosen = L->g->output[0];
		return GS_OK;
	}
	for (size_t i = 0; i < L->g->n_output; i++)
	{
		const Onnx__TypeProto *t = L->g->output[i]->type;

		if (t == NULL || t->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET ||
			(t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
			 (t->tensor_type == NULL || !t->tensor_type->has_elem_type)))
			n_unknown++;
		else if (t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
				 t->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		{
			n_float++;
			f = L->g->output[i];
		}
	}
	if (n_float == 0 && (*chosen = zipmap_output(L, zipped)) != NULL)
		return GS_OK;
	if (n_float != 1 || n_unknown > 0)
	{
		if (n_unknown > 0)
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "the graph has %zu outputs, %d of them of undeclared type; expected one float tensor among them",
						  L->g->n_output, n_unknown);
		else
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "the graph has %zu outputs, %d of them float tensors; expected exactly one to score",
						  L->g->n_output, n_float);
		gs_status_detail(L->st, "Of a classifier's outputs the probabilities are scored (a float tensor, or "
						 "the input of a ZipMap) and the label is ignored.");
		return L->st->code;
	}
	*chosen = f;
	return GS_OK;
}

/*
 * Is the scored output a binary classifier's probabilities,
 * Concat(Sub(1, p), p) over the columns, or its scores Concat(Mul(s, -1), s)?
 * Then *root is p or s (the chain must
 * end there with one column: the probability of the second class, scored
 * alone as for binary tree classifiers).  Else *root is the output itself.
 * Any other Concat producing the output is refused.
 */
static GsCode
binary_pattern(Loader *L, const Producer *prod, int32_t n_prod, const char *out_name,
			   const char **root, bool *binary)
{
	static const char *const cat_attrs[] = {"axis", NULL};
	const Onnx__NodeProto *cat,
			   *sub = NULL;
	int32_t		j = find_producer(prod, n_prod, out_name);
	int64_t		axis = 0;
	float		one = 0.0f;
	bool		ok;
	char		nname[80];

	*root = out_name;
	*binary = false;
	if (j < 0 || !onnx_node_is(L->g->node[j], "Concat", false))
		return GS_OK;
	cat = L->g->node[j];
	onnx_safe_name(nname, sizeof(nname), cat->name);
	snprintf(L->label, sizeof(L->label), "node \"%s\" (Concat)", nname);
	if (onnx_attrs_allowed(L, cat, cat_attrs) != GS_OK ||
		onnx_attr_int(L, cat, "axis", 0, &axis) != GS_OK)
		return L->st->code;
	ok = (axis == 1 || axis == -1) && cat->n_input == 2 &&
		named(cat->input[0]) && named(cat->input[1]);
	if (ok)
	{
		j = find_producer(prod, n_prod, cat->input[0]);
		sub = j >= 0 ? L->g->node[j] : NULL;
		ok = sub != NULL && sub->n_input == 2 && sub->n_attribute == 0 && named(sub->input[0]) &&
			named(sub->input[1]);
	}
	if (ok && onnx_node_is(sub, "Sub", false))
		ok = strcmp(sub->input[1], cat->input[1]) == 0 &&
			onnx_const_scalar(L, sub->input[0], &one) && one == 1.0f;
	else if (ok && onnx_node_is(sub, "Mul", false))
	{
		/* a linear classifier's scores [-s, s] (skl2onnx's SGDClassifier, Perceptron) */
		const char *other = onnx_other_input(sub, cat->input[1]);

		ok = (strcmp(sub->input[0], cat->input[1]) == 0 || strcmp(sub->input[1], cat->input[1]) == 0) &&
			other != NULL && onnx_const_scalar(L, other, &one) && one == -1.0f;
	}
	else
		ok = false;
	if (!ok)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "%s is not the [1 - p, p] of a binary classifier", L->label);
		gs_status_detail(L->st, "Concat is supported only as a binary classifier's last node, "
						 "Concat(Sub(1, p), p) or Concat(Mul(s, -1), s) over the columns, p or s the "
						 "network's one output.");
		return L->st->code;
	}
	*root = cat->input[1];
	*binary = true;
	return GS_OK;
}

/*
 * Choose the scored output and mark in L->needed the nodes it depends on:
 * a walk backwards by value names from the output (from p for a binary
 * classifier), iterative over an explicit stack of at most n_node nodes,
 * each node pushed once.  Nodes nothing scored depends on (a classifier's
 * label branch: ArgMax, ArrayFeatureExtractor, Cast to int64...) are
 * never translated.  A value produced by two nodes is refused.
 */
GsCode
onnx_select_nodes(Loader *L, const Onnx__ValueInfoProto **out, const char **root, bool *binary)
{
	const Onnx__GraphProto *g = L->g;
	Producer   *prod = NULL;
	int32_t    *stack = NULL;
	int32_t		n_prod = 0,
				sp = 0,
				j;
	int64_t		n_named = 0;
	const char *zipped,
			   *scored;

	*root = NULL;
	*binary = false;
	if (choose_output(L, out, &zipped) != GS_OK)
		return L->st->code;
	scored = zipped ? zipped : (*out)->name;
	if (zipped)
		*out = NULL;			/* the ZipMap's input: no declared type to check */
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t k = 0; k < g->node[i]->n_output; k++)
			if (named(g->node[i]->output[k]))
				n_named++;
	if (n_named > MAX_NAMED_OUTPUTS)
		return gs_status_set(L->st, GS_ERR_LIMIT,
							 "the graph's nodes have %lld outputs, more than the limit of %d",
							 (long long) n_named, MAX_NAMED_OUTPUTS);
	L->needed = onnx_alloc(L, sizeof(bool) * (g->n_node + 1));
	prod = onnx_alloc(L, sizeof(Producer) * (size_t) (n_named + 1));
	stack = onnx_alloc(L, sizeof(int32_t) * (g->n_node + 1));
	if (L->needed == NULL || prod == NULL || stack == NULL)
	{
		onnx_nomem(L);
		goto done;
	}
	memset(L->needed, 0, sizeof(bool) * (g->n_node + 1));
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t k = 0; k < g->node[i]->n_output; k++)
			if (named(g->node[i]->output[k]))
			{
				prod[n_prod].name = g->node[i]->output[k];
				prod[n_prod].node = (int32_t) i;
				n_prod++;
			}
	qsort(prod, (size_t) n_prod, sizeof(Producer), producer_cmp);
	for (int32_t k = 1; k < n_prod; k++)
		if (strcmp(prod[k - 1].name, prod[k].name) == 0)
		{
			char		vname[80];

			onnx_safe_name(vname, sizeof(vname), prod[k].name);
			gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						  "value \"%s\" is the output of more than one node", vname);
			goto done;
		}

	if (binary_pattern(L, prod, n_prod, scored, root, binary) != GS_OK)
		goto done;
	if ((j = find_producer(prod, n_prod, *root)) >= 0)
	{
		L->needed[j] = true;
		stack[sp++] = j;
	}
	while (sp > 0)
	{
		const Onnx__NodeProto *node = g->node[stack[--sp]];

		for (size_t k = 0; k < node->n_input && k < MAX_WALKED_INPUTS; k++)
			if ((j = find_producer(prod, n_prod, node->input[k])) >= 0 && !L->needed[j])
			{
				L->needed[j] = true;
				stack[sp++] = j;
			}
	}

done:
	if (prod)
		L->alloc.free(L->alloc.ctx, prod);
	if (stack)
		L->alloc.free(L->alloc.ctx, stack);
	return L->st->code;
}

/*
 * Check the chain ends at root and the scored output is [N, width] float
 * ([N, 2] for a binary classifier, scored as its one column p); out NULL:
 * a ZipMap's input, not a graph output.
 */
GsCode
onnx_check_output(Loader *L, const Onnx__ValueInfoProto *out, const char *root, bool binary)
{
	const Onnx__TypeProto__Tensor *tt;
	int32_t		declared = (binary || L->two_class) ? 2 : L->width;

	if (!onnx_is_cur(L, root))
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "the graph's output is not the end of a single feed-forward chain");
		return L->st->code;
	}
	if ((binary || L->two_class) && L->width != 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "the binary classifier's probability has %d columns, expected one",
							 L->width);
	if (out == NULL || out->type == NULL)
		return GS_OK;
	if (out->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
		(tt = out->type->tensor_type) == NULL ||
		(tt->has_elem_type && tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the graph's output is not a float tensor");
	if (L->rank1 && tt->shape && tt->shape->n_dim != 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "the graph's output shape does not match [N]");
	/*
	 * skl2onnx declares a binary RidgeClassifier's decision function (an
	 * ArrayFeatureExtractor of one column) [N, 2]; onnxruntime computes
	 * [N, 1] and only warns: the width is the one computed.
	 */
	if (!L->rank1 && tt->shape && L->picked_output && tt->shape->n_dim == 2)
		return GS_OK;
	if (!L->rank1 && tt->shape &&
		(tt->shape->n_dim != 2 ||
		 (tt->shape->dim[1]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		  tt->shape->dim[1]->dim_value != declared)))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "the graph's output shape does not match [N, %d]", declared);
	return GS_OK;
}

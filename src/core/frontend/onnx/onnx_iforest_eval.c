/*
 * onnx_iforest_eval.c
 *	  The path length of an IsolationForest's tree (see onnx_iforest.c) for
 *	  one of its leaves: the element-wise nodes between the tree node's
 *	  output and its term of the Sum, interpreted on the leaf's value as
 *	  onnxruntime computes them (float32 arithmetic, int64 casts, boolean
 *	  comparisons), with lookups of the graph's values by name.  Allocates
 *	  nothing but transient constants, freed before each function returns.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_iforest.h"

/* Order of Producer entries: by name (qsort and bsearch). */
int
if_cmp_producer(const void *a, const void *b)
{
	return strcmp(((const Producer *) a)->name, ((const Producer *) b)->name);
}

/* The node whose output is name, or -1. */
int64_t
if_producer_of(const IfCtx *C, const char *name)
{
	Producer	key = {name, 0};
	const Producer *p;

	if (name == NULL || C->n_prod == 0)
		return -1;
	p = bsearch(&key, C->prod, C->n_prod, sizeof(Producer), if_cmp_producer);
	return p ? p->node : -1;
}

/* Is n the default domain's op? */
bool
if_is_op(const Onnx__NodeProto *n, const char *op)
{
	return onnx_node_is(n, op, false);
}

/* Refuse at node n (for messages). */
GsCode
if_refuse_at(IfCtx *C, const Onnx__NodeProto *n, const char *why)
{
	char		nname[80],
				oname[48];

	onnx_safe_name(nname, sizeof(nname), n ? n->name : "");
	onnx_safe_name(oname, sizeof(oname), n && n->op_type ? n->op_type : "");
	gs_status_set(C->L->st, GS_ERR_UNSUPPORTED,
				  "IsolationForest graph: node \"%s\" (%s) %s", nname, oname, why);
	gs_status_detail(C->L->st, "An IsolationForest is read as skl2onnx writes it: per tree a "
					 "TreeEnsembleRegressor and element-wise nodes (Cast, LabelEncoder, Reshape, "
					 "comparisons, Add, Sub, Mul, Div, Max, Min, Neg, Log), a Sum over the trees, "
					 "then Div, Neg, Pow(2, .), Neg and Add.");
	return C->L->st->code;
}

/*
 * The tensor of a constant: an initializer, or a Constant node's value;
 * NULL for any other value.  Looked up through the producers' index (a
 * scan of every node per lookup would make a large model's load quadratic).
 */
const Onnx__TensorProto *
if_const_tensor(IfCtx *C, const char *name)
{
	int64_t		p = if_producer_of(C, name);
	const Onnx__AttributeProto *a;

	if (p < 0)
		return onnx_find_const(C->L, name);
	if (if_is_op(C->g->node[p], "Constant") && C->g->node[p]->n_input == 0 &&
		(a = onnx_attr_find(C->g->node[p], "value")) != NULL)
		return a->t;
	return NULL;
}

/* A constant scalar (float or int64) named name; false when not one. */
bool
if_const_scalar(IfCtx *C, const char *name, Val *v)
{
	const Onnx__TensorProto *t = if_const_tensor(C, name);
	int64_t		n = 0;

	if (t == NULL || !t->has_data_type)
		return false;
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] != 1)
			return false;
	if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
	{
		float	   *vals = NULL;

		if (onnx_tensor_floats(C->L, t, 1, &n, &vals) != GS_OK)
		{
			/* not a match; a failed allocation is remembered */
			C->L->lost_alloc |= C->L->st->code == GS_ERR_NOMEM;
			gs_status_clear(C->L->st);
			return false;
		}
		v->k = V_F32;
		v->f = vals[0];
		v->i = 0;
		C->L->alloc.free(C->L->alloc.ctx, vals);
		return n == 1;
	}
	if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
	{
		int64_t		x = 0;

		if (onnx_tensor_int64s(C->L, t, 1, &n, &x) != GS_OK)
		{
			C->L->lost_alloc |= C->L->st->code == GS_ERR_NOMEM;
			gs_status_clear(C->L->st);
			return false;
		}
		v->k = V_I64;
		v->i = x;
		v->f = 0.0f;
		return n == 1;
	}
	return false;
}

/* LabelEncoder int64 -> float: the value of key x (keys_int64s / values_floats). */
static GsCode
label_encode(IfCtx *C, const Onnx__NodeProto *n, int64_t x, float *out)
{
	const Onnx__AttributeProto *keys = onnx_attr_find(n, "keys_int64s");
	const Onnx__AttributeProto *vals = onnx_attr_find(n, "values_floats");
	const Onnx__AttributeProto *def = onnx_attr_find(n, "default_float");

	if (keys == NULL || vals == NULL || keys->n_ints != vals->n_floats || keys->n_ints > IF_MAX_KEYS)
		return if_refuse_at(C, n, "is not a LabelEncoder of int64 keys_int64s to values_floats of the same length");
	for (size_t k = 0; k < keys->n_ints; k++)
		if (keys->ints[k] == x)
		{
			*out = vals->floats[k];
			return GS_OK;
		}
	/* onnxruntime's default_float is -0.0 */
	*out = def && def->has_f ? def->f : -0.0f;
	return GS_OK;
}


/* Evaluate input k of node n (refused when n has no such input). */
static GsCode
eval_in(IfCtx *C, const Onnx__NodeProto *n, size_t k, int depth, Val *v)
{
	if (k >= n->n_input)
		return if_refuse_at(C, n, "has too few inputs");
	return if_eval(C, n->input[k], depth + 1, v);
}

/* Convert v to type `to` (ONNX element type) as onnxruntime's Cast does. */
static GsCode
cast_val(IfCtx *C, const Onnx__NodeProto *n, int64_t to, Val *v)
{
	switch (to)
	{
		case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
			if (v->k != V_F32)
				v->f = (float) v->i;
			v->k = V_F32;
			return GS_OK;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
			if (v->k == V_F32)
			{
				/* static_cast<int64_t>: truncation; out of range is undefined */
				if (!(fabsf(v->f) < 9.2e18f))
					return if_refuse_at(C, n, "casts a value that is not an int64 to int64");
				v->i = (int64_t) v->f;
			}
			v->k = V_I64;
			return GS_OK;
		case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
			v->i = v->k == V_F32 ? v->f != 0.0f : v->i != 0;
			v->k = V_BOOL;
			return GS_OK;
		default:
			return if_refuse_at(C, n, "casts to a type other than float, int64 or bool");
	}
}

/* A binary element-wise op on two values of one kind. */
static GsCode
binary(IfCtx *C, const Onnx__NodeProto *n, const char *op, const Val *a, const Val *b, Val *out)
{
	bool		cmp = strcmp(op, "Equal") == 0 || strcmp(op, "Greater") == 0 ||
		strcmp(op, "Less") == 0 || strcmp(op, "GreaterOrEqual") == 0 ||
		strcmp(op, "LessOrEqual") == 0;

	if (a->k != b->k || a->k == V_BOOL)
		return if_refuse_at(C, n, "mixes element types, or computes on booleans");
	if (cmp)
	{
		bool		lt = a->k == V_F32 ? a->f < b->f : a->i < b->i;
		bool		gt = a->k == V_F32 ? a->f > b->f : a->i > b->i;
		bool		eq = a->k == V_F32 ? a->f == b->f : a->i == b->i;

		out->k = V_BOOL;
		out->f = 0.0f;
		out->i = strcmp(op, "Equal") == 0 ? eq : strcmp(op, "Greater") == 0 ? gt :
			strcmp(op, "Less") == 0 ? lt : strcmp(op, "GreaterOrEqual") == 0 ? (gt || eq) :
			(lt || eq);
		return GS_OK;
	}
	out->k = a->k;
	if (a->k == V_F32)
	{
		float		x = a->f,
					y = b->f;

		out->i = 0;
		if (strcmp(op, "Add") == 0)
			out->f = x + y;
		else if (strcmp(op, "Sub") == 0)
			out->f = x - y;
		else if (strcmp(op, "Mul") == 0)
			out->f = x * y;
		else if (strcmp(op, "Div") == 0)
			out->f = x / y;
		else if (strcmp(op, "Max") == 0)
			out->f = isnan(x) || isnan(y) ? NAN : x < y ? y : x;
		else
			out->f = isnan(x) || isnan(y) ? NAN : y < x ? y : x;
		return GS_OK;
	}
	if (strcmp(op, "Div") == 0 || strcmp(op, "Max") == 0 || strcmp(op, "Min") == 0)
	{
		if (strcmp(op, "Div") == 0)
			return if_refuse_at(C, n, "divides integers");
		out->i = (strcmp(op, "Max") == 0) == (a->i < b->i) ? b->i : a->i;
		return GS_OK;
	}
	if ((strcmp(op, "Add") == 0 && __builtin_add_overflow(a->i, b->i, &out->i)) ||
		(strcmp(op, "Sub") == 0 && __builtin_sub_overflow(a->i, b->i, &out->i)) ||
		(strcmp(op, "Mul") == 0 && __builtin_mul_overflow(a->i, b->i, &out->i)))
		return if_refuse_at(C, n, "overflows int64");
	return GS_OK;
}

/* Evaluate node n (C->memo caches it for this evaluation). */
static GsCode
eval_node(IfCtx *C, const Onnx__NodeProto *n, int depth, Val *out)
{
	const char *op = n->op_type ? n->op_type : "";
	Val			a,
				b;

	if (onnx_node_is(n, "LabelEncoder", true))
	{
		if (eval_in(C, n, 0, depth, &a) != GS_OK)
			return C->L->st->code;
		if (a.k != V_I64)
			return if_refuse_at(C, n, "encodes a value that is not an int64");
		out->k = V_F32;
		out->i = 0;
		return label_encode(C, n, a.i, &out->f);
	}
	if (if_is_op(n, "Cast"))
	{
		int64_t		to = 0;

		if (onnx_attr_int(C->L, n, "to", 0, &to) != GS_OK || eval_in(C, n, 0, depth, out) != GS_OK)
			return C->L->st->code;
		return cast_val(C, n, to, out);
	}
	if (if_is_op(n, "Reshape") || if_is_op(n, "Identity") || if_is_op(n, "Squeeze") ||
		if_is_op(n, "Unsqueeze") || if_is_op(n, "Flatten"))
		return eval_in(C, n, 0, depth, out);	/* one value per row either way */
	if (if_is_op(n, "Not"))
	{
		if (eval_in(C, n, 0, depth, out) != GS_OK)
			return C->L->st->code;
		if (out->k != V_BOOL)
			return if_refuse_at(C, n, "negates a value that is not a boolean");
		out->i = !out->i;
		return GS_OK;
	}
	if (if_is_op(n, "Neg") || if_is_op(n, "Abs") || if_is_op(n, "Log") || if_is_op(n, "Exp") || if_is_op(n, "Sqrt"))
	{
		if (eval_in(C, n, 0, depth, out) != GS_OK)
			return C->L->st->code;
		if (out->k == V_BOOL || (out->k == V_I64 && !if_is_op(n, "Neg") && !if_is_op(n, "Abs")))
			return if_refuse_at(C, n, "computes on a value of the wrong type");
		if (out->k == V_I64)
		{
			if (out->i == INT64_MIN)
				return if_refuse_at(C, n, "overflows int64");
			out->i = if_is_op(n, "Neg") ? -out->i : llabs(out->i);
			return GS_OK;
		}
		out->f = if_is_op(n, "Neg") ? -out->f : if_is_op(n, "Abs") ? fabsf(out->f) :
			if_is_op(n, "Log") ? logf(out->f) : if_is_op(n, "Exp") ? expf(out->f) : sqrtf(out->f);
		return GS_OK;
	}
	if (if_is_op(n, "Add") || if_is_op(n, "Sub") || if_is_op(n, "Mul") || if_is_op(n, "Div") ||
		if_is_op(n, "Equal") || if_is_op(n, "Greater") || if_is_op(n, "Less") ||
		if_is_op(n, "GreaterOrEqual") || if_is_op(n, "LessOrEqual") ||
		((if_is_op(n, "Max") || if_is_op(n, "Min")) && n->n_input >= 1))
	{
		size_t		n_in = if_is_op(n, "Max") || if_is_op(n, "Min") ? n->n_input : 2;

		if (n->n_input != n_in || eval_in(C, n, 0, depth, &a) != GS_OK)
			return n->n_input != n_in ? if_refuse_at(C, n, "has the wrong number of inputs") :
				C->L->st->code;
		for (size_t k = 1; k < n_in; k++)
		{
			if (eval_in(C, n, k, depth, &b) != GS_OK || binary(C, n, op, &a, &b, &a) != GS_OK)
				return C->L->st->code;
		}
		*out = a;
		return GS_OK;
	}
	return if_refuse_at(C, n, "is not an element-wise node this reader knows");
}

/* The value named name for the current leaf (the tree's output is C->leaf). */
GsCode
if_eval(IfCtx *C, const char *name, int depth, Val *out)
{
	int64_t		p;
	const Onnx__NodeProto *n;

	if (depth > IF_MAX_EXPR_DEPTH)
		return gs_status_set(C->L->st, GS_ERR_UNSUPPORTED,
							 "IsolationForest graph: a tree's path length nests more than %d nodes",
							 IF_MAX_EXPR_DEPTH);
	if (if_const_scalar(C, name, out))
		return GS_OK;
	p = if_producer_of(C, name);
	if (p < 0)
		return gs_status_set(C->L->st, GS_ERR_UNSUPPORTED,
							 "IsolationForest graph: a tree's path length reads a value that is neither "
							 "its tree's output nor a constant scalar");
	n = C->g->node[p];
	if (p == C->tree)
	{
		out->k = V_F32;
		out->f = C->leaf;
		out->i = 0;
		return GS_OK;
	}
	if (onnx_trees_is_tree_node(n))
		return if_refuse_at(C, n, "is another tree read by this tree's path length");
	if (n->n_output != 1)
		return if_refuse_at(C, n, "has more than one output");
	if (C->stamp[p] == C->cur)
	{
		*out = C->memo[p];
		return GS_OK;
	}
	if (eval_node(C, n, depth, out) != GS_OK)
		return C->L->st->code;
	C->stamp[p] = C->cur;
	C->memo[p] = *out;
	return GS_OK;
}

/*
 * The one tree node the value name depends on, walking producers (not
 * through constants) from found (-1: none yet): its index, -1 when it
 * depends on none, -2 when on several or on something else (the graph's
 * input, an unknown value, more than IF_MAX_TERM_NODES nodes: every leaf
 * evaluates them).  Each node is walked once per term (C->seen, C->term).
 * Sets no status.
 */
int64_t
if_term_tree(IfCtx *C, const char *name, int depth, int64_t found)
{
	int64_t		p;
	const Onnx__NodeProto *n;

	if (found == -2 || depth > IF_MAX_EXPR_DEPTH)
		return -2;
	if (if_const_tensor(C, name) != NULL)
		return found;			/* a constant (a Reshape's shape too) */
	if ((p = if_producer_of(C, name)) < 0)
		return -2;
	n = C->g->node[p];
	if (onnx_trees_is_tree_node(n))
		return found == -1 || found == p ? p : -2;
	if (C->seen[p] == C->term)
		return found;
	C->seen[p] = C->term;
	if (++C->n_seen > IF_MAX_TERM_NODES)
		return -2;
	for (size_t k = 0; k < n->n_input && found != -2; k++)
		found = if_term_tree(C, n->input[k], depth + 1, found);
	return found;
}

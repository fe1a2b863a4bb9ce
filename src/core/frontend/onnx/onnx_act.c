/*
 * onnx_act.c
 *	  ONNX activations beyond the basic ones of onnx_ops.c, each one
 *	  element-wise step of the network (mlp.h; the math is in mlp_eval.h,
 *	  shared with the CUDA kernels):
 *
 *	  Elu (alpha), Selu (alpha, gamma), Softplus, Softsign, Mish, HardSwish,
 *	  HardSigmoid (alpha, beta; PyTorch's Hardsigmoid exports as alpha 1/6),
 *	  Gelu (opset 20; approximate "none" or "tanh"), PRelu (a
 *	  slope per column or one for all, a constant), and Clip (PyTorch's
 *	  ReLU6 and Hardtanh): bounds as attributes before opset 11, as optional
 *	  constant inputs from opset 11 on; Min / Max of the chain and a constant
 *	  (tf2onnx's hard_sigmoid and relu6) as a Clip with one bound.
 *
 * Also ai.onnx.ml's Imputer (scikit-learn's SimpleImputer in a pipeline
 * before a network).  The activations exporters write as several nodes are
 * onnx_fuse.c's.
 *
 * Attribute defaults are the ONNX specification's.
 */
#include "onnx_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Selu's defaults in the ONNX specification (the float values). */
#define SELU_ALPHA 1.67326319217681884765625f
#define SELU_GAMMA 1.05070102214813232421875f

static const char *const activations[] = {
	"Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "PRelu", "Clip", "Gelu", "Mish",
	"HardSwish", NULL
};

/* Is op one of this file's activations? */
bool
onnx_is_activation(const char *op)
{
	for (int i = 0; activations[i]; i++)
		if (strcmp(op, activations[i]) == 0)
			return true;
	return false;
}

/* Add a step with scalars alpha and beta. */
static GsCode
scalar_step(Loader *L, const Onnx__NodeProto *node, GsMlpOp op, float alpha, float beta)
{
	GsMlpStep  *s = onnx_new_step(L, op, node->name);

	if (s == NULL)
		return L->st->code;
	s->alpha = alpha;
	s->beta = beta;
	return GS_OK;
}

/*
 * Clip's bound k (1: min, 2: max) from opset 11 on: an absent or empty input
 * keeps *v; otherwise a constant float scalar.
 */
static GsCode
clip_bound(Loader *L, const Onnx__NodeProto *node, size_t k, float *v)
{
	const Onnx__TensorProto *t;
	int64_t		n;
	float	   *vals;

	if (node->n_input <= k || node->input[k] == NULL || node->input[k][0] == '\0')
		return GS_OK;
	if (onnx_want_const(L, node, k, &t) != GS_OK ||
		onnx_tensor_floats(L, t, GS_MLP_MAX_WIDTH, &n, &vals) != GS_OK)
		return L->st->code;
	if (n == 1 && t->n_dims <= 1)
		*v = vals[0];
	L->m->alloc.free(L->m->alloc.ctx, vals);
	if (n != 1 || t->n_dims > 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the bound of %s is not a scalar", L->label);
	return GS_OK;
}

/*
 * Min or Max of the chain and one constant scalar (tf2onnx writes Keras'
 * hard_sigmoid and relu6 so): a Clip with one bound.
 */
GsCode
onnx_add_min_max(Loader *L, const Onnx__NodeProto *node, bool is_min)
{
	static const char *const no_attrs[] = {NULL};
	GsMlpStep  *s;
	size_t		k;
	float		c;

	if (node->n_input != 2)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s is supported only with two inputs", L->label);
	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
		return L->st->code;
	if (onnx_is_cur(L, node->input[0]))
		k = 1;
	else if (onnx_is_cur(L, node->input[1]))
		k = 0;
	else
		return onnx_want_chain_input(L, node, 2, 2);
	if (!onnx_const_scalar(L, node->input[k], &c) || isnan(c))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s is supported only with a constant scalar", L->label);
	if ((s = onnx_new_step(L, GS_MLP_CLIP, node->name)) == NULL)
		return L->st->code;
	s->alpha = is_min ? -INFINITY : c;
	s->beta = is_min ? c : INFINITY;
	return GS_OK;
}

/* Translate an activation node (onnx_is_activation(op) is true). */
GsCode
onnx_add_activation(Loader *L, const Onnx__NodeProto *node, const char *op)
{
	static const char *const no_attrs[] = {NULL};
	static const char *const alpha_attr[] = {"alpha", NULL};
	static const char *const selu_attrs[] = {"alpha", "gamma", NULL};
	static const char *const hs_attrs[] = {"alpha", "beta", NULL};
	static const char *const clip_attrs[] = {"min", "max", NULL};
	float		alpha,
				beta;

	if (strcmp(op, "PRelu") == 0)
	{
		const Onnx__TensorProto *t;
		float	   *slope;

		if (onnx_want_chain_input(L, node, 2, 2) != GS_OK ||
			onnx_attrs_allowed(L, node, no_attrs) != GS_OK ||
			onnx_want_const(L, node, 1, &t) != GS_OK ||
			onnx_column_params(L, t, &slope) != GS_OK)
			return L->st->code;
		return onnx_add_param_step(L, node, GS_MLP_PRELU, slope);
	}
	if (strcmp(op, "Clip") == 0)
	{
		alpha = -INFINITY;
		beta = INFINITY;
		if (L->opset < 11)
		{
			if (onnx_want_chain_input(L, node, 1, 1) != GS_OK ||
				onnx_attrs_allowed(L, node, clip_attrs) != GS_OK ||
				onnx_attr_float(L, node, "min", -3.402823466e38f, &alpha) != GS_OK ||
				onnx_attr_float(L, node, "max", 3.402823466e38f, &beta) != GS_OK)
				return L->st->code;
		}
		else if (onnx_want_chain_input(L, node, 1, 3) != GS_OK ||
				 onnx_attrs_allowed(L, node, no_attrs) != GS_OK ||
				 clip_bound(L, node, 1, &alpha) != GS_OK ||
				 clip_bound(L, node, 2, &beta) != GS_OK)
			return L->st->code;
		if (!(alpha <= beta))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s has a minimum above its maximum", L->label);
		return scalar_step(L, node, GS_MLP_CLIP, alpha, beta);
	}

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK)
		return L->st->code;
	if (strcmp(op, "Gelu") == 0)
	{
		static const char *const gelu_attrs[] = {"approximate", NULL};
		const Onnx__AttributeProto *a = onnx_attr_find(node, "approximate");

		if (onnx_attrs_allowed(L, node, gelu_attrs) != GS_OK)
			return L->st->code;
		if (a && a->has_s && a->s.len == 4 && memcmp(a->s.data, "tanh", 4) == 0)
			return scalar_step(L, node, GS_MLP_GELU_TANH, 0.0f, 0.0f);
		if (a && !(a->has_s && a->s.len == 4 && memcmp(a->s.data, "none", 4) == 0))
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "attribute \"approximate\" of %s is neither \"none\" nor \"tanh\"",
								 L->label);
		return scalar_step(L, node, GS_MLP_GELU, 1.41421353816986083984375f, 0.5f);
	}
	if (strcmp(op, "Elu") == 0)
	{
		if (onnx_attrs_allowed(L, node, alpha_attr) != GS_OK ||
			onnx_attr_float(L, node, "alpha", 1.0f, &alpha) != GS_OK)
			return L->st->code;
		return scalar_step(L, node, GS_MLP_ELU, alpha, 0.0f);
	}
	if (strcmp(op, "Selu") == 0)
	{
		if (onnx_attrs_allowed(L, node, selu_attrs) != GS_OK ||
			onnx_attr_float(L, node, "alpha", SELU_ALPHA, &alpha) != GS_OK ||
			onnx_attr_float(L, node, "gamma", SELU_GAMMA, &beta) != GS_OK)
			return L->st->code;
		return scalar_step(L, node, GS_MLP_SELU, alpha, beta);
	}
	if (strcmp(op, "HardSigmoid") == 0)
	{
		if (onnx_attrs_allowed(L, node, hs_attrs) != GS_OK ||
			onnx_attr_float(L, node, "alpha", 0.2f, &alpha) != GS_OK ||
			onnx_attr_float(L, node, "beta", 0.5f, &beta) != GS_OK)
			return L->st->code;
		return scalar_step(L, node, GS_MLP_HARD_SIGMOID, alpha, beta);
	}
	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
		return L->st->code;
	if (strcmp(op, "Softplus") == 0)
		return scalar_step(L, node, GS_MLP_SOFTPLUS, 1.0f, INFINITY);
	return scalar_step(L, node, strcmp(op, "Mish") == 0 ? GS_MLP_MISH :
					   strcmp(op, "HardSwish") == 0 ? GS_MLP_HARD_SWISH : GS_MLP_SOFTSIGN,
					   0.0f, 0.0f);
}

/*
 * ai.onnx.ml Imputer: a missing value (NaN, or replaced_value_float when it
 * is a number) becomes imputed_value_floats[c] (one value, or one per
 * column).  Integer imputation (imputed_value_int64s) is for int64 inputs,
 * which a network's float chain never is.
 */
GsCode
onnx_add_imputer(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"imputed_value_floats", "replaced_value_float", NULL};
	const Onnx__AttributeProto *a = onnx_attr_find(node, "imputed_value_floats");
	const Onnx__AttributeProto *r = onnx_attr_find(node, "replaced_value_float");
	float	   *vals;
	GsMlpStep  *s;

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK)
		return L->st->code;
	if (a == NULL || a->n_floats == 0 ||
		(a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s has no list of floats \"imputed_value_floats\"", L->label);
	if (a->n_floats != 1 && a->n_floats != (size_t) L->width)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "%s has %zu imputed values for %d columns", L->label, a->n_floats, L->width);
	if (r && (!r->has_f || (r->has_type && r->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) ||
			  isinf(r->f)))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"replaced_value_float\" of %s is not a float", L->label);
	vals = onnx_alloc(L, sizeof(float) * (size_t) L->width);
	if (vals == NULL)
		return onnx_nomem(L);
	for (int32_t c = 0; c < L->width; c++)
	{
		vals[c] = a->floats[a->n_floats == 1 ? 0 : c];
		if (!isfinite(vals[c]))
		{
			L->m->alloc.free(L->m->alloc.ctx, vals);
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "attribute \"imputed_value_floats\" of %s holds a non-finite value", L->label);
		}
	}
	if (onnx_add_param_step(L, node, GS_MLP_IMPUTE, vals) != GS_OK)
		return L->st->code;
	s = &L->m->steps[L->m->n_steps - 1];
	/* beta flags a replaced value that is a number (the default, NaN, is any NaN) */
	s->alpha = (r && !isnan(r->f)) ? r->f : 0.0f;
	s->beta = (r && !isnan(r->f)) ? 1.0f : 0.0f;
	return GS_OK;
}

/* Is node k a default-domain op with n_input inputs, one output, no attributes? */
static bool
plain_op(const Loader *L, int64_t k, const char *op, size_t n_input)
{
	const Onnx__NodeProto *n;

	if (k < 0)
		return false;
	n = L->g->node[k];
	return n->op_type && strcmp(n->op_type, op) == 0 && !(n->domain && n->domain[0]) &&
		n->n_input == n_input && n->n_output == 1 && n->output[0] && n->output[0][0] &&
		n->n_attribute == 0;
}

/* The needed node making name, or -1 (also for no name). */
static int64_t
producer(const Loader *L, const char *name)
{
	return name && name[0] ? onnx_value_producer(L, name) : -1;
}

/* See onnx_internal.h. */
GsCode
onnx_fuse_keras_prelu(Loader *L, size_t i, bool *fused)
{
	const Onnx__NodeProto *n = L->g->node[i];
	const char *h = L->cur;
	int64_t		pos,
				neg,
				rneg,
				mul,
				add;
	const char *c;
	const Onnx__TensorProto *t;
	float	   *slope;
	char		nname[80];

	*fused = false;
	if (h == NULL || n->n_input != 1 || !n->input[0] || strcmp(n->input[0], h) != 0)
		return GS_OK;
	/* from either first node: Relu(h) or Neg(h), to the Add joining them */
	if (plain_op(L, (int64_t) i, "Relu", 1))
	{
		pos = (int64_t) i;
		add = onnx_sole_reader(L, i, n->output[0], "Add");
		if (!plain_op(L, add, "Add", 2) ||
			(mul = producer(L, onnx_other_input(L->g->node[add], n->output[0]))) < 0 ||
			!plain_op(L, mul, "Mul", 2))
			return GS_OK;
		rneg = producer(L, onnx_find_const(L, L->g->node[mul]->input[0]) ? L->g->node[mul]->input[1] :
						L->g->node[mul]->input[0]);
		if (!plain_op(L, rneg, "Relu", 1) ||
			!plain_op(L, neg = producer(L, L->g->node[rneg]->input[0]), "Neg", 1))
			return GS_OK;
	}
	else if (plain_op(L, (int64_t) i, "Neg", 1))
	{
		neg = (int64_t) i;
		rneg = onnx_sole_reader(L, i, n->output[0], "Relu");
		if (!plain_op(L, rneg, "Relu", 1) ||
			!plain_op(L, mul = onnx_sole_reader(L, (size_t) rneg, L->g->node[rneg]->output[0], "Mul"), "Mul", 2) ||
			!plain_op(L, add = onnx_sole_reader(L, (size_t) mul, L->g->node[mul]->output[0], "Add"), "Add", 2) ||
			!plain_op(L, pos = producer(L, onnx_other_input(L->g->node[add], L->g->node[mul]->output[0])),
					  "Relu", 1))
			return GS_OK;
	}
	else
		return GS_OK;
	/* h = Neg's and the positive Relu's input; each value read by the pattern alone */
	if (strcmp(L->g->node[neg]->input[0], h) != 0 || strcmp(L->g->node[pos]->input[0], h) != 0 ||
		onnx_sole_reader(L, (size_t) neg, L->g->node[neg]->output[0], "Relu") != rneg ||
		onnx_sole_reader(L, (size_t) rneg, L->g->node[rneg]->output[0], "Mul") != mul ||
		onnx_sole_reader(L, (size_t) mul, L->g->node[mul]->output[0], "Add") != add ||
		onnx_sole_reader(L, (size_t) pos, L->g->node[pos]->output[0], "Add") != add ||
		!onnx_takes(L->g->node[add], L->g->node[pos]->output[0], L->g->node[mul]->output[0], true) ||
		(c = onnx_other_input(L->g->node[mul], L->g->node[rneg]->output[0])) == NULL ||
		(t = onnx_find_const(L, c)) == NULL)
		return GS_OK;
	/* Relu(h) + c Relu(-h) = PRelu(h) with slope -c, the same floats */
	onnx_safe_name(nname, sizeof(nname), L->g->node[mul]->name);
	snprintf(L->label, sizeof(L->label), "node \"%s\" (Mul of a PReLU)", nname);
	if (onnx_column_params(L, t, &slope) != GS_OK)
		return L->st->code;
	for (int32_t k = 0; k < L->width; k++)
		slope[k] = -slope[k];
	if (onnx_add_param_step(L, L->g->node[add], GS_MLP_PRELU, slope) != GS_OK)
		return L->st->code;
	L->needed[pos] = L->needed[neg] = L->needed[rneg] = L->needed[mul] = L->needed[add] = false;
	L->cur = L->g->node[add]->output[0];
	*fused = true;
	return GS_OK;
}

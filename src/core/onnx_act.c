/*
 * onnx_act.c
 *	  ONNX activations beyond the basic ones of onnx_ops.c, each one
 *	  element-wise step of the network (mlp.h; the math is in mlp_eval.h,
 *	  shared with the CUDA kernels):
 *
 *	  Elu (alpha), Selu (alpha, gamma), Softplus, Softsign, HardSigmoid
 *	  (alpha, beta; PyTorch's Hardsigmoid exports as alpha 1/6), PRelu (a
 *	  slope per column or one for all, a constant), and Clip (PyTorch's
 *	  ReLU6 and Hardtanh): bounds as attributes before opset 11, as optional
 *	  constant inputs from opset 11 on.
 *
 * Attribute defaults are the ONNX specification's.
 */
#include "onnx_internal.h"

#include <math.h>
#include <string.h>

/* Selu's defaults in the ONNX specification (the float values). */
#define SELU_ALPHA 1.67326319217681884765625f
#define SELU_GAMMA 1.05070102214813232421875f

static const char *const activations[] = {
	"Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "PRelu", "Clip", NULL
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
	return scalar_step(L, node, strcmp(op, "Softplus") == 0 ? GS_MLP_SOFTPLUS : GS_MLP_SOFTSIGN,
					   0.0f, 0.0f);
}

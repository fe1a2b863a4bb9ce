/*
 * onnx_shape.c
 *	  The ONNX nodes of a network's chain that change no value, only how the
 *	  chain is typed or shaped (see onnx_internal.h): Cast to float,
 *	  Reshape as a no-op on [N, width], and the squeeze of a one-column
 *	  [N, 1] output to [N] (Squeeze, or Reshape to [-1]: PyTorch's
 *	  .squeeze(-1) and torch.flatten), after which only element-wise steps
 *	  may follow (onnx_needs_rank2).  None of them adds a step.
 */
#include <stdint.h>
#include <string.h>

#include "onnx_internal.h"

/* Cast: a no-op when it casts (the chain's float) to float. */
GsCode
onnx_add_cast(Loader *L, const Onnx__NodeProto *node)
{
	/* saturate matters only for casts to float8 types */
	static const char *const attrs[] = {"to", "saturate", NULL};
	int64_t		to;

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "to", -1, &to) != GS_OK)
		return L->st->code;
	if (to == -1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no attribute \"to\"", L->label);
	if (to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s casts to %s, which is not supported",
					  L->label, onnx_elem_type_name(to >= 0 && to <= INT32_MAX ? (int32_t) to : -1));
		gs_status_detail(L->st, "Only a Cast to float (a no-op on the float input) may be on the path "
						 "to the scored output.");
		return L->st->code;
	}
	return GS_OK;
}

/*
 * Reshape: accepted as a no-op on [N, width], and as [N, 1] to [N] (shape
 * [-1]: PyTorch's flatten or view(-1) of a one-column output).
 */
GsCode
onnx_add_reshape(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"allowzero", NULL};
	const Onnx__TensorProto *t;
	int64_t		shape[2] = {0, 0},
				n = 0,
				allowzero;
	bool		noop;

	if (onnx_want_chain_input(L, node, 2, 2) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "allowzero", 0, &allowzero) != GS_OK ||
		onnx_want_const(L, node, 1, &t) != GS_OK ||
		onnx_tensor_int64s(L, t, 2, &n, shape) != GS_OK)
		return L->st->code;
	/* 0 copies the input's dimension unless allowzero; -1 is inferred */
	noop = n == 2 &&
		(shape[0] == -1 || (shape[0] == 0 && !allowzero)) &&
		(shape[1] == L->width || (shape[1] == 0 && !allowzero) ||
		 (shape[1] == -1 && shape[0] == 0 && !allowzero));
	if (n == 1 && shape[0] == -1 && L->width == 1)
	{
		L->rank1 = true;
		return GS_OK;
	}
	if (!noop)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s changes the shape [N, %d]", L->label, L->width);
	return GS_OK;
}

/*
 * Squeeze: accepted only as [N, 1] to [N], the last axis named (an
 * attribute before opset 13, a constant input from 13 on).
 */
GsCode
onnx_add_squeeze(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const no_attrs[] = {NULL};
	static const char *const attrs[] = {"axes", NULL};
	int64_t		axes[2] = {0, 0},
				n = 0;

	if (L->opset < 13)
	{
		const Onnx__AttributeProto *a = onnx_attr_find(node, "axes");

		if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK)
			return L->st->code;
		if (a && a->n_ints <= 2)
		{
			n = (int64_t) a->n_ints;
			for (size_t k = 0; k < a->n_ints; k++)
				axes[k] = a->ints[k];
		}
	}
	else
	{
		const Onnx__TensorProto *t;

		if (onnx_want_chain_input(L, node, 1, 2) != GS_OK || onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
			return L->st->code;
		if (node->n_input == 2 && node->input[1] && node->input[1][0] &&
			(onnx_want_const(L, node, 1, &t) != GS_OK || onnx_tensor_int64s(L, t, 2, &n, axes) != GS_OK))
			return L->st->code;
	}
	if (n != 1 || (axes[0] != 1 && axes[0] != -1) || L->width != 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s is supported only as a squeeze of [N, 1] to [N] (axes [1] or [-1])",
							 L->label);
	L->rank1 = true;
	return GS_OK;
}

/* Operators that need [N, width]: none may follow a Squeeze to [N]. */
bool
onnx_needs_rank2(const char *op)
{
	static const char *const ops[] = {
		"Gemm", "MatMul", "Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization",
		"Flatten", "Reshape", "Squeeze", "Concat", "Scaler", "Imputer", NULL
	};

	for (int i = 0; ops[i]; i++)
		if (strcmp(op, ops[i]) == 0)
			return true;
	return false;
}

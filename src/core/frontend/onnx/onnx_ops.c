/*
 * onnx_ops.c
 *	  One ONNX node at a time into GsMlp steps (see onnx_internal.h): Gemm,
 *	  MatMul (+ Add folded into its bias), Add/Sub/Mul/Div by constants
 *	  (Add/Sub/Mul and Concat of two values of the network: onnx_skip.c),
 *	  activations (onnx_act.c), Softmax and LogSoftmax, BatchNormalization
 *	  (inference), LayerNormalization, ai.onnx.ml Scaler (scikit-learn's
 *	  scalers as skl2onnx writes them), and the no-ops Flatten, Identity,
 *	  Dropout (Reshape, Squeeze and Cast are onnx_shape.c's); Constant
 *	  nodes become constants, and so do nodes that take only constants
 *	  (folded by onnx_fold.c).  Anything else is refused naming the op and
 *	  the node.
 *	  Weights are copied into arrays of the network's allocator; on error
 *	  whatever a function allocated is freed before it returns.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* Gemm or MatMul: a dense step. */
static GsCode
add_dense(Loader *L, const Onnx__NodeProto *node, bool gemm)
{
	static const char *const gemm_attrs[] = {"alpha", "beta", "transA", "transB", NULL};
	static const char *const no_attrs[] = {NULL};
	const Onnx__TensorProto *B,
			   *C = NULL;
	int64_t		trans_a = 0,
				trans_b = 0,
				nb,
				nc,
				n_in,
				n_out;
	float		alpha = 1.0f,
				beta = 1.0f;
	float	   *bv = NULL,
			   *cv = NULL,
			   *w = NULL,
			   *bias = NULL;
	int64_t		wcap = (int64_t) GS_MLP_MAX_WIDTH * GS_MLP_MAX_WIDTH;

	if (onnx_want_chain_input(L, node, 2, gemm ? 3 : 2) != GS_OK ||
		onnx_attrs_allowed(L, node, gemm ? gemm_attrs : no_attrs) != GS_OK)
		return L->st->code;
	if (gemm)
	{
		if (onnx_attr_int(L, node, "transA", 0, &trans_a) != GS_OK ||
			onnx_attr_int(L, node, "transB", 0, &trans_b) != GS_OK ||
			onnx_attr_float(L, node, "alpha", 1.0f, &alpha) != GS_OK ||
			onnx_attr_float(L, node, "beta", 1.0f, &beta) != GS_OK)
			return L->st->code;
		if (trans_a != 0)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s transposes its input (transA=1)", L->label);
		if (node->n_input == 3 && node->input[2] && node->input[2][0] &&
			onnx_want_const(L, node, 2, &C) != GS_OK)
			return L->st->code;
	}
	if (onnx_want_const(L, node, 1, &B) != GS_OK)
		return L->st->code;
	if (B->n_dims != 2)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "the weights of %s have %zu dimensions, expected 2", L->label, B->n_dims);
	n_in = trans_b ? B->dims[1] : B->dims[0];
	n_out = trans_b ? B->dims[0] : B->dims[1];
	if (n_in != L->width)
	{
		gs_status_set(L->st, GS_ERR_INVALID_MODEL,
					  "the weights of %s expect %lld inputs, the layer before gives %d",
					  L->label, (long long) n_in, L->width);
		return L->st->code;
	}
	if (n_out < 1 || n_out > GS_MLP_MAX_WIDTH)
		return gs_status_set(L->st, GS_ERR_LIMIT,
							 "%s has %lld units, the limit is 1 to %d",
							 L->label, (long long) n_out, GS_MLP_MAX_WIDTH);
	if (onnx_over_parameters(L, n_in * n_out + n_out))
		return L->st->code;
	if (onnx_tensor_floats(L, B, wcap, &nb, &bv) != GS_OK)
		return L->st->code;
	if (C && onnx_tensor_floats(L, C, GS_MLP_MAX_WIDTH, &nc, &cv) != GS_OK)
		goto fail;
	if (C)
	{
		/* C broadcasts to [N, n_out]: [n_out], [1, n_out], [1], [1, 1] or a scalar */
		bool		shape_ok = (nc == n_out || nc == 1) &&
			(C->n_dims <= 1 || (C->n_dims == 2 && C->dims[0] == 1));

		if (!shape_ok)
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						  "the bias of %s does not broadcast to %lld units", L->label, (long long) n_out);
			goto fail;
		}
	}
	w = onnx_alloc(L, sizeof(float) * (size_t) nb);
	bias = onnx_alloc(L, sizeof(float) * (size_t) n_out);
	if (w == NULL || bias == NULL)
	{
		onnx_nomem(L);
		goto fail;
	}
	/* w[o * n_in + i]: row o holds the weights of unit o */
	for (int64_t o = 0; o < n_out; o++)
		for (int64_t i = 0; i < n_in; i++)
		{
			float		v = trans_b ? bv[o * n_in + i] : bv[i * n_out + o];

			w[o * n_in + i] = alpha == 1.0f ? v : alpha * v;
		}
	for (int64_t o = 0; o < n_out; o++)
		bias[o] = cv ? (beta == 1.0f ? cv[nc == 1 ? 0 : o] : beta * cv[nc == 1 ? 0 : o]) : 0.0f;
	L->m->alloc.free(L->m->alloc.ctx, bv);
	if (cv)
		L->m->alloc.free(L->m->alloc.ctx, cv);
	if (onnx_add_dense_step(L, node, (int32_t) n_out, w, bias) != GS_OK)
		return L->st->code;
	L->biasless_dense = gemm && C ? -1 : L->m->n_steps - 1;
	return GS_OK;

fail:
	if (bv)
		L->m->alloc.free(L->m->alloc.ctx, bv);
	if (cv)
		L->m->alloc.free(L->m->alloc.ctx, cv);
	if (w)
		L->m->alloc.free(L->m->alloc.ctx, w);
	if (bias)
		L->m->alloc.free(L->m->alloc.ctx, bias);
	return L->st->code;
}

/*
 * A dense step of n_out units over the chain's width, taking w
 * [n_out * width] (row o: unit o) and bias [n_out] (freed here on failure):
 * weights checked finite, the layer cap checked.
 */
GsCode
onnx_add_dense_step(Loader *L, const Onnx__NodeProto *node, int32_t n_out, float *w, float *bias)
{
	int64_t		nb = (int64_t) n_out * L->width;
	GsMlpStep  *s = NULL;

	for (int64_t k = 0; k < nb; k++)
		if (!isfinite(w[k]))
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the weights of %s overflow", L->label);
			goto fail;
		}
	if (L->m->n_layers >= onnx_max_layers(L))
	{
		gs_status_limit(L->st, GS_LIMIT_LAYERS, onnx_max_layers(L),
						"the network has more than %d dense layers",
					  onnx_max_layers(L));
		goto fail;
	}
	s = onnx_new_step(L, GS_MLP_DENSE, node->name);
	if (s == NULL)
		goto fail;
	s->n_out = n_out;
	s->w = w;
	s->p = bias;
	L->m->n_layers++;
	L->m->n_params += nb + n_out;
	L->width = n_out;
	return GS_OK;

fail:
	L->m->alloc.free(L->m->alloc.ctx, w);
	L->m->alloc.free(L->m->alloc.ctx, bias);
	return L->st->code;
}

/*
 * A per-column parameter vector from constant t, broadcast to width: a
 * scalar ([], [1], [1, 1]) or [width] / [1, width].  New array in *vals.
 */
GsCode
onnx_column_params(Loader *L, const Onnx__TensorProto *t, float **vals)
{
	int64_t		n;
	float	   *v,
			   *out;
	bool		shape_ok;

	if (onnx_tensor_floats(L, t, GS_MLP_MAX_WIDTH, &n, &v) != GS_OK)
		return L->st->code;
	shape_ok = (n == 1 || n == L->width) &&
		(t->n_dims <= 1 || (t->n_dims == 2 && t->dims[0] == 1));
	if (!shape_ok)
	{
		L->m->alloc.free(L->m->alloc.ctx, v);
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "the constant of %s does not broadcast over the %d columns",
							 L->label, L->width);
	}
	if (n == L->width)
	{
		*vals = v;
		return GS_OK;
	}
	out = onnx_alloc(L, sizeof(float) * (size_t) L->width);
	if (out == NULL)
	{
		L->m->alloc.free(L->m->alloc.ctx, v);
		return onnx_nomem(L);
	}
	for (int32_t c = 0; c < L->width; c++)
		out[c] = v[0];
	L->m->alloc.free(L->m->alloc.ctx, v);
	*vals = out;
	return GS_OK;
}

/* Add a parameterized element-wise step owning vals. */
GsCode
onnx_add_param_step(Loader *L, const Onnx__NodeProto *node, GsMlpOp op, float *vals)
{
	GsMlpStep  *s;

	if (onnx_over_parameters(L, L->width))
	{
		L->m->alloc.free(L->m->alloc.ctx, vals);
		return L->st->code;
	}
	s = onnx_new_step(L, op, node->name);
	if (s == NULL)
	{
		L->m->alloc.free(L->m->alloc.ctx, vals);
		return L->st->code;
	}
	s->p = vals;
	L->m->n_params += L->width;
	return GS_OK;
}

/*
 * Add, Sub, Mul or Div with one constant operand; or an Add, Mul or Sub of
 * the chain's value and an earlier one (onnx_skip.c).
 */
static GsCode
add_arith(Loader *L, const Onnx__NodeProto *node, const char *op)
{
	static const char *const no_attrs[] = {NULL};
	bool		commutative = strcmp(op, "Add") == 0 || strcmp(op, "Mul") == 0;
	const Onnx__TensorProto *t;
	float	   *v = NULL;
	size_t		k;

	if (node->n_input != 2)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu inputs", L->label, node->n_input);
	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
		return L->st->code;
	if (onnx_is_cur(L, node->input[0]))
		k = 1;
	else if (onnx_is_cur(L, node->input[1]))
		k = 0;
	else
		return onnx_want_chain_input(L, node, 2, 2);
	/* the chain's value and one it reached before: a skip connection, two branches joined */
	if (strcmp(op, "Div") != 0 && onnx_find_const(L, node->input[k]) == NULL &&
		onnx_is_earlier_value(L, node->input[k]))
		return onnx_add_join(L, node, node->input[k],
							 op[0] == 'A' ? GS_MLP_ADD_SAVED : op[0] == 'M' ? GS_MLP_MUL_SAVED :
							 k == 1 ? GS_MLP_SUB_SAVED : GS_MLP_RSUB_SAVED);
	if (k == 0 && !commutative)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s takes the constant as its first operand", L->label);
	if (onnx_want_const(L, node, k, &t) != GS_OK)
		return L->st->code;
	if (onnx_column_params(L, t, &v) != GS_OK)
		return L->st->code;

	if (strcmp(op, "Add") == 0)
	{
		/* MatMul + Add: the Add is the layer's bias (0 + b is exact) */
		if (L->biasless_dense >= 0 && L->biasless_dense == L->m->n_steps - 1)
		{
			GsMlpStep  *d = &L->m->steps[L->biasless_dense];

			for (int32_t c = 0; c < L->width; c++)
				d->p[c] += v[c];
			L->m->alloc.free(L->m->alloc.ctx, v);
			L->biasless_dense = -1;
			return GS_OK;
		}
		return onnx_add_param_step(L, node, GS_MLP_ADD, v);
	}
	if (strcmp(op, "Sub") == 0)
	{
		for (int32_t c = 0; c < L->width; c++)
			v[c] = -v[c];
		return onnx_add_param_step(L, node, GS_MLP_ADD, v);
	}
	if (strcmp(op, "Div") == 0)
	{
		for (int32_t c = 0; c < L->width; c++)
			if (v[c] == 0.0f)
			{
				L->m->alloc.free(L->m->alloc.ctx, v);
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s divides by zero", L->label);
			}
		return onnx_add_param_step(L, node, GS_MLP_DIV, v);
	}
	return onnx_add_param_step(L, node, GS_MLP_MUL, v);
}

/* BatchNormalization in inference mode: y = x * s + t per column. */
static GsCode
add_batchnorm(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const bn_attrs[] = {"epsilon", "momentum", "spatial", "training_mode", NULL};
	const Onnx__TensorProto *t[4];
	float	   *v[4] = {NULL, NULL, NULL, NULL};
	float	   *s = NULL,
			   *b = NULL;
	float		eps,
				momentum;
	int64_t		spatial,
				training;
	GsCode		rc = GS_OK;

	if (onnx_want_chain_input(L, node, 5, 5) != GS_OK || onnx_attrs_allowed(L, node, bn_attrs) != GS_OK ||
		onnx_attr_float(L, node, "epsilon", 1e-5f, &eps) != GS_OK ||
		onnx_attr_float(L, node, "momentum", 0.9f, &momentum) != GS_OK ||
		onnx_attr_int(L, node, "spatial", 1, &spatial) != GS_OK ||
		onnx_attr_int(L, node, "training_mode", 0, &training) != GS_OK)
		return L->st->code;
	if (training != 0 || spatial != 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s is not in inference mode", L->label);
	for (size_t i = 1; i < node->n_output; i++)
		if (node->output[i] && node->output[i][0])
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s outputs running statistics (training mode)", L->label);
	for (int k = 0; k < 4; k++)
	{
		int64_t		n;

		if (onnx_want_const(L, node, k + 1, &t[k]) != GS_OK ||
			onnx_tensor_floats(L, t[k], GS_MLP_MAX_WIDTH, &n, &v[k]) != GS_OK)
			goto done;
		if (n != L->width || t[k]->n_dims != 1)
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						  "the parameters of %s do not have %d values", L->label, L->width);
			goto done;
		}
	}
	s = onnx_alloc(L, sizeof(float) * (size_t) L->width);
	b = onnx_alloc(L, sizeof(float) * (size_t) L->width);
	if (s == NULL || b == NULL)
	{
		onnx_nomem(L);
		goto done;
	}
	for (int32_t c = 0; c < L->width; c++)
	{
		double		var = (double) v[3][c] + eps;
		double		scale;

		if (!(var > 0.0))
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						  "%s has a variance of zero or less", L->label);
			goto done;
		}
		scale = (double) v[0][c] / sqrt(var);
		s[c] = (float) scale;
		b[c] = (float) ((double) v[1][c] - (double) v[2][c] * scale);
		if (!isfinite(s[c]) || !isfinite(b[c]))
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the parameters of %s overflow", L->label);
			goto done;
		}
	}
	if (onnx_add_param_step(L, node, GS_MLP_MUL, s) != GS_OK)
	{
		s = NULL;
		goto done;
	}
	s = NULL;
	rc = onnx_add_param_step(L, node, GS_MLP_ADD, b);
	b = NULL;
	if (rc != GS_OK)
		goto done;

done:
	for (int k = 0; k < 4; k++)
		if (v[k])
			L->m->alloc.free(L->m->alloc.ctx, v[k]);
	if (s)
		L->m->alloc.free(L->m->alloc.ctx, s);
	if (b)
		L->m->alloc.free(L->m->alloc.ctx, b);
	return L->st->code;
}

/*
 * ai.onnx.ml Scaler: y = (x - offset) * scale per column, offset and scale
 * float lists of the same length, 1 or the width (what onnxruntime
 * accepts).  Two steps, an ADD of the negated offsets and a MUL: the same
 * two float operations onnxruntime does (x + -o is x - o exactly).
 */
static GsCode
add_scaler(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"offset", "scale", NULL};
	static const char *const names[2] = {"offset", "scale"};
	const Onnx__AttributeProto *a[2];
	float	   *v[2] = {NULL, NULL};

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK)
		return L->st->code;
	for (int k = 0; k < 2; k++)
	{
		a[k] = onnx_attr_find(node, names[k]);
		if (a[k] == NULL || a[k]->n_floats == 0 ||
			(a[k]->has_type && a[k]->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s has no list of floats \"%s\"", L->label, names[k]);
	}
	if (a[0]->n_floats != a[1]->n_floats ||
		(a[0]->n_floats != 1 && a[0]->n_floats != (size_t) L->width))
	{
		gs_status_set(L->st, GS_ERR_INVALID_MODEL,
					  "%s has %zu offsets and %zu scales for %d columns",
					  L->label, a[0]->n_floats, a[1]->n_floats, L->width);
		gs_status_detail(L->st, "Offset and scale must both have one value, or one per column.");
		return L->st->code;
	}
	for (int k = 0; k < 2; k++)
	{
		v[k] = onnx_alloc(L, sizeof(float) * (size_t) L->width);
		if (v[k] == NULL)
		{
			onnx_nomem(L);
			goto fail;
		}
		for (int32_t c = 0; c < L->width; c++)
		{
			float		f = a[k]->floats[a[k]->n_floats == 1 ? 0 : c];

			if (!isfinite(f))
			{
				gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							  "attribute \"%s\" of %s holds a non-finite value", names[k], L->label);
				goto fail;
			}
			v[k][c] = k == 0 ? -f : f;
		}
	}
	/* add_param_step owns the array it is given, also when it fails */
	if (onnx_add_param_step(L, node, GS_MLP_ADD, v[0]) != GS_OK)
	{
		v[0] = NULL;
		goto fail;
	}
	return onnx_add_param_step(L, node, GS_MLP_MUL, v[1]);

fail:
	for (int k = 0; k < 2; k++)
		if (v[k])
			L->m->alloc.free(L->m->alloc.ctx, v[k]);
	return L->st->code;
}

/*
 * LayerNormalization (opset 17) over the columns of [N, width]: a constant
 * scale and optional bias (one value per column, or one for all), epsilon,
 * computed in float32 (stash_type 1).
 */
static GsCode
add_layernorm(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"axis", "epsilon", "stash_type", NULL};
	const Onnx__TensorProto *t;
	int64_t		axis,
				stash;
	float		eps;
	float	   *scale = NULL,
			   *bias = NULL;
	bool		has_bias = node->n_input == 3 && node->input[2] && node->input[2][0];
	GsMlpStep  *s;

	if (onnx_want_chain_input(L, node, 2, 3) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "axis", -1, &axis) != GS_OK ||
		onnx_attr_int(L, node, "stash_type", 1, &stash) != GS_OK ||
		onnx_attr_float(L, node, "epsilon", 1e-5f, &eps) != GS_OK)
		return L->st->code;
	if (axis != 1 && axis != -1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s is not over the columns of [N, %d] (axis %lld)",
							 L->label, L->width, (long long) axis);
	if (stash != 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s has stash_type %lld; only 1 (float32) is supported",
							 L->label, (long long) stash);
	if (!(eps >= 0.0f) || isinf(eps))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"epsilon\" of %s is not a finite number >= 0", L->label);
	if (onnx_over_parameters(L, (int64_t) L->width * (has_bias ? 2 : 1)))
		return L->st->code;
	if (onnx_want_const(L, node, 1, &t) != GS_OK || onnx_column_params(L, t, &scale) != GS_OK)
		return L->st->code;
	if (has_bias &&
		(onnx_want_const(L, node, 2, &t) != GS_OK || onnx_column_params(L, t, &bias) != GS_OK))
	{
		L->m->alloc.free(L->m->alloc.ctx, scale);
		return L->st->code;
	}
	if ((s = onnx_new_step(L, GS_MLP_LAYER_NORM, node->name)) == NULL)
	{
		L->m->alloc.free(L->m->alloc.ctx, scale);
		if (bias)
			L->m->alloc.free(L->m->alloc.ctx, bias);
		return L->st->code;
	}
	s->w = scale;
	s->p = bias;
	s->alpha = eps;
	L->m->n_params += (int64_t) L->width * (has_bias ? 2 : 1);
	return GS_OK;
}

/*
 * What every node must pass before its operator is read: a domain of ONNX
 * (or of ai.onnx.ml for the operators read from it), an output named, no
 * value defined twice, one output but for the operators with optional
 * ones.  nname, oname: the node's and its operator's printable names.
 */
static GsCode
check_node_outputs(Loader *L, const Onnx__NodeProto *node, const char *op, bool ml,
				   const char *nname, const char *oname)
{
	if (node->domain && node->domain[0] && strcmp(node->domain, "ai.onnx") != 0 &&
		!(ml && (strcmp(op, "Scaler") == 0 || strcmp(op, "Imputer") == 0 ||
				 strcmp(op, "LinearClassifier") == 0 || strcmp(op, "LinearRegressor") == 0 ||
				 strcmp(op, "ArrayFeatureExtractor") == 0 || strcmp(op, "Normalizer") == 0)))
	{
		char		dname[64];

		onnx_safe_name(dname, sizeof(dname), node->domain);
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "unsupported ONNX operator \"%s\" of domain \"%s\" in node \"%s\"",
							 oname, dname, nname);
	}
	if (node->n_output < 1 || node->output[0] == NULL || node->output[0][0] == '\0')
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no output", L->label);
	for (size_t i = 0; i < node->n_output; i++)
		if (onnx_find_const(L, node->output[i]) || onnx_is_cur(L, node->output[i]))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s redefines a value", L->label);
	if (node->n_output > 1 && strcmp(op, "Dropout") != 0 && strcmp(op, "BatchNormalization") != 0 &&
		strcmp(op, "LayerNormalization") != 0 && !(ml && strcmp(op, "LinearClassifier") == 0))
		for (size_t i = 1; i < node->n_output; i++)
			if (node->output[i] && node->output[i][0])
				return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has more than one output", L->label);
	return GS_OK;
}

/*
 * A node of ai.onnx.ml (Imputer, LinearClassifier, LinearRegressor,
 * ArrayFeatureExtractor, Normalizer, else Scaler); *next: the value the
 * chain goes on with (a LinearClassifier's scores, its second output).
 */
static GsCode
add_ml_node(Loader *L, const Onnx__NodeProto *node, const char *op, const char **next)
{
	GsCode		rc;

	if (strcmp(op, "Imputer") == 0)
		rc = onnx_add_imputer(L, node);
	else if (strcmp(op, "LinearClassifier") == 0)
	{
		/* its outputs: the label (not scored), then the scores the chain goes on with */
		if (node->n_output != 2 || node->output[1] == NULL || node->output[1][0] == '\0')
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no scores output", L->label);
		rc = onnx_add_linear(L, node, true);
		*next = node->output[1];
	}
	else if (strcmp(op, "LinearRegressor") == 0)
		rc = onnx_add_linear(L, node, false);
	else if (strcmp(op, "ArrayFeatureExtractor") == 0)
		rc = onnx_add_pick(L, node);
	else if (strcmp(op, "Normalizer") == 0)
		rc = onnx_add_normalizer(L, node);
	else
		rc = add_scaler(L, node);
	return rc != GS_OK ? L->st->code : GS_OK;
}

/* Relu, Sigmoid, Tanh, or Identity (no step), without attributes. */
static GsCode
add_plain_act(Loader *L, const Onnx__NodeProto *node, const char *op)
{
	static const char *const no_attrs[] = {NULL};

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
		return L->st->code;
	if (op[0] != 'I' &&
		onnx_new_step(L, op[0] == 'R' ? GS_MLP_RELU : op[0] == 'S' ? GS_MLP_SIGMOID : GS_MLP_TANH,
					  node->name) == NULL)
		return L->st->code;
	return GS_OK;
}

/* LeakyRelu with its alpha. */
static GsCode
add_leaky_relu(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"alpha", NULL};
	float		alpha;
	GsMlpStep  *s;

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_float(L, node, "alpha", 0.01f, &alpha) != GS_OK)
		return L->st->code;
	if ((s = onnx_new_step(L, GS_MLP_LEAKY_RELU, node->name)) == NULL)
		return L->st->code;
	s->alpha = alpha;
	return GS_OK;
}

/* Softmax or LogSoftmax over the columns. */
static GsCode
add_softmax(Loader *L, const Onnx__NodeProto *node, const char *op)
{
	static const char *const attrs[] = {"axis", NULL};
	int64_t		axis;

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "axis", L->opset >= 13 ? -1 : 1, &axis) != GS_OK)
		return L->st->code;
	if (axis != 1 && axis != -1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s is not over the columns of [N, %d] (axis %lld)",
							 L->label, L->width, (long long) axis);
	if (onnx_new_step(L, op[0] == 'L' ? GS_MLP_LOG_SOFTMAX : GS_MLP_SOFTMAX, node->name) == NULL)
		return L->st->code;
	return GS_OK;
}

/* Flatten of [N, w]: a no-op (no step), axis 1 only. */
static GsCode
check_flatten(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"axis", NULL};
	int64_t		axis;

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "axis", 1, &axis) != GS_OK)
		return L->st->code;
	if (axis != 1 && axis != -1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s changes the shape [N, %d]", L->label, L->width);
	return GS_OK;
}

/* Dropout at inference: a no-op (no step), never in training mode. */
static GsCode
check_dropout(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"seed", "is_test", "ratio", NULL};

	if (onnx_want_chain_input(L, node, 1, 3) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK)
		return L->st->code;
	if (node->n_input == 3 && node->input[2] && node->input[2][0])
	{
		const Onnx__TensorProto *t = onnx_find_const(L, node->input[2]);
		bool		off = false;

		/* training_mode must be a constant false */
		if (t && t->has_data_type && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL &&
			t->n_external_data == 0)
			off = t->has_raw_data ? (t->raw_data.len == 1 && t->raw_data.data[0] == 0)
				: (t->n_int32_data == 1 && t->int32_data[0] == 0);
		if (!off)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s may be in training mode", L->label);
	}
	return GS_OK;
}

/* A node of the default domain by its operator; an unknown one refused. */
static GsCode
add_std_node(Loader *L, const Onnx__NodeProto *node, const char *op, const char *nname,
			 const char *oname)
{
	GsCode		rc;

	if (strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0)
		rc = add_dense(L, node, op[0] == 'G');
	else if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 ||
			 strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0)
		rc = add_arith(L, node, op);
	else if (strcmp(op, "Mean") == 0)
		rc = onnx_add_mean(L, node);
	else if (strcmp(op, "Relu") == 0 || strcmp(op, "Sigmoid") == 0 || strcmp(op, "Tanh") == 0 ||
			 strcmp(op, "Identity") == 0)
		rc = add_plain_act(L, node, op);
	else if (strcmp(op, "LeakyRelu") == 0)
		rc = add_leaky_relu(L, node);
	else if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0)
		rc = add_softmax(L, node, op);
	else if (strcmp(op, "LayerNormalization") == 0)
		rc = add_layernorm(L, node);
	else if (strcmp(op, "Concat") == 0)
		rc = onnx_add_concat(L, node);
	else if (strcmp(op, "Min") == 0 || strcmp(op, "Max") == 0)
		rc = onnx_add_min_max(L, node, op[1] == 'i');
	else if (strcmp(op, "Squeeze") == 0)
		rc = onnx_add_squeeze(L, node);
	else if (strcmp(op, "BatchNormalization") == 0)
		rc = add_batchnorm(L, node);
	else if (strcmp(op, "Flatten") == 0)
		rc = check_flatten(L, node);
	else if (strcmp(op, "Dropout") == 0)
		rc = check_dropout(L, node);
	else if (strcmp(op, "Reshape") == 0)
		rc = onnx_add_reshape(L, node);
	else if (strcmp(op, "Cast") == 0)
		rc = onnx_add_cast(L, node);
	else if (onnx_is_activation(op))
		rc = onnx_add_activation(L, node, op);
	else
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "unsupported ONNX operator \"%s\" in node \"%s\"", oname, nname);
		gs_status_detail(L->st, "Supported: Gemm, MatMul, Add, Sub, Mul, Div, Relu, LeakyRelu, Sigmoid, "
						 "Tanh, Softmax, LogSoftmax, Elu, Selu, Gelu, Softplus, Softsign, Mish, HardSwish, "
						 "HardSigmoid, PRelu, Clip, Min / Max with a constant, BatchNormalization, "
						 "LayerNormalization, Flatten, "
						 "Identity, Dropout, Reshape, Squeeze of [N, 1] to [N], Cast to float, "
						 "Constant, ai.onnx.ml Scaler, Imputer, LinearClassifier and LinearRegressor (an "
						 "ArrayFeatureExtractor of their scores, a Normalizer L1 after a softmax); Concat of "
						 "values of the network over their columns, and as a binary classifier's [1 - p, p] "
						 "or [-s, s]; Mean of two values of the network.");
		return L->st->code;
	}
	return rc != GS_OK ? L->st->code : GS_OK;
}

/*
 * One node of the chain: checked (check_node_outputs), folded when it
 * computes a constant, registered when it is one (Constant, an Identity of
 * a constant), else translated by its operator (add_ml_node, add_std_node).
 */
GsCode
onnx_add_node(Loader *L, const Onnx__NodeProto *node)
{
	const char *op = node->op_type ? node->op_type : "";
	const char *next;
	char		nname[80],
				oname[48];
	bool		ml;
	GsCode		rc;

	onnx_safe_name(nname, sizeof(nname), node->name);
	onnx_safe_name(oname, sizeof(oname), op);
	snprintf(L->label, sizeof(L->label), "node \"%s\" (%s)", nname, oname);

	ml = node->domain && strcmp(node->domain, "ai.onnx.ml") == 0;
	if ((rc = check_node_outputs(L, node, op, ml, nname, oname)) != GS_OK)
		return rc;
	if (onnx_fold_applies(L, node))
		return onnx_fold_node(L, node); /* a constant, not part of the chain */
	if (L->rank1 && onnx_needs_rank2(op))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s follows a squeeze of the output to [N]; only element-wise operators may",
							 L->label);

	if (strcmp(op, "Constant") == 0)
	{
		const Onnx__AttributeProto *a = onnx_attr_find(node, "value");

		if (node->n_input != 0 || node->n_attribute != 1 || a == NULL || a->t == NULL)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s does not hold a tensor \"value\"", L->label);
		onnx_register_const(L, node->output[0], a->t);
		return GS_OK;			/* not part of the chain */
	}
	if (strcmp(op, "Identity") == 0 && node->n_input == 1 && onnx_find_const(L, node->input[0]))
	{
		/*
		 * A copy of a constant: PyTorch's exporter writes one where two
		 * layers had equal parameters (two BatchNorm1d layers' initial weight
		 * and bias) and it kept one initializer.
		 */
		if (node->n_attribute != 0)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has attributes", L->label);
		onnx_register_const(L, node->output[0], onnx_find_const(L, node->input[0]));
		return GS_OK;			/* not part of the chain */
	}
	next = node->output[0];
	rc = ml ? add_ml_node(L, node, op, &next) : add_std_node(L, node, op, nname, oname);
	if (rc != GS_OK)
		return rc;
	L->cur = next;
	return GS_OK;
}


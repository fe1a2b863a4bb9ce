/*
 * onnx_fuse_norm.c
 *	  LayerNormalization written out in nodes, as Keras 3's exporters and
 *	  PyTorch's (before opset 17) write it, fused into one GS_MLP_LAYER_NORM
 *	  step (mlp.h) over the columns of the chain value h.
 *
 *	  tf2onnx (TensorFlow backend: model.export(format="onnx"),
 *	  tf2onnx.convert.from_keras or the SavedModel route; opsets 15 to 18):
 *
 *		mean = ReduceMean(h, axes [1], keepdims 1)
 *		var  = ReduceMean(Mul(d, d), axes [1], keepdims 1), d = Sub(h, mean)
 *		s	 = Mul(Reciprocal(Sqrt(Add(var, eps))), gamma)
 *		y	 = Add(Mul(h, s), Add(Mul(Neg(mean), s), beta))
 *
 *	  that is y = h s + (beta - mean s) = (h - mean) / sqrt(var + eps) gamma
 *	  + beta.  jax2onnx (JAX backend, opsets 18 and 23) takes the shift from
 *	  ReduceMean(h) too, but the mean and variance of the moments from sums,
 *	  broadcast back to [N, 1] through Shape / Gather / Concat / Reshape /
 *	  Expand (column_of):
 *
 *		m2	 = Div(column(ReduceSum(h, axes [1])), W)
 *		v	 = Div(column(ReduceSumSquare(Sub(h, m2), axes [1])), W - ddof)
 *		var  = Where(Greater(W - ddof, 0), v, Expand(NaN, [N, 1]))
 *		s	 = Mul(Div(1, Sqrt(Add(var, eps))), gamma), y as above
 *
 *	  with ddof 0 (W - ddof a constant folded by onnx_fold.c, as are gamma
 *	  and beta, which jax2onnx reshapes to [1, W]).  Keras' scale=False
 *	  leaves out the Mul by gamma, center=False the Add of beta
 *	  (y = Add(Mul(h, s), Mul(Neg(mean), s))).
 *
 *	  torch.onnx.export of nn.LayerNorm before opset 17 (PyTorch 1.x and
 *	  2.x's TorchScript exporter; from opset 17 on it writes one
 *	  LayerNormalization node):
 *
 *		d	 = Sub(h, ReduceMean(h, axes [-1]))
 *		y	 = Div(d, Sqrt(Add(ReduceMean(Pow(d, 2), axes [-1]), eps)))
 *		y	 = Add(Mul(y, gamma), beta)
 *
 *	  the Mul and Add absent with elementwise_affine=False, the Add with
 *	  bias=False.  The reduce axes are an
 *	  attribute before opset 18 (13 for ReduceSum) and a constant input from
 *	  then on; gamma and beta are per-column constants ([1, W], [W] or a
 *	  scalar), eps a constant scalar.  Every node is checked: its op, its
 *	  constants, that it has no other attributes, that each intermediate
 *	  value is read by the pattern alone.  Anything else is left to the
 *	  chain's checks, which refuse it at its first node (ReduceMean is not a
 *	  chain operator); a pattern whose gamma or beta has the wrong width is
 *	  refused naming its last node.
 *
 * The step computes the same normalization with the mean and variance in
 * double (gs_mlp_row), where the graph's float32 form h s - mean s loses
 * digits to cancellation when a row's mean is large against its spread;
 * docs/reference.md gives the measured differences.  The step owns the
 * gamma and beta arrays it is given.
 */
#include "onnx_fuse_norm.h"

#include <stdio.h>
#include <string.h>

/* Append node k to the match; false when k is no node (-1) or no room. */
bool
ln_take(LnMatch *m, int64_t k)
{
	if (k < 0 || m->n >= LN_MAX_NODES)
		return false;
	m->j[m->n++] = k;
	return true;
}

/*
 * Is node n the default-domain op with exactly the given input count, one
 * named output and no attributes beyond the allowed ones (NULL: none)?
 */
bool
ln_is_op(const Onnx__NodeProto *n, const char *op, size_t n_input, const char *const *allowed)
{
	if (!n->op_type || strcmp(n->op_type, op) != 0 || (n->domain && n->domain[0]) ||
		n->n_input != n_input || n->n_output != 1 || !n->output[0] || !n->output[0][0])
		return false;
	for (size_t i = 0; i < n->n_attribute; i++)
	{
		bool		ok = false;

		for (int k = 0; allowed && allowed[k] && !ok; k++)
			ok = n->attribute[i]->name && strcmp(n->attribute[i]->name, allowed[k]) == 0;
		if (!ok)
			return false;
	}
	for (size_t k = 0; k < n_input; k++)
		if (!n->input[k] || !n->input[k][0])
			return false;
	return true;
}

/* Is name a constant int64 tensor of one value, want? */
bool
ln_int64_is(Loader *L, const char *name, int64_t want)
{
	const Onnx__TensorProto *t = onnx_find_const(L, name);
	int64_t		n = 0,
				v = 0;
	bool		ok = t && onnx_tensor_int64s(L, t, 1, &n, &v) == GS_OK && n == 1 && v == want;

	gs_status_clear(L->st);		/* not a match, not an error */
	return ok;
}

/* Does node n's integer attribute name hold want (def when absent)? */
bool
ln_attr_is(Loader *L, const Onnx__NodeProto *n, const char *name, int64_t def, int64_t want)
{
	int64_t		v;
	bool		ok = onnx_attr_int(L, n, name, def, &v) == GS_OK && v == want;

	gs_status_clear(L->st);
	return ok;
}

/*
 * Is node n op(x) over the columns of [N, W] (op ReduceMean, ReduceSum or
 * ReduceSumSquare): axes [1] or [-1], an attribute before opset 18 (13 for
 * ReduceSum) and a constant int64 input from then on, keepdims as wanted?
 */
static bool
reduce_columns(Loader *L, const Onnx__NodeProto *n, const char *op, const char *x, int64_t keepdims)
{
	static const char *const attrs_old[] = {"axes", "keepdims", NULL};
	static const char *const attrs_new[] = {"keepdims", "noop_with_empty_axes", NULL};
	bool		input_axes = L->opset >= (strcmp(op, "ReduceSum") == 0 ? 13 : 18);
	bool		ok;

	if (!ln_is_op(n, op, input_axes ? 2 : 1, input_axes ? attrs_new : attrs_old) ||
		strcmp(n->input[0], x) != 0 || !ln_attr_is(L, n, "keepdims", 1, keepdims))
		return false;
	if (input_axes)
		ok = ln_int64_is(L, n->input[1], 1) || ln_int64_is(L, n->input[1], -1);
	else
	{
		const Onnx__AttributeProto *a = onnx_attr_find(n, "axes");

		ok = a != NULL && a->n_ints == 1 && (a->ints[0] == 1 || a->ints[0] == -1);
	}
	return ok;
}

/*
 * The node after node i that is a Mul of value a and a constant
 * (either order), read by nothing else: its index and the constant's
 * name, or -1.
 */
int64_t
ln_mul_by_const(Loader *L, size_t i, const char *a, const char **c)
{
	int64_t		k = onnx_sole_reader(L, i, a, "Mul");
	const char *other;

	if (k < 0 || !ln_is_op(NODE(L, k), "Mul", 2, NULL) ||
		(other = onnx_other_input(NODE(L, k), a)) == NULL || onnx_find_const(L, other) == NULL)
		return -1;
	*c = other;
	return k;
}

/*
 * Is node k Concat(x, [c]) along axis 0, or Gather(x, [c]) along axis 0
 * (op says which), c a constant int64 of one value?
 */
static bool
index_op(Loader *L, int64_t k, const char *op, const char *x, int64_t c)
{
	static const char *const axis[] = {"axis", NULL};

	return k >= 0 && ln_is_op(NODE(L, k), op, 2, axis) && strcmp(NODE(L, k)->input[0], x) == 0 &&
		ln_int64_is(L, NODE(L, k)->input[1], c) && ln_attr_is(L, NODE(L, k), "axis", 0, 0);
}

/*
 * jax2onnx's broadcast of a row statistic v ([N], from node i) to [N, 1]:
 * Expand(Reshape(v, Concat(Gather(Shape(v), [0]), [1])),
 * Concat(Gather(Shape(v), [0]), [1])), two Gathers of the one Shape.  Adds
 * its seven nodes to m and returns the Expand, or -1.
 */
static int64_t
column_of(Loader *L, size_t i, const char *v, LnMatch *m)
{
	static const char *const allowzero[] = {"allowzero", NULL};
	int64_t		rd[2],
				gat[2],
				cat[2],
				shp,
				rs,
				ex;
	const char *shape;

	if (onnx_readers(L, i, v, rd, 2) != 2)
		return -1;
	shp = ln_is_op(NODE(L, rd[0]), "Shape", 1, NULL) ? rd[0] : rd[1];
	rs = shp == rd[0] ? rd[1] : rd[0];
	if (!ln_is_op(NODE(L, shp), "Shape", 1, NULL) || !ln_is_op(NODE(L, rs), "Reshape", 2, allowzero) ||
		strcmp(NODE(L, rs)->input[0], v) != 0 || !ln_attr_is(L, NODE(L, rs), "allowzero", 0, 0))
		return -1;
	shape = NODE(L, shp)->output[0];
	if (onnx_readers(L, (size_t) shp, shape, gat, 2) != 2)
		return -1;
	for (int k = 0; k < 2; k++)
		if (!index_op(L, gat[k], "Gather", shape, 0) ||
			!index_op(L, cat[k] = onnx_sole_reader(L, (size_t) gat[k], NODE(L, gat[k])->output[0], "Concat"),
					  "Concat", NODE(L, gat[k])->output[0], 1))
			return -1;
	/* one Concat is the Reshape's shape, the other the Expand's */
	if (strcmp(NODE(L, rs)->input[1], NODE(L, cat[0])->output[0]) != 0)
	{
		int64_t		t = cat[0];

		cat[0] = cat[1];
		cat[1] = t;
	}
	ex = onnx_sole_reader(L, (size_t) rs, NODE(L, rs)->output[0], "Expand");
	if (strcmp(NODE(L, rs)->input[1], NODE(L, cat[0])->output[0]) != 0 ||
		onnx_sole_reader(L, (size_t) cat[0], NODE(L, cat[0])->output[0], "Reshape") != rs ||
		ex < 0 || !ln_is_op(NODE(L, ex), "Expand", 2, NULL) ||
		strcmp(NODE(L, ex)->input[0], NODE(L, rs)->output[0]) != 0 ||
		strcmp(NODE(L, ex)->input[1], NODE(L, cat[1])->output[0]) != 0 ||
		onnx_sole_reader(L, (size_t) cat[1], NODE(L, cat[1])->output[0], "Expand") != ex)
		return -1;
	if (!ln_take(m, shp) || !ln_take(m, gat[0]) || !ln_take(m, gat[1]) || !ln_take(m, cat[0]) || !ln_take(m, cat[1]) ||
		!ln_take(m, rs) || !ln_take(m, ex))
		return -1;
	return ex;
}

/* Is node k Div(x, c) with c a constant scalar equal to want? */
static bool
div_by(Loader *L, int64_t k, const char *x, float want)
{
	float		c;

	return k >= 0 && ln_is_op(NODE(L, k), "Div", 2, NULL) && strcmp(NODE(L, k)->input[0], x) == 0 &&
		onnx_const_scalar(L, NODE(L, k)->input[1], &c) && c == want;
}

/*
 * Sqrt(Add(var, eps)) after node var (the variance), eps a constant scalar
 * of 0 or more (in m->eps): both nodes taken into m; the Sqrt's index, or -1.
 */
static int64_t
eps_sqrt(Loader *L, int64_t var, LnMatch *m)
{
	int64_t		add,
				sq;

	add = onnx_sole_reader(L, (size_t) var, NODE(L, var)->output[0], "Add");
	if (add < 0 || !ln_is_op(NODE(L, add), "Add", 2, NULL) ||
		!onnx_const_scalar(L, onnx_other_input(NODE(L, add), NODE(L, var)->output[0]), &m->eps) ||
		!(m->eps >= 0.0f) || !ln_take(m, add))
		return -1;
	sq = onnx_sole_reader(L, (size_t) add, NODE(L, add)->output[0], "Sqrt");
	return sq >= 0 && ln_is_op(NODE(L, sq), "Sqrt", 1, NULL) && ln_take(m, sq) ? sq : -1;
}

/*
 * tf2onnx's moments from node i = ReduceMean(h): mean read by Sub(h, mean)
 * and Neg(mean) alone, var = ReduceMean(Mul(d, d)).  Sets *var (the node
 * producing the variance) and *neg.
 */
static bool
tf_moments(Loader *L, size_t i, LnMatch *m, int64_t *var, int64_t *neg)
{
	const char *h = L->cur;
	const char *mean = NODE(L, i)->output[0];
	const char *d;
	int64_t		rd[2],
				sub,
				sq;

	if (onnx_readers(L, i, mean, rd, 2) != 2)
		return false;
	sub = ln_is_op(NODE(L, rd[0]), "Sub", 2, NULL) &&
		onnx_takes(NODE(L, rd[0]), h, mean, false) ? rd[0] : rd[1];
	*neg = sub == rd[0] ? rd[1] : rd[0];
	/* Keras 2 with center=True: Mul(mean, s) for Neg(mean), taken by scale_and_shift */
	if (!ln_is_op(NODE(L, sub), "Sub", 2, NULL) || !onnx_takes(NODE(L, sub), h, mean, false) ||
		!(ln_is_op(NODE(L, *neg), "Neg", 1, NULL) || ln_is_op(NODE(L, *neg), "Mul", 2, NULL)))
		return false;
	d = NODE(L, sub)->output[0];
	sq = onnx_sole_reader(L, (size_t) sub, d, "Mul");
	if (sq < 0 || !ln_is_op(NODE(L, sq), "Mul", 2, NULL) || !onnx_takes(NODE(L, sq), d, d, false))
		return false;
	*var = onnx_sole_reader(L, (size_t) sq, NODE(L, sq)->output[0], "ReduceMean");
	return *var >= 0 && reduce_columns(L, NODE(L, *var), "ReduceMean", NODE(L, sq)->output[0], 1) &&
		(strcmp(NODE(L, *neg)->op_type, "Mul") == 0 || ln_take(m, *neg)) &&
		ln_take(m, sub) && ln_take(m, sq) && ln_take(m, *var);
}

/*
 * jax2onnx's moments from node i = ReduceMean(h) (the shift, read by
 * Neg alone): see the header.  Sets *var (the Where choosing the variance)
 * and *neg.
 */
static bool
jax_moments(Loader *L, size_t i, LnMatch *m, int64_t *var, int64_t *neg)
{
	const char *h = L->cur;
	const float w = (float) L->width;
	int64_t		rd[3],
				sum = -1,
				col,
				div,
				sub,
				ss,
				dv,
				gt,
				sh,
				ga,
				ca,
				nan,
				wh;
	const char *v;
	const Onnx__TensorProto *t;
	int64_t		one;
	float		c;

	*neg = onnx_sole_reader(L, i, NODE(L, i)->output[0], "Neg");
	if (*neg < 0 || !ln_is_op(NODE(L, *neg), "Neg", 1, NULL) || !ln_take(m, *neg))
		return false;
	/* h is read after node i by ReduceSum, Sub(h, m2) and the Mul(h, s) to come */
	if (onnx_readers(L, i, h, rd, 3) != 3)
		return false;
	for (int k = 0; k < 3; k++)
		if (NODE(L, rd[k])->op_type && strcmp(NODE(L, rd[k])->op_type, "ReduceSum") == 0)
			sum = rd[k];
	if (sum < 0 || !reduce_columns(L, NODE(L, sum), "ReduceSum", h, 0) || !ln_take(m, sum) ||
		(col = column_of(L, (size_t) sum, NODE(L, sum)->output[0], m)) < 0)
		return false;
	/* m2 = sum / W; ss = ReduceSumSquare(h - m2) */
	div = onnx_sole_reader(L, (size_t) col, NODE(L, col)->output[0], "Div");
	if (!div_by(L, div, NODE(L, col)->output[0], w) || !ln_take(m, div))
		return false;
	sub = onnx_sole_reader(L, (size_t) div, NODE(L, div)->output[0], "Sub");
	if (sub < 0 || !ln_is_op(NODE(L, sub), "Sub", 2, NULL) ||
		!onnx_takes(NODE(L, sub), h, NODE(L, div)->output[0], false) || !ln_take(m, sub))
		return false;
	ss = onnx_sole_reader(L, (size_t) sub, NODE(L, sub)->output[0], "ReduceSumSquare");
	if (ss < 0 || !reduce_columns(L, NODE(L, ss), "ReduceSumSquare", NODE(L, sub)->output[0], 0) ||
		!ln_take(m, ss) || (col = column_of(L, (size_t) ss, NODE(L, ss)->output[0], m)) < 0)
		return false;
	/* v = ss / (W - ddof), the count folded to a constant: ddof 0 */
	dv = onnx_sole_reader(L, (size_t) col, NODE(L, col)->output[0], "Div");
	if (!div_by(L, dv, NODE(L, col)->output[0], w) || !ln_take(m, dv))
		return false;
	v = NODE(L, dv)->output[0];
	/* v is read by Where(Greater(count, 0), v, nan) and by the Shape of nan's broadcast */
	if (onnx_readers(L, (size_t) dv, v, rd, 2) != 2)
		return false;
	wh = ln_is_op(NODE(L, rd[0]), "Where", 3, NULL) ? rd[0] : rd[1];
	sh = wh == rd[0] ? rd[1] : rd[0];
	if (!ln_is_op(NODE(L, wh), "Where", 3, NULL) || strcmp(NODE(L, wh)->input[1], v) != 0 ||
		!ln_is_op(NODE(L, sh), "Shape", 1, NULL) || strcmp(NODE(L, sh)->input[0], v) != 0)
		return false;
	gt = onnx_value_producer(L, NODE(L, wh)->input[0]);
	if (gt < 0 || !ln_is_op(NODE(L, gt), "Greater", 2, NULL) ||
		strcmp(NODE(L, gt)->input[0], NODE(L, dv)->input[1]) != 0 ||
		!onnx_const_scalar(L, NODE(L, gt)->input[1], &c) || c != 0.0f ||
		onnx_sole_reader(L, (size_t) gt, NODE(L, gt)->output[0], "Where") != wh)
		return false;
	/* nan = Expand(NaN, Concat(Gather(Shape(v), [0]), [1])), read by the Where alone */
	ga = onnx_sole_reader(L, (size_t) sh, NODE(L, sh)->output[0], "Gather");
	if (!index_op(L, ga, "Gather", NODE(L, sh)->output[0], 0))
		return false;
	ca = onnx_sole_reader(L, (size_t) ga, NODE(L, ga)->output[0], "Concat");
	if (!index_op(L, ca, "Concat", NODE(L, ga)->output[0], 1))
		return false;
	nan = onnx_sole_reader(L, (size_t) ca, NODE(L, ca)->output[0], "Expand");
	if (nan < 0 || !ln_is_op(NODE(L, nan), "Expand", 2, NULL) ||
		strcmp(NODE(L, nan)->input[1], NODE(L, ca)->output[0]) != 0 ||
		(t = onnx_find_const(L, NODE(L, nan)->input[0])) == NULL ||
		onnx_tensor_check(L, t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, &one) != GS_OK || one != 1 ||
		strcmp(NODE(L, wh)->input[2], NODE(L, nan)->output[0]) != 0 ||
		onnx_sole_reader(L, (size_t) nan, NODE(L, nan)->output[0], "Where") != wh)
	{
		gs_status_clear(L->st);
		return false;
	}
	*var = wh;
	return ln_take(m, gt) && ln_take(m, sh) && ln_take(m, ga) && ln_take(m, ca) && ln_take(m, nan) && ln_take(m, wh);
}

/*
 * Keras 2's ending with center=True (tf2onnx 1.16, epsilon below 1.001e-5):
 * ms = Mul(mean, s), y = Add(Mul(h, s), Sub(beta, ms)), either Add order.
 */
static bool
keras2_center(Loader *L, int64_t ms, int64_t hs, LnMatch *m)
{
	int64_t		sb,
				fin;

	if (!ln_take(m, ms))
		return false;
	sb = onnx_sole_reader(L, (size_t) ms, NODE(L, ms)->output[0], "Sub");
	if (sb < 0 || !ln_is_op(NODE(L, sb), "Sub", 2, NULL) ||
		strcmp(NODE(L, sb)->input[1], NODE(L, ms)->output[0]) != 0 ||
		onnx_find_const(L, NODE(L, sb)->input[0]) == NULL || !ln_take(m, sb))
		return false;
	m->beta = NODE(L, sb)->input[0];
	fin = onnx_sole_reader(L, (size_t) sb, NODE(L, sb)->output[0], "Add");
	return fin >= 0 && ln_is_op(NODE(L, fin), "Add", 2, NULL) &&
		onnx_takes(NODE(L, fin), NODE(L, hs)->output[0], NODE(L, sb)->output[0], true) &&
		onnx_sole_reader(L, (size_t) hs, NODE(L, hs)->output[0], "Add") == fin && ln_take(m, fin);
}

/*
 * The part both forms share, from the node var producing the variance and
 * the Neg of the shift: eps, the inverse square root (Reciprocal, or
 * Div(1, .)), gamma, the two products, beta, the final Add.
 */
static bool
scale_and_shift(Loader *L, int64_t var, int64_t neg, LnMatch *m)
{
	const char *h = L->cur;
	const char *s;
	int64_t		add,
				sq,
				inv,
				rd[2],
				hs,
				ms,
				fin;
	float		c;

	if ((sq = eps_sqrt(L, var, m)) < 0)
		return false;
	s = NODE(L, sq)->output[0];
	if ((inv = onnx_sole_reader(L, (size_t) sq, s, "Reciprocal")) >= 0)
	{
		if (!ln_is_op(NODE(L, inv), "Reciprocal", 1, NULL))
			return false;
	}
	else if ((inv = onnx_sole_reader(L, (size_t) sq, s, "Div")) < 0 || !ln_is_op(NODE(L, inv), "Div", 2, NULL) ||
			 strcmp(NODE(L, inv)->input[1], s) != 0 ||
			 !onnx_const_scalar(L, NODE(L, inv)->input[0], &c) || c != 1.0f)
		return false;
	if (!ln_take(m, inv))
		return false;
	s = NODE(L, inv)->output[0];
	/* s = Mul(inverse, gamma), unless scale=False */
	if ((add = ln_mul_by_const(L, (size_t) inv, s, &m->gamma)) >= 0)
	{
		if (!ln_take(m, add))
			return false;
		s = NODE(L, add)->output[0];
	}
	/* s is read by Mul(h, s) and Mul(Neg(mean), s) (Keras 2: Mul(mean, s), neg itself) */
	if (onnx_readers(L, (size_t) m->j[m->n - 1], s, rd, 2) != 2)
		return false;
	hs = ln_is_op(NODE(L, rd[0]), "Mul", 2, NULL) && onnx_takes(NODE(L, rd[0]), h, s, true) ? rd[0] : rd[1];
	ms = hs == rd[0] ? rd[1] : rd[0];
	if (!ln_is_op(NODE(L, hs), "Mul", 2, NULL) || !onnx_takes(NODE(L, hs), h, s, true) || !ln_take(m, hs))
		return false;
	if (ms == neg)
		return keras2_center(L, neg, hs, m);
	if (!ln_is_op(NODE(L, ms), "Mul", 2, NULL) || !onnx_takes(NODE(L, ms), NODE(L, neg)->output[0], s, true) ||
		onnx_sole_reader(L, (size_t) neg, NODE(L, neg)->output[0], "Mul") != ms ||
		!ln_take(m, ms))
		return false;
	/* t = Add(Mul(Neg(mean), s), beta), unless center=False; y = Add(h s, t) */
	fin = onnx_sole_reader(L, (size_t) ms, NODE(L, ms)->output[0], "Add");
	if (fin < 0 || !ln_is_op(NODE(L, fin), "Add", 2, NULL))
		return false;
	if (!onnx_takes(NODE(L, fin), NODE(L, hs)->output[0], NODE(L, ms)->output[0], true))
	{
		m->beta = onnx_other_input(NODE(L, fin), NODE(L, ms)->output[0]);
		if (m->beta == NULL || onnx_find_const(L, m->beta) == NULL || !ln_take(m, fin))
			return false;
		fin = onnx_sole_reader(L, (size_t) fin, NODE(L, fin)->output[0], "Add");
		if (fin < 0 || !ln_is_op(NODE(L, fin), "Add", 2, NULL) ||
			!onnx_takes(NODE(L, fin), NODE(L, hs)->output[0], NODE(L, m->j[m->n - 1])->output[0], true))
			return false;
	}
	return onnx_sole_reader(L, (size_t) hs, NODE(L, hs)->output[0], "Add") == fin && ln_take(m, fin);
}

/*
 * PyTorch's form from node i = ReduceMean(h): see the header.  d = Sub(h,
 * mean) is read by Pow(d, 2) and by Div(d, Sqrt(Add(var, eps))) alone; the
 * Mul by gamma and the Add of beta are there unless
 * elementwise_affine=False (bias=False leaves out the Add alone).
 */
static bool
torch_layernorm(Loader *L, size_t i, LnMatch *m)
{
	const char *h = L->cur;
	const char *d;
	int64_t		sub,
				rd[2],
				pw,
				var,
				sq,
				dv;
	float		c;

	sub = onnx_sole_reader(L, i, NODE(L, i)->output[0], "Sub");
	if (sub < 0 || !ln_is_op(NODE(L, sub), "Sub", 2, NULL) ||
		!onnx_takes(NODE(L, sub), h, NODE(L, i)->output[0], false) || !ln_take(m, sub))
		return false;
	d = NODE(L, sub)->output[0];
	if (onnx_readers(L, (size_t) sub, d, rd, 2) != 2)
		return false;
	pw = ln_is_op(NODE(L, rd[0]), "Pow", 2, NULL) ? rd[0] : rd[1];
	dv = pw == rd[0] ? rd[1] : rd[0];
	if (!ln_is_op(NODE(L, pw), "Pow", 2, NULL) || strcmp(NODE(L, pw)->input[0], d) != 0 ||
		!onnx_const_scalar(L, NODE(L, pw)->input[1], &c) || c != 2.0f || !ln_take(m, pw))
		return false;
	var = onnx_sole_reader(L, (size_t) pw, NODE(L, pw)->output[0], "ReduceMean");
	if (var < 0 || !reduce_columns(L, NODE(L, var), "ReduceMean", NODE(L, pw)->output[0], 1) ||
		!ln_take(m, var))
		return false;
	if ((sq = eps_sqrt(L, var, m)) < 0 ||
		onnx_sole_reader(L, (size_t) sq, NODE(L, sq)->output[0], "Div") != dv ||
		!ln_is_op(NODE(L, dv), "Div", 2, NULL) || strcmp(NODE(L, dv)->input[0], d) != 0 ||
		strcmp(NODE(L, dv)->input[1], NODE(L, sq)->output[0]) != 0 || !ln_take(m, dv))
		return false;
	return ln_affine_tail(L, dv, m, false);
}

/* See onnx_fuse_norm.h. */
bool
ln_affine_tail(Loader *L, int64_t k, LnMatch *m, bool add_alone)
{
	int64_t		a;
	const char *b;

	if ((a = ln_mul_by_const(L, (size_t) k, NODE(L, k)->output[0], &m->gamma)) >= 0)
	{
		if (!ln_take(m, a))
			return false;
		k = a;
	}
	else if (!add_alone)
		return true;
	if ((a = onnx_sole_reader(L, (size_t) k, NODE(L, k)->output[0], "Add")) >= 0 &&
		ln_is_op(NODE(L, a), "Add", 2, NULL) &&
		(b = onnx_other_input(NODE(L, a), NODE(L, k)->output[0])) != NULL &&
		onnx_find_const(L, b) != NULL)
	{
		m->beta = b;
		return ln_take(m, a);
	}
	return true;
}

/*
 * Match a form from node i = ReduceMean(h, keepdims 1): true with m
 * filled (its last node the last of the pattern).
 */
static bool
match_layernorm(Loader *L, size_t i, LnMatch *m)
{
	int64_t		var,
				neg;

	if (!reduce_columns(L, NODE(L, i), "ReduceMean", L->cur, 1))
		return false;
	memset(m, 0, sizeof(*m));
	if (tf_moments(L, i, m, &var, &neg) && scale_and_shift(L, var, neg, m))
		return true;
	memset(m, 0, sizeof(*m));
	if (jax_moments(L, i, m, &var, &neg) && scale_and_shift(L, var, neg, m))
		return true;
	memset(m, 0, sizeof(*m));
	return torch_layernorm(L, i, m);
}

/*
 * Does node i start a LayerNormalization written out in nodes on the chain?  If so, add
 * the GS_MLP_LAYER_NORM step (its gamma and beta checked and copied: one
 * value per column or one for all), take the pattern's other nodes out of
 * L->needed, move the chain to its last output and set *fused.  A node that
 * starts no such pattern is left alone; a pattern with constants of the
 * wrong width is refused naming its last node.
 */
GsCode
onnx_fuse_layernorm(Loader *L, size_t i, bool *fused)
{
	const Onnx__NodeProto *last;
	LnMatch		m;
	float	   *w = NULL,
			   *p = NULL;
	GsMlpStep  *s;
	char		nname[80];

	*fused = false;
	if (L->rank1 || !NODE(L, i)->op_type)
		return GS_OK;
	if (strcmp(NODE(L, i)->op_type, "Shape") == 0 ? !ln_keras2_fused(L, i, &m) :
		strcmp(NODE(L, i)->op_type, "ReduceMean") != 0 || !match_layernorm(L, i, &m))
		return GS_OK;
	last = NODE(L, m.j[m.n - 1]);
	onnx_safe_name(nname, sizeof(nname), last->name);
	snprintf(L->label, sizeof(L->label), "node \"%s\" (%s ending a LayerNormalization)", nname,
			 last->op_type);
	if (onnx_over_parameters(L, (int64_t) L->width * 2))
		return L->st->code;
	if (m.gamma && onnx_column_params(L, onnx_find_const(L, m.gamma), &w) != GS_OK)
		return L->st->code;
	if (m.beta && onnx_column_params(L, onnx_find_const(L, m.beta), &p) != GS_OK)
		goto fail;
	if (w == NULL)
	{
		/* scale=False: a scale of 1 */
		if ((w = onnx_alloc(L, sizeof(float) * (size_t) L->width)) == NULL)
		{
			onnx_nomem(L);
			goto fail;
		}
		for (int32_t c = 0; c < L->width; c++)
			w[c] = 1.0f;
	}
	if ((s = onnx_new_step(L, GS_MLP_LAYER_NORM, last->name)) == NULL)
		goto fail;
	s->w = w;
	s->p = p;
	s->alpha = m.eps;
	L->m->n_params += (int64_t) L->width * ((m.gamma ? 1 : 0) + (p ? 1 : 0));
	for (int k = 0; k < m.n; k++)
		L->needed[m.j[k]] = false;
	L->cur = last->output[0];
	*fused = true;
	return GS_OK;

fail:
	if (w)
		L->alloc.free(L->alloc.ctx, w);
	if (p)
		L->alloc.free(L->alloc.ctx, p);
	return L->st->code;
}

/*
 * onnx_fuse_norm_tf.c
 *	  Keras 2's LayerNormalization as tf2onnx 1.16 writes it, read as one
 *	  layer normalization step (onnx_fuse_norm.c adds it).
 *
 * For an epsilon of 1.001e-5 or more (the default is 1e-3), Keras 2 runs a
 * layer normalization as TensorFlow's fused batch normalization of the rows
 * reshaped to channels, and tf2onnx writes that out as computed, with the
 * shapes taken from the value h ([N, W]) at run time:
 *
 *		r	 = Reshape(h, [1, -1, W, 1])			 (each row a channel)
 *		mean = ReduceMean(r, axes [0, 2, 3], keepdims 1)
 *		var  = Div(ReduceSumSquare(Sub(r, mean), axes [0, 2, 3], keepdims 0),
 *				   Cast(ReduceProd(Gather(Shape(r), [0, 2, 3])), float))
 *		y	 = Reshape(BatchNormalization(r, ones, zeros, Squeeze(mean, [0, 2, 3]),
 *										  var, epsilon),
 *					   Cast(Cast(Shape(h), int32), int64))
 *
 * ones and zeros being Expand(1, s) and Expand(0, s) of the row count s
 * (Cast(Unsqueeze(ReduceProd(Slice(Cast(Shape(h), int32)))))), then a Mul
 * by gamma and an Add of beta (either absent with scale=False or
 * center=False).  That is (h - mean) / sqrt(var + epsilon) gamma + beta
 * over the columns of each row.  Every node is checked: its op, its
 * constants and attributes, that each value is read by the pattern alone;
 * what differs is left to the chain's checks, which refuse it at the Shape
 * (not a chain operator).  Opsets 13 to 18: the axes of Squeeze and
 * Unsqueeze are inputs from 13 on, those of the reductions from 18 on.
 *
 * A smaller epsilon takes TensorFlow's unfused moments, which
 * onnx_fuse_norm.c reads.
 */
#include "onnx_fuse_norm.h"

#include <string.h>

/* Is name a constant int64 tensor holding exactly want[0 .. n)? */
static bool
ints_are(Loader *L, const char *name, const int64_t *want, int n)
{
	const Onnx__TensorProto *t = onnx_find_const(L, name);
	int64_t		got[8],
				k = 0;
	bool		ok = t && onnx_tensor_int64s(L, t, 8, &k, got) == GS_OK && k == n &&
		memcmp(got, want, sizeof(int64_t) * (size_t) n) == 0;

	gs_status_clear(L->st);		/* not a match, not an error */
	return ok;
}

/* Does attribute name of n hold exactly the ints want[0 .. n_want)? */
static bool
attr_ints_are(const Onnx__NodeProto *n, const char *name, const int64_t *want, int n_want)
{
	const Onnx__AttributeProto *a = onnx_attr_find(n, name);

	return a != NULL && a->n_ints == (size_t) n_want &&
		memcmp(a->ints, want, sizeof(int64_t) * (size_t) n_want) == 0;
}

/*
 * Is node k op(x) over the axes want (an attribute, or an input from
 * opset input_from on), with keepdims as wanted (-1: not an attribute of
 * the op: Squeeze, Unsqueeze)?
 */
static bool
axes_op(Loader *L, int64_t k, const char *op, const char *x, const int64_t *want, int n_want,
		int input_from, int64_t keepdims)
{
	static const char *const attrs_old[] = {"axes", "keepdims", NULL};
	static const char *const attrs_new[] = {"keepdims", "noop_with_empty_axes", NULL};
	const Onnx__NodeProto *n;
	bool		input_axes = L->opset >= input_from;

	if (k < 0)
		return false;
	n = NODE(L, k);
	if (!ln_is_op(n, op, input_axes ? 2 : 1, input_axes ? attrs_new : attrs_old) ||
		strcmp(n->input[0], x) != 0 ||
		(keepdims >= 0 && !ln_attr_is(L, n, "keepdims", 1, keepdims)))
		return false;
	/* (noop_with_empty_axes says nothing where the axes are given, as here) */
	return input_axes ? ints_are(L, n->input[1], want, n_want) : attr_ints_are(n, "axes", want, n_want);
}

/* Is node k Cast(x) to the type to (an ONNX TensorProto data type)? */
static bool
cast_of(Loader *L, int64_t k, const char *x, int64_t to)
{
	static const char *const attrs[] = {"to", "saturate", NULL};

	return k >= 0 && ln_is_op(NODE(L, k), "Cast", 1, attrs) && strcmp(NODE(L, k)->input[0], x) == 0 &&
		ln_attr_is(L, NODE(L, k), "to", 0, to);
}

/* The one node after i reading node i's output, when it is op; else -1. */
static int64_t
next_op(Loader *L, int64_t i, const char *op)
{
	return i < 0 ? -1 : onnx_sole_reader(L, (size_t) i, NODE(L, i)->output[0], op);
}

/* Output name of node k. */
#define OUT(L, k) (NODE(L, k)->output[0])

/*
 * The row count as a [1] tensor, from c1 = Cast(Shape(h), int32), read
 * by Slice alone: Cast(Unsqueeze(ReduceProd(Slice(c1, [0], [1], [0])),
 * [0]), int64), read by the two Expands alone; their indices in ex[].
 */
static bool
row_count(Loader *L, int64_t sl, const char *c1, LnMatch *m, int64_t ex[2])
{
	static const int64_t zero[] = {0},
				one[] = {1};
	const Onnx__NodeProto *n = NODE(L, sl);
	int64_t		rp,
				us,
				c3;

	if (!ln_is_op(n, "Slice", 4, NULL) || strcmp(n->input[0], c1) != 0 ||
		!ints_are(L, n->input[1], zero, 1) || !ints_are(L, n->input[2], one, 1) ||
		!ints_are(L, n->input[3], zero, 1) || !ln_take(m, sl))
		return false;
	rp = next_op(L, sl, "ReduceProd");
	if (!axes_op(L, rp, "ReduceProd", OUT(L, sl), zero, 1, 18, 0) || !ln_take(m, rp))
		return false;
	us = next_op(L, rp, "Unsqueeze");
	if (!axes_op(L, us, "Unsqueeze", OUT(L, rp), zero, 1, 13, -1) || !ln_take(m, us))
		return false;
	c3 = next_op(L, us, "Cast");
	if (!cast_of(L, c3, OUT(L, us), ONNX__TENSOR_PROTO__DATA_TYPE__INT64) || !ln_take(m, c3) ||
		onnx_readers(L, (size_t) c3, OUT(L, c3), ex, 2) != 2)
		return false;
	for (int k = 0; k < 2; k++)
		if (!ln_is_op(NODE(L, ex[k]), "Expand", 2, NULL) ||
			strcmp(NODE(L, ex[k])->input[1], OUT(L, c3)) != 0 || !ln_take(m, ex[k]))
			return false;
	return true;
}

/*
 * The statistics from r = Reshape(h, [1, -1, W, 1]): r read by Shape,
 * ReduceMean, Sub and the BatchNormalization bn alone, whose inputs 3 and
 * 4 must be Squeeze(mean) and the variance.
 */
static bool
moments(Loader *L, int64_t rs, int64_t bn, LnMatch *m)
{
	static const int64_t axes[] = {0, 2, 3};
	const char *r = OUT(L, rs);
	int64_t		rd[4],
				sh = -1,
				rm = -1,
				sub = -1,
				rss,
				sq,
				ga,
				rp,
				c4,
				dv;

	if (onnx_readers(L, (size_t) rs, r, rd, 4) != 4)
		return false;
	for (int k = 0; k < 4; k++)
	{
		const char *op = NODE(L, rd[k])->op_type ? NODE(L, rd[k])->op_type : "";

		if (strcmp(op, "Shape") == 0)
			sh = rd[k];
		else if (strcmp(op, "ReduceMean") == 0)
			rm = rd[k];
		else if (strcmp(op, "Sub") == 0)
			sub = rd[k];
		else if (rd[k] != bn)
			return false;
	}
	if (sh < 0 || !ln_is_op(NODE(L, sh), "Shape", 1, NULL) ||
		!axes_op(L, rm, "ReduceMean", r, axes, 3, 18, 1) ||
		sub < 0 || !ln_is_op(NODE(L, sub), "Sub", 2, NULL) || !onnx_takes(NODE(L, sub), r, OUT(L, rm), false) ||
		!ln_take(m, sh) || !ln_take(m, rm) || !ln_take(m, sub))
		return false;
	/* mean is read by the Sub and by Squeeze(mean, [0, 2, 3]), the batch normalization's mean */
	if (onnx_readers(L, (size_t) rm, OUT(L, rm), rd, 2) != 2)
		return false;
	sq = rd[0] == sub ? rd[1] : rd[0];
	if (!axes_op(L, sq, "Squeeze", OUT(L, rm), axes, 3, 13, -1) || next_op(L, sq, "BatchNormalization") != bn ||
		strcmp(NODE(L, bn)->input[3], OUT(L, sq)) != 0 || !ln_take(m, sq))
		return false;
	/* var = ReduceSumSquare(Sub(r, mean)) / Cast(ReduceProd(Gather(Shape(r), [0, 2, 3]))) */
	rss = next_op(L, sub, "ReduceSumSquare");
	if (!axes_op(L, rss, "ReduceSumSquare", OUT(L, sub), axes, 3, 18, 0) || !ln_take(m, rss))
		return false;
	ga = next_op(L, sh, "Gather");
	if (ga < 0 || !ln_is_op(NODE(L, ga), "Gather", 2, (const char *const[]) {"axis", NULL}) ||
		strcmp(NODE(L, ga)->input[0], OUT(L, sh)) != 0 || !ln_attr_is(L, NODE(L, ga), "axis", 0, 0) ||
		!ints_are(L, NODE(L, ga)->input[1], axes, 3) || !ln_take(m, ga))
		return false;
	rp = next_op(L, ga, "ReduceProd");
	if (!axes_op(L, rp, "ReduceProd", OUT(L, ga), (const int64_t[]) {0}, 1, 18, 0) || !ln_take(m, rp))
		return false;
	c4 = next_op(L, rp, "Cast");
	if (!cast_of(L, c4, OUT(L, rp), ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) || !ln_take(m, c4))
		return false;
	dv = next_op(L, c4, "Div");
	return dv >= 0 && dv == next_op(L, rss, "Div") && ln_is_op(NODE(L, dv), "Div", 2, NULL) &&
		strcmp(NODE(L, dv)->input[0], OUT(L, rss)) == 0 && strcmp(NODE(L, dv)->input[1], OUT(L, c4)) == 0 &&
		next_op(L, dv, "BatchNormalization") == bn && strcmp(NODE(L, bn)->input[4], OUT(L, dv)) == 0 &&
		ln_take(m, dv);
}

/* See onnx_fuse_norm.h; the pattern is in the header above. */
bool
ln_keras2_fused(Loader *L, size_t i, LnMatch *m)
{
	static const char *const bn_attrs[] = {"epsilon", "momentum", "training_mode", NULL};
	const char *h = L->cur;
	const Onnx__NodeProto *n;
	int64_t		shape4[4] = {1, -1, L->width, 1},
				rd[8],
				c1,
				c2,
				sl,
				rs = -1,
				bn,
				r2,
				ex[2];
	int			nr;
	float		one;

	memset(m, 0, sizeof(*m));
	n = NODE(L, i);
	if (!ln_is_op(n, "Shape", 1, NULL) || strcmp(n->input[0], h) != 0 || !ln_take(m, (int64_t) i))
		return false;
	/* c1 = Cast(Shape(h), int32), read by c2 = Cast(c1, int64) (the final shape) and the Slice */
	c1 = next_op(L, (int64_t) i, "Cast");
	if (!cast_of(L, c1, OUT(L, i), ONNX__TENSOR_PROTO__DATA_TYPE__INT32) || !ln_take(m, c1) ||
		onnx_readers(L, (size_t) c1, OUT(L, c1), rd, 2) != 2)
		return false;
	c2 = ln_is_op(NODE(L, rd[0]), "Cast", 1, (const char *const[]) {"to", "saturate", NULL}) ? rd[0] : rd[1];
	sl = c2 == rd[0] ? rd[1] : rd[0];
	if (!cast_of(L, c2, OUT(L, c1), ONNX__TENSOR_PROTO__DATA_TYPE__INT64) || !ln_take(m, c2) ||
		!row_count(L, sl, OUT(L, c1), m, ex))
		return false;
	/* r = Reshape(h, [1, -1, W, 1]), among the readers of h after the Shape */
	nr = onnx_readers(L, i, h, rd, 8);
	for (int k = 0; k < nr && k < 8; k++)	/* (nr is -1 when a node not needed reads h) */
		if (ln_is_op(NODE(L, rd[k]), "Reshape", 2, (const char *const[]) {"allowzero", NULL}) &&
			strcmp(NODE(L, rd[k])->input[0], h) == 0 && ints_are(L, NODE(L, rd[k])->input[1], shape4, 4) &&
			ln_attr_is(L, NODE(L, rd[k]), "allowzero", 0, 0))
			rs = rd[k];
	if (rs < 0 || !ln_take(m, rs))
		return false;
	/* bn = BatchNormalization(r, Expand(1), Expand(0), mean, var), y = Reshape(bn, c2) */
	bn = next_op(L, ex[0], "BatchNormalization");
	if (bn < 0 || !ln_is_op(NODE(L, bn), "BatchNormalization", 5, bn_attrs) ||
		!ln_attr_is(L, NODE(L, bn), "training_mode", 0, 0) ||
		strcmp(NODE(L, bn)->input[0], OUT(L, rs)) != 0 || next_op(L, ex[1], "BatchNormalization") != bn)
		return false;
	if (strcmp(NODE(L, bn)->input[1], OUT(L, ex[0])) != 0)
	{
		int64_t		t = ex[0];

		ex[0] = ex[1];
		ex[1] = t;
	}
	if (strcmp(NODE(L, bn)->input[1], OUT(L, ex[0])) != 0 || strcmp(NODE(L, bn)->input[2], OUT(L, ex[1])) != 0 ||
		!onnx_const_scalar(L, NODE(L, ex[0])->input[0], &one) || one != 1.0f ||
		!onnx_const_scalar(L, NODE(L, ex[1])->input[0], &one) || one != 0.0f ||
		!moments(L, rs, bn, m) || !ln_take(m, bn))
		return false;
	if (onnx_attr_float(L, NODE(L, bn), "epsilon", 1e-5f, &m->eps) != GS_OK || !(m->eps >= 0.0f))
	{
		gs_status_clear(L->st);	/* not a match: the chain's checks refuse it */
		return false;
	}
	r2 = next_op(L, bn, "Reshape");
	if (r2 < 0 || !ln_is_op(NODE(L, r2), "Reshape", 2, (const char *const[]) {"allowzero", NULL}) ||
		!ln_attr_is(L, NODE(L, r2), "allowzero", 0, 0) ||
		strcmp(NODE(L, r2)->input[1], OUT(L, c2)) != 0 || next_op(L, c2, "Reshape") != r2 || !ln_take(m, r2))
		return false;
	return ln_affine_tail(L, r2, m, true);
}

/*
 * onnx_fold.c
 *	  Constant folding for the ONNX network loader (see onnx_internal.h): a
 *	  node whose inputs are all constants (initializers, Constant nodes, or
 *	  values folded before it) is evaluated once at load time and its output
 *	  becomes a constant like any other (onnx_register_const), so the chain's
 *	  own translation applies to what it feeds: Add / Sub / Mul / Div by a
 *	  per-column constant, Max with a constant as a one-sided Clip, ...
 *
 *	  jax2onnx (Keras 3's JAX backend) does not fold: it writes an inference
 *	  BatchNormalization as Reshape / Add eps / Sqrt / Div(1, .) / Mul gamma /
 *	  Neg(mean) / Mul / Add on the layer's weights followed by h * s + t,
 *	  and a Normalization layer as Div(Sub(x, mean), Max(Sqrt(var), 1e-7)).
 *
 *	  Folded: Add, Sub, Mul, Div, Max and Min of two float constants with
 *	  numpy broadcasting over scalars, [W] and [1, W] only; Sqrt, Neg and
 *	  Reciprocal; Reshape, Squeeze, Unsqueeze and Cast to float of a float
 *	  constant (the same values under new dimensions); Cast to float of an
 *	  int32 or int64 scalar, [W] or [1, W]; Concat of int64 vectors along
 *	  axis 0 (shapes, at most 8 values) and Expand of a float constant to
 *	  such a shape (jax2onnx broadcasts a PReLU's slopes so): its values
 *	  under the broadcast dimensions, or a scalar repeated over [W] or
 *	  [1, W].  The arithmetic is
 *	  onnxruntime's: one IEEE float32 operation per node and value, in the
 *	  graph's order (the Makefile builds with -ffp-contract=off, so no fused
 *	  multiply-add).  A result that is not finite is refused, as a constant
 *	  of the file would be.  Sizes are checked before anything is allocated:
 *	  a computed value has at most GS_MLP_MAX_WIDTH elements, and all of a
 *	  load's computed values together at most FOLD_MAX_FLOATS.
 *
 * Memory: each folded value is one block of the loader's allocator (a
 * TensorProto header, its dims and its values), kept on L->folded and
 * freed by onnx_fold_free when the load ends, whether it succeeded or not.
 * A reshaped value points at the values of its input (the decoded file or
 * an earlier block), which live as long.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "onnx_internal.h"

/* Dimensions a folded value may have. */
#define FOLD_MAX_RANK	8

/* Values computed by folding, all of one load together (4 MiB). */
#define FOLD_MAX_FLOATS ((int64_t) 16 * GS_MLP_MAX_WIDTH)

/* One folded value: its header, dims and (for computed ones) values. */
struct FoldBlock
{
	struct FoldBlock *next;
	Onnx__TensorProto t;
	int64_t		dims[FOLD_MAX_RANK];
	int64_t		ints[FOLD_MAX_RANK];	/* a Concat's shape vector */
	float		vals[];
};

static const char *const fold_ops[] = {
	"Add", "Sub", "Mul", "Div", "Max", "Min", "Sqrt", "Neg", "Reciprocal",
	"Reshape", "Squeeze", "Unsqueeze", "Cast", "Concat", "Expand", NULL
};

/* Is constant name an int64 tensor of rank 1? */
static bool
int64_vector(const Loader *L, const char *name)
{
	const Onnx__TensorProto *t = onnx_find_const(L, name);

	return t && t->has_data_type && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && t->n_dims == 1;
}

/*
 * Is node an op this file folds, in the default domain, with a first input
 * and every named input a constant?
 */
bool
onnx_fold_applies(const Loader *L, const Onnx__NodeProto *node)
{
	bool		known = false;

	if ((node->domain && node->domain[0] && strcmp(node->domain, "ai.onnx") != 0) ||
		node->op_type == NULL || node->n_input < 1 || node->input[0] == NULL || node->input[0][0] == '\0')
		return false;
	for (int k = 0; fold_ops[k] && !known; k++)
		known = strcmp(node->op_type, fold_ops[k]) == 0;
	if (!known)
		return false;
	for (size_t k = 0; k < node->n_input; k++)
		if (node->input[k] && node->input[k][0] && onnx_find_const(L, node->input[k]) == NULL)
			return false;
	/* only shapes are concatenated (jax2onnx's broadcasts): int64 vectors */
	if (strcmp(node->op_type, "Concat") == 0)
		for (size_t k = 0; k < node->n_input; k++)
			if (!node->input[k] || !int64_vector(L, node->input[k]))
				return false;
	if (strcmp(node->op_type, "Expand") == 0 && (node->n_input != 2 || !int64_vector(L, node->input[1])))
		return false;
	return true;
}

/*
 * A new block with room for n values on L->folded, counted against
 * FOLD_MAX_FLOATS; NULL with the status set.
 */
static struct FoldBlock *
new_block(Loader *L, int64_t n)
{
	struct FoldBlock *b;

	if (n > FOLD_MAX_FLOATS - L->folded_floats)
	{
		gs_status_set(L->st, GS_ERR_LIMIT,
					  "folding the constants of %s takes more than %lld values",
					  L->label, (long long) FOLD_MAX_FLOATS);
		return NULL;
	}
	b = onnx_alloc(L, sizeof(struct FoldBlock) + sizeof(float) * (size_t) n);
	if (b == NULL)
	{
		onnx_nomem(L);
		return NULL;
	}
	memset(b, 0, sizeof(struct FoldBlock));
	b->next = L->folded;
	L->folded = b;
	L->folded_floats += n;
	return b;
}

/*
 * Register src's values under node's output with new dimensions (the
 * caller checked they hold as many values).  The header is src's, so the
 * values, their type and their storage are src's; only name and dims
 * change.
 */
static GsCode
fold_alias(Loader *L, const Onnx__NodeProto *node, const Onnx__TensorProto *src,
		   const int64_t *dims, size_t rank)
{
	struct FoldBlock *b = new_block(L, 0);

	if (b == NULL)
		return L->st->code;
	b->t = *src;
	if (rank > 0)				/* a scalar's dims may be NULL */
		memcpy(b->dims, dims, sizeof(int64_t) * rank);
	b->t.dims = b->dims;
	b->t.n_dims = rank;
	b->t.name = node->output[0];
	onnx_register_const(L, node->output[0], &b->t);
	return GS_OK;
}

/*
 * Register the n computed values of blk under node's output as a float
 * tensor of rank 0 ([]), 1 ([n]) or 2 ([1, n]).
 */
static void
register_values(Loader *L, const Onnx__NodeProto *node, struct FoldBlock *blk, int64_t n, size_t rank)
{
	onnx__tensor_proto__init(&blk->t);
	blk->t.name = node->output[0];
	blk->t.has_data_type = true;
	blk->t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	blk->dims[0] = rank == 2 ? 1 : n;
	blk->dims[1] = n;
	blk->t.dims = blk->dims;
	blk->t.n_dims = rank;
	blk->t.float_data = blk->vals;
	blk->t.n_float_data = (size_t) n;
	onnx_register_const(L, node->output[0], &blk->t);
}

/* Refuse a fold whose shapes are not the ones supported; sets the status. */
static GsCode
shape_refused(Loader *L)
{
	gs_status_set(L->st, GS_ERR_UNSUPPORTED,
				  "%s combines constants whose shapes are not supported", L->label);
	gs_status_detail(L->st, "Constant subgraphs are evaluated at load time for float scalars, "
					 "[W] and [1, W] tensors only.");
	return L->st->code;
}

/*
 * The axes of a Squeeze or Unsqueeze: the "axes" attribute before opset
 * 13, the optional int64 constant second input from 13 on.  *n = -1 when
 * there are none.
 */
static GsCode
fold_axes(Loader *L, const Onnx__NodeProto *node, int64_t *axes, int64_t *n)
{
	static const char *const no_attrs[] = {NULL};
	static const char *const attrs[] = {"axes", NULL};
	const Onnx__TensorProto *t;

	*n = -1;
	if (L->opset < 13)
	{
		const Onnx__AttributeProto *a = onnx_attr_find(node, "axes");

		if (node->n_input != 1)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu inputs", L->label, node->n_input);
		if (onnx_attrs_allowed(L, node, attrs) != GS_OK)
			return L->st->code;
		if (a == NULL)
			return GS_OK;
		if (a->n_ints > FOLD_MAX_RANK)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has more than %d axes",
								 L->label, FOLD_MAX_RANK);
		for (size_t k = 0; k < a->n_ints; k++)
			axes[k] = a->ints[k];
		*n = (int64_t) a->n_ints;
		return GS_OK;
	}
	if (node->n_input > 2)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu inputs", L->label, node->n_input);
	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
		return L->st->code;
	if (node->n_input < 2 || node->input[1] == NULL || node->input[1][0] == '\0')
		return GS_OK;
	if (onnx_want_const(L, node, 1, &t) != GS_OK ||
		onnx_tensor_int64s(L, t, FOLD_MAX_RANK, n, axes) != GS_OK)
		return L->st->code;
	return GS_OK;
}

/*
 * Reshape, Squeeze or Unsqueeze of a float constant: the same values under
 * the dimensions ONNX gives them.
 */
static GsCode
fold_shape(Loader *L, const Onnx__NodeProto *node, const char *op)
{
	const Onnx__TensorProto *src;
	int64_t		count,
				in[FOLD_MAX_RANK],
				out[FOLD_MAX_RANK],
				v[FOLD_MAX_RANK],
				n = 0;
	size_t		rank = 0;

	/* the values stay where they are: any size a dense layer may have */
	if (onnx_want_const(L, node, 0, &src) != GS_OK ||
		onnx_tensor_check(L, src, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
						  (int64_t) GS_MLP_MAX_WIDTH * GS_MLP_MAX_WIDTH, &count) != GS_OK)
		return L->st->code;
	if (src->n_dims > FOLD_MAX_RANK)
		return shape_refused(L);
	for (size_t k = 0; k < src->n_dims; k++)
		in[k] = src->dims[k];

	if (strcmp(op, "Reshape") == 0)
	{
		static const char *const attrs[] = {"allowzero", NULL};
		const Onnx__TensorProto *t;
		int64_t		allowzero,
					prod = 1;
		int			infer = -1;

		if (node->n_input != 2)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu inputs", L->label, node->n_input);
		if (onnx_attrs_allowed(L, node, attrs) != GS_OK ||
			onnx_attr_int(L, node, "allowzero", 0, &allowzero) != GS_OK ||
			onnx_want_const(L, node, 1, &t) != GS_OK ||
			onnx_tensor_int64s(L, t, FOLD_MAX_RANK, &n, v) != GS_OK)
			return L->st->code;
		for (int64_t k = 0; k < n; k++)
		{
			if (v[k] == 0 && !allowzero)
			{
				if ((size_t) k >= src->n_dims)
					return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
										 "%s copies a dimension its input does not have", L->label);
				v[k] = in[k];
			}
			if (v[k] == -1 && infer < 0)
				infer = (int) k;
			else if (v[k] < 0)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has an invalid shape", L->label);
			else if (v[k] == 0 || prod > count / v[k])
				prod = v[k] == 0 ? 0 : count + 1;	/* either way not count */
			else
				prod *= v[k];
			out[k] = v[k];
		}
		if (infer >= 0 && prod > 0 && count % prod == 0)
		{
			out[infer] = count / prod;
			prod = count;
		}
		if (prod != count)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s reshapes %lld values to a shape that does not hold them",
								 L->label, (long long) count);
		return fold_alias(L, node, src, out, (size_t) n);
	}

	/* Squeeze, Unsqueeze */
	if (fold_axes(L, node, v, &n) != GS_OK)
		return L->st->code;
	if (strcmp(op, "Squeeze") == 0)
	{
		bool		drop[FOLD_MAX_RANK] = {false};

		for (int64_t k = 0; k < n; k++)
		{
			int64_t		a = v[k] < 0 ? v[k] + (int64_t) src->n_dims : v[k];

			if (a < 0 || a >= (int64_t) src->n_dims || in[a] != 1)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
									 "%s squeezes an axis that is not of size 1", L->label);
			drop[a] = true;
		}
		for (size_t k = 0; k < src->n_dims; k++)
			if (!(n < 0 ? in[k] == 1 : drop[k]))
				out[rank++] = in[k];
		return fold_alias(L, node, src, out, rank);
	}
	else
	{
		bool		ins[FOLD_MAX_RANK] = {false};
		size_t		from = 0;

		if (n < 1 || (size_t) n + src->n_dims > FOLD_MAX_RANK)
			return shape_refused(L);
		rank = (size_t) n + src->n_dims;
		for (int64_t k = 0; k < n; k++)
		{
			int64_t		a = v[k] < 0 ? v[k] + (int64_t) rank : v[k];

			if (a < 0 || a >= (int64_t) rank || ins[a])
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has invalid axes", L->label);
			ins[a] = true;
		}
		for (size_t k = 0; k < rank; k++)
			out[k] = ins[k] ? 1 : in[from++];
		return fold_alias(L, node, src, out, rank);
	}
}

/*
 * Cast to float of a constant.  A float constant keeps its values (the
 * same tensor under a new name); an int32 or int64 scalar, [W] or [1, W]
 * (jax2onnx casts the int32 degrees of freedom of Keras' variance so) is
 * converted value by value, as onnxruntime's static_cast does.
 */
static GsCode
fold_cast(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"to", "saturate", NULL};
	const Onnx__TensorProto *src;
	struct FoldBlock *blk;
	int64_t		to,
				n;
	int32_t		type;
	size_t		width;

	if (node->n_input != 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu inputs", L->label, node->n_input);
	if (onnx_attrs_allowed(L, node, attrs) != GS_OK || onnx_attr_int(L, node, "to", -1, &to) != GS_OK ||
		onnx_want_const(L, node, 0, &src) != GS_OK)
		return L->st->code;
	if (to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s casts a constant to %s; only casts to float are folded", L->label,
							 onnx_elem_type_name(to >= 0 && to <= INT32_MAX ? (int32_t) to : -1));
	type = src->has_data_type ? src->data_type : 0;
	if (type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
	{
		if (onnx_tensor_check(L, src, type, (int64_t) GS_MLP_MAX_WIDTH * GS_MLP_MAX_WIDTH, &n) != GS_OK)
			return L->st->code;
		if (src->n_dims > FOLD_MAX_RANK)
			return shape_refused(L);
		return fold_alias(L, node, src, src->dims, src->n_dims);
	}
	if (type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 && type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s casts a constant of type %s; only float, int32 and int64 constants are folded",
							 L->label, onnx_elem_type_name(type));
	if (onnx_tensor_check(L, src, type, GS_MLP_MAX_WIDTH, &n) != GS_OK)
		return L->st->code;
	if (n < 1 || src->n_dims > 2 || (src->n_dims == 2 && src->dims[0] != 1))
		return shape_refused(L);
	width = type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4 : 8;
	if (src->has_raw_data ? src->raw_data.len != (size_t) n * width :
		(type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? src->n_int32_data : src->n_int64_data) != (size_t) n)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "the constant of %s holds the wrong amount of data", L->label);
	if ((blk = new_block(L, n)) == NULL)
		return L->st->code;
	for (int64_t k = 0; k < n; k++)
	{
		int64_t		v;

		if (src->has_raw_data)
		{
			uint64_t	u = 0;

			/* little-endian in the file; an int32 sign-extended */
			for (int b = (int) width - 1; b >= 0; b--)
				u = u << 8 | src->raw_data.data[(size_t) k * width + (size_t) b];
			v = width == 4 ? (int64_t) (int32_t) (uint32_t) u : (int64_t) u;
		}
		else
			v = width == 4 ? src->int32_data[k] : src->int64_data[k];
		blk->vals[k] = (float) v;
	}
	register_values(L, node, blk, n, src->n_dims);
	return GS_OK;
}

/*
 * Element-wise: the values of input k of node (a float scalar, [W] or
 * [1, W]) in *vals (caller frees), their count and rank.
 */
static GsCode
row_values(Loader *L, const Onnx__NodeProto *node, size_t k, float **vals, int64_t *n, size_t *rank)
{
	const Onnx__TensorProto *t;

	*vals = NULL;
	if (onnx_want_const(L, node, k, &t) != GS_OK ||
		onnx_tensor_floats(L, t, GS_MLP_MAX_WIDTH, n, vals) != GS_OK)
		return L->st->code;
	if (*n < 1 || t->n_dims > 2 || (t->n_dims == 2 && t->dims[0] != 1))
		return shape_refused(L);
	*rank = t->n_dims;
	return GS_OK;
}

/* The element-wise operations folded. */
typedef enum FoldOp
{
	FOLD_ADD, FOLD_SUB, FOLD_MUL, FOLD_DIV, FOLD_MAX, FOLD_MIN, FOLD_SQRT, FOLD_NEG, FOLD_RECIPROCAL
} FoldOp;

/* Names of FoldOp, in its order. */
static const char *const elementwise_ops[] = {
	"Add", "Sub", "Mul", "Div", "Max", "Min", "Sqrt", "Neg", "Reciprocal", NULL
};

/* One float32 operation on a and b (b unused by the unary ones). */
static float
fold_op(FoldOp op, float a, float b)
{
	switch (op)
	{
		case FOLD_ADD:
			return a + b;
		case FOLD_SUB:
			return a - b;
		case FOLD_MUL:
			return a * b;
		case FOLD_DIV:
			return a / b;
		case FOLD_MAX:			/* the values are finite: no NaN rule needed */
			return a >= b ? a : b;
		case FOLD_MIN:
			return a <= b ? a : b;
		case FOLD_SQRT:
			return sqrtf(a);
		case FOLD_NEG:
			return -a;
		case FOLD_RECIPROCAL:
			break;
	}
	return 1.0f / a;
}

/* Add / Sub / Mul / Div / Max / Min / Sqrt / Neg / Reciprocal of constants. */
static GsCode
fold_elementwise(Loader *L, const Onnx__NodeProto *node, FoldOp op)
{
	static const char *const no_attrs[] = {NULL};
	bool		unary = op >= FOLD_SQRT;
	float	   *a = NULL,
			   *b = NULL;
	int64_t		na,
				nb = 1,
				n;
	size_t		ra,
				rb = 0,
				rank;
	struct FoldBlock *blk;

	if (node->n_input != (unary ? 1u : 2u))
		return gs_status_set(L->st, unary ? GS_ERR_INVALID_MODEL : GS_ERR_UNSUPPORTED,
							 "%s has %zu inputs%s", L->label, node->n_input,
							 unary ? "" : "; constants are folded two at a time");
	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK ||
		row_values(L, node, 0, &a, &na, &ra) != GS_OK ||
		(!unary && row_values(L, node, 1, &b, &nb, &rb) != GS_OK))
		goto done;
	/* numpy broadcasting of a scalar, [W] and [1, W] */
	n = na > nb ? na : nb;
	rank = ra > rb ? ra : rb;
	if ((na != n && na != 1) || (nb != n && nb != 1))
	{
		shape_refused(L);
		goto done;
	}
	if ((blk = new_block(L, n)) == NULL)
		goto done;
	for (int64_t k = 0; k < n; k++)
	{
		blk->vals[k] = fold_op(op, a[na == 1 ? 0 : k], unary ? 0.0f : b[nb == 1 ? 0 : k]);
		if (!isfinite(blk->vals[k]))
		{
			gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						  "%s gives a value that is not finite from its constants", L->label);
			goto done;
		}
	}
	register_values(L, node, blk, n, rank);

done:
	if (a)
		L->alloc.free(L->alloc.ctx, a);
	if (b)
		L->alloc.free(L->alloc.ctx, b);
	return L->st->code;
}

/*
 * Concat of int64 vectors along axis 0 (a shape jax2onnx builds for a
 * broadcast): at most FOLD_MAX_RANK values.
 */
static GsCode
fold_concat(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"axis", NULL};
	struct FoldBlock *blk;
	int64_t		axis,
				n = 0;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK || onnx_attr_int(L, node, "axis", 0, &axis) != GS_OK)
		return L->st->code;
	if (axis != 0 && axis != -1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s concatenates vectors along axis %lld",
							 L->label, (long long) axis);
	if ((blk = new_block(L, 0)) == NULL)
		return L->st->code;
	for (size_t k = 0; k < node->n_input; k++)
	{
		const Onnx__TensorProto *t;
		int64_t		got;

		if (onnx_want_const(L, node, k, &t) != GS_OK)
			return L->st->code;
		if (onnx_tensor_int64s(L, t, FOLD_MAX_RANK - n, &got, blk->ints + n) != GS_OK)
		{
			if (L->st->code == GS_ERR_LIMIT)
				return shape_refused(L);
			return L->st->code;
		}
		n += got;
	}
	onnx__tensor_proto__init(&blk->t);
	blk->t.name = node->output[0];
	blk->t.has_data_type = true;
	blk->t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	blk->dims[0] = n;
	blk->t.dims = blk->dims;
	blk->t.n_dims = 1;
	blk->t.int64_data = blk->ints;
	blk->t.n_int64_data = (size_t) n;
	onnx_register_const(L, node->output[0], &blk->t);
	return GS_OK;
}

/*
 * Expand of a float constant to a constant shape, numpy's broadcast: the
 * same values under the broadcast dimensions when no value is repeated,
 * else a scalar repeated over [W] or [1, W].
 */
static GsCode
fold_expand(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const no_attrs[] = {NULL};
	const Onnx__TensorProto *src,
			   *shp;
	int64_t		v[FOLD_MAX_RANK],
				out[FOLD_MAX_RANK],
				n_v,
				count,
				total = 1;
	size_t		rank;

	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK || onnx_want_const(L, node, 0, &src) != GS_OK ||
		onnx_want_const(L, node, 1, &shp) != GS_OK ||
		onnx_tensor_check(L, src, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, GS_MLP_MAX_WIDTH, &count) != GS_OK)
		return L->st->code;
	if (onnx_tensor_int64s(L, shp, FOLD_MAX_RANK, &n_v, v) != GS_OK)
		return L->st->code == GS_ERR_LIMIT ? shape_refused(L) : L->st->code;
	if (src->n_dims > FOLD_MAX_RANK)
		return shape_refused(L);
	rank = src->n_dims > (size_t) n_v ? src->n_dims : (size_t) n_v;
	for (size_t k = 0; k < rank; k++)
	{
		/* right-aligned: dimension k of the result from the input's and the shape's */
		int64_t		a = k + src->n_dims >= rank ? src->dims[k + src->n_dims - rank] : 1,
					b = k + (size_t) n_v >= rank ? v[k + (size_t) n_v - rank] : 1;

		if (a != b && a != 1 && b != 1)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s expands a dimension of %lld to %lld", L->label, (long long) a, (long long) b);
		out[k] = a == 1 ? b : a;
		if (out[k] < 0 || (out[k] > 0 && total > GS_MLP_MAX_WIDTH / out[k]))
			return shape_refused(L);
		total *= out[k];
	}
	if (total == count)
		return fold_alias(L, node, src, out, rank);
	if (count == 1 && rank <= 2 && (rank < 2 || out[0] == 1))
	{
		struct FoldBlock *blk;
		float	   *one;
		int64_t		got;

		if (onnx_tensor_floats(L, src, 1, &got, &one) != GS_OK)
			return L->st->code;
		if ((blk = new_block(L, total)) == NULL)
		{
			L->alloc.free(L->alloc.ctx, one);
			return L->st->code;
		}
		for (int64_t k = 0; k < total; k++)
			blk->vals[k] = one[0];
		L->alloc.free(L->alloc.ctx, one);
		register_values(L, node, blk, total, rank);
		return GS_OK;
	}
	return shape_refused(L);
}

/*
 * Fold node (onnx_fold_applies is true): its output becomes a constant.
 * Errors name the node (L->label).
 */
GsCode
onnx_fold_node(Loader *L, const Onnx__NodeProto *node)
{
	const char *op = node->op_type;

	if (strcmp(op, "Cast") == 0)
		return fold_cast(L, node);
	if (strcmp(op, "Reshape") == 0 || strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0)
		return fold_shape(L, node, op);
	if (strcmp(op, "Concat") == 0)
		return fold_concat(L, node);
	if (strcmp(op, "Expand") == 0)
		return fold_expand(L, node);
	for (int k = 0; elementwise_ops[k]; k++)
		if (strcmp(op, elementwise_ops[k]) == 0)
			return fold_elementwise(L, node, (FoldOp) k);
	return gs_status_set(L->st, GS_ERR_INTERNAL, "%s is not an operator that is folded", L->label);
}

/* Free the folded values of a load (any number, also none). */
void
onnx_fold_free(Loader *L)
{
	while (L->folded)
	{
		struct FoldBlock *b = L->folded;

		L->folded = b->next;
		L->alloc.free(L->alloc.ctx, b);
	}
	L->folded_floats = 0;
}

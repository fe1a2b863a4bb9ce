/*
 * onnx_prep_cat.c
 *	  Categorical preprocessing in scikit-learn pipelines as skl2onnx writes
 *	  it, for the preprocessing reader (onnx_trees_prep.c): a
 *	  OneHotEncoder over columns holding category codes.
 *
 * skl2onnx writes, per encoded column: Gather (axis 1, one constant index)
 * of the column, Cast to int64, ai.onnx.ml OneHotEncoder (cats_int64s),
 * then for drop="first" / "if_binary" a Gather (axis -1) of the indicator
 * columns kept, then Concat and a Reshape to [-1, width].  Here:
 *	- Gather along the columns with constant indices picks columns, as an
 *	  ArrayFeatureExtractor does (for forests too);
 *	- Reshape to [-1, width] (or [0, width]) of a feature value is a no-op;
 *	- Cast to int64 marks the columns (TPrepCol.as_int): only a
 *	  OneHotEncoder may read them;
 *	- OneHotEncoder makes one column per category c, each the source
 *	  column's chain plus TPO_ONEHOT c: 1 when the value truncated to an
 *	  integer is c (onnxruntime's cast to int64 truncates), else 0.
 *	  Categories must be integers below 2^24 in magnitude, where a float
 *	  holds them exactly (then "(int64) x == c" and "truncf(x) == c" agree
 *	  for every float, NaN and infinities never matching).  zeros=0
 *	  (scikit-learn's default handle_unknown="error": onnxruntime fails the
 *	  whole batch on a category it never saw) is refused: no score would be
 *	  right for such a row.
 * Cast to int64 and OneHotEncoder are read for networks only (P->onehot):
 * a forest's splits on indicator columns would need equality splits of
 * their own, and are refused as before.
 */
#include <math.h>
#include <string.h>

#include "onnx_trees.h"

#define CAT_MAX		16777216.0	/* 2^24: categories a float holds exactly */

/* Gather along the columns (axis 1 or -1) with constant indices. */
static GsCode
cat_gather(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	static const char *const attrs[] = {"axis", NULL};
	const Onnx__TensorProto *t;
	TPrepVal   *v;
	int64_t		axis,
				n,
			   *idx;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK || onnx_attr_int(L, node, "axis", 0, &axis) != GS_OK)
		return L->st->code;
	if (axis != 1 && axis != -1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s gathers along axis %lld, not the columns",
							 L->label, (long long) axis);
	if (node->n_input != 2 || (t = onnx_find_const_anywhere(L, node->input[1])) == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s picks columns that are not a constant list",
							 L->label);
	if (onnx_tensor_check(L, t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, TPREP_MAX_COLUMNS, &n) != GS_OK)
		return L->st->code;
	if (t->n_dims > 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s picks columns with a matrix of indices",
							 L->label);
	if (n == 0 && t->n_dims == 0)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no index", L->label);
	/* n == 0: no column (drop="first" of an encoder that saw one category) */
	if ((idx = onnx_alloc(L, sizeof(int64_t) * (size_t) (n ? n : 1))) == NULL)
		return onnx_nomem(L);
	if (onnx_tensor_int64s(L, t, TPREP_MAX_COLUMNS, &n, idx) == GS_OK &&
		(v = onnx_trees_prep_new(L, P, node->output[0], n)) != NULL)
	{
		for (int64_t k = 0; k < n; k++)
		{
			int64_t		c = idx[k] < 0 ? idx[k] + in->width : idx[k];

			if (c < 0 || c >= in->width)
			{
				gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s picks column %lld of %d",
							  L->label, (long long) idx[k], in->width);
				break;
			}
			v->cols[k] = in->cols[c];
		}
	}
	L->alloc.free(L->alloc.ctx, idx);
	return L->st->code;
}

/* Reshape to [-1, width] or [0, width]: the value as it is. */
static GsCode
cat_reshape(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	static const char *const attrs[] = {"allowzero", NULL};
	const Onnx__TensorProto *t;
	int64_t		n,
				shape[2];

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK)
		return L->st->code;
	if (node->n_input != 2 || (t = onnx_find_const_anywhere(L, node->input[1])) == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s reshapes the features to a shape that is not a constant",
							 L->label);
	if (onnx_tensor_check(L, t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 8, &n) != GS_OK)
		return L->st->code;
	if (n != 2 || onnx_tensor_int64s(L, t, 2, &n, shape) != GS_OK ||
		(shape[0] != -1 && shape[0] != 0) || shape[1] != in->width)
		return L->st->code != GS_OK ? L->st->code :
			gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s changes the shape of %d feature columns",
						  L->label, in->width);
	return onnx_trees_prep_copy(L, P, node, in) ? GS_OK : L->st->code;
}

/* Cast to int64: the columns await a OneHotEncoder. */
static GsCode
cat_cast(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	TPrepVal   *v = onnx_trees_prep_copy(L, P, node, in);

	if (v == NULL)
		return L->st->code;
	for (int32_t c = 0; c < v->width; c++)
		v->cols[c].as_int = true;
	return GS_OK;
}

/* ai.onnx.ml OneHotEncoder of one column cast to int64. */
static GsCode
cat_onehot(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	static const char *const attrs[] = {"cats_int64s", "cats_strings", "zeros", NULL};
	const Onnx__AttributeProto *cats = onnx_attr_find(node, "cats_int64s");
	TPrepVal   *v;
	int64_t		zeros;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK || onnx_attr_int(L, node, "zeros", 1, &zeros) != GS_OK)
		return L->st->code;
	if (node->n_input != 1 || in->width != 1 || !in->cols[0].as_int)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s encodes %s", L->label,
							 in->width != 1 ? "several columns at once" : "features not cast to int64");
	if (cats == NULL || cats->n_ints == 0)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has no integer categories (\"cats_int64s\")",
							 L->label);
	if (zeros == 0)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "%s stops at a category it never saw (zeros=0, handle_unknown=\"error\")", L->label);
		gs_status_detail(L->st, "onnxruntime fails the whole batch on such a value; no score would be right "
						 "for it. Fit the encoder with OneHotEncoder(handle_unknown=\"ignore\"): an unknown "
						 "category then sets none of its columns.");
		return L->st->code;
	}
	if (cats->n_ints > TPREP_MAX_COLUMNS)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has more than %d categories", L->label,
							 TPREP_MAX_COLUMNS);
	for (size_t k = 0; k < cats->n_ints; k++)
		if (cats->ints[k] <= -CAT_MAX || cats->ints[k] >= CAT_MAX)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s has category %lld, beyond the 2^24 a float holds exactly",
								 L->label, (long long) cats->ints[k]);
	if (in->cols[0].n >= TPREP_MAX_STEPS)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s: the column goes through more than %d preprocessing steps",
							 L->label, TPREP_MAX_STEPS);
	if ((v = onnx_trees_prep_new(L, P, node->output[0], (int64_t) cats->n_ints)) == NULL)
		return L->st->code;
	for (size_t k = 0; k < cats->n_ints; k++)
	{
		TPrepCol   *col = &v->cols[k];

		*col = in->cols[0];
		col->op[col->n] = (uint8_t) TPO_ONEHOT;
		col->c[col->n] = (float) cats->ints[k];
		col->n++;
		col->arith = true;
		col->as_int = false;
	}
	return GS_OK;
}

/* Translate a categorical node; see onnx_trees.h. */
GsCode
onnx_prep_cat_node(Loader *L, TPrep *P, const Onnx__NodeProto *node, TPrepVal *in, bool *handled)
{
	int64_t		to = 0;

	*handled = true;
	if (onnx_node_is(node, "Gather", false))
		return cat_gather(L, P, node, in);
	if (onnx_node_is(node, "Reshape", false))
		return cat_reshape(L, P, node, in);
	if (P->onehot && onnx_node_is(node, "OneHotEncoder", true))
		return cat_onehot(L, P, node, in);
	if (P->onehot && onnx_node_is(node, "Cast", false))
	{
		if (onnx_attr_int(L, node, "to", 0, &to) != GS_OK)
			return L->st->code;
		if (to == ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
			return cat_cast(L, P, node, in);
	}
	*handled = false;
	return GS_OK;
}

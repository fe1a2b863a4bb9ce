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
 * A string column of a DataFrame (a graph input [N, 1] of strings) goes
 * straight into an OneHotEncoder with cats_strings: the column becomes a
 * feature holding a category code, code c for the encoder's c-th category,
 * and the categories become the feature's names (cat_names.h), so SQL text
 * is looked up by name; an unknown name, or none, sets no indicator, as an
 * unknown string does in onnxruntime.  An OrdinalEncoder of a string column
 * is an ai.onnx.ml LabelEncoder (keys_strings to values_int64s, a
 * permutation of 0..n-1, default_int64 for the rest), then a Cast to float:
 * the feature holds the code, the keys in code order are its names, and an
 * unknown name is the default (a NULL stays missing).
 */
#include <math.h>
#include <string.h>

#include "cat_names.h"
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
	TPrepVal   *v;

	for (int32_t c = 0; c < in->width; c++)
		if (in->cols[c].text)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s casts a string input to int64", L->label);
	if ((v = onnx_trees_prep_copy(L, P, node, in)) == NULL)
		return L->st->code;
	for (int32_t c = 0; c < v->width; c++)
		v->cols[c].as_int = true;
	return GS_OK;
}

/* Do two string encoders list the same categories in the same order? */
static bool
same_strings(const Onnx__AttributeProto *a, const Onnx__AttributeProto *b)
{
	if (a->n_strings != b->n_strings)
		return false;
	for (size_t k = 0; k < a->n_strings; k++)
		if (a->strings[k].len != b->strings[k].len ||
			memcmp(a->strings[k].data, b->strings[k].data, a->strings[k].len) != 0)
			return false;
	return true;
}

/*
 * Is node, reading string column src, the encoder P already knows for it
 * (or the first)?  Two encoders of one column must agree on its names.
 */
static bool
same_encoder(const TPrep *P, int32_t src, const Onnx__NodeProto *node)
{
	const Onnx__NodeProto *was = P->text_enc ? P->text_enc[src] : NULL;
	static const char *const lists[] = {"cats_strings", "keys_strings", NULL};

	if (was == NULL)
		return true;
	if (strcmp(was->op_type, node->op_type) != 0)
		return false;
	for (int k = 0; lists[k]; k++)
	{
		const Onnx__AttributeProto *a = onnx_attr_find(was, lists[k]),
				   *b = onnx_attr_find(node, lists[k]);

		if ((a == NULL) != (b == NULL) || (a && !same_strings(a, b)))
			return false;
	}
	if (onnx_attr_find(node, "values_int64s"))
	{
		const Onnx__AttributeProto *a = onnx_attr_find(was, "values_int64s"),
				   *b = onnx_attr_find(node, "values_int64s");

		return a && a->n_ints == b->n_ints && memcmp(a->ints, b->ints, sizeof(int64_t) * a->n_ints) == 0;
	}
	return true;
}

/* Remember node as the encoder of string column src. */
static GsCode
note_encoder(Loader *L, TPrep *P, int32_t src, const Onnx__NodeProto *node)
{
	if (P->text_enc == NULL)
	{
		P->text_enc = onnx_alloc(L, sizeof(*P->text_enc) * (size_t) P->in_width);
		if (P->text_enc == NULL)
			return onnx_nomem(L);
		memset((void *) P->text_enc, 0, sizeof(*P->text_enc) * (size_t) P->in_width);
	}
	if (!same_encoder(P, src, node))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s encodes a string input that another encoder reads with other categories",
							 L->label);
	P->text_enc[src] = node;
	return GS_OK;
}

/*
 * OneHotEncoder of a string input: code c for category c, remembered as the
 * feature's names.
 */
static GsCode
cat_onehot_text(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	const Onnx__AttributeProto *cats = onnx_attr_find(node, "cats_strings");
	int32_t		src = in->cols[0].src;
	TPrepVal   *v;

	if (cats == NULL || cats->n_strings == 0 || onnx_attr_find(node, "cats_int64s") != NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s encodes a string input without string categories (\"cats_strings\")",
							 L->label);
	if (cats->n_strings > TPREP_MAX_COLUMNS)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has more than %d categories", L->label,
							 TPREP_MAX_COLUMNS);
	if (in->cols[0].n != 0 || src < 0 || src >= P->in_width)
		return gs_status_set(L->st, GS_ERR_INTERNAL, "%s: a string column with steps", L->label);
	if (note_encoder(L, P, src, node) != GS_OK)
		return L->st->code;
	if ((v = onnx_trees_prep_new(L, P, node->output[0], (int64_t) cats->n_strings)) == NULL)
		return L->st->code;
	for (size_t k = 0; k < cats->n_strings; k++)
	{
		TPrepCol   *col = &v->cols[k];

		memset(col, 0, sizeof(*col));
		col->src = src;
		col->op[0] = (uint8_t) TPO_ONEHOT;
		col->c[0] = (float) k;
		col->n = 1;
		col->arith = true;
	}
	return GS_OK;
}

/*
 * ai.onnx.ml LabelEncoder of a string input (an OrdinalEncoder): the int64
 * code of each category, the default for the rest.
 */
static GsCode
cat_label(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	static const char *const attrs[] = {"keys_strings", "values_int64s", "default_int64", NULL};
	const Onnx__AttributeProto *keys = onnx_attr_find(node, "keys_strings"),
			   *vals = onnx_attr_find(node, "values_int64s");
	int32_t		src = in->cols[0].src;
	int64_t		dflt;
	bool	   *seen;
	TPrepVal   *v;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "default_int64", -1, &dflt) != GS_OK)
		return L->st->code;
	if (node->n_input != 1 || keys == NULL || vals == NULL || keys->n_strings == 0 ||
		vals->n_ints != keys->n_strings)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s does not map string categories to as many int64 codes", L->label);
	if (keys->n_strings > TPREP_MAX_COLUMNS)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has more than %d categories", L->label,
							 TPREP_MAX_COLUMNS);
	if (dflt <= -CAT_MAX || dflt >= CAT_MAX)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s has default %lld, beyond the 2^24 a float holds exactly",
							 L->label, (long long) dflt);
	if (in->cols[0].n != 0 || src < 0 || src >= P->in_width)
		return gs_status_set(L->st, GS_ERR_INTERNAL, "%s: a string column with steps", L->label);
	/* codes 0..n-1, each once: code c is then a name */
	if ((seen = onnx_alloc(L, keys->n_strings)) == NULL)
		return onnx_nomem(L);
	memset(seen, 0, keys->n_strings);
	for (size_t k = 0; k < vals->n_ints; k++)
	{
		if (vals->ints[k] < 0 || (uint64_t) vals->ints[k] >= keys->n_strings || seen[vals->ints[k]])
		{
			L->alloc.free(L->alloc.ctx, seen);
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s maps its categories to codes other than 0 to %zu, each once",
								 L->label, keys->n_strings - 1);
		}
		seen[vals->ints[k]] = true;
	}
	L->alloc.free(L->alloc.ctx, seen);
	if (note_encoder(L, P, src, node) != GS_OK)
		return L->st->code;
	if ((v = onnx_trees_prep_new(L, P, node->output[0], 1)) == NULL)
		return L->st->code;
	memset(&v->cols[0], 0, sizeof(TPrepCol));
	v->cols[0].src = src;
	v->cols[0].as_int = v->cols[0].ordinal = true;
	return GS_OK;
}

/* ai.onnx.ml OneHotEncoder of one column cast to int64 (or of strings). */
static GsCode
cat_onehot(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	static const char *const attrs[] = {"cats_int64s", "cats_strings", "zeros", NULL};
	const Onnx__AttributeProto *cats = onnx_attr_find(node, "cats_int64s");
	TPrepVal   *v;
	int64_t		zeros;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK || onnx_attr_int(L, node, "zeros", 1, &zeros) != GS_OK)
		return L->st->code;
	if (zeros == 0)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "%s stops at a category it never saw (zeros=0, handle_unknown=\"error\")", L->label);
		gs_status_detail(L->st, "onnxruntime fails the whole batch on such a value; no score would be right "
						 "for it. Fit the encoder with OneHotEncoder(handle_unknown=\"ignore\"): an unknown "
						 "category then sets none of its columns.");
		return L->st->code;
	}
	if (node->n_input == 1 && in->width == 1 && in->cols[0].text)
		return cat_onehot_text(L, P, node, in);
	if (node->n_input != 1 || in->width != 1 || !in->cols[0].as_int)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s encodes %s", L->label,
							 in->width != 1 ? "several columns at once" : "features not cast to int64");
	if (cats == NULL || cats->n_ints == 0)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has no integer categories (\"cats_int64s\")",
							 L->label);
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
	if (P->onehot && onnx_node_is(node, "LabelEncoder", true) && in->width == 1 && in->cols[0].text)
		return cat_label(L, P, node, in);
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

/*
 * The category names of string column j as its encoder lists them, in code
 * order: the OneHotEncoder's categories, or the LabelEncoder's keys sorted
 * by their codes (a permutation, checked by cat_label); NULL when none.
 * *n is their number.
 */
static const Onnx__AttributeProto *
enc_names(const TPrep *P, int32_t j, size_t *n)
{
	const Onnx__NodeProto *e = P->text_enc[j];
	const Onnx__AttributeProto *a;

	*n = 0;
	if (e == NULL)
		return NULL;
	a = onnx_attr_find(e, strcmp(e->op_type, "LabelEncoder") == 0 ? "keys_strings" : "cats_strings");
	if (a)
		*n = a->n_strings;
	return a;
}

/* Name of code c of string column j (enc_names gave names). */
static const ProtobufCBinaryData *
enc_name(const TPrep *P, int32_t j, const Onnx__AttributeProto *names, size_t c)
{
	const Onnx__AttributeProto *vals = onnx_attr_find(P->text_enc[j], "values_int64s");

	if (strcmp(P->text_enc[j]->op_type, "LabelEncoder") != 0 || vals == NULL)
		return &names->strings[c];
	for (size_t k = 0; k < vals->n_ints; k++)
		if ((uint64_t) vals->ints[k] == c)
			return &names->strings[k];
	return &names->strings[c];	/* not reached: a permutation */
}

/* The names of the string inputs; see onnx_trees.h. */
GsCode
onnx_prep_cat_names(Loader *L, const TPrep *P, GsCatNames **out)
{
	uint8_t    *kind;
	int64_t    *count;
	size_t		bytes = 0;
	GsCode		rc;

	*out = NULL;
	if (P->text_enc == NULL)
		return GS_OK;
	kind = onnx_alloc(L, (size_t) P->in_width);
	count = onnx_alloc(L, sizeof(int64_t) * (size_t) P->in_width);
	if (kind == NULL || count == NULL)
	{
		if (kind)
			L->alloc.free(L->alloc.ctx, kind);
		return onnx_nomem(L);
	}
	for (int32_t j = 0; j < P->in_width; j++)
	{
		size_t		n;
		const Onnx__AttributeProto *names = enc_names(P, j, &n);

		kind[j] = names ? GS_CATNAMES_TEXT : GS_CATNAMES_NONE;
		count[j] = (int64_t) n;
		for (size_t k = 0; k < n; k++)
			bytes += names->strings[k].len;
	}
	rc = gs_catnames_new(out, &L->alloc, P->in_width, kind, count, bytes, L->st);
	for (int32_t j = 0; j < P->in_width && rc == GS_OK; j++)
	{
		size_t		n;
		const Onnx__AttributeProto *names = enc_names(P, j, &n);
		int64_t		dflt;

		for (size_t c = 0; c < n && rc == GS_OK; c++)
		{
			const ProtobufCBinaryData *b = enc_name(P, j, names, c);

			rc = gs_catnames_add(*out, (const char *) b->data, b->len, L->st);
		}
		/* a LabelEncoder gives an unknown category its default */
		if (rc == GS_OK && names && strcmp(P->text_enc[j]->op_type, "LabelEncoder") == 0 &&
			(rc = onnx_attr_int(L, P->text_enc[j], "default_int64", -1, &dflt)) == GS_OK)
			gs_catnames_set_unknown(*out, j, (float) dflt);
	}
	if (rc == GS_OK)
		rc = gs_catnames_finish(*out, L->st);
	L->alloc.free(L->alloc.ctx, kind);
	L->alloc.free(L->alloc.ctx, count);
	if (rc != GS_OK)
	{
		gs_catnames_free(*out);
		*out = NULL;
	}
	return rc;
}

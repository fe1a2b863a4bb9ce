/*
 * onnx_trees_prep.c
 *	  Preprocessing between an ONNX graph's input and its tree node (or
 *	  first network layer), as scikit-learn pipelines exported by skl2onnx
 *	  write it, read into per-column chains of float steps.
 *
 * What is read (each column of the tree node's input becomes a column of
 * the graph's input plus a chain of per-column float steps):
 *	- ai.onnx.ml Imputer replacing NaN (SimpleImputer), ai.onnx.ml Scaler
 *	  (StandardScaler, RobustScaler, MaxAbsScaler: (x - offset) * scale),
 *	  Add / Sub / Mul / Div by a per-column or scalar constant
 *	  (MinMaxScaler: Mul then Add), Cast to float, Identity;
 *	- ai.onnx.ml ArrayFeatureExtractor with constant indices and Concat
 *	  over the columns (ColumnTransformer: columns picked, preprocessed per
 *	  group, concatenated; remainder "passthrough" or "drop"), and
 *	  ai.onnx.ml FeatureVectorizer (a DataFrame's columns side by side).
 *
 * The chains are folded into the splits by onnx_trees_fold.c; networks
 * turn them into steps (onnx_mlp_prep.c).
 *
 * Memory: column arrays come from the Loader's allocator; TPrep owns them
 * until onnx_trees_prep_free.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_trees.h"
#include "util/utf8_valid.h"

/* ---- the columns ---- */

/*
 * Is in a string column [N, 1]?  skl2onnx makes one of each string column of
 * a DataFrame; only a OneHotEncoder of strings may read it.
 */
static bool
input_is_text(const Onnx__ValueInfoProto *in)
{
	const Onnx__TypeProto__Tensor *tt;

	return in->name != NULL && in->name[0] != '\0' && in->type != NULL &&
		in->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
		(tt = in->type->tensor_type) != NULL && tt->has_elem_type &&
		tt->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING && tt->shape != NULL &&
		tt->shape->n_dim == 2 &&
		tt->shape->dim[1]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		tt->shape->dim[1]->dim_value == 1;
}

/* The value called name (the graph's input included), or NULL. */
static TPrepVal *
prep_find(TPrep *P, const char *name)
{
	for (int32_t i = 0; i < P->n_vals; i++)
		if (strcmp(P->vals[i].name, name) == 0)
			return &P->vals[i];
	return NULL;
}

/* A new value of width columns (uninitialized) named name; NULL: status set. */
static TPrepVal *
prep_new(Loader *L, TPrep *P, const char *name, int64_t width)
{
	TPrepVal   *v;

	if (P->n_vals >= P->cap_vals)
	{
		/* cap_vals counts every input and node: a value too many is a bug */
		gs_status_set(L->st, GS_ERR_INTERNAL, "%s: more feature values than the graph has nodes", L->label);
		return NULL;
	}
	/* width 0: a Gather keeping no column (drop="first" of a one-category encoder) */
	if (width < 0 || width > TPREP_MAX_COLUMNS - P->n_cols)
	{
		gs_status_set(L->st, GS_ERR_LIMIT, "%s: the preprocessing before the trees has more than %d columns in all",
					  L->label, TPREP_MAX_COLUMNS);
		return NULL;
	}
	v = &P->vals[P->n_vals];
	v->cols = onnx_alloc(L, sizeof(TPrepCol) * (size_t) (width ? width : 1));
	if (v->cols == NULL)
	{
		onnx_nomem(L);
		return NULL;
	}
	v->name = name;
	v->width = (int32_t) width;
	P->n_cols += width;
	P->n_vals++;
	return v;
}

/*
 * The value a node reads as name: the graph's input (its identity columns
 * made on first use) or an earlier preprocessing output.  NULL: not one.
 */
static TPrepVal *
prep_input(Loader *L, TPrep *P, const char *name)
{
	TPrepVal   *v = prep_find(P, name);

	if (v || name == NULL || P->in_name == NULL || strcmp(name, P->in_name) != 0)
		return v;
	v = prep_new(L, P, P->in_name, P->in_width);
	if (v)
		for (int32_t c = 0; c < v->width; c++)
		{
			memset(&v->cols[c], 0, sizeof(TPrepCol));
			v->cols[c].src = c;
		}
	return v;
}

static TPrepVal *prep_copy(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in);

/* Append step (op, c) to every column of v; refused past TPREP_MAX_STEPS. */
static GsCode
prep_append(Loader *L, TPrepVal *v, TPrepOp op, const float *c, bool per_column)
{
	for (int32_t k = 0; k < v->width; k++)
	{
		TPrepCol   *col = &v->cols[k];

		if (col->as_int && op != TPO_ONEHOT)
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "%s reads features cast to int64; only a OneHotEncoder may", L->label);
			return L->st->code;
		}
		if (col->n >= TPREP_MAX_STEPS)
		{
			gs_status_set(L->st, GS_ERR_UNSUPPORTED,
						  "%s: column %d goes through more than %d preprocessing steps",
						  L->label, k, TPREP_MAX_STEPS);
			return L->st->code;
		}
		col->op[col->n] = (uint8_t) op;
		col->c[col->n] = c[per_column ? k : 0];
		col->arith |= op != TPO_IMPUTE;
		col->as_int = false;
		col->n++;
	}
	return GS_OK;
}

/* A feature value by name; see onnx_trees.h. */
TPrepVal *
onnx_trees_prep_value(Loader *L, TPrep *P, const char *name)
{
	return prep_input(L, P, name);
}

/* The inputs' names as feature names; see onnx_trees.h. */
GsCode
onnx_trees_prep_names(Loader *L, const TPrep *P, char ***names)
{
	*names = onnx_alloc(L, sizeof(char *) * (size_t) P->n_inputs);
	if (*names == NULL)
		return onnx_nomem(L);
	memset(*names, 0, sizeof(char *) * (size_t) P->n_inputs);
	for (int32_t i = 0; i < P->n_inputs; i++)
	{
		size_t		len = strlen(P->inputs[i]->name);

		if (((*names)[i] = onnx_alloc(L, len + 1)) == NULL)
			return onnx_nomem(L);
		memcpy((*names)[i], P->inputs[i]->name, len + 1);
	}
	return GS_OK;
}

/* A new value; see onnx_trees.h. */
TPrepVal *
onnx_trees_prep_new(Loader *L, TPrep *P, const char *name, int64_t width)
{
	return prep_new(L, P, name, width);
}

/* A copy of a value; see onnx_trees.h. */
TPrepVal *
onnx_trees_prep_copy(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	return prep_copy(L, P, node, in);
}

/* Read the graph's inputs; see onnx_trees.h. */
GsCode
onnx_trees_prep_inputs(Loader *L, TPrep *P, int32_t width_cap, int32_t *n_features)
{
	int32_t		cap = L->lim->max_features > 0 && L->lim->max_features < width_cap ?
		L->lim->max_features : width_cap;
	int			n;

	memset(P, 0, sizeof(*P));
	onnx_graph_inputs(L, NULL, 0, &n);
	if (n < 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the graph has no input");
	if ((int64_t) n + (int64_t) L->g->n_node > TPREP_MAX_VALUES)
		return gs_status_set(L->st, GS_ERR_LIMIT, "the graph has %d inputs and %zu nodes, more than %d in all",
							 n, L->g->n_node, TPREP_MAX_VALUES);
	P->cap_vals = n + (int32_t) L->g->n_node;
	P->inputs = onnx_alloc(L, sizeof(*P->inputs) * (size_t) n);
	P->vals = onnx_alloc(L, sizeof(TPrepVal) * (size_t) P->cap_vals);
	if (P->inputs == NULL || P->vals == NULL)
		return onnx_nomem(L);
	onnx_graph_inputs(L, P->inputs, n, &n);
	P->n_inputs = n;
	if (n == 1)
	{
		/* one [N, F] input; its columns are made if preprocessing reads it */
		if (onnx_input_width(L, P->inputs[0], "the graph's input", cap, &P->in_width) != GS_OK)
			return L->st->code;
		P->in_name = P->inputs[0]->name;
		*n_features = P->tree_width = P->in_width;
		return GS_OK;
	}

	/* several inputs (a DataFrame's columns): side by side, in their order */
	P->names = true;
	for (int i = 0; i < n; i++)
	{
		const Onnx__ValueInfoProto *in = P->inputs[i];
		char		what[128],
					iname[80];
		int32_t		w;
		TPrepVal   *v;

		onnx_safe_name(iname, sizeof(iname), in->name);
		snprintf(what, sizeof(what), "input \"%s\" of the graph", iname);
		if (input_is_text(in) && P->in_width < cap)
			w = 1;
		else if (onnx_input_width(L, in, what, cap - P->in_width, &w) != GS_OK)
		{
			if (L->st->code == GS_ERR_LIMIT)
				gs_status_set(L->st, GS_ERR_LIMIT, "the model's %d inputs have more than %d features",
							  n, cap);
			return L->st->code;
		}
		for (int k = 0; k < i; k++)
			if (strcmp(P->inputs[k]->name, in->name) == 0)
				return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the graph has two inputs \"%s\"", iname);
		if ((v = prep_new(L, P, in->name, w)) == NULL)
			return L->st->code;
		for (int32_t c = 0; c < w; c++)
		{
			memset(&v->cols[c], 0, sizeof(TPrepCol));
			v->cols[c].src = P->in_width + c;
			v->cols[c].text = v->cols[c].as_int = input_is_text(in);
		}
		P->in_width += w;
		P->names &= w == 1 && gs_utf8_valid((const unsigned char *) in->name, strlen(in->name));
	}
	*n_features = P->tree_width = P->in_width;
	return GS_OK;
}

/*
 * The new value of a node whose one feature input is in: a copy of in's
 * columns, named after the node's output.  NULL: status set.
 */
static TPrepVal *
prep_copy(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in)
{
	TPrepVal   *v = prep_new(L, P, node->output[0], in->width);

	if (v)
		memcpy(v->cols, in->cols, sizeof(TPrepCol) * (size_t) in->width);
	return v;
}

/*
 * The constant operand of an element-wise step over width columns: one
 * value, or one per column ([W] or [1, W]), all finite.  On success *vals
 * is the caller's (L->alloc) and *per_column says which.
 */
static GsCode
prep_operand(Loader *L, const Onnx__TensorProto *t, int32_t width, float **vals, bool *per_column)
{
	int64_t		n;

	if (onnx_tensor_floats(L, t, TPREP_MAX_COLUMNS, &n, vals) != GS_OK)
		return L->st->code;
	if (!(n == 1 || (n == width && (t->n_dims == 1 || (t->n_dims == 2 && t->dims[0] == 1)))))
	{
		L->alloc.free(L->alloc.ctx, *vals);
		*vals = NULL;
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "the constant of %s does not broadcast over the %d columns it preprocesses",
							 L->label, width);
	}
	*per_column = n != 1;
	return GS_OK;
}

/*
 * Add, Sub, Mul or Div of the features by a constant (either operand of
 * Add, Mul and Sub; the divisor of Div, never 0).
 */
static GsCode
prep_arith(Loader *L, TPrep *P, const Onnx__NodeProto *node, const char *op)
{
	const Onnx__TensorProto *t = NULL;
	TPrepVal   *in = NULL,
			   *v;
	float	   *c = NULL;
	bool		per_column = false;
	int			fi = -1;
	TPrepOp		pop;
	GsCode		rc = GS_OK;

	for (int k = 0; k < 2 && node->n_input == 2; k++)
	{
		TPrepVal   *x = prep_input(L, P, node->input[k]);

		if (L->st->code != GS_OK)
			return L->st->code;
		if (x && in)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "%s combines two feature columns; only a constant may be added, "
								 "subtracted, multiplied or divided", L->label);
		if (x)
		{
			in = x;
			fi = k;
		}
	}
	if (in == NULL || (t = onnx_find_const_anywhere(L, node->input[1 - fi])) == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s preprocesses the features with something other than a constant", L->label);
	if (prep_operand(L, t, in->width, &c, &per_column) != GS_OK)
		return L->st->code;
	if (strcmp(op, "Add") == 0)
		pop = TPO_ADD;
	else if (strcmp(op, "Mul") == 0)
		pop = TPO_MUL;
	else if (strcmp(op, "Sub") == 0)
		pop = fi == 0 ? TPO_SUB : TPO_RSUB;
	else
	{
		pop = TPO_DIV;
		if (fi != 0)
			rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s divides a constant by the features", L->label);
		for (int32_t k = 0; rc == GS_OK && k < (per_column ? in->width : 1); k++)
			if (c[k] == 0.0f)
				rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s divides the features by 0", L->label);
	}
	if (rc == GS_OK)
		rc = (v = prep_copy(L, P, node, in)) == NULL ? L->st->code : prep_append(L, v, pop, c, per_column);
	L->alloc.free(L->alloc.ctx, c);
	return rc;
}

/*
 * A float-list attribute of 1 or width values, all finite (into *vals, the
 * caller's); *per_column says which.
 */
static GsCode
prep_floats_attr(Loader *L, const Onnx__NodeProto *node, const char *name, int32_t width,
				 float **vals, bool *per_column)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);

	*vals = NULL;
	if (a == NULL || a->n_floats == 0 ||
		(a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no list of floats \"%s\"", L->label, name);
	if (a->n_floats != 1 && a->n_floats != (size_t) width)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu values \"%s\" for %d columns",
							 L->label, a->n_floats, name, width);
	for (size_t k = 0; k < a->n_floats; k++)
		if (!isfinite(a->floats[k]))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "attribute \"%s\" of %s holds a non-finite value", name, L->label);
	*vals = onnx_alloc(L, sizeof(float) * a->n_floats);
	if (*vals == NULL)
		return onnx_nomem(L);
	memcpy(*vals, a->floats, sizeof(float) * a->n_floats);
	*per_column = a->n_floats != 1;
	return GS_OK;
}

/*
 * ai.onnx.ml Imputer replacing NaN (scikit-learn's SimpleImputer): a NaN
 * becomes imputed_value_floats[c].  onnxruntime requires
 * replaced_value_float; a number there (replacing, say, every 0 or a -1
 * sentinel) is read for a network (TPO_REPLACED, then TPO_IMPUTE) and
 * refused for a forest: a split could not follow it.
 */
static GsCode
prep_imputer(Loader *L, TPrep *P, const Onnx__NodeProto *node, TPrepVal *in)
{
	static const char *const attrs[] = {"imputed_value_floats", "replaced_value_float", NULL};
	const Onnx__AttributeProto *r = onnx_attr_find(node, "replaced_value_float");
	TPrepVal   *v;
	float	   *c;
	bool		per_column;
	GsCode		rc;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		prep_floats_attr(L, node, "imputed_value_floats", in->width, &c, &per_column) != GS_OK)
		return L->st->code;
	if (r != NULL && r->has_f && isinf(r->f))
		rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s replaces an infinity", L->label);
	else if (r == NULL || !r->has_f || (!isnan(r->f) && !P->network))
		rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s replaces %s, not NaN", L->label,
						   r == NULL || !r->has_f ? "no value" : "a number");
	else if ((v = prep_copy(L, P, node, in)) == NULL)
		rc = L->st->code;
	else
		rc = (!isnan(r->f) && prep_append(L, v, TPO_REPLACED, &r->f, false) != GS_OK) ? L->st->code :
			prep_append(L, v, TPO_IMPUTE, c, per_column);
	L->alloc.free(L->alloc.ctx, c);
	return rc;
}

/*
 * ai.onnx.ml Scaler: (x - offset) * scale, in float, in that order (as
 * onnxruntime computes it); offset and scale both of 1 or width values.
 */
static GsCode
prep_scaler(Loader *L, TPrep *P, const Onnx__NodeProto *node, TPrepVal *in)
{
	static const char *const attrs[] = {"offset", "scale", NULL};
	TPrepVal   *v;
	float	   *o = NULL,
			   *s = NULL;
	bool		o_cols,
				s_cols;
	GsCode		rc;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK)
		return L->st->code;
	rc = prep_floats_attr(L, node, "offset", in->width, &o, &o_cols);
	if (rc == GS_OK)
		rc = prep_floats_attr(L, node, "scale", in->width, &s, &s_cols);
	if (rc == GS_OK && o_cols != s_cols)
		rc = gs_status_set(L->st, GS_ERR_INVALID_MODEL,
						   "%s has a different number of offsets and scales", L->label);
	if (rc == GS_OK)
		rc = (v = prep_copy(L, P, node, in)) == NULL ? L->st->code :
			prep_append(L, v, TPO_SUB, o, o_cols) != GS_OK ? L->st->code :
			prep_append(L, v, TPO_MUL, s, s_cols);
	if (o)
		L->alloc.free(L->alloc.ctx, o);
	if (s)
		L->alloc.free(L->alloc.ctx, s);
	return rc;
}

/* ai.onnx.ml ArrayFeatureExtractor: the columns of a constant index list. */
static GsCode
prep_extract(Loader *L, TPrep *P, const Onnx__NodeProto *node, TPrepVal *in)
{
	const Onnx__TensorProto *t = node->n_input == 2 ? onnx_find_const_anywhere(L, node->input[1]) : NULL;
	TPrepVal   *v;
	int64_t		n,
			   *idx;

	if (t == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s picks columns that are not a constant list",
							 L->label);
	if (onnx_tensor_check(L, t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, TPREP_MAX_COLUMNS, &n) != GS_OK)
		return L->st->code;
	if (n < 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s picks no column", L->label);
	idx = onnx_alloc(L, sizeof(int64_t) * (size_t) n);
	if (idx == NULL)
		return onnx_nomem(L);
	if (onnx_tensor_int64s(L, t, TPREP_MAX_COLUMNS, &n, idx) == GS_OK &&
		(v = prep_new(L, P, node->output[0], n)) != NULL)
	{
		for (int64_t k = 0; k < n; k++)
		{
			if (idx[k] < 0 || idx[k] >= in->width)
			{
				gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s picks column %lld of %d",
							  L->label, (long long) idx[k], in->width);
				break;
			}
			v->cols[k] = in->cols[idx[k]];
		}
	}
	L->alloc.free(L->alloc.ctx, idx);
	return L->st->code;
}

/*
 * Concat of feature values along the columns (axis 1 or -1), or
 * ai.onnx.ml FeatureVectorizer (vectorizer), which skl2onnx writes first
 * for a pipeline fitted on a DataFrame without a ColumnTransformer: its
 * inputdimensions must be the inputs' widths (onnxruntime would cut or pad
 * with zeros otherwise).
 */
static GsCode
prep_concat(Loader *L, TPrep *P, const Onnx__NodeProto *node, bool vectorizer)
{
	static const char *const attrs[] = {"axis", NULL};
	static const char *const vattrs[] = {"inputdimensions", NULL};
	const Onnx__AttributeProto *dims = vectorizer ? onnx_attr_find(node, "inputdimensions") : NULL;
	int64_t		axis = 1,
				width = 0;
	TPrepVal   *v;
	int32_t		at = 0;

	if (onnx_attrs_allowed(L, node, vectorizer ? vattrs : attrs) != GS_OK ||
		(!vectorizer && onnx_attr_int(L, node, "axis", 0, &axis) != GS_OK))
		return L->st->code;
	if (axis != 1 && axis != -1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s concatenates along axis %lld, not the columns",
							 L->label, (long long) axis);
	if (vectorizer && (dims == NULL || dims->n_ints != node->n_input))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no \"inputdimensions\" for each of its %zu inputs",
							 L->label, node->n_input);
	for (size_t k = 0; k < node->n_input; k++)
	{
		TPrepVal   *x = prep_input(L, P, node->input[k]);

		if (x == NULL)
			return L->st->code != GS_OK ? L->st->code :
				gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s concatenates the features with something else",
							  L->label);
		if (vectorizer && dims->ints[k] != x->width)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s takes %lld columns of an input of %d",
								 L->label, (long long) dims->ints[k], x->width);
		width += x->width;
		if (width > TPREP_MAX_COLUMNS)
			break;
	}
	if ((v = prep_new(L, P, node->output[0], width)) == NULL)
		return L->st->code;
	for (size_t k = 0; k < node->n_input; k++)
	{
		TPrepVal   *x = prep_find(P, node->input[k]);

		memcpy(v->cols + at, x->cols, sizeof(TPrepCol) * (size_t) x->width);
		at += x->width;
	}
	return GS_OK;
}

/* Translate a node that reads the features; see onnx_trees.h. */
GsCode
onnx_trees_prep_node(Loader *L, TPrep *P, const Onnx__NodeProto *node)
{
	const char *op = node->op_type ? node->op_type : "";
	const char *dom = node->domain ? node->domain : "";
	bool		ml = strcmp(dom, "ai.onnx.ml") == 0;
	bool		std = dom[0] == '\0' || strcmp(dom, "ai.onnx") == 0;
	TPrepVal   *in = node->n_input >= 1 ? prep_input(L, P, node->input[0]) : NULL;
	char		oname[48];
	bool		handled = false;

	if (L->st->code != GS_OK)
		return L->st->code;
	if (node->n_output != 1 || node->output[0] == NULL || node->output[0][0] == '\0')
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has %zu outputs", L->label, node->n_output);
	if (std && (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 ||
				strcmp(op, "Div") == 0))
		return prep_arith(L, P, node, op);
	if (std && strcmp(op, "Concat") == 0)
		return prep_concat(L, P, node, false);
	if (ml && strcmp(op, "FeatureVectorizer") == 0)
		return prep_concat(L, P, node, true);
	if (in == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s reads the features as its second input", L->label);
	if (onnx_prep_cat_node(L, P, node, in, &handled) != GS_OK || handled)
		return L->st->code;
	if (ml && strcmp(op, "ArrayFeatureExtractor") == 0)
		return prep_extract(L, P, node, in);
	if (node->n_input != 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has %zu inputs", L->label, node->n_input);
	if (ml && strcmp(op, "Imputer") == 0)
		return prep_imputer(L, P, node, in);
	if (ml && strcmp(op, "Scaler") == 0)
		return prep_scaler(L, P, node, in);
	if (std && strcmp(op, "Cast") == 0)
	{
		int64_t		to;

		if (onnx_attr_int(L, node, "to", 0, &to) != GS_OK)
			return L->st->code;
		if (to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s casts the features to %s", L->label,
								 onnx_elem_type_name((int32_t) to));
		if ((in = prep_copy(L, P, node, in)) == NULL)
			return L->st->code;
		/* a LabelEncoder's codes, now floats: the feature's value */
		for (int32_t c = 0; c < in->width; c++)
			if (in->cols[c].ordinal)
				in->cols[c].as_int = in->cols[c].ordinal = false;
		return GS_OK;
	}
	if (std && strcmp(op, "Identity") == 0)
		return prep_copy(L, P, node, in) ? GS_OK : L->st->code;

	onnx_safe_name(oname, sizeof(oname), op);
	gs_status_set(L->st, GS_ERR_UNSUPPORTED, "unsupported ONNX operator \"%s\" before the trees in %s",
				  oname, L->label);
	gs_status_detail(L->st, "Before the tree-ensemble node a model may hold what scikit-learn pipelines "
					 "write for numeric features: Imputer (of NaN), Scaler, Add, Sub, Mul and Div by "
					 "constants, Cast to float, Identity, ArrayFeatureExtractor and Concat "
					 "(ColumnTransformer), and FeatureVectorizer (a DataFrame's columns).");
	return L->st->code;
}

/* The tree node reads name; see onnx_trees.h. */
GsCode
onnx_trees_prep_tree(Loader *L, TPrep *P, const char *name)
{
	TPrepVal   *v;

	P->tree_cols = NULL;
	P->tree_width = P->in_width;
	if (P->in_name && strcmp(name, P->in_name) == 0)
		return GS_OK;
	v = prep_find(P, name);
	if (v == NULL)
		return gs_status_set(L->st, GS_ERR_INTERNAL, "%s reads no known feature value", L->label);
	for (int32_t c = 0; c < v->width; c++)
		if (v->cols[c].as_int)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s reads %s", L->label,
								 v->cols[c].text ? "a string input" : "features cast to int64");
	P->tree_cols = v->cols;
	P->tree_width = v->width;
	return GS_OK;
}

/* Release the columns; see onnx_trees.h. */
void
onnx_trees_prep_free(Loader *L, TPrep *P)
{
	for (int32_t i = 0; i < P->n_vals; i++)
		L->alloc.free(L->alloc.ctx, P->vals[i].cols);
	if (P->vals)
		L->alloc.free(L->alloc.ctx, P->vals);
	if (P->inputs)
		L->alloc.free(L->alloc.ctx, (void *) P->inputs);
	if (P->text_enc)
		L->alloc.free(L->alloc.ctx, (void *) P->text_enc);
	memset(P, 0, sizeof(*P));
}

/*
 * onnx_mlp_prep.c
 *	  scikit-learn pipelines before a network whose preprocessing is not one
 *	  chain over one input: a ColumnTransformer (an ArrayFeatureExtractor
 *	  per group of columns, the group's steps, a Concat) or a pipeline
 *	  fitted on a pandas DataFrame (one graph input per column).
 *
 * The nodes between the graph's inputs and the network are read by the
 * preprocessing reader the tree ensembles use (onnx_trees_prep.c): every
 * column the network's first node reads is one of the model's features
 * through a chain of per-column float steps (Imputer of NaN or of a
 * number, Scaler, Add,
 * Sub, Mul and Div by constants, Cast to float, Identity; Concat,
 * FeatureVectorizer, ArrayFeatureExtractor and Gather moving columns; a
 * OneHotEncoder of category codes, onnx_prep_cat.c, making one column per
 * category).  Here they become network steps:
 *	- a GS_MLP_GATHER step, which feature each network column reads (left
 *	  out when the network reads every feature in order);
 *	- element-wise steps, each one op over every column: a column whose
 *	  chain does not do that op at that point gets the op's identity (add
 *	  -0, multiply or divide by 1, impute NaN by NaN or a number by
 *	  itself, one-hot with NaN as its category), so that each column goes
 *	  through the float operations of its own chain, in its order, as
 *	  onnxruntime computes them (x - c is x + (-c) and c - x is (-x) + c,
 *	  the same floats; x + (-0) is x, zeros' signs included, but for a -0
 *	  through an imputer of 0 of another group: +0, equal to it).
 * The network proper is then read as any network, its chain starting at
 * the value its first node reads.
 *
 * Memory: the steps' arrays come from the network's allocator (freed with
 * it); the reader's columns are released before returning.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_trees.h"

/* Nodes the preprocessing reader translates (when they read features). */
static bool
is_prep_op(const Onnx__NodeProto *node)
{
	static const char *const std_ops[] = {"Add", "Sub", "Mul", "Div", "Concat", "Cast", "Identity",
	"Gather", "Reshape"};

	static const char *const ml_ops[] = {"Imputer", "Scaler", "ArrayFeatureExtractor", "FeatureVectorizer",
	"OneHotEncoder", "LabelEncoder"};

	for (size_t k = 0; k < sizeof(ml_ops) / sizeof(ml_ops[0]); k++)
		if (onnx_node_is(node, ml_ops[k], true))
			return true;
	for (size_t k = 0; k < sizeof(std_ops) / sizeof(std_ops[0]); k++)
		if (onnx_node_is(node, std_ops[k], false))
			return true;
	return false;
}

/* Does the network need this reader?  See onnx_internal.h. */
bool
onnx_mlp_wants_prep(const Loader *L)
{
	int			n;

	onnx_graph_inputs(L, NULL, 0, &n);
	if (n > 1)
		return true;
	for (size_t i = 0; i < L->g->n_node; i++)
		if (L->needed[i] && onnx_node_is(L->g->node[i], "ArrayFeatureExtractor", true))
			return true;
	return false;
}

/*
 * Step k of col's chain as a network op, its parameter and (IMPUTE) the
 * number it replaces, NaN for NaN itself; false past its end.  c - x is two
 * steps: multiply by -1, add c; an Imputer of a number (TPO_REPLACED, then
 * TPO_IMPUTE) is one.
 */
static bool
col_op(const TPrepCol *col, int k, GsMlpOp *op, float *p, float *replaced)
{
	int			j = 0;

	*replaced = NAN;
	for (int i = 0; i < col->n; i++)
	{
		float		c = col->c[i];

		if (col->op[i] == TPO_RSUB)
		{
			if (k == j || k == j + 1)
			{
				*op = k == j ? GS_MLP_MUL : GS_MLP_ADD;
				*p = k == j ? -1.0f : c;
				return true;
			}
			j += 2;
			continue;
		}
		if (col->op[i] == TPO_REPLACED && i + 1 < col->n && col->op[i + 1] == TPO_IMPUTE)
		{
			if (k == j)
			{
				*op = GS_MLP_IMPUTE;
				*p = col->c[i + 1];
				*replaced = c;
				return true;
			}
			i++;
			j++;
			continue;
		}
		if (k == j)
		{
			switch ((TPrepOp) col->op[i])
			{
				case TPO_ADD:
					*op = GS_MLP_ADD, *p = c;
					break;
				case TPO_SUB:
					*op = GS_MLP_ADD, *p = -c;
					break;
				case TPO_MUL:
					*op = GS_MLP_MUL, *p = c;
					break;
				case TPO_DIV:
					*op = GS_MLP_DIV, *p = c;
					break;
				case TPO_IMPUTE:
					*op = GS_MLP_IMPUTE, *p = c;
					break;
				case TPO_ONEHOT:
					*op = GS_MLP_ONEHOT, *p = c;
					break;
				case TPO_RSUB:	/* two steps, above */
				case TPO_REPLACED:	/* with its TPO_IMPUTE, above */
					return false;
			}
			return true;
		}
		j++;
	}
	return false;
}

/* Do two IMPUTE steps replace the same thing (NaN, or the same number)? */
static bool
same_replaced(float a, float b)
{
	return isnan(a) ? isnan(b) : (!isnan(b) && memcmp(&a, &b, sizeof(float)) == 0);
}

/* The value of op that leaves every float as it is. */
static float
identity_of(GsMlpOp op)
{
	if (op == GS_MLP_ADD)
		return -0.0f;
	if (op == GS_MLP_IMPUTE || op == GS_MLP_ONEHOT)
		return NAN;
	return 1.0f;				/* MUL, DIV */
}

/* A new step of op over L->width columns owning p; NULL: status set. */
static GsMlpStep *
prep_step(Loader *L, GsMlpOp op, const char *name, float *p)
{
	GsMlpStep  *s = NULL;

	if (!onnx_over_parameters(L, L->width))
		s = onnx_new_step(L, op, name);
	if (s == NULL)
	{
		if (p)
			L->m->alloc.free(L->m->alloc.ctx, p);
		return NULL;
	}
	s->p = p;
	if (p)
		L->m->n_params += L->width;
	return s;
}

/* The GATHER step: network column j reads feature cols[j].src. */
static GsCode
gather_step(Loader *L, const TPrep *P, const TPrepVal *v, const char *name)
{
	GsMlpStep  *s;
	int32_t    *idx;
	bool		identity = v->width == P->in_width;

	for (int32_t c = 0; c < v->width && identity; c++)
		identity = v->cols[c].src == c;
	if (identity)
		return GS_OK;
	if ((idx = onnx_alloc(L, sizeof(int32_t) * (size_t) v->width)) == NULL)
		return onnx_nomem(L);
	for (int32_t c = 0; c < v->width; c++)
		idx[c] = v->cols[c].src;
	L->width = P->in_width;
	if ((s = prep_step(L, GS_MLP_GATHER, name, NULL)) == NULL)
	{
		L->m->alloc.free(L->m->alloc.ctx, idx);
		return L->st->code;
	}
	s->n_out = v->width;
	s->idx = idx;
	L->width = v->width;
	return GS_OK;
}

/* The element-wise steps of v's columns' chains, op by op. */
static GsCode
chain_steps(Loader *L, const TPrepVal *v, const char *name)
{
	int		   *pos = onnx_alloc(L, sizeof(int) * (size_t) v->width);
	GsCode		rc = GS_OK;

	if (pos == NULL)
		return onnx_nomem(L);
	memset(pos, 0, sizeof(int) * (size_t) v->width);
	for (;;)
	{
		GsMlpOp		op = GS_MLP_ADD,
					o;
		float		p,
					rep = NAN,
					r,
				   *vals;
		int32_t		first = -1;
		GsMlpStep  *s;

		/* the next op of the first column with one left */
		for (int32_t c = 0; c < v->width && first < 0; c++)
			if (col_op(&v->cols[c], pos[c], &op, &p, &rep))
				first = c;
		if (first < 0)
			break;
		if ((vals = onnx_alloc(L, sizeof(float) * (size_t) v->width)) == NULL)
		{
			rc = onnx_nomem(L);
			break;
		}
		for (int32_t c = 0; c < v->width; c++)
		{
			/* replacing a number by itself leaves a column as it is (but for a -0 read as 0) */
			vals[c] = isnan(rep) ? identity_of(op) : rep;
			if (c >= first && col_op(&v->cols[c], pos[c], &o, &p, &r) && o == op &&
				(op != GS_MLP_IMPUTE || same_replaced(r, rep)))
			{
				vals[c] = p;
				pos[c]++;
			}
		}
		if ((s = prep_step(L, op, name, vals)) == NULL)
		{
			rc = L->st->code;
			break;
		}
		/* an IMPUTE step of NaN keeps alpha and beta 0; of a number, alpha is the number */
		if (op == GS_MLP_IMPUTE && !isnan(rep))
		{
			s->alpha = rep;
			s->beta = 1.0f;
		}
	}
	L->alloc.free(L->alloc.ctx, pos);
	return rc;
}

/* Is a column of v cast to int64 (and not one-hot encoded)? */
static bool
reads_ints(const TPrepVal *v)
{
	for (int32_t c = 0; c < v->width; c++)
		if (v->cols[c].as_int)
			return true;
	return false;
}

/* Is a column of v a string input? */
static bool
reads_text(const TPrepVal *v)
{
	for (int32_t c = 0; c < v->width; c++)
		if (v->cols[c].text)
			return true;
	return false;
}

/* Does node read a feature value (the graph's input or preprocessed)? */
static bool
reads_features(Loader *L, TPrep *P, const Onnx__NodeProto *node)
{
	for (size_t k = 0; k < node->n_input; k++)
		if (node->input[k] && node->input[k][0] && onnx_trees_prep_value(L, P, node->input[k]))
			return true;
	return false;
}

/* Translate the preprocessing and start the chain; see onnx_internal.h. */
GsCode
onnx_mlp_prep(Loader *L)
{
	const Onnx__GraphProto *g = L->g;
	TPrep		P;
	const char *entry = NULL;
	TPrepVal   *v;
	int32_t		n_features;
	GsCode		rc;

	if (onnx_trees_prep_inputs(L, &P, GS_MLP_MAX_WIDTH, &n_features) != GS_OK)
	{
		onnx_trees_prep_free(L, &P);
		return L->st->code;
	}
	L->m->n_features = n_features;
	P.onehot = true;
	P.network = true;
	for (size_t i = 0; i < g->n_node && L->st->code == GS_OK; i++)
	{
		const Onnx__NodeProto *node = g->node[i];
		char		nname[80],
					oname[48];

		if (!L->needed[i] || !reads_features(L, &P, node))
			continue;
		onnx_safe_name(nname, sizeof(nname), node->name);
		onnx_safe_name(oname, sizeof(oname), node->op_type);
		snprintf(L->label, sizeof(L->label), "node \"%s\" (%s)", nname, oname);
		if (is_prep_op(node))
		{
			if (onnx_trees_prep_node(L, &P, node) == GS_OK)
				L->needed[i] = false;
			continue;
		}
		/* the network's first node: it reads one feature value */
		for (size_t k = 0; k < node->n_input; k++)
		{
			if (!node->input[k] || !node->input[k][0] ||
				!onnx_trees_prep_value(L, &P, node->input[k]))
				continue;
			if (entry == NULL)
				entry = node->input[k];
			else if (strcmp(entry, node->input[k]) != 0)
			{
				gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							  "%s reads the features a second time, not through the network's chain",
							  L->label);
				gs_status_detail(L->st, "The preprocessed features must feed one chain of layers.");
				break;
			}
		}
	}
	if (L->st->code == GS_OK && entry == NULL)
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the graph has no Gemm or MatMul layer");
	if (L->st->code != GS_OK)
	{
		onnx_trees_prep_free(L, &P);
		return L->st->code;
	}

	v = onnx_trees_prep_value(L, &P, entry);
	L->cur = entry;
	L->width = P.in_width;
	if (v == NULL)
		rc = gs_status_set(L->st, GS_ERR_INTERNAL, "the network's input is lost");
	else if (v->width == 0)
		rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the network reads no feature column");
	else if (reads_ints(v))
		rc = gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the network reads %s",
						   reads_text(v) ? "a string input" : "features cast to int64");
	else if (v->width > GS_MLP_MAX_WIDTH)
		rc = gs_status_set(L->st, GS_ERR_LIMIT, "the network reads %d columns, more than the limit of %d",
						   v->width, GS_MLP_MAX_WIDTH);
	else
		rc = gather_step(L, &P, v, "preprocessing");
	if (rc == GS_OK)
	{
		L->width = v->width;
		rc = chain_steps(L, v, "preprocessing");
	}
	if (rc == GS_OK && P.names)
		rc = onnx_trees_prep_names(L, &P, &L->m->feature_names);
	if (rc == GS_OK)
		rc = onnx_prep_cat_names(L, &P, &L->m->cat_names);
	onnx_trees_prep_free(L, &P);
	return rc;
}

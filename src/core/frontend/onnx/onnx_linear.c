/*
 * onnx_linear.c
 *	  scikit-learn's linear models as skl2onnx writes them, read as a network
 *	  of one dense layer (see onnx_internal.h): ai.onnx.ml LinearClassifier
 *	  (LogisticRegression, LogisticRegressionCV, LinearSVC, RidgeClassifier)
 *	  and LinearRegressor (LinearRegression, Ridge, Lasso, ElasticNet,
 *	  SGDRegressor, LinearSVR, HuberRegressor...), with the nodes skl2onnx
 *	  writes after them: an ArrayFeatureExtractor picking a column of the
 *	  scores (LinearSVC's decision function) and a Normalizer (L1) after a
 *	  softmax.
 *
 * The scores are X * coefficients^T + intercepts, one row of coefficients
 * per class or target, then the post-transform as onnxruntime applies it:
 *	- LinearClassifier with C >= 2 rows: NONE, LOGISTIC (per column) or
 *	  SOFTMAX; SOFTMAX_ZERO and PROBIT are refused.
 *	- LinearClassifier with one row and two class labels: onnxruntime
 *	  outputs [1 - p, p], p the row's score, through the logistic for
 *	  LOGISTIC, raw for NONE (other transforms refused).
 *	- LinearRegressor: NONE only (onnxruntime ignores a transform on one
 *	  target and applies it on several: refused rather than guessed).
 * A binary classifier's two columns become one, the probability of the
 * second class, as for binary tree and network classifiers: [1 - p, p]
 * above, and the two rows skl2onnx writes for a binary LogisticRegression
 * or LinearSVC (the second the exact negation of the first: the scores are
 * [-s, s], so the columns [logistic(-s), logistic(s)] or [-s, s]) when
 * they are the scored output.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

typedef enum PostTransform
{
	PT_NONE,
	PT_LOGISTIC,
	PT_SOFTMAX,
	PT_OTHER
} PostTransform;

/* The node's list of floats attribute name, or NULL (*n = 0) when absent. */
static GsCode
float_list(Loader *L, const Onnx__NodeProto *node, const char *name, const float **v, size_t *n)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);

	*v = NULL;
	*n = 0;
	if (a == NULL)
		return GS_OK;
	if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not a list of floats", name, L->label);
	*v = a->floats;
	*n = a->n_floats;
	return GS_OK;
}

/* The node's post_transform (NONE when absent); *name for messages. */
static GsCode
post_transform(Loader *L, const Onnx__NodeProto *node, PostTransform *pt, char *name, size_t cap)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, "post_transform");
	char		s[32] = "NONE";

	if (a != NULL)
	{
		if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) ||
			!a->has_s || a->s.len >= sizeof(s))
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "attribute \"post_transform\" of %s is not a transform's name", L->label);
		memcpy(s, a->s.data, a->s.len);
		s[a->s.len] = '\0';
	}
	onnx_safe_name(name, cap, s);
	*pt = strcmp(s, "NONE") == 0 ? PT_NONE : strcmp(s, "LOGISTIC") == 0 ? PT_LOGISTIC :
		strcmp(s, "SOFTMAX") == 0 ? PT_SOFTMAX : PT_OTHER;
	return GS_OK;
}

/* Class labels: how many the node lists (ints or strings). */
static size_t
n_class_labels(const Onnx__NodeProto *node)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, "classlabels_ints");
	const Onnx__AttributeProto *b = onnx_attr_find(node, "classlabels_strings");

	return (a ? a->n_ints : 0) + (b ? b->n_strings : 0);
}

/*
 * Are the two rows of coefficients and intercepts exact negations of each
 * other (a binary classifier's [-s, s], as skl2onnx writes it)?
 */
static bool
negated_rows(const float *coef, const float *icpt, int32_t width)
{
	for (int32_t i = 0; i < width; i++)
		if (coef[width + i] != -coef[i])
			return false;
	return icpt[1] == -icpt[0];
}

/* Is value name the scored output's root (the value the chain must end at)? */
static bool
is_root(const Loader *L, const char *name)
{
	return L->root != NULL && name != NULL && strcmp(name, L->root) == 0;
}

/* The weights [n_out * n_in] and bias [n_out] of a dense step, or out of memory. */
static GsCode
alloc_layer(Loader *L, int32_t n_out, int32_t n_in, float **w, float **bias)
{
	*w = onnx_alloc(L, sizeof(float) * (size_t) n_out * (size_t) n_in);
	*bias = onnx_alloc(L, sizeof(float) * (size_t) n_out);
	if (*w != NULL && *bias != NULL)
		return GS_OK;
	if (*w)
		L->m->alloc.free(L->m->alloc.ctx, *w);
	if (*bias)
		L->m->alloc.free(L->m->alloc.ctx, *bias);
	return onnx_nomem(L);
}

/* LinearClassifier or LinearRegressor; see the file's comment. */
GsCode
onnx_add_linear(Loader *L, const Onnx__NodeProto *node, bool classifier)
{
	static const char *const clf_attrs[] = {"coefficients", "intercepts", "multi_class", "post_transform",
	"classlabels_ints", "classlabels_strings", NULL};
	static const char *const reg_attrs[] = {"coefficients", "intercepts", "targets", "post_transform", NULL};
	const float *coef,
			   *icpt;
	size_t		n_coef,
				n_icpt;
	int64_t		n_rows;
	PostTransform pt = PT_NONE;
	char		ptname[32];
	bool		two_class = false,
				scored;
	int32_t		first = 0,
				n_out;
	float	   *w,
			   *bias;

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK ||
		onnx_attrs_allowed(L, node, classifier ? clf_attrs : reg_attrs) != GS_OK ||
		float_list(L, node, "coefficients", &coef, &n_coef) != GS_OK ||
		float_list(L, node, "intercepts", &icpt, &n_icpt) != GS_OK ||
		post_transform(L, node, &pt, ptname, sizeof(ptname)) != GS_OK)
		return L->st->code;
	if (classifier)
	{
		/* onnxruntime counts the classes by the intercepts */
		if (n_icpt == 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no intercepts", L->label);
		n_rows = (int64_t) n_icpt;
	}
	else if (onnx_attr_int(L, node, "targets", 1, &n_rows) != GS_OK)
		return L->st->code;
	if (n_rows < 1 || n_rows > GS_MLP_MAX_WIDTH)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has %lld outputs, the limit is 1 to %d",
							 L->label, (long long) n_rows, GS_MLP_MAX_WIDTH);
	if (n_coef != (size_t) n_rows * (size_t) L->width)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "%s has %zu coefficients, expected %lld outputs times %d inputs",
							 L->label, n_coef, (long long) n_rows, L->width);
	if (n_icpt != 0 && n_icpt != (size_t) n_rows)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %zu intercepts for %lld outputs",
							 L->label, n_icpt, (long long) n_rows);
	if (classifier && n_rows == 1 && n_class_labels(node) != 2)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "%s has one row of coefficients and %zu class labels, expected 2",
							 L->label, n_class_labels(node));
	if (classifier && n_rows >= 2 && n_class_labels(node) != (size_t) n_rows)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %lld rows of coefficients and %zu class labels",
							 L->label, (long long) n_rows, n_class_labels(node));
	if (pt == PT_OTHER || (!classifier && pt != PT_NONE) || (n_rows == 1 && pt == PT_SOFTMAX))
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has post_transform %s", L->label, ptname);
		gs_status_detail(L->st, "Supported: NONE, LOGISTIC and SOFTMAX after a LinearClassifier (LOGISTIC or NONE "
						 "with one row of coefficients), NONE after a LinearRegressor.");
		return L->st->code;
	}

	/*
	 * A binary classifier: score the second column alone when it is the
	 * scored output (a classifier's scores are its output 1, onnx_ops.c).
	 */
	scored = classifier && node->n_output >= 2 && is_root(L, node->output[1]);
	if (classifier && n_rows == 1)
		two_class = true;
	else if (scored && n_rows == 2 && pt != PT_SOFTMAX && negated_rows(coef, icpt, L->width))
	{
		two_class = true;
		first = 1;
	}
	if (two_class && !scored)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s gives a binary classifier's [1 - p, p] to another node", L->label);
	n_out = two_class ? 1 : (int32_t) n_rows;
	if (onnx_over_parameters(L, (int64_t) n_out * L->width + n_out))
		return L->st->code;
	if (alloc_layer(L, n_out, L->width, &w, &bias) != GS_OK)
		return L->st->code;
	memcpy(w, coef + (size_t) first * L->width, sizeof(float) * (size_t) n_out * L->width);
	for (int32_t o = 0; o < n_out; o++)
	{
		bias[o] = n_icpt ? icpt[first + o] : 0.0f;
		if (!isfinite(bias[o]))
		{
			L->m->alloc.free(L->m->alloc.ctx, w);
			L->m->alloc.free(L->m->alloc.ctx, bias);
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the intercepts of %s overflow", L->label);
		}
	}
	if (onnx_add_dense_step(L, node, n_out, w, bias) != GS_OK)
		return L->st->code;
	if (pt != PT_NONE &&
		onnx_new_step(L, pt == PT_LOGISTIC ? GS_MLP_SIGMOID : GS_MLP_SOFTMAX, node->name) == NULL)
		return L->st->code;
	L->two_class = two_class;
	return GS_OK;
}

/*
 * ai.onnx.ml ArrayFeatureExtractor of the chain right after a dense step,
 * with constant column indices (skl2onnx's LinearSVC: the decision
 * function, the second column of the scores): the dense step keeps those
 * units only.
 */
GsCode
onnx_add_pick(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const no_attrs[] = {NULL};
	const Onnx__TensorProto *t;
	GsMlpStep  *s;
	int64_t		n,
				idx[16];
	float	   *w,
			   *bias;
	int32_t		n_in;

	if (onnx_want_chain_input(L, node, 2, 2) != GS_OK || onnx_attrs_allowed(L, node, no_attrs) != GS_OK ||
		onnx_want_const(L, node, 1, &t) != GS_OK)
		return L->st->code;
	s = L->m->n_steps > 0 ? &L->m->steps[L->m->n_steps - 1] : NULL;
	if (s == NULL || s->op != GS_MLP_DENSE)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s picks columns other than a linear layer's scores", L->label);
	if (t->n_dims > 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the indices of %s are not a list", L->label);
	if (onnx_tensor_int64s(L, t, 16, &n, idx) != GS_OK)
		return L->st->code;
	if (n < 1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s picks no column", L->label);
	for (int64_t k = 0; k < n; k++)
		if (idx[k] < 0 || idx[k] >= s->n_out)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "%s picks column %lld of %d", L->label, (long long) idx[k], s->n_out);
	n_in = s->n_in;
	if (alloc_layer(L, (int32_t) n, n_in, &w, &bias) != GS_OK)
		return L->st->code;
	for (int64_t k = 0; k < n; k++)
	{
		memcpy(w + k * n_in, s->w + idx[k] * n_in, sizeof(float) * (size_t) n_in);
		bias[k] = s->p[idx[k]];
	}
	L->m->n_params -= (int64_t) (s->n_out - n) * (n_in + 1);
	L->m->alloc.free(L->m->alloc.ctx, s->w);
	L->m->alloc.free(L->m->alloc.ctx, s->p);
	s->w = w;
	s->p = bias;
	s->n_out = (int32_t) n;
	L->width = (int32_t) n;
	L->picked_output = is_root(L, node->output[0]);
	return GS_OK;
}

/*
 * ai.onnx.ml Normalizer: only L1 right after a softmax, whose rows already
 * sum to 1 (skl2onnx writes it after a multi-class LogisticRegression):
 * no step; onnxruntime's division by the sum changes the last bits at most.
 */
GsCode
onnx_add_normalizer(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"norm", NULL};
	const Onnx__AttributeProto *a = onnx_attr_find(node, "norm");
	char		norm[16] = "MAX";

	if (onnx_want_chain_input(L, node, 1, 1) != GS_OK || onnx_attrs_allowed(L, node, attrs) != GS_OK)
		return L->st->code;
	if (a && a->has_s && a->s.len < sizeof(norm))
	{
		memcpy(norm, a->s.data, a->s.len);
		norm[a->s.len] = '\0';
	}
	if (strcmp(norm, "L1") == 0 && L->m->n_steps > 0 &&
		L->m->steps[L->m->n_steps - 1].op == GS_MLP_SOFTMAX)
		return GS_OK;
	gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s normalizes the rows", L->label);
	gs_status_detail(L->st, "A Normalizer is supported only as an L1 normalization right after a softmax "
					 "(a no-op: the probabilities already sum to 1).");
	return L->st->code;
}

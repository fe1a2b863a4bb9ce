/*
 * onnx_trees_fold.c
 *	  The preprocessing read by onnx_trees_prep.c (per-column chains of
 *	  float steps) folded into a forest's splits, so that every engine
 *	  scores the forest unchanged, on raw feature values.
 *
 * Why folding is exact.  A chain P of these float operations is monotone
 * in x (Sub from a constant and Mul / Div by a negative constant reverse
 * the order), and a split compares P(x) with its threshold t in float as
 * onnxruntime does.  So for every finite x the split's outcome
 * D(x) = (P(x) MODE t) is a monotone predicate of x: false below some
 * float and true from it on, or the other way round, or constant.  That
 * float is found by bisection over the ordered finite floats, evaluating
 * P with onnxruntime's float operations in its order, and the split
 * becomes "x >= T" or "x < T" on the raw column, decided for every finite
 * x exactly as onnxruntime decides it.  NaN is followed separately: P(NaN)
 * is computed (an Imputer makes it a number), and the split's missing
 * direction is where that value goes.  Inputs are never infinite (the glue
 * rejects them).
 *
 * Monotone needs P never to produce NaN from a number: the only way is an
 * infinity times 0 (a zero scale after an overflow), and a column whose
 * chain does that at -FLT_MAX or FLT_MAX (every intermediate value of a
 * number lies between those two ends') is refused.  Equality splits (EQ,
 * NEQ, opset-5 membership) survive only an Imputer (P(x) = x for numbers);
 * after arithmetic they are refused.
 *
 * Memory: onnx_trees_fold replaces TAttrs' node arrays by owned copies
 * (TAttrs.owned, freed by onnx_trees_free_attrs).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "onnx_trees.h"

/* P must be computed in float exactly, as onnxruntime computes it */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "onnx_trees_fold.c needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0)"
#endif

/* The finite floats in order: key(-FLT_MAX) = -PREP_KEY_MAX ... key(FLT_MAX) */
#define PREP_KEY_MAX 0x7f7fffffL

/* One step of a column's chain in float, as onnxruntime computes it. */
static inline float
prep_step(uint8_t op, float c, float x)
{
	switch ((TPrepOp) op)
	{
		case TPO_ADD:
			return x + c;
		case TPO_SUB:
			return x - c;
		case TPO_RSUB:
			return c - x;
		case TPO_MUL:
			return x * c;
		case TPO_DIV:
			return x / c;
		case TPO_IMPUTE:
			return isnan(x) ? c : x;
		case TPO_ONEHOT:
		case TPO_REPLACED:
			/* never in a forest's chain (TPO_REPLACED is for networks) */
			break;
	}
	return x;
}

/* P(x): the value the tree node sees for x in the column's source column. */
static float
prep_eval(const TPrepCol *col, float x)
{
	for (int k = 0; k < col->n; k++)
		x = prep_step(col->op[k], col->c[k], x);
	return x;
}

/* Does the chain turn -FLT_MAX or FLT_MAX into NaN at some step? */
static bool
prep_makes_nan(const TPrepCol *col)
{
	for (int e = 0; e < 2; e++)
	{
		float		x = e ? FLT_MAX : -FLT_MAX;

		for (int k = 0; k < col->n; k++)
			if (isnan(x = prep_step(col->op[k], col->c[k], x)))
				return true;
	}
	return false;
}

/* onnxruntime's test of a branch node: y MODE t (NaN fails all but NEQ). */
static bool
prep_test(TMode m, float y, float t)
{
	switch (m)
	{
		case TM_LEQ:
			return y <= t;
		case TM_LT:
			return y < t;
		case TM_GTE:
			return y >= t;
		case TM_GT:
			return y > t;
		case TM_EQ:
			return y == t;
		case TM_NEQ:
			return y != t;
		case TM_CAT:			/* made here, never read from a file */
		case TM_LEAF:
			break;
	}
	return false;
}

/* Does the chain one-hot encode its column? */
static bool
has_onehot(const TPrepCol *col)
{
	for (int k = 0; k < col->n; k++)
		if (col->op[k] == TPO_ONEHOT)
			return true;
	return false;
}

/*
 * Node i splits on a one-hot column (category c of a OneHotEncoder, after
 * Imputers only): every value x is "in" (its truncation is c) or "out" (NaN
 * too, unless imputed), and the steps after the encoder map 1 and 0 to two
 * floats the split tests.  Becomes a category split on the raw column (a
 * set of one code; the forest's test truncates as onnxruntime's cast to
 * int64 does), its children swapped when "in" is the false side, or a
 * constant split when both sides agree.
 */
static GsCode
fold_onehot(Loader *L, const TAttrs *A, size_t i, const TPrepCol *col, TMode m, uint8_t *mode,
			float *val, int64_t *tracks, int64_t *tnode, int64_t *fnode)
{
	int			k = 0;
	float		nan_v = NAN,
				c,
				y_in = 1.0f,
				y_out = 0.0f;
	bool		in_true,
				out_true,
				nan_true;

	for (; k < col->n && col->op[k] == TPO_IMPUTE; k++)
		if (isnan(nan_v))
			nan_v = col->c[k];
	if (k == col->n || col->op[k] != TPO_ONEHOT)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "feature %lld of %s is scaled before it is one-hot encoded",
							 (long long) A->featureids[i], L->label);
	c = col->c[k];
	if (!(fabsf(c) < 16777216.0f))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "feature %lld of %s is one-hot encoded with the category %g, "
							 "beyond the 2^24 that a tree's category split can hold",
							 (long long) A->featureids[i], L->label, (double) c);
	for (k++; k < col->n; k++)
	{
		if (col->op[k] == TPO_ONEHOT)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "feature %lld of %s is one-hot encoded twice",
								 (long long) A->featureids[i], L->label);
		y_in = prep_step(col->op[k], col->c[k], y_in);
		y_out = prep_step(col->op[k], col->c[k], y_out);
	}
	in_true = prep_test(m, y_in, A->values[i]);
	out_true = prep_test(m, y_out, A->values[i]);
	nan_true = (!isnan(nan_v) && truncf(nan_v) == c) ? in_true : out_true;
	*tracks = nan_true;
	if (in_true == out_true)
	{
		/* every number goes one way: x < inf always holds, x >= inf never */
		*mode = (uint8_t) (in_true ? TM_LT : TM_GTE);
		*val = INFINITY;
		return GS_OK;
	}
	*mode = (uint8_t) TM_CAT;
	*val = c;
	if (!in_true)
	{
		/* "in" goes false: the category test with the children swapped */
		*tnode = A->falsenodeids[i];
		*fnode = A->truenodeids[i];
		*tracks = !nan_true;
	}
	return GS_OK;
}

/* The finite float of key k (see PREP_KEY_MAX); key 0 is +0. */
static float
key_float(int64_t k)
{
	uint32_t	u = k >= 0 ? (uint32_t) k : 0x80000000u | (uint32_t) (-k);
	float		f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * Fold one ordered split (LEQ, LT, GTE, GT) on a column with arithmetic:
 * *mode and *t become LT or GTE and a threshold on the source column that
 * decide every finite x as the split decides P(x).
 */
static void
fold_split(const TPrepCol *col, TMode *mode, float *t)
{
	TMode		m = *mode;
	float		th = *t;
	bool		lo = prep_test(m, prep_eval(col, -FLT_MAX), th),
				hi = prep_test(m, prep_eval(col, FLT_MAX), th);
	int64_t		a = -PREP_KEY_MAX,
				b = PREP_KEY_MAX;

	if (lo == hi)
	{
		/* every number goes one way: x < inf always holds, x >= inf never */
		*mode = lo ? TM_LT : TM_GTE;
		*t = INFINITY;
		return;
	}
	/* the smallest key whose outcome is hi: D(a) == lo, D(b) == hi */
	while (b - a > 1)
	{
		int64_t		mid = a + (b - a) / 2;

		if (prep_test(m, prep_eval(col, key_float(mid)), th) == hi)
			b = mid;
		else
			a = mid;
	}
	*mode = hi ? TM_GTE : TM_LT;
	*t = key_float(b);
}

/* Fold the preprocessing into A's splits; see onnx_trees.h. */
GsCode
onnx_trees_fold(Loader *L, const TPrep *P, TAttrs *A)
{
	size_t		n = A->n;
	int64_t    *feat = onnx_trees_own(L, A, sizeof(int64_t) * (n ? n : 1)),
			   *tracks = onnx_trees_own(L, A, sizeof(int64_t) * (n ? n : 1)),
			   *tnode = onnx_trees_own(L, A, sizeof(int64_t) * (n ? n : 1)),
			   *fnode = onnx_trees_own(L, A, sizeof(int64_t) * (n ? n : 1));
	float	   *vals = onnx_trees_own(L, A, sizeof(float) * (n ? n : 1));
	uint8_t    *modes = onnx_trees_own(L, A, n ? n : 1);

	if (!feat || !tracks || !tnode || !fnode || !vals || !modes)
		return L->st->code;
	for (size_t i = 0; i < n; i++)
	{
		int			k = onnx_trees_mode(A, i);
		TMode		m = (TMode) k;
		int64_t		j = A->featureids[i];
		bool		tr = A->tracks && A->tracks[i] == 1;
		const TPrepCol *col;
		float		y_nan;
		bool		nan_true;

		feat[i] = j;
		tracks[i] = tr;
		tnode[i] = A->truenodeids[i];
		fnode[i] = A->falsenodeids[i];
		vals[i] = A->values[i];
		modes[i] = (uint8_t) k;
		if (k > TM_LEAF || m == TM_LEAF)
			continue;			/* an unknown mode is onnx_trees_runs's to report */
		if (j < 0 || j >= P->tree_width)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "node %lld of tree %lld of %s reads feature %lld of %d",
								 (long long) A->nodeids[i], (long long) A->treeids[i], L->label,
								 (long long) j, P->tree_width);
		col = &P->tree_cols[j];
		feat[i] = col->src;
		if (col->n == 0)
			continue;
		if (has_onehot(col))
		{
			if (fold_onehot(L, A, i, col, m, &modes[i], &vals[i], &tracks[i], &tnode[i], &fnode[i]) != GS_OK)
				return L->st->code;
			continue;
		}

		/* where a missing value goes: P(NaN) is NaN, or what an Imputer made it */
		y_nan = prep_eval(col, NAN);
		nan_true = isnan(y_nan) ? (m == TM_NEQ || tr) : prep_test(m, y_nan, A->values[i]);
		if (!col->arith)
		{
			/* only Imputers: numbers are unchanged, the test stays */
			if (m == TM_NEQ && !nan_true)
			{
				/* x != t with NaN going false: x == t with the children swapped */
				modes[i] = TM_EQ;
				tnode[i] = A->falsenodeids[i];
				fnode[i] = A->truenodeids[i];
				tracks[i] = 1;
			}
			else
				tracks[i] = nan_true;
			continue;
		}
		if (m == TM_EQ || m == TM_NEQ)
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "node %lld of tree %lld of %s tests feature %lld for equality after scaling it",
								 (long long) A->nodeids[i], (long long) A->treeids[i], L->label,
								 (long long) j);
		if (prep_makes_nan(col))
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "the preprocessing of feature %lld of %s turns large numbers into NaN",
								 (long long) j, L->label);
		fold_split(col, &m, &vals[i]);
		modes[i] = (uint8_t) m;
		tracks[i] = nan_true;
	}
	A->featureids = feat;
	A->tracks = tracks;
	A->truenodeids = tnode;
	A->falsenodeids = fnode;
	A->values = vals;
	A->mode_codes = modes;
	A->modes = NULL;
	return GS_OK;
}

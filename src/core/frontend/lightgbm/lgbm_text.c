/*
 * lgbm_text.c
 *	  The text layer of the LightGBM loader (lgbm_load.c): line scanning,
 *	  numbers and number arrays, and parsing one "Tree=" block into an LTree.
 *
 * Works on the NUL-terminated copy of the model that lgbm_load.c makes; no
 * function reads past a line end or allocates more than the line's text can
 * hold (n numbers take at least 2n - 1 characters).  Arrays of an LTree come
 * from the caller's allocator and are released by gs_lgbm_ltree_free.
 */
#include "lgbm_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LGBM_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* Zeroed memory from the forest's allocator. */
void *
gs_lgbm_lalloc(const GsAllocator *a, size_t size)
{
	void	   *p = a->alloc(a->ctx, size ? size : 1);

	if (p)
		memset(p, 0, size ? size : 1);
	return p;
}

/* Free the arrays of a parsed tree. */
void
gs_lgbm_ltree_free(const GsAllocator *a, LTree *t)
{
	void	   *ps[] = {t->split_feature, t->threshold, t->decision_type, t->left,
	t->right, t->leaf_value, t->cat_boundaries, t->cat_threshold, t->internal_count,
	t->leaf_count, t->leaf_const, t->term_start, t->leaf_features, t->leaf_coeff};

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		if (ps[i])
			a->free(a->ctx, ps[i]);
	memset(t, 0, sizeof(*t));
}

/* Start of the next line after p, or NULL at the end of the text. */
const char *
gs_lgbm_next_line(const char *p)
{
	const char *e = strchr(p, '\n');

	return e ? e + 1 : NULL;
}

/* Whether the line at p is "key=..." ; sets *val to the value. */
int
gs_lgbm_line_key(const char *p, const char *key, const char **val)
{
	size_t		n = strlen(key);

	if (strncmp(p, key, n) == 0 && p[n] == '=')
	{
		*val = p + n + 1;
		return 1;
	}
	return 0;
}

/* Whether the line at p is exactly word (allowing a trailing '\r'). */
int
gs_lgbm_line_is(const char *p, const char *word)
{
	size_t		n = strlen(word);

	return strncmp(p, word, n) == 0 &&
		(p[n] == '\n' || p[n] == '\0' || (p[n] == '\r' && (p[n + 1] == '\n' || p[n + 1] == '\0')));
}

/*
 * Whether the line at p ends the trees: "end of trees", or, in files of
 * LightGBM before 2.2 (which wrote no such line), the "feature importances:"
 * section that follows the last tree.
 */
int
gs_lgbm_trees_end(const char *p)
{
	return gs_lgbm_line_is(p, "end of trees") || gs_lgbm_line_is(p, "feature importances:");
}

/* Skip blanks (not line ends). */
const char *
gs_lgbm_skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Parse a decimal integer on the current line; returns 0 on success. */
int
gs_lgbm_parse_int(const char **pp, int64_t *out)
{
	const char *p = gs_lgbm_skip_blanks(*pp);
	char	   *end;
	long long	v;

	if (*p == '\0' || *p == '\n' || *p == '\r')
		return -1;
	errno = 0;
	v = strtoll(p, &end, 10);
	if (end == p || errno != 0 || (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r' && *end != '\0'))
		return -1;
	*out = v;
	*pp = end;
	return 0;
}

/* Parse a number on the current line; returns 0 on success. */
static int
parse_double(const char **pp, double *out)
{
	const char *p = gs_lgbm_skip_blanks(*pp);
	char	   *end;

	if (*p == '\0' || *p == '\n' || *p == '\r')
		return -1;
	*out = strtod(p, &end);
	if (end == p || (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r' && *end != '\0'))
		return -1;
	*pp = end;
	return 0;
}

/* Whether only blanks remain on the line. */
int
gs_lgbm_at_line_end(const char *p)
{
	p = gs_lgbm_skip_blanks(p);
	return *p == '\n' || *p == '\0' || (*p == '\r' && (p[1] == '\n' || p[1] == '\0'));
}

/*
 * Parse exactly n integers from value text v into a new array (NULL when n
 * is 0).  Values must lie in [lo, hi].  Returns 0 on success.
 */
static int
int_array(const GsAllocator *a, const char *v, int64_t n, int64_t lo, int64_t hi,
		  int32_t **out)
{
	int32_t    *arr;

	*out = NULL;
	/* n numbers take at least 2n - 1 characters: never allocate past the input */
	if (n > 0 && (int64_t) strcspn(v, "\n") < 2 * n - 1)
		return -1;
	arr = gs_lgbm_lalloc(a, sizeof(int32_t) * (size_t) n);
	*out = arr;
	if (!arr)
		return -2;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		x;

		if (gs_lgbm_parse_int(&v, &x) || x < lo || x > hi)
			return -1;
		arr[i] = (int32_t) x;
	}
	return gs_lgbm_at_line_end(v) ? 0 : -1;
}

/* The same for doubles (any value; callers check finiteness). */
static int
double_array(const GsAllocator *a, const char *v, int64_t n, double **out)
{
	double	   *arr;

	*out = NULL;
	if (n > 0 && (int64_t) strcspn(v, "\n") < 2 * n - 1)
		return -1;
	arr = gs_lgbm_lalloc(a, sizeof(double) * (size_t) n);
	*out = arr;
	if (!arr)
		return -2;
	for (int64_t i = 0; i < n; i++)
		if (parse_double(&v, &arr[i]))
			return -1;
	return gs_lgbm_at_line_end(v) ? 0 : -1;
}

/*
 * A linear tree's leaf models from the values of its leaf_const,
 * num_features, leaf_features and leaf_coeff lines (each leaf's features and
 * coefficients follow the previous leaf's on one line) into t, whose
 * num_leaves is set.
 */
static GsCode
parse_linear(const GsAllocator *a, int32_t ti, const char *v_const, const char *v_nf,
			 const char *v_feat, const char *v_coef, LTree *t, GsStatus *st)
{
	int32_t    *nf = NULL;
	int64_t		n = 0;
	int			rc;

	if (!v_const || !v_nf || !v_feat || !v_coef)
		return LGBM_ERR(st, "invalid LightGBM model: linear tree %d lacks leaf_const, num_features, leaf_features or leaf_coeff", ti);
	if ((rc = double_array(a, v_const, t->num_leaves, &t->leaf_const)) ||
		(rc = int_array(a, v_nf, t->num_leaves, 0, INT32_MAX, &nf)))
		goto bad;
	t->term_start = gs_lgbm_lalloc(a, sizeof(int32_t) * (size_t) (t->num_leaves + 1));
	if (!t->term_start)
	{
		rc = -2;
		goto bad;
	}
	for (int64_t j = 0; j < t->num_leaves; j++)
	{
		t->term_start[j] = (int32_t) n;
		n += nf[j];
		if (n > INT32_MAX)
		{
			rc = -1;
			goto bad;
		}
	}
	t->term_start[t->num_leaves] = (int32_t) n;
	t->n_terms = n;
	a->free(a->ctx, nf);
	nf = NULL;
	/* the lengths bound the allocations: n numbers take 2n - 1 characters */
	if ((rc = int_array(a, v_feat, n, 0, INT32_MAX, &t->leaf_features)) ||
		(rc = double_array(a, v_coef, n, &t->leaf_coeff)))
		goto bad;
	return GS_OK;

bad:
	if (nf)
		a->free(a->ctx, nf);
	if (rc == -2)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	return LGBM_ERR(st, "invalid LightGBM model: linear tree %d has leaf models of the wrong length or with a value out of range", ti);
}

/* Where each line of a tree block starts its value (NULL: no such line). */
typedef struct TreeLines
{
	const char *split_feature,
			   *threshold,
			   *decision_type,
			   *left_child,
			   *right_child,
			   *leaf_value,
			   *cat_boundaries,
			   *cat_threshold,
			   *internal_count,
			   *leaf_count,
			   *leaf_const,
			   *num_features,
			   *leaf_features,
			   *leaf_coeff;
	int64_t		is_linear;
	bool		have_leaves;	/* a num_leaves line */
} TreeLines;

/* The error of int_array or double_array's rc (-1 or -2) for tree ti. */
static GsCode
array_error(int rc, int32_t ti, GsStatus *st)
{
	if (rc == -2)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	return LGBM_ERR(st, "invalid LightGBM model: tree %d has an array of the wrong length or with a value out of range", ti);
}

/*
 * Scan the lines of the tree block at p (up to the next "Tree=" or the end
 * of the trees) into *L, and its num_leaves and num_cat (0 when absent)
 * into t.
 */
static GsCode
scan_tree_lines(const char *p, int32_t ti, TreeLines *L, LTree *t, GsStatus *st)
{
	struct
	{
		const char *key;
		const char **val;
	}			arrays[] = {
		{"split_feature", &L->split_feature}, {"threshold", &L->threshold},
		{"decision_type", &L->decision_type}, {"left_child", &L->left_child},
		{"right_child", &L->right_child}, {"leaf_value", &L->leaf_value},
		{"cat_boundaries", &L->cat_boundaries}, {"cat_threshold", &L->cat_threshold},
		{"internal_count", &L->internal_count}, {"leaf_count", &L->leaf_count},
		{"leaf_const", &L->leaf_const}, {"num_features", &L->num_features},
		{"leaf_features", &L->leaf_features}, {"leaf_coeff", &L->leaf_coeff},
	};

	memset(L, 0, sizeof(*L));
	for (; p && *p && !gs_lgbm_trees_end(p) && strncmp(p, "Tree=", 5) != 0; p = gs_lgbm_next_line(p))
	{
		const char *v;

		if (gs_lgbm_line_key(p, "num_leaves", &v))
		{
			if (gs_lgbm_parse_int(&v, &t->num_leaves) || !gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid num_leaves", ti);
			L->have_leaves = true;
		}
		else if (gs_lgbm_line_key(p, "num_cat", &v))
		{
			if (gs_lgbm_parse_int(&v, &t->num_cat) || !gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid num_cat", ti);
		}
		else if (gs_lgbm_line_key(p, "is_linear", &v))
		{
			if (gs_lgbm_parse_int(&v, &L->is_linear) || L->is_linear < 0 || L->is_linear > 1 ||
				!gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid is_linear", ti);
		}
		else
			for (size_t k = 0; k < sizeof(arrays) / sizeof(arrays[0]); k++)
				if (gs_lgbm_line_key(p, arrays[k].key, &v))
				{
					*arrays[k].val = v;
					break;
				}
	}
	return GS_OK;
}

/*
 * The training-row counts of the tree (its leaf_count and internal_count
 * lines) into t, whose other arrays are parsed; optional: lines absent or
 * not parsing leave no counts.  GS_ERR_NOMEM or GS_OK.
 */
static GsCode
parse_counts(const GsAllocator *a, int32_t ti, const TreeLines *L, LTree *t, GsStatus *st)
{
	int64_t		n_int = t->num_leaves - 1;
	int			rc;

	if (!L->leaf_count || (n_int > 0 && !L->internal_count))
		return GS_OK;
	rc = double_array(a, L->leaf_count, t->num_leaves, &t->leaf_count);
	if (rc == 0 && n_int > 0)
		rc = double_array(a, L->internal_count, n_int, &t->internal_count);
	if (rc == -2)
		return array_error(rc, ti, st);
	if (rc != 0)
	{
		if (t->leaf_count)
			a->free(a->ctx, t->leaf_count);
		if (t->internal_count)
			a->free(a->ctx, t->internal_count);
		t->leaf_count = t->internal_count = NULL;
	}
	return GS_OK;
}

/*
 * The category sets of the tree (its cat_boundaries and cat_threshold
 * lines) into t, whose num_cat is positive.
 */
static GsCode
parse_cats(const GsAllocator *a, int32_t ti, const TreeLines *L, LTree *t, GsStatus *st)
{
	const char *v = L->cat_threshold;
	int			rc;

	if (!L->cat_boundaries || !L->cat_threshold)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has num_cat but no cat_boundaries or cat_threshold", ti);
	if ((rc = int_array(a, L->cat_boundaries, t->num_cat + 1, 0, INT32_MAX, &t->cat_boundaries)))
		return array_error(rc, ti, st);
	if (t->cat_boundaries[0] != 0)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has cat_boundaries not starting at 0", ti);
	for (int64_t i = 0; i < t->num_cat; i++)
		if (t->cat_boundaries[i + 1] < t->cat_boundaries[i] ||
			t->cat_boundaries[i + 1] - t->cat_boundaries[i] > (int32_t) GS_CAT_MAX_WORDS)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d has invalid cat_boundaries", ti);
	t->n_cat_threshold = t->cat_boundaries[t->num_cat];
	if ((int64_t) strcspn(v, "\n") < 2 * t->n_cat_threshold - 1)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has fewer cat_threshold words than cat_boundaries says", ti);
	t->cat_threshold = gs_lgbm_lalloc(a, sizeof(uint32_t) * (size_t) t->n_cat_threshold);
	if (!t->cat_threshold)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int64_t i = 0; i < t->n_cat_threshold; i++)
	{
		int64_t		w;

		if (gs_lgbm_parse_int(&v, &w) || w < 0 || w > (int64_t) UINT32_MAX)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid cat_threshold", ti);
		t->cat_threshold[i] = (uint32_t) w;
	}
	if (!gs_lgbm_at_line_end(v))
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has more cat_threshold words than cat_boundaries says", ti);
	return GS_OK;
}

/*
 * Parse the tree block starting at line p (just after "Tree=N") into t.
 * Only lengths and value ranges that do not depend on other trees are
 * checked here.  Returns GS_OK or an error in st.
 */
GsCode
gs_lgbm_parse_tree(const GsAllocator *a, const char *p, int32_t ti, int64_t max_leaves,
				   bool counts, LTree *t, GsStatus *st)
{
	TreeLines	L;
	int64_t		n_int;
	int			rc;
	GsCode		code;

	memset(t, 0, sizeof(*t));
	if ((code = scan_tree_lines(p, ti, &L, t, st)) != GS_OK)
		return code;
	if (!L.have_leaves || t->num_leaves < 1)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has no valid num_leaves", ti);
	if (t->num_leaves > max_leaves)
		return gs_status_limit(st, GS_LIMIT_NODES, max_leaves,
							   "tree %d has %lld leaves, more than the limit of %lld tree nodes",
							   ti, (long long) t->num_leaves, (long long) max_leaves);
	if (t->num_cat < 0 || t->num_cat >= t->num_leaves)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid num_cat", ti);
	n_int = t->num_leaves - 1;
	if (!L.leaf_value)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has no leaf_value", ti);
	if ((rc = double_array(a, L.leaf_value, t->num_leaves, &t->leaf_value)))
		return array_error(rc, ti, st);
	if (n_int > 0)
	{
		if (!L.split_feature || !L.threshold || !L.decision_type || !L.left_child || !L.right_child)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d lacks split_feature, threshold, decision_type, left_child or right_child", ti);
		if ((rc = int_array(a, L.split_feature, n_int, 0, INT32_MAX, &t->split_feature)) ||
			(rc = double_array(a, L.threshold, n_int, &t->threshold)) ||
			(rc = int_array(a, L.decision_type, n_int, 0, 127, &t->decision_type)) ||
			(rc = int_array(a, L.left_child, n_int, -t->num_leaves, n_int - 1, &t->left)) ||
			(rc = int_array(a, L.right_child, n_int, -t->num_leaves, n_int - 1, &t->right)))
			return array_error(rc, ti, st);
	}
	if (counts && (code = parse_counts(a, ti, &L, t, st)) != GS_OK)
		return code;
	if (t->num_cat > 0 && (code = parse_cats(a, ti, &L, t, st)) != GS_OK)
		return code;
	if (L.is_linear)
		return parse_linear(a, ti, L.leaf_const, L.num_features, L.leaf_features, L.leaf_coeff,
							t, st);
	return GS_OK;
}

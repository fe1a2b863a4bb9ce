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

/*
 * Parse the tree block starting at line p (just after "Tree=N") into t.
 * Only lengths and value ranges that do not depend on other trees are
 * checked here.  Returns GS_OK or an error in st.
 */
GsCode
gs_lgbm_parse_tree(const GsAllocator *a, const char *p, int32_t ti, int64_t max_leaves,
				   bool counts, LTree *t, GsStatus *st)
{
	const char *v_sf = NULL,
			   *v_th = NULL,
			   *v_dt = NULL,
			   *v_lc = NULL,
			   *v_rc = NULL,
			   *v_lv = NULL,
			   *v_cb = NULL,
			   *v_ct = NULL,
			   *v_ic = NULL,
			   *v_lc2 = NULL,
			   *v_const = NULL,
			   *v_nf = NULL,
			   *v_feat = NULL,
			   *v_coef = NULL;
	int64_t		is_linear = 0;
	int			have_leaves = 0,
				have_cat = 0;
	int64_t		n_int;
	int			rc;

	memset(t, 0, sizeof(*t));
	for (; p && *p && !gs_lgbm_trees_end(p) && strncmp(p, "Tree=", 5) != 0; p = gs_lgbm_next_line(p))
	{
		const char *v;

		if (gs_lgbm_line_key(p, "num_leaves", &v))
		{
			if (gs_lgbm_parse_int(&v, &t->num_leaves) || !gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid num_leaves", ti);
			have_leaves = 1;
		}
		else if (gs_lgbm_line_key(p, "num_cat", &v))
		{
			if (gs_lgbm_parse_int(&v, &t->num_cat) || !gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid num_cat", ti);
			have_cat = 1;
		}
		else if (gs_lgbm_line_key(p, "split_feature", &v))
			v_sf = v;
		else if (gs_lgbm_line_key(p, "threshold", &v))
			v_th = v;
		else if (gs_lgbm_line_key(p, "decision_type", &v))
			v_dt = v;
		else if (gs_lgbm_line_key(p, "left_child", &v))
			v_lc = v;
		else if (gs_lgbm_line_key(p, "right_child", &v))
			v_rc = v;
		else if (gs_lgbm_line_key(p, "leaf_value", &v))
			v_lv = v;
		else if (gs_lgbm_line_key(p, "cat_boundaries", &v))
			v_cb = v;
		else if (gs_lgbm_line_key(p, "cat_threshold", &v))
			v_ct = v;
		else if (gs_lgbm_line_key(p, "internal_count", &v))
			v_ic = v;
		else if (gs_lgbm_line_key(p, "leaf_count", &v))
			v_lc2 = v;
		else if (gs_lgbm_line_key(p, "is_linear", &v))
		{
			if (gs_lgbm_parse_int(&v, &is_linear) || is_linear < 0 || is_linear > 1 ||
				!gs_lgbm_at_line_end(v))
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid is_linear", ti);
		}
		else if (gs_lgbm_line_key(p, "leaf_const", &v))
			v_const = v;
		else if (gs_lgbm_line_key(p, "num_features", &v))
			v_nf = v;
		else if (gs_lgbm_line_key(p, "leaf_features", &v))
			v_feat = v;
		else if (gs_lgbm_line_key(p, "leaf_coeff", &v))
			v_coef = v;
	}
	if (!have_leaves || t->num_leaves < 1)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has no valid num_leaves", ti);
	if (t->num_leaves > max_leaves)
		return gs_status_limit(st, GS_LIMIT_NODES, max_leaves,
							   "tree %d has %lld leaves, more than the limit of %lld tree nodes",
							 ti, (long long) t->num_leaves, (long long) max_leaves);
	if (!have_cat)
		t->num_cat = 0;
	if (t->num_cat < 0 || t->num_cat >= t->num_leaves)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid num_cat", ti);
	n_int = t->num_leaves - 1;
	if (!v_lv)
		return LGBM_ERR(st, "invalid LightGBM model: tree %d has no leaf_value", ti);
	if ((rc = double_array(a, v_lv, t->num_leaves, &t->leaf_value)))
		goto bad_array;
	if (n_int > 0)
	{
		if (!v_sf || !v_th || !v_dt || !v_lc || !v_rc)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d lacks split_feature, threshold, decision_type, left_child or right_child", ti);
		if ((rc = int_array(a, v_sf, n_int, 0, INT32_MAX, &t->split_feature)) ||
			(rc = double_array(a, v_th, n_int, &t->threshold)) ||
			(rc = int_array(a, v_dt, n_int, 0, 127, &t->decision_type)) ||
			(rc = int_array(a, v_lc, n_int, -t->num_leaves, n_int - 1, &t->left)) ||
			(rc = int_array(a, v_rc, n_int, -t->num_leaves, n_int - 1, &t->right)))
			goto bad_array;
	}
	if (counts && v_lc2 && (n_int == 0 || v_ic))
	{
		/* optional: a count line that does not parse leaves no counts */
		rc = double_array(a, v_lc2, t->num_leaves, &t->leaf_count);
		if (rc == 0 && n_int > 0)
			rc = double_array(a, v_ic, n_int, &t->internal_count);
		if (rc == -2)
			goto bad_array;
		if (rc != 0)
		{
			if (t->leaf_count)
				a->free(a->ctx, t->leaf_count);
			if (t->internal_count)
				a->free(a->ctx, t->internal_count);
			t->leaf_count = t->internal_count = NULL;
		}
	}
	if (t->num_cat > 0)
	{
		if (!v_cb || !v_ct)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d has num_cat but no cat_boundaries or cat_threshold", ti);
		if ((rc = int_array(a, v_cb, t->num_cat + 1, 0, INT32_MAX, &t->cat_boundaries)))
			goto bad_array;
		if (t->cat_boundaries[0] != 0)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d has cat_boundaries not starting at 0", ti);
		for (int64_t i = 0; i < t->num_cat; i++)
			if (t->cat_boundaries[i + 1] < t->cat_boundaries[i] ||
				t->cat_boundaries[i + 1] - t->cat_boundaries[i] > (int32_t) GS_CAT_MAX_WORDS)
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has invalid cat_boundaries", ti);
		t->n_cat_threshold = t->cat_boundaries[t->num_cat];
		if ((int64_t) strcspn(v_ct, "\n") < 2 * t->n_cat_threshold - 1)
			return LGBM_ERR(st, "invalid LightGBM model: tree %d has fewer cat_threshold words than cat_boundaries says", ti);
		t->cat_threshold = gs_lgbm_lalloc(a, sizeof(uint32_t) * (size_t) t->n_cat_threshold);
		if (!t->cat_threshold)
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		for (int64_t i = 0; i < t->n_cat_threshold; i++)
		{
			int64_t		w;

			if (gs_lgbm_parse_int(&v_ct, &w) || w < 0 || w > (int64_t) UINT32_MAX)
				return LGBM_ERR(st, "invalid LightGBM model: tree %d has an invalid cat_threshold", ti);
			t->cat_threshold[i] = (uint32_t) w;
		}
		if (!gs_lgbm_at_line_end(v_ct))
			return LGBM_ERR(st, "invalid LightGBM model: tree %d has more cat_threshold words than cat_boundaries says", ti);
	}
	if (is_linear)
		return parse_linear(a, ti, v_const, v_nf, v_feat, v_coef, t, st);
	return GS_OK;

bad_array:
	if (rc == -2)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	return LGBM_ERR(st, "invalid LightGBM model: tree %d has an array of the wrong length or with a value out of range", ti);
}

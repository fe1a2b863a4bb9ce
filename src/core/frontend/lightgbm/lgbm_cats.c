/*
 * lgbm_cats.c
 *	  The category names of a LightGBM model trained on a pandas DataFrame:
 *	  its "pandas_categorical" line, read into the forest's GsCatNames
 *	  (cat_names.h).
 *
 * LightGBM's Python package writes, after the trees, one JSON list of
 * categories per category column of the training DataFrame, in column
 * order, and at predict time re-codes a DataFrame's category columns with
 * them (a category not in the list becomes missing).  The model's
 * parameters say which features are categorical ("[categorical_feature:
 * 1,3]"); the lists are theirs in that order when there are as many.
 * Otherwise (categorical features that were not pandas categories) which
 * list belongs to which feature is unknown, and no names are kept (the
 * load note says so).  A list of strings gives text names, a list of
 * integers their decimal text; other lists (floats) give no names.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cat_names.h"
#include "lgbm_internal.h"

#define INT_TEXT_MAX 24

/* The line at p after its "key" prefix, or NULL when it does not start so. */
static const char *
after_prefix(const char *p, const char *key)
{
	size_t		n = strlen(key);

	return strncmp(p, key, n) == 0 ? p + n : NULL;
}

/*
 * Parse "[categorical_feature: 1,3]" into feat[] (up to n_features
 * ascending indices below n_features); the count, or -1 when malformed.
 */
static int32_t
parse_cat_features(const char *v, int32_t n_features, int32_t *feat)
{
	int32_t		n = 0;

	v = gs_lgbm_skip_blanks(v);
	if (*v == ']')
		return 0;
	for (;;)
	{
		char	   *end;
		long		idx;

		v = gs_lgbm_skip_blanks(v);
		idx = strtol(v, &end, 10);
		if (end == v || *v == '-' || *v == '+')
			return -1;
		v = end;
		if (idx < 0 || idx >= n_features ||
			(n > 0 && idx <= feat[n - 1]) || n >= n_features)
			return -1;
		feat[n++] = (int32_t) idx;
		v = gs_lgbm_skip_blanks(v);
		if (*v == ']')
			return n;
		if (*v != ',')
			return -1;
		v++;
	}
}

/* Kind of a category list: text, integers, or neither. */
static uint8_t
list_kind(json_t *list, int64_t *count, size_t *bytes)
{
	size_t		n = json_array_size(list);
	bool		all_str = true,
				all_int = true;
	char		buf[INT_TEXT_MAX];

	*count = (int64_t) n;
	*bytes = 0;
	for (size_t i = 0; i < n; i++)
	{
		json_t	   *v = json_array_get(list, i);

		all_str &= json_is_string(v);
		all_int &= json_is_integer(v);
		if (json_is_string(v))
			*bytes += json_string_length(v);
		else if (json_is_integer(v))
			*bytes += (size_t) snprintf(buf, sizeof(buf), "%" PRId64, (int64_t) json_integer_value(v));
	}
	if (n > 0 && all_str)
		return GS_CATNAMES_TEXT;
	if (n > 0 && all_int)
		return GS_CATNAMES_INT;
	*count = 0;
	*bytes = 0;
	return GS_CATNAMES_NONE;
}

/* Fill f's names from the lists, list k for feature feat[k]. */
static GsCode
build(GsForest *f, json_t *lists, const int32_t *feat, int32_t n_cat, GsStatus *st)
{
	int32_t		nf = f->n_features;
	uint8_t    *kind = gs_lgbm_lalloc(&f->alloc, (size_t) nf);
	int64_t    *count = gs_lgbm_lalloc(&f->alloc, sizeof(int64_t) * (size_t) nf);
	size_t		bytes = 0;
	int64_t		total = 0;
	GsCode		rc = GS_OK;
	char		buf[INT_TEXT_MAX];

	if (!kind || !count)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
		goto done;
	}
	for (int32_t k = 0; k < n_cat; k++)
	{
		size_t		b;

		kind[feat[k]] = list_kind(json_array_get(lists, (size_t) k), &count[feat[k]], &b);
		bytes += b;
		total += count[feat[k]];
	}
	if (total == 0)
		goto done;
	if ((rc = gs_catnames_new(&f->cat_names, &f->alloc, nf, kind, count, bytes, st)) != GS_OK)
		goto done;
	for (int32_t j = 0; j < nf && rc == GS_OK; j++)
	{
		json_t	   *list = NULL;

		for (int32_t k = 0; k < n_cat; k++)
			if (feat[k] == j)
				list = json_array_get(lists, (size_t) k);
		for (int64_t c = 0; c < count[j] && rc == GS_OK; c++)
		{
			json_t	   *v = json_array_get(list, (size_t) c);

			if (kind[j] == GS_CATNAMES_TEXT)
				rc = gs_catnames_add(f->cat_names, json_string_value(v), json_string_length(v), st);
			else
			{
				int			len = snprintf(buf, sizeof(buf), "%" PRId64, (int64_t) json_integer_value(v));

				rc = gs_catnames_add(f->cat_names, buf, (size_t) len, st);
			}
		}
	}
	if (rc == GS_OK)
		rc = gs_catnames_finish(f->cat_names, st);

done:
	if (kind)
		f->alloc.free(f->alloc.ctx, kind);
	if (count)
		f->alloc.free(f->alloc.ctx, count);
	return rc;
}

/* Read the pandas category names of a LightGBM model; see lgbm_internal.h. */
GsCode
gs_lgbm_read_cats(const char *text, GsForest *f, GsStatus *st)
{
	const char *cats = NULL,
			   *params = NULL;
	int32_t    *feat = NULL;
	int32_t		n_cat;
	json_t	   *lists;
	json_error_t jerr;
	GsCode		rc = GS_OK;

	for (const char *p = text; p && *p; p = gs_lgbm_next_line(p))
	{
		const char *v;

		if ((v = after_prefix(p, "pandas_categorical:")) != NULL)
			cats = v;
		else if ((v = after_prefix(p, "[categorical_feature:")) != NULL)
			params = v;
	}
	if (cats == NULL)
		return GS_OK;
	lists = json_loadb(cats, strcspn(cats, "\r\n"), JSON_DECODE_ANY, &jerr);
	if (lists == NULL || json_is_null(lists) || json_array_size(lists) == 0)
	{
		if (lists == NULL)
			snprintf(f->cat_note, sizeof(f->cat_note),
					 "the model's pandas_categorical line is not JSON: category names not kept");
		json_decref(lists);
		return GS_OK;
	}
	feat = gs_lgbm_lalloc(&f->alloc, sizeof(int32_t) * (size_t) f->n_features);
	if (feat == NULL)
	{
		json_decref(lists);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
	}
	n_cat = params ? parse_cat_features(params, f->n_features, feat) : -1;
	if (!json_is_array(lists) || n_cat != (int32_t) json_array_size(lists))
		snprintf(f->cat_note, sizeof(f->cat_note),
				 "the model's pandas_categorical lists do not match its categorical features one to one: category names not kept");
	else
	{
		bool		lists_ok = true;

		for (int32_t k = 0; k < n_cat; k++)
			lists_ok &= json_is_array(json_array_get(lists, (size_t) k));
		if (lists_ok)
			rc = build(f, lists, feat, n_cat, st);
	}
	f->alloc.free(f->alloc.ctx, feat);
	json_decref(lists);
	return rc;
}

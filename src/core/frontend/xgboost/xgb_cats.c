/*
 * xgb_cats.c
 *	  The category names XGBoost 3.1 and later keep in a model trained on a
 *	  DataFrame with category columns: the "cats" object of the tree model,
 *	  read into the forest's GsCatNames (cat_names.h).
 *
 * "cats" holds one "enc" entry per feature: a string column as "offsets"
 * (Arrow style, n + 1 of them) into "values" (the UTF-8 bytes, written as
 * int8, so bytes above 127 are negative), an integer column as "type" and
 * "values" (the categories), a numerical feature as an empty string
 * column; "feature_segments" (n_features + 1 running counts) must agree.
 * Code c of a feature is its c-th category, as XGBoost's re-coding of a
 * DataFrame at predict time makes it.  Models without "cats", or with an
 * empty one (trained on arrays), have no names.
 *
 * XGBoost (3.2 at least) writes the offsets of string categories in
 * characters and keeps that many bytes of their UTF-8 text, so a name with
 * a character outside ASCII shifts and cuts the names after it: "日本"
 * after "US" comes out as one byte.  Such names cannot be trusted, nor told
 * apart from correct ones, so a feature whose names hold any byte outside
 * ASCII keeps none (the load note says so); its codes still score.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cat_names.h"
#include "xgb_internal.h"

#define INT_TEXT_MAX 24			/* "-9223372036854775808" and more */

/* GS_ERR_INVALID_MODEL about the categories of feature j. */
static GsCode
bad_cats(GsStatus *st, int32_t j, const char *what)
{
	return gs_status_set(st, GS_ERR_INVALID_MODEL,
						 "invalid XGBoost model: the categories of feature %d %s", j + 1, what);
}

/*
 * Check entry e of feature j and count its categories (*count) and the
 * bytes of their names (*bytes); *kind says strings or integers.
 */
static GsCode
measure(json_t *e, int32_t j, uint8_t *kind, int64_t *count, size_t *bytes, GsStatus *st)
{
	json_t	   *values_ = gs_xgb_member(e, "values");
	json_t	   *offsets = gs_xgb_member(e, "offsets");
	json_t	   *values = gs_xgb_member(e, "values");
	char		buf[INT_TEXT_MAX];

	if (!json_is_array(values))
		return bad_cats(st, j, "have no \"values\" array");
	if (offsets != NULL)
	{
		size_t		n = json_array_size(offsets);
		int64_t		prev = 0;

		if (!json_is_array(offsets))
			return bad_cats(st, j, "have an \"offsets\" that is not an array");
		*kind = GS_CATNAMES_TEXT;
		*count = n > 0 ? (int64_t) n - 1 : 0;
		for (size_t i = 0; i < n; i++)
		{
			json_t	   *o = json_array_get(offsets, i);
			int64_t		v;

			if (!json_is_integer(o))
				return bad_cats(st, j, "have an offset that is not an integer");
			v = (int64_t) json_integer_value(o);
			if ((i == 0 && v != 0) || v < prev || v > (int64_t) json_array_size(values))
				return bad_cats(st, j, "have offsets that do not delimit their names");
			prev = v;
		}
		*bytes = (size_t) prev;
		for (size_t i = 0; i < (size_t) prev; i++)
		{
			json_t	   *v = json_array_get(values_, i);

			if (!json_is_integer(v) || json_integer_value(v) < -128 || json_integer_value(v) > 255)
				return bad_cats(st, j, "hold a name with a value that is not a byte");
			if (json_integer_value(v) < 0 || json_integer_value(v) > 127)
				*kind = GS_CATNAMES_NONE;	/* not ASCII: see above */
		}
		return GS_OK;
	}
	*kind = GS_CATNAMES_INT;
	*count = (int64_t) json_array_size(values);
	*bytes = 0;
	for (size_t i = 0; i < json_array_size(values); i++)
	{
		json_t	   *v = json_array_get(values, i);

		if (!json_is_integer(v))
			return bad_cats(st, j, "are neither strings nor integers");
		*bytes += (size_t) snprintf(buf, sizeof(buf), "%" PRId64, (int64_t) json_integer_value(v));
	}
	return GS_OK;
}

/* Add the names of entry e (checked by measure) to f. */
static GsCode
add_names(GsForest *f, json_t *e, uint8_t kind, char *scratch, GsStatus *st)
{
	json_t	   *values = gs_xgb_member(e, "values");
	GsCode		rc;

	if (kind == GS_CATNAMES_INT)
	{
		for (size_t i = 0; i < json_array_size(values); i++)
		{
			int			len = snprintf(scratch, INT_TEXT_MAX, "%" PRId64,
									   (int64_t) json_integer_value(json_array_get(values, i)));

			if ((rc = gs_catnames_add(f->cat_names, scratch, (size_t) len, st)) != GS_OK)
				return rc;
		}
		return GS_OK;
	}
	else
	{
		json_t	   *offsets = gs_xgb_member(e, "offsets");

		for (size_t c = 0; c + 1 < json_array_size(offsets); c++)
		{
			int64_t		a = (int64_t) json_integer_value(json_array_get(offsets, c));
			int64_t		b = (int64_t) json_integer_value(json_array_get(offsets, c + 1));

			for (int64_t k = a; k < b; k++)
			{
				/* bytes of ASCII: checked by measure */
				scratch[k - a] = (char) json_integer_value(json_array_get(values, (size_t) k));
			}
			if ((rc = gs_catnames_add(f->cat_names, scratch, (size_t) (b - a), st)) != GS_OK)
				return rc;
		}
		return GS_OK;
	}
}

/* Read "cats" of the tree model into f->cat_names; see xgb_internal.h. */
GsCode
gs_xgb_read_cats(json_t *model, GsForest *f, GsStatus *st)
{
	json_t	   *cats = gs_xgb_member(model, "cats");
	json_t	   *enc = gs_xgb_member(cats, "enc");
	json_t	   *segs = gs_xgb_member(cats, "feature_segments");
	int32_t		nf = f->n_features;
	uint8_t    *kind = NULL;
	int64_t    *count = NULL;
	size_t		bytes = 0,
				longest = INT_TEXT_MAX;
	int64_t		n_names = 0;
	char	   *scratch = NULL;
	GsCode		rc = GS_OK;

	if (!json_is_array(enc) || json_array_size(enc) == 0)
		return GS_OK;			/* trained on arrays: codes only */
	if (json_array_size(enc) != (size_t) nf)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"cats\" describes %zu features, the model has %d",
							 json_array_size(enc), nf);
	if (!json_is_array(segs) || json_array_size(segs) != (size_t) nf + 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"cats\" has no \"feature_segments\" of %d + 1 counts", nf);

	kind = f->alloc.alloc(f->alloc.ctx, (size_t) nf);
	count = f->alloc.alloc(f->alloc.ctx, sizeof(int64_t) * (size_t) nf);
	if (!kind || !count)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
		goto done;
	}
	for (int32_t j = 0; j < nf; j++)
	{
		size_t		b = 0;
		int64_t		s0,
					s1;

		if ((rc = measure(json_array_get(enc, (size_t) j), j, &kind[j], &count[j], &b, st)) != GS_OK)
			goto done;
		if (elem_int(segs, (size_t) j, &s0) != 0 || elem_int(segs, (size_t) j + 1, &s1) != 0 ||
			s1 - s0 != count[j])
		{
			rc = bad_cats(st, j, "do not agree with \"feature_segments\"");
			goto done;
		}
		if (kind[j] == GS_CATNAMES_NONE)
		{
			const char *fname = f->feature_names ? f->feature_names[j] : "";

			if (f->cat_note[0] == '\0')
				snprintf(f->cat_note, sizeof(f->cat_note),
						 "the category names of feature %d%s%.40s%s are not kept: they hold characters outside ASCII, which XGBoost stores damaged",
						 j + 1, fname[0] ? " (\"" : "", fname, fname[0] ? "\")" : "");
			count[j] = 0;
			continue;
		}
		bytes += b;
		n_names += count[j];
		if (kind[j] == GS_CATNAMES_TEXT && b > longest)
			longest = b;
	}

	if (n_names == 0)
		goto done;				/* every feature numerical */
	if ((rc = gs_catnames_new(&f->cat_names, &f->alloc, nf, kind, count, bytes, st)) != GS_OK)
		goto done;
	scratch = f->alloc.alloc(f->alloc.ctx, longest + 1);
	if (!scratch)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
		goto done;
	}
	for (int32_t j = 0; j < nf && rc == GS_OK; j++)
		if (count[j] > 0)
			rc = add_names(f, json_array_get(enc, (size_t) j), kind[j], scratch, st);
	if (rc == GS_OK)
		rc = gs_catnames_finish(f->cat_names, st);

done:
	if (kind)
		f->alloc.free(f->alloc.ctx, kind);
	if (count)
		f->alloc.free(f->alloc.ctx, count);
	if (scratch)
		f->alloc.free(f->alloc.ctx, scratch);
	return rc;
}

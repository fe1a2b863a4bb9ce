/*
 * xgb_json.c
 *	  Reading values out of a decoded XGBoost model document (xgb_load.c):
 *	  object members, integers and floats in every form XGBoost writes them
 *	  (numbers, decimal strings, bracketed strings), base_score with one
 *	  value per output group, and the per-node arrays of a tree.
 *
 * Nothing here allocates or keeps a reference: the json_t values returned
 * are borrowed from the document, which xgb_load.c frees after building the
 * forest.  Every value is checked for its type before use, since the
 * document is untrusted.
 */
#include "xgb_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Member of an object, or NULL when obj is not an object. */
json_t *
gs_xgb_member(json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

/*
 * Read an integer that XGBoost writes either as a number or as a decimal
 * string ("30").  Returns 0 on success.
 */
int
gs_xgb_json_to_int64(json_t *v, int64_t *out)
{
	if (json_is_integer(v))
	{
		*out = (int64_t) json_integer_value(v);
		return 0;
	}
	if (json_is_real(v))
	{
		double		d = json_real_value(v);

		if (d != floor(d) || fabs(d) > 9e15)
			return -1;
		*out = (int64_t) d;
		return 0;
	}
	if (json_is_string(v))
	{
		const char *s = json_string_value(v);
		char	   *end;
		long long	l;

		errno = 0;
		l = strtoll(s, &end, 10);
		if (errno != 0 || end == s || *end != '\0')
			return -1;
		*out = l;
		return 0;
	}
	return -1;
}

/*
 * Read a float32 that XGBoost writes as a number or a string such as "5E-1"
 * or "[5E-1]" (newer versions bracket it).  Returns 0 on success.
 */
static int
json_to_float(json_t *v, float *out)
{
	if (json_is_number(v))
	{
		*out = (float) json_number_value(v);
		return 0;
	}
	if (json_is_string(v))
	{
		const char *s = json_string_value(v);
		char	   *end;
		float		f;

		while (isspace((unsigned char) *s))
			s++;
		if (*s == '[')
			s++;
		errno = 0;
		f = strtof(s, &end);
		if (end == s)
			return -1;
		while (isspace((unsigned char) *end))
			end++;
		if (*end == ']')
			end++;
		if (*end != '\0')
			return -1;
		*out = f;
		return 0;
	}
	return -1;
}

/*
 * Read base_score: a number, a string with one number ("5E-1", "[5E-1]"),
 * or (XGBoost 3.1 and later) a bracketed list of one value per output
 * group ("[1E-1,2E-1,7E-1]"), or a JSON array of numbers.  Writes the
 * values to out[0..*n) and returns 0 when there is one value or exactly
 * n_groups of them.
 */
int
gs_xgb_parse_base_score(json_t *v, float *out, int n_groups, int *n)
{
	if (json_is_array(v))
	{
		size_t		k = json_array_size(v);

		if (k != 1 && k != (size_t) n_groups)
			return -1;
		for (size_t i = 0; i < k; i++)
			if (elem_float(v, i, &out[i]))
				return -1;
		*n = (int) k;
		return 0;
	}
	if (json_is_string(v))
	{
		const char *s = json_string_value(v);
		int			k = 0;
		int			bracket;

		while (isspace((unsigned char) *s))
			s++;
		bracket = *s == '[';
		if (bracket)
			s++;
		for (;;)
		{
			char	   *end;
			float		f;

			while (isspace((unsigned char) *s))
				s++;
			f = strtof(s, &end);
			if (end == s || k >= n_groups)
				return -1;
			out[k++] = f;
			s = end;
			while (isspace((unsigned char) *s))
				s++;
			if (bracket && *s == ',')
			{
				s++;
				continue;
			}
			break;
		}
		if (bracket && *s++ != ']')
			return -1;
		while (isspace((unsigned char) *s))
			s++;
		if (*s != '\0' || (k != 1 && k != n_groups))
			return -1;
		*n = k;
		return 0;
	}
	if (json_to_float(v, &out[0]))
		return -1;
	*n = 1;
	return 0;
}

/* Fetch a required array member of tree t with exactly n elements. */
GsCode
gs_xgb_tree_array(json_t *tree, const char *key, int64_t n, int32_t t, json_t **out,
				  GsStatus *st)
{
	json_t	   *a = gs_xgb_member(tree, key);

	if (!json_is_array(a))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d has no \"%s\" array", t, key);
	if ((int64_t) json_array_size(a) != n)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d has %zu entries in \"%s\" but %lld nodes",
							 t, json_array_size(a), key, (long long) n);
	*out = a;
	return GS_OK;
}

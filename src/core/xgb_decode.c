/*
 * xgb_decode.c
 *	  Decodes XGBoost model bytes (JSON or UBJSON) into a jansson document;
 *	  xgb_load.c turns the document into a validated forest.
 *
 * JSON goes through jansson, after bare NaN/Infinity tokens (which XGBoost
 * writes but JSON lacks) are neutralised; UBJSON goes through ubj_decode.c.
 * The returned document is owned by the caller (json_decref).
 */
#include "xgb_decode.h"

#include <stdlib.h>
#include <string.h>

#include "ubj_decode.h"

/*
 * XGBoost writes non-finite floats as bare NaN / Infinity / -Infinity, which
 * is not JSON.  Returns a malloc'd copy of the document in which each such
 * token outside strings is replaced by "[]" padded with spaces (an empty
 * array, which no numeric field accepts, so the value is then reported as
 * non-finite, or ignored where a categorical split makes it unused), or
 * NULL when there is none.  *oom is set when allocation fails.
 */
static char *
replace_nonfinite_tokens(const unsigned char *b, size_t len, int *oom)
{
	char	   *copy = NULL;
	int			in_string = 0;

	*oom = 0;
	for (size_t i = 0; i < len; i++)
	{
		size_t		tok = 0;

		if (in_string)
		{
			if (b[i] == '\\')
				i++;
			else if (b[i] == '"')
				in_string = 0;
			continue;
		}
		if (b[i] == '"')
		{
			in_string = 1;
			continue;
		}
		if (b[i] == 'N' && len - i >= 3 && memcmp(b + i, "NaN", 3) == 0)
			tok = 3;
		else if (b[i] == 'I' && len - i >= 8 && memcmp(b + i, "Infinity", 8) == 0)
			tok = 8;
		else if (b[i] == '-' && len - i >= 9 && memcmp(b + i, "-Infinity", 9) == 0)
			tok = 9;
		if (tok == 0)
			continue;
		if (copy == NULL)
		{
			copy = malloc(len);
			if (copy == NULL)
			{
				*oom = 1;
				return NULL;
			}
			memcpy(copy, b, len);
		}
		memset(copy + i, ' ', tok);
		copy[i] = '[';
		copy[i + 1] = ']';
		i += tok - 1;
	}
	return copy;
}

/* Decode model bytes of a known format; see xgb_decode.h. */
json_t *
gs_xgb_decode(const unsigned char *bytes, size_t len, GsModelFormat fmt, GsStatus *st)
{
	json_t	   *root;

	if (fmt == GS_FORMAT_XGBOOST_JSON)
	{
		json_error_t jerr;
		int			oom;
		char	   *patched = replace_nonfinite_tokens(bytes, len, &oom);

		if (oom)
		{
			gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			return NULL;
		}
		root = json_loadb(patched ? patched : (const char *) bytes, len, 0, &jerr);
		free(patched);
		if (root == NULL)
		{
			gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid XGBoost JSON model");
			gs_status_detail(st, "%s at line %d, column %d.", jerr.text, jerr.line, jerr.column);
			return NULL;
		}
	}
	else
	{
		char		err[256];
		GsUbjLimits ulim = {64, 0};

		root = gs_ubj_decode_ex(bytes, len, &ulim, true, err, sizeof(err));
		if (root == NULL)
		{
			gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid XGBoost UBJSON model");
			gs_status_detail(st, "%s.", err);
			return NULL;
		}
	}
	return root;
}

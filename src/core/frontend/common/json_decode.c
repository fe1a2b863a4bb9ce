/*
 * json_decode.c
 *	  Decodes the bytes of a model saved as JSON (XGBoost, CatBoost) or
 *	  UBJSON (XGBoost) into a jansson document, with the caller's interrupt
 *	  check between pieces; the formats' frontends turn the document into a
 *	  validated forest.
 *
 * JSON goes through jansson, after bare NaN/Infinity tokens (which XGBoost
 * writes but JSON lacks) are neutralised; UBJSON goes through ubj_decode.c.
 * The returned document is owned by the caller (json_decref).
 */
#include "json_decode.h"

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

/*
 * JSON is fed to jansson in pieces of FEED_CHUNK bytes, with the caller's
 * interrupt check between them (jansson parses ~40 MB/s: a few ms each).
 */
#define FEED_CHUNK ((size_t) 256 * 1024)

typedef struct JsonFeed
{
	const char *next;
	size_t		left;
	const GsInterrupt *intr;
	int			interrupted;
} JsonFeed;

/* json_load_callback's reader: the next piece, 0 at the end, -1 to stop. */
static size_t
json_feed(void *buffer, size_t buflen, void *data)
{
	JsonFeed   *feed = data;
	size_t		n = buflen < feed->left ? buflen : feed->left;
	size_t		before = feed->left;

	if (n > FEED_CHUNK)
		n = FEED_CHUNK;
	memcpy(buffer, feed->next, n);
	feed->next += n;
	feed->left -= n;
	/* poll each time another FEED_CHUNK bytes have been handed over */
	if (before / FEED_CHUNK != feed->left / FEED_CHUNK && gs_interrupted(feed->intr))
	{
		feed->interrupted = 1;
		return (size_t) -1;
	}
	return n;
}

/* GsUbjLimits.interrupted on top of a GsInterrupt, remembering that it fired. */
typedef struct UbjPoll
{
	const GsInterrupt *intr;
	int			interrupted;
} UbjPoll;

static bool
ubj_poll(void *arg)
{
	UbjPoll    *p = arg;

	if (gs_interrupted(p->intr))
		p->interrupted = 1;
	return p->interrupted;
}

/* Decode model bytes of a known format; see json_decode.h. */
json_t *
gs_json_decode(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			   const GsInterrupt *intr, GsStatus *st)
{
	json_t	   *root;

	if (fmt == GS_FORMAT_XGBOOST_JSON || fmt == GS_FORMAT_CATBOOST_JSON)
	{
		json_error_t jerr;
		int			oom;
		char	   *patched = replace_nonfinite_tokens(bytes, len, &oom);
		JsonFeed	feed;

		if (oom)
		{
			gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			return NULL;
		}
		feed.next = patched ? patched : (const char *) bytes;
		feed.left = len;
		feed.intr = intr;
		feed.interrupted = 0;
		/*
		 * CatBoost writes integers past int64 (ctr_leaf_count_limit
		 * 18446744073709551615), which jansson refuses as integers
		 */
		root = json_load_callback(json_feed, &feed,
								  fmt == GS_FORMAT_CATBOOST_JSON ? JSON_DECODE_INT_AS_REAL : 0, &jerr);
		free(patched);
		if (feed.interrupted)
		{
			json_decref(root);
			gs_status_set(st, GS_ERR_CANCELLED, "loading the model was interrupted");
			return NULL;
		}
		if (root == NULL)
		{
			gs_status_set(st, GS_ERR_INVALID_MODEL, fmt == GS_FORMAT_CATBOOST_JSON ?
						  "invalid CatBoost JSON model" : "invalid XGBoost JSON model");
			gs_status_detail(st, "%s at line %d, column %d.", jerr.text, jerr.line, jerr.column);
			return NULL;
		}
	}
	else
	{
		char		err[256];
		UbjPoll		poll = {intr, 0};
		GsUbjLimits ulim = {.max_depth = 64, .interrupted = ubj_poll, .interrupt_arg = &poll};

		root = gs_ubj_decode_ex(bytes, len, &ulim, true, err, sizeof(err));
		if (root == NULL && poll.interrupted)
		{
			gs_status_set(st, GS_ERR_CANCELLED, "loading the model was interrupted");
			return NULL;
		}
		if (root == NULL)
		{
			gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid XGBoost UBJSON model");
			gs_status_detail(st, "%s.", err);
			return NULL;
		}
	}
	return root;
}

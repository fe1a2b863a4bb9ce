/*
 * ubj_decode.c - strict, hostile-input-safe UBJSON (draft 12) decoder that
 * builds a jansson tree.  See ubj_decode.h for the contract.
 *
 * This file holds the container parser and the public entry points
 * (gs_ubj_decode, gs_ubj_decode_ex); the low-level reader (bounds checks,
 * markers, integer/float/string payloads, scalar values, optimized-container
 * headers, typed arrays) is ubj_reader.c, and ubj_internal.h is what the
 * two share.
 *
 * Design notes:
 *  - Iterative, not recursive: open containers live on a heap-allocated
 *    frame stack, so deep nesting can never overflow the C stack; the
 *    nesting limit is enforced explicitly.
 *  - Every read is bounds-checked against the remaining input before it
 *    happens.  Counts of optimized containers are checked against the
 *    remaining input (count * minimum encoded element size) and against the
 *    element cap before anything is allocated or looped over.
 *  - Every value is attached to its parent as soon as it is created, so on
 *    any error a single json_decref() of the root frees everything.
 *  - Strings and keys are UTF-8 validated (by ubj_reader.c; strictly: no
 *    overlongs, no surrogates, nothing above U+10FFFF), so the jansson
 *    *_nocheck constructors are used and a NULL from jansson can only mean
 *    out-of-memory.
 *  - Error offsets in messages are 0-based byte offsets into the input.
 *
 * Memory: the frame stack is malloc'd here and freed before returning; the
 * returned tree is the caller's (see ubj_decode.h).
 *
 * No globals, no PostgreSQL headers, no abort()/exit().
 */
#include "ubj_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A new empty JSON object.  Not json_object(): inside a PostgreSQL backend
 * that name resolves to the server's own SQL function json_object() (the
 * executable's symbols come first), which crashes.  json_pack() is resolved
 * inside libjansson, so it is safe in both worlds.
 */
static json_t *
ubj_new_object(void)
{
	return json_pack("{}");
}

/* One open container on the explicit parse stack. */
typedef struct UbjFrame
{
	json_t	   *node;			/* borrowed: owned by its parent or root */
	bool		is_object;
	bool		counted;		/* '#' given: no closing marker */
	unsigned char type;			/* '$' element type, 0 when untyped */
	uint64_t	left;			/* elements still expected when counted */
} UbjFrame;

/*
 * Attach a freshly created value v (new reference, consumed in all cases)
 * to the innermost open container, or make it the root when none is open.
 */
static bool
ubj_attach(UbjReader *r, UbjFrame *parent, json_t **root, json_t *v,
		   const unsigned char *key, size_t keylen)
{
	int			rc;

	if (parent == NULL)
	{
		*root = v;
		return true;
	}
	if (parent->is_object)
	{
#if JANSSON_VERSION_HEX >= 0x020e00
		rc = json_object_setn_new_nocheck(parent->node, (const char *) key,
										  keylen, v);
#else
		char	   *k = malloc(keylen + 1);

		if (k == NULL)
		{
			json_decref(v);
			return gs_ubj_oom(r);
		}
		memcpy(k, key, keylen);
		k[keylen] = '\0';
		rc = json_object_set_new_nocheck(parent->node, k, v);
		free(k);
#endif
	}
	else
		rc = json_array_append_new(parent->node, v);
	if (rc != 0)
		return gs_ubj_oom(r);
	return true;
}

/*
 * Push a frame for a newly opened container, growing the stack as needed.
 */
static bool
ubj_push(UbjReader *r, UbjFrame **stack, size_t *cap, size_t depth,
		 const UbjFrame *f)
{
	if (depth == *cap)
	{
		size_t		ncap = *cap ? *cap * 2 : 16;
		UbjFrame   *ns;

		if (ncap < *cap || ncap > SIZE_MAX / sizeof(UbjFrame))
			return gs_ubj_oom(r);
		ns = realloc(*stack, ncap * sizeof(UbjFrame));
		if (ns == NULL)
			return gs_ubj_oom(r);
		*stack = ns;
		*cap = ncap;
	}
	(*stack)[depth] = *f;
	return true;
}

/*
 * Public entry point; see ubj_decode.h.  Runs the iterative parse loop:
 * each iteration either closes the innermost container or reads one
 * (key and) value and attaches it.
 */
json_t *
gs_ubj_decode(const unsigned char *buf, size_t len, const GsUbjLimits *lim,
			  char *err, size_t errlen)
{
	return gs_ubj_decode_ex(buf, len, lim, false, err, errlen);
}

/* The same, optionally decoding non-finite floats as []; see ubj_decode.h. */
json_t *
gs_ubj_decode_ex(const unsigned char *buf, size_t len, const GsUbjLimits *lim,
				 bool nonfinite_empty, char *err, size_t errlen)
{
	UbjReader	r;
	UbjFrame   *stack = NULL;
	size_t		cap = 0,
				depth = 0;
	json_t	   *root = NULL;
	bool		have_root = false;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	r.buf = buf;
	r.len = len;
	r.pos = 0;
	r.max_depth = (lim && lim->max_depth) ? lim->max_depth : GS_UBJ_DEFAULT_MAX_DEPTH;
	r.max_elements = lim ? lim->max_elements : 0;
	r.nvalues = 0;
	r.next_poll = GS_UBJ_POLL_VALUES;
	r.interrupted = lim ? lim->interrupted : NULL;
	r.interrupt_arg = lim ? lim->interrupt_arg : NULL;
	r.nonfinite_empty = nonfinite_empty;
	r.err = err;
	r.errlen = errlen;

	if (buf == NULL && len != 0)
	{
		gs_ubj_error(&r, "NULL UBJSON input buffer");
		return NULL;
	}
	if (buf == NULL)
		r.buf = (const unsigned char *) "";

	for (;;)
	{
		const unsigned char *key = NULL;
		size_t		keylen = 0,
					at;
		unsigned char m;
		UbjFrame   *parent = NULL;

		if (depth == 0)
		{
			if (have_root)
				break;
			if (!ubj_read_marker(&r, &m, &at))
				goto fail;
		}
		else
		{
			parent = &stack[depth - 1];
			if (parent->counted)
			{
				if (parent->left == 0)
				{
					depth--;
					continue;
				}
			}
			else
			{
				if (!ubj_skip_noops(&r))
					goto fail;
				if (r.buf[r.pos] == (parent->is_object ? '}' : ']'))
				{
					r.pos++;
					depth--;
					continue;
				}
			}
			if (parent->is_object && !gs_ubj_read_key(&r, &key, &keylen))
				goto fail;
			if (parent->type)
			{
				m = parent->type;
				at = r.pos;
			}
			else if (!ubj_read_marker(&r, &m, &at))
				goto fail;
			if (parent->counted)
				parent->left--;
		}

		if (m == '[' || m == '{')
		{
			UbjFrame	f;
			json_t	   *node;

			f.is_object = (m == '{');
			if (!gs_ubj_read_container_header(&r, f.is_object, at,
											  &f.type, &f.counted, &f.left))
				goto fail;
			if (depth >= r.max_depth)
			{
				gs_ubj_error(&r, "UBJSON nesting deeper than %zu at byte %zu",
							 r.max_depth, at);
				goto fail;
			}
			if (!ubj_count_values(&r, 1))
				goto fail;
			node = f.is_object ? ubj_new_object() : json_array();
			if (node == NULL)
			{
				gs_ubj_oom(&r);
				goto fail;
			}
			if (!ubj_attach(&r, parent, &root, node, key, keylen))
				goto fail;
			have_root = true;
			if (!f.is_object && f.type)
			{
				/* typed array: scalar payloads only, no frame needed */
				if (!gs_ubj_fill_typed_array(&r, node, f.type, f.left))
					goto fail;
				continue;
			}
			f.node = node;
			if (!ubj_push(&r, &stack, &cap, depth, &f))
				goto fail;
			depth++;
		}
		else
		{
			json_t	   *v = gs_ubj_make_scalar(&r, m, at);

			if (v == NULL)
				goto fail;
			if (!ubj_attach(&r, parent, &root, v, key, keylen))
				goto fail;
			have_root = true;
		}
	}

	free(stack);
	if (r.pos != r.len)
	{
		gs_ubj_error(&r, "trailing bytes after UBJSON value at byte %zu", r.pos);
		json_decref(root);
		return NULL;
	}
	return root;

fail:
	free(stack);
	json_decref(root);
	if (err != NULL && errlen > 0 && err[0] == '\0')
		snprintf(err, errlen, "UBJSON decoding failed at byte %zu", r.pos);
	return NULL;
}


/*
 * ubj_internal.h
 *	  What the two files of the UBJSON decoder share: the reader state
 *	  (UbjReader), the per-value helpers that the parse loop calls for every
 *	  value (static inline, so splitting the decoder costs no calls on the
 *	  hot path), and the reader functions of ubj_reader.c used by the
 *	  container parser in ubj_decode.c.
 *	  Not an API: only ubj_decode.c and ubj_reader.c include it; the public
 *	  contract is ubj_decode.h.
 *
 * Memory: a UbjReader lives on gs_ubj_decode_ex()'s stack for one call and
 * only borrows the input buffer and the caller's error buffer.  Functions
 * that return a json_t * return a new reference; the caller attaches it at
 * once so that freeing the root frees everything.
 */
#ifndef GS_UBJ_INTERNAL_H
#define GS_UBJ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ubj_decode.h"

/* Decoder state for one gs_ubj_decode() call. */
typedef struct UbjReader
{
	const unsigned char *buf;
	size_t		len;
	size_t		pos;
	size_t		max_depth;
	size_t		max_elements;	/* 0 = unlimited */
	size_t		nvalues;		/* values created so far */
	size_t		next_poll;		/* nvalues at which to call interrupted */
	bool		(*interrupted) (void *arg);
	void	   *interrupt_arg;
	bool		nonfinite_empty;	/* NaN/Inf become [] instead of an error */
	char	   *err;
	size_t		errlen;
} UbjReader;

#if defined(__GNUC__)
#define UBJ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define UBJ_PRINTF(f, a)
#endif

/* ubj_reader.c */
extern bool gs_ubj_error(UbjReader *r, const char *fmt,...) UBJ_PRINTF(2, 3);
extern const char *gs_ubj_marker_str(unsigned char c, char *out);
extern bool gs_ubj_oom(UbjReader *r);
extern bool gs_ubj_read_key(UbjReader *r, const unsigned char **key,
							size_t *keylen);
extern json_t *gs_ubj_make_scalar(UbjReader *r, unsigned char m, size_t at);
extern bool gs_ubj_read_container_header(UbjReader *r, bool is_object,
										 size_t open_at, unsigned char *type,
										 bool *counted, uint64_t *count);
extern bool gs_ubj_fill_typed_array(UbjReader *r, json_t *arr,
									unsigned char t, uint64_t count);

/*
 * Ensure n more bytes are available at the current position; otherwise
 * record a truncation error at position "at".
 */
static inline bool
ubj_need(UbjReader *r, size_t n, size_t at)
{
	if (r->len - r->pos < n)
		return gs_ubj_error(r, "truncated UBJSON at byte %zu", at);
	return true;
}

/*
 * Account for one more JSON value about to be created, enforcing
 * max_elements.  Also where GsUbjLimits.interrupted is polled, once every
 * GS_UBJ_POLL_VALUES values (gs_ubj_fill_typed_array polls inside long
 * float32 arrays, which it counts at once).
 */
static inline bool
ubj_count_values(UbjReader *r, uint64_t n)
{
	if (r->max_elements != 0 &&
		(n > r->max_elements || r->nvalues > r->max_elements - n))
		return gs_ubj_error(r, "UBJSON document has more than %zu values (at byte %zu)",
							r->max_elements, r->pos);
	r->nvalues += (size_t) n;
	if (r->interrupted && r->nvalues >= r->next_poll)
	{
		r->next_poll = r->nvalues + GS_UBJ_POLL_VALUES;
		if (r->interrupted(r->interrupt_arg))
			return gs_ubj_error(r, "UBJSON decoding interrupted at byte %zu", r->pos);
	}
	return true;
}

/*
 * Skip any no-op 'N' markers at the current position.  Returns false (with
 * a truncation error) if the input ends, so the caller can then read one
 * byte unconditionally.
 */
static inline bool
ubj_skip_noops(UbjReader *r)
{
	while (r->pos < r->len && r->buf[r->pos] == 'N')
		r->pos++;
	return ubj_need(r, 1, r->pos);
}

/* Read a value marker, skipping no-ops; *at receives its offset. */
static inline bool
ubj_read_marker(UbjReader *r, unsigned char *m, size_t *at)
{
	if (!ubj_skip_noops(r))
		return false;
	*at = r->pos;
	*m = r->buf[r->pos++];
	return true;
}

#endif							/* GS_UBJ_INTERNAL_H */

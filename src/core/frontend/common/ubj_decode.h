/*
 * ubj_decode.h - strict UBJSON (draft 12) to jansson decoder.
 *
 * Part of the PostgreSQL-free scoring core of pg_gpuscore: this header and
 * its implementation use only the C11 standard library and jansson.  They
 * hold no global state, never call abort()/exit(), and are designed to
 * return an error (never crash, never read out of bounds) on arbitrary,
 * possibly hostile input.
 *
 * Purpose: XGBoost writes its model as UBJSON when asked for ".ubj" /
 * save_raw("ubj").  gs_ubj_decode() turns such a buffer into the same
 * jansson tree that json_loads() would produce for the equivalent ".json"
 * model (float32 values become JSON reals holding the exact float value
 * widened to double).
 *
 * Supported: { } [ ] Z N T F i U I l L d D C S, object keys (length-typed
 * integer + bytes, no 'S' marker), optimized containers [$t#n [#n {$t#n {#n
 * with scalar element types.  No-op 'N' is skipped wherever a value marker
 * or an object key is expected (not inside typed payloads, not after the
 * root value).
 * Rejected as unsupported: 'H' (high-precision number), container element
 * types ($[ and ${), and typed arrays of zero-size element types ($Z, $T,
 * $F), which would let a few bytes of input request an unbounded number of
 * values.  Non-finite floats (NaN/Inf) are rejected because JSON/jansson
 * cannot represent them.  Strings and keys must be valid UTF-8; keys must
 * not contain NUL bytes.  Duplicate object keys: the later one wins.
 *
 * Memory ownership: the input buffer is only read and is not retained.  On
 * success the returned json_t * is a new reference owned by the caller, who
 * must json_decref() it.  On failure NULL is returned, nothing is leaked,
 * and (if err != NULL and errlen > 0) a NUL-terminated lower-case message
 * is written to err, e.g. "truncated UBJSON at byte 1234".
 */
#ifndef GS_UBJ_DECODE_H
#define GS_UBJ_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/*
 * Resource limits for gs_ubj_decode().
 *
 * max_depth:    maximum container nesting (arrays and objects both count;
 *               the root container is depth 1).  0 selects the default of
 *               GS_UBJ_DEFAULT_MAX_DEPTH.  The decoder is iterative, so a
 *               large value costs heap, not C stack.
 * max_elements: maximum number of JSON values (scalars and containers,
 *               the root included) created for the whole document; 0 means
 *               no cap.  Untrusted input should set a cap: without one, a
 *               document can still only create O(len) values, but each one
 *               costs tens of bytes of heap.
 *
 * interrupted:  when not NULL, called with interrupt_arg about every 64K
 *               values; returning true stops the decoding with the error
 *               "UBJSON decoding interrupted" (the caller knows why).
 *
 * Passing lim == NULL is the same as { 0, 0, NULL, NULL }.
 */
typedef struct GsUbjLimits
{
	size_t		max_depth;
	size_t		max_elements;
	bool		(*interrupted) (void *arg);
	void	   *interrupt_arg;
} GsUbjLimits;

/* Values decoded between two calls of GsUbjLimits.interrupted. */
#define GS_UBJ_POLL_VALUES 65536

#define GS_UBJ_DEFAULT_MAX_DEPTH 64

/*
 * Decode exactly one UBJSON value occupying all of buf[0 .. len-1].
 *
 * Returns a new reference on success, or NULL with a message in err
 * (truncated to errlen-1 bytes) on any error, including trailing bytes
 * after the value, truncation, malformed or unsupported markers, limit
 * violations and allocation failure.
 */
json_t	   *gs_ubj_decode(const unsigned char *buf, size_t len,
						  const GsUbjLimits *lim, char *err, size_t errlen);

/*
 * The same; with nonfinite_empty, a NaN or infinite float decodes as an
 * empty array (XGBoost writes NaN split conditions for categorical splits;
 * xgb_decode.c gives JSON's bare NaN the same treatment, and no numeric
 * field accepts an array, so elsewhere it is still an error).
 */
json_t	   *gs_ubj_decode_ex(const unsigned char *buf, size_t len,
							 const GsUbjLimits *lim, bool nonfinite_empty,
							 char *err, size_t errlen);

#endif							/* GS_UBJ_DECODE_H */

/*
 * ubj_reader.c
 *	  The low-level reader of the UBJSON decoder (ubj_decode.c): error
 *	  messages, integer, length, float and string payloads, object keys,
 *	  scalar values, optimized-container headers and the filling of typed
 *	  arrays.  Every read is bounds-checked against the remaining input
 *	  before it happens; strings and keys are UTF-8 validated here.
 *
 * The reader state (UbjReader, ubj_internal.h) belongs to one
 * gs_ubj_decode_ex() call and only borrows the input buffer and the error
 * buffer.  Values are returned as new jansson references, or attached at
 * once to a container the caller has already attached, so one json_decref()
 * of the root frees everything on any error.
 *
 * No globals, no PostgreSQL headers, no abort()/exit().
 */
#include "ubj_internal.h"
#include "util/utf8_valid.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * Record an error message (printf-style) in the caller's buffer, if any.
 * Always returns false so callers can write "return gs_ubj_error(...)".
 */
bool
gs_ubj_error(UbjReader *r, const char *fmt,...)
{
	va_list		ap;

	if (r->err == NULL || r->errlen == 0)
		return false;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return false;
}

/*
 * Render a marker byte for an error message: 'X' for printable ASCII,
 * 0xNN otherwise.  out must hold at least 8 bytes.
 */
const char *
gs_ubj_marker_str(unsigned char c, char *out)
{
	if (c > 0x20 && c < 0x7f)
		snprintf(out, 8, "'%c'", (char) c);
	else
		snprintf(out, 8, "0x%02x", (unsigned) c);
	return out;
}

/* Report an allocation failure at the current position. */
bool
gs_ubj_oom(UbjReader *r)
{
	return gs_ubj_error(r, "out of memory decoding UBJSON at byte %zu", r->pos);
}

/*
 * Encoded payload size of a fixed-size integer marker (i U I l L), or 0 if
 * the marker is not an integer marker.
 */
static size_t
ubj_int_size(unsigned char m)
{
	switch (m)
	{
		case 'i':
		case 'U':
			return 1;
		case 'I':
			return 2;
		case 'l':
			return 4;
		case 'L':
			return 8;
		default:
			return 0;
	}
}

/* Read n (1..8) bytes at the current position as a big-endian uint64. */
static uint64_t
ubj_read_be(UbjReader *r, size_t n)
{
	uint64_t	u = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		u = (u << 8) | r->buf[r->pos + i];
	r->pos += n;
	return u;
}

/*
 * Read the big-endian payload of integer marker m (already consumed) into
 * *out, sign-extending for the signed types.  Avoids implementation-defined
 * unsigned-to-signed conversions.
 */
static bool
ubj_read_int_payload(UbjReader *r, unsigned char m, int64_t *out)
{
	size_t		n = ubj_int_size(m);
	uint64_t	u;
	unsigned	bits;

	if (!ubj_need(r, n, r->pos))
		return false;
	u = ubj_read_be(r, n);
	bits = (unsigned) (n * 8);
	if (m == 'U')
		*out = (int64_t) u;
	else if (bits == 64)
		*out = (u > (uint64_t) INT64_MAX) ? -(int64_t) (~u) - 1 : (int64_t) u;
	else if (u >> (bits - 1))
		*out = (int64_t) u - ((int64_t) 1 << bits);
	else
		*out = (int64_t) u;
	return true;
}

/*
 * Read a typed integer used as a length or count (marker + payload, no
 * no-op skipping).  "what" names it for error messages.  Negative values
 * and non-integer markers are errors.
 */
static bool
ubj_read_length(UbjReader *r, const char *what, uint64_t *out)
{
	size_t		at = r->pos;
	unsigned char m;
	int64_t		v;
	char		ms[8];

	if (!ubj_need(r, 1, at))
		return false;
	m = r->buf[r->pos];
	if (ubj_int_size(m) == 0)
		return gs_ubj_error(r, "invalid UBJSON %s type marker %s at byte %zu (expected i, U, I, l or L)",
							what, gs_ubj_marker_str(m, ms), at);
	r->pos++;
	if (!ubj_read_int_payload(r, m, &v))
		return false;
	if (v < 0)
		return gs_ubj_error(r, "negative UBJSON %s %lld at byte %zu",
							what, (long long) v, at);
	*out = (uint64_t) v;
	return true;
}

/*
 * Read a length-prefixed string body (the part after an 'S' marker, or an
 * object key).  On success *s and *n point into the input buffer.  "what"
 * names it for error messages.
 */
static bool
ubj_read_str_body(UbjReader *r, const char *what, const unsigned char **s,
				  size_t *n)
{
	size_t		at = r->pos;
	uint64_t	slen;
	char		lenwhat[64];

	snprintf(lenwhat, sizeof lenwhat, "%s length", what);
	if (!ubj_read_length(r, lenwhat, &slen))
		return false;
	if (slen > (uint64_t) (r->len - r->pos))
		return gs_ubj_error(r, "UBJSON %s length %llu exceeds remaining input at byte %zu",
							what, (unsigned long long) slen, at);
	*s = r->buf + r->pos;
	*n = (size_t) slen;
	if (!gs_utf8_valid(*s, *n))
		return gs_ubj_error(r, "invalid UTF-8 in UBJSON %s at byte %zu", what, at);
	r->pos += *n;
	return true;
}

/*
 * Read an object key (no-ops allowed before it).  Keys with embedded NUL
 * bytes are rejected.
 */
bool
gs_ubj_read_key(UbjReader *r, const unsigned char **key, size_t *keylen)
{
	size_t		at;

	if (!ubj_skip_noops(r))
		return false;
	at = r->pos;
	if (!ubj_read_str_body(r, "object key", key, keylen))
		return false;
	if (memchr(*key, '\0', *keylen) != NULL)
		return gs_ubj_error(r, "UBJSON object key contains a NUL byte at byte %zu", at);
	return true;
}

/* Decode a big-endian float32 at the current position (4 bytes present). */
static float
ubj_read_f32(UbjReader *r)
{
	uint32_t	u = (uint32_t) ubj_read_be(r, 4);
	float		f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* Decode a big-endian float64 at the current position (8 bytes present). */
static double
ubj_read_f64(UbjReader *r)
{
	uint64_t	u = ubj_read_be(r, 8);
	double		d;

	memcpy(&d, &u, sizeof d);
	return d;
}

/* Wrap a finite double as a JSON real; NaN/Inf are errors. */
static json_t *
ubj_make_real(UbjReader *r, double d, size_t at)
{
	json_t	   *v;

	if (!isfinite(d) && r->nonfinite_empty)
	{
		/* the convention of xgb_decode.c for XGBoost's NaN: an empty array */
		v = json_array();
		if (v == NULL)
			gs_ubj_oom(r);
		return v;
	}
	if (!isfinite(d))
	{
		gs_ubj_error(r, "non-finite UBJSON float at byte %zu (not representable in JSON)", at);
		return NULL;
	}
	v = json_real(d);
	if (v == NULL)
		gs_ubj_oom(r);
	return v;
}

/*
 * Create the scalar value whose marker m (at offset "at") has already been
 * consumed or is implied by a '$' container type, reading its payload.
 * Returns a new reference, or NULL with an error recorded.  Container
 * markers are handled by the caller and are not accepted here.
 */
json_t *
gs_ubj_make_scalar(UbjReader *r, unsigned char m, size_t at)
{
	json_t	   *v = NULL;
	int64_t		iv;
	const unsigned char *s;
	size_t		n;
	char		ms[8];

	switch (m)
	{
		case 'Z':
		case 'T':
		case 'F':
		case 'i':
		case 'U':
		case 'I':
		case 'l':
		case 'L':
		case 'd':
		case 'D':
		case 'C':
		case 'S':
			break;
		case 'H':
			gs_ubj_error(r, "unsupported UBJSON high-precision number ('H') at byte %zu", at);
			return NULL;
		case ']':
		case '}':
			gs_ubj_error(r, "unexpected UBJSON container end %s at byte %zu",
						 gs_ubj_marker_str(m, ms), at);
			return NULL;
		default:
			gs_ubj_error(r, "unknown UBJSON type marker %s at byte %zu",
						 gs_ubj_marker_str(m, ms), at);
			return NULL;
	}
	if (!ubj_count_values(r, 1))
		return NULL;

	switch (m)
	{
		case 'Z':
			v = json_null();
			break;
		case 'T':
			v = json_true();
			break;
		case 'F':
			v = json_false();
			break;
		case 'd':
			if (!ubj_need(r, 4, r->pos))
				return NULL;
			return ubj_make_real(r, (double) ubj_read_f32(r), at);
		case 'D':
			if (!ubj_need(r, 8, r->pos))
				return NULL;
			return ubj_make_real(r, ubj_read_f64(r), at);
		case 'C':
			if (!ubj_need(r, 1, r->pos))
				return NULL;
			if (r->buf[r->pos] >= 0x80)
			{
				gs_ubj_error(r, "invalid UBJSON char 0x%02x at byte %zu (must be ASCII)",
							 (unsigned) r->buf[r->pos], r->pos);
				return NULL;
			}
			v = json_stringn_nocheck((const char *) r->buf + r->pos, 1);
			r->pos++;
			break;
		case 'S':
			if (!ubj_read_str_body(r, "string", &s, &n))
				return NULL;
			v = json_stringn_nocheck((const char *) s, n);
			break;
		default:				/* integers */
			if (!ubj_read_int_payload(r, m, &iv))
				return NULL;
			v = json_integer((json_int_t) iv);
			break;
	}
	if (v == NULL)
		gs_ubj_oom(r);
	return v;
}

/*
 * Minimum number of input bytes one element of a '$'-typed container with
 * element type t occupies (excluding any key), or 0 for the payload-less
 * types Z, T and F.
 */
static size_t
ubj_payload_min(unsigned char t)
{
	switch (t)
	{
		case 'i':
		case 'U':
		case 'C':
			return 1;
		case 'I':
		case 'S':				/* length marker + at least one length byte */
			return 2;
		case 'l':
		case 'd':
			return 4;
		case 'L':
		case 'D':
			return 8;
		default:
			return 0;
	}
}

/*
 * Parse the optional optimized-container header that may follow an opening
 * '[' or '{' (already consumed, at offset open_at): "$<type>#<count>" or
 * "#<count>".  Validates the element type and checks the count against the
 * remaining input and the element cap before anything is allocated.
 */
bool
gs_ubj_read_container_header(UbjReader *r, bool is_object, size_t open_at,
							 unsigned char *type, bool *counted,
							 uint64_t *count)
{
	const char *what = is_object ? "object count" : "array count";
	size_t		minsz,
				at;
	char		ms[8];

	*type = 0;
	*counted = false;
	*count = 0;

	if (r->pos < r->len && r->buf[r->pos] == '$')
	{
		unsigned char t;

		r->pos++;
		if (!ubj_need(r, 1, r->pos))
			return false;
		at = r->pos;
		t = r->buf[r->pos++];
		switch (t)
		{
			case 'i':
			case 'U':
			case 'I':
			case 'l':
			case 'L':
			case 'd':
			case 'D':
			case 'C':
			case 'S':
				break;
			case 'Z':
			case 'T':
			case 'F':
				if (!is_object)
					return gs_ubj_error(r, "unsupported UBJSON typed array of zero-size type %s at byte %zu",
										gs_ubj_marker_str(t, ms), at);
				break;
			case '[':
			case '{':
				return gs_ubj_error(r, "unsupported UBJSON container element type %s at byte %zu",
									gs_ubj_marker_str(t, ms), at);
			case 'H':
				return gs_ubj_error(r, "unsupported UBJSON high-precision number ('H') at byte %zu", at);
			default:
				return gs_ubj_error(r, "invalid UBJSON container element type %s at byte %zu",
									gs_ubj_marker_str(t, ms), at);
		}
		if (!ubj_need(r, 1, r->pos))
			return false;
		if (r->buf[r->pos] != '#')
			return gs_ubj_error(r, "UBJSON typed container at byte %zu lacks a '#' count", open_at);
		*type = t;
	}

	if (r->pos < r->len && r->buf[r->pos] == '#')
	{
		r->pos++;
		at = r->pos;
		if (!ubj_read_length(r, what, count))
			return false;
		if (is_object)
			minsz = 2 + (*type ? ubj_payload_min(*type) : 1);
		else
			minsz = *type ? ubj_payload_min(*type) : 1;
		/* minsz >= 1 here: zero-size types were rejected for arrays */
		if (*count > (uint64_t) ((r->len - r->pos) / minsz))
			return gs_ubj_error(r, "UBJSON %s %llu exceeds remaining input at byte %zu",
								what, (unsigned long long) *count, at);
		if (r->max_elements != 0 &&
			*count > (uint64_t) (r->max_elements - r->nvalues))
			return gs_ubj_error(r, "UBJSON document has more than %zu values (%s %llu at byte %zu)",
								r->max_elements, what, (unsigned long long) *count, at);
		*counted = true;
	}
	return true;
}

/*
 * Fill the (already attached) array arr with count elements of scalar type
 * t, whose payloads follow back to back.  float32 ('d') gets a tight loop
 * because XGBoost stores large float arrays this way.  The count was
 * already validated against the remaining input and the element cap.
 */
bool
gs_ubj_fill_typed_array(UbjReader *r, json_t *arr, unsigned char t,
						uint64_t count)
{
	uint64_t	i;

	if (t == 'd')
	{
		/* count * 4 <= remaining input was checked by the header parser */
		if (!ubj_count_values(r, count))
			return false;
		for (i = 0; i < count; i++)
		{
			size_t		at = r->pos;
			json_t	   *v;

			/* counted at once above: poll inside long arrays too */
			if (r->interrupted && (i + 1) % GS_UBJ_POLL_VALUES == 0 &&
				r->interrupted(r->interrupt_arg))
				return gs_ubj_error(r, "UBJSON decoding interrupted at byte %zu", r->pos);
			v = ubj_make_real(r, (double) ubj_read_f32(r), at);
			if (v == NULL)
				return false;
			if (json_array_append_new(arr, v) != 0)
				return gs_ubj_oom(r);
		}
		return true;
	}

	for (i = 0; i < count; i++)
	{
		json_t	   *v = gs_ubj_make_scalar(r, t, r->pos);

		if (v == NULL)
			return false;
		if (json_array_append_new(arr, v) != 0)
			return gs_ubj_oom(r);
	}
	return true;
}

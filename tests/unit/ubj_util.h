/*
 * ubj_util.h
 *	  Helpers of the UBJSON decoder tests (test_ubj.c, test_ubj_model.c):
 *	  TAP output, decoding from an exact-size copy (so ASan sees a read past
 *	  the end), a tiny UBJSON writer to build documents by hand, a JSON
 *	  comparison tolerant of float32 rounding, and expectations (a document
 *	  decodes to given JSON, or fails with a given message; every prefix
 *	  and byte mutation fails cleanly).
 */
#ifndef GS_TEST_UBJ_UTIL_H
#define GS_TEST_UBJ_UTIL_H

#include "frontend/common/ubj_decode.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static int	g_tests __attribute__((unused)) = 0;
static int	g_failed __attribute__((unused)) = 0;

/* Byte-array literal helper: expands to "pointer, length". */
#define BYTES(...) \
	(const unsigned char[]){__VA_ARGS__}, sizeof((const unsigned char[]){__VA_ARGS__})

/* Print one TAP result line; returns cond. */
static inline int
check(int cond, const char *fmt,...)
{
	va_list		ap;

	g_tests++;
	if (!cond)
		g_failed++;
	printf("%s %d - ", cond ? "ok" : "not ok", g_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return cond;
}

/* Print a TAP diagnostic line. */
static inline void
diag(const char *fmt,...)
{
	va_list		ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Abort the test program on allocation failure (test code only). */
static inline void *
xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
	{
		fprintf(stderr, "test: out of memory\n");
		exit(2);
	}
	return p;
}

/*
 * Decode from an exact-size heap copy of buf so ASan sees over-reads.
 */
static inline json_t *
decode(const unsigned char *buf, size_t n, const GsUbjLimits *lim,
	   char *err, size_t errlen)
{
	unsigned char *copy = xmalloc(n);
	json_t	   *v;

	if (n)
		memcpy(copy, buf, n);
	v = gs_ubj_decode(copy, n, lim, err, errlen);
	free(copy);
	return v;
}

/* ---------------------------------------------------------------------
 * A tiny UBJSON writer used to build test documents by hand.
 * ------------------------------------------------------------------- */

/* Growable byte buffer. */
typedef struct Buf
{
	unsigned char *p;
	size_t		n;
	size_t		cap;
} Buf;

/* Append n raw bytes. */
static inline void
put(Buf *b, const void *src, size_t n)
{
	if (b->n + n > b->cap)
	{
		size_t		ncap = b->cap ? b->cap : 256;
		unsigned char *np;

		while (ncap < b->n + n)
			ncap *= 2;
		np = realloc(b->p, ncap);
		if (np == NULL)
		{
			fprintf(stderr, "test: out of memory\n");
			exit(2);
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

/* Append one byte. */
static inline void
put_u8(Buf *b, unsigned v)
{
	unsigned char c = (unsigned char) v;

	put(b, &c, 1);
}

/* Append the low nbytes of v, big-endian. */
static inline void
put_be(Buf *b, uint64_t v, int nbytes)
{
	int			i;

	for (i = nbytes - 1; i >= 0; i--)
		put_u8(b, (unsigned) ((v >> (8 * i)) & 0xFF));
}

/* Append a float32, big-endian. */
static inline void
put_f32(Buf *b, float f)
{
	uint32_t	u;

	memcpy(&u, &f, sizeof u);
	put_be(b, u, 4);
}

/* Object key as XGBoost writes it: 'L' int64 length, then bytes. */
static inline void
w_key(Buf *b, const char *k)
{
	put_u8(b, 'L');
	put_be(b, (uint64_t) strlen(k), 8);
	put(b, k, strlen(k));
}

/* String value as XGBoost writes it. */
static inline void
w_str(Buf *b, const char *s)
{
	put_u8(b, 'S');
	w_key(b, s);
}

/* Integer value using XGBoost's smallest-marker rule. */
static inline void
w_int(Buf *b, int64_t i)
{
	if (i > INT8_MIN && i < INT8_MAX)
	{
		put_u8(b, 'i');
		put_be(b, (uint64_t) i, 1);
	}
	else if (i > INT16_MIN && i < INT16_MAX)
	{
		put_u8(b, 'I');
		put_be(b, (uint64_t) i, 2);
	}
	else if (i > INT32_MIN && i < INT32_MAX)
	{
		put_u8(b, 'l');
		put_be(b, (uint64_t) i, 4);
	}
	else
	{
		put_u8(b, 'L');
		put_be(b, (uint64_t) i, 8);
	}
}

/* Typed array header "[$<t>#L<n>". */
static inline void
w_typed_hdr(Buf *b, char t, int64_t n)
{
	put_u8(b, '[');
	put_u8(b, '$');
	put_u8(b, (unsigned char) t);
	put_u8(b, '#');
	put_u8(b, 'L');
	put_be(b, (uint64_t) n, 8);
}

/* float32 typed array. */
static inline void
w_f32s(Buf *b, const float *v, int n)
{
	int			i;

	w_typed_hdr(b, 'd', n);
	for (i = 0; i < n; i++)
		put_f32(b, v[i]);
}

/* int32 typed array. */
static inline void
w_i32s(Buf *b, const int32_t *v, int n)
{
	int			i;

	w_typed_hdr(b, 'l', n);
	for (i = 0; i < n; i++)
		put_be(b, (uint64_t) (int64_t) v[i], 4);
}

/* uint8 typed array. */
static inline void
w_u8s(Buf *b, const uint8_t *v, int n)
{
	int			i;

	w_typed_hdr(b, 'U', n);
	for (i = 0; i < n; i++)
		put_u8(b, v[i]);
}

/* Counted untyped array header "[#L<n>", as XGBoost writes JsonArray. */
static inline void
w_arr(Buf *b, int64_t n)
{
	put_u8(b, '[');
	put_u8(b, '#');
	put_u8(b, 'L');
	put_be(b, (uint64_t) n, 8);
}

/* ---------------------------------------------------------------------
 * Float32-tolerant JSON comparison.
 * ------------------------------------------------------------------- */

/* Numbers equal after rounding both to float32 (int vs real allowed). */
static inline int
num_eq_f32(const json_t *a, const json_t *b)
{
	double		da,
				db;

	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) == json_integer_value(b);
	da = json_number_value(a);
	db = json_number_value(b);
	if (fabs(da) > FLT_MAX || fabs(db) > FLT_MAX)
		return da == db;		/* avoid UB in out-of-range casts */
	return (float) da == (float) db;
}

/*
 * Recursive structural equality like json_equal(), except numbers compare
 * via num_eq_f32().  On mismatch, writes a JSON-pointer-ish path to where.
 */
static inline int
json_equal_f32(const json_t *a, const json_t *b, char *where, size_t wlen)
{
	if (json_is_number(a) && json_is_number(b))
	{
		if (num_eq_f32(a, b))
			return 1;
		snprintf(where, wlen, "number %.17g vs %.17g",
				 json_number_value(a), json_number_value(b));
		return 0;
	}
	if (json_typeof(a) != json_typeof(b))
	{
		snprintf(where, wlen, "type %d vs %d", (int) json_typeof(a),
				 (int) json_typeof(b));
		return 0;
	}
	if (json_is_array(a))
	{
		size_t		i;

		if (json_array_size(a) != json_array_size(b))
		{
			snprintf(where, wlen, "array size %zu vs %zu",
					 json_array_size(a), json_array_size(b));
			return 0;
		}
		for (i = 0; i < json_array_size(a); i++)
		{
			if (!json_equal_f32(json_array_get(a, i), json_array_get(b, i),
								where, wlen))
			{
				char		tmp[512];

				snprintf(tmp, sizeof tmp, "[%zu] %s", i, where);
				snprintf(where, wlen, "%s", tmp);
				return 0;
			}
		}
		return 1;
	}
	if (json_is_object(a))
	{
		const char *key;
		json_t	   *va;

		if (json_object_size(a) != json_object_size(b))
		{
			snprintf(where, wlen, "object size %zu vs %zu",
					 json_object_size(a), json_object_size(b));
			return 0;
		}
		json_object_foreach((json_t *) a, key, va)
		{
			json_t	   *vb = json_object_get(b, key);

			if (vb == NULL)
			{
				snprintf(where, wlen, "key \"%s\" missing", key);
				return 0;
			}
			if (!json_equal_f32(va, vb, where, wlen))
			{
				char		tmp[512];

				snprintf(tmp, sizeof tmp, ".%s %s", key, where);
				snprintf(where, wlen, "%s", tmp);
				return 0;
			}
		}
		return 1;
	}
	if (json_equal(a, b))
		return 1;
	snprintf(where, wlen, "scalar mismatch");
	return 0;
}

/* ---------------------------------------------------------------------
 * Expectation helpers.
 * ------------------------------------------------------------------- */

/* Decode and require exact json_equal() with the given JSON text. */
static inline void
expect_json_lim(const unsigned char *buf, size_t n, const GsUbjLimits *lim,
				const char *json_text, const char *desc)
{
	char		err[256];
	json_error_t jerr;
	json_t	   *got = decode(buf, n, lim, err, sizeof err);
	json_t	   *want = json_loads(json_text, JSON_DECODE_ANY, &jerr);
	int			ok;

	if (want == NULL)
	{
		check(0, "%s (bad expected JSON: %s)", desc, jerr.text);
		json_decref(got);
		return;
	}
	ok = got != NULL && json_equal(got, want);
	if (!check(ok, "%s", desc))
	{
		if (got == NULL)
			diag("decode failed: %s", err);
		else
		{
			char	   *s = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);

			diag("got %s, want %s", s ? s : "?", json_text);
			free(s);
		}
	}
	json_decref(got);
	json_decref(want);
}

/* expect_json_lim() with default limits. */
static inline void
expect_json(const unsigned char *buf, size_t n, const char *json_text,
			const char *desc)
{
	expect_json_lim(buf, n, NULL, json_text, desc);
}

/* Decode and require NULL with an error message containing substr. */
static inline void
expect_err_lim(const unsigned char *buf, size_t n, const GsUbjLimits *lim,
			   const char *substr, const char *desc)
{
	char		err[256];
	json_t	   *got;

	memset(err, 'x', sizeof err);
	got = decode(buf, n, lim, err, sizeof err);
	if (!check(got == NULL && memchr(err, '\0', sizeof err) != NULL &&
			   strstr(err, substr) != NULL, "%s", desc))
	{
		if (got != NULL)
			diag("unexpectedly decoded");
		else
			diag("message \"%.*s\", wanted substring \"%s\"",
				 (int) sizeof err, err, substr);
	}
	json_decref(got);
}

/* expect_err_lim() with default limits. */
static inline void
expect_err(const unsigned char *buf, size_t n, const char *substr,
		   const char *desc)
{
	expect_err_lim(buf, n, NULL, substr, desc);
}

/*
 * Every proper prefix of a valid document must fail cleanly with a
 * truncation-style message.  One TAP line per document.
 */
static inline void
check_all_prefixes(const unsigned char *buf, size_t n, const char *name)
{
	size_t		k;
	size_t		bad = 0;
	char		first[400] = "";

	for (k = 0; k < n; k++)
	{
		char		err[256];
		json_t	   *v;

		err[0] = '\0';
		v = decode(buf, k, NULL, err, sizeof err);
		if (v != NULL || err[0] == '\0' ||
			(strstr(err, "truncated UBJSON at byte") == NULL &&
			 strstr(err, "exceeds remaining input") == NULL))
		{
			if (bad++ == 0)
				snprintf(first, sizeof first, "prefix %zu: %s", k,
						 v ? "decoded!" : err);
		}
		json_decref(v);
	}
	if (!check(bad == 0, "all %zu proper prefixes of %s fail with a truncation error",
			   n, name))
		diag("%zu bad, first %s", bad, first);
}

/*
 * Deterministic mutation sweep: at every offset, substitute a set of
 * interesting bytes; the decoder must either succeed or fail with a
 * message (and, under ASan, never touch memory it should not).
 */
static inline void
check_mutations(const unsigned char *buf, size_t n, const char *name)
{
	static const unsigned char subs[] = {
		0x00, 0x01, 0x7F, 0x80, 0xFF, 'N', 'Z', 'T', 'F', 'i', 'U', 'I', 'l',
		'L', 'd', 'D', 'C', 'S', 'H', '[', ']', '{', '}', '$', '#'
	};
	unsigned char *m = xmalloc(n);
	size_t		k,
				s,
				tried = 0,
				bad = 0,
				decoded = 0;

	for (k = 0; k < n; k++)
	{
		for (s = 0; s < sizeof subs; s++)
		{
			char		err[128];
			json_t	   *v;
			GsUbjLimits lim = {.max_depth = 16, .max_elements = 100000};

			memcpy(m, buf, n);
			m[k] = subs[s];
			err[0] = '\0';
			v = decode(m, n, &lim, err, sizeof err);
			tried++;
			if (v == NULL && err[0] == '\0')
				bad++;
			if (v != NULL)
				decoded++;
			json_decref(v);
		}
	}
	free(m);
	if (!check(bad == 0, "%zu single-byte mutations of %s: no crash, every failure has a message (%zu still decode)",
			   tried, name, decoded))
		diag("%zu failures without message", bad);
}

#endif							/* GS_TEST_UBJ_UTIL_H */

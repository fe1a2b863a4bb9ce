/*
 * test_ubj.c - standalone TAP test for the UBJSON decoder
 * (src/core/ubj_decode.c, ubj_reader.c).  No test framework, no PostgreSQL,
 * no Python.
 *
 * Build and run (make tests/unit/test_ubj lists the sources):
 *
 *   make tests/unit/test_ubj && tests/unit/test_ubj [FIXTURE_DIR]
 *
 * Sanitizer build: add -fsanitize=address,undefined -fno-omit-frame-pointer -g
 * (and run with UBSAN_OPTIONS=halt_on_error=1).
 *
 * FIXTURE_DIR defaults to the first of tests/fixtures/models,
 * ../fixtures/models and ../../tests/fixtures/models that holds
 * breast_cancer.ubj (so it works from the repo root and from tests/unit;
 * otherwise tests/fixtures/models).  If breast_cancer.ubj and
 * breast_cancer.json both exist there, the decoded .ubj is compared with
 * the jansson-loaded .json (numbers compared after rounding both sides to
 * float32); otherwise that check is reported as "# SKIP".
 *
 * Every decode is done from an exact-size heap copy of the input so that
 * AddressSanitizer catches any read past the end.  Output is TAP; the exit
 * status is nonzero if any check fails.
 */
#include "ubj_decode.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static int	g_tests = 0;
static int	g_failed = 0;

/* Byte-array literal helper: expands to "pointer, length". */
#define BYTES(...) \
	(const unsigned char[]){__VA_ARGS__}, sizeof((const unsigned char[]){__VA_ARGS__})

/* Print one TAP result line; returns cond. */
static int
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
static void
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
static void *
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
static json_t *
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
static void
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
static void
put_u8(Buf *b, unsigned v)
{
	unsigned char c = (unsigned char) v;

	put(b, &c, 1);
}

/* Append the low nbytes of v, big-endian. */
static void
put_be(Buf *b, uint64_t v, int nbytes)
{
	int			i;

	for (i = nbytes - 1; i >= 0; i--)
		put_u8(b, (unsigned) ((v >> (8 * i)) & 0xFF));
}

/* Append a float32, big-endian. */
static void
put_f32(Buf *b, float f)
{
	uint32_t	u;

	memcpy(&u, &f, sizeof u);
	put_be(b, u, 4);
}

/* Object key as XGBoost writes it: 'L' int64 length, then bytes. */
static void
w_key(Buf *b, const char *k)
{
	put_u8(b, 'L');
	put_be(b, (uint64_t) strlen(k), 8);
	put(b, k, strlen(k));
}

/* String value as XGBoost writes it. */
static void
w_str(Buf *b, const char *s)
{
	put_u8(b, 'S');
	w_key(b, s);
}

/* Integer value using XGBoost's smallest-marker rule. */
static void
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
static void
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
static void
w_f32s(Buf *b, const float *v, int n)
{
	int			i;

	w_typed_hdr(b, 'd', n);
	for (i = 0; i < n; i++)
		put_f32(b, v[i]);
}

/* int32 typed array. */
static void
w_i32s(Buf *b, const int32_t *v, int n)
{
	int			i;

	w_typed_hdr(b, 'l', n);
	for (i = 0; i < n; i++)
		put_be(b, (uint64_t) (int64_t) v[i], 4);
}

/* uint8 typed array. */
static void
w_u8s(Buf *b, const uint8_t *v, int n)
{
	int			i;

	w_typed_hdr(b, 'U', n);
	for (i = 0; i < n; i++)
		put_u8(b, v[i]);
}

/* Counted untyped array header "[#L<n>", as XGBoost writes JsonArray. */
static void
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
static int
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
static int
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
static void
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
static void
expect_json(const unsigned char *buf, size_t n, const char *json_text,
			const char *desc)
{
	expect_json_lim(buf, n, NULL, json_text, desc);
}

/* Decode and require NULL with an error message containing substr. */
static void
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
static void
expect_err(const unsigned char *buf, size_t n, const char *substr,
		   const char *desc)
{
	expect_err_lim(buf, n, NULL, substr, desc);
}

/*
 * Every proper prefix of a valid document must fail cleanly with a
 * truncation-style message.  One TAP line per document.
 */
static void
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
static void
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

/* ---------------------------------------------------------------------
 * Test groups.
 * ------------------------------------------------------------------- */

/* Every scalar marker. */
static void
test_scalars(void)
{
	char		err[256];
	json_t	   *v;

	expect_json(BYTES('Z'), "null", "Z is null");
	expect_json(BYTES('T'), "true", "T is true");
	expect_json(BYTES('F'), "false", "F is false");
	expect_json(BYTES('i', 0x80), "-128", "int8 min");
	expect_json(BYTES('i', 0x7F), "127", "int8 max");
	expect_json(BYTES('i', 0xFF), "-1", "int8 -1");
	expect_json(BYTES('U', 0xFF), "255", "uint8 255");
	expect_json(BYTES('U', 0x00), "0", "uint8 0");
	expect_json(BYTES('I', 0x80, 0x00), "-32768", "int16 min");
	expect_json(BYTES('I', 0x01, 0x02), "258", "int16 big-endian");
	expect_json(BYTES('l', 0x80, 0, 0, 0), "-2147483648", "int32 min");
	expect_json(BYTES('l', 0x7F, 0xFF, 0xFF, 0xFF), "2147483647", "int32 max");
	expect_json(BYTES('l', 0x00, 0x01, 0x02, 0x03), "66051", "int32 big-endian");
	expect_json(BYTES('L', 0x80, 0, 0, 0, 0, 0, 0, 0), "-9223372036854775808",
				"int64 min");
	expect_json(BYTES('L', 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
				"9223372036854775807", "int64 max");
	expect_json(BYTES('L', 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE),
				"-2", "int64 -2");
	expect_json(BYTES('L', 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00),
				"4294967296", "int64 2^32");
	expect_json(BYTES('d', 0x3F, 0xC0, 0x00, 0x00), "1.5", "float32 1.5");
	expect_json(BYTES('d', 0xC0, 0x10, 0x00, 0x00), "-2.25", "float32 -2.25");
	expect_json(BYTES('d', 0x00, 0x00, 0x00, 0x00), "0.0", "float32 0");
	expect_json(BYTES('D', 0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18),
				"3.141592653589793", "float64 pi");
	expect_json(BYTES('C', 'a'), "\"a\"", "char");

	v = decode(BYTES('d', 0x3D, 0xCC, 0xCC, 0xCD), NULL, err, sizeof err);
	check(json_is_real(v) && json_real_value(v) == (double) 0.1f,
		  "float32 0.1f widens exactly to (double)0.1f");
	json_decref(v);

	/* float32 denormal and max */
	v = decode(BYTES('d', 0x00, 0x00, 0x00, 0x01), NULL, err, sizeof err);
	check(json_is_real(v) && json_real_value(v) == (double) 1.40129846e-45f,
		  "float32 smallest denormal");
	json_decref(v);
	v = decode(BYTES('d', 0x7F, 0x7F, 0xFF, 0xFF), NULL, err, sizeof err);
	check(json_is_real(v) && json_real_value(v) == (double) FLT_MAX,
		  "float32 FLT_MAX");
	json_decref(v);
	v = decode(BYTES('i', 5), NULL, err, sizeof err);
	check(json_is_integer(v) && json_integer_value(v) == 5,
		  "integers decode as JSON integers, not reals");
	json_decref(v);
	v = decode(BYTES('d', 0x40, 0xA0, 0x00, 0x00), NULL, err, sizeof err);
	check(json_is_real(v) && json_real_value(v) == 5.0,
		  "float32 5.0 decodes as JSON real");
	json_decref(v);
}

/* Strings with every length type, UTF-8, embedded NUL. */
static void
test_strings(void)
{
	char		err[256];
	json_t	   *v;
	Buf			b = {0};
	char		big[301];
	size_t		i;

	expect_json(BYTES('S', 'i', 3, 'a', 'b', 'c'), "\"abc\"", "string, int8 length");
	expect_json(BYTES('S', 'U', 0), "\"\"", "empty string");
	expect_json(BYTES('S', 'I', 0, 2, 'h', 'i'), "\"hi\"", "string, int16 length");
	expect_json(BYTES('S', 'l', 0, 0, 0, 2, 'h', 'i'), "\"hi\"", "string, int32 length");
	expect_json(BYTES('S', 'L', 0, 0, 0, 0, 0, 0, 0, 2, 'h', 'i'), "\"hi\"",
				"string, int64 length");
	expect_json(BYTES('S', 'i', 2, 0xC3, 0xA9), "\"\\u00e9\"", "2-byte UTF-8");
	expect_json(BYTES('S', 'i', 4, 0xF0, 0x9F, 0x98, 0x80), "\"\\ud83d\\ude00\"",
				"4-byte UTF-8");
	expect_json(BYTES('S', 'i', 3, 0xE2, 0x82, 0xAC), "\"\\u20ac\"", "3-byte UTF-8");

	v = decode(BYTES('S', 'i', 3, 'a', 0, 'b'), NULL, err, sizeof err);
	check(json_is_string(v) && json_string_length(v) == 3 &&
		  memcmp(json_string_value(v), "a\0b", 3) == 0,
		  "string value with embedded NUL keeps its length");
	json_decref(v);

	for (i = 0; i < 300; i++)
		big[i] = (char) ('a' + (i % 26));
	big[300] = '\0';
	put_u8(&b, 'S');
	put_u8(&b, 'I');
	put_be(&b, 300, 2);
	put(&b, big, 300);
	v = decode(b.p, b.n, NULL, err, sizeof err);
	check(json_is_string(v) && strcmp(json_string_value(v), big) == 0,
		  "300-byte string with int16 length");
	json_decref(v);
	free(b.p);

	expect_err(BYTES('S', 'i', 1, 0xFF), "invalid UTF-8 in UBJSON string at byte 1",
			   "invalid UTF-8 byte rejected");
	expect_err(BYTES('S', 'i', 2, 0xC0, 0x80), "invalid UTF-8", "overlong NUL rejected");
	expect_err(BYTES('S', 'i', 3, 0xED, 0xA0, 0x80), "invalid UTF-8", "surrogate rejected");
	expect_err(BYTES('S', 'i', 4, 0xF4, 0x90, 0x80, 0x80), "invalid UTF-8",
			   "code point above U+10FFFF rejected");
	expect_err(BYTES('S', 'i', 2, 0xE2, 0x82), "invalid UTF-8",
			   "truncated UTF-8 sequence rejected");
	expect_err(BYTES('S', 'i', 0xFF), "negative UBJSON string length -1 at byte 1",
			   "negative string length");
	expect_err(BYTES('S', 'L', 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 'a'),
			   "UBJSON string length 9223372036854775807 exceeds remaining input at byte 1",
			   "huge string length");
	expect_err(BYTES('S', 'i', 5, 'a', 'b'), "exceeds remaining input",
			   "string length past end");
	expect_err(BYTES('S', 'd', 0, 0, 0, 1, 'a'),
			   "invalid UBJSON string length type marker 'd' at byte 1",
			   "string length must be an integer marker");
	expect_err(BYTES('S', 'S', 'i', 1, 'a'), "invalid UBJSON string length type marker 'S'",
			   "string length cannot be a string");
	expect_err(BYTES('C', 0x80), "invalid UBJSON char 0x80 at byte 1", "non-ASCII char rejected");
}

/* Plain (uncounted) containers, nesting, no-ops, duplicates. */
static void
test_containers(void)
{
	expect_json(BYTES('[', ']'), "[]", "empty array");
	expect_json(BYTES('{', '}'), "{}", "empty object");
	expect_json(BYTES('[', 'i', 1, 'S', 'i', 1, 'x', '[', 'Z', ']',
					  '{', 'i', 1, 'k', 'T', '}', ']'),
				"[1,\"x\",[null],{\"k\":true}]", "mixed nested array");
	expect_json(BYTES('{', 'i', 1, 'a', '{', 'U', 1, 'b', '[', 'i', 1, 'i', 2, ']', '}',
					  'i', 1, 'c', 'F', '}'),
				"{\"a\":{\"b\":[1,2]},\"c\":false}", "nested objects");
	expect_json(BYTES('{', 'i', 1, 'a', 'i', 1, 'i', 1, 'a', 'i', 2, '}'),
				"{\"a\":2}", "duplicate key: later wins");
	expect_json(BYTES('{', 'i', 0, 'Z', '}'), "{\"\":null}", "empty key");
	expect_json(BYTES('{', 'L', 0, 0, 0, 0, 0, 0, 0, 2, 'k', 'k', 'i', 3, '}'),
				"{\"kk\":3}", "key with int64 length (XGBoost style)");
	expect_json(BYTES('{', 'i', 2, 0xC3, 0xA9, 'T', '}'), "{\"\\u00e9\":true}",
				"UTF-8 key");
	expect_json(BYTES('[', '[', '[', ']', ']', ']'), "[[[]]]", "nested empty arrays");
	/* no-op N */
	expect_json(BYTES('N', 'N', 'T'), "true", "no-ops before root value");
	expect_json(BYTES('[', 'N', 'N', 'i', 1, 'N', ']'), "[1]", "no-ops in array");
	expect_json(BYTES('[', 'N', ']'), "[]", "array of only no-ops is empty");
	expect_json(BYTES('{', 'N', 'i', 1, 'a', 'N', 'i', 5, 'N', '}'), "{\"a\":5}",
				"no-ops in object before key, value and close");
	expect_json(BYTES('[', '#', 'i', 2, 'N', 'T', 'N', 'F'), "[true,false]",
				"no-ops in counted array do not count");
}

/* Optimized containers: counted and typed arrays/objects. */
static void
test_optimized(void)
{
	char		err[256];
	json_t	   *v;
	Buf			b = {0};
	int			i;

	expect_json(BYTES('[', '#', 'i', 3, 'i', 1, 'S', 'i', 1, 'x', 'Z'),
				"[1,\"x\",null]", "counted untyped array");
	expect_json(BYTES('[', '#', 'i', 0), "[]", "counted empty array");
	expect_json(BYTES('[', '#', 'L', 0, 0, 0, 0, 0, 0, 0, 2, '[', '#', 'U', 1, 'T',
					  '[', ']'),
				"[[true],[]]", "counted arrays nested in counted array");
	expect_json(BYTES('[', '$', 'i', '#', 'i', 3, 0xFF, 0x00, 0x01), "[-1,0,1]",
				"typed int8 array");
	expect_json(BYTES('[', '$', 'U', '#', 'i', 3, 0xFF, 0x00, 0x01), "[255,0,1]",
				"typed uint8 array");
	expect_json(BYTES('[', '$', 'I', '#', 'i', 2, 0x80, 0x00, 0x01, 0x00),
				"[-32768,256]", "typed int16 array");
	expect_json(BYTES('[', '$', 'l', '#', 'i', 2, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 1, 0),
				"[-1,256]", "typed int32 array");
	expect_json(BYTES('[', '$', 'L', '#', 'i', 2, 0x80, 0, 0, 0, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 7),
				"[-9223372036854775808,7]", "typed int64 array");
	expect_json(BYTES('[', '$', 'd', '#', 'i', 3, 0x3F, 0xC0, 0, 0, 0xC0, 0x10, 0, 0,
					  0, 0, 0, 0),
				"[1.5,-2.25,0.0]", "typed float32 array");
	expect_json(BYTES('[', '$', 'D', '#', 'i', 1, 0x40, 0x09, 0x21, 0xFB, 0x54, 0x44,
					  0x2D, 0x18),
				"[3.141592653589793]", "typed float64 array");
	expect_json(BYTES('[', '$', 'C', '#', 'i', 2, 'o', 'k'), "[\"o\",\"k\"]",
				"typed char array");
	expect_json(BYTES('[', '$', 'S', '#', 'i', 2, 'i', 1, 'a', 'U', 0), "[\"a\",\"\"]",
				"typed string array");
	expect_json(BYTES('[', '$', 'd', '#', 'i', 0), "[]", "typed empty float32 array");
	expect_json(BYTES('[', '$', 'd', '#', 'i', 1, 0x3F, 0xC0, 0, 0),
				"[1.5]", "typed float32 array, count exactly fits input");
	expect_json(BYTES('[', '[', '$', 'i', '#', 'i', 1, 5, '[', '$', 'U', '#', 'i', 0, ']'),
				"[[5],[]]", "typed arrays inside plain array");
	expect_json(BYTES('[', '$', 'i', '#', 'i', 2, 'N', 'N'), "[78,78]",
				"'N' bytes inside typed payload are data, not no-ops");
	/* objects */
	expect_json(BYTES('{', '#', 'i', 2, 'i', 1, 'a', 'T', 'i', 1, 'b', 'S', 'i', 1, 'z'),
				"{\"a\":true,\"b\":\"z\"}", "counted object");
	expect_json(BYTES('{', '#', 'i', 0), "{}", "counted empty object");
	expect_json(BYTES('{', '$', 'i', '#', 'i', 2, 'i', 1, 'a', 5, 'i', 1, 'b', 0xFF),
				"{\"a\":5,\"b\":-1}", "typed int8 object");
	expect_json(BYTES('{', '$', 'd', '#', 'i', 1, 'i', 1, 'x', 0x3F, 0xC0, 0, 0),
				"{\"x\":1.5}", "typed float32 object");
	expect_json(BYTES('{', '$', 'T', '#', 'i', 2, 'i', 1, 'a', 'i', 1, 'b'),
				"{\"a\":true,\"b\":true}", "typed true object (zero-size values)");
	expect_json(BYTES('{', '$', 'Z', '#', 'i', 1, 'i', 1, 'n'), "{\"n\":null}",
				"typed null object");
	expect_json(BYTES('{', '$', 'S', '#', 'i', 1, 'i', 1, 'k', 'i', 2, 'v', 'w'),
				"{\"k\":\"vw\"}", "typed string object");
	expect_json(BYTES('{', '#', 'i', 1, 'i', 1, 'a', '[', '#', 'i', 1, 'i', 7),
				"{\"a\":[7]}", "counted array inside counted object");
	expect_json(BYTES('{', '#', 'i', 2, 'i', 1, 'a', '{', '$', 'U', '#', 'i', 1, 'i', 1,
					  'b', 9, 'i', 1, 'c', '[', '$', 'l', '#', 'i', 1, 0, 0, 0, 3),
				"{\"a\":{\"b\":9},\"c\":[3]}", "typed containers inside counted object");

	/* a larger float32 typed array, checked value by value */
	w_typed_hdr(&b, 'd', 1000);
	for (i = 0; i < 1000; i++)
		put_f32(&b, (float) i * 0.1f - 50.0f);
	v = decode(b.p, b.n, NULL, err, sizeof err);
	{
		int			ok = json_is_array(v) && json_array_size(v) == 1000;

		for (i = 0; ok && i < 1000; i++)
		{
			json_t	   *e = json_array_get(v, (size_t) i);

			ok = json_is_real(e) &&
				json_real_value(e) == (double) ((float) i * 0.1f - 50.0f);
		}
		check(ok, "1000-element float32 typed array is bit-exact");
	}
	json_decref(v);
	free(b.p);
}

/* Error paths other than truncation sweeps. */
static void
test_errors(void)
{
	char		err[256];
	char		tiny[8];
	json_t	   *v;
	GsUbjLimits lim = {0};
	Buf			b = {0};
	size_t		i;

	v = gs_ubj_decode(NULL, 0, NULL, err, sizeof err);
	check(v == NULL && strstr(err, "truncated UBJSON at byte 0") != NULL,
		  "NULL buffer, zero length: truncated at byte 0");
	v = gs_ubj_decode(NULL, 5, NULL, err, sizeof err);
	check(v == NULL && err[0] != '\0', "NULL buffer with nonzero length rejected");
	v = gs_ubj_decode((const unsigned char *) "", 0, NULL, err, sizeof err);
	check(v == NULL && strstr(err, "truncated UBJSON at byte 0") != NULL,
		  "zero-length input: truncated at byte 0");
	expect_err(BYTES('N', 'N'), "truncated UBJSON at byte 2", "only no-ops");

	expect_err(BYTES('X'), "unknown UBJSON type marker 'X' at byte 0", "unknown marker");
	expect_err(BYTES('[', 'i', 1, 'q', ']'), "unknown UBJSON type marker 'q' at byte 3",
			   "unknown marker inside array");
	expect_err(BYTES(0x00), "unknown UBJSON type marker 0x00 at byte 0",
			   "NUL marker rendered as hex");
	expect_err(BYTES(0xFF), "unknown UBJSON type marker 0xff at byte 0",
			   "0xFF marker rendered as hex");
	expect_err(BYTES('u', 0, 1), "unknown UBJSON type marker 'u'",
			   "uint16 'u' (not in draft 12) rejected");
	expect_err(BYTES(']'), "unexpected UBJSON container end ']' at byte 0",
			   "close marker at root");
	expect_err(BYTES('[', '}'), "unexpected UBJSON container end '}' at byte 1",
			   "mismatched close in array");
	expect_err(BYTES('{', ']'), "invalid UBJSON object key length type marker ']' at byte 1",
			   "mismatched close in object");
	expect_err(BYTES('{', 'i', 1, 'a', '}'), "unexpected UBJSON container end '}' at byte 4",
			   "object key without value");
	expect_err(BYTES('{', 'S', 'i', 1, 'a', 'T', '}'),
			   "invalid UBJSON object key length type marker 'S' at byte 1",
			   "object key must not carry an S marker");
	expect_err(BYTES('[', '#', 'i', 1, ']'), "unexpected UBJSON container end ']' at byte 4",
			   "counted array must not have a closing marker in place of an element");
	expect_err(BYTES('[', '#', 'i', 1, 'T', ']'), "trailing bytes after UBJSON value at byte 5",
			   "closing marker after counted array is trailing garbage");

	/* H marker */
	expect_err(BYTES('H', 'i', 1, '1'), "unsupported UBJSON high-precision number ('H') at byte 0",
			   "H marker unsupported");
	expect_err(BYTES('[', 'H', 'i', 1, '1', ']'), "unsupported UBJSON high-precision",
			   "H marker inside array unsupported");
	expect_err(BYTES('[', '$', 'H', '#', 'i', 1, 'i', 1, '1'),
			   "unsupported UBJSON high-precision", "typed H array unsupported");

	/* trailing bytes */
	expect_err(BYTES('T', 'T'), "trailing bytes after UBJSON value at byte 1",
			   "two root values");
	expect_err(BYTES('[', ']', 0), "trailing bytes after UBJSON value at byte 2",
			   "trailing NUL after array");
	expect_err(BYTES('T', 'N'), "trailing bytes after UBJSON value at byte 1",
			   "trailing no-op after root value");

	/* counts */
	expect_err(BYTES('[', '$', 'd', '#', 'l', 0x3B, 0x9A, 0xCA, 0x00, 0, 0, 0, 0),
			   "UBJSON array count 1000000000 exceeds remaining input",
			   "huge typed float32 count");
	expect_err(BYTES('[', '$', 'd', '#', 'i', 2, 0x3F, 0xC0, 0, 0, 0x3F, 0xC0, 0),
			   "UBJSON array count 2 exceeds remaining input at byte 4",
			   "typed float32 count one byte short");
	expect_err(BYTES('[', '#', 'L', 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 'Z'),
			   "UBJSON array count 9223372036854775807 exceeds remaining input",
			   "huge untyped array count");
	expect_err(BYTES('{', '#', 'l', 0x7F, 0xFF, 0xFF, 0xFF, 'i', 1, 'a', 'Z'),
			   "UBJSON object count 2147483647 exceeds remaining input",
			   "huge object count");
	expect_err(BYTES('{', '$', 'L', '#', 'i', 2, 'i', 1, 'a', 0, 0, 0, 0, 0, 0, 0, 1),
			   "UBJSON object count 2 exceeds remaining input", "typed object count too big");
	expect_err(BYTES('[', '#', 'i', 0xFF), "negative UBJSON array count -1 at byte 2",
			   "negative array count");
	expect_err(BYTES('[', '$', 'i', '#', 'L', 0x80, 0, 0, 0, 0, 0, 0, 0),
			   "negative UBJSON array count -9223372036854775808", "int64 min count");
	expect_err(BYTES('{', '#', 'I', 0xFF, 0xFE), "negative UBJSON object count -2",
			   "negative object count");
	expect_err(BYTES('[', '#', 'd', 0, 0, 0, 0), "invalid UBJSON array count type marker 'd'",
			   "count must be an integer marker");
	expect_err(BYTES('[', '#', 'N', 'i', 1, 'T'), "invalid UBJSON array count type marker 'N'",
			   "no-op not allowed before a count");
	expect_err(BYTES('[', '$', 'i', 'i', 1, 5), "UBJSON typed container at byte 0 lacks a '#' count",
			   "typed array without count");
	expect_err(BYTES('[', '$', 'i', ']'), "lacks a '#' count", "typed array with close marker");
	expect_err(BYTES('[', '$', '[', '#', 'i', 1, ']'),
			   "unsupported UBJSON container element type '[' at byte 2", "$[ unsupported");
	expect_err(BYTES('[', '$', '{', '#', 'i', 1, '}'),
			   "unsupported UBJSON container element type '{'", "${ unsupported");
	expect_err(BYTES('{', '$', '[', '#', 'i', 0), "unsupported UBJSON container element type",
			   "object ${ / $[ unsupported");
	expect_err(BYTES('[', '$', 'N', '#', 'i', 1), "invalid UBJSON container element type 'N'",
			   "$N rejected");
	expect_err(BYTES('[', '$', 'x', '#', 'i', 1, 0), "invalid UBJSON container element type 'x'",
			   "$x rejected");
	expect_err(BYTES('[', '$', 'Z', '#', 'i', 5),
			   "unsupported UBJSON typed array of zero-size type 'Z' at byte 2",
			   "$Z typed array rejected (amplification)");
	expect_err(BYTES('[', '$', 'T', '#', 'L', 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
			   "zero-size type 'T'", "$T typed array with huge count rejected");
	expect_err(BYTES('[', '$', 'F', '#', 'i', 0), "zero-size type 'F'", "$F typed array rejected");

	/* bad values inside typed containers */
	expect_err(BYTES('[', '$', 'd', '#', 'i', 1, 0x7F, 0xC0, 0, 0),
			   "non-finite UBJSON float at byte 6", "NaN in typed float32 array");
	expect_err(BYTES('d', 0x7F, 0x80, 0, 0), "non-finite UBJSON float at byte 0", "float32 +Inf");
	expect_err(BYTES('D', 0xFF, 0xF0, 0, 0, 0, 0, 0, 0), "non-finite UBJSON float", "float64 -Inf");
	expect_err(BYTES('D', 0x7F, 0xF8, 0, 0, 0, 0, 0, 1), "non-finite UBJSON float", "float64 NaN");
	expect_err(BYTES('[', '$', 'C', '#', 'i', 1, 0xC3), "invalid UBJSON char 0xc3",
			   "non-ASCII in typed char array");
	expect_err(BYTES('[', '$', 'S', '#', 'i', 2, 'i', 1, 'a', 'i', 5, 'b'),
			   "UBJSON string length 5 exceeds remaining input at byte 9",
			   "bad length inside typed string array");

	/* keys */
	expect_err(BYTES('{', 'i', 3, 'a', 0, 'b', 'T', '}'),
			   "UBJSON object key contains a NUL byte at byte 1", "key with embedded NUL");
	expect_err(BYTES('{', 'i', 1, 0xFF, 'T', '}'), "invalid UTF-8 in UBJSON object key at byte 1",
			   "key with invalid UTF-8");
	expect_err(BYTES('{', 'i', 0xFE, 'T', '}'), "negative UBJSON object key length -2",
			   "negative key length");
	expect_err(BYTES('{', 'L', 0x7F, 0, 0, 0, 0, 0, 0, 0, 'T', '}'),
			   "UBJSON object key length 9151314442816847872 exceeds remaining input",
			   "huge key length");
	expect_err(BYTES('{', '$', 'i', '#', 'i', 1, 'd', 0, 0, 0, 0, 5),
			   "invalid UBJSON object key length type marker 'd' at byte 6", "key with float length");

	/* missing close / truncation examples with exact offsets */
	expect_err(BYTES('[', 'T'), "truncated UBJSON at byte 2", "unclosed array");
	expect_err(BYTES('{', 'i', 1, 'a'), "truncated UBJSON at byte 4", "object key then EOF");
	expect_err(BYTES('l', 0, 0, 1), "truncated UBJSON at byte 1", "short int32");
	expect_err(BYTES('D', 0, 0, 0, 0, 0, 0, 0), "truncated UBJSON at byte 1", "short float64");
	expect_err(BYTES('[', '$'), "truncated UBJSON at byte 2", "EOF after $");
	expect_err(BYTES('[', '$', 'i'), "truncated UBJSON at byte 3", "EOF after typed marker");
	expect_err(BYTES('[', '#'), "truncated UBJSON at byte 2", "EOF after #");
	expect_err(BYTES('[', '#', 'I', 0), "truncated UBJSON at byte 3", "EOF inside count");

	/* depth */
	for (i = 0; i < 64; i++)
		put_u8(&b, '[');
	for (i = 0; i < 64; i++)
		put_u8(&b, ']');
	v = decode(b.p, b.n, NULL, err, sizeof err);
	check(v != NULL, "64 nested arrays allowed by default");
	json_decref(v);
	b.n = 0;
	for (i = 0; i < 65; i++)
		put_u8(&b, '[');
	for (i = 0; i < 65; i++)
		put_u8(&b, ']');
	expect_err(b.p, b.n, "UBJSON nesting deeper than 64 at byte 64", "65 nested arrays rejected");
	b.n = 0;
	for (i = 0; i < 40; i++)
	{
		put_u8(&b, '[');
		put_u8(&b, '{');
		put_u8(&b, 'i');
		put_u8(&b, 1);
		put_u8(&b, 'k');
	}
	put_u8(&b, 'Z');
	expect_err(b.p, b.n, "UBJSON nesting deeper than 64", "arrays and objects both count toward depth");
	lim.max_depth = 2;
	lim.max_elements = 0;
	expect_json_lim(BYTES('[', '[', 'i', 1, ']', ']'), &lim, "[[1]]", "depth 2 ok with max_depth 2");
	expect_err_lim(BYTES('[', '[', '[', ']', ']', ']'), &lim, "UBJSON nesting deeper than 2 at byte 2",
				   "depth 3 rejected with max_depth 2");
	expect_err_lim(BYTES('[', '[', '[', '$', 'i', '#', 'i', 0), &lim, "UBJSON nesting deeper than 2",
				   "typed array counts toward depth");
	expect_err_lim(BYTES('{', '#', 'i', 1, 'i', 1, 'a', '{', '#', 'i', 1, 'i', 1, 'b', '[', ']'),
				   &lim, "UBJSON nesting deeper than 2", "counted objects count toward depth");
	lim.max_depth = 1;
	expect_json_lim(BYTES('[', '$', 'i', '#', 'i', 1, 4), &lim, "[4]",
					"typed array at depth 1 with max_depth 1");
	expect_json_lim(BYTES('i', 4), &lim, "4", "scalar root is depth 0");

	/* very deep nesting with a huge limit: iterative, no stack overflow */
	b.n = 0;
	for (i = 0; i < 200000; i++)
		put_u8(&b, '[');
	for (i = 0; i < 200000; i++)
		put_u8(&b, ']');
	lim.max_depth = (size_t) -1;
	lim.max_elements = 0;
	v = decode(b.p, b.n, &lim, err, sizeof err);
	check(v != NULL, "200000 nested arrays with unlimited depth: no stack overflow");
	json_decref(v);
	b.n = 0;
	for (i = 0; i < 200000; i++)
		put_u8(&b, '[');
	expect_err_lim(b.p, b.n, &lim, "truncated UBJSON at byte 200000",
				   "200000 unclosed arrays: truncated, freed");
	free(b.p);

	/* max_elements */
	lim.max_depth = 0;
	lim.max_elements = 4;
	expect_json_lim(BYTES('[', 'i', 1, 'i', 2, 'i', 3, ']'), &lim, "[1,2,3]",
					"4 values allowed with max_elements 4");
	lim.max_elements = 3;
	expect_err_lim(BYTES('[', 'i', 1, 'i', 2, 'i', 3, ']'), &lim,
				   "UBJSON document has more than 3 values", "5th value rejected with max_elements 3");
	expect_err_lim(BYTES('[', '$', 'i', '#', 'i', 5, 1, 2, 3, 4, 5), &lim,
				   "UBJSON document has more than 3 values (array count 5 at byte 4)",
				   "typed array count checked against max_elements up front");
	expect_err_lim(BYTES('[', '$', 'd', '#', 'i', 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), &lim,
				   "UBJSON document has more than 3 values",
				   "float32 typed array counted against max_elements");
	expect_err_lim(BYTES('{', 'i', 1, 'a', 'T', 'i', 1, 'b', 'T', 'i', 1, 'c', 'T', '}'), &lim,
				   "UBJSON document has more than 3 values", "object values counted");
	lim.max_elements = 1;
	expect_json_lim(BYTES('Z'), &lim, "null", "single scalar with max_elements 1");
	expect_json_lim(BYTES('[', '$', 'i', '#', 'i', 0), &lim, "[]",
					"empty typed array with max_elements 1");

	lim.max_elements = 2;
	expect_err_lim(BYTES('[', '[', ']', '[', ']', ']'), &lim,
				   "UBJSON document has more than 2 values", "containers counted against max_elements");
	expect_err(BYTES('S', 'i', 3, 0xE0, 0x80, 0x80), "invalid UTF-8", "3-byte overlong rejected");
	expect_err(BYTES('S', 'i', 4, 0xF0, 0x80, 0x80, 0x80), "invalid UTF-8", "4-byte overlong rejected");
	expect_err(BYTES('S', 'i', 3, 0xE2, 0x28, 0xA1), "invalid UTF-8", "bad continuation byte rejected");
	expect_err(BYTES('S', 'i', 1, 0x80), "invalid UTF-8", "lone continuation byte rejected");
	expect_err(BYTES('{', 'N'), "truncated UBJSON at byte 2", "object: no-op then EOF");
	expect_err(BYTES('{', '#', 'i', 1, 'N', 'N', 'N'), "truncated UBJSON at byte 7",
			   "counted object: no-op then EOF before key");

	/* error buffer handling */
	v = gs_ubj_decode((const unsigned char *) "X", 1, NULL, NULL, 0);
	check(v == NULL, "NULL error buffer is fine");
	memset(tiny, 'x', sizeof tiny);
	v = gs_ubj_decode((const unsigned char *) "X", 1, NULL, tiny, sizeof tiny);
	check(v == NULL && tiny[sizeof tiny - 1] == '\0' && strncmp(tiny, "unknown", 7) == 0,
		  "small error buffer is truncated and NUL-terminated");
	err[0] = 'q';
	v = gs_ubj_decode((const unsigned char *) "T", 1, NULL, err, sizeof err);
	check(v != NULL && err[0] == '\0', "error buffer cleared on success");
	json_decref(v);
}

/*
 * Build a small model laid out exactly the way XGBoost's UBJWriter writes
 * one (keys with 'L' lengths, '[#L' arrays, '[$d#L' / '[$l#L' / '[$U#L'
 * typed arrays, integers with XGBoost's smallest-marker rule, floats as
 * 'd').  Returns the bytes in *out (caller frees out->p).
 */
static void
build_xgb_model(Buf *out)
{
	Buf			b = {0};
	int			t;

	put_u8(&b, '{');
	w_key(&b, "learner");
	put_u8(&b, '{');
	w_key(&b, "attributes");
	put_u8(&b, '{');
	put_u8(&b, '}');
	w_key(&b, "feature_names");
	w_arr(&b, 0);
	w_key(&b, "feature_types");
	w_arr(&b, 0);
	w_key(&b, "gradient_booster");
	put_u8(&b, '{');
	w_key(&b, "model");
	put_u8(&b, '{');
	w_key(&b, "gbtree_model_param");
	put_u8(&b, '{');
	w_key(&b, "num_parallel_tree");
	w_str(&b, "1");
	w_key(&b, "num_trees");
	w_str(&b, "2");
	put_u8(&b, '}');
	w_key(&b, "iteration_indptr");
	{
		int32_t		ip[] = {0, 1, 2};

		w_i32s(&b, ip, 3);
	}
	w_key(&b, "tree_info");
	{
		int32_t		ti[] = {0, 0};

		w_i32s(&b, ti, 2);
	}
	w_key(&b, "trees");
	w_arr(&b, 2);
	for (t = 0; t < 2; t++)
	{
		float		bw[] = {-0.1f, 0.5f, -0.25f};
		float		lc[] = {123.456f, 0.0f, 0.0f};
		float		sc[] = {t ? 17.5f : 0.3f, 0.5f, -0.25f};
		float		sh[] = {100.0f, 60.25f, 39.75f};
		int32_t		left[] = {1, -1, -1};
		int32_t		right[] = {2, -1, -1};
		int32_t		parents[] = {2147483647, 0, 0};
		int32_t		si[] = {7 + t, 0, 0};
		int32_t		none[1] = {0};
		uint8_t		dl[] = {1, 0, 0};
		uint8_t		st[] = {0, 0, 0};

		put_u8(&b, '{');
		w_key(&b, "base_weights");
		w_f32s(&b, bw, 3);
		w_key(&b, "categories");
		w_i32s(&b, none, 0);
		w_key(&b, "categories_nodes");
		w_i32s(&b, none, 0);
		w_key(&b, "categories_segments");
		w_typed_hdr(&b, 'L', 0);
		w_key(&b, "categories_sizes");
		w_typed_hdr(&b, 'L', 0);
		w_key(&b, "default_left");
		w_u8s(&b, dl, 3);
		w_key(&b, "id");
		w_int(&b, t);
		w_key(&b, "left_children");
		w_i32s(&b, left, 3);
		w_key(&b, "loss_changes");
		w_f32s(&b, lc, 3);
		w_key(&b, "parents");
		w_i32s(&b, parents, 3);
		w_key(&b, "right_children");
		w_i32s(&b, right, 3);
		w_key(&b, "split_conditions");
		w_f32s(&b, sc, 3);
		w_key(&b, "split_indices");
		w_i32s(&b, si, 3);
		w_key(&b, "split_type");
		w_u8s(&b, st, 3);
		w_key(&b, "sum_hessian");
		w_f32s(&b, sh, 3);
		w_key(&b, "tree_param");
		put_u8(&b, '{');
		w_key(&b, "num_deleted");
		w_str(&b, "0");
		w_key(&b, "num_feature");
		w_str(&b, "30");
		w_key(&b, "num_nodes");
		w_str(&b, "3");
		w_key(&b, "size_leaf_vector");
		w_str(&b, "1");
		put_u8(&b, '}');
		put_u8(&b, '}');
	}
	put_u8(&b, '}');			/* model */
	w_key(&b, "name");
	w_str(&b, "gbtree");
	put_u8(&b, '}');			/* gradient_booster */
	w_key(&b, "learner_model_param");
	put_u8(&b, '{');
	w_key(&b, "base_score");
	w_str(&b, "6.2741650E-1");
	w_key(&b, "boost_from_average");
	w_str(&b, "1");
	w_key(&b, "num_class");
	w_str(&b, "0");
	w_key(&b, "num_feature");
	w_str(&b, "30");
	w_key(&b, "num_target");
	w_str(&b, "1");
	put_u8(&b, '}');
	w_key(&b, "objective");
	put_u8(&b, '{');
	w_key(&b, "name");
	w_str(&b, "binary:logistic");
	w_key(&b, "reg_loss_param");
	put_u8(&b, '{');
	w_key(&b, "scale_pos_weight");
	w_str(&b, "1");
	put_u8(&b, '}');
	put_u8(&b, '}');
	put_u8(&b, '}');			/* learner */
	w_key(&b, "version");
	w_arr(&b, 3);
	w_int(&b, 2);
	w_int(&b, 1);
	w_int(&b, 3);
	w_key(&b, "big");
	w_arr(&b, 4);
	w_int(&b, 1000);
	w_int(&b, -100000);
	w_int(&b, INT64_C(5000000000));
	{
		put_u8(&b, 'd');
		put_f32(&b, 1e-7f);
	}
	put_u8(&b, '}');
	*out = b;
}

/* The JSON XGBoost would write for build_xgb_model() (decimal floats). */
static const char *xgb_model_json =
"{\"learner\":{\"attributes\":{},\"feature_names\":[],\"feature_types\":[],"
"\"gradient_booster\":{\"model\":{\"gbtree_model_param\":{\"num_parallel_tree\":\"1\","
"\"num_trees\":\"2\"},\"iteration_indptr\":[0,1,2],\"tree_info\":[0,0],\"trees\":["
"{\"base_weights\":[-1E-1,5E-1,-2.5E-1],\"categories\":[],\"categories_nodes\":[],"
"\"categories_segments\":[],\"categories_sizes\":[],\"default_left\":[1,0,0],\"id\":0,"
"\"left_children\":[1,-1,-1],\"loss_changes\":[1.23456E2,0E0,0E0],"
"\"parents\":[2147483647,0,0],\"right_children\":[2,-1,-1],"
"\"split_conditions\":[3E-1,5E-1,-2.5E-1],\"split_indices\":[7,0,0],"
"\"split_type\":[0,0,0],\"sum_hessian\":[1E2,6.025E1,3.975E1],"
"\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"30\",\"num_nodes\":\"3\","
"\"size_leaf_vector\":\"1\"}},"
"{\"base_weights\":[-1E-1,5E-1,-2.5E-1],\"categories\":[],\"categories_nodes\":[],"
"\"categories_segments\":[],\"categories_sizes\":[],\"default_left\":[1,0,0],\"id\":1,"
"\"left_children\":[1,-1,-1],\"loss_changes\":[1.23456E2,0E0,0E0],"
"\"parents\":[2147483647,0,0],\"right_children\":[2,-1,-1],"
"\"split_conditions\":[1.75E1,5E-1,-2.5E-1],\"split_indices\":[8,0,0],"
"\"split_type\":[0,0,0],\"sum_hessian\":[1E2,6.025E1,3.975E1],"
"\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"30\",\"num_nodes\":\"3\","
"\"size_leaf_vector\":\"1\"}}]},\"name\":\"gbtree\"},"
"\"learner_model_param\":{\"base_score\":\"6.2741650E-1\",\"boost_from_average\":\"1\","
"\"num_class\":\"0\",\"num_feature\":\"30\",\"num_target\":\"1\"},"
"\"objective\":{\"name\":\"binary:logistic\",\"reg_loss_param\":{\"scale_pos_weight\":\"1\"}}},"
"\"version\":[2,1,3],\"big\":[1000,-100000,5000000000,1E-7]}";

/* Hand-built XGBoost-layout model: decode, compare, sweep prefixes. */
static void
test_xgb_model(void)
{
	Buf			b;
	char		err[256];
	char		where[1024] = "";
	json_error_t jerr;
	json_t	   *got,
			   *want,
			   *sc,
			   *lcn;
	GsUbjLimits lim = {.max_depth = 64, .max_elements = 1000};

	build_xgb_model(&b);
	got = decode(b.p, b.n, &lim, err, sizeof err);
	if (!check(got != NULL, "hand-built XGBoost-layout model decodes (%zu bytes)", b.n))
		diag("%s", err);
	want = json_loads(xgb_model_json, 0, &jerr);
	check(want != NULL, "expected model JSON parses");
	if (!check(got && want && json_equal_f32(got, want, where, sizeof where),
			   "XGBoost-layout model equals its JSON form (float32 compare)"))
		diag("mismatch at %s", where);
	check(got && want && !json_equal(got, want),
		  "...while exact json_equal differs (float32 values are not the decimal doubles)");

	sc = json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(
				json_object_get(got, "learner"), "gradient_booster"), "model"), "trees"), 0),
						 "split_conditions");
	check(json_is_real(json_array_get(sc, 0)) &&
		  json_real_value(json_array_get(sc, 0)) == (double) 0.3f,
		  "split_conditions[0] is the exact float32 0.3f");
	lcn = json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(
				json_object_get(got, "learner"), "gradient_booster"), "model"), "trees"), 1),
						  "left_children");
	check(json_is_integer(json_array_get(lcn, 1)) &&
		  json_integer_value(json_array_get(lcn, 1)) == -1,
		  "left_children[1] is integer -1");

	/* the float32 comparison must actually detect differences */
	{
		json_t	   *w2 = json_deep_copy(want);
		json_t	   *t0 = json_array_get(json_object_get(json_object_get(json_object_get(
				json_object_get(w2, "learner"), "gradient_booster"), "model"), "trees"), 0);

		json_array_set_new(json_object_get(t0, "split_conditions"), 0, json_real(0.30001));
		check(!json_equal_f32(got, w2, where, sizeof where),
			  "float32 compare detects a changed split condition");
		json_decref(w2);
	}

	lim.max_elements = 50;
	expect_err_lim(b.p, b.n, &lim, "UBJSON document has more than 50 values",
				   "model rejected with a too-small max_elements");

	check_all_prefixes(b.p, b.n, "the XGBoost-layout model");
	check_mutations(b.p, b.n, "the XGBoost-layout model");

	json_decref(got);
	json_decref(want);
	free(b.p);
}

/* A document that uses every supported marker, for prefix/mutation sweeps. */
static void
test_kitchen_sink_sweeps(void)
{
	static const unsigned char doc[] = {
		'{', 'i', 1, 'a', '[', 'Z', 'T', 'F', 'N', 'i', 0x80, 'U', 0xFF, 'I', 0x12, 0x34,
		'l', 1, 2, 3, 4, 'L', 1, 2, 3, 4, 5, 6, 7, 8,
		'd', 0x3F, 0xC0, 0, 0, 'D', 0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18,
		'C', 'c', 'S', 'I', 0, 3, 'x', 'y', 'z', ']',
		'U', 2, 'b', 'c', '[', '$', 'd', '#', 'i', 2, 0x3F, 0x80, 0, 0, 0x40, 0, 0, 0,
		'i', 1, 'e', '[', '#', 'U', 2, '{', '}', '[', '$', 'i', '#', 'i', 2, 1, 0xFF,
		'i', 1, 'f', '{', '$', 'l', '#', 'i', 1, 'i', 1, 'g', 0, 0, 0, 9,
		'i', 1, 'h', '{', '#', 'i', 1, 'l', 0, 0, 0, 1, 'k', '[', '$', 'S', '#', 'i', 1,
		'i', 2, 'o', 'k',
		'i', 1, 'j', '[', '$', 'C', '#', 'i', 2, 'o', 'k',
		'i', 1, 'm', '[', '$', 'D', '#', 'i', 1, 0, 0, 0, 0, 0, 0, 0, 0,
		'i', 1, 'n', '[', '$', 'I', '#', 'i', 1, 0xFF, 0xFF,
		'i', 1, 'p', '[', '$', 'L', '#', 'i', 1, 0, 0, 0, 0, 0, 0, 0, 1,
		'i', 1, 'q', '[', '$', 'U', '#', 'i', 1, 200,
		'}'
	};

	expect_json(doc, sizeof doc,
				"{\"a\":[null,true,false,-128,255,4660,16909060,72623859790382856,1.5,"
				"3.141592653589793,\"c\",\"xyz\"],\"bc\":[1.0,2.0],\"e\":[{},[1,-1]],"
				"\"f\":{\"g\":9},\"h\":{\"k\":[\"ok\"]},\"j\":[\"o\",\"k\"],\"m\":[0.0],"
				"\"n\":[-1],\"p\":[1],\"q\":[200]}",
				"kitchen-sink document with every marker");
	check_all_prefixes(doc, sizeof doc, "the kitchen-sink document");
	check_mutations(doc, sizeof doc, "the kitchen-sink document");
}

/* Allocation budget for the OOM-injection test; -1 = unlimited. */
static long g_alloc_budget = -1;

/* jansson allocator that fails once g_alloc_budget is exhausted. */
static void *
budget_malloc(size_t n)
{
	if (g_alloc_budget == 0)
		return NULL;
	if (g_alloc_budget > 0)
		g_alloc_budget--;
	return malloc(n);
}

/*
 * Fail the k-th jansson allocation for k = 0, 1, ... while decoding the
 * model: every attempt must return NULL with an out-of-memory message
 * (and, under ASan/LSan, leak nothing) until the budget suffices.
 */
static void
test_oom(void)
{
	Buf			b;
	long		k;
	long		bad = 0;
	char		first[300] = "";
	int			succeeded = 0;

	build_xgb_model(&b);
	json_set_alloc_funcs(budget_malloc, free);
	for (k = 0; k < 100000 && !succeeded; k++)
	{
		char		err[256] = "";
		json_t	   *v;

		g_alloc_budget = k;
		v = decode(b.p, b.n, NULL, err, sizeof err);
		g_alloc_budget = -1;
		if (v != NULL)
		{
			succeeded = 1;
			json_decref(v);
		}
		else if (strstr(err, "out of memory decoding UBJSON at byte") == NULL)
		{
			if (bad++ == 0)
				snprintf(first, sizeof first, "budget %ld: %s", k, err);
		}
	}
	json_set_alloc_funcs(malloc, free);
	if (!check(succeeded && bad == 0,
			   "allocation failure at each of the first %ld jansson allocations is reported cleanly",
			   k - 1))
		diag("succeeded=%d bad=%ld first %s", succeeded, bad, first);
	free(b.p);
}

/* Read a whole file; returns malloc'd bytes or NULL if absent. */
static unsigned char *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *p = NULL;
	size_t		cap = 0,
				n = 0,
				r;

	if (f == NULL)
		return NULL;
	for (;;)
	{
		if (n == cap)
		{
			unsigned char *np;

			cap = cap ? cap * 2 : 65536;
			np = realloc(p, cap);
			if (np == NULL)
			{
				free(p);
				fclose(f);
				return NULL;
			}
			p = np;
		}
		r = fread(p + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*len = n;
	return p;
}

/*
 * Compare the real XGBoost fixture <dir>/<name>.ubj with its .json twin
 * (both written by XGBoost from the same booster); "# SKIP" if either file
 * is absent.
 */
static void
test_fixture_pair(const char *dir, const char *name)
{
	char		ubj_path[1024],
				json_path[1024];
	unsigned char *ubj;
	size_t		ubj_len = 0;
	FILE	   *jf;
	json_t	   *a,
			   *b;
	json_error_t jerr;
	char		err[256];
	char		where[1024] = "";
	GsUbjLimits lim = {.max_depth = 64};

	snprintf(ubj_path, sizeof ubj_path, "%s/%s.ubj", dir, name);
	snprintf(json_path, sizeof json_path, "%s/%s.json", dir, name);
	jf = fopen(json_path, "rb");
	ubj = read_file(ubj_path, &ubj_len);
	if (jf == NULL || ubj == NULL)
	{
		g_tests++;
		printf("ok %d # SKIP fixture %s and/or %s not present\n", g_tests, ubj_path,
			   json_path);
		if (jf)
			fclose(jf);
		free(ubj);
		return;
	}
	fclose(jf);

	a = decode(ubj, ubj_len, &lim, err, sizeof err);
	if (!check(a != NULL, "fixture %s decodes (%zu bytes)", ubj_path, ubj_len))
		diag("%s", err);
	b = json_load_file(json_path, 0, &jerr);
	if (!check(b != NULL, "fixture %s loads with jansson", json_path))
		diag("%s line %d: %s", jerr.source, jerr.line, jerr.text);
	if (!check(a && b && json_equal_f32(a, b, where, sizeof where),
			   "fixture %s.ubj equals %s.json (numbers compared as float32)", name, name))
		diag("mismatch at %s", where);
	check(a && json_is_object(json_object_get(a, "learner")),
		  "fixture %s has a learner object", name);
	json_decref(a);
	json_decref(b);
	free(ubj);
}

/* Real XGBoost fixtures: the required pair, extra pairs, a bad file. */
static void
test_fixtures(const char *dir)
{
	static const char *const extra[] = {
		"tiny_base", "diabetes_reg", "fraud_binary", "wine_softprob"
	};
	char		path[1024];
	unsigned char *p;
	size_t		n = 0,
				i;

	test_fixture_pair(dir, "breast_cancer");
	for (i = 0; i < sizeof extra / sizeof extra[0]; i++)
		test_fixture_pair(dir, extra[i]);

	snprintf(path, sizeof path, "%s/bad/truncated.ubj", dir);
	p = read_file(path, &n);
	if (p == NULL)
	{
		g_tests++;
		printf("ok %d # SKIP fixture %s not present\n", g_tests, path);
		return;
	}
	expect_err(p, n, "exceeds remaining input", "fixture bad/truncated.ubj is rejected");
	free(p);
}

/* Run all groups and print the TAP plan. */
/* GsUbjLimits.interrupted: counts its calls, fires at call fire_at (0: never). */
typedef struct UbjPolls
{
	long		calls;
	long		fire_at;
} UbjPolls;

static bool
count_polls(void *arg)
{
	UbjPolls   *p = arg;

	p->calls++;
	return p->fire_at > 0 && p->calls >= p->fire_at;
}

/*
 * Long documents call the interrupt check about every GS_UBJ_POLL_VALUES
 * values, also inside one long typed float array, and a check that fires
 * stops the decoding with an error (nothing leaks: ASan build).
 */
static void
test_interrupt(void)
{
	const uint64_t n = 4 * GS_UBJ_POLL_VALUES + 10;
	Buf			typed = {0},
				plain = {0};
	char		err[256];

	put_u8(&typed, '[');
	put_u8(&typed, '$');
	put_u8(&typed, 'd');
	put_u8(&typed, '#');
	put_u8(&typed, 'L');
	put_be(&typed, n, 8);
	put_u8(&plain, '[');
	for (uint64_t i = 0; i < n; i++)
	{
		put_f32(&typed, (float) i);
		put_u8(&plain, 'i');
		put_u8(&plain, (unsigned) (i & 0x7f));
	}
	put_u8(&plain, ']');

	for (int k = 0; k < 2; k++)
	{
		const Buf  *b = k ? &plain : &typed;
		const char *what = k ? "array of int8 values" : "typed float32 array";
		UbjPolls	polls = {0, 0};
		GsUbjLimits lim = {.interrupted = count_polls, .interrupt_arg = &polls};
		json_t	   *v = gs_ubj_decode(b->p, b->n, &lim, err, sizeof err);
		long		calls = polls.calls;

		check(v != NULL && json_array_size(v) == n && calls >= 4 && calls <= 6,
			  "%s of %llu values: decoded, interrupt checked %ld times", what,
			  (unsigned long long) n, calls);
		json_decref(v);
		for (long at = 1; at <= calls; at++)
		{
			polls.calls = 0;
			polls.fire_at = at;
			v = gs_ubj_decode(b->p, b->n, &lim, err, sizeof err);
			if (!check(v == NULL && strstr(err, "UBJSON decoding interrupted at byte") != NULL,
					   "%s: interrupt at check %ld stops it (%s)", what, at, err))
				json_decref(v);
		}
	}
	free(typed.p);
	free(plain.p);
}

int
main(int argc, char **argv)
{
	/* works from the repository root and from tests/unit */
	static const char *const candidates[] = {
		"tests/fixtures/models", "../fixtures/models", "../../tests/fixtures/models"
	};
	const char *fixture_dir = candidates[0];
	size_t		i;

	if (argc > 1)
		fixture_dir = argv[1];
	else
		for (i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
		{
			char		probe[1024];
			FILE	   *f;

			snprintf(probe, sizeof probe, "%s/breast_cancer.ubj", candidates[i]);
			f = fopen(probe, "rb");
			if (f != NULL)
			{
				fclose(f);
				fixture_dir = candidates[i];
				break;
			}
		}

	test_scalars();
	test_strings();
	test_containers();
	test_optimized();
	test_errors();
	test_xgb_model();
	test_kitchen_sink_sweeps();
	test_oom();
	test_interrupt();
	test_fixtures(fixture_dir);

	printf("1..%d\n", g_tests);
	if (g_failed)
		printf("# %d of %d checks failed\n", g_failed, g_tests);
	return g_failed ? 1 : 0;
}

/*
 * test_ubj.c - standalone TAP test for the UBJSON decoder
 * (src/core/frontend/common/ubj_decode.c, ubj_reader.c) on documents built by hand: every
 * scalar, string, container and optimized-container form, and the errors
 * (test_ubj_model.c: XGBoost models, fixtures, allocation failures,
 * interrupts).  No test framework, no PostgreSQL, no Python.
 *
 *   make tests/unit/test_ubj && (cd tests/unit && ./test_ubj)
 *
 * Every decode is done from an exact-size heap copy of the input so that
 * AddressSanitizer catches any read past the end.  Output is TAP; the exit
 * status is nonzero if any check fails.
 */
#include "ubj_util.h"

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

int
main(void)
{
	test_scalars();
	test_strings();
	test_containers();
	test_optimized();
	test_errors();
	printf("1..%d\n", g_tests);
	if (g_failed)
		printf("# %d of %d checks failed\n", g_failed, g_tests);
	return g_failed ? 1 : 0;
}

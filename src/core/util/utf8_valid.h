/*
 * utf8_valid.h
 *	  Strict UTF-8 validation for strings taken from untrusted model bytes.
 */
#ifndef GS_UTF8_VALID_H
#define GS_UTF8_VALID_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..n) is valid UTF-8 (RFC 3629); NUL bytes are allowed. */
extern bool gs_utf8_valid(const unsigned char *s, size_t n);

#endif							/* GS_UTF8_VALID_H */

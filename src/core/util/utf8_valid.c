/*
 * utf8_valid.c
 *	  Strict UTF-8 validation for strings taken from untrusted model bytes.
 */
#include "utf8_valid.h"

/*
 * Strict UTF-8 validation (RFC 3629): rejects overlong forms, surrogates,
 * code points above U+10FFFF and truncated sequences.  NUL is allowed.
 */
bool
gs_utf8_valid(const unsigned char *s, size_t n)
{
	size_t		i = 0;

	while (i < n)
	{
		unsigned char c = s[i];
		unsigned char lo = 0x80,
					hi = 0xBF;
		size_t		ncont,
					k;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			ncont = 1;
		else if (c >= 0xE0 && c <= 0xEF)
		{
			ncont = 2;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		}
		else if (c >= 0xF0 && c <= 0xF4)
		{
			ncont = 3;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		}
		else
			return false;
		if (n - i - 1 < ncont)
			return false;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (k = 2; k <= ncont; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
		i += ncont + 1;
	}
	return true;
}

/*
 * cat_names.c
 *	  Building, checking and searching a forest's category names; see
 *	  cat_names.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* qsort_r */
#endif
#include "cat_names.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8_valid.h"

static void *
cn_alloc(const GsAllocator *a, size_t n)
{
	return a->alloc(a->ctx, n > 0 ? n : 1);
}

/* The sum of the features' counts into *total; GS_ERR_LIMIT for one over the cap. */
static GsCode
count_total(int32_t nf, const int64_t *count, int64_t *total, GsStatus *st)
{
	*total = 0;
	for (int32_t j = 0; j < nf; j++)
	{
		if (count[j] < 0 || count[j] > GS_CATNAMES_MAX_PER_FEATURE)
			return gs_status_set(st, GS_ERR_LIMIT,
								 "feature %d has %lld categories, more than the limit of %d",
								 j + 1, (long long) count[j], GS_CATNAMES_MAX_PER_FEATURE);
		*total += count[j];
	}
	return GS_OK;
}

/* Start the names; see cat_names.h. */
GsCode
gs_catnames_new(GsCatNames **out, const GsAllocator *a, int32_t nf, const uint8_t *kind,
				const int64_t *count, size_t text_bytes, GsStatus *st)
{
	GsCatNames *cn;
	int64_t		total;

	*out = NULL;
	if (count_total(nf, count, &total, st))
		return st->code;
	/* names, terminators and an image's counts fit 32-bit offsets */
	if (total > INT32_MAX / 2 ||
		(uint64_t) text_bytes + (uint64_t) total + 12 * (uint64_t) nf > UINT32_MAX)
		return gs_status_set(st, GS_ERR_LIMIT, "too many category names in the model");

	cn = cn_alloc(a, sizeof(GsCatNames));
	if (cn == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
	memset(cn, 0, sizeof(GsCatNames));
	*out = cn;
	cn->alloc = *a;
	cn->n_features = nf;
	cn->n_names = (int32_t) total;
	cn->text_bytes = text_bytes + (size_t) total;
	cn->kind = cn_alloc(a, (size_t) nf);
	cn->first = cn_alloc(a, sizeof(int32_t) * ((size_t) nf + 1));
	cn->name_at = cn_alloc(a, sizeof(uint32_t) * (size_t) total);
	cn->order = cn_alloc(a, sizeof(int32_t) * (size_t) total);
	cn->text = cn_alloc(a, cn->text_bytes);
	cn->unknown = cn_alloc(a, sizeof(float) * (size_t) nf);
	if (!cn->kind || !cn->first || !cn->name_at || !cn->order || !cn->text || !cn->unknown)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
	cn->first[0] = 0;
	for (int32_t j = 0; j < nf; j++)
	{
		cn->kind[j] = count[j] > 0 ? kind[j] : GS_CATNAMES_NONE;
		cn->first[j + 1] = cn->first[j] + (int32_t) count[j];
		cn->unknown[j] = NAN;
	}
	return GS_OK;
}

/* Names that find a category by its hash; see cat_names.h. */
GsCode
gs_catnames_new_hashed(GsCatNames **out, const GsAllocator *a, int32_t nf, const bool *is_cat,
					   const int64_t *count, const uint32_t *hashes,
					   uint32_t (*hash_name) (const char *s, size_t len), GsStatus *st)
{
	uint8_t    *kind = cn_alloc(a, (size_t) nf);
	int64_t    *none = cn_alloc(a, sizeof(int64_t) * (size_t) nf);
	int64_t		total;
	GsCatNames *cn;
	GsCode		rc;

	*out = NULL;
	if (!kind || !none)
	{
		if (kind)
			a->free(a->ctx, kind);
		if (none)
			a->free(a->ctx, none);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
	}
	memset(kind, GS_CATNAMES_NONE, (size_t) nf);
	memset(none, 0, sizeof(int64_t) * (size_t) nf);
	/* no names: first[] spans nothing, and finish has nothing to sort */
	rc = gs_catnames_new(out, a, nf, kind, none, 0, st);
	a->free(a->ctx, kind);
	a->free(a->ctx, none);
	if (rc != GS_OK)
		return rc;
	cn = *out;
	if (count_total(nf, count, &total, st))
		return st->code;
	if (total > INT32_MAX)
		return gs_status_set(st, GS_ERR_LIMIT, "too many categories in the model");
	cn->hashes = cn_alloc(a, sizeof(uint32_t) * (size_t) total);
	cn->hash_first = cn_alloc(a, sizeof(int32_t) * ((size_t) nf + 1));
	if (!cn->hashes || !cn->hash_first)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading category names");
	if (total > 0)
		memcpy(cn->hashes, hashes, sizeof(uint32_t) * (size_t) total);
	cn->hash_first[0] = 0;
	for (int32_t j = 0; j < nf; j++)
	{
		cn->hash_first[j + 1] = cn->hash_first[j] + (int32_t) count[j];
		if (is_cat[j])
			cn->kind[j] = GS_CATNAMES_HASH;
	}
	cn->hash_name = hash_name;
	return GS_OK;
}

/* Feature whose names include name number i. */
static int32_t
feature_of(const GsCatNames *cn, int32_t i)
{
	int32_t		lo = 0,
				hi = cn->n_features - 1;

	/* the last feature j with first[j] <= i */
	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo + 1) / 2;

		if (cn->first[mid] <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Add the next name; see cat_names.h. */
GsCode
gs_catnames_add(GsCatNames *cn, const char *name, size_t len, GsStatus *st)
{
	if (cn->n_added >= cn->n_names || len + 1 > cn->text_bytes - cn->text_used)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid model: more category names than announced");
	if (len == 0)
		name = "";				/* an empty name may come as NULL */
	if (memchr(name, '\0', len) != NULL ||
		!gs_utf8_valid((const unsigned char *) name, len))
	{
		int32_t		j = feature_of(cn, cn->n_added);

		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid model: category %d of feature %d is not valid UTF-8 text",
							 cn->n_added - cn->first[j], j + 1);
	}
	cn->name_at[cn->n_added++] = (uint32_t) cn->text_used;
	memcpy(cn->text + cn->text_used, name, len);
	cn->text[cn->text_used + len] = '\0';
	cn->text_used += len + 1;
	return GS_OK;
}

/* qsort_r order of codes: by the bytes of their names. */
static int
cmp_codes(const void *a, const void *b, void *arg)
{
	const GsCatNames *cn = arg;

	return strcmp(cn->text + cn->name_at[*(const int32_t *) a],
				  cn->text + cn->name_at[*(const int32_t *) b]);
}

/* Check and index the names; see cat_names.h. */
GsCode
gs_catnames_finish(GsCatNames *cn, GsStatus *st)
{
	if (cn->n_added != cn->n_names)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid model: fewer category names than announced");
	for (int32_t j = 0; j < cn->n_features; j++)
	{
		int32_t		n = cn->first[j + 1] - cn->first[j];
		int32_t    *ord = cn->order + cn->first[j];

		/* global name indices, sorted by name */
		for (int32_t c = 0; c < n; c++)
			ord[c] = cn->first[j] + c;
		qsort_r(ord, (size_t) n, sizeof(int32_t), cmp_codes, cn);
		for (int32_t c = 1; c < n; c++)
			if (cmp_codes(&ord[c - 1], &ord[c], cn) == 0)
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid model: category \"%.64s\" appears twice in feature %d",
									 cn->text + cn->name_at[ord[c]], j + 1);
		/* keep codes, not global indices */
		for (int32_t c = 0; c < n; c++)
			ord[c] -= cn->first[j];
	}
	return GS_OK;
}

/* Value for an unknown name; see cat_names.h. */
void
gs_catnames_set_unknown(GsCatNames *cn, int32_t j, float value)
{
	cn->unknown[j] = value;
}

/* Names of feature j; see cat_names.h. */
int32_t
gs_catnames_count(const GsCatNames *cn, int32_t j)
{
	if (cn == NULL || j < 0 || j >= cn->n_features)
		return 0;
	if (cn->kind[j] == GS_CATNAMES_HASH)
		return cn->hash_first[j + 1] - cn->hash_first[j];
	return cn->first[j + 1] - cn->first[j];
}

/* Whether feature j takes names; see cat_names.h. */
bool
gs_catnames_takes_text(const GsCatNames *cn, int32_t j)
{
	return cn != NULL && j >= 0 && j < cn->n_features && cn->kind[j] != GS_CATNAMES_NONE;
}

/* Name of code c of feature j; see cat_names.h. */
const char *
gs_catnames_name(const GsCatNames *cn, int32_t j, int32_t c)
{
	if (cn->kind[j] == GS_CATNAMES_HASH)
		return NULL;
	return cn->text + cn->name_at[cn->first[j] + c];
}

/* Compare the NUL-terminated a with s of len bytes, as strcmp would. */
static int
cmp_len(const char *a, const char *s, size_t len)
{
	size_t		alen = strlen(a);
	int			r = (alen < len ? alen : len) == 0 ? 0 : memcmp(a, s, alen < len ? alen : len);

	if (r != 0)
		return r;
	return alen < len ? -1 : alen > len ? 1 : 0;
}

/* Look a name up; see cat_names.h. */
int32_t
gs_catnames_code(const GsCatNames *cn, int32_t j, const char *s, size_t len)
{
	int32_t		lo = 0,
				hi = gs_catnames_count(cn, j) - 1;

	if (len > 0 && memchr(s, '\0', len) != NULL)
		return -1;
	if (hi >= 0 && cn->kind[j] == GS_CATNAMES_HASH)
	{
		uint32_t	h = cn->hash_name(s, len);
		const uint32_t *hs = cn->hashes + cn->hash_first[j];

		while (lo <= hi)
		{
			int32_t		mid = lo + (hi - lo) / 2;

			if (hs[mid] == h)
				return mid;
			if (hs[mid] < h)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
		return -1;
	}
	while (lo <= hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;
		int32_t		code = cn->order[cn->first[j] + mid];
		int			r = cmp_len(gs_catnames_name(cn, j, code), s, len);

		if (r == 0)
			return code;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Release the names; see cat_names.h. */
void
gs_catnames_free(GsCatNames *cn)
{
	GsAllocator a;

	if (cn == NULL)
		return;
	a = cn->alloc;
	if (cn->kind)
		a.free(a.ctx, cn->kind);
	if (cn->first)
		a.free(a.ctx, cn->first);
	if (cn->name_at)
		a.free(a.ctx, cn->name_at);
	if (cn->order)
		a.free(a.ctx, cn->order);
	if (cn->text)
		a.free(a.ctx, cn->text);
	if (cn->unknown)
		a.free(a.ctx, cn->unknown);
	if (cn->hashes)
		a.free(a.ctx, cn->hashes);
	if (cn->hash_first)
		a.free(a.ctx, cn->hash_first);
	a.free(a.ctx, cn);
}

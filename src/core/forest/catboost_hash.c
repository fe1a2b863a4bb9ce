/*
 * catboost_hash.c
 *	  CatBoost's hash of a category name, and the hashes a CatBoost model
 *	  saved without its training pool knows, read back from its tables.
 *
 * CatBoost scores a category by a 32-bit hash of its name: the low 32 bits
 * of CityHash64 as of CityHash 1.0 (Google's later versions give other
 * values), over the name's bytes (an integer category as its decimal
 * text).  This is that function, written from the algorithm's description
 * and checked against the hashes CatBoost itself writes into a model saved
 * with its pool (tests/fixtures/catnames/cb_hash_names.tsv).  Words are read
 * little-endian, as CatBoost reads them on the machines it runs on.
 *
 * A file saved without its pool lists no names, so the glue cannot turn a
 * name into a position in a list.  Instead every hash the model can tell
 * apart is recovered from the model: its one-hot values, and the keys of
 * its tables of one category.  Such a key is CalcHash(0, h) = M^2 h mod
 * 2^64 (M odd, so invertible), then CalcHash with each binarized element's
 * 0 or 1, which is undone for both values of each.  A name whose hash is
 * not among them is one the model never saw.  That is exact only when each
 * categorical feature in a table of several categories also has a table of
 * its own: the names seen in training are all in it.  CatBoost keeps the
 * table of one category for every feature a tree split on first, so models
 * lacking one are not expected; they are refused.
 */
#include "catboost_ctr.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Most binarized elements of a table of one category undone (2^n tries a key) */
#define CB_MAX_PEEL		4

static const uint64_t k0 = UINT64_C(0xc3a5c85c97cb3127);
static const uint64_t k1 = UINT64_C(0xb492b66fbe98f273);
static const uint64_t k2 = UINT64_C(0x9ae16a3b2f90404f);
static const uint64_t k3 = UINT64_C(0xc949d7c7509e6557);

static inline uint64_t
load64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t
load32(const unsigned char *p)
{
	uint32_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t
rotr(uint64_t v, unsigned s)
{
	return s == 0 ? v : (v >> s) | (v << (64 - s));
}

static inline uint64_t
mix47(uint64_t v)
{
	return v ^ (v >> 47);
}

/* 128 bits (lo, hi) to 64, as CityHash's Hash128to64 */
static inline uint64_t
fold128(uint64_t lo, uint64_t hi)
{
	const uint64_t mul = UINT64_C(0x9ddfea08eb382d69);
	uint64_t	a = mix47((lo ^ hi) * mul);
	uint64_t	b = mix47((hi ^ a) * mul);

	return b * mul;
}

static uint64_t
short_hash(const unsigned char *s, size_t len)
{
	if (len > 8)
	{
		uint64_t	a = load64(s),
					b = load64(s + len - 8);

		/* the rotation is by len, 9 to 16: never 0 */
		return fold128(a, rotr(b + len, (unsigned) len)) ^ b;
	}
	if (len >= 4)
		return fold128(len + (load32(s) << 3), load32(s + len - 4));
	if (len > 0)
	{
		uint32_t	y = (uint32_t) s[0] + ((uint32_t) s[len >> 1] << 8);
		uint32_t	z = (uint32_t) len + ((uint32_t) s[len - 1] << 2);

		return mix47(y * k2 ^ z * k3) * k2;
	}
	return k2;
}

static uint64_t
medium_hash(const unsigned char *s, size_t len)
{
	uint64_t	a = load64(s) * k1,
				b = load64(s + 8),
				c = load64(s + len - 8) * k2,
				d = load64(s + len - 16) * k0;

	return fold128(rotr(a - b, 43) + rotr(c, 30) + d, a + rotr(b ^ k3, 20) - c + len);
}

/* CityHash's pair of 64-bit values from 32 bytes and two seeds */
typedef struct Pair64
{
	uint64_t	first;
	uint64_t	second;
} Pair64;

static inline Pair64
pair32(const unsigned char *s, uint64_t a, uint64_t b)
{
	uint64_t	w = load64(s),
				x = load64(s + 8),
				y = load64(s + 16),
				z = load64(s + 24),
				c;
	Pair64		p;

	a += w;
	b = rotr(b + a + z, 21);
	c = a;
	a += x + y;
	b += rotr(a, 44);
	p.first = a + z;
	p.second = b + c;
	return p;
}

static uint64_t
long_hash(const unsigned char *s, size_t len)
{
	uint64_t	z = load64(s + 24),
				a = load64(s) + (len + load64(s + len - 16)) * k0,
				b = rotr(a + z, 52),
				c = rotr(a, 37),
				vf,
				vs,
				wf,
				ws,
				r;

	a += load64(s + 8);
	c += rotr(a, 7);
	a += load64(s + 16);
	vf = a + z;
	vs = b + rotr(a, 31) + c;
	a = load64(s + 16) + load64(s + len - 32);
	z = load64(s + len - 8);
	b = rotr(a + z, 52);
	c = rotr(a, 37);
	a += load64(s + len - 24);
	c += rotr(a, 7);
	a += load64(s + len - 16);
	wf = a + z;
	ws = b + rotr(a, 31) + c;
	r = mix47((vf + ws) * k2 + (wf + vs) * k0);
	return mix47(r * k0 + vs) * k2;
}

/* CityHash64 of CityHash 1.0 */
static uint64_t
city64(const unsigned char *s, size_t len)
{
	uint64_t	x,
				y,
				z,
				t;
	Pair64		v,
				w;

	if (len <= 16)
		return short_hash(s, len);
	if (len <= 32)
		return medium_hash(s, len);
	if (len <= 64)
		return long_hash(s, len);
	/* the last 64 bytes first, then 64-byte blocks from the start */
	x = load64(s);
	y = load64(s + len - 16) ^ k1;
	z = load64(s + len - 56) ^ k0;
	v = pair32(s + len - 64, len, y);
	w = pair32(s + len - 32, len * k1, k0);
	z += mix47(v.second) * k1;
	x = rotr(z + x, 39) * k1;
	y = rotr(y, 33) * k1;
	for (size_t left = (len - 1) & ~(size_t) 63; left > 0; left -= 64, s += 64)
	{
		x = rotr(x + y + v.first + load64(s + 16), 37) * k1;
		y = rotr(y + v.second + load64(s + 48), 42) * k1;
		x ^= w.second;
		y ^= v.first;
		z = rotr(z ^ w.first, 33);
		v = pair32(s, v.second * k1, x + w.first);
		w = pair32(s + 32, z + w.second, y);
		t = z;
		z = x;
		x = t;
	}
	return fold128(fold128(v.first, w.first) + mix47(y) * k1 + z,
				   fold128(v.second, w.second) + x);
}

/* CatBoost's hash of a category name; see catboost_ctr.h. */
uint32_t
gs_cb_cat_hash(const char *s, size_t len)
{
	return (uint32_t) city64((const unsigned char *) s, len);
}

/* The inverse of odd m modulo 2^64 (Newton's iteration). */
static uint64_t
inverse64(uint64_t m)
{
	uint64_t	x = m;			/* right to 3 bits for odd m */

	for (int i = 0; i < 5; i++)
		x *= 2 - m * x;
	return x;
}

/* (categorical feature << 32 | hash) pairs */
typedef struct PairList
{
	uint64_t   *v;
	size_t		n;
	size_t		cap;
	const GsAllocator *a;
} PairList;

static int
push(PairList *l, int32_t j, uint32_t h)
{
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? 2 * l->cap : 1024;
		uint64_t   *p = l->a->alloc(l->a->ctx, sizeof(uint64_t) * cap);

		if (!p)
			return -1;
		if (l->n)
			memcpy(p, l->v, sizeof(uint64_t) * l->n);
		if (l->v)
			l->a->free(l->a->ctx, l->v);
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = (uint64_t) (uint32_t) j << 32 | h;
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * The hashes of feature j behind key of a table of j alone and n_bin
 * binarized elements (each 0 or 1): every value the key can have come from
 * that is a sign-extended 32-bit hash, as CatBoost hashes a category.
 */
static int
push_key_hashes(PairList *l, int32_t j, uint64_t key, int32_t n_bin, uint64_t m, uint64_t inv,
				uint64_t inv2)
{
	for (uint32_t bits = 0; bits < (1u << n_bin); bits++)
	{
		uint64_t	a = key,
					h;

		/* CalcHash(a, b) = M (a + M b): a = key / M - M b */
		for (int32_t e = n_bin - 1; e >= 0; e--)
			a = a * inv - m * ((bits >> e) & 1u);
		h = a * inv2;
		if ((int64_t) h == (int64_t) (int32_t) (uint32_t) h && push(l, j, (uint32_t) h))
			return -1;
	}
	return 0;
}

/* Release what gs_cb_known_hashes made; see catboost_ctr.h. */
void
gs_cb_known_free(const GsAllocator *a, GsCbKnown *k)
{
	if (k->hash)
		a->free(a->ctx, k->hash);
	if (k->first)
		a->free(a->ctx, k->first);
	if (k->told)
		a->free(a->ctx, k->told);
	memset(k, 0, sizeof(*k));
}

/* The hashes of each categorical feature c can tell apart; see catboost_ctr.h. */
GsCode
gs_cb_known_hashes(const GsCbCtrs *c, const GsAllocator *a, bool strict, GsCbKnown *out,
				   GsStatus *st)
{
	const uint64_t m = gs_cb_calc_hash(1, 0);	/* M (a + M 0) = M */
	const uint64_t inv = inverse64(m);
	const uint64_t inv2 = inv * inv;
	const size_t nc = (size_t) c->n_catf;
	PairList	l = {NULL, 0, 0, a};
	/* per feature: in a table's categories; with a table of its own; one-hot values */
	uint8_t    *flags = a->alloc(a->ctx, nc + 1);
	size_t		kept = 0;

	memset(out, 0, sizeof(*out));
	out->first = a->alloc(a->ctx, sizeof(int32_t) * (nc + 1));
	out->told = a->alloc(a->ctx, sizeof(bool) * (nc + 1));
	if (!flags || !out->first || !out->told)
		goto nomem;
	memset(flags, 0, nc + 1);
	for (int32_t k = 0; k < c->n_onehot; k++)
	{
		flags[c->onehot_cat[k]] |= 4;
		if (push(&l, c->onehot_cat[k], (uint32_t) c->onehot_hash[k]))
			goto nomem;
	}
	for (int32_t e = 0; e < c->n_bin; e++)
		if (c->bin[e].onehot)
		{
			flags[c->bin[e].column] |= 4;
			if (push(&l, c->bin[e].column, (uint32_t) c->bin[e].hash))
				goto nomem;
		}
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		const GsCbTable *t = &c->table[ti];
		int32_t		j = c->cat_of[t->cat_off];

		for (int32_t e = 0; e < t->n_cat; e++)
			flags[c->cat_of[t->cat_off + e]] |= 1;
		if (t->n_cat != 1 || t->n_bin > CB_MAX_PEEL)
			continue;
		flags[j] |= 2;
		for (uint64_t s = 0; s <= t->mask; s++)
		{
			uint64_t	key = c->slots[t->slot_off + (int64_t) s].key;

			if (key != GS_CB_EMPTY && push_key_hashes(&l, j, key, t->n_bin, m, inv, inv2))
				goto nomem;
		}
	}
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		/* a feature of tables is known from one of its own; otherwise from its one-hot values */
		out->told[j] = (flags[j] & 1) ? (flags[j] & 2) != 0 : (flags[j] & 4) != 0;
		if (strict && (flags[j] & 1) && !(flags[j] & 2))
		{
			gs_status_set(st, GS_ERR_UNSUPPORTED,
						  "the CatBoost model's file does not name its categories, and the categorical "
						  "feature %d has no statistics of its own", c->catf_col[j] + 1);
			gs_status_detail(st, "Without the names, the categories a model knows are read from its "
							 "tables of one category (with at most %d binarized numbers), which this "
							 "feature lacks. Save the model with its training data: "
							 "model.save_model(path, format=\"json\", pool=Pool(X_train, y_train, "
							 "cat_features=...)).", CB_MAX_PEEL);
			a->free(a->ctx, flags);
			if (l.v)
				a->free(a->ctx, l.v);
			gs_cb_known_free(a, out);
			return st->code;
		}
	}
	a->free(a->ctx, flags);
	flags = NULL;
	if (l.n > 0)
		qsort(l.v, l.n, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < l.n; i++)
		if (kept == 0 || l.v[i] != l.v[kept - 1])
			l.v[kept++] = l.v[i];
	if (kept > (size_t) GS_CATNAMES_MAX_PER_FEATURE)
	{
		if (l.v)
			a->free(a->ctx, l.v);
		gs_cb_known_free(a, out);
		return gs_status_set(st, GS_ERR_LIMIT, "the model knows more than %d categories",
							 GS_CATNAMES_MAX_PER_FEATURE);
	}
	out->hash = a->alloc(a->ctx, sizeof(uint32_t) * (kept > 0 ? kept : 1));
	if (!out->hash)
		goto nomem;
	out->first[0] = 0;
	for (size_t i = 0, j = 0; j < nc; j++)
	{
		for (; i < kept && (size_t) (l.v[i] >> 32) == j; i++)
			out->hash[i] = (uint32_t) l.v[i];
		out->first[j + 1] = (int32_t) i;
	}
	if (l.v)
		a->free(a->ctx, l.v);
	return GS_OK;

nomem:
	if (flags)
		a->free(a->ctx, flags);
	if (l.v)
		a->free(a->ctx, l.v);
	gs_cb_known_free(a, out);
	return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
}

/*
 * The names of a file that names no categories, from c's hashes (code c of
 * feature j is c->hash[c->hash_first[j] + c]): a name is found by
 * CatBoost's hash of it.  Also for a forest image (catboost_ctr_image.c).
 */
GsCode
gs_cb_names_of_hashes(const GsCbCtrs *c, const GsAllocator *a, int32_t n_input,
					  GsCatNames **names, GsStatus *st)
{
	size_t		ignored = 0;
	bool	   *is_cat = gs_zalloc(a, sizeof(bool) * (size_t) n_input, &ignored);
	int64_t    *count = gs_zalloc(a, sizeof(int64_t) * (size_t) n_input, &ignored);
	uint32_t   *by_col = gs_zalloc(a, sizeof(uint32_t) * (size_t) c->n_hash, &ignored);
	GsCode		rc = GS_OK;

	*names = NULL;
	if (!is_cat || !count || !by_col)
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t j = 0; rc == GS_OK && j < c->n_catf; j++)
	{
		is_cat[c->catf_col[j]] = true;
		count[c->catf_col[j]] = c->hash_first[j + 1] - c->hash_first[j];
	}
	/* the names take the hashes column by column */
	for (int32_t col = 0, at = 0; rc == GS_OK && col < n_input; col++)
		for (int32_t j = 0; j < c->n_catf; j++)
			if (c->catf_col[j] == col)
			{
				memcpy(by_col + at, c->hash + c->hash_first[j], sizeof(uint32_t) * (size_t) count[col]);
				at += (int32_t) count[col];
			}
	if (rc == GS_OK)
		rc = gs_catnames_new_hashed(names, a, n_input, is_cat, count, by_col, gs_cb_cat_hash, st);
	gs_release(a, by_col);
	gs_release(a, is_cat);
	gs_release(a, count);
	return rc;
}

/*
 * catboost_ctr_read.c
 *	  Read a CatBoost JSON model's categorical features into the tables
 *	  catboost_ctr.c evaluates (see catboost_ctr.h): the categorical
 *	  features' columns and one-hot values, the hashes of the categories
 *	  the file names (cat_features_hash), the CTRs, their projections and
 *	  their tables of counts (ctr_data), made once into the CTRs' values
 *	  per bucket.  catboost_names.c then gives each feature its names.
 *
 * Everything is validated before use: a table's stride and counts, its
 * keys (decimal strings of 64-bit numbers; a free slot, 2^64 - 1, is
 * skipped), each CTR's type, priors and target border, each element's
 * feature; and that the file names every category the model has
 * statistics of or one-hot splits on (a file saved with part of the
 * training data does not).
 */
#include "catboost_read.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CB_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* Most CTRs, tables and elements of one projection a model may have */
#define CB_MAX_CTRS		(1 << 20)
#define CB_MAX_ELEMENTS	64

/* An integral number of v in [lo, hi]; 0 on success. */
static int
ctr_int(json_t *v, double lo, double hi, int64_t *out)
{
	double		d;

	if (gs_cb_json_double(v, &d) || !(d >= lo && d <= hi) || d != floor(d))
		return -1;
	*out = (int64_t) d;
	return 0;
}

/* A member of obj that is a finite number, as a float that is finite too. */
static int
ctr_float(json_t *obj, const char *key, float *out)
{
	double		d;

	if (gs_cb_json_double(json_object_get(obj, key), &d))
		return -1;
	*out = (float) d;
	return isfinite(d) && isfinite(*out) ? 0 : -1;
}

/* A 32-bit hash as the file writes it (unsigned, or signed for one-hot values). */
static int
ctr_hash32(json_t *v, int32_t *out)
{
	int64_t		h;

	if (ctr_int(v, (double) INT32_MIN, (double) UINT32_MAX, &h))
		return -1;
	*out = (int32_t) (uint32_t) (h & 0xFFFFFFFF);
	return 0;
}

/* A table key: a decimal string of a 64-bit unsigned number. */
static int
ctr_key(json_t *v, uint64_t *out)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	char	   *end;
	unsigned long long k;

	if (s == NULL || json_string_length(v) == 0 || json_string_length(v) > 20 ||
		strspn(s, "0123456789") != json_string_length(v))
		return -1;
	errno = 0;
	k = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = (uint64_t) k;
	return 0;
}

/* The GS_CB_CTR_* of a ctr_type name, or -1. */
static int
ctr_type(const char *name)
{
	if (strcmp(name, "Borders") == 0)
		return GS_CB_CTR_BORDERS;
	if (strcmp(name, "Buckets") == 0)
		return GS_CB_CTR_BUCKETS;
	if (strcmp(name, "Counter") == 0 || strcmp(name, "FeatureFreq") == 0)
		return GS_CB_CTR_COUNTER;
	return -1;
}

/* What a read needs beside the tables. */
typedef struct CtrRead
{
	json_t	   *root;
	json_t	   *info;
	int32_t		n_float;
	const int32_t *float_col;
	const bool *float_nan_right;
	const GsLimits *lim;
	const GsAllocator *a;
	GsCbCtrs   *c;
	/*
	 * identifier -> table number, open addressing on the identifiers'
	 * FNV-1a hashes (no jansson object: inside a backend, PostgreSQL's
	 * json_object() would shadow jansson's)
	 */
	const char **id_key;
	int32_t    *id_table;
	uint64_t	id_mask;
	bool		hashed;			/* the file names no categories */
	json_t	   *names;			/* else its cat_features_hash */
} CtrRead;

/* The slot of identifier s in R's map: its own, or the free one it would take. */
static uint64_t
id_slot(const CtrRead *R, const char *s)
{
	uint64_t	h = UINT64_C(0xcbf29ce484222325);

	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
		h = (h ^ *p) * UINT64_C(0x100000001b3);
	for (h &= R->id_mask;; h = (h + 1) & R->id_mask)
		if (R->id_key[h] == NULL || strcmp(R->id_key[h], s) == 0)
			return h;
}

/* The table of identifier s, or -1. */
static int32_t
id_table(const CtrRead *R, const char *s)
{
	uint64_t	h = id_slot(R, s);

	return R->id_key[h] ? R->id_table[h] : -1;
}

/* Categorical features: their columns and one-hot values. */
static GsCode
read_cat_features(CtrRead *R, json_t *cf, int32_t *n_input, GsStatus *st)
{
	GsCbCtrs   *c = R->c;
	int64_t		cap = R->lim->max_features > 0 ? R->lim->max_features : (int64_t) GS_NODE_FEATURE_MASK;
	int64_t		n_onehot = 0;
	unsigned char *seen;

	if (json_array_size(cf) > (size_t) cap)
		return gs_status_limit(st, GS_LIMIT_FEATURES, cap, "the model has %zu categorical features, more than the limit of %lld",
							 json_array_size(cf), (long long) cap);
	c->n_catf = (int32_t) json_array_size(cf);
	c->catf_col = gs_zalloc(R->a, sizeof(int32_t) * (size_t) c->n_catf, &c->bytes);
	if (!c->catf_col)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		json_t	   *f = json_array_get(cf, j),
				   *vals = json_object_get(f, "values");
		int64_t		idx,
					flat;

		if (ctr_int(json_object_get(f, "feature_index"), j, j, &idx) ||
			ctr_int(json_object_get(f, "flat_feature_index"), 0, (double) (cap - 1), &flat))
			return CB_ERR(st, "invalid CatBoost model: categorical feature %d has an invalid feature_index or flat_feature_index", j);
		if (vals != NULL && !json_is_array(vals))
			return CB_ERR(st, "invalid CatBoost model: categorical feature %d has values that are not an array", j);
		c->catf_col[j] = (int32_t) flat;
		if (flat + 1 > *n_input)
			*n_input = (int32_t) flat + 1;
		n_onehot += vals ? (int64_t) json_array_size(vals) : 0;
	}
	if (n_onehot > CB_MAX_CTRS)
		return gs_status_set(st, GS_ERR_LIMIT, "the model has %lld one-hot values, more than the limit of %d",
							 (long long) n_onehot, CB_MAX_CTRS);
	/* every column is read by one feature */
	seen = gs_zalloc(R->a, (size_t) *n_input, &c->bytes);
	if (!seen)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	c->bytes -= (size_t) *n_input;
	for (int32_t i = 0; i < R->n_float; i++)
		seen[R->float_col[i]] = 1;
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		if (seen[c->catf_col[j]])
		{
			R->a->free(R->a->ctx, seen);
			return CB_ERR(st, "invalid CatBoost model: two features read column %d", c->catf_col[j]);
		}
		seen[c->catf_col[j]] = 1;
	}
	R->a->free(R->a->ctx, seen);

	c->n_onehot = (int32_t) n_onehot;
	c->onehot_cat = gs_zalloc(R->a, sizeof(int32_t) * (size_t) n_onehot, &c->bytes);
	c->onehot_hash = gs_zalloc(R->a, sizeof(int32_t) * (size_t) n_onehot, &c->bytes);
	if (!c->onehot_cat || !c->onehot_hash)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	n_onehot = 0;
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		json_t	   *vals = json_object_get(json_array_get(cf, j), "values");

		for (size_t k = 0; vals && k < json_array_size(vals); k++)
		{
			if (ctr_hash32(json_array_get(vals, k), &c->onehot_hash[n_onehot]))
				return CB_ERR(st, "invalid CatBoost model: categorical feature %d has a one-hot value that is no 32-bit hash", j);
			c->onehot_cat[n_onehot++] = j;
		}
	}
	return GS_OK;
}

/*
 * The names of the categories (cat_features_hash): their hashes into
 * c->hash in the file's order (named_names later gives each feature its
 * own), the array kept in R->names.
 */
static GsCode
read_names(CtrRead *R, GsStatus *st)
{
	GsCbCtrs   *c = R->c;
	json_t	   *h = json_object_get(R->info, "cat_features_hash");

	if (h == NULL)
	{
		/* saved without its pool: names are hashed (hashed_names) */
		R->hashed = true;
		return GS_OK;
	}
	if (!json_is_array(h) || json_array_size(h) > GS_CATNAMES_MAX_PER_FEATURE)
		return CB_ERR(st, "invalid CatBoost model: cat_features_hash is not an array of at most %d names",
					  GS_CATNAMES_MAX_PER_FEATURE);
	R->names = h;
	c->n_hash = (int32_t) json_array_size(h);
	c->hash = gs_zalloc(R->a, sizeof(int32_t) * (size_t) c->n_hash, &c->bytes);
	if (!c->hash)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t k = 0; k < c->n_hash; k++)
	{
		json_t	   *e = json_array_get(h, k);

		if (ctr_hash32(json_object_get(e, "hash"), &c->hash[k]) ||
			!json_is_string(json_object_get(e, "value")))
			return CB_ERR(st, "invalid CatBoost model: entry %d of cat_features_hash is not a hash and a name", k);
	}
	return GS_OK;
}

/* The elements of projection elems into table t (categories, then the rest). */
static GsCode
read_projection(CtrRead *R, json_t *elems, int32_t q, GsCbTable *t, GsStatus *st)
{
	GsCbCtrs   *c = R->c;

	t->cat_off = c->n_cat_of;
	t->bin_off = c->n_bin;
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < json_array_size(elems); k++)
		{
			json_t	   *e = json_array_get(elems, k),
					   *kindv = json_object_get(e, "combination_element");
			const char *kind = json_is_string(kindv) ? json_string_value(kindv) : "";
			int64_t		idx;
			GsCbBin    *b;

			if (strcmp(kind, "cat_feature_value") == 0)
			{
				if (pass == 1)
					continue;
				if (ctr_int(json_object_get(e, "cat_feature_index"), 0, c->n_catf - 1, &idx))
					return CB_ERR(st, "invalid CatBoost model: CTR %d reads a categorical feature the model lacks", q);
				c->cat_of[c->n_cat_of++] = (int32_t) idx;
				t->n_cat++;
				continue;
			}
			if (pass == 0)
				continue;
			b = &c->bin[c->n_bin++];
			t->n_bin++;
			if (strcmp(kind, "float_feature") == 0)
			{
				if (ctr_int(json_object_get(e, "float_feature_index"), 0, R->n_float - 1, &idx) ||
					ctr_float(e, "border", &b->border))
					return CB_ERR(st, "invalid CatBoost model: CTR %d has an invalid float element", q);
				b->column = R->float_col[idx];
				b->nan_right = R->float_nan_right[idx];
			}
			else if (strcmp(kind, "cat_feature_exact_value") == 0)
			{
				if (ctr_int(json_object_get(e, "cat_feature_index"), 0, c->n_catf - 1, &idx) ||
					ctr_hash32(json_object_get(e, "value"), &b->hash))
					return CB_ERR(st, "invalid CatBoost model: CTR %d has an invalid one-hot element", q);
				b->column = (int32_t) idx;
				b->onehot = 1;
			}
			else
			{
				gs_status_set(st, GS_ERR_UNSUPPORTED, "CatBoost CTR elements of kind \"%.32s\" are not supported (CTR %d)",
							  kind, q);
				return st->code;
			}
		}
	if (t->n_cat == 0)
		return CB_ERR(st, "invalid CatBoost model: CTR %d reads no categorical feature", q);
	return GS_OK;
}

/* Table t's counts from ctr_data[identifier] into its slots. */
static GsCode
read_table(CtrRead *R, json_t *data, int32_t ti, GsStatus *st)
{
	GsCbCtrs   *c = R->c;
	GsCbTable  *t = &c->table[ti];
	json_t	   *map = json_object_get(data, "hash_map");
	size_t		n = json_array_size(map) / (size_t) t->stride;
	int64_t		bucket = 0;

	for (size_t e = 0; e < n; e++)
	{
		json_t	   *kv = json_array_get(map, e * (size_t) t->stride);
		uint64_t	key,
					s;

		if (ctr_key(kv, &key))
			return CB_ERR(st, "invalid CatBoost model: a key of CTR table %d is not a 64-bit number in a string", ti);
		if (key == GS_CB_EMPTY)
			continue;
		for (int32_t k = 1; k < t->stride; k++)
		{
			int64_t		v;

			if (ctr_int(json_array_get(map, e * (size_t) t->stride + (size_t) k), 0, (double) UINT32_MAX, &v))
				return CB_ERR(st, "invalid CatBoost model: a count of CTR table %d is not a 32-bit count", ti);
			c->counts[t->count_off + bucket * (t->stride - 1) + k - 1] = (uint32_t) v;
		}
		for (s = key & t->mask;; s = (s + 1) & t->mask)
		{
			GsCbSlot   *slot = &c->slots[t->slot_off + (int64_t) s];

			if (slot->key == key)
				return CB_ERR(st, "invalid CatBoost model: CTR table %d holds one key twice", ti);
			if (slot->key == GS_CB_EMPTY)
			{
				slot->key = key;
				slot->bucket = bucket;
				break;
			}
		}
		bucket++;
	}
	t->n_buckets = bucket;
	return GS_OK;
}

/*
 * Number the tables: one per identifier of ctrs (R's map, from each
 * identifier to its table), checking each CTR has an identifier, elements,
 * borders and a table in ctr_data; *n_elem receives the elements of the
 * tables' projections, *n_border the CTRs' borders.
 */
static GsCode
number_tables(CtrRead *R, json_t *ctrs, json_t *data, int64_t *n_elem, int64_t *n_border,
			  GsStatus *st)
{
	GsCbCtrs   *c = R->c;

	R->id_mask = 1;
	while (R->id_mask < 2 * (uint64_t) (c->n_ctr + 1))
		R->id_mask <<= 1;
	R->id_key = R->a->alloc(R->a->ctx, sizeof(char *) * (size_t) R->id_mask);
	R->id_table = R->a->alloc(R->a->ctx, sizeof(int32_t) * (size_t) R->id_mask);
	if (!R->id_key || !R->id_table)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	memset(R->id_key, 0, sizeof(char *) * (size_t) R->id_mask);
	R->id_mask -= 1;
	for (int32_t q = 0; q < c->n_ctr; q++)
	{
		json_t	   *e = json_array_get(ctrs, q),
				   *id = json_object_get(e, "identifier"),
				   *elems = json_object_get(e, "elements"),
				   *borders = json_object_get(e, "borders"),
				   *td;
		uint64_t	slot;

		if (!json_is_string(id) || !json_is_array(elems) || !json_is_array(borders) ||
			json_array_size(elems) == 0 || json_array_size(elems) > CB_MAX_ELEMENTS)
			return CB_ERR(st, "invalid CatBoost model: CTR %d lacks an identifier, elements or borders", q);
		*n_border += (int64_t) json_array_size(borders);
		slot = id_slot(R, json_string_value(id));
		if (R->id_key[slot] != NULL)
			continue;
		td = json_object_get(data, json_string_value(id));
		if (!json_is_object(td))
			return CB_ERR(st, "invalid CatBoost model: CTR %d has no table in ctr_data", q);
		R->id_key[slot] = json_string_value(id);
		R->id_table[slot] = c->n_table++;
		*n_elem += (int64_t) json_array_size(elems);
	}
	return GS_OK;
}

/*
 * Size table t of CTR q (e) from its data td: type ty, stride, counter
 * denominator, projection; its slots and counts at *slots and *counts,
 * which grow past them.
 */
static GsCode
size_table(CtrRead *R, json_t *e, json_t *td, int32_t q, int ty, GsCbTable *t, int64_t *slots,
		   int64_t *counts, GsStatus *st)
{
	json_t	   *map = json_object_get(td, "hash_map");
	int64_t		stride,
				den;
	GsCode		rc;

	if (ctr_int(json_object_get(td, "hash_stride"), 2, 257, &stride) ||
		ctr_int(json_object_get(td, "counter_denominator"), 0, (double) UINT32_MAX, &den) ||
		!json_is_array(map) || json_array_size(map) % (size_t) stride != 0 ||
		(ty == GS_CB_CTR_COUNTER) != (stride == 2))
		return CB_ERR(st, "invalid CatBoost model: the table of CTR %d has an invalid hash_stride, counter_denominator or hash_map", q);
	t->type = ty;
	t->stride = (int32_t) stride;
	t->denominator = (uint32_t) den;
	if ((rc = read_projection(R, json_object_get(e, "elements"), q, t, st)))
		return rc;
	/* slots: a power of two at least twice the keys */
	t->mask = 1;
	while (t->mask < 2 * (uint64_t) (json_array_size(map) / (size_t) stride))
		t->mask <<= 1;
	t->slot_off = *slots;
	t->count_off = *counts;
	t->n_buckets = 0;
	*slots += (int64_t) t->mask;
	*counts += (int64_t) (json_array_size(map) / (size_t) stride) * (stride - 1);
	t->mask -= 1;
	if (*slots > ((int64_t) 1 << 31) || *counts > ((int64_t) 1 << 31))
		return gs_status_set(st, GS_ERR_LIMIT, "the model's CTR tables are too large");
	return GS_OK;
}

/*
 * CTR q (e) into c->ctr[q]: its type, priors, shift, scale, target border
 * and borders (at *n_border, which grows past them); its table sized when
 * it is the first CTR of the table (size_table), and the target border
 * checked against it.
 */
static GsCode
read_ctr(CtrRead *R, json_t *e, json_t *data, int32_t q, int64_t *n_border, int64_t *slots,
		 int64_t *counts, GsStatus *st)
{
	GsCbCtrs   *c = R->c;
	json_t	   *id = json_object_get(e, "identifier"),
			   *type = json_object_get(e, "ctr_type"),
			   *borders = json_object_get(e, "borders");
	GsCbCtr    *r = &c->ctr[q];
	int32_t		ti = id_table(R, json_string_value(id));
	GsCbTable  *t = &c->table[ti];
	int			ty = json_is_string(type) ? ctr_type(json_string_value(type)) : -2;
	int64_t		tb;
	GsCode		rc;

	if (ty == -2)
		return CB_ERR(st, "invalid CatBoost model: CTR %d has no ctr_type", q);
	if (ty < 0)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED, "CatBoost CTRs of type \"%.40s\" are not supported",
					  json_string_value(type));
		gs_status_detail(st, "CTRs of types Borders, Buckets, Counter and FeatureFreq are.");
		return st->code;
	}
	if (ctr_float(e, "prior_numerator", &r->prior_num) ||
		ctr_float(e, "prior_denomerator", &r->prior_denom) ||
		ctr_float(e, "shift", &r->shift) || ctr_float(e, "scale", &r->scale) ||
		ctr_int(json_object_get(e, "target_border_idx"), 0, 255, &tb))
		return CB_ERR(st, "invalid CatBoost model: CTR %d has an invalid prior, shift, scale or target_border_idx", q);
	if (!(r->prior_denom > 0.0f))
		return CB_ERR(st, "invalid CatBoost model: CTR %d has a prior denominator that is not positive", q);
	r->table = ti;
	r->target_border = (int32_t) tb;
	c->ctr_border_start[q] = (uint32_t) *n_border;
	for (size_t k = 0; k < json_array_size(borders); k++)
	{
		double		b;
		json_t	   *bv = json_array_get(borders, k);

		b = json_is_real(bv) ? json_real_value(bv) : json_is_integer(bv) ? (double) json_integer_value(bv) : NAN;
		if (!isfinite((float) b))
			return CB_ERR(st, "invalid CatBoost model: CTR %d has a border that is no finite float", q);
		c->ctr_border[(*n_border)++] = (float) b;
	}
	if (t->stride != 0)
	{
		/* a table read before, by a CTR of the same identifier */
		if (t->type != ty)
			return CB_ERR(st, "invalid CatBoost model: CTRs of one table have two types");
	}
	else if ((rc = size_table(R, e, json_object_get(data, json_string_value(id)), q, ty, t,
							  slots, counts, st)) != GS_OK)
		return rc;
	if (t->type == GS_CB_CTR_BUCKETS ? tb >= t->stride - 1 :
		t->type == GS_CB_CTR_BORDERS && t->stride > 3 ? tb >= t->stride - 2 : tb != 0)
		return CB_ERR(st, "invalid CatBoost model: CTR %d has a target_border_idx its table lacks", q);
	return GS_OK;
}

/*
 * Fill the sized tables: slots (n_slots) and counts (n_counts) allocated,
 * each table's counts read once (from its first CTR), and the CTRs of each
 * table listed together, in model order (table_ctr_start, table_ctr).
 */
static GsCode
fill_tables(CtrRead *R, json_t *ctrs, json_t *data, int64_t n_slots, int64_t n_counts,
			GsStatus *st)
{
	GsCbCtrs   *c = R->c;
	int32_t    *fill;

	c->n_slots = n_slots;
	c->slots = gs_zalloc(R->a, sizeof(GsCbSlot) * (size_t) n_slots, &c->bytes);
	c->counts = R->a->alloc(R->a->ctx, sizeof(uint32_t) * (size_t) (n_counts > 0 ? n_counts : 1));
	if (!c->slots || !c->counts)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int64_t k = 0; k < n_slots; k++)
		c->slots[k].key = GS_CB_EMPTY;
	c->table_ctr_start = gs_zalloc(R->a, sizeof(int32_t) * ((size_t) c->n_table + 1), &c->bytes);
	c->table_ctr = gs_zalloc(R->a, sizeof(int32_t) * (size_t) c->n_ctr, &c->bytes);
	if (!c->table_ctr_start || !c->table_ctr)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t q = 0; q < c->n_ctr; q++)
	{
		json_t	   *id = json_object_get(json_array_get(ctrs, q), "identifier");
		int32_t		ti = c->ctr[q].table;
		GsCode		rc;

		if ((q & 255) == 255 && (rc = gs_check_interrupt(&R->lim->interrupt, st)))
			return rc;
		if (c->table_ctr_start[ti + 1]++ == 0 &&
			(rc = read_table(R, json_object_get(data, json_string_value(id)), ti, st)))
			return rc;
	}
	for (int32_t ti = 0; ti < c->n_table; ti++)
		c->table_ctr_start[ti + 1] += c->table_ctr_start[ti];
	fill = R->a->alloc(R->a->ctx, sizeof(int32_t) * ((size_t) c->n_table + 1));
	if (!fill)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	memcpy(fill, c->table_ctr_start, sizeof(int32_t) * ((size_t) c->n_table + 1));
	for (int32_t q = 0; q < c->n_ctr; q++)
		c->table_ctr[fill[c->ctr[q].table]++] = q;
	R->a->free(R->a->ctx, fill);
	return GS_OK;
}

/*
 * The CTRs and their tables: the tables numbered (one per identifier),
 * each CTR read and its table sized, the tables filled from ctr_data, and
 * the CTRs' values per bucket made (gs_cb_ctrs_values).
 */
static GsCode
read_ctrs(CtrRead *R, json_t *ctrs, json_t *data, GsStatus *st)
{
	GsCbCtrs   *c = R->c;
	int64_t		n_elem = 0,
				n_border = 0,
				slots = 0,
				counts = 0;
	GsCode		rc;

	if (json_array_size(ctrs) > CB_MAX_CTRS)
		return gs_status_set(st, GS_ERR_LIMIT, "the model has %zu CTRs, more than the limit of %d",
							 json_array_size(ctrs), CB_MAX_CTRS);
	c->n_ctr = (int32_t) json_array_size(ctrs);
	if ((rc = number_tables(R, ctrs, data, &n_elem, &n_border, st)) != GS_OK)
		return rc;
	if (n_border > CB_MAX_CTRS * 16)
		return gs_status_set(st, GS_ERR_LIMIT, "the model's CTRs have %lld borders, more than the limit of %d",
							 (long long) n_border, CB_MAX_CTRS * 16);
	c->ctr = gs_zalloc(R->a, sizeof(GsCbCtr) * (size_t) c->n_ctr, &c->bytes);
	c->ctr_border_start = gs_zalloc(R->a, sizeof(uint32_t) * ((size_t) c->n_ctr + 1), &c->bytes);
	c->ctr_border = gs_zalloc(R->a, sizeof(float) * (size_t) n_border, &c->bytes);
	c->table = gs_zalloc(R->a, sizeof(GsCbTable) * (size_t) c->n_table, &c->bytes);
	c->cat_of = gs_zalloc(R->a, sizeof(int32_t) * (size_t) n_elem, &c->bytes);
	c->bin = gs_zalloc(R->a, sizeof(GsCbBin) * (size_t) n_elem, &c->bytes);
	if (!c->ctr || !c->ctr_border_start || !c->ctr_border || !c->table || !c->cat_of || !c->bin)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	n_border = 0;
	for (int32_t q = 0; q < c->n_ctr; q++)
		if ((rc = read_ctr(R, json_array_get(ctrs, q), data, q, &n_border, &slots, &counts,
						   st)) != GS_OK)
			return rc;
	c->ctr_border_start[c->n_ctr] = (uint32_t) n_border;
	if ((rc = fill_tables(R, ctrs, data, slots, counts, st)) != GS_OK)
		return rc;
	return gs_cb_ctrs_values(c, R->a, st);
}

/* Read the categorical features; see catboost_ctr.h. */
GsCode
gs_cb_ctrs_read(json_t *root, int32_t n_float, const int32_t *float_col,
				const bool *float_nan_right, const GsLimits *lim, const GsAllocator *a,
				int32_t *n_input, GsCbCtrs **out, GsCatNames **names, GsStatus *st)
{
	CtrRead		R;
	json_t	   *cf,
			   *ctrs,
			   *data,
			   *ff;
	size_t		ignored = 0;
	GsCode		rc;

	*out = NULL;
	*names = NULL;
	memset(&R, 0, sizeof(R));
	R.root = root;
	R.info = json_object_get(root, "features_info");
	R.n_float = n_float;
	R.float_col = float_col;
	R.float_nan_right = float_nan_right;
	R.lim = lim;
	R.a = a;
	cf = json_object_get(R.info, "categorical_features");
	ctrs = json_object_get(R.info, "ctrs");
	data = json_object_get(root, "ctr_data");
	if ((cf != NULL && !json_is_array(cf)) || (ctrs != NULL && !json_is_array(ctrs)) ||
		(data != NULL && !json_is_object(data)))
		return CB_ERR(st, "invalid CatBoost model: categorical_features, ctrs or ctr_data has the wrong type");
	if (json_array_size(cf) == 0)
	{
		if (json_array_size(ctrs) > 0 || json_object_size(data) > 0)
			return CB_ERR(st, "invalid CatBoost model: CTRs without categorical features");
		return GS_OK;
	}
	R.c = gs_zalloc(a, sizeof(GsCbCtrs), &ignored);
	if (!R.c)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	R.c->bytes = sizeof(GsCbCtrs);
	if ((rc = read_cat_features(&R, cf, n_input, st)) ||
		(rc = read_names(&R, st)))
		goto fail;
	R.c->n_input = *n_input;
	if (json_array_size(ctrs) > 0 && !json_is_object(data))
	{
		rc = CB_ERR(st, "invalid CatBoost model: CTRs without ctr_data");
		goto fail;
	}
	/* a model without CTRs (one-hot splits only) still has the offsets of none */
	if (json_array_size(ctrs) == 0 &&
		(!(R.c->ctr_border_start = gs_zalloc(a, sizeof(uint32_t), &R.c->bytes)) ||
		 !(R.c->table_ctr_start = gs_zalloc(a, sizeof(int32_t), &R.c->bytes))))
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto fail;
	}
	if ((json_array_size(ctrs) > 0 && (rc = read_ctrs(&R, ctrs, data, st))) ||
		(rc = R.hashed ? gs_cb_hashed_names(R.c, a, *n_input, names, st) :
		 (rc = gs_cb_check_names(R.c, a, st)) ? rc :
		 gs_cb_named_names(R.c, R.names, a, *n_input, names, st)))
		goto fail;
	/* split_index counts the float borders, then the one-hot values, then the CTR borders */
	ff = json_object_get(R.info, "float_features");
	for (size_t i = 0; i < json_array_size(ff); i++)
		R.c->split_base += (int64_t) json_array_size(json_object_get(json_array_get(ff, i), "borders"));
	R.c->split_base += R.c->n_onehot;
	gs_release(a, R.id_key);
	gs_release(a, R.id_table);
	*out = R.c;
	return GS_OK;

fail:
	gs_release(a, R.id_key);
	gs_release(a, R.id_table);
	gs_cb_ctrs_free(a, R.c);
	gs_catnames_free(*names);
	*names = NULL;
	return rc;
}

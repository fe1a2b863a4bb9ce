/*
 * catboost_ctr_image.c
 *	  A CatBoost model's categorical features (GsCbCtrs) in a forest image:
 *	  their region's size, writing and reading it, and the check of their
 *	  invariants that gs_forest_check runs (see forest_image.h).
 *
 * The region, in host byte order: ten 32-bit words (whether the names are
 * found by hash, n_input, n_catf, n_onehot, n_ctr, n_table, n_hash,
 * n_cat_of, n_bin, the CTR borders' count), three 64-bit ones (n_slots,
 * n_values, split_base), then the arrays: catf_col, hash, hash_first,
 * onehot_cat, onehot_hash, the CTRs (table, target border, prior
 * numerator and denominator, shift, scale), ctr_border_start, ctr_border,
 * the tables (n_cat, cat_off, n_bin, bin_off, type, stride, denominator;
 * mask, slot_off, n_buckets, value_off), table_ctr_start, table_ctr,
 * cat_of, the binarized elements (column, one-hot and NaN bytes, two zero
 * bytes, border, hash), the slots (key, bucket) and the CTR values.  The
 * counts are not kept: the values computed from them at load are.
 *
 * Names found by hash (a file saved without its pool) are not in the
 * image's category names: they are the tables' hashes, rebuilt on reading.
 */
#include "catboost_ctr.h"

#include <math.h>
#include <string.h>

#include "image_cursor.h"

#define REGION_HEADER (10 * 4 + 3 * 8)
#define CTR_BYTES	24
#define TABLE_BYTES (7 * 4 + 4 * 8)
#define BIN_BYTES	16
#define SLOT_BYTES	16

/* Bytes of the arrays for these counts (each below 2^31: no overflow). */
static uint64_t
arrays_bytes(uint64_t n_catf, uint64_t n_onehot, uint64_t n_ctr, uint64_t n_table,
			 uint64_t n_hash, uint64_t n_cat_of, uint64_t n_bin, uint64_t n_border,
			 uint64_t n_slots, uint64_t n_values)
{
	return 4 * n_catf + 4 * n_hash + 4 * (n_catf + 1) + 8 * n_onehot + CTR_BYTES * n_ctr +
		4 * (n_ctr + 1) + 4 * n_border + TABLE_BYTES * n_table + 4 * (n_table + 1) + 4 * n_ctr +
		4 * n_cat_of + BIN_BYTES * n_bin + SLOT_BYTES * n_slots + 4 * n_values;
}

/* Bytes of c's region; see catboost_ctr.h. */
size_t
gs_cb_ctrs_image_size(const GsCbCtrs *c)
{
	return REGION_HEADER +
		(size_t) arrays_bytes((uint64_t) c->n_catf, (uint64_t) c->n_onehot, (uint64_t) c->n_ctr,
							  (uint64_t) c->n_table, (uint64_t) c->n_hash, (uint64_t) c->n_cat_of,
							  (uint64_t) c->n_bin, c->ctr_border_start[c->n_ctr],
							  (uint64_t) c->n_slots, (uint64_t) c->n_values);
}

/* Write c's region; see catboost_ctr.h. */
void
gs_cb_ctrs_image_write(const GsCbCtrs *c, bool names_hashed, unsigned char *buf)
{
	GsImageCursor w = {buf, NULL, 0};
	uint32_t	n_border = c->ctr_border_start[c->n_ctr];

	gs_put_u32(&w, names_hashed ? 1 : 0);
	gs_put_u32(&w, (uint32_t) c->n_input);
	gs_put_u32(&w, (uint32_t) c->n_catf);
	gs_put_u32(&w, (uint32_t) c->n_onehot);
	gs_put_u32(&w, (uint32_t) c->n_ctr);
	gs_put_u32(&w, (uint32_t) c->n_table);
	gs_put_u32(&w, (uint32_t) c->n_hash);
	gs_put_u32(&w, (uint32_t) c->n_cat_of);
	gs_put_u32(&w, (uint32_t) c->n_bin);
	gs_put_u32(&w, n_border);
	gs_put_i64(&w, (int64_t) c->n_slots);
	gs_put_i64(&w, (int64_t) c->n_values);
	gs_put_i64(&w, (int64_t) c->split_base);
	gs_put(&w, c->catf_col, 4 * (size_t) c->n_catf);
	gs_put(&w, c->hash, 4 * (size_t) c->n_hash);
	gs_put(&w, c->hash_first, 4 * ((size_t) c->n_catf + 1));
	gs_put(&w, c->onehot_cat, 4 * (size_t) c->n_onehot);
	gs_put(&w, c->onehot_hash, 4 * (size_t) c->n_onehot);
	for (int32_t q = 0; q < c->n_ctr; q++)
	{
		const GsCbCtr *r = &c->ctr[q];

		gs_put_u32(&w, (uint32_t) r->table);
		gs_put_u32(&w, (uint32_t) r->target_border);
		gs_put(&w, &r->prior_num, 4);
		gs_put(&w, &r->prior_denom, 4);
		gs_put(&w, &r->shift, 4);
		gs_put(&w, &r->scale, 4);
	}
	gs_put(&w, c->ctr_border_start, 4 * ((size_t) c->n_ctr + 1));
	gs_put(&w, c->ctr_border, 4 * (size_t) n_border);
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		const GsCbTable *t = &c->table[ti];

		gs_put_u32(&w, (uint32_t) t->n_cat);
		gs_put_u32(&w, (uint32_t) t->cat_off);
		gs_put_u32(&w, (uint32_t) t->n_bin);
		gs_put_u32(&w, (uint32_t) t->bin_off);
		gs_put_u32(&w, (uint32_t) t->type);
		gs_put_u32(&w, (uint32_t) t->stride);
		gs_put_u32(&w, t->denominator);
		gs_put_i64(&w, (int64_t) t->mask);
		gs_put_i64(&w, (int64_t) t->slot_off);
		gs_put_i64(&w, (int64_t) t->n_buckets);
		gs_put_i64(&w, (int64_t) t->value_off);
	}
	gs_put(&w, c->table_ctr_start, 4 * ((size_t) c->n_table + 1));
	gs_put(&w, c->table_ctr, 4 * (size_t) c->n_ctr);
	gs_put(&w, c->cat_of, 4 * (size_t) c->n_cat_of);
	for (int32_t k = 0; k < c->n_bin; k++)
	{
		const GsCbBin *b = &c->bin[k];
		unsigned char bytes[4] = {b->onehot, b->nan_right, 0, 0};

		gs_put_u32(&w, (uint32_t) b->column);
		gs_put(&w, bytes, 4);
		gs_put(&w, &b->border, 4);
		gs_put_u32(&w, (uint32_t) b->hash);
	}
	for (int64_t s = 0; s < c->n_slots; s++)
	{
		gs_put_i64(&w, (int64_t) c->slots[s].key);
		gs_put_i64(&w, (int64_t) c->slots[s].bucket);
	}
	gs_put(&w, c->values, 4 * (size_t) c->n_values);
}

static GsCode
bad_region(GsStatus *st, const char *what)
{
	gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid forest image");
	gs_status_detail(st, "the categorical features: %s", what);
	return st->code;
}

static GsCode
bad_ctrs(GsStatus *st, const char *what)
{
	gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid forest: the categorical features' %s", what);
	return st->code;
}

/* Whether a[0 .. n] starts at 0, never decreases and ends at last. */
static bool
offsets_ok(const int32_t *a, int32_t n, int64_t last)
{
	if (a[0] != 0 || a[n] != last)
		return false;
	for (int32_t i = 0; i < n; i++)
		if (a[i + 1] < a[i])
			return false;
	return true;
}

/*
 * The categorical features' columns (in range, distinct) and their codes'
 * hashes (hash_first in order): what rebuilding names from the hashes reads.
 */
static GsCode
check_codes(const GsCbCtrs *c, const GsAllocator *a, GsStatus *st)
{
	unsigned char *seen;

	if (c->n_input < 1 || c->n_catf < 1 || c->n_catf > c->n_input || c->n_hash < 0)
		return bad_ctrs(st, "counts are impossible");
	seen = a->alloc(a->ctx, (size_t) c->n_input);
	if (!seen)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory checking a forest");
	memset(seen, 0, (size_t) c->n_input);
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		if (c->catf_col[j] < 0 || c->catf_col[j] >= c->n_input || seen[c->catf_col[j]])
		{
			a->free(a->ctx, seen);
			return bad_ctrs(st, "columns are out of range or read twice");
		}
		seen[c->catf_col[j]] = 1;
	}
	a->free(a->ctx, seen);
	if (!offsets_ok(c->hash_first, c->n_catf, c->n_hash))
		return bad_ctrs(st, "categories are out of order");
	return GS_OK;
}

/*
 * The invariants of the tables by themselves (the reader guarantees them):
 * every index in range, each table's slots its own and holding a free one,
 * the values of its buckets (and of a key not found) its own and finite.
 */
static GsCode
check_tables(const GsCbCtrs *c, const GsAllocator *a, GsStatus *st)
{
	int64_t		slots = 0,
				values = 0;
	uint32_t	n_border;
	GsCode		rc;

	if (!c->catf_col || !c->hash || !c->hash_first || !c->onehot_cat || !c->onehot_hash ||
		!c->ctr_border_start || !c->table_ctr_start ||
		(c->n_ctr > 0 && (!c->ctr || !c->table_ctr)) || (c->n_table > 0 && !c->table) ||
		(c->n_cat_of > 0 && !c->cat_of) || (c->n_bin > 0 && !c->bin) ||
		(c->n_slots > 0 && !c->slots) || (c->n_values > 0 && !c->values))
		return bad_ctrs(st, "arrays are missing");
	if (c->n_input < 1 || c->n_catf < 1 || c->n_catf > c->n_input || c->n_onehot < 0 ||
		c->n_ctr < 0 || c->n_table < 0 || c->n_hash < 0 || c->n_cat_of < 0 || c->n_bin < 0 ||
		c->n_slots < 0 || c->n_values < 0 || c->split_base < 0 || c->counts != NULL)
		return bad_ctrs(st, "counts are impossible");
	for (int32_t k = 0; k < c->n_ctr + 1; k++)
		if (k > 0 && c->ctr_border_start[k] < c->ctr_border_start[k - 1])
			return bad_ctrs(st, "CTR borders are out of order");
	if (c->ctr_border_start[0] != 0)
		return bad_ctrs(st, "CTR borders are out of order");
	n_border = c->ctr_border_start[c->n_ctr];
	for (uint32_t k = 0; k < n_border; k++)
		if (isnan(c->ctr_border[k]))
			return bad_ctrs(st, "CTR borders hold a NaN");
	if ((rc = check_codes(c, a, st)) != GS_OK)
		return rc;
	for (int32_t k = 0; k < c->n_onehot; k++)
		if (c->onehot_cat[k] < 0 || c->onehot_cat[k] >= c->n_catf)
			return bad_ctrs(st, "one-hot values read a feature out of range");
	for (int32_t q = 0; q < c->n_ctr; q++)
		if (c->ctr[q].table < 0 || c->ctr[q].table >= c->n_table)
			return bad_ctrs(st, "CTRs read a table out of range");
	if (!offsets_ok(c->table_ctr_start, c->n_table, c->n_ctr))
		return bad_ctrs(st, "tables' CTRs are out of order");
	for (int32_t ti = 0; ti < c->n_table; ti++)
		for (int32_t i = c->table_ctr_start[ti]; i < c->table_ctr_start[ti + 1]; i++)
			if (c->table_ctr[i] < 0 || c->table_ctr[i] >= c->n_ctr || c->ctr[c->table_ctr[i]].table != ti)
				return bad_ctrs(st, "tables list CTRs not theirs");
	for (int32_t k = 0; k < c->n_cat_of; k++)
		if (c->cat_of[k] < 0 || c->cat_of[k] >= c->n_catf)
			return bad_ctrs(st, "projections read a feature out of range");
	for (int32_t k = 0; k < c->n_bin; k++)
	{
		const GsCbBin *b = &c->bin[k];

		if (b->onehot > 1 || b->nan_right > 1 || b->column < 0 ||
			b->column >= (b->onehot ? c->n_catf : c->n_input) || isnan(b->border))
			return bad_ctrs(st, "projections hold an element out of range");
	}
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		const GsCbTable *t = &c->table[ti];
		int64_t		k = c->table_ctr_start[ti + 1] - c->table_ctr_start[ti],
					empty = 0;

		if (t->n_cat < 1 || t->cat_off < 0 || (int64_t) t->cat_off + t->n_cat > c->n_cat_of ||
			t->n_bin < 0 || t->bin_off < 0 || (int64_t) t->bin_off + t->n_bin > c->n_bin ||
			t->type < GS_CB_CTR_BORDERS || t->type > GS_CB_CTR_COUNTER)
			return bad_ctrs(st, "tables have impossible projections");
		/* slots: a power of two of them, the tables' in order, a free one at least */
		if (t->mask >= ((uint64_t) 1 << 31) || (t->mask & (t->mask + 1)) != 0 ||
			t->slot_off != slots || t->n_buckets < 0 || (uint64_t) t->n_buckets > t->mask ||
			t->value_off != values)
			return bad_ctrs(st, "tables have impossible slots or values");
		slots += (int64_t) t->mask + 1;
		values += (t->n_buckets + 1) * k;
		if (slots > c->n_slots || values > c->n_values)
			return bad_ctrs(st, "tables have impossible slots or values");
		for (int64_t s = t->slot_off; s < slots; s++)
		{
			if (c->slots[s].key == GS_CB_EMPTY)
				empty++;
			else if (c->slots[s].bucket < 0 || c->slots[s].bucket >= t->n_buckets)
				return bad_ctrs(st, "tables have a key of a bucket out of range");
		}
		if (empty == 0)
			return bad_ctrs(st, "tables have no free slot");
	}
	if (slots != c->n_slots || values != c->n_values)
		return bad_ctrs(st, "tables do not fill their slots and values");
	for (int64_t v = 0; v < c->n_values; v++)
		if (!isfinite(c->values[v]))
			return bad_ctrs(st, "CTR values are not finite");
	return GS_OK;
}

/* Check c against the forest that holds it; see catboost_ctr.h. */
GsCode
gs_cb_ctrs_check(const GsCbCtrs *c, const GsForest *f, const GsAllocator *a, GsStatus *st)
{
	const GsCatNames *cn = f->cat_names;
	GsCode		rc;

	if (c->n_input != f->n_features || f->n_derived != c->n_onehot + c->n_ctr ||
		(int64_t) f->n_features + f->n_derived > (int64_t) GS_NODE_FEATURE_MASK)
		return bad_ctrs(st, "counts do not match the forest's");
	if ((rc = check_tables(c, a, st)) != GS_OK)
		return rc;
	/* each categorical feature has as many names as codes; names found by hash are the codes' */
	if (cn == NULL || cn->n_features != f->n_features)
		return bad_ctrs(st, "names are missing");
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		int32_t		col = c->catf_col[j],
					n = c->hash_first[j + 1] - c->hash_first[j];

		if (cn->kind[col] == GS_CATNAMES_NONE || gs_catnames_count(cn, col) != n ||
			(cn->kind[col] == GS_CATNAMES_HASH) != (cn->hashes != NULL))
			return bad_ctrs(st, "names do not match their codes");
		if (cn->kind[col] == GS_CATNAMES_HASH)
		{
			const uint32_t *h = cn->hashes + cn->hash_first[col];

			if (cn->hash_name != gs_cb_cat_hash ||
				memcmp(h, c->hash + c->hash_first[j], sizeof(uint32_t) * (size_t) n) != 0)
				return bad_ctrs(st, "names found by hash do not match their codes");
			for (int32_t i = 1; i < n; i++)
				if (h[i] <= h[i - 1])
					return bad_ctrs(st, "names found by hash are out of order");
		}
	}
	return GS_OK;
}

/* Read c's region; see catboost_ctr.h. */
GsCode
gs_cb_ctrs_image_read(const unsigned char *p, size_t len, GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	GsImageCursor r = {NULL, p, len};
	GsCbCtrs   *c;
	uint32_t	hashed,
				n[9];
	uint64_t	n_slots,
				n_values;
	size_t		bytes = sizeof(GsCbCtrs);
	GsCode		rc;

	if (len < REGION_HEADER)
		return bad_region(st, "the region is shorter than its header");
	hashed = gs_get_u32(&r);
	for (int k = 0; k < 9; k++)
		n[k] = gs_get_u32(&r);
	n_slots = (uint64_t) gs_get_i64(&r);
	n_values = (uint64_t) gs_get_i64(&r);
	if (hashed > 1 || (int64_t) n[0] != f->n_features)
		return bad_region(st, "impossible counts");
	for (int k = 0; k < 9; k++)
		if (n[k] >= ((uint32_t) 1 << 31))
			return bad_region(st, "impossible counts");
	if (n_slots >= ((uint64_t) 1 << 31) || n_values > ((uint64_t) 1 << 31) ||
		(uint64_t) len - REGION_HEADER != arrays_bytes(n[1], n[2], n[3], n[4], n[5], n[6], n[7],
													   n[8], n_slots, n_values))
		return bad_region(st, "the region's length does not match its counts");
	/* every array's length is now bounded by the region's: allocations follow it */
	c = gs_zalloc(a, sizeof(GsCbCtrs), &bytes);
	if (!c)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
	bytes = sizeof(GsCbCtrs);
	f->cb_ctrs = c;				/* the forest frees it from now on */
	c->n_input = (int32_t) n[0];
	c->n_catf = (int32_t) n[1];
	c->n_onehot = (int32_t) n[2];
	c->n_ctr = (int32_t) n[3];
	c->n_table = (int32_t) n[4];
	c->n_hash = (int32_t) n[5];
	c->n_cat_of = (int32_t) n[6];
	c->n_bin = (int32_t) n[7];
	c->n_slots = (int64_t) n_slots;
	c->n_values = (int64_t) n_values;
	c->split_base = gs_get_i64(&r);
	f->n_derived = c->n_onehot + c->n_ctr;
	c->catf_col = gs_zalloc(a, 4 * (size_t) c->n_catf, &bytes);
	c->hash = gs_zalloc(a, 4 * (size_t) c->n_hash, &bytes);
	c->hash_first = gs_zalloc(a, 4 * ((size_t) c->n_catf + 1), &bytes);
	c->onehot_cat = gs_zalloc(a, 4 * (size_t) c->n_onehot, &bytes);
	c->onehot_hash = gs_zalloc(a, 4 * (size_t) c->n_onehot, &bytes);
	c->ctr = gs_zalloc(a, sizeof(GsCbCtr) * (size_t) c->n_ctr, &bytes);
	c->ctr_border_start = gs_zalloc(a, 4 * ((size_t) c->n_ctr + 1), &bytes);
	c->ctr_border = gs_zalloc(a, 4 * (size_t) n[8], &bytes);
	c->table = gs_zalloc(a, sizeof(GsCbTable) * (size_t) c->n_table, &bytes);
	c->table_ctr_start = gs_zalloc(a, 4 * ((size_t) c->n_table + 1), &bytes);
	c->table_ctr = gs_zalloc(a, 4 * (size_t) c->n_ctr, &bytes);
	c->cat_of = gs_zalloc(a, 4 * (size_t) c->n_cat_of, &bytes);
	c->bin = gs_zalloc(a, sizeof(GsCbBin) * (size_t) c->n_bin, &bytes);
	c->slots = gs_zalloc(a, sizeof(GsCbSlot) * (size_t) c->n_slots, &bytes);
	c->values = gs_zalloc(a, 4 * (size_t) c->n_values, &bytes);
	c->bytes = bytes;
	if (!c->catf_col || !c->hash || !c->hash_first || !c->onehot_cat || !c->onehot_hash ||
		!c->ctr || !c->ctr_border_start || !c->ctr_border || !c->table || !c->table_ctr_start ||
		!c->table_ctr || !c->cat_of || !c->bin || !c->slots || !c->values)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory reading a forest image");
	gs_get(&r, c->catf_col, 4 * (size_t) c->n_catf);
	gs_get(&r, c->hash, 4 * (size_t) c->n_hash);
	gs_get(&r, c->hash_first, 4 * ((size_t) c->n_catf + 1));
	gs_get(&r, c->onehot_cat, 4 * (size_t) c->n_onehot);
	gs_get(&r, c->onehot_hash, 4 * (size_t) c->n_onehot);
	for (int32_t q = 0; q < c->n_ctr; q++)
	{
		GsCbCtr    *t = &c->ctr[q];

		t->table = (int32_t) gs_get_u32(&r);
		t->target_border = (int32_t) gs_get_u32(&r);
		gs_get(&r, &t->prior_num, 4);
		gs_get(&r, &t->prior_denom, 4);
		gs_get(&r, &t->shift, 4);
		gs_get(&r, &t->scale, 4);
	}
	gs_get(&r, c->ctr_border_start, 4 * ((size_t) c->n_ctr + 1));
	gs_get(&r, c->ctr_border, 4 * (size_t) n[8]);
	if (c->ctr_border_start[c->n_ctr] != n[8])
		return bad_region(st, "the CTR borders do not match their count");
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		GsCbTable  *t = &c->table[ti];

		t->n_cat = (int32_t) gs_get_u32(&r);
		t->cat_off = (int32_t) gs_get_u32(&r);
		t->n_bin = (int32_t) gs_get_u32(&r);
		t->bin_off = (int32_t) gs_get_u32(&r);
		t->type = (int32_t) gs_get_u32(&r);
		t->stride = (int32_t) gs_get_u32(&r);
		t->denominator = gs_get_u32(&r);
		t->mask = (uint64_t) gs_get_i64(&r);
		t->slot_off = gs_get_i64(&r);
		t->n_buckets = gs_get_i64(&r);
		t->value_off = gs_get_i64(&r);
	}
	gs_get(&r, c->table_ctr_start, 4 * ((size_t) c->n_table + 1));
	gs_get(&r, c->table_ctr, 4 * (size_t) c->n_ctr);
	gs_get(&r, c->cat_of, 4 * (size_t) c->n_cat_of);
	for (int32_t k = 0; k < c->n_bin; k++)
	{
		GsCbBin    *b = &c->bin[k];
		unsigned char bytes4[4];

		b->column = (int32_t) gs_get_u32(&r);
		gs_get(&r, bytes4, 4);
		b->onehot = bytes4[0];
		b->nan_right = bytes4[1];
		gs_get(&r, &b->border, 4);
		b->hash = (int32_t) gs_get_u32(&r);
		if (bytes4[2] != 0 || bytes4[3] != 0)
			return bad_region(st, "an element's padding is not zero");
	}
	for (int64_t s = 0; s < c->n_slots; s++)
	{
		c->slots[s].key = (uint64_t) gs_get_i64(&r);
		c->slots[s].bucket = gs_get_i64(&r);
	}
	gs_get(&r, c->values, 4 * (size_t) c->n_values);
	/* names found by hash come from the tables, once these are known sound */
	if (!hashed)
		return f->cat_names ? GS_OK : bad_region(st, "the names are missing");
	if (f->cat_names)
		return bad_region(st, "names both stored and found by hash");
	/* the rest is gs_forest_check's, once the names are there */
	if ((rc = check_codes(c, a, st)) != GS_OK)
		return rc;
	return gs_cb_names_of_hashes(c, a, f->n_features, &f->cat_names, st);
}

/*
 * catboost_ctr.c
 *	  Compute a CatBoost model's categorical features for rows: its one-hot
 *	  indicators and CTR values, the derived features its trees split on;
 *	  and find the derived feature of a split (see catboost_ctr.h).  The
 *	  tables are read by catboost_ctr_read.c.
 *
 * The arithmetic is CatBoost's model evaluator's: a projection's hash
 * starts at 0 and takes each category's 32-bit hash (sign-extended), then
 * each binarized element's 0 or 1, through gs_cb_calc_hash; the table maps
 * it to a bucket whose CTR values were computed at load.
 */
#include "catboost_ctr.h"

#include <math.h>
#include <string.h>

/* Release tables; see catboost_ctr.h. */
void
gs_cb_ctrs_free(const GsAllocator *a, GsCbCtrs *c)
{
	if (c == NULL)
		return;
	gs_release(a, c->catf_col);
	gs_release(a, c->hash);
	gs_release(a, c->hash_first);
	gs_release(a, c->onehot_cat);
	gs_release(a, c->onehot_hash);
	gs_release(a, c->ctr);
	gs_release(a, c->ctr_border_start);
	gs_release(a, c->ctr_border);
	gs_release(a, c->table);
	gs_release(a, c->cat_of);
	gs_release(a, c->bin);
	gs_release(a, c->slots);
	gs_release(a, c->values);
	gs_release(a, c->counts);
	gs_release(a, c->table_ctr_start);
	gs_release(a, c->table_ctr);
	a->free(a->ctx, c);
}

/* The bucket of key in table t, or t->n_buckets when it is not there. */
static inline int64_t
table_find(const GsCbCtrs *c, const GsCbTable *t, uint64_t key)
{
	const GsCbSlot *slots = c->slots + t->slot_off;

	for (uint64_t s = key & t->mask;; s = (s + 1) & t->mask)
	{
		if (slots[s].key == key)
			return slots[s].bucket;
		if (slots[s].key == GS_CB_EMPTY)
			return t->n_buckets;
	}
}

/* TModelCtr::Calc, in float */
static inline float
ctr_calc(const GsCbCtr *r, uint64_t count, uint64_t total)
{
	float		v = ((float) count + r->prior_num) / ((float) total + r->prior_denom);

	return (v + r->shift) * r->scale;
}

/* The value of CTR r for the counts of bucket b of its table t (n_buckets: none). */
static float
ctr_value(const GsCbCtrs *c, const GsCbCtr *r, const GsCbTable *t, int64_t b)
{
	const uint32_t *cnt;
	int32_t		classes = t->stride - 1;
	uint64_t	good = 0,
				total = 0;

	/* a Counter's denominator is the table's, found or not (the prior matters then) */
	if (t->type == GS_CB_CTR_COUNTER)
		return ctr_calc(r, b == t->n_buckets ? 0 : c->counts[t->count_off + b], t->denominator);
	if (b == t->n_buckets)
		return ctr_calc(r, 0, 0);
	cnt = c->counts + t->count_off + b * classes;
	if (t->type == GS_CB_CTR_BUCKETS)
	{
		for (int32_t k = 0; k < classes; k++)
			total += cnt[k];
		return ctr_calc(r, cnt[r->target_border], total);
	}
	if (classes == 2)
		return ctr_calc(r, cnt[1], (uint64_t) cnt[0] + cnt[1]);
	/* Borders of a multi-class target: the classes above the border are good */
	for (int32_t k = 0; k < classes; k++)
		if (k <= r->target_border)
			total += cnt[k];
		else
			good += cnt[k];
	return ctr_calc(r, good, total + good);
}

/* The CTR values of every bucket; see catboost_ctr.h. */
GsCode
gs_cb_ctrs_values(GsCbCtrs *c, const GsAllocator *a, GsStatus *st)
{
	int64_t		n = 0;

	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		GsCbTable  *t = &c->table[ti];

		t->value_off = n;
		n += (t->n_buckets + 1) * (c->table_ctr_start[ti + 1] - c->table_ctr_start[ti]);
		if (n > ((int64_t) 1 << 31))
			return gs_status_set(st, GS_ERR_LIMIT, "the model's CTR tables are too large");
	}
	c->n_values = n;
	c->values = a->alloc(a->ctx, sizeof(float) * (size_t) (n > 0 ? n : 1));
	c->bytes += sizeof(float) * (size_t) n;
	if (!c->values)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		const GsCbTable *t = &c->table[ti];
		int32_t		k0 = c->table_ctr_start[ti],
					k = c->table_ctr_start[ti + 1] - k0;

		for (int64_t b = 0; b <= t->n_buckets; b++)
			for (int32_t i = 0; i < k; i++)
				c->values[t->value_off + b * k + i] = ctr_value(c, &c->ctr[c->table_ctr[k0 + i]], t, b);
	}
	a->free(a->ctx, c->counts);
	c->counts = NULL;
	return GS_OK;
}

/* The forest feature of a one-hot split; see catboost_ctr.h. */
int32_t
gs_cb_onehot_feature(const GsCbCtrs *c, int64_t cat, int64_t hash)
{
	int32_t		h;

	if (c == NULL || hash < INT32_MIN || hash > (int64_t) UINT32_MAX)
		return -1;
	h = (int32_t) (uint32_t) (hash & 0xFFFFFFFF);
	for (int32_t k = 0; k < c->n_onehot; k++)
		if (c->onehot_cat[k] == cat && c->onehot_hash[k] == h)
			return c->n_input + k;
	return -1;
}

/* The forest feature of a CTR split; see catboost_ctr.h. */
int32_t
gs_cb_ctr_feature(const GsCbCtrs *c, int64_t split_index, double border, int64_t target_border)
{
	int64_t		k;
	int32_t		lo = 0,
				hi;

	if (c == NULL || c->n_ctr == 0 || split_index < c->split_base ||
		split_index - c->split_base >= (int64_t) c->ctr_border_start[c->n_ctr])
		return -1;
	k = split_index - c->split_base;
	/* the CTR whose borders hold k */
	hi = c->n_ctr - 1;
	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo + 1) / 2;

		if ((int64_t) c->ctr_border_start[mid] <= k)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (c->ctr_border[k] != (float) border || c->ctr[lo].target_border != target_border)
		return -1;
	return c->n_input + c->n_onehot + lo;
}

/*
 * The codes of the rows' categories, checked once: in xe's columns of the
 * categorical features (which no split reads), as int32 bit patterns, -1
 * for a value that names no category (NULL or NaN, not an integer, past
 * the names).
 */
static void
codes_in_place(const GsCbCtrs *c, const float *x, size_t ld, size_t n, float *xe)
{
	for (int32_t j = 0; j < c->n_catf; j++)
	{
		const float *src = x + (size_t) c->catf_col[j] * ld;
		float	   *dst = xe + (size_t) c->catf_col[j] * n;

		for (size_t r = 0; r < n; r++)
		{
			float		v = src[r];
			int32_t		code = v >= 0.0f && v < (float) (c->hash_first[j + 1] - c->hash_first[j]) &&
				v == floorf(v) ? (int32_t) v : -1;

			memcpy(&dst[r], &code, sizeof(code));
		}
	}
}

/* The hash of categorical feature j of row r (codes from codes_in_place), or INT64_MIN. */
static inline int64_t
row_hash(const GsCbCtrs *c, const float *xe, size_t n, size_t r, int32_t j)
{
	int32_t		code;

	memcpy(&code, &xe[(size_t) c->catf_col[j] * n + r], sizeof(code));
	return code >= 0 ? (int64_t) c->hash[c->hash_first[j] + code] : INT64_MIN;
}

/*
 * The bucket of row r of xe (after codes_in_place) in table t, or
 * t->n_buckets (not there, or a category unknown).
 */
static int64_t
row_bucket(const GsCbCtrs *c, const GsCbTable *t, const float *xe, size_t n, size_t r)
{
	uint64_t	key = 0;

	for (int32_t e = 0; e < t->n_cat; e++)
	{
		int64_t		h = row_hash(c, xe, n, r, c->cat_of[t->cat_off + e]);

		if (h == INT64_MIN)
			return t->n_buckets;
		key = gs_cb_calc_hash(key, (uint64_t) h);
	}
	for (int32_t e = 0; e < t->n_bin; e++)
	{
		const GsCbBin *b = &c->bin[t->bin_off + e];
		uint64_t	bit;

		if (b->onehot)
			bit = row_hash(c, xe, n, r, b->column) == (int64_t) b->hash;
		else
		{
			float		v = xe[(size_t) b->column * n + r];

			bit = isnan(v) ? b->nan_right : v > b->border;
		}
		key = gs_cb_calc_hash(key, bit);
	}
	return table_find(c, t, key);
}

/* The derived features of rows; see catboost_ctr.h. */
void
gs_cb_ctrs_expand(const GsCbCtrs *c, const float *x, size_t ld, size_t n_rows, float *xe)
{
	const size_t n = n_rows;
	float	   *onehot = xe + (size_t) c->n_input * n;
	float	   *ctrv = onehot + (size_t) c->n_onehot * n;

	for (int32_t j = 0; j < c->n_input; j++)
		memcpy(xe + (size_t) j * n, x + (size_t) j * ld, sizeof(float) * n);
	codes_in_place(c, x, ld, n, xe);
	for (int32_t k = 0; k < c->n_onehot; k++)
		for (size_t r = 0; r < n; r++)
			onehot[(size_t) k * n + r] =
				row_hash(c, xe, n, r, c->onehot_cat[k]) == (int64_t) c->onehot_hash[k] ? 1.0f : 0.0f;
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		const GsCbTable *t = &c->table[ti];

		const int32_t k0 = c->table_ctr_start[ti],
					k = c->table_ctr_start[ti + 1] - k0;

		for (size_t r = 0; r < n; r++)
		{
			const float *v = c->values + t->value_off + row_bucket(c, t, xe, n, r) * k;

			for (int32_t i = 0; i < k; i++)
				ctrv[(size_t) c->table_ctr[k0 + i] * n + r] = v[i];
		}
	}
}

/* CatBoost's explanation classes of the forest's features; see catboost_ctr.h. */
GsCode
gs_cb_shap_classes(const GsCbCtrs *c, const GsAllocator *a, GsCbShapClasses *out, GsStatus *st)
{
	const int32_t width = c->n_input + c->n_onehot + c->n_ctr;
	int32_t		n_combo = 0,
				n_member = c->n_input;
	int32_t    *list = a->alloc(a->ctx, sizeof(int32_t) * 64);

	memset(out, 0, sizeof(*out));
	out->class_of = a->alloc(a->ctx, sizeof(int32_t) * (size_t) (width > 0 ? width : 1));
	/* at most one class per CTR beyond the columns, of at most 64 members each */
	out->member_start = a->alloc(a->ctx, sizeof(int32_t) * ((size_t) c->n_input + (size_t) c->n_ctr + 1));
	out->member = a->alloc(a->ctx, sizeof(int32_t) * ((size_t) c->n_input + 64 * (size_t) c->n_ctr + 1));
	if (!list || !out->class_of || !out->member_start || !out->member)
	{
		if (list)
			a->free(a->ctx, list);
		gs_cb_shap_classes_free(a, out);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing explanations");
	}
	/* a column is its own class: a number, or a category (its one-hot values and single CTRs) */
	for (int32_t j = 0; j < c->n_input; j++)
	{
		out->class_of[j] = j;
		out->member_start[j] = j;
		out->member[j] = j;
	}
	for (int32_t k = 0; k < c->n_onehot; k++)
		out->class_of[c->n_input + k] = c->catf_col[c->onehot_cat[k]];
	for (int32_t q = 0; q < c->n_ctr; q++)
	{
		const GsCbTable *t = &c->table[c->ctr[q].table];
		int32_t		n = 0,
					cls = -1;

		/* the projection's categories, as sorted distinct columns (its numbers do not count) */
		for (int32_t e = 0; e < t->n_cat && n < 64; e++)
		{
			int32_t		col = c->catf_col[c->cat_of[t->cat_off + e]],
						i = n;

			while (i > 0 && list[i - 1] > col)
				i--;
			if (i > 0 && list[i - 1] == col)
				continue;
			memmove(list + i + 1, list + i, sizeof(int32_t) * (size_t) (n - i));
			list[i] = col;
			n++;
		}
		if (n == 1)
			cls = list[0];
		for (int32_t k = 0; cls < 0 && k < n_combo; k++)
		{
			int32_t		id = c->n_input + k,
						m = out->member_start[id + 1] - out->member_start[id];

			if (m == n && memcmp(out->member + out->member_start[id], list, sizeof(int32_t) * (size_t) n) == 0)
				cls = id;
		}
		if (cls < 0)
		{
			cls = c->n_input + n_combo++;
			out->member_start[cls] = n_member;
			memcpy(out->member + n_member, list, sizeof(int32_t) * (size_t) n);
			n_member += n;
			out->member_start[cls + 1] = n_member;
		}
		out->class_of[c->n_input + c->n_onehot + q] = cls;
	}
	out->member_start[c->n_input] = c->n_input;
	out->n_class = c->n_input + n_combo;
	out->member_start[out->n_class] = n_member;
	a->free(a->ctx, list);
	return GS_OK;
}

/* Release explanation classes; see catboost_ctr.h. */
void
gs_cb_shap_classes_free(const GsAllocator *a, GsCbShapClasses *cl)
{
	gs_release(a, cl->class_of);
	gs_release(a, cl->member_start);
	gs_release(a, cl->member);
	memset(cl, 0, sizeof(*cl));
}

/*
 * catboost_names.c
 *	  The names of a CatBoost model's categories (cat_features_hash), given
 *	  to each categorical feature, checked complete; or, for a file saved
 *	  without its pool, the hashes by which names are found.  For
 *	  catboost_ctr_read.c; see catboost_ctr.h.
 *
 * The file lists names without saying which feature each is of.  The
 * model's tables of one category and its one-hot values say it
 * (gs_cb_known_hashes): a feature gets the names whose hash they show it
 * has, in the file's order, or every name where they do not tell.
 */
#include "catboost_read.h"

#include <string.h>

/* Whether s (len bytes) is an integer as Python's str() writes one: -?(0|[1-9][0-9]*). */
static bool
decimal_integer(const char *s, size_t len)
{
	size_t		i = len > 0 && s[0] == '-' ? 1 : 0;

	if (i == len || len > 20 || (s[i] == '0' && len > i + 1))
		return false;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Whether key is in the open-addressing set of mask + 1 slots. */
static bool
set_has(const uint64_t *set, uint64_t mask, uint64_t key)
{
	uint64_t	s = key & mask;

	while (set[s] != key && set[s] != GS_CB_EMPTY)
		s = (s + 1) & mask;
	return set[s] == key;
}

/*
 * Whether every category the model kept statistics of or one-hot splits on
 * has a name: the single-feature tables' keys and the one-hot values.  A
 * file saved with only part of the training data lacks some.
 */
GsCode
gs_cb_check_names(GsCbCtrs *c, const GsAllocator *a, GsStatus *st)
{
	uint64_t	mask = 1;
	uint64_t   *set;
	bool		missing = false;

	while (mask < 2 * (uint64_t) (c->n_hash + 1))
		mask <<= 1;
	set = a->alloc(a->ctx, sizeof(uint64_t) * (size_t) mask);
	if (!set)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	memset(set, 0xFF, sizeof(uint64_t) * (size_t) mask);
	mask -= 1;
	/* each name's single-category key, and its hash (one-hot values) beside */
	for (int32_t k = 0; k < c->n_hash; k++)
	{
		uint64_t	key = gs_cb_calc_hash(0, (uint64_t) (int64_t) c->hash[k]);

		for (uint64_t s = key & mask;; s = (s + 1) & mask)
			if (set[s] == key || set[s] == GS_CB_EMPTY)
			{
				set[s] = key;
				break;
			}
	}
	for (int32_t ti = 0; ti < c->n_table; ti++)
	{
		const GsCbTable *t = &c->table[ti];

		if (t->n_cat != 1 || t->n_bin != 0)
			continue;
		for (uint64_t s = 0; s <= t->mask; s++)
		{
			uint64_t	key = c->slots[t->slot_off + (int64_t) s].key;

			if (key != GS_CB_EMPTY && !set_has(set, mask, key))
				missing = true;
		}
	}
	for (int32_t k = 0; k < c->n_onehot; k++)
		if (!set_has(set, mask, gs_cb_calc_hash(0, (uint64_t) (int64_t) c->onehot_hash[k])))
			missing = true;
	a->free(a->ctx, set);
	if (missing)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED,
					  "the CatBoost model's file lacks the names of categories the model was trained on");
		gs_status_detail(st, "CatBoost names in a JSON model (cat_features_hash) only the categories of the data "
						 "given to save_model, and rows of the others could not be scored as CatBoost scores "
						 "them: save the model with all of its training data (pool=Pool(X_train, y_train, "
						 "cat_features=...)).");
		return st->code;
	}
	return GS_OK;
}

/* Whether hash h is among feature j's of k. */
static bool
known_has(const GsCbKnown *k, int32_t j, uint32_t h)
{
	int32_t		lo = k->first[j],
				hi = k->first[j + 1] - 1;

	while (lo <= hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;

		if (k->hash[mid] == h)
			return true;
		if (k->hash[mid] < h)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

/* Whether name i of the file is one of feature j's (every name where k does not tell). */
static bool
name_of(const GsCbCtrs *c, const GsCbKnown *k, int32_t j, int32_t i)
{
	return !k->told[j] || known_has(k, j, (uint32_t) c->hash[i]);
}

/*
 * The names of each categorical feature, in the file's order: those whose
 * hash the model's tables or one-hot values show the feature has, or every
 * name where they do not tell (a feature in no table, or in tables of
 * several categories only).  c->hash becomes the features' hashes.
 */
GsCode
gs_cb_named_names(GsCbCtrs *c, json_t *file_names, const GsAllocator *a, int32_t n_input,
				  GsCatNames **names, GsStatus *st)
{
	GsCbKnown	k;
	uint8_t    *kind = NULL;
	int64_t    *count = NULL;
	int32_t    *hash = NULL,
			   *col_cat = NULL;
	uint64_t	text = 0;
	int64_t		total = 0;
	GsCode		rc;

	if ((rc = gs_cb_known_hashes(c, a, false, &k, st)))
		return rc;
	kind = gs_zalloc(a, (size_t) n_input, &c->bytes);
	count = gs_zalloc(a, sizeof(int64_t) * (size_t) n_input, &c->bytes);
	col_cat = gs_zalloc(a, sizeof(int32_t) * (size_t) n_input, &c->bytes);
	c->bytes -= (size_t) n_input * (1 + sizeof(int64_t) + sizeof(int32_t));
	c->hash_first = gs_zalloc(a, sizeof(int32_t) * ((size_t) c->n_catf + 1), &c->bytes);
	if (!kind || !count || !col_cat || !c->hash_first)
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t col = 0; rc == GS_OK && col < n_input; col++)
		col_cat[col] = -1;
	/* each feature's names: their count, bytes, and whether all are integers */
	for (int32_t j = 0; rc == GS_OK && j < c->n_catf; j++)
	{
		bool		all_int = true;
		int64_t		n = 0;

		for (int32_t i = 0; i < c->n_hash; i++)
			if (name_of(c, &k, j, i))
			{
				json_t	   *v = json_object_get(json_array_get(file_names, i), "value");

				n++;
				text += json_string_length(v);
				all_int = all_int && decimal_integer(json_string_value(v), json_string_length(v));
			}
		col_cat[c->catf_col[j]] = j;
		count[c->catf_col[j]] = n;
		kind[c->catf_col[j]] = all_int && n > 0 ? GS_CATNAMES_INT : GS_CATNAMES_TEXT;
		c->hash_first[j + 1] = (int32_t) (c->hash_first[j] + n);
		total += n;
	}
	if (rc == GS_OK && (text > UINT32_MAX / 2 || total > INT32_MAX / 2))
		rc = gs_status_set(st, GS_ERR_LIMIT, "the model's category names take too much memory");
	if (rc == GS_OK)
		rc = gs_catnames_new(names, a, n_input, kind, count, (size_t) text, st);
	if (rc == GS_OK && !(hash = gs_zalloc(a, sizeof(int32_t) * (size_t) total, &c->bytes)))
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	/* the names column by column, as gs_catnames_add takes them; the hashes feature by feature */
	for (int32_t col = 0; rc == GS_OK && col < n_input; col++)
	{
		int32_t		j = col_cat[col],
					n = 0;

		for (int32_t i = 0; j >= 0 && rc == GS_OK && i < c->n_hash; i++)
			if (name_of(c, &k, j, i))
			{
				json_t	   *v = json_object_get(json_array_get(file_names, i), "value");

				hash[c->hash_first[j] + n++] = c->hash[i];
				rc = gs_catnames_add(*names, json_string_value(v), json_string_length(v), st);
			}
	}
	if (rc == GS_OK)
		rc = gs_catnames_finish(*names, st);
	if (rc == GS_OK)
	{
		c->bytes -= sizeof(int32_t) * (size_t) c->n_hash;
		gs_release(a, c->hash);
		c->hash = hash;
		c->n_hash = (int32_t) total;
		hash = NULL;
	}
	gs_release(a, hash);
	gs_release(a, kind);
	gs_release(a, count);
	gs_release(a, col_cat);
	gs_cb_known_free(a, &k);
	return rc;
}

/*
 * For a file that names no categories: the hashes the model knows of each
 * feature become its codes, and names are found by CatBoost's hash of them.
 */
GsCode
gs_cb_hashed_names(GsCbCtrs *c, const GsAllocator *a, int32_t n_input, GsCatNames **names,
				   GsStatus *st)
{
	GsCbKnown	k;
	GsCode		rc;

	if ((rc = gs_cb_known_hashes(c, a, true, &k, st)))
		return rc;
	c->n_hash = k.first[c->n_catf];
	c->hash = gs_zalloc(a, sizeof(int32_t) * (size_t) c->n_hash, &c->bytes);
	c->hash_first = gs_zalloc(a, sizeof(int32_t) * ((size_t) c->n_catf + 1), &c->bytes);
	if (!c->hash || !c->hash_first)
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int32_t k2 = 0; rc == GS_OK && k2 < c->n_hash; k2++)
		c->hash[k2] = (int32_t) k.hash[k2];
	for (int32_t j = 0; rc == GS_OK && j <= c->n_catf; j++)
		c->hash_first[j] = k.first[j];
	if (rc == GS_OK)
		rc = gs_cb_names_of_hashes(c, a, n_input, names, st);
	gs_cb_known_free(a, &k);
	return rc;
}

/*
 * cat_names.h
 *	  The category names a tree ensemble keeps for its categorical
 *	  features, so that a text value ('FR') can be scored as the category
 *	  code the model was trained with.
 *
 * XGBoost 3.1 and later store the categories of a pandas DataFrame's
 * category columns in the model ("cats"), LightGBM its "pandas_categorical"
 * line; code c of feature j is the c-th name of feature j.  Integer
 * categories (a category column of numbers) are kept as their decimal text,
 * so the text '7995' finds the code of category 7995.  ONNX models
 * converted by skl2onnx from a DataFrame with string columns keep the
 * categories of their OneHotEncoders (onnx_prep_cat.c).  The loaders build
 * a GsCatNames with gs_catnames_new / gs_catnames_add / gs_catnames_finish;
 * the glue looks text up with gs_catnames_code.  All memory comes from the
 * allocator given to gs_catnames_new, kept in the names; the forest or
 * network that holds them releases them with gs_catnames_free.
 */
#ifndef GS_CAT_NAMES_H
#define GS_CAT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_status.h"

typedef struct GsCatNames GsCatNames;	/* also declared by forest.h and mlp.h */

/* What the names of a feature are. */
#define GS_CATNAMES_NONE	0	/* not categorical, or no names kept */
#define GS_CATNAMES_TEXT	1	/* strings */
#define GS_CATNAMES_INT		2	/* integers, as decimal text */
#define GS_CATNAMES_HASH	3	/* no names kept: a name is found by its hash */

/* Most category names of one feature: codes stay below 2^24. */
#define GS_CATNAMES_MAX_PER_FEATURE	(1 << 24)

struct GsCatNames
{
	int32_t		n_features;
	int32_t		n_names;		/* over all features */
	uint8_t    *kind;			/* [n_features] GS_CATNAMES_* */
	int32_t    *first;			/* [n_features + 1]: feature j's names are
								 * first[j] .. first[j + 1] - 1, code c is
								 * name first[j] + c */
	uint32_t   *name_at;		/* [n_names] offset of each name in text */
	int32_t    *order;			/* [n_names] per feature, its codes in
								 * byte order of their names (lookup) */
	char	   *text;			/* the names, each NUL-terminated */
	size_t		text_bytes;
	/*
	 * [n_features] the feature's value for a name not in its list, where the
	 * library scores one: NaN (missing) for LightGBM and one-hot encoders,
	 * the encoder's default for an ONNX LabelEncoder (OrdinalEncoder's
	 * unknown_value).  XGBoost refuses unknown names (the glue's rule).
	 */
	float	   *unknown;
	/*
	 * GS_CATNAMES_HASH features (a CatBoost file saved without its pool):
	 * code c of feature j is hashes[hash_first[j] + c], sorted per
	 * feature; a name is looked up by hash_name(name).  NULL otherwise.
	 */
	uint32_t   *hashes;
	int32_t    *hash_first;		/* [n_features + 1] */
	uint32_t	(*hash_name) (const char *s, size_t len);
	/* building */
	int32_t		n_added;
	size_t		text_used;
	GsAllocator alloc;
};

/*
 * Start the names of a model of n_features features: kind[j] and count[j]
 * (0 for a feature without names) for each, text_bytes the bytes of all
 * names (without terminators).  Sets *out, which the caller frees with
 * gs_catnames_free also on failure.  GS_ERR_LIMIT for a feature with more
 * than GS_CATNAMES_MAX_PER_FEATURE names, GS_ERR_NOMEM.
 */
extern GsCode gs_catnames_new(GsCatNames **out, const GsAllocator *a, int32_t n_features,
							  const uint8_t *kind, const int64_t *count, size_t text_bytes,
							  GsStatus *st);

/*
 * Add the next name (feature by feature, code by code) of len bytes.
 * GS_ERR_INVALID_MODEL when it is not valid UTF-8, holds a NUL byte, or is
 * more than was announced.
 */
extern GsCode gs_catnames_add(GsCatNames *cn, const char *name, size_t len, GsStatus *st);

/*
 * Check that every announced name was added and that no feature has one
 * name twice (GS_ERR_INVALID_MODEL naming it), and build the lookup order.
 */
extern GsCode gs_catnames_finish(GsCatNames *cn, GsStatus *st);

/*
 * Names of a model of n_features features that keeps none: each feature
 * with is_cat[j] is GS_CATNAMES_HASH, its codes its count[j] hashes
 * (sorted, distinct), taken in feature order from hashes (copied); a name
 * is found by hash_name.  Sets *out, which the caller frees with
 * gs_catnames_free also on failure.  GS_ERR_LIMIT, GS_ERR_NOMEM.
 */
extern GsCode gs_catnames_new_hashed(GsCatNames **out, const GsAllocator *a, int32_t n_features,
									 const bool *is_cat, const int64_t *count,
									 const uint32_t *hashes,
									 uint32_t (*hash_name) (const char *s, size_t len),
									 GsStatus *st);

/* Set the value of feature j for a name not in its list (NaN until set). */
extern void gs_catnames_set_unknown(GsCatNames *cn, int32_t j, float value);

/* Codes of feature j (0 when it has none). */
extern int32_t gs_catnames_count(const GsCatNames *cn, int32_t j);

/* Whether feature j is categorical and given by name (false for cn NULL). */
extern bool gs_catnames_takes_text(const GsCatNames *cn, int32_t j);

/*
 * Name of code c of feature j; c < gs_catnames_count(cn, j).  NULL for a
 * GS_CATNAMES_HASH feature, whose names are not kept.
 */
extern const char *gs_catnames_name(const GsCatNames *cn, int32_t j, int32_t c);

/*
 * The code of the name s (len bytes, not NUL-terminated) of feature j, or
 * -1 when feature j has no such name (for GS_CATNAMES_HASH: no code has
 * the name's hash).
 */
extern int32_t gs_catnames_code(const GsCatNames *cn, int32_t j, const char *s, size_t len);

/* Release names; NULL is allowed. */
extern void gs_catnames_free(GsCatNames *cn);

#endif							/* GS_CAT_NAMES_H */

/*
 * catboost_ctr.h
 *	  The categorical features of a CatBoost model: its one-hot splits and
 *	  its CTRs (statistics of the training rows per category, or per
 *	  combination of categories and binarized numbers), computed for each
 *	  row as extra features that the model's trees split on.
 *
 * CatBoost hashes a category name to 32 bits; a JSON model saved with its
 * training pool (save_model(path, format="json", pool=...)) lists every
 * name with its hash ("cat_features_hash"), but not which feature a name
 * is of: the model's tables say that (gs_cb_known_hashes).  A row holds,
 * for each categorical feature, the code of its name (the name's position
 * among the feature's names, cat_names.h); a code the feature lacks (NaN,
 * a name the model never saw) is a category of no known hash.  A file
 * saved without its pool names nothing: the codes are then positions in
 * the sorted list of the hashes the model knows of the feature, and a name
 * is found by its hash (gs_cb_cat_hash).
 *
 * Derived feature k (the forest's feature n_input + k) is, for the first
 * n_onehot, 1 when the row's category of a one-hot feature has a given
 * hash (0 otherwise); for the next n_ctr, the value of CTR k - n_onehot:
 * the projection's hash (CatBoost's CalcHash over the categories' hashes,
 * then each binarized element's 0 or 1) looked up in the CTR's table, the
 * counts found (none when it is not there, or when a category is unknown)
 * made a float as CatBoost's TModelCtr::Calc does:
 * ((count + prior_num) / (total + prior_denom) + shift) * scale, where a
 * Counter's total is its table's denominator, found or not.
 */
#ifndef GS_CATBOOST_CTR_H
#define GS_CATBOOST_CTR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cat_names.h"
#include "forest.h"

/* CTR types CatBoost evaluates on the CPU */
#define GS_CB_CTR_BORDERS	0
#define GS_CB_CTR_BUCKETS	1
#define GS_CB_CTR_COUNTER	2	/* Counter and FeatureFreq */

/* An element of a projection after its categories: a binarized value. */
typedef struct GsCbBin
{
	int32_t		column;			/* input column (onehot: categorical feature) */
	uint8_t		onehot;			/* 1: the category's hash == hash; 0: x > border */
	uint8_t		nan_right;		/* a float NaN counts as 1 (nan_value_treatment AsTrue) */
	float		border;
	int32_t		hash;
} GsCbBin;

/* A table of counts, the statistics of one projection. */
typedef struct GsCbTable
{
	int32_t		n_cat;			/* categories hashed first: cat_of[cat_off ..] */
	int32_t		cat_off;
	int32_t		n_bin;			/* then binarized elements: bin[bin_off ..] */
	int32_t		bin_off;
	int32_t		type;			/* GS_CB_CTR_* */
	int32_t		stride;			/* counts per bucket */
	uint32_t	denominator;	/* Counter's */
	uint64_t	mask;			/* slots - 1 (a power of two) */
	int64_t		slot_off;		/* first slot in slots */
	int64_t		count_off;		/* first count in counts (while loading) */
	int64_t		n_buckets;		/* keys the table holds */
	int64_t		value_off;		/* first value in values */
} GsCbTable;

/* A slot of a table: a key and its bucket (GS_CB_EMPTY: free). */
typedef struct GsCbSlot
{
	uint64_t	key;
	int64_t		bucket;
} GsCbSlot;

/* One CTR: a table and how its counts become a value. */
typedef struct GsCbCtr
{
	int32_t		table;
	int32_t		target_border;	/* ctr's target_border_idx */
	float		prior_num;
	float		prior_denom;
	float		shift;
	float		scale;
} GsCbCtr;

typedef struct GsCbCtrs
{
	int32_t		n_input;		/* the model's input columns */
	int32_t		n_catf;			/* categorical features */
	int32_t	   *catf_col;		/* [n_catf] the input column of each */
	int32_t		n_onehot;
	int32_t		n_ctr;
	int32_t		n_table;
	int32_t		n_hash;			/* known categories, of all features */
	int32_t	   *hash;			/* [n_hash] code c of feature j: hash[hash_first[j] + c] */
	int32_t    *hash_first;		/* [n_catf + 1] */
	int32_t	   *onehot_cat;		/* [n_onehot] categorical feature */
	int32_t	   *onehot_hash;	/* [n_onehot] */
	GsCbCtr    *ctr;			/* [n_ctr] */
	uint32_t   *ctr_border_start;	/* [n_ctr + 1] into ctr_border */
	float	   *ctr_border;		/* each CTR's borders, for its splits */
	int64_t		split_base;		/* split_index of the first CTR border */
	GsCbTable  *table;			/* [n_table] */
	int32_t    *table_ctr_start;	/* [n_table + 1] into table_ctr */
	int32_t    *table_ctr;		/* the CTRs of each table */
	int32_t    *cat_of;			/* categorical features of the projections */
	GsCbBin    *bin;			/* binarized elements of the projections */
	GsCbSlot   *slots;			/* of all tables */
	/*
	 * Per table, for each bucket and then for a key not found, the values
	 * of its CTRs (in table_ctr order), computed once at load from the
	 * counts, which are freed then.
	 */
	float	   *values;
	uint32_t   *counts;			/* [buckets * (stride - 1)] per table; NULL once loaded */
	int64_t		n_slots;
	int64_t		n_values;
	int32_t		n_cat_of;
	int32_t		n_bin;
	size_t		bytes;			/* memory of all the above */
} GsCbCtrs;

#define GS_CB_EMPTY UINT64_MAX

/* CatBoost's CalcHash, which hashes a projection element by element. */
static inline uint64_t
gs_cb_calc_hash(uint64_t a, uint64_t b)
{
	const uint64_t m = UINT64_C(0x4906ba494954cb65);

	return m * (a + m * b);
}

/*
 * CatBoost's hash of a category name of len bytes (the low 32 bits of
 * CityHash64 as of CityHash 1.0); catboost_hash.c.
 */
extern uint32_t gs_cb_cat_hash(const char *s, size_t len);

/*
 * The category hashes of each categorical feature j that c can tell apart:
 * hash[first[j] .. first[j + 1]), sorted and distinct, read from its
 * one-hot values and the keys of its tables of one category; told[j] when
 * that is the whole list of the categories that matter for j (a table of j
 * alone lists every category of the training rows), false for a feature
 * in no table nor one-hot split (none matters) or in tables of several
 * categories only (those of j cannot be read: GS_ERR_UNSUPPORTED when
 * strict).  GS_ERR_LIMIT, GS_ERR_NOMEM; *out freed on failure.
 */
typedef struct GsCbKnown
{
	uint32_t   *hash;
	int32_t    *first;			/* [n_catf + 1] */
	bool	   *told;			/* [n_catf] */
} GsCbKnown;

extern GsCode gs_cb_known_hashes(const GsCbCtrs *c, const GsAllocator *a, bool strict,
								 GsCbKnown *out, GsStatus *st);
extern void gs_cb_known_free(const GsAllocator *a, GsCbKnown *k);

/*
 * For the reader: each table's CTR values per bucket, and for a key not
 * found, computed from its counts (then freed) as TModelCtr::Calc does.
 * GS_ERR_LIMIT, GS_ERR_NOMEM.
 */
extern GsCode gs_cb_ctrs_values(GsCbCtrs *c, const GsAllocator *a, GsStatus *st);

/*
 * The names of a file saved without its pool, rebuilt from c's hashes
 * (GS_CATNAMES_HASH; see gs_cb_ctrs_read): GS_ERR_LIMIT, GS_ERR_NOMEM.
 */
extern GsCode gs_cb_names_of_hashes(const GsCbCtrs *c, const GsAllocator *a, int32_t n_input,
									GsCatNames **names, GsStatus *st);

/*
 * c in a forest image (catboost_ctr_image.c): the bytes of its region;
 * writing it into buf (that many bytes), names_hashed when the forest's
 * names are found by hash (then rebuilt from the tables, not stored);
 * reading a region of len bytes into f->cb_ctrs (and f->n_derived, and the
 * names found by hash into f->cat_names, after f's stored category names
 * were read), counts and lengths checked, indices left to
 * gs_cb_ctrs_check (GS_ERR_INVALID_MODEL, GS_ERR_LIMIT, GS_ERR_NOMEM; the
 * forest frees what was read).
 */
extern size_t gs_cb_ctrs_image_size(const GsCbCtrs *c);
extern void gs_cb_ctrs_image_write(const GsCbCtrs *c, bool names_hashed, unsigned char *buf);
extern GsCode gs_cb_ctrs_image_read(const unsigned char *p, size_t len, GsForest *f,
								   GsStatus *st);

/*
 * Check the invariants the reader guarantees of c, the categorical features
 * of forest f (for gs_forest_check): counts that match f's, every index in
 * range, each table's slots and values its own (a free slot in each), CTR
 * values finite, each categorical feature with as many names as codes, and
 * names found by hash the codes' hashes, sorted.  GS_ERR_INVALID_MODEL with
 * the first broken one in st, GS_ERR_NOMEM; scratch from a.
 */
extern GsCode gs_cb_ctrs_check(const GsCbCtrs *c, const GsForest *f, const GsAllocator *a,
							   GsStatus *st);

/* Release tables; NULL is allowed. */
extern void gs_cb_ctrs_free(const GsAllocator *a, GsCbCtrs *c);

/*
 * The forest feature of a OneHotFeature split of categorical feature cat on
 * hash, or -1 when the model has no such one-hot value.
 */
extern int32_t gs_cb_onehot_feature(const GsCbCtrs *c, int64_t cat, int64_t hash);

/*
 * The forest feature of an OnlineCtr split (its split_index, border and
 * ctr_target_border_idx), or -1 when they name no CTR border of the model.
 */
extern int32_t gs_cb_ctr_feature(const GsCbCtrs *c, int64_t split_index, double border,
								 int64_t target_border);

/*
 * How CatBoost's ShapValues group a model's features (its combination
 * classes): class_of[feature] for each of the forest's n_input + n_onehot +
 * n_ctr features.  Classes 0 .. n_input - 1 are the columns (a number's
 * splits; a category's one-hot values and the CTRs of it alone); the
 * others, each CTR combination of several categories (the numbers it
 * binarizes do not count), members member[member_start[c] ..
 * member_start[c + 1]), sorted columns.  TreeSHAP runs over the classes; a
 * class's contribution is shared equally among its members.
 */
typedef struct GsCbShapClasses
{
	int32_t		n_class;
	int32_t    *class_of;
	int32_t    *member_start;	/* [n_class + 1] */
	int32_t    *member;
} GsCbShapClasses;

/* The classes of c's features into *out (GS_ERR_NOMEM). */
extern GsCode gs_cb_shap_classes(const GsCbCtrs *c, const GsAllocator *a, GsCbShapClasses *out,
								 GsStatus *st);
extern void gs_cb_shap_classes_free(const GsAllocator *a, GsCbShapClasses *cl);

/*
 * The derived features of n_rows rows: x is column-major (x[j * ld + r],
 * j < n_input), xe column-major with ld n_rows and n_input + n_onehot +
 * n_ctr columns; the first n_input are copied from x.
 */
extern void gs_cb_ctrs_expand(const GsCbCtrs *c, const float *x, size_t ld, size_t n_rows,
							  float *xe);

#endif							/* GS_CATBOOST_CTR_H */

/*
 * catboost_read.h
 *	  Reading a CatBoost JSON model's categorical features and loss (the
 *	  CatBoost frontend's files only: catboost_load.c, catboost_ctr_read.c,
 *	  catboost_names.c, catboost_loss.c).  What the tables are and how rows
 *	  are scored with them is forest data: forest/catboost_ctr.h.
 */
#ifndef GS_CATBOOST_READ_H
#define GS_CATBOOST_READ_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cat_names.h"
#include "forest/catboost_ctr.h"
#include "forest/forest.h"

/* A JSON number (integer or real) as a double; 0 on success, -1 for anything else. */
static inline int
gs_cb_json_double(json_t *v, double *out)
{
	if (json_is_integer(v))
		*out = (double) json_integer_value(v);
	else if (json_is_real(v))
		*out = json_real_value(v);
	else
		return -1;
	return 0;
}

/*
 * For the reader (catboost_names.c), once c's tables are read:
 * gs_cb_check_names, that the names of the file (their hashes in c->hash,
 * file order) include every category the model has statistics of or
 * one-hot splits on (GS_ERR_UNSUPPORTED otherwise); gs_cb_named_names, the
 * names of each categorical feature from file_names (cat_features_hash),
 * c->hash becoming the features' hashes; gs_cb_hashed_names, for a file
 * without names, the hashes the model knows of each feature as its codes
 * (GS_ERR_UNSUPPORTED where they cannot all be known).  GS_ERR_LIMIT,
 * GS_ERR_NOMEM.
 */
extern GsCode gs_cb_check_names(GsCbCtrs *c, const GsAllocator *a, GsStatus *st);
extern GsCode gs_cb_named_names(GsCbCtrs *c, json_t *file_names, const GsAllocator *a,
								int32_t n_input, GsCatNames **names, GsStatus *st);
extern GsCode gs_cb_hashed_names(GsCbCtrs *c, const GsAllocator *a, int32_t n_input,
								 GsCatNames **names, GsStatus *st);

/*
 * Read the categorical features of CatBoost document root (features_info:
 * categorical_features, cat_features_hash, ctrs; ctr_data).  The model's
 * float feature i reads input column float_col[i] (a NaN counting as 1
 * when float_nan_right[i]); *n_input, its input columns so far, grows to
 * take the categorical ones.  *out is NULL (and GS_OK) for a model without
 * categorical features; otherwise new tables from a, released with
 * gs_cb_ctrs_free, and *names the names of the categories of each
 * categorical feature (in the file's order: those the model's tables or
 * one-hot values show it has, or every name where they do not tell), or,
 * for a file that names none, names that find a category by its hash
 * (GS_CATNAMES_HASH).  Errors: GS_ERR_INVALID_MODEL,
 * GS_ERR_UNSUPPORTED (a CTR type CatBoost's CPU evaluator does not have; a
 * file with some of the names; one without names whose categories cannot
 * all be known), GS_ERR_LIMIT, GS_ERR_NOMEM.
 */
extern GsCode gs_cb_ctrs_read(json_t *root, int32_t n_float, const int32_t *float_col,
							  const bool *float_nan_right, const GsLimits *lim,
							  const GsAllocator *a, int32_t *n_input, GsCbCtrs **out,
							  GsCatNames **names, GsStatus *st);

/*
 * For catboost_load.c: the output transform of CatBoost's predict for loss
 * function name with dim outputs (catboost_loss.c): GS_OK, or the error
 * (GS_ERR_UNSUPPORTED for a loss not listed, GS_ERR_INVALID_MODEL for a
 * count of outputs the loss cannot have).
 */
extern GsCode gs_cb_loss(const char *name, int32_t dim, GsTransform *tf, GsStatus *st);

#endif							/* GS_CATBOOST_READ_H */

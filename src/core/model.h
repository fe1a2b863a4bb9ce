/*
 * model.h
 *	  A scored model of any kind: a tree ensemble (GsForest) or a
 *	  feed-forward network (GsMlp), behind one load / shape / predict API.
 *
 * The glue handles models only through this header, so a scoring path does
 * not care what kind it scores.  A GsModel owns its forest or network; all
 * memory comes from the GsAllocator given to gs_model_load and is released
 * by gs_model_free().  Kind-specific metadata (objective, trees, layers) is
 * read from the forest or mlp member.
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "forest/forest.h"
#include "mlp/mlp.h"
#include "frontend/frontend.h"

typedef enum GsModelKind
{
	GS_MODEL_FOREST,			/* tree ensemble: forest != NULL */
	GS_MODEL_MLP				/* neural network: mlp != NULL */
} GsModelKind;

typedef struct GsModel
{
	GsModelKind kind;
	GsModelFormat format;
	int32_t		n_features;
	int32_t		n_outputs;		/* outputs per row */
	char	  **feature_names;	/* [n_features] or NULL (owned by forest/mlp) */
	GsForest   *forest;			/* GS_MODEL_FOREST */
	GsMlp	   *mlp;			/* GS_MODEL_MLP */
	GsAllocator alloc;
} GsModel;

/*
 * Parse and validate model bytes of format fmt (GS_FORMAT_AUTO detects).
 * On success *out is a new model owned by the caller (gs_model_free).  On
 * failure returns the error code, fills st, and *out is NULL.
 */
extern GsCode gs_model_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
							const GsLimits *lim, const GsAllocator *alloc,
							GsModel **out, GsStatus *st);

/*
 * XGBoost's linear booster (booster="gblinear") read as a forest without
 * trees whose linear_w holds its weights, for its explanations and what its
 * learner says (saved_by, the missing value); a model of trees loads as its
 * forest.  The contract of gs_model_load (*out a forest the caller frees
 * with gs_forest_free); a network is refused (GS_ERR_UNSUPPORTED).
 */
extern GsCode gs_model_load_weights(const unsigned char *bytes, size_t len, GsModelFormat fmt,
									const GsLimits *lim, const GsAllocator *alloc,
									GsForest **out, GsStatus *st);

/*
 * A tree-ensemble model read back from the image of its forest
 * (forest_image.h) instead of parsed; the same contract as gs_model_load.
 */
extern GsCode gs_model_load_image(const unsigned char *image, size_t len,
								  const GsLimits *lim, const GsAllocator *alloc,
								  GsModel **out, GsStatus *st);

/* Release a model and everything it owns; NULL is allowed. */
extern void gs_model_free(GsModel *m);

/*
 * What the model is, for gpu_models: "tree-ensemble", "mlp", "autoencoder"
 * or "linear" (XGBoost's gblinear, a network of one layer: xgb_linear.h).
 */
extern const char *gs_model_kind_name(const GsModel *m);

/*
 * Why only the CPU engine scores the model, as a phrase that follows
 * "model X is", or NULL when the GPU engine can score it: XGBoost's
 * linear booster (a dot product per row, summed in XGBoost's order) and
 * LightGBM's linear trees (leaf models the GPU layouts do not hold).
 */
extern const char *gs_model_cpu_only(const GsModel *m);

/*
 * The category names the model keeps for its categorical features
 * (cat_names.h), or NULL.
 */
extern const GsCatNames *gs_model_cat_names(const GsModel *m);

/*
 * Rows a caller that must stay interruptible (a backend) should score per
 * gs_model_predict call: at most 4096, fewer for heavy models, so that a
 * call does about 2^23 units of work (~20 ms on one core) whatever the
 * model.  The work of a row is its node steps (the depth of every tree,
 * ~2 ns each) for a tree ensemble, or its weights over 16 for a network
 * (BLAS does many multiply-adds in the time of one tree step).  Slices are
 * whole 64-row blocks of the CPU engine where possible, so slicing does not
 * slow scoring down.
 */
extern size_t gs_model_slice_rows(const GsModel *m);

/*
 * Before scoring: turn values that the model takes as missing besides NaN
 * into NaN, in place (gs_forest_mark_missing; networks have none).  The
 * same layout as gs_model_predict's x.
 */
extern void gs_model_mark_missing(const GsModel *m, float *x, size_t ld, size_t n_rows);

/*
 * Take v as missing besides NaN (a tree ensemble's GsForest.missing_value,
 * or an XGBoost linear booster's: gpu_load_model's missing_value); NaN, or
 * another network, leaves m as it is.
 */
extern void gs_model_set_missing_value(GsModel *m, float v);

/*
 * Does m take a value besides NaN as missing (its file's, or one set by
 * gs_model_set_missing_value)?  Then *v is that value.
 */
extern bool gs_model_missing_value(const GsModel *m, float *v);

/* Floats of scratch gs_model_predict needs for a batch of n_rows rows. */
extern size_t gs_model_scratch_floats(const GsModel *m, size_t n_rows);

/*
 * Score a column-major batch on the CPU (x[f * ld + r], ld >= n_rows) into
 * out[r * n_outputs + k].  scratch holds gs_model_scratch_floats(m, n_rows)
 * floats and may not alias x or out.  One row given row-major is the batch
 * n_rows = ld = 1.  Cannot fail.
 */
extern void gs_model_predict(const GsModel *m, const float *x, size_t ld, size_t n_rows,
							 float *scratch, float *out);

#endif							/* GS_MODEL_H */

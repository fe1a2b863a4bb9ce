/*
 * forest_image.h
 *	  A validated forest as one flat byte image, so that a session can read
 *	  a model back without parsing its original bytes again.
 *
 * gpu_load_model parses a tree-ensemble model once, and stores the image of
 * the resulting forest beside the model's bytes.  Each later session (and
 * each parallel worker) reads the image: a copy and a check of every node,
 * tens of milliseconds where parsing a 2,000-tree XGBoost JSON model takes a
 * second.  An image is never trusted: gs_forest_image_read checks
 * everything a loader guarantees about a forest (gs_forest_check), so a
 * damaged or crafted image gives an error, never a crash or a wrong score;
 * the caller then parses the model bytes instead.
 *
 * Layout (host byte order; an image written on a machine of the other byte
 * order, or by another image version, is refused, see GS_IMAGE_VERSION): a header of fixed size
 * (magic "GSFOREST", version, a byte-order mark, the forest's scalars and
 * names, array lengths, flags), then the missing value (a float, when the
 * flags say so), the linear leaves' term count (an int64, when the flags
 * say so), the transform's two parameters (floats, when the flags say so:
 * IsolationForest), the length of the CatBoost categorical features'
 * region (an int64, when the flags say so), base_margin, tree_offset, tree_group, tree_depth, nodes,
 * leaf_lo (when the flags say so), the linear leaves' constant, start,
 * feature and coef (when the flags say so), cat_words, that region
 * (catboost_ctr_image.c: its one-hot values, CTR tables and their values),
 * the feature names (each NUL-terminated) and the category names (when the
 * flags say so: per feature its kind, count and value for an unknown
 * name, then the names, each NUL-terminated), with nothing after them.
 */
#ifndef GS_FOREST_IMAGE_H
#define GS_FOREST_IMAGE_H

#include <stddef.h>

#include "forest.h"

/*
 * 2: a flags word and leaf_lo (LightGBM's double leaves).  3: category
 * names (cat_names.h), their length in the word reserved before.  4: a
 * missing value (GsForest.missing_value).  5: linear leaves
 * (GsForest.linear, LightGBM's linear trees).  6: the transform's
 * parameters (GsForest.transform_param).  7: CatBoost's categorical
 * features (GsForest.cb_ctrs).  Images of 1 to 6 are still read, except
 * those of LightGBM models of 1 (float leaves): those models are parsed
 * again.
 */
#define GS_IMAGE_VERSION 7

/* Bytes of the image of f. */
extern size_t gs_forest_image_size(const GsForest *f);

/* Write the image of f into buf, which holds gs_forest_image_size(f) bytes. */
extern void gs_forest_image_write(const GsForest *f, unsigned char *buf);

/*
 * Read an image into a new forest owned by the caller (gs_forest_free),
 * checked as gs_forest_check does and against the caps of lim.  Errors:
 * GS_ERR_INVALID_MODEL (not an image of this version and byte order, or a
 * damaged one), GS_ERR_LIMIT, GS_ERR_NOMEM, GS_ERR_CANCELLED; *out is then
 * NULL.
 */
extern GsCode gs_forest_image_read(const unsigned char *buf, size_t len,
								   const GsLimits *lim, const GsAllocator *alloc,
								   GsForest **out, GsStatus *st);

/*
 * GS_ERR_LIMIT (st saying which) when f's trees, nodes, features or depth
 * break a cap of lim, else GS_OK (forest_check.c).
 */
extern GsCode gs_forest_check_caps(const GsForest *f, const GsLimits *lim, GsStatus *st);

/*
 * Check the invariants every loader guarantees of a forest (forest_check.c): shape and
 * caps, each tree a real tree laid out breadth-first (children after their
 * parent, each node reached once, tree_depth right), features in range,
 * leaves finite and thresholds not NaN, leaves' low parts (leaf_lo) at
 * most half a float ulp and 0 on splits, linear leaves' terms on leaves
 * only, in order, with features in range and finite values, category sets inside cat_words,
 * split_kinds and n_cat_splits matching the nodes, names terminated and
 * feature names valid UTF-8.  GS_OK or GS_ERR_INVALID_MODEL / GS_ERR_LIMIT
 * with the first broken one in st (GS_ERR_CANCELLED when lim's interrupt
 * asked to stop); allocates scratch through alloc.  st is left alone on
 * success.
 */
extern GsCode gs_forest_check(const GsForest *f, const GsLimits *lim,
							  const GsAllocator *alloc, GsStatus *st);

#endif							/* GS_FOREST_IMAGE_H */

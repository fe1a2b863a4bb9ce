/*
 * xgb_linear.h
 *	  XGBoost's linear booster (booster="gblinear"), read by gs_xgb_load_any
 *	  (forest.h) and made a network of one dense layer (mlp.h) here.
 */
#ifndef GS_XGB_LINEAR_H
#define GS_XGB_LINEAR_H

#include "forest/forest.h"
#include "gs_status.h"
#include "mlp/mlp.h"

/*
 * The network of a linear booster: f is what gs_xgb_load_any read (no
 * trees; its objective and transform, base margins, feature counts and
 * names, missing value, saved_by and linear_w).  Objectives whose transform
 * is the identity, the logistic or the softmax are supported.  On success
 * *out is a new network owned by the caller; f is left as it was.
 */
extern GsCode gs_xgb_linear(const GsForest *f, const GsAllocator *alloc, GsMlp **out,
							GsStatus *st);

/*
 * Take v as missing too (besides NaN) in the network of a linear booster
 * (m->linear_booster), as gs_forest_mark_missing does for a forest.
 */
extern void gs_xgb_linear_set_missing(GsMlp *m, float v);

/* Does the linear booster m take a value besides NaN as missing?  Then *v is it. */
extern bool gs_xgb_linear_missing(const GsMlp *m, float *v);

#endif							/* GS_XGB_LINEAR_H */

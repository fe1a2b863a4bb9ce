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

#endif							/* GS_XGB_LINEAR_H */

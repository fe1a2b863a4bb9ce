/*
 * forest_shap.h
 *	  Why a row got its score: per-feature contributions to a tree
 *	  ensemble's margin (SHAP values), for reason codes.
 *
 * The path-dependent TreeSHAP algorithm of Lundberg, Erion and Lee
 * ("Consistent Individualized Feature Attribution for Tree Ensembles",
 * 2018; Algorithm 2), which XGBoost's predict(pred_contribs=True) and
 * LightGBM's predict(pred_contrib=True) compute.  It weighs the branch a
 * row does not take by the node covers (GsForest.cover), so it needs a
 * forest loaded with GsLimits.keep_covers.  Contributions are of the margin
 * (the sum of the trees plus the base margin, before the sigmoid or
 * softmax); per output group they add up to that margin, the last one being
 * the expected margin over the training rows (the "bias").  Computed in
 * double.  For XGBoost's linear booster (a tree-less forest with linear_w,
 * gs_xgb_load_any) the contributions are XGBoost's for gblinear: each
 * present feature's value times its weight, and the bias.  No PostgreSQL
 * here.
 */
#ifndef GS_FOREST_SHAP_H
#define GS_FOREST_SHAP_H

#include "forest.h"
#include "gs_status.h"

/* Deepest tree an explanation walks (scratch grows with its square). */
#define GS_SHAP_MAX_DEPTH	1024
/* Most memory the contributions kept by leaf of symmetric trees take. */
#define GS_SHAP_LEAF_CACHE_BYTES ((size_t) 32 << 20)

typedef struct GsShap GsShap;

/*
 * Prepare explanations for forest f (which must outlive the result):
 * GS_ERR_UNSUPPORTED when f has no covers, GS_ERR_LIMIT for trees deeper
 * than GS_SHAP_MAX_DEPTH, GS_ERR_NOMEM.  Memory from alloc: 8 bytes per
 * node plus a scratch of O(depth^2); for symmetric trees 8 bytes a leaf,
 * and up to GS_SHAP_LEAF_CACHE_BYTES more as rows reach leaves (their
 * contributions kept; gs_shap_row goes on without keeping them when
 * that memory is spent or cannot be had).
 */
extern GsCode gs_shap_new(const GsForest *f, const GsAllocator *alloc, GsShap **out,
						  GsStatus *st);

/*
 * Contributions for one row (x[j], j < n_features; NaN is missing):
 * phi[g * (n_features + 1) + j] is feature j's share of margin g, and
 * phi[g * (n_features + 1) + n_features] the expected margin.  phi holds
 * n_groups * (n_features + 1) doubles; it is overwritten.
 */
extern void gs_shap_row(GsShap *s, const float *x, double *phi);

extern void gs_shap_free(GsShap *s);

#endif							/* GS_FOREST_SHAP_H */

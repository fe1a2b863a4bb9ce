/*
 * catboost.h
 *	  CatBoost's frontend: models saved as JSON to a validated forest
 *	  (catboost_load.c).  Reached through frontend.h.
 */
#ifndef GS_CATBOOST_H
#define GS_CATBOOST_H

#include <stdbool.h>
#include <stddef.h>

#include "forest/forest.h"
#include "gs_status.h"

/*
 * Parse and validate a CatBoost model saved as JSON
 * (save_model(..., format="json")); the same contract as gs_xgb_load (fmt
 * must be GS_FORMAT_CATBOOST_JSON or GS_FORMAT_AUTO).
 */
extern GsCode gs_catboost_load(const unsigned char *bytes, size_t len,
							   GsModelFormat fmt, const GsLimits *lim,
							   const GsAllocator *alloc, GsForest **out,
							   GsStatus *st);

#endif							/* GS_CATBOOST_H */

/*
 * lightgbm.h
 *	  LightGBM's frontend: text models (Booster.save_model) to a validated
 *	  forest (lgbm_load.c).  Reached through frontend.h.
 */
#ifndef GS_LIGHTGBM_H
#define GS_LIGHTGBM_H

#include <stdbool.h>
#include <stddef.h>

#include "forest/forest.h"
#include "gs_status.h"

/*
 * Parse and validate a LightGBM text model (Booster.save_model); the same
 * contract as gs_xgb_load (fmt must be GS_FORMAT_LIGHTGBM or
 * GS_FORMAT_AUTO).
 */
extern GsCode gs_lgbm_load(const unsigned char *bytes, size_t len,
						   GsModelFormat fmt, const GsLimits *lim,
						   const GsAllocator *alloc, GsForest **out,
						   GsStatus *st);

#endif							/* GS_LIGHTGBM_H */

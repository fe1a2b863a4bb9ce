/*
 * xgboost.h
 *	  XGBoost's frontend: models saved as JSON, UBJSON or in the legacy
 *	  binary format, to a validated forest (xgb_load.c), or a linear booster
 *	  to a network (xgb_linear.h).  Reached through frontend.h.
 */
#ifndef GS_XGBOOST_H
#define GS_XGBOOST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "forest/forest.h"
#include "gs_status.h"

/*
 * Parse and validate an XGBoost model (JSON, UBJ or the legacy binary
 * format; GS_FORMAT_AUTO detects).
 * On success *out is a new forest owned by the caller (gs_forest_free).
 * On failure returns the error code, fills st, and *out is NULL.
 */
extern GsCode gs_xgb_load(const unsigned char *bytes, size_t len,
						  GsModelFormat fmt, const GsLimits *lim,
						  const GsAllocator *alloc, GsForest **out,
						  GsStatus *st);

/*
 * gs_xgb_load, except that a linear booster (gblinear, in JSON or UBJ) is
 * read too: into a forest without trees whose linear_w holds the weights.
 */
extern GsCode gs_xgb_load_any(const unsigned char *bytes, size_t len,
							  GsModelFormat fmt, const GsLimits *lim,
							  const GsAllocator *alloc, GsForest **out,
							  GsStatus *st);

/*
 * XGBoost's legacy binary format (xgb_binary.c) to the document the same
 * model saved as JSON gives; the contract of gs_json_decode (frontend/common/json_decode.h).
 */
extern json_t *gs_xgb_binary_decode(const unsigned char *bytes, size_t len,
									const GsInterrupt *intr, GsStatus *st);

/*
 * Whether bytes without the magic "binf" (XGBoost before 1.4 wrote none) may
 * be the binary format: an objective's name (uint64 length, lower-case
 * letters, digits, ':' and '_') where the format keeps it, after the
 * 136-byte learner header.  The header itself (a version 1.x or 2.x, or the
 * zeros of a release before 1.0) is checked by the decoder, so that 'auto'
 * says what is wrong with a damaged one as the explicit format does.
 */
extern bool gs_xgb_binary_detect(const unsigned char *bytes, size_t len);

#endif							/* GS_XGBOOST_H */

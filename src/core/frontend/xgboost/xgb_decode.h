/*
 * xgb_decode.h
 *	  Bytes of an XGBoost model (JSON or UBJSON) to a jansson document.
 */
#ifndef GS_XGB_DECODE_H
#define GS_XGB_DECODE_H

#include <stddef.h>

#include <jansson.h>

#include "forest/forest.h"
#include "gs_status.h"

/*
 * Decode bytes of format fmt (GS_FORMAT_XGBOOST_JSON, _UBJ or _BINARY, or
 * GS_FORMAT_CATBOOST_JSON, plain JSON to catboost_load.c) into a new
 * document the caller must json_decref(); NULL with st filled on failure
 * (GS_ERR_CANCELLED when intr, which may be NULL, asked to stop).
 */
extern json_t *gs_xgb_decode(const unsigned char *bytes, size_t len,
							 GsModelFormat fmt, const GsInterrupt *intr,
							 GsStatus *st);

/*
 * XGBoost's legacy binary format (xgb_binary.c) to the document the same
 * model saved as JSON gives; the contract of gs_xgb_decode.
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

#endif							/* GS_XGB_DECODE_H */

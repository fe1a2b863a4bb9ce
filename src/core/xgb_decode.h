/*
 * xgb_decode.h
 *	  Bytes of an XGBoost model (JSON or UBJSON) to a jansson document.
 */
#ifndef GS_XGB_DECODE_H
#define GS_XGB_DECODE_H

#include <stddef.h>

#include <jansson.h>

#include "forest.h"
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
 * Whether bytes without the magic "binf" (XGBoost before 1.4 wrote none) look
 * like the binary format: the learner header with a version 1.x or 2.x at
 * bytes 20 - 27, or zeros from byte 20 to the end of the header as releases
 * before 1.0 wrote it, then an objective's name (uint64 length, lower-case
 * letters, digits, ':' and '_').
 */
extern bool gs_xgb_binary_detect(const unsigned char *bytes, size_t len);

/*
 * Whether an objective's name follows where the binary format keeps it,
 * whatever the header holds: bytes that no format was detected in but that
 * resemble a (damaged) binary model, which 'auto' then reads as one, to say
 * what is wrong with it.
 */
extern bool gs_xgb_binary_resembles(const unsigned char *bytes, size_t len);

#endif							/* GS_XGB_DECODE_H */

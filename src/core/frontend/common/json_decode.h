/*
 * json_decode.h
 *	  Bytes of a model saved as JSON or UBJSON to a jansson document.
 */
#ifndef GS_JSON_DECODE_H
#define GS_JSON_DECODE_H

#include <stddef.h>

#include <jansson.h>

#include "forest/forest.h"
#include "gs_status.h"

/*
 * Decode bytes of format fmt (GS_FORMAT_XGBOOST_JSON or _UBJ, or
 * GS_FORMAT_CATBOOST_JSON: JSON whose integers past int64 become reals) into a new
 * document the caller must json_decref(); NULL with st filled on failure
 * (GS_ERR_CANCELLED when intr, which may be NULL, asked to stop).
 */
extern json_t *gs_json_decode(const unsigned char *bytes, size_t len,
							  GsModelFormat fmt, const GsInterrupt *intr,
							  GsStatus *st);

#endif							/* GS_JSON_DECODE_H */

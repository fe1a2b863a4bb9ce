/*
 * load_checks.h
 *	  The checks every model loader makes before it reads a byte, in one
 *	  place (the frontend and each format's loader call it).
 */
#ifndef GS_LOAD_CHECKS_H
#define GS_LOAD_CHECKS_H

#include <stddef.h>

#include "forest/forest.h"
#include "gs_status.h"

/*
 * Start a load of len bytes: clears st, makes *lim the default caps when it
 * is NULL, and refuses empty bytes (GS_ERR_INVALID_MODEL) and more bytes than
 * (*lim)->max_model_bytes (GS_ERR_LIMIT).
 */
extern GsCode gs_load_open(size_t len, const GsLimits **lim, GsStatus *st);

#endif							/* GS_LOAD_CHECKS_H */

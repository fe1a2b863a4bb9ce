/*
 * load_checks.c
 *	  The opening checks of every model load; see load_checks.h.
 */
#include "load_checks.h"

/* Start a load; see load_checks.h. */
GsCode
gs_load_open(size_t len, const GsLimits **lim, GsStatus *st)
{
	gs_status_clear(st);
	if (*lim == NULL)
		*lim = &gs_default_limits;
	if (len == 0)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "the model bytes are empty");
	if ((*lim)->max_model_bytes > 0 && len > (*lim)->max_model_bytes)
		return gs_status_limit(st, GS_LIMIT_MODEL_BYTES, (long long) (*lim)->max_model_bytes,
							   "%zu bytes, more than the limit of %zu bytes",
							   len, (*lim)->max_model_bytes);
	return GS_OK;
}

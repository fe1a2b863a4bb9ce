/*
 * errors.c
 *	  The one place where a scoring-core status becomes an ereport(ERROR).
 */
#include "postgres.h"

#include "gpuscore.h"

/* Map a core status code to a SQLSTATE. */
static int
status_sqlstate(GsCode code)
{
	switch (code)
	{
		case GS_ERR_INVALID_MODEL:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case GS_ERR_UNSUPPORTED:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case GS_ERR_LIMIT:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case GS_ERR_INVALID_INPUT:
			return ERRCODE_DATA_EXCEPTION;
		case GS_ERR_NOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case GS_ERR_CANCELLED:
			/* the glue processes the interrupt instead; see gs_model_parse */
			return ERRCODE_QUERY_CANCELED;
		case GS_OK:
		case GS_ERR_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

/* Raise the ERROR a failed core status describes; see gpuscore.h. */
void
gs_report_status(const GsStatus *st)
{
	ereport(ERROR,
			(errcode(status_sqlstate(st->code)),
			 errmsg_internal("%s", st->msg),
			 st->detail[0] ? errdetail_internal("%s", st->detail) : 0,
			 st->code == GS_ERR_LIMIT ?
			 errhint("The pg_gpuscore.max_* settings hold the limits.") : 0));
	pg_unreachable();
}

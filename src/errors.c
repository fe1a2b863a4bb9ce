/*
 * errors.c
 *	  The one place where a scoring-core status becomes an ereport(ERROR).
 */
#include "postgres.h"

#include <limits.h>

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

/*
 * The pg_gpuscore setting a broken cap is, or NULL: only where the cap is
 * the setting's current value and the setting can still go higher (a cap of
 * the core's own, or one a setting could not raise, gets no hint).
 */
static const char *
limit_setting(const GsStatus *st)
{
	const char *name = NULL;
	long long	now = 0,
				most = 0;

	switch (st->limit)
	{
		case GS_LIMIT_FIXED:
			return NULL;
		case GS_LIMIT_MODEL_BYTES:
			name = "max_model_size";
			now = (long long) gs_max_model_size_kb * 1024;
			most = (long long) GS_GUC_MAX_MODEL_SIZE_KB * 1024;
			break;
		case GS_LIMIT_TREES:
			name = "max_trees";
			now = gs_max_trees;
			most = GS_GUC_MAX_TREES;
			break;
		case GS_LIMIT_NODES:
			name = "max_nodes";
			now = gs_max_nodes;
			most = INT_MAX;
			break;
		case GS_LIMIT_DEPTH:
			name = "max_tree_depth";
			now = gs_max_tree_depth;
			most = GS_GUC_MAX_TREE_DEPTH;
			break;
		case GS_LIMIT_FEATURES:
			name = "max_features";
			now = gs_max_features;
			most = GS_GUC_MAX_FEATURES;
			break;
		case GS_LIMIT_LAYERS:
			name = "max_layers";
			now = gs_max_layers;
			most = GS_GUC_MAX_LAYERS;
			break;
		case GS_LIMIT_PARAMETERS:
			name = "max_parameters";
			now = gs_max_parameters;
			most = INT_MAX;
			break;
	}
	return st->limit_value == now && now < most ? name : NULL;
}

/* Raise the ERROR a failed core status describes; see gpuscore.h. */
void
gs_report_status(const GsStatus *st)
{
	const char *setting = st->code == GS_ERR_LIMIT ? limit_setting(st) : NULL;

	ereport(ERROR,
			(errcode(status_sqlstate(st->code)),
			 errmsg_internal("%s", st->msg),
			 st->detail[0] ? errdetail_internal("%s", st->detail) : 0,
			 setting ?
			 errhint("A superuser can raise the limit with the setting pg_gpuscore.%s.", setting) : 0));
	pg_unreachable();
}

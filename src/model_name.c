/*
 * model_name.c
 *	  The check of a user-given model name (not NULL, 1..63 bytes), shared by
 *	  every SQL function that takes one.
 *
 * Nothing here reads the catalog or the model cache: a name is checked
 * before either is asked for it.  The name gs_model_name_arg returns is
 * palloc'd in CurrentMemoryContext.
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "gpuscore.h"

/* Whether a model name (NULL for SQL NULL) is valid, or why not; see gpuscore.h. */
bool
gs_model_name_ok(const char *name, GsRowError *err)
{
	if (name == NULL)
	{
		gs_row_error_set(err, ERRCODE_NULL_VALUE_NOT_ALLOWED, "model name must not be null");
		return false;
	}
	if (name[0] == '\0')
	{
		gs_row_error_set(err, ERRCODE_INVALID_NAME, "model name must not be empty");
		return false;
	}
	if (strlen(name) >= NAMEDATALEN)
	{
		gs_row_error_set(err, ERRCODE_NAME_TOO_LONG, "model name \"%s\" is too long", name);
		gs_row_error_detail(err, "Model names are at most %d bytes.", NAMEDATALEN - 1);
		return false;
	}
	return true;
}

/* Check a user-given model name; see gpuscore.h. */
const char *
gs_model_name_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name = PG_ARGISNULL(argno) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(argno));
	GsRowError	err;

	if (!gs_model_name_ok(name, &err))
		gs_row_error_raise(&err);
	return name;
}

/*
 * row_error.c
 *	  Errors of one row that are raised later, where the row's score is
 *	  used: what lets a batched gpu_score call fail exactly as the call
 *	  itself would have failed for that row, and only if its value is used.
 *
 * A batch scores every row it holds, but a row-by-row call raises its error
 * (an infinite feature, an array of the wrong length, a missing model) only
 * for a row whose score the query evaluates: not for a row a CASE, a
 * COALESCE or an aggregate's FILTER skips.  So the checks that a call makes
 * of its row report into a GsRowError instead of raising; the batch keeps it
 * with the row as a text datum (SQLSTATE, message, detail, hint), and the
 * expression that stands for the call in the plan, gpu_batch_result(score,
 * error), raises it when it is evaluated.  The raising and the deferred
 * paths build their messages with the same code (gs_row_error_set callers
 * in features.c, categories.c, row_features.c), so they read the same.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_batch_result);

/* Separates the parts of an error in its text form. */
#define PART_SEP '\x1f'

/* Copy a printf-style message into buf. */
static void
format_part(char *buf, size_t len, const char *fmt, va_list ap)
{
	vsnprintf(buf, len, fmt, ap);
}

/* Set err to an error with SQLSTATE code and a message; see gpuscore.h. */
void
gs_row_error_set(GsRowError *err, int sqlerrcode, const char *fmt,...)
{
	va_list		ap;

	memset(err, 0, sizeof(*err));
	err->sqlerrcode = sqlerrcode;
	va_start(ap, fmt);
	format_part(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/* Add a detail to err; see gpuscore.h. */
void
gs_row_error_detail(GsRowError *err, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	format_part(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
}

/* Add a hint to err; see gpuscore.h. */
void
gs_row_error_hint(GsRowError *err, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	format_part(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

/* Raise err; see gpuscore.h. */
void
gs_row_error_raise(const GsRowError *err)
{
	ereport(ERROR,
			(errcode(err->sqlerrcode),
			 errmsg_internal("%s", err->message),
			 err->detail[0] ? errdetail_internal("%s", err->detail) : 0,
			 err->hint[0] ? errhint("%s", err->hint) : 0));
	pg_unreachable();
}

/* err as a text datum, in CurrentMemoryContext; see gpuscore.h. */
Datum
gs_row_error_datum(const GsRowError *err)
{
	char		state[6];
	char	   *s;

	memcpy(state, unpack_sql_state(err->sqlerrcode), 5);
	state[5] = '\0';
	s = psprintf("%s%c%s%c%s%c%s", state, PART_SEP, err->message, PART_SEP, err->detail,
				 PART_SEP, err->hint);
	return PointerGetDatum(cstring_to_text(s));
}

/*
 * Raise the error a text datum of gs_row_error_datum holds.  A text of
 * another form (gpu_batch_result called by hand) is raised as a message of
 * its own, SQLSTATE P0001 as PL/pgSQL's RAISE gives.
 */
static void
raise_error_text(text *t) pg_attribute_noreturn();

static void
raise_error_text(text *t)
{
	char	   *s = text_to_cstring(t);
	char	   *parts[4] = {NULL, NULL, NULL, NULL};
	int			n = 0;
	GsRowError	err;

	parts[n++] = s;
	for (char *p = s; *p && n < 4; p++)
		if (*p == PART_SEP)
		{
			*p = '\0';
			parts[n++] = p + 1;
		}
	if (n != 4 || strlen(parts[0]) != 5 || strspn(parts[0], "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 5)
		ereport(ERROR,
				(errcode(ERRCODE_RAISE_EXCEPTION),
				 errmsg_internal("%s", s)));
	memset(&err, 0, sizeof(err));
	err.sqlerrcode = MAKE_SQLSTATE(parts[0][0], parts[0][1], parts[0][2], parts[0][3], parts[0][4]);
	/* never anything but an ERROR, whatever the text says */
	strlcpy(err.message, parts[1], sizeof(err.message));
	strlcpy(err.detail, parts[2], sizeof(err.detail));
	strlcpy(err.hint, parts[3], sizeof(err.hint));
	gs_row_error_raise(&err);
}

/*
 * gpu_batch_result(score anyelement, error text) RETURNS anyelement: what
 * a batched gpu_score or gpu_predict call becomes in the plan.  The score
 * (NULL for a NULL feature array), unless the batch recorded an error for
 * the row: then that error, as the call would have raised it.  Not strict.
 */
Datum
gpuscore_gpu_batch_result(PG_FUNCTION_ARGS)
{
	if (!PG_ARGISNULL(1))
		raise_error_text(PG_GETARG_TEXT_PP(1));
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

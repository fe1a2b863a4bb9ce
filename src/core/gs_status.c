/*
 * gs_status.c
 *	  Status helpers and the malloc allocator of the scoring core.
 */
#include "gs_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void *
malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size ? size : 1);
}

static void
malloc_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

const GsAllocator gs_malloc_allocator = {malloc_alloc, malloc_free, NULL};

/* Reset a status to GS_OK with empty messages. */
void
gs_status_clear(GsStatus *st)
{
	st->code = GS_OK;
	st->msg[0] = '\0';
	st->detail[0] = '\0';
	st->limit = GS_LIMIT_FIXED;
	st->limit_value = 0;
}

/* Fill st: code, message, no detail, the kind and value of a broken cap. */
static GsCode status_vset(GsStatus *st, GsCode code, GsLimitKind kind, long long cap,
						  const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static GsCode
status_vset(GsStatus *st, GsCode code, GsLimitKind kind, long long cap, const char *fmt, va_list ap)
{
	st->code = code;
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	st->detail[0] = '\0';
	st->limit = kind;
	st->limit_value = cap;
	return code;
}

/* Set code and message; returns the code. */
GsCode
gs_status_set(GsStatus *st, GsCode code, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	code = status_vset(st, code, GS_LIMIT_FIXED, 0, fmt, ap);
	va_end(ap);
	return code;
}

/* GS_ERR_LIMIT with the kind and value of the cap; see gs_status.h. */
GsCode
gs_status_limit(GsStatus *st, GsLimitKind kind, long long cap, const char *fmt,...)
{
	va_list		ap;
	GsCode		code;

	va_start(ap, fmt);
	code = status_vset(st, GS_ERR_LIMIT, kind, cap, fmt, ap);
	va_end(ap);
	return code;
}

/* Set the detail line of an already-set status. */
void
gs_status_detail(GsStatus *st, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(st->detail, sizeof(st->detail), fmt, ap);
	va_end(ap);
}

/* Stop a load the caller interrupted; see gs_status.h. */
GsCode
gs_check_interrupt(const GsInterrupt *i, GsStatus *st)
{
	if (!gs_interrupted(i))
		return GS_OK;
	return gs_status_set(st, GS_ERR_CANCELLED, "loading the model was interrupted");
}

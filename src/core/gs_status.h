/*
 * gs_status.h
 *	  Status values and the caller-given allocator of the PostgreSQL-free
 *	  scoring core.
 *
 * Core functions never longjmp, exit or print: they return a GsCode and fill
 * a GsStatus whose message follows PostgreSQL's style (lower case, no
 * trailing period).  The PostgreSQL glue turns it into an ereport() in one
 * place (src/errors.c).  Memory that outlives a call is obtained through a
 * GsAllocator chosen by the caller, so the glue can tie it to a memory
 * context and a unit test can use malloc.
 */
#ifndef GS_STATUS_H
#define GS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef enum GsCode
{
	GS_OK = 0,
	GS_ERR_INVALID_MODEL,		/* bytes are not a well-formed model */
	GS_ERR_UNSUPPORTED,			/* well-formed, but uses a feature we lack */
	GS_ERR_LIMIT,				/* breaks a resource cap */
	GS_ERR_INVALID_INPUT,		/* bad feature values or shapes */
	GS_ERR_NOMEM,				/* allocation failed */
	GS_ERR_CANCELLED,			/* the caller's GsInterrupt asked to stop */
	GS_ERR_INTERNAL				/* can't happen */
} GsCode;

#define GS_MSG_LEN 512

/*
 * The kind of cap a GS_ERR_LIMIT failure broke: one the caller sets
 * (GsLimits, the glue's pg_gpuscore.max_* settings) or a fixed one of the
 * core.  The glue hints at a setting only when the cap broken is the
 * setting's current value.
 */
typedef enum GsLimitKind
{
	GS_LIMIT_FIXED = 0,			/* the core's own cap: no setting moves it */
	GS_LIMIT_MODEL_BYTES,
	GS_LIMIT_TREES,
	GS_LIMIT_NODES,
	GS_LIMIT_DEPTH,
	GS_LIMIT_FEATURES,
	GS_LIMIT_LAYERS,
	GS_LIMIT_PARAMETERS
} GsLimitKind;

typedef struct GsStatus
{
	GsCode		code;
	char		msg[GS_MSG_LEN];	/* primary message */
	char		detail[GS_MSG_LEN]; /* optional detail, "" when none */
	GsLimitKind limit;			/* GS_ERR_LIMIT: which kind of cap */
	long long	limit_value;	/* GS_ERR_LIMIT: the cap broken */
} GsStatus;

/* Caller-given allocator: alloc returns NULL on failure, never longjmps. */
typedef struct GsAllocator
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*free) (void *ctx, void *ptr);
	void	   *ctx;
} GsAllocator;

/*
 * Zeroed memory (at least 1 byte) from a, or NULL when out of memory; size
 * is added to *bytes (what a structure's parts occupy) unless bytes is NULL.
 */
static inline void *
gs_zalloc(const GsAllocator *a, size_t size, size_t *bytes)
{
	void	   *p = a->alloc(a->ctx, size > 0 ? size : 1);

	if (p)
		memset(p, 0, size > 0 ? size : 1);
	if (bytes)
		*bytes += size;
	return p;
}

/* a->free of p, unless NULL. */
static inline void
gs_release(const GsAllocator *a, void *p)
{
	if (p)
		a->free(a->ctx, p);
}

/*
 * Caller-given interrupt check for long work (parsing a large model).  The
 * core calls pending(arg) every few milliseconds of work; when it returns
 * true the core frees what it built and returns GS_ERR_CANCELLED, and the
 * caller deals with its interrupt (the glue: CHECK_FOR_INTERRUPTS()).
 * pending must not longjmp.  A NULL pending is never interrupted.
 */
typedef struct GsInterrupt
{
	bool		(*pending) (void *arg);
	void	   *arg;
} GsInterrupt;

/* True when the caller asked to stop (i may be NULL). */
static inline bool
gs_interrupted(const GsInterrupt *i)
{
	return i != NULL && i->pending != NULL && i->pending(i->arg);
}

/*
 * GS_ERR_CANCELLED with the message every load uses when the caller asked
 * to stop, else GS_OK.  Loops call it every so many items.
 */
extern GsCode gs_check_interrupt(const GsInterrupt *i, GsStatus *st);

/* An allocator on top of malloc/free, for tests and benchmarks. */
extern const GsAllocator gs_malloc_allocator;

/* Reset a status to GS_OK with empty messages. */
extern void gs_status_clear(GsStatus *st);

/* Set code and printf-style message; returns code for "return gs_status_set(...)". */
extern GsCode gs_status_set(GsStatus *st, GsCode code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/*
 * GS_ERR_LIMIT for breaking cap, of the given kind (GS_LIMIT_FIXED for the
 * core's own caps), with a printf-style message; returns GS_ERR_LIMIT.
 */
extern GsCode gs_status_limit(GsStatus *st, GsLimitKind kind, long long cap, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

/* Set the detail line of an already-set status. */
extern void gs_status_detail(GsStatus *st, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

#endif							/* GS_STATUS_H */

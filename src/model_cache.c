/*
 * model_cache.c
 *	  Per-backend cache of parsed models, keyed by model name.
 *
 * Each entry holds a reference to the GsModelRef of the version it last read
 * from the catalog.  A GsModelRef owns a memory context ("pg_gpuscore model
 * <name>", child of CacheMemoryContext) holding the model; it is deleted
 * when its last reference goes: the cache's own when the model is replaced
 * or dropped, and each statement's when that statement's memory context is
 * reset or deleted (a reset callback), which also covers ERROR and cancel.
 *
 * Freshness: changes to the model table send a relcache invalidation
 * (model_admin.c); our callback marks every entry stale.  A statement's first
 * use of a model processes pending invalidations and, for a stale entry,
 * re-reads the model's identity (model_id, never reused) and re-parses only
 * when it changed.  So a model replaced by another session is seen by the
 * next statement, and a statement never reads the catalog per row.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "gpuscore.h"

typedef struct CacheEntry
{
	char		name[NAMEDATALEN];	/* hash key */
	GsModelRef *ref;			/* NULL when not loaded */
	bool		stale;			/* re-check the catalog before use */
} CacheEntry;

/* The statement's hold on a model, released by a memory context callback. */
typedef struct StatementHold
{
	MemoryContextCallback cb;
	GsModelRef *ref;
} StatementHold;

static HTAB *model_cache = NULL;
static bool callback_registered = false;

/* Oid of the model table when entries were last checked, for the callback. */
static Oid	store_relid = InvalidOid;

/* palloc-style allocation that returns NULL instead of raising ERROR. */
static void *
context_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size ? size : 1,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
context_free(void *ctx, void *ptr)
{
	(void) ctx;
	pfree(ptr);
}

/* Allocator over a memory context; see gpuscore.h. */
GsAllocator
gs_context_allocator(MemoryContext mcxt)
{
	GsAllocator a = {context_alloc, context_free, mcxt};

	return a;
}

/*
 * The core's GsInterrupt: would CHECK_FOR_INTERRUPTS() act now?  It only
 * asks; the core cannot be left by longjmp (jansson's memory is malloc'd),
 * so it stops and returns, and load_interruptibly processes the interrupt.
 */
static bool
interrupt_pending(void *arg)
{
	return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED();
}

/* ERROR for a model that failed to load, naming it in front of the core's message. */
static void report_model_error(const char *name, GsStatus *st) pg_attribute_noreturn();

static void
report_model_error(const char *name, GsStatus *st)
{
	if (st->code == GS_ERR_INVALID_MODEL || st->code == GS_ERR_UNSUPPORTED ||
		st->code == GS_ERR_LIMIT)
	{
		char		msg[GS_MSG_LEN + NAMEDATALEN + 16];

		snprintf(msg, sizeof(msg), "model \"%s\": %s", name, st->msg);
		strlcpy(st->msg, msg, sizeof(st->msg));
	}
	gs_report_status(st);
}

/*
 * Load a model into mcxt with the current caps: parse bytes of format fmt,
 * or read them as a forest image.  Parsing a large model takes seconds
 * (~30 ms per MB of JSON): the core polls for cancel, statement_timeout
 * and termination, and stops; an interrupt that CHECK_FOR_INTERRUPTS()
 * handles without an ERROR (a barrier, a cancel that came too late) just
 * restarts the load.
 */
static GsCode
load_interruptibly(const unsigned char *bytes, size_t len, GsModelFormat fmt, bool image,
				   bool covers, MemoryContext mcxt, GsModel **model, GsStatus *st)
{
	GsAllocator a = gs_context_allocator(mcxt);
	GsLimits	lim = gs_current_limits();
	GsCode		rc;

	lim.interrupt.pending = interrupt_pending;
	lim.keep_covers = covers;
	while ((rc = image ? gs_model_load_image(bytes, len, &lim, &a, model, st)
			: gs_model_load(bytes, len, fmt, &lim, &a, model, st)) == GS_ERR_CANCELLED)
		CHECK_FOR_INTERRUPTS();
	return rc;
}

/* Parse model bytes into mcxt, keeping node covers or not; ERRORs naming the model. */
static GsModel *
parse_model(const char *name, const unsigned char *bytes, size_t len, GsModelFormat fmt,
			bool covers, MemoryContext mcxt)
{
	GsModel    *model;
	GsStatus	st;

	if (load_interruptibly(bytes, len, fmt, false, covers, mcxt, &model, &st) != GS_OK)
		report_model_error(name, &st);
	return model;
}

/* Parse and validate model bytes into a model in mcxt; see gpuscore.h. */
GsModel *
gs_model_parse(const char *name, const unsigned char *bytes, size_t len,
			   GsModelFormat fmt, MemoryContext mcxt)
{
	return parse_model(name, bytes, len, fmt, false, mcxt);
}

/* The same, keeping the forest's node covers for explanations; see gpuscore.h. */
GsModel *
gs_model_parse_with_covers(const char *name, const unsigned char *bytes, size_t len,
						   GsModelFormat fmt, MemoryContext mcxt)
{
	return parse_model(name, bytes, len, fmt, true, mcxt);
}

/* Drop one reference; the last one deletes the model's memory. */
static void
model_release(GsModelRef *ref)
{
	Assert(ref->refcount > 0);
	if (--ref->refcount == 0)
	{
		gs_device_release_model(ref);
		MemoryContextDelete(ref->mcxt);
	}
}

/* Memory context callback: the statement is done with its model. */
static void
statement_hold_release(void *arg)
{
	StatementHold *hold = (StatementHold *) arg;

	model_release(hold->ref);
}

/*
 * Relcache invalidation callback: when our table (or every relation)
 * changed, mark all entries stale.  Invalidations of other relations are
 * ignored, so busy DDL elsewhere costs nothing.
 */
static void
model_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	CacheEntry *e;

	if (model_cache == NULL)
		return;
	if (OidIsValid(relid) && OidIsValid(store_relid) && relid != store_relid)
		return;
	store_relid = InvalidOid;	/* look it up again: the table may be new */
	hash_seq_init(&seq, model_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		e->stale = true;
}

/* Create the hash table and register the invalidation callback once. */
static void
model_cache_init(void)
{
	HASHCTL		ctl;

	if (model_cache != NULL)
		return;
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(CacheEntry);
	ctl.hcxt = CacheMemoryContext;
	model_cache = hash_create("pg_gpuscore model cache", 16, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(model_cache_invalidate, (Datum) 0);
		callback_registered = true;
	}
}

/*
 * A tree-ensemble model from its stored forest image, or NULL when the
 * image cannot be used (written by another image version, or damaged: the
 * reader checks it like a parse would) and the model must be parsed.  Caps
 * apply as to a parse; model bytes over max_model_size do not matter here.
 */
static GsModel *
model_from_image(const char *name, const bytea *image, MemoryContext mcxt)
{
	GsModel    *model;
	GsStatus	st;

	if (load_interruptibly((const unsigned char *) VARDATA_ANY(image), VARSIZE_ANY_EXHDR(image),
						   GS_FORMAT_AUTO, true, false, mcxt, &model, &st) == GS_OK)
		return model;
	if (st.code != GS_ERR_INVALID_MODEL)
		report_model_error(name, &st);
	elog(DEBUG1, "pg_gpuscore: model \"%s\": stored forest image not used (%s%s%s), parsing the model",
		 name, st.msg, st.detail[0] ? ": " : "", st.detail);
	return NULL;
}

/*
 * Read the stored model into a new GsModelRef (refcount 0): from its forest
 * image when it has a usable one (a copy and a check, ~100x faster than
 * parsing a large XGBoost JSON model), else by parsing its bytes.
 */
static GsModelRef *
model_load(const char *name)
{
	int64		model_id;
	int32		version;
	GsModelFormat fmt;
	bytea	   *bytes = NULL;
	bytea	   *image;
	MemoryContext mcxt;
	GsModelRef *ref;

	if (!gs_catalog_fetch(name, &model_id, &version, &fmt, NULL, &image, NULL))
		return NULL;
	mcxt = AllocSetContextCreate(CacheMemoryContext, "pg_gpuscore model",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSetIdentifier(mcxt, MemoryContextStrdup(mcxt, name));
	PG_TRY();
	{
		ref = MemoryContextAllocZero(mcxt, sizeof(GsModelRef));
		strlcpy(ref->name, name, NAMEDATALEN);
		ref->mcxt = mcxt;
		if (image)
			ref->model = model_from_image(name, image, mcxt);
		if (ref->model == NULL)
		{
			/* read again: the model may have been replaced meanwhile */
			float		missing_value;

			if (!gs_catalog_fetch(name, &model_id, &version, &fmt, &bytes, NULL, &missing_value))
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_OBJECT),
						 errmsg("model \"%s\" does not exist", name),
						 errhint("Load it with gpu_load_model(); gpu_models lists the loaded models.")));
			ref->model = gs_model_parse(name, (unsigned char *) VARDATA_ANY(bytes),
										VARSIZE_ANY_EXHDR(bytes), fmt, mcxt);
			/* a missing value given at load is not in the bytes (the image has it) */
			gs_model_set_missing_value(ref->model, missing_value);
		}
		ref->model_id = model_id;
		ref->version = version;
		ref->forest = ref->model->forest;
	}
	PG_CATCH();
	{
		MemoryContextDelete(mcxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (bytes)
		pfree(bytes);
	if (image)
		pfree(image);
	return ref;
}

/* The error for a model that does not exist; see gpuscore.h. */
void
gs_model_missing_error(const char *name, GsRowError *err)
{
	gs_row_error_set(err, ERRCODE_UNDEFINED_OBJECT, "model \"%s\" does not exist", name);
	gs_row_error_hint(err, "Load it with gpu_load_model(); gpu_models lists the loaded models.");
}

/* The active version of a model, held for mcxt's lifetime; see gpuscore.h. */
GsModelRef *
gs_model_acquire(const char *name, MemoryContext mcxt)
{
	GsModelRef *ref = gs_model_try_acquire(name, mcxt);

	if (ref == NULL)
	{
		GsRowError	err;

		gs_model_missing_error(name, &err);
		gs_row_error_raise(&err);
	}
	return ref;
}

/* The model already in this backend's cache, if any; see gpuscore.h. */
const GsModel *
gs_model_cached(const char *name)
{
	CacheEntry *e;

	if (model_cache == NULL || strlen(name) >= NAMEDATALEN)
		return NULL;
	e = hash_search(model_cache, name, HASH_FIND, NULL);
	return e != NULL && e->ref != NULL ? e->ref->model : NULL;
}

/* The same as gs_model_acquire, NULL when the model does not exist; see gpuscore.h. */
GsModelRef *
gs_model_try_acquire(const char *name, MemoryContext mcxt)
{
	CacheEntry *e;
	bool		found;
	StatementHold *hold;

	model_cache_init();
	AcceptInvalidationMessages();

	e = hash_search(model_cache, name, HASH_ENTER, &found);
	if (!found)
	{
		e->ref = NULL;
		e->stale = true;
	}
	if (e->stale || e->ref == NULL)
	{
		int64		model_id;
		int32		version;
		bool		exists;

		store_relid = gs_catalog_relid();
		exists = gs_catalog_identity(name, &model_id, &version);
		if (!exists || e->ref == NULL || e->ref->model_id != model_id)
		{
			GsModelRef *fresh = exists ? model_load(name) : NULL;

			/* the hash entry may have moved?  No: dynahash entries are stable */
			if (e->ref)
				model_release(e->ref);
			e->ref = fresh;
			if (fresh)
				fresh->refcount = 1;
		}
		e->stale = false;
	}
	if (e->ref == NULL)
	{
		hash_search(model_cache, name, HASH_REMOVE, NULL);
		return NULL;
	}

	hold = MemoryContextAlloc(mcxt, sizeof(StatementHold));
	hold->ref = e->ref;
	hold->cb.func = statement_hold_release;
	hold->cb.arg = hold;
	e->ref->refcount++;
	MemoryContextRegisterResetCallback(mcxt, &hold->cb);
	return e->ref;
}

/*
 * aggregate.c
 *	  The scoring aggregate gpu_score_agg(model, id, features) and
 *	  gpu_scores(), which turns its result back into (id, score) rows.
 *
 * Per group, the transition state collects rows as float32 features into a
 * pending chunk that grows by doubling up to pg_gpuscore.batch_size rows.
 * When the chunk is full it is handed to the batch scorer (device.c) at
 * once, so a GPU scores it while the scan goes on, and only the (id, score)
 * pairs of scored rows are kept: 13 bytes a row (id, score and a flags
 * byte).  The final function scores what is pending, waits for the batches
 * in flight and returns the pairs as one bytea (see "Result format"), which
 * caps a group at about 82 million rows (the 1 GB datum limit).
 *
 * The state's SQL type is bytea, so that Citus can split the aggregate
 * (it ships only states of a real type, through their output and input
 * functions): in memory it is a read-write expanded object (AggExpanded,
 * utils/expandeddatum.h), which PostgreSQL and Citus pass from call to call
 * without copying; flattened (when Citus sends a worker's state to the
 * coordinator, when a parallel worker's state goes to the leader), it
 * scores what is pending and becomes the result bytea of the final
 * function (see "Result format").  The combine function appends a flat or
 * expanded state's results to an expanded one.  So a worker scores its own
 * shards' rows and only (id, score) pairs travel.  The form over separate
 * columns (VARIADIC "any", which Citus cannot type-check on a worker) keeps
 * an internal state: the same functions get the same expanded datum as a
 * pointer, and the serialization functions flatten and check it.
 *
 * Memory and handles: each state has its own context, a child of the
 * aggregate context (AggCheckCallContext's), holding the expanded object,
 * its model reference (gs_model_acquire on that context), its pending chunk
 * and its results; deleting the object deletes it all.  The batch scorer
 * (and its GPU buffers) lives in a child context of it, created when the
 * first chunk fills and deleted when the state is flushed; an ERROR or
 * cancel releases everything with the aggregate context.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "core/forest/cpu_engine.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_agg_transfn);
PG_FUNCTION_INFO_V1(gpuscore_gpu_score_agg_cols_transfn);
PG_FUNCTION_INFO_V1(gpuscore_gpu_score_agg_finalfn);
PG_FUNCTION_INFO_V1(gpuscore_gpu_score_agg_combinefn);
PG_FUNCTION_INFO_V1(gpuscore_gpu_score_agg_serialfn);
PG_FUNCTION_INFO_V1(gpuscore_gpu_score_agg_deserialfn);
PG_FUNCTION_INFO_V1(gpuscore_gpu_scores);

/*
 * Result format (the bytea of gpu_score_agg and of its serialized state):
 * an AggResultHeader, then int64 ids[n], float4 scores[n], uint8 flags[n],
 * all in native byte order and read with memcpy (no alignment assumed).
 */
#define AGG_RESULT_MAGIC	0x47534131	/* "GSA1" */
#define AGG_FLAG_ID_NULL	0x01
#define AGG_FLAG_SCORE_NULL	0x02
#define AGG_ROW_BYTES		(sizeof(int64) + sizeof(float4) + sizeof(uint8))

typedef struct AggResultHeader
{
	uint32		magic;
	uint32		reserved;		/* 0 */
	uint64		n_rows;
	char		model[NAMEDATALEN]; /* "" when no row had a model yet */
} AggResultHeader;

/* Most rows one group's result can hold within MaxAllocSize. */
#define AGG_MAX_ROWS \
	((uint64) ((MaxAllocSize - VARHDRSZ - sizeof(AggResultHeader)) / AGG_ROW_BYTES))

/* The transition state of one group. */
typedef struct AggScoreState
{
	MemoryContext aggcxt;		/* the state's context: holds all below */
	char		model[NAMEDATALEN]; /* "" in a results-only state */
	GsModelRef *m;				/* NULL until the first row (or never) */
	int			n_features;
	size_t		chunk_rows;		/* gs_batch_rows() at the first row */
	bool		cols_checked;	/* argument types checked against the model */

	/* rows not yet submitted: row-major features, ids, id-null flags */
	float	   *pend_x;
	int64	   *pend_id;
	uint8	   *pend_flags;
	size_t		pend_n;
	size_t		pend_cap;

	/* the batch scorer, once a chunk filled; dies with scorer_cxt */
	MemoryContext scorer_cxt;
	GsBatchScorer *scorer;
	int64	   *slot_id[GS_SCORER_SLOTS];
	uint8	   *slot_flags[GS_SCORER_SLOTS];
	uint64		in_flight;		/* rows submitted, results not yet taken */

	/* scored rows */
	int64	   *res_id;
	float4	   *res_score;
	uint8	   *res_flags;
	uint64		res_n;
	uint64		res_cap;
} AggScoreState;

/*
 * ERROR for a support function called other than by the aggregate (its
 * state is bytea, so SQL can call it directly).
 */
static void
not_in_aggregate(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("gpu_score_agg %s function called in non-aggregate context", what),
			 errhint("Call gpu_score_agg() instead.")));
}

/* ERROR when a group would hold more rows than its result can. */
static void
check_group_size(uint64 n)
{
	if (n > AGG_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpu_score_agg cannot score more than " UINT64_FORMAT " rows in one group",
						(uint64) AGG_MAX_ROWS),
				 errdetail("The result of one group must fit in one 1 GB value."),
				 errhint("Use gpu_score_query(), or split the rows with GROUP BY.")));
}

/* The state as an expanded object: its header first. */
typedef struct AggExpanded
{
	ExpandedObjectHeader hdr;
	AggScoreState st;
} AggExpanded;

static Size state_flat_size(ExpandedObjectHeader *eoh);
static void state_flatten(ExpandedObjectHeader *eoh, void *result, Size size);

static const ExpandedObjectMethods state_methods = {state_flat_size, state_flatten};

/* A new, empty state in a context of its own under aggcxt. */
static AggScoreState *
state_create(MemoryContext aggcxt)
{
	/* small blocks: a GROUP BY may have many groups, each with its state */
	MemoryContext cxt = AllocSetContextCreate(aggcxt, "pg_gpuscore aggregate state",
											  ALLOCSET_SMALL_SIZES);
	AggExpanded *e = MemoryContextAllocZero(cxt, sizeof(AggExpanded));

	EOH_init_header(&e->hdr, &state_methods, cxt);
	e->st.aggcxt = cxt;
	return &e->st;
}

/* The read-write datum of a state (what the transition functions return). */
static Datum
state_datum(AggScoreState *st)
{
	AggExpanded *e = (AggExpanded *) ((char *) st - offsetof(AggExpanded, st));

	return EOHPGetRWDatum(&e->hdr);
}

/* The state an expanded datum of ours holds, or NULL for any other datum. */
static AggScoreState *
expanded_state(Datum d)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	if (eoh->eoh_methods != &state_methods)
		return NULL;
	return &((AggExpanded *) eoh)->st;
}

static void read_header(bytea *b, AggResultHeader *hdr);
static void append_bytea_rows(AggScoreState *st, bytea *b, const AggResultHeader *hdr);

/*
 * The state a (non-NULL) state datum stands for: ours when it is our
 * read-write object; otherwise (a flat result, as Citus's coordinator reads
 * a worker's state back) a new results-only state in aggcxt with its rows.
 */
static AggScoreState *
state_of(Datum d, MemoryContext aggcxt)
{
	AggScoreState *st = expanded_state(d);
	AggResultHeader hdr;
	bytea	   *b;

	if (st != NULL && VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)))
		return st;
	b = DatumGetByteaPP(d);
	read_header(b, &hdr);
	st = state_create(aggcxt);
	append_bytea_rows(st, b, &hdr);
	return st;
}

/* Make room for extra more scored rows, checking the group limit first. */
static void
results_reserve(AggScoreState *st, uint64 extra)
{
	uint64		need = st->res_n + extra;
	uint64		cap;

	check_group_size(need);
	if (need <= st->res_cap)
		return;
	cap = Max(st->res_cap * 2, (uint64) 64);
	while (cap < need)
		cap *= 2;
	cap = Min(cap, Max(need, (uint64) AGG_MAX_ROWS));
	if (st->res_id == NULL)
	{
		st->res_id = MemoryContextAllocHuge(st->aggcxt, sizeof(int64) * cap);
		st->res_score = MemoryContextAllocHuge(st->aggcxt, sizeof(float4) * cap);
		st->res_flags = MemoryContextAllocHuge(st->aggcxt, sizeof(uint8) * cap);
	}
	else
	{
		st->res_id = repalloc_huge(st->res_id, sizeof(int64) * cap);
		st->res_score = repalloc_huge(st->res_score, sizeof(float4) * cap);
		st->res_flags = repalloc_huge(st->res_flags, sizeof(uint8) * cap);
	}
	st->res_cap = cap;
}

/* Append one scored (or NULL-score) row. Caller reserved room. */
static inline void
results_put(AggScoreState *st, int64 id, float4 score, uint8 flags)
{
	st->res_id[st->res_n] = id;
	st->res_score[st->res_n] = score;
	st->res_flags[st->res_n] = flags;
	st->res_n++;
}

/* Take one finished batch's outputs into the results. */
static void
take_batch(AggScoreState *st, const float *out, size_t n, int slot)
{
	results_reserve(st, n);
	for (size_t r = 0; r < n; r++)
		results_put(st, st->slot_id[slot][r], out[r], st->slot_flags[slot][r]);
	st->in_flight -= n;
}

/*
 * Submit the pending rows as one batch.  A full chunk goes to the state's
 * long-lived scorer (created on first use); with drain, every batch in
 * flight is then collected and the scorer freed.
 */
static void
submit_pending(AggScoreState *st, bool drain)
{
	const float *out;
	float	   *x;
	int			slot;
	size_t		n = st->pend_n;
	size_t		n_done;
	int			nf = st->n_features;

	if (n > 0)
	{
		if (st->scorer == NULL)
		{
			/* a partial chunk at the end needs room for n rows only */
			size_t		rows = drain ? n : st->chunk_rows;

			st->scorer_cxt = AllocSetContextCreate(st->aggcxt, "pg_gpuscore aggregate batches",
												   ALLOCSET_DEFAULT_SIZES);
			st->scorer = gs_scorer_begin(st->m, rows, st->scorer_cxt);
			for (int k = 0; k < GS_SCORER_SLOTS; k++)
			{
				st->slot_id[k] = MemoryContextAllocHuge(st->scorer_cxt, sizeof(int64) * rows);
				st->slot_flags[k] = MemoryContextAllocHuge(st->scorer_cxt, sizeof(uint8) * rows);
			}
		}
		/* a slot still holding results must be taken before refilling */
		while ((out = gs_scorer_next(st->scorer, false, &slot, &n_done)) != NULL)
			take_batch(st, out, n_done, slot);

		x = gs_scorer_input(st->scorer, &slot);
		gs_rows_to_columns(st->pend_x, n, nf, x, n);
		memcpy(st->slot_id[slot], st->pend_id, sizeof(int64) * n);
		memcpy(st->slot_flags[slot], st->pend_flags, sizeof(uint8) * n);
		gs_scorer_submit(st->scorer, n);
		st->in_flight += n;
		st->pend_n = 0;
	}
	if (drain && st->scorer != NULL)
	{
		while ((out = gs_scorer_next(st->scorer, true, &slot, &n_done)) != NULL)
			take_batch(st, out, n_done, slot);
		MemoryContextDelete(st->scorer_cxt);
		st->scorer_cxt = NULL;
		st->scorer = NULL;
	}
	if (drain && st->pend_x != NULL)
	{
		pfree(st->pend_x);
		pfree(st->pend_id);
		pfree(st->pend_flags);
		st->pend_x = NULL;
		st->pend_id = NULL;
		st->pend_flags = NULL;
		st->pend_cap = 0;
	}
}

/* Score everything pending or in flight; afterwards only results remain. */
static void
state_flush(AggScoreState *st)
{
	submit_pending(st, true);
}

/* ERROR unless a state of model a may be merged with rows of model b. */
static void
check_same_model(const char *a, const char *b)
{
	if (a[0] != '\0' && b[0] != '\0' && strcmp(a, b) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_score_agg got rows for models \"%s\" and \"%s\" in one group", a, b),
				 errhint("Use one model per aggregate call, or GROUP BY the model name.")));
}

/*
 * The state of the group being aggregated, with its model acquired: the
 * common start of both transition functions.  *aggcxt receives the
 * aggregate context.
 */
static AggScoreState *
transfn_state(FunctionCallInfo fcinfo, MemoryContext *aggcxt)
{
	AggScoreState *st;
	text	   *name_t;

	if (!AggCheckCallContext(fcinfo, aggcxt))
		not_in_aggregate("transition");
	st = PG_ARGISNULL(0) ? state_create(*aggcxt) : state_of(PG_GETARG_DATUM(0), *aggcxt);

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model name must not be null")));
	name_t = PG_GETARG_TEXT_PP(1);
	if (st->m == NULL)
	{
		const char *name = gs_model_name_arg(fcinfo, 1);

		check_same_model(st->model, name);
		st->m = gs_model_acquire(name, st->aggcxt);
		if (st->m->model->n_outputs != 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("model \"%s\" has %d outputs per row", name, st->m->model->n_outputs),
					 errhint("gpu_score_agg scores single-output models; use gpu_predict_query() for multi-output models.")));
		strlcpy(st->model, st->m->name, NAMEDATALEN);
		st->n_features = st->m->model->n_features;
		st->chunk_rows = gs_batch_rows(st->m->model);
	}
	else if (VARSIZE_ANY_EXHDR(name_t) != strlen(st->model) ||
			 memcmp(VARDATA_ANY(name_t), st->model, VARSIZE_ANY_EXHDR(name_t)) != 0)
		check_same_model(st->model, text_to_cstring(name_t));
	return st;
}

/* Keep a row whose score is NULL (its features were a NULL array). */
static void
keep_null_score(AggScoreState *st, int64 id, uint8 flags)
{
	results_reserve(st, 1);
	results_put(st, id, 0.0f, flags | AGG_FLAG_SCORE_NULL);
}

/*
 * Room for the features of one more pending row (n_features floats), growing
 * the pending chunk when needed.  The row counts only once pending_commit()
 * is called, so an ERROR while filling it leaves the state as it was.
 */
static float *
pending_slot(AggScoreState *st)
{
	MemoryContext aggcxt = st->aggcxt;

	check_group_size(st->res_n + st->in_flight + st->pend_n + 1);
	if (st->pend_n == st->pend_cap)
	{
		size_t		cap = Min(Max(st->pend_cap * 2, (size_t) 16), st->chunk_rows);
		size_t		nf = st->n_features;

		if (st->pend_x == NULL)
		{
			st->pend_x = MemoryContextAllocHuge(aggcxt, sizeof(float) * nf * cap);
			st->pend_id = MemoryContextAllocHuge(aggcxt, sizeof(int64) * cap);
			st->pend_flags = MemoryContextAllocHuge(aggcxt, sizeof(uint8) * cap);
		}
		else
		{
			st->pend_x = repalloc_huge(st->pend_x, sizeof(float) * nf * cap);
			st->pend_id = repalloc_huge(st->pend_id, sizeof(int64) * cap);
			st->pend_flags = repalloc_huge(st->pend_flags, sizeof(uint8) * cap);
		}
		st->pend_cap = cap;
	}
	return st->pend_x + st->pend_n * (size_t) st->n_features;
}

/* Count the row just written into pending_slot(); score the chunk when full. */
static void
pending_commit(AggScoreState *st, int64 id, uint8 flags)
{
	st->pend_id[st->pend_n] = id;
	st->pend_flags[st->pend_n] = flags;
	st->pend_n++;
	if (st->pend_n == st->chunk_rows)
		submit_pending(st, false);
}

/*
 * gpu_score_agg transition: (state, model text, id bigint, features real[]).
 * Not strict: a NULL features array keeps the row with a NULL score, a NULL
 * id is kept as a NULL id.
 */
Datum
gpuscore_gpu_score_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AggScoreState *st = transfn_state(fcinfo, &aggcxt);
	bool		id_null = PG_ARGISNULL(2);
	int64		id = id_null ? 0 : PG_GETARG_INT64(2);
	uint8		flags = id_null ? AGG_FLAG_ID_NULL : 0;
	float	   *row;

	if (PG_ARGISNULL(3))
	{
		keep_null_score(st, id, flags);
		PG_RETURN_DATUM(state_datum(st));
	}
	row = pending_slot(st);
	/* ERRORs on a bad array leave the state as it was */
	gs_array_to_row(PG_GETARG_ARRAYTYPE_P(3), st->m, row);
	pending_commit(st, id, flags);
	PG_RETURN_DATUM(state_datum(st));
}

/*
 * The column kinds of the feature arguments of one gpu_score_agg(model, id,
 * VARIADIC "any") call site, looked up once per call site (fn_extra).
 */
typedef struct AggColumnArgs
{
	int			n;				/* feature arguments */
	bool		one_array;		/* a single array argument holding all features */
	GsColKind	kinds[FLEXIBLE_ARRAY_MEMBER];
} AggColumnArgs;

#define AGG_FIRST_FEATURE_ARG 3	/* state, model, id, features... */

static AggColumnArgs *
column_args(FunctionCallInfo fcinfo)
{
	AggColumnArgs *ca = fcinfo->flinfo->fn_extra;
	int			n = PG_NARGS() - AGG_FIRST_FEATURE_ARG;

	if (ca != NULL)
		return ca;
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpu_score_agg does not accept VARIADIC arrays"),
				 errhint("Pass the feature columns as separate arguments, or one real[] array without VARIADIC.")));
	ca = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
								offsetof(AggColumnArgs, kinds) + sizeof(GsColKind) * Max(n, 1));
	ca->n = n;
	for (int i = 0; i < n; i++)
	{
		Oid			type = get_fn_expr_argtype(fcinfo->flinfo, AGG_FIRST_FEATURE_ARG + i);

		if (!OidIsValid(type))
			elog(ERROR, "could not determine the type of gpu_score_agg argument %d",
				 AGG_FIRST_FEATURE_ARG + i);
		if (!gs_column_kind(type, &ca->kinds[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("feature %d of gpu_score_agg has type %s, which cannot hold a feature",
							i + 1, format_type_be(type)),
					 errhint("Features must be real, double precision, smallint, integer, bigint, numeric or boolean, or text for a categorical feature with named categories.")));
		if (gs_col_kind_is_array(ca->kinds[i]))
		{
			if (n != 1)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("feature %d of gpu_score_agg is an array among %d feature arguments",
								i + 1, n),
						 errhint("Pass either one array of all features or one argument per feature.")));
			ca->one_array = true;
		}
	}
	fcinfo->flinfo->fn_extra = ca;
	return ca;
}

/*
 * gpu_score_agg transition over separate feature arguments: (state, model
 * text, id bigint, VARIADIC "any").  A NULL argument is a missing value
 * (NaN), as a NULL array element is; one array argument of all features
 * behaves as the real[] variant.
 */
Datum
gpuscore_gpu_score_agg_cols_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AggScoreState *st = transfn_state(fcinfo, &aggcxt);
	AggColumnArgs *ca = column_args(fcinfo);
	bool		id_null = PG_ARGISNULL(2);
	int64		id = id_null ? 0 : PG_GETARG_INT64(2);
	uint8		flags = id_null ? AGG_FLAG_ID_NULL : 0;
	float	   *row;

	if (ca->one_array)
	{
		if (PG_ARGISNULL(AGG_FIRST_FEATURE_ARG))
		{
			keep_null_score(st, id, flags);
			PG_RETURN_DATUM(state_datum(st));
		}
		row = pending_slot(st);
		gs_array_to_row(PG_GETARG_ARRAYTYPE_P(AGG_FIRST_FEATURE_ARG), st->m, row);
		pending_commit(st, id, flags);
		PG_RETURN_DATUM(state_datum(st));
	}

	if (ca->n != st->n_features)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" expects %d features, got %d", st->model, st->n_features, ca->n)));
	if (!st->cols_checked)
	{
		/* the arguments' types against the model's features, once per group */
		for (int f = 0; f < ca->n; f++)
			if (gs_col_kind_is_text(ca->kinds[f]) ? !gs_feature_has_names(st->m, f) :
				gs_feature_hashed(st->m, f))
			{
				const char *what = psprintf("feature argument %d", f + 1);

				if (gs_col_kind_is_text(ca->kinds[f]))
					gs_check_text_feature(st->m, f, what);
				else
					gs_check_number_feature(st->m, f, what);
			}
		st->cols_checked = true;
	}
	row = pending_slot(st);
	for (int f = 0; f < ca->n; f++)
	{
		int			a = AGG_FIRST_FEATURE_ARG + f;
		float		v;

		if (PG_ARGISNULL(a))
			v = gs_col_kind_is_text(ca->kinds[f]) ? gs_text_null(st->m, f) : NAN;
		else if (ca->kinds[f] == GS_COL_FLOAT4)
		{
			v = PG_GETARG_FLOAT4(a);
			if (isinf(v))
				gs_check_infinite(st->m, f, v);
		}
		else if (gs_col_kind_is_text(ca->kinds[f]))
			v = gs_text_feature(st->m, f, PG_GETARG_DATUM(a), ca->kinds[f], NULL);
		else
		{
			double		dv = gs_datum_to_double(PG_GETARG_DATUM(a), ca->kinds[f]);

			gs_check_infinite(st->m, f, dv);
			v = (float) dv;
		}
		row[f] = v;
	}
	pending_commit(st, id, flags);
	PG_RETURN_DATUM(state_datum(st));
}

/* The size of the bytea of a flushed state's results. */
static Size
state_bytes(AggScoreState *st)
{
	Assert(st->pend_n == 0 && st->in_flight == 0);
	check_group_size(st->res_n);
	return VARHDRSZ + sizeof(AggResultHeader) + (Size) st->res_n * AGG_ROW_BYTES;
}

/* Write a flushed state's results into b, of len = state_bytes(st) bytes. */
static void
state_write(AggScoreState *st, bytea *b, Size len)
{
	AggResultHeader hdr;
	char	   *p;

	SET_VARSIZE(b, len);
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = AGG_RESULT_MAGIC;
	hdr.n_rows = st->res_n;
	strlcpy(hdr.model, st->model, NAMEDATALEN);
	p = VARDATA(b);
	memcpy(p, &hdr, sizeof(hdr));
	p += sizeof(hdr);
	if (st->res_n > 0)
	{
		memcpy(p, st->res_id, sizeof(int64) * st->res_n);
		p += sizeof(int64) * st->res_n;
		memcpy(p, st->res_score, sizeof(float4) * st->res_n);
		p += sizeof(float4) * st->res_n;
		memcpy(p, st->res_flags, sizeof(uint8) * st->res_n);
	}
}

/* The bytea holding a flushed state's results, in CurrentMemoryContext. */
static bytea *
state_to_bytea(AggScoreState *st)
{
	Size		len = state_bytes(st);
	bytea	   *b = palloc(len);

	state_write(st, b, len);
	return b;
}

/*
 * Flattening the expanded state (ExpandedObjectMethods): the pending rows
 * are scored first, so the flat form is the final function's result.
 */
static Size
state_flat_size(ExpandedObjectHeader *eoh)
{
	AggScoreState *st = &((AggExpanded *) eoh)->st;

	state_flush(st);
	return state_bytes(st);
}

static void
state_flatten(ExpandedObjectHeader *eoh, void *result, Size size)
{
	AggScoreState *st = &((AggExpanded *) eoh)->st;

	state_write(st, (bytea *) result, size);
}

/*
 * Check a result bytea and return its header; the arrays follow it at
 * VARDATA_ANY(b) + sizeof(AggResultHeader).  ERRORs on anything that is not
 * exactly what state_to_bytea writes.
 */
static void
read_header(bytea *b, AggResultHeader *hdr)
{
	Size		len = VARSIZE_ANY_EXHDR(b);

	if (len < sizeof(AggResultHeader))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid gpu_score_agg result"),
				 errdetail("The value is %zu bytes long, shorter than its header.", (size_t) len)));
	memcpy(hdr, VARDATA_ANY(b), sizeof(AggResultHeader));
	if (hdr->magic != AGG_RESULT_MAGIC || hdr->reserved != 0 ||
		memchr(hdr->model, '\0', NAMEDATALEN) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid gpu_score_agg result"),
				 errdetail("The header is not that of a gpu_score_agg result.")));
	if (hdr->n_rows > AGG_MAX_ROWS ||
		len != sizeof(AggResultHeader) + hdr->n_rows * AGG_ROW_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid gpu_score_agg result"),
				 errdetail("The value is %zu bytes long, which does not match its row count " UINT64_FORMAT ".",
						   (size_t) len, hdr->n_rows)));
}

/*
 * Final function: the (id, score) pairs of the group as a bytea, or NULL
 * for a group without rows.  Declared FINALFUNC_MODIFY = READ_WRITE: it
 * scores the pending rows into the state.
 */
Datum
gpuscore_gpu_score_agg_finalfn(PG_FUNCTION_ARGS)
{
	AggScoreState *st;

	if (!AggCheckCallContext(fcinfo, NULL))
		not_in_aggregate("final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = expanded_state(PG_GETARG_DATUM(0));
	if (st == NULL)				/* already flat: the result as it is */
		PG_RETURN_BYTEA_P(PG_GETARG_BYTEA_P_COPY(0));
	state_flush(st);
	PG_RETURN_BYTEA_P(state_to_bytea(st));
}

/*
 * Serialization, for the forms with an internal state (the one over
 * separate columns; before 0.6.0 all of them): flush (score in this
 * parallel worker) and write the result bytea.
 */
Datum
gpuscore_gpu_score_agg_serialfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AggScoreState *st;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		not_in_aggregate("serialization");
	st = state_of(PG_GETARG_DATUM(0), aggcxt);
	state_flush(st);
	PG_RETURN_BYTEA_P(state_to_bytea(st));
}

/* Append the rows of a result bytea (already checked) to st. */
static void
append_bytea_rows(AggScoreState *st, bytea *b, const AggResultHeader *hdr)
{
	const char *p = VARDATA_ANY(b) + sizeof(AggResultHeader);
	uint64		n = hdr->n_rows;

	check_same_model(st->model, hdr->model);
	if (st->model[0] == '\0')
		strlcpy(st->model, hdr->model, NAMEDATALEN);
	if (n == 0)
		return;
	results_reserve(st, n);
	memcpy(st->res_id + st->res_n, p, sizeof(int64) * n);
	memcpy(st->res_score + st->res_n, p + sizeof(int64) * n, sizeof(float4) * n);
	memcpy(st->res_flags + st->res_n, p + (sizeof(int64) + sizeof(float4)) * n, n);
	st->res_n += n;
}

/*
 * Deserialization, for the forms with an internal state (see the
 * serialization): the flat result itself, checked, which the combine
 * function reads.
 */
Datum
gpuscore_gpu_score_agg_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_P_COPY(0);
	AggResultHeader hdr;

	if (!AggCheckCallContext(fcinfo, NULL))
		not_in_aggregate("deserialization");
	read_header(b, &hdr);
	PG_RETURN_BYTEA_P(b);
}

/*
 * Combine: append state 2's results to state 1 (created in the aggregate
 * context when NULL).  State 2 is flat (a parallel worker's state, or one a
 * Citus worker sent) or, flushed first, an expanded state; state 1 may also
 * hold pending rows, scored later by the final function.
 */
Datum
gpuscore_gpu_score_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AggScoreState *st1;
	AggScoreState *st2;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		not_in_aggregate("combine");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(state_datum(state_of(PG_GETARG_DATUM(0), aggcxt)));
	}
	st1 = PG_ARGISNULL(0) ? state_create(aggcxt) : state_of(PG_GETARG_DATUM(0), aggcxt);
	st2 = expanded_state(PG_GETARG_DATUM(1));
	if (st2 == NULL)
	{
		bytea	   *b = PG_GETARG_BYTEA_PP(1);
		AggResultHeader hdr;

		read_header(b, &hdr);
		append_bytea_rows(st1, b, &hdr);
		PG_RETURN_DATUM(state_datum(st1));
	}
	state_flush(st2);
	check_same_model(st1->model, st2->model);
	if (st1->model[0] == '\0')
		strlcpy(st1->model, st2->model, NAMEDATALEN);
	if (st2->res_n > 0)
	{
		results_reserve(st1, st2->res_n);
		memcpy(st1->res_id + st1->res_n, st2->res_id, sizeof(int64) * st2->res_n);
		memcpy(st1->res_score + st1->res_n, st2->res_score, sizeof(float4) * st2->res_n);
		memcpy(st1->res_flags + st1->res_n, st2->res_flags, st2->res_n);
		st1->res_n += st2->res_n;
	}
	PG_RETURN_DATUM(state_datum(st1));
}

/*
 * gpu_scores(result bytea) RETURNS TABLE(id bigint, score real): the rows
 * of a gpu_score_agg result, in no particular order.  ERRORs (22P03) on a
 * value that is not one.  Materialize mode: every row goes into the result
 * tuplestore in one call (per-call mode formed each row twice, once as a
 * composite datum and once in the caller's tuplestore).
 */
Datum
gpuscore_gpu_scores(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	AggResultHeader hdr;
	const char *ids;
	const char *scores;
	const char *flags;

	read_header(b, &hdr);
	InitMaterializedSRF(fcinfo, 0);
	ids = VARDATA_ANY(b) + sizeof(AggResultHeader);
	scores = ids + sizeof(int64) * hdr.n_rows;
	flags = scores + sizeof(float4) * hdr.n_rows;
	for (uint64 r = 0; r < hdr.n_rows; r++)
	{
		int64		id;
		float4		score;
		Datum		values[2];
		bool		nulls[2];

		if ((r & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		memcpy(&id, ids + sizeof(int64) * r, sizeof(int64));
		memcpy(&score, scores + sizeof(float4) * r, sizeof(float4));
		values[0] = Int64GetDatum(id);
		values[1] = Float4GetDatum(score);
		nulls[0] = (flags[r] & AGG_FLAG_ID_NULL) != 0;
		nulls[1] = (flags[r] & AGG_FLAG_SCORE_NULL) != 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * trigger_alert.c
 *	  gpu_alert_trigger(): AFTER INSERT FOR EACH STATEMENT with REFERENCING
 *	  NEW TABLE.  Reads the inserted rows from the transition table through
 *	  SPI in batches of pg_gpuscore.batch_size, scores them with the batch
 *	  scorer (GPU for large batches where one is usable, CPU otherwise, the
 *	  same scores), and inserts those scoring >= threshold (< threshold
 *	  with flag_when=below) into an alerts table, one INSERT per batch;
 *	  with the argument reasons, each alert with the names of the feature
 *	  columns that pushed its score toward the alert most (its explanation,
 *	  explain.c).
 *
 * Memory: all work happens in one context ("pg_gpuscore alert trigger")
 * deleted at the end, or with its parent on ERROR; the scorer's reset
 * callback frees any GPU pipeline.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "core/forest/cpu_engine.h"
#include "core/forest/forest_shap.h"
#include "gpuscore.h"

#include "trigger.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_alert_trigger);

/* ----------------------------------------------------------------------
 * gpu_alert_trigger: score a statement's inserted rows in batches and
 * insert those at or above a threshold into an alerts table
 * ----------------------------------------------------------------------
 */

static const char *const alert_trigger_args[] =
{"model", "key_column", "threshold", "flag_when", "alerts_table", "features", "on_error", "reasons", NULL};

#define ALERT_TRIGGER_HINT \
	"Create it as AFTER INSERT ON t REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=m', 'key_column=id', 'threshold=0.9', 'alerts_table=alerts')."

#define ALERTS_COLUMNS_DETAIL \
	"An alerts table needs the columns (key bigint, score real, model text, model_version integer, alerted_at timestamptz)."
#define ALERTS_COLUMNS_REASONS_DETAIL \
	"An alerts table needs the columns (key bigint, score real, model text, model_version integer, alerted_at timestamptz), and reasons text[] for the argument reasons."

/* The columns gpu_alert_trigger writes, and their types. */
static const struct
{
	const char *name;
	Oid			type;
}			alert_columns[] =
{
	{"key", INT8OID},
	{"score", FLOAT4OID},
	{"model", TEXTOID},
	{"model_version", INT4OID},
	{"alerted_at", TIMESTAMPTZOID},
	{"reasons", TEXTARRAYOID},	/* only with the argument reasons */
};

#define N_ALERT_COLUMNS lengthof(alert_columns)

/*
 * Resolve the alerts_table argument and check its columns (reasons too
 * when the trigger writes them), our right to insert into them, and that it
 * is not the trigger's own table.  Returns its schema-qualified, quoted
 * name.
 */
static char *
resolve_alerts_table(const TrigIdent *id, const char *value, Oid source_relid, bool reasons)
{
	MemoryContext cxt = CurrentMemoryContext;
	List	   *volatile names = NIL;
	Oid			relid;
	Relation	rel;
	TupleDesc	desc;
	char	   *qualified;
	Oid			userid = GetUserId();
	bool		may_insert_table;

	PG_TRY();
	{
		names = stringToQualifiedNameList(value);
	}
	PG_CATCH();
	{
		trig_rethrow_for_trigger(id, cxt);
	}
	PG_END_TRY();
	relid = RangeVarGetRelid(makeRangeVarFromNameList(names), RowExclusiveLock, true);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg(TRIG_FMT "alerts table \"%s\" does not exist", TRIG_ARGS(id), value),
				 errdetail(reasons ? ALERTS_COLUMNS_REASONS_DETAIL : ALERTS_COLUMNS_DETAIL)));
	if (relid == source_relid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "the alerts table cannot be the trigger's own table", TRIG_ARGS(id))));
	rel = relation_open(relid, NoLock);
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg(TRIG_FMT "alerts table \"%s\" is not a table", TRIG_ARGS(id), value)));
	desc = RelationGetDescr(rel);
	may_insert_table = pg_class_aclcheck(relid, userid, ACL_INSERT) == ACLCHECK_OK;
	for (int i = 0; i < (int) N_ALERT_COLUMNS - (reasons ? 0 : 1); i++)
	{
		AttrNumber	attnum = trig_find_column(desc, alert_columns[i].name);
		Form_pg_attribute att;

		if (attnum == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg(TRIG_FMT "alerts table \"%s\" has no column \"%s\"",
							TRIG_ARGS(id), value, alert_columns[i].name),
					 errdetail(reasons ? ALERTS_COLUMNS_REASONS_DETAIL : ALERTS_COLUMNS_DETAIL)));
		att = TupleDescAttr(desc, attnum - 1);
		if (att->atttypid != alert_columns[i].type)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg(TRIG_FMT "column \"%s\" of alerts table \"%s\" has type %s, not %s",
							TRIG_ARGS(id), alert_columns[i].name, value,
							format_type_be(att->atttypid), format_type_be(alert_columns[i].type)),
					 errdetail(reasons ? ALERTS_COLUMNS_REASONS_DETAIL : ALERTS_COLUMNS_DETAIL)));
		if (!may_insert_table &&
			pg_attribute_aclcheck(relid, attnum, userid, ACL_INSERT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg(TRIG_FMT "permission denied to insert into alerts table \"%s\"",
							TRIG_ARGS(id), value),
					 errhint("The trigger inserts alerts as the user who inserts the rows: grant them INSERT on the alerts table.")));
	}
	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));
	relation_close(rel, NoLock);
	return qualified;
}

/*
 * What the statement trigger keeps while it runs, all in run_cxt: its
 * configuration, the per-slot keys of the batches in flight and the
 * scratch of the alerts INSERT.
 */
typedef struct AlertRun
{
	TrigIdent  *id;
	MemoryContext run_cxt;
	MemoryContext batch_cxt;	/* reset after each batch is built or alerted */
	GsModelRef *model;
	FeatureMap	fm;				/* src[f] = f + 1: the query's columns */
	char	   *key_name;
	GsColKind	key_kind;
	double		threshold;
	bool		flag_below;		/* alert on score < threshold, not >= */
	OnError		on_error;
	char	   *alerts;			/* schema-qualified, quoted */
	size_t		max_rows;		/* rows per batch */
	int64	   *keys[GS_SCORER_SLOTS];	/* [max_rows] per slot */
	bool	   *key_null[GS_SCORER_SLOTS];
	bool	   *unscored[GS_SCORER_SLOTS];	/* on_error=null skipped the row */
	Datum	   *values;			/* [1 + n_features] one fetched row */
	bool	   *nulls;
	Datum	   *alert_keys;		/* [max_rows] scratch of one INSERT */
	bool	   *alert_key_nulls;
	Datum	   *alert_scores;
	/* with the argument reasons: each alert's top features (forest_shap.h) */
	int			reasons;		/* how many; 0: none written */
	struct GsShap *shap;
	float	   *x[GS_SCORER_SLOTS];	/* each slot's batch, column-major */
	Datum	   *alert_reasons;	/* [max_rows] text: a text[] literal each */
	float	   *row;			/* [n_features] */
	double	   *phi;			/* [n_features + 1] */
	int		   *order;			/* [n_features] */
	SPIPlanPtr	insert_plan;
	uint64		n_alerts;
	uint64		n_unscored;
	char	   *first_unscored; /* what was wrong with the first one */
} AlertRun;

/*
 * Resolve a statement trigger's configuration into run (in the current
 * memory context, run_cxt).  ERRORs on any configuration problem.
 */
static void
alert_trigger_setup(TriggerData *td, AlertRun *run)
{
	const TrigIdent *id = run->id;
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	TrigArgs	a;
	AttrNumber	key_att;
	Oid			key_type;

	trig_parse_args(id, td->tg_trigger, alert_trigger_args, &a);
	trig_require_arg(id, a.model, "model", "model=name");
	trig_require_arg(id, a.key_column, "key_column", "key_column=id");
	trig_require_arg(id, a.threshold_text, "threshold", "threshold=0.9");
	trig_require_arg(id, a.alerts_table, "alerts_table", "alerts_table=table");
	run->threshold = a.threshold;
	run->flag_below = a.flag_below;
	run->on_error = a.on_error;
	run->model = trig_acquire_model(id, a.model, run->run_cxt);
	trig_resolve_features(id, desc, run->model, a.features, false, &run->fm);
	for (int f = 0; f < run->fm.n; f++)
		run->fm.src[f] = f + 1;
	run->key_name = trig_single_column(id, "key_column", a.key_column);
	key_att = trig_require_column(id, desc, run->key_name, NULL);
	key_type = TupleDescAttr(desc, key_att - 1)->atttypid;
	if (!gs_column_kind(key_type, &run->key_kind) ||
		(run->key_kind != GS_COL_INT2 && run->key_kind != GS_COL_INT4 &&
		 run->key_kind != GS_COL_INT8))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg(TRIG_FMT "key column \"%s\" has type %s", TRIG_ARGS(id), run->key_name,
						format_type_be(key_type)),
				 errhint("The key column must be smallint, integer or bigint; it goes into the key column of the alerts.")));
	run->alerts = resolve_alerts_table(id, a.alerts_table, RelationGetRelid(td->tg_relation),
									   a.reasons > 0);
	run->reasons = a.reasons;
	if (run->reasons > 0)
	{
		int			nf = run->fm.n;

		/*
		 * The reasons rank the contributions to the one score a row gets; a
		 * multi-class model (multi:softmax scores the class) has one set of
		 * contributions per class, and none of them is that score's.
		 */
		if (run->model->forest != NULL && run->model->forest->n_groups != 1)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg(TRIG_FMT "reasons need a model with one output, model \"%s\" has %d classes",
							TRIG_ARGS(id), run->model->name, run->model->forest->n_groups),
					 errhint("Leave out reasons=, or explain the alerts with gpu_explain(), which gives each class's contributions.")));
		run->shap = gs_model_explainer(run->model);
		run->row = palloc(sizeof(float) * nf);
		run->phi = palloc(sizeof(double) * (nf + 1));
		run->order = palloc(sizeof(int) * nf);
	}
}

/*
 * The reasons of row r of a batch of n rows (x column-major): the names of
 * the feature columns with the largest positive contributions to its score
 * (the largest negative ones with flag_when=below), at most run->reasons,
 * largest first, as the text of a text[] literal.
 */
static Datum
alert_reasons(AlertRun *run, const float *x, size_t n, size_t r)
{
	int			nf = run->fm.n;
	int			k = 0;
	Datum	   *names = palloc(sizeof(Datum) * run->reasons);

	for (int f = 0; f < nf; f++)
		run->row[f] = x[(size_t) f * n + r];
	gs_shap_row(run->shap, run->row, run->phi);
	/* alerting on low scores: what pulled the score down most */
	if (run->flag_below)
		for (int f = 0; f < nf; f++)
			run->phi[f] = -run->phi[f];
	gs_rank_contributions(run->phi, nf, run->order);
	while (k < run->reasons && k < nf && run->phi[run->order[k]] > 0.0)
	{
		names[k] = CStringGetTextDatum(run->fm.colname[run->order[k]]);
		k++;
	}
	return CStringGetTextDatum(OidOutputFunctionCall(F_ARRAY_OUT,
													 PointerGetDatum(construct_array(names, k, TEXTOID, -1, false, TYPALIGN_INT))));
}

/* Run the alerts INSERT; its errors name the trigger. */
static void
execute_insert(AlertRun *run, Datum *args)
{
	volatile int rc = 0;

	PG_TRY();
	{
		rc = SPI_execute_plan(run->insert_plan, args, NULL, false, 0);
	}
	PG_CATCH();
	{
		trig_rethrow_for_trigger(run->id, run->batch_cxt);
	}
	PG_END_TRY();
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
}

/*
 * Insert the rows of one scored batch (slot) at or above the threshold
 * (below it with flag_when=below; a NaN score never alerts).
 */
static void
insert_alerts(AlertRun *run, const float *out, size_t n, int slot)
{
	int			na = 0;
	int			dims[1];
	int			lbs[1] = {1};
	Datum		args[5];
	MemoryContext old = MemoryContextSwitchTo(run->batch_cxt);

	for (size_t r = 0; r < n; r++)
	{
		if (run->unscored[slot][r] ||
			!(run->flag_below ? (double) out[r] < run->threshold : (double) out[r] >= run->threshold))
			continue;
		run->alert_keys[na] = Int64GetDatum(run->keys[slot][r]);
		run->alert_key_nulls[na] = run->key_null[slot][r];
		run->alert_scores[na] = Float4GetDatum(out[r]);
		if (run->reasons > 0)
		{
			CHECK_FOR_INTERRUPTS();
			run->alert_reasons[na] = alert_reasons(run, run->x[slot], n, r);
		}
		na++;
	}
	if (na == 0)
	{
		MemoryContextSwitchTo(old);
		MemoryContextReset(run->batch_cxt);
		return;
	}

	dims[0] = na;
	args[0] = PointerGetDatum(construct_md_array(run->alert_keys, run->alert_key_nulls, 1, dims,
												 lbs, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE));
	args[1] = PointerGetDatum(construct_array(run->alert_scores, na, FLOAT4OID, sizeof(float4),
											  true, TYPALIGN_INT));
	args[2] = CStringGetTextDatum(run->model->name);
	args[3] = Int32GetDatum(run->model->version);
	if (run->reasons > 0)
		args[4] = PointerGetDatum(construct_array(run->alert_reasons, na, TEXTOID, -1, false,
												  TYPALIGN_INT));
	execute_insert(run, args);
	run->n_alerts += na;
	MemoryContextSwitchTo(old);
	MemoryContextReset(run->batch_cxt);
}

/* Rows read row-major before they go to the column-major batch (build_batch). */
#define STAGE_ROWS 64

/*
 * Build the column-major batch x (ld = n) and the keys of slot from the n
 * rows SPI fetched.  A row that cannot be scored ERRORs (on_error=error) or
 * is marked unscored and counted (on_error=null).  Rows are read row-major
 * into a stage of STAGE_ROWS rows that gs_rows_to_columns writes to x a
 * block at a time (written directly, a row's features would land n * 4
 * bytes apart, in one L1 cache set for power-of-two batch sizes).
 */
static void
build_batch(AlertRun *run, SPITupleTable *tt, uint64 n, float *x, int slot)
{
	const FeatureMap *fm = &run->fm;
	MemoryContext old = MemoryContextSwitchTo(run->batch_cxt);
	float	   *stage = palloc(sizeof(float) * STAGE_ROWS * fm->n);

	for (uint64 r = 0; r < n; r++)
	{
		float	   *row = stage + (size_t) (r % STAGE_ROWS) * fm->n;
		bool		key_null;
		int64		key;
		const char *why = NULL;
		int			bad;
		char	   *what;

		heap_deform_tuple(tt->vals[r], tt->tupdesc, run->values, run->nulls);
		key_null = run->nulls[0];
		key = key_null ? 0 :
			run->key_kind == GS_COL_INT2 ? DatumGetInt16(run->values[0]) :
			run->key_kind == GS_COL_INT4 ? DatumGetInt32(run->values[0]) :
			DatumGetInt64(run->values[0]);
		run->keys[slot][r] = key;
		run->key_null[slot][r] = key_null;
		/* the stage is full: write its rows to the batch */
		if (r > 0 && r % STAGE_ROWS == 0)
			gs_rows_to_columns(stage, STAGE_ROWS, fm->n, x + r - STAGE_ROWS, n);
		bad = trig_read_features(fm, run->values, run->nulls, row, 1, &why);
		run->unscored[slot][r] = bad >= 0;
		if (bad < 0)
			continue;

		what = key_null ? pstrdup("with a NULL key") : psprintf("with key " INT64_FORMAT, key);
		if (run->on_error == ON_ERROR_ERROR)
			ereport(ERROR,
					(gs_col_kind_is_text(fm->kind[bad]) ?
					 errcode(ERRCODE_INVALID_PARAMETER_VALUE) :
					 errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg(TRIG_FMT "column \"%s\" %s", TRIG_ARGS(run->id), fm->colname[bad], why),
					 errdetail("Model \"%s\" cannot score the inserted row %s.", run->model->name, what),
					 errhint("Use NULL for a missing value, or create the trigger with 'on_error=null' to skip such rows.")));
		if (run->n_unscored++ == 0)
			run->first_unscored = MemoryContextStrdup(run->run_cxt,
													  psprintf("The first, %s, has column \"%s\", which %s.",
															   what, fm->colname[bad], why));
		/* score something harmless in its place; the result is not used */
		for (int f = 0; f < fm->n; f++)
			row[f] = NAN;
	}
	if (n > 0)
	{
		uint64		k = (n - 1) % STAGE_ROWS + 1;

		gs_rows_to_columns(stage, k, fm->n, x + n - k, n);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(run->batch_cxt);
}

/*
 * gpu_alert_trigger() RETURNS trigger: AFTER INSERT FOR EACH STATEMENT with
 * REFERENCING NEW TABLE; scores the inserted rows in batches and inserts
 * those at or above the threshold into the alerts table.  Arguments: see
 * the header comment and docs/reference.md.
 */
Datum
gpuscore_gpu_alert_trigger(PG_FUNCTION_ARGS)
{
	TrigIdent	id;
	TriggerData *td = trig_trigger_data(fcinfo, "gpu_alert_trigger", &id);
	MemoryContext old;
	AlertRun	run;
	int64		n_new;
	StringInfoData sql;
	SPIPlanPtr	plan;
	Portal		portal;
	GsBatchScorer *scorer = NULL;
	const float *out;
	int			slot;
	size_t		n_done;
	uint64		n_rows = 0;
	Oid			argtypes[5] = {INT8ARRAYOID, FLOAT4ARRAYOID, TEXTOID, INT4OID, TEXTARRAYOID};

	if (!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(td->tg_event))
		trig_wrong_kind(&id, "gpu_alert_trigger", "AFTER INSERT FOR EACH STATEMENT",
				   ALERT_TRIGGER_HINT);
	if (td->tg_trigger->tgnewtable == NULL || td->tg_newtable == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg(TRIG_FMT "gpu_alert_trigger() needs the inserted rows as a transition table",
						TRIG_ARGS(&id)),
				 errhint("%s", ALERT_TRIGGER_HINT)));

	memset(&run, 0, sizeof(run));
	run.id = &id;
	run.run_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_gpuscore alert trigger",
										ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(run.run_cxt);
	alert_trigger_setup(td, &run);

	/* nothing inserted: nothing to score (the configuration was checked) */
	n_new = tuplestore_tuple_count(td->tg_newtable);
	if (n_new == 0)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(run.run_cxt);
		return PointerGetDatum(NULL);
	}

	run.max_rows = (size_t) Min((int64) gs_batch_rows(run.model->model), n_new);
	for (int k = 0; k < GS_SCORER_SLOTS; k++)
	{
		run.keys[k] = MemoryContextAllocHuge(run.run_cxt, sizeof(int64) * run.max_rows);
		run.key_null[k] = MemoryContextAllocHuge(run.run_cxt, sizeof(bool) * run.max_rows);
		run.unscored[k] = MemoryContextAllocHuge(run.run_cxt, sizeof(bool) * run.max_rows);
	}
	run.alert_keys = MemoryContextAllocHuge(run.run_cxt, sizeof(Datum) * run.max_rows);
	run.alert_key_nulls = MemoryContextAllocHuge(run.run_cxt, sizeof(bool) * run.max_rows);
	run.alert_scores = MemoryContextAllocHuge(run.run_cxt, sizeof(Datum) * run.max_rows);
	run.alert_reasons = MemoryContextAllocHuge(run.run_cxt, sizeof(Datum) * run.max_rows);
	run.values = palloc(sizeof(Datum) * (run.fm.n + 1));
	run.nulls = palloc(sizeof(bool) * (run.fm.n + 1));
	run.batch_cxt = AllocSetContextCreate(run.run_cxt, "pg_gpuscore alert batch",
										  ALLOCSET_DEFAULT_SIZES);

	/* the query over the transition table: key, then the features */
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s", quote_identifier(run.key_name));
	for (int f = 0; f < run.fm.n; f++)
		appendStringInfo(&sql, ", %s", quote_identifier(run.fm.colname[f]));
	appendStringInfo(&sql, " FROM %s", quote_identifier(td->tg_trigger->tgnewtable));

	SPI_connect();
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "SPI_register_trigger_data failed");
	plan = SPI_prepare(sql.data, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (run.reasons > 0)
		run.insert_plan = SPI_prepare(psprintf("INSERT INTO %s (key, score, model, model_version, alerted_at, reasons) "
											   "SELECT k, s, $3, $4, pg_catalog.now(), r::pg_catalog.text[] "
											   "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), "
											   "pg_catalog.unnest($5)) AS u(k, s, r)",
											   run.alerts),
									  5, argtypes);
	else
		run.insert_plan = SPI_prepare(psprintf("INSERT INTO %s (key, score, model, model_version, alerted_at) "
											   "SELECT k, s, $3, $4, pg_catalog.now() "
											   "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) AS u(k, s)",
											   run.alerts),
									  4, argtypes);
	if (run.insert_plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);

	/*
	 * Fetch, build and submit batch k+1 while batch k may be on the GPU; a
	 * slot's results are alerted when its buffer is needed again, and the
	 * rest at the end (the same loop as gpu_score_query).
	 */
	for (;;)
	{
		SPITupleTable *tt;
		uint64		n;
		float	   *x;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, (long) run.max_rows);
		tt = SPI_tuptable;		/* the alerts INSERT below resets SPI_tuptable */
		n = SPI_processed;
		if (n == 0)
			break;
		if (scorer == NULL)
			scorer = gs_scorer_begin(run.model, run.max_rows, run.run_cxt);
		while ((out = gs_scorer_next(scorer, false, &slot, &n_done)) != NULL)
			insert_alerts(&run, out, n_done, slot);
		x = gs_scorer_input(scorer, &slot);
		run.x[slot] = x;		/* kept until the slot is reused: the reasons read it */
		build_batch(&run, tt, n, x, slot);
		SPI_freetuptable(tt);
		gs_scorer_submit(scorer, n);
		n_rows += n;
	}
	if (scorer != NULL)
		while ((out = gs_scorer_next(scorer, true, &slot, &n_done)) != NULL)
			insert_alerts(&run, out, n_done, slot);

	SPI_cursor_close(portal);
	SPI_finish();

	if (run.n_unscored > 0)
		ereport(WARNING,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg(TRIG_FMT "%llu inserted rows could not be scored and were not checked for alerts",
						TRIG_ARGS(&id), (unsigned long long) run.n_unscored),
				 errdetail("%s", run.first_unscored),
				 errhint("The trigger has on_error=null; feature values must be finite and within the range of real.")));
	elog(DEBUG1, "trigger \"%s\" on table \"%s\": scored %llu rows with model \"%s\" version %d, %llu alerts",
		 id.tgname, id.relname, (unsigned long long) (n_rows - run.n_unscored),
		 run.model->name, run.model->version, (unsigned long long) run.n_alerts);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(run.run_cxt);
	return PointerGetDatum(NULL);
}

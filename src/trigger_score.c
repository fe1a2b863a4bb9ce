/*
 * trigger_score.c
 *	  gpu_score_trigger(): BEFORE INSERT OR UPDATE FOR EACH ROW.  Scores the
 *	  new row on the CPU engine (one row never pays for a GPU round trip)
 *	  and writes the score, and optionally a boolean flag score >= threshold
 *	  (score < threshold with flag_when=below), into columns of that row.  Arguments and memory: see trigger_common.c
 *	  and the comment of gpuscore_gpu_score_trigger.
 *
 * Memory: the resolved configuration lives in fn_extra, in a child context
 * of fn_mcxt ("pg_gpuscore score trigger") that also holds the statement's
 * reference to the model, so both die with the statement (ERROR included)
 * and the next statement sees a replaced model.  Per-row work runs in the
 * trigger manager's per-tuple context.
 */
#include "postgres.h"

#include <float.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/shortest_dec.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gpuscore.h"

#include "trigger.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_trigger);

/* ----------------------------------------------------------------------
 * gpu_score_trigger: score each new row into its own columns
 * ----------------------------------------------------------------------
 */

static const char *const score_trigger_args[] =
{"model", "score_column", "flag_column", "threshold", "flag_when", "features", "on_error", NULL};

#define SCORE_TRIGGER_HINT \
	"Create it as BEFORE INSERT OR UPDATE ON t FOR EACH ROW EXECUTE FUNCTION gpu_score_trigger('model=m', 'score_column=score')."

/*
 * The resolved configuration of one trigger for one statement (fn_extra).
 * Everything, the model reference included, lives in cxt.
 */
typedef struct ScoreTriggerState
{
	MemoryContext cxt;
	Oid			tgoid;			/* whose configuration this is */
	Oid			relid;
	TrigIdent	id;
	GsModelRef *model;
	FeatureMap	fm;
	AttrNumber	score_att;
	Oid			score_type;		/* FLOAT4OID, FLOAT8OID or NUMERICOID */
	int32		score_typmod;
	AttrNumber	flag_att;		/* InvalidAttrNumber: no flag */
	double		threshold;
	bool		flag_below;		/* flag score < threshold, not >= */
	OnError		on_error;
	bool		warned;			/* on_error=null has warned this statement */
	int			natts;
	Datum	   *values;			/* [natts] scratch of one deformed row */
	bool	   *nulls;
	float	   *row;			/* [n_features] */
	float	   *margin;			/* engine scratch for one row */
	float	   *out;			/* [n_outputs] */
} ScoreTriggerState;

/* Check an output column (score or flag) of the row trigger. */
static AttrNumber
output_column(const TrigIdent *id, TupleDesc desc, const FeatureMap *fm,
			  const char *argname, const char *value)
{
	char	   *name = trig_single_column(id, argname, value);
	AttrNumber	attnum = trig_require_column(id, desc, name, NULL);
	Form_pg_attribute att = TupleDescAttr(desc, attnum - 1);

	if (att->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg(TRIG_FMT "column \"%s\" is a generated column", TRIG_ARGS(id), name),
				 errdetail("A trigger cannot write into a generated column.")));
	for (int f = 0; f < fm->n; f++)
		if (fm->attnum[f] == attnum)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "column \"%s\" is both a feature and the %s",
							TRIG_ARGS(id), name, argname)));
	return attnum;
}

/*
 * Resolve a row trigger's configuration into a new state in a child
 * context of fn_mcxt.  ERRORs on any configuration problem.
 */
static ScoreTriggerState *
score_trigger_setup(FunctionCallInfo fcinfo, TriggerData *td, const TrigIdent *id)
{
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	MemoryContext cxt;
	MemoryContext old;
	ScoreTriggerState *s;
	TrigArgs	a;
	Form_pg_attribute att;
	const GsModel *f;

	cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "pg_gpuscore score trigger",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	s = palloc0(sizeof(ScoreTriggerState));
	s->cxt = cxt;
	s->tgoid = td->tg_trigger->tgoid;
	s->relid = RelationGetRelid(td->tg_relation);
	s->id.tgname = pstrdup(id->tgname);
	s->id.relname = pstrdup(id->relname);
	id = &s->id;

	trig_parse_args(id, td->tg_trigger, score_trigger_args, &a);
	trig_require_arg(id, a.model, "model", "model=name");
	trig_require_arg(id, a.score_column, "score_column", "score_column=column");
	if (a.flag_column && !a.threshold_text)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "flag_column needs a threshold", TRIG_ARGS(id)),
				 errhint("Add the trigger argument 'threshold=0.9': the flag is true when score >= threshold.")));
	if (a.threshold_text && !a.flag_column)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "threshold is given without flag_column", TRIG_ARGS(id)),
				 errhint("Add the trigger argument 'flag_column=column' (a boolean column set to score >= threshold).")));
	s->threshold = a.threshold;
	s->flag_below = a.flag_below;
	s->on_error = a.on_error;

	s->model = trig_acquire_model(id, a.model, cxt);
	f = s->model->model;
	trig_resolve_features(id, desc, s->model, a.features, true, &s->fm);

	s->score_att = output_column(id, desc, &s->fm, "score_column", a.score_column);
	att = TupleDescAttr(desc, s->score_att - 1);
	if (att->atttypid != FLOAT4OID && att->atttypid != FLOAT8OID && att->atttypid != NUMERICOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg(TRIG_FMT "score column \"%s\" has type %s", TRIG_ARGS(id),
						NameStr(att->attname), format_type_be(att->atttypid)),
				 errhint("The score column must be real, double precision or numeric.")));
	s->score_type = att->atttypid;
	s->score_typmod = att->atttypmod;
	if (a.flag_column)
	{
		s->flag_att = output_column(id, desc, &s->fm, "flag_column", a.flag_column);
		att = TupleDescAttr(desc, s->flag_att - 1);
		if (att->atttypid != BOOLOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg(TRIG_FMT "flag column \"%s\" has type %s", TRIG_ARGS(id),
							NameStr(att->attname), format_type_be(att->atttypid)),
					 errhint("The flag column must be boolean.")));
	}

	s->natts = desc->natts;
	s->values = palloc(sizeof(Datum) * desc->natts);
	s->nulls = palloc(sizeof(bool) * desc->natts);
	s->row = palloc(sizeof(float) * f->n_features);
	s->margin = palloc(sizeof(float) * gs_model_scratch_floats(f, 1));
	s->out = palloc(sizeof(float) * f->n_outputs);
	MemoryContextSwitchTo(old);
	return s;
}

/*
 * The score as a Datum of the score column's type.  A numeric column gets
 * the shortest decimal that reads back as the same real (what real's text
 * output shows), rounded to the column's typmod: too small a numeric(p,s)
 * is an ERROR naming the trigger.
 */
static Datum
score_datum(const ScoreTriggerState *s, float score)
{
	char		buf[FLOAT_SHORTEST_DECIMAL_LEN];
	MemoryContext cxt = CurrentMemoryContext;
	Datum		d = (Datum) 0;

	if (s->score_type == FLOAT4OID)
		return Float4GetDatum(score);
	if (s->score_type == FLOAT8OID)
		return Float8GetDatum((double) score);
	float_to_shortest_decimal_buf(score, buf);
	PG_TRY();
	{
		d = DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
								ObjectIdGetDatum(InvalidOid), Int32GetDatum(s->score_typmod));
	}
	PG_CATCH();
	{
		trig_rethrow_for_trigger(&s->id, cxt);
	}
	PG_END_TRY();
	return d;
}

/*
 * gpu_score_trigger() RETURNS trigger: BEFORE INSERT OR UPDATE FOR EACH
 * ROW; scores the new row into score_column (and flag_column).  Arguments:
 * see the header comment and docs/reference.md.
 */
Datum
gpuscore_gpu_score_trigger(PG_FUNCTION_ARGS)
{
	TrigIdent	id;
	TriggerData *td = trig_trigger_data(fcinfo, "gpu_score_trigger", &id);
	ScoreTriggerState *s = (ScoreTriggerState *) fcinfo->flinfo->fn_extra;
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	HeapTuple	tuple;
	HeapTuple	newtuple;
	int			bad;
	const char *why = NULL;

	if (!TRIGGER_FIRED_FOR_ROW(td->tg_event) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!(TRIGGER_FIRED_BY_INSERT(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event)))
		trig_wrong_kind(&id, "gpu_score_trigger", "BEFORE INSERT OR UPDATE FOR EACH ROW",
				   SCORE_TRIGGER_HINT);

	/* first fire of this trigger in this statement: resolve everything */
	if (s == NULL || s->tgoid != td->tg_trigger->tgoid ||
		s->relid != RelationGetRelid(td->tg_relation) || s->natts != desc->natts)
	{
		if (s != NULL)
		{
			fcinfo->flinfo->fn_extra = NULL;
			MemoryContextDelete(s->cxt);
		}
		s = score_trigger_setup(fcinfo, td, &id);
		fcinfo->flinfo->fn_extra = s;
	}

	tuple = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	heap_deform_tuple(tuple, desc, s->values, s->nulls);
	bad = trig_read_features(&s->fm, s->values, s->nulls, s->row, 1, &why);
	if (bad >= 0 && s->on_error == ON_ERROR_ERROR)
		ereport(ERROR,
				(gs_col_kind_is_text(s->fm.kind[bad]) ?
				 errcode(ERRCODE_INVALID_PARAMETER_VALUE) :
				 errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg(TRIG_FMT "column \"%s\" %s", TRIG_ARGS(&s->id), s->fm.colname[bad], why),
				 gs_col_kind_is_text(s->fm.kind[bad]) ?
				 errdetail("Model \"%s\" cannot score the row: XGBoost refuses categories a model was not trained with.",
						   s->model->name) :
				 errdetail("Model \"%s\" cannot score the row: feature %d must be finite and within the range of real.",
						   s->model->name, bad + 1),
				 errhint("Use NULL for a missing value, or create the trigger with 'on_error=null' to store a NULL score instead.")));
	if (bad >= 0 && !s->warned)
	{
		s->warned = true;
		ereport(WARNING,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg(TRIG_FMT "stored a NULL score because column \"%s\" %s",
						TRIG_ARGS(&s->id), s->fm.colname[bad], why),
				 errdetail("The trigger has on_error=null; other rows of this statement that cannot be scored also get a NULL score, without a warning.")));
	}

	/* the score and flag: NULL when the row cannot be scored */
	s->nulls[s->score_att - 1] = bad >= 0;
	if (s->flag_att != InvalidAttrNumber)
		s->nulls[s->flag_att - 1] = bad >= 0;
	if (bad < 0)
	{
		gs_model_mark_missing(s->model->model, s->row, 1, 1);
		gs_model_predict(s->model->model, s->row, 1, 1, s->margin, s->out);
		s->values[s->score_att - 1] = score_datum(s, s->out[0]);
		if (s->flag_att != InvalidAttrNumber)
			s->values[s->flag_att - 1] = BoolGetDatum(s->flag_below ?
													  (double) s->out[0] < s->threshold :
													  (double) s->out[0] >= s->threshold);
	}

	/*
	 * Form the new row from the values already deformed, as
	 * heap_modify_tuple would after deforming the row a second time.
	 */
	newtuple = heap_form_tuple(desc, s->values, s->nulls);
	newtuple->t_data->t_ctid = tuple->t_data->t_ctid;
	newtuple->t_self = tuple->t_self;
	newtuple->t_tableOid = tuple->t_tableOid;
	return PointerGetDatum(newtuple);
}


/*
 * trigger_common.c
 *	  What gpu_score_trigger and gpu_alert_trigger share: 'name=value'
 *	  argument parsing, resolution of columns and of the model (errors name
 *	  the trigger and table), and reading feature values from a row.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/varlena.h"

#include "gpuscore.h"

#include "trigger.h"

/* Where the value of argument key goes, or NULL for an unknown key. */
char **
trig_arg_slot(TrigArgs *a, const char *key)
{
	if (strcmp(key, "model") == 0)
		return &a->model;
	if (strcmp(key, "score_column") == 0)
		return &a->score_column;
	if (strcmp(key, "flag_column") == 0)
		return &a->flag_column;
	if (strcmp(key, "threshold") == 0)
		return &a->threshold_text;
	if (strcmp(key, "features") == 0)
		return &a->features;
	if (strcmp(key, "key_column") == 0)
		return &a->key_column;
	if (strcmp(key, "alerts_table") == 0)
		return &a->alerts_table;
	if (strcmp(key, "on_error") == 0)
		return &a->on_error_text;
	if (strcmp(key, "reasons") == 0)
		return &a->reasons_text;
	if (strcmp(key, "flag_when") == 0)
		return &a->flag_when_text;
	return NULL;
}

/* Strip blanks from both ends of s, in place. */
char *
trig_trim_blanks(char *s)
{
	char	   *e;

	while (*s == ' ')
		s++;
	for (e = s + strlen(s); e > s && e[-1] == ' '; e--)
		e[-1] = '\0';
	return s;
}

/*
 * Parse the trigger's 'name=value' arguments into a; allowed lists the
 * names this trigger function takes.  ERRORs on anything else.
 */
void
trig_parse_args(const TrigIdent *id, const Trigger *tg, const char *const *allowed,
		   TrigArgs *a)
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < tg->tgnargs; i++)
	{
		char	   *arg = pstrdup(tg->tgargs[i]);
		char	   *eq = strchr(arg, '=');
		char	   *key;
		char	   *val;
		char	  **slot = NULL;

		if (eq == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "argument \"%s\" is not of the form name=value",
							TRIG_ARGS(id), tg->tgargs[i]),
					 errhint("Write each argument as 'name=value', e.g. 'model=fraud'.")));
		*eq = '\0';
		key = trig_trim_blanks(arg);
		val = trig_trim_blanks(eq + 1);
		for (int k = 0; allowed[k] != NULL; k++)
			if (strcmp(key, allowed[k]) == 0)
				slot = trig_arg_slot(a, key);
		if (slot == NULL)
		{
			StringInfoData names;

			initStringInfo(&names);
			for (int k = 0; allowed[k] != NULL; k++)
				appendStringInfo(&names, "%s%s", k ? ", " : "", allowed[k]);
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "unknown argument \"%s\"", TRIG_ARGS(id), key),
					 errhint("The arguments are: %s.", names.data)));
		}
		if (val[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "argument \"%s\" has an empty value", TRIG_ARGS(id), key)));
		if (*slot != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "argument \"%s\" is given twice", TRIG_ARGS(id), key)));
		*slot = val;
	}

	if (a->model && strlen(a->model) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg(TRIG_FMT "model name \"%s\" is too long", TRIG_ARGS(id), a->model),
				 errdetail("Model names are at most %d bytes.", NAMEDATALEN - 1)));
	if (a->threshold_text)
	{
		char	   *end;

		errno = 0;
		a->threshold = strtod(a->threshold_text, &end);
		if (*end != '\0' || errno != 0 || !isfinite(a->threshold))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "threshold \"%s\" is not a finite number",
							TRIG_ARGS(id), a->threshold_text)));
	}
	if (a->flag_when_text && strcmp(a->flag_when_text, "below") == 0)
		a->flag_below = true;
	else if (a->flag_when_text && strcmp(a->flag_when_text, "above") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "flag_when must be \"above\" or \"below\", not \"%s\"",
						TRIG_ARGS(id), a->flag_when_text),
				 errhint("'flag_when=above' (the default) flags scores at or above the threshold, "
						 "'flag_when=below' scores below it (an IsolationForest's outliers).")));
	if (a->threshold_text == NULL && a->flag_when_text)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "flag_when is given without a threshold", TRIG_ARGS(id))));
	if (a->reasons_text)
	{
		char	   *end;
		long		v;

		errno = 0;
		v = strtol(a->reasons_text, &end, 10);
		if (*end != '\0' || errno != 0 || v < 1 || v > 100)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(TRIG_FMT "reasons must be a number of features from 1 to 100, not \"%s\"",
							TRIG_ARGS(id), a->reasons_text)));
		a->reasons = (int) v;
	}
	a->on_error = ON_ERROR_ERROR;
	if (a->on_error_text && strcmp(a->on_error_text, "null") == 0)
		a->on_error = ON_ERROR_NULL;
	else if (a->on_error_text && strcmp(a->on_error_text, "error") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "on_error must be \"error\" or \"null\", not \"%s\"",
						TRIG_ARGS(id), a->on_error_text)));
}

/* ERROR for a required argument that is missing; example shows its form. */
void
trig_require_arg(const TrigIdent *id, const char *value, const char *name, const char *example)
{
	if (value == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "missing argument \"%s\"", TRIG_ARGS(id), name),
				 errhint("Add the trigger argument '%s'.", example)));
}

/*
 * Split a comma-separated list of column names, with SQL identifier rules
 * (unquoted names are folded to lower case, "Quoted" ones kept).
 */
List *
trig_split_columns(const TrigIdent *id, const char *argname, const char *value)
{
	List	   *names;

	if (!SplitIdentifierString(pstrdup(value), ',', &names) || names == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "invalid column list in argument \"%s\": \"%s\"",
						TRIG_ARGS(id), argname, value),
				 errhint("Separate column names with commas; double-quote names that need it.")));
	return names;
}

/* The one column name an argument gives (identifier rules as above). */
char *
trig_single_column(const TrigIdent *id, const char *argname, const char *value)
{
	List	   *names = trig_split_columns(id, argname, value);

	if (list_length(names) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "argument \"%s\" must name one column, not \"%s\"",
						TRIG_ARGS(id), argname, value)));
	return (char *) linitial(names);
}

/* Attribute number of a user column of desc by name, or 0. */
AttrNumber
trig_find_column(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	return InvalidAttrNumber;
}

/* find_column, ERRORing when absent (detail says why the name was used). */
AttrNumber
trig_require_column(const TrigIdent *id, TupleDesc desc, const char *name, const char *detail)
{
	AttrNumber	attnum = trig_find_column(desc, name);

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg(TRIG_FMT "column \"%s\" does not exist", TRIG_ARGS(id), name),
				 detail ? errdetail("%s", detail) : 0));
	return attnum;
}

/*
 * Re-raise the error being handled with the trigger named in front of its
 * message, keeping SQLSTATE, detail and hint.  Call only in PG_CATCH; cxt
 * is a context that outlives the error (not ErrorContext).
 */
void
trig_rethrow_for_trigger(const TrigIdent *id, MemoryContext cxt)
{
	ErrorData  *ed;

	MemoryContextSwitchTo(cxt);
	ed = CopyErrorData();
	FlushErrorState();
	ed->message = psprintf(TRIG_FMT "%s", TRIG_ARGS(id), ed->message);
	ReThrowError(ed);
}

/*
 * The active version of the model, held until mcxt dies; errors (model
 * missing, model unreadable) name the trigger.  Only single-output models.
 */
GsModelRef *
trig_acquire_model(const TrigIdent *id, const char *name, MemoryContext mcxt)
{
	MemoryContext cxt = CurrentMemoryContext;
	GsModelRef *volatile m = NULL;

	PG_TRY();
	{
		m = gs_model_acquire(name, mcxt);
	}
	PG_CATCH();
	{
		trig_rethrow_for_trigger(id, cxt);
	}
	PG_END_TRY();
	if (m->model->n_outputs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "model \"%s\" has %d outputs per row", TRIG_ARGS(id),
						name, m->model->n_outputs),
				 errhint("Triggers store one score per row: use a single-output model.")));
	return m;
}

/*
 * Resolve the feature columns of desc: those of the features argument (in
 * model order) or, without it, the model's feature names.  Checks count and
 * types; generated columns are refused when their values are not yet there
 * (before_row).  src[] is set to attnum - 1.
 */
void
trig_resolve_features(const TrigIdent *id, TupleDesc desc, const GsModelRef *m,
				 const char *features, bool before_row, FeatureMap *fm)
{
	const GsModel *f = m->model;
	List	   *names = NIL;
	const char *detail = NULL;
	ListCell   *lc;
	int			i;

	if (features)
		names = trig_split_columns(id, "features", features);
	else if (f->feature_names == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "model \"%s\" has no feature names", TRIG_ARGS(id), m->name),
				 errhint("Name the feature columns in model order with the trigger argument 'features=col1,col2,...'.")));
	else
	{
		for (i = 0; i < f->n_features; i++)
			names = lappend(names, f->feature_names[i]);
		detail = psprintf("Without a features argument the trigger uses the feature names of model \"%s\" as column names.",
						  m->name);
	}
	if (list_length(names) != f->n_features)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(TRIG_FMT "model \"%s\" expects %d features, the trigger names %d columns",
						TRIG_ARGS(id), m->name, f->n_features, list_length(names)),
				 errhint("List every feature column in model order: 'features=col1,col2,...'.")));

	fm->n = f->n_features;
	fm->model = m;
	fm->attnum = palloc(sizeof(AttrNumber) * fm->n);
	fm->src = palloc(sizeof(int) * fm->n);
	fm->kind = palloc(sizeof(GsColKind) * fm->n);
	fm->colname = palloc(sizeof(char *) * fm->n);
	i = 0;
	foreach(lc, names)
	{
		char	   *name = (char *) lfirst(lc);
		AttrNumber	attnum = trig_require_column(id, desc, name, detail);
		Form_pg_attribute att = TupleDescAttr(desc, attnum - 1);

		if (!gs_column_kind(att->atttypid, &fm->kind[i]) || gs_col_kind_is_array(fm->kind[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg(TRIG_FMT "column \"%s\" has type %s, which cannot be a feature",
							TRIG_ARGS(id), name, format_type_be(att->atttypid)),
					 errhint("Features must be real, double precision, numeric, smallint, integer, bigint or boolean columns, or text for a categorical feature with named categories.")));
		if (features)
			gs_check_feature_order(m, i, name, psprintf(TRIG_FMT "column", TRIG_ARGS(id)));
		if (gs_col_kind_is_text(fm->kind[i]))
			gs_check_text_feature(m, i, psprintf(TRIG_FMT "column \"%s\"", TRIG_ARGS(id), name));
		else
			gs_check_number_feature(m, i, psprintf(TRIG_FMT "column \"%s\"", TRIG_ARGS(id), name));
		if (before_row && att->attgenerated)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg(TRIG_FMT "column \"%s\" is a generated column", TRIG_ARGS(id), name),
					 errdetail("Generated columns are computed after BEFORE triggers fire, so the trigger cannot read them.")));
		fm->attnum[i] = attnum;
		fm->src[i] = attnum - 1;
		fm->colname[i] = pstrdup(name);
		i++;
	}
}

/* Is a (non-missing) feature value out of what the engines accept? */
const char *
trig_bad_value(double v)
{
	if (isinf(v))
		return "is infinite";
	if (!isnan(v) && fabs(v) > FLT_MAX)
		return "is out of range for type real";
	return NULL;
}

/*
 * Write one row's features into dst[f * stride] as float32 (NULL and NaN
 * missing).  Returns -1, or the first feature whose value cannot be scored
 * (then *why says why and dst is partly written).
 */
int
trig_read_features(const FeatureMap *fm, const Datum *values, const bool *nulls,
			  float *dst, size_t stride, const char **why)
{
	for (int f = 0; f < fm->n; f++)
	{
		int			c = fm->src[f];
		double		v;

		if (nulls[c])
		{
			dst[(size_t) f * stride] = gs_col_kind_is_text(fm->kind[f]) ? gs_text_null(fm->model, f) : NAN;
			continue;
		}
		if (gs_col_kind_is_text(fm->kind[f]))
		{
			*why = NULL;
			v = gs_text_feature(fm->model, f, values[c], fm->kind[f], why);
			if (*why != NULL)
				return f;
		}
		else
			v = fm->kind[f] == GS_COL_FLOAT4 ? DatumGetFloat4(values[c]) :
				gs_datum_to_double(values[c], fm->kind[f]);
		if ((*why = trig_bad_value(v)) != NULL)
			return f;
		dst[(size_t) f * stride] = (float) v;
	}
	return -1;
}

/* The trigger is not of the kind the function needs: ERROR. */
void
trig_wrong_kind(const TrigIdent *id, const char *func, const char *kind, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			 errmsg(TRIG_FMT "%s() must be fired %s", TRIG_ARGS(id), func, kind),
			 errhint("%s", hint)));
}

/* The trigger data of a call, ERRORing when not called as a trigger. */
TriggerData *
trig_trigger_data(FunctionCallInfo fcinfo, const char *func, TrigIdent *id)
{
	TriggerData *td;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s() can only be called as a trigger", func)));
	td = (TriggerData *) fcinfo->context;
	id->tgname = td->tg_trigger->tgname;
	id->relname = RelationGetRelationName(td->tg_relation);
	return td;
}


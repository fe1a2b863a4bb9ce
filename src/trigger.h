/*
 * trigger.h
 *	  What the two trigger functions share (trigger_common.c): argument
 *	  parsing, column and model resolution, feature conversion, and the
 *	  "trigger "t" on table "r": " message prefix.
 */
#ifndef GS_TRIGGER_H
#define GS_TRIGGER_H

#include "postgres.h"

#include "commands/trigger.h"
#include "fmgr.h"

#include "gpuscore.h"

/* Which trigger, for messages: "trigger "t" on table "r": ..." */
typedef struct TrigIdent
{
	const char *tgname;
	const char *relname;
} TrigIdent;

#define TRIG_FMT "trigger \"%s\" on table \"%s\": "
#define TRIG_ARGS(id) (id)->tgname, (id)->relname

typedef enum OnError
{
	ON_ERROR_ERROR,				/* a data error fails the statement */
	ON_ERROR_NULL				/* a data error gives no score */
} OnError;

/* The parsed trigger arguments; NULL for those not given. */
typedef struct TrigArgs
{
	char	   *model;
	char	   *score_column;
	char	   *flag_column;
	char	   *threshold_text;
	char	   *features;
	char	   *key_column;
	char	   *alerts_table;
	char	   *on_error_text;
	char	   *reasons_text;
	char	   *flag_when_text;
	double		threshold;		/* threshold_text parsed */
	bool		flag_below;		/* flag_when_text parsed: flag score < threshold
								 * (anomaly scores where lower is worse),
								 * else score >= threshold */
	int			reasons;		/* reasons_text parsed; 0 when absent */
	OnError		on_error;		/* on_error_text parsed */
} TrigArgs;

/* The feature columns in model order, and where each row holds them. */
typedef struct FeatureMap
{
	int			n;
	AttrNumber *attnum;			/* [n] column of the table (1-based) */
	int		   *src;			/* [n] index into the values[] of a row */
	GsColKind  *kind;			/* [n] */
	char	  **colname;		/* [n] */
	const GsModelRef *model;	/* whose category names text columns use */
} FeatureMap;

/* Where the value of argument key goes, or NULL for an unknown key. */
extern char **trig_arg_slot(TrigArgs *a, const char *key);

/* Strip blanks from both ends of s, in place. */
extern char *trig_trim_blanks(char *s);

/*
 * Parse the trigger's 'name=value' arguments into a; allowed lists the
 * names this trigger function takes.  ERRORs on anything else.
 */
extern void trig_parse_args(const TrigIdent *id, const Trigger *tg, const char *const *allowed,
		   TrigArgs *a);

/* ERROR for a required argument that is missing; example shows its form. */
extern void trig_require_arg(const TrigIdent *id, const char *value, const char *name, const char *example);

/*
 * Split a comma-separated list of column names, with SQL identifier rules
 * (unquoted names are folded to lower case, "Quoted" ones kept).
 */
extern List *trig_split_columns(const TrigIdent *id, const char *argname, const char *value);

/* The one column name an argument gives (identifier rules as above). */
extern char *trig_single_column(const TrigIdent *id, const char *argname, const char *value);

/* Attribute number of a user column of desc by name, or 0. */
extern AttrNumber trig_find_column(TupleDesc desc, const char *name);

/* find_column, ERRORing when absent (detail says why the name was used). */
extern AttrNumber trig_require_column(const TrigIdent *id, TupleDesc desc, const char *name, const char *detail);

/*
 * Re-raise the error being handled with the trigger named in front of its
 * message, keeping SQLSTATE, detail and hint.  Call only in PG_CATCH; cxt
 * is a context that outlives the error (not ErrorContext).
 */
extern void trig_rethrow_for_trigger(const TrigIdent *id, MemoryContext cxt) pg_attribute_noreturn();

/*
 * The active version of the model, held until mcxt dies; errors (model
 * missing, model unreadable) name the trigger.  Only single-output models.
 */
extern GsModelRef *trig_acquire_model(const TrigIdent *id, const char *name, MemoryContext mcxt);

/*
 * Resolve the feature columns of desc: those of the features argument (in
 * model order) or, without it, the model's feature names.  Checks count and
 * types; generated columns are refused when their values are not yet there
 * (before_row).  src[] is set to attnum - 1.
 */
extern void trig_resolve_features(const TrigIdent *id, TupleDesc desc, const GsModelRef *m,
				 const char *features, bool before_row, FeatureMap *fm);

/* Is a (non-missing) feature value out of what the engines accept? */
extern const char *trig_bad_value(double v);

/*
 * Write one row's features into dst[f * stride] as float32 (NULL and NaN
 * missing).  Returns -1, or the first feature whose value cannot be scored
 * (then *why says why and dst is partly written).
 */
extern int trig_read_features(const FeatureMap *fm, const Datum *values, const bool *nulls,
			  float *dst, size_t stride, const char **why);

/* The trigger is not of the kind the function needs: ERROR. */
extern void trig_wrong_kind(const TrigIdent *id, const char *func, const char *kind, const char *hint);

/* The trigger data of a call, ERRORing when not called as a trigger. */
extern TriggerData *trig_trigger_data(FunctionCallInfo fcinfo, const char *func, TrigIdent *id);

#endif							/* GS_TRIGGER_H */

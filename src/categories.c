/*
 * categories.c
 *	  Categorical features given as text, and the SQL functions that show a
 *	  model's category names: gpu_model_categories and gpu_category_code.
 *
 * A model trained on a pandas DataFrame with category columns keeps the
 * names of its categories (XGBoost 3.1 and later, LightGBM, skl2onnx's
 * OneHotEncoders and OrdinalEncoders of string columns; see
 * src/core/cat_names.h): code c of a feature is its c-th name.  A text,
 * varchar or char column for such a feature is looked up by name, exactly
 * (case and blanks count, char's trailing blanks aside), as the libraries
 * re-code a DataFrame.  A name the model does not know is what the library
 * makes it: an error for XGBoost, a missing value for LightGBM and one-hot
 * encoders, the default of an ordinal encoder.  Numbers stay category
 * codes everywhere.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_enum.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "core/cat_names.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_model_categories);
PG_FUNCTION_INFO_V1(gpuscore_gpu_category_code);

static const GsCatNames *
names_of(const GsModelRef *m)
{
	return gs_model_cat_names(m->model);
}

/* " (\"name\")" for feature f of m, or "" when it has no name. */
static const char *
feature_label(const GsModelRef *m, int f)
{
	const char *const *names = (const char *const *) m->model->feature_names;

	if (names == NULL || names[f] == NULL || names[f][0] == '\0')
		return "";
	return psprintf(" (\"%s\")", names[f]);
}

/* A text value for a message: at most 64 bytes of it, whole characters. */
static char *
shown(text *t)
{
	char	   *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	int			clip = pg_mbcliplen(s, len, 64);

	return psprintf("%.*s%s", clip, s, clip < len ? "..." : "");
}

/* Is a column of this kind looked up by category name? */
bool
gs_col_kind_is_text(GsColKind kind)
{
	return kind == GS_COL_TEXT || kind == GS_COL_BPCHAR || kind == GS_COL_ENUM;
}

/* The label of enum value d, as text. */
static text *
enum_label(Datum d)
{
	HeapTuple	tup = SearchSysCache1(ENUMOID, d);
	text	   *t;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid internal value for enum: %u", DatumGetObjectId(d))));
	t = cstring_to_text(NameStr(((Form_pg_enum) GETSTRUCT(tup))->enumlabel));
	ReleaseSysCache(tup);
	return t;
}

/* Whether feature f of m has category names; see gpuscore.h. */
bool
gs_feature_has_names(const GsModelRef *m, int f)
{
	return gs_catnames_takes_text(names_of(m), f);
}

/* Whether feature f of m can be given as text, or why not; see gpuscore.h. */
bool
gs_text_feature_ok(const GsModelRef *m, int f, const char *what, GsRowError *err)
{
	if (gs_feature_has_names(m, f))
		return true;
	gs_row_error_set(err, ERRCODE_DATATYPE_MISMATCH,
					 "%s is text, but feature %d%s of model \"%s\" has no category names",
					 what, f + 1, feature_label(m, f), m->name);
	if (names_of(m) == NULL)
		gs_row_error_detail(err, "The model keeps no category names.");
	else
		gs_row_error_detail(err, "The feature is not a categorical feature with named categories.");
	gs_row_error_hint(err, "Only the features gpu_model_categories('%s') lists take text; pass other features as numbers.", m->name);
	return false;
}

/* ERROR unless feature f of m can be given as text; see gpuscore.h. */
void
gs_check_text_feature(const GsModelRef *m, int f, const char *what)
{
	GsRowError	err;

	if (!gs_text_feature_ok(m, f, what, &err))
		gs_row_error_raise(&err);
}

/* Whether feature f of m is a category found by the hash of its name; see gpuscore.h. */
bool
gs_feature_hashed(const GsModelRef *m, int f)
{
	const GsCatNames *cn = names_of(m);

	return cn != NULL && f >= 0 && f < cn->n_features && cn->kind[f] == GS_CATNAMES_HASH;
}

/* Whether feature f of m can be given as a number column, or why not; see gpuscore.h. */
bool
gs_number_feature_ok(const GsModelRef *m, int f, const char *what, GsRowError *err)
{
	if (!gs_feature_hashed(m, f))
		return true;
	gs_row_error_set(err, ERRCODE_DATATYPE_MISMATCH,
					 "%s is a number, but feature %d%s of model \"%s\" is a category found by its name",
					 what, f + 1, feature_label(m, f), m->name);
	gs_row_error_detail(err, "The CatBoost file keeps no category names (it was saved without pool=): a category is given as text, which is hashed as CatBoost hashes it.");
	gs_row_error_hint(err, "Give an integer category as its decimal text, as CatBoost takes it (%s::text).",
					  m->model->feature_names && m->model->feature_names[f] ?
					  quote_identifier(m->model->feature_names[f]) : "the column");
	return false;
}

/* ERROR when feature f of m cannot be given as a number column; see gpuscore.h. */
void
gs_check_number_feature(const GsModelRef *m, int f, const char *what)
{
	GsRowError	err;

	if (!gs_number_feature_ok(m, f, what, &err))
		gs_row_error_raise(&err);
}

/*
 * The code of text value d (a GS_COL_TEXT, GS_COL_BPCHAR or GS_COL_ENUM
 * datum) for feature f of m, or NaN with *unknown set to the text when it is
 * a name XGBoost refuses (else *unknown is NULL).
 */
static float
text_code(const GsModelRef *m, int f, Datum d, GsColKind kind, text **unknown)
{
	text	   *t = kind == GS_COL_ENUM ? enum_label(d) : DatumGetTextPP(d);
	char	   *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	char	   *utf8;
	int32		code;

	*unknown = NULL;
	if (kind == GS_COL_BPCHAR)
		len = bpchartruelen(s, len);
	/* the same pointer, not terminated, when there is nothing to convert */
	utf8 = pg_server_to_any(s, len, PG_UTF8);
	code = gs_catnames_code(names_of(m), f, utf8, utf8 == s ? (size_t) len : strlen(utf8));
	if (code >= 0)
		return (float) code;
	/*
	 * LightGBM and ONNX one-hot encoders: an unknown category is missing; an
	 * ONNX LabelEncoder gives it its default (see cat_names.h)
	 */
	if (m->model->format != GS_FORMAT_XGBOOST_JSON && m->model->format != GS_FORMAT_XGBOOST_UBJ)
		return names_of(m)->unknown[f];
	*unknown = t;
	return NAN;
}

/* The error for category name t that XGBoost refuses, for feature f of m. */
static void
unknown_category_error(const GsModelRef *m, int f, text *t, GsRowError *err)
{
	gs_row_error_set(err, ERRCODE_INVALID_PARAMETER_VALUE,
					 "\"%s\" is not a category of feature %d%s of model \"%s\"",
					 shown(t), f + 1, feature_label(m, f), m->name);
	gs_row_error_detail(err, "XGBoost refuses categories a model was not trained with; this feature has %d.",
						gs_catnames_count(names_of(m), f));
	gs_row_error_hint(err, "gpu_model_categories('%s') lists them. Pass NULL to score the value as missing.",
					  m->name);
}

/* The code of text value d for feature f of m; see gpuscore.h. */
float
gs_text_feature(const GsModelRef *m, int f, Datum d, GsColKind kind, const char **why)
{
	text	   *unknown;
	float		code = text_code(m, f, d, kind, &unknown);
	GsRowError	err;

	if (unknown == NULL)
		return code;
	if (why != NULL)
	{
		*why = psprintf("holds \"%s\", which is not one of the model's categories", shown(unknown));
		return NAN;
	}
	unknown_category_error(m, f, unknown, &err);
	gs_row_error_raise(&err);
	return NAN;					/* keep compiler quiet */
}

/* The same, saying why not in err instead of raising; see gpuscore.h. */
bool
gs_text_feature_checked(const GsModelRef *m, int f, Datum d, GsColKind kind, float *out,
						GsRowError *err)
{
	text	   *unknown;

	*out = text_code(m, f, d, kind, &unknown);
	if (unknown == NULL)
		return true;
	unknown_category_error(m, f, unknown, err);
	return false;
}

/* The value of a NULL text value for feature f of m; see gpuscore.h. */
float
gs_text_null(const GsModelRef *m, int f)
{
	const GsCatNames *cn = names_of(m);

	return gs_catnames_takes_text(cn, f) ? cn->unknown[f] : NAN;
}

/*
 * At load: a NOTICE per feature whose categories are integers, since a
 * number given for it is a code, not a category (7995 is not "7995"); and
 * one for a model that keeps no names but finds categories by their hash.
 */
void
gs_notice_integer_categories(const char *name, const GsModel *gm)
{
	const GsCatNames *cn = gs_model_cat_names(gm);

	if (cn != NULL && cn->hash_name != NULL)
		ereport(NOTICE,
				(errmsg("model \"%s\" keeps no category names: its categorical features are given as text, which is hashed as CatBoost hashes it",
						name),
				 errdetail("The CatBoost file was saved without its training data (pool=). A column of numbers for a categorical feature is refused; in a feature array a number is a code from gpu_category_code()."),
				 errhint("Give an integer category as its decimal text, as CatBoost takes it (mcc::text).")));

	for (int f = 0; cn != NULL && f < gm->n_features; f++)
	{
		int			n = gs_catnames_count(cn, f);
		const char *fname = gm->feature_names && gm->feature_names[f] ? gm->feature_names[f] : NULL;

		if (n == 0 || cn->kind[f] != GS_CATNAMES_INT)
			continue;
		ereport(NOTICE,
				(errmsg("model \"%s\": feature %d%s has integer categories (%s%s%s%s%s): a number given for it is the category's code, 0 to %d, not the category",
						name, f + 1, fname ? psprintf(" (\"%s\")", fname) : "",
						gs_catnames_name(cn, f, 0), n > 1 ? ", " : "", n > 1 ? gs_catnames_name(cn, f, 1) : "",
						n > 2 ? ", " : "", n > 2 ? (n > 3 ? "..." : gs_catnames_name(cn, f, 2)) : "", n - 1),
				 errhint("Give the category as text (a text column, or %s::text), or its code from gpu_category_code().",
						 fname ? quote_identifier(fname) : "the value")));
	}
}

/*
 * gpu_model_categories(model text) RETURNS TABLE(feature integer,
 * feature_name text, code integer, category text): every category name of
 * the model, feature by feature, code by code.
 */
Datum
gpuscore_gpu_model_categories(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *name = gs_model_name_arg(fcinfo, 0);
	GsModelRef *m;
	const GsCatNames *cn;

	InitMaterializedSRF(fcinfo, 0);
	m = gs_model_acquire(name, CurrentMemoryContext);
	cn = names_of(m);
	for (int f = 0; cn != NULL && f < m->model->n_features; f++)
	{
		int			n = gs_catnames_count(cn, f);

		for (int c = 0; c < n; c++)
		{
			const char *cat = gs_catnames_name(cn, f, c);
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};

			if (cat == NULL)	/* a model that keeps only hashes */
				break;
			CHECK_FOR_INTERRUPTS();
			values[0] = Int32GetDatum(f + 1);
			if (m->model->feature_names && m->model->feature_names[f])
				values[1] = CStringGetTextDatum(m->model->feature_names[f]);
			else
				nulls[1] = true;
			values[2] = Int32GetDatum(c);
			values[3] = CStringGetTextDatum(pg_any_to_server(cat, (int) strlen(cat), PG_UTF8));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

/*
 * gpu_category_code(model text, feature text, category text) RETURNS
 * integer: the code of a category, to put in a feature array.  STRICT.
 * For a category the model does not know: NULL where that is a missing
 * value (LightGBM, one-hot encoders), an ordinal encoder's default, an
 * ERROR for XGBoost.
 */
Datum
gpuscore_gpu_category_code(PG_FUNCTION_ARGS)
{
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *feature = text_to_cstring(PG_GETARG_TEXT_PP(1));
	/* feature names are UTF-8 */
	const char *feature_utf8 = pg_server_to_any(feature, (int) strlen(feature), PG_UTF8);
	GsModelRef *m = gs_model_acquire(name, CurrentMemoryContext);
	char	  **fnames = m->model->feature_names;
	int			f = -1;
	float		code;

	for (int i = 0; fnames != NULL && i < m->model->n_features; i++)
		if (fnames[i] != NULL && strcmp(fnames[i], feature_utf8) == 0)
			f = i;
	if (f < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("model \"%s\" has no feature named \"%s\"", name, feature),
				 fnames == NULL ? errdetail("The model does not name its features.") : 0,
				 errhint("gpu_models.feature_names lists the names, gpu_model_categories('%s') the categorical features.",
						 name)));
	gs_check_text_feature(m, f, "the category");
	code = gs_text_feature(m, f, PG_GETARG_DATUM(2), GS_COL_TEXT, NULL);
	if (isnan(code))
		PG_RETURN_NULL();
	PG_RETURN_INT32((int32) code);
}

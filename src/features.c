/*
 * features.c
 *	  Turning SQL feature values into float32 model input.
 *
 * Missing values (SQL NULL, NaN) become NaN, which the engines send along
 * each node's default direction, as XGBoost does.  Infinite values are
 * rejected, as XGBoost rejects them, and so are double precision values
 * outside the range of real.  The column kinds say which SQL types can hold
 * a feature; gpu_score_query and the triggers share them.
 *
 * Columns stand for features by position (model order).  Where the model
 * names its features, a column named like a feature other than the one in
 * its place is taken for a mistake (the order of the columns differs from
 * the model's), as XGBoost and scikit-learn refuse such data, instead of
 * scoring every row with features swapped; LightGBM's made-up names
 * (Column_0, ...) are not names for this.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "gpuscore.h"

/* Classify a column type; see gpuscore.h. */
bool
gs_column_kind(Oid type, GsColKind *kind)
{
	/* a domain holds values of its base type */
	type = getBaseType(type);
	if (type_is_enum(type))
	{
		*kind = GS_COL_ENUM;
		return true;
	}
	switch (type)
	{
		case FLOAT4OID:
			*kind = GS_COL_FLOAT4;
			return true;
		case FLOAT8OID:
			*kind = GS_COL_FLOAT8;
			return true;
		case INT2OID:
			*kind = GS_COL_INT2;
			return true;
		case INT4OID:
			*kind = GS_COL_INT4;
			return true;
		case INT8OID:
			*kind = GS_COL_INT8;
			return true;
		case NUMERICOID:
			*kind = GS_COL_NUMERIC;
			return true;
		case BOOLOID:
			*kind = GS_COL_BOOL;
			return true;
		case FLOAT4ARRAYOID:
			*kind = GS_COL_FLOAT4_ARRAY;
			return true;
		case FLOAT8ARRAYOID:
			*kind = GS_COL_FLOAT8_ARRAY;
			return true;
		case NUMERICARRAYOID:
		case INT2ARRAYOID:
		case INT4ARRAYOID:
		case INT8ARRAYOID:
			*kind = GS_COL_NUMBER_ARRAY;
			return true;
		case TEXTOID:
		case VARCHAROID:
			*kind = GS_COL_TEXT;
			return true;
		case BPCHAROID:
			*kind = GS_COL_BPCHAR;
			return true;
	}
	return false;
}

/* Whether a column of this kind holds all features in one array; see gpuscore.h. */
bool
gs_col_kind_is_array(GsColKind kind)
{
	return kind == GS_COL_FLOAT4_ARRAY || kind == GS_COL_FLOAT8_ARRAY ||
		kind == GS_COL_NUMBER_ARRAY;
}

/* Convert one non-NULL scalar column value to double; see gpuscore.h. */
double
gs_datum_to_double(Datum d, GsColKind kind)
{
	switch (kind)
	{
		case GS_COL_FLOAT4:
			return DatumGetFloat4(d);
		case GS_COL_FLOAT8:
			return DatumGetFloat8(d);
		case GS_COL_INT2:
			return DatumGetInt16(d);
		case GS_COL_INT4:
			return DatumGetInt32(d);
		case GS_COL_INT8:
			return (double) DatumGetInt64(d);
		case GS_COL_NUMERIC:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d));
		case GS_COL_BOOL:
			return DatumGetBool(d) ? 1.0 : 0.0;
		default:
			break;
	}
	elog(ERROR, "unexpected column kind %d", (int) kind);
	return 0.0;
}

/* Check one input value (+-Inf, out of float32 range); see gpuscore.h. */
bool
gs_value_ok(const GsModelRef *m, int feature, double v, GsRowError *err)
{
	if (isinf(v))
	{
		gs_row_error_set(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
						 "feature %d of model \"%s\" is infinite", feature + 1, m->name);
		gs_row_error_hint(err, "Use NULL or NaN for a missing value.");
		return false;
	}
	if (!isnan(v) && fabs(v) > FLT_MAX)
	{
		gs_row_error_set(err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
						 "feature %d of model \"%s\" is out of range for type real", feature + 1, m->name);
		return false;
	}
	return true;
}

/* Check one input value; ERRORs on +-Inf or out of float32 range. */
void
gs_check_infinite(const GsModelRef *m, int feature, double v)
{
	GsRowError	err;

	if (!gs_value_ok(m, feature, v, &err))
		gs_row_error_raise(&err);
}

/* Copy a feature array into a float32 row, or say why not; see gpuscore.h. */
bool
gs_array_to_row_checked(ArrayType *arr, const GsModelRef *m, float *row, GsRowError *err)
{
	int			nf = m->model->n_features;
	int			n;
	Oid			elemtype = ARR_ELEMTYPE(arr);
	bits8	   *nulls = ARR_NULLBITMAP(arr);

	if (ARR_NDIM(arr) > 1)
	{
		gs_row_error_set(err, ERRCODE_ARRAY_SUBSCRIPT_ERROR,
						 "feature array must have one dimension, not %d", ARR_NDIM(arr));
		gs_row_error_hint(err, "Score one row per call, or use gpu_score_query() for many rows.");
		return false;
	}
	n = ARR_NDIM(arr) == 0 ? 0 : ARR_DIMS(arr)[0];
	if (n != nf)
	{
		gs_feature_count_error(m, n, err);
		return false;
	}

	if (elemtype == FLOAT4OID)
	{
		const float *src = (const float *) ARR_DATA_PTR(arr);
		int			k = 0;

		for (int i = 0; i < nf; i++)
		{
			if (nulls && !(nulls[i / 8] & (1 << (i % 8))))
				row[i] = NAN;
			else
			{
				float		v = src[k++];

				if (isinf(v) && !gs_value_ok(m, i, v, err))
					return false;
				row[i] = v;
			}
		}
	}
	else if (elemtype == FLOAT8OID)
	{
		const double *src = (const double *) ARR_DATA_PTR(arr);
		int			k = 0;

		for (int i = 0; i < nf; i++)
		{
			if (nulls && !(nulls[i / 8] & (1 << (i % 8))))
				row[i] = NAN;
			else
			{
				double		v = src[k++];

				if ((isinf(v) || (!isnan(v) && fabs(v) > FLT_MAX)) && !gs_value_ok(m, i, v, err))
					return false;
				row[i] = (float) v;
			}
		}
	}
	else
	{
		/* numeric, integer, bigint: convert element by element */
		int16		typlen;
		bool		typbyval;
		char		typalign;
		Datum	   *elems;
		bool	   *isnull;
		int			ne;

		get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
		deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &elems, &isnull, &ne);
		for (int i = 0; i < nf; i++)
		{
			double		v;

			if (isnull[i])
			{
				row[i] = NAN;
				continue;
			}
			switch (elemtype)
			{
				case NUMERICOID:
					v = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, elems[i]));
					break;
				case INT2OID:
					v = DatumGetInt16(elems[i]);
					break;
				case INT4OID:
					v = DatumGetInt32(elems[i]);
					break;
				case INT8OID:
					v = (double) DatumGetInt64(elems[i]);
					break;
				default:
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("features of type %s[] are not supported", format_type_be(elemtype)),
							 errhint("Pass real[], double precision[], numeric[], smallint[], integer[] or bigint[].")));
					v = 0;		/* keep compiler quiet */
			}
			if (!gs_value_ok(m, i, v, err))
			{
				pfree(elems);
				pfree(isnull);
				return false;
			}
			row[i] = (float) v;
		}
		pfree(elems);
		pfree(isnull);
	}
	return true;
}

/* The error of a feature array of n elements for m; see gpuscore.h. */
void
gs_feature_count_error(const GsModelRef *m, int n, GsRowError *err)
{
	gs_row_error_set(err, ERRCODE_INVALID_PARAMETER_VALUE,
					 "model \"%s\" expects %d features, got %d", m->name, m->model->n_features, n);
}

/* Copy a feature array into a float32 row; see gpuscore.h. */
void
gs_array_to_row(ArrayType *arr, const GsModelRef *m, float *row)
{
	GsRowError	err;

	if (!gs_array_to_row_checked(arr, m, row, &err))
		gs_row_error_raise(&err);
}

/*
 * One element of a feature array of type elemtype (not NULL) as float32
 * feature f of m, converted as gs_array_to_row converts it; see gpuscore.h.
 */
bool
gs_element_to_float(Datum d, Oid elemtype, const GsModelRef *m, int f, float *out,
					GsRowError *err)
{
	double		v;

	switch (elemtype)
	{
		case FLOAT4OID:
			{
				float		fv = DatumGetFloat4(d);

				if (isinf(fv) && !gs_value_ok(m, f, fv, err))
					return false;
				*out = fv;
				return true;
			}
		case FLOAT8OID:
			v = DatumGetFloat8(d);
			break;
		case NUMERICOID:
			v = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d));
			break;
		case INT2OID:
			v = DatumGetInt16(d);
			break;
		case INT4OID:
			v = DatumGetInt32(d);
			break;
		case INT8OID:
			v = (double) DatumGetInt64(d);
			break;
		default:
			elog(ERROR, "unexpected feature element type %u", elemtype);
			v = 0;				/* keep compiler quiet */
	}
	if ((isinf(v) || (!isnan(v) && fabs(v) > FLT_MAX)) && !gs_value_ok(m, f, v, err))
		return false;
	*out = (float) v;
	return true;
}

/*
 * The feature of m named name (UTF-8): exactly, or else without regard to
 * ASCII case when just one feature matches so; -1 when none.
 */
static int
feature_named(const GsModel *gm, const char *name)
{
	int			found = -1;
	int			n_ci = 0;

	for (int i = 0; i < gm->n_features; i++)
		if (gm->feature_names[i] != NULL && strcmp(gm->feature_names[i], name) == 0)
			return i;
	for (int i = 0; i < gm->n_features; i++)
		if (gm->feature_names[i] != NULL && pg_strcasecmp(gm->feature_names[i], name) == 0)
		{
			found = i;
			n_ci++;
		}
	return n_ci == 1 ? found : -1;
}

/*
 * Whether feature f's name is the one LightGBM makes up for an unnamed
 * feature ("Column_<f>", 0-based): such names say nothing about what the
 * column holds.
 */
static bool
generated_name(const GsModel *gm, int f)
{
	char		made[32];

	snprintf(made, sizeof(made), "Column_%d", f);
	return gm->feature_names[f] != NULL && strcmp(gm->feature_names[f], made) == 0;
}

/* Feature f's name for a message, in the server encoding. */
static const char *
shown_name(const GsModel *gm, int f)
{
	const char *n = gm->feature_names[f];

	return n == NULL ? "" : pg_any_to_server(n, (int) strlen(n), PG_UTF8);
}

/* Check a column given in model order against the feature names; see gpuscore.h. */
void
gs_check_feature_order(const GsModelRef *m, int f, const char *colname, const char *what)
{
	const GsModel *gm = m->model;
	int			j;

	if (gm->feature_names == NULL || colname == NULL)
		return;
	j = feature_named(gm, pg_server_to_any(colname, (int) strlen(colname), PG_UTF8));
	/* (a column "column_1" in the place of LightGBM's made-up "Column_0" is no sign) */
	if (j < 0 || j == f || (generated_name(gm, j) && generated_name(gm, f)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s \"%s\" stands for feature %d of model \"%s\" but is named like feature %d",
					what, colname, f + 1, m->name, j + 1),
			 errdetail("Features are read by position: feature %d is \"%s\", feature %d \"%s\".",
					   f + 1, shown_name(gm, f), j + 1, shown_name(gm, j)),
			 errhint("Give the feature columns in the order of gpu_models.feature_names, or rename the column if its name is a coincidence.")));
}

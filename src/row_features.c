/*
 * row_features.c
 *	  A model's features taken from a table's row by name: the whole-row
 *	  forms gpu_score('fraud', t) and gpu_predict('fraud', t), row by row
 *	  (scalar.c) and in batches (batch_exec.c).
 *
 * Feature f is the column named like the model's feature name f: exactly,
 * or else without regard to ASCII case when just one column matches so;
 * columns that are no feature are ignored.  A column becomes its feature as
 * gpu_score_query's columns do (features.c, categories.c): numbers and
 * booleans as float32, NULL as missing, text, char and enum values as the
 * category of that name for features with category names.  The shape (which
 * column is which feature, and whether its type can be) is found once per
 * row type and model (gs_row_map_build); its error, if any, is the error of
 * every row of that type.  Memory: the map lives in the caller's context.
 */
#include "postgres.h"

#include <math.h>

#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "gpuscore.h"

/* The column of desc named like feature name fname (UTF-8), or -1. */
static int
column_named(TupleDesc desc, const char *fname, int *n_ci)
{
	int			found = -1;

	*n_ci = 0;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const char *name;

		if (att->attisdropped)
			continue;
		name = pg_server_to_any(NameStr(att->attname), strlen(NameStr(att->attname)), PG_UTF8);
		if (strcmp(name, fname) == 0)
			return i;
	}
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const char *name;

		if (att->attisdropped)
			continue;
		name = pg_server_to_any(NameStr(att->attname), strlen(NameStr(att->attname)), PG_UTF8);
		if (pg_strcasecmp(name, fname) == 0)
		{
			found = i;
			(*n_ci)++;
		}
	}
	return *n_ci == 1 ? found : -1;
}

/* Feature f's name for a message, in the server encoding. */
static const char *
feature_shown(const GsModel *gm, int f)
{
	const char *n = gm->feature_names[f];

	return pg_any_to_server(n, (int) strlen(n), PG_UTF8);
}

/* Match the columns of row type desc to model m's features; see gpuscore.h. */
void
gs_row_map_build(TupleDesc desc, const GsModelRef *m, GsRowMap *map)
{
	const GsModel *gm = m->model;
	int			nf = gm->n_features;

	map->n_features = nf;
	map->column = palloc(sizeof(int) * nf);
	map->kind = palloc(sizeof(GsColKind) * nf);
	map->ok = true;
	if (gm->feature_names == NULL)
	{
		map->ok = false;
		gs_row_error_set(&map->err, ERRCODE_INVALID_PARAMETER_VALUE,
						 "model \"%s\" does not name its features, so they cannot be taken from a row by name",
						 m->name);
		gs_row_error_hint(&map->err, "Pass the features as an array in model order: gpu_score('%s', ARRAY[...]).",
						  m->name);
		return;
	}
	for (int f = 0; f < nf; f++)
	{
		int			n_ci;
		int			c;
		Form_pg_attribute att;
		const char *what;

		if (gm->feature_names[f] == NULL || gm->feature_names[f][0] == '\0')
		{
			map->ok = false;
			gs_row_error_set(&map->err, ERRCODE_INVALID_PARAMETER_VALUE,
							 "feature %d of model \"%s\" has no name, so it cannot be taken from a row",
							 f + 1, m->name);
			gs_row_error_hint(&map->err, "Pass the features as an array in model order.");
			return;
		}
		c = column_named(desc, gm->feature_names[f], &n_ci);
		if (c < 0)
		{
			map->ok = false;
			gs_row_error_set(&map->err, ERRCODE_UNDEFINED_COLUMN,
							 "row has no column for feature %d (\"%s\") of model \"%s\"",
							 f + 1, feature_shown(gm, f), m->name);
			if (n_ci > 1)
				gs_row_error_detail(&map->err, "%d columns are named like it but for case, and none exactly.", n_ci);
			else
				gs_row_error_detail(&map->err, "A row's columns are matched to the model's features by name.");
			gs_row_error_hint(&map->err, "gpu_models.feature_names lists the names; give the row the column, e.g. in a subquery (SELECT ..., x AS \"%s\").",
							  feature_shown(gm, f));
			return;
		}
		att = TupleDescAttr(desc, c);
		what = psprintf("column \"%s\"", NameStr(att->attname));
		if (!gs_column_kind(att->atttypid, &map->kind[f]) || gs_col_kind_is_array(map->kind[f]))
		{
			map->ok = false;
			gs_row_error_set(&map->err, ERRCODE_DATATYPE_MISMATCH,
							 "column \"%s\" has type %s, which cannot be a feature",
							 NameStr(att->attname), format_type_be(att->atttypid));
			gs_row_error_hint(&map->err, "Features must be real, double precision, numeric, integer or boolean, or text for a categorical feature with named categories.");
			return;
		}
		if (gs_col_kind_is_text(map->kind[f]) ?
			!gs_text_feature_ok(m, f, what, &map->err) :
			!gs_number_feature_ok(m, f, what, &map->err))
		{
			map->ok = false;
			return;
		}
		map->column[f] = c;
	}
}

/* One row's values as model input through map; see gpuscore.h. */
bool
gs_row_map_convert(const GsRowMap *map, const GsModelRef *m, const Datum *values,
				   const bool *nulls, float *row, GsRowError *err)
{
	if (!map->ok)
	{
		*err = map->err;
		return false;
	}
	for (int f = 0; f < map->n_features; f++)
	{
		int			c = map->column[f];
		GsColKind	kind = map->kind[f];
		float		v;

		if (nulls[c])
			v = gs_col_kind_is_text(kind) ? gs_text_null(m, f) : NAN;
		else if (kind == GS_COL_FLOAT4)
		{
			v = DatumGetFloat4(values[c]);
			if (isinf(v) && !gs_value_ok(m, f, v, err))
				return false;
		}
		else if (gs_col_kind_is_text(kind))
		{
			if (!gs_text_feature_checked(m, f, values[c], kind, &v, err))
				return false;
		}
		else
		{
			double		dv = gs_datum_to_double(values[c], kind);

			if (!gs_value_ok(m, f, dv, err))
				return false;
			v = (float) dv;
		}
		row[f] = v;
	}
	return true;
}

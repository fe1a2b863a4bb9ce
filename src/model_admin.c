/*
 * model_admin.c
 *	  Loads and drops of models: gpu_load_model, gpu_load_model_file,
 *	  gpu_drop_model, and their Citus forms (the replicas a coordinator
 *	  sends its workers, gpu_sync_models's sends).
 *
 * A model is parsed and validated (model_cache.c's gs_model_parse, in a
 * context of its own deleted before returning) before its row is written;
 * rows are written as the model table's owner (catalog.c).  Every change
 * sends a relcache invalidation for the table, which tells every backend's
 * model cache (model_cache.c) to look again; on a Citus coordinator it is
 * repeated on every worker in the same transaction (citus.c).
 */
#include "postgres.h"

#include <math.h>
#include <sys/stat.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "core/forest/forest_image.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_load_model);
PG_FUNCTION_INFO_V1(gpuscore_gpu_load_model_file);
PG_FUNCTION_INFO_V1(gpuscore_gpu_drop_model);
PG_FUNCTION_INFO_V1(gpuscore_gpu_load_model_replica);
PG_FUNCTION_INFO_V1(gpuscore_gpu_drop_model_replica);
PG_FUNCTION_INFO_V1(gpuscore_gpu_prune_models_replica);
PG_FUNCTION_INFO_V1(gpuscore_gpu_citus_send_model);
PG_FUNCTION_INFO_V1(gpuscore_gpu_citus_send_prune);

/* Send the invalidation that makes every backend re-check its model cache. */
static void
invalidate_model_caches(Oid relid)
{
	CacheInvalidateRelcacheByRelid(relid);
}

/*
 * The forest's image (forest_image.h) as a bytea datum, stored beside the
 * model so that sessions read it instead of parsing the model; *null 'n'
 * for networks and for images over a bytea's size.
 */
static Datum
forest_image_datum(const GsForest *forest, char *null)
{
	size_t		size;
	bytea	   *image;

	*null = 'n';
	/* networks have none */
	if (forest == NULL)
		return (Datum) 0;
	size = gs_forest_image_size(forest);
	if (size > MaxAllocSize - VARHDRSZ)
		return (Datum) 0;
	image = palloc(size + VARHDRSZ);
	SET_VARSIZE(image, size + VARHDRSZ);
	gs_forest_image_write(forest, (unsigned char *) VARDATA(image));
	*null = ' ';
	return PointerGetDatum(image);
}

/* Build a text[] datum of the model's feature names, or NULL. */
static Datum
feature_names_datum(const GsModel *f, bool *isnull)
{
	Datum	   *elems;

	if (f->feature_names == NULL)
	{
		*isnull = true;
		return (Datum) 0;
	}
	elems = palloc(sizeof(Datum) * f->n_features);
	for (int i = 0; i < f->n_features; i++)
		elems[i] = CStringGetTextDatum(f->feature_names[i]);
	*isnull = false;
	return PointerGetDatum(construct_array(elems, f->n_features, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * Whether name's stored row already holds version and exactly these bytes
 * (a replica sent again by gpu_sync_models: nothing to do).
 */
static bool
store_holds(const char *table, const char *name, int32 version, bytea *model)
{
	Oid			argtypes[3] = {TEXTOID, INT4OID, BYTEAOID};
	Datum		args[3] = {CStringGetTextDatum(name), Int32GetDatum(version), PointerGetDatum(model)};
	int			rc;

	rc = SPI_execute_with_args(psprintf("SELECT 1 FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
										"AND version OPERATOR(pg_catalog.=) $2 "
										"AND model OPERATOR(pg_catalog.=) $3", table),
							   3, argtypes, args, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	return SPI_processed == 1;
}

/*
 * The format of model bytes: format_name parsed, and for 'auto' detected
 * from the bytes; ERRORs for an unknown name, for another library's file
 * and for bytes of no format known.  An empty model stays 'auto' (its
 * parse says what is wrong).
 */
static GsModelFormat
model_format(const char *name, bytea *model, const char *format_name)
{
	GsModelFormat fmt;
	size_t		len = VARSIZE_ANY_EXHDR(model);

	if (gs_model_format_parse(format_name, &fmt) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown model format \"%s\"", format_name),
				 errhint("Use 'auto', 'xgboost-json', 'xgboost-ubj', 'xgboost-binary', 'lightgbm', 'catboost-json', 'onnx' or 'onnx-autoencoder'.")));
	if (fmt == GS_FORMAT_AUTO)
	{
		const char *hint;
		const char *kind;

		fmt = gs_model_detect_format((unsigned char *) VARDATA_ANY(model), len);
		kind = fmt == GS_FORMAT_AUTO ?
			gs_model_foreign_kind((unsigned char *) VARDATA_ANY(model), len, &hint) : NULL;
		if (kind)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" is %s, which gpu_load_model cannot read", name, kind),
					 errdetail("gpu_load_model reads XGBoost models (JSON, UBJSON or the binary format), LightGBM text models, CatBoost JSON models and ONNX."),
					 errhint("%s", hint)));
		if (fmt == GS_FORMAT_AUTO && len > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not detect the format of model \"%s\"", name),
					 errdetail("The bytes are neither an XGBoost model (JSON, UBJSON or the binary format), a LightGBM text model, a CatBoost JSON model nor ONNX."),
					 errhint("Save the model with its library's save_model (XGBoost: \"model.json\"); "
							 "pickled Python objects cannot be read.")));
	}
	return fmt;
}

/*
 * Give parsed model gm the missing value of gpu_load_model's argument
 * (NaN: none given), which only XGBoost models take; NOTICE when it
 * replaces the one the file holds, or when the file holds one and none was
 * given.
 */
static void
take_missing_value(const char *name, GsModel *gm, float missing_value)
{
	float		file_missing;

	if (!isnan(missing_value))
	{
		if ((gm->format != GS_FORMAT_XGBOOST_JSON && gm->format != GS_FORMAT_XGBOOST_UBJ &&
			 gm->format != GS_FORMAT_XGBOOST_BINARY) || (gm->mlp && !gm->mlp->linear_booster))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("model \"%s\" is not an XGBoost model: a missing value cannot be given for it", name),
					 errdetail("Only XGBoost takes a value other than NaN as missing (DMatrix(missing=...), XGBClassifier(missing=...))."),
					 errhint("Load it without missing_value.")));
		if (isinf(missing_value))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("missing value must be finite")));
		if (gs_model_missing_value(gm, &file_missing) && file_missing != missing_value)
			ereport(NOTICE,
					(errmsg("model \"%s\": missing value %g replaces the %g its file holds",
							name, (double) missing_value, (double) file_missing)));
		gs_model_set_missing_value(gm, missing_value);
	}
	else if (gs_model_missing_value(gm, &file_missing))
		ereport(NOTICE,
				(errmsg("model \"%s\": feature values equal to %g are missing values, as XGBoost's scikit-learn predict takes them",
						name, (double) file_missing),
				 errdetail("The model was saved by XGBoost's scikit-learn API with missing=%g; NULL and NaN are missing values too.",
						   (double) file_missing)));
}

/* The NOTICEs of a load: what the model scores otherwise than one might think. */
static void
load_notices(const char *name, const GsModel *gm)
{
	const GsForest *forest = gm->forest;

	if (forest && forest->load_note[0])
		ereport(NOTICE,
				(errmsg("model \"%s\": %s", name, forest->load_note),
				 errdetail("The model was saved by XGBoost's scikit-learn API after early stopping; a Booster's predict would use every round."),
				 errhint("To score every round, save it with model.get_booster().save_model(...).")));
	if (forest && forest->cat_note[0])
		ereport(NOTICE,
				(errmsg("model \"%s\": %s", name, forest->cat_note),
				 errdetail("Text cannot be given for such a feature; the features whose names are kept take text."),
				 errhint("Pass the feature's category codes: the positions of its categories in the training DataFrame's categories.")));
	gs_notice_integer_categories(name, gm);
	if (forest && forest->format == GS_FORMAT_LIGHTGBM && strcmp(forest->objective, "custom") == 0)
		ereport(NOTICE,
				(errmsg("model \"%s\" was trained with a custom objective: its scores are raw scores", name),
				 errdetail("The file names no objective, so it does not say how to turn raw scores into predictions; LightGBM's predict gives the raw scores too."),
				 errhint("Apply the objective's link in SQL, for example 1 / (1 + exp(-score)) after a logistic (focal) loss.")));
	if (forest && forest->format == GS_FORMAT_CATBOOST_JSON && strcmp(forest->objective, "none") == 0)
		ereport(NOTICE,
				(errmsg("model \"%s\" names no loss function: its scores are raw values", name),
				 errdetail("CatBoost writes none for a model made by catboost.sum_models; its predict gives the raw values too."),
				 errhint("Apply the loss function's link in SQL, for example 1 / (1 + exp(-score)) for a Logloss classifier.")));
}

/*
 * The objective column of gm: a forest's objective; for a network, what
 * its score is (an XGBoost objective for gblinear).
 */
static void
model_objective(const GsModel *gm, char *objective, size_t len)
{
	const GsMlp *mlp = gm->mlp;

	if (mlp && mlp->objective[0])
		strlcpy(objective, mlp->objective, len);
	else if (mlp)
		snprintf(objective, len, "%s",
				 mlp->reconstruction ? "reconstruction-error" : psprintf("mlp:%s", mlp->output_act));
	else
		strlcpy(objective, gm->forest->objective, len);
}

/*
 * Delete name's stored row (inside SPI, as the table's owner); returns the
 * version after the deleted one's, 1 when there was none.
 */
static int32
delete_row(const char *table, const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(name)};
	int32		version = 1;
	int			rc;

	rc = SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1 RETURNING version", table),
							   1, argtypes, args, NULL, false, 0);
	if (rc != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 1)
	{
		bool		isnull;

		version = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) + 1;
	}
	return version;
}

/*
 * Insert the row of model (parsed as gm, of format fmt) as version of name
 * (inside SPI, as the table's owner), with the columns the table of this
 * extension version has (relid).
 */
static void
insert_row(const char *table, Oid relid, const char *name, int32 version, GsModelFormat fmt,
		   const char *objective, const GsModel *gm, bytea *model, const char *loaded_by)
{
	const GsForest *forest = gm->forest;
	const GsMlp *mlp = gm->mlp;
	Oid			argtypes[18] = {TEXTOID, INT4OID, TEXTOID, TEXTOID, INT4OID, INT4OID,
	INT4OID, INT4OID, INT8OID, BYTEAOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT4OID, INT8OID, INT4OID,
	BYTEAOID, FLOAT4OID};
	Datum		args[18];
	char		nulls[18];
	bool		names_null;
	bool		has_images,
				has_missing;
	float		file_missing;
	int			rc;

	memset(nulls, ' ', sizeof(nulls));
	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	args[2] = CStringGetTextDatum(gs_model_format_name(fmt));
	args[3] = CStringGetTextDatum(objective);
	args[4] = Int32GetDatum(gm->n_features);
	args[5] = Int32GetDatum(gm->n_outputs);
	args[6] = Int32GetDatum(forest ? forest->n_trees : 0);
	args[7] = Int32GetDatum(forest ? forest->max_depth : 0);
	args[8] = Int64GetDatum((int64) VARSIZE_ANY_EXHDR(model));
	args[9] = PointerGetDatum(model);
	args[10] = CStringGetTextDatum(forest ? forest->saved_by : mlp->producer);
	if ((forest ? forest->saved_by : mlp->producer)[0] == '\0')
		nulls[10] = 'n';
	args[11] = feature_names_datum(gm, &names_null);
	if (names_null)
		nulls[11] = 'n';
	args[12] = CStringGetTextDatum(gs_model_kind_name(gm));
	args[13] = Int32GetDatum(mlp ? mlp->n_layers : 0);
	args[14] = Int64GetDatum(mlp ? mlp->n_params : 0);
	if (!mlp)
		nulls[13] = nulls[14] = 'n';
	args[15] = Int32GetDatum(forest ? forest->n_cat_splits : 0);
	if (!forest)
		nulls[15] = 'n';
	args[16] = forest_image_datum(forest, &nulls[16]);
	if (gs_model_missing_value(gm, &file_missing))
		args[17] = Float4GetDatum(file_missing);
	else
	{
		args[17] = Float4GetDatum(0.0f);
		nulls[17] = 'n';
	}
	has_images = gs_catalog_has_images(relid);
	has_missing = gs_catalog_has_missing_values(relid);
	Assert(has_images || !has_missing);
	rc = SPI_execute_with_args(psprintf("INSERT INTO %s (name, version, format, objective, n_features, "
										"n_outputs, n_trees, max_depth, size_bytes, model, saved_by, "
										"feature_names, kind, n_layers, n_parameters, categorical_splits, "
										"%s%sloaded_by) "
										"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, %s%s%s)",
										table, has_images ? "compiled, " : "",
										has_missing ? "missing_value, " : "",
										has_images ? "$17, " : "", has_missing ? "$18, " : "",
										quote_literal_cstr(loaded_by)),
							   has_missing ? 18 : has_images ? 17 : 16, argtypes, args, nulls, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
}

/*
 * Validate model bytes and store them as the new active version of name.
 * missing_value (NaN: none given) is a value the model takes as missing
 * besides NaN, for XGBoost models whose file cannot say (see
 * gpu_load_model).  Returns the new version number.  replica_version > 0:
 * a Citus coordinator's load repeated on this worker (citus.c), stored as
 * that version and not sent on; otherwise a Citus coordinator sends the
 * load to every worker in this transaction.
 */
static int32
store_model(const char *name, bytea *model, const char *format_name, float missing_value,
			int32 replica_version)
{
	GsModelFormat fmt;
	GsModel    *gm;
	char		objective[64];
	MemoryContext parse_cxt;
	Oid			relid,
				owner;
	char	   *table;
	GsOwnerSwitch sw;
	int32		version;
	char	   *loaded_by = GetUserNameFromId(GetUserId(), false);

	if (replica_version == 0)
		gs_citus_check_direct_change("gpu_load_model()");
	fmt = model_format(name, model, format_name);

	/* parse and validate: the model gives the metadata and is thrown away */
	parse_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_gpuscore model validation",
									  ALLOCSET_DEFAULT_SIZES);
	gm = gs_model_parse(name, (unsigned char *) VARDATA_ANY(model), VARSIZE_ANY_EXHDR(model),
						fmt, parse_cxt);
	take_missing_value(name, gm, missing_value);
	load_notices(name, gm);
	model_objective(gm, objective, sizeof(objective));

	table = gs_catalog_table(&relid, &owner);

	/* serialize concurrent loads of the same name */
	LockDatabaseObject(RelationRelationId, relid, 0, ShareUpdateExclusiveLock);

	gs_catalog_become_owner(owner, &sw);
	SPI_connect();
	if (replica_version > 0 && store_holds(table, name, replica_version, model))
	{
		SPI_finish();
		gs_catalog_restore_user(&sw);
		MemoryContextDelete(parse_cxt);
		return replica_version;
	}
	version = delete_row(table, name);
	if (replica_version > 0)
		version = replica_version;
	insert_row(table, relid, name, version, fmt, objective, gm, model, loaded_by);
	SPI_finish();
	gs_catalog_restore_user(&sw);

	invalidate_model_caches(relid);
	MemoryContextDelete(parse_cxt);
	if (replica_version == 0)
		gs_citus_propagate_load(name, model, gs_model_format_name(fmt), missing_value, version);
	return version;
}

/*
 * Refuse to change the catalog in a read-only transaction, with the hint
 * that matters on a hot standby, before anything is read or locked (a lock
 * taken first would fail with a message about lock modes instead).
 */
static void
refuse_if_read_only(const char *what)
{
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot execute %s in a read-only transaction", what),
				 RecoveryInProgress() ?
				 errhint("This server is a hot standby: load and drop models on the primary; the standby scores them once it has replayed the change.") : 0));
}

/* Text argument argno, or ERROR naming what is NULL. */
static char *
text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/*
 * The missing value argument argno of gpu_load_model's 4-argument form, or
 * NaN (none) when the call has no such argument or it is NULL.
 */
static float
missing_value_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return NAN;
	return PG_GETARG_FLOAT4(argno);
}

/*
 * gpu_load_model(name text, model bytea, format text DEFAULT 'auto'
 *				  [, missing_value real]) RETURNS integer: validate and store
 * a new active version.
 */
Datum
gpuscore_gpu_load_model(PG_FUNCTION_ARGS)
{
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *format;
	bytea	   *model;

	refuse_if_read_only("gpu_load_model()");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model bytes must not be null")));
	format = text_arg(fcinfo, 2, "model format");
	model = PG_GETARG_BYTEA_PP(1);
	PG_RETURN_INT32(store_model(name, model, format, missing_value_arg(fcinfo, 3), 0));
}

/* Read a whole server file into a bytea, checking the size cap first. */
static bytea *
read_model_file(const char *path)
{
	struct stat st;
	FILE	   *file;
	bytea	   *buf;
	size_t		nread;

	if (stat(path, &st) < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat file \"%s\": %m", path)));
	if (S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a directory", path)));
	if ((uint64) st.st_size > (uint64) gs_max_model_size_kb * 1024 ||
		(uint64) st.st_size > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model file \"%s\" is %lld bytes, more than the limit of %lld bytes",
						path, (long long) st.st_size, (long long) gs_max_model_size_kb * 1024),
				 errhint("The pg_gpuscore.max_model_size setting holds the limit.")));
	file = AllocateFile(path, PG_BINARY_R);
	if (file == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\" for reading: %m", path)));
	buf = palloc(VARHDRSZ + st.st_size);
	nread = fread(VARDATA(buf), 1, st.st_size, file);
	if (ferror(file) || nread != (size_t) st.st_size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", path)));
	FreeFile(file);
	SET_VARSIZE(buf, VARHDRSZ + nread);
	return buf;
}

/*
 * gpu_load_model_file(name text, path text, format text DEFAULT 'auto')
 * RETURNS integer: like gpu_load_model, reading a file on the server.
 * Only members of pg_read_server_files may use it.
 */
Datum
gpuscore_gpu_load_model_file(PG_FUNCTION_ARGS)
{
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *path = text_arg(fcinfo, 1, "model file path");
	char	   *format = text_arg(fcinfo, 2, "model format");

	refuse_if_read_only("gpu_load_model_file()");
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read model files on the server"),
				 errdetail("Only roles with privileges of the \"pg_read_server_files\" role may read server files."),
				 errhint("Use gpu_load_model(name, bytes) to load a model sent by the client.")));
	if (!is_absolute_path(path))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model file path must be absolute: \"%s\"", path)));
	PG_RETURN_INT32(store_model(name, read_model_file(path), format, missing_value_arg(fcinfo, 3), 0));
}

/*
 * Delete the stored models whose rows match cond (SQL over the table's
 * columns, with $1 of type argtype), as the table's owner, under the lock
 * loads take; the model caches are told when any went.  Returns how many.
 */
static uint64
delete_models(const char *cond, Oid argtype, Datum arg)
{
	Oid			relid,
				owner;
	char	   *table;
	GsOwnerSwitch sw;
	uint64		n;
	int			rc;

	table = gs_catalog_table(&relid, &owner);
	LockDatabaseObject(RelationRelationId, relid, 0, ShareUpdateExclusiveLock);
	gs_catalog_become_owner(owner, &sw);
	SPI_connect();
	rc = SPI_execute_with_args(psprintf("DELETE FROM %s WHERE %s", table, cond),
							   1, &argtype, &arg, NULL, false, 0);
	if (rc != SPI_OK_DELETE)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	n = SPI_processed;
	SPI_finish();
	gs_catalog_restore_user(&sw);
	if (n > 0)
		invalidate_model_caches(relid);
	return n;
}

/*
 * Remove a model; true when it existed.  replica: a Citus coordinator's
 * drop repeated on this worker, not sent on.
 */
static bool
drop_model(const char *name, bool replica)
{
	refuse_if_read_only("gpu_drop_model()");
	if (!replica)
		gs_citus_check_direct_change("gpu_drop_model()");
	if (delete_models("name OPERATOR(pg_catalog.=) $1", TEXTOID, CStringGetTextDatum(name)) == 0)
		return false;
	if (!replica)
		gs_citus_propagate_drop(name);
	return true;
}

/*
 * gpu_drop_model(name text, missing_ok boolean DEFAULT false) RETURNS boolean:
 * remove a model (all of it).  Returns false when missing_ok and absent.
 */
Datum
gpuscore_gpu_drop_model(PG_FUNCTION_ARGS)
{
	const char *name = gs_model_name_arg(fcinfo, 0);
	bool		missing_ok = !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);

	if (drop_model(name, false))
		PG_RETURN_BOOL(true);
	if (missing_ok)
		PG_RETURN_BOOL(false);
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("model \"%s\" does not exist", name)));
	PG_RETURN_NULL();			/* not reached */
}

/*
 * gpu_load_model_replica(name, model, format, missing_value, version):
 * a Citus coordinator's load on this worker (citus.c; superuser only).
 */
Datum
gpuscore_gpu_load_model_replica(PG_FUNCTION_ARGS)
{
	const char *name = gs_model_name_arg(fcinfo, 0);
	char	   *format = text_arg(fcinfo, 2, "model format");
	int32		version;

	refuse_if_read_only("gpu_load_model_replica()");
	if (PG_ARGISNULL(1) || PG_ARGISNULL(4) || PG_GETARG_INT32(4) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_load_model_replica needs model bytes and a positive version")));
	version = PG_GETARG_INT32(4);
	PG_RETURN_INT32(store_model(name, PG_GETARG_BYTEA_PP(1), format, missing_value_arg(fcinfo, 3),
								version));
}

/* gpu_drop_model_replica(name): a Citus coordinator's drop on this worker. */
Datum
gpuscore_gpu_drop_model_replica(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(drop_model(gs_model_name_arg(fcinfo, 0), true));
}

/*
 * gpu_prune_models_replica(keep text[]): drop on this worker every model
 * whose name is not in keep (gpu_sync_models); returns how many.
 */
Datum
gpuscore_gpu_prune_models_replica(PG_FUNCTION_ARGS)
{
	refuse_if_read_only("gpu_prune_models_replica()");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the names to keep must not be null")));
	PG_RETURN_INT64((int64) delete_models("NOT (name OPERATOR(pg_catalog.=) ANY ($1))", TEXTARRAYOID,
										  PG_GETARG_DATUM(0)));
}

/*
 * gpu_citus_send_model(name, model, format, missing_value, version) and
 * gpu_citus_send_prune(keep text[]): what gpu_sync_models sends every
 * worker, in this transaction (nothing without Citus).
 */
Datum
gpuscore_gpu_citus_send_model(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("gpu_citus_send_model needs a name, bytes, a format and a version")));
	gs_citus_propagate_load(text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_BYTEA_PP(1),
							text_to_cstring(PG_GETARG_TEXT_PP(2)), missing_value_arg(fcinfo, 3),
							PG_GETARG_INT32(4));
	PG_RETURN_VOID();
}

Datum
gpuscore_gpu_citus_send_prune(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the names to keep must not be null")));
	gs_citus_propagate_prune(PG_GETARG_ARRAYTYPE_P(0));
	PG_RETURN_VOID();
}

/*
 * catalog.c
 *	  The model table (@extschema@.gpu_model_store): where it is, its
 *	  columns, working on it as its owner, and the row lookups the model
 *	  cache uses.
 *
 * Models live in @extschema@.gpu_model_store, one row per model name holding
 * the active version.  Nobody but the extension owner may touch that table
 * directly; the functions here and the loads and drops of model_admin.c
 * read and write it as the table's owner, so a model always passes
 * validation before it is stored.  Rows fetched are copied into the
 * caller's CurrentMemoryContext.
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "gpuscore.h"

/* Schema of an extension (PostgreSQL 15 does not export its own). */
static Oid
extension_schema(Oid extoid)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/* Oid of the model table; see gpuscore.h. */
Oid
gs_catalog_relid(void)
{
	Oid			extoid = get_extension_oid("pg_gpuscore", true);
	Oid			nsp;

	if (!OidIsValid(extoid))
		return InvalidOid;
	nsp = extension_schema(extoid);
	if (!OidIsValid(nsp))
		return InvalidOid;
	return get_relname_relid("gpu_model_store", nsp);
}

/* Schema-qualified, quoted name of the model table; see gpuscore.h. */
char *
gs_catalog_table(Oid *relid_out, Oid *owner_out)
{
	Oid			relid = gs_catalog_relid();
	HeapTuple	tup;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"pg_gpuscore\" is not installed in this database")));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	*owner_out = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	*relid_out = relid;
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  "gpu_model_store");
}

/* Whether the model table has the forest image column; see gpuscore.h. */
bool
gs_catalog_has_images(Oid relid)
{
	return get_attnum(relid, "compiled") != InvalidAttrNumber;
}

/* The same for the column of the value taken as missing; see gpuscore.h. */
bool
gs_catalog_has_missing_values(Oid relid)
{
	return get_attnum(relid, "missing_value") != InvalidAttrNumber;
}

/* Become the model table's owner; see gpuscore.h. */
void
gs_catalog_become_owner(Oid owner, GsOwnerSwitch *sw)
{
	GetUserIdAndSecContext(&sw->save_userid, &sw->save_sec_context);
	SetUserIdAndSecContext(owner, sw->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

/* Back to the caller's identity; see gpuscore.h. */
void
gs_catalog_restore_user(const GsOwnerSwitch *sw)
{
	SetUserIdAndSecContext(sw->save_userid, sw->save_sec_context);
}

/* Fetch the stored model row; see gpuscore.h. */
bool
gs_catalog_fetch(const char *name, int64 *model_id, int32 *version,
				 GsModelFormat *fmt, bytea **bytes, bytea **image, float *missing_value)
{
	Oid			relid,
				owner;
	char	   *table = gs_catalog_table(&relid, &owner);
	GsOwnerSwitch sw;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(name)};
	MemoryContext caller = CurrentMemoryContext;
	bool		found = false;
	int			rc;

	gs_catalog_become_owner(owner, &sw);
	SPI_connect();
	rc = SPI_execute_with_args(psprintf("SELECT model_id, version, format, %s, %s, %s FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
										bytes ? "model" : "NULL::pg_catalog.bytea",
										image && gs_catalog_has_images(relid) ? "compiled" : "NULL::pg_catalog.bytea",
										missing_value && gs_catalog_has_missing_values(relid) ?
										"missing_value" : "NULL::pg_catalog.float4",
										table),
							   1, argtypes, args, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		char	   *fmtname;

		found = true;
		*model_id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		*version = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
		fmtname = SPI_getvalue(tup, desc, 3);
		if (fmt && (fmtname == NULL || gs_model_format_parse(fmtname, fmt) != 0))
			*fmt = GS_FORMAT_AUTO;
		for (int col = 4; col <= 5; col++)
		{
			bytea	  **out = col == 4 ? bytes : image;
			Datum		d;
			MemoryContext old;

			if (out == NULL)
				continue;
			d = SPI_getbinval(tup, desc, col, &isnull);
			old = MemoryContextSwitchTo(caller);
			*out = isnull ? NULL : DatumGetByteaPCopy(d);
			MemoryContextSwitchTo(old);
		}
		if (missing_value)
		{
			Datum		d = SPI_getbinval(tup, desc, 6, &isnull);

			*missing_value = isnull ? NAN : DatumGetFloat4(d);
		}
	}
	SPI_finish();
	gs_catalog_restore_user(&sw);
	return found;
}

/* Fetch only the identity of the stored model; see gpuscore.h. */
bool
gs_catalog_identity(const char *name, int64 *model_id, int32 *version)
{
	return gs_catalog_fetch(name, model_id, version, NULL, NULL, NULL, NULL);
}

/*
 * citus.c
 *	  Models on every node of a Citus cluster: gpu_load_model and
 *	  gpu_drop_model on the coordinator repeat themselves on every worker
 *	  in the same distributed transaction.
 *
 * Each node keeps its own gpu_model_store (a plain local table: a
 * worker's shard queries read it as any backend does, and its writes send
 * the relcache invalidation that every session's model cache watches).  On
 * a Citus coordinator, a load or drop that succeeded locally sends
 * gpu_load_model_replica / gpu_drop_model_replica to every worker through
 * Citus's own coordinated transaction (SendCommandToWorkersWithMetadataViaSuperUser:
 * committed on the workers with two-phase commit when the local transaction
 * commits, rolled back everywhere when any node fails), with the
 * coordinator's version number, so the version is one cluster-wide and a
 * load that fails on one node changes no node.
 *
 * Citus is never a build or load dependency: its function is looked up
 * with dlsym when the citus extension exists in this database (citus.so is
 * then in shared_preload_libraries, loaded RTLD_GLOBAL).  Without Citus,
 * nothing here does anything.
 */
#include "postgres.h"

#include <dlfcn.h>
#include <math.h>

#include "commands/extension.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "gpuscore.h"

typedef void (*SendToWorkersFn) (const char *command);

/*
 * This node's Citus group: 0 on the coordinator (or a node that is not
 * part of a cluster), above 0 on a worker; -1 when Citus is not installed
 * in this database.
 */
static int32
citus_group(void)
{
	int32		group = -1;
	bool		isnull;

	if (!OidIsValid(get_extension_oid("citus", true)))
		return -1;
	SPI_connect();
	if (SPI_execute("SELECT groupid FROM pg_catalog.pg_dist_local_group", true, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			group = DatumGetInt32(d);
	}
	SPI_finish();
	return group;
}

/*
 * On a Citus coordinator, Citus's function that sends a command to every
 * worker in this transaction; NULL anywhere else (no Citus, or a worker).
 */
static SendToWorkersFn
coordinator_sender(void)
{
	SendToWorkersFn send;

	if (citus_group() != 0)
		return NULL;
	send = (SendToWorkersFn) dlsym(RTLD_DEFAULT, "SendCommandToWorkersWithMetadataViaSuperUser");
	if (send == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the citus extension is installed but its library is not loaded"),
				 errhint("Add citus to shared_preload_libraries.")));
	return send;
}

/* Schema-qualified name of one of the extension's functions, quoted. */
static char *
extension_function(const char *fn)
{
	Oid			relid = gs_catalog_relid();

	return psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))), fn);
}

/*
 * Refuse a direct load or drop on a Citus worker: the cluster's models are
 * changed on the coordinator, which changes them on every node.
 */
void
gs_citus_check_direct_change(const char *what)
{
	if (citus_group() <= 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot execute %s on a Citus worker", what),
			 errdetail("The models of a Citus cluster are loaded and dropped on the coordinator, which puts them on every node in one transaction."),
			 errhint("Run %s on the coordinator.", what)));
}

/* Send command to every worker when this is a Citus coordinator. */
static void
send_if_coordinator(const char *command)
{
	SendToWorkersFn send = coordinator_sender();

	if (send != NULL)
		send(command);
}

/* Repeat a load on every worker; see gpuscore.h. */
void
gs_citus_propagate_load(const char *name, bytea *model, const char *format_name,
						float missing_value, int32 version)
{
	SendToWorkersFn send = coordinator_sender();
	StringInfoData cmd;
	size_t		len = VARSIZE_ANY_EXHDR(model);

	if (send == NULL)
		return;
	initStringInfo(&cmd);
	appendStringInfo(&cmd, "SELECT %s(%s, '\\x", extension_function("gpu_load_model_replica"),
					 quote_literal_cstr(name));
	enlargeStringInfo(&cmd, (int) (len * 2 + 128));
	cmd.len += (int) hex_encode(VARDATA_ANY(model), len, cmd.data + cmd.len);
	cmd.data[cmd.len] = '\0';
	appendStringInfo(&cmd, "'::pg_catalog.bytea, %s, ", quote_literal_cstr(format_name));
	if (isnan(missing_value))
		appendStringInfoString(&cmd, "NULL");
	else
		appendStringInfo(&cmd, "%.9g::pg_catalog.float4", (double) missing_value);
	appendStringInfo(&cmd, ", %d)", version);
	send(cmd.data);
	pfree(cmd.data);
}

/* Repeat a drop on every worker; see gpuscore.h. */
void
gs_citus_propagate_drop(const char *name)
{
	send_if_coordinator(psprintf("SELECT %s(%s)", extension_function("gpu_drop_model_replica"),
								 quote_literal_cstr(name)));
}

/* Drop on every worker the models whose names are not in keep; see gpuscore.h. */
void
gs_citus_propagate_prune(ArrayType *keep)
{
	Datum		d = PointerGetDatum(keep);
	Oid			out;
	bool		varlena;

	getTypeOutputInfo(TEXTARRAYOID, &out, &varlena);
	send_if_coordinator(psprintf("SELECT %s(%s::pg_catalog.text[])",
								 extension_function("gpu_prune_models_replica"),
								 quote_literal_cstr(OidOutputFunctionCall(out, d))));
}

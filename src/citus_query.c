/*
 * citus_query.c
 *	  gpu_score_query and gpu_predict_query on a Citus coordinator: a query
 *	  on distributed tables is rewritten so that every worker scores the
 *	  rows of its own shards.
 *
 * The user's query becomes the subquery of
 *
 *	 SELECT u.gs_key::bigint, gpu_score('m', ARRAY[u.gs_1, ...])
 *	   FROM (<query>) AS u(gs_key, gs_1, ...)
 *
 * (gpu_predict for gpu_predict_query).  The array is real[] when every
 * feature column is real, else double precision[] of the columns cast
 * (booleans through integer): gs_array_to_row then converts each value
 * exactly as the query form converts the column (features.c), so the scores
 * are those of one node.  With one array column of features it is that
 * column, coalesce()d with an array of NULLs, since the query form reads a
 * NULL array as a row of missing values where gpu_score returns NULL.
 * Citus pushes such a query into every shard, where the batched gpu_score
 * calls (batch_plan.c) score each shard in columnar batches on the worker,
 * and only the (key, score) pairs come back.  (The whole-row form cannot
 * be used: Citus deparses the subquery's row as ROW(...), which loses the
 * column names it is read by.)  The rewrite is used only when it is exact
 * and pushed down whole: one SELECT without ORDER BY, LIMIT / OFFSET, FOR
 * UPDATE or data-modifying WITH (whose order or effects a subquery would
 * not keep); no text feature (a category by name, which an array cannot
 * hold); and the plans of both the query and its rewrite topped by Citus's
 * own scan with no expression computed above it.  Otherwise (and always
 * without Citus) the caller runs the query as on one node.  The query's
 * shape is checked against the model first, with the errors of one node.
 *
 * Memory: everything is allocated in the caller's context inside its SPI
 * connection; the rows go straight into the caller's result tuplestore.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "executor/tstoreReceiver.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"

#include "gpuscore.h"

/*
 * Whether a prepared statement's one query is a plain SELECT that keeps its
 * meaning as a subquery: no ORDER BY or LIMIT (a subquery's order is not
 * the result's), no row locks, no data-modifying WITH.  *text receives the
 * statement's own text (without a trailing semicolon) and *desc its columns.
 */
static bool
plain_select(SPIPlanPtr plan, char **text, TupleDesc *desc)
{
	List	   *sources = SPI_plan_get_plan_sources(plan);
	CachedPlanSource *ps;
	Query	   *q;
	RawStmt    *raw;

	if (list_length(sources) != 1)
		return false;
	ps = linitial(sources);
	if (ps->resultDesc == NULL || ps->raw_parse_tree == NULL || list_length(ps->query_list) != 1)
		return false;
	q = linitial_node(Query, ps->query_list);
	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL || q->hasModifyingCTE ||
		q->sortClause != NIL || q->limitCount != NULL || q->limitOffset != NULL ||
		q->rowMarks != NIL)
		return false;
	raw = ps->raw_parse_tree;
	if (raw->stmt_location < 0)
		return false;
	*text = raw->stmt_len > 0 ?
		pnstrdup(ps->query_string + raw->stmt_location, raw->stmt_len) :
		pstrdup(ps->query_string + raw->stmt_location);
	*desc = ps->resultDesc;
	return true;
}

/* Schema-qualified name of one of the extension's functions, quoted. */
static char *
extension_function(const char *fn)
{
	Oid			relid = gs_catalog_relid();

	return psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))), fn);
}

/*
 * The rewritten query for the user's query (text, columns desc) and model
 * m, or NULL when a feature is text (a category by name, which an array
 * cannot hold).
 */
static char *
rewritten_query(const GsModelRef *m, const char *text, TupleDesc desc,
				const GsQueryShape *shape, bool all_outputs)
{
	const char *fn = extension_function(all_outputs ? "gpu_predict" : "gpu_score");
	char	   *name = quote_literal_cstr(m->name);
	StringInfoData s;

	if (shape->array_features)
	{
		Oid			elem = get_element_type(TupleDescAttr(desc, 1)->atttypid);

		return psprintf("SELECT u.gs_key::pg_catalog.int8, %s(%s, coalesce(u.gs_features, "
						"pg_catalog.array_fill(NULL::%s, ARRAY[%d]))) FROM (\n%s\n) AS u(gs_key, gs_features)",
						fn, name, format_type_be_qualified(elem), m->model->n_features, text);
	}
	for (int i = 1; i < desc->natts; i++)
		if (gs_col_kind_is_text(shape->kinds[i]))
			return NULL;
	initStringInfo(&s);
	appendStringInfo(&s, "SELECT u.gs_key::pg_catalog.int8, %s(%s, ARRAY[", fn, name);
	for (int i = 1; i < desc->natts; i++)
		appendStringInfo(&s, "%su.gs_%d%s", i > 1 ? ", " : "", i,
						 shape->all_float4 ? "" :
						 shape->kinds[i] == GS_COL_BOOL ? "::pg_catalog.int4::pg_catalog.float8" :
						 "::pg_catalog.float8");
	appendStringInfo(&s, "]) FROM (\n%s\n) AS u(gs_key", text);
	for (int i = 1; i < desc->natts; i++)
		appendStringInfo(&s, ", gs_%d", i);
	appendStringInfoChar(&s, ')');
	return s.data;
}

/*
 * Whether plan runs wholly in Citus's distributed scan: its top node is a
 * Citus custom scan whose output columns are plain columns of the workers'
 * results (nothing, gpu_score least of all, is computed on this node).
 */
static bool
pushed_down(SPIPlanPtr plan)
{
	CachedPlan *cplan = SPI_plan_get_cached_plan(plan);
	bool		ok = false;

	if (cplan == NULL)
		return false;
	if (list_length(cplan->stmt_list) == 1)
	{
		PlannedStmt *stmt = linitial_node(PlannedStmt, cplan->stmt_list);
		Plan	   *top = stmt->planTree;

		if (top != NULL && IsA(top, CustomScan) &&
			strncmp(((CustomScan *) top)->methods->CustomName, "Citus", 5) == 0)
		{
			ListCell   *lc;

			ok = true;
			foreach(lc, top->targetlist)
				ok &= IsA(((TargetEntry *) lfirst(lc))->expr, Var);
		}
	}
	ReleaseCachedPlan(cplan, NULL);
	return ok;
}

/* The context line of an error in the user's query, as SPI writes it. */
static void
query_error_context(void *arg)
{
	errcontext("SQL statement \"%s\"", (const char *) arg);
}

/* Score query on the Citus workers if it can be; see gpuscore.h. */
bool
gs_citus_score_query(const GsModelRef *m, const char *query, ReturnSetInfo *rsinfo,
					 bool all_outputs)
{
	SPIPlanPtr	plan;
	char	   *text;
	TupleDesc	desc;
	GsQueryShape shape;
	char	   *sql;
	SPIExecuteOptions options;
	DestReceiver *dest;
	int			rc;
	ErrorContextCallback errcb;

	if (!OidIsValid(get_extension_oid("citus", true)))
		return false;
	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_PARALLEL_OK);
	/* (planned here, a query on local tables is planned again by the caller) */
	if (plan == NULL || !plain_select(plan, &text, &desc) || !pushed_down(plan))
		return false;
	/* (with the context line SPI gives the same error on one node) */
	errcb.callback = query_error_context;
	errcb.arg = (void *) query;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	gs_query_shape(desc, m, &shape);
	error_context_stack = errcb.previous;
	sql = rewritten_query(m, text, desc, &shape, all_outputs);
	if (sql == NULL)
		return false;
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (!pushed_down(plan))
		return false;

	dest = CreateDestReceiver(DestTuplestore);
	SetTuplestoreDestReceiverParams(dest, rsinfo->setResult, CurrentMemoryContext, false,
									NULL, NULL);
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = dest;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(rc));
	dest->rDestroy(dest);
	return true;
}

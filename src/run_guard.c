/*
 * run_guard.c
 *	  The run lock of gpu_score_table and the short deferral of query cancels
 *	  around each of its COMMITs.
 *
 * gpu_score_table (PL/pgSQL, sql/pg_gpuscore--*.sql) commits each batch.  A
 * COMMIT cannot stand inside a BEGIN ... EXCEPTION block, and PL/pgSQL checks
 * for interrupts before every statement, so a cancel or statement_timeout
 * that lands just before a COMMIT, or just after it, would escape the
 * procedure past its handlers: the run would stay 'running' in the run log
 * and the session would keep the run's session-level advisory lock, so that
 * every later run on the target from another session is skipped until this
 * session ends.
 *
 * So the procedure defers cancels over those few statements: it holds them
 * at the end of each protected block (gpuscore_gpu_score_run_hold) and
 * resumes them as the first statement of the next one
 * (gpuscore_gpu_score_run_resume), where a pending cancel is raised and
 * handled like one during a batch.  The run lock is taken by
 * gpuscore_gpu_score_run_lock, which holds cancels in the same call, so no
 * statement runs between taking the lock and holding.
 *
 * A hold is QueryCancelHoldoffCount, raised once.  It never outlives its
 * use: any ERROR resets the count (errfinish), an abort drops our record of
 * it, and a hold still in place at the second COMMIT after it was taken (or
 * renewed) is released there: the procedure resumes after exactly one.
 * pg_terminate_backend is never deferred.  Nothing here allocates.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/fmgrprotos.h"

/* whether this backend holds cancels for gpu_score_table */
static bool cancel_held = false;
/* COMMITs since the hold was taken */
static int	commits_held = 0;
static bool callbacks_registered = false;

/* Release our hold, if the count still has it. */
static void
release_hold(void)
{
	if (cancel_held && QueryCancelHoldoffCount > 0)
		RESUME_CANCEL_INTERRUPTS();
	cancel_held = false;
	commits_held = 0;
}

/* Transaction callback: forget the hold on abort, bound it on commit. */
static void
run_guard_xact_callback(XactEvent event, void *arg)
{
	if (!cancel_held)
		return;
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			release_hold();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (++commits_held > 1)
				release_hold();
			break;
		default:
			break;
	}
}

/* Subtransaction callback: an aborted subtransaction ended in an ERROR. */
static void
run_guard_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						   SubTransactionId parentSubid, void *arg)
{
	if (cancel_held && event == SUBXACT_EVENT_ABORT_SUB)
		release_hold();
}

/*
 * Hold query cancels (once) until gpu_score_run_resume; a hold already in
 * place now also covers the next COMMIT.
 */
static void
hold_cancels(void)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(run_guard_xact_callback, NULL);
		RegisterSubXactCallback(run_guard_subxact_callback, NULL);
		callbacks_registered = true;
	}
	/* held already (and not zeroed by an ERROR since): renewed */
	if (!(cancel_held && QueryCancelHoldoffCount > 0))
	{
		HOLD_CANCEL_INTERRUPTS();
		cancel_held = true;
	}
	commits_held = 0;
}

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_run_lock);

/*
 * gpu_score_run_lock(key bigint, wait boolean) -> boolean
 *
 * Take gpu_score_table's session-level advisory lock on a target (waiting
 * for it when wait, cancellably) and hold cancels; false, holding nothing,
 * when another session has it and not wait.
 *
 * First it refuses a context where the procedure cannot commit (a
 * transaction block, or a CALL from a function or a query): the procedure
 * would fail at its first COMMIT, after taking the lock.  The caller's SPI
 * connection (the procedure's) says whether it may commit.
 */
Datum
gpuscore_gpu_score_run_lock(PG_FUNCTION_ARGS)
{
	int64		key = PG_GETARG_INT64(0);
	bool		wait = PG_GETARG_BOOL(1);

	if (IsTransactionBlock())
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("gpu_score_table cannot run inside a transaction block"),
				 errhint("It commits each batch: CALL it on its own, outside BEGIN ... COMMIT.")));
	if (!SPI_inside_nonatomic_context())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_TERMINATION),
				 errmsg("gpu_score_table cannot commit its batches here"),
				 errhint("CALL it directly or from a procedure, not from a function or a query.")));
	if (wait)
		DirectFunctionCall1(pg_advisory_lock_int8, Int64GetDatum(key));
	else if (!DatumGetBool(DirectFunctionCall1(pg_try_advisory_lock_int8, Int64GetDatum(key))))
		PG_RETURN_BOOL(false);
	hold_cancels();
	PG_RETURN_BOOL(true);
}

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_run_hold);

/*
 * gpu_score_run_hold(key bigint) -> void: hold query cancels until the next
 * resume.  Only while this session holds the run lock of key: a query
 * holding its session's cancels would make its own next statement
 * uncancellable.
 */
Datum
gpuscore_gpu_score_run_hold(PG_FUNCTION_ARGS)
{
	int64		key = PG_GETARG_INT64(0);
	LOCKTAG		tag;

	/* the tag pg_advisory_lock(bigint) locks */
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (key >> 32), (uint32) key, 1);
	if (!LockHeldByMe(&tag, ExclusiveLock))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpu_score_run_hold can only be used by gpu_score_table")));
	hold_cancels();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(gpuscore_gpu_score_run_resume);

/*
 * gpu_score_run_resume() -> void: stop holding query cancels, and raise the
 * one that arrived meanwhile, if any.
 */
Datum
gpuscore_gpu_score_run_resume(PG_FUNCTION_ARGS)
{
	release_hold();
	CHECK_FOR_INTERRUPTS();
	PG_RETURN_VOID();
}

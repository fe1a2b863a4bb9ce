/*
 * service_worker.c
 *	  The GPU service's worker (service.h): a dynamic background worker,
 *	  started by the first backend that wants the GPU, that forks the device
 *	  process, supervises it and exits when the service has been idle for
 *	  pg_gpuscore.gpu_service_idle_timeout.
 *
 * Why a child process holds the GPU and not the worker itself: PostgreSQL
 * 15 restarts the whole cluster when one of the postmaster's children dies
 * of a signal (or exits with a status other than 0 and 1), because it may
 * have left shared memory inconsistent.  GPU code can crash (a driver bug,
 * a kernel's fault taking the process down); so the CUDA context lives in
 * a process the postmaster does not know, which touches no shared state
 * but the control segment and the backends' latches.  When it dies, the
 * worker marks the service's device gone (backends waiting on it give up:
 * the CPU engine in 'auto', an ERROR in 'gpu'), and starts another at the
 * next request; the worker itself runs no GPU code.
 *
 * One service per cluster: the worker claims the control segment's
 * worker_pid and exits at once if a live worker holds it.
 */
#include "postgres.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "gpuscore.h"
#include "service.h"

PGDLLEXPORT void gpuscore_service_main(Datum arg);

/* Is process pid alive? */
static bool
alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Fork the device process of the next generation; false if fork failed. */
static bool
start_device(GsSvcControl *ctl)
{
	uint32		generation;
	pid_t		pid;

	SpinLockAcquire(&ctl->mutex);
	generation = ++ctl->generation;
	ctl->device_state = GS_SVC_DEV_STARTING;
	ctl->device_reason[0] = '\0';
	ctl->device_started = GetCurrentTimestamp();
	SpinLockRelease(&ctl->mutex);

	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		SpinLockAcquire(&ctl->mutex);
		ctl->device_state = GS_SVC_DEV_FAILED;
		snprintf(ctl->device_reason, GS_SVC_MSG, "could not start the GPU process: %m");
		SpinLockRelease(&ctl->mutex);
		return false;
	}
	if (pid == 0)
	{
		pid_t		parent = getppid();
		sigset_t	none;

		/* the device process: none of the worker's signal handling */
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		MyProcPid = getpid();
		gs_svc_device_main(ctl, generation);
	}
	SpinLockAcquire(&ctl->mutex);
	ctl->device_pid = pid;
	SpinLockRelease(&ctl->mutex);
	elog(DEBUG1, "pg_gpuscore GPU service: started GPU process %d (generation %u)", (int) pid,
		 generation);
	return true;
}

/*
 * Reap the device process if it has exited: its requests in flight are
 * abandoned (backends see the generation they were taken by gone).
 */
static void
reap_device(GsSvcControl *ctl)
{
	int			status;
	pid_t		pid = ctl->device_pid;

	if (pid == 0 || waitpid(pid, &status, WNOHANG) != pid)
		return;
	SpinLockAcquire(&ctl->mutex);
	ctl->device_pid = 0;
	/* a device that failed to start stays failed: backends use the CPU */
	if (ctl->device_state != GS_SVC_DEV_FAILED)
		ctl->device_state = GS_SVC_DEV_NONE;
	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
		ctl->device_restarts++;
	SpinLockRelease(&ctl->mutex);
	if (WIFSIGNALED(status))
		ereport(LOG,
				(errmsg("pg_gpuscore GPU service: its GPU process %d died of signal %d: %s",
						(int) pid, WTERMSIG(status), pg_strsignal(WTERMSIG(status))),
				 errdetail("Its batches in flight are scored on the CPU ('auto') or fail ('gpu'); the service starts another GPU process for the next request.")));
	else if (WEXITSTATUS(status) != 0)
		ereport(LOG,
				(errmsg("pg_gpuscore GPU service: the GPU process %d exited with status %d",
						(int) pid, WEXITSTATUS(status))));
}

/* Stop the device process (SIGTERM, then SIGKILL) and wait for it. */
static void
stop_device(GsSvcControl *ctl)
{
	pid_t		pid = ctl->device_pid;
	int			status;

	if (pid == 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 50 && waitpid(pid, &status, WNOHANG) == 0; i++)
		pg_usleep(20000);
	if (alive(pid))
	{
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	SpinLockAcquire(&ctl->mutex);
	ctl->device_pid = 0;
	if (ctl->device_state != GS_SVC_DEV_FAILED)
		ctl->device_state = GS_SVC_DEV_NONE;
	SpinLockRelease(&ctl->mutex);
}

/*
 * The worker's main function: claim the service, keep a device process
 * while there is work, exit when idle.
 */
void
gpuscore_service_main(Datum arg)
{
	GsSvcControl *ctl;
	bool		claimed = false;
	pid_t		other;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* no database, but a backend status: pg_stat_activity shows the service */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pg_gpuscore GPU service");

	ctl = gs_svc_control(false);
	if (ctl == NULL)
		proc_exit(0);
	SpinLockAcquire(&ctl->mutex);
	other = ctl->worker_pid;
	SpinLockRelease(&ctl->mutex);
	if (other != 0 && other != MyProcPid && alive(other))
		proc_exit(0);			/* a service runs: nothing for us to do */
	SpinLockAcquire(&ctl->mutex);
	if (ctl->worker_pid == other && !ctl->stopping)
	{
		ctl->worker_pid = MyProcPid;
		ctl->worker_procno = MyProc->pgprocno;
		ctl->last_request = GetCurrentTimestamp();
		claimed = true;
	}
	SpinLockRelease(&ctl->mutex);
	if (!claimed)
		proc_exit(0);

	for (;;)
	{
		TimestampTz last;
		TimestampTz started;
		TimestampTz now;
		GsSvcDeviceState state;
		bool		pending;
		bool		leave = false;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		reap_device(ctl);
		now = GetCurrentTimestamp();
		SpinLockAcquire(&ctl->mutex);
		state = ctl->device_state;
		last = ctl->last_request;
		started = ctl->device_started;
		pending = ctl->tail != ctl->head || ctl->want_device;
		/* idle (or shut down): leave, refusing requests from now on */
		if (ShutdownRequestPending ||
			(gs_gpu_service_idle_timeout > 0 && ctl->tail == ctl->head &&
			 now - last > (TimestampTz) gs_gpu_service_idle_timeout * 1000000))
			leave = ctl->stopping = true;
		SpinLockRelease(&ctl->mutex);
		if (leave)
			break;

		/*
		 * A device process while there is (or may soon be) work; one that
		 * died is replaced, but not more than once a second
		 */
		if (ctl->device_pid == 0 && state != GS_SVC_DEV_FAILED && pending &&
			now - started >= 1000000)
			start_device(ctl);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 50,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	stop_device(ctl);
	SpinLockAcquire(&ctl->mutex);
	if (ctl->worker_pid == MyProcPid)
	{
		ctl->worker_pid = 0;
		ctl->worker_procno = -1;
		ctl->want_device = false;
		/* the next service probes the device again */
		ctl->device_state = GS_SVC_DEV_NONE;
	}
	ctl->stopping = false;
	SpinLockRelease(&ctl->mutex);
	proc_exit(0);
}

/*
 * Start a service worker and wait until it has claimed the service (or
 * left, another having claimed it first); false with why when it cannot be
 * started.
 */
static bool
start_worker(GsSvcControl *ctl, char *why, size_t whylen)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_ConsistentState;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(bgw.bgw_library_name, "pg_gpuscore", BGW_MAXLEN);
	strlcpy(bgw.bgw_function_name, "gpuscore_service_main", BGW_MAXLEN);
	strlcpy(bgw.bgw_name, "pg_gpuscore GPU service", BGW_MAXLEN);
	strlcpy(bgw.bgw_type, "pg_gpuscore GPU service", BGW_MAXLEN);
	bgw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
	{
		snprintf(why, whylen, "no background worker slot is free for the GPU service (max_worker_processes = %d)",
				 max_worker_processes);
		return false;
	}
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
	{
		snprintf(why, whylen, "the GPU service's worker did not start");
		return false;
	}
	for (;;)
	{
		pid_t		wpid;

		SpinLockAcquire(&ctl->mutex);
		wpid = ctl->worker_pid;
		SpinLockRelease(&ctl->mutex);
		if (wpid != 0 || GetBackgroundWorkerPid(handle, &pid) != BGWH_STARTED)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 5,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(handle);
	return true;
}

/* Make sure the service runs and its device is probed; see service.h. */
bool
gs_svc_ensure_started(GsSvcControl *ctl, const char *provider_path, char *why, size_t whylen,
					  bool *other_provider)
{
	TimestampTz deadline = GetCurrentTimestamp() + (TimestampTz) gs_gpu_service_timeout * 1000;

	for (;;)
	{
		pid_t		wpid;
		int			wprocno;
		bool		stopping;
		bool		mismatch = false;
		GsSvcDeviceState state = GS_SVC_DEV_NONE;

		SpinLockAcquire(&ctl->mutex);
		wpid = ctl->worker_pid;
		wprocno = ctl->worker_procno;
		stopping = ctl->stopping;
		if (wpid == 0 && !stopping)
		{
			/* the service we start loads our provider */
			strlcpy(ctl->provider_path, provider_path, sizeof(ctl->provider_path));
			ctl->device_state = GS_SVC_DEV_NONE;
		}
		else if (wpid != 0 && !stopping)
		{
			mismatch = strcmp(ctl->provider_path, provider_path) != 0;
			/* a service whose provider failed may try ours instead */
			if (mismatch && ctl->device_state == GS_SVC_DEV_FAILED && ctl->device_pid == 0)
			{
				strlcpy(ctl->provider_path, provider_path, sizeof(ctl->provider_path));
				ctl->device_state = GS_SVC_DEV_NONE;
				mismatch = false;
			}
			if (!mismatch)
			{
				ctl->want_device = true;
				ctl->last_request = GetCurrentTimestamp();
				state = ctl->device_state;
			}
		}
		SpinLockRelease(&ctl->mutex);

		if (mismatch)
		{
			snprintf(why, whylen, "the GPU service runs another provider (%s)", ctl->provider_path);
			if (other_provider)
				*other_provider = true;
			return false;
		}
		if (wpid != 0 && !alive(wpid))
		{
			/* a worker that is gone without saying so (it cannot be, but...) */
			SpinLockAcquire(&ctl->mutex);
			if (ctl->worker_pid == wpid)
			{
				ctl->worker_pid = 0;
				ctl->stopping = false;
			}
			SpinLockRelease(&ctl->mutex);
			continue;
		}
		if (wpid == 0 && !stopping)
		{
			if (!start_worker(ctl, why, whylen))
				return false;
			continue;
		}
		if (state == GS_SVC_DEV_READY || state == GS_SVC_DEV_FAILED)
			return true;
		if (wpid != 0 && !stopping && wprocno >= 0)
			SetLatch(&GetPGProcByNumber(wprocno)->procLatch);
		if (GetCurrentTimestamp() > deadline)
		{
			snprintf(why, whylen, "the GPU service did not probe the device within %d ms",
					 gs_gpu_service_timeout);
			return false;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

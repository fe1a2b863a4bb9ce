/*
 * service_shmem.c
 *	  The GPU service's control segment (service.h): making and finding it
 *	  without shared_preload_libraries, the request queue, and
 *	  gpu_model_stats, which backends and the service keep in it.
 *
 * The segment is a DSM segment pinned for the postmaster's life, so it
 * outlives the backend that made it; its handle is in the file
 * pg_gpuscore.service of the data directory, with the postmaster's pid and
 * a random cookie also written into the segment, so that a file left by an
 * earlier postmaster (or a crash restart, which destroys the segment) is
 * recognised as stale and replaced.  Making and replacing happen under an
 * exclusive lock on pg_gpuscore.service.lock.  A backend keeps its mapping
 * until it exits (dsm_pin_mapping).
 */
#include "postgres.h"

#include <math.h>
#include <sys/file.h>

#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "gpuscore.h"
#include "service.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_model_stats);
PG_FUNCTION_INFO_V1(gpuscore_gpu_model_stats_reset);
PG_FUNCTION_INFO_V1(gpuscore_gpu_service_info);

#define SERVICE_FILE "pg_gpuscore.service"
#define SERVICE_LOCK_FILE "pg_gpuscore.service.lock"

static GsSvcControl *control = NULL;
static bool control_failed = false;

/* Attach the segment of handle h if it is a live control segment of cookie. */
static GsSvcControl *
attach_control(dsm_handle h, uint64 cookie)
{
	dsm_segment *seg = dsm_find_mapping(h);
	GsSvcControl *ctl;

	if (seg == NULL)
		seg = dsm_attach(h);
	if (seg == NULL)
		return NULL;
	ctl = (GsSvcControl *) dsm_segment_address(seg);
	if (dsm_segment_map_length(seg) < sizeof(GsSvcControl) || ctl->magic != GS_SVC_MAGIC ||
		ctl->version != GS_SVC_VERSION || ctl->cookie != cookie)
	{
		dsm_detach(seg);
		return NULL;
	}
	dsm_pin_mapping(seg);
	return ctl;
}

/* Read pg_gpuscore.service: true with its handle and cookie when it is this postmaster's. */
static bool
read_service_file(dsm_handle *h, uint64 *cookie)
{
	FILE	   *f = AllocateFile(SERVICE_FILE, "r");
	long		pid;
	unsigned long long c;
	unsigned long hv;
	bool		ok;

	if (f == NULL)
		return false;
	ok = fscanf(f, "%ld %llu %lu", &pid, &c, &hv) == 3 && pid == (long) PostmasterPid;
	FreeFile(f);
	*h = (dsm_handle) hv;
	*cookie = (uint64) c;
	return ok;
}

/* Write pg_gpuscore.service for handle h (a new file renamed over the old one). */
static bool
write_service_file(dsm_handle h, uint64 cookie)
{
	FILE	   *f = AllocateFile(SERVICE_FILE ".tmp", "w");
	bool		ok;

	if (f == NULL)
		return false;
	ok = fprintf(f, "%ld %llu %lu\n", (long) PostmasterPid, (unsigned long long) cookie,
				 (unsigned long) h) > 0;
	ok &= FreeFile(f) == 0;
	return ok && rename(SERVICE_FILE ".tmp", SERVICE_FILE) == 0;
}

/* Make a new control segment, pinned; NULL if it cannot be made. */
static GsSvcControl *
create_control(void)
{
	dsm_segment *seg = dsm_create(sizeof(GsSvcControl), DSM_CREATE_NULL_IF_MAXSEGMENTS);
	GsSvcControl *ctl;

	if (seg == NULL)
		return NULL;
	ctl = (GsSvcControl *) dsm_segment_address(seg);
	memset(ctl, 0, sizeof(*ctl));
	ctl->magic = GS_SVC_MAGIC;
	ctl->version = GS_SVC_VERSION;
	ctl->cookie = pg_prng_uint64(&pg_global_prng_state);
	SpinLockInit(&ctl->mutex);
	if (sem_init(&ctl->wake, 1, 0) != 0)
	{
		dsm_detach(seg);
		return NULL;
	}
	if (!write_service_file(dsm_segment_handle(seg), ctl->cookie))
	{
		dsm_detach(seg);
		return NULL;
	}
	dsm_pin_segment(seg);
	dsm_pin_mapping(seg);
	return ctl;
}

/* The control segment; see service.h. */
GsSvcControl *
gs_svc_control(bool create)
{
	dsm_handle	h;
	uint64		cookie;
	int			lockfd;

	if (control != NULL)
		return control;
	if (control_failed && create)
		return NULL;
	if (read_service_file(&h, &cookie) && (control = attach_control(h, cookie)) != NULL)
		return control;
	if (!create)
		return NULL;

	/* make it, unless another backend does so first */
	lockfd = OpenTransientFile(SERVICE_LOCK_FILE, O_RDWR | O_CREAT | PG_BINARY);
	if (lockfd < 0)
	{
		control_failed = true;
		return NULL;
	}
	if (flock(lockfd, LOCK_EX) == 0)
	{
		if (!read_service_file(&h, &cookie) || (control = attach_control(h, cookie)) == NULL)
			control = create_control();
		flock(lockfd, LOCK_UN);
	}
	CloseTransientFile(lockfd);
	control_failed = control == NULL;
	return control;
}

/*
 * Queue a request; see service.h.  Refused while no service worker runs or
 * while it is leaving, so that nothing is queued that no one will take.
 */
bool
gs_svc_enqueue(GsSvcControl *ctl, GsSvcRequestKind kind, dsm_handle segment, uint64 serial,
			   int slot)
{
	bool		ok = false;

	SpinLockAcquire(&ctl->mutex);
	if (ctl->tail - ctl->head < GS_SVC_QUEUE && ctl->worker_pid != 0 && !ctl->stopping)
	{
		GsSvcRequest *r = &ctl->queue[ctl->tail % GS_SVC_QUEUE];

		r->kind = kind;
		r->segment = segment;
		r->serial = serial;
		r->slot = slot;
		r->procno = MyProc->pgprocno;
		r->pid = MyProcPid;
		r->seq = ctl->tail;
		ctl->tail++;
		ok = true;
	}
	SpinLockRelease(&ctl->mutex);
	if (ok)
		sem_post(&ctl->wake);
	return ok;
}

/* A new segment serial; see service.h. */
uint64
gs_svc_serial(GsSvcControl *ctl)
{
	uint64		serial;

	SpinLockAcquire(&ctl->mutex);
	serial = ++ctl->next_serial;
	SpinLockRelease(&ctl->mutex);
	return serial;
}

/* The stats entry of m in ctl (made, or the least recently used one taken over); mutex held. */
static GsSvcStat *
stat_entry(GsSvcControl *ctl, const GsModelRef *m)
{
	GsSvcStat  *free_entry = NULL;
	GsSvcStat  *oldest = NULL;
	GsSvcStat  *s;

	for (int i = 0; i < GS_SVC_STATS; i++)
	{
		s = &ctl->stats[i];
		if (!s->used)
		{
			if (free_entry == NULL)
				free_entry = s;
		}
		else if (s->dboid == MyDatabaseId && s->model_id == m->model_id)
			return s;
		else if (oldest == NULL || s->last_use < oldest->last_use)
			oldest = s;
	}
	s = free_entry ? free_entry : oldest;
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->dboid = MyDatabaseId;
	strlcpy(s->name, m->name, NAMEDATALEN);
	s->version = m->version;
	s->model_id = m->model_id;
	return s;
}

/* Record one scored batch; see service.h. */
void
gs_svc_record(const GsModelRef *m, bool on_gpu, size_t n_rows, const float *out,
			  int n_outputs, double device_ms)
{
	GsSvcControl *ctl = gs_svc_control(true);
	double		sum = 0,
				sumsq = 0;
	int64		nan_rows = 0;
	int64		hist[GS_SVC_HIST] = {0};
	GsSvcStat  *s;
	TimestampTz now;

	if (ctl == NULL || n_rows == 0)
		return;
	/* the drift signal: the first output's mean, spread and histogram */
	for (size_t r = 0; r < n_rows; r++)
	{
		double		v = out[r * n_outputs];
		int			b;

		if (isnan(v))
		{
			nan_rows++;
			continue;
		}
		sum += v;
		sumsq += v * v;
		b = v < 0 ? 0 : v > 1 ? GS_SVC_HIST - 1 : 1 + Min((int) (v * 10), 9);
		hist[b]++;
	}
	now = GetCurrentTimestamp();
	SpinLockAcquire(&ctl->mutex);
	s = stat_entry(ctl, m);
	s->rows[on_gpu] += n_rows;
	s->batches[on_gpu]++;
	s->device_ms += device_ms;
	s->last_use = now;
	s->sum += sum;
	s->sumsq += sumsq;
	s->nan_rows += nan_rows;
	for (int b = 0; b < GS_SVC_HIST; b++)
		s->hist[b] += hist[b];
	SpinLockRelease(&ctl->mutex);
}

/*
 * gpu_model_stats() RETURNS TABLE(...): what this cluster has scored with
 * each model version of the current database through the batch paths since
 * the postmaster started (or since the entry was reused for another
 * model), from the control segment.
 */
Datum
gpuscore_gpu_model_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GsSvcControl *ctl;
	GsSvcStat  *copy;

	InitMaterializedSRF(fcinfo, 0);
	ctl = gs_svc_control(false);
	if (ctl == NULL)
		return (Datum) 0;
	copy = palloc(sizeof(ctl->stats));
	SpinLockAcquire(&ctl->mutex);
	memcpy(copy, ctl->stats, sizeof(ctl->stats));
	SpinLockRelease(&ctl->mutex);
	for (int i = 0; i < GS_SVC_STATS; i++)
	{
		GsSvcStat  *s = &copy[i];
		Datum		values[11];
		bool		nulls[11] = {0};
		Datum		hist[GS_SVC_HIST];
		int64		n;

		if (!s->used || s->dboid != MyDatabaseId)
			continue;
		n = s->rows[0] + s->rows[1] - s->nan_rows;
		values[0] = CStringGetTextDatum(s->name);
		values[1] = Int32GetDatum(s->version);
		values[2] = Int64GetDatum(s->rows[1]);
		values[3] = Int64GetDatum(s->rows[0]);
		values[4] = Int64GetDatum(s->batches[1]);
		values[5] = Int64GetDatum(s->batches[0]);
		values[6] = Float8GetDatum(s->device_ms);
		values[7] = TimestampTzGetDatum(s->last_use);
		if (n > 0)
		{
			double		mean = s->sum / n;

			values[8] = Float8GetDatum(mean);
			values[9] = Float8GetDatum(n > 1 ? sqrt(Max(s->sumsq / n - mean * mean, 0) * n / (n - 1)) : 0);
		}
		else
			nulls[8] = nulls[9] = true;
		for (int b = 0; b < GS_SVC_HIST; b++)
			hist[b] = Int64GetDatum(s->hist[b]);
		values[10] = PointerGetDatum(construct_array(hist, GS_SVC_HIST, INT8OID, 8, true, TYPALIGN_DOUBLE));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* gpu_model_stats_reset(): forget the entries of the current database. */
Datum
gpuscore_gpu_model_stats_reset(PG_FUNCTION_ARGS)
{
	GsSvcControl *ctl = gs_svc_control(false);

	if (ctl == NULL)
		PG_RETURN_VOID();
	SpinLockAcquire(&ctl->mutex);
	for (int i = 0; i < GS_SVC_STATS; i++)
		if (ctl->stats[i].used && ctl->stats[i].dboid == MyDatabaseId)
			ctl->stats[i].used = false;
	SpinLockRelease(&ctl->mutex);
	PG_RETURN_VOID();
}

static const char *const device_states[] = {"none", "starting", "ready", "failed"};

/*
 * gpu_service_info() RETURNS TABLE(running, worker_pid, device_pid,
 * device_state, device_reason, device_restarts, batches, launches,
 * merged_batches, queued, resident_models, resident_bytes, memory_limit,
 * last_request): one row, from the control segment (NULLs where the
 * service never ran).
 */
Datum
gpuscore_gpu_service_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GsSvcControl *ctl;
	GsSvcControl *c;
	Datum		values[14];
	bool		nulls[14] = {0};

	InitMaterializedSRF(fcinfo, 0);
	ctl = gs_svc_control(false);
	if (ctl == NULL)
	{
		values[0] = BoolGetDatum(false);
		for (int i = 1; i < 14; i++)
			nulls[i] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return (Datum) 0;
	}
	/* a copy of the scalars, without the queue and the stats */
	c = palloc(offsetof(GsSvcControl, queue));
	SpinLockAcquire(&ctl->mutex);
	memcpy(c, ctl, offsetof(GsSvcControl, queue));
	SpinLockRelease(&ctl->mutex);
	values[0] = BoolGetDatum(c->worker_pid != 0 && !c->stopping);
	values[1] = Int32GetDatum(c->worker_pid);
	nulls[1] = c->worker_pid == 0;
	values[2] = Int32GetDatum(c->device_pid);
	nulls[2] = c->device_pid == 0;
	values[3] = CStringGetTextDatum(device_states[c->device_state]);
	values[4] = CStringGetTextDatum(c->device_reason);
	nulls[4] = c->device_reason[0] == '\0';
	values[5] = Int64GetDatum(c->device_restarts);
	values[6] = Int64GetDatum(c->requests);
	values[7] = Int64GetDatum(c->launches);
	values[8] = Int64GetDatum(c->merged);
	values[9] = Int32GetDatum((int32) (c->tail - c->head));
	values[10] = Int32GetDatum(c->device_pid ? c->resident_models : 0);
	values[11] = Int64GetDatum(c->device_pid ? (int64) c->resident_bytes : 0);
	values[12] = Int64GetDatum((int64) c->device_memory_limit);
	values[13] = TimestampTzGetDatum(c->last_request);
	nulls[13] = c->last_request == 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

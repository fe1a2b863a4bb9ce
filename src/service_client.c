/*
 * service_client.c
 *	  The GPU service from a backend (or parallel worker): the provider
 *	  functions that score through the service (service.h), put in the
 *	  backend's GsProvider table by gs_provider_load in service mode.
 *
 * Pipelines: each is a DSM segment of this backend's (two slots of input
 * and output, after a GsSvcSegment header), pinned to the backend rather
 * than to a resource owner, since the batch scorer frees it from a memory
 * context callback (also on ERROR and cancel).  A submit marks the slot
 * QUEUED and queues a request; a wait sleeps on the backend's latch until
 * the device process marks it DONE or FAILED, checking for interrupts, for
 * the death of the device process (a slot TAKEN by a generation that is no
 * longer running) and against pg_gpuscore.gpu_service_timeout.  Freeing a
 * pipeline cancels what it still has queued and tells the device process
 * to unmap it.
 *
 * Models: the first use of a model version by any backend stages it in a
 * segment (a forest's image, or a network's stored bytes) for the device
 * process, which keeps it resident for every session; the backend's handle
 * (SvcModel) only names it.  A batch the device process cannot score
 * because it no longer holds the version (evicted, or a new device process
 * after a crash) stages it again and is queued once more.
 *
 * The service is asked for again when it is not running (it exits when
 * idle): when a pipeline is made and when a request cannot be queued.
 *
 * Fault injection (pg_gpuscore.fault_injection) applies here, as the
 * per-backend provider applies it, so the tests of the fallbacks hold for
 * both modes.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/dsm_impl.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "core/forest/forest_image.h"
#include "gpuscore.h"
#include "provider.h"
#include "service.h"

/* What a backend holds for a model version on the service's device. */
typedef struct SvcModel
{
	GsModelRef *ref;			/* whose device_model this is */
	Oid			dboid;
	int64		model_id;
	int			n_features;
	int			n_outputs;
} SvcModel;

/* A pipeline: a segment of ours. */
typedef struct SvcPipe
{
	SvcModel   *model;
	dsm_segment *seg;
	GsSvcSegment *hdr;
} SvcPipe;

static GsSvcControl *svc;
static char svc_provider_path[MAXPGPATH];

static int	stage_upload(GsModelRef *ref, char *why, size_t whylen);

/* The fault the tests inject (pg_gpuscore.fault_injection), or "". */
static const char *
fault(void)
{
	return gs_fault_injection ? gs_fault_injection : "";
}

/* An injected failure, as the providers report one. */
static int
injected(const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s failed: injected fault", what);
	return strcmp(fault(), "device_lost") == 0 ? GS_CUDA_DEVICE_LOST : GS_CUDA_ERROR;
}

/* Is the device process that took a slot (generation g) gone? */
static bool
device_gone(uint32 g)
{
	bool		gone;

	SpinLockAcquire(&svc->mutex);
	gone = svc->device_pid == 0 || svc->generation != g || svc->worker_pid == 0;
	SpinLockRelease(&svc->mutex);
	return gone;
}

/*
 * Wait until slot is DONE or FAILED; returns GS_CUDA_OK or the failure with
 * err set.  Checks for interrupts (a cancel leaves by ERROR: the caller's
 * cleanup cancels the slot), the device process's death and the timeout.
 */
static int
wait_slot(GsSvcSlot *slot, char *err, size_t errlen)
{
	TimestampTz deadline = GetCurrentTimestamp() + (TimestampTz) gs_gpu_service_timeout * 1000;

	for (;;)
	{
		int			state = slot->state;

		pg_memory_barrier();
		if (state == GS_SVC_DONE)
			return GS_CUDA_OK;
		if (state == GS_SVC_FAILED)
		{
			strlcpy(err, slot->err, errlen);
			/* a lost device is the device process's to replace, not this session's */
			return slot->rc == GS_CUDA_DEVICE_LOST ? GS_CUDA_ERROR : slot->rc;
		}
		if ((state == GS_SVC_TAKEN && device_gone(slot->generation)) ||
			(state == GS_SVC_QUEUED &&
			 (svc->worker_pid == 0 || svc->device_state == GS_SVC_DEV_FAILED)))
		{
			snprintf(err, errlen, "the GPU service's GPU process stopped while scoring a batch");
			return GS_CUDA_ERROR;
		}
		if (GetCurrentTimestamp() > deadline)
		{
			snprintf(err, errlen, "the GPU service did not answer within %d ms (pg_gpuscore.gpu_service_timeout)",
					 gs_gpu_service_timeout);
			return GS_CUDA_ERROR;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 20,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Make sure the service runs with its device probed (starting it again
 * after it left when idle); GS_CUDA_OK, or why not.
 */
static int
svc_connect(char *err, size_t errlen)
{
	bool		ready;
	GsSvcDeviceState state;

	SpinLockAcquire(&svc->mutex);
	ready = svc->worker_pid != 0 && !svc->stopping && svc->device_state == GS_SVC_DEV_READY;
	SpinLockRelease(&svc->mutex);
	if (ready)
		return GS_CUDA_OK;
	if (!gs_svc_ensure_started(svc, svc_provider_path, err, errlen, NULL))
		return GS_CUDA_ERROR;
	SpinLockAcquire(&svc->mutex);
	state = svc->device_state;
	if (state != GS_SVC_DEV_READY)
		strlcpy(err, svc->device_reason[0] ? svc->device_reason : "the GPU service has no device",
				errlen);
	SpinLockRelease(&svc->mutex);
	return state == GS_SVC_DEV_READY ? GS_CUDA_OK : GS_CUDA_ERROR;
}

/* Queue a request, asking for the service again if it has left; GS_CUDA_OK or why not. */
static int
svc_enqueue(GsSvcRequestKind kind, dsm_segment *seg, int slot, char *err, size_t errlen)
{
	GsSvcSegment *hdr = (GsSvcSegment *) dsm_segment_address(seg);

	for (int attempt = 0; attempt < 2; attempt++)
	{
		if (gs_svc_enqueue(svc, kind, dsm_segment_handle(seg), hdr->serial, slot))
			return GS_CUDA_OK;
		if (attempt == 0 && svc_connect(err, errlen) != GS_CUDA_OK)
			return GS_CUDA_ERROR;
	}
	snprintf(err, errlen, "the GPU service's queue is full");
	return GS_CUDA_ERROR;
}

static int
svc_probe(GsCudaInfo *info, char *err, size_t errlen)
{
	int			rc = svc_connect(err, errlen);

	SpinLockAcquire(&svc->mutex);
	info->device_count = svc->device_count;
	strlcpy(info->name, svc->device_name, sizeof(info->name));
	info->cc_major = svc->cc_major;
	info->cc_minor = svc->cc_minor;
	info->total_mem = svc->total_mem;
	info->free_mem = svc->free_mem;
	info->driver_version = svc->driver_version;
	info->runtime_version = svc->runtime_version;
	SpinLockRelease(&svc->mutex);
	return rc;
}

/* Never called in service mode (gs_svc_upload is): models go by reference. */
static int
svc_upload_forest(const GsForest *f, GsCudaModel **out, char *err, size_t errlen)
{
	snprintf(err, errlen, "a forest cannot be uploaded to the GPU service without its model");
	return GS_CUDA_ERROR;
}

static int
svc_upload_mlp(const GsMlp *m, GsCudaModel **out, char *err, size_t errlen)
{
	snprintf(err, errlen, "a network cannot be uploaded to the GPU service without its model");
	return GS_CUDA_ERROR;
}

static void
svc_model_free(GsCudaModel *m)
{
	free(m);
}

static void svc_pipeline_free(GsCudaPipeline *p);

static int
svc_pipeline_create(GsCudaModel *model, size_t max_rows, GsCudaPipeline **out, char *err,
					size_t errlen)
{
	SvcModel   *m = (SvcModel *) model;
	size_t		size = gs_svc_pipe_size(max_rows, m->n_features, m->n_outputs);
	dsm_segment *seg;
	SvcPipe    *p;
	MemoryContext old;

	*out = NULL;
	if (strcmp(fault(), "pipeline") == 0 || strcmp(fault(), "oom") == 0 ||
		strcmp(fault(), "device_lost") == 0)
		return injected("creating the batch pipeline", err, errlen);
	if (svc_connect(err, errlen) != GS_CUDA_OK)
		return GS_CUDA_ERROR;
	old = MemoryContextSwitchTo(TopMemoryContext);
	seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	MemoryContextSwitchTo(old);
	if (seg == NULL)
	{
		snprintf(err, errlen, "no dynamic shared memory segment is free for the batch pipeline");
		return GS_CUDA_ERROR;
	}
	dsm_pin_mapping(seg);
	p = MemoryContextAllocZero(TopMemoryContext, sizeof(SvcPipe));
	p->model = m;
	p->seg = seg;
	p->hdr = (GsSvcSegment *) dsm_segment_address(seg);
	memset(p->hdr, 0, sizeof(GsSvcSegment));
	p->hdr->magic = GS_SVC_MAGIC;
	p->hdr->serial = gs_svc_serial(svc);
	p->hdr->dboid = m->dboid;
	strlcpy(p->hdr->name, m->ref->name, NAMEDATALEN);
	p->hdr->model_id = m->model_id;
	p->hdr->max_rows = max_rows;
	p->hdr->n_features = m->n_features;
	p->hdr->n_outputs = m->n_outputs;
	*out = (GsCudaPipeline *) p;
	return GS_CUDA_OK;
}

static float *
svc_pipeline_input(GsCudaPipeline *pipe, int slot)
{
	SvcPipe    *p = (SvcPipe *) pipe;

	return (float *) ((char *) p->hdr + gs_svc_in_offset(p->hdr, slot));
}

/*
 * Queue slot k of pipeline p (its n_rows set) for scoring; stall: the
 * device process holds it until it is cancelled (fault injection).
 */
static int
queue_slot(SvcPipe *p, int k, bool stall, char *err, size_t errlen)
{
	GsSvcSlot  *s = &p->hdr->slot[k];

	s->stall = stall;
	s->rc = GS_CUDA_OK;
	s->err[0] = '\0';
	memset(s->device_ms, 0, sizeof(s->device_ms));
	pg_write_barrier();
	s->state = GS_SVC_QUEUED;
	if (svc_enqueue(GS_SVC_SCORE, p->seg, k, err, errlen) != GS_CUDA_OK)
	{
		s->state = GS_SVC_IDLE;
		return GS_CUDA_ERROR;
	}
	return GS_CUDA_OK;
}

static int
svc_pipeline_submit(GsCudaPipeline *pipe, int slot, size_t n_rows, char *err, size_t errlen)
{
	SvcPipe    *p = (SvcPipe *) pipe;
	GsSvcSlot  *s = &p->hdr->slot[slot];

	if (strcmp(fault(), "submit") == 0 || strcmp(fault(), "device_lost") == 0)
		return injected("submitting a batch", err, errlen);
	if (n_rows > p->hdr->max_rows)
	{
		snprintf(err, errlen, "batch of %zu rows exceeds the pipeline's %llu", n_rows,
				 (unsigned long long) p->hdr->max_rows);
		return GS_CUDA_ERROR;
	}
	s->n_rows = n_rows;
	return queue_slot(p, slot, strcmp(fault(), "service_stall") == 0, err, errlen);
}

/* Give up a slot: the device process skips it, or scores it for nobody. */
static void
cancel_slot(GsSvcSlot *s)
{
	int			st = s->state;

	if (st == GS_SVC_QUEUED || st == GS_SVC_TAKEN)
		(void) __sync_bool_compare_and_swap(&s->state, st, GS_SVC_CANCELLED);
}

static int
svc_pipeline_wait(GsCudaPipeline *pipe, int slot, const float **out, char *err, size_t errlen)
{
	SvcPipe    *p = (SvcPipe *) pipe;
	int			rc;

	*out = NULL;
	if (strcmp(fault(), "wait") == 0 || strcmp(fault(), "device_lost") == 0)
	{
		cancel_slot(&p->hdr->slot[slot]);
		return injected("waiting for a batch", err, errlen);
	}
	rc = wait_slot(&p->hdr->slot[slot], err, errlen);
	if (rc == GS_SVC_NOT_RESIDENT)
	{
		/* the device process no longer holds the model: stage it again, once */
		rc = stage_upload(p->model->ref, err, errlen);
		if (rc == GS_CUDA_OK)
			rc = queue_slot(p, slot, p->hdr->slot[slot].stall, err, errlen);
		if (rc == GS_CUDA_OK)
			rc = wait_slot(&p->hdr->slot[slot], err, errlen);
		if (rc == GS_SVC_NOT_RESIDENT)
			rc = GS_CUDA_ERROR;
	}
	if (rc == GS_CUDA_OK)
		*out = (const float *) ((char *) p->hdr + gs_svc_out_offset(p->hdr, slot));
	else
		cancel_slot(&p->hdr->slot[slot]);
	return rc;
}

static int
svc_pipeline_times(GsCudaPipeline *pipe, int slot, float ms[3])
{
	SvcPipe    *p = (SvcPipe *) pipe;

	memcpy(ms, p->hdr->slot[slot].device_ms, sizeof(float) * 3);
	return ms[0] + ms[1] + ms[2] > 0 ? 0 : -1;
}

static void
svc_pipeline_free(GsCudaPipeline *pipe)
{
	SvcPipe    *p = (SvcPipe *) pipe;

	if (p == NULL)
		return;
	/* what is still queued is dropped; what is taken, scored for nobody */
	for (int k = 0; k < 2; k++)
		cancel_slot(&p->hdr->slot[k]);
	(void) gs_svc_enqueue(svc, GS_SVC_FORGET, dsm_segment_handle(p->seg), p->hdr->serial, -1);
	dsm_detach(p->seg);
	pfree(p);
}

static int
svc_predict(GsCudaModel *model, const float *x, size_t n_rows, float *out, char *err,
			size_t errlen)
{
	GsCudaPipeline *p;
	const float *res;
	int			rc;
	SvcModel   *m = (SvcModel *) model;

	rc = svc_pipeline_create(model, Max(n_rows, 1), &p, err, errlen);
	if (rc != GS_CUDA_OK)
		return rc;
	memcpy(svc_pipeline_input(p, 0), x, sizeof(float) * n_rows * m->n_features);
	((SvcPipe *) p)->hdr->slot[0].n_rows = n_rows;
	rc = queue_slot((SvcPipe *) p, 0, false, err, errlen);
	if (rc == GS_CUDA_OK)
		rc = svc_pipeline_wait(p, 0, &res, err, errlen);
	if (rc == GS_CUDA_OK)
		memcpy(out, res, sizeof(float) * n_rows * m->n_outputs);
	svc_pipeline_free(p);
	return rc;
}

static int
svc_set_fault(const char *point)
{
	return 0;
}

/* Connect this backend to the service (started if need be); see provider.h. */
bool
gs_svc_provider_load(const char *provider_path, char *why, size_t whylen, bool *quiet)
{
	char		err[256];

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX)
	{
		snprintf(why, whylen, "the GPU service needs dynamic_shared_memory_type = posix");
		return false;
	}
	svc = gs_svc_control(true);
	if (svc == NULL)
	{
		snprintf(why, whylen, "the GPU service's shared memory could not be made");
		return false;
	}
	strlcpy(svc_provider_path, provider_path, sizeof(svc_provider_path));
	SpinLockAcquire(&svc->mutex);
	svc->device_memory_limit = (uint64) gs_gpu_service_memory_kb * 1024;
	svc->merge_delay_us = gs_gpu_service_merge_delay_us;
	SpinLockRelease(&svc->mutex);
	if (!gs_svc_ensure_started(svc, provider_path, why, whylen, quiet))
		return false;
	gs_provider.service = true;
	gs_provider.probe = svc_probe;
	gs_provider.upload = svc_upload_forest;
	gs_provider.mlp_upload = svc_upload_mlp;
	gs_provider.model_free = svc_model_free;
	gs_provider.predict = svc_predict;
	gs_provider.pipeline_create = svc_pipeline_create;
	gs_provider.pipeline_input = svc_pipeline_input;
	gs_provider.pipeline_submit = svc_pipeline_submit;
	gs_provider.pipeline_wait = svc_pipeline_wait;
	gs_provider.pipeline_free = svc_pipeline_free;
	gs_provider.pipeline_times = svc_pipeline_times;
	gs_provider.set_fault = svc_set_fault;
	if (svc_probe(&gs_provider.info, err, sizeof(err)) == GS_CUDA_OK)
		gs_provider.usable = true;
	else
	{
		strlcpy(gs_provider.reason, err, sizeof(gs_provider.reason));
		/* no driver or no device: a CPU-only machine, nothing unusual */
		gs_provider.expected = gs_provider.info.device_count == 0;
	}
	return true;
}

/*
 * Stage ref's model version for the device process (its forest image, or a
 * network's stored bytes) and wait for it to be resident.
 */
static int
stage_upload(GsModelRef *ref, char *why, size_t whylen)
{
	dsm_segment *seg;
	GsSvcSegment *hdr;
	size_t		len;
	bytea	   *bytes = NULL;
	int32		format = -1;
	float		missing = NAN;
	int			rc;
	MemoryContext old;

	if (strcmp(fault(), "upload") == 0 || strcmp(fault(), "oom") == 0 ||
		strcmp(fault(), "device_lost") == 0)
		return injected("uploading the model", why, whylen);
	if ((rc = svc_connect(why, whylen)) != GS_CUDA_OK)
		return rc;
	if (ref->forest)
		len = gs_forest_image_size(ref->forest);
	else
	{
		int64		model_id;
		int32		version;
		GsModelFormat fmt;

		/* a network: its stored bytes, if they are still this version's */
		if (!gs_catalog_fetch(ref->name, &model_id, &version, &fmt, &bytes, NULL, &missing) ||
			model_id != ref->model_id || bytes == NULL)
		{
			snprintf(why, whylen, "model \"%s\" was replaced while it was being uploaded", ref->name);
			return GS_CUDA_ERROR;
		}
		format = (int32) fmt;
		len = VARSIZE_ANY_EXHDR(bytes);
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	seg = dsm_create(GS_SVC_DATA_OFFSET + len, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	MemoryContextSwitchTo(old);
	if (seg == NULL)
	{
		snprintf(why, whylen, "no dynamic shared memory segment is free to upload the model");
		return GS_CUDA_ERROR;
	}
	dsm_pin_mapping(seg);
	hdr = (GsSvcSegment *) dsm_segment_address(seg);
	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = GS_SVC_MAGIC;
	hdr->serial = gs_svc_serial(svc);
	hdr->dboid = MyDatabaseId;
	strlcpy(hdr->name, ref->name, NAMEDATALEN);
	hdr->model_id = ref->model_id;
	hdr->format = format;
	hdr->missing_value = missing;
	hdr->n_features = ref->model->n_features;
	hdr->n_outputs = ref->model->n_outputs;
	hdr->bytes_len = len;
	if (ref->forest)
		gs_forest_image_write(ref->forest, (unsigned char *) hdr + GS_SVC_DATA_OFFSET);
	else
	{
		memcpy((char *) hdr + GS_SVC_DATA_OFFSET, VARDATA_ANY(bytes), len);
		pfree(bytes);
	}
	pg_write_barrier();
	hdr->slot[0].state = GS_SVC_QUEUED;
	if (svc_enqueue(GS_SVC_UPLOAD, seg, 0, why, whylen) != GS_CUDA_OK)
	{
		dsm_detach(seg);
		return GS_CUDA_ERROR;
	}
	PG_TRY();
	{
		rc = wait_slot(&hdr->slot[0], why, whylen);
	}
	PG_CATCH();
	{
		cancel_slot(&hdr->slot[0]);
		dsm_detach(seg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (rc != GS_CUDA_OK)
		cancel_slot(&hdr->slot[0]);
	dsm_detach(seg);
	return rc;
}

/* Does the service hold model_id of this database (as it last said)? */
static bool
resident(int64 model_id)
{
	bool		found = false;

	SpinLockAcquire(&svc->mutex);
	for (int i = 0; i < svc->resident_models && i < GS_SVC_MODELS; i++)
		if (svc->resident[i].model_id == model_id && svc->resident[i].dboid == MyDatabaseId)
		{
			found = true;
			break;
		}
	SpinLockRelease(&svc->mutex);
	return found;
}

/*
 * Make ref's model version resident in the GPU service; see provider.h.
 * A version the service holds already is not staged again (if it goes
 * before a batch of ours comes, the batch stages it: svc_pipeline_wait).
 */
int
gs_svc_upload(GsModelRef *ref, GsCudaModel **out, char *why, size_t whylen)
{
	SvcModel   *m;
	int			rc = GS_CUDA_OK;

	*out = NULL;
	if (strcmp(fault(), "upload") == 0 || strcmp(fault(), "oom") == 0 ||
		strcmp(fault(), "device_lost") == 0)
		return injected("uploading the model", why, whylen);
	if (svc_connect(why, whylen) != GS_CUDA_OK)
		return GS_CUDA_ERROR;
	if (!resident(ref->model_id))
		rc = stage_upload(ref, why, whylen);
	if (rc != GS_CUDA_OK)
		return rc == GS_SVC_NOT_RESIDENT ? GS_CUDA_ERROR : rc;
	m = malloc(sizeof(SvcModel));
	if (m == NULL)
	{
		snprintf(why, whylen, "out of memory");
		return GS_CUDA_ERROR;
	}
	m->ref = ref;
	m->dboid = MyDatabaseId;
	m->model_id = ref->model_id;
	m->n_features = ref->model->n_features;
	m->n_outputs = ref->model->n_outputs;
	*out = (GsCudaModel *) m;
	return GS_CUDA_OK;
}

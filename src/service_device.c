/*
 * service_device.c
 *	  The GPU service's device process (service.h): loads the provider,
 *	  holds the CUDA context and the models resident on the device, and
 *	  scores the batches backends queue, merging the pending batches of one
 *	  model version into one launch.
 *
 * A child of the service worker, unknown to the postmaster.  It must not use
 * what needs a PostgreSQL process of its own: no ereport, palloc, locks,
 * catalog or DSM calls.  It touches shared memory only through the control
 * segment (inherited mapped from the worker), the backends' segments (mapped
 * here by their POSIX names, see map_segment) and the backends' latches;
 * memory is malloc's; it leaves with _exit, so no exit callback of the
 * worker's runs here.  If it crashes, only it dies (service_worker.c).
 *
 * Order: the pending requests are taken from the queue together, in
 * arrival order: each request's slot is marked TAKEN (by this process's
 * generation) before the queue lets go of it, so that a request is either
 * still queued for the next device process or visibly taken by this one if
 * it dies.  Then uploads (so that a session's first batch finds its model),
 * then the batches, each model's merged into launches of at most its
 * pipeline's rows, models in the order of their oldest batch, so that every
 * session gets its turn.  A batch its backend cancelled, or of a backend
 * that exited, is dropped.
 *
 * Models: each version uploaded once and kept while it is current; an
 * older version of a model another upload replaced is freed once no batch
 * has used it for REPLACED_GRACE_S, any version unused for UNUSED_S (a
 * dropped model), and the least recently used versions make room under
 * pg_gpuscore.gpu_service_memory.  A backend whose batch finds its version
 * gone stages it again.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/latch.h"
#include "storage/proc.h"

#include "core/model.h"
#include "gpuscore.h"
#include "provider.h"
#include "service.h"

#define MAX_MODELS GS_SVC_MODELS
#define MAX_MAPS 1024
#define REPLACED_GRACE_S 2
#define UNUSED_S 600

/* A model version resident on the device. */
typedef struct DevModel
{
	Oid			dboid;
	char		name[NAMEDATALEN];
	int64		model_id;
	bool		replaced;		/* a newer version of it was uploaded */
	GsModel    *model;			/* malloc'd: the core's copy */
	GsCudaModel *dev;
	size_t		bytes;			/* what it takes on the device, about */
	uint64		last_use;		/* use counter, for LRU */
	double		last_use_s;		/* monotonic seconds */
	GsCudaPipeline *pipe;		/* for its launches, or NULL */
	size_t		pipe_rows;
} DevModel;

/* A backend's segment, mapped here. */
typedef struct Mapped
{
	dsm_handle	h;
	void	   *addr;
	size_t		size;
} Mapped;

/* A request taken from the queue, with its segment and slot. */
typedef struct Work
{
	GsSvcRequest r;
	GsSvcSegment *seg;			/* NULL: dropped (or a FORGET) */
	size_t		size;
	GsSvcSlot  *slot;
	DevModel   *model;			/* GS_SVC_SCORE: its model */
	size_t		rows;			/* GS_SVC_SCORE: the slot's n_rows when taken */
	bool		done;
} Work;

static DevModel models[MAX_MODELS];
static int	n_models;
static Mapped maps[MAX_MAPS];
static int	n_maps;
static uint64 clock_uses;
static GsSvcControl *ctl;
static uint32 my_generation;

/* ---- memory for the core ---- */

static void *
malloc_alloc(void *ctx, size_t size)
{
	return malloc(size ? size : 1);
}

static void
malloc_free(void *ctx, void *ptr)
{
	free(ptr);
}

static const GsAllocator malloc_allocator = {malloc_alloc, malloc_free, NULL};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- backends' segments ---- */

/* Forget a mapped segment. */
static void
unmap_segment(dsm_handle h)
{
	for (int i = 0; i < n_maps; i++)
		if (maps[i].h == h)
		{
			munmap(maps[i].addr, maps[i].size);
			maps[i] = maps[--n_maps];
			return;
		}
}

/* Forget every mapped segment (they are mapped again when used). */
static void
unmap_all(void)
{
	while (n_maps > 0)
		unmap_segment(maps[0].h);
}

/*
 * A backend's DSM segment by its handle and serial, mapped here (once): the
 * POSIX shared memory object PostgreSQL names "/PostgreSQL.<handle>".  The
 * backend keeps it while it may queue requests on it; our mapping stays
 * valid after it is unlinked, and the serial tells a later segment that
 * reuses the handle from it.  NULL if it is gone.
 */
static GsSvcSegment *
map_segment(dsm_handle h, uint64 serial, size_t *size)
{
	char		name[64];
	int			fd;
	struct stat st;
	void	   *addr;

	for (int i = 0; i < n_maps; i++)
		if (maps[i].h == h)
		{
			if (((GsSvcSegment *) maps[i].addr)->serial == serial)
			{
				*size = maps[i].size;
				return maps[i].addr;
			}
			unmap_segment(h);
			break;
		}
	if (n_maps == MAX_MAPS)
		return NULL;
	snprintf(name, sizeof(name), "/PostgreSQL.%u", h);
	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || (size_t) st.st_size < GS_SVC_DATA_OFFSET)
	{
		close(fd);
		return NULL;
	}
	addr = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (addr == MAP_FAILED)
		return NULL;
	if (((GsSvcSegment *) addr)->magic != GS_SVC_MAGIC ||
		((GsSvcSegment *) addr)->serial != serial)
	{
		munmap(addr, st.st_size);
		return NULL;
	}
	maps[n_maps].h = h;
	maps[n_maps].addr = addr;
	maps[n_maps].size = st.st_size;
	n_maps++;
	*size = st.st_size;
	return addr;
}

/* Wake the backend of a request. */
static void
wake(int procno)
{
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/* Finish a slot: DONE or FAILED, unless its backend cancelled it. */
static void
finish(Work *w, int rc, const char *err)
{
	if (rc != GS_CUDA_OK)
	{
		w->slot->rc = rc;
		strlcpy(w->slot->err, err, sizeof(w->slot->err));
	}
	pg_memory_barrier();
	(void) __sync_bool_compare_and_swap(&w->slot->state, GS_SVC_TAKEN,
										rc == GS_CUDA_OK ? GS_SVC_DONE : GS_SVC_FAILED);
	wake(w->r.procno);
	w->done = true;
}

/* ---- models ---- */

static DevModel *
find_model(Oid dboid, int64 model_id)
{
	for (int i = 0; i < n_models; i++)
		if (models[i].dboid == dboid && models[i].model_id == model_id)
		{
			models[i].last_use = ++clock_uses;
			models[i].last_use_s = now_s();
			return &models[i];
		}
	return NULL;
}

/* What model d holds on the device, about: the model and its pipeline. */
static size_t
model_bytes(const DevModel *d)
{
	return d->bytes + d->pipe_rows * sizeof(float) * 2 *
		((size_t) d->model->n_features + (size_t) d->model->n_outputs);
}

static void
free_model(DevModel *d)
{
	if (d->pipe)
		gs_provider.pipeline_free(d->pipe);
	if (d->dev)
		gs_provider.model_free(d->dev);
	gs_model_free(d->model);
	*d = models[--n_models];
}

/* Free replaced versions no batch has used for REPLACED_GRACE_S, and any unused for UNUSED_S. */
static void
free_replaced(void)
{
	double		now = now_s();

	for (int i = n_models - 1; i >= 0; i--)
		if (now - models[i].last_use_s >= (models[i].replaced ? REPLACED_GRACE_S : UNUSED_S))
			free_model(&models[i]);
}

/*
 * Make room under the device memory limit for bytes more: replaced
 * versions first, then the least recently used.  keep is not freed.
 */
static void
make_room(size_t bytes, const DevModel *keep)
{
	for (;;)
	{
		size_t		used = 0;
		DevModel   *victim = NULL;

		for (int i = 0; i < n_models; i++)
		{
			DevModel   *d = &models[i];

			used += model_bytes(d);
			if (d == keep)
				continue;
			if (victim == NULL || (d->replaced && !victim->replaced) ||
				(d->replaced == victim->replaced && d->last_use < victim->last_use))
				victim = d;
		}
		if (victim == NULL ||
			(used + bytes <= ctl->device_memory_limit && n_models < MAX_MODELS))
			return;
		free_model(victim);
	}
}

/* An upload: load the model staged in the segment and put it on the device. */
static void
do_upload(Work *w)
{
	GsSvcSegment *seg = w->seg;
	GsModel    *model = NULL;
	GsStatus	st;
	GsLimits	lim = gs_widest_limits();	/* it was checked when stored */
	const unsigned char *bytes;
	DevModel   *d;
	char		err[GS_SVC_MSG];
	int			rc;

	if (find_model(seg->dboid, seg->model_id) != NULL)
	{
		finish(w, GS_CUDA_OK, "");
		return;
	}
	if (GS_SVC_DATA_OFFSET + seg->bytes_len > w->size)
	{
		finish(w, GS_CUDA_ERROR, "the model's bytes do not fit their segment");
		return;
	}
	bytes = (const unsigned char *) seg + GS_SVC_DATA_OFFSET;
	if ((seg->format < 0 ?
		 gs_model_load_image(bytes, seg->bytes_len, &lim, &malloc_allocator, &model, &st) :
		 gs_model_load(bytes, seg->bytes_len, (GsModelFormat) seg->format, &lim, &malloc_allocator,
					   &model, &st)) != GS_OK)
	{
		snprintf(err, sizeof(err), "the GPU service could not read the model: %s", st.msg);
		finish(w, GS_CUDA_ERROR, err);
		return;
	}
	if (seg->format >= 0)
		gs_model_set_missing_value(model, seg->missing_value);
	make_room(seg->bytes_len, NULL);
	d = &models[n_models];
	memset(d, 0, sizeof(*d));
	d->dboid = seg->dboid;
	strlcpy(d->name, seg->name, NAMEDATALEN);
	d->model_id = seg->model_id;
	d->model = model;
	d->bytes = seg->bytes_len;
	d->last_use = ++clock_uses;
	d->last_use_s = now_s();
	rc = model->forest ? gs_provider.upload(model->forest, &d->dev, err, sizeof(err)) :
		gs_provider.mlp_upload(model->mlp, &d->dev, err, sizeof(err));
	if (rc != GS_CUDA_OK)
	{
		gs_model_free(model);
		finish(w, rc, err);
		if (rc == GS_CUDA_DEVICE_LOST)
			_exit(2);
		return;
	}
	n_models++;
	/* older versions of the model go once their last queries are done */
	for (int i = 0; i < n_models - 1; i++)
		if (models[i].dboid == d->dboid && models[i].model_id < d->model_id &&
			strcmp(models[i].name, d->name) == 0)
			models[i].replaced = true;
	finish(w, GS_CUDA_OK, "");
}

/* ---- scoring ---- */

/* Fail the batches w[0..n) not done yet with rc and err. */
static void
fail_all(Work **w, int n, int rc, const char *err)
{
	for (int i = 0; i < n; i++)
		if (!w[i]->done)
			finish(w[i], rc, err);
}

/*
 * One launch: the batches w[0..n) of model d, their columns copied side by
 * side into the pipeline's input (column-major, ld = their rows in all),
 * scored at once, each batch's outputs copied back into its segment.
 */
static void
launch(DevModel *d, Work **w, int n, size_t total)
{
	float	   *x;
	const float *out;
	size_t		off = 0;
	int			nf = d->model->n_features;
	int			nout = d->model->n_outputs;
	char		err[GS_SVC_MSG];
	float		ms[3] = {0, 0, 0};
	int			rc;

	if (d->pipe == NULL || d->pipe_rows < total)
	{
		if (d->pipe)
			gs_provider.pipeline_free(d->pipe);
		d->pipe = NULL;
		d->pipe_rows = 0;
		make_room(Max(total, 65536) * sizeof(float) * 2 * (size_t) (nf + nout), d);
		rc = gs_provider.pipeline_create(d->dev, Max(total, 65536), &d->pipe, err, sizeof(err));
		if (rc != GS_CUDA_OK)
		{
			d->pipe = NULL;
			fail_all(w, n, rc, err);
			if (rc == GS_CUDA_DEVICE_LOST)
				_exit(2);
			return;
		}
		d->pipe_rows = Max(total, 65536);
	}
	/* fault injection: hold a stalled batch until its backend gives up */
	for (int i = 0; i < n; i++)
		for (int waited = 0; w[i]->slot->stall && waited < 60000 &&
			 w[i]->slot->state == GS_SVC_TAKEN; waited += 10)
			pg_usleep(10000);
	x = gs_provider.pipeline_input(d->pipe, 0);
	for (int i = 0; i < n; i++)
	{
		const float *src = (const float *) ((const char *) w[i]->seg +
											gs_svc_in_offset(w[i]->seg, w[i]->r.slot));
		size_t		rows = w[i]->rows;

		for (int f = 0; f < nf; f++)
			memcpy(x + (size_t) f * total + off, src + (size_t) f * rows, sizeof(float) * rows);
		off += rows;
	}
	rc = gs_provider.pipeline_submit(d->pipe, 0, total, err, sizeof(err));
	if (rc == GS_CUDA_OK)
		rc = gs_provider.pipeline_wait(d->pipe, 0, &out, err, sizeof(err));
	if (rc != GS_CUDA_OK)
	{
		fail_all(w, n, rc, err);
		if (rc == GS_CUDA_DEVICE_LOST)
			_exit(2);
		return;
	}
	if (gs_provider.pipeline_times)
		(void) gs_provider.pipeline_times(d->pipe, 0, ms);
	off = 0;
	for (int i = 0; i < n; i++)
	{
		float	   *dst = (float *) ((char *) w[i]->seg + gs_svc_out_offset(w[i]->seg, w[i]->r.slot));
		size_t		rows = w[i]->rows;

		memcpy(dst, out + off * nout, sizeof(float) * rows * nout);
		for (int k = 0; k < 3; k++)
			w[i]->slot->device_ms[k] = total > 0 ? ms[k] * (float) rows / (float) total : 0;
		w[i]->slot->merged_with = n - 1;
		finish(w[i], GS_CUDA_OK, "");
		off += rows;
	}
	SpinLockAcquire(&ctl->mutex);
	ctl->launches++;
	ctl->requests += n;
	ctl->merged += n > 1 ? n : 0;
	SpinLockRelease(&ctl->mutex);
}

/*
 * The batches w[0..n): launched model by model, in the order of each
 * model's first batch, merged up to the pipeline's rows.
 */
static void
do_scores(Work **w, int n)
{
	static Work *group[GS_SVC_QUEUE];

	for (int i = 0; i < n; i++)
	{
		Work	   *b = w[i];

		b->model = find_model(b->seg->dboid, b->seg->model_id);
		b->rows = b->slot->n_rows;
		if (b->model == NULL)
			finish(b, GS_SVC_NOT_RESIDENT,
				   "the GPU service does not hold this model version (it was evicted, or the GPU process restarted)");
		else if (b->rows > b->seg->max_rows ||
				 b->model->model->n_features != b->seg->n_features ||
				 b->model->model->n_outputs != b->seg->n_outputs)
			finish(b, GS_CUDA_ERROR, "a batch does not fit its pipeline");
	}
	for (int i = 0; i < n; i++)
	{
		DevModel   *d = w[i]->model;
		int			n_group = 0;
		size_t		total = 0;
		size_t		cap;

		if (w[i]->done)
			continue;
		cap = Max(d->pipe_rows, (size_t) 65536);
		for (int j = i; j < n; j++)
		{
			if (w[j]->done || w[j]->model != d)
				continue;
			if (n_group > 0 && total + w[j]->rows > cap)
			{
				launch(d, group, n_group, total);
				n_group = 0;
				total = 0;
			}
			group[n_group++] = w[j];
			total += w[j]->rows;
		}
		if (n_group > 0)
			launch(d, group, n_group, total);
	}
}

/* Is the backend of pid still there? */
static bool
owner_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/*
 * Take the pending requests into w (at most max); returns how many.  Each
 * is marked TAKEN before the queue lets go of it (see the header comment);
 * a request whose backend exited, whose segment is gone or whose slot was
 * cancelled is dropped (seg NULL).
 */
static int
take_requests(Work *w, int max)
{
	int			n = 0;

	SpinLockAcquire(&ctl->mutex);
	while (ctl->head + n != ctl->tail && n < max)
	{
		w[n].r = ctl->queue[(ctl->head + n) % GS_SVC_QUEUE];
		n++;
	}
	SpinLockRelease(&ctl->mutex);
	if (n == 0)
		return 0;
	if (n_maps > MAX_MAPS / 2)
		unmap_all();
	for (int i = 0; i < n; i++)
	{
		Work	   *x = &w[i];
		GsSvcSlot  *slot;

		x->seg = NULL;
		x->slot = NULL;
		x->done = false;
		if (x->r.kind == GS_SVC_FORGET || !owner_alive(x->r.pid))
			continue;
		x->seg = map_segment(x->r.segment, x->r.serial, &x->size);
		if (x->seg == NULL || x->r.slot < 0 || x->r.slot > 1 ||
			(x->r.kind == GS_SVC_SCORE &&
			 gs_svc_pipe_size(x->seg->max_rows, x->seg->n_features, x->seg->n_outputs) > x->size))
		{
			x->seg = NULL;
			continue;
		}
		slot = &x->seg->slot[x->r.slot];
		slot->generation = my_generation;
		pg_memory_barrier();
		if (!__sync_bool_compare_and_swap(&slot->state, GS_SVC_QUEUED, GS_SVC_TAKEN))
		{
			x->seg = NULL;		/* cancelled */
			continue;
		}
		x->slot = slot;
	}
	SpinLockAcquire(&ctl->mutex);
	ctl->head += n;
	ctl->last_request = GetCurrentTimestamp();
	SpinLockRelease(&ctl->mutex);
	return n;
}

/*
 * Publish what the device has and what it has free, for gpu_device_info,
 * and the models resident, for gpu_service_info.
 */
static void
publish_info(void)
{
	GsCudaInfo *in = &gs_provider.info;
	uint64		bytes = 0;

	for (int i = 0; i < n_models; i++)
		bytes += model_bytes(&models[i]);
	SpinLockAcquire(&ctl->mutex);
	ctl->resident_models = n_models;
	ctl->resident_bytes = bytes;
	for (int i = 0; i < n_models; i++)
	{
		ctl->resident[i].dboid = models[i].dboid;
		ctl->resident[i].model_id = models[i].model_id;
	}
	ctl->device_count = in->device_count;
	strlcpy(ctl->device_name, in->name, sizeof(ctl->device_name));
	ctl->cc_major = in->cc_major;
	ctl->cc_minor = in->cc_minor;
	ctl->total_mem = in->total_mem;
	ctl->free_mem = in->free_mem;
	ctl->driver_version = in->driver_version;
	ctl->runtime_version = in->runtime_version;
	SpinLockRelease(&ctl->mutex);
}

/* The device process's main loop; see service.h. */
void
gs_svc_device_main(GsSvcControl *control, uint32 generation)
{
	static Work work[GS_SVC_QUEUE];
	static Work *scores[GS_SVC_QUEUE];
	pid_t		parent = getppid();
	double		probed = 0;
	char		err[256];

	ctl = control;
	my_generation = generation;
	gs_provider_path = ctl->provider_path;
	gs_provider_load_local();
	publish_info();
	SpinLockAcquire(&ctl->mutex);
	if (gs_provider.usable)
		ctl->device_state = GS_SVC_DEV_READY;
	else
	{
		ctl->device_state = GS_SVC_DEV_FAILED;
		strlcpy(ctl->device_reason, gs_provider.reason, GS_SVC_MSG);
	}
	SpinLockRelease(&ctl->mutex);
	if (!gs_provider.usable)
		_exit(0);

	for (;;)
	{
		struct timespec deadline;
		int			n,
					n_scores = 0;

		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += 200 * 1000 * 1000;
		if (deadline.tv_nsec >= 1000000000L)
		{
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		if (sem_timedwait(&ctl->wake, &deadline) != 0)
			unmap_all();		/* idle: let go of the backends' segments */
		free_replaced();
		if (getppid() != parent)
			_exit(0);
		/* let more requests come, up to merge_delay_us, so that they share launches */
		if (ctl->merge_delay_us > 0)
			pg_usleep(ctl->merge_delay_us);
		n = take_requests(work, GS_SVC_QUEUE);
		for (int i = 0; i < n; i++)
			if (work[i].r.kind == GS_SVC_UPLOAD && work[i].seg)
			{
				do_upload(&work[i]);
				unmap_segment(work[i].r.segment);	/* upload segments serve once */
			}
			else if (work[i].r.kind == GS_SVC_SCORE && work[i].seg)
				scores[n_scores++] = &work[i];
		do_scores(scores, n_scores);
		for (int i = 0; i < n; i++)
			if (work[i].r.kind == GS_SVC_FORGET)
				unmap_segment(work[i].r.segment);
		/* the device's free memory for gpu_device_info, once a second */
		if (n > 0 && now_s() - probed >= 1.0)
		{
			probed = now_s();
			(void) gs_provider.probe(&gs_provider.info, err, sizeof(err));
		}
		publish_info();
	}
}

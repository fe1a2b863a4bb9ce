/*
 * service.h
 *	  The GPU service: one long-lived process per cluster that owns the GPU
 *	  (one CUDA context, each model version uploaded once, the provider's
 *	  pipelines) and scores the batches of every session and parallel
 *	  worker; and the shared memory it is found by, which also keeps
 *	  gpu_model_stats.
 *
 * Three kinds of process:
 *
 *   backends (and parallel workers) score through the service provider
 *   (service_client.c), which fills the GsProvider table (provider.h): a
 *   pipeline is a DSM segment of the backend's holding two slots of input
 *   and output; a submit queues a request in the control segment and wakes
 *   the device process; a wait sleeps on the backend's latch, with a timeout,
 *   checking for interrupts and for the service's death;
 *
 *   the service worker (service_worker.c), a dynamic background worker that
 *   the first backend wanting the GPU starts (no shared_preload_libraries),
 *   forks and supervises the device process, fails the requests of a device
 *   process that died and starts another, and exits when idle;
 *
 *   the device process (service_device.c), a child of the worker that the
 *   postmaster does not know: it loads the provider and holds the CUDA
 *   context, maps the backends' segments itself (POSIX shared memory by
 *   name), uploads models (their bytes staged by a backend), merges the
 *   pending batches of one model version into one launch and sets each
 *   backend's latch when its batch is done.  It calls no PostgreSQL code
 *   that takes a lock or allocates: a crash (a bad driver, a sticky CUDA
 *   error, SIGSEGV) kills only it, never the cluster.
 *
 * The control segment is a pinned DSM segment, made by the first backend
 * that needs it and found through the file pg_gpuscore.service in the data
 * directory (postmaster pid, a random cookie, the handle), under a file
 * lock; it lives until the postmaster stops.  Everything in it is guarded
 * by its spinlock, held for a few instructions only (never across a
 * system call, a CUDA call or an allocation).
 */
#ifndef GS_SERVICE_H
#define GS_SERVICE_H

#include <semaphore.h>
#include <sys/types.h>

#include "datatype/timestamp.h"
#include "storage/dsm.h"
#include "storage/spin.h"

#define GS_SVC_MAGIC 0x47535643	/* "GSVC" */
#define GS_SVC_VERSION 1
#define GS_SVC_STATS 256		/* gpu_model_stats entries (LRU) */
#define GS_SVC_QUEUE 512		/* requests pending at once */
#define GS_SVC_HIST 12			/* score histogram bins, see GsSvcStat */
#define GS_SVC_MSG 256
#define GS_SVC_MODELS 128		/* model versions resident at once */

/* gpu_model_stats of one model version in one database. */
typedef struct GsSvcStat
{
	bool		used;
	Oid			dboid;
	char		name[NAMEDATALEN];
	int32		version;
	int64		model_id;
	int64		rows[2];		/* [0] CPU, [1] GPU */
	int64		batches[2];
	double		device_ms;		/* GPU time (waiting for or running batches) */
	TimestampTz last_use;
	double		sum;			/* of the first output of every row */
	double		sumsq;
	int64		nan_rows;		/* whose first output is NaN (not summed) */
	int64		hist[GS_SVC_HIST];	/* < 0, [0, 0.1), ..., [0.9, 1], > 1 */
} GsSvcStat;

/* The kinds of request a backend queues for the device process. */
typedef enum GsSvcRequestKind
{
	GS_SVC_UPLOAD,				/* make a model version resident */
	GS_SVC_SCORE,				/* score a slot of a pipeline segment */
	GS_SVC_FORGET				/* a pipeline segment goes: unmap it */
} GsSvcRequestKind;

/* A request in the queue. */
typedef struct GsSvcRequest
{
	GsSvcRequestKind kind;
	dsm_handle	segment;		/* the model or pipeline segment */
	int			slot;			/* GS_SVC_SCORE: 0 or 1 */
	uint64		serial;			/* the segment's GsSvcSegment.serial */
	int			procno;			/* the backend to wake */
	pid_t		pid;			/* and its pid: work of an exited backend is dropped */
	uint64		seq;			/* order of arrival */
} GsSvcRequest;

/* A FAILED slot's rc when the device process does not hold its model version. */
#define GS_SVC_NOT_RESIDENT (-100)

/* Device process states. */
typedef enum GsSvcDeviceState
{
	GS_SVC_DEV_NONE,			/* not started */
	GS_SVC_DEV_STARTING,
	GS_SVC_DEV_READY,			/* probed: device info valid */
	GS_SVC_DEV_FAILED			/* the provider or the device could not be used */
} GsSvcDeviceState;

typedef struct GsSvcControl
{
	uint32		magic;
	uint32		version;
	uint64		cookie;			/* as in pg_gpuscore.service */
	slock_t		mutex;
	sem_t		wake;			/* posted for each request queued */

	/* the service */
	pid_t		worker_pid;		/* 0: no service worker */
	int			worker_procno;	/* its PGPROC, to set its latch */
	bool		stopping;		/* the worker is leaving: no request is queued */
	bool		want_device;	/* a backend asked for the device */
	pid_t		device_pid;		/* 0: no device process */
	uint32		generation;		/* device processes started so far */
	TimestampTz device_started; /* when the last one was */
	int64		device_restarts;	/* device processes that died and were replaced */
	GsSvcDeviceState device_state;
	char		device_reason[GS_SVC_MSG];	/* why FAILED */
	char		provider_path[1024];	/* the provider the service loads */
	int			device_count;
	char		device_name[256];
	int			cc_major;
	int			cc_minor;
	uint64		total_mem;
	uint64		free_mem;
	int			driver_version;
	int			runtime_version;
	uint64		device_memory_limit;	/* bytes of models kept resident */
	int			merge_delay_us;
	TimestampTz last_request;
	int64		requests;		/* batches scored */
	int			resident_models;	/* model versions on the device */
	uint64		resident_bytes; /* and what they take there, about */
	struct
	{
		Oid			dboid;
		int64		model_id;
	}			resident[GS_SVC_MODELS];	/* which (a hint: one may go at once) */
	int64		launches;		/* batches launched on the device */
	int64		merged;			/* requests that shared a launch */

	/* the queue: requests [head, tail) modulo GS_SVC_QUEUE */
	uint64		head;
	uint64		tail;
	uint64		next_serial;
	GsSvcRequest queue[GS_SVC_QUEUE];

	/* gpu_model_stats */
	GsSvcStat	stats[GS_SVC_STATS];
} GsSvcControl;

/*
 * The header of a segment a backend makes for the device process: a model's
 * bytes (GS_SVC_UPLOAD) or a pipeline's two slots (GS_SVC_SCORE).  States
 * of a slot: IDLE, QUEUED (the backend queued it), TAKEN (the device
 * process works on it), DONE or FAILED (set by the device process, or by the
 * worker for a device process that died), CANCELLED (the backend gave up;
 * the device process skips or drops it).
 */
typedef enum GsSvcSlotState
{
	GS_SVC_IDLE,
	GS_SVC_QUEUED,
	GS_SVC_TAKEN,
	GS_SVC_DONE,
	GS_SVC_FAILED,
	GS_SVC_CANCELLED
} GsSvcSlotState;

typedef struct GsSvcSlot
{
	volatile int state;			/* GsSvcSlotState */
	uint32		generation;		/* of the device process that took it */
	uint64		n_rows;
	int			rc;				/* GS_CUDA_* of a FAILED slot */
	char		err[GS_SVC_MSG];
	float		device_ms[3];	/* copy in, kernel, copy back (0: unknown) */
	int			merged_with;	/* other requests in the same launch */
	bool		stall;			/* fault injection 'service_stall': the device
								 * process holds the batch until cancelled */
} GsSvcSlot;

typedef struct GsSvcSegment
{
	uint32		magic;
	uint64		serial;			/* unique: tells a reused handle from this segment */
	Oid			dboid;
	char		name[NAMEDATALEN];	/* the model's name */
	int64		model_id;		/* the model version (never reused) */
	int32		format;			/* GsModelFormat of the bytes; -1: an image */
	float		missing_value;	/* NaN: none */
	uint64		max_rows;		/* pipeline */
	int32		n_features;
	int32		n_outputs;
	uint64		bytes_len;		/* upload: length of the bytes after the header */
	GsSvcSlot	slot[2];		/* pipeline: the two slots; upload: slot[0] */
	/* then: the model's bytes, or in[2][max_rows * n_features] and
	 * out[2][max_rows * n_outputs], each at a 64-byte boundary */
} GsSvcSegment;

/* Where the data of a segment start (64-byte aligned). */
#define GS_SVC_DATA_OFFSET (((sizeof(GsSvcSegment) + 63) / 64) * 64)

/* Offsets of a pipeline segment's input and output buffers. */
static inline size_t
gs_svc_in_offset(const GsSvcSegment *s, int slot)
{
	size_t		in_bytes = (((sizeof(float) * s->max_rows * s->n_features) + 63) / 64) * 64;

	return GS_SVC_DATA_OFFSET + (size_t) slot * in_bytes;
}

static inline size_t
gs_svc_out_offset(const GsSvcSegment *s, int slot)
{
	size_t		in_bytes = (((sizeof(float) * s->max_rows * s->n_features) + 63) / 64) * 64;
	size_t		out_bytes = (((sizeof(float) * s->max_rows * s->n_outputs) + 63) / 64) * 64;

	return GS_SVC_DATA_OFFSET + 2 * in_bytes + (size_t) slot * out_bytes;
}

static inline size_t
gs_svc_pipe_size(uint64 max_rows, int n_features, int n_outputs)
{
	size_t		in_bytes = (((sizeof(float) * max_rows * n_features) + 63) / 64) * 64;
	size_t		out_bytes = (((sizeof(float) * max_rows * n_outputs) + 63) / 64) * 64;

	return GS_SVC_DATA_OFFSET + 2 * in_bytes + 2 * out_bytes;
}

/* ---- service_shmem.c ---- */

/*
 * The control segment, attached (and kept attached for the life of the
 * backend), made first if create; NULL when there is none (not create) or
 * it cannot be made (no DSM slot, no shared memory): callers do without.
 */
extern GsSvcControl *gs_svc_control(bool create);

/* Record one scored batch of model m in gpu_model_stats. */
struct GsModelRef;
extern void gs_svc_record(const struct GsModelRef *m, bool on_gpu, size_t n_rows,
						  const float *out, int n_outputs, double device_ms);

/* Queue a request and wake the device process; false when the queue is full. */
extern bool gs_svc_enqueue(GsSvcControl *ctl, GsSvcRequestKind kind, dsm_handle segment,
						   uint64 serial, int slot);

/* A new segment serial (unique in the cluster). */
extern uint64 gs_svc_serial(GsSvcControl *ctl);

/* ---- service_worker.c ---- */

/*
 * Make sure the service runs (start its worker if there is none), and wait
 * until its device process has probed the device or failed; false with why
 * when the service cannot be had (no free background worker slot, a
 * timeout), and *other_provider (if not NULL) set when it runs another
 * provider than provider_path (pg_gpuscore.provider differs between
 * sessions: tests do that).
 */
extern bool gs_svc_ensure_started(GsSvcControl *ctl, const char *provider_path,
								  char *why, size_t whylen, bool *other_provider);

/* ---- service_device.c ---- */

/* The device process's life: never returns (exits with _exit). */
extern void gs_svc_device_main(GsSvcControl *ctl, uint32 generation) pg_attribute_noreturn();

#endif							/* GS_SERVICE_H */

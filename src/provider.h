/*
 * provider.h
 *	  The backend's view of the GPU provider (provider.c, provider_local.c,
 *	  service_client.c), shared with the batch scorer (device.c).
 */
#ifndef GS_PROVIDER_GLUE_H
#define GS_PROVIDER_GLUE_H

#include "../cuda/gs_cuda.h"

typedef struct GsProvider
{
	bool		tried;			/* load attempted in this backend */
	bool		service;		/* the functions below score through the GPU service */
	bool		usable;			/* loaded, a device found, not lost */
	bool		expected;		/* unusable for an ordinary reason (no CUDA, no device) */
	char		reason[512];	/* why not usable, or "" */
	GsCudaInfo	info;
	void	   *handle;
	int			(*probe) (GsCudaInfo *, char *, size_t);
	int			(*upload) (const GsForest *, GsCudaModel **, char *, size_t);
	int			(*mlp_upload) (const GsMlp *, GsCudaModel **, char *, size_t);
	void		(*model_free) (GsCudaModel *);
	int			(*predict) (GsCudaModel *, const float *, size_t, float *, char *, size_t);
	int			(*pipeline_create) (GsCudaModel *, size_t, GsCudaPipeline **, char *, size_t);
	float	   *(*pipeline_input) (GsCudaPipeline *, int);
	int			(*pipeline_submit) (GsCudaPipeline *, int, size_t, char *, size_t);
	int			(*pipeline_wait) (GsCudaPipeline *, int, const float **, char *, size_t);
	void		(*pipeline_free) (GsCudaPipeline *);
	int			(*pipeline_times) (GsCudaPipeline *, int, float *);	/* optional */
	int			(*set_fault) (const char *);
} GsProvider;

/* The provider of this process (provider_local.c). */
extern GsProvider gs_provider;

/* ---- provider_local.c ---- */

/* Load the provider in this process (pg_gpuscore.provider); never raises an ERROR. */
extern void gs_provider_load_local(void);

/* The provider's path: pg_gpuscore.provider, or $libdir/pg_gpuscore_cuda. */
extern void gs_provider_file(char *path, size_t len);

/*
 * Whether the provider can be loaded at all here; false with the reason set
 * in gs_provider (an injected fault, or a build without CUDA).
 */
extern bool gs_provider_present(const char *path);

/* Mark the GPU unusable for the rest of this backend (a sticky error). */
extern void gs_provider_lost(const char *why);

/* Pass pg_gpuscore.fault_injection to the provider, if loaded. */
extern void gs_provider_apply_fault(void);

/* ---- service_client.c ---- */

/*
 * The service provider (service_client.c): connect to the GPU service,
 * starting it if need be, and fill gs_provider with its functions; false
 * with why when the service cannot be had, and *quiet set when that is
 * nothing to tell the user (it runs another provider).
 */
extern bool gs_svc_provider_load(const char *provider_path, char *why, size_t whylen,
								 bool *quiet);

/* Make ref's model version resident in the GPU service (service_client.c). */
extern int	gs_svc_upload(GsModelRef *ref, GsCudaModel **out, char *why, size_t whylen);

/* ---- provider.c ---- */

/*
 * Load and probe the provider once per backend: through the GPU service
 * (pg_gpuscore.gpu_service), or else in this backend; never raises an
 * ERROR (a NOTICE says once why the service could not be used).
 */
extern void gs_provider_load(void);

/*
 * Upload ref's model (once) and self-test it against the CPU engine.
 * Caller must have checked gs_provider.usable.  Returns false with the
 * reason in why when the model cannot be scored on the GPU.
 */
extern bool gs_device_upload(GsModelRef *ref, char *why, size_t whylen);

#endif							/* GS_PROVIDER_GLUE_H */

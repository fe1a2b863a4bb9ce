/*
 * provider.h
 *	  The backend's view of the GPU provider (provider.c), shared with the
 *	  batch scorer (device.c).
 */
#ifndef GS_PROVIDER_GLUE_H
#define GS_PROVIDER_GLUE_H

#include "../cuda/gs_cuda.h"

typedef struct GsProvider
{
	bool		tried;			/* load attempted in this backend */
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

extern GsProvider gs_provider;

/* Load and probe the provider once per backend; never raises an ERROR. */
extern void gs_provider_load(void);

/* Mark the GPU unusable for the rest of this backend (a sticky error). */
extern void gs_provider_lost(const char *why);

/* Pass pg_gpuscore.fault_injection to the provider, if loaded. */
extern void gs_provider_apply_fault(void);

/*
 * Upload ref's model (once) and self-test it against the CPU engine.
 * Caller must have checked gs_provider.usable.  Returns false with the
 * reason in why when the model cannot be scored on the GPU.
 */
extern bool gs_device_upload(GsModelRef *ref, char *why, size_t whylen);

#endif							/* GS_PROVIDER_GLUE_H */

/*
 * device.c
 *	  Choice of the engine that scores a batch (pg_gpuscore.device), lazy
 *	  loading of the CUDA provider, and gpu_device_info().
 *
 * The CUDA provider (pg_gpuscore_cuda.so, built from cuda/ when nvcc is
 * found) is dlopen()ed in a backend the first time a GPU is asked for,
 * never in _PG_init (which may run in the postmaster).  The first attempt
 * is remembered, success or failure with its reason, for the life of the
 * backend.
 *
 * Engine choice in this version: 'cpu' and 'auto' score on the CPU; 'gpu'
 * scores batches on the GPU through the provider's simple kernel, or raises
 * an ERROR saying why no GPU engine is available.  ('auto' will use the GPU
 * once the GPU engine has been validated on real devices.)
 *
 * Device memory: a model uploaded for a GsModelRef is owned by that ref and
 * freed by gs_device_release_model() when the ref's last reference goes
 * (model_cache.c), which also happens on ERROR through memory context
 * callbacks.
 */
#include "postgres.h"

#include <dlfcn.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "../cuda/gs_cuda.h"
#include "core/cpu_engine.h"
#include "gpuscore.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_device_info);

/* What this backend learned about the GPU, once. */
typedef struct ProviderState
{
	bool		tried;
	bool		usable;
	char		reason[512];	/* why not usable, or "" */
	GsCudaInfo	info;
	void	   *handle;
	gs_cuda_model_upload_fn upload;
	gs_cuda_predict_fn predict;
	gs_cuda_model_free_fn model_free;
} ProviderState;

static ProviderState provider;

/* Look up one provider symbol; NULL (and a reason) if missing. */
static void *
provider_symbol(const char *name)
{
	void	   *p = dlsym(provider.handle, name);

	if (p == NULL)
		snprintf(provider.reason, sizeof(provider.reason),
				 "the CUDA provider lacks symbol %s", name);
	return p;
}

/*
 * Load and probe the CUDA provider once per backend.  Never raises an
 * ERROR: a failure is remembered in provider.reason.
 */
static void
provider_load(void)
{
	char		path[MAXPGPATH];
	gs_cuda_abi_version_fn abi;
	gs_cuda_probe_fn probe;
	char		err[256];

	if (provider.tried)
		return;
	provider.tried = true;
	snprintf(path, sizeof(path), "%s/pg_gpuscore_cuda%s", pkglib_path, DLSUFFIX);
	if (access(path, R_OK) != 0)
	{
		snprintf(provider.reason, sizeof(provider.reason),
				 "pg_gpuscore was built without CUDA (no %s)", path);
		return;
	}
	provider.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (provider.handle == NULL)
	{
		snprintf(provider.reason, sizeof(provider.reason),
				 "could not load the CUDA provider: %s", dlerror());
		return;
	}
	abi = (gs_cuda_abi_version_fn) provider_symbol("gs_cuda_abi_version");
	probe = (gs_cuda_probe_fn) provider_symbol("gs_cuda_probe");
	provider.upload = (gs_cuda_model_upload_fn) provider_symbol("gs_cuda_model_upload");
	provider.predict = (gs_cuda_predict_fn) provider_symbol("gs_cuda_predict");
	provider.model_free = (gs_cuda_model_free_fn) provider_symbol("gs_cuda_model_free");
	if (!abi || !probe || !provider.upload || !provider.predict || !provider.model_free)
		return;
	if (abi() != GS_CUDA_ABI_VERSION)
	{
		snprintf(provider.reason, sizeof(provider.reason),
				 "the CUDA provider has interface version %d, the extension needs %d",
				 abi(), GS_CUDA_ABI_VERSION);
		return;
	}
	if (probe(&provider.info, err, sizeof(err)) != 0)
	{
		snprintf(provider.reason, sizeof(provider.reason), "%s", err);
		return;
	}
	provider.usable = true;
}

/* Name of the engine used for batches. */
const char *
gs_engine_name(void)
{
	return gs_device_mode == GS_DEVICE_GPU ? "gpu" : "cpu";
}

/* Free the device copy of a model, if any; see gpuscore.h. */
void
gs_device_release_model(GsModelRef *ref)
{
	if (ref->device_model && provider.model_free)
		provider.model_free((GsCudaModel *) ref->device_model);
	ref->device_model = NULL;
}

/* Score a batch on the GPU; ERRORs when that is impossible. */
static void
gpu_predict(const GsModelRef *m, const float *x, size_t ld, size_t n_rows,
			float *out)
{
	GsModelRef *ref = (GsModelRef *) m;
	char		err[256];

	provider_load();
	if (!provider.usable)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("no GPU engine is available"),
				 errdetail("%s", provider.reason),
				 errhint("Set pg_gpuscore.device to 'auto' or 'cpu'; gpu_device_info() shows what this backend sees.")));
	if (ref->device_model == NULL &&
		provider.upload(m->forest, (GsCudaModel **) &ref->device_model, err, sizeof(err)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("could not upload model \"%s\" to the GPU", m->name),
				 errdetail("%s", err)));
	if (provider.predict((GsCudaModel *) ref->device_model, x, ld, n_rows, out,
						 err, sizeof(err)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("GPU scoring failed for model \"%s\"", m->name),
				 errdetail("%s", err)));
}

/* Rows the CPU engine scores between two interrupt checks. */
#define CPU_SLICE_ROWS 4096

/*
 * Score a batch on the selected engine; see gpuscore.h.  The CPU engine
 * works in slices so that a cancel is noticed within a slice even for big
 * batches of big models.
 */
void
gs_engine_predict(const GsModelRef *m, const float *x, size_t ld,
				  size_t n_rows, float *margin, float *out)
{
	const GsForest *f = m->forest;

	if (gs_device_mode == GS_DEVICE_GPU)
	{
		gpu_predict(m, x, ld, n_rows, out);
		return;
	}
	for (size_t r0 = 0; r0 < n_rows; r0 += CPU_SLICE_ROWS)
	{
		size_t		n = Min((size_t) CPU_SLICE_ROWS, n_rows - r0);

		CHECK_FOR_INTERRUPTS();
		gs_cpu_predict(f, x + r0, ld, n, margin + r0 * f->n_groups,
					   out + r0 * f->n_outputs);
	}
}

/*
 * gpu_device_info() RETURNS TABLE(provider_loaded, reason, device_count,
 * device_name, compute_capability, total_memory, free_memory,
 * driver_version, runtime_version): what this backend sees.
 */
Datum
gpuscore_gpu_device_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[9];
	bool		nulls[9] = {0};
	GsCudaInfo *in = &provider.info;

	InitMaterializedSRF(fcinfo, 0);
	provider_load();
	values[0] = BoolGetDatum(provider.usable);
	values[1] = CStringGetTextDatum(provider.usable ? "" : provider.reason);
	nulls[1] = provider.usable;
	values[2] = Int32GetDatum(in->device_count);
	values[3] = CStringGetTextDatum(in->name);
	values[4] = CStringGetTextDatum(psprintf("%d.%d", in->cc_major, in->cc_minor));
	values[5] = Int64GetDatum((int64) in->total_mem);
	values[6] = Int64GetDatum((int64) in->free_mem);
	values[7] = Int32GetDatum(in->driver_version);
	values[8] = Int32GetDatum(in->runtime_version);
	if (!provider.usable)
	{
		for (int i = 3; i < 7; i++)
			nulls[i] = true;
		if (in->driver_version == 0)
			nulls[7] = true;
		if (in->runtime_version == 0)
			nulls[8] = true;
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

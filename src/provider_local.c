/*
 * provider_local.c
 *	  The backend's GPU provider state (gs_provider) and the loading of the
 *	  provider library into this process: dlopen, its symbols, its probe.
 *
 * The provider is dlopen()ed at most once per process and never closed; its
 * handle and functions live in gs_provider for the life of the process.  A
 * backend gets here through gs_provider_load (provider.c) when it does not
 * use the GPU service; the GPU service's own process (service_device.c)
 * comes here directly.
 */
#include "postgres.h"

#include <dlfcn.h>

#include "miscadmin.h"

#include "gpuscore.h"
#include "provider.h"

GsProvider	gs_provider;

/* Look up one provider symbol; NULL (and a reason) if missing. */
static void *
provider_symbol(const char *name)
{
	void	   *p = dlsym(gs_provider.handle, name);

	if (p == NULL && gs_provider.reason[0] == '\0')
		snprintf(gs_provider.reason, sizeof(gs_provider.reason),
				 "the GPU provider lacks symbol %s", name);
	return p;
}

/* Pass the pg_gpuscore.fault_injection setting to a loaded provider. */
void
gs_provider_apply_fault(void)
{
	if (gs_provider.set_fault)
		gs_provider.set_fault(gs_fault_injection ? gs_fault_injection : "");
}

/* The provider's path; see provider.h. */
void
gs_provider_file(char *path, size_t len)
{
	if (gs_provider_path && gs_provider_path[0])
		strlcpy(path, gs_provider_path, len);
	else
		snprintf(path, len, "%s/pg_gpuscore_cuda%s", pkglib_path, DLSUFFIX);
}

/* Whether the provider can be loaded at all here; see provider.h. */
bool
gs_provider_present(const char *path)
{
	if (gs_fault_injection && strcmp(gs_fault_injection, "provider_load") == 0)
	{
		snprintf(gs_provider.reason, sizeof(gs_provider.reason),
				 "could not load the GPU provider: injected fault");
		gs_provider.expected = false;
		return false;
	}
	if (access(path, R_OK) != 0)
	{
		snprintf(gs_provider.reason, sizeof(gs_provider.reason),
				 "pg_gpuscore was built without CUDA (no %s)", path);
		gs_provider.expected = true;
		return false;
	}
	return true;
}

/* Load the provider in this process; see provider.h. */
void
gs_provider_load_local(void)
{
	char		path[MAXPGPATH];
	int			(*abi) (void);
	char		err[256];

	if (gs_provider.tried)
		return;
	gs_provider.tried = true;
	gs_provider_file(path, sizeof(path));
	if (!gs_provider_present(path))
		return;
	gs_provider.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (gs_provider.handle == NULL)
	{
		snprintf(gs_provider.reason, sizeof(gs_provider.reason),
				 "could not load the GPU provider: %s", dlerror());
		return;
	}
	abi = (int (*) (void)) provider_symbol("gs_cuda_abi_version");
	gs_provider.probe = provider_symbol("gs_cuda_probe");
	gs_provider.upload = provider_symbol("gs_cuda_model_upload");
	gs_provider.mlp_upload = provider_symbol("gs_cuda_mlp_upload");
	gs_provider.model_free = provider_symbol("gs_cuda_model_free");
	gs_provider.predict = provider_symbol("gs_cuda_predict");
	gs_provider.pipeline_create = provider_symbol("gs_cuda_pipeline_create");
	gs_provider.pipeline_input = provider_symbol("gs_cuda_pipeline_input");
	gs_provider.pipeline_submit = provider_symbol("gs_cuda_pipeline_submit");
	gs_provider.pipeline_wait = provider_symbol("gs_cuda_pipeline_wait");
	gs_provider.pipeline_free = provider_symbol("gs_cuda_pipeline_free");
	gs_provider.set_fault = provider_symbol("gs_cuda_set_fault");
	/* optional: providers without device times still work */
	gs_provider.pipeline_times = dlsym(gs_provider.handle, "gs_cuda_pipeline_times");
	if (gs_provider.reason[0])
		return;
	if (abi() != GS_CUDA_ABI_VERSION)
	{
		snprintf(gs_provider.reason, sizeof(gs_provider.reason),
				 "the GPU provider has interface version %d, the extension needs %d",
				 abi(), GS_CUDA_ABI_VERSION);
		return;
	}
	gs_provider_apply_fault();
	if (gs_provider.probe(&gs_provider.info, err, sizeof(err)) != GS_CUDA_OK)
	{
		snprintf(gs_provider.reason, sizeof(gs_provider.reason), "%s", err);
		/* no driver or no device: a CPU-only machine, nothing unusual */
		gs_provider.expected = gs_provider.info.device_count == 0;
		return;
	}
	gs_provider.usable = true;
}

/* The GPU failed for good in this backend; see provider.h. */
void
gs_provider_lost(const char *why)
{
	gs_provider.usable = false;
	gs_provider.expected = false;
	snprintf(gs_provider.reason, sizeof(gs_provider.reason),
			 "the GPU was disabled for this session after an error: %s", why);
}

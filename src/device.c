/*
 * device.c
 *	  Choice of the engine that scores a batch (pg_gpuscore.device).
 *
 * This build has the CPU engine only: the GPU provider (cuda/) is not wired
 * into the batch paths yet.  'auto' therefore scores on the CPU, and 'gpu'
 * raises an ERROR saying that no GPU engine is available, rather than
 * quietly using the CPU.  Nothing here touches CUDA, so loading the library
 * in the postmaster or in a backend that never scores costs nothing.
 */
#include "postgres.h"

#include "core/cpu_engine.h"
#include "gpuscore.h"

/* Name of the engine used for batches. */
const char *
gs_engine_name(void)
{
	return "cpu";
}

/* Score a batch on the selected engine; see gpuscore.h. */
void
gs_engine_predict(const GsModelRef *m, const float *x, size_t ld,
				  size_t n_rows, float *margin, float *out)
{
	if (gs_device_mode == GS_DEVICE_GPU)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("no GPU engine is available"),
				 errdetail("This build of pg_gpuscore scores on the CPU only."),
				 errhint("Set pg_gpuscore.device to 'auto' or 'cpu'.")));
	gs_cpu_predict(m->forest, x, ld, n_rows, margin, out);
}

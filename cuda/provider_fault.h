/*
 * provider_fault.h
 *	  Fault injection shared by the CUDA provider and the CPU mock provider
 *	  (testing only; see gs_cuda_set_fault in gs_cuda.h).
 *
 * One process-wide setting, as a provider lives in one backend.  Included by
 * exactly one translation unit per provider.
 */
#ifndef GS_PROVIDER_FAULT_H
#define GS_PROVIDER_FAULT_H

#include <string.h>

typedef enum GsFault
{
	GS_FAULT_NONE = 0,
	GS_FAULT_UPLOAD,
	GS_FAULT_PIPELINE,
	GS_FAULT_SUBMIT,
	GS_FAULT_WAIT,
	GS_FAULT_OOM,
	GS_FAULT_DEVICE_LOST
} GsFault;

static GsFault gs_fault = GS_FAULT_NONE;

/* Set the fault point by name; 0 on success, -1 for an unknown name. */
static int
gs_fault_set(const char *point)
{
	static const char *const names[] = {"", "upload", "pipeline", "submit", "wait", "oom", "device_lost"};

	if (point == NULL)
		point = "";
	for (int i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(point, names[i]) == 0)
		{
			gs_fault = (GsFault) i;
			return 0;
		}
	return -1;
}

#endif							/* GS_PROVIDER_FAULT_H */

/*
 * pg_gpuscore.c
 *	  Module entry point: PG_MODULE_MAGIC, the pg_gpuscore.* settings, and
 *	  the planner and executor hooks of batched calls (batch_plan.c).
 *
 * _PG_init may run in the postmaster (shared_preload_libraries), so it only
 * defines settings and installs hooks: no CUDA, no catalog access, no
 * allocation beyond GUCs.
 */
#include "postgres.h"

#include "fmgr.h"
#include <limits.h>

#include "utils/guc.h"

#include "batch_plan.h"
#include "gpuscore.h"

PG_MODULE_MAGIC;

int			gs_batch_size = 65536;
int			gs_batch_memory_kb = 64 * 1024;
int			gs_device_mode = GS_DEVICE_AUTO;
int			gs_max_model_size_kb = 1024 * 1024;
int			gs_max_trees = 100000;
int			gs_max_tree_depth = 512;
int			gs_max_features = 1000000;
int			gs_max_nodes = 64 * 1024 * 1024;
int			gs_max_layers = 256;
int			gs_max_parameters = 256 * 1024 * 1024;
int			gs_verify_threads = 1;
int			gs_gpu_min_rows = 10000;
bool		gs_fallback_notice = true;
bool		gs_batch_calls = true;
bool		gs_gpu_service = true;
int			gs_gpu_service_idle_timeout = 60;
int			gs_gpu_service_timeout = 30000;
int			gs_gpu_service_memory_kb = 4 * 1024 * 1024;
int			gs_gpu_service_merge_delay_us = 0;
char	   *gs_provider_path = NULL;
char	   *gs_xgboost_library = NULL;
char	   *gs_fault_injection = NULL;

static const struct config_enum_entry device_options[] = {
	{"auto", GS_DEVICE_AUTO, false},
	{"cpu", GS_DEVICE_CPU, false},
	{"gpu", GS_DEVICE_GPU, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/* GUC check hook: a known fault injection point. */
static bool
check_fault_injection(char **newval, void **extra, GucSource source)
{
	static const char *const points[] = {"", "provider_load", "upload", "pipeline",
	"submit", "wait", "oom", "device_lost", "service_stall"};

	for (size_t i = 0; i < lengthof(points); i++)
		if (strcmp(*newval, points[i]) == 0)
			return true;
	GUC_check_errdetail("Valid points: provider_load, upload, pipeline, submit, wait, oom, device_lost, service_stall.");
	return false;
}

/* Define the pg_gpuscore.* settings. */
void
_PG_init(void)
{
	DefineCustomIntVariable("pg_gpuscore.batch_size",
							"Rows per columnar batch in batch scoring paths.",
							"gpu_score_query fetches, converts and scores this many rows at a time; "
							"memory use is about batch_size * (features + outputs) * 4 bytes.",
							&gs_batch_size, 65536, 1, 16 * 1024 * 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.batch_memory",
							"Most memory one batch's feature values and scores may take.",
							"Models with many features score batches of fewer than batch_size rows so that "
							"a batch fits, but never fewer than the smaller of batch_size and gpu_min_rows.",
							&gs_batch_memory_kb, 64 * 1024, 64, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomEnumVariable("pg_gpuscore.device",
							 "Engine that scores batches: auto, cpu or gpu.",
							 "auto uses the GPU when one is available and falls back to the CPU; "
							 "gpu raises an error when no GPU engine is available.",
							 &gs_device_mode, GS_DEVICE_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_model_size",
							"Largest model accepted by gpu_load_model.",
							NULL, &gs_max_model_size_kb, 1024 * 1024, 1, GS_GUC_MAX_MODEL_SIZE_KB,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_trees",
							"Most trees a model may have.",
							NULL, &gs_max_trees, 100000, 1, GS_GUC_MAX_TREES,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_tree_depth",
							"Deepest tree a model may have, in levels below the root.",
							NULL, &gs_max_tree_depth, 512, 1, GS_GUC_MAX_TREE_DEPTH,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_features",
							"Most features a model may have.",
							NULL, &gs_max_features, 1000000, 1, GS_GUC_MAX_FEATURES,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_nodes",
							"Most tree nodes a model may have, summed over its trees.",
							NULL, &gs_max_nodes, 64 * 1024 * 1024, 1, INT_MAX,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_layers",
							"Most dense layers a neural network may have.",
							NULL, &gs_max_layers, 256, 1, GS_GUC_MAX_LAYERS,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.max_parameters",
							"Most parameters (weights and biases) a neural network may have.",
							NULL, &gs_max_parameters, 256 * 1024 * 1024, 1, INT_MAX,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.verify_threads",
							"Threads XGBoost's own predictor uses in gpu_verify_model.",
							NULL, &gs_verify_threads, 1, 1, 256,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.gpu_min_rows",
							"Smallest batch that 'auto' sends to the GPU.",
							"Smaller batches are scored on the CPU, where a GPU round trip would cost more "
							"than it saves.  'gpu' ignores this setting.",
							&gs_gpu_min_rows, 10000, 1, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_gpuscore.batch_calls",
							 "Score gpu_score and gpu_predict calls of a query in columnar batches.",
							 "The planner puts a GpuScore node over the rows the calls score, which scores them "
							 "in batches on the engine pg_gpuscore.device selects; off leaves every call row by row "
							 "on the CPU.  Plans made before a change keep the form they were made with.",
							 &gs_batch_calls, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_gpuscore.gpu_service",
							 "Score GPU batches through the one GPU service of the cluster.",
							 "On, the first session that wants the GPU starts a background worker whose own "
							 "process holds the GPU for every session and parallel worker; off, each session "
							 "loads the GPU provider itself.  Read at a session's first GPU use.",
							 &gs_gpu_service, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.gpu_service_idle_timeout",
							"Seconds the GPU service waits without a request before it exits.",
							"0 keeps it running.  The next session that wants the GPU starts it again.",
							&gs_gpu_service_idle_timeout, 60, 0, 24 * 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.gpu_service_timeout",
							"Longest a session waits for the GPU service to start or to score a batch.",
							"Past it, the batch is scored on the CPU ('auto') or the statement fails ('gpu').",
							&gs_gpu_service_timeout, 30000, 100, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.gpu_service_memory",
							"Device memory the GPU service keeps models resident in.",
							"Past it, the least recently used model versions are freed (and uploaded again when used).",
							&gs_gpu_service_memory_kb, 4 * 1024 * 1024, 1024, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_gpuscore.gpu_service_merge_delay",
							"Microseconds the GPU service waits for more batches to merge into one launch.",
							"Batches of one model version queued while the device works are merged anyway; "
							"a delay merges more of many small concurrent batches at the cost of latency.",
							&gs_gpu_service_merge_delay_us, 0, 0, 100000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_gpuscore.fallback_notice",
							 "Say once per session when 'auto' scores on the CPU because the GPU failed.",
							 NULL, &gs_fallback_notice, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("pg_gpuscore.provider",
							   "Path of the GPU provider library (empty: $libdir/pg_gpuscore_cuda).",
							   "Read when a session first uses the GPU; changing it affects new sessions.",
							   &gs_provider_path, "",
							   PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("pg_gpuscore.xgboost_library",
							   "XGBoost library gpu_verify_model compares with (empty: the system's libxgboost.so.0).",
							   "A file name or path given to dlopen, for example the lib/libxgboost.so of a "
							   "pip-installed xgboost, to verify models saved by a newer XGBoost.",
							   &gs_xgboost_library, "",
							   PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("pg_gpuscore.fault_injection",
							   "Testing only: make the GPU layer fail at a point.",
							   "One of '', provider_load, upload, pipeline, submit, wait, oom, device_lost.",
							   &gs_fault_injection, "",
							   PGC_SUSET, 0, check_fault_injection, NULL, NULL);
	MarkGUCPrefixReserved("pg_gpuscore");
	gs_batch_plan_init();
}

/*
 * provider.c
 *	  Lazy loading of the GPU provider (through the GPU service, or else in
 *	  this backend by provider_local.c), per-model device uploads with a
 *	  self-test, and gpu_device_info().
 *
 * The provider (by default $libdir/pg_gpuscore_cuda, built from cuda/ when
 * nvcc is found; pg_gpuscore.provider may name another, e.g. the CPU mock
 * the tests use) is dlopen()ed in a backend the first time a GPU is wanted,
 * never in _PG_init, which may run in the postmaster.  The outcome, success
 * or the reason for failure, is remembered for the life of the backend; a
 * sticky device error later marks the GPU lost for the backend.
 *
 * Device memory: the device copy of a model belongs to its GsModelRef and is
 * freed by gs_device_release_model() when the ref's last reference goes
 * (model_cache.c), which memory context callbacks also do on ERROR.
 */
#include "postgres.h"

#include <math.h>

#include "funcapi.h"
#include "utils/builtins.h"

#include "gpuscore.h"
#include "provider.h"

PG_FUNCTION_INFO_V1(gpuscore_gpu_device_info);

/* Load and probe the provider once per backend; see provider.h. */
void
gs_provider_load(void)
{
	char		path[MAXPGPATH];
	char		why[512];

	if (gs_provider.tried)
		return;
	gs_provider.tried = true;
	gs_provider_file(path, sizeof(path));
	if (!gs_provider_present(path))
		return;
	if (gs_gpu_service)
	{
		bool		quiet = false;

		if (gs_svc_provider_load(path, why, sizeof(why), &quiet))
			return;
		ereport(quiet ? DEBUG1 : NOTICE,
				(errmsg("the pg_gpuscore GPU service is not available; this session uses the GPU by itself"),
				 errdetail("%s", why),
				 errhint("pg_gpuscore.gpu_service = off uses the GPU in every session without the service.")));
	}
	gs_provider.tried = false;
	gs_provider_load_local();
}

/* Free the device copy of a model, if any; see gpuscore.h. */
void
gs_device_release_model(GsModelRef *ref)
{
	if (ref->device_model && gs_provider.model_free)
		gs_provider.model_free((GsCudaModel *) ref->device_model);
	ref->device_model = NULL;
}

/*
 * Deterministic test rows for the upload self-test: values taken from the
 * model's own nodes (thresholds exactly, so both sides of every comparison
 * are hit), one in eight missing.  Column-major, n rows.
 */
static void
self_test_rows(const GsForest *f, float *x, size_t n)
{
	uint64		state = 0x9E3779B97F4A7C15ULL;

	for (int k = 0; k < f->n_features; k++)
		for (size_t r = 0; r < n; r++)
		{
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			x[(size_t) k * n + r] = (state & 7) == 0 ? NAN :
				f->nodes[(state >> 8) % (uint64) f->n_nodes].value;
		}
}

/* Deterministic test rows for a network: values in [-3, 3), none missing. */
static void
self_test_rows_mlp(const GsModel *m, float *x, size_t n)
{
	uint64		state = 0x9E3779B97F4A7C15ULL;

	for (size_t i = 0; i < n * (size_t) m->n_features; i++)
	{
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		x[i] = (float) ((double) (state >> 11) / 9007199254740992.0 * 6.0 - 3.0);
	}
}

#define SELF_TEST_ROWS 257

/*
 * Upload a model and check that the device scores a few hundred rows as the
 * CPU engine does (trees: within 1e-6, in practice bit for bit; networks:
 * within 1e-4 relative, since cuBLAS and OpenBLAS sum in different orders).
 * Returns true when the model is usable on the GPU; otherwise false with the
 * reason in why.  A sticky error marks the GPU lost.
 */
bool
gs_device_upload(GsModelRef *ref, char *why, size_t whylen)
{
	const GsModel *gm = ref->model;
	const GsForest *f = ref->forest;	/* NULL for a network */
	float	   *x,
			   *cpu,
			   *gpu,
			   *margin;
	int			rc;
	bool		same = true;

	if (ref->device_model)
		return true;
	if (gs_model_cpu_only(gm))
	{
		/* the device's layouts would not hold it (callers check first) */
		snprintf(why, whylen, "the model is %s, which only the CPU engine scores", gs_model_cpu_only(gm));
		return false;
	}
	if (ref->device_failed)
	{
		snprintf(why, whylen, "%s", ref->device_reason);
		return false;
	}
	if (gs_provider.service)
		rc = gs_svc_upload(ref, (GsCudaModel **) &ref->device_model, why, whylen);
	else if (f)
		rc = gs_provider.upload(f, (GsCudaModel **) &ref->device_model, why, whylen);
	else
		rc = gs_provider.mlp_upload(gm->mlp, (GsCudaModel **) &ref->device_model, why, whylen);
	if (rc != GS_CUDA_OK)
	{
		if (rc == GS_CUDA_DEVICE_LOST)
			gs_provider_lost(why);
		ref->device_model = NULL;
		return false;
	}

	x = palloc(sizeof(float) * SELF_TEST_ROWS * gm->n_features);
	cpu = palloc(sizeof(float) * SELF_TEST_ROWS * gm->n_outputs);
	gpu = palloc(sizeof(float) * SELF_TEST_ROWS * gm->n_outputs);
	margin = palloc(sizeof(float) * gs_model_scratch_floats(gm, SELF_TEST_ROWS));
	if (f)
		self_test_rows(f, x, SELF_TEST_ROWS);
	else
		self_test_rows_mlp(gm, x, SELF_TEST_ROWS);
	gs_model_predict(gm, x, SELF_TEST_ROWS, SELF_TEST_ROWS, margin, cpu);
	rc = gs_provider.predict((GsCudaModel *) ref->device_model, x, SELF_TEST_ROWS, gpu, why, whylen);
	if (rc == GS_CUDA_OK)
	{
		/* trees: the same tolerance the parity tests use against XGBoost */
		for (int i = 0; i < SELF_TEST_ROWS * gm->n_outputs; i++)
			if (!(fabs((double) cpu[i] - (double) gpu[i]) <=
				  (f ? 1e-6 * Max(1.0, fabs((double) cpu[i])) : 1e-4 * Max(1e-2, fabs((double) cpu[i]))) ||
				  (isnan(cpu[i]) && isnan(gpu[i]))))
			{
				snprintf(why, whylen,
						 "the GPU engine's self-test failed: output %d is %.9g on the GPU and %.9g on the CPU",
						 i, (double) gpu[i], (double) cpu[i]);
				same = false;
				break;
			}
	}
	else if (rc == GS_CUDA_DEVICE_LOST)
		gs_provider_lost(why);
	pfree(x);
	pfree(cpu);
	pfree(gpu);
	pfree(margin);
	if (rc != GS_CUDA_OK || !same)
	{
		gs_device_release_model(ref);
		ref->device_failed = true;
		strlcpy(ref->device_reason, why, sizeof(ref->device_reason));
		return false;
	}
	return true;
}

/*
 * gpu_device_info() RETURNS TABLE(provider_loaded, reason, device_count,
 * device_name, compute_capability, total_memory, free_memory,
 * driver_version, runtime_version): what this backend sees, with current
 * memory figures.
 */
Datum
gpuscore_gpu_device_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[10];
	bool		nulls[10] = {0};
	GsCudaInfo *in = &gs_provider.info;
	char		err[256];

	InitMaterializedSRF(fcinfo, 0);
	gs_provider_load();
	if (gs_provider.usable && gs_provider.probe(in, err, sizeof(err)) != GS_CUDA_OK)
		gs_provider_lost(err);
	values[0] = BoolGetDatum(gs_provider.usable);
	values[1] = CStringGetTextDatum(gs_provider.reason);
	nulls[1] = gs_provider.usable;
	values[2] = Int32GetDatum(in->device_count);
	values[3] = CStringGetTextDatum(in->name);
	values[4] = CStringGetTextDatum(psprintf("%d.%d", in->cc_major, in->cc_minor));
	values[5] = Int64GetDatum((int64) in->total_mem);
	values[6] = Int64GetDatum((int64) in->free_mem);
	values[7] = Int32GetDatum(in->driver_version);
	values[8] = Int32GetDatum(in->runtime_version);
	/* (0.6.0: which provider) */
	values[9] = CStringGetTextDatum(gs_provider.service ? "service" : "backend");
	if (!gs_provider.usable)
	{
		for (int i = 3; i < 7; i++)
			nulls[i] = true;
		nulls[7] = in->driver_version == 0;
		nulls[8] = in->runtime_version == 0;
	}
	/* the SQL objects of 0.5.x have no mode column */
	if (rsinfo->setDesc->natts < 10)
		values[9] = (Datum) 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

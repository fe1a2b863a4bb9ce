/*
 * test_gpu.c
 *	  Server-free GPU test suite: GPU scores must equal CPU scores (<= 1e-6)
 *	  on every fixture tree model (XGBoost JSON/UBJSON and LightGBM in
 *	  tests/fixtures/models, ONNX-ML tree ensembles in
 *	  tests/fixtures/onnx/trees), over batch sizes that hit warp and block
 *	  tails (1, 31, 32, 33, 1000, 65536, 1000003 rows), with missing values;
 *	  and on a few of them rewritten with what ONNX-ML tree ensembles add
 *	  (equality splits, onnxruntime's transforms; see onnx_variant).
 *
 * Built by "make gputest" (needs nvcc) and run where a GPU is present, e.g.
 * on the lent device machine (tests/gpu/device_run.sh).  GS_GPU_TEST_MAX_ROWS
 * caps the batch sizes (for compute-sanitizer runs).  Without a usable GPU it prints why and exits
 * with status 77 ("skipped"); it is not part of .ci/test, which runs on
 * machines without GPUs.  Prints TAP lines and "N passed, N failed".
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "model.h"
#include "../../cuda/gs_cuda.h"
#include "../common/test_util.h"
#include "../common/test_models.h"

#define FIXTURES "../fixtures"

/* Largest error of GPU outputs against CPU outputs, relative above 1. */
static double
worst_error(const float *cpu, const float *gpu, size_t n)
{
	double		worst = 0.0;

	for (size_t i = 0; i < n; i++)
	{
		double		d;

		if (isnan(cpu[i]) && isnan(gpu[i]))
			continue;
		d = fabs((double) cpu[i] - (double) gpu[i]) / fmax(1.0, fabs(cpu[i]));
		if (isnan(d) || d > worst)
			worst = isnan(d) ? INFINITY : d;
	}
	return worst;
}

/*
 * Compare GPU and CPU outputs of one model over every batch size, through
 * the synchronous call and through the two-slot pipeline (batches of at
 * most 65536 rows alternating between the slots, as the extension does).
 */
static void
check_model(const char *label, const GsForest *f)
{
	size_t		sizes[] = {1, 31, 32, 33, 1000, 65536, 1000003};
	const size_t chunk = 65536;
	GsCudaModel *gm;
	char		err[256];

	if (gs_cuda_model_upload(f, &gm, err, sizeof(err)) != GS_CUDA_OK)
	{
		gs_tap(0, label, err);
		return;
	}
	/* a cap on the batch sizes (under compute-sanitizer, say); unset, empty or 0: none */
	const char *cap = getenv("GS_GPU_TEST_MAX_ROWS");
	size_t		max_rows = cap && strtoull(cap, NULL, 10) > 0 ? (size_t) strtoull(cap, NULL, 10) : (size_t) -1;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		size_t		n = sizes[s];
		size_t		no = (size_t) f->n_outputs;

		if (n > max_rows)
			continue;
		float	   *x = malloc(sizeof(float) * n * f->n_features);
		float	   *margin = malloc(sizeof(float) * n * f->n_groups);
		float	   *cpu = malloc(sizeof(float) * n * no);
		float	   *gpu = malloc(sizeof(float) * n * no);
		char		what[160];
		GsCudaPipeline *p = NULL;
		double		worst;

		gs_fill_batch(f, x, n, n);
		gs_cpu_predict(f, x, n, n, margin, cpu);

		/* synchronous */
		if (gs_cuda_predict(gm, x, n, gpu, err, sizeof(err)) != GS_CUDA_OK)
			gs_tap(0, label, err);
		else
		{
			worst = worst_error(cpu, gpu, n * no);
			snprintf(what, sizeof(what), "%zu rows: GPU within 1e-6 of CPU (worst %.3g)", n, worst);
			gs_tap(worst <= 1e-6, label, what);
		}

		/* pipeline: chunk i goes to slot i % 2; each chunk is its own column-major batch */
		memset(gpu, 0, sizeof(float) * n * no);
		if (gs_cuda_pipeline_create(gm, chunk, &p, err, sizeof(err)) != GS_CUDA_OK)
			gs_tap(0, label, err);
		else
		{
			size_t		n_chunks = (n + chunk - 1) / chunk;
			int			ok = 1;

			for (size_t c = 0; c <= n_chunks && ok; c++)
			{
				/* wait for the chunk submitted two steps ago into this slot */
				if (c >= 2 || c == n_chunks)
				{
					size_t		w = c == n_chunks ? (c >= 1 ? c - 1 : 0) : c - 2;
					size_t		wn = (w + 1) * chunk <= n ? chunk : n - w * chunk;
					const float *out;

					if (c == n_chunks && c >= 2)
					{
						/* drain the older one first */
						size_t		w2 = c - 2;
						size_t		wn2 = chunk;

						ok &= gs_cuda_pipeline_wait(p, (int) (w2 % 2), &out, err, sizeof(err)) == GS_CUDA_OK;
						if (ok)
							memcpy(gpu + w2 * chunk * no, out, sizeof(float) * wn2 * no);
					}
					if (ok && n_chunks > 0)
					{
						ok &= gs_cuda_pipeline_wait(p, (int) (w % 2), &out, err, sizeof(err)) == GS_CUDA_OK;
						if (ok)
							memcpy(gpu + w * chunk * no, out, sizeof(float) * wn * no);
					}
				}
				if (c < n_chunks && ok)
				{
					size_t		cn = (c + 1) * chunk <= n ? chunk : n - c * chunk;
					float	   *in = gs_cuda_pipeline_input(p, (int) (c % 2));

					for (int k = 0; k < f->n_features; k++)
						for (size_t r = 0; r < cn; r++)
							in[(size_t) k * cn + r] = x[(size_t) k * n + c * chunk + r];
					ok &= gs_cuda_pipeline_submit(p, (int) (c % 2), cn, err, sizeof(err)) == GS_CUDA_OK;
				}
			}
			gs_cuda_pipeline_free(p);
			if (!ok)
				gs_tap(0, label, err);
			else
			{
				worst = worst_error(cpu, gpu, n * no);
				snprintf(what, sizeof(what), "%zu rows through the pipeline: within 1e-6 (worst %.3g)", n, worst);
				gs_tap(worst <= 1e-6, label, what);
			}
		}
		free(x);
		free(margin);
		free(cpu);
		free(gpu);
	}
	gs_cuda_model_free(gm);
}

/*
 * The forest f with what ONNX-ML tree ensembles bring (onnx_trees.c):
 * every third split an equality split (GS_NODE_EQUAL; gs_fill_batch draws
 * thresholds as feature values, so equality holds in some rows), and
 * onnxruntime's transforms (logistic for sigmoid, SOFTMAX_ZERO for
 * softmax).  Modifies f in place.
 */
static void
onnx_variant(GsForest *f)
{
	int64_t		k = 0;

	for (int64_t i = 0; i < f->n_nodes; i++)
		if (!(f->nodes[i].info & (GS_NODE_LEAF | GS_NODE_CATEGORICAL)) && k++ % 3 == 0)
			f->nodes[i].info |= GS_NODE_EQUAL;
	f->split_kinds |= GS_NODE_EQUAL;
	if (f->transform == GS_TRANSFORM_SIGMOID)
		f->transform = GS_TRANSFORM_ORT_LOGISTIC;
	else if (f->transform == GS_TRANSFORM_SOFTMAX)
		f->transform = GS_TRANSFORM_ORT_SOFTMAX_ZERO;
}

/* Does name end with suffix? */
static int
ends_with(const char *name, const char *suffix)
{
	size_t		n = strlen(name),
				k = strlen(suffix);

	return n >= k && strcmp(name + n - k, suffix) == 0;
}

/*
 * Check every tree model in fixture directory dir whose name ends with one
 * of the suffixes; returns how many were checked, or -1 without the
 * directory.  A few XGBoost models are checked again as their ONNX-ML
 * variant.
 */
static int
check_dir(const char *dir, const char *const *suffixes)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	int			n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
	{
		char		path[512];
		GsModel    *m;
		GsStatus	st;
		int			wanted = 0;

		for (int i = 0; suffixes[i]; i++)
			wanted |= ends_with(e->d_name, suffixes[i]);
		if (!wanted)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (gs_load_model_file(path, GS_FORMAT_AUTO, &m, &st) != GS_OK)
		{
			gs_tap(0, e->d_name, st.msg);
			continue;
		}
		if (m->forest == NULL)
		{
			gs_model_free(m);	/* a network: test_gpu_mlp.c checks those */
			continue;
		}
		if (gs_model_cpu_only(m))
		{
			printf("# %s: %s, scored on the CPU only: skipped\n", e->d_name, gs_model_cpu_only(m));
			gs_model_free(m);
			continue;
		}
		n++;
		check_model(e->d_name, m->forest);
		if (strcmp(e->d_name, "fraud_binary.json") == 0 || strcmp(e->d_name, "wine_softprob.json") == 0 ||
			strcmp(e->d_name, "diabetes_reg.json") == 0)
		{
			char		label[300];

			snprintf(label, sizeof(label), "%s, ONNX-ML variant", e->d_name);
			onnx_variant(m->forest);
			check_model(label, m->forest);
		}
		gs_model_free(m);
	}
	closedir(d);
	return n;
}

int
main(void)
{
	static const char *const model_files[] = {".json", ".ubj", ".txt", ".model", NULL};
	static const char *const onnx_files[] = {".onnx", NULL};
	GsCudaInfo	info;
	char		err[256];
	int			n_models,
				n_onnx;

	if (gs_cuda_probe(&info, err, sizeof(err)) != 0)
	{
		printf("1..0 # SKIP no usable GPU: %s\n", err);
		return 77;
	}
	printf("# device: %s, compute capability %d.%d, %zu MiB, driver %d, runtime %d\n",
		   info.name, info.cc_major, info.cc_minor, info.total_mem >> 20,
		   info.driver_version, info.runtime_version);
	n_models = check_dir(FIXTURES "/models", model_files);
	n_onnx = check_dir(FIXTURES "/onnx/trees", onnx_files);
	/* every fixture directory there, with as many models as when this was written */
	gs_tap(n_models >= 110 && n_onnx >= 30, "fixtures",
		   "tests/fixtures/models has >= 110 tree models, onnx/trees >= 30");
	printf("1..%d\ngpu: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

/*
 * bench_kernel.cu
 *	  Kernel benchmark of the GPU engine (cuda/forest_kernel.cu,
 *	  cuda/forest_binned.cu) against a FIL-style reference kernel
 *	  (fil_reference.cu), with the CPU engine as the judge of correctness.
 *	  Run it through bench/gpu/run.sh; what it measures and how to read
 *	  it: bench/gpu/README.md.
 *
 * For the models m100x6, m500x8 and m2000x10 (XGBoost files made by
 * make_models.py in --models DIR, or, when a file is missing, a synthetic
 * forest of the same shape from fixed seeds) and for batches of 1K, 16K,
 * 256K, 1M, 4M and 16M rows generated on the device (30 features, the
 * distribution of bench/make_models.py, 5% NaN), it times every kernel
 * variant with CUDA events (median of --repeats runs after one warm-up; the
 * input is already on the device, the output stays there), and checks:
 *	- on a sample of up to 2048 rows (first and last rows of the batch),
 *	  the margins and outputs of our automatic choice equal the CPU
 *	  engine's bit for bit;
 *	- on every row, every variant's margins (ours and FIL-style) equal our
 *	  automatic choice's bit for bit (compared on the device).
 * Our variants include the binned kernel (kernel 3, not chosen by auto
 * yet): ours:binned bins the rows inside the scoring kernel,
 * ours:binned-2pass runs a separate binning kernel first (timed together;
 * the binning pass alone is reported as "(bin pass only)").
 * It also measures host-to-device copies of 256 MB from pinned and
 * pageable memory, optionally sweeps the tiled and binned kernels' plans (--sweep), and
 * writes a Markdown report to RESULTS_DIR/<date>-gpu-<device>.md.
 *
 * Exit status: 0 all checks passed, 1 a check failed or something broke,
 * 2 bad usage, 77 no CUDA device (nothing measured).  --selfcheck runs the
 * host-only checks (model loading, FIL-style conversion against the CPU
 * engine) and needs no GPU.
 *
 * Memory: everything is allocated in main and released before exit.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

/* the scoring core is C, compiled by the C compiler: C linkage */
extern "C"
{
#include "../../src/core/forest/catboost_ctr.h"
#include "../../src/core/forest/cpu_engine.h"
#include "../../src/core/forest/forest.h"
#include "../../src/core/frontend/frontend.h"
#include "../../src/core/frontend/catboost/catboost.h"
#include "../../src/core/frontend/lightgbm/lightgbm.h"
#include "../../src/core/frontend/xgboost/xgboost.h"
}
#include "../../cuda/forest_kernel.h"
#include "../../tests/common/test_util.h"
#include "../../cuda/forest_layout.h"
#include "../../cuda/forest_binned.h"
#include "fil_reference.h"

#define N_FEATURES 30
#define SEED_ROWS 20240602ull
#define SAMPLE_ROWS 2048

#include "bench_kernel_setup.cuh"

/* ---------------------------------------------------------------- */
/* variants and timing                                               */
/* ---------------------------------------------------------------- */

typedef struct Variant
{
	std::string label;			/* "ours:auto", "fil:rpt4", ... */
	std::string kernel;			/* kernel name / plan */
	GsDeviceForest *df;			/* ours, or NULL */
	FilForest  *ff;				/* FIL-style, or NULL */
	int			fil_rpt;
} Variant;

/* Launch one variant (outputs, or margins when raw). */
static int
launch(const Variant *v, const float *d_x, size_t n, float *d_out, int raw)
{
	if (v->df)
		return raw ? gs_dforest_predict_margins(v->df, d_x, n, n, d_out, NULL)
			: gs_dforest_predict(v->df, d_x, n, n, d_out, NULL);
	return (int) fil_forest_predict(v->ff, d_x, n, n, d_out, raw, v->fil_rpt, 0);
}

/*
 * Median milliseconds of reps calls of run() (after one warm-up call), each
 * timed alone with CUDA events on the default stream; run returns 0 or an
 * error code.  Negative on an error.
 */
template <typename Run>
static double
median_ms(int reps, Run run)
{
	cudaEvent_t e0,
				e1;
	std::vector<float> ms;

	if (run() != 0 || cudaDeviceSynchronize() != cudaSuccess)
		return -1.0;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	for (int i = 0; i < reps; i++)
	{
		float		t = 0;

		cudaEventRecord(e0, 0);
		run();
		cudaEventRecord(e1, 0);
		cudaEventSynchronize(e1);
		cudaEventElapsedTime(&t, e0, e1);
		ms.push_back(t);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	if (cudaGetLastError() != cudaSuccess)
		return -1.0;
	std::sort(ms.begin(), ms.end());
	return ms[ms.size() / 2];
}

/* Median milliseconds of reps launches of variant v; see median_ms. */
static double
time_variant(const Variant *v, const float *d_x, size_t n, float *d_out, int reps)
{
	return median_ms(reps, [&] { return launch(v, d_x, n, d_out, 0); });
}

/*
 * Median milliseconds of the binning pass of binned plan df alone
 * (gs_dforest_bin into d_bins); see median_ms.
 */
static double
time_bin(const GsDeviceForest *df, const float *d_x, size_t n, uint16_t *d_bins, int reps)
{
	return median_ms(reps, [&] { return gs_dforest_bin(df, d_x, n, n, d_bins, NULL); });
}

/* Differences between two device arrays of n floats (NaN == NaN). */
static unsigned long long
device_diff(const float *a, const float *b, size_t n, unsigned long long *d_cnt)
{
	unsigned long long c = 0;

	cudaMemset(d_cnt, 0, sizeof(*d_cnt));
	count_diff<<<1024, 256>>>(a, b, n, d_cnt);
	cudaMemcpy(&c, d_cnt, sizeof(c), cudaMemcpyDeviceToHost);
	return c;
}

/* Median GB/s of 256 MB host-to-device copies from src (after a warm-up). */
static double
h2d_gbps(const void *src, void *dst, size_t bytes, int reps, cudaStream_t s)
{
	cudaEvent_t e0,
				e1;
	std::vector<float> ms;

	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
	cudaStreamSynchronize(s);
	for (int i = 0; i < reps; i++)
	{
		float		t = 0;

		cudaEventRecord(e0, s);
		cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
		cudaEventRecord(e1, s);
		cudaEventSynchronize(e1);
		cudaEventElapsedTime(&t, e0, e1);
		ms.push_back(t);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	std::sort(ms.begin(), ms.end());
	return (double) bytes / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

/* ---------------------------------------------------------------- */
/* main                                                              */
/* ---------------------------------------------------------------- */

/* Print usage and return 2. */
static int
usage(void)
{
	fprintf(stderr,
			"usage: bench_kernel [--models DIR] [--results DIR] [--batches 1K,16K,...]\n"
			"                    [--repeats N] [--no-sweep] [--selfcheck]\n");
	return 2;
}

/* Parse "1K,16K,1M,1000" into row counts; false on a bad item. */
static bool
parse_batches(const char *s, std::vector<size_t> *out)
{
	out->clear();
	while (*s)
	{
		char	   *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (end == s)
			return false;
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (v == 0 || (*end && *end != ','))
			return false;
		out->push_back((size_t) v);
		s = *end ? end + 1 : end;
	}
	return !out->empty();
}

int
main(int argc, char **argv)
{
	const char *models_dir = "bench/work/gpu";
	const char *results_dir = "bench/results";
	std::vector<size_t> batches = {1u << 10, 16u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20};
	int			reps = 5,
				sweep = 1,
				selfcheck = 0,
				failures = 0,
				ndev = 0;
	cudaDeviceProp prop;
	int			driver = 0,
				runtime = 0;
	GsForest   *forests[3] = {NULL, NULL, NULL};
	std::string sources[3];
	size_t		max_rows;
	float	   *d_x = NULL,
			   *d_ref = NULL,
			   *d_out = NULL;
	uint16_t   *d_bins = NULL;	/* the binning pass alone (optional) */
	unsigned long long *d_cnt = NULL;
	cudaError_t rc;

	for (int i = 1; i < argc; i++)
	{
		if (!strcmp(argv[i], "--models") && i + 1 < argc)
			models_dir = argv[++i];
		else if (!strcmp(argv[i], "--results") && i + 1 < argc)
			results_dir = argv[++i];
		else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
		{
			if (!parse_batches(argv[++i], &batches))
				return usage();
		}
		else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
		{
			reps = atoi(argv[++i]);
			if (reps < 1)
				return usage();
		}
		else if (!strcmp(argv[i], "--no-sweep"))
			sweep = 0;
		else if (!strcmp(argv[i], "--sweep"))
			sweep = 1;
		else if (!strcmp(argv[i], "--selfcheck"))
			selfcheck = 1;
		else
			return usage();
	}

	/* models (host only) and the host checks of the FIL-style layout */
	for (int m = 0; m < 3; m++)
	{
		forests[m] = load_model(models_dir, &g_models[m], &sources[m]);
		if (!forests[m])
			return 1;
		if (selfcheck_model(g_models[m].name, forests[m]) != 0)
			failures++;
		if (selfcheck_binned(g_models[m].name, forests[m]) != 0)
			failures++;
	}
	if (selfcheck)
	{
		for (int m = 0; m < 3; m++)
		{
			printf("# %s: %s, %d trees, %lld nodes, max depth %d\n", g_models[m].name,
				   sources[m].c_str(), forests[m]->n_trees, (long long) forests[m]->n_nodes,
				   forests[m]->max_depth);
			gs_forest_free(forests[m]);
		}
		printf("selfcheck: %d passed, %d failed\n", 6 - failures, failures);
		return failures ? 1 : 0;
	}

	/* the device */
	rc = cudaGetDeviceCount(&ndev);
	if (rc != cudaSuccess || ndev < 1)
	{
		printf("bench_kernel: no CUDA device (%s); nothing measured\n",
			   rc != cudaSuccess ? cudaGetErrorString(rc) : "device count is 0");
		for (int m = 0; m < 3; m++)
			gs_forest_free(forests[m]);
		return 77;
	}
	cudaGetDeviceProperties(&prop, 0);
	cudaDriverGetVersion(&driver);
	cudaRuntimeGetVersion(&runtime);

	{
		char		date[32];
		time_t		now = time(NULL);
		const char *commit = getenv("GS_GIT_COMMIT");
		const char *nvcc = getenv("GS_NVCC_VERSION");
		const char *flags = getenv("GS_BUILD_FLAGS");

		strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
		emit("# GPU kernel benchmark: %s\n\n", prop.name);
		emit("- date: %s\n- commit: %s\n", date, commit ? commit : "unknown");
		emit("- device: %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %d MB, "
			 "shared memory %zu KB per block (opt-in), %zu KB per SM\n",
			 prop.name, prop.major, prop.minor, prop.multiProcessorCount,
			 (double) prop.totalGlobalMem / (1u << 30), prop.l2CacheSize >> 20,
			 prop.sharedMemPerBlockOptin >> 10, prop.sharedMemPerMultiprocessor >> 10);
		emit("- CUDA driver %d.%d, runtime %d.%d; nvcc: %s\n", driver / 1000, (driver % 1000) / 10,
			 runtime / 1000, (runtime % 1000) / 10, nvcc ? nvcc : "unknown");
		emit("- build: %s\n", flags ? flags : "see bench/gpu/run.sh");
		emit("- timing: CUDA events around one launch, median of %d after 1 warm-up; input "
			 "already on the device (column-major float32, ld = rows), output left on the device\n\n",
			 reps);
	}

	max_rows = *std::max_element(batches.begin(), batches.end());
	if ((rc = cudaMalloc((void **) &d_x, sizeof(float) * max_rows * N_FEATURES)) != cudaSuccess ||
		(rc = cudaMalloc((void **) &d_ref, sizeof(float) * max_rows)) != cudaSuccess ||
		(rc = cudaMalloc((void **) &d_out, sizeof(float) * max_rows)) != cudaSuccess ||
		(rc = cudaMalloc((void **) &d_cnt, sizeof(unsigned long long))) != cudaSuccess)
	{
		fprintf(stderr, "bench_kernel: cudaMalloc: %s\n", cudaGetErrorString(rc));
		return 1;
	}
	if (cudaMalloc((void **) &d_bins, sizeof(uint16_t) * max_rows * N_FEATURES) != cudaSuccess)
	{
		cudaGetLastError();		/* not fatal: the bin pass is not timed alone */
		d_bins = NULL;
	}

	emit("## Models\n\n| model | source | trees | nodes | max depth | our plan | ours bytes | FIL-style bytes |\n|---|---|---|---|---|---|---|---|\n");

	std::vector<std::string> summary,
				details,
				verify;

	for (int mi = 0; mi < 3; mi++)
	{
		const GsForest *f = forests[mi];
		const char *mname = g_models[mi].name;
		std::vector<Variant> vars;
		struct
		{
			const char *label;
			GsDForestOptions o;
		}			ours[] = {
			{"ours:auto", {0, 0, 0, 0, 0}},
			{"ours:rows", {1, 0, 0, 0, 0}},
			{"ours:tiled-global", {2, 0, 0, -1, 0}},
			{"ours:tiled-staged", {2, 0, 0, 1, 0}},
			/* binned: features binned in the kernel, or by a separate pass first */
			{"ours:binned", {3, 0, 0, 0, 0}},
			{"ours:binned-2pass", {3, 0, 0, 0, 1}},
		};

		for (size_t k = 0; k < sizeof(ours) / sizeof(ours[0]); k++)
		{
			Variant		v;
			int			r = gs_dforest_create_ex(f, &ours[k].o, &v.df);

			v.ff = NULL;
			v.fil_rpt = 0;
			v.label = ours[k].label;
			if (r != 0)
			{
				emit("<!-- %s %s: %s -->\n", mname, ours[k].label, gs_dforest_strerror(r));
				if (k == 0)
					failures++;
				continue;
			}
			v.kernel = gs_dforest_kernel_name(v.df);
			/* skip a variant whose plan is the same as an earlier one's */
			bool		dup = false;

			for (const Variant &w : vars)
				dup = dup || (w.df && w.kernel == v.kernel);
			if (dup)
			{
				gs_dforest_free(v.df);
				continue;
			}
			vars.push_back(v);
		}
		for (int rpt = 1; rpt <= 4; rpt *= 2)
		{
			Variant		v;
			char		err[256];

			v.df = NULL;
			v.fil_rpt = rpt;
			v.label = "fil:rpt" + std::to_string(rpt);
			v.kernel = "fil_kernel<" + std::to_string(rpt) + "> (DFS 8-byte nodes, rows in smem)";
			if (fil_forest_create(f, &v.ff, err, sizeof(err)) != 0)
			{
				emit("<!-- %s %s: %s -->\n", mname, v.label.c_str(), err);
				failures++;
				continue;
			}
			vars.push_back(v);
		}
		emit("| %s | %s | %d | %lld | %d | `%s` | %zu | %zu |\n", mname, sources[mi].c_str(),
			 f->n_trees, (long long) f->n_nodes, f->max_depth,
			 vars.empty() || !vars[0].df ? "-" : vars[0].kernel.c_str(),
			 vars.empty() || !vars[0].df ? 0 : gs_dforest_device_bytes(vars[0].df),
			 vars.empty() ? 0 : fil_forest_device_bytes(vars.back().ff));

		for (size_t n : batches)
		{
			double		best_ours = 0,
						best_fil = 0,
						auto_rate = 0;
			std::string best_ours_label,
						best_fil_label;
			char		line[1024];

			gen_rows<<<2048, 256>>>(d_x, n, n, N_FEATURES);
			if (vars.empty() || !vars[0].df ||
				gs_dforest_predict_margins(vars[0].df, d_x, n, n, d_ref, NULL) != 0 ||
				cudaDeviceSynchronize() != cudaSuccess)
			{
				emit("<!-- %s %s: reference launch failed: %s -->\n", mname, human(n).c_str(),
					 cudaGetErrorString(cudaGetLastError()));
				failures++;
				continue;
			}

			/* CPU engine on a sample: first and last rows of the batch */
			{
				size_t		s = n < SAMPLE_ROWS ? n : SAMPLE_ROWS,
							h1 = (s + 1) / 2,
							h2 = s - h1;
				std::vector<float> xs(s * N_FEATURES),
							cm(s),
							co(s),
							gm(s),
							go(s);
				long		worst_ulp = 0,
							bad_m = 0;

				cudaMemcpy2D(xs.data(), s * sizeof(float), d_x, n * sizeof(float),
							 h1 * sizeof(float), N_FEATURES, cudaMemcpyDeviceToHost);
				if (h2)
					cudaMemcpy2D(xs.data() + h1, s * sizeof(float), d_x + (n - h2), n * sizeof(float),
								 h2 * sizeof(float), N_FEATURES, cudaMemcpyDeviceToHost);
				gs_cpu_predict(f, xs.data(), s, s, cm.data(), co.data());
				launch(&vars[0], d_x, n, d_out, 0);
				cudaMemcpy(gm.data(), d_ref, h1 * sizeof(float), cudaMemcpyDeviceToHost);
				cudaMemcpy(go.data(), d_out, h1 * sizeof(float), cudaMemcpyDeviceToHost);
				if (h2)
				{
					cudaMemcpy(gm.data() + h1, d_ref + (n - h2), h2 * sizeof(float), cudaMemcpyDeviceToHost);
					cudaMemcpy(go.data() + h1, d_out + (n - h2), h2 * sizeof(float), cudaMemcpyDeviceToHost);
				}
				for (size_t r = 0; r < s; r++)
				{
					if (!(gm[r] == cm[r] || (isnan(gm[r]) && isnan(cm[r]))))
						bad_m++;
					worst_ulp = std::max(worst_ulp, gs_ulp_diff(go[r], co[r]));
				}
				snprintf(line, sizeof(line),
						 "- %s, %s rows: ours:auto vs CPU engine on %zu sampled rows: %ld margins differ, outputs at most %ld ulp apart (both must be 0)%s\n",
						 mname, human(n).c_str(), s, bad_m, worst_ulp,
						 bad_m || worst_ulp ? " **FAILED**" : "");
				verify.push_back(line);
				if (bad_m || worst_ulp)
					failures++;
			}

			for (Variant &v : vars)
			{
				unsigned long long diff;
				double		ms;
				double		rps;

				if (launch(&v, d_x, n, d_out, 1) != 0 || cudaDeviceSynchronize() != cudaSuccess)
				{
					snprintf(line, sizeof(line), "- %s, %s rows, %s: launch failed: %s **FAILED**\n",
							 mname, human(n).c_str(), v.label.c_str(),
							 cudaGetErrorString(cudaGetLastError()));
					verify.push_back(line);
					failures++;
					continue;
				}
				diff = device_diff(d_out, d_ref, n, d_cnt);
				if (diff)
				{
					snprintf(line, sizeof(line), "- %s, %s rows, %s: %llu margins differ from ours:auto **FAILED**\n",
							 mname, human(n).c_str(), v.label.c_str(), diff);
					verify.push_back(line);
					failures++;
				}
				ms = time_variant(&v, d_x, n, d_out, reps);
				if (ms <= 0)
				{
					failures++;
					continue;
				}
				rps = (double) n / (ms * 1e-3);
				snprintf(line, sizeof(line), "| %s | %s | %s | `%s` | %.3f | %s |\n", mname,
						 human(n).c_str(), v.label.c_str(), v.kernel.c_str(), ms, rate(rps).c_str());
				details.push_back(line);
				if (v.label == "ours:binned-2pass" && d_bins)
				{
					/* the binning pass alone (part of the time above) */
					double		bms = time_bin(v.df, d_x, n, d_bins, reps);

					snprintf(line, sizeof(line), "| %s | %s | %s | `%s` | %.3f | %s |\n", mname,
							 human(n).c_str(), "(bin pass only)", "forest_bin_kernel", bms,
							 bms > 0 ? rate((double) n / (bms * 1e-3)).c_str() : "failed");
					details.push_back(line);
				}
				if (v.df)
				{
					if (&v == &vars[0])
						auto_rate = rps;
					if (rps > best_ours)
						best_ours = rps, best_ours_label = v.label;
				}
				else if (rps > best_fil)
					best_fil = rps, best_fil_label = v.label;
			}
			snprintf(line, sizeof(line), "| %s | %s | %s | %s (%s) | %s (%s) | %.2f | %.2f |\n",
					 mname, human(n).c_str(), rate(auto_rate).c_str(), rate(best_ours).c_str(),
					 best_ours_label.c_str(), rate(best_fil).c_str(), best_fil_label.c_str(),
					 best_fil > 0 ? auto_rate / best_fil : 0.0,
					 best_fil > 0 ? best_ours / best_fil : 0.0);
			summary.push_back(line);
		}

		/* plan sweep of the tiled kernel at 4M rows (or the largest batch) */
		if (sweep)
		{
			size_t		n = std::min<size_t>(max_rows, 4u << 20);
			size_t		budgets[] = {48u << 10, 64u << 10, 96u << 10, 0, 160u << 10,
			prop.sharedMemPerBlockOptin};
			int			stages[] = {-1, 1, 0};	/* 0: the binned kernel (fused) */
			int			rpts[] = {1, 2, 4};

			if (mi == 0)
				details.push_back("\n## Plan sweep (tiled kernel, stage -1/1; binned kernel, fused, stage 0; budget 0 = default)\n\n| model | rows | budget | stage | max rpt | kernel | ms | rows/s |\n|---|---|---|---|---|---|---|---|\n");
			gen_rows<<<2048, 256>>>(d_x, n, n, N_FEATURES);
			gs_dforest_predict_margins(vars[0].df, d_x, n, n, d_ref, NULL);
			cudaDeviceSynchronize();
			for (size_t b : budgets)
				for (int st : stages)
					for (int rp : rpts)
					{
						GsDForestOptions o = {st == 0 ? 3 : 2, b, rp, st == 0 ? 0 : st, 0};
						Variant		v;
						char		line[1024];
						double		ms;

						v.ff = NULL;
						v.fil_rpt = 0;
						if (gs_dforest_create_ex(f, &o, &v.df) != 0)
							continue;
						v.kernel = gs_dforest_kernel_name(v.df);
						v.label = "sweep";
						if (launch(&v, d_x, n, d_out, 1) != 0 || cudaDeviceSynchronize() != cudaSuccess ||
							device_diff(d_out, d_ref, n, d_cnt) != 0)
						{
							snprintf(line, sizeof(line), "- %s sweep budget %zu stage %d rpt %d: margins differ or launch failed **FAILED**\n",
									 mname, b, st, rp);
							verify.push_back(line);
							failures++;
						}
						ms = time_variant(&v, d_x, n, d_out, 3);
						snprintf(line, sizeof(line), "| %s | %s | %zu | %d | %d | `%s` | %.3f | %s |\n",
								 mname, human(n).c_str(), b, st, rp, v.kernel.c_str(), ms,
								 rate((double) n / (ms * 1e-3)).c_str());
						details.push_back(line);
						gs_dforest_free(v.df);
					}
		}

		for (Variant &v : vars)
		{
			gs_dforest_free(v.df);
			fil_forest_free(v.ff);
		}
	}

	emit("\n## Throughput (rows/s)\n\nours/FIL = ours:auto over the best FIL-style variant; the goal is >= 2.00 on m500x8.\n\n"
		 "| model | rows | ours:auto | best ours | best FIL-style | ours/FIL | best ours/FIL |\n|---|---|---|---|---|---|---|\n");
	for (const std::string &s : summary)
		emit("%s", s.c_str());

	emit("\n## Verification\n\n");
	for (const std::string &s : verify)
		emit("%s", s.c_str());
	emit("- every variant's margins compared with ours:auto on every row of every batch (on the device); only differences are listed above\n");

	/* host-to-device bandwidth */
	{
		const size_t bytes = 256u << 20;
		void	   *pinned = NULL,
				   *pageable = malloc(bytes),
				   *dst = NULL;
		cudaStream_t s;

		emit("\n## Host to device, 256 MB cudaMemcpyAsync (median of 5 after 1 warm-up)\n\n| host buffer | GB/s |\n|---|---|\n");
		cudaStreamCreate(&s);
		if (cudaMallocHost(&pinned, bytes) == cudaSuccess && pageable &&
			cudaMalloc(&dst, bytes) == cudaSuccess)
		{
			memset(pinned, 1, bytes);
			memset(pageable, 1, bytes);
			emit("| pinned (cudaMallocHost) | %.1f |\n", h2d_gbps(pinned, dst, bytes, 5, s));
			emit("| pageable (malloc) | %.1f |\n", h2d_gbps(pageable, dst, bytes, 5, s));
		}
		else
			emit("| (allocation failed) | - |\n");
		cudaFreeHost(pinned);
		free(pageable);
		cudaFree(dst);
		cudaStreamDestroy(s);
	}

	emit("\n## All variants\n\n| model | rows | variant | kernel | ms | rows/s |\n|---|---|---|---|---|---|\n");
	for (const std::string &s : details)
		emit("%s", s.c_str());
	emit("\n%s\n", failures ? "**Some checks FAILED (see Verification).**" : "All checks passed.");

	/* results file */
	{
		char		date[16],
					path[1024];
		std::string slug;
		time_t		now = time(NULL);
		FILE	   *out;

		strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
		for (const char *p = prop.name; *p; p++)
		{
			char		c = *p;

			if (c >= 'A' && c <= 'Z')
				c = (char) (c - 'A' + 'a');
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
				slug += c;
			else if (!slug.empty() && slug.back() != '-')
				slug += '-';
		}
		while (!slug.empty() && slug.back() == '-')
			slug.pop_back();
		snprintf(path, sizeof(path), "%s/%s-gpu-%s.md", results_dir, date, slug.c_str());
		out = fopen(path, "w");
		if (out)
		{
			fputs(g_report.c_str(), out);
			fclose(out);
			printf("\nbench_kernel: wrote %s\n", path);
		}
		else
		{
			fprintf(stderr, "bench_kernel: can not write %s\n", path);
			failures++;
		}
	}

	for (int m = 0; m < 3; m++)
		gs_forest_free(forests[m]);
	cudaFree(d_x);
	cudaFree(d_ref);
	cudaFree(d_out);
	cudaFree(d_cnt);
	cudaFree(d_bins);
	printf("bench_kernel: %s\n", failures ? "some checks FAILED" : "all checks passed");
	return failures ? 1 : 0;
}

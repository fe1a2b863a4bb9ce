/*
 * parity_kernel.cu
 *	  Device parity test of the GPU kernels (cuda/forest_kernel.cu,
 *	  cuda/forest_binned.cu) on every fixture model: the real kernels,
 *	  launched through gs_dforest_create_ex / gs_dforest_predict*, against
 *	  the CPU engine.
 *	  The CPU emulation (tests/unit/test_kernel_emulation.c) proves the
 *	  phase code; this proves the CUDA shells, launch configurations,
 *	  shared-memory limits and alignment on a real device.
 *
 * For every tests/fixtures/models/ *.json, *.ubj (XGBoost) and *.txt
 * (LightGBM: zero-as-missing, its categorical rules), for the plans auto,
 * rows, tiled with rows in global memory, tiled with staged rows, each at
 * the default shared-memory budget and at 48 KB and the device maximum,
 * and the binned kernel (fused, with a separate binning pass, and fused at
 * 48 KB with 4 rows per thread; models it refuses are skipped with a
 * comment line),
 * and for batches of 1, 31, 32, 33, 257, 1000, 65537 and 1000003 rows
 * (values around the model's thresholds, exact thresholds, 10% NaN; odd
 * batches with ld > n_rows):
 *	- margins (gs_dforest_predict_margins) equal gs_cpu_margins bit for bit
 *	  on every row up to 65537 rows, and on the first and last 4096 rows of
 *	  the 1000003-row batch;
 *	- every plan's margins equal the automatic plan's on every row
 *	  (compared on the device);
 *	- outputs (gs_dforest_predict) equal gs_cpu_predict bit for bit on the
 *	  same rows (the device transform uses glibc's expf algorithm; a
 *	  difference here on a host whose libm is not glibc with FMA is
 *	  reported with its size in ulp);
 *	- nothing is written past the batch's outputs.
 * TAP lines, then "parity: N passed, N failed".  Exit 0, 1 on a failure,
 * 77 without a CUDA device.  Run from the repository root via
 * bench/gpu/run.sh --parity (which builds it), or as
 * bench/work/gpu/parity_kernel [FIXTURES_DIR].
 */
#include <cuda_runtime.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

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

#define GUARD 64				/* floats after the outputs that must stay */
#define SENTINEL 12345.678f
#define EDGE 4096				/* rows checked at each end of big batches */


/* Record one TAP result. */
static void
check(bool ok, const std::string &label, const std::string &what)
{
	printf("%s %d - %s: %s\n", ok ? "ok" : "not ok", n_pass + n_fail + 1, label.c_str(),
		   what.c_str());
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
}


/* Count positions where a and b differ (NaN equals NaN). */
__global__ void
count_diff(const float *a, const float *b, size_t n, unsigned long long *cnt)
{
	unsigned long long local = 0;

	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
			local++;
	if (local)
		atomicAdd(cnt, local);
}

/* The rows a batch is checked on against the CPU engine. */
static std::vector<size_t>
checked_rows(size_t n)
{
	std::vector<size_t> rows;

	if (n <= 70000)
		for (size_t r = 0; r < n; r++)
			rows.push_back(r);
	else
	{
		for (size_t r = 0; r < EDGE; r++)
			rows.push_back(r);
		for (size_t r = n - EDGE; r < n; r++)
			rows.push_back(r);
	}
	return rows;
}

/* One model: every plan, every batch size. */
static void
check_model(const std::string &name, const GsForest *f, size_t optin)
{
	const size_t sizes[] = {1, 31, 32, 33, 257, 1000, 65537, 1000003};
	struct
	{
		const char *label;
		GsDForestOptions o;
	}			plans[] = {
		{"auto", {0, 0, 0, 0, 0}},
		{"rows", {1, 0, 0, 0, 0}},
		{"tiled global", {2, 0, 4, -1, 0}},
		{"tiled staged", {2, 0, 4, 1, 0}},
		{"auto 48K", {0, 48u << 10, 0, 0, 0}},
		{"tiled global 48K", {2, 48u << 10, 4, -1, 0}},
		{"auto max", {0, optin, 0, 0, 0}},
		{"tiled staged max", {2, optin, 4, 1, 0}},
		{"binned fused", {3, 0, 0, 0, 0}},
		{"binned separate pass", {3, 0, 0, 0, 1}},
		{"binned fused 48K rpt 4", {3, 48u << 10, 4, 0, 0}},
	};
	std::vector<GsDeviceForest *> dfs;
	std::vector<std::string> names;
	int			ng = f->n_groups,
				no = f->n_outputs;
	unsigned long long *d_cnt;

	cudaMalloc((void **) &d_cnt, sizeof(*d_cnt));
	for (size_t p = 0; p < sizeof(plans) / sizeof(plans[0]); p++)
	{
		GsDeviceForest *df = NULL;
		int			rc = gs_dforest_create_ex(f, &plans[p].o, &df);

		if (rc == GS_DFOREST_ETILE)
			continue;			/* a tree too large for that budget: fine */
		if (plans[p].o.kernel == 3 && rc <= GS_DFOREST_ESPLITS && rc >= GS_DFOREST_EDOUBLE)
		{
			/* a model the binned kernel does not take (categorical, too deep) */
			printf("# %s [%s]: refused: %s\n", name.c_str(), plans[p].label, gs_dforest_strerror(rc));
			continue;
		}
		if (rc != 0)
		{
			check(false, name + " [" + plans[p].label + "]",
				  std::string("gs_dforest_create_ex: ") + gs_dforest_strerror(rc));
			continue;
		}
		dfs.push_back(df);
		names.push_back(std::string(plans[p].label) + ": " + gs_dforest_kernel_name(df));
	}
	if (dfs.empty() || names[0].rfind("auto", 0) != 0)
	{
		check(false, name, "no automatic plan");
		for (GsDeviceForest *df : dfs)
			gs_dforest_free(df);
		cudaFree(d_cnt);
		return;
	}

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		size_t		n = sizes[s],
					ld = n + (s % 2 ? 3 : 0);
		std::vector<float> x(ld * (size_t) f->n_features);
		std::vector<size_t> rows = checked_rows(n);
		std::vector<float> cm,
					co,
					xs;
		float	   *d_x,
				   *d_ref,
				   *d_out;
		size_t		nm = n * (size_t) ng,
					nout = n * (size_t) no,
					cap = (nm > nout ? nm : nout) + GUARD;
		std::vector<float> host(cap);

		gs_fill_batch(f, x.data(), n, ld);
		/* the CPU engine on the checked rows (gathered as one batch) */
		xs.resize(rows.size() * (size_t) f->n_features);
		for (int k = 0; k < f->n_features; k++)
			for (size_t i = 0; i < rows.size(); i++)
				xs[(size_t) k * rows.size() + i] = x[(size_t) k * ld + rows[i]];
		cm.resize(rows.size() * (size_t) ng);
		co.resize(rows.size() * (size_t) no);
		gs_cpu_predict(f, xs.data(), rows.size(), rows.size(), cm.data(), co.data());

		if (cudaMalloc((void **) &d_x, sizeof(float) * x.size()) != cudaSuccess ||
			cudaMalloc((void **) &d_ref, sizeof(float) * cap) != cudaSuccess ||
			cudaMalloc((void **) &d_out, sizeof(float) * cap) != cudaSuccess)
		{
			check(false, name, "cudaMalloc failed");
			break;
		}
		cudaMemcpy(d_x, x.data(), sizeof(float) * x.size(), cudaMemcpyHostToDevice);

		for (size_t p = 0; p < dfs.size(); p++)
		{
			char		what[512];
			long		bad_cpu = 0,
						worst_ulp = 0,
						guard = 0;
			unsigned long long vs_auto = 0;
			int			rc;

			/* margins */
			for (size_t i = 0; i < cap; i++)
				host[i] = SENTINEL;
			cudaMemcpy(d_out, host.data(), sizeof(float) * cap, cudaMemcpyHostToDevice);
			rc = gs_dforest_predict_margins(dfs[p], d_x, ld, n, d_out, NULL);
			if (rc == 0)
				rc = (int) cudaDeviceSynchronize();
			if (rc == 0 && p == 0)	/* the automatic plan is the reference */
				rc = (int) cudaMemcpy(d_ref, d_out, sizeof(float) * nm, cudaMemcpyDeviceToDevice);
			if (rc != 0)
			{
				check(false, name + " [" + names[p] + "]",
					  std::to_string(n) + " rows: " + gs_dforest_strerror(rc));
				continue;
			}
			cudaMemset(d_cnt, 0, sizeof(*d_cnt));
			count_diff<<<1024, 256>>>(d_out, d_ref, nm, d_cnt);
			cudaMemcpy(&vs_auto, d_cnt, sizeof(vs_auto), cudaMemcpyDeviceToHost);
			cudaMemcpy(host.data(), d_out, sizeof(float) * cap, cudaMemcpyDeviceToHost);
			for (size_t i = 0; i < rows.size(); i++)
				for (int g = 0; g < ng; g++)
				{
					float		a = host[rows[i] * ng + g],
								b = cm[i * ng + g];

					if (!(a == b || (isnan(a) && isnan(b))))
						bad_cpu++;
				}
			for (size_t i = nm; i < nm + GUARD; i++)
				guard += host[i] != SENTINEL;

			/* outputs */
			for (size_t i = 0; i < cap; i++)
				host[i] = SENTINEL;
			cudaMemcpy(d_out, host.data(), sizeof(float) * cap, cudaMemcpyHostToDevice);
			rc = gs_dforest_predict(dfs[p], d_x, ld, n, d_out, NULL);
			if (rc == 0)
				rc = (int) cudaDeviceSynchronize();
			if (rc != 0)
			{
				check(false, name + " [" + names[p] + "]",
					  std::to_string(n) + " rows (outputs): " + gs_dforest_strerror(rc));
				continue;
			}
			cudaMemcpy(host.data(), d_out, sizeof(float) * cap, cudaMemcpyDeviceToHost);
			for (size_t i = 0; i < rows.size(); i++)
				for (int k = 0; k < no; k++)
				{
					long		u = gs_ulp_diff(host[rows[i] * no + k], co[i * no + k]);

					worst_ulp = u > worst_ulp ? u : worst_ulp;
				}
			for (size_t i = nout; i < nout + GUARD; i++)
				guard += host[i] != SENTINEL;

			snprintf(what, sizeof(what),
					 "%zu rows (ld %zu): %ld margins differ from the CPU engine on %zu rows, "
					 "%llu from auto on all rows; outputs differ by <= %ld ulp; %ld writes past the end",
					 n, ld, bad_cpu, rows.size(), vs_auto, worst_ulp, guard);
			check(bad_cpu == 0 && vs_auto == 0 && worst_ulp == 0 && guard == 0,
				  name + " [" + names[p] + "]", what);
		}
		cudaFree(d_x);
		cudaFree(d_ref);
		cudaFree(d_out);
	}
	for (GsDeviceForest *df : dfs)
		gs_dforest_free(df);
	cudaFree(d_cnt);
}

int
main(int argc, char **argv)
{
	const char *fixtures = argc > 1 ? argv[1] : "tests/fixtures";
	std::string dir = std::string(fixtures) + "/models";
	int			ndev = 0,
				optin = 0;
	cudaError_t rc = cudaGetDeviceCount(&ndev);
	DIR		   *d;
	struct dirent *e;
	cudaDeviceProp prop;

	if (rc != cudaSuccess || ndev < 1)
	{
		printf("1..0 # SKIP no CUDA device (%s)\n",
			   rc != cudaSuccess ? cudaGetErrorString(rc) : "device count is 0");
		return 77;
	}
	cudaGetDeviceProperties(&prop, 0);
	cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
	printf("# device: %s, %d SMs, %d bytes of shared memory per block (opt-in)\n",
		   prop.name, prop.multiProcessorCount, optin);
	d = opendir(dir.c_str());
	if (!d)
	{
		check(false, dir, "fixture directory present");
		return 1;
	}
	while ((e = readdir(d)) != NULL)
	{
		GsForest   *f;
		GsStatus	st;
		int			got = gs_load_fixture_forest(dir.c_str(), e->d_name, &f, &st);

		if (got < 0)
			check(false, e->d_name, st.msg);
		else if (got > 0 && (f->linear || f->cb_ctrs))
		{
			GsDeviceForest *df = NULL;

			/* linear trees, CatBoost's CTRs: the CPU engine's only; the device refuses them */
			check(gs_dforest_create_ex(f, NULL, &df) == GS_DFOREST_ELINEAR && df == NULL,
				  e->d_name, f->linear ? "linear trees refused with GS_DFOREST_ELINEAR" :
				  "CatBoost CTRs refused with GS_DFOREST_ELINEAR");
			gs_forest_free(f);
		}
		else if (got > 0)
		{
			check_model(e->d_name, f, (size_t) optin);
			gs_forest_free(f);
		}
	}
	closedir(d);
	printf("1..%d\nparity: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

/*
 * test_gpu_mlp.c
 *	  Server-free GPU tests of neural networks (cuda/mlp_gemm.cu through the
 *	  provider's C interface): for every ONNX fixture case
 *	  (tests/fixtures/onnx, made with onnxruntime), the GPU's outputs must be
 *	  as close to onnxruntime's and to the CPU engine's as
 *	  tests/common/nn_tolerance.h says (1e-5 of the larger of the output and
 *	  its scale; NaN where onnxruntime has NaN), through gs_cuda_predict and
 *	  through the two-slot pipeline with odd batch sizes (1, 7, 33, 64, 13,
 *	  ... rows).
 *
 * Built by "make gputest" (needs nvcc) and run where a GPU is present.
 * Without a usable GPU it prints why and exits with status 77 ("skipped");
 * not part of .ci/test.  Prints TAP lines and "N passed, N failed".
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "mlp/mlp.h"
#include "../../cuda/gs_cuda.h"
#include "../common/test_util.h"
#include "../common/nn_tolerance.h"

#define FIXTURES "../fixtures/onnx"

/* Read CASE.csv into row-major x and want; returns rows, or -1. */
static int
read_case(const char *path, int nf, int nout, float **x, float **want)
{
	FILE	   *f = fopen(path, "r");
	static char line[1 << 16];
	int			n = 0,
				cap = 256;

	if (!f)
		return -1;
	*x = malloc(sizeof(float) * cap * nf);
	*want = malloc(sizeof(float) * cap * nout);
	while (fgets(line, sizeof(line), f))
	{
		char	   *p = line,
				   *end;

		if (n == cap)
		{
			cap *= 2;
			*x = realloc(*x, sizeof(float) * cap * nf);
			*want = realloc(*want, sizeof(float) * cap * nout);
		}
		strtod(p, &end);
		p = end + 1;
		for (int k = 0; k < nf; k++, p = end + 1)
			(*x)[n * nf + k] = strtof(p, &end);
		for (int k = 0; k < nout; k++, p = end + 1)
			(*want)[n * nout + k] = strtof(p, &end);
		n++;
	}
	fclose(f);
	return n;
}

/* One fixture case on the GPU. */
static void
test_case(const char *name)
{
	char		path[512],
				fmtname[32],
				file[128],
				err[256];
	int			nf,
				nout,
				n,
				ok;
	FILE	   *f;
	float	   *x,
			   *want,
			   *col,
			   *gpu,
			   *cpu,
			   *scratch;
	double	   *scale;
	unsigned char *bytes;
	size_t		len;
	GsModelFormat fmt;
	GsModel    *m;
	GsStatus	st;
	GsCudaModel *dm;
	GsCudaPipeline *p;

	snprintf(path, sizeof(path), "%s/%s.meta", FIXTURES, name);
	f = fopen(path, "r");
	ok = f && fscanf(f, "%d %d %31s %127s", &nf, &nout, fmtname, file) == 4 &&
		gs_model_format_parse(fmtname, &fmt) == 0;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/%s.csv", FIXTURES, name);
	if (!ok || (n = read_case(path, nf, nout, &x, &want)) < 1)
	{
		gs_tap(0, name, "fixture read");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", FIXTURES, file);
	bytes = gs_read_file(path, &len);
	if (!bytes || gs_model_load(bytes, len, fmt, NULL, &gs_malloc_allocator, &m, &st) != GS_OK)
	{
		gs_tap(0, name, "model loads");
		return;
	}
	free(bytes);
	if (m->kind == GS_MODEL_MLP && m->mlp->linear_booster)
	{
		/* XGBoost's gblinear: the GPU engine does not score it (device.c) */
		printf("# %s: an XGBoost linear booster, scored on the CPU only: skipped\n", name);
		gs_model_free(m);
		free(x);
		free(want);
		return;
	}
	if (gs_cuda_mlp_upload(m->mlp, &dm, err, sizeof(err)) != 0)
	{
		printf("# %s\n", err);
		gs_tap(0, name, "uploads");
		return;
	}
	col = malloc(sizeof(float) * n * nf);
	gpu = malloc(sizeof(float) * n * nout);
	cpu = malloc(sizeof(float) * n * nout);
	scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, n));
	scale = malloc(sizeof(double) * nout);
	gs_nn_scales(want, n, nout, scale);
	for (int r = 0; r < n; r++)
		for (int k = 0; k < nf; k++)
			col[(size_t) k * n + r] = x[r * nf + k];
	gs_model_predict(m, col, n, n, scratch, cpu);
	ok = gs_cuda_predict(dm, col, n, gpu, err, sizeof(err)) == 0;
	if (!ok)
		printf("# %s\n", err);
	for (int i = 0; ok && i < n * nout; i++)
		if (!gs_nn_close(gpu[i], want[i], scale[i % nout]) || !gs_nn_close(gpu[i], cpu[i], scale[i % nout]))
		{
			printf("# output %d: gpu %.9g cpu %.9g onnxruntime %.9g\n", i, gpu[i], cpu[i], want[i]);
			ok = 0;
		}
	gs_tap(ok, name, "gs_cuda_predict matches onnxruntime and the CPU engine");

	/* the pipeline, batches of 1, 7, 33, 64, 13 rows in turn, alternating slots */
	ok = gs_cuda_pipeline_create(dm, 64, &p, err, sizeof(err)) == 0;
	for (int r0 = 0, t = 0, slot = 0, b = 0; ok && r0 < n; r0 += b, t++, slot ^= 1)
	{
		static const int sizes[] = {1, 7, 33, 64, 13};
		float	   *in;
		const float *out;

		b = sizes[t % 5] < n - r0 ? sizes[t % 5] : n - r0;
		in = gs_cuda_pipeline_input(p, slot);
		for (int r = 0; r < b; r++)
			for (int k = 0; k < nf; k++)
				in[(size_t) k * b + r] = x[(r0 + r) * nf + k];
		ok = gs_cuda_pipeline_submit(p, slot, b, err, sizeof(err)) == 0 &&
			gs_cuda_pipeline_wait(p, slot, &out, err, sizeof(err)) == 0;
		for (int i = 0; ok && i < b * nout; i++)
			ok = gs_nn_close(out[i], want[r0 * nout + i], scale[i % nout]);
	}
	if (!ok)
		printf("# %s\n", err);
	gs_tap(ok, name, "the pipeline matches onnxruntime");
	gs_cuda_pipeline_free(p);
	gs_cuda_model_free(dm);
	gs_model_free(m);
	free(x);
	free(want);
	free(col);
	free(gpu);
	free(cpu);
	free(scratch);
	free(scale);
}

int
main(void)
{
	GsCudaInfo	info;
	char		err[256];
	glob_t		gl;

	if (gs_cuda_probe(&info, err, sizeof(err)) != 0)
	{
		printf("1..0 # SKIP no usable GPU: %s\n", err);
		return 77;
	}
	printf("# device: %s, compute capability %d.%d\n", info.name, info.cc_major, info.cc_minor);
	/* every case of the fixture directory, as tests/unit/test_mlp finds them */
	memset(&gl, 0, sizeof(gl));
	if (glob(FIXTURES "/*.meta", 0, NULL, &gl) != 0 || gl.gl_pathc < 15)
	{
		printf("not ok - at least 15 network cases in %s (found %zu)\n", FIXTURES, gl.gl_pathc);
		n_fail++;
	}
	for (size_t i = 0; i < gl.gl_pathc; i++)
	{
		const char *base = strrchr(gl.gl_pathv[i], '/') ? strrchr(gl.gl_pathv[i], '/') + 1 : gl.gl_pathv[i];
		char		name[128];

		snprintf(name, sizeof(name), "%.*s", (int) (strlen(base) - strlen(".meta")), base);
		test_case(name);
	}
	globfree(&gl);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

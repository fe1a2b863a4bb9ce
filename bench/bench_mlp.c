/*
 * bench_mlp.c
 *	  Rows per second of the CPU engine of neural networks (src/core/mlp/mlp.c:
 *	  single-threaded OpenBLAS GEMM per layer + fused activation pass)
 *	  against a naive triple loop doing the same arithmetic, on the MLPs
 *	  30 -> 256 -> 256 -> 1 and 30 -> 1024 -> 1024 -> 512 -> 1 (relu hidden
 *	  layers, sigmoid output), random weights; and a tabular ResNet (30 ->
 *	  256, four blocks h + W2 relu(W1 h) each followed by a relu, -> 1) with
 *	  and without its skip connections, for what keeping and adding back
 *	  the blocks' inputs costs.  No server, no GPU.
 *
 *	  make bench/bench_mlp && bench/bench_mlp [batch_rows] [runs]
 *
 * Each engine scores the same column-major batch `runs` times (default 7);
 * the median time is reported, and the engines' outputs are compared
 * (max relative difference against the naive loop), so the loop is a real
 * reference and not dead code.
 *
 * Built as bench/bench_mlp_gpu (make bench/bench_mlp_gpu, needs nvcc; run
 * where a GPU is present) it also times the GPU engine: the provider's
 * pipeline as the extension drives it (pinned input, copy in, one cuBLAS
 * SGEMM per layer + fused kernels, copy out, wait), weights resident.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlp/mlp.h"
#include "../tests/common/test_util.h"

#define BENCH_NAME "bench_mlp"
#include "bench_util.h"

#ifdef GS_BENCH_GPU
#include "../cuda/gs_cuda.h"
#endif

/* Build a random MLP sizes[0] -> ... -> sizes[n-1], relu hidden, sigmoid out. */
static GsMlp *
make_mlp(const int *sizes, int n)
{
	GsMlp	   *m = calloc(1, sizeof(GsMlp));
	int			k = 0;

	m->alloc = gs_malloc_allocator;
	m->steps = calloc((size_t) 2 * n, sizeof(GsMlpStep));
	m->n_features = sizes[0];
	m->max_width = sizes[0];
	for (int l = 0; l + 1 < n; l++)
	{
		GsMlpStep  *d = &m->steps[k++];
		float		scale = sqrtf(2.0f / (float) sizes[l]);

		d->op = GS_MLP_DENSE;
		d->n_in = sizes[l];
		d->n_out = sizes[l + 1];
		d->w = malloc(sizeof(float) * (size_t) d->n_in * d->n_out);
		d->p = malloc(sizeof(float) * (size_t) d->n_out);
		for (size_t i = 0; i < (size_t) d->n_in * d->n_out; i++)
			d->w[i] = (float) ((gs_rnd() * 2 - 1) * scale);
		for (int o = 0; o < d->n_out; o++)
			d->p[o] = (float) ((gs_rnd() - 0.5) * 0.1);
		m->n_params += (int64_t) d->n_in * d->n_out + d->n_out;
		m->n_layers++;
		if (d->n_out > m->max_width)
			m->max_width = d->n_out;
		m->steps[k].op = l + 2 < n ? GS_MLP_RELU : GS_MLP_SIGMOID;
		m->steps[k].n_in = m->steps[k].n_out = d->n_out;
		k++;
	}
	m->n_steps = k;
	m->n_net_outputs = m->n_outputs = sizes[n - 1];
	return m;
}

/* A dense step n_in -> n_out of random weights at steps[*k]. */
static void
add_dense(GsMlp *m, int *k, int n_in, int n_out)
{
	GsMlpStep  *d = &m->steps[(*k)++];
	float		scale = sqrtf(1.0f / (float) n_in);

	d->op = GS_MLP_DENSE;
	d->n_in = n_in;
	d->n_out = n_out;
	d->w = malloc(sizeof(float) * (size_t) n_in * n_out);
	d->p = malloc(sizeof(float) * (size_t) n_out);
	for (size_t i = 0; i < (size_t) n_in * n_out; i++)
		d->w[i] = (float) ((gs_rnd() * 2 - 1) * scale);
	for (int o = 0; o < n_out; o++)
		d->p[o] = (float) ((gs_rnd() - 0.5) * 0.1);
	m->n_params += (int64_t) n_in * n_out + n_out;
	m->n_layers++;
}

/* A step of op over width columns at steps[*k] (slot for SAVE / ADD_SAVED). */
static void
add_step(GsMlp *m, int *k, GsMlpOp op, int width, int slot)
{
	GsMlpStep  *s = &m->steps[(*k)++];

	s->op = op;
	s->n_in = s->n_out = width;
	s->slot = slot;
}

/*
 * A tabular ResNet: 30 -> 256 (relu), four blocks relu(h + W2 relu(W1 h))
 * of 256 -> 256 -> 256, then 256 -> 1 (sigmoid); without its skip
 * connections when skips is false (the same layers, no SAVE / ADD_SAVED).
 */
static GsMlp *
make_resnet(bool skips)
{
	GsMlp	   *m = calloc(1, sizeof(GsMlp));
	int			k = 0;

	m->alloc = gs_malloc_allocator;
	m->steps = calloc(64, sizeof(GsMlpStep));
	m->n_features = 30;
	m->max_width = 256;
	add_dense(m, &k, 30, 256);
	add_step(m, &k, GS_MLP_RELU, 256, 0);
	for (int b = 0; b < 4; b++)
	{
		/* one slot for every block, as the loader packs them (onnx_pack_slots) */
		if (skips)
			add_step(m, &k, GS_MLP_SAVE, 256, 0);
		add_dense(m, &k, 256, 256);
		add_step(m, &k, GS_MLP_RELU, 256, 0);
		add_dense(m, &k, 256, 256);
		if (skips)
			add_step(m, &k, GS_MLP_ADD_SAVED, 256, 0);
		add_step(m, &k, GS_MLP_RELU, 256, 0);
	}
	add_dense(m, &k, 256, 1);
	add_step(m, &k, GS_MLP_SIGMOID, 1, 0);
	m->n_steps = k;
	m->n_slots = skips ? 1 : 0;
	m->n_net_outputs = m->n_outputs = 1;
	return m;
}

/*
 * The same network, naively: per row, per unit, a dot product; a SAVE
 * copies the row's values to slots (n_slots * max_width floats), an
 * ADD_SAVED adds them back.
 */
static void
naive_predict(const GsMlp *m, const float *x, size_t ld, size_t n, float *a, float *b,
			  float *slots, float *out)
{
	for (size_t r = 0; r < n; r++)
	{
		float	   *cur = a,
				   *next = b;
		int			width = m->n_features;

		for (int f = 0; f < width; f++)
			cur[f] = x[(size_t) f * ld + r];
		for (int s = 0; s < m->n_steps; s++)
		{
			const GsMlpStep *st = &m->steps[s];

			if (st->op == GS_MLP_DENSE)
			{
				for (int o = 0; o < st->n_out; o++)
				{
					float		acc = 0.0f;

					for (int i = 0; i < st->n_in; i++)
						acc += st->w[(size_t) o * st->n_in + i] * cur[i];
					next[o] = acc + st->p[o];
				}
				width = st->n_out;
				{
					float	   *t = cur;

					cur = next;
					next = t;
				}
			}
			else if (st->op == GS_MLP_SAVE)
				memcpy(slots + (size_t) st->slot * m->max_width, cur, sizeof(float) * width);
			else if (st->op == GS_MLP_ADD_SAVED)
				for (int c = 0; c < width; c++)
					cur[c] += slots[(size_t) st->slot * m->max_width + c];
			else if (st->op == GS_MLP_RELU)
				for (int c = 0; c < width; c++)
					cur[c] = cur[c] > 0 ? cur[c] : 0;
			else if (st->op == GS_MLP_SIGMOID)
				for (int c = 0; c < width; c++)
					cur[c] = 1.0f / (1.0f + expf(-cur[c]));
		}
		for (int k = 0; k < width; k++)
			out[r * (size_t) width + k] = cur[k];
	}
}

#ifdef GS_BENCH_GPU
/* Median seconds of the GPU pipeline on the batch (0 when it fails). */
static double
time_gpu(const GsMlp *m, const float *x, size_t n, int runs, float *out)
{
	GsCudaModel *dm;
	GsCudaPipeline *p;
	char		err[256];
	double		t[64];
	const float *res = NULL;

	if (gs_cuda_mlp_upload(m, &dm, err, sizeof(err)) != 0 ||
		gs_cuda_pipeline_create(dm, n, &p, err, sizeof(err)) != 0)
	{
		fprintf(stderr, "GPU: %s\n", err);
		return 0;
	}
	for (int i = 0; i < runs; i++)
	{
		double		t0 = now_s();

		memcpy(gs_cuda_pipeline_input(p, 0), x, sizeof(float) * n * m->n_features);
		if (gs_cuda_pipeline_submit(p, 0, n, err, sizeof(err)) != 0 ||
			gs_cuda_pipeline_wait(p, 0, &res, err, sizeof(err)) != 0)
		{
			fprintf(stderr, "GPU: %s\n", err);
			return 0;
		}
		t[i] = now_s() - t0;
	}
	memcpy(out, res, sizeof(float) * n * m->n_outputs);
	gs_cuda_pipeline_free(p);
	gs_cuda_model_free(dm);
	qsort(t, (size_t) runs, sizeof(double), cmp_double);
	return t[runs / 2];
}
#endif

/* Median seconds of runs calls of one engine (0: BLAS, 1: naive). */
static double
time_engine(int naive, const GsMlp *m, const float *x, size_t n, int runs, float *scratch,
			float *out)
{
	double		t[64];

	for (int i = 0; i < runs; i++)
	{
		double		t0 = now_s();

		if (naive)
			naive_predict(m, x, n, n, scratch, scratch + m->max_width, scratch + 2 * m->max_width, out);
		else
			gs_mlp_predict(m, x, n, n, scratch, out);
		t[i] = now_s() - t0;
	}
	qsort(t, (size_t) runs, sizeof(double), cmp_double);
	return t[runs / 2];
}

int
main(int argc, char **argv)
{
	static const int small[] = {30, 256, 256, 1};
	static const int large[] = {30, 1024, 1024, 512, 1};
	const int  *nets[2] = {small, large};
	int			lens[2] = {4, 5};
	static const char *const resnet_names[2] = {
		"resnet 30-256, 4 blocks 256-256-256 + skip, -1",
		"the same without its skips",
	};
	size_t		n = argc > 1 ? (size_t) atol(argv[1]) : 8192;
	int			runs = argc > 2 ? atoi(argv[2]) : 7;

	if (runs < 1 || runs > 64 || n < 1)
	{
		fprintf(stderr, "usage: bench_mlp [batch_rows] [runs 1..64]\n");
		return 2;
	}
#ifdef GS_BENCH_GPU
	printf("| network | params | batch rows | BLAS engine rows/s | naive loop rows/s | speed-up | max rel diff | GPU engine rows/s | GPU max rel diff |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
#else
	printf("| network | params | batch rows | BLAS engine rows/s | naive loop rows/s | speed-up | max rel diff |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
#endif
	for (int k = 0; k < 4; k++)
	{
		GsMlp	   *m = k < 2 ? make_mlp(nets[k], lens[k]) : make_resnet(k == 2);
		float	   *x = malloc(sizeof(float) * n * m->n_features);
		float	   *scratch = malloc(sizeof(float) * gs_mlp_scratch_floats(m, n));
		float	   *out_blas = malloc(sizeof(float) * n);
		float	   *out_naive = malloc(sizeof(float) * n);
		double		tb,
					tn,
					worst = 0;
		char		name[64] = "";

		for (size_t i = 0; i < n * m->n_features; i++)
			x[i] = (float) (gs_rnd() * 4 - 2);
		for (int l = 0; k < 2 && l < lens[k]; l++)
			snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s%d", l ? "-" : "", nets[k][l]);
		if (k >= 2)
			snprintf(name, sizeof(name), "%s", resnet_names[k - 2]);
		tb = time_engine(0, m, x, n, runs, scratch, out_blas);
		tn = time_engine(1, m, x, n, runs, scratch, out_naive);
		for (size_t r = 0; r < n; r++)
		{
			double		d = fabs((double) out_blas[r] - out_naive[r]) / fmax(fabs((double) out_naive[r]), 1e-6);

			if (d > worst)
				worst = d;
		}
		printf("| %s | %lld | %zu | %.0f | %.0f | %.1fx | %.1e |", name, (long long) m->n_params, n,
			   n / tb, n / tn, tn / tb, worst);
#ifdef GS_BENCH_GPU
		{
			double		tg = time_gpu(m, x, n, runs, out_blas),
						gworst = 0;

			for (size_t r = 0; r < n; r++)
			{
				double		d = fabs((double) out_blas[r] - out_naive[r]) / fmax(fabs((double) out_naive[r]), 1e-6);

				if (d > gworst)
					gworst = d;
			}
			if (tg > 0)
				printf(" %.0f | %.1e |", n / tg, gworst);
			else
				printf(" failed | n/a |");
		}
#endif
		printf("\n");
		fflush(stdout);
		free(x);
		free(scratch);
		free(out_blas);
		free(out_naive);
		gs_mlp_free(m);
	}
	return 0;
}

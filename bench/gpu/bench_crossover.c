/*
 * bench_crossover.c
 *	  From which batch size is the GPU faster than one CPU core?  Per model
 *	  and batch size, the time to score one batch on the CPU engine, one
 *	  thread (gs_cpu_predict for tree ensembles, gs_mlp_predict for networks,
 *	  in the slices a backend scores at a time: gs_model_slice_rows),
 *	  against the provider's two-slot pipeline as the extension drives it
 *	  (pinned input already filled, submit + wait: copy in, score, copy
 *	  back).  Then, counting the pipeline's set-up (timed the second time in
 *	  the process, as a later query pays it), the query size from which the
 *	  GPU pays off, interpolated between the measured sizes: what the
 *	  default of pg_gpuscore.gpu_min_rows must cover ('auto' sets the GPU up
 *	  at a query's first batch of at least that many rows).
 *
 *	  bench_crossover MODEL_FILE...    (XGBoost JSON/UBJ, LightGBM text, ONNX)
 *
 *	  GS_XOVER_SIZES=1,16,...  ascending batch sizes (default 1 to 65536
 *	                           rows, the default pg_gpuscore.batch_size;
 *	                           2048 and 8192 too, around the query crossover)
 *	  GS_XOVER_RUNS=N          timed runs per engine and size (default 21)
 *	  GS_XOVER_ALLOW_MOCK=1    accept a provider without a CUDA driver (the
 *	                           CPU mock: the numbers mean nothing)
 *
 * Rows are synthetic, from a fixed seed, column-major with ld = rows:
 * for forests bench/make_models.py's distribution (30 features) or uniform
 * around each feature's split thresholds, for networks N(0, 1);
 * 5% NaN for forests, none for networks (a NaN makes the row's outputs NaN
 * there, hiding differences).  Per size: warm-ups, then the engines
 * alternate and each one's median is reported; filling the input is never
 * timed.  Every run's GPU outputs must equal the CPU engine's bit for bit
 * (forests) or within 1e-5 relative above 1 (networks).  Markdown on
 * stdout.  Built and run on the lent device machine (bench/gpu/README.md).
 * Exit status: 0; 1 a mismatch or an error; 2 usage; 77 no usable GPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "../../cuda/gs_cuda.h"
#include "../../tests/common/test_util.h"
#include "../../tests/common/test_models.h"

#define BENCH_NAME "bench_crossover"
#include "../bench_util.h"

#define MAX_SIZES	32
#define MAX_ROWS	(1u << 24)
#define WARMUP		3
#define SEED		20240602ULL
#define NAN_RATE	0.05
#define MLP_TOL		1e-5

/*
 * How the values of one feature are drawn: N(a, b), uniform in [a, b),
 * exponential of mean a, integers in [a, b).
 */
typedef enum {D_NORMAL, D_UNIFORM, D_EXP, D_INT} Dist;

typedef struct FeatDist
{
	Dist		d;
	double		a, b;
} FeatDist;

static size_t sizes[MAX_SIZES];
static int	n_sizes,
			runs = 21;

/* Read GS_XOVER_SIZES (ascending) and GS_XOVER_RUNS. */
static void
parse_env(void)
{
	const char *s = getenv("GS_XOVER_SIZES"),
			   *r = getenv("GS_XOVER_RUNS");
	char	   *end;

	if (s == NULL || *s == '\0')
		s = "1,16,64,256,1024,2048,4096,8192,16384,65536";
	while (*s)
	{
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 10);
		if (end == s || errno || v < 1 || v > MAX_ROWS || n_sizes == MAX_SIZES ||
			(n_sizes && v <= sizes[n_sizes - 1]) || (*end && *end != ','))
			die("GS_XOVER_SIZES: at most %d ascending row counts, 1 to %u, comma-separated",
				MAX_SIZES, MAX_ROWS);
		sizes[n_sizes++] = (size_t) v;
		s = *end ? end + 1 : end;
	}
	if (r && *r)
	{
		errno = 0;
		runs = (int) strtol(r, &end, 10);
		if (errno || *end || runs < 1 || runs > 10000)
			die("GS_XOVER_RUNS: 1 to 10000");
	}
}

/*
 * The distribution of every feature of m.  Forests: bench/make_models.py's
 * for 30 features, otherwise uniform over each feature's split thresholds
 * widened by 10% (integers 0-31 for categorical features; N(0, 1) when no
 * split uses it).  Networks: N(0, 1), the scale they are trained for (large
 * inputs saturate the outputs and blow up GEMM rounding differences).
 */
static FeatDist *
feature_dists(const GsModel *m)
{
	int			nf = m->n_features;
	bool		splits = nf != 30 && m->forest;
	FeatDist   *fd = xmalloc(sizeof(FeatDist) * (size_t) nf);

	for (int k = 0; k < nf; k++)
		if (splits)				/* threshold range, below */
			fd[k] = (FeatDist) {D_UNIFORM, INFINITY, -INFINITY};
		else if (m->forest)		/* nf == 30 */
			fd[k] = k < 10 ? (FeatDist) {D_NORMAL, 0, 1} : k < 20 ? (FeatDist) {D_UNIFORM, -5, 5} :
				k < 25 ? (FeatDist) {D_EXP, 100, 0} : (FeatDist) {D_INT, 0, 12};
		else
			fd[k] = (FeatDist) {D_NORMAL, 0, 1};
	for (int64_t i = 0; splits && i < m->forest->n_nodes; i++)
	{
		const GsNode *nd = &m->forest->nodes[i];
		FeatDist   *d = &fd[nd->info & GS_NODE_FEATURE_MASK];

		if (nd->info & GS_NODE_LEAF)
			continue;
		if (nd->info & GS_NODE_CATEGORICAL)
			*d = (FeatDist) {D_INT, 0, 32};
		else if (d->d == D_UNIFORM && isfinite(nd->value))
		{
			d->a = fmin(d->a, nd->value);
			d->b = fmax(d->b, nd->value);
		}
	}
	for (int k = 0; splits && k < nf; k++)
		if (fd[k].d == D_UNIFORM && fd[k].a > fd[k].b)
			fd[k] = (FeatDist) {D_NORMAL, 0, 1};	/* no split on it */
		else if (fd[k].d == D_UNIFORM)
		{
			double		pad = fd[k].b > fd[k].a ? 0.1 * (fd[k].b - fd[k].a) : fmax(1.0, 0.1 * fabs(fd[k].a));

			fd[k].a -= pad;
			fd[k].b += pad;
		}
	return fd;
}

/* n rows into column-major x (ld = n), from a fixed seed. */
static void
fill_rows(const FeatDist *fd, int nf, double nan_rate, float *x, size_t n)
{
	gs_rng_state = SEED;
	for (int k = 0; k < nf; k++)
		for (size_t r = 0; r < n; r++)
		{
			double		u = gs_rnd(),
						v;

			if (fd[k].d == D_NORMAL)
				v = fd[k].a + fd[k].b * sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * gs_rnd());
			else if (fd[k].d == D_UNIFORM)
				v = fd[k].a + u * (fd[k].b - fd[k].a);
			else if (fd[k].d == D_EXP)
				v = -fd[k].a * log(1.0 - u);
			else
				v = floor(fd[k].a + u * (fd[k].b - fd[k].a));
			x[(size_t) k * n + r] = gs_rnd() < nan_rate ? NAN : (float) v;
		}
}

/* First output where gpu is not cpu (bit for bit, or within MLP_TOL), or -1. */
static long
first_mismatch(bool exact, const float *cpu, const float *gpu, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	a, b;

		if (isnan(cpu[i]) && isnan(gpu[i]))
			continue;
		memcpy(&a, &cpu[i], 4);
		memcpy(&b, &gpu[i], 4);
		if (exact ? a != b : !(fabs((double) gpu[i] - cpu[i]) / fmax(1.0, fabs(cpu[i])) <= MLP_TOL))
			return (long) i;
	}
	return -1;
}

/* One line saying what the model is. */
static void
describe(const GsModel *m)
{
	if (m->forest)
	{
		const GsForest *f = m->forest;

		printf("%s tree ensemble, %s: %d trees, max depth %d, %" PRId64 " nodes, %d features, %d output(s)\n\n",
			   gs_model_format_name(f->format), f->objective, f->n_trees, f->max_depth, f->n_nodes,
			   f->n_features, f->n_outputs);
		return;
	}
	printf("network: %d dense layers, widths %d", m->mlp->n_layers, m->mlp->n_features);
	for (int s = 0; s < m->mlp->n_steps; s++)
		if (m->mlp->steps[s].op == GS_MLP_DENSE)
			printf("-%d", m->mlp->steps[s].n_out);
	printf(", %" PRId64 " parameters, output %s, %d output(s)\n\n", m->mlp->n_params,
		   m->mlp->output_act[0] ? m->mlp->output_act : "identity", m->n_outputs);
}

/*
 * Time both engines on the n rows of x, medians into *cpu_us and *gpu_us.
 * Returns false after a provider error or a mismatch (printed).
 */
static bool
measure(const GsModel *m, GsCudaPipeline *p, const float *x, size_t n, size_t slice,
		float *scratch, float *cpu, double *t_cpu, double *t_gpu, double *cpu_us, double *gpu_us)
{
	size_t		no = (size_t) m->n_outputs;
	char		err[512];

	for (int i = -WARMUP; i < runs; i++)
	{
		int			slot = (i + WARMUP) % GS_CUDA_SLOTS;
		const float *gpu = NULL;
		double		t0, t1, t2;
		long		bad;

		t0 = now_s();
		for (size_t r0 = 0; r0 < n; r0 += slice)
			gs_model_predict(m, x + r0, n, n - r0 < slice ? n - r0 : slice, scratch, cpu + r0 * no);
		t1 = now_s();
		memcpy(gs_cuda_pipeline_input(p, slot), x, sizeof(float) * n * (size_t) m->n_features);
		t2 = now_s();
		if (gs_cuda_pipeline_submit(p, slot, n, err, sizeof(err)) != GS_CUDA_OK ||
			gs_cuda_pipeline_wait(p, slot, &gpu, err, sizeof(err)) != GS_CUDA_OK)
		{
			fprintf(stderr, BENCH_NAME ": %zu rows, pipeline: %s\n", n, err);
			return false;
		}
		if (i >= 0)
		{
			t_cpu[i] = (t1 - t0) * 1e6;
			t_gpu[i] = (now_s() - t2) * 1e6;
		}
		if ((bad = first_mismatch(m->forest != NULL, cpu, gpu, n * no)) >= 0)
		{
			printf("\n**FAILED**: %zu rows, run %d: row %zu output %zu: GPU %.9g, CPU %.9g (%s)\n",
				   n, i, (size_t) bad / no, (size_t) bad % no, gpu[bad], cpu[bad],
				   m->forest ? "must be bit-identical" : "must be within 1e-5 relative");
			fprintf(stderr, BENCH_NAME ": GPU and CPU outputs differ\n");
			return false;
		}
	}
	*cpu_us = median(t_cpu, runs);
	*gpu_us = median(t_gpu, runs);
	return true;
}

/*
 * Load, upload and measure one model; print its section.  *crossover gets
 * the smallest size from which the GPU wins at every measured size (0:
 * none).  Returns false on any failure.
 */
/*
 * The query size from which the GPU pays off counting a set-up of setup_us:
 * setup + gpu(n) < cpu(n) at every measured size from there on, the start
 * interpolated linearly between the last size where it does not and the
 * next; 0 when it does not at the largest size.
 */
static size_t
query_crossover(const double *c, const double *g, double setup_us)
{
	int			last = -1;			/* the largest size where the GPU does not pay */
	double		lo,
				hi;

	for (int s = 0; s < n_sizes; s++)
		if (c[s] - (g[s] + setup_us) <= 0)
			last = s;
	if (last == n_sizes - 1)
		return 0;
	if (last < 0)
		return sizes[0];
	lo = c[last] - (g[last] + setup_us);
	hi = c[last + 1] - (g[last + 1] + setup_us);
	return sizes[last] + (size_t) ceil((double) (sizes[last + 1] - sizes[last]) * -lo / (hi - lo));
}

static bool
bench_model(const char *path, size_t *crossover, size_t *query_xover)
{
	size_t		max_n = sizes[n_sizes - 1],
				slice;
	GsModel    *m;
	GsStatus	st;
	GsCudaModel *dm = NULL;
	GsCudaPipeline *p = NULL;
	char		err[512];
	bool		ok = false,
				wins[MAX_SIZES];
	float	   *x = NULL,
			   *scratch = NULL,
			   *cpu = NULL;
	double	   *t_cpu = xmalloc(sizeof(double) * (size_t) runs),
			   *t_gpu = xmalloc(sizeof(double) * (size_t) runs),
				t0,
				t_up,
				t_pipe,
				t_pipe2,
				c_us[MAX_SIZES],
				g_us[MAX_SIZES];
	FeatDist   *fd = NULL;
	int			rc;

	printf("## %s\n\n", path);
	if (gs_load_model_file(path, GS_FORMAT_AUTO, &m, &st) != GS_OK)
	{
		fprintf(stderr, BENCH_NAME ": %s: %s%s%s\n", path, st.msg, st.detail[0] ? ": " : "", st.detail);
		goto done;
	}
	slice = gs_model_slice_rows(m);
	describe(m);
	t0 = now_s();
	rc = m->forest ? gs_cuda_model_upload(m->forest, &dm, err, sizeof(err))
		: gs_cuda_mlp_upload(m->mlp, &dm, err, sizeof(err));
	t_up = now_s() - t0;
	if (rc != GS_CUDA_OK)
	{
		fprintf(stderr, BENCH_NAME ": %s: upload: %s\n", path, err);
		goto done;
	}
	t0 = now_s();
	if (gs_cuda_pipeline_create(dm, max_n, &p, err, sizeof(err)) != GS_CUDA_OK)
	{
		fprintf(stderr, BENCH_NAME ": %s: pipeline of %zu rows: %s\n", path, max_n, err);
		goto done;
	}
	t_pipe = now_s() - t0;
	/* again: the first in a process also opens what the model needs (cuBLAS) */
	gs_cuda_pipeline_free(p);
	p = NULL;
	t0 = now_s();
	if (gs_cuda_pipeline_create(dm, max_n, &p, err, sizeof(err)) != GS_CUDA_OK)
	{
		fprintf(stderr, BENCH_NAME ": %s: pipeline of %zu rows: %s\n", path, max_n, err);
		goto done;
	}
	t_pipe2 = now_s() - t0;
	printf("CPU in slices of %zu rows, as a backend does. Not in the table: upload %.2f ms (once "
		   "per model and backend), pipeline for %zu rows %.2f ms the first time in a process, "
		   "%.2f ms after that (once per query that uses the GPU).\n\n",
		   slice, t_up * 1e3, max_n, t_pipe * 1e3, t_pipe2 * 1e3);

	x = xmalloc(sizeof(float) * max_n * (size_t) m->n_features);
	scratch = xmalloc(sizeof(float) * gs_model_scratch_floats(m, max_n < slice ? max_n : slice));
	cpu = xmalloc(sizeof(float) * max_n * (size_t) m->n_outputs);
	fd = feature_dists(m);
	printf("| rows | CPU median µs | GPU median µs | GPU/CPU speed | GPU wins |\n");
	printf("|---:|---:|---:|---:|:---:|\n");
	for (int s = 0; s < n_sizes; s++)
	{
		double		c,
					g;

		fill_rows(fd, m->n_features, m->forest ? NAN_RATE : 0.0, x, sizes[s]);
		if (!measure(m, p, x, sizes[s], slice, scratch, cpu, t_cpu, t_gpu, &c, &g))
			goto done;
		wins[s] = g < c;
		c_us[s] = c;
		g_us[s] = g;
		printf("| %zu | %.1f | %.1f | %.2fx | %s |\n", sizes[s], c, g, c / g, wins[s] ? "yes" : "no");
		fflush(stdout);
	}
	*crossover = 0;
	for (int s = n_sizes - 1; s >= 0 && wins[s]; s--)
		*crossover = sizes[s];
	if (*crossover)
		printf("\ncrossover: %zu rows (the GPU is faster at this size and every larger one measured)\n\n",
			   *crossover);
	else
		printf("\ncrossover: none up to %zu rows\n\n", max_n);
	*query_xover = query_crossover(c_us, g_us, t_pipe2 * 1e6);
	if (*query_xover)
		printf("a query pays off on the GPU from about %zu rows, counting the pipeline's set-up "
			   "(%.2f ms; interpolated between the measured sizes)\n\n", *query_xover, t_pipe2 * 1e3);
	else
		printf("a query does not pay off on the GPU up to %zu rows, counting the pipeline's set-up "
			   "(%.2f ms)\n\n", max_n, t_pipe2 * 1e3);
	ok = true;
done:
	gs_cuda_pipeline_free(p);
	gs_cuda_model_free(dm);
	gs_model_free(m);
	free(x);
	free(scratch);
	free(cpu);
	free(fd);
	free(t_cpu);
	free(t_gpu);
	return ok;
}

/* The host CPU's model name, for the header. */
static void
cpu_name(char *buf, size_t len)
{
	FILE	   *f = fopen("/proc/cpuinfo", "r");
	char		line[512],
			   *c;

	snprintf(buf, len, "unknown");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && (c = strchr(line, ':')) != NULL)
		{
			snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

int
main(int argc, char **argv)
{
	GsCudaInfo	info;
	char		err[512],
				cpu[256];
	const char *allow = getenv("GS_XOVER_ALLOW_MOCK");
	bool		mock;
	size_t		best = 0,
				best_query = 0;
	int			none = 0,
				none_query = 0,
				rc;

	if (argc < 2)
	{
		fprintf(stderr, "usage: bench_crossover MODEL_FILE...\n");
		return 2;
	}
	parse_env();
	if (gs_cuda_abi_version() != GS_CUDA_ABI_VERSION)
		die("provider ABI %d, this program was built for %d", gs_cuda_abi_version(), GS_CUDA_ABI_VERSION);
	if ((rc = gs_cuda_probe(&info, err, sizeof(err))) != GS_CUDA_OK || info.device_count < 1)
	{
		printf("bench_crossover: no usable GPU (%s): nothing measured\n",
			   rc != GS_CUDA_OK ? err : "no CUDA device");
		return 77;
	}
	mock = info.driver_version <= 0;
	if (mock && !(allow && strcmp(allow, "1") == 0))
	{
		printf("bench_crossover: the provider reports no CUDA driver (the CPU mock?): nothing "
			   "measured; GS_XOVER_ALLOW_MOCK=1 runs anyway\n");
		return 77;
	}
	cpu_name(cpu, sizeof(cpu));
	printf("# GPU/CPU crossover of batch scoring (bench_crossover)\n\n");
	if (mock)
		printf("**Mock provider, no real GPU: the \"GPU\" is the CPU mock and every number below "
			   "is meaningless (a test of the program only).**\n\n");
	printf("- device: %s, compute capability %d.%d, %zu MiB (%zu MiB free), driver %d, runtime %d\n",
		   info.name, info.cc_major, info.cc_minor, info.total_mem >> 20, info.free_mem >> 20,
		   info.driver_version, info.runtime_version);
	printf("- CPU engine: one thread of %s (gs_cpu_predict; networks gs_mlp_predict, serial "
		   "OpenBLAS), in the backend's interruptible slices\n", cpu);
	printf("- GPU engine: the provider's two-slot pipeline as the extension drives it: pinned "
		   "input already filled, submit + wait (copy in, score, copy back), one batch at a time\n");
	printf("- batch sizes:");
	for (int s = 0; s < n_sizes; s++)
		printf("%s %zu", s ? "," : "", sizes[s]);
	printf(" rows; median of %d runs per engine after %d warm-ups, engines alternating; filling "
		   "the input not timed\n", runs, WARMUP);
	printf("- rows: synthetic, fixed seed, column-major; 5%% NaN for forests, none for networks\n\n");

	for (int i = 1; i < argc; i++)
	{
		size_t		c,
					q;

		if (!bench_model(argv[i], &c, &q))
			return 1;
		none += c == 0;
		best = c > best ? c : best;
		none_query += q == 0;
		best_query = q > best_query ? q : best_query;
	}
	if (none)
		printf("per batch: for %d of the models given the GPU was not faster than one CPU core at "
			   "%zu rows, the largest size measured; the largest crossover of the others: %zu rows\n\n",
			   none, sizes[n_sizes - 1], best);
	else
		printf("per batch: from %zu rows on, the GPU scored a batch of every measured size faster "
			   "than one CPU core, for every model given (the largest crossover of the models above; "
			   "only measured sizes are candidates)\n\n", best);
	/*
	 * 'auto' sets the GPU up at a query's first batch of gpu_min_rows rows
	 * or more: the query-level crossover is what the setting must cover
	 */
	if (none_query)
		printf("recommended pg_gpuscore.gpu_min_rows: none\n\n(counting the pipeline's set-up, a "
			   "query of %zu rows did not pay off on the GPU for %d of the models given; the largest "
			   "query crossover of the others: %zu rows)\n", sizes[n_sizes - 1], none_query, best_query);
	else
		printf("recommended pg_gpuscore.gpu_min_rows: %zu\n\n(the largest query crossover of the "
			   "models above, counting the pipeline's set-up once per query; the upload, once per "
			   "model and session, is not counted)\n", best_query);
	if (mock)
		printf("\n(mock provider: not a measurement)\n");
	return 0;
}

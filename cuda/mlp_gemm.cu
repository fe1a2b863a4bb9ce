/*
 * mlp_gemm.cu
 *	  Neural networks on the GPU (see mlp_gemm.h): parameter upload, one
 *	  cublasSgemm per dense layer on a column-major batch (the layout of
 *	  the CPU engine, src/core/mlp/mlp.c), and kernels for the fused bias +
 *	  element-wise pass (mlp_fused_kernel, which also reads a GATHER
 *	  step's columns from the batch: a scikit-learn pipeline's
 *	  ColumnTransformer or one-hot columns, and a saved value a branch
 *	  goes back to, or joins by a Concat), skip connections' save and
 *	  element-wise joins (mlp_skip_kernel),
 *	  the row-wise steps: softmax,
 *	  log softmax, layer normalization (mlp_row_kernel, gs_mlp_row)
 *	  and the output: transposed to row-major (mlp_output_kernel) or the
 *	  per-row mean squared error of an autoencoder (mlp_recon_kernel).
 *
 * Everything of one batch is enqueued on the run's stream; nothing here
 * synchronises.  Device memory: a GsDeviceMlp owns the weights, biases and
 * op descriptors; a GsDmlpRun owns its two activation buffers, one more
 * per value a skip connection keeps, and its cuBLAS handle.
 *
 * cuBLAS is not linked: it is opened with dlopen the first time a network
 * is scored on the GPU (cublas_api() below), so that loading the provider,
 * which every backend does on its first batch in 'auto' mode, does not map
 * cuBLAS's ~600 MB of libraries and spend ~60 ms relocating them in
 * backends that only ever score trees or have no GPU.  The handle stays
 * open for the life of the process.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_gemm.h"
#include "mlp/mlp_eval.h"

#define THREADS 256

/* ---- cuBLAS, opened on first use ---- */

/* The few cuBLAS entry points used here (the _v2 names the macros of
 * cublas_v2.h stand for). */
typedef struct CublasApi
{
	decltype(&cublasCreate_v2) create;
	decltype(&cublasDestroy_v2) destroy;
	decltype(&cublasSetStream_v2) set_stream;
	decltype(&cublasSetMathMode) set_math_mode;
	decltype(&cublasSgemm_v2) sgemm;
	decltype(&cublasGetStatusString) status_string;
} CublasApi;

static CublasApi cublas;
static bool cublas_tried;
static char cublas_error[512];

#define STR2(x) #x
#define STR(x) STR2(x)

/*
 * The cuBLAS entry points, or NULL with cublas_error set when the library
 * (libcublas.so.<major> of the toolkit the provider was built with, found
 * through the provider's rpath or ld.so's search path) cannot be opened or
 * lacks one of them.  Tried once per process.
 */
static const CublasApi *
cublas_api(void)
{
	static const char *const names[] = {
		"libcublas.so." STR(CUBLAS_VER_MAJOR),
		"libcublas.so",
	};
	void	   *h = NULL;

	if (cublas_tried)
		return cublas.sgemm ? &cublas : NULL;
	cublas_tried = true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && h == NULL; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
	{
		const char *e = dlerror();

		snprintf(cublas_error, sizeof(cublas_error),
				 "cuBLAS could not be loaded (libcublas.so." STR(CUBLAS_VER_MAJOR) "): %s",
				 e ? e : "not found");
		return NULL;
	}
#define LOOKUP(field, sym) \
	if ((*(void **) &cublas.field = dlsym(h, #sym)) == NULL) \
	{ \
		snprintf(cublas_error, sizeof(cublas_error), "cuBLAS lacks %s", #sym); \
		memset(&cublas, 0, sizeof(cublas)); \
		return NULL; \
	}
	LOOKUP(create, cublasCreate_v2);
	LOOKUP(destroy, cublasDestroy_v2);
	LOOKUP(set_stream, cublasSetStream_v2);
	LOOKUP(set_math_mode, cublasSetMathMode);
	LOOKUP(status_string, cublasGetStatusString);
	LOOKUP(sgemm, cublasSgemm_v2);
#undef LOOKUP
	return &cublas;
}

/* An element-wise step as the kernels see it (p on the device). */
typedef struct DOp
{
	int			op;
	float		alpha;
	float		beta;
	const float *p;
} DOp;

/* A step as the host drives it (w, p on the device). */
typedef struct DStep
{
	GsMlpOp		op;
	int			n_in;
	int			n_out;
	float		alpha;			/* row-wise steps' scalar (LAYER_NORM epsilon);
								 * CONCAT_SAVED: 1 when the slot comes first */
	float	   *w;
	float	   *p;
	int		   *idx;			/* GATHER: the columns picked */
	int			slot;			/* SAVE, LOAD, *_SAVED: the saved value */
} DStep;

struct GsDeviceMlp
{
	int			n_steps;
	int			n_features;
	int			n_net_outputs;
	int			max_width;
	int			n_slots;		/* values kept for skip connections */
	bool		reconstruction;
	DStep	   *steps;			/* host array, [n_steps] */
	DOp		   *d_ops;			/* device array, [n_steps] (element-wise view) */
};

struct GsDmlpRun
{
	cublasHandle_t handle;
	cudaStream_t stream;
	size_t		max_rows;
	float	   *buf[2];			/* device, max_rows * max_width each */
	float	   *slots;			/* device, n_slots * max_rows * max_width
								 * (skip connections' saved values), or NULL */
};

/* Blocks for n threads' worth of a grid-stride loop. */
static unsigned int
blocks_for(size_t n)
{
	size_t		b = (n + THREADS - 1) / THREADS;

	return (unsigned int) (b < 65535 ? (b ? b : 1) : 65535);
}

/*
 * dst[c * n + r] = ops applied to src[s * ld + r] (+ bias[c]), for every
 * column c < width and row r < n, s = idx[c] (a GATHER step) or c when idx
 * is NULL.  dst may be src (ld == n, idx NULL).
 */
__global__ void
mlp_fused_kernel(float *dst, const float *src, size_t ld, size_t n, int width,
				 const int *idx, const float *bias, const DOp *ops, int n_ops)
{
	size_t		total = n * (size_t) width;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		size_t		c = i / n,
					r = i % n;
		float		v = src[(idx ? (size_t) idx[c] : c) * ld + r];

		if (bias)
			v += bias[c];
		for (int k = 0; k < n_ops; k++)
			v = gs_mlp_apply((GsMlpOp) ops[k].op, ops[k].alpha, ops[k].beta,
							 ops[k].p ? ops[k].p[c] : 0.0f, v);
		dst[c * n + r] = v;
	}
}

/*
 * A skip connection's step on width columns of n rows: SAVE copies
 * src[c * ld + r] to slot[c * n + r]; a join (ADD_SAVED, MUL_SAVED...) sets
 * dst[c * n + r] = gs_mlp_join(op, src[c * ld + r], slot[c * n + r]) (dst
 * may be src when ld == n).
 */
__global__ void
mlp_skip_kernel(float *dst, const float *src, size_t ld, float *slot, size_t n, int width,
				GsMlpOp op)
{
	size_t		total = n * (size_t) width;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		size_t		c = i / n,
					r = i % n;
		float		v = src[c * ld + r];

		if (op == GS_MLP_SAVE)
			slot[c * n + r] = v;
		else
			dst[c * n + r] = gs_mlp_join(op, v, slot[c * n + r]);
	}
}

/* A row-wise step (gs_mlp_row) on each row, in place (ld = n). */
__global__ void
mlp_row_kernel(float *y, size_t n, int width, GsMlpOp op, float alpha, const float *w,
			   const float *p)
{
	for (size_t r = blockIdx.x * (size_t) blockDim.x + threadIdx.x; r < n;
		 r += (size_t) gridDim.x * blockDim.x)
		gs_mlp_row(op, alpha, w, p, y + r, n, width);
}

/* out[r * width + k] = y[k * ld + r]. */
__global__ void
mlp_output_kernel(float *out, const float *y, size_t ld, size_t n, int width)
{
	size_t		total = n * (size_t) width;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		size_t		r = i / width,
					k = i % width;

		out[i] = y[k * ld + r];
	}
}

/* out[r] = mean over f of (y[f * ld_y + r] - x[f * ld_x + r])^2, in double. */
__global__ void
mlp_recon_kernel(float *out, const float *y, size_t ld_y, const float *x, size_t ld_x,
				 size_t n, int n_features)
{
	for (size_t r = blockIdx.x * (size_t) blockDim.x + threadIdx.x; r < n;
		 r += (size_t) gridDim.x * blockDim.x)
	{
		double		sum = 0.0;

		for (int f = 0; f < n_features; f++)
		{
			double		d = (double) y[(size_t) f * ld_y + r] - (double) x[(size_t) f * ld_x + r];

			sum += d * d;
		}
		out[r] = (float) (sum / n_features);
	}
}

/* Copy n floats to a new device array. */
static cudaError_t
upload_floats(const float *h, size_t n, float **d)
{
	cudaError_t rc;

	*d = NULL;
	if (h == NULL || n == 0)
		return cudaSuccess;
	if ((rc = cudaMalloc((void **) d, sizeof(float) * n)) != cudaSuccess)
		return rc;
	return cudaMemcpy(*d, h, sizeof(float) * n, cudaMemcpyHostToDevice);
}

/* Copy n ints to a new device array. */
static cudaError_t
upload_ints(const int32_t *h, size_t n, int **d)
{
	cudaError_t rc;

	*d = NULL;
	if (h == NULL || n == 0)
		return cudaSuccess;
	if ((rc = cudaMalloc((void **) d, sizeof(int) * n)) != cudaSuccess)
		return rc;
	return cudaMemcpy(*d, h, sizeof(int) * n, cudaMemcpyHostToDevice);
}

/* Free a device network; see mlp_gemm.h. */
extern "C" void
gs_dmlp_free(GsDeviceMlp *d)
{
	if (d == NULL)
		return;
	if (d->steps)
		for (int i = 0; i < d->n_steps; i++)
		{
			cudaFree(d->steps[i].w);
			cudaFree(d->steps[i].p);
			cudaFree(d->steps[i].idx);
		}
	free(d->steps);
	cudaFree(d->d_ops);
	free(d);
}

/* Copy a network to the device; see mlp_gemm.h. */
extern "C" int
gs_dmlp_create(const GsMlp *m, GsDeviceMlp **out)
{
	GsDeviceMlp *d;
	DOp		   *ops;
	cudaError_t rc = cudaSuccess;

	*out = NULL;
	d = (GsDeviceMlp *) calloc(1, sizeof(GsDeviceMlp));
	ops = (DOp *) calloc((size_t) m->n_steps, sizeof(DOp));
	if (d == NULL || ops == NULL || (d->steps = (DStep *) calloc((size_t) m->n_steps, sizeof(DStep))) == NULL)
	{
		free(ops);
		gs_dmlp_free(d);
		return GS_DMLP_ERR_NOMEM;
	}
	d->n_steps = m->n_steps;
	d->n_features = m->n_features;
	d->n_net_outputs = m->n_net_outputs;
	d->max_width = m->max_width;
	d->n_slots = m->n_slots;
	d->reconstruction = m->reconstruction;
	for (int i = 0; i < m->n_steps && rc == cudaSuccess; i++)
	{
		const GsMlpStep *s = &m->steps[i];
		DStep	   *ds = &d->steps[i];

		ds->op = s->op;
		ds->n_in = s->n_in;
		ds->n_out = s->n_out;
		ds->alpha = s->alpha;
		ds->slot = s->slot;
		if (s->op == GS_MLP_DENSE)
			rc = upload_floats(s->w, (size_t) s->n_in * s->n_out, &ds->w);
		else if (s->op == GS_MLP_LAYER_NORM)
			rc = upload_floats(s->w, (size_t) s->n_out, &ds->w);
		else if (s->op == GS_MLP_GATHER)
			rc = upload_ints(s->idx, (size_t) s->n_out, &ds->idx);
		if (rc == cudaSuccess)
			rc = upload_floats(s->p, (size_t) s->n_out, &ds->p);
		ops[i].op = s->op;
		ops[i].alpha = s->alpha;
		ops[i].beta = s->beta;
		ops[i].p = ds->p;
	}
	if (rc == cudaSuccess &&
		(rc = cudaMalloc((void **) &d->d_ops, sizeof(DOp) * (size_t) m->n_steps)) == cudaSuccess)
		rc = cudaMemcpy(d->d_ops, ops, sizeof(DOp) * (size_t) m->n_steps, cudaMemcpyHostToDevice);
	free(ops);
	if (rc != cudaSuccess)
	{
		gs_dmlp_free(d);
		return (int) rc;
	}
	*out = d;
	return 0;
}

/* Free a run; see mlp_gemm.h. */
extern "C" void
gs_dmlp_run_free(GsDmlpRun *r)
{
	if (r == NULL)
		return;
	if (r->handle)
		cublas.destroy(r->handle);
	cudaFree(r->buf[0]);
	cudaFree(r->buf[1]);
	cudaFree(r->slots);
	free(r);
}

/* Scoring state on a stream; see mlp_gemm.h. */
extern "C" int
gs_dmlp_run_create(const GsDeviceMlp *d, size_t max_rows, void *stream, GsDmlpRun **out)
{
	GsDmlpRun  *r;
	size_t		bytes = sizeof(float) * (max_rows ? max_rows : 1) * (size_t) d->max_width;
	cudaError_t rc;
	cublasStatus_t bst;

	*out = NULL;
	if (max_rows > (size_t) INT_MAX)
		return GS_DMLP_ERR_ROWS;
	if (cublas_api() == NULL)
		return GS_DMLP_ERR_NOCUBLAS;
	r = (GsDmlpRun *) calloc(1, sizeof(GsDmlpRun));
	if (r == NULL)
		return GS_DMLP_ERR_NOMEM;
	r->stream = (cudaStream_t) stream;
	r->max_rows = max_rows;
	if ((rc = cudaMalloc((void **) &r->buf[0], bytes)) != cudaSuccess ||
		(rc = cudaMalloc((void **) &r->buf[1], bytes)) != cudaSuccess ||
		(d->n_slots > 0 &&
		 (rc = cudaMalloc((void **) &r->slots, bytes * (size_t) d->n_slots)) != cudaSuccess))
	{
		gs_dmlp_run_free(r);
		return (int) rc;
	}
	if ((bst = cublas.create(&r->handle)) != CUBLAS_STATUS_SUCCESS ||
		(bst = cublas.set_stream(r->handle, r->stream)) != CUBLAS_STATUS_SUCCESS ||
		(bst = cublas.set_math_mode(r->handle, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
	{
		if (bst != CUBLAS_STATUS_SUCCESS && r->handle == NULL)
			r->handle = NULL;
		gs_dmlp_run_free(r);
		return GS_DMLP_ERR_CUBLAS - (int) bst;
	}
	*out = r;
	return 0;
}

/* Enqueue one batch; see mlp_gemm.h. */
extern "C" int
gs_dmlp_predict(const GsDeviceMlp *d, GsDmlpRun *r, const float *d_x, size_t n,
				float *d_out)
{
	const float *cur = d_x;
	size_t		cur_ld = n;
	int			free_buf = 0;
	int			width = d->n_features;
	int			s = 0;
	const float one = 1.0f,
				zero = 0.0f;
	cudaError_t rc;

	if (n == 0)
		return 0;
	if (n > r->max_rows)
		return GS_DMLP_ERR_ROWS;
	while (s < d->n_steps)
	{
		const DStep *st = &d->steps[s];

		if (st->op == GS_MLP_DENSE || st->op == GS_MLP_GATHER)
		{
			/* a GEMM then bias + element-wise steps, or a GATHER's columns through them */
			bool		dense = st->op == GS_MLP_DENSE;
			float	   *dst = r->buf[free_buf];
			int			e = s + 1;

			if (dense)
			{
				cublasStatus_t bst = cublas.sgemm(r->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int) n, st->n_out,
												  st->n_in, &one, cur, (int) cur_ld, st->w, st->n_in,
												  &zero, dst, (int) n);

				if (bst != CUBLAS_STATUS_SUCCESS)
					return GS_DMLP_ERR_CUBLAS - (int) bst;
			}
			while (e < d->n_steps && gs_mlp_is_elementwise(d->steps[e].op))
				e++;
			mlp_fused_kernel<<<blocks_for(n * st->n_out), THREADS, 0, r->stream>>>
				(dst, dense ? dst : cur, dense ? n : cur_ld, n, st->n_out, dense ? NULL : st->idx,
				 dense ? st->p : NULL, d->d_ops + s + 1, e - s - 1);
			cur = dst;
			cur_ld = n;
			free_buf ^= 1;
			width = st->n_out;
			s = e;
		}
		else if (gs_mlp_is_skip(st->op))
		{
			/*
			 * Keep the value a skip connection or a branch starts at, add it
			 * back, or go back to it (copied: the steps after work in place).
			 */
			float	   *slot = r->slots + (size_t) st->slot * r->max_rows * (size_t) d->max_width;
			bool		save = st->op == GS_MLP_SAVE;
			bool		fresh = cur == d_x || st->op == GS_MLP_LOAD || st->op == GS_MLP_CONCAT_SAVED;
			float	   *dst = fresh ? r->buf[free_buf] : (float *) cur;

			if (st->op == GS_MLP_CONCAT_SAVED)
			{
				/* the chain's columns and the slot's, in the graph's order (copies) */
				int			n_saved = st->n_out - st->n_in,
							x_at = st->alpha != 0.0f ? n_saved : 0,
							s_at = st->alpha != 0.0f ? 0 : width;

				mlp_fused_kernel<<<blocks_for(n * width), THREADS, 0, r->stream>>>
					(dst + (size_t) x_at * n, cur, cur_ld, n, width, NULL, NULL, NULL, 0);
				mlp_fused_kernel<<<blocks_for(n * n_saved), THREADS, 0, r->stream>>>
					(dst + (size_t) s_at * n, slot, n, n, n_saved, NULL, NULL, NULL, 0);
				width = st->n_out;
			}
			else if (st->op == GS_MLP_LOAD)
			{
				width = st->n_out;
				mlp_fused_kernel<<<blocks_for(n * width), THREADS, 0, r->stream>>>
					(dst, slot, n, n, width, NULL, NULL, NULL, 0);
			}
			else
				mlp_skip_kernel<<<blocks_for(n * width), THREADS, 0, r->stream>>>
					(dst, cur, cur_ld, slot, n, width, st->op);
			if (!save)
			{
				if (dst != cur)
					free_buf ^= 1;
				cur = dst;
				cur_ld = n;
			}
			s++;
		}
		else if (gs_mlp_is_rowwise(st->op))
		{
			if (cur == d_x)
			{
				float	   *dst = r->buf[free_buf];

				mlp_fused_kernel<<<blocks_for(n * width), THREADS, 0, r->stream>>>
					(dst, cur, cur_ld, n, width, NULL, NULL, NULL, 0);
				cur = dst;
				cur_ld = n;
				free_buf ^= 1;
			}
			mlp_row_kernel<<<blocks_for(n), THREADS, 0, r->stream>>>
				((float *) cur, n, width, st->op, st->alpha, st->w, st->p);
			s++;
		}
		else
		{
			int			e = s;
			float	   *dst = cur == d_x ? r->buf[free_buf] : (float *) cur;

			while (e < d->n_steps && gs_mlp_is_elementwise(d->steps[e].op))
				e++;
			mlp_fused_kernel<<<blocks_for(n * width), THREADS, 0, r->stream>>>
				(dst, cur, cur_ld, n, width, NULL, NULL, d->d_ops + s, e - s);
			if (cur == d_x)
				free_buf ^= 1;
			cur = dst;
			cur_ld = n;
			s = e;
		}
	}
	if (d->reconstruction)
		mlp_recon_kernel<<<blocks_for(n), THREADS, 0, r->stream>>>
			(d_out, cur, cur_ld, d_x, n, n, d->n_features);
	else
		mlp_output_kernel<<<blocks_for(n * width), THREADS, 0, r->stream>>>
			(d_out, cur, cur_ld, n, width);
	rc = cudaGetLastError();
	return rc == cudaSuccess ? 0 : (int) rc;
}

/* Message for a negative return code; see mlp_gemm.h. */
extern "C" const char *
gs_dmlp_strerror(int rc)
{
	if (rc == GS_DMLP_ERR_NOMEM)
		return "out of host memory";
	if (rc == GS_DMLP_ERR_ROWS)
		return "batch larger than the scoring buffers";
	if (rc == GS_DMLP_ERR_NOCUBLAS)
		return cublas_error;
	if (rc <= GS_DMLP_ERR_CUBLAS)
		return cublas.status_string ? cublas.status_string((cublasStatus_t) (GS_DMLP_ERR_CUBLAS - rc))
			: "cuBLAS error";
	return "unknown error";
}

/*
 * mlp_eval.h
 *	  The per-value math of a network's element-wise steps, written once and
 *	  used by the CPU engine (mlp.c) and the CUDA kernels (cuda/mlp_gemm.cu)
 *	  alike: static inline, __host__ __device__ under nvcc.  Only where the
 *	  values live and how many are done at once differ per device.
 */
#ifndef GS_MLP_EVAL_H
#define GS_MLP_EVAL_H

#include <math.h>

#include "mlp.h"

#ifdef __CUDACC__
#define GS_MLP_HD static __host__ __device__ __forceinline__
#else
#define GS_MLP_HD static inline
#endif

/* True for steps over each row's columns together (gs_mlp_row). */
GS_MLP_HD bool
gs_mlp_is_rowwise(GsMlpOp op)
{
	return op == GS_MLP_SOFTMAX || op == GS_MLP_LOG_SOFTMAX || op == GS_MLP_LAYER_NORM;
}

/* True for the steps of skip connections and branches (a pass of their own each). */
GS_MLP_HD bool
gs_mlp_is_skip(GsMlpOp op)
{
	return op == GS_MLP_SAVE || op == GS_MLP_ADD_SAVED || op == GS_MLP_LOAD ||
		op == GS_MLP_MUL_SAVED || op == GS_MLP_SUB_SAVED || op == GS_MLP_RSUB_SAVED ||
		op == GS_MLP_CONCAT_SAVED;
}

/*
 * An element-wise join of the chain's value v and the saved value s
 * (ADD_SAVED, MUL_SAVED, SUB_SAVED, RSUB_SAVED), in float as onnxruntime.
 */
GS_MLP_HD float
gs_mlp_join(GsMlpOp op, float v, float s)
{
	switch (op)
	{
		case GS_MLP_MUL_SAVED:
			return v * s;
		case GS_MLP_SUB_SAVED:
			return v - s;
		case GS_MLP_RSUB_SAVED:
			return s - v;
		default:
			return v + s;
	}
}

/* True for steps applied to each value independently (fusable after a GEMM). */
GS_MLP_HD bool
gs_mlp_is_elementwise(GsMlpOp op)
{
	return op != GS_MLP_DENSE && op != GS_MLP_GATHER && !gs_mlp_is_rowwise(op) &&
		!gs_mlp_is_skip(op);
}

/* log(1 + exp(v)) without overflow. */
GS_MLP_HD float
gs_mlp_softplus(float v)
{
	return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

/*
 * One element-wise step on value v; p is the step's parameter for this
 * column (ADD/MUL/DIV/PRELU), alpha and beta the step's scalars (mlp.h).
 * The formulas are onnxruntime's CPU kernels', except that a NaN stays NaN
 * (a row with a missing value scores NaN).
 */
GS_MLP_HD float
gs_mlp_apply(GsMlpOp op, float alpha, float beta, float p, float v)
{
	switch (op)
	{
		case GS_MLP_ADD:
			return v + p;
		case GS_MLP_MUL:
			return v * p;
		case GS_MLP_DIV:
			return v / p;
		case GS_MLP_RELU:
			return v > 0.0f ? v : (v == v ? 0.0f : v);	/* NaN stays NaN */
		case GS_MLP_LEAKY_RELU:
			return v >= 0.0f ? v : v * alpha;
		case GS_MLP_SIGMOID:
			return 1.0f / (1.0f + expf(-v));
		case GS_MLP_TANH:
			return tanhf(v);
		case GS_MLP_ELU:
			return v >= 0.0f ? v : alpha * (expf(v) - 1.0f);
		case GS_MLP_SELU:
			return v > 0.0f ? beta * v : beta * (alpha * expf(v) - alpha);
		case GS_MLP_SOFTPLUS:
			{
				/* PyTorch's form; alpha 1 and beta +inf are ONNX's Softplus */
				float		s = v * alpha;

				return s > beta ? v : gs_mlp_softplus(s) / alpha;
			}
		case GS_MLP_MISH:
			return v * tanhf(gs_mlp_softplus(v));
		case GS_MLP_HARD_SWISH:
			return v * fmaxf(0.0f, fminf(1.0f, v * (1.0f / 6.0f) + 0.5f));
		case GS_MLP_GELU_TANH:
			/* PyTorch's float operations: sqrt(2 / pi) (x + 0.044715 x^3) */
			return 0.5f * v * (1.0f + tanhf(0.797884583473205566f * (v + 0.044715f * v * v * v)));
		case GS_MLP_SOFTSIGN:
			return v / (1.0f + fabsf(v));
		case GS_MLP_HARD_SIGMOID:
			return v != v ? v : fmaxf(0.0f, fminf(1.0f, alpha * v + beta));
		case GS_MLP_PRELU:
			return v > 0.0f ? v : p * v;
		case GS_MLP_CLIP:
			return v != v ? v : fminf(fmaxf(v, alpha), beta);
		case GS_MLP_SILU:
			return v * (1.0f / (1.0f + expf(-v)));
		case GS_MLP_IMPUTE:
			/* ai.onnx.ml Imputer: NaN, or the value alpha when beta is set */
			return (beta != 0.0f ? v == alpha : v != v) ? p : v;
		case GS_MLP_GELU:
			/* the float operations of PyTorch's export, in its order */
			return (v * (erff(v / alpha) + 1.0f)) * beta;
		case GS_MLP_ONEHOT:
			/* truncf(v) == p is (int64) v == p for the categories allowed */
			return p != p ? v : (truncf(v) == p ? 1.0f : 0.0f);
		case GS_MLP_DENSE:
		case GS_MLP_GATHER:
		case GS_MLP_SOFTMAX:
		case GS_MLP_LOG_SOFTMAX:
		case GS_MLP_LAYER_NORM:
		case GS_MLP_SAVE:
		case GS_MLP_ADD_SAVED:
		case GS_MLP_LOAD:
		case GS_MLP_MUL_SAVED:
		case GS_MLP_SUB_SAVED:
		case GS_MLP_RSUB_SAVED:
		case GS_MLP_CONCAT_SAVED:
			break;
	}
	return v;
}

/*
 * One row-wise step (gs_mlp_is_rowwise) on the width values of one row,
 * y[c * stride], in place; w and p are the step's (LAYER_NORM: scale and
 * bias, p may be NULL), alpha its epsilon.  Softmax and log softmax
 * subtract the row's maximum first, as onnxruntime does; layer
 * normalization takes the mean and variance in double, two passes.
 */
GS_MLP_HD void
gs_mlp_row(GsMlpOp op, float alpha, const float *w, const float *p,
		   float *y, size_t stride, int32_t width)
{
	if (op == GS_MLP_LAYER_NORM)
	{
		double		mean = 0.0,
					var = 0.0,
					inv;

		for (int32_t c = 0; c < width; c++)
			mean += y[(size_t) c * stride];
		mean /= width;
		for (int32_t c = 0; c < width; c++)
		{
			double		d = y[(size_t) c * stride] - mean;

			var += d * d;
		}
		inv = 1.0 / sqrt(var / width + (double) alpha);
		for (int32_t c = 0; c < width; c++)
		{
			float	   *v = &y[(size_t) c * stride];

			*v = (float) ((*v - mean) * inv) * w[c] + (p ? p[c] : 0.0f);
		}
	}
	else
	{
		float		mx = y[0],
					sum = 0.0f;

		for (int32_t c = 1; c < width; c++)
			if (y[(size_t) c * stride] > mx)
				mx = y[(size_t) c * stride];
		for (int32_t c = 0; c < width; c++)
			sum += expf(y[(size_t) c * stride] - mx);
		if (op == GS_MLP_LOG_SOFTMAX)
		{
			float		lse = logf(sum);

			for (int32_t c = 0; c < width; c++)
				y[(size_t) c * stride] = y[(size_t) c * stride] - mx - lse;
		}
		else
			for (int32_t c = 0; c < width; c++)
				y[(size_t) c * stride] = expf(y[(size_t) c * stride] - mx) / sum;
	}
}

#endif							/* GS_MLP_EVAL_H */

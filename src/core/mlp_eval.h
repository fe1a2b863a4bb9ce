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

/* True for steps applied to each value independently (fusable after a GEMM). */
GS_MLP_HD bool
gs_mlp_is_elementwise(GsMlpOp op)
{
	return op != GS_MLP_DENSE && op != GS_MLP_SOFTMAX;
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
			return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
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
		case GS_MLP_DENSE:
		case GS_MLP_SOFTMAX:
			break;
	}
	return v;
}

#endif							/* GS_MLP_EVAL_H */

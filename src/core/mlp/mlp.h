/*
 * mlp.h
 *	  The validated feed-forward network ("MLP") the ONNX loader builds and
 *	  the engines score: dense layers and element-wise steps over a batch of
 *	  rows of F float features.
 *
 * A GsMlp is a straight chain of steps applied to a [n_rows x width] batch:
 * GS_MLP_DENSE (y = x W^T + b, a GEMM), element-wise steps with one
 * parameter per column (add, multiply, divide: feature scaling and
 * inference-mode batch normalization baked into the graph), activations
 * (relu, leaky relu, sigmoid, tanh...) and row-wise steps (softmax, log
 * softmax, layer normalization: each row across its columns).  It is built
 * once by gs_onnx_load (onnx_load.c), validated there (widths chain, every
 * parameter finite, caps respected) and immutable afterwards: engines trust
 * it.  All memory comes from the GsAllocator given to the loader and is
 * released by gs_mlp_free().
 *
 * A GS_MLP_GATHER step, when there is one, comes first: the network reads
 * some of the model's features, in its own order (scikit-learn pipelines
 * whose ColumnTransformer picks columns, or fitted on a pandas DataFrame);
 * the element-wise steps after it are those pipelines' preprocessing.
 *
 * Scoring modes: the network's last layer is the output (classifiers,
 * regressors), or, for an autoencoder loaded with reconstruction scoring,
 * the score of a row is the mean squared error between its input features
 * and the network's output (one output per row).
 *
 * Skip connections (residual blocks: out = x + f(x)) stay a chain: a
 * GS_MLP_SAVE step keeps the value where the connection starts in a slot,
 * and the GS_MLP_ADD_SAVED step where it ends adds it back.  Branches
 * merged by an Add (a projection on the shortcut, two heads whose logits
 * are summed) are one chain too: the first branch's end is saved, a
 * GS_MLP_LOAD step goes back to the value the second starts from (saved
 * as well), and an ADD_SAVED merges them (or a MUL_SAVED, SUB_SAVED,
 * RSUB_SAVED, CONCAT_SAVED: the other joins of two values).  Every step
 * reading a slot follows the SAVE of that slot; the element-wise joins
 * read a value of their width.
 */
#ifndef GS_MLP_H
#define GS_MLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_status.h"

/* Category names of string inputs (cat_names.h). */
typedef struct GsCatNames GsCatNames;

/* Hard caps of the network shape, on top of GsLimits. */
#define GS_MLP_MAX_WIDTH	65536	/* units of any layer */
#define GS_MLP_MAX_SLOTS	64		/* values kept for skip connections */
#define GS_MLP_MAX_STEPS	1024	/* steps of the chain */
#define GS_MLP_MAX_LAYERS	256		/* dense layers */

typedef enum GsMlpOp
{
	GS_MLP_DENSE,				/* y[o] = sum_i x[i] w[o*n_in+i] + b[o] */
	GS_MLP_ADD,					/* y[c] = x[c] + p[c] */
	GS_MLP_MUL,					/* y[c] = x[c] * p[c] */
	GS_MLP_DIV,					/* y[c] = x[c] / p[c] */
	GS_MLP_RELU,				/* max(x, 0) */
	GS_MLP_LEAKY_RELU,			/* x >= 0 ? x : alpha x */
	GS_MLP_SIGMOID,				/* 1 / (1 + exp(-x)) */
	GS_MLP_TANH,
	GS_MLP_SOFTMAX,				/* over the columns of each row */
	GS_MLP_ELU,					/* x >= 0 ? x : alpha (exp(x) - 1) */
	GS_MLP_SELU,				/* beta (x > 0 ? x : alpha exp(x) - alpha) */
	GS_MLP_SOFTPLUS,			/* alpha x > beta ? x : log(1 + exp(alpha x)) / alpha
								 * (PyTorch's beta and threshold; ONNX's
								 * Softplus is alpha 1, beta +inf) */
	GS_MLP_SOFTSIGN,			/* x / (1 + |x|) */
	GS_MLP_HARD_SIGMOID,		/* max(0, min(1, alpha x + beta)) */
	GS_MLP_PRELU,				/* x > 0 ? x : p[c] x */
	GS_MLP_CLIP,				/* min(max(x, alpha), beta) */
	GS_MLP_SILU,				/* x * sigmoid(x) */
	GS_MLP_GELU,				/* (x * (erf(x / alpha) + 1)) * beta */
	GS_MLP_IMPUTE,				/* x is missing (NaN; alpha when beta != 0) ? p[c] : x */
	GS_MLP_LOG_SOFTMAX,			/* log of the softmax, over the columns of each row */
	GS_MLP_LAYER_NORM,			/* over the columns of each row:
								 * (x - mean) / sqrt(var + alpha) * w[c] + p[c] */
	GS_MLP_MISH,				/* x tanh(softplus(x)) */
	GS_MLP_HARD_SWISH,			/* x max(0, min(1, x / 6 + 1 / 2)) */
	GS_MLP_GELU_TANH,			/* x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2 */
	GS_MLP_ONEHOT,				/* p[c] is NaN ? x : ((int64) x == p[c] ? 1 : 0),
								 * p[c] an integer below 2^24 in magnitude
								 * (scikit-learn's OneHotEncoder) */
	GS_MLP_GATHER,				/* y[j] = x[idx[j]]: the columns a scikit-learn
								 * ColumnTransformer or a DataFrame's inputs
								 * feed the network (first step only) */
	GS_MLP_SAVE,				/* y = x, and x kept in saved value slot
								 * (the start of a skip connection) */
	GS_MLP_ADD_SAVED,			/* y[c] = x[c] + saved value slot[c] (its end:
								 * a residual Add) */
	GS_MLP_LOAD,				/* y = saved value slot (n_in is ignored): a
								 * second branch starts from an earlier value */
	GS_MLP_MUL_SAVED,			/* y[c] = x[c] * slot[c] (gating, cross layers) */
	GS_MLP_SUB_SAVED,			/* y[c] = x[c] - slot[c] */
	GS_MLP_RSUB_SAVED,			/* y[c] = slot[c] - x[c] */
	GS_MLP_CONCAT_SAVED			/* y = the columns of x, then slot's (alpha 0),
								 * or slot's, then x's (alpha 1); n_out - n_in
								 * columns from slot */
} GsMlpOp;

typedef struct GsMlpStep
{
	GsMlpOp		op;
	int32_t		n_in;			/* width before the step */
	int32_t		n_out;			/* width after (== n_in unless dense) */
	float	   *w;				/* DENSE: [n_out * n_in], row o = unit o;
								 * LAYER_NORM: the scale [n_out] */
	float	   *p;				/* DENSE: bias [n_out]; ADD/MUL/DIV/PRELU: [n_out];
								 * LAYER_NORM: the bias [n_out] */
	int32_t    *idx;			/* GATHER: [n_out] columns of the input, each
								 * < n_in; NULL for every other op */
	int32_t		slot;			/* SAVE, LOAD, *_SAVED: the saved value, 0 to
								 * n_slots - 1; 0 for every other op */
	float		alpha;			/* LEAKY_RELU slope; ELU, SELU, HARD_SIGMOID alpha;
								 * CLIP minimum; GELU's divisor (sqrt 2);
								 * SOFTPLUS beta; LAYER_NORM epsilon */
	float		beta;			/* SELU gamma, HARD_SIGMOID beta, CLIP maximum,
								 * GELU's final factor (0.5), SOFTPLUS threshold */
	char		node[64];		/* ONNX node it came from, for messages */
} GsMlpStep;

typedef struct GsMlp
{
	int32_t		n_features;		/* input width F */
	int32_t		n_net_outputs;	/* width of the network's last step */
	int32_t		n_outputs;		/* outputs per row (1 in reconstruction mode) */
	int32_t		max_width;		/* widest step output (and F), for scratch */
	int32_t		n_steps;
	int32_t		n_layers;		/* dense steps */
	int32_t		n_slots;		/* values kept for skip connections (SAVE) */
	int64_t		n_params;		/* weights + biases + element-wise parameters */
	bool		reconstruction; /* score = mean squared (input - output) */
	char		output_act[16]; /* last activation: "sigmoid", "softmax", "identity"... */
	char		producer[64];	/* "pytorch 2.1.0" when the model says */
	char		objective[64];	/* XGBoost's objective for a linear booster
								 * (xgb_linear.h), else empty */
	bool		linear_booster; /* XGBoost's gblinear (xgb_linear.h): step 1
								 * imputes its missing value as 0 */
	char	  **feature_names;	/* [n_features] (a DataFrame's columns), or NULL */
	GsCatNames *cat_names;		/* categories of a DataFrame's string columns
								 * (cat_names.h), or NULL */
	GsMlpStep  *steps;			/* [n_steps] */
	GsAllocator alloc;			/* the allocator everything above came from */
} GsMlp;

/* Release a network and everything it owns; NULL is allowed. */
extern void gs_mlp_free(GsMlp *m);

/* Bytes a network occupies in memory. */
extern size_t gs_mlp_memory_bytes(const GsMlp *m);

/* Name of an op as in messages and gpu_models ("dense", "relu"...). */
extern const char *gs_mlp_op_name(GsMlpOp op);

/* Floats of scratch gs_mlp_predict needs for a batch of n_rows rows. */
extern size_t gs_mlp_scratch_floats(const GsMlp *m, size_t n_rows);

/*
 * Score a column-major batch on the CPU: feature f of row r is x[f*ld + r]
 * (ld >= n_rows); out[r * n_outputs + k].  scratch holds
 * gs_mlp_scratch_floats(m, n_rows) floats and may not alias x or out.
 * GEMMs go to single-threaded BLAS (cblas_sgemm); biases and activations
 * are applied in one fused pass per layer.  NaN inputs give NaN outputs.
 * Cannot fail.
 */
extern void gs_mlp_predict(const GsMlp *m, const float *x, size_t ld,
						   size_t n_rows, float *scratch, float *out);

/*
 * Take v as missing too (besides NaN) in the network of a linear booster
 * (m->linear_booster), as gs_forest_mark_missing does for a forest.
 */
extern void gs_mlp_set_missing(GsMlp *m, float v);

/* Does the linear booster m take a value besides NaN as missing?  Then *v is it. */
extern bool gs_mlp_missing(const GsMlp *m, float *v);

#endif							/* GS_MLP_H */

/*
 * mlp_gemm.h
 *	  Neural networks (GsMlp) on the GPU: weights resident on the device,
 *	  one cuBLAS SGEMM per dense layer, and small kernels for the fused
 *	  bias + element-wise pass, softmax and the output (or the per-row
 *	  reconstruction error).  Used by provider.cu; no PostgreSQL, plain C
 *	  interface.
 *
 * Ownership: a GsDeviceMlp owns the device copies of one network's
 * parameters (gs_dmlp_free).  A GsDmlpRun owns what scoring needs on one
 * stream: a cuBLAS handle bound to that stream and two activation buffers
 * of max_rows * max_width floats, plus one as large per value the
 * network's skip connections keep (gs_dmlp_run_free); one per pipeline
 * slot, so two slots never share a cuBLAS workspace.
 *
 * Precision: FP32 SGEMM with cuBLAS's default math mode (no TF32), the
 * element-wise math of src/core/mlp/mlp_eval.h, so GPU and CPU agree to float
 * rounding of the summation order.
 *
 * Return codes: 0, a cudaError_t (> 0), or a negative GS_DMLP_ERR_* code
 * (gs_dmlp_strerror).
 */
#ifndef GS_MLP_GEMM_H
#define GS_MLP_GEMM_H

#include <stddef.h>

#include "mlp/mlp.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define GS_DMLP_ERR_NOMEM	(-1)		/* host allocation failed */
#define GS_DMLP_ERR_ROWS	(-2)		/* batch larger than the run's buffers */
#define GS_DMLP_ERR_NOCUBLAS (-3)		/* cuBLAS could not be loaded (dlopen) */
#define GS_DMLP_ERR_CUBLAS	(-1000)		/* minus a cublasStatus_t */

typedef struct GsDeviceMlp GsDeviceMlp;
typedef struct GsDmlpRun GsDmlpRun;

/* Copy a validated network's parameters to the current device. */
int			gs_dmlp_create(const GsMlp *m, GsDeviceMlp **out);

/* Free a device network; NULL is allowed. */
void		gs_dmlp_free(GsDeviceMlp *d);

/* Scoring state for batches of at most max_rows rows on stream (a cudaStream_t). */
int			gs_dmlp_run_create(const GsDeviceMlp *d, size_t max_rows, void *stream,
							   GsDmlpRun **out);

/* Free a run; NULL is allowed.  Caller must have waited for its stream. */
void		gs_dmlp_run_free(GsDmlpRun *r);

/*
 * Enqueue scoring of n_rows rows of the device batch d_x (column-major,
 * ld = n_rows) into d_out[r * n_outputs + k] on the run's stream.
 */
int			gs_dmlp_predict(const GsDeviceMlp *d, GsDmlpRun *r, const float *d_x,
							size_t n_rows, float *d_out);

/* Message for a negative return code. */
const char *gs_dmlp_strerror(int rc);

#ifdef __cplusplus
}
#endif

#endif							/* GS_MLP_GEMM_H */

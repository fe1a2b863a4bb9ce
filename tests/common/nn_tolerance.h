/*
 * nn_tolerance.h
 *	  How close a network's output must be to its float32 reference
 *	  (onnxruntime's, or the framework's), shared by tests/unit/test_mlp.c
 *	  (CPU engine) and tests/gpu/test_gpu_mlp.c (GPU engine).
 *
 * An output passes when it is NaN exactly where the reference is NaN, equal
 * where the reference is infinite, and otherwise
 *
 *		|got - want| <= 1e-5 * max(|want|, scale)   or   |got - want| <= 1e-6
 *
 * where scale is the largest finite |reference| of that output over the
 * case's rows (gs_nn_scales).  The scale is there because an output that is
 * a small sum of large cancelling terms carries rounding of the size of its
 * terms, not of itself: float32 sums of the same terms in another order, or
 * without fused multiply-adds, move it by about 1e-8 of the output's scale,
 * which can be 1e-5 of the output and more.  Seen on the H100 machine's CPU,
 * where OpenBLAS did not recognise the VM's processor and used its kernels
 * without FMA (OPENBLAS_CORETYPE=Prescott reproduces it, digit for digit):
 * -0.0362041 against onnxruntime's -0.0362053 in a column that reaches 79.6.
 *
 * Header-only, static functions.
 */
#ifndef GS_NN_TOLERANCE_H
#define GS_NN_TOLERANCE_H

#include <math.h>

#define GS_NN_TOL_REL 1e-5
#define GS_NN_TOL_ABS 1e-6

/* scale[k] = the largest finite |want| of output k over n_rows rows (row-major want). */
static inline void
gs_nn_scales(const float *want, int n_rows, int nout, double *scale)
{
	for (int k = 0; k < nout; k++)
	{
		scale[k] = 0;
		for (int r = 0; r < n_rows; r++)
		{
			double		w = fabs((double) want[(size_t) r * nout + k]);

			if (isfinite(w) && w > scale[k])
				scale[k] = w;
		}
	}
}

/*
 * |got - want| / max(|want|, scale): 0 for two NaNs or the same infinity,
 * INFINITY where only one is NaN or infinite.
 */
static inline double
gs_nn_error(float got, float want, double scale)
{
	double		d = fabs((double) got - (double) want);

	if (isnan(got) || isnan(want))
		return isnan(got) && isnan(want) ? 0 : INFINITY;
	if (isinf(got) || isinf(want))
		return got == want ? 0 : INFINITY;
	return d / fmax(fmax(fabs((double) want), scale), 1e-30);
}

/* Does got pass against want (see the header comment)? */
static inline int
gs_nn_close(float got, float want, double scale)
{
	double		e = gs_nn_error(got, want, scale);

	if (isinf(e))
		return 0;
	return e <= GS_NN_TOL_REL || fabs((double) got - (double) want) <= GS_NN_TOL_ABS;
}

#endif							/* GS_NN_TOLERANCE_H */

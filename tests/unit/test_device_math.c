/*
 * test_device_math.c
 *	  The math of the output transforms shared by the CPU engine and the
 *	  GPU kernels (src/core/forest/forest_eval.h): gs_expf against the host's expf
 *	  on every 4099th float (every float with --exhaustive-expf, a few
 *	  minutes), gs_exp2f against exp2f, gs_softplus against a long-double
 *	  reference, and gs_transform_row against the transforms written on the
 *	  host's libm.  Runs anywhere, no GPU; TAP output, then
 *	  "device-math: N passed, N failed".
 *
 *   make tests/unit/test_device_math && cd tests/unit && ./test_device_math
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_eval.h"
#include "../common/test_util.h"
#include "kernel_phases.h"		/* GS_KMAX_GROUPS */

/* Equal as bits of meaning: == or both NaN. */
static int
same(float a, float b)
{
	return a == b || (isnan(a) && isnan(b));
}

/*
 * XGBoost's transforms (sigmoid, exp, softmax, argmax) on the host's expf,
 * as the CPU engine had them before gs_expf, and onnxruntime's and
 * LightGBM's the same way: the reference gs_transform_row must equal on
 * hosts whose expf is glibc's FMA variant.
 */
static void
libm_transform_row(GsTransform t, const float *param, const float *m, int ng, float *o)
{
	int			g;

	switch (t)
	{
		case GS_TRANSFORM_IDENTITY:
			for (g = 0; g < ng; g++)
				o[g] = m[g];
			break;
		case GS_TRANSFORM_SIGMOID:
			for (g = 0; g < ng; g++)
			{
				float		e = -m[g];	/* std::min(-x, 88.7f): NaN stays */

				o[g] = 1.0f / (expf(88.7f < e ? 88.7f : e) + 1.0f);
			}
			break;
		case GS_TRANSFORM_EXP:
			for (g = 0; g < ng; g++)
				o[g] = expf(m[g]);
			break;
		case GS_TRANSFORM_HINGE:
			for (g = 0; g < ng; g++)
				o[g] = m[g] > 0.0f ? 1.0f : 0.0f;
			break;
		case GS_TRANSFORM_SOFTMAX:
			{
				float		wmax = m[0];
				double		wsum = 0.0;

				for (g = 1; g < ng; g++)
					wmax = m[g] > wmax ? m[g] : wmax;
				for (g = 0; g < ng; g++)
				{
					o[g] = expf(m[g] - wmax);
					wsum += o[g];
				}
				for (g = 0; g < ng; g++)
					o[g] /= (float) wsum;
				break;
			}
		case GS_TRANSFORM_ARGMAX:
			{
				int			best = 0;

				for (g = 1; g < ng; g++)
					if (m[g] > m[best])
						best = g;
				o[0] = (float) best;
				break;
			}
		case GS_TRANSFORM_ORT_LOGISTIC:
			/* onnxruntime's ComputeLogistic (ml_common.h) */
			for (g = 0; g < ng; g++)
			{
				float		v = 1 / (1 + expf(-fabsf(m[g])));

				o[g] = m[g] < 0 ? 1 - v : v;
			}
			break;
		case GS_TRANSFORM_ORT_SOFTMAX:
		case GS_TRANSFORM_ORT_SOFTMAX_ZERO:
			{
				/* onnxruntime's ComputeSoftmax / ComputeSoftmaxZero */
				float		vmax = -FLT_MAX,
							sum = 0.f,
							eneg;

				for (g = 0; g < ng; g++)
					if (m[g] > vmax)
						vmax = m[g];
				eneg = expf(-vmax);
				for (g = 0; g < ng; g++)
					if (t == GS_TRANSFORM_ORT_SOFTMAX || m[g] > 0.0000001f || m[g] < -0.0000001f)
					{
						o[g] = expf(m[g] - vmax);
						sum += o[g];
					}
					else
						o[g] = m[g] * eneg;
				for (g = 0; g < ng; g++)
					o[g] = o[g] / sum;
				break;
			}
		case GS_TRANSFORM_SOFTPLUS:
			/* the same steps, the logarithm from libm */
			for (g = 0; g < ng; g++)
				o[g] = (float) ((m[g] > 0 ? (double) m[g] : 0.0) +
								log1p((double) expf(-fabsf(m[g]))));
			break;
		case GS_TRANSFORM_SIGNED_SQUARE:
			for (g = 0; g < ng; g++)
				o[g] = (float) ((double) ((m[g] > 0) - (m[g] < 0)) * m[g] * m[g]);
			break;
		case GS_TRANSFORM_ISOLATION:
			/* onnxruntime's Div, Neg, Pow(2, .), Neg, Add; 2^x from libm */
			for (g = 0; g < ng; g++)
			{
				float		q = m[g] / param[0];

				o[g] = -exp2f(-q) + param[1];
			}
			break;
	}
}

/*
 * gs_expf (the device transform's expf) against the host's expf, bit
 * for bit: every step-th float bit pattern (every one with step 1, about
 * 4.3 billion: a few minutes), plus special values.  The two inputs where
 * glibc's FMA and non-FMA variants differ are reported apart, since which
 * variant the host's glibc runs depends on its CPU.
 */
static void
test_expf(uint64_t step)
{
	const uint32_t fma_only[] = {0x4202422fu, 0xc27c65d9u};
	const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN,
		88.0f, -88.0f, 88.7f, -88.7f, 0x1.62e42ep6f, 0x1.62e430p6f,
		-0x1.9fe368p6f, -0x1.9fe36ap6f, -0x1.9d1d9ep6f, 1e-30f, -1e-30f,
		0x1p-149f, 103.0f, -103.0f, -150.0f, 1e30f, -1e30f};
	uint64_t	n = 0,
				bad = 0;
	uint32_t	first = 0;
	char		what[256];
	int			fma_same = 0;

	for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += step)
	{
		uint32_t	w = (uint32_t) u,
					a,
					b;
		float		x,
					ea,
					eb;

		if (w == fma_only[0] || w == fma_only[1])
			continue;
		memcpy(&x, &w, 4);
		ea = expf(x);
		eb = gs_expf(x);
		memcpy(&a, &ea, 4);
		memcpy(&b, &eb, 4);
		n++;
		if (a != b && !(isnan(ea) && isnan(eb)) && bad++ == 0)
			first = w;
	}
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
	{
		float		ea = expf(special[i]),
					eb = gs_expf(special[i]);

		n++;
		if (!same(ea, eb) && bad++ == 0)
			memcpy(&first, &special[i], 4);
	}
	snprintf(what, sizeof(what),
			 "gs_expf equals the host's expf on %llu inputs (every %llu-th float and special values): %llu differ%s",
			 (unsigned long long) n, (unsigned long long) step, (unsigned long long) bad,
			 bad ? " (see the first below)" : "");
	gs_tap(bad == 0, "expf", what);
	if (bad)
	{
		float		x;

		memcpy(&x, &first, 4);
		printf("# first difference: x = %a: host %a, gs_expf %a\n",
			   (double) x, (double) expf(x), (double) gs_expf(x));
	}
	for (int i = 0; i < 2; i++)
	{
		float		x;

		memcpy(&x, &fma_only[i], 4);
		fma_same += same(expf(x), gs_expf(x));
	}
	printf("# host expf is glibc's FMA variant on its 2 distinguishing inputs: %s\n",
		   fma_same == 2 ? "yes" : fma_same == 0 ? "no (non-FMA CPU or other libm)" : "mixed");

	/* the transforms on their own, including softmax over many groups */
	{
		float		m[GS_KMAX_GROUPS],
					o1[GS_KMAX_GROUPS],
					o2[GS_KMAX_GROUPS];
		/* an IsolationForest's: 100 trees x c(256) and contamination 'auto' */
		const float tparam[2] = {1034.7858f, 0.5f};
		long		tbad = 0;

		for (int it = 0; it < 20000; it++)
		{
			int			ng = 1 + it % GS_KMAX_GROUPS;

			for (int g = 0; g < ng; g++)
				m[g] = (float) ((gs_rnd() - 0.5) * (it % 7 == 0 ? 400.0 : 20.0));
			if (it % 11 == 0)
				m[it % ng] = NAN;
			for (int t = GS_TRANSFORM_IDENTITY; t <= GS_TRANSFORM_LAST; t++)
			{
				int			no = t == GS_TRANSFORM_ARGMAX ? 1 : ng;

				gs_transform_row((GsTransform) t, tparam, m, ng, o1);
				libm_transform_row((GsTransform) t, tparam, m, ng, o2);
				for (int k = 0; k < no; k++)
					tbad += !same(o1[k], o2[k]);
			}
		}
		snprintf(what, sizeof(what),
				 "gs_transform_row equals the same transforms on the host's expf on 20000 random margin rows x %d transforms: %ld differ",
				 (int) GS_TRANSFORM_LAST + 1, tbad);
		gs_tap(tbad == 0, "transform", what);
	}
}

/*
 * gs_exp2f (IsolationForest's 2^x) against the host's exp2f, bit for bit:
 * every step-th float bit pattern, plus special values.
 */
static void
test_exp2f(uint64_t step)
{
	const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, INFINITY, -INFINITY, NAN,
		127.0f, 127.99999f, 128.0f, -126.0f, -127.5f, -128.0f, -149.0f, -149.5f, -150.0f,
		-150.00002f, 1e-30f, -1e-30f, 0x1p-149f, 1e30f, -1e30f, -0.73f, -1.4f};
	uint64_t	n = 0,
				bad = 0;
	float		first = 0.0f;
	char		what[256];

	for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += step)
	{
		uint32_t	w = (uint32_t) u;
		float		x;

		memcpy(&x, &w, 4);
		n++;
		if (!same(exp2f(x), gs_exp2f(x)) && bad++ == 0)
			first = x;
	}
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
	{
		n++;
		if (!same(exp2f(special[i]), gs_exp2f(special[i])) && bad++ == 0)
			first = special[i];
	}
	snprintf(what, sizeof(what),
			 "gs_exp2f equals the host's exp2f on %llu inputs (every %llu-th float and special values): %llu differ",
			 (unsigned long long) n, (unsigned long long) step, (unsigned long long) bad);
	gs_tap(bad == 0, "exp2f", what);
	if (bad)
		printf("# first difference: x = %a: host %a, gs_exp2f %a\n",
			   (double) first, (double) exp2f(first), (double) gs_exp2f(first));
}

/*
 * gs_softplus (LightGBM's cross_entropy_lambda output) against log(1 + e^x)
 * in long double, on every step-th float bit pattern: within one float ulp
 * of the exact value (the float exp inside costs at most that), and the
 * special values exact.
 */
static void
test_softplus(uint64_t step)
{
	uint64_t	n = 0,
				bad = 0;
	float		first = 0.0f;
	char		what[256];

	for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += step)
	{
		uint32_t	w = (uint32_t) u;
		float		x,
					got,
					want;
		long double r;

		memcpy(&x, &w, 4);
		if (isnan(x))
			continue;
		r = x > 0 ? (long double) x + log1pl(expl(-(long double) x)) : log1pl(expl((long double) x));
		want = (float) r;
		got = gs_softplus(x);
		n++;
		if (got != want && nextafterf(want, INFINITY) != got && nextafterf(want, -INFINITY) != got &&
			bad++ == 0)
			first = x;
	}
	snprintf(what, sizeof(what),
			 "gs_softplus within 1 ulp of log(1 + e^x) in long double on %llu floats (every %llu-th): %llu off",
			 (unsigned long long) n, (unsigned long long) step, (unsigned long long) bad);
	gs_tap(bad == 0, "softplus", what);
	if (bad)
		printf("# first: x = %a: gs_softplus %a\n", (double) first, (double) gs_softplus(first));
	gs_tap(isnan(gs_softplus(NAN)) && gs_softplus(INFINITY) == INFINITY &&
		   gs_softplus(-INFINITY) == 0.0f && gs_softplus(0.0f) == (float) M_LN2 &&
		   gs_softplus(1e30f) == 1e30f && gs_softplus(-200.0f) == 0.0f,
		   "softplus", "gs_softplus of NaN, +-inf, 0, 1e30 and -200 is NaN, inf, 0, ln 2, 1e30 and 0");
	{
		/* softmax over infinite margins (double sums past float's range): no NaN */
		const float one_inf[3] = {1.0f, INFINITY, 3.0f},
					two_inf[3] = {INFINITY, -2.0f, INFINITY},
					all_neg[2] = {-INFINITY, -INFINITY},
					neg_one[3] = {-INFINITY, 5.0f, 4.0f};
		float		o1[3],
					o2[3],
					o3[2],
					o4[3];

		gs_transform_row(GS_TRANSFORM_SOFTMAX, NULL, one_inf, 3, o1);
		gs_transform_row(GS_TRANSFORM_SOFTMAX, NULL, two_inf, 3, o2);
		gs_transform_row(GS_TRANSFORM_SOFTMAX, NULL, all_neg, 2, o3);
		gs_transform_row(GS_TRANSFORM_SOFTMAX, NULL, neg_one, 3, o4);
		gs_tap(o1[0] == 0.0f && o1[1] == 1.0f && o1[2] == 0.0f &&
			   o2[0] == 0.5f && o2[1] == 0.0f && o2[2] == 0.5f &&
			   o3[0] == 0.5f && o3[1] == 0.5f &&
			   o4[0] == 0.0f && fabsf(o4[1] + o4[2] - 1.0f) < 1e-6f && o4[1] > o4[2],
			   "softmax", "infinite margins: one +inf class gets 1, two share it, all -inf share it, a -inf class gets 0");
	}
}

int
main(int argc, char **argv)
{
	/* --exhaustive-expf: check gs_expf on all 2^32 floats (minutes) */
	int			exhaustive = argc > 1 && strcmp(argv[1], "--exhaustive-expf") == 0;

	test_expf(exhaustive ? 1 : 4099);
	test_exp2f(exhaustive ? 1 : 4099);
	test_softplus(exhaustive ? 1 : 4099);
	printf("1..%d\ndevice-math: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

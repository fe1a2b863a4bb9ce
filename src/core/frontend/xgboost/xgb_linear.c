/*
 * xgb_linear.c
 *	  XGBoost's linear booster (booster="gblinear") as a network of one dense
 *	  layer (mlp.h), scored by the network engines (BLAS on the CPU, cuBLAS
 *	  on the GPU).
 *
 * XGBoost's gblinear predicts, per output group g,
 *	  margin[g] = bias[g] + base_margin[g] + sum over present features i of
 *				  x[i] * weight[i][g]
 * where a missing feature (NaN, or the model's missing value) adds
 * nothing, then applies the objective's transform.  Here: an impute step
 * turning NaN into 0 and a second one the missing value (NaN again when
 * the model has none), a dense layer whose bias is bias + base margin, and the
 * transform as an activation: none (identity objectives: reg:squarederror,
 * binary:logitraw, ranking...), the logistic (binary:logistic,
 * reg:logistic) or the softmax (multi:softprob).  Objectives with other
 * transforms (exp, hinge, argmax) are refused.  Sums are float, in BLAS's
 * order rather than XGBoost's feature order, so scores agree to float
 * rounding (about 1e-7 of the largest term), not bit for bit.
 *
 * Everything comes from the tree-less forest gs_xgb_load_any fills
 * (xgb_load.c validates the weights: the count, finite floats).
 */
#include "xgb_linear.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


/* Allocate from alloc; NULL when out of memory. */
static void *
lin_alloc(const GsAllocator *alloc, size_t n)
{
	return alloc->alloc(alloc->ctx, n > 0 ? n : 1);
}

/* Append a step with parameters p[n_out] (zeroed) and, for dense, w. */
static GsMlpStep *
add_step(GsMlp *m, GsMlpOp op, int32_t n_in, int32_t n_out, bool with_p)
{
	GsMlpStep  *s = &m->steps[m->n_steps];

	memset(s, 0, sizeof(*s));
	s->op = op;
	s->n_in = n_in;
	s->n_out = n_out;
	snprintf(s->node, sizeof(s->node), "gblinear");
	if (with_p)
	{
		s->p = lin_alloc(&m->alloc, sizeof(float) * (size_t) n_out);
		if (s->p == NULL)
			return NULL;
		memset(s->p, 0, sizeof(float) * (size_t) n_out);
	}
	m->n_steps++;
	return s;
}

/* The network of a linear booster; see xgb_linear.h. */
GsCode
gs_xgb_linear(const GsForest *f, const GsAllocator *alloc, GsMlp **out, GsStatus *st)
{
	int32_t		nf = f->n_features,
				ng = f->n_groups;
	int64_t		n_w = ((int64_t) nf + 1) * ng;
	GsMlpOp		act;
	GsMlp	   *m;
	GsMlpStep  *s;

	*out = NULL;
	switch (f->transform)
	{
		case GS_TRANSFORM_IDENTITY:
			act = GS_MLP_DENSE;	/* none */
			break;
		case GS_TRANSFORM_SIGMOID:
			act = GS_MLP_SIGMOID;
			break;
		case GS_TRANSFORM_SOFTMAX:
			act = GS_MLP_SOFTMAX;
			break;
		default:
			gs_status_set(st, GS_ERR_UNSUPPORTED,
						  "XGBoost's linear booster (gblinear) with objective \"%s\" is not supported",
						  f->objective);
			gs_status_detail(st, "Linear boosters are scored for objectives whose predictions are the margin, its logistic or its softmax (reg:squarederror, binary:logistic, multi:softprob, ...).");
			return st->code;
	}
	m = lin_alloc(alloc, sizeof(GsMlp));
	if (m == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	memset(m, 0, sizeof(GsMlp));
	m->alloc = *alloc;
	m->steps = lin_alloc(alloc, sizeof(GsMlpStep) * 4);
	if (m->steps == NULL)
		goto nomem;
	memset(m->steps, 0, sizeof(GsMlpStep) * 4);

	/*
	 * missing features add nothing: NaN to 0, then the model's missing value
	 * to 0 (step 1, which gs_mlp_set_missing changes; without one it
	 * takes NaN again, a no-op)
	 */
	if (add_step(m, GS_MLP_IMPUTE, nf, nf, true) == NULL ||
		add_step(m, GS_MLP_IMPUTE, nf, nf, true) == NULL)
		goto nomem;
	if (f->has_missing_value)
		gs_mlp_set_missing(m, f->missing_value);

	/* the weights, unit g's row at w[g * nf]; bias + base margin */
	if ((s = add_step(m, GS_MLP_DENSE, nf, ng, true)) == NULL)
		goto nomem;
	s->w = lin_alloc(alloc, sizeof(float) * (size_t) nf * (size_t) ng);
	if (s->w == NULL)
		goto nomem;
	for (int64_t k = 0; k < n_w; k++)
	{
		int64_t		i = k / ng,
					g = k % ng;

		if (i < nf)
			s->w[g * nf + i] = f->linear_w[k];
		else
			s->p[g] = f->linear_w[k] + f->base_margin[0];	/* bias + base, as XGBoost */
	}
	m->n_layers = 1;
	m->n_params = n_w;
	if (act != GS_MLP_DENSE && add_step(m, act, ng, ng, false) == NULL)
		goto nomem;

	m->n_features = nf;
	m->n_net_outputs = ng;
	m->n_outputs = ng;
	m->max_width = nf > ng ? nf : ng;
	snprintf(m->output_act, sizeof(m->output_act), "%s",
			 act == GS_MLP_DENSE ? "identity" : gs_mlp_op_name(act));
	snprintf(m->producer, sizeof(m->producer), "%s", f->saved_by);
	snprintf(m->objective, sizeof(m->objective), "%s", f->objective);
	m->linear_booster = true;
	if (f->feature_names)
	{
		m->feature_names = lin_alloc(alloc, sizeof(char *) * (size_t) nf);
		if (m->feature_names == NULL)
			goto nomem;
		memset(m->feature_names, 0, sizeof(char *) * (size_t) nf);
		for (int32_t i = 0; i < nf; i++)
		{
			size_t		n = strlen(f->feature_names[i]) + 1;

			if ((m->feature_names[i] = lin_alloc(alloc, n)) == NULL)
				goto nomem;
			memcpy(m->feature_names[i], f->feature_names[i], n);
		}
	}
	*out = m;
	return GS_OK;

nomem:
	gs_mlp_free(m);
	return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
}

/*
 * onnx_fuse_norm.c
 *	  Keras 3's LayerNormalization as tf2onnx writes it (TensorFlow backend,
 *	  model.export(format="onnx"), tf2onnx.convert.from_keras or the
 *	  SavedModel route; opsets 15 to 18), fused into one GS_MLP_LAYER_NORM
 *	  step (mlp.h) over the columns of the chain value h:
 *
 *		mean = ReduceMean(h, axes [1], keepdims 1)
 *		var  = ReduceMean(Mul(d, d), axes [1], keepdims 1), d = Sub(h, mean)
 *		s	 = Mul(Reciprocal(Sqrt(Add(var, eps))), gamma)
 *		y	 = Add(Mul(h, s), Add(Mul(Neg(mean), s), beta))
 *
 *	  that is y = h s + (beta - mean s) = (h - mean) / sqrt(var + eps) gamma
 *	  + beta.  Keras' scale=False leaves out the Mul by gamma (s is the
 *	  Reciprocal), center=False the Add of beta (y = Add(Mul(h, s),
 *	  Mul(Neg(mean), s))).  The axes are an attribute before opset 18 and a
 *	  constant input from 18 on; gamma and beta are per-column constants
 *	  ([1, W] as Keras writes them, [W] or a scalar), eps a constant scalar.
 *	  Every node is checked: its op, its constants, that it has no other
 *	  attributes, that each intermediate value is read by the pattern alone.
 *	  Anything else is left to the chain's checks, which refuse it at its
 *	  first node (ReduceMean is not a chain operator); a pattern whose gamma
 *	  or beta has the wrong width is refused naming its last node.
 *
 * The step computes the same normalization with the mean and variance in
 * double (gs_mlp_row), where the graph's float32 form h s - mean s loses
 * digits to cancellation when a row's mean is large against its spread;
 * docs/reference.md gives the measured differences.  The step owns the
 * gamma and beta arrays it is given.
 */
#include "onnx_internal.h"

#include <stdio.h>
#include <string.h>

/* Is node n the default-domain op, with exactly the given input count? */
static bool
is_op(const Onnx__NodeProto *n, const char *op, size_t n_input)
{
	return n->op_type && strcmp(n->op_type, op) == 0 && (n->domain == NULL || n->domain[0] == '\0') &&
		n->n_input == n_input && n->n_output == 1 && n->output[0] && n->output[0][0];
}

/*
 * Is node n ReduceMean(x) over the columns of [N, W], keeping them as
 * [N, 1]: axes [1] or [-1] (an attribute before opset 18, a constant
 * int64 input from 18 on), keepdims 1 (the default)?
 */
static bool
mean_over_columns(Loader *L, const Onnx__NodeProto *n, const char *x)
{
	static const char *const attrs17[] = {"axes", "keepdims", NULL};
	static const char *const attrs18[] = {"keepdims", "noop_with_empty_axes", NULL};
	int64_t		axes[2] = {0, 0},
				na = 0,
				keep = 1;
	bool		ok;

	if (!n->op_type || strcmp(n->op_type, "ReduceMean") != 0 || (n->domain && n->domain[0]) ||
		n->n_input < 1 || !n->input[0] || strcmp(n->input[0], x) != 0 ||
		n->n_output != 1 || !n->output[0] || !n->output[0][0])
		return false;
	if (L->opset < 18)
	{
		const Onnx__AttributeProto *a = onnx_attr_find(n, "axes");

		ok = n->n_input == 1 && onnx_attrs_allowed(L, n, attrs17) == GS_OK &&
			a != NULL && a->n_ints == 1;
		if (ok)
		{
			axes[0] = a->ints[0];
			na = 1;
		}
	}
	else
	{
		const Onnx__TensorProto *t;

		ok = n->n_input == 2 && onnx_attrs_allowed(L, n, attrs18) == GS_OK &&
			(t = onnx_find_const(L, n->input[1])) != NULL &&
			onnx_tensor_int64s(L, t, 2, &na, axes) == GS_OK;
	}
	ok = ok && onnx_attr_int(L, n, "keepdims", 1, &keep) == GS_OK;
	gs_status_clear(L->st);		/* a node that does not fit is not a match */
	return ok && na == 1 && (axes[0] == 1 || axes[0] == -1) && keep == 1;
}

/*
 * The node after node i that is a Mul of value a and a constant
 * (either order), read by nothing else: its index and the constant's
 * name, or -1.
 */
static int64_t
mul_by_const(Loader *L, size_t i, const char *a, const char **c)
{
	int64_t		k = onnx_sole_reader(L, i, a, "Mul");
	const char *other;

	if (k < 0 || L->g->node[k]->n_attribute != 0 || L->g->node[k]->n_input != 2 ||
		(other = onnx_other_input(L->g->node[k], a)) == NULL || onnx_find_const(L, other) == NULL)
		return -1;
	*c = other;
	return k;
}

/*
 * Match the pattern from node i = ReduceMean(h).  On a match fills j with
 * its other nodes (the final Add last) and the names of gamma and beta
 * (NULL when absent) and eps, and returns how many nodes are in j; 0
 * otherwise.
 */
static int
keras_layernorm(Loader *L, size_t i, int64_t *j, const char **gamma, const char **beta, float *eps)
{
	const Onnx__NodeProto *const *g = (const Onnx__NodeProto *const *) L->g->node;
	const char *h = L->cur;
	const char *mean = g[i]->output[0];
	const char *s;
	int64_t		rd[2],
				sub,
				neg,
				hs,
				ms,
				fin;
	int			n = 0;

	*gamma = *beta = NULL;
	if (!mean_over_columns(L, g[i], h) || onnx_readers(L, i, mean, rd, 2) != 2)
		return 0;
	/* mean is read by Sub(h, mean) and Neg(mean) */
	sub = is_op(g[rd[0]], "Sub", 2) ? rd[0] : rd[1];
	neg = sub == rd[0] ? rd[1] : rd[0];
	if (!is_op(g[sub], "Sub", 2) || g[sub]->n_attribute != 0 ||
		strcmp(g[sub]->input[0], h) != 0 || strcmp(g[sub]->input[1], mean) != 0 ||
		!is_op(g[neg], "Neg", 1) || g[neg]->n_attribute != 0)
		return 0;
	j[n++] = sub;
	j[n++] = neg;
	/* var = ReduceMean(Mul(d, d)); Reciprocal(Sqrt(Add(var, eps))) */
	if ((j[n] = onnx_sole_reader(L, (size_t) sub, g[sub]->output[0], "Mul")) < 0 ||
		g[j[n]]->n_attribute != 0 || !onnx_takes(g[j[n]], g[sub]->output[0], g[sub]->output[0], false))
		return 0;
	n++;
	if ((j[n] = onnx_sole_reader(L, (size_t) j[n - 1], g[j[n - 1]]->output[0], "ReduceMean")) < 0 ||
		!mean_over_columns(L, g[j[n]], g[j[n - 1]]->output[0]))
		return 0;
	n++;
	if ((j[n] = onnx_sole_reader(L, (size_t) j[n - 1], g[j[n - 1]]->output[0], "Add")) < 0 ||
		g[j[n]]->n_attribute != 0 ||
		!onnx_const_scalar(L, onnx_other_input(g[j[n]], g[j[n - 1]]->output[0]), eps) || !(*eps >= 0.0f))
		return 0;
	n++;
	if ((j[n] = onnx_sole_reader(L, (size_t) j[n - 1], g[j[n - 1]]->output[0], "Sqrt")) < 0 ||
		!is_op(g[j[n]], "Sqrt", 1) || g[j[n]]->n_attribute != 0)
		return 0;
	n++;
	if ((j[n] = onnx_sole_reader(L, (size_t) j[n - 1], g[j[n - 1]]->output[0], "Reciprocal")) < 0 ||
		!is_op(g[j[n]], "Reciprocal", 1) || g[j[n]]->n_attribute != 0)
		return 0;
	s = g[j[n]]->output[0];
	n++;
	/* s = Mul(reciprocal, gamma), unless scale=False */
	if ((j[n] = mul_by_const(L, (size_t) j[n - 1], s, gamma)) >= 0)
		s = g[j[n++]]->output[0];
	/* s is read by Mul(h, s) and Mul(Neg(mean), s) */
	if (onnx_readers(L, (size_t) j[n - 1], s, rd, 2) != 2)
		return 0;
	hs = is_op(g[rd[0]], "Mul", 2) && onnx_takes(g[rd[0]], h, s, true) ? rd[0] : rd[1];
	ms = hs == rd[0] ? rd[1] : rd[0];
	if (!is_op(g[hs], "Mul", 2) || g[hs]->n_attribute != 0 || !onnx_takes(g[hs], h, s, true) ||
		!is_op(g[ms], "Mul", 2) || g[ms]->n_attribute != 0 ||
		!onnx_takes(g[ms], g[neg]->output[0], s, true) ||
		onnx_sole_reader(L, (size_t) neg, g[neg]->output[0], "Mul") != ms)
		return 0;
	j[n++] = hs;
	j[n++] = ms;
	/* t = Add(Mul(Neg(mean), s), beta), unless center=False; y = Add(h s, t) */
	{
		int64_t		add = onnx_sole_reader(L, (size_t) ms, g[ms]->output[0], "Add");
		const char *t = g[ms]->output[0];

		if (add < 0 || g[add]->n_attribute != 0)
			return 0;
		if (!onnx_takes(g[add], g[hs]->output[0], t, true))
		{
			*beta = onnx_other_input(g[add], t);
			if (*beta == NULL || onnx_find_const(L, *beta) == NULL)
				return 0;
			j[n++] = add;
			t = g[add]->output[0];
			add = onnx_sole_reader(L, (size_t) add, t, "Add");
			if (add < 0 || g[add]->n_attribute != 0 || !onnx_takes(g[add], g[hs]->output[0], t, true))
				return 0;
		}
		fin = add;
	}
	if (onnx_sole_reader(L, (size_t) hs, g[hs]->output[0], "Add") != fin)
		return 0;
	j[n++] = fin;
	return n;
}

/*
 * Does node i start Keras 3's LayerNormalization on the chain?  If so, add
 * the GS_MLP_LAYER_NORM step (its gamma and beta checked and copied: one
 * value per column or one for all), take the pattern's other nodes out of
 * L->needed, move the chain to its last output and set *fused.  A node that
 * starts no such pattern is left alone; a pattern with constants of the
 * wrong width is refused naming its last node.
 */
GsCode
onnx_fuse_layernorm(Loader *L, size_t i, bool *fused)
{
	const Onnx__NodeProto *last;
	int64_t		j[16];
	const char *gamma,
			   *beta;
	float		eps = 0.0f;
	float	   *w = NULL,
			   *p = NULL;
	int			n;
	GsMlpStep  *s;
	char		nname[80];

	*fused = false;
	if (L->rank1 || !L->g->node[i]->op_type || strcmp(L->g->node[i]->op_type, "ReduceMean") != 0 ||
		(n = keras_layernorm(L, i, j, &gamma, &beta, &eps)) == 0)
		return GS_OK;
	last = L->g->node[j[n - 1]];
	onnx_safe_name(nname, sizeof(nname), last->name);
	snprintf(L->label, sizeof(L->label), "node \"%s\" (Add ending a LayerNormalization)", nname);
	if (onnx_over_parameters(L, (int64_t) L->width * 2))
		return L->st->code;
	if (gamma && onnx_column_params(L, onnx_find_const(L, gamma), &w) != GS_OK)
		return L->st->code;
	if (beta && onnx_column_params(L, onnx_find_const(L, beta), &p) != GS_OK)
		goto fail;
	if (w == NULL)
	{
		/* scale=False: a scale of 1 */
		if ((w = onnx_alloc(L, sizeof(float) * (size_t) L->width)) == NULL)
		{
			onnx_nomem(L);
			goto fail;
		}
		for (int32_t c = 0; c < L->width; c++)
			w[c] = 1.0f;
	}
	if ((s = onnx_new_step(L, GS_MLP_LAYER_NORM, last->name)) == NULL)
		goto fail;
	s->w = w;
	s->p = p;
	s->alpha = eps;
	L->m->n_params += (int64_t) L->width * (p ? 2 : 1);
	for (int k = 0; k < n; k++)
		L->needed[j[k]] = false;
	L->cur = last->output[0];
	*fused = true;
	return GS_OK;

fail:
	if (w)
		L->alloc.free(L->alloc.ctx, w);
	if (p)
		L->alloc.free(L->alloc.ctx, p);
	return L->st->code;
}

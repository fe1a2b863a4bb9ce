/*
 * onnx_fuse.c
 *	  Activations exporters write as several nodes around the chain value h,
 *	  fused into one element-wise step of the network (mlp.h) when the nodes
 *	  are exactly the pattern: every constant's value checked, every
 *	  intermediate value read by the pattern's next node alone.  Anything
 *	  else is left to the chain's own checks, which refuse it naming the
 *	  node (see onnx_internal.h: onnx_fuse_activation).
 *
 *	  SiLU	   s = Sigmoid(h); Mul(h, s)
 *	  GELU	   Mul(Mul(h, Add(Erf(Div(h, c1)), 1)), c3)	(erf form; c1 = sqrt 2,
 *			   c3 = 0.5 in PyTorch's export, taken from the graph), or
 *			   Mul(h, Mul(c3, Add(Erf(Div(h, c1)), 1))) (PyTorch 2.x)
 *	  GELU	   tanh form, from Pow(h, 3), as PyTorch 2.x writes it below opset 20,
 *			   or from Mul(h, Mul(h, h)), as PyTorch 1.x's exporter writes it;
 *			   Keras 3's forms from tf2onnx and jax2onnx (gelu_tanh_walk)
 *	  GELU	   Mul(Mul(h, 0.5), Add(1, Erf(Mul(h, 1 / sqrt 2)))) (tf2onnx, Keras)
 *	  Softsign Div(h, Add(Abs(h), 1))
 *	  Softplus Where(Greater(s, threshold), h, Div(Softplus(s), beta)) with
 *			   s = Mul(h, beta); with beta 1 neither Mul nor Div (PyTorch 2's
 *			   exporter writes nn.Softplus so, threshold 20 by default)
 *	  Mish	   Mul(h, Tanh(Softplus(h))) (Keras 3: tf2onnx and jax2onnx)
 *	  HardSwish Mul(h, Mul(Clip(Add(h, 3), 0, 6), 1 / 6)) (Keras 3's hard_silu,
 *			   tf2onnx)
 *
 * The graph helpers (readers of a value, its producer...) are shared with
 * the other pattern files through onnx_internal.h.  Nothing here allocates
 * beyond the step it adds.
 */
#include "onnx_internal.h"

#include <math.h>
#include <string.h>

/* ---- the graph around a value ---- */

/*
 * The nodes after node i that read value name (nodes are in topological
 * order), into out[0..max): how many, max + 1 meaning more than max; -1
 * when a node that the scored output does not need reads it.
 */
int
onnx_readers(const Loader *L, size_t i, const char *name, int64_t *out, int max)
{
	int			n = 0;

	for (size_t j = i + 1; j < L->g->n_node && n <= max; j++)
	{
		const Onnx__NodeProto *node = L->g->node[j];

		for (size_t k = 0; k < node->n_input; k++)
			if (node->input[k] && strcmp(node->input[k], name) == 0)
			{
				if (!L->needed[j])
					return -1;
				if (n < max)
					out[n] = (int64_t) j;
				n++;
				break;
			}
	}
	return n;
}

/*
 * The one node after node i that reads value name, with op; -1 when
 * another node or a graph output also reads it, or when it is not op.
 */
int64_t
onnx_sole_reader(const Loader *L, size_t i, const char *name, const char *op)
{
	int64_t		found;
	const Onnx__NodeProto *n;

	for (size_t k = 0; k < L->g->n_output; k++)
		if (L->g->output[k]->name && strcmp(L->g->output[k]->name, name) == 0)
			return -1;
	if (onnx_readers(L, i, name, &found, 1) != 1)
		return -1;
	n = L->g->node[found];
	if (!n->op_type || strcmp(n->op_type, op) != 0 || n->n_output != 1 || (n->domain && n->domain[0]))
		return -1;
	return found;
}

/* Is node n a binary op over a and b, in either order when commutative? */
bool
onnx_takes(const Onnx__NodeProto *n, const char *a, const char *b, bool commutative)
{
	if (n->n_input != 2 || !n->input[0] || !n->input[1])
		return false;
	if (strcmp(n->input[0], a) == 0 && strcmp(n->input[1], b) == 0)
		return true;
	return commutative && strcmp(n->input[0], b) == 0 && strcmp(n->input[1], a) == 0;
}

/* The other input of binary node n, given one of them. */
const char *
onnx_other_input(const Onnx__NodeProto *n, const char *one)
{
	if (n->n_input != 2 || !n->input[0] || !n->input[1])
		return NULL;
	return strcmp(n->input[0], one) == 0 ? n->input[1] : n->input[0];
}

/* Index of the needed node whose output is name, or -1. */
int64_t
onnx_value_producer(const Loader *L, const char *name)
{
	for (size_t j = 0; j < L->g->n_node; j++)
	{
		const Onnx__NodeProto *n = L->g->node[j];

		if (L->needed[j] && n->n_output == 1 && n->output[0] && strcmp(n->output[0], name) == 0)
			return (int64_t) j;
	}
	return -1;
}

/* ---- the patterns ---- */

/*
 * PyTorch's Softplus(beta, threshold) from node i, which reads the chain
 * value h: Where(Greater(s, thr), h, t) with s = h and t = Softplus(h)
 * (beta 1, node i the Softplus), or s = Mul(h, beta) and
 * t = Div(Softplus(s), beta) (node i the Mul).  On a match fills j with
 * the pattern's other nodes, the Where last, and returns how many; 0 when
 * it is not the pattern.
 */
static int
softplus_pattern(Loader *L, size_t i, int64_t *j, float *beta, float *thr)
{
	const Onnx__NodeProto *n = L->g->node[i];
	const char *h = L->cur;
	const char *s = n->output[0];
	const Onnx__NodeProto *where;
	int64_t		sp,
				gt,
				w;
	int			k = 0;
	float		b2;

	*beta = 1.0f;
	if (strcmp(n->op_type, "Mul") == 0)
	{
		/* s is read by the Softplus and the Greater (checked below), nothing else */
		const Onnx__NodeProto *div;
		int64_t		rd[2],
					dv;

		if (!onnx_const_scalar(L, onnx_other_input(n, h), beta) || !(*beta > 0.0f) || isinf(*beta) ||
			onnx_readers(L, i, s, rd, 2) != 2)
			return 0;
		sp = L->g->node[rd[0]]->op_type && strcmp(L->g->node[rd[0]]->op_type, "Softplus") == 0 ?
			rd[0] : rd[1];
		if (!L->g->node[sp]->op_type || strcmp(L->g->node[sp]->op_type, "Softplus") != 0 ||
			L->g->node[sp]->n_input != 1 ||
			(dv = onnx_sole_reader(L, (size_t) sp, L->g->node[sp]->output[0], "Div")) < 0)
			return 0;
		div = L->g->node[dv];
		if (div->n_input != 2 || !div->input[0] || strcmp(div->input[0], L->g->node[sp]->output[0]) != 0 ||
			!onnx_const_scalar(L, div->input[1], &b2) || b2 != *beta)
			return 0;
		j[k++] = sp;
		j[k++] = dv;
		w = onnx_sole_reader(L, (size_t) dv, div->output[0], "Where");
	}
	else if (strcmp(n->op_type, "Softplus") == 0 && n->n_input == 1)
	{
		s = h;
		w = onnx_sole_reader(L, i, n->output[0], "Where");
	}
	else
		return 0;
	if (w < 0)
		return 0;
	where = L->g->node[w];
	if (where->n_input != 3 || !where->input[0] || !where->input[1] || !where->input[2] ||
		strcmp(where->input[1], h) != 0 ||
		strcmp(where->input[2], L->g->node[k ? j[k - 1] : (int64_t) i]->output[0]) != 0 ||
		(gt = onnx_value_producer(L, where->input[0])) < 0)
		return 0;
	n = L->g->node[gt];
	if (!n->op_type || strcmp(n->op_type, "Greater") != 0 || (n->domain && n->domain[0]) ||
		n->n_input != 2 || !n->input[0] || strcmp(n->input[0], s) != 0 ||
		!onnx_const_scalar(L, n->input[1], thr) || isnan(*thr) ||
		onnx_sole_reader(L, (size_t) gt, n->output[0], "Where") != w)
		return 0;
	j[k++] = gt;
	j[k++] = w;
	return k;
}

/*
 * Mish as Keras 3 writes it (tf2onnx and jax2onnx alike), from node i =
 * Softplus(h): Mul(h, Tanh(Softplus(h))), in either order of the Mul's
 * inputs; what ONNX's Mish op computes.  On a match fills j with the Tanh
 * and the Mul and returns 2; 0 otherwise.
 */
static int
mish_pattern(Loader *L, size_t i, int64_t *j)
{
	const Onnx__NodeProto *n = L->g->node[i];
	const Onnx__NodeProto *t;

	if (n->n_input != 1 || n->n_attribute != 0 ||
		(j[0] = onnx_sole_reader(L, i, n->output[0], "Tanh")) < 0)
		return 0;
	t = L->g->node[j[0]];
	if (t->n_input != 1 || t->n_attribute != 0 ||
		(j[1] = onnx_sole_reader(L, (size_t) j[0], t->output[0], "Mul")) < 0 ||
		L->g->node[j[1]]->n_attribute != 0 ||
		!onnx_takes(L->g->node[j[1]], L->cur, t->output[0], true))
		return 0;
	return 2;
}

/*
 * Is node n Clip(x, 0, 6): bounds as attributes before opset 11, as
 * constant inputs from 11 on?
 */
static bool
clip_0_6(Loader *L, const Onnx__NodeProto *n)
{
	const Onnx__AttributeProto *lo = onnx_attr_find(n, "min");
	const Onnx__AttributeProto *hi = onnx_attr_find(n, "max");
	float		a,
				b;

	if (L->opset < 11)
		return n->n_input == 1 && n->n_attribute == 2 && lo && hi && lo->has_f && hi->has_f &&
			lo->f == 0.0f && hi->f == 6.0f;
	return n->n_input == 3 && n->n_attribute == 0 &&
		onnx_const_scalar(L, n->input[1], &a) && a == 0.0f &&
		onnx_const_scalar(L, n->input[2], &b) && b == 6.0f;
}

/*
 * HardSwish as Keras 3's TensorFlow backend writes hard_silu (tf2onnx),
 * from node i = Add(h, 3) (either order): Mul(h, Mul(Clip(Add(h, 3), 0, 6),
 * c)), x relu6(x + 3) / 6 with the division by 6 folded by TensorFlow into
 * c = float(1 / 6); c within two float steps of it, the other constants
 * exact, the Mul's operands in either order.  Read as one
 * GS_MLP_HARD_SWISH step, which computes x max(0, min(1, x / 6 + 1 / 2)):
 * a few float roundings apart.  On a match fills j with the Clip and the
 * two Muls and returns 3; 0 otherwise.
 */
static int
keras_hard_swish(Loader *L, size_t i, int64_t *j)
{
	const Onnx__NodeProto *n = L->g->node[i];
	const Onnx__NodeProto *clip,
			   *m;
	const char *h = L->cur;
	float		c;

	if (n->n_input != 2 || n->n_attribute != 0 || !n->input[0] || !n->input[1] ||
		(strcmp(n->input[0], h) != 0 && strcmp(n->input[1], h) != 0) ||
		!onnx_const_scalar(L, onnx_other_input(n, h), &c) || c != 3.0f ||
		(j[0] = onnx_sole_reader(L, i, n->output[0], "Clip")) < 0)
		return 0;
	clip = L->g->node[j[0]];
	if (!clip->input[0] || strcmp(clip->input[0], n->output[0]) != 0 || !clip_0_6(L, clip) ||
		(j[1] = onnx_sole_reader(L, (size_t) j[0], clip->output[0], "Mul")) < 0)
		return 0;
	m = L->g->node[j[1]];
	if (m->n_attribute != 0 ||
		!onnx_const_scalar(L, onnx_other_input(m, clip->output[0]), &c) ||
		fabsf(c - 0.166666672f) > 3e-8f ||
		(j[2] = onnx_sole_reader(L, (size_t) j[1], m->output[0], "Mul")) < 0 ||
		L->g->node[j[2]]->n_attribute != 0 ||
		!onnx_takes(L->g->node[j[2]], h, m->output[0], true))
		return 0;
	return 3;
}

/* Is node k Mul(h, c) (either order) for a constant scalar c within tol of want? */
static bool
gelu_mul_of_h(Loader *L, int64_t k, const char *h, float want, float tol)
{
	const Onnx__NodeProto *m;
	const char *other;
	float		c;

	if (k < 0)
		return false;
	m = L->g->node[k];
	return m->op_type && strcmp(m->op_type, "Mul") == 0 && !(m->domain && m->domain[0]) &&
		m->n_input == 2 && m->input[0] && m->input[1] && m->n_output == 1 && m->output[0] &&
		(strcmp(m->input[0], h) == 0 || strcmp(m->input[1], h) == 0) &&
		(other = onnx_other_input(m, h)) != NULL && onnx_const_scalar(L, other, &c) &&
		fabsf(c - want) <= tol;
}

/*
 * GELU (erf form) as tf2onnx writes Keras' gelu, from node i, the first
 * of its two Muls of h (either order of their operands; tf2onnx writes
 * either first): Mul(Mul(h, 0.5), Add(1, Erf(Mul(h, 1 / sqrt 2)))), the
 * other Mul of h the only other reader of h after node i.  Read as one
 * GS_MLP_GELU step (erf(h / sqrt 2) for erf(h * (1 / sqrt 2)): at most an
 * ulp apart in erf's argument).  On a match fills j with the pattern's
 * other nodes, the last one last, and returns how many; 0 otherwise.
 */
static int
keras_gelu(Loader *L, size_t i, int64_t *j)
{
	const char *h = L->cur;
	const Onnx__NodeProto *n,
			   *m;
	int64_t		half,
				scale,
				other;
	float		c;

	/* node i is either Mul of h: the halving or the scaling (tf2onnx writes both orders) */
	if (!gelu_mul_of_h(L, (int64_t) i, h, 0.5f, 0.0f) && !gelu_mul_of_h(L, (int64_t) i, h, 0.707106769f, 1e-7f))
		return 0;
	if (onnx_readers(L, i, h, &other, 1) != 1)
		return 0;
	half = gelu_mul_of_h(L, (int64_t) i, h, 0.5f, 0.0f) ? (int64_t) i : other;
	scale = half == (int64_t) i ? other : (int64_t) i;
	if (!gelu_mul_of_h(L, half, h, 0.5f, 0.0f) || !gelu_mul_of_h(L, scale, h, 0.707106769f, 1e-7f))
		return 0;
	n = L->g->node[half];
	m = L->g->node[scale];
	j[0] = other;
	if ((j[1] = onnx_sole_reader(L, (size_t) scale, m->output[0], "Erf")) < 0 ||
		(j[2] = onnx_sole_reader(L, (size_t) j[1], L->g->node[j[1]]->output[0], "Add")) < 0 ||
		!onnx_const_scalar(L, onnx_other_input(L->g->node[j[2]], L->g->node[j[1]]->output[0]), &c) ||
		c != 1.0f ||
		(j[3] = onnx_sole_reader(L, (size_t) j[2], L->g->node[j[2]]->output[0], "Mul")) < 0 ||
		!onnx_takes(L->g->node[j[3]], n->output[0], L->g->node[j[2]]->output[0], true) ||
		onnx_sole_reader(L, (size_t) half, n->output[0], "Mul") != j[3])
		return 0;
	return 4;
}

/*
 * GELU, tanh form: 0.5 h (1 + tanh(k (h + c h^3))) with k = sqrt(2 / pi)
 * and c = 0.044715, the constants GS_MLP_GELU_TANH computes with, as the
 * exporters write it (k, c, 0.5 and 1 as float constants, in either order
 * of a Mul's or an Add's operands):
 *
 *	PyTorch 2.x below opset 20, from Pow(h, 3):
 *		Mul(h, Mul(0.5, Add(Tanh(Mul(k, Add(h, Mul(c, Pow(h, 3))))), 1)))
 *	PyTorch 1.x, the cube from Mul(h, Mul(h, h)), the halving last:
 *		Mul(0.5, Mul(h, Add(1, Tanh(Mul(k, Add(h, Mul(c, cube)))))))
 *	jax2onnx (Keras 3, opset 17 and 18), the cube as Mul(Mul(h, h), h):
 *		Mul(h, Mul(Add(Tanh(Mul(Add(h, Mul(cube, c)), k)), 1), 0.5))
 *	tf2onnx (Keras 3), from Mul(0.5, h), the halved h multiplied last:
 *		Mul(Mul(0.5, h), Add(1, Tanh(Mul(k, Add(h, Mul(c, Pow(h, 3)))))))
 *
 * Halving is exact in float, so each computes the same value up to the
 * order of the roundings in the cube.  Each form is a table of the nodes
 * after the first one: the op, and what its other operand must be.
 */
enum
{
	IS_H, IS_C, IS_K, IS_UNARY, IS_ONE, IS_HALF, IS_HALVED
};

typedef struct GeluStep
{
	const char *op;
	int			other;			/* IS_*: the operand beside the previous value */
} GeluStep;

static const GeluStep torch2_gelu[7] = {
	{"Mul", IS_C}, {"Add", IS_H}, {"Mul", IS_K}, {"Tanh", IS_UNARY},
	{"Add", IS_ONE}, {"Mul", IS_HALF}, {"Mul", IS_H}
};
static const GeluStep torch1_gelu[8] = {
	{"Mul", IS_H}, {"Mul", IS_C}, {"Add", IS_H}, {"Mul", IS_K},
	{"Tanh", IS_UNARY}, {"Add", IS_ONE}, {"Mul", IS_H}, {"Mul", IS_HALF}
};
static const GeluStep jax_gelu[8] = {
	{"Mul", IS_H}, {"Mul", IS_C}, {"Add", IS_H}, {"Mul", IS_K},
	{"Tanh", IS_UNARY}, {"Add", IS_ONE}, {"Mul", IS_HALF}, {"Mul", IS_H}
};
static const GeluStep tf_gelu[6] = {
	{"Mul", IS_C}, {"Add", IS_H}, {"Mul", IS_K}, {"Tanh", IS_UNARY},
	{"Add", IS_ONE}, {"Mul", IS_HALVED}
};

/*
 * Follow steps[0..n) from node i's output, each node the sole reader of
 * the value before it; halved is the value IS_HALVED stands for.  On a
 * match fills j[0..n) and returns true.
 */
static bool
gelu_tanh_walk(Loader *L, size_t i, const GeluStep *steps, int n, const char *halved, int64_t *j)
{
	const char *h = L->cur;
	const char *prev = L->g->node[i]->output[0];

	for (int k = 0; k < n; k++)
	{
		const Onnx__NodeProto *m;
		const char *other;
		float		c;
		bool		ok;

		if ((j[k] = onnx_sole_reader(L, k ? (size_t) j[k - 1] : i, prev, steps[k].op)) < 0)
			return false;
		m = L->g->node[j[k]];
		if (m->n_attribute != 0)
			return false;
		other = onnx_other_input(m, prev);
		switch (steps[k].other)
		{
			case IS_C:
				ok = onnx_const_scalar(L, other, &c) && fabsf(c - 0.044715f) <= 1e-9f;
				break;
			case IS_K:
				ok = onnx_const_scalar(L, other, &c) && fabsf(c - 0.797884583473205566f) <= 1e-7f;
				break;
			case IS_UNARY:
				ok = m->n_input == 1;
				break;
			case IS_ONE:
				ok = onnx_const_scalar(L, other, &c) && c == 1.0f;
				break;
			case IS_HALF:
				ok = onnx_const_scalar(L, other, &c) && c == 0.5f;
				break;
			case IS_HALVED:
				ok = other != NULL && halved != NULL && strcmp(other, halved) == 0;
				break;
			default:			/* the chain value itself */
				ok = other != NULL && strcmp(other, h) == 0;
				break;
		}
		if (!ok)
			return false;
		prev = m->output[0];
	}
	return true;
}

/*
 * The tf2onnx form of the tanh GELU (above) from node i = Mul(h, 0.5)
 * (either order): h is read after node i by the Pow and by the Add of the
 * table alone, the halved value by the last Mul alone.  On a match fills j
 * with the Pow and the table's nodes and returns 7; 0 otherwise.
 */
static int
keras_gelu_tanh(Loader *L, size_t i, int64_t *j)
{
	const Onnx__NodeProto *n = L->g->node[i];
	const char *h = L->cur;
	int64_t		rd[2];
	float		c;

	if (n->n_input != 2 || n->n_attribute != 0 || !n->input[0] || !n->input[1] ||
		(strcmp(n->input[0], h) != 0 && strcmp(n->input[1], h) != 0) ||
		!onnx_const_scalar(L, onnx_other_input(n, h), &c) || c != 0.5f ||
		onnx_readers(L, i, h, rd, 2) != 2)
		return 0;
	j[0] = L->g->node[rd[0]]->op_type && strcmp(L->g->node[rd[0]]->op_type, "Pow") == 0 ? rd[0] : rd[1];
	n = L->g->node[j[0]];
	if (!n->op_type || strcmp(n->op_type, "Pow") != 0 || (n->domain && n->domain[0]) ||
		n->n_input != 2 || n->n_attribute != 0 || n->n_output != 1 || !n->output[0] ||
		!n->input[0] || strcmp(n->input[0], h) != 0 ||
		!onnx_const_scalar(L, n->input[1], &c) || c != 3.0f ||
		!gelu_tanh_walk(L, (size_t) j[0], tf_gelu, 6, L->g->node[i]->output[0], j + 1) ||
		onnx_sole_reader(L, i, L->g->node[i]->output[0], "Mul") != j[6])
		return 0;
	return 7;
}

/*
 * Does node i start SiLU, GELU (erf or tanh), Softsign, PyTorch's Softplus,
 * Mish or HardSwish on the chain?  If so, add the one step, take the pattern's other nodes out
 * of L->needed, move the chain to the pattern's last output and set
 * *fused.  A node that starts none is left alone.
 */
GsCode
onnx_fuse_activation(Loader *L, size_t i, bool *fused)
{
	const Onnx__NodeProto *n = L->g->node[i];
	const char *op = n->op_type ? n->op_type : "";
	const char *h = L->cur;
	int64_t		j[8];
	float		c1,
				c2,
				c3 = 0.0f;
	GsMlpOp		kind;
	int			n_more;

	*fused = false;
	if ((n->domain && n->domain[0]) || n->n_output != 1 || !n->output[0] ||
		n->n_input < 1 || !n->input[0])
		return GS_OK;
	if (strcmp(op, "Mul") == 0 && (n_more = keras_gelu(L, i, j)) > 0)
	{
		kind = GS_MLP_GELU;
		c1 = 1.41421353816986083984375f;
		c3 = 0.5f;
	}
	else if (strcmp(op, "Add") == 0 && (n_more = keras_hard_swish(L, i, j)) > 0)
	{
		kind = GS_MLP_HARD_SWISH;
		c1 = c3 = 0.0f;
	}
	else if (strcmp(op, "Mul") == 0 && (n_more = keras_gelu_tanh(L, i, j)) > 0)
	{
		kind = GS_MLP_GELU_TANH;
		c1 = c3 = 0.0f;
	}
	else if (strcmp(n->input[0], h) != 0)
		return GS_OK;
	else if (strcmp(op, "Sigmoid") == 0 && n->n_input == 1)
	{
		/* s = Sigmoid(h); Mul(h, s) */
		if ((j[0] = onnx_sole_reader(L, i, n->output[0], "Mul")) < 0 ||
			!onnx_takes(L->g->node[j[0]], h, n->output[0], true))
			return GS_OK;
		kind = GS_MLP_SILU;
		n_more = 1;
		c1 = c3 = 0.0f;
	}
	else if (strcmp(op, "Abs") == 0 && n->n_input == 1)
	{
		/* Div(h, Add(Abs(h), 1)) */
		if ((j[0] = onnx_sole_reader(L, i, n->output[0], "Add")) < 0 ||
			!onnx_const_scalar(L, onnx_other_input(L->g->node[j[0]], n->output[0]), &c2) || c2 != 1.0f ||
			(j[1] = onnx_sole_reader(L, (size_t) j[0], L->g->node[j[0]]->output[0], "Div")) < 0 ||
			!onnx_takes(L->g->node[j[1]], h, L->g->node[j[0]]->output[0], false))
			return GS_OK;
		kind = GS_MLP_SOFTSIGN;
		n_more = 2;
		c1 = c3 = 0.0f;
	}
	else if (strcmp(op, "Div") == 0 && n->n_input == 2)
	{
		/* Mul(Mul(h, Add(Erf(Div(h, c1)), 1)), c3) */
		const Onnx__NodeProto *add,
				   *mul1,
				   *mul2;

		if (!onnx_const_scalar(L, n->input[1], &c1) || !(c1 > 1.414f && c1 < 1.4143f) ||
			(j[0] = onnx_sole_reader(L, i, n->output[0], "Erf")) < 0 ||
			(j[1] = onnx_sole_reader(L, (size_t) j[0], L->g->node[j[0]]->output[0], "Add")) < 0)
			return GS_OK;
		add = L->g->node[j[1]];
		if (!onnx_const_scalar(L, onnx_other_input(add, L->g->node[j[0]]->output[0]), &c2) || c2 != 1.0f ||
			(j[2] = onnx_sole_reader(L, (size_t) j[1], add->output[0], "Mul")) < 0)
			return GS_OK;
		mul1 = L->g->node[j[2]];
		if ((j[3] = onnx_sole_reader(L, (size_t) j[2], mul1->output[0], "Mul")) < 0)
			return GS_OK;
		mul2 = L->g->node[j[3]];
		if (onnx_takes(mul1, h, add->output[0], true))
		{
			/* PyTorch 1.x: (h * (erf + 1)) * c3 */
			if (!onnx_const_scalar(L, onnx_other_input(mul2, mul1->output[0]), &c3))
				return GS_OK;
		}
		else if (!onnx_const_scalar(L, onnx_other_input(mul1, add->output[0]), &c3) ||
				 !onnx_takes(mul2, h, mul1->output[0], true))
			return GS_OK;		/* PyTorch 2.x: h * (c3 * (erf + 1)), the same
								 * value when c3 is 0.5 (a power of two) */
		if (!(c3 > 0.49f && c3 < 0.51f))
			return GS_OK;
		kind = GS_MLP_GELU;
		n_more = 4;
	}
	else if (strcmp(op, "Pow") == 0 && n->n_input == 2)
	{
		/* GELU, tanh form, as PyTorch 2.x writes it below opset 20 */
		float		c;

		if (!onnx_const_scalar(L, n->input[1], &c) || c != 3.0f ||
			!gelu_tanh_walk(L, i, torch2_gelu, 7, NULL, j))
			return GS_OK;
		kind = GS_MLP_GELU_TANH;
		n_more = 7;
		c1 = 0.0f;
	}
	else if (strcmp(op, "Mul") == 0 && n->n_input == 2 && n->input[1] && strcmp(n->input[1], h) == 0)
	{
		/* GELU, tanh form, the cube from Mul(h, h): PyTorch 1.x, jax2onnx */
		if (!gelu_tanh_walk(L, i, torch1_gelu, 8, NULL, j) &&
			!gelu_tanh_walk(L, i, jax_gelu, 8, NULL, j))
			return GS_OK;
		kind = GS_MLP_GELU_TANH;
		n_more = 8;
		c1 = 0.0f;
	}
	else if (strcmp(op, "Softplus") == 0 && (n_more = mish_pattern(L, i, j)) > 0)
	{
		kind = GS_MLP_MISH;
		c1 = c3 = 0.0f;
	}
	else if ((strcmp(op, "Softplus") == 0 || strcmp(op, "Mul") == 0) &&
			 (n_more = softplus_pattern(L, i, j, &c1, &c3)) > 0)
		kind = GS_MLP_SOFTPLUS;
	else
		return GS_OK;

	{
		const Onnx__NodeProto *last = L->g->node[j[n_more - 1]];
		GsMlpStep  *s;

		/* the step and messages are named after the pattern's last node */
		if ((s = onnx_new_step(L, kind, last->name)) == NULL)
			return L->st->code;
		s->alpha = c1;
		s->beta = c3;
		for (int k = 0; k < n_more; k++)
			L->needed[j[k]] = false;
		L->cur = last->output[0];
		*fused = true;
	}
	return GS_OK;
}

/*
 * onnx_skip.c
 *	  Skip connections and branches of a network, kept one chain of steps
 *	  (mlp.h).  The chain's values are noted as the loader reaches them
 *	  (onnx_chain_note).  An Add of the chain's value and a value the chain
 *	  reached earlier (a residual block, out = h + f(h), as PyTorch's
 *	  exporter writes it) becomes a GS_MLP_SAVE step, inserted where the
 *	  earlier value was complete, and a GS_MLP_ADD_SAVED step; a Mul or a
 *	  Sub a MUL_SAVED, SUB_SAVED or RSUB_SAVED (gates, cross layers), a
 *	  Concat over the columns CONCAT_SAVED steps (onnx_add_join,
 *	  onnx_add_concat).
 *
 *	  A node that reads an earlier value and not the current one starts a
 *	  second branch (a projection on the shortcut, the deep part of a wide &
 *	  deep model): the earlier value is saved where it was complete and a
 *	  GS_MLP_LOAD step goes back to it (onnx_chain_branch); the node that
 *	  joins the branches then reads the first branch's end as an earlier
 *	  value.  A Mean of two values (jax2onnx's Keras Average) is an
 *	  ADD_SAVED and a Mul by 0.5 (onnx_add_mean); PyTorch's nn.GLU, a Split
 *	  into halves gated by a Sigmoid, is kept as a value and two GATHERs of
 *	  it (onnx_fuse_glu).  Other joins of two values (Div, a Concat over the
 *	  rows) are refused by the chain's checks, naming the node.
 *
 *	  Once the network is built, onnx_pack_slots lets values whose
 *	  lifetimes do not overlap share a slot.
 */
#include "onnx_internal.h"
#include "mlp/mlp_eval.h"

#include <stdio.h>
#include <string.h>

/* One value the chain reached. */
typedef struct OnnxChainValue
{
	const char *name;			/* the graph's name for it */
	int32_t		n_steps;		/* it is the output of steps [0, n_steps) */
	int32_t		width;
	bool		usable;			/* false: a MatMul's output before its bias
								 * Add, or a value squeezed to [N] */
} OnnxChainValue;

/* Note the chain's value (L->cur) when it is new; see onnx_internal.h. */
GsCode
onnx_chain_note(Loader *L)
{
	OnnxChainValue *v;

	if (L->cur == NULL || L->m == NULL)
		return GS_OK;
	if (L->n_values > 0 && strcmp(L->values[L->n_values - 1].name, L->cur) == 0)
		return GS_OK;
	if (L->values == NULL)
	{
		/* a value after each node, and one more for each node that starts a branch */
		L->cap_values = 2 * (int32_t) L->g->n_node + 2;
		L->values = onnx_alloc(L, sizeof(OnnxChainValue) * (size_t) L->cap_values);
		if (L->values == NULL)
			return onnx_nomem(L);
	}
	if (L->n_values >= L->cap_values)
		return GS_OK;			/* cannot happen: two values per node at most */
	v = &L->values[L->n_values++];
	v->name = L->cur;
	v->n_steps = L->m->n_steps;
	v->width = L->width;
	v->usable = !L->rank1 && !(L->biasless_dense >= 0 && L->biasless_dense == L->m->n_steps - 1);
	return GS_OK;
}

/* Release what onnx_chain_note and onnx_read_order allocated. */
void
onnx_chain_free(Loader *L)
{
	if (L->values)
		L->alloc.free(L->alloc.ctx, L->values);
	L->values = NULL;
	L->n_values = 0;
	if (L->order)
		L->alloc.free(L->alloc.ctx, L->order);
	L->order = NULL;
	L->n_order = 0;
}

/* The earlier value of the chain named name, or NULL. */
static const OnnxChainValue *
find_value(const Loader *L, const char *name)
{
	for (int32_t i = L->n_values - 1; i >= 0; i--)
		if (strcmp(L->values[i].name, name) == 0)
			return &L->values[i];
	return NULL;
}

/* Is name a value the chain reached before its current one? */
bool
onnx_is_earlier_value(const Loader *L, const char *name)
{
	return name && !onnx_is_cur(L, name) && find_value(L, name) != NULL;
}

/*
 * The slot of a SAVE step keeping the output of steps [0, at): the SAVE
 * already there, or one inserted at index at (the steps after it move up
 * one, and so does every index the loader keeps of them).
 */
static GsCode
save_slot(Loader *L, const Onnx__NodeProto *node, int32_t at, int32_t width, int32_t *slot)
{
	GsMlp	   *m = L->m;
	GsMlpStep  *s;

	if (at < m->n_steps && m->steps[at].op == GS_MLP_SAVE)
	{
		*slot = m->steps[at].slot;
		return GS_OK;
	}
	if (m->n_slots >= GS_MLP_MAX_SLOTS)
		return gs_status_set(L->st, GS_ERR_LIMIT,
							 "%s takes the network past %d skip connections",
							 L->label, GS_MLP_MAX_SLOTS);
	if (m->n_steps >= L->cap_steps)
		return gs_status_set(L->st, GS_ERR_LIMIT, "the network has more than %d steps", GS_MLP_MAX_STEPS);
	memmove(&m->steps[at + 1], &m->steps[at], sizeof(GsMlpStep) * (size_t) (m->n_steps - at));
	m->n_steps++;
	s = &m->steps[at];
	memset(s, 0, sizeof(*s));
	s->op = GS_MLP_SAVE;
	s->n_in = width;
	s->n_out = width;
	s->slot = m->n_slots++;
	onnx_safe_name(s->node, sizeof(s->node), node->name);
	if (L->biasless_dense >= at)
		L->biasless_dense++;
	for (int32_t i = 0; i < L->n_values; i++)
		if (L->values[i].n_steps > at)
			L->values[i].n_steps++;
	*slot = s->slot;
	return GS_OK;
}

/*
 * Is v, an earlier value of the chain, still the output of its steps as it
 * was noted?  Else the error is set: a MatMul's output before its bias (the
 * bias was added to the step since), a value squeezed to [N].
 */
static bool
kept_value(Loader *L, const OnnxChainValue *v)
{
	int32_t		at = v->n_steps;

	if (v->usable &&
		v->width == (at == 0 ? L->m->n_features : L->m->steps[at - 1].n_out))
		return true;
	gs_status_set(L->st, GS_ERR_UNSUPPORTED,
				  "%s reads a value of the chain that no step keeps", L->label);
	gs_status_detail(L->st, "A skip connection or a branch must start at the output of a layer, an "
					 "activation or the input, not between a MatMul and its bias or after a squeeze "
					 "to [N].");
	return false;
}

/*
 * Add, Mul or Sub of the chain's value and an earlier one: the end of a skip
 * connection or the join of two branches; see onnx_internal.h.
 */
GsCode
onnx_add_join(Loader *L, const Onnx__NodeProto *node, const char *earlier, GsMlpOp op)
{
	const OnnxChainValue *v = find_value(L, earlier);
	int32_t		slot = 0;
	GsMlpStep  *s;

	if (v == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s does not read a value of the chain", L->label);
	if (!kept_value(L, v))
		return L->st->code;
	if (v->width != L->width || L->rank1)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "%s joins a value of %d columns to one of %d", L->label, v->width, L->width);
		gs_status_detail(L->st, "Two values of the network joined element-wise must have the same width "
						 "(no broadcasting).");
		return L->st->code;
	}
	if (save_slot(L, node, v->n_steps, v->width, &slot) != GS_OK)
		return L->st->code;
	if ((s = onnx_new_step(L, op, node->name)) == NULL)
		return L->st->code;
	s->slot = slot;
	return GS_OK;
}

/*
 * Mean of the chain's value and an earlier one (jax2onnx's Keras Average
 * of two layers): an ADD_SAVED join, then a MUL by 0.5, the same floats as
 * onnxruntime's sum divided by 2.  Other counts of values are refused.
 */
GsCode
onnx_add_mean(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const no_attrs[] = {NULL};
	const char *other;
	float	   *half;
	GsMlpStep  *s;

	if (onnx_attrs_allowed(L, node, no_attrs) != GS_OK)
		return L->st->code;
	if (node->n_input != 2 || !node->input[0] || !node->input[1])
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s averages %zu values; only the mean of two values of the network is supported",
							 L->label, node->n_input);
	if (onnx_is_cur(L, node->input[0]))
		other = node->input[1];
	else if (onnx_is_cur(L, node->input[1]))
		other = node->input[0];
	else
		return onnx_want_chain_input(L, node, 2, 2);
	if (onnx_find_const(L, other) != NULL || !onnx_is_earlier_value(L, other))
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s is supported only as the mean of two values of the network", L->label);
	if (onnx_add_join(L, node, other, GS_MLP_ADD_SAVED) != GS_OK)
		return L->st->code;
	if ((half = onnx_alloc(L, sizeof(float) * (size_t) L->width)) == NULL)
		return onnx_nomem(L);
	for (int32_t c = 0; c < L->width; c++)
		half[c] = 0.5f;
	if ((s = onnx_new_step(L, GS_MLP_MUL, node->name)) == NULL)
	{
		L->alloc.free(L->alloc.ctx, half);
		return L->st->code;
	}
	s->p = half;
	return GS_OK;
}

/*
 * Concat over the columns of the chain's value and earlier ones, in the
 * node's order: one CONCAT_SAVED step per earlier value, those before the
 * chain's value prepended nearest first, those after it appended.
 */
GsCode
onnx_add_concat(Loader *L, const Onnx__NodeProto *node)
{
	static const char *const attrs[] = {"axis", NULL};
	int64_t		axis;
	size_t		at_cur = node->n_input;
	int64_t		width = L->width;

	if (onnx_attrs_allowed(L, node, attrs) != GS_OK ||
		onnx_attr_int(L, node, "axis", 0, &axis) != GS_OK)
		return L->st->code;
	if (axis != 1 && axis != -1)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "%s does not join values over their columns (axis %lld)",
							 L->label, (long long) axis);
	for (size_t k = 0; k < node->n_input; k++)
	{
		const OnnxChainValue *v;

		if (node->input[k] && onnx_is_cur(L, node->input[k]) && at_cur == node->n_input)
		{
			at_cur = k;
			continue;
		}
		v = node->input[k] ? find_value(L, node->input[k]) : NULL;
		if (v == NULL)
		{
			char		iname[80];

			onnx_safe_name(iname, sizeof(iname), node->input[k]);
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "input \"%s\" of %s is not a value of the network", iname, L->label);
		}
		if (!kept_value(L, v))
			return L->st->code;
		width += v->width;
	}
	if (at_cur == node->n_input || L->rank1)
		return onnx_want_chain_input(L, node, 1, node->n_input);
	if (width > GS_MLP_MAX_WIDTH)
		return gs_status_set(L->st, GS_ERR_LIMIT, "%s has %lld columns, the limit is %d",
							 L->label, (long long) width, GS_MLP_MAX_WIDTH);
	for (size_t i = 1; i < node->n_input; i++)
	{
		/* the inputs nearest the chain's value first: before it, then after it */
		size_t		k = i <= at_cur ? at_cur - i : i;
		const OnnxChainValue *v = find_value(L, node->input[k]);
		int32_t		slot = 0;
		GsMlpStep  *s;

		if (save_slot(L, node, v->n_steps, v->width, &slot) != GS_OK ||
			(s = onnx_new_step(L, GS_MLP_CONCAT_SAVED, node->name)) == NULL)
			return L->st->code;
		s->slot = slot;
		s->alpha = k < at_cur ? 1.0f : 0.0f;
		s->n_out = L->width + v->width;
		L->width = s->n_out;
	}
	return GS_OK;
}

/*
 * Node i reads a value the chain reached earlier and not the chain's
 * current one: go back to that value (a SAVE where it was complete, a LOAD
 * here), so that node i continues the chain from it.  Nothing happens for
 * a node reading the current value, or no value of the chain.
 */
GsCode
onnx_chain_branch(Loader *L, const Onnx__NodeProto *node)
{
	const OnnxChainValue *v = NULL;
	int32_t		slot = 0,
				at,
				width;
	GsMlpStep  *s;

	if (L->m == NULL || L->cur == NULL)
		return GS_OK;
	for (size_t k = 0; k < node->n_input; k++)
	{
		const char *in = node->input[k];

		if (in == NULL || in[0] == '\0' || onnx_find_const(L, in))
			continue;
		if (onnx_is_cur(L, in))
			return GS_OK;
		if (v == NULL)
			v = find_value(L, in);
	}
	if (v == NULL)
		return GS_OK;
	at = v->n_steps;
	width = v->width;
	{
		char		nname[80],
					oname[48];

		onnx_safe_name(nname, sizeof(nname), node->name);
		onnx_safe_name(oname, sizeof(oname), node->op_type);
		snprintf(L->label, sizeof(L->label), "node \"%s\" (%s)", nname, oname);
	}
	if (!kept_value(L, v))
		return L->st->code;
	if (save_slot(L, node, at, width, &slot) != GS_OK)
		return L->st->code;
	if ((s = onnx_new_step(L, GS_MLP_LOAD, node->name)) == NULL)
		return L->st->code;
	s->slot = slot;
	s->n_out = width;
	L->cur = v->name;
	L->width = width;
	L->rank1 = false;
	return onnx_chain_note(L);
}

/*
 * Give the saved values slots by their lifetimes: a value's slot is free
 * again after the last step that reads it, and a later SAVE takes the
 * lowest free one; see onnx_internal.h.  A ResNet's blocks then share one
 * slot, which keeps the scratch (CPU) and buffers (GPU) small and the
 * slot in cache.
 */
void
onnx_pack_slots(GsMlp *m)
{
	int32_t		last_use[GS_MLP_MAX_SLOTS],
				slot_of[GS_MLP_MAX_SLOTS],
				owner[GS_MLP_MAX_SLOTS],	/* physical slot -> value, or -1 */
				n_phys = 0;

	if (m->n_slots == 0)
		return;
	for (int32_t k = 0; k < m->n_slots; k++)
		last_use[k] = -1;
	for (int32_t i = 0; i < m->n_steps; i++)
		if (gs_mlp_is_skip(m->steps[i].op))
			last_use[m->steps[i].slot] = i;
	for (int32_t i = 0; i < m->n_steps; i++)
	{
		GsMlpStep  *s = &m->steps[i];
		int32_t		p = 0;

		if (!gs_mlp_is_skip(s->op))
			continue;
		if (s->op == GS_MLP_SAVE)
		{
			/* the lowest slot whose value nothing reads from here on */
			while (p < n_phys && owner[p] >= 0 && last_use[owner[p]] > i)
				p++;
			if (p == n_phys)
				n_phys++;
			owner[p] = s->slot;
			slot_of[s->slot] = p;
		}
		s->slot = slot_of[s->slot];
	}
	m->n_slots = n_phys;
}

/* A GATHER of columns [from, from + n) of the chain's value; NULL with the status set. */
static GsMlpStep *
gather_range(Loader *L, const char *name, int32_t from, int32_t n)
{
	int32_t    *idx = onnx_alloc(L, sizeof(int32_t) * (size_t) n);
	GsMlpStep  *s;

	if (idx == NULL)
	{
		onnx_nomem(L);
		return NULL;
	}
	for (int32_t c = 0; c < n; c++)
		idx[c] = from + c;
	if ((s = onnx_new_step(L, GS_MLP_GATHER, name)) == NULL)
	{
		L->alloc.free(L->alloc.ctx, idx);
		return NULL;
	}
	s->idx = idx;
	s->n_out = n;
	L->width = n;
	return s;
}

/* Does Split node n cut its [N, W] input into two halves over the columns? */
static bool
split_halves(Loader *L, const Onnx__NodeProto *n)
{
	static const char *const attrs[] = {"axis", "split", "num_outputs", NULL};
	const Onnx__AttributeProto *a;
	int64_t		axis,
				parts = 2,
				sizes[2] = {L->width / 2, L->width / 2},
				k = 2;

	if (onnx_attrs_allowed(L, n, attrs) != GS_OK || onnx_attr_int(L, n, "axis", 0, &axis) != GS_OK ||
		onnx_attr_int(L, n, "num_outputs", 2, &parts) != GS_OK)
	{
		gs_status_clear(L->st);
		return false;
	}
	if ((axis != 1 && axis != -1) || parts != 2 || L->width % 2 != 0 || L->rank1)
		return false;
	if ((a = onnx_attr_find(n, "split")) != NULL)
		return a->n_ints == 2 && a->ints[0] == sizes[0] && a->ints[1] == sizes[1];
	if (n->n_input == 2 && n->input[1] && n->input[1][0])
	{
		const Onnx__TensorProto *t = onnx_find_const(L, n->input[1]);
		int64_t		got[2];
		bool		ok = t && onnx_tensor_int64s(L, t, 2, &k, got) == GS_OK && k == 2 &&
			got[0] == sizes[0] && got[1] == sizes[1];

		gs_status_clear(L->st);
		return ok;
	}
	return n->n_input == 1;
}

/*
 * A gated linear unit, PyTorch's nn.GLU over the columns, from node i =
 * Split(h) into halves a and b: Mul(a, Sigmoid(b)), either operand order,
 * each value read by the pattern alone.  Steps: SAVE h, GATHER b, SIGMOID,
 * SAVE it, LOAD h, GATHER a, MUL_SAVED; the same floats as onnxruntime's.
 */
GsCode
onnx_fuse_glu(Loader *L, size_t i, bool *fused)
{
	const Onnx__NodeProto *n = L->g->node[i];
	int64_t		sg,
				mul;
	int32_t		w = L->width,
				half = L->width / 2,
				slot_h,
				slot_g;
	GsMlpStep  *s;
	char		nname[80];

	*fused = false;
	if (!n->op_type || strcmp(n->op_type, "Split") != 0 || (n->domain && n->domain[0]) ||
		n->n_input < 1 || !n->input[0] || !onnx_is_cur(L, n->input[0]) || n->n_output != 2 ||
		!n->output[0] || !n->output[0][0] || !n->output[1] || !n->output[1][0] || !split_halves(L, n))
		return GS_OK;
	sg = onnx_sole_reader(L, i, n->output[1], "Sigmoid");
	if (sg < 0 || L->g->node[sg]->n_input != 1 || L->g->node[sg]->n_output != 1 ||
		L->g->node[sg]->n_attribute != 0 || !L->g->node[sg]->output[0] ||
		(mul = onnx_sole_reader(L, i, n->output[0], "Mul")) < 0 ||
		onnx_sole_reader(L, (size_t) sg, L->g->node[sg]->output[0], "Mul") != mul ||
		L->g->node[mul]->n_attribute != 0 || L->g->node[mul]->n_output != 1 ||
		!onnx_takes(L->g->node[mul], n->output[0], L->g->node[sg]->output[0], true))
		return GS_OK;
	onnx_safe_name(nname, sizeof(nname), L->g->node[mul]->name);
	snprintf(L->label, sizeof(L->label), "node \"%s\" (Mul of a gated linear unit)", nname);
	if (save_slot(L, n, L->m->n_steps, w, &slot_h) != GS_OK ||
		gather_range(L, n->name, half, half) == NULL ||
		onnx_new_step(L, GS_MLP_SIGMOID, L->g->node[sg]->name) == NULL ||
		save_slot(L, L->g->node[sg], L->m->n_steps, half, &slot_g) != GS_OK ||
		(s = onnx_new_step(L, GS_MLP_LOAD, n->name)) == NULL)
		return L->st->code;
	s->slot = slot_h;
	s->n_out = w;
	L->width = w;
	if (gather_range(L, n->name, 0, half) == NULL ||
		(s = onnx_new_step(L, GS_MLP_MUL_SAVED, L->g->node[mul]->name)) == NULL)
		return L->st->code;
	s->slot = slot_g;
	L->needed[sg] = L->needed[mul] = false;
	L->cur = L->g->node[mul]->output[0];
	*fused = true;
	return GS_OK;
}

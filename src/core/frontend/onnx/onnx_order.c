/*
 * onnx_order.c
 *	  The order in which the loader reads a network's nodes: the graph's
 *	  own (topological) order, except that a node reading the value the
 *	  last node made comes first.
 *
 * tf2onnx writes the layers of a Keras functional model with branches
 * interleaved: a wide & deep model's deep MatMul, then the wide part's
 * MatMul, then the deep MatMul's bias Add.  Read in that order, the bias
 * Add would start a branch back to a MatMul's output before its bias,
 * which no step keeps (onnx_skip.c).  Following each value to its readers
 * first keeps every branch in one piece: the deep part to its end, then
 * the wide part from the input.  Where the graph already runs branch by
 * branch (PyTorch writes nodes in execution order) the order is the
 * graph's.
 *
 * A node is ready once the needed nodes making its inputs were read;
 * among the ready nodes reading the last node's outputs the first in the
 * graph is taken, else the first ready node.  A graph whose nodes are
 * never all ready (an input made by no node before it) keeps the graph's
 * order from there, and the chain's checks refuse it as before.
 */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

/* An output of a needed node, for the lookup by name. */
typedef struct Made
{
	const char *name;
	int32_t		node;
} Made;

static int
made_cmp(const void *a, const void *b)
{
	return strcmp(((const Made *) a)->name, ((const Made *) b)->name);
}

/* The needed node making name, or -1 (an input, a constant, nothing). */
static int32_t
maker(const Made *made, size_t n_made, const char *name)
{
	Made		key = {name, -1};
	const Made *m;

	if (name == NULL || name[0] == '\0')
		return -1;
	m = bsearch(&key, made, n_made, sizeof(Made), made_cmp);
	return m ? m->node : -1;
}

/* See onnx_internal.h. */
GsCode
onnx_read_order(Loader *L)
{
	const Onnx__GraphProto *g = L->g;
	size_t		n = g->n_node,
				n_made = 0,
				n_edges = 0;
	Made	   *made = NULL;
	int32_t    *dep_start = NULL,	/* node i's makers: deps[dep_start[i] .. [i + 1]) */
			   *deps = NULL,
			   *left = NULL;	/* makers not yet read, per node */
	bool	   *done = NULL;
	int32_t		first = 0,
				last = -1;
	GsCode		rc = GS_OK;

	L->order = onnx_alloc(L, sizeof(int32_t) * (n + 1));
	made = onnx_alloc(L, sizeof(Made) * (n + 1) * 4);
	dep_start = onnx_alloc(L, sizeof(int32_t) * (n + 1));
	left = onnx_alloc(L, sizeof(int32_t) * (n + 1));
	done = onnx_alloc(L, sizeof(bool) * (n + 1));
	if (!L->order || !made || !dep_start || !left || !done)
	{
		rc = onnx_nomem(L);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (L->needed[i])
			for (size_t k = 0; k < g->node[i]->n_output && k < 4; k++)
				if (g->node[i]->output[k] && g->node[i]->output[k][0])
					made[n_made++] = (Made) {g->node[i]->output[k], (int32_t) i};
	qsort(made, n_made, sizeof(Made), made_cmp);
	for (size_t i = 0; i < n; i++)
		n_edges += L->needed[i] ? g->node[i]->n_input : 0;
	if ((deps = onnx_alloc(L, sizeof(int32_t) * (n_edges + 1))) == NULL)
	{
		rc = onnx_nomem(L);
		goto out;
	}
	n_edges = 0;
	for (size_t i = 0; i < n; i++)
	{
		dep_start[i] = (int32_t) n_edges;
		done[i] = !L->needed[i];
		for (size_t k = 0; L->needed[i] && k < g->node[i]->n_input; k++)
		{
			int32_t		j = maker(made, n_made, g->node[i]->input[k]);

			if (j >= 0 && j != (int32_t) i)
				deps[n_edges++] = j;
		}
		left[i] = (int32_t) n_edges - dep_start[i];
	}
	dep_start[n] = (int32_t) n_edges;

	L->n_order = 0;
	for (;;)
	{
		int32_t		pick = -1;

		while (first < (int32_t) n && done[first])
			first++;
		if (first >= (int32_t) n)
			break;
		/* the first ready node reading the last one's outputs, else the first ready one */
		for (int32_t i = first; i < (int32_t) n && pick < 0 && last >= 0; i++)
			if (!done[i] && left[i] == 0)
				for (int32_t e = dep_start[i]; e < dep_start[i + 1] && pick < 0; e++)
					if (deps[e] == last)
						pick = i;
		for (int32_t i = first; i < (int32_t) n && pick < 0; i++)
			if (!done[i] && left[i] == 0)
				pick = i;
		if (pick < 0)
			pick = first;		/* never ready: the graph's order, refused later */
		done[pick] = true;
		L->order[L->n_order++] = pick;
		last = pick;
		for (int32_t i = first; i < (int32_t) n; i++)
			if (!done[i])
				for (int32_t e = dep_start[i]; e < dep_start[i + 1]; e++)
					if (deps[e] == pick)
						left[i]--;
	}

out:
	if (made)
		L->alloc.free(L->alloc.ctx, made);
	if (dep_start)
		L->alloc.free(L->alloc.ctx, dep_start);
	if (deps)
		L->alloc.free(L->alloc.ctx, deps);
	if (left)
		L->alloc.free(L->alloc.ctx, left);
	if (done)
		L->alloc.free(L->alloc.ctx, done);
	return rc;
}

/*
 * onnx_load.c
 *	  ONNX ModelProto bytes -> validated GsMlp (see onnx_load.h, mlp.h).
 *
 * Decoding is protobuf-c's, with the message code protoc-c generates from
 * ONNX's onnx.proto (onnx.pb-c.c, made by the Makefile).  protobuf-c
 * allocates through our ProtobufCAllocator, which (1) counts bytes against
 * a cap, and (2) refuses to allocate once the C stack is more than
 * GS_ONNX_MAX_STACK bytes deeper than where decoding started: protobuf-c
 * recurses once per nested message and allocates each message first, so a
 * hostile file nesting graphs in attributes in graphs ... fails cleanly
 * instead of overflowing the stack.  The decoded message tree is temporary
 * and freed before returning.
 *
 * Only the nodes the scored output depends on are translated
 * (onnx_output.c chooses them).
 *
 * The translated nodes must be one chain: each node (Constant nodes aside)
 * takes the tensor the previous node produced as its only non-constant
 * input.  Constants are initializers, Constant nodes, or the outputs of
 * nodes that take only constants, folded at load time (onnx_fold.c);
 * tensors with external data are refused (they name files, and a model
 * must never make the server read a path).  Supported ops: Gemm, MatMul
 * (+ Add as bias), Relu, LeakyRelu, Sigmoid, Tanh, Softmax,
 * BatchNormalization (inference), Flatten, Identity, Dropout (inference),
 * Reshape when it is a no-op on [N, F], Cast to float (a no-op: the chain
 * is float), Add/Sub/Mul/Div by a constant scalar or per-column vector,
 * and ai.onnx.ml Scaler ((x - offset) * scale, as an ADD and a MUL step).  Every size the file claims is checked
 * against the caps and the bytes actually present before anything is
 * allocated from it.
 *
 * A graph holding an ai.onnx.ml TreeEnsemble* node (Regressor, Classifier,
 * or opset 5's TreeEnsemble) is a tree ensemble instead, built into a
 * GsForest by onnx_trees.c.
 *
 * This file: decoding, the graph's input, the chain as a whole.
 * Per-node translation is in onnx_ops.c, tensors and attributes in
 * onnx_tensor.c, tree ensembles in onnx_trees.c (shared declarations:
 * onnx_internal.h).
 */
#include "onnx_load.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"
#include "frontend/common/load_checks.h"
#include "mlp/mlp_eval.h"

/* ---- protobuf-c allocator: byte cap and stack-depth guard ---- */

typedef struct PbAlloc
{
	const GsAllocator *alloc;
	uintptr_t	stack_base;
	size_t		used;
	size_t		cap;
	bool		too_deep;
	bool		over_cap;
	bool		nomem;
} PbAlloc;

#define PB_HDR 16				/* size header before each block, keeps alignment */

/* Allocate for protobuf-c, refusing past the byte cap or the stack limit. */
static void *
pb_alloc(void *data, size_t size)
{
	PbAlloc    *a = (PbAlloc *) data;
	uintptr_t	sp = (uintptr_t) __builtin_frame_address(0);
	size_t		depth = sp > a->stack_base ? sp - a->stack_base : a->stack_base - sp;
	unsigned char *p;

	if (depth > GS_ONNX_MAX_STACK)
	{
		a->too_deep = true;
		return NULL;
	}
	if (size > a->cap - a->used)
	{
		a->over_cap = true;
		return NULL;
	}
	p = a->alloc->alloc(a->alloc->ctx, size + PB_HDR);
	if (p == NULL)
	{
		a->nomem = true;
		return NULL;
	}
	memcpy(p, &size, sizeof(size));
	a->used += size;
	return p + PB_HDR;
}

/* Free a block of pb_alloc. */
static void
pb_free(void *data, void *ptr)
{
	PbAlloc    *a = (PbAlloc *) data;
	unsigned char *p;
	size_t		size;

	if (ptr == NULL)
		return;
	p = (unsigned char *) ptr - PB_HDR;
	memcpy(&size, p, sizeof(size));
	a->used -= size;
	a->alloc->free(a->alloc->ctx, p);
}

/*
 * The graph's real inputs (not initializers), at most cap of them, into
 * in[]; their number in *n (which may exceed cap: only cap are stored).
 */
void
onnx_graph_inputs(const Loader *L, const Onnx__ValueInfoProto **in, int cap, int *n)
{
	*n = 0;
	for (size_t i = 0; i < L->g->n_input; i++)
	{
		bool		is_init = false;

		for (size_t k = 0; k < L->g->n_initializer && !is_init; k++)
			is_init = L->g->input[i]->name && L->g->initializer[k]->name &&
				strcmp(L->g->input[i]->name, L->g->initializer[k]->name) == 0;
		if (is_init)
			continue;
		if (*n < cap)
			in[*n] = L->g->input[i];
		(*n)++;
	}
}

/*
 * Check a graph input: a named float [N, w] tensor with w fixed, at least
 * 1 and at most cap; what names it in messages ("the graph's input").
 */
GsCode
onnx_input_width(Loader *L, const Onnx__ValueInfoProto *in, const char *what, int32_t cap,
				 int32_t *width)
{
	const Onnx__TypeProto__Tensor *tt;

	if (in->name == NULL || in->name[0] == '\0')
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has no name", what);
	if (in->type == NULL || in->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
		(tt = in->type->tensor_type) == NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s is not a tensor", what);
	if (!tt->has_elem_type || tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s has element type %s, expected float", what,
					  onnx_elem_type_name(tt->has_elem_type ? tt->elem_type : 0));
		gs_status_detail(L->st, "Features are float32. Convert the model from float32 data: "
						 "to_onnx(model, X.astype(np.float32)[:1]), or df.astype(np.float32) for a DataFrame.");
		return L->st->code;
	}
	if (tt->shape == NULL || tt->shape->n_dim != 2)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s is not a matrix [N, F]", what);
	if (tt->shape->dim[1]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "%s does not fix its number of features", what);
	if (tt->shape->dim[1]->dim_value < 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "%s has %lld features", what,
							 (long long) tt->shape->dim[1]->dim_value);
	if (tt->shape->dim[1]->dim_value > cap)
		return gs_status_limit(L->st, GS_LIMIT_FEATURES, cap, "the model has %lld features, more than the limit of %d",
							 (long long) tt->shape->dim[1]->dim_value, cap);
	*width = (int32_t) tt->shape->dim[1]->dim_value;
	return GS_OK;
}

/*
 * The graph's one real input: a float [N, F] tensor with F fixed, at most
 * the caller's max_features and width_cap; its name and F.
 */
GsCode
onnx_graph_input(Loader *L, int32_t width_cap, const char **name, int32_t *n_features)
{
	const Onnx__ValueInfoProto *in = NULL;
	int32_t		max_features = L->lim->max_features > 0 ? L->lim->max_features : INT32_MAX;
	int			n;

	onnx_graph_inputs(L, &in, 1, &n);
	if (n != 1)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the graph has %d inputs, expected one", n);
		gs_status_detail(L->st, "A network takes its features as one float tensor [N, F], or as one [N, w] "
						 "tensor per group of columns (skl2onnx's inputs for a pandas DataFrame); an input "
						 "with a fixed first dimension holds values the graph needs, not rows: export "
						 "the model with them inside.");
		return L->st->code;
	}
	if (onnx_input_width(L, in, "the graph's input", max_features < width_cap ? max_features : width_cap,
						 n_features) != GS_OK)
		return L->st->code;
	*name = in->name;
	return GS_OK;
}


/*
 * Does node make a constant: a Constant node, an Identity of a constant, or
 * a node that takes only constants and is folded (onnx_fold.c)?
 */
static bool
makes_constant(const Loader *L, const Onnx__NodeProto *node)
{
	if (node->op_type == NULL ||
		(node->domain && node->domain[0] && strcmp(node->domain, "ai.onnx") != 0))
		return false;
	if (strcmp(node->op_type, "Constant") == 0)
		return true;
	if (strcmp(node->op_type, "Identity") == 0 && node->n_input == 1 && onnx_find_const(L, node->input[0]))
		return true;
	return onnx_fold_applies(L, node);
}

/*
 * Is the first dimension of every real graph input left open (rows), not a
 * fixed size?  Keras 3's TensorFlow export leaves a Normalization layer's
 * mean and variance as inputs of shape [1, F].
 */
static bool
inputs_are_rows(const Loader *L)
{
	const Onnx__ValueInfoProto *in[64];
	int			n;

	onnx_graph_inputs(L, in, 64, &n);
	if (n > 64)
		return true;			/* onnx_mlp_prep refuses what it cannot read */
	for (int i = 0; i < n; i++)
	{
		const Onnx__TypeProto *t = in[i]->type;
		const Onnx__TensorShapeProto *sh;

		if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type &&
			(sh = t->tensor_type->shape) != NULL && sh->n_dim >= 1 &&
			sh->dim[0]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			return false;
	}
	return true;
}

/* Build the network from a decoded model. */
static GsCode
build(Loader *L, const Onnx__ModelProto *model, bool reconstruction)
{
	const Onnx__GraphProto *g = model->graph;
	GsMlp	   *m = L->m;
	size_t		cap;
	const Onnx__ValueInfoProto *out = NULL;
	const char *root = NULL;
	bool		binary = false;
	int			n_inputs;

	if (!model->has_ir_version || model->ir_version < 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the ONNX model has no IR version");
	if (g == NULL)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the ONNX model has no graph");
	L->opset = -1;
	for (size_t i = 0; i < model->n_opset_import; i++)
	{
		const char *d = model->opset_import[i]->domain;

		if ((d == NULL || d[0] == '\0' || strcmp(d, "ai.onnx") == 0) &&
			model->opset_import[i]->has_version)
			L->opset = model->opset_import[i]->version;
	}
	if (L->opset < 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "the ONNX model does not import the default operator set");
	if (g->n_node > GS_ONNX_MAX_NODES)
		return gs_status_set(L->st, GS_ERR_LIMIT, "the graph has %zu nodes, more than the limit of %d",
							 g->n_node, GS_ONNX_MAX_NODES);
	if (g->n_initializer > GS_ONNX_MAX_INITIALIZERS)
		return gs_status_set(L->st, GS_ERR_LIMIT,
							 "the graph has %zu initializers, more than the limit of %d",
							 g->n_initializer, GS_ONNX_MAX_INITIALIZERS);
	/* several inputs of rows: a DataFrame's columns, read by onnx_mlp_prep below */
	onnx_graph_inputs(L, NULL, 0, &n_inputs);
	if ((n_inputs <= 1 || !inputs_are_rows(L)) &&
		onnx_graph_input(L, GS_MLP_MAX_WIDTH, &L->cur, &L->width) != GS_OK)
		return L->st->code;
	m->n_features = L->width;

	cap = 2 * g->n_node + 2;
	L->cap_steps = cap > GS_MLP_MAX_STEPS ? GS_MLP_MAX_STEPS : (int32_t) cap;
	m->steps = onnx_alloc(L, sizeof(GsMlpStep) * (size_t) L->cap_steps);
	L->consts = onnx_alloc(L, sizeof(*L->consts) * (g->n_node + 1));
	L->const_names = onnx_alloc(L, sizeof(*L->const_names) * (g->n_node + 1));
	if (m->steps == NULL || L->consts == NULL || L->const_names == NULL)
		return onnx_nomem(L);
	L->biasless_dense = -1;

	if (onnx_select_nodes(L, &out, &root, &binary) != GS_OK)
		return L->lost_alloc ? onnx_nomem(L) : L->st->code;
	L->root = root;
	/*
	 * Constants first, so that a pattern finds every constant it reads
	 * (jax2onnx reshapes a LayerNormalization's gamma after the node the
	 * pattern starts at); they leave L->needed.
	 */
	for (size_t i = 0; i < g->n_node; i++)
		if (L->needed[i] && makes_constant(L, g->node[i]))
		{
			if (onnx_add_node(L, g->node[i]) != GS_OK)
				return L->st->code;
			L->needed[i] = false;
		}
	if (onnx_mlp_wants_prep(L) && onnx_mlp_prep(L) != GS_OK)
		return L->lost_alloc ? onnx_nomem(L) : L->st->code;
	if (onnx_chain_note(L) != GS_OK || onnx_read_order(L) != GS_OK)
		return L->st->code;
	for (int32_t k = 0; k < L->n_order; k++)
	{
		size_t		i = (size_t) L->order[k];
		bool		fused = false;

		if (!L->needed[i])
			continue;
		/* a node starting a second branch: back to the value it reads */
		if (onnx_chain_branch(L, g->node[i]) != GS_OK)
			return L->st->code;
		/* a pattern or constant that could not be read for want of memory is no refusal */
		if (onnx_fuse_activation(L, i, &fused) != GS_OK ||
			(!fused && onnx_fuse_layernorm(L, i, &fused) != GS_OK) ||
			(!fused && onnx_fuse_keras_prelu(L, i, &fused) != GS_OK) ||
			(!fused && onnx_fuse_glu(L, i, &fused) != GS_OK) ||
			(!fused && onnx_add_node(L, g->node[i]) != GS_OK))
			return L->lost_alloc ? onnx_nomem(L) : L->st->code;
		if (L->lost_alloc)
			return onnx_nomem(L);
		if (onnx_chain_note(L) != GS_OK)
			return L->st->code;
	}
	if (onnx_check_output(L, out, root, binary) != GS_OK)
		return L->st->code;
	if (m->n_layers == 0)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED, "the graph has no Gemm or MatMul layer");

	m->n_net_outputs = L->width;
	onnx_pack_slots(m);
	m->max_width = m->n_features;
	for (int32_t i = 0; i < m->n_steps; i++)
		if (m->steps[i].n_out > m->max_width)
			m->max_width = m->steps[i].n_out;
	{
		GsMlpOp		last = m->steps[m->n_steps - 1].op;

		snprintf(m->output_act, sizeof(m->output_act), "%s",
				 last == GS_MLP_DENSE || last == GS_MLP_ADD || last == GS_MLP_MUL ||
				 last == GS_MLP_DIV || gs_mlp_is_skip(last) ? "identity" : gs_mlp_op_name(last));
	}
	if (model->producer_name && model->producer_name[0])
		onnx_producer(m->producer, sizeof(m->producer), model->producer_name, model->producer_version);
	m->reconstruction = reconstruction;
	if (reconstruction && m->steps[0].op == GS_MLP_GATHER)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "the autoencoder's network does not read the model's features in their order");
		gs_status_detail(L->st, "Reconstruction-error scoring compares each row's output with its input; "
						 "a ColumnTransformer or a DataFrame's inputs before the network are not supported there.");
		return L->st->code;
	}
	if (reconstruction && m->n_net_outputs != m->n_features)
	{
		gs_status_set(L->st, GS_ERR_INVALID_MODEL,
					  "the model is not an autoencoder: it has %d outputs for %d input features",
					  m->n_net_outputs, m->n_features);
		gs_status_detail(L->st, "Reconstruction-error scoring compares each row's output with its input.");
		return L->st->code;
	}
	m->n_outputs = reconstruction ? 1 : m->n_net_outputs;
	return GS_OK;
}

/*
 * A graph with an ai.onnx.ml tree-ensemble node: check the model's header,
 * then onnx_trees.c builds the forest.
 */
static GsCode
build_trees(Loader *L, const Onnx__ModelProto *model, bool reconstruction, GsForest **out)
{
	int			max_nodes = onnx_iforest_applies(L->g) ? GS_ONNX_MAX_IFOREST_NODES : GS_ONNX_MAX_NODES;

	if (!model->has_ir_version || model->ir_version < 1)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL, "the ONNX model has no IR version");
	if (L->g->n_node > (size_t) max_nodes)
		return gs_status_set(L->st, GS_ERR_LIMIT, "the graph has %zu nodes, more than the limit of %d",
							 L->g->n_node, max_nodes);
	if (L->g->n_initializer > GS_ONNX_MAX_INITIALIZERS)
		return gs_status_set(L->st, GS_ERR_LIMIT,
							 "the graph has %zu initializers, more than the limit of %d",
							 L->g->n_initializer, GS_ONNX_MAX_INITIALIZERS);
	if (L->g->n_input > GS_ONNX_MAX_INITIALIZERS + 1 || L->g->n_output > (size_t) max_nodes)
		return gs_status_set(L->st, GS_ERR_LIMIT, "the graph has %zu inputs and %zu outputs",
							 L->g->n_input, L->g->n_output);
	if (reconstruction)
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "the ONNX model is a tree ensemble, not an autoencoder");
		gs_status_detail(L->st, "Load it with format 'onnx'.");
		return L->st->code;
	}
	return onnx_trees_build(L, model, out);
}

/* Parse, validate and build; see onnx_load.h. */
GsCode
gs_onnx_load(const unsigned char *bytes, size_t len, bool reconstruction,
			 const GsLimits *lim, const GsAllocator *alloc, GsMlp **out,
			 GsForest **forest_out, GsStatus *st)
{
	PbAlloc		pa;
	ProtobufCAllocator pca;
	Onnx__ModelProto *model;
	Loader		L;
	GsMlp	   *m;
	GsCode		rc;

	*out = NULL;
	*forest_out = NULL;
	if ((rc = gs_load_open(len, &lim, st)) != GS_OK)
		return rc;

	/* the decoded tree: the tensors' bytes once more, plus bounded overhead */
	memset(&pa, 0, sizeof(pa));
	pa.alloc = alloc;
	pa.stack_base = (uintptr_t) __builtin_frame_address(0);
	pa.cap = (len > SIZE_MAX / 4 ? SIZE_MAX / 2 : 2 * len) + (size_t) 64 * 1024 * 1024;
	pca.alloc = pb_alloc;
	pca.free = pb_free;
	pca.allocator_data = &pa;
	model = onnx__model_proto__unpack(&pca, len, bytes);
	if (model == NULL)
	{
		if (pa.too_deep)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "the ONNX model nests messages too deeply");
		if (pa.nomem)
			return gs_status_set(st, GS_ERR_NOMEM, "out of memory decoding ONNX model");
		if (pa.over_cap)
			return gs_status_set(st, GS_ERR_LIMIT,
								 "decoding the ONNX model needs more than %zu bytes", pa.cap);
		gs_status_set(st, GS_ERR_INVALID_MODEL, "could not decode the ONNX model");
		gs_status_detail(st, "The bytes are not a complete ONNX ModelProto (truncated or not ONNX).");
		return st->code;
	}

	if (model->graph && onnx_graph_has_trees(model->graph))
	{
		memset(&L, 0, sizeof(L));
		L.g = model->graph;
		L.alloc = *alloc;
		L.lim = lim;
		L.st = st;
		rc = build_trees(&L, model, reconstruction, forest_out);
		onnx__model_proto__free_unpacked(model, &pca);
		return rc;
	}

	m = alloc->alloc(alloc->ctx, sizeof(GsMlp));
	if (m == NULL)
	{
		onnx__model_proto__free_unpacked(model, &pca);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading ONNX model");
	}
	memset(m, 0, sizeof(GsMlp));
	m->alloc = *alloc;
	memset(&L, 0, sizeof(L));
	L.g = model->graph;
	L.m = m;
	L.alloc = *alloc;
	L.lim = lim;
	L.st = st;
	rc = build(&L, model, reconstruction);
	onnx_fold_free(&L);
	onnx_chain_free(&L);
	if (L.consts)
		alloc->free(alloc->ctx, (void *) L.consts);
	if (L.const_names)
		alloc->free(alloc->ctx, (void *) L.const_names);
	if (L.needed)
		alloc->free(alloc->ctx, L.needed);
	onnx__model_proto__free_unpacked(model, &pca);
	if (rc != GS_OK)
	{
		gs_mlp_free(m);
		return rc;
	}
	*out = m;
	return GS_OK;
}

/*
 * onnx_internal.h
 *	  What the files of the ONNX loader share (onnx_load.c: decoding and the
 *	  graph; onnx_ops.c: one node at a time; onnx_tensor.c: tensors,
 *	  attributes and the chain's bookkeeping; onnx_fold.c: constant
 *	  subgraphs evaluated at load time; onnx_trees.c: ONNX-ML tree
 *	  ensembles into a GsForest).  Not a public interface: use onnx_load.h.
 *
 * A Loader lives on gs_onnx_load's stack for one load; the GsMlp or
 * GsForest it builds is owned by the caller on success and freed on
 * failure.  The constants it folds (onnx_fold.c) are freed when the load
 * ends.
 * The decoded protobuf tree it points into is freed before gs_onnx_load
 * returns.
 */
#ifndef GS_ONNX_INTERNAL_H
#define GS_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "onnx.pb-c.h"
#include "onnx_load.h"

typedef struct Loader
{
	const Onnx__GraphProto *g;
	int64_t		opset;			/* default-domain opset version */
	GsMlp	   *m;				/* the network being built (NULL for trees) */
	GsAllocator alloc;			/* the caller's allocator: everything built */
	int32_t		cap_steps;
	const Onnx__TensorProto **consts;	/* Constant-node and folded values */
	const char **const_names;
	int32_t		n_consts;
	struct FoldBlock *folded;	/* onnx_fold.c's values, freed by onnx_fold_free */
	int64_t		folded_floats;	/* values they hold */
	const char *cur;			/* name of the tensor the chain has reached */
	int32_t		width;			/* its columns */
	bool		rank1;			/* a Squeeze or Reshape made it [N] (width 1):
								 * only element-wise steps may follow */
	int32_t		biasless_dense; /* step index of a MatMul awaiting its Add, or -1 */
	bool	   *needed;			/* [n_node]: nodes the scored output depends on */
	const char *root;			/* the value the chain must end at */
	bool		two_class;		/* the chain's one column is the p of a
								 * declared [N, 2] binary classifier's output
								 * (onnx_linear.c) */
	bool		picked_output;	/* the scored output is an ArrayFeatureExtractor
								 * of a dense step's scores (onnx_linear.c),
								 * whose declared width skl2onnx may get wrong */
	struct OnnxChainValue *values;	/* the values the chain reached, in
									 * order (onnx_skip.c) */
	int32_t		n_values;
	int32_t		cap_values;
	int32_t    *order;			/* the nodes in the order they are read
								 * (onnx_order.c) */
	int32_t		n_order;
	bool		lost_alloc;		/* an allocation failed inside a test that then
								 * answered "no" (onnx_const_scalar): the load
								 * fails with out of memory, not a refusal */
	const GsLimits *lim;
	GsStatus   *st;
	char		label[160];		/* current node, for messages */
} Loader;

/* Dense layers allowed: the caller's cap, never above GS_MLP_MAX_LAYERS. */
static inline int32_t
onnx_max_layers(const Loader *L)
{
	int32_t		cap = L->lim->max_layers;

	return (cap > 0 && cap < GS_MLP_MAX_LAYERS) ? cap : GS_MLP_MAX_LAYERS;
}

/*
 * True (with the error set) when adding n parameters would take the
 * network past the caller's max_parameters; checked before the parameters'
 * memory is allocated.
 */
static inline bool
onnx_over_parameters(Loader *L, int64_t n)
{
	int64_t		cap = L->lim->max_parameters;

	if (cap <= 0 || (n <= cap && L->m->n_params <= cap - n))
		return false;
	gs_status_limit(L->st, GS_LIMIT_PARAMETERS, cap,
					"%s takes the network past %lld parameters",
				  L->label, (long long) cap);
	return true;
}


/* onnx_load.c: the graph's one float [N, F] input, F <= width_cap */
extern GsCode onnx_graph_input(Loader *L, int32_t width_cap, const char **name,
							   int32_t *n_features);
/* onnx_load.c: the graph's real inputs (at most cap stored, *n counts all) */
extern void onnx_graph_inputs(const Loader *L, const Onnx__ValueInfoProto **in, int cap, int *n);
/* onnx_load.c: one input, a float [N, w] with 1 <= w <= cap; what names it */
extern GsCode onnx_input_width(Loader *L, const Onnx__ValueInfoProto *in, const char *what,
							   int32_t cap, int32_t *width);

/*
 * onnx_output.c: choose the scored output (*out; NULL for a ZipMap's input)
 * and mark in L->needed the nodes it depends on (*root: the value the
 * chain must end at; *binary: a binary classifier's p); then, once the
 * chain is built, check it ends at root with the output's declared shape.
 */
extern GsCode onnx_select_nodes(Loader *L, const Onnx__ValueInfoProto **out, const char **root,
								bool *binary);
extern GsCode onnx_check_output(Loader *L, const Onnx__ValueInfoProto *out, const char *root,
								bool binary);

/* onnx_tensor.c */
extern void onnx_safe_name(char *dst, size_t cap, const char *src);
extern void *onnx_alloc(Loader *L, size_t size);
extern GsCode onnx_nomem(Loader *L);
extern void onnx_producer(char *dst, size_t cap, const char *name, const char *version);
extern const Onnx__TensorProto *onnx_find_const(const Loader *L, const char *name);
extern const Onnx__TensorProto *onnx_find_const_anywhere(const Loader *L, const char *name);
extern bool onnx_const_scalar(Loader *L, const char *name, float *v);
extern void onnx_register_const(Loader *L, const char *name, const Onnx__TensorProto *t);
extern const char *onnx_elem_type_name(int32_t t);
extern GsCode onnx_tensor_check(Loader *L, const Onnx__TensorProto *t, int32_t want_type,
								int64_t cap, int64_t *count);
extern GsCode onnx_tensor_floats(Loader *L, const Onnx__TensorProto *t, int64_t cap,
								 int64_t *count, float **vals);
extern GsCode onnx_tensor_int64s(Loader *L, const Onnx__TensorProto *t, int64_t cap,
								 int64_t *count, int64_t *vals);
extern const Onnx__AttributeProto *onnx_attr_find(const Onnx__NodeProto *node, const char *name);
extern GsCode onnx_attrs_allowed(Loader *L, const Onnx__NodeProto *node,
								 const char *const *allowed);
extern GsCode onnx_attr_int(Loader *L, const Onnx__NodeProto *node, const char *name,
							int64_t def, int64_t *v);
extern GsCode onnx_attr_float(Loader *L, const Onnx__NodeProto *node, const char *name,
							  float def, float *v);
extern GsMlpStep *onnx_new_step(Loader *L, GsMlpOp op, const char *node_name);
extern bool onnx_is_cur(const Loader *L, const char *name);
/* Is node op, of ai.onnx.ml when ml, else of the default domain? */
extern bool onnx_node_is(const Onnx__NodeProto *node, const char *op, bool ml);
extern GsCode onnx_want_chain_input(Loader *L, const Onnx__NodeProto *node, size_t min_in,
									size_t max_in);
extern GsCode onnx_want_const(Loader *L, const Onnx__NodeProto *node, size_t k,
							  const Onnx__TensorProto **t);

/*
 * onnx_fold.c: does node take only constants, with an op that is folded
 * (element-wise arithmetic, Sqrt, Neg, Reciprocal, Reshape, Squeeze,
 * Unsqueeze, Cast to float)?  Then onnx_fold_node evaluates it and registers
 * its output as a constant; onnx_fold_free releases what the load folded.
 */
extern bool onnx_fold_applies(const Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_fold_node(Loader *L, const Onnx__NodeProto *node);
extern void onnx_fold_free(Loader *L);

/*
 * onnx_skip.c: skip connections and branches.  onnx_chain_note records the chain's value
 * (L->cur, once per new value: where it starts and after each node);
 * onnx_is_earlier_value tells whether name is one the chain reached
 * before its current one; onnx_add_join translates an Add, Mul or Sub of
 * the current value and that earlier one into a SAVE and an ADD_SAVED
 * (MUL_SAVED, SUB_SAVED, RSUB_SAVED) step, onnx_add_concat a Concat of the
 * current value and earlier ones into SAVEs and CONCAT_SAVED steps, onnx_add_mean a
 * Mean of the current value and an earlier one into an ADD_SAVED and a Mul by 0.5;
 * onnx_chain_branch, for a node reading an earlier value and not the
 * current one, goes back to that value (a SAVE and a LOAD step);
 * onnx_chain_free releases the record.
 */
extern GsCode onnx_chain_note(Loader *L);
extern bool onnx_is_earlier_value(const Loader *L, const char *name);
extern GsCode onnx_add_join(Loader *L, const Onnx__NodeProto *node, const char *earlier, GsMlpOp op);
extern GsCode onnx_add_concat(Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_add_mean(Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_chain_branch(Loader *L, const Onnx__NodeProto *node);
extern void onnx_chain_free(Loader *L);
/*
 * onnx_fuse_glu: PyTorch's nn.GLU (Split into halves, Sigmoid of the second,
 * Mul) from node i, read as existing steps (onnx_skip.c); *fused says
 * whether it was.
 */
extern GsCode onnx_fuse_glu(Loader *L, size_t i, bool *fused);

/*
 * onnx_order.c: onnx_read_order fills L->order with the needed nodes in the
 * order the loader reads them (each branch in one piece); onnx_chain_free
 * releases it.
 */
extern GsCode onnx_read_order(Loader *L);
/*
 * onnx_skip.c: once the network is built, renumber its saved values' slots
 * so that values whose lifetimes do not overlap share one (n_slots becomes
 * the most kept at once).
 */
extern void onnx_pack_slots(GsMlp *m);

/* onnx_shape.c: nodes that change only the chain's type or shape */
extern GsCode onnx_add_cast(Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_add_reshape(Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_add_squeeze(Loader *L, const Onnx__NodeProto *node);
extern bool onnx_needs_rank2(const char *op);

/* onnx_ops.c: translate one node into steps (or a constant) */
extern GsCode onnx_add_node(Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_column_params(Loader *L, const Onnx__TensorProto *t, float **vals);
extern GsCode onnx_add_param_step(Loader *L, const Onnx__NodeProto *node, GsMlpOp op, float *vals);

/*
 * onnx_act.c: the activations beyond Relu / LeakyRelu / Sigmoid / Tanh /
 * Softmax (Elu, Selu, Softplus, Softsign, Mish, HardSwish, HardSigmoid,
 * Gelu, PRelu, Clip): true when op is one of them, and the node translated
 * into its step; Min / Max with a constant as a one-sided Clip.
 */
extern bool onnx_is_activation(const char *op);
extern GsCode onnx_add_activation(Loader *L, const Onnx__NodeProto *node, const char *op);
extern GsCode onnx_add_min_max(Loader *L, const Onnx__NodeProto *node, bool is_min);

/*
 * onnx_fuse.c: does node i (of L->g) start an activation an exporter writes
 * as several nodes (SiLU, GELU in its forms, Softsign, PyTorch's
 * Softplus, Mish, HardSwish)?  Then one step is added, the pattern's other nodes leave
 * L->needed and *fused is set.
 */
extern GsCode onnx_fuse_activation(Loader *L, size_t i, bool *fused);
/*
 * onnx_act.c: Keras 2's PReLU layer as tf2onnx writes it,
 * Add(Relu(h), Mul(Relu(Neg(h)), c)), from node i (the Relu or the Neg of
 * h), read as a PRelu step of slope -c (the same floats); *fused says
 * whether it was.
 */
extern GsCode onnx_fuse_keras_prelu(Loader *L, size_t i, bool *fused);

/*
 * onnx_fuse_norm.c: does node i start Keras 3's LayerNormalization as
 * tf2onnx writes it (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt,
 * Reciprocal, Mul, Neg, Mul, Add) or as jax2onnx does (its moments from
 * sums broadcast back to [N, 1])?  Then one GS_MLP_LAYER_NORM step is
 * added, as onnx_fuse_activation does.
 */
extern GsCode onnx_fuse_layernorm(Loader *L, size_t i, bool *fused);

/*
 * onnx_fuse.c: the graph around a value, for matching patterns.  Nodes are
 * in topological order; i is the node the pattern starts at.
 *	onnx_readers		the nodes after i reading name, into out[0..max): how many
 *						(max + 1: more), -1 when a node not needed reads it
 *	onnx_sole_reader	the one node after i reading name, when it is op and
 *						nothing else (no graph output either) reads name; else -1
 *	onnx_takes			is n a binary node over a and b (either order if commutative)?
 *	onnx_other_input	the input of binary node n that is not one
 *	onnx_value_producer	the needed node whose one output is name, or -1
 */
extern int	onnx_readers(const Loader *L, size_t i, const char *name, int64_t *out, int max);
extern int64_t onnx_sole_reader(const Loader *L, size_t i, const char *name, const char *op);
extern bool onnx_takes(const Onnx__NodeProto *n, const char *a, const char *b, bool commutative);
extern const char *onnx_other_input(const Onnx__NodeProto *n, const char *one);
extern int64_t onnx_value_producer(const Loader *L, const char *name);

/*
 * onnx_linear.c: ai.onnx.ml LinearClassifier / LinearRegressor (scikit-learn's
 * linear models) as a dense step and its post-transform; an
 * ArrayFeatureExtractor of a dense step's scores; a Normalizer (L1) after a
 * softmax.
 */
extern GsCode onnx_add_linear(Loader *L, const Onnx__NodeProto *node, bool classifier);
extern GsCode onnx_add_pick(Loader *L, const Onnx__NodeProto *node);
extern GsCode onnx_add_normalizer(Loader *L, const Onnx__NodeProto *node);

/* onnx_ops.c: a dense step from weights [n_out * width] and bias (taken over, freed on failure) */
extern GsCode onnx_add_dense_step(Loader *L, const Onnx__NodeProto *node, int32_t n_out,
								  float *w, float *bias);

/* onnx_act.c: ai.onnx.ml Imputer (scikit-learn's SimpleImputer) as one step. */
extern GsCode onnx_add_imputer(Loader *L, const Onnx__NodeProto *node);

/*
 * onnx_mlp_prep.c: scikit-learn preprocessing before a network that is not
 * one chain over one input (several graph inputs: a DataFrame's columns;
 * a ColumnTransformer's ArrayFeatureExtractor among L->needed).  When
 * onnx_mlp_wants_prep, onnx_mlp_prep (after the constants are read)
 * translates it into a GATHER step and element-wise steps, takes those
 * nodes out of L->needed, sets the network's features (and their names,
 * for a DataFrame) and starts the chain (L->cur, L->width) at the value
 * the network's first node reads.
 */
extern bool onnx_mlp_wants_prep(const Loader *L);
extern GsCode onnx_mlp_prep(Loader *L);

/*
 * onnx_iforest.c: does the graph look like scikit-learn's IsolationForest as
 * skl2onnx writes it (tree nodes and a Pow)?  It may then have up to
 * GS_ONNX_MAX_IFOREST_NODES nodes.
 */
extern bool onnx_iforest_applies(const Onnx__GraphProto *g);

/* onnx_trees.c: does the graph hold an ai.onnx.ml TreeEnsemble* node? */
extern bool onnx_graph_has_trees(const Onnx__GraphProto *g);

/*
 * onnx_trees.c: build and validate the forest of a graph holding a
 * tree-ensemble node (L->g, L->lim, L->st, L->alloc set).  On success *out
 * is a new forest owned by the caller; on failure NULL, status set.
 */
extern GsCode onnx_trees_build(Loader *L, const Onnx__ModelProto *model, GsForest **out);

#endif							/* GS_ONNX_INTERNAL_H */

/*
 * onnx_fuse_norm.h
 *	  What the readers of layer normalization patterns share
 *	  (onnx_fuse_norm.c, onnx_fuse_norm_tf.c): a match in progress and the
 *	  node tests they are built from.
 */
#ifndef GS_ONNX_FUSE_NORM_H
#define GS_ONNX_FUSE_NORM_H

#include "onnx_internal.h"

/* Nodes of a pattern beside its first: jax2onnx's form has 34. */
#define LN_MAX_NODES 48

/* A match in progress: the nodes found so far and the pattern's constants. */
typedef struct LnMatch
{
	int64_t		j[LN_MAX_NODES];	/* the last one last */
	int			n;
	const char *gamma;			/* NULL when absent (scale=False) */
	const char *beta;			/* NULL when absent (center=False) */
	float		eps;
} LnMatch;

/* Node k of the graph. */
#define NODE(L, k) ((const Onnx__NodeProto *) (L)->g->node[k])

/*
 *	ln_take			append node k to m; false when k is -1 or there is no room
 *	ln_is_op		is n the default-domain op with exactly n_input named
 *					inputs, one named output and no attributes but the
 *					allowed ones (a NULL-terminated list, or NULL: none)?
 *	ln_int64_is		is name a constant int64 tensor of one value, want?
 *	ln_attr_is		does n's integer attribute name hold want (def when absent)?
 *	ln_mul_by_const	the node after i that is a Mul of a and a constant (either
 *					order), read by nothing else: its index, the constant's
 *					name in *c; or -1
 */
extern bool ln_take(LnMatch *m, int64_t k);
extern bool ln_is_op(const Onnx__NodeProto *n, const char *op, size_t n_input,
					 const char *const *allowed);
extern bool ln_int64_is(Loader *L, const char *name, int64_t want);
extern bool ln_attr_is(Loader *L, const Onnx__NodeProto *n, const char *name, int64_t def,
					   int64_t want);
extern int64_t ln_mul_by_const(Loader *L, size_t i, const char *a, const char **c);

/*
 * After node k, the normalized value: a Mul by gamma and an Add of beta
 * (constants) when there, added to m (m->gamma, m->beta set).  An Add
 * without the Mul is taken only when add_alone (Keras' scale=False; in
 * PyTorch's form a bias comes with a weight).  False only when m is full.
 */
extern bool ln_affine_tail(Loader *L, int64_t k, LnMatch *m, bool add_alone);

/*
 * Keras 2's LayerNormalization as tf2onnx 1.16 writes it for epsilon of
 * 1.001e-5 and more (TensorFlow's fused batch normalization over a reshape),
 * from node i = Shape(h): true with m filled (onnx_fuse_norm_tf.c).
 */
extern bool ln_keras2_fused(Loader *L, size_t i, LnMatch *m);

#endif							/* GS_ONNX_FUSE_NORM_H */

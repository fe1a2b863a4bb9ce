/*
 * onnx_iforest.h
 *	  What onnx_iforest.c (the IsolationForest graph and its forest) and
 *	  onnx_iforest_eval.c (each tree's path length from its leaf: the
 *	  element-wise nodes interpreted at load time) share.  Not a public
 *	  interface: the entry points are declared in onnx_trees.h.
 */
#ifndef GS_ONNX_IFOREST_H
#define GS_ONNX_IFOREST_H

#include "onnx_trees.h"

#define IF_MAX_EXPR_DEPTH	64		/* nested element-wise nodes of one term */
#define IF_MAX_TERM_NODES	256		/* nodes one tree's path length reads
									 * (skl2onnx writes about 27) */
#define IF_MAX_KEYS			(1 << 22)	/* a LabelEncoder's keys */

typedef enum VKind
{
	V_F32,
	V_I64,
	V_BOOL
} VKind;

typedef struct Val
{
	VKind		k;
	float		f;
	int64_t		i;				/* V_I64, and V_BOOL as 0 / 1 */
} Val;

/* name -> producing node, sorted by name */
typedef struct Producer
{
	const char *name;
	int32_t		node;
} Producer;

typedef struct IfCtx
{
	Loader	   *L;
	const Onnx__GraphProto *g;
	Producer   *prod;
	size_t		n_prod;
	const char *input;			/* the graph's input */
	int64_t		tree;			/* tree node of the term being evaluated */
	float		leaf;			/* its output for this evaluation */
	int32_t    *stamp;			/* [n_node] evaluation that filled memo */
	int32_t    *seen;			/* [n_node] term whose walk saw the node */
	int32_t		term;			/* the term being walked, from 1 */
	int32_t		n_seen;			/* nodes it has seen */
	Val		   *memo;			/* [n_node] */
	int32_t		cur;
} IfCtx;

/* onnx_iforest_eval.c */
extern int	if_cmp_producer(const void *a, const void *b);
extern int64_t if_producer_of(const IfCtx *C, const char *name);
extern bool if_is_op(const Onnx__NodeProto *n, const char *op);
extern GsCode if_refuse_at(IfCtx *C, const Onnx__NodeProto *n, const char *why);
extern const Onnx__TensorProto *if_const_tensor(IfCtx *C, const char *name);
extern bool if_const_scalar(IfCtx *C, const char *name, Val *v);
extern GsCode if_eval(IfCtx *C, const char *name, int depth, Val *out);
extern int64_t if_term_tree(IfCtx *C, const char *name, int depth, int64_t found);

#endif							/* GS_ONNX_IFOREST_H */

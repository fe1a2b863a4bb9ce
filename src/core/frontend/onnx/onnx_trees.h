/*
 * onnx_trees.h
 *	  What the files of the ONNX-ML tree-ensemble loader share (onnx_trees.c:
 *	  the forest; onnx_trees_runs.c: the trees' nodes and leaf weights, and
 *	  each node translated for the forest builder;
 *	  onnx_trees_graph.c: the tree node's attributes and the graph around
 *	  it; onnx_trees_v5.c: opset-5 TreeEnsemble into the same attributes;
 *	  onnx_trees_prep.c and onnx_prep_cat.c: preprocessing before the tree
 *	  node, also read for networks by onnx_mlp_prep.c; onnx_trees_fold.c:
 *	  that preprocessing folded into the splits).  Not a public interface:
 *	  the entry points are declared in onnx_internal.h.
 *
 * TAttrs points into the decoded protobuf, owned by gs_onnx_load; TWork's
 * arrays come from the Loader's allocator and are freed by
 * onnx_trees_free_work before onnx_trees_build returns.
 */
#ifndef GS_ONNX_TREES_H
#define GS_ONNX_TREES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "onnx_internal.h"
#include "forest/forest_build.h"

#define TREES_MAX_TARGETS	100000	/* targets or classes */

/* Node modes, numbered as the attribute strings are listed. */
typedef enum TMode
{
	TM_LEQ,
	TM_LT,
	TM_GTE,
	TM_GT,
	TM_EQ,
	TM_NEQ,
	TM_CAT,						/* (int64) x == value, a category code: a
								 * one-hot column folded (onnx_trees_fold.c);
								 * never read from a file */
	TM_LEAF
} TMode;

/* post_transform values */
typedef enum TPost
{
	TP_NONE,
	TP_LOGISTIC,
	TP_SOFTMAX,
	TP_SOFTMAX_ZERO,
	TP_PROBIT
} TPost;

/*
 * The attributes of the tree node in the form of TreeEnsembleRegressor /
 * Classifier: pointing into the decoded protobuf, or (TreeEnsemble of
 * opset 5, converted by onnx_trees_v5.c) into arrays listed in owned[],
 * freed by onnx_trees_free_attrs.
 */
#define TREES_MAX_OWNED 32
typedef struct TAttrs
{
	bool		classifier;
	bool		v5;				/* converted from ai.onnx.ml TreeEnsemble */
	size_t		n;				/* nodes */
	const int64_t *treeids,
			   *nodeids,
			   *featureids,
			   *truenodeids,
			   *falsenodeids,
			   *tracks;			/* NULL: none tracks true */
	const float *values;
	const ProtobufCBinaryData *modes;	/* mode names, or NULL: */
	const uint8_t *mode_codes;	/* TMode of each node (v5) */
	size_t		nw;				/* weights */
	const int64_t *w_ids,
			   *w_nodeids,
			   *w_treeids;
	const float *w_values;
	size_t		n_base;
	const float *base;
	int64_t		n_targets;		/* targets, or classes */
	TPost		post;
	bool		average;
	void	   *owned[TREES_MAX_OWNED];
	int			n_owned;
} TAttrs;

/* Working arrays of one build (freed by onnx_trees_free_work, onnx_trees.c). */
typedef struct TWork
{
	uint8_t    *mode;			/* [n] TMode */
	int32_t    *slot;			/* [n] node id -> node index in the run being
								 * looked at, else -1 */
	int64_t    *run_start;		/* [n_runs + 1] first node of each tree */
	int64_t    *run_sorted;		/* [2 * n_runs] (tree id, run) pairs, sorted */
	int32_t    *w_sorted;		/* [nw] weights sorted by (run, node id, target) */
	int64_t    *w_run;			/* [nw] run of each weight */
	int32_t    *w_first;		/* [n] first sorted weight of each leaf, or -1 */
	int32_t    *w_count;		/* [n] weights of each leaf */
	int32_t    *stamp;			/* [n_targets] last run that used a target */
	int32_t    *used;			/* [n_targets] targets one run uses */
	int64_t		n_runs;
} TWork;


/* Allocate from the loader's allocator, zeroed. */
static inline void *
tz_alloc(Loader *L, size_t size)
{
	void	   *p = onnx_alloc(L, size);

	if (p)
		memset(p, 0, size ? size : 1);
	return p;
}

/*
 * Preprocessing before the tree node (onnx_trees_prep.c): each column the
 * tree node reads is a column of the graph's input through a chain of
 * per-column float steps, applied in order.
 */
#define TPREP_MAX_STEPS		8		/* steps of one column's chain */
#define TPREP_MAX_VALUES	4096	/* the graph's inputs + preprocessing nodes */
#define TPREP_MAX_COLUMNS	(1 << 18)	/* columns of all values together */

typedef enum TPrepOp
{
	TPO_ADD,					/* x + c */
	TPO_SUB,					/* x - c */
	TPO_RSUB,					/* c - x */
	TPO_MUL,					/* x * c */
	TPO_DIV,					/* x / c, c != 0 */
	TPO_IMPUTE,					/* NaN ? c : x */
	TPO_ONEHOT,					/* (int64) x == c ? 1 : 0, |c| < 2^24 (networks
								 * only: P->onehot) */
	TPO_REPLACED				/* the TPO_IMPUTE after it replaces the number c,
								 * not NaN: x == c ? its c : x (networks only:
								 * P->network) */
} TPrepOp;

typedef struct TPrepCol
{
	int32_t		src;			/* column of the graph's input */
	uint8_t		n;				/* steps */
	bool		arith;			/* a step other than TPO_IMPUTE */
	bool		as_int;			/* cast to int64: only a OneHotEncoder reads it */
	bool		text;			/* a string input (also as_int): only a
								 * OneHotEncoder or LabelEncoder of strings
								 * reads it */
	bool		ordinal;		/* a LabelEncoder's int64 code of a string
								 * input (also as_int): a Cast to float makes
								 * it a feature value */
	uint8_t		op[TPREP_MAX_STEPS];	/* TPrepOp */
	float		c[TPREP_MAX_STEPS];
} TPrepCol;

/* A value computed from the graph's input (or the input itself). */
typedef struct TPrepVal
{
	const char *name;			/* points into the protobuf */
	int32_t		width;
	TPrepCol   *cols;			/* [width], L->alloc */
} TPrepVal;

typedef struct TPrep
{
	/*
	 * The graph's inputs: one [N, F] (in_name), or several [N, w] side by
	 * side (in_name NULL), as skl2onnx converts a pandas DataFrame, one
	 * input per column; in_width is F, in all.
	 */
	const Onnx__ValueInfoProto **inputs;	/* [n_inputs], L->alloc */
	int32_t		n_inputs;
	const char *in_name;
	int32_t		in_width;
	bool		names;			/* every input one column, named in UTF-8 */
	TPrepVal   *vals;			/* [cap_vals], L->alloc */
	int32_t		cap_vals;
	int32_t		n_vals;
	int64_t		n_cols;			/* columns of all vals */
	const TPrepCol *tree_cols;	/* what the tree node reads, or NULL: the
								 * graph's input itself */
	int32_t		tree_width;
	bool		onehot;			/* read Cast to int64 + OneHotEncoder (networks:
								 * onnx_prep_cat.c); trees refuse them */
	bool		network;		/* read for a network: an Imputer may replace a
								 * number (TPO_REPLACED); a split could not
								 * follow it */
	/*
	 * [in_width] or NULL: the OneHotEncoder or LabelEncoder of strings that
	 * reads each string input column (its categories become the feature's
	 * names), NULL where none does.
	 */
	const Onnx__NodeProto **text_enc;
} TPrep;

/* onnx_trees_prep.c */
/*
 * Read the graph's inputs into P (see TPrep) and set *n_features, at most
 * width_cap (and the caller's max_features); P is released by
 * onnx_trees_prep_free, also on failure.
 */
extern GsCode onnx_trees_prep_inputs(Loader *L, TPrep *P, int32_t width_cap, int32_t *n_features);
/*
 * The feature value called name: the graph's input (its identity columns
 * made on first use) or a value a translated node computed; NULL when name
 * is neither (or, with the status set, out of memory).
 */
extern TPrepVal *onnx_trees_prep_value(Loader *L, TPrep *P, const char *name);
/*
 * The graph's inputs' names as feature names (P->names: one column each, a
 * DataFrame's), a new array of P->n_inputs strings; on failure *names may
 * hold some of them (NULL after), for the owner to free with the rest.
 */
extern GsCode onnx_trees_prep_names(Loader *L, const TPrep *P, char ***names);
/*
 * The category names of the string inputs P read (P->text_enc): the
 * categories of each one's OneHotEncoder, code c its c-th category.  *out
 * stays NULL when there are none.
 */
extern GsCode onnx_prep_cat_names(Loader *L, const TPrep *P, GsCatNames **out);
/* A new value of width columns named name (uninitialized); NULL: status set. */
extern TPrepVal *onnx_trees_prep_new(Loader *L, TPrep *P, const char *name, int64_t width);
/* A new value named after node's output, a copy of in's columns; NULL: status set. */
extern TPrepVal *onnx_trees_prep_copy(Loader *L, TPrep *P, const Onnx__NodeProto *node, const TPrepVal *in);

/*
 * onnx_prep_cat.c: nodes of categorical preprocessing (skl2onnx's
 * OneHotEncoder: Gather of columns, Cast to int64, OneHotEncoder, a no-op
 * Reshape).  *handled is false when node is none of them; Cast to int64
 * and OneHotEncoder are refused unless P->onehot.
 */
extern GsCode onnx_prep_cat_node(Loader *L, TPrep *P, const Onnx__NodeProto *node, TPrepVal *in,
								 bool *handled);
/*
 * Translate node (which reads the graph's input or a value computed from
 * it, and is not the tree node) into a new value named after its output;
 * an unsupported node sets an error.  L->label names the node.
 */
extern GsCode onnx_trees_prep_node(Loader *L, TPrep *P, const Onnx__NodeProto *node);
/* The tree node reads name, the graph's input or a value of P. */
extern GsCode onnx_trees_prep_tree(Loader *L, TPrep *P, const char *name);
/* onnx_trees_fold.c */
/*
 * Fold P into A's splits: feature ids become columns of the graph's input,
 * thresholds, modes, missing directions and children are rewritten so that
 * every row is sent where onnxruntime sends its preprocessed row.  A's node
 * arrays are replaced by owned copies.  Caller: P->tree_cols != NULL.
 */
extern GsCode onnx_trees_fold(Loader *L, const TPrep *P, TAttrs *A);
extern void onnx_trees_prep_free(Loader *L, TPrep *P);

/* onnx_trees.c: the forest of tree attributes (P freed; a zeroed P names nothing) */
extern GsCode onnx_trees_forest(Loader *L, const Onnx__ModelProto *model, const TAttrs *A,
								TPrep *P, int32_t n_features, GsForest **out);

/*
 * onnx_iforest.c: scikit-learn's IsolationForest as skl2onnx writes it (one
 * tree node per tree, each tree's path length computed from its leaf by
 * element-wise nodes, then offset - 2^(-sum / denominator))
 */
extern GsCode onnx_iforest_build(Loader *L, const Onnx__ModelProto *model, GsForest **out);

/* onnx_trees_graph.c */
extern GsCode onnx_trees_check_graph(Loader *L, const Onnx__NodeProto *tree, int32_t *n_features,
									 TPrep *P);
extern GsCode onnx_trees_read_attrs(Loader *L, const Onnx__NodeProto *node, bool classifier,
									TAttrs *A);
extern bool onnx_trees_is_tree_node(const Onnx__NodeProto *node);

/* onnx_trees_v5.c */
extern GsCode onnx_trees_read_v5(Loader *L, const Onnx__NodeProto *node, TAttrs *A);
extern void onnx_trees_free_attrs(Loader *L, TAttrs *A);
/* A new zeroed array owned by A (freed by onnx_trees_free_attrs); NULL: status set. */
extern void *onnx_trees_own(Loader *L, TAttrs *A, size_t size);

/* onnx_trees_runs.c */
/* TMode of node i of A, or TM_LEAF + 1 when its mode is unknown. */
extern int	onnx_trees_mode(const TAttrs *A, size_t i);
/*
 * Parse the modes, check what each node holds (modes, node ids, features,
 * thresholds), split the nodes into trees (runs of one tree id, each id
 * once, no node id twice in a tree): w->mode, slot, run_start, run_sorted.
 */
extern GsCode onnx_trees_runs(Loader *L, const TAttrs *A, int32_t n_features, TWork *w);
/* Point w->slot at the nodes of run r (onnx_trees_runs checked them). */
extern void onnx_trees_slot_run(const TAttrs *A, TWork *w, int64_t r);
/* Clear w->slot of the nodes of run r. */
extern void onnx_trees_unslot_run(const TAttrs *A, TWork *w, int64_t r);
extern GsCode onnx_trees_attach_weights(Loader *L, const TAttrs *A, TWork *w);
extern float onnx_trees_leaf_weight(const TAttrs *A, const TWork *w, int32_t i, int64_t k,
									bool *has);

/*
 * One (tree, target) copy being built (onnx_trees_node's context): its run's
 * nodes slotted (onnx_trees_slot_run), the target whose weights its leaves
 * take (-1: every leaf 0, a tree only checked), their scale (AVERAGE), and
 * the category set of each TM_CAT node.
 */
typedef struct TTree
{
	Loader	   *L;
	const TAttrs *A;
	const TWork *w;
	int64_t		tree;			/* its tree id, for messages */
	int64_t		target;
	double		scale;
	const uint32_t *set_of;		/* [A->n] or NULL */
} TTree;

/*
 * Translate node id (an ONNX node id of the tree of ctx, a TTree) for the
 * forest builder (a GsBuildNodeFn): a leaf's weight for the copy's target,
 * or a branch as the forest's split (see onnx_trees.c), its children checked
 * to be nodes of the same tree.
 */
extern GsCode onnx_trees_node(void *ctx, int64_t id, GsBuildNode *node, GsStatus *st);

#endif							/* GS_ONNX_TREES_H */

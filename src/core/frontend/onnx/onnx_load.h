/*
 * onnx_load.h
 *	  Reading ONNX models of feed-forward networks into a validated GsMlp,
 *	  and ONNX-ML tree ensembles (TreeEnsembleRegressor/Classifier of
 *	  skl2onnx and onnxmltools, opset-5 TreeEnsemble) into a validated
 *	  GsForest (onnx_trees.c).
 *
 * The bytes are decoded by protobuf-c with code generated from ONNX's own
 * onnx.proto (the Makefile runs protoc-c on /usr/include/onnx/onnx.proto),
 * then the nodes the scored output depends on (the one float output; a
 * binary classifier's [1 - p, p] scored as p) are checked to be one chain
 * of supported ops over a single float input [N, F]; anything else is
 * refused with a message naming the op and the node.  gs_onnx_load is the single entry point, also for the
 * fuzz target: any byte string gives GS_OK or an error status, never a
 * crash, and caps are checked before anything is allocated from the sizes
 * the file claims.
 */
#ifndef GS_ONNX_LOAD_H
#define GS_ONNX_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "forest/forest.h"
#include "mlp/mlp.h"

/* Caps of the graph itself, on top of GsLimits and the GS_MLP_* caps. */
#define GS_ONNX_MAX_NODES			4096
#define GS_ONNX_MAX_IFOREST_NODES	(1 << 21)	/* an IsolationForest's graph: about
												 * 27 nodes per tree (onnx_iforest.c) */
#define GS_ONNX_MAX_INITIALIZERS	4096
#define GS_ONNX_MAX_STACK			(256 * 1024)	/* bytes of C stack protobuf-c may use */

/*
 * True when bytes look like an ONNX ModelProto: the protobuf encoding of
 * field 1 (ir_version, a varint) first, with a plausible IR version.  Only
 * a hint for format 'auto'; gs_onnx_load does the real checking.  Inline,
 * so format detection needs neither protobuf-c nor BLAS.
 */
static inline bool
gs_onnx_detect(const unsigned char *b, size_t len)
{
	/* tag of field 1 as a varint (0x08), a one-byte IR version, a next tag */
	return len >= 3 && b[0] == 0x08 && b[1] >= 1 && b[1] <= 15 &&
		(b[2] >> 3) >= 2 && (b[2] & 7) <= 5;
}

/*
 * Parse and validate an ONNX model.  A graph holding an ai.onnx.ml
 * tree-ensemble node becomes a forest (*forest_out, gs_forest_free), any
 * other graph a network (*out, gs_mlp_free); on success exactly one is set
 * and owned by the caller.  With reconstruction, the model must be an
 * autoencoder network (output width == input width) and each row's score
 * is the mean squared error between its input and the network's output.
 * On failure returns the error code, fills st, and both are NULL.  lim may
 * be NULL (gs_default_limits): max_model_bytes and max_features apply to
 * networks, every cap to forests.
 */
extern GsCode gs_onnx_load(const unsigned char *bytes, size_t len,
						   bool reconstruction, const GsLimits *lim,
						   const GsAllocator *alloc, GsMlp **out,
						   GsForest **forest_out, GsStatus *st);

#endif							/* GS_ONNX_LOAD_H */

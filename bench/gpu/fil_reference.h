/*
 * fil_reference.h
 *	  A reference GPU kernel in the design of NVIDIA's Forest Inference
 *	  Library (FIL), written here from that design's description for the
 *	  kernel benchmark (bench_kernel.cu); not product code.
 *
 * Layout: every tree depth-first (pre-order), 8-byte nodes {float
 * threshold or leaf value; uint32 packed: leaf bit, default-left bit,
 * feature index, offset to the right child}, the left child adjacent to its
 * parent.  Kernel: a block stages its rows in shared memory, each thread
 * scores 1, 2 or 4 rows walking every tree in model order (the trees from
 * global memory through the read-only cache), so that the sums are in the
 * CPU engine's order and the margins bit-identical to it.
 *
 * A FilForest owns its device memory (fil_forest_free).  Single-output
 * models only (n_groups == 1): that is what the benchmark's models are.
 */
#ifndef GS_FIL_REFERENCE_H
#define GS_FIL_REFERENCE_H

#include <stddef.h>

#include <cuda_runtime.h>

#include "../../src/core/forest/forest.h"

typedef struct FilForest FilForest;

/*
 * Convert f to the FIL-style layout and copy it to the current device.
 * Returns 0, or -1 with a message in err (model outside the layout's
 * limits, or a CUDA failure).
 */
int			fil_forest_create(const GsForest *f, FilForest **out, char *err,
							  size_t errlen);

/*
 * Score n_rows of the column-major device batch d_x (x[f * ld + r]) into
 * d_out[r] (outputs, or margins when raw_margins), rows_per_thread 1, 2
 * or 4, on stream.  Asynchronous; returns the launch's cudaError_t.
 */
cudaError_t fil_forest_predict(const FilForest *ff, const float *d_x, size_t ld,
							   size_t n_rows, float *d_out, int raw_margins,
							   int rows_per_thread, cudaStream_t stream);

/*
 * Host check of the conversion (no GPU needed): convert f, walk rows
 * 0..n_rows-1 of the column-major host batch x with the kernel's step
 * function, and compare each row's margin with margins[r] (the CPU
 * engine's) exactly.  Returns the number of differing rows (first one
 * described in err), or -1 when f can not be converted.
 */
long		fil_forest_check_host(const GsForest *f, const float *x, size_t ld,
								  size_t n_rows, const float *margins, char *err,
								  size_t errlen);

/* Device bytes of the converted forest. */
size_t		fil_forest_device_bytes(const FilForest *ff);

/* Release; NULL is allowed. */
void		fil_forest_free(FilForest *ff);

#endif							/* GS_FIL_REFERENCE_H */

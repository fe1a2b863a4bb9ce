/*
 * fil_reference.cu
 *	  FIL-style reference kernel for the benchmark; see fil_reference.h.
 *	  Written for comparison from the published design of NVIDIA's Forest
 *	  Inference Library (no FIL code): depth-first 8-byte nodes, rows in
 *	  shared memory, a warp's threads each walking every tree for their own
 *	  rows.
 *
 * Node packing (FilNode.bits):
 *	bit 31      leaf
 *	bit 30      missing values (NaN) go left
 *	bits 29..16 feature index (at most 16383)
 *	bits 15..0  offset from the node to its right child (trees of at most
 *	            65535 nodes); the left child is the next node
 * A leaf's value is FilNode.val; a split's threshold too (x < val goes
 * left, as XGBoost and the CPU engine).
 *
 * Device memory: fil_forest_create cudaMalloc's the node array and the
 * tree roots; fil_forest_free releases them.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fil_reference.h"
#include "../../cuda/kernel_phases.h"

#define FIL_THREADS 256
#define FIL_LEAF 0x80000000u
#define FIL_DEFAULT_LEFT 0x40000000u
#define FIL_FEATURE_SHIFT 16
#define FIL_FEATURE_MASK 0x3FFFu
#define FIL_OFFSET_MASK 0xFFFFu

typedef struct __align__(8) FilNode
{
	float		val;
	uint32_t	bits;
} FilNode;

/*
 * Offset from split node n to the child that feature value v leads to: 1
 * (the left child, adjacent) or the stored right offset.  NaN is missing
 * and follows the default direction, otherwise v < threshold goes left.
 * Used by the kernel and by the host check of the conversion.
 */
static __host__ __device__ __forceinline__ uint32_t
fil_step(FilNode n, float v)
{
	bool		left = isnan(v) ? (n.bits & FIL_DEFAULT_LEFT) != 0 : v < n.val;

	return left ? 1u : (n.bits & FIL_OFFSET_MASK);
}

/* Feature index of split node n. */
static __host__ __device__ __forceinline__ uint32_t
fil_feature(FilNode n)
{
	return (n.bits >> FIL_FEATURE_SHIFT) & FIL_FEATURE_MASK;
}

struct FilForest
{
	FilNode    *d_nodes;
	uint32_t   *d_roots;		/* [n_trees] first node of each tree */
	int32_t		n_trees;
	int32_t		n_features;
	float		base_margin;
	GsTransform transform;
	size_t		bytes;
};

/*
 * One thread scores R rows (tid + k * FIL_THREADS of the block's chunk).
 * The block first copies its rows, row-major with an odd stride nfp, into
 * shared memory; then each thread walks every tree, in model order, for its
 * rows, the R walks interleaved until all reached a leaf.
 */
template <int R>
__global__ void __launch_bounds__(FIL_THREADS, 4)
fil_kernel(const FilNode *__restrict__ nodes, const uint32_t *__restrict__ roots,
		   int32_t n_trees, int32_t nf, float base_margin, int32_t transform,
		   int raw, const float *__restrict__ x, size_t ld, size_t n_rows,
		   float *__restrict__ out)
{
	extern __shared__ float srow[];
	const int	nfp = nf | 1;
	const uint32_t chunk = FIL_THREADS * R;
	const size_t row0 = (size_t) blockIdx.x * chunk;
	const int	tid = (int) threadIdx.x;
	float		m[R];

	for (uint32_t i = (uint32_t) tid; i < chunk * (uint32_t) nf; i += FIL_THREADS)
	{
		uint32_t	f = i / chunk,
					r = i - f * chunk;

		srow[r * nfp + f] = row0 + r < n_rows ? x[(size_t) f * ld + row0 + r] : 0.0f;
	}
	__syncthreads();

#pragma unroll
	for (int k = 0; k < R; k++)
		m[k] = base_margin;
	for (int32_t t = 0; t < n_trees; t++)
	{
		const FilNode *tree = nodes + roots[t];
		FilNode		n[R];
		uint32_t	at[R];
		bool		busy;

#pragma unroll
		for (int k = 0; k < R; k++)
		{
			at[k] = 0;
			n[k] = tree[0];
		}
		do
		{
			busy = false;
#pragma unroll
			for (int k = 0; k < R; k++)
				if (!(n[k].bits & FIL_LEAF))
				{
					at[k] += fil_step(n[k], srow[(tid + k * FIL_THREADS) * nfp + fil_feature(n[k])]);
					n[k] = tree[at[k]];
					busy = true;
				}
		} while (busy);
#pragma unroll
		for (int k = 0; k < R; k++)
			m[k] += n[k].val;
	}

#pragma unroll
	for (int k = 0; k < R; k++)
	{
		size_t		r = row0 + (size_t) tid + (size_t) k * FIL_THREADS;
		float		o;

		if (r >= n_rows)
			continue;
		if (raw)
			o = m[k];
		else
			gs_transform_row((GsTransform) transform, NULL, &m[k], 1, &o);
		out[r] = o;
	}
}

/*
 * Append tree t of f to nodes[*count...] depth-first; returns 0, or -1 when
 * an offset or feature does not fit the packing.
 */
static int
convert_tree(const GsForest *f, int32_t t, FilNode *nodes, size_t *count,
			 uint32_t *stack_bfs, int64_t *stack_fix)
{
	const GsNode *tree = f->nodes + f->tree_offset[t];
	size_t		sp = 0;

	stack_bfs[sp] = 0;
	stack_fix[sp++] = -1;
	while (sp > 0)
	{
		uint32_t	i = stack_bfs[--sp];
		int64_t		fix = stack_fix[sp];
		size_t		o = (*count)++;
		GsNode		g = tree[i];

		if (fix >= 0)
		{
			size_t		off = o - (size_t) fix;

			if (off > FIL_OFFSET_MASK)
				return -1;
			nodes[fix].bits |= (uint32_t) off;
		}
		nodes[o].val = g.value;
		if (g.info & GS_NODE_LEAF)
		{
			nodes[o].bits = FIL_LEAF;
			continue;
		}
		if ((g.info & GS_NODE_FEATURE_MASK) > FIL_FEATURE_MASK)
			return -1;
		nodes[o].bits = ((g.info & GS_NODE_FEATURE_MASK) << FIL_FEATURE_SHIFT) |
			((g.info & GS_NODE_DEFAULT_LEFT) ? FIL_DEFAULT_LEFT : 0u);
		/* right child first on the stack, so the left child comes next */
		stack_bfs[sp] = g.left + 1;
		stack_fix[sp++] = (int64_t) o;
		stack_bfs[sp] = g.left;
		stack_fix[sp++] = -1;
	}
	return 0;
}

/* See fil_reference.h. */
void
fil_forest_free(FilForest *ff)
{
	if (ff == NULL)
		return;
	cudaFree(ff->d_nodes);
	cudaFree(ff->d_roots);
	free(ff);
}

/*
 * Convert f to host arrays: *nodes (count nodes plus one spare) and
 * *roots (n_trees).  Returns 0, or -1 with a message in err.
 */
static int
fil_convert(const GsForest *f, FilNode **nodes_out, uint32_t **roots_out,
			size_t *count_out, char *err, size_t errlen)
{
	FilNode    *nodes = (FilNode *) calloc((size_t) f->n_nodes + 1, sizeof(FilNode));
	uint32_t   *roots = (uint32_t *) calloc((size_t) f->n_trees + 1, sizeof(uint32_t));
	uint32_t   *sb = (uint32_t *) malloc(sizeof(uint32_t) * ((size_t) f->n_nodes + 2));
	int64_t    *sf = (int64_t *) malloc(sizeof(int64_t) * ((size_t) f->n_nodes + 2));
	size_t		count = 0;
	int			rc = 0;

	if (!nodes || !roots || !sb || !sf)
	{
		snprintf(err, errlen, "out of host memory");
		rc = -1;
	}
	else if (f->n_groups != 1)
	{
		snprintf(err, errlen, "the FIL-style reference scores single-output models only");
		rc = -1;
	}
	for (int32_t t = 0; rc == 0 && t < f->n_trees; t++)
	{
		roots[t] = (uint32_t) count;
		if (convert_tree(f, t, nodes, &count, sb, sf) != 0)
		{
			snprintf(err, errlen, "tree %d does not fit the FIL-style packing", t);
			rc = -1;
		}
	}
	free(sb);
	free(sf);
	if (rc != 0)
	{
		free(nodes);
		free(roots);
		return rc;
	}
	*nodes_out = nodes;
	*roots_out = roots;
	*count_out = count;
	return 0;
}

/* See fil_reference.h. */
long
fil_forest_check_host(const GsForest *f, const float *x, size_t ld,
					  size_t n_rows, const float *margins, char *err,
					  size_t errlen)
{
	FilNode    *nodes;
	uint32_t   *roots;
	size_t		count;
	long		bad = 0;

	if (fil_convert(f, &nodes, &roots, &count, err, errlen) != 0)
		return -1;
	for (size_t r = 0; r < n_rows; r++)
	{
		float		m = f->base_margin[0];

		for (int32_t t = 0; t < f->n_trees; t++)
		{
			const FilNode *tree = nodes + roots[t];
			uint32_t	at = 0;

			while (!(tree[at].bits & FIL_LEAF))
				at += fil_step(tree[at], x[(size_t) fil_feature(tree[at]) * ld + r]);
			m += tree[at].val;
		}
		if (!(m == margins[r] || (isnan(m) && isnan(margins[r]))))
		{
			if (bad++ == 0)
				snprintf(err, errlen, "row %zu: FIL-style walk %.9g, CPU engine %.9g",
						 r, (double) m, (double) margins[r]);
		}
	}
	free(nodes);
	free(roots);
	return bad;
}

/* See fil_reference.h. */
int
fil_forest_create(const GsForest *f, FilForest **out, char *err, size_t errlen)
{
	FilForest  *ff;
	FilNode    *nodes;
	uint32_t   *roots;
	size_t		count;
	cudaError_t rc;
	int			optin = 0,
				dev = 0;

	*out = NULL;
	if (fil_convert(f, &nodes, &roots, &count, err, errlen) != 0)
		return -1;
	ff = (FilForest *) calloc(1, sizeof(FilForest));
	if (!ff)
	{
		snprintf(err, errlen, "out of host memory");
		free(nodes);
		free(roots);
		return -1;
	}
	ff->n_trees = f->n_trees;
	ff->n_features = f->n_features;
	ff->base_margin = f->base_margin[0];
	ff->transform = f->transform;
	ff->bytes = sizeof(FilNode) * (count + 1) + sizeof(uint32_t) * ((size_t) f->n_trees + 1);
	if ((rc = cudaMalloc((void **) &ff->d_nodes, sizeof(FilNode) * (count + 1))) != cudaSuccess ||
		(rc = cudaMalloc((void **) &ff->d_roots, sizeof(uint32_t) * ((size_t) f->n_trees + 1))) != cudaSuccess ||
		(rc = cudaMemcpy(ff->d_nodes, nodes, sizeof(FilNode) * (count + 1), cudaMemcpyHostToDevice)) != cudaSuccess ||
		(rc = cudaMemcpy(ff->d_roots, roots, sizeof(uint32_t) * ((size_t) f->n_trees + 1), cudaMemcpyHostToDevice)) != cudaSuccess)
	{
		snprintf(err, errlen, "uploading the FIL-style forest: %s", cudaGetErrorString(rc));
		fil_forest_free(ff);
		free(nodes);
		free(roots);
		return -1;
	}
	free(nodes);
	free(roots);

	/* staged rows need more than 48 KB from 2 rows per thread on */
	cudaGetDevice(&dev);
	cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
	if ((rc = cudaFuncSetAttribute((const void *) fil_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin)) != cudaSuccess ||
		(rc = cudaFuncSetAttribute((const void *) fil_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin)) != cudaSuccess ||
		(rc = cudaFuncSetAttribute((const void *) fil_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin)) != cudaSuccess)
	{
		snprintf(err, errlen, "cudaFuncSetAttribute: %s", cudaGetErrorString(rc));
		fil_forest_free(ff);
		return -1;
	}
	*out = ff;
	return 0;
}

/* See fil_reference.h. */
cudaError_t
fil_forest_predict(const FilForest *ff, const float *d_x, size_t ld,
				   size_t n_rows, float *d_out, int raw_margins,
				   int rows_per_thread, cudaStream_t stream)
{
	size_t		chunk = (size_t) FIL_THREADS * (size_t) rows_per_thread;
	unsigned int blocks = (unsigned int) ((n_rows + chunk - 1) / chunk);
	size_t		smem = chunk * (size_t) (ff->n_features | 1) * sizeof(float);

	if (n_rows == 0)
		return cudaSuccess;
	switch (rows_per_thread)
	{
		case 1:
			fil_kernel<1><<<blocks, FIL_THREADS, smem, stream>>>(ff->d_nodes, ff->d_roots, ff->n_trees,
																  ff->n_features, ff->base_margin,
																  (int32_t) ff->transform, raw_margins,
																  d_x, ld, n_rows, d_out);
			break;
		case 2:
			fil_kernel<2><<<blocks, FIL_THREADS, smem, stream>>>(ff->d_nodes, ff->d_roots, ff->n_trees,
																  ff->n_features, ff->base_margin,
																  (int32_t) ff->transform, raw_margins,
																  d_x, ld, n_rows, d_out);
			break;
		case 4:
			fil_kernel<4><<<blocks, FIL_THREADS, smem, stream>>>(ff->d_nodes, ff->d_roots, ff->n_trees,
																  ff->n_features, ff->base_margin,
																  (int32_t) ff->transform, raw_margins,
																  d_x, ld, n_rows, d_out);
			break;
		default:
			return cudaErrorInvalidValue;
	}
	return cudaGetLastError();
}

/* See fil_reference.h. */
size_t
fil_forest_device_bytes(const FilForest *ff)
{
	return ff ? ff->bytes : 0;
}

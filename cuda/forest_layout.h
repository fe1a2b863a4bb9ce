/*
 * forest_layout.h
 *	  Host side of the GPU kernels: the tile planner and the builder of the
 *	  node layout that forest_kernel.cu copies to the device.  Plain C that
 *	  also compiles as C++, so that gs_dforest_create (nvcc) and the CPU
 *	  emulation test (gcc) plan and lay out every model identically.
 *
 * A GsLayout is host memory owned by whoever built it (gs_layout_free).  It
 * holds:
 *	- nodes: every tree's GsNodes, in tree order, trees of one tile packed
 *	  back to back and every tile starting on a multiple of 4 nodes (16
 *	  bytes), the padding zero-filled; seen as GsVec4 vectors for the copy;
 *	- leaf_lo: for forests with double leaves (GsForest.leaf_lo), the low
 *	  parts by the same node index as nodes, padding 0; NULL otherwise;
 *	- trees: one GsTreeDesc per tree (first node, node count, group, depth);
 *	- tiles: consecutive runs of trees whose nodes fit together in the tile
 *	  region of shared memory (the whole forest is one tile for the rows
 *	  kernel, which does not use them);
 *	- the plan: kernel, group bucket, rows per thread, whether rows are
 *	  staged in shared memory, and the shared memory a launch needs.
 *
 * Shared memory of a tiled block: [tile region: tile_vecs * 16 bytes]
 * [staged rows: GS_KTHREADS * rpt * n_features floats, staged plans only].
 * The tile region comes first so its size does not depend on the rows per
 * thread picked at launch time.
 */
#ifndef GS_FOREST_LAYOUT_H
#define GS_FOREST_LAYOUT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_phases.h"

/* Which kernel a layout is for. */
enum
{
	GS_KERNEL_AUTO = 0,			/* options only: let the planner choose */
	GS_KERNEL_ROWS = 1,			/* forest_rows_kernel: one thread per row */
	GS_KERNEL_TILED = 2,		/* forest_tiled_kernel: trees in shared memory */
	GS_KERNEL_BINNED = 3		/* forest_binned_kernel: features quantized to
								 * bins, complete trees; laid out by
								 * forest_binned.h, never by gs_layout_build,
								 * and never chosen automatically */
};

/* Return codes of gs_layout_build (negative, unlike cudaError_t). */
#define GS_LAYOUT_OK			0
#define GS_LAYOUT_EGROUPS		(-1)	/* more than GS_KMAX_GROUPS groups */
#define GS_LAYOUT_ENOMEM		(-2)	/* host allocation failed */
#define GS_LAYOUT_EINVAL		(-3)	/* bad options */
#define GS_LAYOUT_ETILE			(-4)	/* tiled kernel asked for, a tree does
										 * not fit the budget */
#define GS_LAYOUT_ELINEAR		(-11)	/* linear leaves (LightGBM's linear
										 * trees) or CatBoost's categorical
										 * features: the CPU engine's only;
										 * -5 .. -10 are the binned kernel's */

/* Dynamic shared memory assumed when the device's limit is unknown. */
#define GS_SMEM_FALLBACK		(48 * 1024)

/* Choices the caller may impose; zero-initialised means "all automatic". */
typedef struct GsLayoutOptions
{
	int			kernel;			/* GS_KERNEL_* */
	size_t		smem_budget;	/* dynamic shared memory per tiled block;
								 * 0: GS_SMEM_FALLBACK */
	int			max_rpt;		/* rows per thread cap (1, 2, 4); 0: auto */
	int			stage_rows;		/* 0: auto, 1: stage when a tree still fits,
								 * -1: never stage */
	int			bin_pass;		/* GS_KERNEL_BINNED only: 0 the scoring
								 * kernel bins its rows (fused), 1 a
								 * separate binning pass first */
} GsLayoutOptions;

typedef struct GsLayout
{
	/* plan */
	int			kernel;			/* GS_KERNEL_ROWS or GS_KERNEL_TILED */
	int			ngb;			/* margins per row in registers: 1, 2, 4,
								 * ..., 32 (n_groups rounded up) */
	int			max_rpt;		/* rows per thread at most (tiled) */
	int			staged;			/* tiled: rows staged in shared memory */
	size_t		smem_budget;	/* budget the plan was made for */
	uint32_t	tile_vecs;		/* tile region: the largest tile, in 16-byte
								 * vectors (a multiple of 3) */
	uint32_t	max_tree_nodes; /* nodes of the largest tree */
	char		why[160];		/* the reason for the kernel choice */
	/* arrays (host memory, malloc'd) */
	GsVec4	   *nodes;
	size_t		n_vecs;			/* vectors in nodes (4 nodes = 3 vectors) */
	float	   *leaf_lo;		/* [n_vecs / 3 * 4] or NULL, see above */
	GsTreeDesc *trees;
	int32_t		n_trees;
	GsTile	   *tiles;
	uint32_t	n_tiles;
} GsLayout;

/* Round a node count up to a whole number of vectors (4 nodes). */
static inline uint32_t
gs_layout_pad4(uint32_t n)
{
	return (n + 3u) & ~3u;
}

/*
 * Number of nodes of tree t.  Trees are BFS-ordered with children after
 * their parent (forest.h), so scanning from the root while extending the
 * end past every child seen finds the tree's extent without assuming
 * anything about how trees follow each other in f->nodes.
 */
static inline uint32_t
gs_layout_tree_nodes(const GsForest *f, int32_t t)
{
	const GsNode *tree = f->nodes + f->tree_offset[t];
	uint32_t	end = 1;

	for (uint32_t i = 0; i < end; i++)
		if (!(tree[i].info & GS_NODE_LEAF) && tree[i].left + 2 > end)
			end = tree[i].left + 2;
	return end;
}

/* Smallest power of two >= n_groups (1..GS_KMAX_GROUPS), 0 when too many. */
static inline int
gs_layout_group_bucket(int32_t n_groups)
{
	int			b = 1;

	while (b < n_groups && b < GS_KMAX_GROUPS)
		b *= 2;
	return n_groups <= b ? b : 0;
}

/* Bytes of shared memory the staged rows take for rpt rows per thread. */
static inline size_t
gs_layout_stage_bytes(int rpt, int32_t n_features)
{
	return (size_t) GS_KTHREADS * (size_t) rpt * (size_t) n_features * sizeof(float);
}

/*
 * Dynamic shared memory one block of l's kernel needs when its threads
 * score rpt rows each (0 for the rows kernel).
 */
static inline size_t
gs_layout_smem_bytes(const GsLayout *l, int rpt, int32_t n_features)
{
	if (l->kernel != GS_KERNEL_TILED)
		return 0;
	return (size_t) l->tile_vecs * sizeof(GsVec4) +
		(l->staged ? gs_layout_stage_bytes(rpt, n_features) : 0);
}

/*
 * Rows per thread for one launch of n_rows rows: the plan's maximum,
 * halved while the grid would give fewer than 4 blocks to each of the
 * device's n_sm multiprocessors (more rows per thread amortise the tile
 * loads over more rows; more blocks keep every multiprocessor busy).
 * n_sm <= 0 means unknown: the maximum.
 */
static inline int
gs_layout_pick_rpt(const GsLayout *l, size_t n_rows, int n_sm)
{
	int			rpt = l->kernel == GS_KERNEL_TILED ? l->max_rpt : 1;

	while (rpt > 1 && n_sm > 0 &&
		   (n_rows + (size_t) GS_KTHREADS * rpt - 1) / ((size_t) GS_KTHREADS * rpt) < (size_t) n_sm * 4)
		rpt /= 2;
	return rpt;
}

/* Release a layout's arrays (the struct itself is the caller's). */
static inline void
gs_layout_free(GsLayout *l)
{
	free(l->nodes);
	free(l->leaf_lo);
	free(l->trees);
	free(l->tiles);
	l->nodes = NULL;
	l->leaf_lo = NULL;
	l->trees = NULL;
	l->tiles = NULL;
}

/*
 * Choose kernel, rows per thread and staging for forest f under options
 * opt (NULL: all automatic), filling the plan fields of l (no arrays).
 * tree_nodes[t] are the trees' node counts.
 *
 * The tiled kernel needs every tree, padded to 4 nodes, to fit the tile
 * region; the tile region is the budget minus the staged rows.  Rows are
 * staged (automatic mode) with the most rows per thread, of 4, 2, 1, for
 * which the staged rows take at most 60% of the budget and the largest
 * tree still fits; otherwise rows are read from global memory, 2 per
 * thread.  Rows per thread are also capped so that rpt * ngb <= 32
 * margins.  When the tiled kernel is impossible the rows kernel is chosen
 * (or GS_LAYOUT_ETILE returned if the tiled kernel was imposed).
 */
static inline int
gs_layout_plan(const GsForest *f, const GsLayoutOptions *opt,
			   const uint32_t *tree_nodes, GsLayout *l)
{
	GsLayoutOptions o;
	size_t		budget,
				tree_bytes,
				tile_budget;
	int			rpt_cap;

	memset(&o, 0, sizeof(o));
	if (opt)
		o = *opt;
	if (o.kernel < GS_KERNEL_AUTO || o.kernel > GS_KERNEL_TILED ||
		(o.max_rpt != 0 && o.max_rpt != 1 && o.max_rpt != 2 && o.max_rpt != 4) ||
		o.stage_rows < -1 || o.stage_rows > 1)
		return GS_LAYOUT_EINVAL;
	l->ngb = gs_layout_group_bucket(f->n_groups);
	if (l->ngb == 0)
		return GS_LAYOUT_EGROUPS;
	budget = o.smem_budget ? o.smem_budget : GS_SMEM_FALLBACK;
	l->smem_budget = budget;

	l->max_tree_nodes = 0;
	for (int32_t t = 0; t < f->n_trees; t++)
		if (tree_nodes[t] > l->max_tree_nodes)
			l->max_tree_nodes = tree_nodes[t];
	tree_bytes = (size_t) gs_layout_pad4(l->max_tree_nodes) * sizeof(GsNode);

	rpt_cap = GS_KMAX_RPT;
	while (rpt_cap > 1 && rpt_cap * l->ngb > GS_KMAX_GROUPS)
		rpt_cap /= 2;
	if (o.max_rpt && o.max_rpt < rpt_cap)
		rpt_cap = o.max_rpt;

	l->staged = 0;
	l->max_rpt = rpt_cap < 2 ? rpt_cap : 2;
	if (o.stage_rows >= 0)
	{
		for (int rpt = rpt_cap; rpt >= 1; rpt /= 2)
		{
			size_t		sb = gs_layout_stage_bytes(rpt, f->n_features);

			if (sb + tree_bytes <= budget &&
				(o.stage_rows == 1 || sb * 10 <= budget * 6))
			{
				l->staged = 1;
				l->max_rpt = rpt;
				break;
			}
		}
	}
	if (o.max_rpt && !l->staged)
		l->max_rpt = rpt_cap;
	tile_budget = budget - (l->staged ? gs_layout_stage_bytes(l->max_rpt, f->n_features) : 0);
	tile_budget -= tile_budget % (4 * sizeof(GsNode));	/* whole vectors */

	if (tree_bytes <= tile_budget && o.kernel != GS_KERNEL_ROWS)
	{
		l->kernel = GS_KERNEL_TILED;
		l->tile_vecs = (uint32_t) (tile_budget / sizeof(GsVec4));
		snprintf(l->why, sizeof(l->why),
				 "every tree fits a %zu-byte tile (largest tree %u nodes)",
				 tile_budget, l->max_tree_nodes);
	}
	else if (o.kernel == GS_KERNEL_TILED)
		return GS_LAYOUT_ETILE;
	else
	{
		l->kernel = GS_KERNEL_ROWS;
		l->staged = 0;
		l->max_rpt = 1;
		l->tile_vecs = 0;
		if (o.kernel == GS_KERNEL_ROWS)
			snprintf(l->why, sizeof(l->why), "rows kernel imposed by the caller");
		else
			snprintf(l->why, sizeof(l->why),
					 "largest tree (%u nodes, %zu bytes) exceeds the %zu-byte tile budget",
					 l->max_tree_nodes, tree_bytes, tile_budget);
	}
	return GS_LAYOUT_OK;
}

/*
 * Plan and lay out forest f for the device (see the file header).  On
 * success l owns malloc'd arrays (gs_layout_free); on failure it owns
 * nothing.  Returns GS_LAYOUT_OK or a negative GS_LAYOUT_E* code.
 */
static inline int
gs_layout_build(const GsForest *f, const GsLayoutOptions *opt, GsLayout *l)
{
	uint32_t   *tn;
	GsNode	   *nodes;
	size_t		n_nodes = 0;
	uint32_t	tile_nodes;
	int			rc;

	memset(l, 0, sizeof(*l));
	if (f->linear || f->cb_ctrs)
		return GS_LAYOUT_ELINEAR;
	tn = (uint32_t *) malloc(sizeof(uint32_t) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	if (tn == NULL)
		return GS_LAYOUT_ENOMEM;
	for (int32_t t = 0; t < f->n_trees; t++)
		tn[t] = gs_layout_tree_nodes(f, t);
	rc = gs_layout_plan(f, opt, tn, l);
	if (rc != GS_LAYOUT_OK)
	{
		free(tn);
		return rc;
	}

	/* tiles: greedy runs of consecutive trees that fit the tile region */
	tile_nodes = l->kernel == GS_KERNEL_TILED ? l->tile_vecs / 3 * 4 : UINT32_MAX;
	l->n_trees = f->n_trees;
	l->trees = (GsTreeDesc *) malloc(sizeof(GsTreeDesc) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	l->tiles = (GsTile *) malloc(sizeof(GsTile) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	if (l->trees == NULL || l->tiles == NULL)
	{
		free(tn);
		gs_layout_free(l);
		return GS_LAYOUT_ENOMEM;
	}
	l->n_tiles = 0;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		GsTile	   *cur = l->n_tiles ? &l->tiles[l->n_tiles - 1] : NULL;
		uint32_t	used = cur ? (uint32_t) (n_nodes - cur->first_node) : 0;

		if (cur == NULL || (uint64_t) gs_layout_pad4(used + tn[t]) > tile_nodes)
		{
			n_nodes = gs_layout_pad4((uint32_t) n_nodes);
			cur = &l->tiles[l->n_tiles++];
			cur->first_tree = (uint32_t) t;
			cur->n_trees = 0;
			cur->first_node = (uint32_t) n_nodes;
		}
		l->trees[t].first = (uint32_t) n_nodes;
		l->trees[t].n_nodes = tn[t];
		l->trees[t].group = f->tree_group[t];
		l->trees[t].depth = f->tree_depth[t];
		cur->n_trees++;
		n_nodes += tn[t];
	}
	n_nodes = gs_layout_pad4((uint32_t) n_nodes);
	for (uint32_t i = 0; i < l->n_tiles; i++)
	{
		size_t		end = i + 1 < l->n_tiles ? l->tiles[i + 1].first_node : n_nodes;

		l->tiles[i].n_vec = (uint32_t) ((end - l->tiles[i].first_node) / 4 * 3);
	}

	/*
	 * The tile region need not be larger than the largest tile: a small
	 * forest then leaves the rest of the budget unused (more blocks per
	 * multiprocessor) instead of reserving it.
	 */
	if (l->kernel == GS_KERNEL_TILED)
	{
		uint32_t	largest = 0;

		for (uint32_t i = 0; i < l->n_tiles; i++)
			if (l->tiles[i].n_vec > largest)
				largest = l->tiles[i].n_vec;
		l->tile_vecs = largest;
	}

	/* the node array, zero padding between tiles */
	l->n_vecs = n_nodes / 4 * 3;
	l->nodes = (GsVec4 *) calloc(l->n_vecs > 0 ? l->n_vecs : 1, sizeof(GsVec4));
	if (l->nodes == NULL)
	{
		free(tn);
		gs_layout_free(l);
		return GS_LAYOUT_ENOMEM;
	}
	nodes = (GsNode *) l->nodes;
	for (int32_t t = 0; t < f->n_trees; t++)
		memcpy(nodes + l->trees[t].first, f->nodes + f->tree_offset[t],
			   sizeof(GsNode) * tn[t]);
	if (f->leaf_lo)
	{
		l->leaf_lo = (float *) calloc(n_nodes > 0 ? n_nodes : 1, sizeof(float));
		if (l->leaf_lo == NULL)
		{
			free(tn);
			gs_layout_free(l);
			return GS_LAYOUT_ENOMEM;
		}
		for (int32_t t = 0; t < f->n_trees; t++)
			memcpy(l->leaf_lo + l->trees[t].first, f->leaf_lo + f->tree_offset[t],
				   sizeof(float) * tn[t]);
	}
	free(tn);
	return GS_LAYOUT_OK;
}

#endif							/* GS_FOREST_LAYOUT_H */

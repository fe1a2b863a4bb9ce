/*
 * forest_binned.h
 *	  Host side of the binned GPU kernel (GS_KERNEL_BINNED): which forests
 *	  qualify, the per-feature threshold tables, the complete-tree layout
 *	  and the tile plan.  Plain C that also compiles as C++, so that
 *	  gs_dforest_create_ex (nvcc) and the CPU emulation test
 *	  (tests/unit/test_binned.c, gcc) lay out every model identically.
 *	  The device-side phases and the node format: binned_phases.h.
 *
 * A GsBinnedLayout is host memory owned by whoever built it
 * (gs_binned_free releases its arrays; the struct is the caller's).  It
 * holds:
 *	- thr / thr_off: per feature f the sorted distinct split thresholds
 *	  thr[thr_off[f] .. thr_off[f+1]) (distinct by float ==, so -0.0 and
 *	  0.0 are one threshold);
 *	- words: every tree as a complete tree of its own depth, a block of
 *	  2^(D+1) words (internal nodes level by level, one padding word, 2^D
 *	  leaves; binned_phases.h), trees of one tile back to back, every tile
 *	  starting on a multiple of 4 words (16 bytes), padding zero;
 *	- trees / tiles: as GsTreeDesc / GsTile of kernel_phases.h with word
 *	  indices (first = the tree's first word, n_nodes = its words);
 *	- the plan: group bucket, rows per thread, fused or separate binning
 *	  pass, tile region size, rows per chunk of the separate pass.
 *
 * Who qualifies (otherwise gs_binned_build refuses with a GS_BINNED_E*
 * code and the caller uses the other kernels): only plain numerical splits
 * (GsForest.split_kinds == 0), no tree deeper than GS_BINNED_MAX_DEPTH, at
 * most GS_BIN_MAX_THRESHOLDS distinct thresholds per feature, at most
 * GS_BIN_MAX_FEATURES features, at most GS_KMAX_GROUPS groups, and
 * GS_BINNED_MAX_BYTES of words and thresholds.
 *
 * Correctness of the integer comparison.  Let t_0 < t_1 < ... < t_{n-1}
 * be feature f's distinct thresholds (NaN thresholds are refused; loaders
 * refuse them anyway) and bin(v) = #{i : t_i <= v} for non-NaN v, in
 * 0..n <= 65534, and GS_BIN_MISSING = 0xFFFF for NaN.  For a node with
 * threshold t_j (0 <= j < n, so j <= 65533):
 *	- if v < t_j then t_i > v for every i >= j (they are >= t_j), so at
 *	  most t_0..t_{j-1} are <= v: bin(v) <= j;
 *	- if not v < t_j and v is not NaN, then t_j <= v (floats without NaN
 *	  are totally ordered by <, with -0.0 == 0.0), so t_0..t_j are all
 *	  <= v: bin(v) >= j + 1 > j.
 * Hence for non-NaN v: v < t_j <=> bin(v) <= j.  This holds for v or t_j
 * = +-Inf (ordinary ordered values: -Inf <= everything, v < -Inf never,
 * +Inf < +Inf false), and for signed zeros: -0.0 and 0.0 compare equal
 * both ways, so whichever of them is stored as the threshold, v < t_j and
 * t_i <= v give the same answers as for the other one.  For NaN v:
 * v < t_j is false and bin = 0xFFFF > 65533 >= j, so (bin <= j) is false
 * too, and the default-left term (bin == 0xFFFF) & default_left equals
 * gs_node_step_num's isnan(v) & default_left, while for non-NaN v
 * bin <= 65534 makes that term 0, as isnan(v) is.  So
 *	go_left = (bin <= j) | ((bin == 0xFFFF) & default_left)
 * is gs_node_step_num's decision exactly.  A padding node ("always left",
 * j = 0xFFFF, default-left set) sends every bin, 0xFFFF included, left.
 *
 * Padding to complete trees.  A leaf at depth d < D is replaced by an
 * always-left node; its leftmost descendant at depth D (position
 * p * 2^(D-d) + 2^(D-d) - 1 in level order) carries its value, so the
 * D - d remaining steps lead exactly there.  Unreachable positions are
 * always-left nodes and 0.0 leaves.  Leaves and margins are then the same
 * floats in the same order as the CPU engine's: margins bit-identical.
 *
 * Memory: a tree of depth D takes 2^(D+1) * 4 bytes: 2 KB at depth 8,
 * 8 KB at depth 10, 32 KB at depth 12 (GS_BINNED_MAX_DEPTH).  So a
 * 500-tree depth-8 forest is 1 MB, a 2000-tree depth-10 forest 16 MB (the
 * tiled kernel's 12-byte nodes of such a trained model, ~408K nodes, take
 * about 5 MB), plus 4 bytes per distinct threshold; GS_BINNED_MAX_BYTES
 * (256 MB) caps it.
 */
#ifndef GS_FOREST_BINNED_H
#define GS_FOREST_BINNED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binned_phases.h"
#include "forest_layout.h"

/* Refusals of gs_binned_build (same values as GS_DFOREST_E* codes). */
#define GS_BINNED_ESPLITS		(-5)	/* categorical, zero-as-missing or
										 * equality splits (or a NaN threshold) */
#define GS_BINNED_EDEPTH		(-6)	/* a tree deeper than GS_BINNED_MAX_DEPTH */
#define GS_BINNED_ETHRESHOLDS	(-7)	/* a feature with more than
										 * GS_BIN_MAX_THRESHOLDS thresholds */
#define GS_BINNED_EFEATURES		(-8)	/* more than GS_BIN_MAX_FEATURES features */
#define GS_BINNED_ESIZE			(-9)	/* layout above GS_BINNED_MAX_BYTES */
#define GS_BINNED_EDOUBLE		(-10)	/* leaves summed in double
										 * (GsForest.leaf_lo: LightGBM) */

#define GS_BINNED_MAX_DEPTH		12
#define GS_BIN_MAX_THRESHOLDS	65534
#define GS_BINNED_MAX_BYTES		((size_t) 256 << 20)
/* Device scratch of the separate binning pass, per predict call at most. */
#define GS_BIN_SCRATCH_BYTES	((size_t) 64 << 20)

typedef struct GsBinnedLayout
{
	/* plan */
	int			ngb;			/* margins per row in registers (1..32) */
	int			max_rpt;		/* rows per thread at most (1, 2, 4) */
	int			fused;			/* 1: the scoring kernel bins its rows;
								 * 0: a separate binning pass first */
	size_t		smem_budget;	/* budget the plan was made for */
	uint32_t	tile_vecs;		/* tile region, in 16-byte vectors */
	uint32_t	max_tree_words; /* words of the largest tree */
	int32_t		max_depth;
	size_t		chunk_rows;		/* separate pass: rows binned and scored
								 * per launch pair (scratch bound) */
	char		why[160];		/* refusal or plan summary */
	/* arrays (host memory, malloc'd) */
	uint32_t   *words;
	size_t		n_words;		/* a multiple of 4 */
	GsTreeDesc *trees;
	int32_t		n_trees;
	GsTile	   *tiles;
	uint32_t	n_tiles;
	float	   *thr;
	uint32_t   *thr_off;		/* [n_features + 1] */
	uint32_t	n_thr;
	int32_t		n_features;
} GsBinnedLayout;

/* Release a binned layout's arrays (the struct itself is the caller's). */
static inline void
gs_binned_free(GsBinnedLayout *l)
{
	free(l->words);
	free(l->trees);
	free(l->tiles);
	free(l->thr);
	free(l->thr_off);
	l->words = NULL;
	l->trees = NULL;
	l->tiles = NULL;
	l->thr = NULL;
	l->thr_off = NULL;
}

/* Bytes of shared memory the staged bins take for rpt rows per thread. */
static inline size_t
gs_binned_stage_bytes(int rpt, int32_t n_features)
{
	size_t		b = (size_t) GS_KTHREADS * (size_t) rpt * (size_t) n_features * sizeof(uint16_t);

	return (b + 15) & ~(size_t) 15;
}

/* Dynamic shared memory of one binned block at rpt rows per thread. */
static inline size_t
gs_binned_smem_bytes(const GsBinnedLayout *l, int rpt)
{
	return (size_t) l->tile_vecs * sizeof(GsVec4) + gs_binned_stage_bytes(rpt, l->n_features);
}

/* Rows per thread for a launch of n_rows (see gs_layout_pick_rpt). */
static inline int
gs_binned_pick_rpt(const GsBinnedLayout *l, size_t n_rows, int n_sm)
{
	int			rpt = l->max_rpt;

	while (rpt > 1 && n_sm > 0 &&
		   (n_rows + (size_t) GS_KTHREADS * rpt - 1) / ((size_t) GS_KTHREADS * rpt) < (size_t) n_sm * 4)
		rpt /= 2;
	return rpt;
}

/* qsort order of floats (no NaN here; -0.0 and 0.0 compare equal). */
static inline int
gs_binned_cmp_float(const void *a, const void *b)
{
	float		x = *(const float *) a,
				y = *(const float *) b;

	return x < y ? -1 : (y < x ? 1 : 0);
}

/*
 * Index of threshold v in the sorted distinct thresholds t[0..n): the
 * first t[i] that is not < v, which is == v when v is one of them.
 */
static inline uint32_t
gs_binned_find(const float *t, uint32_t n, float v)
{
	uint32_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (t[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Build the per-feature threshold tables of f into l (thr, thr_off,
 * n_thr).  Returns GS_LAYOUT_OK, GS_LAYOUT_ENOMEM, GS_BINNED_ESPLITS (NaN
 * threshold) or GS_BINNED_ETHRESHOLDS.
 */
static inline int
gs_binned_thresholds(const GsForest *f, GsBinnedLayout *l)
{
	const int32_t nf = f->n_features;
	uint32_t   *count = (uint32_t *) calloc((size_t) nf + 1, sizeof(uint32_t));
	uint32_t   *fill;
	size_t		n_split = 0;

	l->thr_off = (uint32_t *) calloc((size_t) nf + 1, sizeof(uint32_t));
	if (count == NULL || l->thr_off == NULL)
	{
		free(count);
		return GS_LAYOUT_ENOMEM;
	}
	for (int64_t i = 0; i < f->n_nodes; i++)
	{
		const GsNode *n = &f->nodes[i];

		if (n->info & GS_NODE_LEAF)
			continue;
		if (n->value != n->value)
		{
			free(count);
			snprintf(l->why, sizeof(l->why), "a split has a NaN threshold");
			return GS_BINNED_ESPLITS;
		}
		count[n->info & GS_NODE_FEATURE_MASK]++;
		n_split++;
	}
	/* all split thresholds grouped by feature, then sorted and deduplicated */
	l->thr = (float *) malloc(sizeof(float) * (n_split > 0 ? n_split : 1));
	fill = (uint32_t *) calloc((size_t) nf + 1, sizeof(uint32_t));
	if (l->thr == NULL || fill == NULL)
	{
		free(count);
		free(fill);
		return GS_LAYOUT_ENOMEM;
	}
	for (int32_t k = 0; k < nf; k++)
		fill[k + 1] = fill[k] + count[k];
	for (int64_t i = 0; i < f->n_nodes; i++)
	{
		const GsNode *n = &f->nodes[i];

		if (!(n->info & GS_NODE_LEAF))
			l->thr[fill[n->info & GS_NODE_FEATURE_MASK]++] = n->value;
	}
	l->n_thr = 0;
	for (int32_t k = 0; k < nf; k++)
	{
		float	   *t = l->thr + (fill[k] - count[k]);
		uint32_t	n = 0;

		qsort(t, count[k], sizeof(float), gs_binned_cmp_float);
		for (uint32_t i = 0; i < count[k]; i++)
			if (n == 0 || l->thr[l->n_thr + n - 1] != t[i])
			{
				/* compacting in place: l->n_thr + n <= fill[k] - count[k] + i */
				l->thr[l->n_thr + n] = t[i];
				n++;
			}
		if (n > GS_BIN_MAX_THRESHOLDS)
		{
			free(count);
			free(fill);
			snprintf(l->why, sizeof(l->why),
					 "feature %d has %u distinct thresholds (at most %d)", k, n,
					 GS_BIN_MAX_THRESHOLDS);
			return GS_BINNED_ETHRESHOLDS;
		}
		l->thr_off[k] = l->n_thr;
		l->n_thr += n;
	}
	l->thr_off[nf] = l->n_thr;
	free(count);
	free(fill);
	return GS_LAYOUT_OK;
}

/*
 * Write tree t of f as a complete tree of depth D (its own depth) into
 * block (2^(D+1) words, already filled with always-left nodes and 0.0
 * leaves; see the file header).  stack has room for 2 * (D + 1) entries
 * of 3 values.  Returns 0, or -1 when a node lies deeper than D (an
 * invalid forest).
 */
static inline int
gs_binned_tree(const GsForest *f, const GsBinnedLayout *l, int32_t t,
			   uint32_t *block, uint32_t *stack)
{
	const GsNode *tree = f->nodes + f->tree_offset[t];
	const int	D = f->tree_depth[t];
	int			sp;

	/* entries: source node, level-order position, depth */
	stack[0] = 0;
	stack[1] = 0;
	stack[2] = 0;
	sp = 1;
	while (sp > 0)
	{
		uint32_t	src,
					pos,
					d;
		GsNode		n;

		sp--;
		src = stack[3 * sp];
		pos = stack[3 * sp + 1];
		d = stack[3 * sp + 2];
		n = tree[src];
		if (n.info & GS_NODE_LEAF)
		{
			/* leftmost descendant at depth D; its leaf is the next word */
			uint32_t	p = ((pos + 1u) << (D - (int) d)) - 1u;
			uint32_t	v;

			memcpy(&v, &n.value, sizeof(v));
			block[p + 1u] = v;
			continue;
		}
		if ((int) d >= D || sp + 2 > 2 * (D + 1))
			return -1;
		{
			uint32_t	feat = n.info & GS_NODE_FEATURE_MASK;
			uint32_t	lo = l->thr_off[feat];
			uint32_t	j = gs_binned_find(l->thr + lo, l->thr_off[feat + 1] - lo, n.value);

			block[pos] = (j << 16) | feat |
				((n.info & GS_NODE_DEFAULT_LEFT) ? GS_BNODE_DEFAULT_LEFT : 0u);
		}
		stack[3 * sp] = n.left + 1u;	/* right child, popped second */
		stack[3 * sp + 1] = 2u * pos + 2u;
		stack[3 * sp + 2] = d + 1u;
		sp++;
		stack[3 * sp] = n.left;
		stack[3 * sp + 1] = 2u * pos + 1u;
		stack[3 * sp + 2] = d + 1u;
		sp++;
	}
	return 0;
}

/*
 * Whether forest f qualifies for the binned layout (see the header
 * comment): 0 with l's counts (features, group bucket, depths) and the
 * complete trees' words in *total_words, or a GS_BINNED_E* / GS_LAYOUT_E*
 * code with l->why saying why not.
 */
static inline int
gs_binned_qualifies(const GsForest *f, GsBinnedLayout *l, size_t *total_words_out)
{
	size_t		total_words = 0;

	l->n_features = f->n_features;
	l->ngb = gs_layout_group_bucket(f->n_groups);
	if (l->ngb == 0)
		return GS_LAYOUT_EGROUPS;
	if (f->split_kinds != 0)
	{
		snprintf(l->why, sizeof(l->why), "the forest has categorical, zero-as-missing or equality splits");
		return GS_BINNED_ESPLITS;
	}
	if (f->leaf_lo)
	{
		snprintf(l->why, sizeof(l->why), "the forest's leaves are summed in double (LightGBM, CatBoost)");
		return GS_BINNED_EDOUBLE;
	}
	if (f->n_features > GS_BIN_MAX_FEATURES)
	{
		snprintf(l->why, sizeof(l->why), "%d features (at most %d)", f->n_features, GS_BIN_MAX_FEATURES);
		return GS_BINNED_EFEATURES;
	}
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		if (f->tree_depth[t] < 0 || f->tree_depth[t] > GS_BINNED_MAX_DEPTH)
		{
			snprintf(l->why, sizeof(l->why), "tree %d has depth %d (at most %d)", t,
					 f->tree_depth[t], GS_BINNED_MAX_DEPTH);
			return GS_BINNED_EDEPTH;
		}
		total_words += (size_t) 2 << f->tree_depth[t];
		if (f->tree_depth[t] > l->max_depth)
			l->max_depth = f->tree_depth[t];
	}
	l->max_tree_words = f->n_trees > 0 ? 2u << l->max_depth : 0;
	if ((total_words + (size_t) f->n_trees * 3) * 4 > GS_BINNED_MAX_BYTES)
	{
		snprintf(l->why, sizeof(l->why), "complete trees take %zu bytes (at most %zu)",
				 total_words * 4, GS_BINNED_MAX_BYTES);
		return GS_BINNED_ESIZE;
	}
	*total_words_out = total_words;
	return 0;
}

/*
 * Plan the binned kernel for f under options opt (NULL: automatic; only
 * smem_budget, max_rpt and bin_pass are used) and lay it out into l (see
 * the file header).  Rows per thread: the most of 4, 2, 1 (and rpt * ngb
 * <= 32, and at most opt->max_rpt) whose staged bins take at most 60% of
 * the budget and leave room for the largest tree; with max_rpt imposed the
 * 60% rule is waived.  On success l owns malloc'd arrays (gs_binned_free);
 * on failure it owns nothing and l->why says why.  Returns GS_LAYOUT_OK,
 * GS_LAYOUT_EGROUPS, GS_LAYOUT_ENOMEM, GS_LAYOUT_EINVAL, GS_LAYOUT_ETILE
 * (a tree and one row per thread's bins do not fit the budget) or a
 * GS_BINNED_E* refusal.
 */
static inline int
gs_binned_build(const GsForest *f, const GsLayoutOptions *opt, GsBinnedLayout *l)
{
	GsLayoutOptions o;
	size_t		total_words = 0,
				budget,
				tile_bytes,
				n_words = 0,
				tile_words;
	uint32_t   *stack;
	int			rc,
				rpt_cap;

	memset(l, 0, sizeof(*l));
	memset(&o, 0, sizeof(o));
	if (opt)
		o = *opt;
	if ((o.max_rpt != 0 && o.max_rpt != 1 && o.max_rpt != 2 && o.max_rpt != 4) ||
		o.bin_pass < 0 || o.bin_pass > 1)
		return GS_LAYOUT_EINVAL;
	if ((rc = gs_binned_qualifies(f, l, &total_words)) != 0)
		return rc;

	/* plan: rows per thread, tile region */
	budget = o.smem_budget ? o.smem_budget : GS_SMEM_FALLBACK;
	l->smem_budget = budget;
	l->fused = o.bin_pass == 0;
	rpt_cap = GS_KMAX_RPT;
	while (rpt_cap > 1 && rpt_cap * l->ngb > GS_KMAX_GROUPS)
		rpt_cap /= 2;
	if (o.max_rpt && o.max_rpt < rpt_cap)
		rpt_cap = o.max_rpt;
	l->max_rpt = 0;
	for (int rpt = rpt_cap; rpt >= 1; rpt /= 2)
	{
		size_t		sb = gs_binned_stage_bytes(rpt, f->n_features);

		if (sb + (size_t) ((l->max_tree_words + 3u) & ~3u) * 4 <= budget &&
			(o.max_rpt != 0 || rpt == 1 || sb * 10 <= budget * 6))
		{
			l->max_rpt = rpt;
			break;
		}
	}
	if (l->max_rpt == 0)
	{
		snprintf(l->why, sizeof(l->why),
				 "a %u-byte tree and one row per thread's bins (%zu bytes) exceed the %zu-byte budget",
				 l->max_tree_words * 4, gs_binned_stage_bytes(1, f->n_features), budget);
		return GS_LAYOUT_ETILE;
	}
	tile_bytes = budget - gs_binned_stage_bytes(l->max_rpt, f->n_features);
	tile_words = tile_bytes / 16 * 4;
	l->chunk_rows = GS_BIN_SCRATCH_BYTES / ((size_t) f->n_features * sizeof(uint16_t));
	l->chunk_rows -= l->chunk_rows % ((size_t) GS_KTHREADS * GS_KMAX_RPT);
	if (l->chunk_rows == 0)
		l->chunk_rows = (size_t) GS_KTHREADS * GS_KMAX_RPT;

	/* thresholds */
	rc = gs_binned_thresholds(f, l);
	if (rc != GS_LAYOUT_OK)
	{
		char		why[sizeof(l->why)];

		memcpy(why, l->why, sizeof(why));
		gs_binned_free(l);
		memcpy(l->why, why, sizeof(why));
		return rc;
	}

	/* tiles: greedy runs of consecutive trees, each tile on 4 words */
	l->n_trees = f->n_trees;
	l->trees = (GsTreeDesc *) malloc(sizeof(GsTreeDesc) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	l->tiles = (GsTile *) malloc(sizeof(GsTile) * (size_t) (f->n_trees > 0 ? f->n_trees : 1));
	stack = (uint32_t *) malloc(sizeof(uint32_t) * 3 * 2 * (GS_BINNED_MAX_DEPTH + 1));
	if (l->trees == NULL || l->tiles == NULL || stack == NULL)
	{
		free(stack);
		gs_binned_free(l);
		return GS_LAYOUT_ENOMEM;
	}
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		GsTile	   *cur = l->n_tiles ? &l->tiles[l->n_tiles - 1] : NULL;
		size_t		tw = (size_t) 2 << f->tree_depth[t];
		size_t		used = cur ? n_words - cur->first_node : 0;

		if (cur == NULL || ((used + tw + 3) & ~(size_t) 3) > tile_words)
		{
			n_words = (n_words + 3) & ~(size_t) 3;
			cur = &l->tiles[l->n_tiles++];
			cur->first_tree = (uint32_t) t;
			cur->n_trees = 0;
			cur->first_node = (uint32_t) n_words;
		}
		l->trees[t].first = (uint32_t) n_words;
		l->trees[t].n_nodes = (uint32_t) tw;
		l->trees[t].group = f->tree_group[t];
		l->trees[t].depth = f->tree_depth[t];
		cur->n_trees++;
		n_words += tw;
	}
	n_words = (n_words + 3) & ~(size_t) 3;
	l->tile_vecs = 0;
	for (uint32_t i = 0; i < l->n_tiles; i++)
	{
		size_t		end = i + 1 < l->n_tiles ? l->tiles[i + 1].first_node : n_words;

		l->tiles[i].n_vec = (uint32_t) ((end - l->tiles[i].first_node) / 4);
		if (l->tiles[i].n_vec > l->tile_vecs)
			l->tile_vecs = l->tiles[i].n_vec;
	}

	/* the words: always-left nodes and 0.0 leaves, then every tree */
	l->n_words = n_words;
	l->words = (uint32_t *) calloc(n_words > 0 ? n_words : 4, sizeof(uint32_t));
	if (l->words == NULL)
	{
		free(stack);
		gs_binned_free(l);
		return GS_LAYOUT_ENOMEM;
	}
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		uint32_t   *block = l->words + l->trees[t].first;
		uint32_t	n_int = (1u << f->tree_depth[t]) - 1u;

		for (uint32_t i = 0; i < n_int; i++)
			block[i] = (GS_BIN_ALWAYS_LEFT << 16) | GS_BNODE_DEFAULT_LEFT;
		if (gs_binned_tree(f, l, t, block, stack) != 0)
		{
			free(stack);
			gs_binned_free(l);
			snprintf(l->why, sizeof(l->why), "tree %d has a node deeper than its depth", t);
			return GS_LAYOUT_EINVAL;
		}
	}
	free(stack);
	snprintf(l->why, sizeof(l->why),
			 "%s binning, %u thresholds, %zu B of complete trees of depth <= %d",
			 l->fused ? "fused" : "separate", l->n_thr, l->n_words * 4, l->max_depth);
	return GS_LAYOUT_OK;
}

#endif							/* GS_FOREST_BINNED_H */

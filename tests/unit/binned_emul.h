/*
 * binned_emul.h
 *	  For test_binned.c and test_binned_synth.c: the binned GPU kernel
 *	  (GS_KERNEL_BINNED) emulated on the CPU phase by phase in barrier order
 *	  (cuda/binned_phases.h), the layout's invariants, and a batch scored
 *	  that way against the CPU engine bit for bit (run_batch).
 */
#ifndef GS_TEST_BINNED_EMUL_H
#define GS_TEST_BINNED_EMUL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_eval.h"
#include "../common/test_util.h"
#include "forest_binned.h"

#define GUARD 8
#define SENTINEL 12345.678f

/* == or both NaN. */
static inline int
same(float a, float b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A column-major batch of n rows (stride ld >= n). */
typedef struct Batch
{
	float	   *x;
	size_t		n,
				ld;
} Batch;

/* Layout invariants; NULL or what is wrong. */
static inline const char *
check_layout(const GsForest *f, const GsBinnedLayout *l)
{
	uint32_t	next = 0;

	if (l->n_trees != f->n_trees || l->n_features != f->n_features)
		return "tree or feature count differs";
	if (gs_binned_smem_bytes(l, l->max_rpt) > l->smem_budget)
		return "shared memory of the plan exceeds the budget";
	if (l->n_words % 4 != 0 || l->thr_off[0] != 0 || l->thr_off[f->n_features] != l->n_thr)
		return "word count or threshold offsets malformed";
	for (int32_t k = 0; k < f->n_features; k++)
		for (uint32_t i = l->thr_off[k] + 1; i < l->thr_off[k + 1]; i++)
			if (!(l->thr[i - 1] < l->thr[i]))
				return "thresholds not sorted and distinct";
	for (uint32_t i = 0; i < l->n_tiles; i++)
	{
		const GsTile *t = &l->tiles[i];
		uint64_t	end = (uint64_t) t->first_node + (uint64_t) t->n_vec * 4;

		if (t->first_tree != next || t->n_trees == 0 || t->first_node % 4 != 0)
			return "tiles do not cover the trees in order, 16-byte aligned";
		if (t->n_vec > l->tile_vecs || end > l->n_words)
			return "tile larger than the tile region or past the words";
		for (uint32_t k = t->first_tree; k < t->first_tree + t->n_trees; k++)
		{
			const GsTreeDesc *d = &l->trees[k];

			if (d->first < t->first_node || (uint64_t) d->first + d->n_nodes > end)
				return "tree outside its tile";
			if (d->group != f->tree_group[k] || d->depth != f->tree_depth[k] ||
				d->n_nodes != (2u << d->depth))
				return "tree descriptor differs from the forest";
		}
		next = t->first_tree + t->n_trees;
	}
	return (int32_t) next == f->n_trees ? NULL : "tiles do not cover every tree";
}

/* Kernel arguments of layout l for batch b (bins: unset). */
static inline GsBinnedArgs
make_args(const GsForest *f, const GsBinnedLayout *l, const Batch *b, float *out, int raw)
{
	GsBinnedArgs a;

	memset(&a, 0, sizeof(a));
	a.k.nodes = (const GsVec4 *) l->words;
	a.k.trees = l->trees;
	a.k.tiles = l->tiles;
	a.k.base_margin = f->base_margin;
	a.k.x = b->x;
	a.k.out = out;
	a.k.ld = b->ld;
	a.k.n_rows = b->n;
	a.k.n_trees = f->n_trees;
	a.k.n_tiles = l->n_tiles;
	a.k.tile_vecs = l->tile_vecs;
	a.k.n_features = f->n_features;
	a.k.n_groups = f->n_groups;
	a.k.n_outputs = f->n_outputs;
	a.k.transform = (int32_t) f->transform;
	a.k.transform_param[0] = f->transform_param[0];
	a.k.transform_param[1] = f->transform_param[1];
	a.k.raw_margins = raw;
	a.thr = l->thr;
	a.thr_off = l->thr_off;
	return a;
}

/*
 * Emulate one launch of forest_binned_kernel<ngb, rpt, fused> on a: every
 * block, every phase, every thread index, in barrier order.
 */
static inline void
emulate_binned(const GsBinnedLayout *l, const GsBinnedArgs *a, int rpt, int fused)
{
	const int	T = GS_KTHREADS;
	const size_t rows_per_block = (size_t) T * (size_t) rpt;
	const size_t blocks = (a->k.n_rows + rows_per_block - 1) / rows_per_block;
	const size_t smem_bytes = gs_binned_smem_bytes(l, rpt);
	GsVec4	   *smem = malloc(smem_bytes);
	float	   *m = malloc(sizeof(float) * rows_per_block * (size_t) l->ngb);

	for (size_t b = 0; b < blocks; b++)
	{
		memset(smem, 0xFF, smem_bytes);
		for (int tid = 0; tid < T; tid++)
			gs_phase_init(&a->k, rpt, l->ngb, m + (size_t) tid * rpt * l->ngb);
		for (int tid = 0; tid < T; tid++)
			gs_phase_stage_bins(a, b, tid, T, rpt, fused, (uint16_t *) (smem + a->k.tile_vecs));
		for (uint32_t i = 0; i < a->k.n_tiles; i++)
		{
			memset(smem, 0xFF, (size_t) a->k.tile_vecs * sizeof(GsVec4));
			for (int tid = 0; tid < T; tid++)
				gs_phase_load_btile(a, i, tid, T, smem);
			for (int tid = 0; tid < T; tid++)
				gs_phase_walk_btile(a, i, tid, T, rpt, l->ngb, smem,
									m + (size_t) tid * rpt * l->ngb);
		}
		for (int tid = 0; tid < T; tid++)
			gs_phase_output(&a->k, b, tid, T, rpt, l->ngb, m + (size_t) tid * rpt * l->ngb);
	}
	free(smem);
	free(m);
}

/*
 * Emulate gs_dforest_predict_binned of forest_binned.cu with rpt rows per
 * thread (which gs_binned_pick_rpt picks by batch size on the device):
 * fused, one launch; otherwise chunks of `chunk` rows, each binned by
 * forest_bin_kernel (emulated with a grid of 3 blocks, so the grid-stride
 * loop wraps) into a poisoned scratch and then scored.
 */
static inline void
emulate_predict(const GsForest *f, const GsBinnedLayout *l, const Batch *b, float *out,
				int raw, int fused, size_t chunk, int rpt)
{
	GsBinnedArgs a = make_args(f, l, b, out, raw);
	size_t		per_row = (size_t) (raw ? f->n_groups : f->n_outputs);
	uint16_t   *scratch;

	if (fused)
	{
		emulate_binned(l, &a, rpt, 1);
		return;
	}
	chunk = b->n < chunk ? b->n : chunk;
	scratch = malloc(sizeof(uint16_t) * (chunk > 0 ? chunk : 1) * (size_t) f->n_features);
	for (size_t r0 = 0; r0 < b->n; r0 += chunk)
	{
		size_t		nc = b->n - r0 < chunk ? b->n - r0 : chunk;
		const size_t grid = 3 * GS_KTHREADS;

		memset(scratch, 0x7E, sizeof(uint16_t) * chunk * (size_t) f->n_features);
		a.k.x = b->x + r0;
		a.k.out = out + r0 * per_row;
		a.k.n_rows = nc;
		a.bins = scratch;
		a.bins_ld = nc;
		for (size_t g = 0; g < grid; g++)
			gs_bin_thread(&a, g, grid);
		emulate_binned(l, &a, rpt, 0);
	}
	free(scratch);
}

/*
 * Every check of one layout on one batch; returns the number of
 * mismatches, the first described in msg.
 */
static inline long
run_batch(const GsForest *f, const GsBinnedLayout *l, const Batch *b, char *msg, size_t msglen)
{
	const size_t nm = b->n * (size_t) f->n_groups,
				no = b->n * (size_t) f->n_outputs;
	float	   *cm = malloc(sizeof(float) * (nm + 1)),
			   *co = malloc(sizeof(float) * (no + 1)),
			   *out = malloc(sizeof(float) * ((nm > no ? nm : no) + GUARD));
	uint16_t   *rb = malloc(sizeof(uint16_t) * (size_t) f->n_features);
	long		bad = 0;
	/* separate pass: one chunk at rpt 1, chunks with a remainder else */
	const size_t chunks[] = {(size_t) 1 << 30, 700, 256};

	gs_cpu_predict(f, b->x, b->ld, b->n, cm, co);

	/* per tree, per row: the binned leaf is the CPU engine's leaf */
	for (size_t r = 0; r < b->n; r++)
	{
		for (int32_t k = 0; k < f->n_features; k++)
			rb[k] = (uint16_t) gs_bin_feature(l->thr, l->thr_off, k, b->x[(size_t) k * b->ld + r]);
		for (int32_t t = 0; t < f->n_trees; t++)
		{
			float		want = gs_tree_leaf(f->nodes + f->tree_offset[t], b->x + r, b->ld, f->cat_words),
						got = gs_binned_tree_leaf(l->words + l->trees[t].first, l->trees[t].depth, rb, 1);

			if (!same(got, want) && bad++ == 0)
				snprintf(msg, msglen, " (first: row %zu tree %d leaf %.9g, cpu %.9g)",
						 r, t, (double) got, (double) want);
		}
	}

	/* the kernel, emulated */
	for (int fused = 0; fused <= 1; fused++)
		for (int s = 0, rpt = 1; rpt <= l->max_rpt; s++, rpt *= 2)
			for (int raw = 0; raw <= 1; raw++)
			{
				const float *want = raw ? cm : co;
				size_t		cnt = raw ? nm : no;

				for (size_t i = 0; i < cnt + GUARD; i++)
					out[i] = SENTINEL;
				emulate_predict(f, l, b, out, raw, fused, chunks[s], rpt);
				for (size_t i = 0; i < cnt; i++)
					if (!same(out[i], want[i]) && bad++ == 0)
						snprintf(msg, msglen, " (first: %s, rpt %d, chunk %zu, %s[%zu] = %.9g, cpu %.9g)",
								 fused ? "fused" : "separate pass", rpt, fused ? b->n : chunks[s],
								 raw ? "margin" : "output", i, (double) out[i], (double) want[i]);
				for (size_t i = cnt; i < cnt + GUARD; i++)
					if (out[i] != SENTINEL && bad++ == 0)
						snprintf(msg, msglen, " (write past the outputs, %s)", fused ? "fused" : "separate pass");
			}
	free(cm);
	free(co);
	free(out);
	free(rb);
	return bad;
}

#endif							/* GS_TEST_BINNED_EMUL_H */

/*
 * test_kernel_emulation.c
 *	  CPU emulation of the GPU scoring kernels (cuda/forest_kernel.cu),
 *	  checked bit for bit against the CPU engine.  Runs anywhere, no GPU.
 *
 * The kernels are thin shells around the __host__ __device__ phases of
 * cuda/kernel_phases.h; this test runs those same phases, compiled as C,
 * in the order the shells and their barriers impose: for every block, the
 * "init" phase for every thread index, then (staged plans) "stage rows"
 * for every thread index, then for every tile "load tile" for every thread
 * index followed by "walk tile" for every thread index, then "output" for
 * every thread index.  Models are laid out and tiled by forest_layout.h,
 * the planner gs_dforest_create uses.  Shared memory is a heap buffer of
 * exactly the launch's size, poisoned (all bits set: NaN values, leaf
 * flags) before staging and before every tile load, so a walk that read
 * anything a load phase did not write would show up in the results.
 *
 * Forests with double leaves (GsForest.leaf_lo: LightGBM) run the phases
 * with double margins (gs_phase_init_dbl, ...), as the device does.
 *
 * For every fixture model (tests/fixtures/models/ *.json, *.ubj and *.model), for
 * shared-memory budgets of 4 KB, 48 KB, 113 KB (the H100 default: two
 * blocks per multiprocessor) and 227 KB (the H100 opt-in maximum), for the
 * automatic plan and for plans with rows forced into / kept out of shared
 * memory and 4 rows per thread, for every rows-per-thread value the plan
 * allows, and for batches of 1, 31, 32, 33, 257 and 1000 rows (random
 * values around the model's thresholds, exact thresholds and 10% NaN
 * included; every other batch with ld > n_rows): margins and transformed
 * outputs must equal gs_cpu_margins / gs_cpu_predict exactly (== , with
 * NaN == NaN), nothing may be written past the batch's outputs, and the
 * layout must satisfy the tiling invariants.  The rows kernel is checked
 * the same way.  TAP output, then "kernel-emulation: N passed, N failed";
 * exit status 1 on any failure.  (test_device_math.c checks the device
 * transform's own expf, exp2f and softplus.)
 *
 * With --models DIR it checks only the model files in DIR, every plan (the
 * differential campaign, tests/diff/campaign.py, runs it on random models).
 *
 * Build with the Makefile, which lists the core's sources, and run from
 * tests/unit (relative fixture paths, like test_core):
 *
 *   make tests/unit/test_kernel_emulation && cd tests/unit && ./test_kernel_emulation
 *
 * (tests/unit/test_kernel_emulation_asan: the same under ASan + UBSan).
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "mlp/mlp.h"
#include "frontend/onnx/onnx_load.h"
#include "forest/forest_eval.h"
#include "forest_layout.h"
#include "../common/test_util.h"
#include "kernel_phases.h"

#define FIXTURES "../fixtures"
#define GUARD 8					/* sentinel floats after every output buffer */
#define SENTINEL 12345.678f

/* Equal as bits of meaning: == or both NaN. */
static int
same(float a, float b)
{
	return a == b || (isnan(a) && isnan(b));
}

/*
 * Check the layout invariants the kernels rely on; returns NULL or what
 * is wrong.
 */
static const char *
check_layout(const GsForest *f, const GsLayout *l, size_t budget)
{
	const GsNode *nodes = (const GsNode *) l->nodes;
	uint32_t	next_tree = 0;

	if (l->n_trees != f->n_trees)
		return "tree count differs";
	if (l->kernel == GS_KERNEL_TILED &&
		gs_layout_smem_bytes(l, l->max_rpt, f->n_features) > budget)
		return "shared memory of the plan exceeds the budget";
	if (l->kernel == GS_KERNEL_TILED && l->tile_vecs % 3 != 0)
		return "tile region is not a whole number of 4-node groups";
	for (uint32_t i = 0; i < l->n_tiles; i++)
	{
		const GsTile *t = &l->tiles[i];
		uint64_t	end = (uint64_t) t->first_node + (uint64_t) t->n_vec / 3 * 4;

		if (t->first_tree != next_tree || t->n_trees == 0)
			return "tiles do not cover the trees in order";
		if (t->first_node % 4 != 0 || t->n_vec % 3 != 0)
			return "tile not aligned to 16 bytes";
		if (l->kernel == GS_KERNEL_TILED && t->n_vec > l->tile_vecs)
			return "tile larger than the tile region";
		if ((size_t) end > l->n_vecs / 3 * 4)
			return "tile past the node array";
		for (uint32_t k = t->first_tree; k < t->first_tree + t->n_trees; k++)
		{
			const GsTreeDesc *d = &l->trees[k];

			if (d->first < t->first_node || (uint64_t) d->first + d->n_nodes > end)
				return "tree outside its tile";
			if (d->group != f->tree_group[k] || d->depth != f->tree_depth[k])
				return "tree descriptor differs from the forest";
			if (memcmp(nodes + d->first, f->nodes + f->tree_offset[k],
					   sizeof(GsNode) * d->n_nodes) != 0)
				return "tree nodes differ from the forest";
			if ((l->leaf_lo != NULL) != (f->leaf_lo != NULL) ||
				(l->leaf_lo && memcmp(l->leaf_lo + d->first, f->leaf_lo + f->tree_offset[k],
									  sizeof(float) * d->n_nodes) != 0))
				return "tree leaf low parts differ from the forest";
		}
		next_tree = t->first_tree + t->n_trees;
	}
	if ((int32_t) next_tree != f->n_trees)
		return "tiles do not cover every tree";
	return NULL;
}

/*
 * Emulate one launch of the tiled kernel with rpt rows per thread: every
 * block, every phase, every thread index, in barrier order.
 */
static void
emulate_tiled(const GsLayout *l, const GsKernelArgs *a, int rpt)
{
	const int	T = GS_KTHREADS;
	const size_t rows_per_block = (size_t) T * (size_t) rpt;
	const size_t blocks = (a->n_rows + rows_per_block - 1) / rows_per_block;
	const size_t smem_bytes = gs_layout_smem_bytes(l, rpt, a->n_features);
	const size_t per_thread = (size_t) rpt * (size_t) l->ngb;
	const int	dbl = a->leaf_lo != NULL;
	GsVec4	   *smem = malloc(smem_bytes > 0 ? smem_bytes : 16);
	float	   *m = malloc(sizeof(float) * (size_t) T * per_thread);
	double	   *md = malloc(sizeof(double) * (size_t) T * per_thread);

	for (size_t b = 0; b < blocks; b++)
	{
		memset(smem, 0xFF, smem_bytes);
		for (int tid = 0; tid < T; tid++)
			if (dbl)
				gs_phase_init_dbl(a, rpt, l->ngb, md + (size_t) tid * per_thread);
			else
				gs_phase_init(a, rpt, l->ngb, m + (size_t) tid * per_thread);
		if (l->staged)
			for (int tid = 0; tid < T; tid++)
				gs_phase_stage_rows(a, b, tid, T, rpt, (float *) (smem + a->tile_vecs));
		for (uint32_t i = 0; i < a->n_tiles; i++)
		{
			/* __syncthreads(); then load; __syncthreads(); then walk */
			memset(smem, 0xFF, (size_t) a->tile_vecs * sizeof(GsVec4));
			for (int tid = 0; tid < T; tid++)
				gs_phase_load_tile(a, i, tid, T, smem);
			for (int tid = 0; tid < T; tid++)
				if (dbl)
					gs_phase_walk_tile_dbl(a, i, b, tid, T, rpt, l->ngb, l->staged, smem,
										   md + (size_t) tid * per_thread);
				else
					gs_phase_walk_tile(a, i, b, tid, T, rpt, l->ngb, l->staged, smem,
									   m + (size_t) tid * per_thread);
		}
		for (int tid = 0; tid < T; tid++)
			if (dbl)
				gs_phase_output_dbl(a, b, tid, T, rpt, l->ngb, md + (size_t) tid * per_thread);
			else
				gs_phase_output(a, b, tid, T, rpt, l->ngb, m + (size_t) tid * per_thread);
	}
	free(smem);
	free(m);
	free(md);
}

/* Emulate one launch of the rows kernel (no barriers, no shared memory). */
static void
emulate_rows(const GsLayout *l, const GsKernelArgs *a)
{
	const size_t blocks = (a->n_rows + GS_KTHREADS - 1) / GS_KTHREADS;
	float		m[GS_KMAX_GROUPS];
	double		md[GS_KMAX_GROUPS];

	for (size_t b = 0; b < blocks; b++)
		for (int tid = 0; tid < GS_KTHREADS; tid++)
			if (a->leaf_lo)
				gs_rows_thread_dbl(a, b, tid, GS_KTHREADS, l->ngb, md);
			else
				gs_rows_thread(a, b, tid, GS_KTHREADS, l->ngb, m);
}

/*
 * For forests with categorical splits: overwrite the values of the
 * features categorical nodes split on with category codes, in and out of
 * the sets, and the edge values of the rules (negative fractions, codes past
 * the bitset, 2^24, huge values, zero, NaN), so that both branches and every
 * special case are taken.  gs_fill_batch would give them bit patterns of
 * set indices, which are not codes.
 */
static void
fill_categories(const GsForest *f, float *x, size_t n, size_t ld)
{
	static const float edge[] = {-0.5f, -1.0f, -1e9f, 0.0f, -0.0f, 1e-36f, 0.5f, 3.7f,
	16777215.0f, 16777216.0f, 1e30f, NAN};

	if (f->n_cat_words == 0)
		return;
	for (int64_t i = 0; i < f->n_nodes; i++)
	{
		const GsNode *nd = &f->nodes[i];
		uint32_t	feat = nd->info & GS_NODE_FEATURE_MASK;

		if ((nd->info & GS_NODE_LEAF) || !(nd->info & GS_NODE_CATEGORICAL))
			continue;
		for (size_t r = 0; r < n; r++)
		{
			double		u = gs_rnd();

			x[(size_t) feat * ld + r] = u < 0.2 ?
				edge[(size_t) (gs_rnd() * (sizeof(edge) / sizeof(edge[0])))] :
				(float) (int) (gs_rnd() * 70);
		}
	}
}

/*
 * Score every batch size with layout l (every rows-per-thread value the
 * plan allows) and compare margins and outputs with the CPU engine.
 * Returns the number of mismatching values (detail in msg).
 */
static long
run_layout(const GsForest *f, const GsLayout *l, char *msg, size_t msglen)
{
	const size_t sizes[] = {1, 31, 32, 33, 257, 1000};
	long		bad = 0;

	msg[0] = '\0';
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		size_t		n = sizes[s];
		size_t		ld = n + (s % 2 ? 5 : 0);
		float	   *x = malloc(sizeof(float) * ld * (size_t) f->n_features);
		float	   *cm = malloc(sizeof(float) * n * (size_t) f->n_groups);
		float	   *co = malloc(sizeof(float) * n * (size_t) f->n_outputs);
		size_t		no_m = n * (size_t) f->n_groups,
					no_o = n * (size_t) f->n_outputs;
		float	   *gm = malloc(sizeof(float) * (no_m + GUARD));
		float	   *go = malloc(sizeof(float) * (no_o + GUARD));

		gs_fill_batch(f, x, n, ld);
		fill_categories(f, x, n, ld);
		gs_cpu_predict(f, x, ld, n, cm, co);
		for (int rpt = 1; rpt <= (l->kernel == GS_KERNEL_TILED ? l->max_rpt : 1); rpt *= 2)
		{
			GsKernelArgs a;

			for (int raw = 0; raw <= 1; raw++)
			{
				float	   *out = raw ? gm : go;
				const float *want = raw ? cm : co;
				size_t		cnt = raw ? no_m : no_o;

				for (size_t i = 0; i < cnt + GUARD; i++)
					out[i] = SENTINEL;
				memset(&a, 0, sizeof(a));
				a.nodes = l->nodes;
				a.trees = l->trees;
				a.tiles = l->tiles;
				a.base_margin = f->base_margin;
				a.leaf_lo = l->leaf_lo;
				a.cats = f->cat_words;
				a.split_kinds = f->split_kinds;
				a.x = x;
				a.out = out;
				a.ld = ld;
				a.n_rows = n;
				a.n_trees = f->n_trees;
				a.n_tiles = l->n_tiles;
				a.tile_vecs = l->tile_vecs;
				a.n_features = f->n_features;
				a.n_groups = f->n_groups;
				a.n_outputs = f->n_outputs;
				a.transform = (int32_t) f->transform;
				a.transform_param[0] = f->transform_param[0];
				a.transform_param[1] = f->transform_param[1];
				a.raw_margins = raw;
				if (l->kernel == GS_KERNEL_TILED)
					emulate_tiled(l, &a, rpt);
				else
					emulate_rows(l, &a);
				for (size_t i = 0; i < cnt; i++)
					if (!same(out[i], want[i]))
					{
						if (bad++ == 0)
							snprintf(msg, msglen, " (first: %zu rows, rpt %d, %s[%zu] = %.9g, cpu %.9g)",
									 n, rpt, raw ? "margin" : "output", i,
									 (double) out[i], (double) want[i]);
					}
				for (size_t i = cnt; i < cnt + GUARD; i++)
					if (out[i] != SENTINEL)
					{
						if (bad++ == 0)
							snprintf(msg, msglen, " (write past the outputs: %zu rows, rpt %d)", n, rpt);
					}
			}
		}
		free(x);
		free(cm);
		free(co);
		free(gm);
		free(go);
	}
	return bad;
}

/* One plan of one model: build, check invariants, emulate, report. */
static void
check_plan(const char *model, const GsForest *f, const char *cfg,
		   const GsLayoutOptions *opt)
{
	GsLayout	l;
	char		label[512],
				what[512],
				msg[256];
	int			rc = gs_layout_build(f, opt, &l);
	const char *inv;
	long		bad;

	snprintf(label, sizeof(label), "%s [%s]", model, cfg);
	if (rc != GS_LAYOUT_OK)
	{
		snprintf(what, sizeof(what), "layout failed with code %d", rc);
		gs_tap(0, label, what);
		return;
	}
	inv = check_layout(f, &l, opt->smem_budget ? opt->smem_budget : GS_SMEM_FALLBACK);
	if (inv)
	{
		gs_tap(0, label, inv);
		gs_layout_free(&l);
		return;
	}
	bad = run_layout(f, &l, msg, sizeof(msg));
	if (l.kernel == GS_KERNEL_TILED)
		snprintf(what, sizeof(what),
				 "tiled, %s rows, rpt <= %d, %u tiles of <= %u B: %ld values differ from the CPU engine%s",
				 l.staged ? "staged" : "global", l.max_rpt, l.n_tiles,
				 l.tile_vecs * 16u, bad, msg);
	else
		snprintf(what, sizeof(what), "rows kernel (%s): %ld values differ from the CPU engine%s",
				 l.why, bad, msg);
	gs_tap(bad == 0, label, what);
	gs_layout_free(&l);
}

/* Planner edge cases that no fixture reaches. */
static void
test_planner(void)
{
	GsForest	f;
	GsNode		nodes[3] = {{0.5f, 0, 1}, {-1.0f, GS_NODE_LEAF, 0}, {2.0f, GS_NODE_LEAF, 0}};
	uint32_t	off[1] = {0};
	int32_t		grp[1] = {0},
				dep[1] = {1};
	float		base[33] = {0};
	GsLayout	l;
	GsLayoutOptions o;

	memset(&f, 0, sizeof(f));
	f.n_features = 1;
	f.n_groups = 33;
	f.n_outputs = 33;
	f.n_trees = 1;
	f.n_nodes = 3;
	f.nodes = nodes;
	f.tree_offset = off;
	f.tree_group = grp;
	f.tree_depth = dep;
	f.base_margin = base;
	gs_tap(gs_layout_build(&f, NULL, &l) == GS_LAYOUT_EGROUPS, "planner",
		  "33 groups refused (the glue falls back to the CPU)");
	f.n_groups = 32;
	f.n_outputs = 32;
	gs_tap(gs_layout_build(&f, NULL, &l) == GS_LAYOUT_OK && l.ngb == 32 && l.max_rpt == 1,
		  "planner", "32 groups: one register bucket of 32, 1 row per thread");
	gs_layout_free(&l);
	f.n_groups = 3;
	f.n_outputs = 3;
	gs_tap(gs_layout_build(&f, NULL, &l) == GS_LAYOUT_OK && l.ngb == 4, "planner",
		  "3 groups round up to a bucket of 4");
	gs_layout_free(&l);
	memset(&o, 0, sizeof(o));
	o.kernel = GS_KERNEL_TILED;
	o.smem_budget = 32;			/* not even one 4-node group */
	gs_tap(gs_layout_build(&f, &o, &l) == GS_LAYOUT_ETILE, "planner",
		  "tiled kernel imposed on a budget no tree fits: refused");
	o.kernel = GS_KERNEL_AUTO;
	gs_tap(gs_layout_build(&f, &o, &l) == GS_LAYOUT_OK && l.kernel == GS_KERNEL_ROWS,
		  "planner", "automatic plan on a budget no tree fits: rows kernel");
	gs_layout_free(&l);
	o.max_rpt = 3;
	gs_tap(gs_layout_build(&f, &o, &l) == GS_LAYOUT_EINVAL, "planner",
		  "3 rows per thread refused");
	memset(&l, 0, sizeof(l));
	l.kernel = GS_KERNEL_TILED;
	l.max_rpt = 4;
	gs_tap(gs_layout_pick_rpt(&l, 16u << 20, 132) == 4 &&
		  gs_layout_pick_rpt(&l, 256u << 10, 132) == 1 &&
		  gs_layout_pick_rpt(&l, 512u << 10, 132) == 2 &&
		  gs_layout_pick_rpt(&l, 1000, 0) == 4,
		  "planner", "rows per thread shrink for small batches (4 blocks per SM)");
}

/*
 * A random forest made here, for shapes no fixture has: n_groups output
 * groups (trees assigned round-robin, as XGBoost does), trees of random
 * shape up to depth max_depth, every fifth tree a lone leaf and every
 * seventh a chain as deep as deep_depth (past GS_KLOCKSTEP_MAX_DEPTH, the
 * gs_tree_leaf path).  With cat_every > 0, about one split in cat_every is
 * categorical (random category sets, both negative-code rules) and some
 * numerical splits treat zero as missing (LightGBM).  Built with malloc,
 * so gs_forest_free releases it.
 */
static GsForest *
synth_forest(int n_trees, int n_groups, GsTransform tf, int n_features,
			 int max_depth, int deep_depth, int cat_every)
{
	GsForest   *f = calloc(1, sizeof(GsForest));
	size_t		cap = 1024,
				n = 0;

	f->alloc = gs_malloc_allocator;
	f->transform = tf;
	f->n_features = n_features;
	f->n_groups = n_groups;
	f->n_outputs = tf == GS_TRANSFORM_ARGMAX ? 1 : n_groups;
	f->n_trees = n_trees;
	f->base_margin = malloc(sizeof(float) * (size_t) n_groups);
	f->tree_offset = malloc(sizeof(uint32_t) * (size_t) (n_trees > 0 ? n_trees : 1));
	f->tree_group = malloc(sizeof(int32_t) * (size_t) (n_trees > 0 ? n_trees : 1));
	f->tree_depth = malloc(sizeof(int32_t) * (size_t) (n_trees > 0 ? n_trees : 1));
	f->nodes = malloc(sizeof(GsNode) * cap);
	for (int g = 0; g < n_groups; g++)
		f->base_margin[g] = (float) (gs_rnd() - 0.5);
	for (int t = 0; t < n_trees; t++)
	{
		int			chain = t % 7 == 3,
					lone = t % 5 == 4;
		int			dmax = chain ? deep_depth : lone ? 0 : max_depth;
		int			depth[4096];
		size_t		count = 1,
					base = n;

		f->tree_offset[t] = (uint32_t) n;
		f->tree_group[t] = t % n_groups;
		f->tree_depth[t] = 0;
		depth[0] = 0;
		for (size_t i = 0; i < count; i++)
		{
			GsNode	   *nd;
			int			split;

			if (base + count + 2 > cap)
			{
				cap *= 2;
				f->nodes = realloc(f->nodes, sizeof(GsNode) * cap);
			}
			nd = &f->nodes[base + i];
			split = depth[i] < dmax && count + 2 <= 4096 &&
				(chain ? (i == 0 || i % 2 == 1) : (i == 0 || gs_rnd() < 0.8));
			if (split && cat_every > 0 && gs_rnd() * cat_every < 1.0)
			{
				/* a categorical split on one of the last 3 features */
				uint32_t	words = 1 + (uint32_t) (gs_rnd() * 2);
				uint32_t	set = (uint32_t) f->n_cat_words;
				float		fv;

				f->cat_words = realloc(f->cat_words, sizeof(uint32_t) * (size_t) (set + 1 + words));
				f->cat_words[set] = words | (gs_rnd() < 0.5 ? GS_CAT_TRUNC_NEGATIVE : 0) |
					(gs_rnd() < 0.3 ? GS_CAT_INVALID_DEFAULT : 0) |
					(gs_rnd() < 0.25 ? GS_CAT_NEGATED : 0);
				for (uint32_t w = 0; w < words; w++)
					f->cat_words[set + 1 + w] = (uint32_t) (gs_rnd() * 4294967295.0);
				f->n_cat_words += 1 + words;
				f->n_cat_splits++;
				memcpy(&fv, &set, sizeof(fv));
				nd->value = fv;
				nd->info = (uint32_t) (n_features - 1 - (int) (gs_rnd() * 3)) | GS_NODE_CATEGORICAL |
					(gs_rnd() < 0.5 ? GS_NODE_DEFAULT_LEFT : 0);
				nd->left = (uint32_t) count;
				depth[count] = depth[count + 1] = depth[i] + 1;
				count += 2;
			}
			else if (split)
			{
				nd->value = (float) (gs_rnd() * 2 - 1);
				nd->info = (uint32_t) (gs_rnd() * n_features) |
					(gs_rnd() < 0.5 ? GS_NODE_DEFAULT_LEFT : 0) |
					(gs_rnd() < 0.2 ? GS_NODE_ZERO_MISSING : 0) |
					/* equality splits (ONNX-ML BRANCH_EQ/NEQ) where the generic step runs anyway */
					(cat_every > 0 && gs_rnd() < 0.15 ? GS_NODE_EQUAL : 0);
				nd->left = (uint32_t) count;
				depth[count] = depth[count + 1] = depth[i] + 1;
				count += 2;
			}
			else
			{
				nd->value = (float) (gs_rnd() * 2 - 1);
				nd->info = GS_NODE_LEAF;
				nd->left = 0;
				if (depth[i] > f->tree_depth[t])
					f->tree_depth[t] = depth[i];
			}
		}
		n += count;
		if (f->tree_depth[t] > f->max_depth)
			f->max_depth = f->tree_depth[t];
	}
	f->n_nodes = (int64_t) n;
	for (size_t i = 0; i < n; i++)
		if (!(f->nodes[i].info & GS_NODE_LEAF))
			f->split_kinds |= f->nodes[i].info & (GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING | GS_NODE_EQUAL);
	return f;
}

/* Synthetic forests: every group bucket, deep chains, no trees at all. */
static void
test_synthetic(void)
{
	struct
	{
		int			trees,
					groups;
		GsTransform tf;
		int			depth;
		int			cat_every;	/* categorical splits: about 1 in this many */
	}			shapes[] = {
		{0, 1, GS_TRANSFORM_SIGMOID, 0, 0},
		{64, 2, GS_TRANSFORM_SOFTMAX, 7, 0},
		{90, 5, GS_TRANSFORM_ARGMAX, 6, 0},
		{96, 8, GS_TRANSFORM_IDENTITY, 8, 0},
		{120, 17, GS_TRANSFORM_SOFTMAX, 5, 0},
		{128, 32, GS_TRANSFORM_SOFTMAX, 4, 0},
		{200, 1, GS_TRANSFORM_EXP, 11, 0},
		{80, 1, GS_TRANSFORM_SIGMOID, 6, 3},
		{60, 3, GS_TRANSFORM_SOFTMAX, 9, 2},
	};
	const size_t budgets[] = {4096, 48 * 1024, 232448};
	const char *bnames[] = {"4K", "48K", "227K"};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
	{
		GsForest   *f = synth_forest(shapes[i].trees, shapes[i].groups, shapes[i].tf,
									 12, shapes[i].depth, 24, shapes[i].cat_every);
		char		label[160];
		GsLayoutOptions o;

		snprintf(label, sizeof(label), "synthetic (%d trees, depth %d, %d groups, transform %d, %d categorical splits)",
				 f->n_trees, f->max_depth, f->n_groups, (int) f->transform, f->n_cat_splits);
		memset(&o, 0, sizeof(o));
		o.kernel = GS_KERNEL_ROWS;
		check_plan(label, f, "rows", &o);
		for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
		{
			char		cfg[64];

			memset(&o, 0, sizeof(o));
			o.smem_budget = budgets[b];
			snprintf(cfg, sizeof(cfg), "auto %s", bnames[b]);
			check_plan(label, f, cfg, &o);
			o.stage_rows = -1;
			o.max_rpt = 4;
			snprintf(cfg, sizeof(cfg), "global rows, rpt 4, %s", bnames[b]);
			check_plan(label, f, cfg, &o);
			o.stage_rows = 1;
			snprintf(cfg, sizeof(cfg), "staged rows, rpt 4, %s", bnames[b]);
			check_plan(label, f, cfg, &o);
		}
		gs_forest_free(f);
	}
}

/* Every model file in dir (at least min_models of them), every plan. */
/* Load dir/name as gs_load_fixture_forest does (1, 0 or -1). */
typedef int (*FixtureLoader) (const char *dir, const char *name, GsForest **f, GsStatus *st);

/*
 * An ONNX-ML tree-ensemble fixture (onnx/trees/onnx_*.onnx) as a forest:
 * 1 with *f set, 0 when name is no such file (or a network), -1 when it
 * does not load.
 */
static int
load_onnx_forest(const char *dir, const char *name, GsForest **f, GsStatus *st)
{
	size_t		len = strlen(name),
				blen;
	char		path[1024];
	unsigned char *b;
	GsMlp	   *m = NULL;
	GsCode		rc;

	*f = NULL;
	if (len < 6 || strcmp(name + len - 5, ".onnx") != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((b = gs_read_file(path, &blen)) == NULL)
		return 0;
	rc = gs_onnx_load(b, blen, false, NULL, &gs_malloc_allocator, &m, f, st);
	free(b);
	if (m)
	{
		gs_mlp_free(m);
		return 0;
	}
	return rc == GS_OK ? 1 : -1;
}

static void
test_fixtures_with(const char *dir, int min_models, FixtureLoader load)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	int			n_models = 0;
	const size_t budgets[] = {4096, 48 * 1024, 115712, 232448};
	const char *bnames[] = {"4K", "48K", "113K", "227K"};

	if (!d)
	{
		gs_tap(0, "fixtures", "directory present");
		return;
	}
	while ((e = readdir(d)) != NULL)
	{
		char		label[400];
		GsForest   *f;
		GsStatus	st;
		GsLayoutOptions o;
		int			got = load(dir, e->d_name, &f, &st);

		if (got == 0)
			continue;
		if (got < 0)
		{
			gs_tap(0, e->d_name, st.msg);
			continue;
		}
		n_models++;
		snprintf(label, sizeof(label), "%s (%d trees, depth %d, %d groups, %d categorical splits)",
				 e->d_name, f->n_trees, f->max_depth, f->n_groups, f->n_cat_splits);
		if (f->linear || f->cb_ctrs)
		{
			GsLayout	l;

			/* linear trees, CatBoost's CTRs: the CPU engine's only; the layouts refuse them */
			memset(&o, 0, sizeof(o));
			gs_tap(gs_layout_build(f, &o, &l) == GS_LAYOUT_ELINEAR, label,
				   f->linear ? "linear trees: gs_layout_build refuses them (GS_LAYOUT_ELINEAR)" :
				   "CatBoost CTRs: gs_layout_build refuses them (GS_LAYOUT_ELINEAR)");
			gs_forest_free(f);
			continue;
		}

		memset(&o, 0, sizeof(o));
		o.kernel = GS_KERNEL_ROWS;
		check_plan(label, f, "rows", &o);
		for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++)
		{
			char		cfg[64];

			memset(&o, 0, sizeof(o));
			o.smem_budget = budgets[i];
			snprintf(cfg, sizeof(cfg), "auto %s", bnames[i]);
			check_plan(label, f, cfg, &o);
			o.stage_rows = -1;
			o.max_rpt = 4;
			snprintf(cfg, sizeof(cfg), "global rows, rpt 4, %s", bnames[i]);
			check_plan(label, f, cfg, &o);
			o.stage_rows = 1;
			snprintf(cfg, sizeof(cfg), "staged rows, rpt 4, %s", bnames[i]);
			check_plan(label, f, cfg, &o);
		}
		gs_forest_free(f);
	}
	closedir(d);
	{
		char		what[64];

		snprintf(what, sizeof(what), "at least %d model files emulated (%d)", min_models, n_models);
		gs_tap(n_models >= min_models, "fixtures", what);
	}
}

static void
test_fixtures(const char *dir, int min_models)
{
	test_fixtures_with(dir, min_models, gs_load_fixture_forest);
}

int
main(int argc, char **argv)
{
	/* --models DIR: only the model files in DIR (tests/diff/campaign.py) */
	if (argc == 3 && strcmp(argv[1], "--models") == 0)
		test_fixtures(argv[2], 1);
	else
	{
		test_planner();
		test_fixtures(FIXTURES "/models", 40);
		/* ONNX-ML forests: onnxruntime's transforms, IsolationForest's */
		test_fixtures_with(FIXTURES "/onnx/trees", 40, load_onnx_forest);
		test_synthetic();
	}
	printf("1..%d\nkernel-emulation: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

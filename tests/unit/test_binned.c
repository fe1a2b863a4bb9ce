/*
 * test_binned.c
 *	  CPU emulation of the binned GPU kernel (GS_KERNEL_BINNED:
 *	  cuda/forest_binned.h lays the forest out, cuda/binned_phases.h holds
 *	  the phases forest_binned.cu's forest_bin_kernel and
 *	  forest_binned_kernel run), checked bit for bit against the CPU
 *	  engine.  Runs anywhere, no GPU.
 *
 * For every fixture model (tests/fixtures/models/ *.json, *.ubj, *.model, *.txt)
 * that qualifies (plain numerical splits, depth <= 12), on its fixture
 * cases (tests/fixtures/cases/NAME.csv, when present), 1000 random rows
 * around its thresholds (ld > n_rows) and adversarial rows (every
 * threshold exactly, one ulp below and above it, -0.0, +0.0, +-Inf, NaN,
 * +-FLT_MAX, +-FLT_MIN, denormals, +-1e30):
 *	- the layout invariants (tiles, sorted distinct thresholds, descriptors);
 *	- bin(v) <= j  <=>  v < t_j for every adversarial v and every threshold
 *	  t_j of its feature, and NaN -> 0xFFFF;
 *	- every tree's binned leaf (gs_binned_tree_leaf) equals gs_tree_leaf
 *	  on every row;
 *	- the kernel emulated phase by phase in barrier order (shared memory
 *	  poisoned before every phase that fills it), fused and with the
 *	  separate binning pass (cut into small chunks, as predict_binned does
 *	  with its scratch), every rows-per-thread value, margins and outputs:
 *	  equal to gs_cpu_margins / gs_cpu_predict bit for bit, nothing written
 *	  past the outputs.
 * Models that do not qualify must be refused with the right code
 * (categorical, zero-as-missing, too deep), and synthetic forests check
 * the other refusals (too many thresholds: 65535 refused, 65534 accepted
 * and scored; too many features; too large; too many groups; NaN
 * threshold; shared memory too small; bad options) and the padding of
 * hand-built unbalanced trees word by word.
 *
 * TAP lines, then "binned: N passed, M failed"; exit 1 on a failure.
 * With --models DIR it checks only the model files in DIR (the differential
 * campaign, tests/diff/campaign.py, runs it on random models).
 *
 * Build with the Makefile and run from tests/unit (relative paths):
 *
 *   make tests/unit/test_binned && cd tests/unit && ./test_binned
 *
 * (tests/unit/test_binned_asan: the same under ASan + UBSan).
 */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "forest.h"
#include "forest_eval.h"
#include "../common/test_util.h"
#include "forest_binned.h"

#define FIXTURES "../fixtures"
#define GUARD 8
#define SENTINEL 12345.678f

/* == or both NaN. */
static int
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
static const char *
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
static GsBinnedArgs
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
static void
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
static void
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
static long
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

/*
 * The adversarial values of feature k: every threshold exactly and one ulp
 * either side, then the special values.  Returns the count (vals has room
 * for 3 * n_thr + 16).
 */
static size_t
adversarial_values(const GsBinnedLayout *l, int32_t k, float *vals)
{
	static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX,
		FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e30f, -1e30f, 1.0f, -1.0f, 0.5f};
	size_t		n = 0;

	for (uint32_t i = l->thr_off[k]; i < l->thr_off[k + 1]; i++)
	{
		vals[n++] = l->thr[i];
		vals[n++] = nextafterf(l->thr[i], -INFINITY);
		vals[n++] = nextafterf(l->thr[i], INFINITY);
	}
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		vals[n++] = special[i];
	return n;
}

/*
 * The bin property on every adversarial value of every feature:
 * v < t_j <=> bin(v) <= j for every threshold t_j, NaN <=> 0xFFFF.
 * Returns the number of violations.
 */
static long
check_bins(const GsBinnedLayout *l, char *msg, size_t msglen)
{
	long		bad = 0;

	for (int32_t k = 0; k < l->n_features; k++)
	{
		uint32_t	lo = l->thr_off[k],
					n = l->thr_off[k + 1] - lo;
		float	   *vals = malloc(sizeof(float) * (3 * (size_t) n + 16));
		size_t		nv = adversarial_values(l, k, vals);

		for (size_t i = 0; i < nv; i++)
		{
			uint32_t	b = gs_bin_feature(l->thr, l->thr_off, k, vals[i]);

			if ((b == GS_BIN_MISSING) != (vals[i] != vals[i]) && bad++ == 0)
				snprintf(msg, msglen, " (feature %d value %a: bin %u)", k, (double) vals[i], b);
			for (uint32_t j = 0; j < n; j++)
				if ((vals[i] < l->thr[lo + j]) != (b <= j) && bad++ == 0)
					snprintf(msg, msglen, " (feature %d value %a, threshold %u = %a: bin %u)",
							 k, (double) vals[i], j, (double) l->thr[lo + j], b);
		}
		free(vals);
	}
	return bad;
}

/*
 * Rows in which every feature takes each of its adversarial values at
 * least once (feature k of row r: value (r + 7k) mod count).
 */
static Batch
adversarial_batch(const GsBinnedLayout *l)
{
	Batch		b;
	size_t		rows = 0;

	for (int32_t k = 0; k < l->n_features; k++)
	{
		size_t		c = 3 * (size_t) (l->thr_off[k + 1] - l->thr_off[k]) + 16;

		rows = c > rows ? c : rows;
	}
	b.n = rows;
	b.ld = rows + 1;
	b.x = malloc(sizeof(float) * b.ld * (size_t) l->n_features);
	for (int32_t k = 0; k < l->n_features; k++)
	{
		float	   *vals = malloc(sizeof(float) * (3 * (size_t) (l->thr_off[k + 1] - l->thr_off[k]) + 16));
		size_t		nv = adversarial_values(l, k, vals);

		for (size_t r = 0; r < b.ld; r++)
			b.x[(size_t) k * b.ld + r] = vals[(r + 7 * (size_t) k) % nv];
		free(vals);
	}
	return b;
}

/*
 * The fixture cases of a model file (NAME.csv next to the models, rows
 * transposed to column-major); n == 0 when there are none or their
 * feature count differs from the model's.
 */
static Batch
case_batch(const GsForest *f, const char *file)
{
	Batch		b = {NULL, 0, 0};
	char		stem[256],
				path[600];
	const char *dot = strrchr(file, '.');
	FILE	   *mf;
	int			nf = 0,
				nout = 0;
	GsCases		c;

	snprintf(stem, sizeof(stem), "%.*s", (int) (dot ? dot - file : (long) strlen(file)), file);
	snprintf(path, sizeof(path), FIXTURES "/cases/%s.meta", stem);
	mf = fopen(path, "r");
	if (!mf)
		return b;
	if (fscanf(mf, "%d %d", &nf, &nout) != 2 || nf != f->n_features || nout < 1)
	{
		fclose(mf);
		return b;
	}
	fclose(mf);
	snprintf(path, sizeof(path), FIXTURES "/cases/%s.csv", stem);
	if (gs_read_cases(path, nf, nout, &c) != 0)
		return b;
	b.n = (size_t) c.n_rows;
	b.ld = b.n;
	b.x = malloc(sizeof(float) * (b.n > 0 ? b.n : 1) * (size_t) nf);
	for (size_t r = 0; r < b.n; r++)
		for (int k = 0; k < nf; k++)
			b.x[(size_t) k * b.ld + r] = c.x[r * (size_t) nf + (size_t) k];
	free(c.x);
	free(c.want);
	return b;
}

/*
 * One layout of one model on every batch (cases, random, adversarial);
 * one TAP line per batch kind.
 */
static void
check_model(const char *label, const GsForest *f, const char *file,
			const GsLayoutOptions *o, const char *cfg)
{
	GsBinnedLayout l;
	char		name[600],
				what[700],
				msg[300] = "";
	const char *inv;
	int			rc = gs_binned_build(f, o, &l);
	Batch		bs[3];
	const char *kinds[] = {"cases", "random", "adversarial"};

	snprintf(name, sizeof(name), "%s [%s]", label, cfg);
	if (rc != GS_LAYOUT_OK)
	{
		snprintf(what, sizeof(what), "layout refused with %d: %s", rc, l.why);
		gs_tap(0, name, what);
		return;
	}
	inv = check_layout(f, &l);
	gs_tap(inv == NULL, name, inv ? inv : "layout invariants hold");
	{
		long		bad = check_bins(&l, msg, sizeof(msg));

		snprintf(what, sizeof(what), "bin(v) <= j <=> v < t_j on every adversarial value: %ld violations%s", bad, msg);
		gs_tap(bad == 0, name, what);
	}
	bs[0] = file ? case_batch(f, file) : (Batch) {NULL, 0, 0};
	bs[1].n = 1000;
	bs[1].ld = 1003;
	bs[1].x = malloc(sizeof(float) * bs[1].ld * (size_t) f->n_features);
	gs_fill_batch(f, bs[1].x, bs[1].n, bs[1].ld);
	bs[2] = adversarial_batch(&l);
	for (int k = 0; k < 3; k++)
	{
		long		bad;

		if (bs[k].n == 0)
		{
			free(bs[k].x);
			continue;
		}
		msg[0] = '\0';
		bad = run_batch(f, &l, &bs[k], msg, sizeof(msg));
		snprintf(what, sizeof(what),
				 "%s, %zu rows: rpt <= %d, %u tiles of <= %u B, %u thresholds: %ld values differ from the CPU engine%s",
				 kinds[k], bs[k].n, l.max_rpt, l.n_tiles, l.tile_vecs * 16u, l.n_thr, bad, msg);
		gs_tap(bad == 0, name, what);
		free(bs[k].x);
	}
	gs_binned_free(&l);
}

/*
 * Every model file in dir: qualifying ones checked (their cases too when
 * the dir is the fixtures'), the others refused right; at least min_models
 * files, min_binned of them qualifying.
 */
static void
test_fixtures(const char *dir, int min_models, int min_binned)
{
	DIR		   *d = opendir(dir);
	int			fixtures = strcmp(dir, FIXTURES "/models") == 0;
	struct dirent *e;
	int			n_models = 0,
				n_binned = 0;
	char		summary[128];

	if (!d)
	{
		gs_tap(0, "fixtures", "directory present");
		return;
	}
	while ((e = readdir(d)) != NULL)
	{
		char		label[400],
					what[300];
		GsForest   *f;
		GsStatus	st;
		GsLayoutOptions o;
		GsBinnedLayout l;
		int			want,
					rc,
					got = gs_load_fixture_forest(dir, e->d_name, &f, &st);

		if (got == 0)
			continue;
		if (got < 0)
		{
			gs_tap(0, e->d_name, st.msg);
			continue;
		}
		n_models++;
		snprintf(label, sizeof(label), "%s (%d trees, depth %d, %d groups, splits 0x%x)",
				 e->d_name, f->n_trees, f->max_depth, f->n_groups, f->split_kinds);
		want = f->split_kinds != 0 ? GS_BINNED_ESPLITS :
			f->leaf_lo ? GS_BINNED_EDOUBLE :
			f->max_depth > GS_BINNED_MAX_DEPTH ? GS_BINNED_EDEPTH : GS_LAYOUT_OK;
		memset(&o, 0, sizeof(o));
		o.smem_budget = 115712;
		if (want != GS_LAYOUT_OK)
		{
			rc = gs_binned_build(f, &o, &l);
			snprintf(what, sizeof(what), "refused with %d (want %d): %s", rc, want, l.why);
			gs_tap(rc == want, label, what);
			if (rc == GS_LAYOUT_OK)
				gs_binned_free(&l);
		}
		else
		{
			char		cfg[64];

			n_binned++;
			check_model(label, f, fixtures ? e->d_name : NULL, &o, "113K");
			/* rows per thread imposed, room for about 2 of the largest trees */
			o.smem_budget = gs_binned_stage_bytes(4, f->n_features) + ((size_t) 16 << f->max_depth);
			o.max_rpt = 4;
			snprintf(cfg, sizeof(cfg), "%zu B, rpt 4", o.smem_budget);
			check_model(label, f, NULL, &o, cfg);
		}
		gs_forest_free(f);
	}
	closedir(d);
	snprintf(summary, sizeof(summary), "%d fixture models, %d qualify for the binned kernel", n_models, n_binned);
	gs_tap(n_models >= min_models && n_binned >= min_binned, "fixtures", summary);
}

/*
 * A malloc'd forest (gs_forest_free releases it) of n_trees trees, all
 * the same shape: a chain of `depth` splits on feature feat (each left
 * child a leaf, the last split with two leaves), thresholds thr(t, d).
 */
static GsForest *
chain_forest(int n_trees, int depth, int n_features, int n_groups, int feat,
			 float (*thr) (int, int))
{
	GsForest   *f = calloc(1, sizeof(GsForest));
	size_t		per = (size_t) 2 * (size_t) depth + 1;

	f->alloc = gs_malloc_allocator;
	f->transform = GS_TRANSFORM_IDENTITY;
	f->n_features = n_features;
	f->n_groups = n_groups;
	f->n_outputs = n_groups;
	f->n_trees = n_trees;
	f->max_depth = depth;
	f->n_nodes = (int64_t) per * n_trees;
	f->base_margin = calloc((size_t) n_groups, sizeof(float));
	f->tree_offset = malloc(sizeof(uint32_t) * (size_t) n_trees);
	f->tree_group = malloc(sizeof(int32_t) * (size_t) n_trees);
	f->tree_depth = malloc(sizeof(int32_t) * (size_t) n_trees);
	f->nodes = malloc(sizeof(GsNode) * per * (size_t) n_trees);
	for (int t = 0; t < n_trees; t++)
	{
		GsNode	   *n = f->nodes + per * (size_t) t;

		f->tree_offset[t] = (uint32_t) (per * (size_t) t);
		f->tree_group[t] = t % n_groups;
		f->tree_depth[t] = depth;
		/* node 0 splits; node 2i+1 (left) is a leaf, 2i+2 the next split */
		for (int d = 0; d < depth; d++)
		{
			size_t		i = d == 0 ? 0 : (size_t) 2 * (size_t) d;

			n[i].value = thr(t, d);
			n[i].info = (uint32_t) feat | (((t + d) & 1) ? GS_NODE_DEFAULT_LEFT : 0);
			n[i].left = (uint32_t) (i + 1);
			n[i + 1].value = (float) (t * 31 + d) * 0.25f;
			n[i + 1].info = GS_NODE_LEAF;
			n[i + 1].left = 0;
		}
		n[per - 1].value = -1.5f - (float) t;
		n[per - 1].info = GS_NODE_LEAF;
		n[per - 1].left = 0;
	}
	return f;
}

/* Threshold of tree t (one per tree, all distinct): t - 40000. */
static float
thr_per_tree(int t, int d)
{
	(void) d;
	return (float) t - 40000.0f;
}

/* Thresholds by depth: d * 0.5 (shared by every tree). */
static float
thr_by_depth(int t, int d)
{
	(void) t;
	return (float) d * 0.5f;
}

/* Synthetic refusals, the threshold-count boundary, bad options. */
static void
test_refusals(void)
{
	GsForest   *f;
	GsBinnedLayout l;
	GsLayoutOptions o;
	int			rc;
	char		what[300];

	memset(&o, 0, sizeof(o));
	o.smem_budget = 232448;

	/* 65534 distinct thresholds on one feature: accepted, bins up to 65534 */
	f = chain_forest(65534, 1, 3, 1, 1, thr_per_tree);
	rc = gs_binned_build(f, &o, &l);
	gs_tap(rc == GS_LAYOUT_OK && l.n_thr == 65534, "thresholds",
		   "65534 distinct thresholds on one feature accepted");
	if (rc == GS_LAYOUT_OK)
	{
		Batch		b;
		char		msg[300] = "";
		long		bad;
		const float v[] = {65533.0f - 40000.0f, 65534.0f - 40000.0f, 1e9f, INFINITY, NAN,
		-40000.0f, -40001.0f, 65532.5f - 40000.0f};

		b.n = 64;
		b.ld = 64;
		b.x = malloc(sizeof(float) * 64 * 3);
		for (size_t r = 0; r < 64 * 3; r++)
			b.x[r] = v[r % 8];
		gs_tap(gs_bin_feature(l.thr, l.thr_off, 1, 1e9f) == 65534 &&
			   gs_bin_feature(l.thr, l.thr_off, 1, NAN) == GS_BIN_MISSING &&
			   gs_bin_feature(l.thr, l.thr_off, 1, -INFINITY) == 0,
			   "thresholds", "the largest bin is 65534, distinct from the NaN bin");
		bad = run_batch(f, &l, &b, msg, sizeof(msg));
		snprintf(what, sizeof(what), "65534 trees on the extreme bins: %ld values differ%s", bad, msg);
		gs_tap(bad == 0, "thresholds", what);
		free(b.x);
		gs_binned_free(&l);
	}
	gs_forest_free(f);
	f = chain_forest(65535, 1, 3, 1, 1, thr_per_tree);
	rc = gs_binned_build(f, &o, &l);
	snprintf(what, sizeof(what), "65535 distinct thresholds refused: %d (%s)", rc, l.why);
	gs_tap(rc == GS_BINNED_ETHRESHOLDS, "thresholds", what);
	gs_forest_free(f);

	/* depth 12 accepted, 13 refused; size cap; shared memory too small */
	f = chain_forest(3, 12, 2, 1, 0, thr_by_depth);
	rc = gs_binned_build(f, &o, &l);
	gs_tap(rc == GS_LAYOUT_OK && l.max_tree_words == 8192, "depth", "depth 12 accepted (32 KB per tree)");
	if (rc == GS_LAYOUT_OK)
		gs_binned_free(&l);
	o.smem_budget = 16384;
	rc = gs_binned_build(f, &o, &l);
	gs_tap(rc == GS_LAYOUT_ETILE, "depth", "a 32 KB tree on a 16 KB budget: GS_LAYOUT_ETILE");
	o.smem_budget = 232448;
	gs_forest_free(f);
	f = chain_forest(2, 13, 2, 1, 0, thr_by_depth);
	gs_tap(gs_binned_build(f, &o, &l) == GS_BINNED_EDEPTH, "depth", "depth 13 refused");
	gs_forest_free(f);
	f = chain_forest(8193, 12, 2, 1, 0, thr_by_depth);
	rc = gs_binned_build(f, &o, &l);
	snprintf(what, sizeof(what), "8193 trees of depth 12 refused: %d (%s)", rc, l.why);
	gs_tap(rc == GS_BINNED_ESIZE, "size", what);
	gs_forest_free(f);

	/* features, groups, NaN threshold, non-numerical splits, options */
	f = chain_forest(2, 2, GS_BIN_MAX_FEATURES + 1, 1, GS_BIN_MAX_FEATURES, thr_by_depth);
	gs_tap(gs_binned_build(f, &o, &l) == GS_BINNED_EFEATURES, "features", "32769 features refused");
	gs_forest_free(f);
	f = chain_forest(40, 2, 2, 33, 0, thr_by_depth);
	gs_tap(gs_binned_build(f, &o, &l) == GS_LAYOUT_EGROUPS, "groups", "33 groups refused");
	gs_forest_free(f);
	f = chain_forest(2, 2, 2, 1, 0, thr_by_depth);
	f->nodes[2].value = NAN;
	gs_tap(gs_binned_build(f, &o, &l) == GS_BINNED_ESPLITS, "splits", "a NaN threshold refused");
	f->nodes[2].value = 1.0f;
	f->nodes[2].info |= GS_NODE_ZERO_MISSING;
	f->split_kinds = GS_NODE_ZERO_MISSING;
	gs_tap(gs_binned_build(f, &o, &l) == GS_BINNED_ESPLITS, "splits", "zero-as-missing refused");
	f->nodes[2].info &= ~GS_NODE_ZERO_MISSING;
	f->split_kinds = 0;
	o.bin_pass = 2;
	gs_tap(gs_binned_build(f, &o, &l) == GS_LAYOUT_EINVAL, "options", "bin_pass 2 refused");
	o.bin_pass = 1;
	o.max_rpt = 3;
	gs_tap(gs_binned_build(f, &o, &l) == GS_LAYOUT_EINVAL, "options", "3 rows per thread refused");
	o.max_rpt = 0;
	rc = gs_binned_build(f, &o, &l);
	gs_tap(rc == GS_LAYOUT_OK && !l.fused && l.chunk_rows > 0 && l.chunk_rows % 1024 == 0,
		   "options", "bin_pass 1: separate binning pass, whole blocks per chunk");
	if (rc == GS_LAYOUT_OK)
		gs_binned_free(&l);
	{
		GsLayout	ll;

		o.kernel = GS_KERNEL_BINNED;
		gs_tap(gs_layout_build(f, &o, &ll) == GS_LAYOUT_EINVAL, "options",
			   "gs_layout_build does not lay out binned plans");
	}
	gs_forest_free(f);
}

/* Set node i of a hand-built tree. */
static void
set_node(GsNode *n, int i, int leaf, uint32_t feat, float v, uint32_t left, int dl)
{
	n[i].value = v;
	n[i].info = leaf ? GS_NODE_LEAF : feat | (dl ? GS_NODE_DEFAULT_LEFT : 0u);
	n[i].left = left;
}

/*
 * Padding of hand-built unbalanced trees, word by word, then scored.
 * Tree 0 (depth 3):  0: f0 < 1.0 (default right) -> 1, 2
 *   1: leaf 10 (depth 1)        2: f1 < 2.0 (default left) -> 3, 4
 *   3: f0 < 3.0 -> 5, 6         4: leaf 40 (depth 2)
 *   5: leaf 50, 6: leaf 60 (depth 3)
 * Tree 1: a lone leaf 7.  Tree 2: f1 < -0.0 -> leaves 1, 2 (so 0.0 and
 * -0.0 thresholds are one: tree 2's j equals that of a 0.0 threshold in
 * tree 3).  Tree 3: f1 < 0.0 (default left), leaves 3, 4.
 */
static void
test_padding(void)
{
	GsForest	f;
	GsNode		n[7 + 1 + 3 + 3];
	uint32_t	off[4] = {0, 7, 8, 11};
	int32_t		grp[4] = {0, 0, 0, 0},
				dep[4] = {3, 0, 1, 1};
	float		base[1] = {0.5f};
	GsLayoutOptions o;
	GsBinnedLayout l;
	const uint32_t AL = (GS_BIN_ALWAYS_LEFT << 16) | GS_BNODE_DEFAULT_LEFT;
	int			ok = 1;

	set_node(n, 0, 0, 0, 1.0f, 1, 0);
	set_node(n, 1, 1, 0, 10.0f, 0, 0);
	set_node(n, 2, 0, 1, 2.0f, 3, 1);
	set_node(n, 3, 0, 0, 3.0f, 5, 0);
	set_node(n, 4, 1, 0, 40.0f, 0, 0);
	set_node(n, 5, 1, 0, 50.0f, 0, 0);
	set_node(n, 6, 1, 0, 60.0f, 0, 0);
	set_node(n, 7, 1, 0, 7.0f, 0, 0);
	set_node(n + 8, 0, 0, 1, -0.0f, 1, 0);
	set_node(n + 8, 1, 1, 0, 1.0f, 0, 0);
	set_node(n + 8, 2, 1, 0, 2.0f, 0, 0);
	set_node(n + 11, 0, 0, 1, 0.0f, 1, 1);
	set_node(n + 11, 1, 1, 0, 3.0f, 0, 0);
	set_node(n + 11, 2, 1, 0, 4.0f, 0, 0);
	memset(&f, 0, sizeof(f));
	f.transform = GS_TRANSFORM_IDENTITY;
	f.n_features = 2;
	f.n_groups = 1;
	f.n_outputs = 1;
	f.n_trees = 4;
	f.max_depth = 3;
	f.n_nodes = 14;
	f.nodes = n;
	f.tree_offset = off;
	f.tree_group = grp;
	f.tree_depth = dep;
	f.base_margin = base;
	memset(&o, 0, sizeof(o));
	if (gs_binned_build(&f, &o, &l) != GS_LAYOUT_OK)
	{
		gs_tap(0, "padding", "layout built");
		return;
	}
	{
		/* thresholds: f0 {1, 3}, f1 {0, 2} */
		const uint32_t *w = l.words + l.trees[0].first;
		uint32_t	want[16];
		float		leaves[8] = {10, 0, 0, 0, 50, 60, 40, 0};

		ok &= l.n_thr == 4 && l.thr_off[1] == 2 && l.thr[2] == 0.0f && l.thr[3] == 2.0f;
		for (int i = 0; i < 7; i++)
			want[i] = AL;
		want[0] = (0u << 16) | 0u;	/* f0 < t_0 = 1.0 */
		want[2] = (1u << 16) | GS_BNODE_DEFAULT_LEFT | 1u;	/* f1 < t_1 = 2.0 */
		want[5] = (1u << 16) | 0u;	/* f0 < t_1 = 3.0 */
		want[7] = 0;			/* padding word */
		for (int i = 0; i < 8; i++)
			memcpy(&want[8 + i], &leaves[i], 4);
		ok &= l.trees[0].n_nodes == 16 && memcmp(w, want, sizeof(want)) == 0;
		/* the lone leaf: [padding, 7.0] */
		w = l.words + l.trees[1].first;
		ok &= l.trees[1].n_nodes == 2 && w[0] == 0 && gs_float_of_bits(w[1]) == 7.0f;
		/* -0.0 and 0.0: the same threshold index 0 of feature 1 */
		ok &= (l.words[l.trees[2].first] >> 16) == 0 && (l.words[l.trees[3].first] >> 16) == 0 &&
			(l.words[l.trees[3].first] & GS_BNODE_DEFAULT_LEFT) != 0;
	}
	gs_tap(ok, "padding", "unbalanced tree padded with always-left nodes, leaves at the leftmost descendants, "
		   "lone leaf, -0.0 and 0.0 one threshold: words as expected");
	{
		Batch		b;
		char		msg[300] = "",
					what[400];
		long		bad;
		const float v0[] = {0.5f, 1.0f, 2.9f, 3.0f, NAN, -INFINITY, INFINITY, -0.0f};
		const float v1[] = {-0.0f, 0.0f, 1.99f, 2.0f, NAN, 0x1p-149f, -0x1p-149f, 5.0f};

		b.n = 64;
		b.ld = 64;
		b.x = malloc(sizeof(float) * 128);
		for (size_t r = 0; r < 64; r++)
		{
			b.x[r] = v0[r % 8];
			b.x[64 + r] = v1[r / 8];
		}
		bad = run_batch(&f, &l, &b, msg, sizeof(msg));
		snprintf(what, sizeof(what), "every path of the padded trees (64 rows): %ld values differ%s", bad, msg);
		gs_tap(bad == 0, "padding", what);
		free(b.x);
	}
	gs_binned_free(&l);
}

int
main(int argc, char **argv)
{
	/* --models DIR: only the model files in DIR (tests/diff/campaign.py) */
	if (argc == 3 && strcmp(argv[1], "--models") == 0)
	{
		test_fixtures(argv[2], 1, 0);
		printf("1..%d\nbinned: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
		return n_fail ? 1 : 0;
	}
	test_padding();
	test_refusals();
	test_fixtures(FIXTURES "/models", 40, 20);
	printf("1..%d\nbinned: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

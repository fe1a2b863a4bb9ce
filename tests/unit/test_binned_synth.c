/*
 * test_binned_synth.c
 *	  The binned GPU kernel's layout (cuda/forest_binned.h) on synthetic
 *	  forests: the refusals (too many thresholds: 65535 refused, 65534
 *	  accepted and scored; too many features; too large; too many groups;
 *	  NaN threshold; shared memory too small; bad options) and the padding
 *	  of hand-built unbalanced trees word by word, then scored through the
 *	  emulated kernel (binned_emul.h) against the CPU engine bit for bit.
 *	  Runs anywhere, no GPU.  The fixture models are test_binned.c's.
 *
 * TAP lines, then "binned-synth: N passed, M failed"; exit 1 on a failure.
 * Build with the Makefile and run from tests/unit:
 *
 *   make tests/unit/test_binned_synth && cd tests/unit && ./test_binned_synth
 *
 * (tests/unit/test_binned_synth_asan: the same under ASan + UBSan).
 */
#include "binned_emul.h"

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
main(void)
{
	test_padding();
	test_refusals();
	printf("1..%d\nbinned-synth: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

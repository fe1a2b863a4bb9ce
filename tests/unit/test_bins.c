/*
 * test_bins.c
 *	  The CPU engine's binned path for symmetric forests (forest_bins.h,
 *	  cpu_engine.c) checked bit for bit against its float paths.  No
 *	  server, no library: the CatBoost fixtures' own agreement with CatBoost
 *	  is test_core's; this checks that binning changes nothing.
 *
 * For every CatBoost fixture with symmetric trees (tests/fixtures/models/
 * cb_*.json):
 *	- it has bins, and they are consistent: each used feature's thresholds
 *	  ascending, distinct, at most 254, each level's threshold index naming
 *	  its split's threshold, NaN's bin the splits' direction, leaves the
 *	  nodes' doubles;
 *	- bin(v) <= j <=> v < t_j for every threshold t_j of each feature and
 *	  every adversarial v (each threshold exactly and one ulp either side,
 *	  -0.0, +0.0, +-Inf, +-FLT_MAX, denormals), NaN -> its bin;
 *	- margins of the fixture cases, 1,000 random rows (ld > n_rows),
 *	  adversarial rows, and batches of 1, 63, 64, 65 and 1,100 rows
 *	  (around the 64-row and binned-block sizes): equal bit for bit to the
 *	  same forest scored without bins (level by level on floats), and row
 *	  by row (gs_cpu_predict_row) with the bins and without (the nodes'
 *	  traversal);
 *	- a forest read back from its image has the same bins.
 * Non-symmetric forests (CatBoost Depthwise, XGBoost, LightGBM fixtures)
 * have none.  Synthetic symmetric forests check what does not fit (a
 * feature whose splits send NaN both ways, 255 thresholds of a feature, a
 * tree of depth 17, 1025 features read) and the edges that do (254
 * thresholds, depth 16, 256 and 1024 features): those still score as the
 * float path does.
 *
 * TAP lines, then "bins: N passed, M failed"; exit 1 on a failure.  Run
 * from tests/unit (relative paths).  tests/unit/test_bins_asan: the same
 * under ASan + UBSan.
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
#include "forest/catboost_ctr.h"
#include "forest/forest_bins.h"
#include "forest/forest_image.h"
#include "../common/test_util.h"

#define FIXTURES "../fixtures"

/* Bitwise equality of two float arrays; the first difference into msg. */
static long
count_diff(const float *a, const float *b, size_t n, char *msg, size_t msglen)
{
	long		bad = 0;

	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && bad++ == 0)
			snprintf(msg, msglen, " (value %zu: %a, want %a)", i, (double) a[i], (double) b[i]);
	return bad;
}

/*
 * Margins of n rows (column-major, stride ld) with the bins, and without
 * them (the float symmetric path), and outputs row by row through
 * gs_cpu_predict_row, with the bins and without (walking the nodes),
 * and with the bins on the engine's portable path (gs_cpu_simd_set),
 * against gs_cpu_predict with the bins.  Returns the number of values that
 * differ.
 */
static long
check_batch(GsForest *f, const float *x, size_t n, size_t ld, char *msg, size_t msglen)
{
	size_t		nm = n * (size_t) f->n_groups,
				no = n * (size_t) f->n_outputs;
	float	   *m1 = malloc(sizeof(float) * (nm + 1));
	float	   *m2 = malloc(sizeof(float) * (nm + 1));
	float	   *o1 = malloc(sizeof(float) * (no + 1));
	float	   *o2 = malloc(sizeof(float) * (no + 1));
	float	   *row = malloc(sizeof(float) * (size_t) (f->n_features + f->n_derived));
	float	   *rm = malloc(sizeof(float) * (size_t) f->n_groups);
	GsForestBins *bins = f->bins;
	long		bad;

	gs_cpu_margins(f, x, ld, n, m1);
	f->bins = NULL;
	gs_cpu_margins(f, x, ld, n, m2);
	f->bins = bins;
	bad = count_diff(m1, m2, nm, msg, msglen);
	/* the bins on the portable path too (the CPU's own is AVX2) */
	gs_cpu_simd_set(GS_CPU_SIMD_PORTABLE);
	gs_cpu_margins(f, x, ld, n, m2);
	gs_cpu_simd_set(GS_CPU_SIMD_AUTO);
	bad += count_diff(m1, m2, nm, msg, msglen);
	/* and on the AVX2 path (forced only where the CPU has AVX-512) */
	gs_cpu_simd_set(GS_CPU_SIMD_AVX2);
	gs_cpu_margins(f, x, ld, n, m2);
	gs_cpu_simd_set(GS_CPU_SIMD_AUTO);
	bad += count_diff(m1, m2, nm, msg, msglen);
	gs_cpu_predict(f, x, ld, n, m1, o1);
	/* row by row, with the bins and with the traversal of the nodes */
	for (int with_bins = 1; with_bins >= 0; with_bins--)
	{
		f->bins = with_bins ? bins : NULL;
		for (size_t r = 0; r < n; r++)
		{
			for (int k = 0; k < f->n_features + f->n_derived; k++)
				row[k] = x[(size_t) k * ld + r];
			gs_cpu_predict_row(f, row, rm, o2 + r * (size_t) f->n_outputs);
		}
		f->bins = bins;
		bad += count_diff(o1, o2, no, msg, msglen);
	}
	free(m1);
	free(m2);
	free(o1);
	free(o2);
	free(row);
	free(rm);
	return bad;
}

/* Whether the bins of f are consistent with its nodes (NULL) or what breaks. */
static const char *
check_consistent(const GsForest *f)
{
	const GsForestBins *b = f->bins;

	for (int32_t u = 0; u < b->n_used; u++)
	{
		uint32_t	lo = b->border_start[u],
					hi = b->border_start[u + 1];

		if (hi <= lo || hi - lo > GS_BINS_MAX_BORDERS)
			return "a used feature has no threshold or too many";
		for (uint32_t i = lo + 1; i < hi; i++)
			if (!(b->border[i - 1] < b->border[i]))
				return "thresholds not ascending and distinct";
		if (u > 0 && b->feature[u - 1] >= b->feature[u])
			return "used features not ascending";
	}
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		const GsNode *tree = f->nodes + f->tree_offset[t];
		int32_t		d = f->tree_depth[t];

		if (b->level_start[t + 1] - b->level_start[t] != (uint32_t) d)
			return "a tree's level count differs from its depth";
		for (int32_t k = 0; k < d; k++)
		{
			const GsNode *s = tree + ((1u << k) - 1);
			uint32_t	lv = b->level_start[t] + (uint32_t) k;
			int32_t		u = b->level_used[lv];

			if (u >= b->n_used || b->feature[u] != (int32_t) (s->info & GS_NODE_FEATURE_MASK))
				return "a level reads the wrong feature";
			if (b->border_start[u] + b->level_bin[lv] >= b->border_start[u + 1] ||
				b->border[b->border_start[u] + b->level_bin[lv]] != s->value)
				return "a level's threshold index is not its split's";
			if (b->nan_bin[u] != ((s->info & GS_NODE_DEFAULT_LEFT) ? 0 : GS_BINS_NAN_RIGHT))
				return "NaN's bin is not the splits' direction";
		}
		for (uint32_t i = 0; i < (1u << d); i++)
		{
			uint32_t	node = f->tree_offset[t] + (1u << d) - 1 + i;

			if (b->leaf[b->leaf_start[t] + i] != (double) f->nodes[node].value + (double) f->leaf_lo[node])
				return "a leaf differs from its node's double";
		}
	}
	return NULL;
}

/* v < t_j <=> bin(v) <= j on adversarial values of every used feature. */
static long
check_bin_rule(const GsForest *f, char *msg, size_t msglen)
{
	static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX,
		FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e30f, -1e30f};
	const GsForestBins *b = f->bins;
	long		bad = 0;

	for (int32_t u = 0; u < b->n_used; u++)
	{
		const float *t = b->border + b->border_start[u];
		uint32_t	n = b->border_start[u + 1] - b->border_start[u];
		size_t		nv = 3 * (size_t) n + sizeof(special) / sizeof(special[0]);

		for (size_t i = 0; i < nv; i++)
		{
			float		v = i < 3 * (size_t) n ?
				(i % 3 == 0 ? t[i / 3] : nextafterf(t[i / 3], i % 3 == 1 ? -INFINITY : INFINITY)) :
				special[i - 3 * (size_t) n];
			uint8_t		bin = gs_bins_of(v, t, n, b->nan_bin[u]);

			if (isnan(v))
			{
				if (bin != b->nan_bin[u] && bad++ == 0)
					snprintf(msg, msglen, " (NaN: bin %u)", bin);
				continue;
			}
			for (uint32_t j = 0; j < n; j++)
				if ((v < t[j]) != (bin <= j) && bad++ == 0)
					snprintf(msg, msglen, " (used feature %d, %a against t_%u = %a: bin %u)",
							 u, (double) v, j, (double) t[j], bin);
		}
	}
	return bad;
}

/*
 * Rows in which each used feature takes its adversarial values in turn (the
 * others random around the thresholds).
 */
static float *
adversarial_rows(const GsForest *f, size_t n, size_t ld)
{
	const GsForestBins *b = f->bins;
	float	   *x = malloc(sizeof(float) * ld * (size_t) (f->n_features + f->n_derived));

	gs_fill_batch(f, x, n, ld);
	for (int32_t u = 0; u < b->n_used; u++)
	{
		const float *t = b->border + b->border_start[u];
		uint32_t	nt = b->border_start[u + 1] - b->border_start[u];
		float	   *col = x + (size_t) b->feature[u] * ld;

		for (size_t r = 0; r < n; r++)
		{
			size_t		i = (r + 5 * (size_t) u) % (3 * (size_t) nt + 4);

			col[r] = i < 3 * (size_t) nt ?
				(i % 3 == 0 ? t[i / 3] : nextafterf(t[i / 3], i % 3 == 1 ? -INFINITY : INFINITY)) :
				(i == 3 * (size_t) nt ? NAN : i == 3 * (size_t) nt + 1 ? -0.0f :
				 i == 3 * (size_t) nt + 2 ? INFINITY : -INFINITY);
		}
	}
	return x;
}

/*
 * The fixture cases of a model (column-major), or NULL when it has none.  A
 * CatBoost model saved without its pool (NAME_nopool.json) takes NAME's:
 * their codes are other categories of it, as good for comparing two paths.
 */
static float *
case_rows(const GsForest *f, const char *file, size_t *n)
{
	char		path[600];
	int			nf = 0,
				nout = 0;
	FILE	   *mf;
	GsCases		c;
	float	   *x;
	int			stem = (int) (strlen(file) - 5);

	*n = 0;
	if (stem > 7 && strncmp(file + stem - 7, "_nopool", 7) == 0)
		stem -= 7;
	snprintf(path, sizeof(path), FIXTURES "/cases/%.*s.meta", stem, file);
	mf = fopen(path, "r");
	if (!mf)
		return NULL;
	if (fscanf(mf, "%d %d", &nf, &nout) != 2 || nf != f->n_features || nout < 1)
		nf = 0;
	fclose(mf);
	snprintf(path, sizeof(path), FIXTURES "/cases/%.*s.csv", stem, file);
	if (nf == 0 || gs_read_cases(path, nf, nout, &c) != 0)
		return NULL;
	*n = (size_t) c.n_rows;
	x = malloc(sizeof(float) * (*n > 0 ? *n : 1) * (size_t) nf);
	for (size_t r = 0; r < *n; r++)
		for (int k = 0; k < nf; k++)
			x[(size_t) k * *n + r] = c.x[r * (size_t) nf + (size_t) k];
	free(c.x);
	free(c.want);
	if (f->cb_ctrs)
	{
		/* the columns a CatBoost model's nodes read: with its derived features */
		float	   *xe = malloc(sizeof(float) * (*n > 0 ? *n : 1) * (size_t) (nf + f->n_derived));

		gs_cb_ctrs_expand(f->cb_ctrs, x, *n, *n, xe);
		free(x);
		x = xe;
	}
	return x;
}

/* All the batches of one forest with bins; one TAP line each. */
static void
check_batches(GsForest *f, const char *label, const char *file)
{
	static const size_t sizes[] = {1, 63, 64, 65, 1100};
	char		what[400],
				msg[200] = "";
	size_t		n;
	float	   *x;
	long		bad;

	x = file ? case_rows(f, file, &n) : NULL;
	gs_tap(x != NULL && n > 0, label, "has fixture cases");
	if (x != NULL)
	{
		bad = check_batch(f, x, n, n, msg, sizeof(msg));
		snprintf(what, sizeof(what), "cases, %zu rows: %ld values differ%s", n, bad, msg);
		gs_tap(bad == 0, label, what);
		free(x);
	}
	x = malloc(sizeof(float) * 1003 * (size_t) (f->n_features + f->n_derived));
	gs_fill_batch(f, x, 1000, 1003);
	bad = check_batch(f, x, 1000, 1003, msg, sizeof(msg));
	snprintf(what, sizeof(what), "1000 random rows (ld 1003): %ld values differ%s", bad, msg);
	gs_tap(bad == 0, label, what);
	free(x);
	bad = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
	{
		x = adversarial_rows(f, sizes[i], sizes[i] + 3);
		bad += check_batch(f, x, sizes[i], sizes[i] + 3, msg, sizeof(msg));
		free(x);
	}
	snprintf(what, sizeof(what), "adversarial rows in batches of 1, 63, 64, 65, 1100: %ld values differ%s",
			 bad, msg);
	gs_tap(bad == 0, label, what);
}

/* The image of f read back, or NULL when it is refused. */
static GsForest *
image_read_back(const GsForest *f)
{
	size_t		len = gs_forest_image_size(f);
	unsigned char *buf = malloc(len);
	GsForest   *g = NULL;
	GsStatus	st;

	gs_forest_image_write(f, buf);
	if (gs_forest_image_read(buf, len, NULL, &gs_malloc_allocator, &g, &st) != GS_OK)
		g = NULL;
	free(buf);
	return g;
}

/* The image of f read back: same bins (borders, levels, leaves). */
static int
same_bins_after_image(const GsForest *f)
{
	GsForest   *g = image_read_back(f);
	int			ok;

	ok = g != NULL && g->bins != NULL && g->bins->n_used == f->bins->n_used &&
		g->bins->n_borders == f->bins->n_borders && g->bins->n_levels == f->bins->n_levels &&
		g->bins->n_leaves == f->bins->n_leaves &&
		memcmp(g->bins->border, f->bins->border, sizeof(float) * (size_t) f->bins->n_borders) == 0 &&
		memcmp(g->bins->level_bin, f->bins->level_bin, (size_t) f->bins->n_levels) == 0 &&
		memcmp(g->bins->leaf, f->bins->leaf, sizeof(double) * (size_t) f->bins->n_leaves) == 0;
	gs_forest_free(g);
	return ok;
}

/* Every model fixture: symmetric CatBoost ones binned and checked, others without bins. */
static void
test_fixtures(void)
{
	DIR		   *d = opendir(FIXTURES "/models");
	struct dirent *e;
	int			n_binned = 0,
				n_other = 0;
	char		summary[128];

	if (!d)
	{
		gs_tap(0, "fixtures", "directory present");
		return;
	}
	while ((e = readdir(d)) != NULL)
	{
		GsForest   *f;
		GsStatus	st;
		char		label[400],
					what[300],
					msg[200] = "";
		const char *bad;
		long		nbad;
		int			got = gs_load_fixture_forest(FIXTURES "/models", e->d_name, &f, &st);

		if (got == 0)
			continue;
		if (got < 0)
		{
			gs_tap(0, e->d_name, st.msg);
			continue;
		}
		snprintf(label, sizeof(label), "%s (%d trees, depth %d, %d groups)",
				 e->d_name, f->n_trees, f->max_depth, f->n_groups);
		if (!gs_forest_symmetric(f))
		{
			if (f->bins != NULL)
				gs_tap(0, label, "not symmetric, yet it has bins");
			n_other++;
			gs_forest_free(f);
			continue;
		}
		n_binned++;
		if (f->bins == NULL)
		{
			gs_tap(0, label, "symmetric, yet it has no bins");
			gs_forest_free(f);
			continue;
		}
		bad = check_consistent(f);
		snprintf(what, sizeof(what), "%d used features, %lld thresholds: %s", f->bins->n_used,
				 (long long) f->bins->n_borders, bad ? bad : "consistent with the nodes");
		gs_tap(bad == NULL, label, what);
		nbad = check_bin_rule(f, msg, sizeof(msg));
		snprintf(what, sizeof(what), "bin(v) <= j <=> v < t_j on adversarial values: %ld violations%s",
				 nbad, msg);
		gs_tap(nbad == 0, label, what);
		check_batches(f, label, e->d_name);
		gs_tap(same_bins_after_image(f), label, f->cb_ctrs ?
			   "its image (categorical tables in it) read back has the same bins" :
			   "its image read back has the same bins");
		gs_forest_free(f);
	}
	closedir(d);
	snprintf(summary, sizeof(summary), "%d symmetric fixtures binned, %d others without bins",
			 n_binned, n_other);
	gs_tap(n_binned >= 11 && n_other >= 20, "fixtures", summary);
}

/* Synthetic symmetric forests: see sym_forest. */
typedef struct SymShape
{
	int			n_trees,
				depth,
				n_features;
	/* level k of tree t: feature, threshold, NaN left? */
	int			(*feat) (int t, int k);
	float		(*thr) (int t, int k);
	int			(*nan_left) (int t, int k);
	/* tree t's depth (at most depth); NULL: depth */
	int			(*depth_of) (int t);
} SymShape;

/*
 * A malloc'd CatBoost-format forest of symmetric trees of shape s, leaves
 * with a low part (double leaves), and its bins built as a load would.
 */
static GsForest *
sym_forest(const SymShape *s)
{
	GsForest   *f = calloc(1, sizeof(GsForest));
	int64_t		n_nodes = 0;
	GsStatus	st;

	f->alloc = gs_malloc_allocator;
	f->format = GS_FORMAT_CATBOOST_JSON;
	strcpy(f->booster, "symmetric");
	strcpy(f->objective, "RMSE");
	f->transform = GS_TRANSFORM_IDENTITY;
	f->n_features = s->n_features;
	f->n_groups = f->n_outputs = 1;
	f->n_trees = s->n_trees;
	f->max_depth = s->depth;
	for (int t = 0; t < s->n_trees; t++)
		n_nodes += ((int64_t) 2 << (s->depth_of ? s->depth_of(t) : s->depth)) - 1;
	f->n_nodes = n_nodes;
	f->base_margin = calloc(1, sizeof(float));
	f->tree_offset = calloc((size_t) s->n_trees, sizeof(uint32_t));
	f->tree_group = calloc((size_t) s->n_trees, sizeof(int32_t));
	f->tree_depth = calloc((size_t) s->n_trees, sizeof(int32_t));
	f->nodes = calloc((size_t) f->n_nodes, sizeof(GsNode));
	f->leaf_lo = calloc((size_t) f->n_nodes, sizeof(float));
	n_nodes = 0;
	for (int t = 0; t < s->n_trees; t++)
	{
		const int	depth = s->depth_of ? s->depth_of(t) : s->depth;
		const int64_t per = ((int64_t) 2 << depth) - 1;
		GsNode	   *tree = f->nodes + n_nodes;

		f->tree_offset[t] = (uint32_t) n_nodes;
		f->tree_depth[t] = depth;
		for (int k = 0; k < depth; k++)
			for (int64_t i = ((int64_t) 1 << k) - 1; i < ((int64_t) 2 << k) - 1; i++)
			{
				tree[i].value = s->thr(t, k);
				tree[i].info = (uint32_t) s->feat(t, k) |
					(s->nan_left(t, k) ? GS_NODE_DEFAULT_LEFT : 0);
				tree[i].left = (uint32_t) (2 * i + 1);
			}
		for (int64_t i = ((int64_t) 1 << depth) - 1; i < per; i++)
		{
			tree[i].value = (float) (gs_rnd() - 0.5);
			tree[i].info = GS_NODE_LEAF;
			f->leaf_lo[n_nodes + i] = (float) ((gs_rnd() - 0.5) * 1e-9);
		}
		n_nodes += per;
	}
	if (gs_forest_bins_build(f, &st) != GS_OK)
	{
		gs_forest_free(f);
		return NULL;
	}
	return f;
}

static int
feat_zero(int t, int k)
{
	(void) t, (void) k;
	return 0;
}

static int
feat_level(int t, int k)
{
	(void) t;
	return k;
}

static int
feat_tree(int t, int k)
{
	(void) k;
	return t;
}

/* depths 0 to 10 in turn: passes of shallow trees and passes with deep ones */
static int
depth_mixed(int t)
{
	return t / 3 % 11;
}

static int
nan_left_never(int t, int k)
{
	(void) t, (void) k;
	return 0;
}

static int
nan_left_odd_tree(int t, int k)
{
	(void) k;
	return t % 2;
}

static float
thr_per_tree(int t, int k)
{
	(void) k;
	return (float) t * 0.25f - 10.0f;
}

static float
thr_few(int t, int k)
{
	return (float) ((t + k) % 7) - 3.0f;
}

/* One synthetic shape: bins wanted or not, then scored like the float path. */
static void
check_synthetic(const char *label, const SymShape *s, int want_bins)
{
	GsForest   *f = sym_forest(s);
	char		what[400],
				msg[200] = "";
	float	   *x;
	long		bad;

	if (f == NULL)
	{
		gs_tap(0, label, "out of memory building the bins");
		return;
	}
	snprintf(what, sizeof(what), "%s bins", want_bins ? "has" : "has no");
	gs_tap((f->bins != NULL) == want_bins, label, what);
	if (f->bins != NULL)
	{
		const char *inc = check_consistent(f);

		gs_tap(inc == NULL, label, inc ? inc : "bins consistent with the nodes");
		bad = check_bin_rule(f, msg, sizeof(msg));
		snprintf(what, sizeof(what), "bin(v) <= j <=> v < t_j: %ld violations%s", bad, msg);
		gs_tap(bad == 0, label, what);
	}
	x = malloc(sizeof(float) * 700 * (size_t) f->n_features);
	gs_fill_batch(f, x, 697, 700);
	bad = check_batch(f, x, 697, 700, msg, sizeof(msg));
	snprintf(what, sizeof(what), "697 random rows: %ld values differ from the float path%s", bad, msg);
	gs_tap(bad == 0, label, what);
	free(x);
	gs_forest_free(f);
}

static void
test_synthetic(void)
{
	SymShape	s;

	s = (SymShape) {254, 1, 1, feat_zero, thr_per_tree, nan_left_never, NULL};
	check_synthetic("254 thresholds of one feature", &s, 1);
	s.n_trees = 255;
	check_synthetic("255 thresholds of one feature", &s, 0);
	s = (SymShape) {20, 4, 4, feat_level, thr_few, nan_left_odd_tree, NULL};
	check_synthetic("a feature's splits send NaN both ways", &s, 0);
	s.nan_left = nan_left_never;
	check_synthetic("the same, NaN always right", &s, 1);
	s = (SymShape) {3, 16, 16, feat_level, thr_few, nan_left_never, NULL};
	check_synthetic("depth 16", &s, 1);
	s = (SymShape) {2, 17, 17, feat_level, thr_few, nan_left_never, NULL};
	check_synthetic("depth 17", &s, 0);
	s = (SymShape) {101, 10, 10, feat_level, thr_few, nan_left_never, depth_mixed};
	check_synthetic("depths 0 to 10 mixed", &s, 1);
	s = (SymShape) {256, 1, 300, feat_tree, thr_few, nan_left_never, NULL};
	check_synthetic("256 features read", &s, 1);
	s = (SymShape) {1024, 1, 1100, feat_tree, thr_few, nan_left_never, NULL};
	check_synthetic("1024 features read (64-row blocks)", &s, 1);
	s.n_trees = 1025;
	check_synthetic("1025 features read", &s, 0);
}

int
main(void)
{
	test_fixtures();
	test_synthetic();
	printf("bins: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail == 0 ? 0 : 1;
}

/*
 * test_core.c
 *	  Unit tests of the PostgreSQL-free scoring core, against XGBoost's own
 *	  predictions (fixtures made by tests/fixtures/gen_fixtures.py with the
 *	  real XGBoost) and the other libraries'.  Prints TAP lines and a final
 *	  "N passed, N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan).  For every
 * tests/fixtures/cases/NAME.meta: loads NAME.json (and NAME.ubj if present),
 * scores the case rows as one column-major batch, as odd-sized batches and
 * row by row, and requires |ours - xgboost| <= 1e-6 (relative above 1).
 * Every file in tests/fixtures/models/bad must be rejected with the expected
 * status code, caps refuse models over them, and random corruptions of
 * valid models must never crash.  (test_core_api.c: formats, transforms,
 * missing values, interrupts.)
 */
#include <dirent.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_complete.h"
#include "forest/forest_eval.h"
#include "forest/forest_image.h"
#include "../common/test_util.h"
#include "core_util.h"

#define FIXTURES "../fixtures"

/* Every fixture model against its XGBoost cases. */
static void
test_fixtures(void)
{
	DIR		   *d = opendir(FIXTURES "/cases");
	struct dirent *e;
	int			n_models = 0;

	if (!d)
	{
		check(0, "%s%s", "fixtures directory present", "");
		return;
	}
	while ((e = readdir(d)) != NULL)
	{
		char		name[256],
					path[512];
		int			nf,
					nout;
		char		obj[64];
		FILE	   *mf;
		Cases		c;
		const char *exts[] = {"json", "ubj", "txt", "model"};
		double		tol = 1e-6;
		size_t		len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".meta") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int) (len - 5), e->d_name);
		snprintf(path, sizeof(path), FIXTURES "/cases/%s", e->d_name);
		mf = fopen(path, "r");
		if (!mf || fscanf(mf, "%d %d %63s", &nf, &nout, obj) != 3)
		{
			check(0, "%s: %s", name, "meta file readable");
			if (mf)
				fclose(mf);
			continue;
		}
		/*
		 * more words of the objective ("regression sqrt"), then an optional
		 * tolerance: LightGBM computes in double, we in float
		 */
		{
			char		word[64],
					   *end;

			while (fscanf(mf, "%63s", word) == 1)
			{
				double		v = strtod(word, &end);

				if (*end == '\0' && end != word)
				{
					tol = v;
					break;
				}
				if (strlen(obj) + 1 + strlen(word) < sizeof(obj))
					strcat(strcat(obj, " "), word);
			}
		}
		fclose(mf);
		snprintf(path, sizeof(path), FIXTURES "/cases/%s.csv", name);
		if (gs_read_cases(path, nf, nout, &c) != 0)
		{
			check(0, "%s: %s", name, "cases readable");
			continue;
		}
		for (int x = 0; x < 4; x++)
		{
			GsStatus	st;
			GsForest   *f;
			char		label[400];

			snprintf(path, sizeof(path), FIXTURES "/models/%s.%s", name, exts[x]);
			snprintf(label, sizeof(label), "%s.%s (%s)", name, exts[x], obj);
			st.code = GS_OK;
			f = load(path, &st);
			if (f == NULL && st.code == GS_OK)
				continue;		/* no such file */
			check(f != NULL, "%s: loads (%s)", label, f ? "ok" : st.msg);
			if (f)
			{
				check(strcmp(f->objective, obj) == 0, "%s: %s", label, "objective recorded");
				check_model(label, f, &c, tol);
				gs_forest_free(f);
				n_models++;
			}
		}
		free(c.x);
		free(c.want);
	}
	closedir(d);
	check(n_models >= 20, "%s%s", "at least 20 fixture model files checked", "");
}

/* Bad models: each must fail with the expected code. */
static void
test_bad_models(void)
{
	struct
	{
		const char *file;
		GsCode		code;
	}			bad[] = {
		{"gblinear.json", GS_ERR_UNSUPPORTED},
		{"xb17_gblinear.model", GS_ERR_UNSUPPORTED},
		{"lgb_bad_linear_feature.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_count.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_coeff.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_lines.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_linear_flag.txt", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_nopool_no_own.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_uncertainty.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_loss.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_split_type.json", GS_ERR_INVALID_MODEL},	/* OnlineCtr without CTRs */
		{"cb_bad_cat_subset.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_cat_ctr_type.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_cat_stride.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_key_number.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_key_twice.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_count.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_ctr_border.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_ctr_split_index.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_onehot_value.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_prior.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_target_border.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_element.json", GS_ERR_UNSUPPORTED},
		{"cb_bad_cat_no_table.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_flat_index.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_cat_name_hash.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_child.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_truncated.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_feature.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_border.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_border_huge.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_leaf_count.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_leaf_value.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_nan_mode.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_flat_index.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_bias.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_scale.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_no_trees.json", GS_ERR_INVALID_MODEL},
		{"cb_bad_depth.json", GS_ERR_LIMIT},
		{"lgb_bad_child_out_of_range.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_cycle.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_shared_child.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_feature_out_of_range.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_leaf_count.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_nan_leaf.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_decision_type.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_bitset_bounds.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_cat_index.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_objective.txt", GS_ERR_UNSUPPORTED},
		{"lgb_bad_numbering.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_no_trees.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_truncated.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_num_class.txt", GS_ERR_INVALID_MODEL},
		{"lgb_bad_sigmoid.txt", GS_ERR_UNSUPPORTED},
		{"unknown_objective.json", GS_ERR_UNSUPPORTED},
		{"vector_leaf_index.json", GS_ERR_INVALID_MODEL},
		{"vector_leaf_size.json", GS_ERR_INVALID_MODEL},
		{"vector_leaf_missing.json", GS_ERR_INVALID_MODEL},
		{"vector_leaf_short.json", GS_ERR_INVALID_MODEL},
		{"truncated.json", GS_ERR_INVALID_MODEL},
		{"truncated.ubj", GS_ERR_INVALID_MODEL},
		{"child_out_of_range.json", GS_ERR_INVALID_MODEL},
		{"cycle.json", GS_ERR_INVALID_MODEL},
		{"feature_out_of_range.json", GS_ERR_INVALID_MODEL},
		{"nonfinite_threshold.json", GS_ERR_INVALID_MODEL},
		{"wrong_lengths.json", GS_ERR_INVALID_MODEL},
		{"not_a_model.json", GS_ERR_INVALID_MODEL},
		{"empty.json", GS_ERR_INVALID_MODEL},
		{"negative_child.json", GS_ERR_INVALID_MODEL},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		char		path[512];
		GsStatus	st;
		GsForest   *f;
		size_t		len;
		unsigned char *b;

		snprintf(path, sizeof(path), FIXTURES "/models/bad/%s", bad[i].file);
		b = gs_read_file(path, &len);
		if (!b)
		{
			check(0, "bad/%s: %s", bad[i].file, "file present");
			continue;
		}
		gs_forest_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
		check(f == NULL && st.code == bad[i].code, "bad/%s rejected: %s", bad[i].file, st.msg);
		gs_forest_free(f);
		free(b);
	}
}

/*
 * A small LightGBM text model: header, then the tree blocks given (each
 * from its "num_leaves=" line on), numbered in order.  Static buffer.
 */
static const char *
lgbm_text(const char *const *trees, int n)
{
	static char buf[4096];
	size_t		k;

	k = (size_t) snprintf(buf, sizeof(buf),
						  "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\n"
						  "max_feature_idx=1\nobjective=regression\nfeature_names=a b\n\n");
	for (int t = 0; t < n; t++)
		k += (size_t) snprintf(buf + k, sizeof(buf) - k, "Tree=%d\n%s\n\n", t, trees[t]);
	snprintf(buf + k, sizeof(buf) - k, "end of trees\n");
	return buf;
}

/*
 * LightGBM trees as the forest builder lays them out: a one-leaf tree, a
 * model mixing a linear tree with one that is not (its leaves' values
 * become constants), an "is_linear=1" line a later line overrides (no
 * linear leaves at all), and a node no path reaches (LightGBM's own check,
 * kept beside the builder's).
 */
static void
test_lgbm_layout(void)
{
	const char *linear =
		"num_leaves=2\nnum_cat=0\nsplit_feature=0\nthreshold=0.5\ndecision_type=2\n"
		"left_child=-1\nright_child=-2\nleaf_value=0.25 0.75\nis_linear=1\n"
		"leaf_const=0.5 1.5\nnum_features=1 0\nleaf_features=1 \nleaf_coeff=2 \nshrinkage=1";
	const char *overridden =
		"num_leaves=2\nnum_cat=0\nsplit_feature=0\nthreshold=0.5\ndecision_type=2\n"
		"left_child=-1\nright_child=-2\nleaf_value=0.25 0.75\nis_linear=1\nis_linear=0\n"
		"leaf_const=0.5 1.5\nnum_features=1 0\nleaf_features=1 \nleaf_coeff=2 \nshrinkage=1";
	const char *one_leaf =
		"num_leaves=1\nnum_cat=0\nsplit_feature=\nthreshold=\ndecision_type=\nleft_child=\n"
		"right_child=\nleaf_value=0.125\nis_linear=0\nshrinkage=1";
	const char *unreachable =
		"num_leaves=3\nnum_cat=0\nsplit_feature=0 1\nthreshold=0.5 0.25\ndecision_type=2 2\n"
		"left_child=-1 -3\nright_child=-2 -3\nleaf_value=0.1 0.2 0.3\nshrinkage=1";
	const char *trees[2];
	const char *text;
	GsForest   *f;
	GsStatus	st;
	const char *what;

	trees[0] = one_leaf;
	text = lgbm_text(trees, 1);
	gs_forest_load((const unsigned char *) text, strlen(text), GS_FORMAT_AUTO, NULL,
				   &gs_malloc_allocator, &f, &st);
	check(f != NULL && f->n_nodes == 1 && f->nodes[0].info == GS_NODE_LEAF &&
		  f->nodes[0].value == 0.125f && f->tree_depth[0] == 0 && f->linear == NULL,
		  "LightGBM one-leaf tree: one leaf node at depth 0%s%s", f ? "" : ": ", f ? "" : st.msg);
	gs_forest_free(f);

	trees[0] = linear;
	trees[1] = one_leaf;
	text = lgbm_text(trees, 2);
	gs_forest_load((const unsigned char *) text, strlen(text), GS_FORMAT_AUTO, NULL,
				   &gs_malloc_allocator, &f, &st);
	what = f ? "" : st.msg;
	check(f != NULL && f->n_nodes == 4 && f->linear != NULL && f->linear->n_terms == 1 &&
		  f->linear->constant[0] == 0.0 && f->linear->constant[1] == 0.5 &&
		  f->linear->constant[2] == 1.5 && f->linear->constant[3] == 0.125 &&
		  f->linear->start[0] == 0 && f->linear->start[1] == 0 && f->linear->start[2] == 1 &&
		  f->linear->start[3] == 1 && f->linear->start[4] == 1 &&
		  f->linear->feature[0] == 1 && f->linear->coef[0] == 2.0,
		  "LightGBM linear and plain trees: linear leaves in node order, plain leaves as constants%s%s",
		  what[0] ? ": " : "", what);
	gs_forest_free(f);

	trees[0] = overridden;
	text = lgbm_text(trees, 2);
	gs_forest_load((const unsigned char *) text, strlen(text), GS_FORMAT_AUTO, NULL,
				   &gs_malloc_allocator, &f, &st);
	what = f ? "" : st.msg;
	check(f != NULL && f->n_nodes == 4 && f->linear == NULL && f->nodes[1].value == 0.25f,
		  "LightGBM is_linear=1 overridden by is_linear=0: no linear leaves%s%s",
		  what[0] ? ": " : "", what);
	gs_forest_free(f);

	trees[0] = one_leaf;
	trees[1] = unreachable;
	text = lgbm_text(trees, 2);
	gs_forest_load((const unsigned char *) text, strlen(text), GS_FORMAT_AUTO, NULL,
				   &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_INVALID_MODEL &&
		  strcmp(st.msg, "invalid LightGBM model: tree 1 has 2 nodes not reachable from its root") == 0,
		  "LightGBM node no path reaches: %s%s", st.msg, "");
	gs_forest_free(f);
}

/* Caps: a model over each limit is refused with GS_ERR_LIMIT. */
static void
test_limits(void)
{
	size_t		len;
	unsigned char *b = gs_read_file(FIXTURES "/models/lossguide_deep.json", &len);
	GsLimits	lim;
	GsForest   *f;
	GsStatus	st;

	if (!b)
	{
		check(0, "%s%s", "lossguide_deep.json present", "");
		return;
	}
	lim = gs_default_limits;
	lim.max_depth = 10;
	gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT && st.limit == GS_LIMIT_DEPTH && st.limit_value == 10,
		  "depth cap, of kind depth at 10: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_trees = 5;
	gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT && st.limit == GS_LIMIT_TREES && st.limit_value == 5,
		  "tree cap, of kind trees at 5: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_model_bytes = 1000;
	gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT && st.limit == GS_LIMIT_MODEL_BYTES && st.limit_value == 1000,
		  "size cap, of kind bytes at 1000: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_features = 29;
	gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT && st.limit == GS_LIMIT_FEATURES && st.limit_value == 29,
		  "feature cap, of kind features at 29: %s%s", st.msg, "");
	lim = gs_default_limits;
	lim.max_nodes = 100;
	gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(f == NULL && st.code == GS_ERR_LIMIT && st.limit == GS_LIMIT_NODES && st.limit_value == 100,
		  "node cap, of kind nodes at 100: %s%s", st.msg, "");
	free(b);
	/* a cap below the caller's: CatBoost's 30 levels, whatever max_depth says */
	b = gs_read_file(FIXTURES "/models/bad/cb_bad_depth.json", &len);
	lim = gs_default_limits;
	lim.max_depth = 512;
	if (b)
		gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	check(b != NULL && st.code == GS_ERR_LIMIT && st.limit == GS_LIMIT_DEPTH && st.limit_value == 30,
		  "CatBoost's own depth cap is reported as 30, not the caller's 512: %s%s", st.msg, "");
	free(b);
}

/* Random corruptions of valid models must load or fail, never crash. */
static void
test_corruption(void)
{
	const char *files[] = {FIXTURES "/models/tiny_base.json", FIXTURES "/models/tiny_base.ubj",
	FIXTURES "/models/lgb_tiny.txt", FIXTURES "/models/x3_cat_binary.ubj", FIXTURES "/models/xb10_rf.model"};
	unsigned int seed = 12345;
	int			loaded = 0,
				rejected = 0;

	for (int fi = 0; fi < 5; fi++)
	{
		size_t		len;
		unsigned char *orig = gs_read_file(files[fi], &len);

		if (!orig)
		{
			check(0, "%s: %s", files[fi], "present");
			continue;
		}
		for (int it = 0; it < 3000; it++)
		{
			unsigned char *b = malloc(len);
			size_t		n = len;
			GsForest   *f;
			GsStatus	st;

			memcpy(b, orig, len);
			for (int k = 0; k < 1 + it % 4; k++)
			{
				seed = seed * 1103515245u + 12345u;
				b[(seed >> 8) % len] = (unsigned char) (seed >> 3);
			}
			if (it % 5 == 0)
				n = (seed >> 4) % len;
			gs_forest_load(b, n, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
			if (f)
			{
				/* whatever loaded must score without faults */
				float		x[64],
							m[8],
							o[8];

				for (int k = 0; k < 64; k++)
					x[k] = k % 3 ? (float) k : NAN;
				if (f->n_features <= 64 && f->n_groups <= 8)
					gs_cpu_predict_row(f, x, m, o);
				loaded++;
				gs_forest_free(f);
			}
			else
				rejected++;
			free(b);
		}
		free(orig);
	}
	check(rejected > 0, "%s%s", "corrupted models: no crash, bad ones rejected", "");
	(void) loaded;
}

/* A pseudo-random number (a 64-bit LCG: the same forests on every run). */
static uint32_t
rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t) (*s >> 33);
}

/* A value a split or a row may hold: thresholds, infinities, signed zeros. */
static float
rnd_value(uint64_t *s)
{
	static const float special[] = {-1.0f, 0.0f, -0.0f, 0.5f, 1.0f, 2.5f, 1e-30f, 3.0f};
	uint32_t	k = rnd(s) % 16;

	if (k < 8)
		return special[k];
	if (k == 8)
		return INFINITY;
	if (k == 9)
		return -INFINITY;
	return (float) ((double) rnd(s) / 2147483648.0 * 8.0 - 4.0);
}

/*
 * A random forest of plain numerical splits as a loader builds it
 * (breadth-first, children adjacent): nt trees of depth at most dmax, each
 * node split with probability psplit (in 1/8), over nf features and ng
 * output groups, leaves of mixed magnitudes so that the order of the float
 * sums shows.
 */
static GsForest *
random_forest(uint64_t *s, int nt, int nf, int ng, int dmax, int psplit)
{
	GsForest   *f = calloc(1, sizeof(GsForest));
	int64_t		cap = 0;

	for (int t = 0; t < nt; t++)
		cap += ((int64_t) 2 << dmax) - 1;
	f->alloc = gs_malloc_allocator;
	f->format = GS_FORMAT_XGBOOST_JSON;
	strcpy(f->objective, "reg:squarederror");
	strcpy(f->booster, "gbtree");
	f->transform = GS_TRANSFORM_IDENTITY;
	f->n_features = nf;
	f->n_groups = ng;
	f->n_outputs = ng;
	f->n_trees = nt;
	f->base_margin = malloc(sizeof(float) * ng);
	f->tree_offset = malloc(sizeof(uint32_t) * nt);
	f->tree_group = malloc(sizeof(int32_t) * nt);
	f->tree_depth = malloc(sizeof(int32_t) * nt);
	f->nodes = malloc(sizeof(GsNode) * (size_t) cap);
	for (int g = 0; g < ng; g++)
		f->base_margin[g] = (float) ((double) rnd(s) / 2147483648.0 - 0.5);
	for (int t = 0; t < nt; t++)
	{
		GsNode	   *tree = f->nodes + f->n_nodes;
		int32_t    *depth = malloc(sizeof(int32_t) * (((size_t) 2 << dmax) - 1));
		uint32_t	size = 1;

		f->tree_offset[t] = (uint32_t) f->n_nodes;
		f->tree_group[t] = t % ng;
		f->tree_depth[t] = 0;
		depth[0] = 0;
		for (uint32_t i = 0; i < size; i++)
		{
			if (depth[i] < dmax && (int) (rnd(s) % 8) < psplit)
			{
				tree[i].value = rnd_value(s);
				if (isinf(tree[i].value) && rnd(s) % 4)
					tree[i].value = 0.25f;
				tree[i].info = (rnd(s) % (uint32_t) nf) | (rnd(s) % 2 ? GS_NODE_DEFAULT_LEFT : 0);
				tree[i].left = size;
				depth[size] = depth[size + 1] = depth[i] + 1;
				size += 2;
			}
			else
			{
				tree[i].value = (float) (((double) rnd(s) / 2147483648.0 - 0.5) *
										 pow(10.0, (double) (rnd(s) % 7) - 3.0));
				tree[i].info = GS_NODE_LEAF;
				tree[i].left = 0;
				if (depth[i] > f->tree_depth[t])
					f->tree_depth[t] = depth[i];
			}
		}
		if (f->tree_depth[t] > f->max_depth)
			f->max_depth = f->tree_depth[t];
		f->n_nodes += size;
		free(depth);
	}
	return f;
}

static float rnd_cat_value(uint64_t *s);

/*
 * One trial of a derived form (build: gs_forest_complete_build or
 * gs_forest_qs_build): check forest f and build its form, score n random
 * rows (NaN one in ten; for features below ncat mostly category values),
 * compare with the node walk and the portable path (complete_same,
 * portable_same), free f.  Returns -1 when f fails the check or the build,
 * 1 when every path gives the same bits, 0 when not; *bytes gets the size
 * of the form (0 without one).
 */
static int
form_trial(GsForest *f, GsCode (*build) (GsForest *, GsStatus *), int ncat,
		   uint64_t *s, size_t n, size_t *bytes)
{
	const size_t nf = (size_t) f->n_features;
	GsStatus	st = {0};
	float	   *col = malloc(sizeof(float) * n * nf);
	float	   *margin = malloc(sizeof(float) * n * f->n_groups);
	float	   *out = malloc(sizeof(float) * n * f->n_outputs);
	int			r = -1;

	*bytes = 0;
	if (gs_forest_check(f, NULL, &gs_malloc_allocator, &st) == GS_OK &&
		build(f, &st) == GS_OK)
	{
		*bytes = gs_forest_complete_bytes(f) + gs_forest_qs_bytes(f);
		for (size_t i = 0; i < n * nf; i++)
			col[i] = rnd(s) % 10 == 0 ? NAN :
				(int) (i / n) < ncat && rnd(s) % 4 ? rnd_cat_value(s) : rnd_value(s);
		gs_cpu_predict(f, col, n, n, margin, out);
		r = complete_same(f, col, n, margin, out) && portable_same(f, col, n, out);
	}
	free(col);
	free(margin);
	free(out);
	gs_forest_free(f);
	return r;
}

/*
 * The complete-tree form (forest_complete.h) on random forests: unbalanced
 * trees, lone leaves, NaN both ways, infinite thresholds and values,
 * several output groups (more than the vector path takes, too), depths
 * past the form's cap, batch sizes around the sixteen-row groups: its
 * margins and outputs the same bits as the node walk's and the portable
 * path's.
 */
static void
test_complete_random(void)
{
	uint64_t	s = 42;
	int			built = 0,
				same = 0,
				trials = 0,
				loaded = 0;
	const size_t sizes[] = {1, 15, 16, 17, 100, 129, 300};

	for (int trial = 0; trial < 60; trial++)
	{
		int			nt = 1 + (int) (rnd(&s) % 40);
		int			nf = 1 + (int) (rnd(&s) % 12);
		int			ng = trial % 5 == 4 ? 17 : trial % 3 == 2 ? 3 : 1;
		int			dmax = trial % 10 == 9 ? 13 : 1 + (int) (rnd(&s) % 10);
		int			psplit = 4 + (int) (rnd(&s) % 5);
		size_t		n = sizes[trial % 7];
		size_t		bytes;
		int			r = form_trial(random_forest(&s, nt, nf, ng, dmax, psplit),
								   gs_forest_complete_build, 0, &s, n, &bytes);

		loaded += r >= 0;
		built += bytes > 0;
		trials += r >= 0;
		same += r == 1;
	}
	check(loaded == 60, "%s%s", "random forests pass gs_forest_check", "");
	check(built >= 30, "%s%s", "most random forests get complete trees", "");
	check(trials > 0 && same == trials, "%s%s",
		  "complete trees, node walk and portable path: the same margins and outputs on random forests", "");
}

/*
 * Forests whose complete-tree form is too big for the cache
 * (cpu_complete.c's big blocks of rows on the AVX2 path): many full trees
 * of depth 9, 30 features, one and three output groups, batches longer
 * than a block and not a multiple of 32 rows; the same bits as the node
 * walk and the portable path.
 */
static void
test_complete_big(void)
{
	uint64_t	s = 7;
	const size_t n = 2517;
	const int	nf = 30;
	int			same = 0,
				big = 0;

	for (int trial = 0; trial < 2; trial++)
	{
		size_t		bytes;
		int			r = form_trial(random_forest(&s, 240, nf, trial == 0 ? 1 : 3, 9, 8),
								   gs_forest_complete_build, 0, &s, n, &bytes);

		big += bytes >= 1024 * 1024;
		same += r == 1;
	}
	check(big == 2, "%s%s", "forests of 240 full trees of depth 9 get complete trees of over 1 MB", "");
	check(same == 2, "%s%s",
		  "complete trees too big for the cache: the same margins and outputs as the node walk and the portable path", "");
}

/*
 * A random forest of LightGBM's kind for the leaf-bit-vector form
 * (forest_qs.h): random_forest's trees with double leaves (a low float
 * per node) and, with probability pcat in 1/8, categorical splits on the
 * features below ncat, sets of up to four words with random flags
 * (GS_CAT_TRUNC_NEGATIVE the same per feature unless mixed,
 * GS_CAT_INVALID_DEFAULT at random), empty sets among them.
 */
static GsForest *
random_lgbm_forest(uint64_t *s, int nt, int nf, int ng, int dmax, int psplit,
				   int ncat, int pcat, bool mixed)
{
	GsForest   *f = random_forest(s, nt, nf, ng, dmax, psplit);
	uint32_t	trunc[16];

	f->format = GS_FORMAT_LIGHTGBM;
	f->leaf_lo = malloc(sizeof(float) * (size_t) (f->n_nodes > 0 ? f->n_nodes : 1));
	f->cat_words = malloc(sizeof(uint32_t) * (size_t) (f->n_nodes * 5 + 1));
	for (int j = 0; j < 16; j++)
		trunc[j] = rnd(s) % 2 ? GS_CAT_TRUNC_NEGATIVE : 0;
	for (int64_t i = 0; i < f->n_nodes; i++)
	{
		GsNode	   *n = &f->nodes[i];

		f->leaf_lo[i] = 0.0f;
		if (n->info & GS_NODE_LEAF)
		{
			f->leaf_lo[i] = n->value * 1e-8f * (float) ((int) (rnd(s) % 5) - 2);
			continue;
		}
		if (ncat > 0 && (int) (rnd(s) % 8) < pcat)
		{
			uint32_t	j = rnd(s) % (uint32_t) ncat;
			uint32_t	words = rnd(s) % 5;
			uint32_t	at = (uint32_t) f->n_cat_words;

			f->cat_words[at] = words | (mixed ? (rnd(s) % 2 ? GS_CAT_TRUNC_NEGATIVE : 0) : trunc[j]) |
				(rnd(s) % 4 == 0 ? GS_CAT_INVALID_DEFAULT : 0);
			for (uint32_t w = 0; w < words; w++)
				f->cat_words[at + 1 + w] = rnd(s) * 2654435761u;
			f->n_cat_words += 1 + words;
			memcpy(&n->value, &at, sizeof(at));
			n->info = j | GS_NODE_CATEGORICAL | (n->info & GS_NODE_DEFAULT_LEFT);
			f->split_kinds |= GS_NODE_CATEGORICAL;
			f->n_cat_splits++;
		}
	}
	if (f->n_cat_words == 0)
	{
		free(f->cat_words);
		f->cat_words = NULL;
	}
	return f;
}

/* A value a categorical feature may hold: codes, fractions, invalid ones. */
static float
rnd_cat_value(uint64_t *s)
{
	static const float special[] = {-0.5f, -1.0f, -2.0f, 0.0f, -0.0f, 0.99f, 31.5f, 32.0f,
	127.0f, 128.0f, 1e9f, 16777216.0f, INFINITY, -INFINITY, 1e-40f, -1e-40f};
	uint32_t	k = rnd(s) % 32;

	if (k < 16)
		return special[k];
	return (float) (rnd(s) % 140) + (k % 3 == 0 ? 0.25f : 0.0f);
}

/*
 * The leaf-bit-vector form (forest_qs.h) on random forests of LightGBM's
 * kind: trees of up to 64 leaves (and some of more, which take none),
 * lone leaves, numerical and categorical splits with NaN both ways,
 * category values of every class (codes, fractions, (-1, 0), negative,
 * past every set, 2^24, infinite), several output groups, batch sizes
 * around the sixteen-row groups: its margins and outputs the same bits as
 * the node walk's and the portable path's; and forests whose sets disagree
 * on (-1, 0) take no form.
 */
static void
test_qs_random(void)
{
	uint64_t	s = 4242;
	int			built = 0,
				same = 0,
				trials = 0,
				mixed_none = 0;
	const size_t sizes[] = {1, 15, 16, 17, 100, 129, 300, 1000};

	for (int trial = 0; trial < 80; trial++)
	{
		int			nt = 1 + (int) (rnd(&s) % (trial % 8 == 7 ? 400 : 40));
		int			nf = 1 + (int) (rnd(&s) % 12);
		int			ng = trial % 5 == 4 ? 3 : 1;
		int			dmax = trial % 10 == 9 ? 7 : 1 + (int) (rnd(&s) % 6);
		int			psplit = trial % 10 == 9 ? 8 : 4 + (int) (rnd(&s) % 5);
		int			ncat = trial % 4 == 0 ? 0 : 1 + (int) (rnd(&s) % (uint32_t) nf);
		bool		mixed = trial % 20 == 13;
		size_t		n = sizes[trial % 8];
		GsForest   *f = random_lgbm_forest(&s, nt, nf, ng, dmax, psplit, ncat, 3, mixed);
		int			cat_splits = f->n_cat_splits;
		size_t		bytes;
		int			r = form_trial(f, gs_forest_qs_build, ncat, &s, n, &bytes);

		trials += r >= 0;
		built += bytes > 0;
		mixed_none += mixed && bytes == 0 && cat_splits > 1;
		same += r == 1;
	}
	check(trials == 80, "%s%s", "random LightGBM-like forests pass gs_forest_check", "");
	check(built >= 50, "%s%s", "most random LightGBM-like forests get leaf bit vectors", "");
	check(mixed_none >= 1, "%s%s", "category sets that disagree on (-1, 0) take no leaf bit vectors", "");
	check(trials > 0 && same == trials, "%s%s",
		  "leaf bit vectors, node walk and portable path: the same margins and outputs on random forests", "");
	printf("# leaf bit vectors: %d of %d random forests, %d the same\n", built, trials, same);
}

int
main(void)
{
	test_fixtures();
	test_complete_random();
	test_complete_big();
	test_qs_random();
	test_bad_models();
	test_lgbm_layout();
	test_limits();
	test_corruption();
	printf("1..%d\n", n_pass + n_fail);
	printf("core: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

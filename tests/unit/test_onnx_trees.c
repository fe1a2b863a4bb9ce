/*
 * test_onnx_trees.c
 *	  Unit tests of ONNX-ML tree ensembles (src/core/frontend/onnx/onnx_trees.c) against
 *	  onnxruntime's scores (fixtures made by
 *	  tests/fixtures/gen_onnx_tree_fixtures.py with the real skl2onnx,
 *	  onnxmltools and onnxruntime).  Prints TAP lines and a final "N passed,
 *	  N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan).  For every
 * tests/fixtures/cases/onnx_*.meta: loads onnx/trees/NAME.onnx with format
 * 'onnx' and with detection, requires a tree ensemble (a GsForest like
 * XGBoost's) of the case's shape and objective, scores the rows as one
 * column-major batch, as odd-sized batches with a padded leading dimension
 * and row by row, and requires every output within the case's tolerance of
 * onnxruntime's (relative above 1, absolute below; 0 for all fixtures but
 * AVERAGE: bit for bit); the largest differences are printed per fixture
 * (onnx_pipe_*: scikit-learn pipelines whose preprocessing is folded into
 * the splits, gen_onnx_pipeline_fixtures.py).  Every file of
 * onnx/bad/trees_expected.txt and onnx/bad/pipe_expected.txt must be
 * refused with its status and message; failing allocations and random
 * corruptions of valid models must give an error, never a crash or a leak
 * (ASan/LSan run).  Node modes, missing values and the transforms are also
 * checked on a hand-made forest, independently of the fixtures; a tree
 * feeding no output (a binary classifier's tree weighting only class 0) is
 * checked as every tree is, on a fixture edited through protobuf-c.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "forest/forest_eval.h"
#include "forest/forest_image.h"
#include "frontend/onnx/onnx.pb-c.h"
#include "model.h"
#include "../common/test_util.h"
#include "../common/test_models.h"

#define FIXTURES "../fixtures"

typedef GsCases Case;

/* Worst differences seen for one fixture. */
typedef struct Diff
{
	double		abs,
				rel;
	long		exact,
				total;
} Diff;

/* Within tol of want (relative above 1, absolute below)?  Tracks d. */
static int
close_enough(float got, float want, double tol, Diff *d)
{
	double		ad = fabs((double) got - (double) want);
	double		rel = ad / fmax(fabs((double) want), 1e-30);

	if (isnan(got) || isnan(want))
		return 0;
	if (ad > d->abs)
		d->abs = ad;
	if (fabs((double) want) > 0 && rel > d->rel)
		d->rel = rel;
	d->exact += got == want;
	d->total++;
	return ad <= tol * fmax(1.0, fabs((double) want));
}

/* Score rows [r0, r0+n) of c as one batch with leading dimension ld. */
static int
score_range(const GsModel *m, const Case *c, int r0, int n, int ld, double tol, Diff *d)
{
	float	   *x = malloc(sizeof(float) * (size_t) ld * c->nf);
	float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, n));
	float	   *out = malloc(sizeof(float) * (size_t) n * c->nout);
	int			ok = 1;

	for (int f = 0; f < c->nf; f++)
		for (int r = 0; r < ld; r++)
			x[(size_t) f * ld + r] = r < n ? c->x[(r0 + r) * c->nf + f] : NAN;
	gs_model_predict(m, x, ld, n, scratch, out);
	for (int r = 0; r < n; r++)
		for (int k = 0; k < c->nout; k++)
			if (!close_enough(out[r * c->nout + k], c->want[(r0 + r) * c->nout + k], tol, d))
			{
				if (ok)
					printf("# row %d output %d: got %.9g want %.9g\n", r0 + r, k,
						   out[r * c->nout + k], c->want[(r0 + r) * c->nout + k]);
				ok = 0;
			}
	free(x);
	free(scratch);
	free(out);
	return ok;
}

/* One row through gs_cpu_predict_row (the scalar path of gpu_score). */
static int
score_rows_scalar(const GsModel *m, const Case *c, double tol, Diff *d)
{
	const GsForest *f = m->forest;
	float	   *margin = malloc(sizeof(float) * f->n_groups);
	float	   *out = malloc(sizeof(float) * f->n_outputs);
	int			ok = 1;

	for (int r = 0; r < c->n_rows; r++)
	{
		gs_cpu_predict_row(f, c->x + r * c->nf, margin, out);
		for (int k = 0; k < c->nout; k++)
			if (!close_enough(out[k], c->want[r * c->nout + k], tol, d))
			{
				if (ok)
					printf("# scalar row %d output %d: got %.9g want %.9g\n", r, k, out[k],
						   c->want[r * c->nout + k]);
				ok = 0;
			}
	}
	free(margin);
	free(out);
	return ok;
}

/* Every fixture against onnxruntime. */
static void
test_cases(void)
{
	DIR		   *dir = opendir(FIXTURES "/cases");
	struct dirent *e;
	int			n_cases = 0;

	if (dir == NULL)
	{
		gs_tap(0, "cases", "fixtures directory present");
		return;
	}
	while ((e = readdir(dir)) != NULL)
	{
		char		name[256],
					path[512],
					obj[64],
					what[300];
		int			nf,
					nout,
					ok;
		double		tol;
		size_t		len = strlen(e->d_name);
		FILE	   *f;
		Case		c;
		GsModel    *m,
				   *m2;
		GsStatus	st;
		Diff		d;

		if (len < 6 || strncmp(e->d_name, "onnx_", 5) != 0 || strcmp(e->d_name + len - 5, ".meta") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int) (len - 5), e->d_name);
		snprintf(path, sizeof(path), FIXTURES "/cases/%s", e->d_name);
		f = fopen(path, "r");
		ok = f && fscanf(f, "%d %d %63s %lf", &nf, &nout, obj, &tol) == 4;
		if (f)
			fclose(f);
		gs_tap(ok, name, "meta file read");
		if (!ok)
			continue;
		snprintf(path, sizeof(path), FIXTURES "/cases/%s.csv", name);
		if (gs_read_cases(path, nf, nout, &c) != 0)
		{
			gs_tap(0, name, "csv read");
			continue;
		}
		snprintf(path, sizeof(path), FIXTURES "/onnx/trees/%s.onnx", name);
		if (gs_load_model_file(path, GS_FORMAT_ONNX, &m, &st) != GS_OK)
		{
			printf("# %s%s%s\n", st.msg, st.detail[0] ? " / " : "", st.detail);
			gs_tap(0, name, "loads");
			free(c.x);
			free(c.want);
			continue;
		}
		n_cases++;
		snprintf(what, sizeof(what), "loads as a tree ensemble: %d features, %d outputs, objective %s",
				 nf, nout, obj);
		gs_tap(m->kind == GS_MODEL_FOREST && m->forest && !m->mlp && m->format == GS_FORMAT_ONNX &&
			   m->n_features == nf && m->n_outputs == nout &&
			   strcmp(m->forest->objective, obj) == 0 &&
			   strcmp(gs_model_kind_name(m), "tree-ensemble") == 0, name, what);
		if (strcmp(m->forest->objective, obj) != 0)
			printf("# objective %s\n", m->forest->objective);
		{
			GsStatus	cst;

			/* what every loader guarantees (images and the GPU upload trust it) */
			gs_status_clear(&cst);
			gs_tap(gs_forest_check(m->forest, NULL, &gs_malloc_allocator, &cst) == GS_OK, name,
				   "the forest passes gs_forest_check");
			if (cst.code != GS_OK)
				printf("# %s\n", cst.msg);
		}
		gs_tap(gs_load_model_file(path, GS_FORMAT_AUTO, &m2, &st) == GS_OK && m2->kind == GS_MODEL_FOREST &&
			   m2->forest->n_nodes == m->forest->n_nodes, name, "format 'auto' loads the same forest");
		gs_model_free(m2);
		gs_tap(gs_load_model_file(path, GS_FORMAT_ONNX_AUTOENCODER, &m2, &st) == GS_ERR_UNSUPPORTED &&
			   m2 == NULL && strstr(st.msg, "not an autoencoder"), name,
			   "format 'onnx-autoencoder' refused");

		memset(&d, 0, sizeof(d));
		gs_tap(score_range(m, &c, 0, c.n_rows, c.n_rows, tol, &d), name, "one batch matches onnxruntime");
		ok = 1;
		for (int r0 = 0, step = 1; r0 < c.n_rows; r0 += step, step = step * 2 + 1)
		{
			int			n = step < c.n_rows - r0 ? step : c.n_rows - r0;

			ok &= score_range(m, &c, r0, n, n + 3, tol, &d);
		}
		gs_tap(ok, name, "odd batches with padded leading dimension match");
		gs_tap(score_rows_scalar(m, &c, tol, &d), name, "row by row (gs_cpu_predict_row) matches");
		printf("# %s: max abs diff %.3g, max rel diff %.3g, %ld of %ld outputs bit-identical to onnxruntime\n",
			   name, d.abs, d.rel, d.exact, d.total);
		gs_model_free(m);
		free(c.x);
		free(c.want);
	}
	closedir(dir);
	gs_tap(n_cases >= 20, "cases", "at least 20 ONNX tree fixtures checked");
}

/* Every hostile or unsupported file gives the expected status and message. */
static void
test_bad(void)
{
	gs_check_bad_files(FIXTURES "/onnx/bad/trees_expected.txt", FIXTURES "/onnx/bad", 15);
	gs_check_bad_files(FIXTURES "/onnx/bad/pipe_expected.txt", FIXTURES "/onnx/bad", 10);
	gs_check_bad_files(FIXTURES "/onnx/bad/iforest_expected.txt", FIXTURES "/onnx/bad", 8);
}

/*
 * A pipeline fitted on a pandas DataFrame has one graph input per column:
 * the model's features are the inputs in order, named after them; a model
 * with one input [N, F] has no names.  Also under failing allocations.
 */
static void
test_dataframe_names(void)
{
	static const char *const want[] = {"amount_z", "hour_z", "merchant_risk", "amount", "velocity",
	"zero_share", "country_code", "device_age"};
	size_t		len;
	unsigned char *df = gs_read_file(FIXTURES "/onnx/trees/onnx_pipe_df_ct_rf.onnx", &len);
	GsModel    *m = NULL;
	GsStatus	st;
	bool		ok;

	if (df == NULL)
	{
		gs_tap(0, "dataframe", "fixture present");
		return;
	}
	ok = gs_model_load(df, len, GS_FORMAT_AUTO, &gs_default_limits, &gs_malloc_allocator, &m, &st) == GS_OK &&
		m->n_features == 8 && m->feature_names != NULL;
	for (int i = 0; ok && i < 8; i++)
		ok = strcmp(m->feature_names[i], want[i]) == 0;
	gs_tap(ok, "dataframe", "8 one-column inputs: 8 features named after the DataFrame's columns, in order");
	gs_model_free(m);
	m = NULL;
	free(df);
	df = gs_read_file(FIXTURES "/onnx/trees/onnx_pipe_ct_rf.onnx", &len);
	ok = df && gs_model_load(df, len, GS_FORMAT_AUTO, &gs_default_limits, &gs_malloc_allocator, &m, &st) == GS_OK &&
		m->n_features == 8 && m->feature_names == NULL;
	gs_tap(ok, "dataframe", "one [N, 8] input: no feature names");
	gs_model_free(m);
	free(df);
}

/* Caps of GsLimits apply before allocation. */
static void
test_caps(void)
{
	const char *path = FIXTURES "/onnx/trees/onnx_skl_rf_3class.onnx";
	size_t		len;
	unsigned char *bytes = gs_read_file(path, &len);
	GsLimits	lim = gs_default_limits;
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;

	if (bytes == NULL)
	{
		gs_tap(0, "caps", "fixture present");
		return;
	}
	lim.max_trees = 10;			/* 6 trees x 3 classes make 18 forest trees */
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT && m == NULL && strstr(st.msg, "limit of 10 trees"), "caps",
		   "max_trees counts one forest tree per (tree, class)");
	lim = gs_default_limits;
	lim.max_nodes = 100;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT && m == NULL, "caps", "max_nodes applies");
	lim = gs_default_limits;
	lim.max_depth = 3;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT && m == NULL && strstr(st.msg, "deeper than the limit of 3"), "caps",
		   "max_depth applies");
	lim = gs_default_limits;
	lim.max_features = 7;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT && m == NULL, "caps", "max_features applies");
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_OK && m->forest->n_trees == 18 && m->forest->n_groups == 3 &&
		   m->forest->transform == GS_TRANSFORM_IDENTITY &&
		   strcmp(m->forest->saved_by, "skl2onnx 1.20.0") == 0 &&
		   strcmp(m->forest->booster, "onnx-ml") == 0,
		   "shape", "3-class forest: one tree per (tree, class), producer recorded as saved_by");
	gs_model_free(m);
	free(bytes);
}

/* Attribute name of node n, or NULL. */
static Onnx__AttributeProto *
node_attr(Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (strcmp(n->attribute[i]->name, name) == 0)
			return n->attribute[i];
	return NULL;
}

/* Pack mp and load it as format onnx; the status in *st. */
static GsCode
load_packed(const Onnx__ModelProto *mp, GsModel **m, GsStatus *st)
{
	size_t		len = onnx__model_proto__get_packed_size(mp);
	unsigned char *b = malloc(len);
	GsCode		rc;

	onnx__model_proto__pack(mp, b);
	rc = gs_model_load(b, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, m, st);
	free(b);
	return rc;
}

/*
 * A binary classifier weighting both classes scores class 1's sum, so a
 * tree weighting only class 0 feeds no output; it is checked all the same
 * as every tree is (a cycle in it refused), and left out of the forest.
 */
static void
test_unscored_tree(void)
{
	size_t		len;
	unsigned char *bytes = gs_read_file(FIXTURES "/onnx/trees/onnx_edit_binary_both.onnx", &len);
	Onnx__ModelProto *mp = bytes ? onnx__model_proto__unpack(NULL, len, bytes) : NULL;
	Onnx__NodeProto *tn = NULL;
	Onnx__AttributeProto *ids,
			   *tids,
			   *nids,
			   *ws,
			   *ntree,
			   *nnode,
			   *ntrue;
	GsModel    *m = NULL;
	GsStatus	st;
	int32_t		n_trees = 0;
	int64_t		last = -1;
	size_t		k = 0,
				root = 0;
	GsCode		rc;

	for (size_t i = 0; mp && i < mp->graph->n_node; i++)
		if (strcmp(mp->graph->node[i]->op_type, "TreeEnsembleClassifier") == 0)
			tn = mp->graph->node[i];
	if (tn == NULL || !(ids = node_attr(tn, "class_ids")) || !(tids = node_attr(tn, "class_treeids")) ||
		!(nids = node_attr(tn, "class_nodeids")) || !(ws = node_attr(tn, "class_weights")) ||
		!(ntree = node_attr(tn, "nodes_treeids")) || !(nnode = node_attr(tn, "nodes_nodeids")) ||
		!(ntrue = node_attr(tn, "nodes_truenodeids")) ||
		load_packed(mp, &m, &st) != GS_OK)
	{
		gs_tap(0, "unscored tree", "fixture present and loaded");
		goto done;
	}
	n_trees = m->forest->n_trees;
	gs_model_free(m);
	m = NULL;
	/* the last tree weights only class 0 */
	for (size_t i = 0; i < tids->n_ints; i++)
		if (tids->ints[i] > last)
			last = tids->ints[i];
	for (size_t i = 0; i < ids->n_ints; i++)
		if (!(tids->ints[i] == last && ids->ints[i] == 1))
		{
			ids->ints[k] = ids->ints[i];
			tids->ints[k] = tids->ints[i];
			nids->ints[k] = nids->ints[i];
			ws->floats[k++] = ws->floats[i];
		}
	ids->n_ints = tids->n_ints = nids->n_ints = ws->n_floats = k;
	rc = load_packed(mp, &m, &st);
	gs_tap(rc == GS_OK && m->forest->n_trees == n_trees - 1, "unscored tree",
		   "a tree weighting only the unscored class 0 is left out of the forest");
	gs_model_free(m);
	m = NULL;
	/* and a cycle in it is refused */
	while (root < ntree->n_ints && ntree->ints[root] != last)
		root++;
	if (root < ntrue->n_ints)
		ntrue->ints[root] = nnode->ints[root];
	rc = load_packed(mp, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && m == NULL && strstr(st.msg, "is not a tree") != NULL,
		   "unscored tree", "a cycle in a tree feeding no output is refused");
	printf("# %s\n", st.msg);
	gs_model_free(m);
done:
	if (mp)
		onnx__model_proto__free_unpacked(mp, NULL);
	free(bytes);
}

/* An allocator failing after budget allocations (malloc otherwise). */
typedef struct Budget
{
	long		left;
} Budget;

static void *
budget_alloc(void *ctx, size_t size)
{
	Budget	   *b = (Budget *) ctx;

	if (b->left-- <= 0)
		return NULL;
	return malloc(size ? size : 1);
}

static void
budget_free(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

/* Every allocation failing in turn gives an error and leaks nothing (LSan). */
static void
test_nomem(const char *file)
{
	size_t		len;
	unsigned char *bytes = gs_read_file(file, &len);
	int			ok = bytes != NULL,
				loaded = 0;

	for (long k = 0; k < 20000 && !loaded && bytes; k++)
	{
		Budget		b = {k};
		GsAllocator a = {budget_alloc, budget_free, &b};
		GsModel    *m = NULL;
		GsStatus	st;
		GsCode		rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &a, &m, &st);

		if (rc == GS_OK)
		{
			loaded = 1;
			gs_model_free(m);
		}
		else if ((rc != GS_ERR_NOMEM && rc != GS_ERR_INVALID_MODEL) || m != NULL)
			ok = 0;
	}
	gs_tap(ok && loaded, file, "each failing allocation gives an error, then the model loads");
	free(bytes);
}

/* Random corruption of valid models: never a crash; what loads can score. */
static void
test_corruption(void)
{
	static const char *const files[] = {"onnx_skl_gb_reg", "onnx_lgb_binary", "onnx_xgb_3class",
	"onnx_edit_modes", "onnx_skl_rf_binary_zipmap", "onnx_v5_modes_member"};
	int			loaded = 0,
				refused = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
	{
		char		path[256];
		size_t		len = 0;
		unsigned char *orig,
				   *b;

		snprintf(path, sizeof(path), FIXTURES "/onnx/trees/%s.onnx", files[i]);
		orig = gs_read_file(path, &len);
		if (orig == NULL)
			continue;
		b = malloc(len);
		for (int t = 0; t < 400; t++)
		{
			size_t		n = len;
			GsModel    *m = NULL;
			GsStatus	st;

			memcpy(b, orig, len);
			for (int k = 0; k < 1 + t % 4; k++)
				b[(size_t) (gs_rnd() * len)] = (unsigned char) (gs_rnd() * 256);
			if (t % 5 == 0)
				n = (size_t) (gs_rnd() * len);
			if (gs_model_load(b, n, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st) == GS_OK)
			{
				size_t		nf = (size_t) m->n_features;
				float	   *x = malloc(sizeof(float) * 3 * nf);
				float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, 3));
				float	   *out = malloc(sizeof(float) * 3 * m->n_outputs);

				for (size_t k = 0; k < 3 * nf; k++)
					x[k] = k % 7 == 0 ? NAN : (float) (gs_rnd() * 4 - 2);
				gs_model_predict(m, x, 3, 3, scratch, out);
				free(x);
				free(scratch);
				free(out);
				gs_model_free(m);
				loaded++;
			}
			else
			{
				if (m != NULL || st.msg[0] == '\0')
					gs_tap(0, "corruption", "a refused model has a message and no model");
				refused++;
			}
		}
		free(b);
		free(orig);
	}
	printf("# corruption: %d loaded, %d refused\n", loaded, refused);
	gs_tap(refused > 0 && loaded > 0, "corruption", "2400 corrupted models: no crash, corrupt ones refused");
}

/*
 * The node flags onnx_trees.c uses, on a hand-made one-split forest, for
 * each threshold t: x < t (BRANCH_LT), equality (BRANCH_EQ / NEQ), NaN to
 * either side; independent of the fixtures, through gs_tree_leaf and the
 * lockstep gs_node_step alike.
 */
static void
test_node_semantics(void)
{
	const float xs[] = {-1.0f, 0.0f, -0.0f, 0.5f, 1.0f, 1.5f, NAN};
	int			ok = 1;

	for (int variant = 0; variant < 4; variant++)
	{
		/* 0: x < 0.5; 1: x != 0.5 left (NaN right); 2: x != 0 left (NaN left); 3: x < 1 (NaN left) */
		GsNode		tree[3] = {{0.5f, 0, 1}, {-1.0f, GS_NODE_LEAF, 0}, {2.0f, GS_NODE_LEAF, 0}};

		if (variant == 1)
			tree[0].info = GS_NODE_EQUAL;
		else if (variant == 2)
		{
			tree[0].value = 0.0f;
			tree[0].info = GS_NODE_EQUAL | GS_NODE_DEFAULT_LEFT;
		}
		else if (variant == 3)
		{
			tree[0].value = 1.0f;
			tree[0].info = GS_NODE_DEFAULT_LEFT;
		}
		for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		{
			float		x = xs[i];
			int			left;
			float		leaf;
			uint32_t	idx = gs_node_step(tree, 0, &x, 1, NULL);

			if (isnan(x))
				left = variant == 2 || variant == 3;
			else if (variant == 0)
				left = x < 0.5f;
			else if (variant == 1)
				left = x != 0.5f;
			else if (variant == 2)
				left = x != 0.0f;
			else
				left = x < 1.0f;
			leaf = gs_tree_leaf(tree, &x, 1, NULL);
			ok &= leaf == (left ? -1.0f : 2.0f) && idx == (left ? 1u : 2u);
		}
	}
	gs_tap(ok, "semantics", "equality nodes: x == t goes right, -0 == 0, NaN to the default side");
	{
		/* onnxruntime's ComputeLogistic and ComputeSoftmax(Zero), written out in float */
		float		m[4] = {2.0f, 0.0f, -1.5f, 0.5f},
					o[4],
					want[4];
		float		vmax = 2.0f,
					sum = 0.0f;

		gs_transform_row(GS_TRANSFORM_ORT_SOFTMAX, NULL, m, 4, o);
		for (int k = 0; k < 4; k++)
			sum += (want[k] = expf(m[k] - vmax));
		ok = 1;
		for (int k = 0; k < 4; k++)
			ok &= o[k] == want[k] / sum;
		gs_tap(ok, "semantics", "ORT softmax: float sum, divided");
		gs_transform_row(GS_TRANSFORM_ORT_SOFTMAX_ZERO, NULL, m, 4, o);
		sum = 0.0f;
		for (int k = 0; k < 4; k++)
			if (m[k] != 0.0f)
				sum += (want[k] = expf(m[k] - vmax));
			else
				want[k] = 0.0f;
		ok = 1;
		for (int k = 0; k < 4; k++)
			ok &= o[k] == want[k] / sum;
		gs_tap(ok && o[1] == 0.0f, "semantics", "ORT softmax_zero: a zero margin stays 0");
		gs_transform_row(GS_TRANSFORM_ORT_LOGISTIC, NULL, m, 4, o);
		ok = o[0] == 1.0f / (1.0f + expf(-2.0f)) && o[1] == 0.5f &&
			o[2] == 1.0f - 1.0f / (1.0f + expf(-1.5f));
		gs_tap(ok, "semantics", "ORT logistic: 1 - v for negative margins");
	}
}

int
main(void)
{
	test_cases();
	test_bad();
	test_dataframe_names();
	test_caps();
	test_unscored_tree();
	test_nomem(FIXTURES "/onnx/trees/onnx_pipe_df_ct_rf.onnx");
	test_nomem(FIXTURES "/onnx/trees/onnx_pipe_edit_signs.onnx");
	test_nomem(FIXTURES "/onnx/trees/onnx_lgb_binary.onnx");
	test_nomem(FIXTURES "/onnx/trees/onnx_v5_modes_member.onnx");
	test_nomem(FIXTURES "/onnx/trees/onnx_iforest_tiny.onnx");
	test_corruption();
	test_node_semantics();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

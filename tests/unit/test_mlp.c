/*
 * test_mlp.c
 *	  Unit tests of the ONNX loader and the CPU engine of neural networks,
 *	  against onnxruntime's outputs (fixtures made by
 *	  tests/fixtures/gen_onnx_fixtures.py with the real onnxruntime).  Prints
 *	  TAP lines and a final "N passed, N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan).  For every
 * tests/fixtures/onnx/CASE.meta (gen_onnx_fixtures.py's networks,
 * gen_onnx_sklearn_fixtures.py, gen_onnx_mlp_pipeline_fixtures.py and
 * gen_onnx_linear_fixtures.py's skl2onnx exports, the PyTorch exports of
 * gen_onnx_torch_fixtures.py and gen_onnx_torch2_fixtures.py, the Keras
 * conversions of gen_onnx_keras_fixtures.py and gen_onnx_keras3_fixtures.py,
 * found by globbing the directory): loads the model in the case's format,
 * scores the rows as one column-major batch, as odd-sized batches with a
 * padded leading dimension and row by row, and requires every output within
 * 1e-5 relative of onnxruntime's (absolute 1e-6 for outputs below 0.1, see
 * TOL below).  Every file listed in onnx/bad/expected.txt,
 * onnx/bad/skl_expected.txt, onnx/bad/act_expected.txt,
 * onnx/bad/t2_expected.txt, onnx/bad/keras_expected.txt,
 * onnx/bad/keras3_expected.txt, onnx/bad/sklct_expected.txt and
 * onnx/bad/lin_expected.txt must be
 * rejected with the status and message given there; skl2onnx exports must
 * score the right output (a binary classifier's P(class 1), a Scaler as two
 * steps, a ColumnTransformer as a GATHER and per-column steps, a
 * OneHotEncoder as ONE_HOT columns, a DataFrame's columns as named
 * features, a linear model as one dense layer: test_mlp_sklearn.c);
 * Keras 3's exports must
 * become the steps their patterns stand for; constant folding's cap holds;
 * deep nesting, failing allocations and random corruptions of valid models
 * must give an error, never a crash or a leak (ASan/LSan run:
 * test_mlp_hostile.c).
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/forest_shap.h"
#include "model.h"
#include "mlp/mlp.h"
#include "mlp/mlp_eval.h"
#include "frontend/onnx/onnx.pb-c.h"
#include "frontend/onnx/onnx_load.h"
#include "../common/test_util.h"
#include "../common/test_models.h"
#include "../common/nn_tolerance.h"

#define FIXTURES "../fixtures/onnx"

typedef GsCases Case;

/*
 * Is got within tolerance of want (tests/common/nn_tolerance.h; scale: the
 * output's largest |reference|)?  Tracks the worst error relative to
 * max(|want|, scale) of the outputs whose columns reach 0.1.
 */
static int
close_enough(float got, float want, double scale, double *worst)
{
	double		e = gs_nn_error(got, want, scale);

	if (!isinf(e) && fmax(fabs((double) want), scale) >= 0.1 && e > *worst)
		*worst = e;
	return gs_nn_close(got, want, scale);
}

/* Score rows [r0, r0+n) of c as one batch with leading dimension ld. */
static int
score_range(const GsModel *m, const Case *c, const double *scale, int r0, int n, int ld,
			double *worst)
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
			if (!close_enough(out[r * c->nout + k], c->want[(r0 + r) * c->nout + k], scale[k], worst))
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

/* Every case (every CASE.meta of the fixture directory) against onnxruntime. */
static void
test_cases(void)
{
	glob_t		gl;
	size_t		n_cases = 0;
	char		what[256];
	int			grc;

	memset(&gl, 0, sizeof(gl));
	grc = glob(FIXTURES "/*.meta", 0, NULL, &gl);
	for (size_t i = 0; i < gl.gl_pathc; i++)
	{
		char		path[512],
					fmtname[32],
					file[128],
					name[128];
		const char *base = strrchr(gl.gl_pathv[i], '/') ? strrchr(gl.gl_pathv[i], '/') + 1 : gl.gl_pathv[i];
		int			nf,
					nout,
					ok;
		FILE	   *f;
		Case		c;
		GsModel    *m;
		GsStatus	st;
		GsModelFormat fmt;
		double		worst = 0,
				   *scale;

		snprintf(name, sizeof(name), "%.*s", (int) (strlen(base) - strlen(".meta")), base);
		n_cases++;
		f = fopen(gl.gl_pathv[i], "r");
		ok = f && fscanf(f, "%d %d %31s %127s", &nf, &nout, fmtname, file) == 4;
		if (f)
			fclose(f);
		gs_tap(ok && gs_model_format_parse(fmtname, &fmt) == 0, name, "meta file read");
		if (!ok)
			continue;
		snprintf(path, sizeof(path), "%s/%s.csv", FIXTURES, name);
		if (gs_read_cases(path, nf, nout, &c) != 0)
		{
			gs_tap(0, name, "csv read");
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", FIXTURES, file);
		if (gs_load_model_file(path, fmt, &m, &st) != GS_OK)
		{
			printf("# %s\n", st.msg);
			gs_tap(0, name, "loads");
			free(c.x);
			free(c.want);
			continue;
		}
		ok = m->kind == GS_MODEL_MLP && m->n_features == nf && m->n_outputs == nout;
		gs_tap(ok, name, "loads as a network with the case's shape");
		if (!ok)
		{
			/* the case's buffers are sized for its shape: scoring would overrun them */
			printf("# %d features, %d outputs\n", m->n_features, m->n_outputs);
			gs_model_free(m);
			free(c.x);
			free(c.want);
			continue;
		}
		scale = malloc(sizeof(double) * nout);
		gs_nn_scales(c.want, c.n_rows, nout, scale);
		gs_tap(score_range(m, &c, scale, 0, c.n_rows, c.n_rows, &worst), name,
			   "one batch matches onnxruntime");
		ok = 1;
		for (int r0 = 0, step = 1; r0 < c.n_rows; r0 += step, step = step * 2 + 1)
		{
			int			n = step < c.n_rows - r0 ? step : c.n_rows - r0;

			ok &= score_range(m, &c, scale, r0, n, n + 3, &worst);
		}
		gs_tap(ok, name, "odd batches with padded leading dimension match");
		ok = 1;
		for (int r = 0; r < c.n_rows; r++)
			ok &= score_range(m, &c, scale, r, 1, 1, &worst);
		gs_tap(ok, name, "row by row matches");
		snprintf(what, sizeof(what), "worst error relative to max(|output|, its scale >= 0.1) %.2e <= %.0e",
				 worst, GS_NN_TOL_REL);
		gs_tap(worst <= GS_NN_TOL_REL, name, what);
		free(scale);
		gs_model_free(m);
		free(c.x);
		free(c.want);
	}
	if (grc == 0)
		globfree(&gl);
	/* gen_onnx_fixtures.py's 6 cases and gen_onnx_sklearn_fixtures.py's 9 */
	snprintf(what, sizeof(what), "%zu cases found, at least 15", n_cases);
	gs_tap(n_cases >= 15, "cases", what);
}

/* Every hostile or unsupported file gives the expected status and message. */
static void
test_bad(void)
{
	gs_check_bad_files(FIXTURES "/bad/expected.txt", FIXTURES "/bad", 10);
	gs_check_bad_files(FIXTURES "/bad/skl_expected.txt", FIXTURES "/bad", 6);
	gs_check_bad_files(FIXTURES "/bad/act_expected.txt", FIXTURES "/bad", 6);
	gs_check_bad_files(FIXTURES "/bad/t2_expected.txt", FIXTURES "/bad", 13);
	gs_check_bad_files(FIXTURES "/bad/keras_expected.txt", FIXTURES "/bad", 2);
	gs_check_bad_files(FIXTURES "/bad/keras3_expected.txt", FIXTURES "/bad", 10);
	gs_check_bad_files(FIXTURES "/bad/sklct_expected.txt", FIXTURES "/bad", 5);
	gs_check_bad_files(FIXTURES "/bad/lin_expected.txt", FIXTURES "/bad", 9);
	gs_check_bad_files(FIXTURES "/bad/skip_expected.txt", FIXTURES "/bad", 6);
}

#include "test_mlp_sklearn.c"

/*
 * Skip connections and branches (gen_onnx_skip_fixtures.py; their scores
 * are checked by test_cases): each skip becomes a SAVE where the value it
 * adds was complete and an ADD_SAVED, its slot shared by the skips of one
 * value ("save0", "add_saved0"), a slot free again after its value's last
 * read taken by the next SAVE; a MatMul's bias Add after a skip stays an
 * ADD step; a second branch starts with a LOAD of the value it reads; Mul
 * and Sub of two values are MUL_SAVED, SUB_SAVED (x - saved) or RSUB_SAVED
 * (saved - x); a Concat prepends ("b") or appends ("a") each saved value.
 */
static void
test_skips(void)
{
	static const struct
	{
		const char *file;
		int32_t		n_slots;
		const char *ops;
		const char *what;
	}			cases[] = {
		{"skip_shared", 2,
			"dense,save0,relu,save1,dense,add_saved0,relu,add_saved0,dense,add_saved1,add,tanh,dense,sigmoid",
		"one value read by two skips shares slot 0; the skip after a MatMul keeps its bias an ADD"},
		{"skip_resnet", 1,
			"dense,save0,mul,add,dense,relu,dense,add_saved0,save0,mul,add,dense,relu,dense,add_saved0,"
			"mul,add,relu,dense,sigmoid",
		"PyTorch's x + f(x) blocks: a SAVE before each block's BatchNorm, the blocks sharing one slot"},
		{"skip_resnet_ln", 1,
			"save0,dense,tanh,mul,add_saved0,dense,save0,layer_norm,dense,gelu,dense,add_saved0,save0,"
			"layer_norm,dense,gelu,dense,add_saved0,layer_norm,dense,softmax",
		"a skip from the input (SAVE at step 0), pre-norm blocks f(x) + x"},
		{"skip_autoencoder", 1, "dense,elu,save0,dense,elu,dense,elu,add_saved0,dense",
		"the decoder adds the encoder's 16-wide layer"},
		{"skip_projection", 2,
			"save0,dense,relu,dense,relu,save1,load0,dense,add_saved1,save0,dense,relu,dense,relu,save1,"
			"load0,dense,add_saved1,dense,sigmoid",
		"a projection on the shortcut: the main branch's end saved, a LOAD back to the block's input"},
		{"skip_wide_deep", 2, "save0,dense,save1,load0,dense,relu,dense,relu,dense,add_saved1,sigmoid",
		"the wide part first, then a LOAD back to the input for the deep part, their logits summed"},
		{"skip_cross", 2,
			"save0,dense,mul_saved0,add_saved0,save1,dense,mul_saved0,add_saved1,save1,load0,dense,relu,"
			"dense,relu,concat_saved1b,dense,sigmoid",
		"cross layers x0 * (W x + b) + x: the input read by each Mul, the cross part's end prepended "
		"to the deep part's by the Concat"},
		{"skip_gates", 3,
			"save0,dense,save1,load0,dense,sigmoid,mul_saved1,save0,dense,tanh,save2,sub_saved0,"
			"rsub_saved1,concat_saved0b,concat_saved2a,dense,sigmoid",
		"a * sigmoid(b); t - u and a - d; Concat(u, d, t) around the chain's d"},
		{"act_silu_shared", 2, "dense,save0,sigmoid,save1,mul_saved0,add_saved1",
		"SiLU whose sigmoid is read again: not fused, read as the graph says"},
		{"torch_glu", 2,
			"dense,save0,gather,sigmoid,save1,load0,gather,mul_saved1,dense,save0,gather,sigmoid,save1,"
			"load0,gather,mul_saved1,dense,sigmoid",
		"nn.GLU: the value saved, its second half gathered and gated, its first half gathered and "
		"multiplied"},
		{"keras_wide_deep", 2, "save0,dense,relu,dense,relu,dense,save1,load0,dense,add_saved1,sigmoid",
		"tf2onnx's interleaved branches read one after the other: the deep part, then the wide one"},
	};
	char		ops[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		char		path[256];
		GsModel    *m = NULL;
		GsStatus	st;
		size_t		n = 0;

		snprintf(path, sizeof(path), "%s/%s.onnx", FIXTURES, cases[i].file);
		if (gs_load_model_file(path, GS_FORMAT_ONNX, &m, &st) != GS_OK)
			printf("# %s\n", st.msg);
		ops[0] = '\0';
		for (int32_t k = 0; m && k < m->mlp->n_steps && n < sizeof(ops); k++)
		{
			const GsMlpStep *s = &m->mlp->steps[k];

			n += (size_t) snprintf(ops + n, sizeof(ops) - n, "%s%s", k ? "," : "", gs_mlp_op_name(s->op));
			if (gs_mlp_is_skip(s->op) && n < sizeof(ops))
				n += (size_t) snprintf(ops + n, sizeof(ops) - n, "%d%s", s->slot,
									   s->op != GS_MLP_CONCAT_SAVED ? "" : s->alpha != 0.0f ? "b" : "a");
		}
		if (strcmp(ops, cases[i].ops) != 0)
			printf("# steps: %s\n", ops);
		gs_tap(m != NULL && m->mlp->n_slots == cases[i].n_slots && strcmp(ops, cases[i].ops) == 0,
			   cases[i].file, cases[i].what);
		gs_model_free(m);
	}
}

/*
 * What Keras 3's exports become (gen_onnx_keras3_fixtures.py): jax2onnx's
 * constant subgraphs folded into the chain's MUL / ADD / DIV steps, the
 * multi-node activations and tf2onnx's LayerNormalization one step each,
 * with the pattern's constants.
 */
static void
test_keras3(void)
{
	static const struct
	{
		const char *file;
		const char *ops;
		const char *what;
	}			cases[] = {
		{"keras3_jax_bn_leaky", "dense,mul,add,leaky_relu,dense,tanh,dense,sigmoid",
		"jax2onnx's BatchNormalization subgraph folded: a MUL and an ADD"},
		{"keras3_jax_norm", "add,div,dense,silu,dense,sigmoid",
		"jax2onnx's Normalization: Sub as an ADD, Div by the folded Max(Sqrt(var), 1e-7)"},
		{"keras3_mish", "dense,mish,dense,mish,dense,sigmoid", "Mul(h, Tanh(Softplus(h))) is one MISH step"},
		{"keras3_hard_silu", "dense,hard_swish,dense,relu,dense,softmax",
		"tf2onnx's hard_silu is one HARD_SWISH step"},
		{"keras3_gelu_tanh", "dense,gelu_tanh,dense,tanh,dense,sigmoid",
		"tf2onnx's tanh GELU (from Mul(0.5, h)) is one GELU_TANH step"},
		{"keras3_jax_mish_gelu", "dense,mish,dense,gelu_tanh,dense,sigmoid",
		"jax2onnx's tanh GELU at opset 17 (cube Mul(Mul(h, h), h)) is one GELU_TANH step"},
		{"keras3_layernorm", "dense,layer_norm,relu,dense,sigmoid",
		"tf2onnx's LayerNormalization at opset 18 is one LAYER_NORM step"},
		{"keras3_layernorm_in", "layer_norm,dense,relu,layer_norm,dense,layer_norm,dense,sigmoid",
		"LayerNormalization on the input, with scale=False and with center=False"},
		{"keras3_jax_layernorm", "layer_norm,dense,relu,layer_norm,dense,layer_norm,dense,sigmoid",
		"jax2onnx's LayerNormalization (sums broadcast back, Where on the count) is one LAYER_NORM step"},
	};
	char		path[256],
				ops[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		GsModel    *m = NULL;
		GsStatus	st;

		snprintf(path, sizeof(path), "%s/%s.onnx", FIXTURES, cases[i].file);
		if (gs_load_model_file(path, GS_FORMAT_ONNX, &m, &st) != GS_OK)
			printf("# %s\n", st.msg);
		step_ops(m, ops, sizeof(ops));
		if (strcmp(ops, cases[i].ops) != 0)
			printf("# steps: %s\n", ops);
		gs_tap(m != NULL && strcmp(ops, cases[i].ops) == 0, cases[i].file, cases[i].what);
		if (m && (strcmp(cases[i].file, "keras3_layernorm_in") == 0 ||
				  strcmp(cases[i].file, "keras3_jax_layernorm") == 0))
		{
			const GsMlpStep *ln1 = &m->mlp->steps[0],
					   *ln2 = &m->mlp->steps[3],
					   *ln3 = &m->mlp->steps[5];
			int			ok = ln1->w && ln1->p && ln1->alpha == 0.001f && ln2->p && ln2->alpha == 0.0001f &&
				ln3->w && ln3->p == NULL && ln3->alpha == 0.00001f;

			for (int32_t c = 0; c < ln2->n_out; c++)
				ok &= ln2->w[c] == 1.0f;
			gs_tap(ok, cases[i].file, "the epsilons from the graph; scale=False a scale of 1, center=False no bias");
		}
		gs_model_free(m);
	}
}

#include "test_mlp_hostile.c"

/*
 * XGBoost's linear booster (gen_fixtures_linear.py): read as a one-layer
 * network whose gpu_models fields are XGBoost's, the missing value set and
 * taken, and the files refused with the reason (the tree loader's API
 * refuses every gblinear file: it is no forest).
 */
static void
test_xgb_linear(void)
{
	const char *lin = FIXTURES "/../models/linear";
	char		path[512];
	GsModel    *m = NULL;
	GsForest   *f = NULL;
	GsStatus	st;
	GsCode		rc;
	float		v = 0.0f,
				x[30],
				out[2],
				scratch[2 * 30 * 2];
	size_t		len;
	unsigned char *b;
	const struct
	{
		const char *file;
		const char *code;
		const char *frag;
	}			bad[] = {
		{"bad/x3l_linear_poisson.json", "UNSUPPORTED", "with objective \"count:poisson\" is not supported"},
		{"bad/x17l_linear_poisson.json", "UNSUPPORTED", "with objective \"count:poisson\" is not supported"},
		{"bad/x17l_linear_binary.model", "UNSUPPORTED", "in the legacy binary format is not supported"},
	};

	snprintf(path, sizeof(path), "%s/x3l_binary.ubj", lin);
	rc = gs_load_model_file(path, GS_FORMAT_AUTO, &m, &st);
	gs_tap(rc == GS_OK && m->kind == GS_MODEL_MLP && strcmp(gs_model_kind_name(m), "linear") == 0 &&
		   strcmp(m->mlp->objective, "binary:logistic") == 0 && m->mlp->n_layers == 1 &&
		   m->mlp->n_params == 31 && strncmp(m->mlp->producer, "xgboost 3.", 10) == 0 &&
		   m->format == GS_FORMAT_XGBOOST_UBJ && !gs_model_missing_value(m, &v),
		   "xgb_linear", "a UBJ gblinear model: kind linear, its objective, 1 layer of 31 parameters, saved_by, no missing value");
	if (rc == GS_OK)
	{
		/* -999 in every feature: with it missing, the score is the bias's */
		for (int i = 0; i < 30; i++)
			x[i] = -999.0f;
		gs_model_predict(m, x, 1, 1, scratch, &out[0]);
		gs_model_set_missing_value(m, -999.0f);
		gs_model_predict(m, x, 1, 1, scratch, &out[1]);
		for (int i = 0; i < 30; i++)
			x[i] = NAN;
		gs_model_predict(m, x, 1, 1, scratch, &out[0] + 0);
		gs_tap(gs_model_missing_value(m, &v) && v == -999.0f && out[1] == out[0] && out[0] > 0.0f && out[0] < 1.0f,
			   "xgb_linear", "a missing value set after loading: -999 in every feature scores as every feature NaN");
	}
	gs_model_free(m);
	snprintf(path, sizeof(path), "%s/x17l_sk_missing.json", lin);
	rc = gs_load_model_file(path, GS_FORMAT_AUTO, &m, &st);
	gs_tap(rc == GS_OK && gs_model_missing_value(m, &v) && v == -999.0f,
		   "xgb_linear", "the scikit-learn API's missing=-999 saved by XGBoost 1.7 is read");
	gs_model_free(m);
	snprintf(path, sizeof(path), "%s/x3l_regression.json", lin);
	b = gs_read_file(path, &len);
	rc = b ? gs_forest_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st) : GS_ERR_INTERNAL;
	gs_tap(rc == GS_ERR_UNSUPPORTED && f == NULL && strstr(st.msg, "not a tree ensemble") != NULL,
		   "xgb_linear", "gs_forest_load refuses a gblinear model: it is no tree ensemble");
	free(b);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
	{
		m = NULL;
		snprintf(path, sizeof(path), "%s/%s", lin, bad[k].file);
		rc = gs_load_model_file(path, GS_FORMAT_AUTO, &m, &st);
		printf("# %s: %s: %s\n", bad[k].file, gs_code_name(rc), st.msg);
		gs_tap(rc != GS_OK && m == NULL && strcmp(gs_code_name(rc), bad[k].code) == 0 &&
			   strstr(st.msg, bad[k].frag) != NULL, bad[k].file, bad[k].frag);
		gs_model_free(m);
	}
}

/*
 * The explanations of XGBoost's linear booster (forest_shap.h) against
 * XGBoost's pred_contribs for the first 40 case rows of each model.
 */
static void
test_xgb_linear_contribs(void)
{
	const char *names[] = {"x17l_binary", "x17l_regression", "x17l_softprob",
		"x3l_binary", "x3l_regression", "x3l_softprob"};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
	{
		char		path[512],
					what[160];
		size_t		len;
		unsigned char *b;
		GsForest   *f = NULL;
		GsShap	   *sh = NULL;
		GsStatus	st;
		GsCases		c;
		FILE	   *cf;
		int			ng,
					width,
					nf = 30,
					bad = 0,
					rows = 0;
		double		worst = 0.0;

		snprintf(path, sizeof(path), FIXTURES "/../models/linear/%s.json", names[k]);
		b = gs_read_file(path, &len);
		if (!b || gs_model_load_weights(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st) != GS_OK ||
			f->linear_w == NULL || gs_shap_new(f, &gs_malloc_allocator, &sh, &st) != GS_OK)
		{
			gs_tap(0, names[k], "explainer of the linear booster");
			free(b);
			gs_forest_free(f);
			continue;
		}
		free(b);
		ng = f->n_groups;
		width = nf + 1;
		snprintf(path, sizeof(path), FIXTURES "/%s.csv", names[k]);
		if (gs_read_cases(path, nf, ng, &c) != 0)
		{
			gs_tap(0, names[k], "cases read");
			gs_shap_free(sh);
			gs_forest_free(f);
			continue;
		}
		snprintf(path, sizeof(path), FIXTURES "/../models/linear/%s.contribs", names[k]);
		cf = fopen(path, "r");
		for (int r = 0; cf && r < 40 && r < c.n_rows; r++)
		{
			double		phi[3 * 31];

			gs_shap_row(sh, c.x + (size_t) r * nf, phi);
			for (int i = 0; i < ng * width; i++)
			{
				double		want;

				if (fscanf(cf, "%lf", &want) != 1)
				{
					bad++;
					break;
				}
				if (!(fabs(phi[i] - want) <= 1e-6 * fmax(1.0, fabs(want))))
					bad++;
				worst = fmax(worst, fabs(phi[i] - want));
			}
			rows++;
		}
		if (cf)
			fclose(cf);
		snprintf(what, sizeof(what), "%d rows' contributions equal XGBoost's pred_contribs (worst %.2g), %d off",
				 rows, worst, bad);
		gs_tap(rows == 40 && bad == 0, names[k], what);
		free(c.x);
		free(c.want);
		gs_shap_free(sh);
		gs_forest_free(f);
	}
}

int
main(void)
{
	test_cases();
	test_bad();
	test_sklearn();
	test_sklearn_pipelines();
	test_linear();
	test_xgb_linear();
	test_xgb_linear_contribs();
	test_impute_sentinel();
	test_keras3();
	test_skips();
	test_fold_cap();
	test_hostile();
	test_nomem();
	test_corruption();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

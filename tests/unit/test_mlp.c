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
 * deep nesting, failing allocations and
 * random corruptions of valid models must give an error, never a crash or
 * a leak (ASan/LSan run).
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest_shap.h"
#include "model.h"
#include "mlp.h"
#include "onnx.pb-c.h"
#include "onnx_load.h"
#include "../common/test_util.h"
#include "../common/test_models.h"

#define FIXTURES "../fixtures/onnx"

/* |got - want| <= REL * |want|, or <= ABS when |want| < 0.1 */
#define TOL_REL 1e-5
#define TOL_ABS 1e-6

typedef GsCases Case;

/* Is got within tolerance of want?  Tracks the worst relative error. */
static int
close_enough(float got, float want, double *worst)
{
	double		d = fabs((double) got - (double) want);
	double		rel = d / fmax(fabs((double) want), 1e-30);

	if (fabs((double) want) >= 0.1 && rel > *worst)
		*worst = rel;
	/* onnxruntime's NaN (a NaN no imputer replaces) must be ours, and only there */
	if (isnan(got) || isnan(want))
		return isnan(got) && isnan(want);
	return fabs((double) want) < 0.1 ? d <= TOL_ABS || rel <= TOL_REL : rel <= TOL_REL;
}

/* Score rows [r0, r0+n) of c as one batch with leading dimension ld. */
static int
score_range(const GsModel *m, const Case *c, int r0, int n, int ld, double *worst)
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
			if (!close_enough(out[r * c->nout + k], c->want[(r0 + r) * c->nout + k], worst))
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
		double		worst = 0;

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
		gs_tap(score_range(m, &c, 0, c.n_rows, c.n_rows, &worst), name,
			   "one batch matches onnxruntime");
		ok = 1;
		for (int r0 = 0, step = 1; r0 < c.n_rows; r0 += step, step = step * 2 + 1)
		{
			int			n = step < c.n_rows - r0 ? step : c.n_rows - r0;

			ok &= score_range(m, &c, r0, n, n + 3, &worst);
		}
		gs_tap(ok, name, "odd batches with padded leading dimension match");
		ok = 1;
		for (int r = 0; r < c.n_rows; r++)
			ok &= score_range(m, &c, r, 1, 1, &worst);
		gs_tap(ok, name, "row by row matches");
		snprintf(what, sizeof(what), "worst relative error %.2e (outputs >= 0.1) <= %.0e", worst, TOL_REL);
		gs_tap(worst <= TOL_REL, name, what);
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
	gs_check_bad_files(FIXTURES "/bad/keras3_expected.txt", FIXTURES "/bad", 12);
	gs_check_bad_files(FIXTURES "/bad/sklct_expected.txt", FIXTURES "/bad", 5);
	gs_check_bad_files(FIXTURES "/bad/lin_expected.txt", FIXTURES "/bad", 9);
}

#include "test_mlp_sklearn.c"

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

/*
 * Protobuf bytes of a network whose constant subgraph folds more values
 * than the loader allows: n chained Add(., z) of a [65536] constant z
 * (built with protobuf-c, which the loader reads with), then Mul(x, last)
 * over an input x of [N, 4].
 */
static unsigned char *
fold_heavy_model(int n, size_t *len)
{
	enum
	{
		W = 65536
	};
	Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *opsets[1] = {&opset};
	Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
	Onnx__TensorProto z = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto *inits[1] = {&z};
	Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT,
				out = ONNX__VALUE_INFO_PROTO__INIT;
	Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension rows = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
				cols = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
	Onnx__TensorShapeProto__Dimension *dim[2] = {&rows, &cols};
	Onnx__ValueInfoProto *ins[1] = {&in},
			   *outs[1] = {&out};
	Onnx__NodeProto *nodes = calloc((size_t) n + 1, sizeof(Onnx__NodeProto));
	Onnx__NodeProto **np = calloc((size_t) n + 1, sizeof(Onnx__NodeProto *));
	char	  (*names)[2][16] = calloc((size_t) n + 1, sizeof(*names));
	char	   *(*io)[2] = calloc((size_t) n + 1, sizeof(*io));
	char	   *(*oo)[1] = calloc((size_t) n + 1, sizeof(*oo));
	float	   *vals = malloc(sizeof(float) * W);
	int64_t		dims[1] = {W};
	unsigned char *buf;

	for (int k = 0; k < W; k++)
		vals[k] = 1.0f;
	z.name = "z";
	z.has_data_type = true;
	z.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	z.n_dims = 1;
	z.dims = dims;
	z.n_float_data = W;
	z.float_data = vals;
	for (int k = 0; k <= n; k++)
	{
		onnx__node_proto__init(&nodes[k]);
		snprintf(names[k][0], sizeof(names[k][0]), "fold%d", k);
		snprintf(names[k][1], sizeof(names[k][1]), "f%d", k);
		nodes[k].name = names[k][0];
		nodes[k].op_type = k < n ? "Add" : "Mul";
		io[k][0] = k == 0 ? "z" : k < n ? names[k - 1][1] : "x";
		io[k][1] = k < n ? "z" : names[k - 1][1];
		oo[k][0] = k < n ? names[k][1] : "y";
		nodes[k].n_input = 2;
		nodes[k].input = io[k];
		nodes[k].n_output = 1;
		nodes[k].output = oo[k];
		np[k] = &nodes[k];
	}
	/* x: float [N, 4] */
	rows.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	rows.dim_param = "N";
	cols.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	cols.dim_value = 4;
	shape.n_dim = 2;
	shape.dim = dim;
	tensor.has_elem_type = true;
	tensor.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tensor.shape = &shape;
	type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	type.tensor_type = &tensor;
	in.name = "x";
	in.type = &type;
	out.name = "y";
	graph.name = "fold_heavy";
	graph.n_node = (size_t) n + 1;
	graph.node = np;
	graph.n_initializer = 1;
	graph.initializer = inits;
	graph.n_input = 1;
	graph.input = ins;
	graph.n_output = 1;
	graph.output = outs;
	opset.has_version = true;
	opset.version = 17;
	model.has_ir_version = true;
	model.ir_version = 8;
	model.n_opset_import = 1;
	model.opset_import = opsets;
	model.graph = &graph;
	*len = onnx__model_proto__get_packed_size(&model);
	buf = malloc(*len);
	onnx__model_proto__pack(&model, buf);
	free(nodes);
	free(np);
	free(names);
	free(io);
	free(oo);
	free(vals);
	return buf;
}

/*
 * Constant folding's cap (16 x 65536 values per load) is checked before
 * allocating; a graph that stays under it gets past folding.
 */
static void
test_fold_cap(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	size_t		len;
	unsigned char *bytes = fold_heavy_model(17, &len);

	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	printf("# %s\n", st.msg);
	gs_tap(rc == GS_ERR_LIMIT && m == NULL && strstr(st.msg, "node \"fold16\" (Add)") != NULL &&
		   strstr(st.msg, "more than 1048576 values") != NULL,
		   "fold cap", "17 folded [65536] values: refused at the 17th before allocating it");
	free(bytes);
	bytes = fold_heavy_model(16, &len);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	printf("# %s\n", st.msg);
	gs_tap(rc == GS_ERR_UNSUPPORTED && m == NULL && strstr(st.msg, "does not broadcast over the 4 columns"),
		   "fold cap", "16 folded [65536] values: folded, then refused as a Mul of 4 columns");
	free(bytes);
}

/*
 * Protobuf bytes nesting graph -> node -> attribute -> graph ... depth
 * times, inside a ModelProto: protobuf-c would recurse once per level.
 */
static unsigned char *
deep_model(int depth, size_t *len)
{
	size_t		cap = (size_t) depth * 16 + 64;
	unsigned char *buf = malloc(cap);
	unsigned char *tmp = malloc(cap);
	size_t		n = 0;

	/* innermost: an empty graph; wrap it level by level from the inside */
	for (int i = 0; i < depth * 3; i++)
	{
		/* field tags: AttributeProto.g = 6, NodeProto.attribute = 5, GraphProto.node = 1 */
		static const unsigned char tags[3] = {(6 << 3) | 2, (5 << 3) | 2, (1 << 3) | 2};
		unsigned char hdr[12];
		size_t		h = 0,
					v = n;

		hdr[h++] = tags[i % 3];
		do
		{
			hdr[h++] = (unsigned char) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		memcpy(tmp, hdr, h);
		memcpy(tmp + h, buf, n);
		memcpy(buf, tmp, n + h);
		n += h;
	}
	/* ModelProto: ir_version = 8, graph (field 7) = the nest */
	{
		unsigned char hdr[16];
		size_t		h = 0,
					v = n;

		hdr[h++] = 0x08;
		hdr[h++] = 8;
		hdr[h++] = (7 << 3) | 2;
		do
		{
			hdr[h++] = (unsigned char) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		memcpy(tmp, hdr, h);
		memcpy(tmp + h, buf, n);
		memcpy(buf, tmp, n + h);
		n += h;
	}
	free(tmp);
	*len = n;
	return buf;
}

/* Hostile nesting, caps, formats, failing allocations. */
static void
test_hostile(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	size_t		len;
	unsigned char *bytes;
	GsLimits	lim = gs_default_limits;

	bytes = deep_model(5000, &len);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && strstr(st.msg, "nests messages too deeply") != NULL,
		   "deep nesting", "15000 nested messages refused before the stack runs out");
	free(bytes);
	bytes = deep_model(3, &len);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc != GS_OK && strstr(st.msg, "too deeply") == NULL, "shallow nesting",
		   "decodes, then fails on the graph itself");
	free(bytes);

	bytes = gs_read_file(FIXTURES "/mlp_sigmoid.onnx", &len);
	gs_tap(bytes && gs_model_detect_format(bytes, len) == GS_FORMAT_ONNX, "detect", "ONNX bytes detected as onnx");
	rc = gs_model_load(bytes, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_OK && m->kind == GS_MODEL_MLP && m->mlp->n_layers == 3 &&
		   m->mlp->n_params == 30 * 64 + 64 + 64 * 32 + 32 + 32 + 1 &&
		   strcmp(m->mlp->output_act, "sigmoid") == 0 && strcmp(gs_model_kind_name(m), "mlp") == 0,
		   "auto", "format 'auto' loads a 3-layer sigmoid MLP with its parameter count");
	gs_model_free(m);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX_AUTOENCODER, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && strstr(st.msg, "not an autoencoder") != NULL && m == NULL,
		   "autoencoder", "reconstruction scoring refused for a 30 -> 1 network");
	lim.max_features = 29;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT && strstr(st.msg, "more than the limit of 29") != NULL,
		   "caps", "max_features applies");
	lim = gs_default_limits;
	lim.max_model_bytes = len - 1;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT, "caps", "max_model_bytes applies");
	rc = gs_model_load(bytes, len, GS_FORMAT_XGBOOST_JSON, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc != GS_OK && m == NULL, "format", "ONNX bytes declared as xgboost-json are refused");
	free(bytes);
	rc = gs_model_load((const unsigned char *) "", 0, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL, "empty", "empty bytes refused");
	{
		static const unsigned char json[] = "{\"learner\": {}}";

		gs_tap(gs_model_detect_format(json, sizeof(json) - 1) == GS_FORMAT_XGBOOST_JSON,
			   "detect", "JSON is not taken for ONNX");
	}
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

/* test_nomem on one fixture. */
static void
test_nomem_file(const char *name)
{
	char		path[256];
	size_t		len = 0;
	unsigned char *bytes;
	int			ok = 1,
				loaded = 0;

	snprintf(path, sizeof(path), "%s/%s.onnx", FIXTURES, name);
	bytes = gs_read_file(path, &len);
	for (long k = 0; k < 5000 && !loaded; k++)
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
		else if (rc != GS_ERR_NOMEM && rc != GS_ERR_INVALID_MODEL)
			ok = 0;
	}
	gs_tap(ok && loaded, name, "nomem: each failing allocation gives an error, then the model loads");
	free(bytes);
}

/*
 * Every allocation failing in turn gives NOMEM and leaks nothing (LSan):
 * a plain network and networks with multi-node activation patterns, whose
 * constants are read while matching (a failure there is NOMEM too, not a
 * refusal), one whose BatchNormalization is folded from constants
 * (jax2onnx) and ones with LayerNormalization patterns (tf2onnx, jax2onnx).
 */
static void
test_nomem(void)
{
	static const char *const files[] = {"mlp_bn_leaky", "torch_gelu_tanh", "torch_gelu_silu", "torch2_softplus",
	"keras3_jax_bn_leaky", "keras3_layernorm_in", "keras3_jax_layernorm", "skl_lin_svc_bin", "skl_lin_df_scorecard"};

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		test_nomem_file(files[f]);
}

/* Random corruption of valid models: never a crash; what loads can score. */
static void
test_corruption(void)
{
	static const char *const files[] = {"mlp_sigmoid.onnx", "mlp_bn_leaky.onnx", "mlp_scaled.onnx",
		"autoencoder.onnx", "mlp_softmax.onnx", "skl_mlp_bin.onnx", "skl_pipe_std_3class.onnx",
	"keras3_jax_bn_leaky.onnx", "keras3_layernorm.onnx", "keras3_gelu_tanh.onnx", "keras3_jax_layernorm.onnx",
	"skl_lin_logreg_3class.onnx", "skl_lin_svc_bin.onnx"};
	int			loaded = 0,
				refused = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
	{
		char		path[256];
		size_t		len = 0;
		unsigned char *orig,
				   *b;

		snprintf(path, sizeof(path), "%s/%s", FIXTURES, files[i]);
		orig = gs_read_file(path, &len);
		if (orig == NULL)
			continue;
		b = malloc(len);
		for (int t = 0; t < 300; t++)
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
				float		x[3 * 64];
				float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, 3));
				float	   *out = malloc(sizeof(float) * 3 * m->n_outputs);

				for (int k = 0; k < 3 * m->n_features && k < 3 * 64; k++)
					x[k] = (float) gs_rnd();
				if (m->n_features <= 64)
					gs_model_predict(m, x, 3, 3, scratch, out);
				free(scratch);
				free(out);
				gs_model_free(m);
				loaded++;
			}
			else
				refused++;
		}
		free(b);
		free(orig);
	}
	printf("# corruption: %d loaded, %d refused\n", loaded, refused);
	{
		char		what[80];

		snprintf(what, sizeof(what), "%d corrupted models: no crash, corrupt ones refused", loaded + refused);
		gs_tap(refused > 0 && loaded + refused == 300 * (int) (sizeof(files) / sizeof(files[0])),
			   "corruption", what);
	}
}

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
		if (!b || gs_xgb_load_any(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st) != GS_OK ||
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
	test_fold_cap();
	test_hostile();
	test_nomem();
	test_corruption();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

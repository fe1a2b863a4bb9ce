/*
 * test_mlp.c
 *	  Unit tests of the ONNX loader and the CPU engine of neural networks,
 *	  against onnxruntime's outputs (fixtures made by
 *	  tests/fixtures/gen_onnx_fixtures.py with the real onnxruntime).  Prints
 *	  TAP lines and a final "N passed, N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan).  For every
 * tests/fixtures/onnx/CASE.meta (gen_onnx_fixtures.py's networks,
 * gen_onnx_sklearn_fixtures.py's skl2onnx exports, the PyTorch exports of
 * gen_onnx_torch_fixtures.py and gen_onnx_torch2_fixtures.py, the Keras
 * conversions of gen_onnx_keras_fixtures.py, found by globbing the
 * directory): loads the model in the case's format,
 * scores the rows as one column-major batch, as odd-sized batches with a
 * padded leading dimension and row by row, and requires every output within
 * 1e-5 relative of onnxruntime's (absolute 1e-6 for outputs below 0.1, see
 * TOL below).  Every file listed in onnx/bad/expected.txt,
 * onnx/bad/skl_expected.txt, onnx/bad/act_expected.txt,
 * onnx/bad/t2_expected.txt and onnx/bad/keras_expected.txt must be rejected with the status and message
 * given there; skl2onnx exports must score the right output (a binary
 * classifier's P(class 1), a Scaler as two steps); deep nesting, failing
 * allocations and
 * random corruptions of valid models must give an error, never a crash or
 * a leak (ASan/LSan run).
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "mlp.h"
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
	if (isnan(got) || isnan(want))
		return 0;
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
		gs_tap(m->kind == GS_MODEL_MLP && m->n_features == nf && m->n_outputs == nout,
			   name, "loads as a network with the case's shape");
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
}

/*
 * What skl2onnx exports become: the label branch ignored, a binary
 * classifier's Concat(1 - p, p) scored as p alone, the leading Cast to
 * float a no-op, a Scaler an ADD of the negated offsets and a MUL.
 */
static void
test_sklearn(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;

	rc = gs_load_model_file(FIXTURES "/skl_mlp_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->kind == GS_MODEL_MLP && m->n_outputs == 1 && m->mlp->n_net_outputs == 1 &&
		   m->mlp->n_layers == 3 && m->mlp->steps[0].op == GS_MLP_DENSE &&
		   strcmp(m->mlp->output_act, "sigmoid") == 0 &&
		   strncmp(m->mlp->producer, "skl2onnx", 8) == 0,
		   "skl_mlp_bin", "binary classifier: one output, P(class 1) through the sigmoid; Cast and label branch add no step");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_mlp_3class_tanh.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->n_outputs == 3 && strcmp(m->mlp->output_act, "softmax") == 0 &&
		   m->mlp->n_steps == 4,
		   "skl_mlp_3class_tanh", "3 classes: the probabilities, dense tanh dense softmax");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_pipe_std_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->mlp->n_steps >= 2 && m->mlp->steps[0].op == GS_MLP_ADD &&
		   m->mlp->steps[1].op == GS_MLP_MUL && m->mlp->steps[0].n_out == 30 &&
		   strcmp(m->mlp->steps[0].node, "Scaler") == 0 && m->n_outputs == 1,
		   "skl_pipe_std_bin", "StandardScaler's Scaler: an ADD then a MUL step over the 30 features");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_edit_scaler1.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->mlp->steps[0].op == GS_MLP_ADD && m->mlp->steps[0].p[0] == -12.5f &&
		   m->mlp->steps[0].p[29] == -12.5f && m->mlp->steps[1].p[29] == 0.03125f,
		   "skl_edit_scaler1", "a Scaler's single offset and scale apply to every column");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_pipe_std_bin.onnx", GS_FORMAT_ONNX_AUTOENCODER, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && m == NULL && strstr(st.msg, "not an autoencoder") != NULL,
		   "skl_pipe_std_bin", "reconstruction scoring refused for a classifier");
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
	for (long k = 0; k < 2000 && !loaded; k++)
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
 * refusal).
 */
static void
test_nomem(void)
{
	static const char *const files[] = {"mlp_bn_leaky", "torch_gelu_tanh", "torch_gelu_silu", "torch2_softplus"};

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		test_nomem_file(files[f]);
}

/* Random corruption of valid models: never a crash; what loads can score. */
static void
test_corruption(void)
{
	static const char *const files[] = {"mlp_sigmoid.onnx", "mlp_bn_leaky.onnx", "mlp_scaled.onnx",
	"autoencoder.onnx", "mlp_softmax.onnx", "skl_mlp_bin.onnx", "skl_pipe_std_3class.onnx"};
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
	gs_tap(refused > 0, "corruption", "2100 corrupted models: no crash, corrupt ones refused");
}

int
main(void)
{
	test_cases();
	test_bad();
	test_sklearn();
	test_hostile();
	test_nomem();
	test_corruption();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

/*
 * fuzz_onnx.c
 *	  libFuzzer target: arbitrary bytes as an ONNX model (a network or an
 *	  ONNX-ML tree ensemble), through the loader every scoring path uses
 *	  (gs_model_load, model.h).
 *
 * Each input is loaded as 'onnx', as 'onnx-autoencoder' and with format
 * detection ('auto', which may dispatch to any loader).  A rejected input
 * must give a clean status and no model; an accepted one must have a sane
 * shape and score four rows (all missing, zeros, values from the input,
 * extremes) on the CPU without a sanitizer report.  Links the ONNX part of
 * the core (NN_SRC in the Makefile); run.sh sees the include of model.h.
 * Seeds in tests/fuzz/corpus/fuzz_onnx/.
 */
#include "fuzz_common.h"

#include "mlp/mlp_eval.h"
#include "model.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * What the engines trust of a network: widths chain from the features to
 * the outputs, within max_width; a GATHER (first, or a gated linear unit's halves) reads columns
 * that exist; parameter arrays exist where the ops need them.
 */
static void
check_mlp(const GsMlp *n)
{
	int32_t		width = n->n_features,
				slot_width[GS_MLP_MAX_SLOTS];

	if (n->n_steps < 1 || n->max_width < n->n_features)
		fuzz_fail("network: %d steps, max width %d for %d features", n->n_steps, n->max_width,
				  n->n_features);
	if (n->n_slots < 0 || n->n_slots > GS_MLP_MAX_SLOTS)
		fuzz_fail("network: %d saved values", n->n_slots);
	for (int32_t k = 0; k < GS_MLP_MAX_SLOTS; k++)
		slot_width[k] = -1;
	for (int32_t i = 0; i < n->n_steps; i++)
	{
		const GsMlpStep *s = &n->steps[i];

		if (s->n_in != width || s->n_out < 1 || s->n_out > n->max_width)
			fuzz_fail("network step %d (%s): %d -> %d after width %d", i, gs_mlp_op_name(s->op),
					  s->n_in, s->n_out, width);
		if (s->op == GS_MLP_GATHER)
		{
			if (s->idx == NULL)
				fuzz_fail("network step %d: a GATHER without columns", i);
			for (int32_t c = 0; c < s->n_out; c++)
				if (s->idx[c] < 0 || s->idx[c] >= s->n_in)
					fuzz_fail("network GATHER reads column %d of %d", s->idx[c], s->n_in);
		}
		else if (gs_mlp_is_skip(s->op))
		{
			/* a slot read after a SAVE (of the value last saved there); LOAD, CONCAT and joins sized by it */
			int32_t		sw;

			if (s->slot < 0 || s->slot >= n->n_slots)
				fuzz_fail("network step %d (%s) reads slot %d of %d", i, gs_mlp_op_name(s->op),
						  s->slot, n->n_slots);
			sw = slot_width[s->slot];
			if (s->op != GS_MLP_SAVE && sw < 0)
				fuzz_fail("network step %d (%s): slot %d read before it is saved", i,
						  gs_mlp_op_name(s->op), s->slot);
			if (s->op == GS_MLP_SAVE)
				slot_width[s->slot] = sw = width;
			if (s->n_out != (s->op == GS_MLP_LOAD ? sw : s->op == GS_MLP_CONCAT_SAVED ? s->n_in + sw : s->n_in) ||
				(s->op != GS_MLP_LOAD && s->op != GS_MLP_CONCAT_SAVED && sw != s->n_in))
				fuzz_fail("network step %d (%s): %d -> %d with a saved value of %d", i,
						  gs_mlp_op_name(s->op), s->n_in, s->n_out, sw);
		}
		else if (s->n_out != s->n_in && s->op != GS_MLP_DENSE)
			fuzz_fail("network step %d (%s) changes the width", i, gs_mlp_op_name(s->op));
		if ((s->op == GS_MLP_DENSE && s->w == NULL) ||
			((s->op == GS_MLP_ADD || s->op == GS_MLP_MUL || s->op == GS_MLP_DIV ||
			  s->op == GS_MLP_IMPUTE || s->op == GS_MLP_ONEHOT) && s->p == NULL))
			fuzz_fail("network step %d (%s) lacks its parameters", i, gs_mlp_op_name(s->op));
		width = s->n_out;
	}
	if (width != n->n_net_outputs)
		fuzz_fail("network ends at width %d, says %d outputs", width, n->n_net_outputs);
}

/* Load as fmt; on success score a few rows. */
static void
load_and_score(const uint8_t *data, size_t size, GsModelFormat fmt)
{
	enum
	{
	N_ROWS = 4};
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	size_t		nf;
	float	   *x,
			   *scratch,
			   *out;

	rc = gs_model_load(data, size, fmt, &fuzz_limits, &gs_malloc_allocator, &m, &st);
	if (rc != GS_OK)
	{
		if (m != NULL)
			fuzz_fail("load failed with code %d but returned a model", (int) rc);
		if (rc != st.code || rc < GS_ERR_INVALID_MODEL || rc > GS_ERR_INTERNAL || rc == GS_ERR_INTERNAL)
			fuzz_fail("bad failure code %d (status %d): %s", (int) rc, (int) st.code, st.msg);
		if (memchr(st.msg, '\0', sizeof(st.msg)) == NULL || st.msg[0] == '\0')
			fuzz_fail("failure without a message");
		return;
	}
	if (m == NULL)
		fuzz_fail("load succeeded without a model");
	if (m->n_features < 1 || m->n_outputs < 1 ||
		(fuzz_limits.max_features > 0 && m->n_features > fuzz_limits.max_features))
		fuzz_fail("bad shape: %d features, %d outputs", m->n_features, m->n_outputs);
	if ((m->kind == GS_MODEL_FOREST) != (m->forest != NULL) ||
		(m->kind == GS_MODEL_MLP) != (m->mlp != NULL))
		fuzz_fail("kind %d does not match its members", (int) m->kind);
	if (m->forest)
	{
		fuzz_check_forest(m->forest, &fuzz_limits);
		fuzz_image_roundtrip(m->forest);
	}
	if (m->mlp)
		check_mlp(m->mlp);

	nf = (size_t) m->n_features;
	x = malloc(sizeof(float) * nf * N_ROWS);
	scratch = malloc(sizeof(float) * (gs_model_scratch_floats(m, N_ROWS) + 1));
	out = malloc(sizeof(float) * (size_t) m->n_outputs * N_ROWS);
	if (!x || !scratch || !out)
		fuzz_fail("out of memory in the checker");
	for (size_t k = 0; k < nf; k++)
	{
		x[k * N_ROWS + 0] = NAN;
		x[k * N_ROWS + 1] = 0.0f;
		x[k * N_ROWS + 2] = ((float) (size ? data[k % size] : 0) - 128.0f) / 16.0f;
		x[k * N_ROWS + 3] = (k & 1) ? -3.0e38f : 3.0e38f;
	}
	gs_model_predict(m, x, N_ROWS, N_ROWS, scratch, out);
	free(x);
	free(scratch);
	free(out);
	gs_model_free(m);
}

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	load_and_score(data, size, GS_FORMAT_ONNX);
	load_and_score(data, size, GS_FORMAT_ONNX_AUTOENCODER);
	load_and_score(data, size, GS_FORMAT_AUTO);
	return 0;
}

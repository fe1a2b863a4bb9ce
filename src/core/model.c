/*
 * model.c
 *	  Dispatch of load and predict to the tree-ensemble or neural-network
 *	  code by model kind (see model.h).
 */
#include "model.h"

#include <math.h>
#include <string.h>

#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "forest/forest_image.h"
#include "frontend/frontend.h"

/* A new, empty model from alloc, or NULL with st set. */
static GsModel *
model_new(const GsAllocator *alloc, GsStatus *st)
{
	GsModel    *m = alloc->alloc(alloc->ctx, sizeof(GsModel));

	if (m == NULL)
	{
		gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		return NULL;
	}
	memset(m, 0, sizeof(GsModel));
	m->alloc = *alloc;
	return m;
}

/* Make m the model of its (loaded) forest. */
static void
model_of_forest(GsModel *m)
{
	m->kind = GS_MODEL_FOREST;
	m->n_features = m->forest->n_features;
	m->n_outputs = m->forest->n_outputs;
	m->feature_names = m->forest->feature_names;
}

/* Make m the model of its (loaded) network. */
static void
model_of_mlp(GsModel *m)
{
	m->kind = GS_MODEL_MLP;
	m->n_features = m->mlp->n_features;
	m->n_outputs = m->mlp->n_outputs;
	m->feature_names = m->mlp->feature_names;
}

/* Parse and validate model bytes; see model.h. */
GsCode
gs_model_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			  const GsLimits *lim, const GsAllocator *alloc, GsModel **out,
			  GsStatus *st)
{
	GsLoadRequest rq = {bytes, len, fmt, lim, alloc, false};
	GsModel    *m;
	GsCode		rc;

	gs_status_clear(st);
	*out = NULL;
	if ((m = model_new(alloc, st)) == NULL)
		return st->code;
	/* a tree ensemble or a network (ONNX, XGBoost's linear booster) */
	rc = gs_frontend_load(&rq, &m->forest, &m->mlp, &m->format, st);
	if (rc == GS_OK && m->forest)
	{
		model_of_forest(m);
		m->format = m->forest->format;
	}
	else if (rc == GS_OK)
		model_of_mlp(m);
	if (rc != GS_OK)
	{
		alloc->free(alloc->ctx, m);
		return rc;
	}
	*out = m;
	return GS_OK;
}

/* A linear booster as the forest of its weights; see model.h. */
GsCode
gs_model_load_weights(const unsigned char *bytes, size_t len, GsModelFormat fmt,
					  const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
					  GsStatus *st)
{
	GsLoadRequest rq = {bytes, len, fmt, lim, alloc, true};

	return gs_frontend_load(&rq, out, NULL, NULL, st);
}

/* A model around a forest read from its image; see model.h. */
GsCode
gs_model_load_image(const unsigned char *image, size_t len, const GsLimits *lim,
					const GsAllocator *alloc, GsModel **out, GsStatus *st)
{
	GsModel    *m;
	GsCode		rc;

	gs_status_clear(st);
	*out = NULL;
	if ((m = model_new(alloc, st)) == NULL)
		return st->code;
	rc = gs_forest_image_read(image, len, lim, alloc, &m->forest, st);
	if (rc != GS_OK)
	{
		alloc->free(alloc->ctx, m);
		return rc;
	}
	model_of_forest(m);
	m->format = m->forest->format;
	*out = m;
	return GS_OK;
}

/* Release a model; see model.h. */
void
gs_model_free(GsModel *m)
{
	if (m == NULL)
		return;
	gs_forest_free(m->forest);
	gs_mlp_free(m->mlp);
	m->alloc.free(m->alloc.ctx, m);
}

/* Kind name; see model.h. */
const char *
gs_model_kind_name(const GsModel *m)
{
	if (m->kind == GS_MODEL_MLP)
		return m->mlp->linear_booster ? "linear" : m->mlp->reconstruction ? "autoencoder" : "mlp";
	return "tree-ensemble";
}

/* Why the model is CPU-only; see model.h. */
const char *
gs_model_cpu_only(const GsModel *m)
{
	if (m->kind == GS_MODEL_MLP && m->mlp->linear_booster)
		return "a linear model (XGBoost's gblinear)";
	if (m->kind != GS_MODEL_MLP && m->forest->linear)
		return "a tree ensemble with linear trees (LightGBM's linear_tree)";
	if (m->kind != GS_MODEL_MLP && m->forest->cb_ctrs)
		return "a CatBoost model with categorical features";
	return NULL;
}

/* Category names; see model.h. */
const GsCatNames *
gs_model_cat_names(const GsModel *m)
{
	return m->kind == GS_MODEL_MLP ? m->mlp->cat_names : m->forest->cat_names;
}

/* Rows per interruptible slice; see model.h. */
size_t
gs_model_slice_rows(const GsModel *m)
{
	const double max_rows = 4096,
				work = (double) (1 << 23);
	double		per_row = 0,
				rows;

	if (m->kind == GS_MODEL_MLP)
		per_row = (double) m->mlp->n_params / 16.0;
	else
		for (int32_t t = 0; t < m->forest->n_trees; t++)
			per_row += m->forest->tree_depth[t] > 1 ? m->forest->tree_depth[t] : 1;
	rows = work / (per_row > 1.0 ? per_row : 1.0);
	/* a network's activations and saved values: 256 MB of scratch at most */
	if (m->kind == GS_MODEL_MLP &&
		rows > (double) (1 << 26) / ((2.0 + m->mlp->n_slots) * m->mlp->max_width))
		rows = (double) (1 << 26) / ((2.0 + m->mlp->n_slots) * m->mlp->max_width);
	if (rows >= max_rows)
		return (size_t) max_rows;
	if (rows >= 64)
		return (size_t) (rows / 64) * 64;
	return rows >= 1 ? (size_t) rows : 1;
}

/* Scratch floats; see model.h. */
size_t
gs_model_scratch_floats(const GsModel *m, size_t n_rows)
{
	size_t		n = n_rows ? n_rows : 1;

	if (m->kind == GS_MODEL_MLP)
		return gs_mlp_scratch_floats(m->mlp, n_rows);
	/* a CatBoost model's categories: the rows expanded with their derived features */
	if (m->forest->cb_ctrs)
		return n * ((size_t) m->forest->n_groups + (size_t) m->forest->n_features +
					(size_t) m->forest->n_derived);
	return n * (size_t) m->forest->n_groups;
}

/* Missing values by another name; see model.h. */
void
gs_model_mark_missing(const GsModel *m, float *x, size_t ld, size_t n_rows)
{
	float		mv;

	if (m->kind != GS_MODEL_MLP)
		gs_forest_mark_missing(m->forest, x, ld, n_rows);
	else if (m->mlp->linear_booster && gs_mlp_missing(m->mlp, &mv))
	{
		for (int32_t j = 0; j < m->n_features; j++)
			for (size_t r = 0; r < n_rows; r++)
				if (x[(size_t) j * ld + r] == mv)
					x[(size_t) j * ld + r] = NAN;
	}
}

/* A missing value given by the caller; see model.h. */
void
gs_model_set_missing_value(GsModel *m, float v)
{
	if (isnan(v) || (m->kind == GS_MODEL_MLP && !m->mlp->linear_booster))
		return;
	if (m->kind == GS_MODEL_MLP)
	{
		gs_mlp_set_missing(m->mlp, v);
		return;
	}
	m->forest->has_missing_value = true;
	m->forest->missing_value = v;
}

/* The value taken as missing besides NaN; see model.h. */
bool
gs_model_missing_value(const GsModel *m, float *v)
{
	if (m->kind == GS_MODEL_MLP)
		return m->mlp->linear_booster && gs_mlp_missing(m->mlp, v);
	if (!m->forest->has_missing_value)
		return false;
	*v = m->forest->missing_value;
	return true;
}

/* Score a batch on the CPU; see model.h. */
void
gs_model_predict(const GsModel *m, const float *x, size_t ld, size_t n_rows,
				 float *scratch, float *out)
{
	if (m->kind == GS_MODEL_MLP)
		gs_mlp_predict(m->mlp, x, ld, n_rows, scratch, out);
	else if (m->forest->cb_ctrs && n_rows > 0)
	{
		/* the columns, then the derived features, then the margins */
		float	   *margin = scratch + n_rows * ((size_t) m->forest->n_features +
												 (size_t) m->forest->n_derived);

		gs_cb_ctrs_expand(m->forest->cb_ctrs, x, ld, n_rows, scratch);
		gs_cpu_predict(m->forest, scratch, n_rows, n_rows, margin, out);
	}
	else
		gs_cpu_predict(m->forest, x, ld, n_rows, scratch, out);
}

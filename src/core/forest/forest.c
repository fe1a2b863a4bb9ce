/*
 * forest.c
 *	  What every forest shares whatever format it came from: default caps,
 *	  missing values, covers, its size, and releasing it.  Reading a model
 *	  file into a forest is the frontends' job (frontend/frontend.h).
 */
#include "forest.h"
#include "cat_names.h"
#include "catboost_ctr.h"
#include "forest_bins.h"
#include "forest_complete.h"
#include "forest_qs.h"

#include <math.h>
#include <string.h>

const GsLimits gs_default_limits = {
	.max_model_bytes = (size_t) 1024 * 1024 * 1024,
	.max_trees = 100000,
	.max_nodes = 64 * 1024 * 1024,
	.max_depth = 512,
	.max_features = 1000000,
	.max_layers = 256,
	.max_parameters = 256 * 1024 * 1024,
};

/* Missing values by another name; see forest.h. */
void
gs_forest_mark_missing(const GsForest *f, float *x, size_t ld, size_t n_rows)
{
	float		mv = f->missing_value;

	if (!f->has_missing_value)
		return;
	for (int32_t j = 0; j < f->n_features; j++)
	{
		float	   *col = x + (size_t) j * ld;

		for (size_t r = 0; r < n_rows; r++)
			if (col[r] == mv)
				col[r] = NAN;
	}
}

/* Release a forest; see forest.h. */
void
gs_forest_free(GsForest *f)
{
	GsAllocator a;

	if (f == NULL)
		return;
	a = f->alloc;
	gs_catnames_free(f->cat_names);
	gs_cb_ctrs_free(&a, f->cb_ctrs);
	if (f->feature_names)
	{
		for (int32_t i = 0; i < f->n_features; i++)
			if (f->feature_names[i])
				a.free(a.ctx, f->feature_names[i]);
		a.free(a.ctx, f->feature_names);
	}
	if (f->base_margin)
		a.free(a.ctx, f->base_margin);
	if (f->tree_offset)
		a.free(a.ctx, f->tree_offset);
	if (f->tree_group)
		a.free(a.ctx, f->tree_group);
	if (f->tree_depth)
		a.free(a.ctx, f->tree_depth);
	if (f->nodes)
		a.free(a.ctx, f->nodes);
	if (f->leaf_lo)
		a.free(a.ctx, f->leaf_lo);
	if (f->cover)
		a.free(a.ctx, f->cover);
	if (f->cat_words)
		a.free(a.ctx, f->cat_words);
	if (f->linear_w)
		a.free(a.ctx, f->linear_w);
	gs_linear_leaves_free(&a, f->linear);
	gs_forest_bins_free(&a, f->bins);
	gs_forest_complete_free(&a, f->complete);
	gs_forest_qs_free(&a, f->qs);
	a.free(a.ctx, f);
}

/* Linear leaves; see forest.h. */
GsLinearLeaves *
gs_linear_leaves_new(const GsAllocator *alloc, int64_t n_nodes, int64_t n_terms)
{
	GsLinearLeaves *lin = alloc->alloc(alloc->ctx, sizeof(GsLinearLeaves));
	size_t		sizes[4] = {sizeof(double) * (size_t) n_nodes,
		sizeof(uint32_t) * (size_t) (n_nodes + 1),
		sizeof(int32_t) * (size_t) n_terms,
	sizeof(double) * (size_t) n_terms};
	void	  **arrays[4];

	if (lin == NULL)
		return NULL;
	memset(lin, 0, sizeof(*lin));
	lin->n_terms = n_terms;
	arrays[0] = (void **) &lin->constant;
	arrays[1] = (void **) &lin->start;
	arrays[2] = (void **) &lin->feature;
	arrays[3] = (void **) &lin->coef;
	for (int i = 0; i < 4; i++)
	{
		*arrays[i] = alloc->alloc(alloc->ctx, sizes[i] > 0 ? sizes[i] : 1);
		if (*arrays[i] == NULL)
		{
			gs_linear_leaves_free(alloc, lin);
			return NULL;
		}
		memset(*arrays[i], 0, sizes[i]);
	}
	return lin;
}

/* Release linear leaves; see forest.h. */
void
gs_linear_leaves_free(const GsAllocator *alloc, GsLinearLeaves *lin)
{
	void	   *ps[4];

	if (lin == NULL)
		return;
	ps[0] = lin->constant;
	ps[1] = lin->start;
	ps[2] = lin->feature;
	ps[3] = lin->coef;
	for (int i = 0; i < 4; i++)
		if (ps[i])
			alloc->free(alloc->ctx, ps[i]);
	alloc->free(alloc->ctx, lin);
}

/* Whether every tree is symmetric; see forest.h. */
bool
gs_forest_symmetric(const GsForest *f)
{
	return f->format == GS_FORMAT_CATBOOST_JSON && strcmp(f->booster, "symmetric") == 0 &&
		f->split_kinds == 0 && f->leaf_lo != NULL && f->linear == NULL;
}

/* Bytes a forest occupies; see forest.h. */
size_t
gs_forest_memory_bytes(const GsForest *f)
{
	return sizeof(GsForest) + (size_t) f->n_nodes * sizeof(GsNode) +
		(size_t) f->n_trees * (sizeof(uint32_t) + 2 * sizeof(int32_t)) +
		(size_t) f->n_groups * sizeof(float) +
		(size_t) f->n_cat_words * sizeof(uint32_t) +
		(f->leaf_lo ? (size_t) f->n_nodes * sizeof(float) : 0) +
		(f->cover ? (size_t) f->n_nodes * sizeof(double) : 0) +
		(f->linear ? sizeof(GsLinearLeaves) +
		 (size_t) f->n_nodes * (sizeof(double) + sizeof(uint32_t)) + sizeof(uint32_t) +
		 (size_t) f->linear->n_terms * (sizeof(int32_t) + sizeof(double)) : 0) +
		(f->cb_ctrs ? f->cb_ctrs->bytes : 0) +
		gs_forest_bins_bytes(f) + gs_forest_complete_bytes(f) +
		gs_forest_qs_bytes(f);
}

/* Drop covers that explanations could not use; see forest.h. */
void
gs_forest_check_covers(GsForest *f)
{
	if (f->cover == NULL)
		return;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		off = f->tree_offset[t],
					end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;
		const double *c = f->cover + off;

		for (int64_t i = 0; i < end - off; i++)
		{
			uint32_t	l = f->nodes[off + i].left;

			if (!isfinite(c[i]) || c[i] < 0.0)
				goto drop;
			if (f->nodes[off + i].info & GS_NODE_LEAF)
				continue;
			/*
			 * the children split the parent's rows: their covers add up to
			 * its own; a split no row reached (cover 0) only in CatBoost's
			 * trees, below a root that some did
			 */
			if (!(c[i] > 0.0) && (f->format != GS_FORMAT_CATBOOST_JSON || i == 0 || c[i] != 0.0))
				goto drop;
			if (!(fabs(c[l] + c[l + 1] - c[i]) <= 1e-3 * c[i]))
				goto drop;
		}
	}
	return;
drop:
	f->alloc.free(f->alloc.ctx, f->cover);
	f->cover = NULL;
}


/*
 * forest.c
 *	  What every forest shares whatever format it came from: default caps,
 *	  format detection and names, and releasing a forest.
 */
#include "forest.h"
#include "cat_names.h"
#include "catboost_ctr.h"
#include "forest_bins.h"
#include "frontend/onnx/onnx_load.h"
#include "frontend/xgboost/xgb_decode.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

const GsLimits gs_default_limits = {
	.max_model_bytes = (size_t) 1024 * 1024 * 1024,
	.max_trees = 100000,
	.max_nodes = 64 * 1024 * 1024,
	.max_depth = 512,
	.max_features = 1000000,
	.max_layers = 256,
	.max_parameters = 256 * 1024 * 1024,
};

static bool lgbm_json_dump(const unsigned char *b, size_t len);
static bool catboost_json(const unsigned char *b, size_t len);

/* Detect the format of model bytes; see forest.h. */
GsModelFormat
gs_model_detect_format(const unsigned char *b, size_t len)
{
	size_t		i = 0;

	/* XGBoost's legacy binary format starts with the magic "binf" */
	if (len >= 4 && memcmp(b, "binf", 4) == 0)
		return GS_FORMAT_XGBOOST_BINARY;
	if (gs_onnx_detect(b, len))
		return GS_FORMAT_ONNX;
	/*
	 * LightGBM's save_model text starts with "tree\nversion=" (or with
	 * "\r\n" when written on Windows), or "tree\nnum_class=" before
	 * LightGBM 2.2: checked before each read.
	 */
	if (len >= 5 && memcmp(b, "tree", 4) == 0)
	{
		size_t		eol = (b[4] == '\n') ? 5 :
			(len >= 6 && b[4] == '\r' && b[5] == '\n') ? 6 : 0;

		/* LightGBM 2.0 and 2.1 wrote no version line: num_class comes first */
		if (eol > 0 && ((len >= eol + 8 && memcmp(b + eol, "version=", 8) == 0) ||
						(len >= eol + 10 && memcmp(b + eol, "num_class=", 10) == 0)))
			return GS_FORMAT_LIGHTGBM;
	}
	while (i < len && isspace(b[i]))
		i++;
	if (i >= len || b[i] != '{')
		return gs_xgb_binary_detect(b, len) ? GS_FORMAT_XGBOOST_BINARY : GS_FORMAT_AUTO;
	if (i == 0 && len > 1 && strchr("iUIlL$#}", b[1]) && b[1] != '\0')
		return GS_FORMAT_XGBOOST_UBJ;
	i++;
	while (i < len && isspace(b[i]))
		i++;
	if (i < len && (b[i] == '"' || b[i] == '}'))
	{
		if (catboost_json(b, len))
			return GS_FORMAT_CATBOOST_JSON;
		return lgbm_json_dump(b, len) ? GS_FORMAT_AUTO : GS_FORMAT_XGBOOST_JSON;
	}
	return GS_FORMAT_AUTO;
}

/* Whether the first n bytes of b (at most) contain the string s. */
static bool
head_contains(const unsigned char *b, size_t len, size_t n, const char *s)
{
	size_t		k = strlen(s);

	n = n < len ? n : len;
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(b + i, s, k) == 0)
			return true;
	return false;
}

/*
 * Whether a JSON object's top-level keys are CatBoost's (save_model(...,
 * format="json")): one of "features_info", "oblivious_trees", "ctr_data"
 * or "scale_and_bias" before any "learner" (XGBoost's).  CatBoost 0.20 and
 * later sort the keys (ctr_data, features_info, ...); releases before wrote
 * oblivious_trees first; either way the first key decides, and the scan
 * skips nested values without parsing them (strings with their escapes,
 * brackets counted) only when the first key names neither format.
 */
static bool
catboost_json(const unsigned char *b, size_t len)
{
	static const char *const cb_keys[] = {"features_info", "oblivious_trees", "ctr_data",
	"scale_and_bias"};
	size_t		i = 0;
	int			depth = 0;
	bool		want_key = false;

	while (i < len && isspace(b[i]))
		i++;
	if (i >= len || b[i] != '{')
		return false;
	for (; i < len; i++)
	{
		unsigned char c = b[i];

		if (c == '"')
		{
			size_t		start = ++i;

			while (i < len && b[i] != '"')
				i += b[i] == '\\' ? 2 : 1;
			if (i >= len)
				return false;
			if (depth == 1 && want_key)
			{
				size_t		n = i - start;

				if (n == 7 && memcmp(b + start, "learner", 7) == 0)
					return false;
				for (int k = 0; k < 4; k++)
					if (n == strlen(cb_keys[k]) && memcmp(b + start, cb_keys[k], n) == 0)
						return true;
				want_key = false;
			}
		}
		else if (c == '{' || c == '[')
		{
			depth++;
			want_key = depth == 1;
		}
		else if (c == '}' || c == ']')
		{
			if (--depth <= 0)
				return false;
		}
		else if (c == ',' && depth == 1)
			want_key = true;
	}
	return false;
}

/*
 * Whether b starts like LightGBM's dump_model() written as JSON:
 * {"name": "tree", ... (an XGBoost JSON model starts {"learner": ...).
 */
static bool
lgbm_json_dump(const unsigned char *b, size_t len)
{
	static const char *const parts[] = {"{", "\"name\"", ":", "\"tree\""};
	size_t		i = 0;

	for (int k = 0; k < 4; k++)
	{
		size_t		n = strlen(parts[k]);

		while (i < len && isspace(b[i]))
			i++;
		if (len - i < n || memcmp(b + i, parts[k], n) != 0)
			return false;
		i += n;
	}
	return true;
}

/* What known file that is no model the bytes are; see forest.h. */
const char *
gs_model_foreign_kind(const unsigned char *b, size_t len, const char **hint)
{
	static const char xgb_dump_hint[] =
		"A dump lacks the objective and base score: save the model with booster.save_model(\"model.json\").";
	size_t		i = 0;

	*hint = NULL;
	if (len >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
	{
		*hint = "Load it in Python and save the model in its library's own format: XGBoost booster.save_model(\"model.json\"), LightGBM booster.save_model(\"model.txt\"), a scikit-learn model converted to ONNX with skl2onnx.";
		return "a pickled Python object (pickle or joblib)";
	}
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b)
	{
		*hint = "Decompress it first (gunzip); a compressed joblib file holds a pickle, which cannot be read: save the model in its library's own format.";
		return "a gzip-compressed file";
	}
	if (len >= 4 && memcmp(b, "PK\003\004", 4) == 0)
	{
		*hint = "Export the model to ONNX (torch.onnx.export, tf2onnx) or save it in its library's own format (XGBoost JSON, LightGBM text).";
		return "a zip archive (a PyTorch .pt, a Keras .keras, an H2O MOJO file or a compressed model)";
	}
	if (len >= 8 && memcmp(b, "\211HDF\r\n\032\n", 8) == 0)
	{
		*hint = "Export the Keras model to ONNX with tf2onnx.";
		return "an HDF5 file (a Keras .h5 model)";
	}
	if (len >= 4 && memcmp(b, "CBM1", 4) == 0)
	{
		*hint = "Convert it to JSON with CatBoost: m = catboost.CatBoost(); m.load_model(\"model.cbm\"); m.save_model(\"model.json\", format=\"json\").";
		return "a CatBoost model (.cbm)";
	}
	while (i < len && isspace(b[i]))
		i++;
	if (len - i >= 8 && memcmp(b + i, "booster[", 8) == 0)
	{
		*hint = xgb_dump_hint;
		return "XGBoost's text dump of its trees (Booster.dump_model)";
	}
	if (i < len && b[i] == '[' && head_contains(b + i, len - i, 256, "\"nodeid\""))
	{
		*hint = xgb_dump_hint;
		return "XGBoost's JSON dump of its trees (Booster.dump_model with dump_format=\"json\")";
	}
	if (lgbm_json_dump(b + i, len - i))
	{
		*hint = "Save the model with booster.save_model(\"model.txt\") and load that file.";
		return "LightGBM's JSON dump (Booster.dump_model)";
	}
	if (i < len && b[i] == '<' && (head_contains(b + i, len - i, 256, "<PMML") ||
								   head_contains(b + i, len - i, 64, "<?xml")))
	{
		*hint = "Save the model in its library's own format or as ONNX.";
		return "an XML document (PMML)";
	}
	return NULL;
}

/* Name of a format as users write it. */
const char *
gs_model_format_name(GsModelFormat fmt)
{
	switch (fmt)
	{
		case GS_FORMAT_XGBOOST_JSON:
			return "xgboost-json";
		case GS_FORMAT_XGBOOST_UBJ:
			return "xgboost-ubj";
		case GS_FORMAT_ONNX:
			return "onnx";
		case GS_FORMAT_ONNX_AUTOENCODER:
			return "onnx-autoencoder";
		case GS_FORMAT_LIGHTGBM:
			return "lightgbm";
		case GS_FORMAT_XGBOOST_BINARY:
			return "xgboost-binary";
		case GS_FORMAT_CATBOOST_JSON:
			return "catboost-json";
		case GS_FORMAT_AUTO:
			break;
	}
	return "auto";
}

/* Parse a user-given format name (any case); returns 0 on success, -1 if unknown. */
int
gs_model_format_parse(const char *name, GsModelFormat *fmt)
{
	if (strcasecmp(name, "auto") == 0)
		*fmt = GS_FORMAT_AUTO;
	else if (strcasecmp(name, "xgboost-json") == 0 || strcasecmp(name, "json") == 0)
		*fmt = GS_FORMAT_XGBOOST_JSON;
	else if (strcasecmp(name, "xgboost-ubj") == 0 || strcasecmp(name, "ubj") == 0 ||
			 strcasecmp(name, "xgboost-ubjson") == 0)
		*fmt = GS_FORMAT_XGBOOST_UBJ;
	else if (strcasecmp(name, "onnx") == 0)
		*fmt = GS_FORMAT_ONNX;
	else if (strcasecmp(name, "onnx-autoencoder") == 0)
		*fmt = GS_FORMAT_ONNX_AUTOENCODER;
	else if (strcasecmp(name, "lightgbm") == 0)
		*fmt = GS_FORMAT_LIGHTGBM;
	else if (strcasecmp(name, "xgboost-binary") == 0 || strcasecmp(name, "binary") == 0)
		*fmt = GS_FORMAT_XGBOOST_BINARY;
	else if (strcasecmp(name, "catboost-json") == 0 || strcasecmp(name, "catboost") == 0)
		*fmt = GS_FORMAT_CATBOOST_JSON;
	else
		return -1;
	return 0;
}

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
		gs_forest_bins_bytes(f);
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

/* Load any tree-ensemble format; see forest.h. */
GsCode
gs_forest_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			   const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
			   GsStatus *st)
{
	if (fmt == GS_FORMAT_LIGHTGBM ||
		(fmt == GS_FORMAT_AUTO && gs_model_detect_format(bytes, len) == GS_FORMAT_LIGHTGBM))
		return gs_lgbm_load(bytes, len, GS_FORMAT_LIGHTGBM, lim, alloc, out, st);
	if (fmt == GS_FORMAT_CATBOOST_JSON ||
		(fmt == GS_FORMAT_AUTO && gs_model_detect_format(bytes, len) == GS_FORMAT_CATBOOST_JSON))
		return gs_catboost_load(bytes, len, GS_FORMAT_CATBOOST_JSON, lim, alloc, out, st);
	return gs_xgb_load(bytes, len, fmt, lim, alloc, out, st);
}


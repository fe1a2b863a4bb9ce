/*
 * frontend.c
 *	  The one table of model formats and the only dispatch from model bytes
 *	  to a format's loader: detecting the format (once), the opening checks
 *	  every format shares, the formats' names, and what known files that are
 *	  no model are (see frontend.h).
 *
 * A format's row says how to recognise its bytes and which loader reads
 * them; the rows are tried in order, so a more specific format comes before
 * a more general one (XGBoost's UBJSON and CatBoost's JSON before XGBoost's
 * JSON; XGBoost's binary format, recognised by what it lacks, last).  The
 * loaders live in one folder per format (frontend/<format>/) and never call
 * each other; what two formats share is in frontend/common/.
 *
 * Built with GS_FRONTEND_TREES_ONLY (the GPU kit's kernel programs, which
 * link the tree objects without protobuf-c or BLAS) the table has no ONNX
 * rows and XGBoost's linear booster is refused as a network is.
 */
#include "frontend.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "catboost/catboost.h"
#include "common/load_checks.h"
#include "forest/forest_complete.h"
#include "forest/forest_qs.h"
#include "forest/forest_image.h"
#include "lightgbm/lightgbm.h"
#include "xgboost/xgboost.h"
#ifndef GS_FRONTEND_TREES_ONLY
#include "onnx/onnx_load.h"
#include "xgboost/xgb_linear.h"
#endif

static bool lgbm_json_dump(const unsigned char *b, size_t len);
static bool catboost_json(const unsigned char *b, size_t len);

/* Index of the first byte that is no white space (len when there is none). */
static size_t
skip_space(const unsigned char *b, size_t len, size_t i)
{
	while (i < len && isspace(b[i]))
		i++;
	return i;
}

/* XGBoost's UBJSON: '{' then a UBJSON type marker, at the very start. */
static bool
detect_xgb_ubj(const unsigned char *b, size_t len)
{
	return len > 1 && b[0] == '{' && b[1] != '\0' && strchr("iUIlL$#}", b[1]);
}

/* A JSON object whose first key (or end) follows: '{' then '"' or '}'. */
static bool
json_object_start(const unsigned char *b, size_t len)
{
	size_t		i = skip_space(b, len, 0);

	if (i >= len || b[i] != '{')
		return false;
	i = skip_space(b, len, i + 1);
	return i < len && (b[i] == '"' || b[i] == '}');
}

/* CatBoost's JSON (save_model(..., format="json")): its top-level keys. */
static bool
detect_catboost_json(const unsigned char *b, size_t len)
{
	return !detect_xgb_ubj(b, len) && json_object_start(b, len) && catboost_json(b, len);
}

/* XGBoost's JSON: any other JSON object but LightGBM's JSON dump. */
static bool
detect_xgb_json(const unsigned char *b, size_t len)
{
	return !detect_xgb_ubj(b, len) && json_object_start(b, len) && !catboost_json(b, len) &&
		!lgbm_json_dump(b, len);
}

/*
 * LightGBM's save_model text starts with "tree\nversion=" (or with "\r\n"
 * when written on Windows), or "tree\nnum_class=" before LightGBM 2.2 (2.0
 * and 2.1 wrote no version line).
 */
static bool
detect_lightgbm(const unsigned char *b, size_t len)
{
	size_t		eol;

	if (len < 5 || memcmp(b, "tree", 4) != 0)
		return false;
	eol = (b[4] == '\n') ? 5 : (len >= 6 && b[4] == '\r' && b[5] == '\n') ? 6 : 0;
	return eol > 0 && ((len >= eol + 8 && memcmp(b + eol, "version=", 8) == 0) ||
					   (len >= eol + 10 && memcmp(b + eol, "num_class=", 10) == 0));
}

/*
 * XGBoost's legacy binary format: the magic "binf", or (XGBoost before 1.4
 * wrote none) bytes that are no JSON object and hold an objective's name
 * where the format keeps it.
 */
static bool
detect_xgb_binary(const unsigned char *b, size_t len)
{
	size_t		i = skip_space(b, len, 0);

	if (len >= 4 && memcmp(b, "binf", 4) == 0)
		return true;
	return (i >= len || b[i] != '{') && gs_xgb_binary_detect(b, len);
}

/*
 * The loaders behind one signature: a forest, or a network (*mlp) for
 * XGBoost's linear booster and ONNX networks.  The opening checks are done.
 */
static GsCode
load_xgboost(const GsLoadRequest *rq, GsForest **forest, GsMlp **mlp, GsStatus *st)
{
	bool		linear_too = mlp != NULL || rq->keep_linear;
	GsCode		rc;

	rc = (linear_too ? gs_xgb_load_any : gs_xgb_load) (rq->bytes, rq->len, rq->format, rq->lim,
													 rq->alloc, forest, st);
	if (rc != GS_OK || mlp == NULL || rq->keep_linear || (*forest)->linear_w == NULL)
		return rc;
	/* a linear booster: one dense layer, scored by the network engines */
#ifdef GS_FRONTEND_TREES_ONLY
	rc = gs_status_set(st, GS_ERR_UNSUPPORTED, "networks are not built into this program");
#else
	rc = gs_xgb_linear(*forest, rq->alloc, mlp, st);
#endif
	gs_forest_free(*forest);
	*forest = NULL;
	return rc;
}

static GsCode
load_lightgbm(const GsLoadRequest *rq, GsForest **forest, GsMlp **mlp, GsStatus *st)
{
	(void) mlp;
	return gs_lgbm_load(rq->bytes, rq->len, rq->format, rq->lim, rq->alloc, forest, st);
}

static GsCode
load_catboost(const GsLoadRequest *rq, GsForest **forest, GsMlp **mlp, GsStatus *st)
{
	(void) mlp;
	return gs_catboost_load(rq->bytes, rq->len, rq->format, rq->lim, rq->alloc, forest, st);
}

#ifndef GS_FRONTEND_TREES_ONLY
static GsCode
load_onnx(const GsLoadRequest *rq, GsForest **forest, GsMlp **mlp, GsStatus *st)
{
	GsMlp	   *net = NULL;
	GsCode		rc;

	rc = gs_onnx_load(rq->bytes, rq->len, rq->format == GS_FORMAT_ONNX_AUTOENCODER, rq->lim,
					  rq->alloc, &net, forest, st);
	if (rc == GS_OK && net != NULL && mlp == NULL)
	{
		gs_mlp_free(net);
		return gs_status_set(st, GS_ERR_UNSUPPORTED, "the ONNX model is a network, not a tree ensemble");
	}
	if (mlp != NULL)
		*mlp = net;
	return rc;
}
#endif

/*
 * The formats, in the order their bytes are recognised.  ONNX autoencoders
 * are ONNX files loaded for their reconstruction error: never detected, only
 * named.
 */
static const GsFrontend frontends[] = {
#ifndef GS_FRONTEND_TREES_ONLY
	{GS_FORMAT_ONNX, "onnx", gs_onnx_detect, load_onnx},
#endif
	{GS_FORMAT_LIGHTGBM, "lightgbm", detect_lightgbm, load_lightgbm},
	{GS_FORMAT_XGBOOST_UBJ, "xgboost-ubj", detect_xgb_ubj, load_xgboost},
	{GS_FORMAT_CATBOOST_JSON, "catboost-json", detect_catboost_json, load_catboost},
	{GS_FORMAT_XGBOOST_JSON, "xgboost-json", detect_xgb_json, load_xgboost},
	{GS_FORMAT_XGBOOST_BINARY, "xgboost-binary", detect_xgb_binary, load_xgboost},
#ifndef GS_FRONTEND_TREES_ONLY
	{GS_FORMAT_ONNX_AUTOENCODER, "onnx-autoencoder", NULL, load_onnx},
#endif
};

#define N_FRONTENDS (sizeof(frontends) / sizeof(frontends[0]))

/* The row of a format; NULL for GS_FORMAT_AUTO. */
const GsFrontend *
gs_frontend_of(GsModelFormat fmt)
{
	for (size_t k = 0; k < N_FRONTENDS; k++)
		if (frontends[k].format == fmt)
			return &frontends[k];
	return NULL;
}

/* Detect the format of model bytes; see frontend.h. */
GsModelFormat
gs_model_detect_format(const unsigned char *b, size_t len)
{
	/* XGBoost's binary magic first: such bytes are never tried as anything else */
	if (len >= 4 && memcmp(b, "binf", 4) == 0)
		return GS_FORMAT_XGBOOST_BINARY;
	for (size_t k = 0; k < N_FRONTENDS; k++)
		if (frontends[k].detect != NULL && frontends[k].detect(b, len))
			return frontends[k].format;
	return GS_FORMAT_AUTO;
}

/* Load model bytes of any format; see frontend.h. */
GsCode
gs_frontend_load(const GsLoadRequest *request, GsForest **forest, GsMlp **mlp,
				 GsModelFormat *format, GsStatus *st)
{
	GsLoadRequest rq = *request;
	const GsFrontend *fe;
	GsCode		rc;

	*forest = NULL;
	if (mlp != NULL)
		*mlp = NULL;
	if ((rc = gs_load_open(rq.len, &rq.lim, st)) != GS_OK)
		return rc;
	if (rq.format == GS_FORMAT_AUTO)
	{
		rq.format = gs_model_detect_format(rq.bytes, rq.len);
		if (rq.format == GS_FORMAT_AUTO)
		{
			gs_status_set(st, GS_ERR_INVALID_MODEL, "could not detect the model format");
			gs_status_detail(st, "The bytes are none of the formats pg_gpuscore reads: XGBoost JSON, UBJSON or binary, LightGBM text, CatBoost JSON, ONNX.");
			return st->code;
		}
	}
	if (format != NULL)
		*format = rq.format;
	if ((fe = gs_frontend_of(rq.format)) == NULL)
		return gs_status_set(st, GS_ERR_INTERNAL, "unknown model format %d", (int) rq.format);
	if ((rc = fe->load(&rq, forest, mlp, st)) != GS_OK)
		return rc;
	/*
	 * Every forest, whatever its format, ends in the check a forest image
	 * passes (a linear booster's weights are no trees: xgb_linear.h checks
	 * them)
	 */
	if (*forest != NULL && (*forest)->linear_w == NULL &&
		((rc = gs_forest_check(*forest, rq.lim, rq.alloc, st)) != GS_OK ||
		 /* the engine's forms; a load for explanations is never scored */
		 (!rq.lim->keep_covers && ((rc = gs_forest_complete_build(*forest, st)) != GS_OK ||
								   (rc = gs_forest_qs_build(*forest, st)) != GS_OK))))
	{
		gs_forest_free(*forest);
		*forest = NULL;
	}
	return rc;
}

/* Load any tree-ensemble format; see frontend.h. */
GsCode
gs_forest_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			   const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
			   GsStatus *st)
{
	GsLoadRequest rq = {bytes, len, fmt, lim, alloc, false};

	return gs_frontend_load(&rq, out, NULL, NULL, st);
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


/* What known file that is no model the bytes are; see frontend.h. */
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


/* Name of a format as users write it: its row's. */
const char *
gs_model_format_name(GsModelFormat fmt)
{
	const GsFrontend *fe = gs_frontend_of(fmt);

	return fe != NULL ? fe->name : "auto";
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


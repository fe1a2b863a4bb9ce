/*
 * frontend.h
 *	  Model bytes to a validated forest or network, whatever their format:
 *	  the table of formats, the only dispatch to a format's loader, format
 *	  detection and names.  model.c is its one caller in the core; the
 *	  formats themselves live in frontend/<format>/.
 */
#ifndef GS_FRONTEND_H
#define GS_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>

#include "forest/forest.h"
#include "gs_status.h"
#include "mlp/mlp.h"

/*
 * Detect the format of model bytes: GS_FORMAT_XGBOOST_JSON,
 * GS_FORMAT_XGBOOST_UBJ, GS_FORMAT_XGBOOST_BINARY, GS_FORMAT_LIGHTGBM,
 * GS_FORMAT_CATBOOST_JSON, GS_FORMAT_ONNX, or GS_FORMAT_AUTO when it is none.
 */
extern GsModelFormat gs_model_detect_format(const unsigned char *bytes, size_t len);

/*
 * For bytes that are no model: what known kind of file they are (a pickle, a
 * zip archive, an HDF5 file, a CatBoost model, a dump of a model's trees,
 * ...) with *hint set to how to export the model instead; NULL (and *hint
 * NULL) when they are none of those.  Static strings.
 */
extern const char *gs_model_foreign_kind(const unsigned char *bytes, size_t len,
										 const char **hint);

/* Name of a format as users write it ("xgboost-json"). */
extern const char *gs_model_format_name(GsModelFormat fmt);

/* Parse a user-given format name; returns 0 on success. */
extern int	gs_model_format_parse(const char *name, GsModelFormat *fmt);

/*
 * Load a tree ensemble of any format (gs_frontend_load without networks):
 * on success *out is a new forest owned by the caller (gs_forest_free); on
 * failure returns the error code, fills st, and *out is NULL.
 */
extern GsCode gs_forest_load(const unsigned char *bytes, size_t len,
							 GsModelFormat fmt, const GsLimits *lim,
							 const GsAllocator *alloc, GsForest **out,
							 GsStatus *st);

/*
 * One load: the bytes, their format (GS_FORMAT_AUTO detects), the caps (NULL:
 * gs_default_limits), the allocator, and keep_linear: XGBoost's linear
 * booster as a forest without trees whose linear_w holds the weights (for
 * explanations) instead of a network.
 */
typedef struct GsLoadRequest
{
	const unsigned char *bytes;
	size_t		len;
	GsModelFormat format;
	const GsLimits *lim;
	const GsAllocator *alloc;
	bool		keep_linear;
} GsLoadRequest;

/*
 * A row of the table of formats: the format, its name as users write it,
 * whether bytes are of it (NULL: never detected, only named), and its
 * loader.  A loader is called with the opening checks done and the format
 * known; it fills *forest, or *mlp for a network (mlp NULL: networks are
 * refused, GS_ERR_UNSUPPORTED); on failure both stay NULL and st is filled.
 */
typedef struct GsFrontend
{
	GsModelFormat format;
	const char *name;
	bool		(*detect) (const unsigned char *bytes, size_t len);
	GsCode		(*load) (const GsLoadRequest *rq, GsForest **forest, GsMlp **mlp, GsStatus *st);
} GsFrontend;

/* The table's row of a format; NULL for GS_FORMAT_AUTO. */
extern const GsFrontend *gs_frontend_of(GsModelFormat fmt);

/*
 * Load model bytes of any format: the opening checks (empty, the size cap),
 * the format detected once when not given, then its loader.  On success
 * *forest (a tree ensemble) or *mlp (a network; only when mlp is not NULL)
 * is new and owned by the caller, and *format (when not NULL) the format
 * given or detected; on failure both are NULL, st is filled.
 */
extern GsCode gs_frontend_load(const GsLoadRequest *rq, GsForest **forest, GsMlp **mlp,
							   GsModelFormat *format, GsStatus *st);

#endif							/* GS_FRONTEND_H */

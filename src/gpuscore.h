/*
 * gpuscore.h
 *	  Declarations shared by the PostgreSQL glue files of pg_gpuscore.
 *
 * The glue (the .c files in src/) is the only layer that includes PostgreSQL headers; it
 * talks to the scoring core through the headers in src/core/.  This header holds the
 * GUC variables, the model cache interface, the batch builder helpers and
 * the error reporting entry point.
 *
 * Who calls whom among the glue files: a file calls only files on its own
 * line to its right or on the lines below; nothing calls back up (the
 * settings pg_gpuscore.c defines are variables every file reads).
 *
 *   entry             pg_gpuscore.c (_PG_init) -> batch_plan.c
 *   planning batches  batch_plan.c -> batch_node.c -> batch_calls.c
 *   GpuScore node     batch_exec.c -> batch_fill.c -> batch_parallel.c;
 *                     batch_explain.c -> batch_parallel.c
 *   triggers          trigger_alert.c, trigger_score.c -> trigger_common.c
 *   SQL functions     explain.c -> score_query.c; scalar.c, aggregate.c,
 *                     verify.c, model_admin.c
 *   rows to features  row_features.c -> categories.c, features.c
 *   models            model_cache.c; citus.c
 *   scoring           device.c -> provider.c -> service_client.c ->
 *                     service_worker.c -> service_device.c
 *   base              catalog.c, model_name.c -> row_error.c; errors.c,
 *                     limits.c, provider_local.c, service_shmem.c, run_guard.c
 */
#ifndef GPUSCORE_H
#define GPUSCORE_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "fmgr.h"
#include "tcop/dest.h"
#include "utils/array.h"

#include "core/forest/forest.h"
#include "core/model.h"

/* ---- GUCs (pg_gpuscore.c) ---- */
typedef enum GsDeviceMode
{
	GS_DEVICE_AUTO,
	GS_DEVICE_CPU,
	GS_DEVICE_GPU
} GsDeviceMode;

extern int	gs_batch_size;
extern int	gs_batch_memory_kb;
extern int	gs_device_mode;
/* the largest values of the pg_gpuscore.max_* settings (pg_gpuscore.c) */
#define GS_GUC_MAX_MODEL_SIZE_KB (1024 * 1024)
#define GS_GUC_MAX_TREES 10000000
#define GS_GUC_MAX_TREE_DEPTH 100000
#define GS_GUC_MAX_FEATURES 0x3FFFFFFF
#define GS_GUC_MAX_LAYERS 256
extern int	gs_max_model_size_kb;
extern int	gs_max_trees;
extern int	gs_max_tree_depth;
extern int	gs_max_features;
extern int	gs_max_nodes;
extern int	gs_max_layers;
extern int	gs_max_parameters;
extern int	gs_verify_threads;
extern int	gs_gpu_min_rows;
extern bool gs_fallback_notice;
extern bool gs_batch_calls;
extern bool gs_gpu_service;
extern int	gs_gpu_service_idle_timeout;
extern int	gs_gpu_service_timeout;
extern int	gs_gpu_service_memory_kb;
extern int	gs_gpu_service_merge_delay_us;
extern char *gs_provider_path;
extern char *gs_xgboost_library;
extern char *gs_fault_injection;

/* ---- limits.c ---- */

/* Current caps as the core wants them (the pg_gpuscore.max_* settings). */
extern GsLimits gs_current_limits(void);

/*
 * The widest caps the settings allow, for a model that was checked against
 * the caps of its session when it was stored.
 */
extern GsLimits gs_widest_limits(void);

/* ---- errors.c ---- */

/* Raise the ERROR a failed core status describes; never returns. */
extern void gs_report_status(const GsStatus *st) pg_attribute_noreturn();

/* ---- row_error.c: errors of one row, raised where its score is used ---- */

/*
 * An ERROR not raised yet: what a check of one row's features would raise.
 * Filled by the *_ok and *_checked functions below, which return false;
 * their raising forms raise it at once.
 */
typedef struct GsRowError
{
	int			sqlerrcode;		/* ERRCODE_* */
	char		message[1024];
	char		detail[1024];	/* "" when none */
	char		hint[512];		/* "" when none */
} GsRowError;

/* Set err to an error with SQLSTATE sqlerrcode and a message (printf-style). */
extern void gs_row_error_set(GsRowError *err, int sqlerrcode, const char *fmt,...) pg_attribute_printf(3, 4);

/* Add a detail, or a hint, to err (printf-style). */
extern void gs_row_error_detail(GsRowError *err, const char *fmt,...) pg_attribute_printf(2, 3);
extern void gs_row_error_hint(GsRowError *err, const char *fmt,...) pg_attribute_printf(2, 3);

/* Raise err as an ERROR; never returns. */
extern void gs_row_error_raise(const GsRowError *err) pg_attribute_noreturn();

/*
 * err as a text datum (in CurrentMemoryContext) that gpu_batch_result
 * raises as err.
 */
extern Datum gs_row_error_datum(const GsRowError *err);

/* ---- model_name.c ---- */

/* Check a user-given model name (not NULL, 1..63 bytes); returns it. */
extern const char *gs_model_name_arg(FunctionCallInfo fcinfo, int argno);

/* The same check of a name (NULL for SQL NULL), saying why not in err. */
extern bool gs_model_name_ok(const char *name, GsRowError *err);

/* ---- model_cache.c ---- */

/*
 * A reference-counted, immutable parsed model.  The cache holds one
 * reference while the model is the active version; each statement using it
 * holds another (gs_model_acquire_for), released when the statement's memory
 * dies, so replacing or dropping a model never frees one in use.
 */
typedef struct GsModelRef
{
	char		name[NAMEDATALEN];
	int64		model_id;		/* unique per stored version, never reused */
	int32		version;
	GsModel    *model;			/* what is scored: shape, kind, CPU engine */
	GsForest   *forest;			/* model->forest: NULL for a neural network */
	MemoryContext mcxt;			/* holds model; deleted with the last ref */
	int			refcount;
	void	   *device_model;	/* GPU copy (GsCudaModel), or NULL */
	bool		device_failed;	/* upload or self-test failed: CPU only */
	char		device_reason[256];
	struct GsShap *shap;		/* explanations (explain.c), made at first
								 * use from a parse with covers, in a child
								 * of mcxt; or NULL */
} GsModelRef;

/*
 * The active version of model name, with a reference held until mcxt (a
 * statement-lifetime context) is reset or deleted.  ERRORs when the model
 * does not exist.
 */
extern GsModelRef *gs_model_acquire(const char *name, MemoryContext mcxt);

/* The same, NULL when the model does not exist. */
extern GsModelRef *gs_model_try_acquire(const char *name, MemoryContext mcxt);

/* The error gs_model_acquire raises for a model name that does not exist. */
extern void gs_model_missing_error(const char *name, GsRowError *err);

/*
 * The model of that name this backend has parsed already (perhaps a version
 * since replaced), or NULL: for planner estimates, which must not read the
 * catalog or parse.
 */
extern const GsModel *gs_model_cached(const char *name);

/* Parse and validate model bytes into a model in mcxt; ERRORs on failure. */
extern GsModel *gs_model_parse(const char *name, const unsigned char *bytes,
								size_t len, GsModelFormat fmt, MemoryContext mcxt);

/*
 * The same, keeping each tree node's cover (GsLimits.keep_covers), which
 * explanations need and scoring does not.
 */
extern GsModel *gs_model_parse_with_covers(const char *name, const unsigned char *bytes,
										   size_t len, GsModelFormat fmt, MemoryContext mcxt);

/* Allocator over a memory context that returns NULL instead of ERROR. */
extern GsAllocator gs_context_allocator(MemoryContext mcxt);

/* ---- catalog.c: the model table ---- */

/* Oid of the model table, or InvalidOid when the extension is not installed. */
extern Oid	gs_catalog_relid(void);

/*
 * Fetch the stored model row: returns false if absent.  bytes (the model)
 * and image (its forest image, NULL for networks) are read only when asked
 * for, into CurrentMemoryContext; so is missing_value (the value the model
 * takes as missing besides NaN, gpu_models.missing_value; NaN when none).
 */
extern bool gs_catalog_fetch(const char *name, int64 *model_id, int32 *version,
							 GsModelFormat *fmt, bytea **bytes, bytea **image,
							 float *missing_value);

/* Fetch only the identity of the stored model; returns false if absent. */
extern bool gs_catalog_identity(const char *name, int64 *model_id, int32 *version);

/*
 * Schema-qualified, quoted name of the model table, its Oid and owner;
 * ERRORs when the extension is not installed.
 */
extern char *gs_catalog_table(Oid *relid_out, Oid *owner_out);

/*
 * Whether the model table has the forest image column (extension 0.2.0 on):
 * the library is installed before ALTER EXTENSION pg_gpuscore UPDATE runs,
 * and must work with the older table until it does (tests/t/050_upgrade.pl).
 */
extern bool gs_catalog_has_images(Oid relid);

/* The same for the column of the value taken as missing (0.5.0 on). */
extern bool gs_catalog_has_missing_values(Oid relid);

/*
 * Run SPI work as the model table's owner (gs_catalog_become_owner), then
 * restore the caller's identity (gs_catalog_restore_user; also on ERROR,
 * since the transaction abort resets it).  The SPI queries still see the
 * caller's search_path, so they name every table and operator
 * schema-qualified (OPERATOR(pg_catalog.=)): an operator the caller put
 * earlier in the path would otherwise run as the owner (tested in
 * sql/privileges.sql).
 */
typedef struct GsOwnerSwitch
{
	Oid			save_userid;
	int			save_sec_context;
} GsOwnerSwitch;

extern void gs_catalog_become_owner(Oid owner, GsOwnerSwitch *sw);
extern void gs_catalog_restore_user(const GsOwnerSwitch *sw);

/*
 * Citus (citus.c): on a coordinator, a load or drop is repeated on every
 * worker in the same distributed transaction (nothing without Citus); a
 * direct load or drop on a worker is refused.
 */
extern void gs_citus_check_direct_change(const char *what);
extern void gs_citus_propagate_load(const char *name, bytea *model, const char *format_name,
									float missing_value, int32 version);
extern void gs_citus_propagate_drop(const char *name);
extern void gs_citus_propagate_prune(ArrayType *keep);

struct ReturnSetInfo;

/*
 * citus_query.c: on a Citus coordinator, run gpu_score_query's query
 * (gpu_predict_query's with all_outputs) rewritten so that the workers score
 * their shards, its (key, output) rows into rsinfo's tuplestore; returns
 * false, having run nothing, when the query cannot be pushed down whole (or
 * Citus is absent): the caller then runs it as on one node.  Caller must be
 * inside SPI_connect.
 */
extern bool gs_citus_score_query(const GsModelRef *m, const char *query, struct ReturnSetInfo *rsinfo,
								 bool all_outputs);

/* ---- features.c ---- */

/*
 * Copy a real[] or double precision[] feature array into row[0..n) as
 * float32, NULL and NaN becoming NaN (missing).  ERRORs on shape or value
 * problems, naming the model.
 */
extern void gs_array_to_row(ArrayType *arr, const GsModelRef *m, float *row);

/*
 * ERROR (22023) when colname, the column `what` ("query column") gives as
 * feature f (0-based) of m, is the name of another feature of m: the
 * columns are then not in model order.  Nothing to check where the model
 * has no feature names or the column's name is none of them.
 */
extern void gs_check_feature_order(const GsModelRef *m, int f, const char *colname,
								   const char *what);

/* Check one float of input; ERRORs on +-Inf. */
extern void gs_check_infinite(const GsModelRef *m, int feature, double v);

/* The same check of feature (0-based) value v, saying why not in err. */
extern bool gs_value_ok(const GsModelRef *m, int feature, double v, GsRowError *err);

/* gs_array_to_row, saying why not in err instead of raising. */
extern bool gs_array_to_row_checked(ArrayType *arr, const GsModelRef *m, float *row,
									GsRowError *err);

/* The error of a feature array of n elements for model m (not n_features). */
extern void gs_feature_count_error(const GsModelRef *m, int n, GsRowError *err);

/*
 * One non-NULL element of a feature array of type elemtype (real, double
 * precision, numeric, smallint, integer or bigint) as float32 feature f of
 * m, converted and checked as gs_array_to_row does; false with err set when
 * the value cannot be a feature.
 */
extern bool gs_element_to_float(Datum d, Oid elemtype, const GsModelRef *m, int f,
								float *out, GsRowError *err);

/* How a column of a query or table becomes float32 model input. */
typedef enum GsColKind
{
	GS_COL_FLOAT4,
	GS_COL_FLOAT8,
	GS_COL_INT2,
	GS_COL_INT4,
	GS_COL_INT8,
	GS_COL_NUMERIC,
	GS_COL_BOOL,
	GS_COL_FLOAT4_ARRAY,		/* all features in one real[] column */
	GS_COL_FLOAT8_ARRAY,		/* all features in one double precision[] column */
	GS_COL_NUMBER_ARRAY,		/* all features in one numeric[], smallint[],
								 * integer[] or bigint[] column */
	GS_COL_TEXT,				/* text or varchar: a category by name */
	GS_COL_BPCHAR,				/* char(n): the same, trailing blanks ignored */
	GS_COL_ENUM					/* an enum: its label is the name */
} GsColKind;

/*
 * Classify a column type (a domain as its base type); returns false if it
 * cannot hold a feature.
 */
extern bool gs_column_kind(Oid type, GsColKind *kind);

/* Whether a column of this kind holds all features in one array. */
extern bool gs_col_kind_is_array(GsColKind kind);

/*
 * Convert one non-NULL scalar column value (not an array kind) to double;
 * numeric values beyond double range become +-Inf.
 */
extern double gs_datum_to_double(Datum d, GsColKind kind);

/* ---- scalar.c ---- */

/* The error gpu_score raises for model m when it has more than one output. */
extern void gs_one_output_error(const GsModelRef *m, GsRowError *err);

/* ---- row_features.c: features taken from a row by name ---- */

/* Which column of a row type is each feature of a model, and how to read it. */
typedef struct GsRowMap
{
	int			n_features;
	int		   *column;			/* [n_features]: 0-based attribute */
	GsColKind  *kind;			/* [n_features] */
	bool		ok;				/* else err is the error of every row */
	GsRowError	err;
} GsRowMap;

/*
 * Match the columns of row type desc to the features of m by name (and
 * check their types), into map; allocates in CurrentMemoryContext.
 */
extern void gs_row_map_build(TupleDesc desc, const GsModelRef *m, GsRowMap *map);

/*
 * A row of that type (its deformed values and nulls) as model input
 * row[n_features]; false with err set where the row cannot be scored.
 */
extern bool gs_row_map_convert(const GsRowMap *map, const GsModelRef *m, const Datum *values,
							   const bool *nulls, float *row, GsRowError *err);

/* ---- explain.c ---- */

/*
 * The explainer of model m's version (forest_shap.h), made at its first
 * use in this backend from a parse of the stored model with node covers,
 * kept with m.  ERRORs (0A000) for models that cannot be explained.
 */
extern struct GsShap *gs_model_explainer(GsModelRef *m);

/* Output groups of m's explanations (contributions per group per row). */
extern int	gs_explain_groups(const GsModelRef *m);

/*
 * order[0..n) = the features 0..n-1 by decreasing contribution phi[f],
 * ties in feature order (the rank of gpu_explain_query and of the alert
 * trigger's reasons).
 */
extern void gs_rank_contributions(const double *phi, int n, int *order);

/* ---- score_query.c: the rows of a user's query as model input ---- */

/* The validated shape of a query: a key column, then the features. */
typedef struct GsQueryShape
{
	GsColKind	key_kind;
	bool		array_features; /* one array column holds every feature */
	bool		all_float4;		/* every feature column is real */
	GsColKind  *kinds;			/* [natts], index 0 unused */
} GsQueryShape;

/*
 * Check a query's columns against model m (an integer key, then one column
 * per feature or one real[] / double precision[] column of them all; text
 * only for features with category names); ERRORs naming the culprit.
 * Allocates in CurrentMemoryContext.
 */
extern void gs_query_shape(TupleDesc desc, const GsModelRef *m, GsQueryShape *shape);

/*
 * One row of such a query (values, nulls) as model input: row[n_features]
 * (NULL is missing, text looked up by name), *key and *key_null.  ERRORs
 * on infinite values and names XGBoost would refuse; conversions allocate
 * in CurrentMemoryContext.
 */
extern void gs_query_row(const GsQueryShape *shape, const GsModelRef *m, const Datum *values,
						 const bool *nulls, float *row, int64 *key, bool *key_null);

/*
 * Run a user's query (read only, parallel workers allowed) to completion
 * into dest, inside SPI_connect; ERROR 34000 naming function when it is
 * not a statement that returns rows.
 */
extern void gs_run_query(const char *query, DestReceiver *dest, const char *function);

/* ---- categories.c: categorical features given by name ---- */

/* Whether a column of this kind holds category names (text, char). */
extern bool gs_col_kind_is_text(GsColKind kind);

/* NOTICEs at gpu_load_model for features whose categories are integers. */
extern void gs_notice_integer_categories(const char *name, const GsModel *gm);

/* Whether feature f (0-based) of m has category names. */
extern bool gs_feature_has_names(const GsModelRef *m, int f);

/*
 * ERROR unless feature f (0-based) of m has category names, so that `what`
 * (a column, "the category") can be text.
 */
extern void gs_check_text_feature(const GsModelRef *m, int f, const char *what);
extern bool gs_text_feature_ok(const GsModelRef *m, int f, const char *what, GsRowError *err);

/*
 * ERROR unless feature f of m can be given as a column of numbers: not a
 * category found by the hash of its name (a CatBoost file without names),
 * where a number would be taken as a code.  what names the column.
 */
extern void gs_check_number_feature(const GsModelRef *m, int f, const char *what);
extern bool gs_number_feature_ok(const GsModelRef *m, int f, const char *what, GsRowError *err);

/* Whether feature f of m is a category found by the hash of its name. */
extern bool gs_feature_hashed(const GsModelRef *m, int f);

/*
 * The category code of text datum d for feature f (checked with
 * gs_check_text_feature), or NaN for a name the model does not know when
 * its library scores such a name as missing (LightGBM).  For a name XGBoost
 * would refuse: ERROR when why is NULL, else NaN with *why set to "holds
 * ..., which is not one of the model's categories".
 */
extern float gs_text_feature(const GsModelRef *m, int f, Datum d, GsColKind kind,
							 const char **why);

/* gs_text_feature, saying in err what it would raise (a name XGBoost refuses). */
extern bool gs_text_feature_checked(const GsModelRef *m, int f, Datum d, GsColKind kind,
									float *out, GsRowError *err);

/*
 * The value of a NULL in a text column of feature f: missing (NaN), except
 * where the model scores a name it does not know as a value of its own (an
 * ONNX LabelEncoder's default), which onnxruntime, having no NULL string,
 * gives such a row.
 */
extern float gs_text_null(const GsModelRef *m, int f);

/* ---- device.c: the batch scorer ---- */

typedef struct GsBatchScorer GsBatchScorer;

#define GS_SCORER_SLOTS 2		/* batches in flight at most */

/*
 * Rows per batch for model f: pg_gpuscore.batch_size, or fewer where that
 * many rows of its features and outputs would take more than
 * pg_gpuscore.batch_memory (never fewer than gpu_min_rows, so that 'auto'
 * still sends the batches of a wide model to the GPU).
 */
extern size_t gs_batch_rows(const GsModel *f);

/*
 * Start scoring batches of at most max_rows rows of model m on the engine
 * pg_gpuscore.device selects.  Everything lives in mcxt and is released
 * (GPU buffers included) when mcxt is reset or deleted.  ERRORs only when
 * the GPU is demanded and unavailable.
 */
extern GsBatchScorer *gs_scorer_begin(GsModelRef *m, size_t max_rows,
									  MemoryContext mcxt);

/*
 * Buffer for the next batch (column-major, x[f * n_rows + r], room for
 * max_rows rows) and its slot number, so the caller can keep per-batch data
 * (row keys) beside it.  Caller must first take any result of that slot
 * (gs_scorer_next without drain returns it).
 */
extern float *gs_scorer_input(GsBatchScorer *s, int *slot);

/* Score the batch of n_rows just written into the input buffer. */
extern void gs_scorer_submit(GsBatchScorer *s, size_t n_rows);

/*
 * The oldest submitted batch's outputs (n_rows * n_outputs), waiting for
 * the GPU if needed, or NULL when none must be taken now.  Without drain it
 * returns a batch only when its slot is needed for the next input; with
 * drain it returns every remaining batch, oldest first.  The pointer is
 * valid until that slot is submitted again.
 */
extern const float *gs_scorer_next(GsBatchScorer *s, bool drain, int *slot,
								   size_t *n_rows);

/* What one scorer scored where, for EXPLAIN ANALYZE. */
typedef struct GsScorerStats
{
	int64		batches[2];		/* [0] on the CPU, [1] on the GPU */
	int64		rows[2];
	double		cpu_ms;			/* scoring on the CPU */
	double		gpu_wait_ms;	/* waiting for the GPU's results */
	double		copy_in_ms;		/* on the device, as the provider times it */
	double		kernel_ms;
	double		copy_out_ms;
} GsScorerStats;

/* The scorer's statistics so far. */
extern const GsScorerStats *gs_scorer_stats(const GsBatchScorer *s);

/*
 * Is the batch submitted last still running on the GPU (so the caller can
 * build the next one meanwhile)?
 */
extern bool gs_scorer_in_flight(const GsBatchScorer *s);

/* Engine batch scoring would use now ("cpu" or "gpu"). */
extern const char *gs_engine_name(void);

/* Free the GPU copy of a model, if any (called when its last ref goes). */
extern void gs_device_release_model(GsModelRef *ref);

#endif							/* GPUSCORE_H */

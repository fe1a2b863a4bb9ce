/* pg_gpuscore--0.1.0.sql: SQL objects of pg_gpuscore 0.1.0 */

\echo Use "CREATE EXTENSION pg_gpuscore" to load this file. \quit

-- Model catalog --------------------------------------------------------------

-- Identity of each stored model version; never reused, so backend caches can
-- tell a re-created model from the one they hold.
CREATE SEQUENCE @extschema@.gpu_model_id_seq;

-- One row per model name: the active version.  Written only through
-- gpu_load_model*/gpu_drop_model, which validate the bytes first; nobody else
-- may write (or read the bytes of) this table.
CREATE TABLE @extschema@.gpu_model_store (
    name          text PRIMARY KEY
                  CHECK (length(name) BETWEEN 1 AND 63),
    version       integer NOT NULL CHECK (version > 0),
    model_id      bigint NOT NULL UNIQUE
                  DEFAULT pg_catalog.nextval('@extschema@.gpu_model_id_seq'::pg_catalog.regclass),
    format        text NOT NULL,
    objective     text NOT NULL,
    n_features    integer NOT NULL,
    n_outputs     integer NOT NULL,
    n_trees       integer NOT NULL,
    max_depth     integer NOT NULL,
    size_bytes    bigint NOT NULL,
    saved_by      text,
    feature_names text[],
    model         bytea NOT NULL,
    loaded_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    loaded_by     name NOT NULL
);

REVOKE ALL ON TABLE @extschema@.gpu_model_store FROM PUBLIC;
REVOKE ALL ON SEQUENCE @extschema@.gpu_model_id_seq FROM PUBLIC;

-- Models are user data: pg_dump saves them with the database.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.gpu_model_store', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.gpu_model_id_seq', '');

-- What is loaded, without the model bytes.  Readable by everyone.
CREATE VIEW @extschema@.gpu_models AS
    SELECT name, version, format, objective, n_features, n_outputs, n_trees,
           max_depth, size_bytes, saved_by, feature_names, loaded_at, loaded_by
      FROM @extschema@.gpu_model_store;
GRANT SELECT ON @extschema@.gpu_models TO PUBLIC;

-- Loading and dropping models (EXECUTE not granted to PUBLIC) ----------------

CREATE FUNCTION @extschema@.gpu_load_model(name text, model bytea, format text DEFAULT 'auto')
RETURNS integer
AS 'MODULE_PATHNAME', 'gpuscore_gpu_load_model'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_load_model(text, bytea, text) IS
'validate an XGBoost model (xgboost-json, xgboost-ubj or auto) and store it as the new active version of name; returns the version';

CREATE FUNCTION @extschema@.gpu_load_model_file(name text, path text, format text DEFAULT 'auto')
RETURNS integer
AS 'MODULE_PATHNAME', 'gpuscore_gpu_load_model_file'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_load_model_file(text, text, text) IS
'like gpu_load_model, reading the model from a file on the server (members of pg_read_server_files only)';

CREATE FUNCTION @extschema@.gpu_drop_model(name text, missing_ok boolean DEFAULT false)
RETURNS boolean
AS 'MODULE_PATHNAME', 'gpuscore_gpu_drop_model'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_drop_model(text, boolean) IS
'remove a model; with missing_ok, returns false instead of raising an error when it does not exist';

REVOKE EXECUTE ON FUNCTION @extschema@.gpu_load_model(text, bytea, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.gpu_load_model_file(text, text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.gpu_drop_model(text, boolean) FROM PUBLIC;

-- Scoring (EXECUTE granted to PUBLIC, as for any function) -------------------

-- gpu_score and gpu_predict take the features as an array of real, double
-- precision, numeric, integer or bigint (one overload each, so that
-- ARRAY[amount, v1, ...] resolves whatever the column types).
CREATE FUNCTION @extschema@.gpu_score(model text, features real[])
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score(model text, features double precision[])
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score(model text, features numeric[])
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score(model text, features integer[])
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score(model text, features bigint[])
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_score(text, real[]) IS
'score one row with a single-output model; NULL elements and NaN are missing values';
COMMENT ON FUNCTION @extschema@.gpu_score(text, double precision[]) IS
'score one row with a single-output model; NULL elements and NaN are missing values';
COMMENT ON FUNCTION @extschema@.gpu_score(text, numeric[]) IS
'score one row with a single-output model; NULL elements and NaN are missing values';
COMMENT ON FUNCTION @extschema@.gpu_score(text, integer[]) IS
'score one row with a single-output model; NULL elements are missing values';
COMMENT ON FUNCTION @extschema@.gpu_score(text, bigint[]) IS
'score one row with a single-output model; NULL elements are missing values';

CREATE FUNCTION @extschema@.gpu_predict(model text, features real[])
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_predict(model text, features double precision[])
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_predict(model text, features numeric[])
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_predict(model text, features integer[])
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_predict(model text, features bigint[])
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_predict(text, real[]) IS
'every output of one row (e.g. class probabilities of a multi-class model)';
COMMENT ON FUNCTION @extschema@.gpu_predict(text, double precision[]) IS
'every output of one row (e.g. class probabilities of a multi-class model)';
COMMENT ON FUNCTION @extschema@.gpu_predict(text, numeric[]) IS
'every output of one row (e.g. class probabilities of a multi-class model)';
COMMENT ON FUNCTION @extschema@.gpu_predict(text, integer[]) IS
'every output of one row (e.g. class probabilities of a multi-class model)';
COMMENT ON FUNCTION @extschema@.gpu_predict(text, bigint[]) IS
'every output of one row (e.g. class probabilities of a multi-class model)';

CREATE FUNCTION @extschema@.gpu_score_query(model text, query text)
RETURNS TABLE (id bigint, score real)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_query'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100000;

COMMENT ON FUNCTION @extschema@.gpu_score_query(text, text) IS
'run query (key column, then the features in model order) and score its rows in batches of pg_gpuscore.batch_size';

CREATE FUNCTION @extschema@.gpu_predict_query(model text, query text)
RETURNS TABLE (id bigint, scores real[])
AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict_query'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100000;

COMMENT ON FUNCTION @extschema@.gpu_predict_query(text, text) IS
'like gpu_score_query, returning every output of the model per row';

CREATE FUNCTION @extschema@.gpu_verify_model(name text, n_rows integer DEFAULT 10000)
RETURNS TABLE (model text, version integer, engine text, rows_compared bigint,
               outputs_compared bigint, max_abs_diff double precision,
               mismatches bigint, xgboost_version text, passed boolean)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_verify_model'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_verify_model(text, integer) IS
'score n_rows generated rows with pg_gpuscore and with XGBoost''s own predictor and report the largest difference';

-- Devices ----------------------------------------------------------------------

CREATE FUNCTION @extschema@.gpu_device_info()
RETURNS TABLE (provider_loaded boolean, reason text, device_count integer,
               device_name text, compute_capability text, total_memory bigint,
               free_memory bigint, driver_version integer, runtime_version integer)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_device_info'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.gpu_device_info() IS
'what this backend sees of the GPU: whether the CUDA provider loaded (and why not), the device, its memory and the CUDA versions';

CREATE FUNCTION @extschema@.gpu_engine_stats()
RETURNS TABLE (engine text, batches bigint, rows bigint, fallbacks bigint)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_engine_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.gpu_engine_stats() IS
'batches and rows this session scored on the CPU and on the GPU through the batch paths, and GPU failures that fell back to the CPU';

-- Triggers ---------------------------------------------------------------------

-- Arguments are 'name=value' strings; see docs/reference.md.  Both run as the
-- user whose INSERT fires them (no SECURITY DEFINER).
CREATE FUNCTION @extschema@.gpu_score_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_trigger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_score_trigger() IS
'BEFORE INSERT OR UPDATE FOR EACH ROW trigger: scores the new row into score_column (and flag_column = score >= threshold); arguments model=, score_column=, [flag_column=, threshold=], [features=], [on_error=error|null]';

CREATE FUNCTION @extschema@.gpu_alert_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'gpuscore_gpu_alert_trigger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_alert_trigger() IS
'AFTER INSERT FOR EACH STATEMENT trigger with REFERENCING NEW TABLE: scores the inserted rows in batches and inserts those with score >= threshold into alerts_table; arguments model=, key_column=, threshold=, alerts_table=, [features=], [on_error=error|null]';

-- Aggregate --------------------------------------------------------------------

-- gpu_score_agg collects a group's rows into columnar batches, scores each full
-- batch while the scan goes on and returns the group's (id, score) pairs as a
-- bytea (at most about 82 million rows per group); gpu_scores turns that back
-- into rows.  Parallel: partial aggregates are scored in the workers.
CREATE FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, real[])
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score_agg_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_finalfn'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score_agg_combinefn(internal, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_combinefn'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score_agg_serialfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_serialfn'
LANGUAGE C STRICT STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score_agg_deserialfn(bytea, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_deserialfn'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features real[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn,
    STYPE = internal,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn,
    FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn,
    SERIALFUNC = @extschema@.gpu_score_agg_serialfn,
    DESERIALFUNC = @extschema@.gpu_score_agg_deserialfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, real[]) IS
'score the rows of each group in columnar batches of pg_gpuscore.batch_size; returns the (id, score) pairs for gpu_scores(); a NULL features array gives a NULL score';

-- The same aggregate over separate feature columns (real, double precision,
-- smallint, integer, bigint, numeric or boolean; NULL is a missing value), so
-- no array has to be built per row.
CREATE FUNCTION @extschema@.gpu_score_agg_cols_transfn(internal, text, bigint, VARIADIC "any")
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_cols_transfn'
LANGUAGE C STABLE PARALLEL SAFE;

CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, VARIADIC features "any") (
    SFUNC = @extschema@.gpu_score_agg_cols_transfn,
    STYPE = internal,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn,
    FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn,
    SERIALFUNC = @extschema@.gpu_score_agg_serialfn,
    DESERIALFUNC = @extschema@.gpu_score_agg_deserialfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, VARIADIC "any") IS
'gpu_score_agg with the features as separate columns, in model order; a NULL column is a missing value';

CREATE FUNCTION @extschema@.gpu_scores(result bytea)
RETURNS TABLE (id bigint, score real)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_scores'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100000;

COMMENT ON FUNCTION @extschema@.gpu_scores(bytea) IS
'the (id, score) rows of a gpu_score_agg result, in no particular order';

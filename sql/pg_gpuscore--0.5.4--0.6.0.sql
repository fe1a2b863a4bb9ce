/* pg_gpuscore--0.5.4--0.6.0.sql: update pg_gpuscore from 0.5.4 to 0.6.0 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.6.0'" to load this file. \quit

-- Plain gpu_score and gpu_predict calls are scored in columnar batches by a
-- custom scan node the planner hook puts over their input (src/batch_plan.c,
-- src/batch_exec.c); the whole-row forms gpu_score(model, row) and
-- gpu_predict(model, row) are new.

-- The planner support function of gpu_score and gpu_predict: a per-model cost
-- (SupportRequestCost) and, being called while the first query that uses them
-- is planned, it loads the library, whose planner hook then scores such calls
-- in columnar batches (src/batch_plan.c; pg_gpuscore.batch_calls).
CREATE FUNCTION @extschema@.gpu_score_support(internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_support'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@.gpu_score_support(internal) IS
'planner support of gpu_score and gpu_predict: their cost per row for the model named';

ALTER FUNCTION @extschema@.gpu_score(text, real[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, double precision[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, numeric[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, integer[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, bigint[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, smallint[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, real[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, double precision[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, numeric[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, integer[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, bigint[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, smallint[]) SUPPORT @extschema@.gpu_score_support;

-- The whole-row forms: gpu_score('fraud', t) takes the features from the
-- columns of row t named like the model's features (gpu_models.feature_names).
CREATE FUNCTION @extschema@.gpu_score(model text, features record)
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_row'
LANGUAGE C STABLE PARALLEL SAFE COST 100
SUPPORT @extschema@.gpu_score_support;
CREATE FUNCTION @extschema@.gpu_predict(model text, features record)
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict_row'
LANGUAGE C STABLE PARALLEL SAFE COST 100
SUPPORT @extschema@.gpu_score_support;

COMMENT ON FUNCTION @extschema@.gpu_score(text, record) IS
'score one row with a single-output model, taking each feature from the column of the row named like it; NULL is a missing value, text a category by name';
COMMENT ON FUNCTION @extschema@.gpu_predict(text, record) IS
'every output of one row, taking each feature from the column of the row named like it';

-- What the planner puts in place of a gpu_score or gpu_predict call that it
-- scores in a batch (src/batch_plan.c): the batch's score of the row, or the
-- error the call would have raised for that row, raised only where the call's
-- value is used, as the call itself would have raised it.
CREATE FUNCTION @extschema@.gpu_batch_result(score anyelement, error text)
RETURNS anyelement AS 'MODULE_PATHNAME', 'gpuscore_gpu_batch_result'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_batch_result(anyelement, text) IS
'internal to batched gpu_score and gpu_predict calls: the score, or the error the call raises for the row';

-- gpu_device_info() says which provider the session uses (mode)
DROP FUNCTION @extschema@.gpu_device_info();
CREATE FUNCTION @extschema@.gpu_device_info()
RETURNS TABLE (provider_loaded boolean, reason text, device_count integer,
               device_name text, compute_capability text, total_memory bigint,
               free_memory bigint, driver_version integer, runtime_version integer,
               mode text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_device_info'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.gpu_device_info() IS
'what this backend sees of the GPU: whether the CUDA provider loaded (and why not), the device, its memory, the CUDA versions, and whether the session scores through the GPU service or by itself (mode)';

-- The GPU service (src/service_*.c) ------------------------------------------

CREATE FUNCTION @extschema@.gpu_service_info()
RETURNS TABLE (running boolean, worker_pid integer, device_pid integer,
               device_state text, device_reason text, device_restarts bigint,
               batches bigint, launches bigint, merged_batches bigint,
               queued integer, resident_models integer, resident_bytes bigint,
               memory_limit bigint, last_request timestamptz)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_service_info'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_service_info() IS
'the GPU service of this cluster: its worker and GPU process, the device state, batches scored and launches (batches merged into shared launches), requests queued, the model versions resident on the device';

CREATE FUNCTION @extschema@.gpu_model_stats()
RETURNS TABLE (model text, version integer, gpu_rows bigint, cpu_rows bigint,
               gpu_batches bigint, cpu_batches bigint, device_ms double precision,
               last_used timestamptz, score_mean double precision,
               score_stddev double precision, score_histogram bigint[])
AS 'MODULE_PATHNAME', 'gpuscore_gpu_model_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_model_stats() IS
'what the batch paths of every session scored with each model version of this database since the server started: rows and batches on the GPU and CPU, device time, last use, and the mean, spread and histogram of the first output (a drift signal)';

CREATE VIEW @extschema@.gpu_model_stats AS
SELECT * FROM @extschema@.gpu_model_stats();

GRANT SELECT ON @extschema@.gpu_model_stats TO PUBLIC;

CREATE FUNCTION @extschema@.gpu_model_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'gpuscore_gpu_model_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_model_stats_reset() IS
'forget gpu_model_stats of this database';

REVOKE EXECUTE ON FUNCTION @extschema@.gpu_model_stats_reset() FROM PUBLIC;

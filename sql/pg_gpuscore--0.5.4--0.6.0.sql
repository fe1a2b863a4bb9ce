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

-- Citus: the same models on every node ----------------------------------------
-- On a Citus coordinator gpu_load_model and gpu_drop_model repeat themselves
-- on every worker in the same distributed transaction (src/citus.c), through
-- these functions, which only superusers may call.
CREATE FUNCTION @extschema@.gpu_load_model_replica(name text, model bytea, format text,
                                                   missing_value real, version integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'gpuscore_gpu_load_model_replica'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_load_model_replica(text, bytea, text, real, integer) IS
'internal: a Citus coordinator''s gpu_load_model on this worker, stored as the coordinator''s version';

CREATE FUNCTION @extschema@.gpu_drop_model_replica(name text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'gpuscore_gpu_drop_model_replica'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_drop_model_replica(text) IS
'internal: a Citus coordinator''s gpu_drop_model on this worker';

CREATE FUNCTION @extschema@.gpu_prune_models_replica(keep text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpuscore_gpu_prune_models_replica'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_prune_models_replica(text[]) IS
'internal: drop on this worker the models a Citus coordinator does not have (gpu_sync_models)';

CREATE FUNCTION @extschema@.gpu_citus_send_model(name text, model bytea, format text,
                                                 missing_value real, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'gpuscore_gpu_citus_send_model'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_citus_send_model(text, bytea, text, real, integer) IS
'internal: send one model to every Citus worker in this transaction (gpu_sync_models)';

CREATE FUNCTION @extschema@.gpu_citus_send_prune(keep text[])
RETURNS void
AS 'MODULE_PATHNAME', 'gpuscore_gpu_citus_send_prune'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_citus_send_prune(text[]) IS
'internal: drop on every Citus worker the models not in keep, in this transaction (gpu_sync_models)';

REVOKE EXECUTE ON FUNCTION @extschema@.gpu_load_model_replica(text, bytea, text, real, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.gpu_drop_model_replica(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.gpu_prune_models_replica(text[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.gpu_citus_send_model(text, bytea, text, real, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.gpu_citus_send_prune(text[]) FROM PUBLIC;

-- Bring every worker to the coordinator's models (after citus_add_node, or to
-- repair a node): each model the coordinator has is stored on every worker
-- with its version (a worker that holds that version already is left alone),
-- and models the coordinator does not have are dropped, in one distributed
-- transaction.  Returns the models sent.
CREATE FUNCTION @extschema@.gpu_sync_models()
RETURNS TABLE (model text, version integer)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    r record;
BEGIN
    IF (SELECT count(*) FROM pg_extension WHERE extname = 'citus') = 0 THEN
        RAISE EXCEPTION 'gpu_sync_models() needs the citus extension'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF (SELECT groupid FROM pg_dist_local_group) <> 0 THEN
        RAISE EXCEPTION 'gpu_sync_models() runs on the Citus coordinator'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    FOR r IN SELECT s.name, s.model, s.format, s.missing_value, s.version
               FROM @extschema@.gpu_model_store s ORDER BY s.name LOOP
        PERFORM @extschema@.gpu_citus_send_model(r.name, r.model, r.format, r.missing_value, r.version);
        model := r.name;
        version := r.version;
        RETURN NEXT;
    END LOOP;
    PERFORM @extschema@.gpu_citus_send_prune(coalesce((SELECT array_agg(s.name) FROM @extschema@.gpu_model_store s), '{}'));
END
$fn$;

COMMENT ON FUNCTION @extschema@.gpu_sync_models() IS
'on a Citus coordinator: put its models on every worker (after citus_add_node), dropping the models it does not have, in one transaction';

REVOKE EXECUTE ON FUNCTION @extschema@.gpu_sync_models() FROM PUBLIC;

-- Compare the models of every Citus worker with the coordinator's: one row
-- per worker and model, status 'same', 'missing' (not on the worker),
-- 'different' (another version or other bytes) or 'extra' (only on the
-- worker), or 'unreachable' with the error.
CREATE FUNCTION @extschema@.gpu_check_models()
RETURNS TABLE (node text, model text, coordinator_version integer, node_version integer,
               status text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    w record;
BEGIN
    IF (SELECT count(*) FROM pg_extension WHERE extname = 'citus') = 0 THEN
        RAISE EXCEPTION 'gpu_check_models() needs the citus extension'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    FOR w IN EXECUTE format(
        'SELECT nodename || '':'' || nodeport AS node, success, result FROM run_command_on_workers(%L)',
        format('SELECT coalesce(json_agg(json_build_array(name, version, md5(model))), ''[]'') FROM %s',
               '@extschema@.gpu_model_store'))
    LOOP
        IF NOT w.success THEN
            node := w.node; model := NULL; coordinator_version := NULL; node_version := NULL;
            status := 'unreachable: ' || w.result;
            RETURN NEXT;
            CONTINUE;
        END IF;
        RETURN QUERY
        WITH here AS (SELECT s.name, s.version, md5(s.model) AS sum FROM @extschema@.gpu_model_store s),
             there AS (SELECT e->>0 AS name, (e->>1)::integer AS version, e->>2 AS sum
                         FROM json_array_elements(w.result::json) e)
        SELECT w.node, coalesce(h.name, t.name), h.version, t.version,
               CASE WHEN t.name IS NULL THEN 'missing'
                    WHEN h.name IS NULL THEN 'extra'
                    WHEN h.version = t.version AND h.sum = t.sum THEN 'same'
                    ELSE 'different' END
          FROM here h FULL JOIN there t ON h.name = t.name
         ORDER BY 2;
    END LOOP;
END
$fn$;

COMMENT ON FUNCTION @extschema@.gpu_check_models() IS
'on a Citus coordinator: compare every worker''s models with the coordinator''s (same, missing, different, extra)';

REVOKE EXECUTE ON FUNCTION @extschema@.gpu_check_models() FROM PUBLIC;

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

-- gpu_score_table on Citus tables: each batch scored on the workers
CREATE OR REPLACE PROCEDURE @extschema@.gpu_score_table(
    model            text,
    source           regclass,
    key_column       name,
    score_column     name DEFAULT 'score',
    target           regclass DEFAULT NULL,
    features         name[] DEFAULT NULL,
    mode             text DEFAULT 'unscored',
    changed_column   name DEFAULT NULL,
    scored_at_column name DEFAULT NULL,
    filter           text DEFAULT NULL,
    batch_size       integer DEFAULT 50000,
    wait             boolean DEFAULT false)
LANGUAGE plpgsql
AS $proc$
<<run>>
DECLARE
    -- what is written where
    write_rel    regclass := coalesce(target, source);
    target_name  text;
    version      integer;
    feats        name[];
    feat_list    text;
    bad_pos      bigint;
    bad_col      name;
    named_pos    bigint;
    place_name   text;
    other_name   text;
    key_type     regtype;
    has_version  boolean := false;
    has_at       boolean := false;
    at_col       name := scored_at_column;
    cond         text := 'true';
    sql_base     text;
    sql          text;
    lock_key     bigint;
    resume_key   bigint;
    -- progress
    run_id       bigint;
    n            bigint;
    max_key      bigint;
    upper_key    bigint;
    lower_cond   text;
    range_sql    text;
    last_key     bigint;
    total        bigint := 0;
    n_batches    integer := 0;
    err_state    text;
    err_msg      text;
    err_detail   text;
    err_hint     text;
    -- a Citus table: each batch scores in a query Citus runs on the workers
    on_citus     boolean := false;
    score_expr   text;
BEGIN
    -- Arguments ---------------------------------------------------------------
    IF model IS NULL OR source IS NULL OR key_column IS NULL OR score_column IS NULL
       OR mode IS NULL OR batch_size IS NULL OR wait IS NULL THEN
        RAISE EXCEPTION 'gpu_score_table: model, source, key_column, score_column, mode, batch_size and wait must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF mode NOT IN ('unscored', 'changed', 'all') THEN
        RAISE EXCEPTION 'unknown gpu_score_table mode "%"', mode
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use ''unscored'', ''changed'' or ''all''.';
    END IF;
    IF batch_size < 1 OR batch_size > 10000000 THEN
        RAISE EXCEPTION 'batch_size must be between 1 and 10000000, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- it writes: say so before the first lock (on a hot standby a lock or a
    -- FOR SHARE would fail with a message about those instead)
    IF pg_catalog.current_setting('transaction_read_only')::boolean THEN
        IF pg_catalog.pg_is_in_recovery() THEN
            RAISE EXCEPTION 'cannot execute gpu_score_table in a read-only transaction'
                USING ERRCODE = 'read_only_sql_transaction',
                      HINT = 'This server is a hot standby: score tables on the primary; gpu_score_query reads scores here.';
        END IF;
        RAISE EXCEPTION 'cannot execute gpu_score_table in a read-only transaction'
            USING ERRCODE = 'read_only_sql_transaction';
    END IF;

    SELECT a.atttypid::regtype INTO key_type FROM pg_catalog.pg_attribute a
     WHERE a.attrelid = source AND a.attname = key_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF key_type IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', key_column, source
            USING ERRCODE = 'undefined_column';
    END IF;
    IF key_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
        RAISE EXCEPTION 'key column "%" of % has type %', key_column, source, key_type
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'gpu_score_table needs a smallint, integer or bigint key (usually the primary key).';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i
                     JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
                     JOIN pg_catalog.pg_am am ON am.oid = c.relam
                     JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                    WHERE i.indrelid = source AND am.amname = 'btree' AND i.indpred IS NULL
                      AND a.attname = key_column) THEN
        RAISE EXCEPTION 'key column "%" of % has no index', key_column, source
            USING ERRCODE = 'invalid_table_definition',
                  HINT = 'gpu_score_table walks the table in key order: make the key the primary key or give it a btree index.';
    END IF;

    feats := features;
    IF feats IS NULL THEN
        SELECT m.feature_names::name[] INTO feats FROM @extschema@.gpu_models m WHERE m.name = model;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'model "%" does not exist', model
                USING ERRCODE = 'undefined_object',
                      HINT = 'Load it with gpu_load_model(); gpu_models lists the loaded models.';
        END IF;
        IF feats IS NULL THEN
            RAISE EXCEPTION 'model "%" has no feature names', model
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Name the feature columns, in model order, with features => ARRAY[...].';
        END IF;
    END IF;
    IF pg_catalog.cardinality(feats) = 0 THEN
        RAISE EXCEPTION 'features must name at least one column' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR i IN 1 .. pg_catalog.cardinality(feats) LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid = source AND a.attname = feats[i] AND a.attnum > 0
                          AND NOT a.attisdropped) THEN
            RAISE EXCEPTION 'feature column "%" of relation % does not exist', feats[i], source
                USING ERRCODE = 'undefined_column',
                      HINT = CASE WHEN features IS NULL
                                  THEN 'The columns default to the model''s feature names; name them with features => ARRAY[...].'
                                  ELSE 'Name the feature columns in model order.' END;
        END IF;
    END LOOP;
    IF pg_catalog.cardinality(feats) <> (SELECT m.n_features FROM @extschema@.gpu_models m
                                          WHERE m.name = model) THEN
        RAISE EXCEPTION 'model "%" expects % features, got % columns', model,
                        (SELECT m.n_features FROM @extschema@.gpu_models m WHERE m.name = model),
                        pg_catalog.cardinality(feats)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- A feature column named like another of the model's features: the
    -- columns are out of model order (refused as gpu_score_query refuses
    -- them).  Names match exactly, or without regard to ASCII case where
    -- only one feature matches so.
    IF features IS NOT NULL THEN
        SELECT f.o, f.col, n.o, m.feature_names[f.o], m.feature_names[n.o]
          INTO bad_pos, bad_col, named_pos, place_name, other_name
          FROM @extschema@.gpu_models m,
               pg_catalog.unnest(feats) WITH ORDINALITY f(col, o),
               LATERAL (SELECT coalesce(
                          (SELECT u.o FROM pg_catalog.unnest(m.feature_names) WITH ORDINALITY u(nm, o)
                            WHERE u.nm = f.col::text ORDER BY u.o LIMIT 1),
                          (SELECT pg_catalog.min(u.o) FROM pg_catalog.unnest(m.feature_names) WITH ORDINALITY u(nm, o)
                            WHERE pg_catalog.lower(u.nm COLLATE "C") = pg_catalog.lower(f.col::text COLLATE "C")
                           HAVING pg_catalog.count(*) = 1)) AS o) n
         WHERE m.name = model AND n.o <> f.o
           -- LightGBM's made-up names (Column_0, ...) say nothing of the columns
           AND NOT (m.feature_names[f.o] = 'Column_' || (f.o - 1)
                    AND m.feature_names[n.o] = 'Column_' || (n.o - 1))
         ORDER BY f.o LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'feature column "%" stands for feature % of model "%" but is named like feature %',
                            bad_col, bad_pos, model, named_pos
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = pg_catalog.format('Features are read by position: feature %s is "%s", feature %s "%s".',
                                                 bad_pos, place_name, named_pos, other_name),
                      HINT = 'Give the feature columns in the order of gpu_models.feature_names, or rename the column if its name is a coincidence.';
        END IF;
    END IF;
    -- one argument per feature where the aggregate can take them (at most 100
    -- function arguments), one double precision[] otherwise
    IF pg_catalog.cardinality(feats) <= 90 THEN
        SELECT pg_catalog.string_agg(pg_catalog.format('b.%I', f), ', ' ORDER BY o)
          INTO feat_list FROM pg_catalog.unnest(feats) WITH ORDINALITY u(f, o);
    ELSE
        SELECT 'ARRAY[' || pg_catalog.string_agg(pg_catalog.format('b.%I::float8', f), ', ' ORDER BY o) || ']'
          INTO feat_list FROM pg_catalog.unnest(feats) WITH ORDINALITY u(f, o);
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = write_rel AND a.attname = score_column AND a.attnum > 0
                      AND NOT a.attisdropped
                      AND a.atttypid IN ('real'::regtype, 'double precision'::regtype, 'numeric'::regtype)) THEN
        RAISE EXCEPTION 'relation % has no score column "%" of type real, double precision or numeric',
                        write_rel, score_column
            USING ERRCODE = 'undefined_column';
    END IF;

    IF target IS NOT NULL THEN
        target_name := target::text;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid = target AND a.attname = key_column AND a.attnum > 0
                          AND NOT a.attisdropped) THEN
            RAISE EXCEPTION 'results table % has no key column "%"', target, key_column
                USING ERRCODE = 'undefined_column';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a
                                  ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                        WHERE i.indrelid = target AND i.indisunique AND i.indnkeyatts = 1
                          AND i.indpred IS NULL AND i.indexprs IS NULL AND a.attname = key_column) THEN
            RAISE EXCEPTION 'results table % has no unique index on "%"', target, key_column
                USING ERRCODE = 'invalid_table_definition',
                      HINT = 'Make the key column the primary key of the results table.';
        END IF;
        has_version := EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                                WHERE a.attrelid = target AND a.attname = 'model_version'
                                  AND a.attnum > 0 AND NOT a.attisdropped);
        at_col := coalesce(at_col, 'scored_at');
        has_at := EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                           WHERE a.attrelid = target AND a.attname = at_col
                             AND a.attnum > 0 AND NOT a.attisdropped);
        IF scored_at_column IS NOT NULL AND NOT has_at THEN
            RAISE EXCEPTION 'results table % has no column "%"', target, scored_at_column
                USING ERRCODE = 'undefined_column';
        END IF;
    ELSE
        target_name := pg_catalog.format('%s.%I', source, score_column);
        IF at_col IS NOT NULL THEN
            has_at := EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                               WHERE a.attrelid = source AND a.attname = at_col
                                 AND a.attnum > 0 AND NOT a.attisdropped);
            IF NOT has_at THEN
                RAISE EXCEPTION 'column "%" of relation % does not exist', at_col, source
                    USING ERRCODE = 'undefined_column';
            END IF;
        END IF;
    END IF;

    -- A Citus table (distributed, reference or managed by Citus): the batch
    -- scores with gpu_score in queries Citus pushes into the shards, so the
    -- workers score their own rows (batched, on their GPUs where they have
    -- them); without features, the whole-row form picks the columns by the
    -- model's feature names, text categories included.
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = $1)'
           INTO on_citus USING source;
    END IF;
    IF on_citus THEN
        IF features IS NULL THEN
            score_expr := '@extschema@.gpu_score($1, s)';
        ELSE
            SELECT a.attname INTO bad_col FROM pg_catalog.unnest(feats) f
              JOIN pg_catalog.pg_attribute a ON a.attrelid = source AND a.attname = f
             WHERE a.atttypid NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype,
                                      'real'::regtype, 'double precision'::regtype, 'numeric'::regtype,
                                      'boolean'::regtype)
             LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'feature column "%" of Citus table % is not a number or a boolean', bad_col, source
                    USING ERRCODE = 'feature_not_supported',
                          HINT = 'On a Citus table, text categories are read by name: leave out features and name the columns like the model''s features.';
            END IF;
            SELECT '@extschema@.gpu_score($1, ARRAY[' ||
                   pg_catalog.string_agg(pg_catalog.format(CASE WHEN a.atttypid = 'boolean'::regtype
                                                                THEN 's.%I::integer::float8'
                                                                ELSE 's.%I::float8' END, f), ', ' ORDER BY o) || '])'
              INTO score_expr
              FROM pg_catalog.unnest(feats) WITH ORDINALITY u(f, o)
              JOIN pg_catalog.pg_attribute a ON a.attrelid = source AND a.attname = u.f;
        END IF;
    END IF;

    -- Which rows a run scores.
    IF mode = 'changed' THEN
        IF changed_column IS NULL OR NOT has_at THEN
            RAISE EXCEPTION 'mode ''changed'' needs changed_column and a scored-at column'
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give changed_column => (the source''s last-change time) and, when scoring in place, scored_at_column => (set by each run); a results table needs a scored_at column.';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid = source AND a.attname = changed_column
                          AND a.attnum > 0 AND NOT a.attisdropped) THEN
            RAISE EXCEPTION 'column "%" of relation % does not exist', changed_column, source
                USING ERRCODE = 'undefined_column';
        END IF;
    END IF;
    IF target IS NULL THEN
        cond := CASE mode
            WHEN 'unscored' THEN pg_catalog.format('s.%I IS NULL', score_column)
            WHEN 'changed' THEN pg_catalog.format('(s.%1$I IS NULL OR s.%2$I IS NULL OR s.%3$I > s.%2$I)',
                                                  score_column, at_col, changed_column)
            ELSE 'true' END;
    ELSE
        cond := CASE mode
            WHEN 'unscored' THEN pg_catalog.format('NOT EXISTS (SELECT 1 FROM %s t WHERE t.%I = s.%I)',
                                                   target, key_column, key_column)
            WHEN 'changed' THEN pg_catalog.format('NOT EXISTS (SELECT 1 FROM %s t WHERE t.%2$I = s.%2$I AND t.%3$I >= s.%4$I)',
                                                  target, key_column, at_col, changed_column)
            ELSE 'true' END;
    END IF;
    IF filter IS NOT NULL THEN
        cond := cond || ' AND (' || filter || ')';
    END IF;

    -- The run walks the key index in ranges of batch_size keys, so each batch
    -- costs the same however much of the table is already scored.  The end
    -- of the next range ($1: the end of the previous one):
    range_sql := pg_catalog.format(
        'SELECT s.%1$I FROM %2$s s %%s ORDER BY s.%1$I OFFSET %3$s LIMIT 1',
        key_column, source, batch_size - 1);
    -- One batch: the range's rows that need scoring (locked when scored in
    -- place), scored with the aggregate (GPU when present), their scores
    -- written; $1 model, $4 model version, the range's bounds written in.
    sql_base := pg_catalog.format(
        'WITH batch AS MATERIALIZED ('
        '  SELECT s.%1$I AS k, %2$s FROM %3$s s WHERE %4$s %%s%7$s'
        '), scored AS ('
        '  SELECT r.id, r.score FROM @extschema@.gpu_scores('
        '    (SELECT @extschema@.gpu_score_agg($1, b.k::bigint, %5$s) FROM batch b)) r'
        '), written AS (%6$s) '
        'SELECT pg_catalog.count(*), pg_catalog.max(k) FROM written',
        key_column,
        (SELECT pg_catalog.string_agg(pg_catalog.format('s.%1$I', f), ', ') FROM pg_catalog.unnest(feats) f),
        source, cond, feat_list,
        CASE WHEN target IS NULL THEN
            pg_catalog.format('UPDATE %1$s s SET %2$I = sc.score%3$s FROM scored sc WHERE s.%4$I = sc.id RETURNING s.%4$I AS k',
                              source, score_column,
                              CASE WHEN has_at THEN pg_catalog.format(', %I = pg_catalog.now()', at_col) ELSE '' END,
                              key_column)
        ELSE
            pg_catalog.format('INSERT INTO %1$s AS t (%2$I, %3$I%4$s%5$s) SELECT sc.id, sc.score%6$s%7$s FROM scored sc '
                              'ON CONFLICT (%2$I) DO UPDATE SET %3$I = EXCLUDED.%3$I%8$s%9$s RETURNING t.%2$I AS k',
                              target, key_column, score_column,
                              CASE WHEN has_version THEN ', model_version' ELSE '' END,
                              CASE WHEN has_at THEN pg_catalog.format(', %I', at_col) ELSE '' END,
                              CASE WHEN has_version THEN ', $4' ELSE '' END,
                              CASE WHEN has_at THEN ', pg_catalog.now()' ELSE '' END,
                              CASE WHEN has_version THEN ', model_version = EXCLUDED.model_version' ELSE '' END,
                              CASE WHEN has_at THEN pg_catalog.format(', %1$I = EXCLUDED.%1$I', at_col) ELSE '' END)
        END,
        -- in place, the rows are locked while they are scored (the UPDATE
        -- then writes scores of the features it sees); a results table needs
        -- no lock on the source
        CASE WHEN target IS NULL THEN ' FOR UPDATE OF s' ELSE '' END);

    -- On a Citus table: the batch's rows are scored on the workers and come
    -- back as (key, score) only; in place, an UPDATE writes them from that
    -- intermediate result (Citus refuses gpu_score in an UPDATE itself), so
    -- the source rows are not locked while they are scored.
    IF on_citus AND target IS NULL THEN
        sql_base := pg_catalog.format(
            'WITH scored AS MATERIALIZED ('
            '  SELECT s.%1$I AS k, %2$s AS score FROM %3$s s WHERE %4$s %%s'
            '), written AS ('
            '  UPDATE %3$s s SET %5$I = sc.score%6$s FROM scored sc WHERE s.%1$I = sc.k RETURNING s.%1$I AS k'
            ') SELECT pg_catalog.count(*), pg_catalog.max(k) FROM written',
            key_column, score_expr, source, cond, score_column,
            CASE WHEN has_at THEN pg_catalog.format(', %I = pg_catalog.now()', at_col) ELSE '' END);
    ELSIF on_citus THEN
        sql_base := pg_catalog.format(
            'WITH written AS ('
            '  INSERT INTO %1$s AS t (%2$I, %3$I%4$s%5$s) SELECT s.%2$I, %6$s%7$s%8$s FROM %9$s s WHERE %10$s %%s'
            '  ON CONFLICT (%2$I) DO UPDATE SET %3$I = EXCLUDED.%3$I%11$s%12$s RETURNING t.%2$I AS k'
            ') SELECT pg_catalog.count(*), pg_catalog.max(k) FROM written',
            target, key_column, score_column,
            CASE WHEN has_version THEN ', model_version' ELSE '' END,
            CASE WHEN has_at THEN pg_catalog.format(', %I', at_col) ELSE '' END,
            score_expr,
            CASE WHEN has_version THEN ', $4' ELSE '' END,
            CASE WHEN has_at THEN ', pg_catalog.now()' ELSE '' END,
            source, cond,
            CASE WHEN has_version THEN ', model_version = EXCLUDED.model_version' ELSE '' END,
            CASE WHEN has_at THEN pg_catalog.format(', %1$I = EXCLUDED.%1$I', at_col) ELSE '' END);
    END IF;

    -- Only one run at a time writes a given target: a session-level advisory
    -- lock on it (released at the end of the run, or by a crash).  From
    -- taking it on, cancels are held wherever no exception block would catch
    -- them (between blocks, over each COMMIT) and raised inside the next
    -- block, so every way out of the run logs it and releases the lock.
    -- Each block starts by resuming cancels and ends by holding them.
    lock_key := (pg_catalog.hashtext('pg_gpuscore.gpu_score_table')::bigint << 32)
                | write_rel::oid::bigint;
    version := @extschema@.gpu_model_lock(model);
    IF NOT @extschema@.gpu_score_run_lock(lock_key, wait) THEN
        run_id := @extschema@.gpu_score_run_begin(model, version, source::text, target_name, mode, 'skipped');
        RAISE NOTICE 'gpu_score_table: another run is writing %, skipped (run %)', target_name, run_id;
        RETURN;
    END IF;

    BEGIN
        PERFORM @extschema@.gpu_score_run_resume();
        -- A run in mode 'all' goes on after the last committed batch of an
        -- unfinished 'all' run on the same target.
        IF mode = 'all' THEN
            SELECT r.last_key INTO resume_key FROM @extschema@.gpu_score_runs r
             WHERE r.target = target_name AND r.mode = 'all' AND r.model = gpu_score_table.model
               AND r.status <> 'skipped'
             ORDER BY r.run_id DESC LIMIT 1;
            IF resume_key IS NOT NULL AND EXISTS (
                   SELECT 1 FROM @extschema@.gpu_score_runs r
                    WHERE r.target = target_name AND r.mode = 'all' AND r.model = gpu_score_table.model
                      AND r.status = 'succeeded'
                      AND r.run_id = (SELECT max(r2.run_id) FROM @extschema@.gpu_score_runs r2
                                       WHERE r2.target = target_name AND r2.mode = 'all'
                                         AND r2.model = gpu_score_table.model AND r2.status <> 'skipped')) THEN
                resume_key := NULL;
            END IF;
        END IF;
        last_key := resume_key;
        -- a batch whose two-phase commit a worker's crash interrupted is
        -- committed (or rolled back) on it before this run looks for rows
        -- to score, so no row of it is scored again
        IF on_citus THEN
            BEGIN
                PERFORM pg_catalog.recover_prepared_transactions();
            EXCEPTION WHEN insufficient_privilege THEN
                NULL;   -- Citus's maintenance daemon does it within citus.recover_2pc_interval
            END;
        END IF;
        run_id := @extschema@.gpu_score_run_begin(model, version, source::text, target_name, mode, 'running');
        PERFORM @extschema@.gpu_score_run_hold(lock_key);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_catalog.pg_advisory_unlock(lock_key);
        RAISE;
    END;
    COMMIT;

    LOOP
        BEGIN
            PERFORM @extschema@.gpu_score_run_resume();
            -- deferred constraints are checked here, where an error or a
            -- cancel is caught, not at the COMMIT
            SET CONSTRAINTS ALL IMMEDIATE;
            IF @extschema@.gpu_model_lock(model) <> version THEN
                RAISE EXCEPTION 'model "%" was replaced during the run', model
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = pg_catalog.format('The run started with version %s; rows scored so far keep that version''s scores.', version),
                          HINT = 'Run gpu_score_table again to go on with the new version.';
            END IF;
            lower_cond := CASE WHEN last_key IS NULL THEN ''
                               ELSE pg_catalog.format('s.%I > %s', key_column, last_key) END;
            EXECUTE pg_catalog.format(range_sql, CASE WHEN lower_cond = '' THEN ''
                                                      ELSE 'WHERE ' || lower_cond END)
               INTO upper_key;
            sql := pg_catalog.format(sql_base,
                                     CASE WHEN lower_cond = '' THEN '' ELSE ' AND ' || lower_cond END
                                     || CASE WHEN upper_key IS NULL THEN ''
                                             ELSE pg_catalog.format(' AND s.%I <= %s', key_column, upper_key) END);
            EXECUTE sql INTO n, max_key USING model, NULL::integer, NULL::bigint, version;
            -- The batch's progress goes into the run log in the batch's
            -- transaction; the last range has no end, and its batch ends the
            -- run.
            PERFORM @extschema@.gpu_score_run_update(run_id, total + n,
                                                     n_batches + CASE WHEN n > 0 THEN 1 ELSE 0 END,
                                                     coalesce(upper_key, greatest(max_key, last_key)),
                                                     CASE WHEN upper_key IS NULL THEN 'succeeded' ELSE 'running' END);
            -- (an error from here on leaves these ahead of the run log: the
            -- error path reads the log)
            IF n > 0 THEN
                total := total + n;
                n_batches := n_batches + 1;
            END IF;
            last_key := coalesce(upper_key, greatest(max_key, last_key));
            PERFORM @extschema@.gpu_score_run_hold(lock_key);
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            PERFORM @extschema@.gpu_score_run_hold(lock_key);
            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT,
                                    err_detail = PG_EXCEPTION_DETAIL, err_hint = PG_EXCEPTION_HINT;
        END;
        IF err_state IS NOT NULL AND on_citus THEN
            -- the failed batch is rolled back already; a Citus transaction that
            -- lost a worker cannot commit, but rolls back, so that the error
            -- path below logs the run in a transaction of its own (on the
            -- coordinator only); cancels are held again at once
            ROLLBACK;
            PERFORM @extschema@.gpu_score_run_hold(lock_key);
        ELSE
            COMMIT;
        END IF;
        EXIT WHEN err_state IS NOT NULL OR upper_key IS NULL;
    END LOOP;

    IF err_state IS NOT NULL THEN
        -- what the committed batches did, as the run log has it
        SELECT r.rows_scored, r.batches, r.last_key INTO total, n_batches, last_key
          FROM @extschema@.gpu_score_runs r WHERE r.run_id = run.run_id;
        PERFORM @extschema@.gpu_score_run_update(run_id, total, n_batches, last_key,
                                                 CASE WHEN err_state = '57014' THEN 'cancelled' ELSE 'failed' END,
                                                 err_msg);
        PERFORM @extschema@.gpu_score_run_hold(lock_key);
        COMMIT;
        PERFORM pg_catalog.pg_advisory_unlock(lock_key);
        PERFORM @extschema@.gpu_score_run_resume();
        -- the batch's error, as it was (RAISE options must not be null)
        IF err_detail <> '' AND err_hint <> '' THEN
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_msg, DETAIL = err_detail, HINT = err_hint;
        ELSIF err_detail <> '' THEN
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_msg, DETAIL = err_detail;
        ELSIF err_hint <> '' THEN
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_msg, HINT = err_hint;
        ELSE
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_msg;
        END IF;
    END IF;
    PERFORM pg_catalog.pg_advisory_unlock(lock_key);
    PERFORM @extschema@.gpu_score_run_resume();
    RAISE NOTICE 'gpu_score_table: run % scored % % of % in % %', run_id, total,
        CASE WHEN total = 1 THEN 'row' ELSE 'rows' END, source, n_batches,
        CASE WHEN n_batches = 1 THEN 'batch' ELSE 'batches' END;
END
$proc$;

-- Citus: gpu_score_agg with a bytea state (issue 36) --------------------------
-- (one block for the fresh install and the upgrade from 0.5.4; it replaces the
-- array forms of the aggregate defined above, with an internal state)
-- Citus splits an aggregate over a distributed table into a partial
-- aggregate on each worker and a combining one on the coordinator only when
-- its state has a real type (it ships states through their output and input
-- functions); an internal state made it pull every row to the coordinator.
-- The state is bytea: in memory an expanded object passed without copies, as
-- a value (a Citus worker's state, a parallel worker's) the scored (id, score)
-- pairs, the final function's result.  No serialization functions are needed.
-- The form over separate columns (VARIADIC "any") keeps its internal state and
-- functions: Citus cannot type-check "any" arguments on the workers
-- (worker_partial_agg), so it must gather that form's rows as before.
DROP AGGREGATE @extschema@.gpu_score_agg(text, bigint, real[]);
DROP AGGREGATE @extschema@.gpu_score_agg(text, bigint, numeric[]);
DROP AGGREGATE @extschema@.gpu_score_agg(text, bigint, integer[]);
DROP AGGREGATE @extschema@.gpu_score_agg(text, bigint, bigint[]);
DROP AGGREGATE @extschema@.gpu_score_agg(text, bigint, smallint[]);
DROP FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, real[]);
DROP FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, numeric[]);
DROP FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, integer[]);
DROP FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, bigint[]);
DROP FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, smallint[]);

CREATE FUNCTION @extschema@.gpu_score_agg_finalfn(bytea)
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_finalfn'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score_agg_combinefn(bytea, bytea)
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_combinefn'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION @extschema@.gpu_score_agg_transfn(bytea, text, bigint, real[])
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
CREATE FUNCTION @extschema@.gpu_score_agg_transfn(bytea, text, bigint, numeric[])
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
CREATE FUNCTION @extschema@.gpu_score_agg_transfn(bytea, text, bigint, integer[])
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
CREATE FUNCTION @extschema@.gpu_score_agg_transfn(bytea, text, bigint, bigint[])
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
CREATE FUNCTION @extschema@.gpu_score_agg_transfn(bytea, text, bigint, smallint[])
RETURNS bytea AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE COST 100;

CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features real[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn, STYPE = bytea,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn, PARALLEL = SAFE);
CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features numeric[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn, STYPE = bytea,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn, PARALLEL = SAFE);
CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features integer[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn, STYPE = bytea,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn, PARALLEL = SAFE);
CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features bigint[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn, STYPE = bytea,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn, PARALLEL = SAFE);
CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features smallint[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn, STYPE = bytea,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn, PARALLEL = SAFE);

COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, real[]) IS
'score the rows of each group in columnar batches of pg_gpuscore.batch_size; returns the (id, score) pairs for gpu_scores(); a NULL features array gives a NULL score; on a Citus table each worker scores its shards';
COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, numeric[]) IS
'gpu_score_agg with the features as a numeric[] array';
COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, integer[]) IS
'gpu_score_agg with the features as an integer[] array';
COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, bigint[]) IS
'gpu_score_agg with the features as a bigint[] array';
COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, smallint[]) IS
'gpu_score_agg with the features as a smallint[] array';
COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, VARIADIC "any") IS
'gpu_score_agg with the features as separate columns, in model order; a NULL column is a missing value; on a Citus table the rows are gathered on the coordinator (use an array of the columns there)';
-- end of the Citus block -----------------------------------------------------

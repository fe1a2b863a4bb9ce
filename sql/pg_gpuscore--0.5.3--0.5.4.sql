/* pg_gpuscore--0.5.3--0.5.4.sql: update pg_gpuscore from 0.5.3 to 0.5.4 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.5.4'" to load this file. \quit

-- gpu_score_table no longer lets a cancel or statement_timeout that lands
-- between two of its blocks (just before or after a COMMIT) escape with its
-- run left 'running' and its run lock held by the session; it refuses a
-- context where it cannot commit before taking the lock; deferred
-- constraints are checked in each batch.

-- Cancel deferral around gpu_score_table's COMMITs (src/run_guard.c).  A
-- COMMIT cannot stand inside a block with an exception handler, and PL/pgSQL
-- checks for interrupts before each statement: a cancel landing between a
-- batch's block and the next would escape the procedure, leaving the run
-- 'running' and its lock held by the session.  So cancels are held over
-- those statements and raised inside the next block.
CREATE FUNCTION @extschema@.gpu_score_run_lock(key bigint, wait boolean)
RETURNS boolean
AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_run_lock'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_score_run_lock(bigint, boolean) IS
'internal to gpu_score_table: take a run''s session-level advisory lock (or return false when busy and not wait) and hold query cancels until gpu_score_run_resume';

CREATE FUNCTION @extschema@.gpu_score_run_hold(key bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_run_hold'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_score_run_hold(bigint) IS
'internal to gpu_score_table: while holding the run lock of key, hold query cancels over its next COMMIT (an error or a second COMMIT ends the hold)';

CREATE FUNCTION @extschema@.gpu_score_run_resume()
RETURNS void
AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_run_resume'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.gpu_score_run_resume() IS
'internal to gpu_score_table: stop holding query cancels and raise one that arrived meanwhile';

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
        COMMIT;
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

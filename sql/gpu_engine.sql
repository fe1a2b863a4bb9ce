-- The GPU engine's paths, tested without a GPU: pg_gpuscore.provider points
-- at a CPU mock of the GPU provider (tests/mock_provider), which implements
-- the same interface asynchronously (results appear only when waited for)
-- and reports one "device" whose free memory drops by 1 MiB per live model
-- or pipeline, so leaks show.  Covers: loading, the self-test, the two-slot
-- pipeline, 'gpu' vs 'auto', fallbacks, fault injection, and release of
-- everything on success, ERROR and cancel.
\getenv abs_srcdir PG_ABS_SRCDIR
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
\set fraud :abs_srcdir '/tests/fixtures/models/fraud_binary.json'
\set wine :abs_srcdir '/tests/fixtures/models/wine_softprob.json'
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fraud')) > 0 AS loaded,
       gpu_load_model('wine', pg_read_binary_file(:'wine')) > 0 AS loaded_too;
CREATE TABLE tx AS
SELECT g AS id, ARRAY(SELECT CASE WHEN ((g * 31 + i * 17) % 23) = 0 THEN 'NaN'::real
                                  ELSE (((g * 7919 + i * 104729) % 10007) / 100.0)::real END
                        FROM generate_series(1, 30) i) AS f
  FROM generate_series(1, 3000) g;
CREATE TABLE wine_rows AS
SELECT g AS id, ARRAY(SELECT ((g * 13 + i * 7) % 50 / 3.0)::real FROM generate_series(1, 13) i) AS f
  FROM generate_series(1, 1000) g;

-- A new session, so that the provider setting applies from its first use.
-- gpu_score is the row-by-row reference of this file: with batch_calls (its
-- own test, batch_calls.sql) it would be scored in batches, on the "GPU" too.
-- This file tests the provider loaded in the session itself (the GPU
-- service, which scores for every session, is gpu_service.sql's).
\c
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.gpu_service = off;
SET pg_gpuscore.batch_calls = off;
SELECT provider_loaded, reason, device_count, device_name, total_memory - free_memory AS used
  FROM gpu_device_info();
CREATE FUNCTION gpu_used_mib() RETURNS bigint LANGUAGE sql AS
$$SELECT (total_memory - free_memory) >> 20 FROM gpu_device_info()$$;
CREATE FUNCTION engine_rows() RETURNS TABLE (engine text, batches bigint, rows bigint, fallbacks bigint)
LANGUAGE sql AS $$SELECT * FROM gpu_engine_stats()$$;

-- 'gpu': every batch through the pipeline (3000 rows in batches of 700: two
-- slots in flight, a short last batch); scores equal the CPU engine's.
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 700;
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM gpu_score('fraud', t.f)) AS differing
  FROM gpu_score_query('fraud', 'SELECT id, f FROM tx') g JOIN tx t USING (id);
SELECT * FROM engine_rows();
-- multi-output models too
SELECT count(*) AS rows,
       count(*) FILTER (WHERE g.scores IS DISTINCT FROM gpu_predict('wine', w.f)) AS differing
  FROM gpu_predict_query('wine', 'SELECT id, f FROM wine_rows') g JOIN wine_rows w USING (id);
-- the models stay on the device; the pipelines are gone
SELECT gpu_used_mib() AS mib_in_use;

-- 'auto': batches below pg_gpuscore.gpu_min_rows stay on the CPU.
SET pg_gpuscore.device = 'auto';
SET pg_gpuscore.gpu_min_rows = 1000;
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SET pg_gpuscore.gpu_min_rows = 500;
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SELECT * FROM engine_rows();
RESET pg_gpuscore.gpu_min_rows;

-- gpu_verify_model compares the GPU engine with XGBoost as well.
SELECT engine, rows_compared, max_abs_diff, passed FROM gpu_verify_model('fraud', 2000);

-- Replacing a model frees its device copy once no statement uses it.
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fraud')) > 1 AS replaced;
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SELECT gpu_used_mib() AS mib_in_use;

-- Failures.  With 'gpu' they are ERRORs carrying the provider's message;
-- with 'auto' the batch is scored on the CPU (same scores) and a NOTICE
-- says so once per session.
SET pg_gpuscore.fault_injection = 'submit';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SET pg_gpuscore.fault_injection = 'wait';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SELECT gpu_used_mib() AS mib_after_errors;
SET pg_gpuscore.device = 'auto';
SET pg_gpuscore.gpu_min_rows = 1;
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM gpu_score('fraud', t.f)) AS differing
  FROM gpu_score_query('fraud', 'SELECT id, f FROM tx') g JOIN tx t USING (id);
SET pg_gpuscore.fault_injection = 'submit';
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM gpu_score('fraud', t.f)) AS differing
  FROM gpu_score_query('fraud', 'SELECT id, f FROM tx') g JOIN tx t USING (id);
SELECT engine, fallbacks > 0 AS fell_back FROM engine_rows() WHERE engine = 'gpu';
SET pg_gpuscore.fault_injection = 'pipeline';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SELECT gpu_used_mib() AS mib_after_errors;

-- A model that cannot be uploaded stays on the CPU for this session.
SET pg_gpuscore.fault_injection = 'oom';
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fraud')) > 2 AS replaced;
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SET pg_gpuscore.device = 'auto';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
RESET pg_gpuscore.fault_injection;

-- Cancel while batches are in flight releases the pipeline: the first two
-- batches come fast and are submitted, then the query slows down and
-- statement_timeout strikes.
SET pg_gpuscore.device = 'gpu';
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fraud')) > 3 AS replaced;
-- the new version is uploaded by a query that completes, so the timeout
-- below strikes while batches stream, however slow the machine is
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
CREATE FUNCTION slow_key(g bigint) RETURNS bigint LANGUAGE plpgsql AS
$$BEGIN IF g > 1400 THEN PERFORM pg_sleep(0.001); END IF; RETURN g; END$$;
SET statement_timeout = '500ms';
\set VERBOSITY terse
SELECT count(*) FROM gpu_score_query('fraud',
  'SELECT slow_key(row_number() OVER ()), f FROM tx, generate_series(1, 100)');
\set VERBOSITY default
RESET statement_timeout;
SELECT gpu_used_mib() AS mib_after_cancel;

-- Repeated failures leak nothing.  Each fault point 25 times, with 'gpu'
-- (every run an ERROR, caught in a subtransaction) and with 'auto' (every
-- run falls back to the CPU): afterwards the device holds exactly what it
-- held before (the resident model), and neither the backend's memory
-- contexts nor its resident set (pinned host buffers are malloc'd) grew.
CREATE FUNCTION leak_probe(OUT device_bytes bigint, OUT context_kib bigint, OUT rss_kib bigint)
LANGUAGE sql AS $$
SELECT (SELECT total_memory - free_memory FROM gpu_device_info()),
       (SELECT (sum(total_bytes) / 1024)::bigint FROM pg_backend_memory_contexts),
       substring(pg_read_file('/proc/self/status') FROM 'VmRSS:\s+(\d+) kB')::bigint$$;
CREATE FUNCTION fault_loop(fault text, mode text, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE errors int := 0;
BEGIN
  PERFORM set_config('pg_gpuscore.device', mode, true);
  PERFORM set_config('pg_gpuscore.fault_injection', fault, true);
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
    EXCEPTION WHEN OTHERS THEN errors := errors + 1;
    END;
  END LOOP;
  RETURN errors;
END$$;
SET pg_gpuscore.gpu_min_rows = 1;
SELECT fault, mode, fault_loop(fault, mode, 3) AS warmup_errors
  FROM unnest(ARRAY['submit', 'wait', 'pipeline']) fault, unnest(ARRAY['gpu', 'auto']) mode;
SELECT device_bytes AS dev0, context_kib AS ctx0, rss_kib AS rss0 FROM leak_probe() \gset
SELECT fault, mode, fault_loop(fault, mode, 25) AS errors
  FROM unnest(ARRAY['submit', 'wait', 'pipeline']) fault, unnest(ARRAY['gpu', 'auto']) mode;
SELECT device_bytes = :dev0 AS device_memory_unchanged,
       context_kib - :ctx0 < 256 AS contexts_flat,
       rss_kib - :rss0 < 8192 AS rss_flat
  FROM leak_probe();
DROP FUNCTION fault_loop(text, text, int);
DROP FUNCTION leak_probe();
SET pg_gpuscore.device = 'gpu';

-- A model only the CPU engine scores (LightGBM's linear trees; XGBoost's gblinear is in
-- onnx.sql): 'auto' keeps every batch on the CPU whatever its size, with no upload and no
-- fallback; 'gpu' refuses it.
\set lin :abs_srcdir '/tests/fixtures/models/lgb_linear_binary.txt'
SELECT gpu_load_model('lgb_lin', pg_read_binary_file(:'lin')) > 0 AS loaded;
SELECT gpu_used_mib() AS mib_before \gset
CREATE TEMP TABLE stats0 AS SELECT * FROM engine_rows();
SET pg_gpuscore.device = 'auto';
SET pg_gpuscore.gpu_min_rows = 1;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE g.score IS DISTINCT FROM gpu_score('lgb_lin', t.f[1:10])) AS differing
  FROM gpu_score_query('lgb_lin', 'SELECT id, f[1:10] FROM tx') g JOIN tx t USING (id);
SELECT s.engine, s.batches - s0.batches AS new_batches, s.fallbacks - s0.fallbacks AS new_fallbacks
  FROM engine_rows() s JOIN stats0 s0 USING (engine) ORDER BY engine;
SELECT gpu_used_mib() = :mib_before AS nothing_uploaded;
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('lgb_lin', 'SELECT id, f[1:10] FROM tx');
RESET pg_gpuscore.gpu_min_rows;
DROP TABLE stats0;

-- CatBoost models, whose leaves are summed in double as LightGBM's: through the pipeline,
-- the same scores as the CPU engine's (symmetric trees, and non-symmetric ones)
SET pg_gpuscore.device = 'gpu';
\set cbm :abs_srcdir '/tests/fixtures/models/cb_multiclass.json'
\set cbd :abs_srcdir '/tests/fixtures/models/cb_depthwise.json'
SELECT gpu_load_model('cbm', pg_read_binary_file(:'cbm')) > 0 AS loaded,
       gpu_load_model('cbd', pg_read_binary_file(:'cbd')) > 0 AS loaded_too;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE g.scores IS DISTINCT FROM gpu_predict('cbm', t.f[1:10])) AS differing
  FROM gpu_predict_query('cbm', 'SELECT id, f[1:10] FROM tx') g JOIN tx t USING (id);
SELECT count(*) AS rows,
       count(*) FILTER (WHERE g.score IS DISTINCT FROM gpu_score('cbd', t.f[1:10])) AS differing
  FROM gpu_score_query('cbd', 'SELECT id, f[1:10] FROM tx') g JOIN tx t USING (id);
SELECT gpu_drop_model('cbm'), gpu_drop_model('cbd');

-- A sticky device error disables the GPU for the rest of the session.
SET pg_gpuscore.fault_injection = 'device_lost';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
RESET pg_gpuscore.fault_injection;
SELECT provider_loaded, reason FROM gpu_device_info();
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SET pg_gpuscore.device = 'auto';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');

-- A provider that fails to load: 'gpu' says why, 'auto' uses the CPU.
\c
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.gpu_service = off;
SET pg_gpuscore.fault_injection = 'provider_load';
SELECT provider_loaded, reason FROM gpu_device_info();
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
-- 'auto' sets the GPU up only for the first batch of at least gpu_min_rows
-- rows: these 3000 rows (default 10000) never try it, so nothing to say.
SET pg_gpuscore.device = 'auto';
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SELECT engine, batches, rows, fallbacks FROM gpu_engine_stats() ORDER BY engine;
SET pg_gpuscore.gpu_min_rows = 1000;
SELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, f FROM tx');
SET pg_gpuscore.fault_injection = 'nonsense';

-- Only superusers choose the provider and inject faults.
CREATE ROLE gs_plain;
SET ROLE gs_plain;
SET pg_gpuscore.provider = '/tmp/evil.so';
SET pg_gpuscore.fault_injection = 'wait';
RESET ROLE;
DROP ROLE gs_plain;
DROP FUNCTION slow_key(bigint);
DROP FUNCTION gpu_used_mib();
DROP FUNCTION engine_rows();
DROP TABLE tx;
DROP TABLE wine_rows;

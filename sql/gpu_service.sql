-- The GPU service (src/service_*.c): one background worker per cluster whose
-- own process holds the GPU, loads each model version once and scores the
-- batches of every session and parallel worker, which hand them over in
-- shared memory.  No shared_preload_libraries: the first session that wants
-- the GPU starts it.  Tested without a GPU: the service loads the CPU mock of
-- the provider (tests/mock_provider), as a GPU machine's service loads the
-- CUDA provider.  Every batch path gives through the service what it gives
-- without it; concurrency, crashes and memory over time are in
-- tests/t/080_gpu_service.pl.
\getenv abs_srcdir PG_ABS_SRCDIR
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
\set fraud :abs_srcdir '/tests/fixtures/models/fraud_binary.json'
\set wine :abs_srcdir '/tests/fixtures/models/wine_softprob.json'
SELECT gpu_load_model('svc_fraud', pg_read_binary_file(:'fraud')) > 0 AS loaded,
       gpu_load_model('svc_wine', pg_read_binary_file(:'wine')) > 0 AS loaded_too;
CREATE TABLE svc_tx AS
SELECT g AS id, ARRAY(SELECT CASE WHEN ((g * 31 + i * 17) % 23) = 0 THEN 'NaN'::real
                                  ELSE (((g * 7919 + i * 104729) % 10007) / 100.0)::real END
                        FROM generate_series(1, 30) i) AS f
  FROM generate_series(1, 3000) g;
-- the same rows as 30 real columns f1 .. f30, for the alert trigger and gpu_score_table
DO $$
BEGIN
  EXECUTE format('CREATE TABLE svc_cols AS SELECT id, %s FROM svc_tx',
                 (SELECT string_agg(format('f[%s] AS f%s', i, i), ', ') FROM generate_series(1, 30) i));
END$$;
CREATE TABLE svc_wine_rows AS
SELECT g AS id, ARRAY(SELECT ((g * 13 + i * 7) % 50 / 3.0)::real FROM generate_series(1, 13) i) AS f
  FROM generate_series(1, 1000) g;
-- the reference: every row scored by the CPU engine, one call at a time
SET pg_gpuscore.batch_calls = off;
CREATE TABLE svc_ref AS SELECT id, gpu_score('svc_fraud', f) AS score FROM svc_tx;
CREATE TABLE svc_wine_ref AS SELECT id, gpu_predict('svc_wine', f) AS scores FROM svc_wine_rows;
RESET pg_gpuscore.batch_calls;

-- A new session, so that the provider setting applies from its first use.
-- pg_gpuscore.gpu_service is on by default: the session's first GPU use
-- starts the service (or finds it running) and waits until it has probed
-- the device.  gpu_device_info() says the session scores through it.
\c
SET pg_gpuscore.provider = :'mock';
SELECT provider_loaded, device_count, device_name, mode FROM gpu_device_info();
SHOW pg_gpuscore.gpu_service;
SELECT running, worker_pid IS NOT NULL AS has_worker, device_pid IS NOT NULL AS has_gpu_process,
       device_state, worker_pid <> pg_backend_pid() AND device_pid <> pg_backend_pid() AS other_processes
  FROM gpu_service_info();
-- the worker is a background worker the server knows; the GPU process is
-- its child, which the server does not know (so that its crash cannot take
-- the server down)
SELECT backend_type FROM pg_stat_activity WHERE pid = (SELECT worker_pid FROM gpu_service_info());
SELECT count(*) AS gpu_process_in_pg_stat_activity
  FROM pg_stat_activity WHERE pid = (SELECT device_pid FROM gpu_service_info());

CREATE FUNCTION svc_batches() RETURNS bigint LANGUAGE sql AS
$$SELECT batches FROM gpu_service_info()$$;
SELECT svc_batches() AS batches0 \gset

-- gpu_score_query and gpu_predict_query with 'gpu': every batch through the
-- service (3000 rows in batches of 700, two in flight), the same scores as
-- the CPU engine's row by row.
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 700;
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx') g JOIN svc_ref r USING (id);
SELECT count(*) AS rows, count(*) FILTER (WHERE g.scores IS DISTINCT FROM r.scores) AS differing
  FROM gpu_predict_query('svc_wine', 'SELECT id, f FROM svc_wine_rows') g JOIN svc_wine_ref r USING (id);
-- the batches went to the service: 5 of svc_fraud, 2 of svc_wine, and the
-- self-test of each model when it was first made resident
SELECT svc_batches() - :batches0 AS service_batches;
SELECT engine, batches, rows FROM gpu_engine_stats() ORDER BY engine;

-- A neural network (ONNX, cuBLAS on a GPU): its stored bytes are staged for
-- the service, which loads it itself; scores within the tolerance of the
-- parity tests (its batches are merged with others, and BLAS rounds by batch).
\set nn :abs_srcdir '/tests/fixtures/onnx/mlp_sigmoid.onnx'
SELECT gpu_load_model('svc_nn', pg_read_binary_file(:'nn'), 'onnx') > 0 AS loaded;
SET pg_gpuscore.batch_calls = off;
CREATE TABLE svc_nn_ref AS SELECT id, gpu_score('svc_nn', f) AS score FROM svc_tx;
RESET pg_gpuscore.batch_calls;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT abs(g.score - r.score) <= 1e-5 * abs(r.score) + 1e-7) AS differing
  FROM gpu_score_query('svc_nn', 'SELECT id, f FROM svc_tx') g JOIN svc_nn_ref r USING (id);

-- Batched gpu_score and gpu_predict calls, the aggregate and the alert
-- trigger: the same scores through the service.
SELECT count(*) AS rows, count(*) FILTER (WHERE s IS DISTINCT FROM r.score) AS differing
  FROM (SELECT id, gpu_score('svc_fraud', f) AS s FROM svc_tx) t JOIN svc_ref r USING (id);
SELECT count(*) AS rows, count(*) FILTER (WHERE s IS DISTINCT FROM r.scores) AS differing
  FROM (SELECT id, gpu_predict('svc_wine', f) AS s FROM svc_wine_rows) t JOIN svc_wine_ref r USING (id);
SELECT count(*) AS rows, count(*) FILTER (WHERE s.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('svc_fraud', id, f) FROM svc_tx)) s JOIN svc_ref r USING (id);
SET pg_gpuscore.gpu_min_rows = 1;
CREATE TABLE svc_alerts (key bigint, score real, model text, model_version integer,
                         alerted_at timestamptz);
SELECT string_agg(format('f%s', i), ',') AS featlist FROM generate_series(1, 30) i \gset
\set featarg 'features=' :featlist
CREATE TABLE svc_incoming (LIKE svc_cols);
CREATE TRIGGER svc_alert AFTER INSERT ON svc_incoming REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=svc_fraud', 'key_column=id',
    'threshold=0.5', 'alerts_table=svc_alerts', :'featarg');
INSERT INTO svc_incoming SELECT * FROM svc_cols;
SELECT count(*) AS alerts,
       count(*) FILTER (WHERE a.score IS DISTINCT FROM r.score) AS differing,
       count(*) = (SELECT count(*) FROM svc_ref WHERE score >= 0.5) AS all_found
  FROM svc_alerts a JOIN svc_ref r ON r.id = a.key;
RESET pg_gpuscore.gpu_min_rows;

-- gpu_score_table through the service: every row once, the same scores.
CREATE TABLE svc_sched (LIKE svc_cols);
ALTER TABLE svc_sched ADD PRIMARY KEY (id), ADD COLUMN score real;
INSERT INTO svc_sched SELECT * FROM svc_cols;
SET client_min_messages = warning;
CALL gpu_score_table('svc_fraud', 'svc_sched', 'id', batch_size => 1000,
                     features => string_to_array(:'featlist', ',')::name[]);
RESET client_min_messages;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.score IS DISTINCT FROM r.score) AS differing
  FROM svc_sched s JOIN svc_ref r USING (id);

-- gpu_model_stats: what the batch paths of every session scored with each
-- model version, kept in shared memory, with a cheap drift signal (the
-- mean, spread and histogram of the first output).
SELECT model, version, gpu_rows > 0 AS on_gpu, gpu_batches > 0 AS gpu_batches,
       device_ms >= 0 AS device_ms, last_used > now() - interval '1 hour' AS recent,
       array_length(score_histogram, 1) AS bins
  FROM gpu_model_stats WHERE model LIKE 'svc_%' ORDER BY model;
SELECT gpu_model_stats_reset();
SELECT count(*) FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx');
SELECT s.gpu_rows, s.cpu_rows, s.gpu_batches,
       abs(s.score_mean - r.mean) < 1e-6 AS mean_is_the_scores_mean,
       abs(s.score_stddev - r.sd) < 1e-6 AS stddev_is_the_scores_stddev,
       s.score_histogram = h.hist AS histogram_is_the_scores_histogram
  FROM gpu_model_stats s,
       (SELECT avg(score) AS mean, stddev_samp(score) AS sd FROM svc_ref) r,
       (SELECT array_agg(n ORDER BY b) AS hist
          FROM (SELECT b, count(*) FILTER (WHERE x.bin = b) AS n
                  FROM generate_series(0, 11) b,
                       (SELECT CASE WHEN score < 0 THEN 0 WHEN score > 1 THEN 11
                                    ELSE 1 + least(floor(score * 10)::int, 9) END AS bin
                          FROM svc_ref) x
                 GROUP BY b) y) h
 WHERE s.model = 'svc_fraud';

-- The models are resident in the service, once for all sessions.
SELECT resident_models >= 2 AS resident, resident_bytes > 0 AS bytes,
       memory_limit = pg_size_bytes(current_setting('pg_gpuscore.gpu_service_memory')) AS limit_is_the_setting
  FROM gpu_service_info();

-- Failures.  With 'gpu' they are ERRORs carrying the reason; with 'auto' the
-- batch is scored on the CPU (same scores) and a NOTICE says so once.
SET pg_gpuscore.fault_injection = 'submit';
SELECT count(*) FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx');
SET pg_gpuscore.fault_injection = 'wait';
SELECT count(*) FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx');
SET pg_gpuscore.device = 'auto';
SET pg_gpuscore.gpu_min_rows = 1;
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx') g JOIN svc_ref r USING (id);
-- A batch the service does not answer in time (the fault holds it in the
-- GPU process until the session gives up): every wait has a timeout.
SET pg_gpuscore.gpu_service_timeout = '300ms';
SET pg_gpuscore.fault_injection = 'service_stall';
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx') g JOIN svc_ref r USING (id);
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx');
SET pg_gpuscore.device = 'auto';
RESET pg_gpuscore.gpu_service_timeout;
RESET pg_gpuscore.fault_injection;
-- and the service scores on
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx') g JOIN svc_ref r USING (id);
SELECT running, device_state FROM gpu_service_info();
RESET pg_gpuscore.gpu_min_rows;

-- A model replaced: the new version is made resident at its first use and
-- scores as the CPU engine does.
SELECT gpu_load_model('svc_fraud', pg_read_binary_file(:'fraud')) > 1 AS replaced;
SET pg_gpuscore.device = 'gpu';
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx') g JOIN svc_ref r USING (id);
SELECT model, version FROM gpu_model_stats WHERE model = 'svc_fraud' ORDER BY version;

-- pg_gpuscore.gpu_service = off: the session loads the provider itself, as
-- before the service existed; the scores are the same.
\c
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.gpu_service = off;
SELECT provider_loaded, mode FROM gpu_device_info();
SET pg_gpuscore.device = 'gpu';
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM r.score) AS differing
  FROM gpu_score_query('svc_fraud', 'SELECT id, f FROM svc_tx') g JOIN svc_ref r USING (id);

-- Only superusers choose: the service is shared by every session.
CREATE ROLE svc_plain;
SET ROLE svc_plain;
SET pg_gpuscore.gpu_service = on;
SELECT gpu_model_stats_reset();
SELECT count(*) >= 0 AS plain_users_read_the_stats FROM gpu_model_stats;
RESET ROLE;
DROP ROLE svc_plain;

DROP FUNCTION svc_batches();
DROP TABLE svc_nn_ref, svc_tx, svc_cols, svc_wine_rows, svc_ref, svc_wine_ref, svc_alerts, svc_incoming, svc_sched;
SELECT gpu_drop_model('svc_fraud'), gpu_drop_model('svc_wine'), gpu_drop_model('svc_nn');

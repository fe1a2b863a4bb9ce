-- pg_gpuscore.device chooses the engine for batch scoring: 'auto' and 'cpu'
-- score on the CPU; 'gpu' scores on the GPU through the CUDA provider, or
-- raises an ERROR saying why there is no GPU engine.  This file's output is
-- the same with and without a GPU.
\getenv abs_srcdir PG_ABS_SRCDIR
\set m :abs_srcdir '/tests/fixtures/models/iris_softmax.json'
\set f :abs_srcdir '/tests/fixtures/models/fraud_binary.json'
SELECT gpu_load_model('iris', pg_read_binary_file(:'m')) > 0 AS loaded,
       gpu_load_model('fraud', pg_read_binary_file(:'f')) > 0 AS loaded_too;
SHOW pg_gpuscore.device;
SHOW pg_gpuscore.batch_size;

-- gpu_device_info() says whether the provider loaded, and if not, why.
SELECT provider_loaded = (reason IS NULL) AS consistent,
       provider_loaded = (device_count > 0) AS has_devices_when_loaded
  FROM gpu_device_info();

SET pg_gpuscore.device = 'cpu';
SELECT count(*) FROM gpu_score_query('iris', 'SELECT 1, 5.1, 3.5, 1.4, 0.2');

-- Forcing the GPU: scores equal the CPU's where a GPU is present; an ERROR
-- (feature_not_supported, with the reason in the detail) where not.
CREATE TABLE fraud_rows AS
SELECT g AS id, ARRAY(SELECT CASE WHEN random() < 0.05 THEN 'NaN'::real
                                  ELSE (random() * 100)::real END
                        FROM generate_series(1, 30) WHERE g > 0) AS f
  FROM generate_series(1, 3000) g;
DO $$
DECLARE
  loaded boolean;
  gpu_ok boolean;
  n_diff bigint;
BEGIN
  SELECT provider_loaded INTO loaded FROM gpu_device_info();
  BEGIN
    SET LOCAL pg_gpuscore.device = 'gpu';
    SELECT count(*) INTO n_diff
      FROM gpu_score_query('fraud', 'SELECT id, f FROM fraud_rows') g
      JOIN fraud_rows r USING (id)
     WHERE abs(g.score - gpu_score('fraud', r.f)) > 1e-6;
    gpu_ok := (n_diff = 0);
  EXCEPTION WHEN feature_not_supported THEN
    gpu_ok := NULL;
  END;
  RAISE NOTICE 'gpu engine matches gpu_device_info: %',
    CASE WHEN loaded THEN gpu_ok IS TRUE ELSE gpu_ok IS NULL END;
END $$;
DROP TABLE fraud_rows;

-- Single rows always use the CPU engine, whatever the setting.
SET pg_gpuscore.device = 'gpu';
SELECT gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]);
SET pg_gpuscore.device = 'tpu';
RESET pg_gpuscore.device;

-- Caps are superuser settings.
SET pg_gpuscore.max_trees = 5;
RESET pg_gpuscore.max_trees;
CREATE ROLE gs_plain;
SET ROLE gs_plain;
SET pg_gpuscore.max_trees = 5000000;
SET pg_gpuscore.batch_size = 1024;
RESET ROLE;
DROP ROLE gs_plain;
RESET pg_gpuscore.batch_size;

-- pg_gpuscore.batch_memory bounds one batch of a wide model: 'fraud' has 30
-- features and 1 score, 124 bytes a row, so 64kB holds 528 rows and 3000
-- rows take 6 batches, in gpu_score_query as in the aggregate.  A batch never
-- holds fewer rows than gpu_min_rows (so 'auto' still uses the GPU): with
-- its default of 10000, the 3000 rows are one batch again.
SHOW pg_gpuscore.batch_memory;
CREATE TABLE fraud_rows AS
SELECT g AS id, ARRAY(SELECT (random() * 100)::real FROM generate_series(1, 30) WHERE g > 0) AS f
  FROM generate_series(1, 3000) g;
CREATE FUNCTION batches_so_far() RETURNS bigint LANGUAGE sql AS
$$SELECT sum(batches)::bigint FROM gpu_engine_stats()$$;
SET pg_gpuscore.device = 'cpu';
SET pg_gpuscore.batch_memory = '64kB';
SET pg_gpuscore.gpu_min_rows = 100;
SELECT batches_so_far() AS b0 \gset
SELECT count(*) AS scored, batches_so_far() - :b0 AS batches
  FROM gpu_score_query('fraud', 'SELECT id, f FROM fraud_rows');
SELECT batches_so_far() AS b0 \gset
-- (gpu_score row by row is the reference: not scored in batches of its own)
SET pg_gpuscore.batch_calls = off;
SELECT count(*) FILTER (WHERE s.score = gpu_score('fraud', r.f)) AS agree, batches_so_far() - :b0 AS batches
  FROM gpu_scores((SELECT gpu_score_agg('fraud', id, f) FROM fraud_rows)) s JOIN fraud_rows r USING (id);
RESET pg_gpuscore.batch_calls;
RESET pg_gpuscore.gpu_min_rows;
SELECT batches_so_far() AS b0 \gset
SELECT count(*) AS scored, batches_so_far() - :b0 AS batches
  FROM gpu_score_query('fraud', 'SELECT id, f FROM fraud_rows');
SET pg_gpuscore.batch_memory = '32kB';
RESET pg_gpuscore.batch_memory;
RESET pg_gpuscore.device;
DROP FUNCTION batches_so_far();
DROP TABLE fraud_rows;

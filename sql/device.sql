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

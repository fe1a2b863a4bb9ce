-- In-PostgreSQL GPU parity, run by tests/gpu/device_run.sh on a machine with
-- a GPU (where there is none, 'gpu' mode makes it fail with "no GPU engine").
-- Every fixture model (XGBoost, LightGBM, CatBoost, ONNX-ML trees) is scored through
-- gpu_predict_query with the GPU forced and compared with the CPU engine
-- (gpu_predict, row by row: identical) and with the expected outputs of the
-- library that made it; then a 1,000,003-row table, NaNs included.
\getenv abs_srcdir PG_ABS_SRCDIR
-- GS_TEST_PROVIDER names another provider (the CPU mock, to test this file without a GPU)
\getenv provider GS_TEST_PROVIDER
\if :{?provider}
SET pg_gpuscore.provider = :'provider';
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_gpuscore;
SELECT provider_loaded, device_count > 0 AS has_device FROM gpu_device_info();
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 4099;

CREATE TEMP TABLE parity (model text, n_rows int, gpu_vs_cpu int, gpu_vs_xgboost int,
                          cpu_only boolean DEFAULT false);
-- A case's model is models/<name>.json (XGBoost or CatBoost), .ubj or .txt (LightGBM) or onnx/trees/<name>.onnx,
-- loaded with format 'auto'; its .meta gives features, outputs, objective and, for models
-- whose reference sums differently (LightGBM, ONNX AVERAGE), the tolerance against it (last,
-- after an objective of one or two words).  Models only the CPU engine scores (LightGBM's
-- linear trees, CatBoost models with categorical features) are refused by 'gpu' with 0A000:
-- recorded as cpu_only.
CREATE FUNCTION pg_temp.check_gpu(model text, dir text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  meta text[];
  nf int;
  nout int;
  tol float8;
  file text;
  base text := model;
  missing real;
BEGIN
  -- <model>_m999: the cases of <model> loaded with missing_value -999
  IF model LIKE '%\_m999' THEN
    base := left(model, -5);
    missing := -999;
  END IF;
  SELECT f INTO file
    FROM unnest(ARRAY['/models/' || base || '.json', '/models/' || base || '.ubj',
                      '/models/' || base || '.txt', '/onnx/trees/' || base || '.onnx']) WITH ORDINALITY u(f, i)
   WHERE (pg_stat_file(dir || f, true)).size IS NOT NULL ORDER BY i LIMIT 1;
  IF file IS NULL THEN
    RAISE EXCEPTION 'no model file for case %', model;
  END IF;
  PERFORM gpu_load_model(model, pg_read_binary_file(dir || file), 'auto', missing);
  meta := regexp_split_to_array(btrim(pg_read_file(dir || '/cases/' || model || '.meta'), E' \n'), ' ');
  nf := meta[1]::int;
  nout := meta[2]::int;
  tol := CASE WHEN cardinality(meta) > 3 AND translate(meta[cardinality(meta)], '0123456789.eE+-', '') = ''
              THEN meta[cardinality(meta)]::float8 ELSE 1e-6 END;
  CREATE TEMP TABLE cases_raw (line text);
  EXECUTE format('COPY cases_raw FROM %L', dir || '/cases/' || model || '.csv');
  CREATE TEMP TABLE cases AS
    SELECT a[1]::bigint AS id, a[2:nf + 1]::real[] AS f, a[nf + 2:nf + 1 + nout]::real[] AS want
      FROM (SELECT string_to_array(line, ',') AS a FROM cases_raw) s;
  BEGIN
    INSERT INTO parity
    SELECT model, count(*),
           count(*) FILTER (WHERE q.scores IS DISTINCT FROM gpu_predict(model, c.f)),
           count(*) FILTER (WHERE EXISTS (SELECT 1 FROM unnest(q.scores, c.want) u(got, w)
                                           WHERE abs(got - w) > tol * greatest(1, abs(w))))
      FROM gpu_predict_query(model, 'SELECT id, f FROM cases') q JOIN cases c USING (id);
  EXCEPTION WHEN feature_not_supported THEN
    IF SQLERRM NOT LIKE '%which only the CPU engine scores' THEN
      RAISE;
    END IF;
    INSERT INTO parity (model, n_rows, cpu_only) VALUES (model, 0, true);
  END;
  DROP TABLE cases_raw;
  DROP TABLE cases;
END $$;
SELECT count(pg_temp.check_gpu(regexp_replace(m, '\.meta$', ''), :'abs_srcdir' || '/fixtures')) >= 0 AS done
  FROM pg_ls_dir(:'abs_srcdir' || '/fixtures/cases') m WHERE m LIKE '%.meta';
SELECT count(*) = (SELECT count(*) FROM pg_ls_dir(:'abs_srcdir' || '/fixtures/cases') m WHERE m LIKE '%.meta')
       AND count(*) >= 100 AS all_models_checked, sum(n_rows) > 0 AS some_rows,
       sum(gpu_vs_cpu) AS rows_gpu_differs_from_cpu,
       sum(gpu_vs_xgboost) AS rows_gpu_differs_from_xgboost
  FROM parity;
SELECT * FROM parity WHERE gpu_vs_cpu > 0 OR gpu_vs_xgboost > 0;
SELECT model AS scored_by_the_cpu_engine_only FROM parity WHERE cpu_only ORDER BY model;

-- A million rows (and 3), NaNs included, GPU vs CPU engine.
SELECT gpu_load_model('big', pg_read_binary_file(:'abs_srcdir' || '/fixtures/models/fraud_binary.json')) > 0 AS loaded;
CREATE TEMP TABLE big AS
SELECT g::bigint AS id, ARRAY(SELECT CASE WHEN ((g * 31 + i * 17) % 23) = 0 THEN 'NaN'::real
                                  ELSE (((g * 7919 + i * 104729) % 10007) / 100.0)::real END
                                FROM generate_series(1, 30) i) AS f
  FROM generate_series(1::bigint, 1000003) g;
SET pg_gpuscore.batch_size = 65536;
CREATE TEMP TABLE big_gpu AS SELECT * FROM gpu_score_query('big', 'SELECT id, f FROM big');
SET pg_gpuscore.device = 'cpu';
CREATE TEMP TABLE big_cpu AS SELECT * FROM gpu_score_query('big', 'SELECT id, f FROM big');
SELECT count(*) AS rows, count(*) FILTER (WHERE g.score IS DISTINCT FROM c.score) AS differing
  FROM big_gpu g JOIN big_cpu c USING (id);
SET pg_gpuscore.device = 'gpu';

-- XGBoost's own predictor against the GPU engine.
SELECT engine, passed FROM gpu_verify_model('big', 100000) ORDER BY engine;
SELECT engine, batches > 0 AS used FROM gpu_engine_stats() ORDER BY engine;

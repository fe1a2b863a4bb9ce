-- gpu_verify_model compares our engine with XGBoost's own predictor (C API)
-- on generated rows around the model's thresholds, with missing values.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
SELECT gpu_load_model(m, pg_read_binary_file(:'models' || f)) > 0 AS loaded
  FROM (VALUES ('fraud', 'fraud_binary.json'), ('fraud_ubj', 'fraud_binary.ubj'),
               ('wine', 'wine_softprob.json'), ('iris', 'iris_softmax.json'),
               ('deep', 'lossguide_deep.json'), ('dart', 'dart_binary.json'),
               ('rf', 'rf_parallel.json'), ('gamma', 'obj_gamma.json'),
               ('demo', 'demo_fraud.ubj')) v(m, f);

SELECT model, version > 0 AS versioned, engine, rows_compared, outputs_compared, max_abs_diff <= 1e-6 AS close,
       mismatches, xgboost_version <> '' AS has_version, passed
  FROM gpu_verify_model('fraud') WHERE engine = 'cpu';
SELECT v.model, v.rows_compared, v.outputs_compared, v.mismatches, v.passed
  FROM unnest(ARRAY['fraud_ubj', 'wine', 'iris', 'deep', 'dart', 'rf', 'gamma', 'demo']) m,
       gpu_verify_model(m, 3000) v
 WHERE v.engine = 'cpu';
-- more rows than one internal chunk
SELECT rows_compared, passed FROM gpu_verify_model('iris', 70000) WHERE engine = 'cpu';
-- where a GPU is present, a second row compares the GPU engine with XGBoost too
SELECT count(*) FILTER (WHERE engine = 'gpu') =
       (SELECT count(*) FROM gpu_device_info() WHERE provider_loaded) AS gpu_row_iff_gpu,
       bool_and(passed) AS all_passed
  FROM gpu_verify_model('wine', 500);

SELECT * FROM gpu_verify_model('fraud', 0);
SELECT * FROM gpu_verify_model('nope');

-- Scores equal XGBoost's own predictions (made by tests/fixtures/gen_fixtures.py
-- with the real XGBoost) on every fixture model, through gpu_score, gpu_predict
-- and gpu_score_query.  Each line: the model, rows compared, and whether every
-- output is within 1e-6 (relative above 1).
\getenv abs_srcdir PG_ABS_SRCDIR
SET client_min_messages = warning;
CREATE TEMP TABLE parity (model text, file text, n_rows int, ok_row boolean, ok_query boolean);

CREATE FUNCTION pg_temp.check_parity(model text, file text, dir text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  meta text[];
  nf int;
  nout int;
  n int;
  bad_row int;
  bad_query int;
BEGIN
  PERFORM gpu_load_model(model, pg_read_binary_file(dir || '/models/' || file));
  meta := regexp_split_to_array(trim(pg_read_file(dir || '/cases/' || model || '.meta')), ' ');
  nf := meta[1]::int;
  nout := meta[2]::int;
  CREATE TEMP TABLE cases_raw (line text);
  EXECUTE format('COPY cases_raw FROM %L', dir || '/cases/' || model || '.csv');
  CREATE TEMP TABLE cases AS
    SELECT a[1]::bigint AS id, a[2:nf + 1]::real[] AS f, a[nf + 2:nf + 1 + nout]::real[] AS want
      FROM (SELECT string_to_array(line, ',') AS a FROM cases_raw) s;
  SELECT count(*) INTO n FROM cases;
  SELECT count(*) INTO bad_row FROM cases
   WHERE EXISTS (SELECT 1 FROM unnest(gpu_predict(model, f), want) AS u(got, w)
                  WHERE abs(got - w) > 1e-6 * greatest(1, abs(w)) OR got IS NULL);
  SELECT count(*) INTO bad_query
    FROM gpu_predict_query(model, 'SELECT id, f FROM cases') q JOIN cases c USING (id)
   WHERE EXISTS (SELECT 1 FROM unnest(q.scores, c.want) AS u(got, w)
                  WHERE abs(got - w) > 1e-6 * greatest(1, abs(w)) OR got IS NULL);
  INSERT INTO parity VALUES (model, file, n, bad_row = 0, bad_query = 0);
  DROP TABLE cases_raw;
  DROP TABLE cases;
END $$;

SELECT pg_temp.check_parity(m, m || '.json', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['fraud_binary', 'fraud_binary_base03', 'breast_cancer', 'wine_softprob',
                    'iris_softmax', 'diabetes_reg', 'lossguide_deep', 'stumps', 'tiny_base',
                    'obj_logitraw', 'obj_hinge', 'obj_reg_logistic', 'obj_squaredlogerror',
                    'obj_pseudohuber', 'obj_absoluteerror', 'obj_poisson', 'obj_gamma',
                    'obj_tweedie', 'obj_rank_pairwise', 'obj_rank_ndcg', 'rf_parallel',
                    'dart_binary']) m;
SELECT pg_temp.check_parity(m, m || '.ubj', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['fraud_binary', 'breast_cancer', 'wine_softprob', 'diabetes_reg',
                    'demo_fraud']) m;
-- models saved by XGBoost 2.1.4 (tests/fixtures/gen_fixtures_xgb2.py), JSON and UBJ
SELECT pg_temp.check_parity(m, m || ext, :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['x2_fraud_binary', 'x2_wine_softprob', 'x2_diabetes_reg', 'x2_poisson',
                    'x2_absoluteerror', 'x2_logitraw', 'x2_dart', 'x2_rf', 'x2_lossguide']) m,
       unnest(ARRAY['.json', '.ubj']) ext;
SELECT model, file, n_rows, ok_row, ok_query FROM parity ORDER BY file;

-- gpu_score on the fraud model, whose rows hold NaNs and values exactly on split thresholds.
SELECT gpu_load_model('fraud', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/fraud_binary.json')) > 0 AS loaded;
CREATE TEMP TABLE fraud_raw (line text);
\set fraud_csv :abs_srcdir '/tests/fixtures/cases/fraud_binary.csv'
COPY fraud_raw FROM :'fraud_csv';
SELECT count(*) AS rows,
       count(*) FILTER (WHERE 'NaN' = ANY (a[2:31])) AS rows_with_missing,
       max(abs(gpu_score('fraud', a[2:31]::real[]) - a[32]::real)) <= 1e-6 AS all_within_1e6
  FROM (SELECT string_to_array(line, ',') AS a FROM fraud_raw) s;

-- gpu_explain: why a row got its score.  For a tree ensemble, each
-- feature's contribution to the row's margin (SHAP values: XGBoost's
-- predict(pred_contribs=True), LightGBM's predict(pred_contrib=True)) and
-- the expected margin over the training rows; per output they add up to the
-- margin, the score before the sigmoid or softmax.  The references are the
-- libraries' own (tests/fixtures/gen_fixtures_shap.py).
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures'
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fx' || '/models/fraud_binary.json')) > 0 AS loaded;

-- the fixture's rows (id, 30 features; NaN is missing) and XGBoost 1.7.4's
-- contributions for them (31 values: the features, then the bias)
CREATE TEMP TABLE lines (file text, line text);
\set f :fx '/cases/fraud_binary.csv'
COPY lines (line) FROM :'f';
UPDATE lines SET file = 'rows' WHERE file IS NULL;
\set f :fx '/shap/fraud_binary.csv'
COPY lines (line) FROM :'f';
UPDATE lines SET file = 'xgboost' WHERE file IS NULL;
CREATE TEMP TABLE tx AS
  SELECT a[1]::int AS id, a[2:31]::real[] AS x FROM (SELECT string_to_array(line, ',') FROM lines WHERE file = 'rows') s(a);
CREATE TEMP TABLE xgb AS
  SELECT a[1]::int AS id, a[2:32]::float8[] AS phi FROM (SELECT string_to_array(line, ',') FROM lines WHERE file = 'xgboost') s(a);

-- Reason codes: the three features that pushed transaction 7 most towards
-- fraud, with its values
SELECT feature, value, round(contribution::numeric, 4) AS contribution
  FROM tx, gpu_explain('fraud', tx.x) e
 WHERE tx.id = 7 AND e.feature IS NOT NULL
 ORDER BY e.contribution DESC LIMIT 3;

-- every row agrees with XGBoost's, and adds up to the margin: the log-odds
-- of gpu_score
SELECT count(DISTINCT tx.id) AS rows, count(*) AS contributions,
       max(abs(e.contribution - xgb.phi[coalesce(e.feature, 31)]) / greatest(1, abs(xgb.phi[coalesce(e.feature, 31)]))) < 2e-5 AS agrees_with_xgboost
  FROM tx JOIN xgb USING (id), gpu_explain('fraud', tx.x) e;
SELECT bool_and(abs(margin - ln(p / (1 - p))) < 1e-3) AS adds_up_to_the_margin, count(*) AS rows
  FROM (SELECT (SELECT sum(contribution) FROM gpu_explain('fraud', tx.x)) AS margin, gpu_score('fraud', tx.x) AS p
          FROM tx) s
 WHERE p BETWEEN 1e-5 AND 1 - 1e-5;
-- the bias is the same for every row: the expected margin
SELECT count(DISTINCT contribution) AS biases FROM tx, gpu_explain('fraud', tx.x) WHERE feature IS NULL;

-- A missing feature (NULL or NaN) shows value NULL; it still gets a share,
-- the branch a missing value takes.  Any numeric array type works.
SELECT feature, value IS NULL AS missing
  FROM gpu_explain('fraud', ARRAY[NULL, 'NaN', 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]::float8[])
 WHERE feature <= 3;
SELECT count(*) FROM gpu_explain('fraud', array_fill(1, ARRAY[30])::int[]);
SELECT count(*) FROM gpu_explain('fraud', array_fill(1, ARRAY[30])::numeric[]);
SELECT (SELECT array_agg(contribution ORDER BY feature) FROM gpu_explain('fraud', array_fill(1, ARRAY[30])::smallint[])) =
       (SELECT array_agg(contribution ORDER BY feature) FROM gpu_explain('fraud', array_fill(1, ARRAY[30])::int[]))
       AS smallint_same_as_int;

-- Multi-class: one set of rows per output (class), each adding up to that
-- class's margin.  LightGBM 4.7, against its pred_contrib; feature_name
-- comes from the model.
SELECT gpu_load_model('classes', pg_read_binary_file(:'fx' || '/models/lgb_multiclass.txt')) > 0 AS loaded;
TRUNCATE lines;
\set f :fx '/cases/lgb_multiclass.csv'
COPY lines (line) FROM :'f';
UPDATE lines SET file = 'rows' WHERE file IS NULL;
\set f :fx '/shap/lgb_multiclass.csv'
COPY lines (line) FROM :'f';
UPDATE lines SET file = 'lightgbm' WHERE file IS NULL;
CREATE TEMP TABLE mc AS
  SELECT a[1]::int AS id, a[2:11]::real[] AS x FROM (SELECT string_to_array(line, ',') FROM lines WHERE file = 'rows') s(a);
CREATE TEMP TABLE lgb AS
  SELECT a[1]::int AS id, a[2:34]::float8[] AS phi FROM (SELECT string_to_array(line, ',') FROM lines WHERE file = 'lightgbm') s(a);
SELECT output, feature, feature_name FROM gpu_explain('classes', (SELECT x FROM mc WHERE id = 0))
 WHERE feature IN (1, 10) OR feature IS NULL ORDER BY output, feature;
SELECT count(DISTINCT mc.id) AS rows, count(*) AS contributions,
       max(abs(e.contribution - lgb.phi[(e.output - 1) * 11 + coalesce(e.feature, 11)])
           / greatest(1, abs(lgb.phi[(e.output - 1) * 11 + coalesce(e.feature, 11)]))) < 2e-6 AS agrees_with_lightgbm
  FROM mc JOIN lgb USING (id), gpu_explain('classes', mc.x) e;

-- gpu_explain_query: the rows of a query, shaped as for gpu_score_query (a
-- key, then the features, or one array of them).  Per row and output the
-- features by decreasing contribution (rank 1 pushed the score up most),
-- then the expected margin (rank NULL); top keeps the first top reasons.
SELECT id, rank, feature, round(contribution::numeric, 4) AS contribution
  FROM gpu_explain_query('fraud', 'SELECT id, x FROM tx WHERE id IN (7, 8)', top => 3)
 ORDER BY id, rank;
-- the same numbers as gpu_explain, in rank order, for every row
SELECT count(*) AS contributions,
       count(*) FILTER (WHERE q.contribution IS DISTINCT FROM e.contribution) AS differ,
       bool_and(q.rank IS NOT DISTINCT FROM e.rank) AS ranked_by_contribution
  FROM gpu_explain_query('fraud', 'SELECT id, x FROM tx') q
  JOIN (SELECT tx.id, e.feature, e.contribution,
               CASE WHEN e.feature IS NOT NULL THEN
                 row_number() OVER (PARTITION BY tx.id, e.feature IS NULL ORDER BY e.contribution DESC, e.feature) END AS rank
          FROM tx, gpu_explain('fraud', tx.x) e) e
    ON q.id = e.id AND q.feature IS NOT DISTINCT FROM e.feature;

-- Category columns as text, looked up by name as in gpu_score_query:
-- LightGBM 4.7 trained on a DataFrame with three category columns, against
-- its pred_contrib on the same rows given as codes
SELECT gpu_load_model('lcat', pg_read_binary_file(:'fx' || '/models/lgb_catnames.txt')) > 0 AS loaded;
TRUNCATE lines;
\set f :fx '/cases/lgb_catnames.csv'
COPY lines (line) FROM :'f';
UPDATE lines SET file = 'rows' WHERE file IS NULL;
\set f :fx '/shap/lgb_catnames.csv'
COPY lines (line) FROM :'f';
UPDATE lines SET file = 'lightgbm' WHERE file IS NULL;
CREATE TABLE payments AS
  SELECT a[1]::int AS id, a[2]::real AS amount, c2.category AS country, a[4]::real AS hour,
         c4.category AS mcc, c5.category::varchar AS channel
    FROM (SELECT string_to_array(line, ',') FROM lines WHERE file = 'rows') s(a)
    LEFT JOIN gpu_model_categories('lcat') c2 ON c2.feature = 2 AND c2.code::text = a[3]
    LEFT JOIN gpu_model_categories('lcat') c4 ON c4.feature = 4 AND c4.code::text = a[5]
    LEFT JOIN gpu_model_categories('lcat') c5 ON c5.feature = 5 AND c5.code::text = a[6];
CREATE TEMP TABLE lcat_ref AS
  SELECT a[1]::int AS id, a[2:7]::float8[] AS phi FROM (SELECT string_to_array(line, ',') FROM lines WHERE file = 'lightgbm') s(a);
SELECT * FROM payments WHERE id IN (0, 2) ORDER BY id;
-- value is the model's input, the code of a category; category its name
SELECT rank, feature_name, value, category, round(contribution::numeric, 4) AS contribution
  FROM gpu_explain_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM payments WHERE id = 0')
 ORDER BY rank;
-- the same for a feature array of codes (gpu_explain); unknown codes have no name
SELECT feature, value, category FROM gpu_explain('lcat', ARRAY[33.2, 2, 4, 2, 0]::real[]) WHERE feature IN (2, 4, 5)
UNION ALL
SELECT feature, value, category FROM gpu_explain('lcat', ARRAY[33.2, 99, 4, -1, 2.7]::real[]) WHERE feature IN (2, 4, 5)
ORDER BY 1, 2;
SELECT count(DISTINCT q.id) AS rows, count(*) AS contributions,
       max(abs(q.contribution - r.phi[coalesce(q.feature, 6)]) / greatest(1, abs(r.phi[coalesce(q.feature, 6)]))) < 2e-6 AS agrees_with_lightgbm
  FROM gpu_explain_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM payments') q
  JOIN lcat_ref r USING (id);

-- gpu_alert_trigger's argument reasons=N: each alert also gets the names of
-- the feature columns that pushed its score up most (positive contributions,
-- largest first, at most N) in the alerts table's reasons text[] column
CREATE TABLE payments_in (LIKE payments);
CREATE TABLE payment_alerts (key bigint, score real, model text, model_version integer,
                             alerted_at timestamptz, reasons text[]);
CREATE TRIGGER alert_payments AFTER INSERT ON payments_in REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=lcat', 'key_column=id', 'threshold=0.7',
                                                        'alerts_table=payment_alerts', 'reasons=3');
INSERT INTO payments_in SELECT * FROM payments;
SELECT key, round(score::numeric, 3) AS score, reasons FROM payment_alerts ORDER BY key LIMIT 4;
-- the same as gpu_explain_query's top three, where positive
SELECT count(*) AS alerts, count(*) FILTER (WHERE a.reasons = q.reasons) AS same_reasons
  FROM payment_alerts a
  JOIN (SELECT id, array_agg(feature_name ORDER BY rank) FILTER (WHERE contribution > 0) AS reasons
          FROM gpu_explain_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM payments', top => 3)
         GROUP BY id) q ON q.id = a.key;
SELECT count(*) = (SELECT count(*) FROM payment_alerts) AS every_alert_above_threshold
  FROM gpu_score_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM payments') WHERE score >= 0.7;
-- flag_when=below alerts on scores under the threshold, and the reasons are
-- then the features that pulled the score down most (negative contributions,
-- most negative first)
CREATE TABLE payments_low (LIKE payments);
CREATE TABLE low_alerts (LIKE payment_alerts);
CREATE TRIGGER alert_low AFTER INSERT ON payments_low REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=lcat', 'key_column=id', 'threshold=0.3',
                                                        'flag_when=below', 'alerts_table=low_alerts',
                                                        'reasons=2');
INSERT INTO payments_low SELECT * FROM payments;
SELECT count(*) AS alerts, bool_and(a.score < 0.3) AS all_below,
       count(*) FILTER (WHERE a.reasons = q.reasons) AS same_reasons
  FROM low_alerts a
  JOIN (SELECT id, coalesce((array_agg(feature_name ORDER BY contribution, rank)
                             FILTER (WHERE contribution < 0))[1:2], '{}') AS reasons
          FROM gpu_explain_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM payments')
         WHERE feature IS NOT NULL GROUP BY id) q ON q.id = a.key;
SELECT count(*) = (SELECT count(*) FROM low_alerts) AS every_row_below_alerted
  FROM gpu_score_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM payments') WHERE score < 0.3;
DROP TABLE payments_low, low_alerts;
-- reasons need the column and a number from 1 to 100
CREATE TABLE plain_alerts (key bigint, score real, model text, model_version integer, alerted_at timestamptz);
CREATE TRIGGER alert_plain AFTER INSERT ON payments_in REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=lcat', 'key_column=id', 'threshold=0.7',
                                                        'alerts_table=plain_alerts', 'reasons=3');
INSERT INTO payments_in SELECT * FROM payments LIMIT 1;
DROP TRIGGER alert_plain ON payments_in;
CREATE TRIGGER alert_zero AFTER INSERT ON payments_in REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=lcat', 'key_column=id', 'threshold=0.7',
                                                        'alerts_table=payment_alerts', 'reasons=0');
INSERT INTO payments_in SELECT * FROM payments LIMIT 1;
DROP TRIGGER alert_zero ON payments_in;
DROP TABLE plain_alerts;
-- and a model with one output: multi:softmax scores the class, and each
-- class has contributions of its own, none of them the score's
SELECT gpu_load_model('iris', pg_read_binary_file(:'fx' || '/models/iris_softmax.json')) > 0 AS loaded;
CREATE TABLE flowers (id bigint, f0 real, f1 real, f2 real, f3 real);
CREATE TRIGGER alert_iris AFTER INSERT ON flowers REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=iris', 'key_column=id', 'threshold=1',
                                                        'alerts_table=payment_alerts', 'reasons=2',
                                                        'features=f0,f1,f2,f3');
INSERT INTO flowers VALUES (1, 6.3, 3.3, 6.0, 2.5);
DROP TABLE flowers;

-- A replaced model is explained as its new version, in the same session.
-- Each model version's explainer (its parse with covers) is kept once per
-- session, in a memory context of its own, and freed with the version.
SELECT count(*) FROM gpu_explain('fraud', (SELECT x FROM tx WHERE id = 7));
SELECT ident, parent, count(*) AS explainers FROM pg_backend_memory_contexts
 WHERE name = 'pg_gpuscore explanations' GROUP BY 1, 2 ORDER BY 1;
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fx' || '/models/lgb_binary.txt')) > 0 AS replaced;
SELECT count(*) FROM gpu_explain('fraud', (SELECT x[1:10] FROM tx WHERE id = 7));
SELECT count(*) FROM gpu_explain('fraud', (SELECT x[1:10] FROM tx WHERE id = 8));
SELECT ident, count(*) AS explainers FROM pg_backend_memory_contexts
 WHERE parent = 'pg_gpuscore model' AND name = 'pg_gpuscore explanations' GROUP BY 1 ORDER BY 1;

-- Explaining is slow for big models: long runs are cancellable between rows
SET statement_timeout = '20ms';
SELECT count(*) FROM gpu_explain_query('classes', 'SELECT id, x FROM mc, generate_series(1, 100)');
RESET statement_timeout;

-- Errors
SELECT * FROM gpu_explain('no_such_model', ARRAY[1, 2]::real[]);
SELECT * FROM gpu_explain(NULL, ARRAY[1, 2]::real[]);
SELECT count(*) FROM gpu_explain('classes', NULL::real[]);
SELECT * FROM gpu_explain('classes', ARRAY[1, 2]::real[]);
SELECT * FROM gpu_explain('classes', ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 'Infinity']::real[]);
SELECT * FROM gpu_explain('classes', ARRAY[]::real[]);
SELECT * FROM gpu_explain('classes', array_fill(1, ARRAY[2, 5])::real[]);
SELECT count(*) FROM gpu_explain('classes', array_fill(1, ARRAY[1000000])::real[]);
SELECT * FROM gpu_explain('', ARRAY[1]::real[]);
-- every feature missing: a row like any other
SELECT count(*), count(value) AS values FROM gpu_explain('classes', array_fill('NaN'::real, ARRAY[10]));
-- a neural network has no trees; an ONNX-ML forest keeps no covers
SELECT gpu_load_model('net', pg_read_binary_file(:'fx' || '/onnx/mlp_sigmoid.onnx'), 'onnx') > 0 AS loaded;
SELECT * FROM gpu_explain('net', array_fill(0, ARRAY[30])::real[]);
SELECT gpu_load_model('onnx_forest', pg_read_binary_file(:'fx' || '/onnx/trees/onnx_cb_binary.onnx')) > 0 AS loaded;
SELECT * FROM gpu_explain('onnx_forest', array_fill(0, ARRAY[(SELECT n_features FROM gpu_models WHERE name = 'onnx_forest')])::real[]);
-- covers that do not add up (a root whose children hold more rows than it
-- does) leave a model scorable but not explainable
SELECT gpu_load_model('odd_covers', convert_to(replace(convert_from(pg_read_binary_file(:'fx' || '/models/stumps.json'), 'UTF8'),
                      '"sum_hessian":[3.75E3', '"sum_hessian":[3.76E3'), 'UTF8')) > 0 AS loaded;
SELECT gpu_score('odd_covers', array_fill(1, ARRAY[30])::real[]) BETWEEN 0 AND 1 AS scores;
SELECT * FROM gpu_explain('odd_covers', array_fill(1, ARRAY[30])::real[]);
-- a row's explanation is one value per feature and class: a model that
-- declares 100000 classes over 2000 features would need 1.6 GB for it
SELECT gpu_load_model('wide', convert_to(replace(replace(replace(convert_from(pg_read_binary_file(:'fx' || '/models/stumps.json'), 'UTF8'),
                      '"num_class":"0"', '"num_class":"100000"'), '"num_feature":"30"', '"num_feature":"2000"'),
                      '"binary:logistic"', '"multi:softprob"'), 'UTF8')) > 0 AS loaded;
SELECT * FROM gpu_explain('wide', array_fill(1, ARRAY[2000])::real[]);
SELECT * FROM gpu_explain_query('fraud', 'SELECT id, x FROM tx', top => 0);
SELECT * FROM gpu_explain_query('lcat', 'SELECT id, amount, country FROM payments');
SELECT * FROM gpu_explain_query('lcat', NULL);
SELECT * FROM gpu_explain_query('lcat', 'CREATE TEMP TABLE nothing ()');
SELECT * FROM gpu_explain_query('net', 'SELECT 1, x FROM tx');
-- the SQLSTATEs: 42704, 22004, 22023, 22003, 0A000, 0A000
\set VERBOSITY sqlstate
SELECT * FROM gpu_explain('no_such_model', ARRAY[1, 2]::real[]);
SELECT * FROM gpu_explain(NULL, ARRAY[1, 2]::real[]);
SELECT * FROM gpu_explain('classes', ARRAY[1, 2]::real[]);
SELECT * FROM gpu_explain('classes', ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 'Infinity']::real[]);
SELECT * FROM gpu_explain('net', array_fill(0, ARRAY[30])::real[]);
SELECT * FROM gpu_explain('onnx_forest', array_fill(0, ARRAY[(SELECT n_features FROM gpu_models WHERE name = 'onnx_forest')])::real[]);
\set VERBOSITY default

-- The reasons of batches scored through the GPU pipeline (the CPU mock of the
-- GPU provider, batches of 50 rows: two in flight) are those of the CPU run
\c
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 50;
CREATE TABLE cpu_alerts AS SELECT key, score, reasons FROM payment_alerts;
TRUNCATE payments_in, payment_alerts;
INSERT INTO payments_in SELECT * FROM payments;
SELECT count(*) AS alerts, count(*) FILTER (WHERE a.score = c.score AND a.reasons = c.reasons) AS same
  FROM payment_alerts a FULL JOIN cpu_alerts c USING (key);
SELECT engine, batches FROM gpu_engine_stats() WHERE engine = 'gpu';
DROP TABLE payments, payments_in, payment_alerts, cpu_alerts;

SELECT gpu_drop_model(name) FROM gpu_models WHERE name IN ('fraud', 'classes', 'net', 'onnx_forest', 'odd_covers', 'lcat', 'iris', 'wide') ORDER BY name;

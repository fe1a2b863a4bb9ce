-- Categorical features by name.  A tree ensemble trained on a pandas
-- DataFrame with category columns keeps the names of its categories
-- (XGBoost 3.1 and later, LightGBM); text, varchar and char columns are
-- then looked up by name wherever features are columns: gpu_score_query,
-- gpu_score_agg's column form and the triggers.  The rows and reference
-- scores come from XGBoost 3.2's and LightGBM 4.7's predict on DataFrames
-- holding the same values (tests/fixtures/gen_fixtures_catnames.py).
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures'
SELECT gpu_load_model('xcat', pg_read_binary_file(:'fx' || '/models/x3_catnames.json')) > 0 AS loaded;
SELECT gpu_load_model('lcat', pg_read_binary_file(:'fx' || '/models/lgb_catnames.txt')) > 0 AS loaded;

-- The names: code n of a feature is its n-th category.  Integer categories
-- (mcc) are kept as their decimal text.
SELECT * FROM gpu_model_categories('xcat') WHERE feature IN (4, 5) ORDER BY feature, code;
SELECT feature, feature_name, count(*) AS categories, string_agg(quote_literal(category), ', ' ORDER BY code)
  FROM gpu_model_categories('lcat') GROUP BY 1, 2 ORDER BY 1;
-- a model trained on arrays keeps none
SELECT gpu_load_model('codes_only', pg_read_binary_file(:'fx' || '/models/x3_cat_binary.json')) > 0 AS loaded;
SELECT count(*) FROM gpu_model_categories('codes_only');

-- XGBoost (3.2 at least) stores names outside ASCII damaged: such a feature
-- keeps none (a NOTICE says so), its codes still score
SELECT gpu_load_model('xutf8', pg_read_binary_file(:'fx' || '/models/x3_catnames_utf8.json')) > 0 AS loaded;
SELECT feature, feature_name, count(*) FROM gpu_model_categories('xutf8') GROUP BY 1, 2 ORDER BY 1;
SELECT gpu_drop_model('xutf8');

-- gpu_category_code: the code for a feature array.  Exact bytes: case and
-- blanks matter; the empty string can be a category.
SELECT gpu_category_code('xcat', 'country', 'US') AS us, gpu_category_code('xcat', 'country', '') AS empty,
       gpu_category_code('xcat', 'mcc', '7995') AS mcc_7995, gpu_category_code('xcat', 'channel', 'web') AS web,
       gpu_category_code('lcat', 'country', '日本') AS japan, gpu_category_code('xcat', 'country', NULL) AS null_in;
-- a category the model never saw: missing to LightGBM, refused by XGBoost
SELECT gpu_category_code('lcat', 'country', 'XX') IS NULL AS lightgbm_missing;
SELECT gpu_category_code('xcat', 'country', 'us');
SELECT gpu_category_code('xcat', 'amount', '1');
SELECT gpu_category_code('xcat', 'merchant', 'x');
SELECT gpu_category_code('codes_only', 'f0', 'x');

-- The rows by name: text for country, mcc as text, channel as varchar
CREATE TABLE cat_rows (id bigint, amount real, country text, hour real, mcc text,
                       channel varchar(8), want float8);
\set tsv :fx '/catnames/x3_catnames.tsv'
COPY cat_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
CREATE TABLE lgb_rows (LIKE cat_rows);
\set tsv :fx '/catnames/lgb_catnames.tsv'
COPY lgb_rows FROM :'tsv' WITH (FORMAT text, HEADER true);

-- gpu_score_query, against the library's predict (within 1e-6)
SELECT count(*) AS n, max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('xcat', 'SELECT id, amount, country, hour, mcc, channel FROM cat_rows') q
  JOIN cat_rows r USING (id);
-- LightGBM's rows include unknown categories ('XX', 'us', 'US ', 1234, 'mobile'): missing values
SELECT count(*) AS n, count(*) FILTER (WHERE r.id > 170) AS unknown_rows,
       max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('lcat', 'SELECT id, amount, country, hour, mcc, channel FROM lgb_rows') q
  JOIN lgb_rows r USING (id);
-- the same as the codes in a feature array
SELECT count(*) AS n, bool_and(q.score = gpu_score('xcat', ARRAY[r.amount,
         gpu_category_code('xcat', 'country', r.country), r.hour,
         gpu_category_code('xcat', 'mcc', r.mcc), gpu_category_code('xcat', 'channel', r.channel)]::real[])) AS same
  FROM gpu_score_query('xcat', 'SELECT id, amount, country, hour, mcc, channel FROM cat_rows') q
  JOIN cat_rows r USING (id);
-- char(n) ignores its trailing blanks, as char comparisons do
SELECT q.score = (SELECT want FROM cat_rows WHERE id = 1)::real AS char_padded
  FROM gpu_score_query('xcat', $$SELECT id, amount, country::char(6), hour, mcc, channel FROM cat_rows WHERE id = 1$$) q;

-- an enum's label is the name, a domain is read as its base type
CREATE TYPE cat_channel AS ENUM ('atm', 'pos', 'web', 'mobile');
CREATE DOMAIN cat_country AS varchar(16);
CREATE DOMAIN cat_amount AS real CHECK (VALUE >= 0);
SELECT count(*) AS n, bool_and(q.score = (r.want)::real OR abs(q.score - r.want) < 1e-6) AS same
  FROM gpu_score_query('xcat', 'SELECT id, amount::cat_amount, country::cat_country, hour, mcc,
                                       channel::cat_channel FROM cat_rows') q
  JOIN cat_rows r USING (id);
SELECT * FROM gpu_score_query('xcat', $$SELECT 1, 10::real, 'US', 3::real, '5411', 'mobile'::cat_channel$$);

-- the aggregate's column form
SELECT count(*) AS n, max(abs(s.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_scores((SELECT gpu_score_agg('xcat', id, amount, country, hour, mcc, channel) FROM cat_rows)) s
  JOIN cat_rows r ON r.id = s.id;
-- its arguments' types are checked against the features once per group, NULL or not,
-- as gpu_score_query checks its query's columns
SELECT gpu_score_agg('xcat', 1, NULL::text, 'US'::text, 3::real, '5411'::text, 'web'::text);

-- an unknown category in a batch path: XGBoost's error (long values shown cut)
SELECT * FROM gpu_score_query('xcat', $$SELECT 1, 10::real, 'XX', 3::real, '5411', 'web'$$);
SELECT * FROM gpu_score_query('xcat', $$SELECT 1, 10::real, repeat('é', 100), 3::real, '5411', 'web'$$);
-- text for a feature without names, or for a model without names
SELECT * FROM gpu_score_query('xcat', $$SELECT 1, '10', 'US', 3::real, '5411', 'web'$$);
SELECT * FROM gpu_score_query('codes_only', 'SELECT 1, ' || repeat($$'a', $$, 9) || $$'a'$$);
-- numbers stay codes: mcc 2 is the third category, '5999'
SELECT s1.score = s2.score AS code_equals_name
  FROM gpu_score_query('xcat', $$SELECT 1, 10::real, 'US', 3::real, 2, 'web'$$) s1,
       gpu_score_query('xcat', $$SELECT 1, 10::real, 'US', 3::real, '5999', 'web'$$) s2;

-- Triggers read text columns by the model's feature names
CREATE TABLE cat_tx (id bigint, amount real, country text, hour real, mcc text,
                     channel varchar(8), risk real);
CREATE TRIGGER cat_score BEFORE INSERT ON cat_tx FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=xcat', 'score_column=risk');
INSERT INTO cat_tx SELECT id, amount, country, hour, mcc, channel FROM cat_rows;
SELECT count(*) AS n, max(abs(t.risk - r.want)) < 1e-6 AS within_1e6
  FROM cat_tx t JOIN cat_rows r USING (id);
INSERT INTO cat_tx (id, amount, country, hour, mcc, channel) VALUES (999, 10, 'Narnia', 3, '5411', 'web');
-- on_error=null: the row is stored with a NULL score and one WARNING
DROP TRIGGER cat_score ON cat_tx;
CREATE TRIGGER cat_score BEFORE INSERT ON cat_tx FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=xcat', 'score_column=risk', 'on_error=null');
INSERT INTO cat_tx (id, amount, country, hour, mcc, channel) VALUES (999, 10, 'Narnia', 3, '5411', 'web');
SELECT id, risk FROM cat_tx WHERE id = 999;
-- a text column where the model has no names: refused when the trigger first fires
CREATE TABLE cat_bad (amount text, country text, hour real, mcc text, channel text, risk real);
CREATE TRIGGER cat_bad_score BEFORE INSERT ON cat_bad FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=xcat', 'score_column=risk');
INSERT INTO cat_bad VALUES ('1', 'US', 3, '5411', 'web');

-- The statement-level alert trigger reads them too
CREATE TABLE cat_alerts (key bigint, score real, model text, model_version integer, alerted_at timestamptz);
CREATE TABLE cat_tx2 (LIKE cat_rows);
CREATE TRIGGER cat_alert AFTER INSERT ON cat_tx2 REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=lcat', 'key_column=id',
                                                        'threshold=0.5', 'alerts_table=cat_alerts');
INSERT INTO cat_tx2 SELECT * FROM lgb_rows;
SELECT count(*) AS alerts, count(*) = (SELECT count(*) FROM lgb_rows WHERE want::real >= 0.5) AS as_lightgbm
  FROM cat_alerts;

-- gpu_score_table (scheduled scoring) reads them too, in committed batches
CREATE TABLE cat_sched (LIKE cat_rows);
ALTER TABLE cat_sched ADD COLUMN score real, ADD PRIMARY KEY (id);
INSERT INTO cat_sched SELECT * FROM cat_rows;
SET client_min_messages = warning;
CALL gpu_score_table('xcat', 'cat_sched', 'id', batch_size => 50);
RESET client_min_messages;
SELECT count(*) AS n, count(score) AS scored, max(abs(score - want)) < 1e-6 AS within_1e6 FROM cat_sched;
DROP TABLE cat_sched;

-- scikit-learn pipelines over a DataFrame's string columns, converted by
-- skl2onnx: the OneHotEncoders' categories are the names.  Reference:
-- onnxruntime; NULL and unknown names set no indicator, as an unknown
-- string does in onnxruntime.
SELECT gpu_load_model('skl_lr', pg_read_binary_file(:'fx' || '/catnames/skl_str_logreg.onnx')) > 0 AS loaded;
SELECT gpu_load_model('skl_rf', pg_read_binary_file(:'fx' || '/catnames/skl_str_rf.onnx')) > 0 AS loaded;
SELECT name, kind, feature_names FROM gpu_models WHERE name IN ('skl_lr', 'skl_rf') ORDER BY name;
SELECT feature, feature_name, count(*) FROM gpu_model_categories('skl_lr') GROUP BY 1, 2 ORDER BY 1;
CREATE TABLE skl_rows (id bigint, amount real, country text, hour real, channel text, want float8);
\set tsv :fx '/catnames/skl_str_logreg.tsv'
COPY skl_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
SELECT count(*) AS n, count(*) FILTER (WHERE r.country IS NULL OR r.country IN ('XX', 'us', 'US ')) AS odd_country,
       max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('skl_lr', 'SELECT id, amount, country, hour, channel FROM skl_rows') q
  JOIN skl_rows r USING (id);
TRUNCATE skl_rows;
\set tsv :fx '/catnames/skl_str_rf.tsv'
COPY skl_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
SELECT count(*) AS n, max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('skl_rf', 'SELECT id, amount, country, hour, channel FROM skl_rows') q
  JOIN skl_rows r USING (id);
-- an unknown category is no error here: the encoder sets no indicator
SELECT gpu_category_code('skl_lr', 'country', 'XX') IS NULL AS unknown_is_missing;
-- OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1) before a
-- HistGradientBoostingClassifier (an ai.onnx.ml LabelEncoder): the feature
-- holds the code; an unknown name, and a NULL one, is -1 as in onnxruntime
SELECT gpu_load_model('skl_hgb', pg_read_binary_file(:'fx' || '/catnames/skl_str_ord_hgb.onnx')) > 0 AS loaded;
TRUNCATE skl_rows;
\set tsv :fx '/catnames/skl_str_ord_hgb.tsv'
COPY skl_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
SELECT count(*) AS n, max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('skl_hgb', 'SELECT id, amount, country, hour, channel FROM skl_rows') q
  JOIN skl_rows r USING (id);
SELECT gpu_category_code('skl_hgb', 'country', 'FR') AS fr, gpu_category_code('skl_hgb', 'country', 'XX') AS unknown;
-- as text NULL is the unknown value; as a number, NULL is a missing value
SELECT a.score = b.score AS null_is_unknown, a.score = c.score AS null_code_is_unknown
  FROM gpu_score_query('skl_hgb', $$SELECT 1, 20::real, NULL::text, 3::real, 'web'$$) a,
       gpu_score_query('skl_hgb', $$SELECT 1, 20::real, 'XX', 3::real, 'web'$$) b,
       gpu_score_query('skl_hgb', $$SELECT 1, 20::real, NULL::real, 3::real, 'web'$$) c;

DROP TABLE cat_rows, lgb_rows, cat_tx, cat_bad, cat_alerts, cat_tx2, skl_rows;
DROP TYPE cat_channel;
DROP DOMAIN cat_country, cat_amount;
SELECT gpu_drop_model('xcat'), gpu_drop_model('lcat'), gpu_drop_model('codes_only'),
       gpu_drop_model('skl_lr'), gpu_drop_model('skl_rf'), gpu_drop_model('skl_hgb');

-- CatBoost models with categorical features.  CatBoost turns a category
-- into numbers of its own: one-hot splits for features of few categories,
-- and CTRs, statistics of the training rows per category (or per
-- combination of categories and binarized numbers), which its JSON export
-- keeps in tables.  Saved with its training data
-- (save_model(path, format="json", pool=train_pool)), the file also names
-- every category, so columns of text are scored by name; saved without,
-- names are hashed as CatBoost hashes them.  The rows and
-- reference scores come from CatBoost 1.2.10's own predict on a DataFrame
-- of the same strings (tests/fixtures/gen_fixtures_catboost_cats.py).
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures'
SELECT gpu_load_model('cbcat', pg_read_binary_file(:'fx' || '/models/cb_cat_binary.json')) > 0 AS loaded;
SELECT gpu_load_model('cbcombo', pg_read_binary_file(:'fx' || '/models/cb_cat_combo.json')) > 0 AS loaded;
SELECT name, kind, format, objective, n_features, n_trees, feature_names
  FROM gpu_models WHERE name IN ('cbcat', 'cbcombo') ORDER BY name;

-- The file lists the names without saying which feature each is of: the
-- model's tables and one-hot values say it (40 merchant categories, 4
-- countries, 6 devices); code n of a feature is its n-th name
SELECT feature, feature_name, count(*) AS categories, min(category), max(category)
  FROM gpu_model_categories('cbcat') GROUP BY 1, 2 ORDER BY 1;
SELECT gpu_category_code('cbcat', 'country', 'FR') IS NOT NULL AS known,
       gpu_category_code('cbcat', 'country', 'Narnia') IS NULL AS unknown_is_null,
       gpu_category_code('cbcat', 'country', 'm1') IS NULL AS another_features_is_null;

-- The rows by name (60 of them with a name CatBoost never saw, 15 with no amount)
CREATE TABLE cb_rows (id bigint, amount real, mcc text, country text, hour real, device text,
                      want float8);
\set tsv :fx '/catnames/cb_cat_binary.tsv'
COPY cb_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
CREATE TABLE cb_combo_rows (LIKE cb_rows);
\set tsv :fx '/catnames/cb_cat_combo.tsv'
COPY cb_combo_rows FROM :'tsv' WITH (FORMAT text, HEADER true);

-- gpu_score_query reads the text columns by name; within 1e-6 of CatBoost's
-- predict_proba, unseen names included (CatBoost's CTRs give them the prior)
SELECT count(*) AS n,
       count(*) FILTER (WHERE 'zz-never-seen' IN (r.mcc, r.country, r.device)) AS unseen,
       max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('cbcat', 'SELECT id, amount, mcc, country, hour, device FROM cb_rows') q
  JOIN cb_rows r USING (id);
-- CTRs of two categories and a binarized number, one-hot values in combinations
SELECT count(*) AS n, max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('cbcombo', 'SELECT id, amount, mcc, country, hour, device FROM cb_combo_rows') q
  JOIN cb_combo_rows r USING (id);
-- the same as the codes in a feature array (an unknown name: NULL, a missing value)
SELECT count(*) AS n, bool_and(q.score = gpu_score('cbcat', ARRAY[r.amount,
         gpu_category_code('cbcat', 'mcc', r.mcc), gpu_category_code('cbcat', 'country', r.country),
         r.hour, gpu_category_code('cbcat', 'device', r.device)])) AS same
  FROM gpu_score_query('cbcat', 'SELECT id, amount, mcc, country, hour, device FROM cb_rows') q
  JOIN cb_rows r USING (id);
-- a NULL category is scored as one CatBoost never saw (CatBoost itself takes no missing category)
SELECT a.score = b.score AS null_as_unseen
  FROM gpu_score_query('cbcat', $$SELECT 1, 50::real, NULL::text, 'US', 3::real, 'web'$$) a,
       gpu_score_query('cbcat', $$SELECT 1, 50::real, 'zz-never-seen', 'US', 3::real, 'web'$$) b;

-- The aggregate's column form and the score trigger read names too
SELECT count(*) AS n, max(abs(s.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_scores((SELECT gpu_score_agg('cbcat', id, amount, mcc, country, hour, device) FROM cb_rows)) s
  JOIN cb_rows r USING (id);
CREATE TABLE cb_tx (id bigint, amount real, mcc text, country text, hour real, device text, risk real);
CREATE TRIGGER cb_score BEFORE INSERT ON cb_tx FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=cbcat', 'score_column=risk');
INSERT INTO cb_tx SELECT id, amount, mcc, country, hour, device FROM cb_rows;
SELECT count(*) AS n, max(abs(t.risk - r.want)) < 1e-6 AS within_1e6
  FROM cb_tx t JOIN cb_rows r USING (id);

-- Integer categories (merchant category codes given to CatBoost as numbers) are
-- their decimal text; a NOTICE at load says that a number is a code
SET client_min_messages = notice;
SELECT gpu_load_model('cbint', pg_read_binary_file(:'fx' || '/models/cb_cat_int.json')) > 0 AS loaded;
RESET client_min_messages;
SELECT s1.score = s2.score AS name_equals_code
  FROM gpu_score_query('cbint', $$SELECT 1, 80::real, 3::real, '7995'$$) s1,
       gpu_score_query('cbint', format('SELECT 1, 80::real, 3::real, %s::real',
                                       gpu_category_code('cbint', 'mcc', '7995'))) s2;

-- Saved without its training data (save_model(path, format="json"), as most
-- files are, and what a .cbm model converts to), a file names no category.
-- Text is then hashed as CatBoost hashes it, and looked up among the
-- hashes the model's tables hold; a NOTICE at load says so.
SET client_min_messages = notice;
SELECT gpu_load_model('cbnopool', pg_read_binary_file(:'fx' || '/models/cb_cat_combo_nopool.json')) > 0 AS loaded;
RESET client_min_messages;
SELECT count(*) AS n, max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('cbnopool', 'SELECT id, amount, mcc, country, hour, device FROM cb_combo_rows') q
  JOIN cb_combo_rows r USING (id);
-- the scores of the same model saved with its names, on every path
SELECT count(*) AS n, bool_and(a.score = b.score) AS same
  FROM gpu_score_query('cbnopool', 'SELECT id, amount, mcc, country, hour, device FROM cb_combo_rows') a
  JOIN gpu_score_query('cbcombo', 'SELECT id, amount, mcc, country, hour, device FROM cb_combo_rows') b USING (id);
SELECT count(*) AS n, max(abs(s.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_scores((SELECT gpu_score_agg('cbnopool', id, amount, mcc, country, hour, device)
                     FROM cb_combo_rows)) s
  JOIN cb_combo_rows r USING (id);
-- no names to list; codes still exist for feature arrays, NULL for a name never seen
SELECT count(*) AS names FROM gpu_model_categories('cbnopool');
SELECT gpu_category_code('cbnopool', 'mcc', 'm1') IS NOT NULL AS known,
       gpu_category_code('cbnopool', 'mcc', 'zz-never-seen') IS NULL AS unknown_is_null;
SELECT a.score = b.score AS code_equals_name
  FROM gpu_score_query('cbnopool', $$SELECT 1, 50::real, 'm5', 'DE', 15::real, 'pos'$$) a,
       (SELECT gpu_score('cbnopool', ARRAY[50, gpu_category_code('cbnopool', 'mcc', 'm5'),
                          gpu_category_code('cbnopool', 'country', 'DE'), 15,
                          gpu_category_code('cbnopool', 'device', 'pos')]::real[]) AS score) b;
-- explanations are the named file's; the category's name is not known
SELECT count(*) AS n, max(abs(a.contribution - b.contribution)) < 1e-9 AS same,
       bool_and(a.category IS NULL) AS no_names
  FROM gpu_explain_query('cbnopool', 'SELECT id, amount, mcc, country, hour, device FROM cb_combo_rows') a
  JOIN gpu_explain_query('cbcombo', 'SELECT id, amount, mcc, country, hour, device FROM cb_combo_rows') b
  USING (id, feature);
-- integer categories are their decimal text, as CatBoost hashes them
SELECT gpu_load_model('cbintnp', pg_read_binary_file(:'fx' || '/models/cb_cat_int_nopool.json')) > 0 AS loaded;
SELECT count(*) AS n, bool_and(a.score = b.score) AS same
  FROM gpu_score_query('cbintnp', $$SELECT m, 80::real, 3::real, m::text FROM unnest(ARRAY[5411, 5812, 7995, 1234]) m$$) a
  JOIN gpu_score_query('cbint', $$SELECT m, 80::real, 3::real, m::text FROM unnest(ARRAY[5411, 5812, 7995, 1234]) m$$) b
  USING (id);
-- a column of numbers for such a feature is refused (it would be taken as a code)
SELECT * FROM gpu_score_query('cbintnp', $$SELECT 1, 80::real, 3::real, 7995$$);
SELECT gpu_score_agg('cbintnp', 1, 80::real, 3::real, 7995::real);
SELECT gpu_drop_model('cbint'), gpu_drop_model('cbintnp');

-- Only the CPU engine scores such a model: 'gpu' refuses it (before looking for a device)
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('cbcat', 'SELECT id, amount, mcc, country, hour, device FROM cb_rows');
RESET pg_gpuscore.device;
-- Explanations are CatBoost's ShapValues: TreeSHAP over its classes of
-- features (a column, or a combination of categories), a combination's
-- share split equally among its categories.  Against CatBoost's own
-- get_feature_importance(type="ShapValues") of the same rows:
CREATE TABLE cb_shap_raw (line text);
\set f :fx '/shap/cb_cat_binary.csv'
COPY cb_shap_raw FROM :'f';
CREATE TABLE cb_shap AS
  SELECT a[1]::bigint AS id, f.n AS feature, a[f.n + 1]::float8 AS want
    FROM (SELECT string_to_array(line, ',') AS a FROM cb_shap_raw) s, generate_series(1, 5) f(n);
SELECT count(*) AS n, max(abs(e.contribution - s.want)) < 1e-6 AS within_1e6
  FROM gpu_explain_query('cbcat', 'SELECT id, amount, mcc, country, hour, device FROM cb_rows') e
  JOIN cb_shap s USING (id, feature);
-- one row: the category's name beside its contribution
SELECT feature, feature_name, category, round(contribution::numeric, 4) AS contribution
  FROM gpu_explain('cbcat', ARRAY[120, gpu_category_code('cbcat', 'mcc', 'm1'),
                                  gpu_category_code('cbcat', 'country', 'FR'), 3,
                                  gpu_category_code('cbcat', 'device', 'web')]::real[])
 ORDER BY feature;
-- the alert trigger's reasons: the categories that pushed the score up most
CREATE TABLE cb_alerts (key bigint, score real, model text, model_version integer,
                        alerted_at timestamptz, reasons text[]);
CREATE TABLE cb_tx2 (id bigint, amount real, mcc text, country text, hour real, device text);
CREATE TRIGGER cb_alert AFTER INSERT ON cb_tx2 REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION gpu_alert_trigger('model=cbcat', 'key_column=id',
    'threshold=0.5', 'alerts_table=cb_alerts', 'reasons=2');
INSERT INTO cb_tx2 SELECT id, amount, mcc, country, hour, device FROM cb_rows;
SELECT count(*) AS alerts, count(*) = (SELECT count(*) FROM cb_rows WHERE want >= 0.5) AS every_one,
       bool_and(cardinality(reasons) BETWEEN 1 AND 2) AS reasons_given
  FROM cb_alerts;
-- each alert's first reason is its row's largest positive contribution (CatBoost's)
SELECT count(*) AS checked, bool_and(a.reasons[1] = top.feature_name) AS first_is_largest
  FROM cb_alerts a
  JOIN LATERAL (SELECT (ARRAY['amount', 'mcc', 'country', 'hour', 'device'])[s.feature] AS feature_name
                  FROM cb_shap s WHERE s.id = a.key AND s.want > 0
                 ORDER BY s.want DESC LIMIT 1) top ON true;

-- Refused: a file saved with only part of the training data lacks names of
-- categories the model has statistics of; one saved without names where a
-- feature's categories cannot all be known (none of its tables lists them)
\set cbbad :abs_srcdir '/tests/fixtures/models/bad/cb_bad_'
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'cat_subset.json'));
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'cat_nopool_no_own.json'));
-- hostile edits of cb_cat_combo.json: each refused with a message naming what is wrong
CREATE FUNCTION pg_temp.load_error(file text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM gpu_load_model('cbx', pg_read_binary_file(file));
  RETURN 'loaded';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SELECT f, pg_temp.load_error(:'cbbad' || 'cat_' || f || '.json') AS error
  FROM unnest(ARRAY['ctr_type', 'stride', 'key_number', 'key_twice', 'count', 'ctr_border',
                    'ctr_split_index', 'onehot_value', 'prior', 'target_border', 'element',
                    'no_table', 'flat_index', 'name_hash']) f;
SELECT count(*) AS none_loaded FROM gpu_models WHERE name = 'cbx';

-- A model whose every feature is categorical (CatBoost then writes no float_features),
-- saved without its pool: text hashed, by name, within 1e-6 of CatBoost's predict_proba
CREATE TABLE cb_allcat_rows (id bigint, mcc text, country text, channel text, want float8);
\set tsv :fx '/catnames/cb_allcat.tsv'
COPY cb_allcat_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
SET client_min_messages = warning;
SELECT gpu_load_model('cballcat', pg_read_binary_file(:'fx' || '/models/cb_allcat_nopool.json')) > 0 AS loaded;
RESET client_min_messages;
SELECT n_features, n_outputs, n_trees FROM gpu_models WHERE name = 'cballcat';
SELECT count(*) AS n, max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM gpu_score_query('cballcat', 'SELECT id, mcc, country, channel FROM cb_allcat_rows') q
  JOIN cb_allcat_rows r USING (id);
SELECT gpu_drop_model('cballcat');
SELECT gpu_drop_model('cbcat'), gpu_drop_model('cbcombo'), gpu_drop_model('cbnopool');

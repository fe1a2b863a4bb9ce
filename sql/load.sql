-- Loading, listing, replacing and dropping models.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_json :models 'breast_cancer.json'
\set m_ubj :models 'breast_cancer.ubj'
\set m_wine :models 'wine_softprob.json'

-- The same model as JSON and as UBJ; 'auto' detects the format.
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_json'));
SELECT gpu_load_model('bc_ubj', pg_read_binary_file(:'m_ubj'), 'xgboost-ubj');
SELECT gpu_load_model_file('wine', :'m_wine', 'xgboost-json');

SELECT name, version, format, objective, n_features, n_outputs, n_trees, max_depth,
       size_bytes > 0 AS has_bytes, saved_by, feature_names IS NULL AS no_names,
       loaded_at <= now() AS loaded_at_ok, loaded_by = current_user AS loaded_by_ok
  FROM gpu_models ORDER BY name;

-- Loading again replaces the active version; the version number goes up.
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_ubj'));
SELECT name, version, format FROM gpu_models WHERE name = 'bc';

-- A model saved with feature names keeps them.
\set m_demo :models 'demo_fraud.ubj'
SELECT gpu_load_model('demo', pg_read_binary_file(:'m_demo'));
SELECT n_features, feature_names[1:3] AS first_names FROM gpu_models WHERE name = 'demo';

-- Loading inside a transaction that rolls back leaves the old version.
BEGIN;
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_json'));
ROLLBACK;
SELECT name, version, format FROM gpu_models WHERE name = 'bc';

-- Dropping.
SELECT gpu_drop_model('bc_ubj');
SELECT gpu_drop_model('bc_ubj');
SELECT gpu_drop_model('bc_ubj', missing_ok => true);
SELECT name FROM gpu_models ORDER BY name;

-- Argument errors.
SELECT gpu_load_model(NULL, pg_read_binary_file(:'m_json'));
SELECT gpu_load_model('x', NULL);
SELECT gpu_load_model('', pg_read_binary_file(:'m_json'));
SELECT gpu_load_model(repeat('n', 64), pg_read_binary_file(:'m_json'));
SELECT gpu_load_model('x', pg_read_binary_file(:'m_json'), 'onnx');
SELECT gpu_load_model('x', pg_read_binary_file(:'m_json'), NULL);
SELECT gpu_load_model('x', pg_read_binary_file(:'m_json'), 'xgboost-ubj');
SELECT gpu_load_model('x', pg_read_binary_file(:'m_ubj'), 'xgboost-json');
SELECT gpu_load_model('x', convert_to(E'id,amount\n1,12.5\n', 'UTF8'));
-- files that are no model but are often taken for one are named, with how to
-- export the model: a pickle (pickle.dump or joblib.dump of an XGBClassifier),
-- a zip archive (torch.save, Keras 3's .keras), XGBoost's and LightGBM's
-- dump_model output, a CatBoost model in its binary format (.cbm; its JSON loads)
SELECT gpu_load_model('x', '\x80049510000000'::bytea);
SELECT gpu_load_model('x', '\x504b0304'::bytea);
SELECT gpu_load_model('x', convert_to(E'booster[0]:\n0:[f0<0.5] yes=1,no=2,missing=1\n', 'UTF8'));
SELECT gpu_load_model('x', convert_to('{"name": "tree", "version": "v4", "num_class": 1, "tree_info": []}', 'UTF8'));
SELECT gpu_load_model('x', '\x43424d31'::bytea);
-- a CatBoost JSON model is detected as one, and checked as one
SELECT gpu_load_model('x', convert_to(E'{\n  "features_info":\n    {\n      "float_features": []}, "oblivious_trees": []}', 'UTF8'));
SELECT gpu_load_model('x', ''::bytea);
SELECT gpu_load_model_file('x', 'relative/model.json');
SELECT gpu_load_model_file('x', '/nonexistent/model.json');
SELECT gpu_load_model_file('x', '/');
SELECT gpu_drop_model(NULL);

-- Size cap (a superuser setting).
SET pg_gpuscore.max_model_size = '16kB';
SELECT gpu_load_model('x', pg_read_binary_file(:'m_json'));
\set VERBOSITY sqlstate
SELECT gpu_load_model_file('x', :'m_json');
\set VERBOSITY default
RESET pg_gpuscore.max_model_size;
SET pg_gpuscore.max_trees = 10;
SELECT gpu_load_model('x', pg_read_binary_file(:'m_json'));
RESET pg_gpuscore.max_trees;

-- Privileges: loading and dropping are not granted to PUBLIC; reading server
-- files needs pg_read_server_files; the model table is not readable, the
-- gpu_models view is.
CREATE ROLE gs_analyst;
CREATE ROLE gs_loader;
CREATE TABLE model_upload AS SELECT pg_read_binary_file(:'m_json') AS bytes;
GRANT SELECT ON model_upload TO gs_loader;
GRANT EXECUTE ON FUNCTION gpu_load_model(text, bytea, text) TO gs_loader;
GRANT EXECUTE ON FUNCTION gpu_load_model_file(text, text, text) TO gs_loader;
SET ROLE gs_analyst;
SELECT gpu_load_model('x', '\x7b7d'::bytea);
SELECT gpu_drop_model('wine');
SELECT count(*) FROM gpu_model_store;
SELECT count(*) FROM gpu_models;
SELECT array_length(gpu_predict('wine', ARRAY[13.2,1.8,2.1,15,100,2.6,2.7,0.3,1.8,4.3,1.0,3.3,1050]::real[]), 1) AS n_outputs;
RESET ROLE;
SET ROLE gs_loader;
SELECT gpu_load_model('bc_by_loader', (SELECT bytes FROM model_upload));
SELECT gpu_load_model_file('x', :'m_json');
RESET ROLE;
SELECT name, version, loaded_by FROM gpu_models WHERE name = 'bc_by_loader';
SELECT gpu_drop_model('bc_by_loader');
DROP TABLE model_upload;
DROP ROLE gs_analyst;
REVOKE ALL ON FUNCTION gpu_load_model(text, bytea, text) FROM gs_loader;
REVOKE ALL ON FUNCTION gpu_load_model_file(text, text, text) FROM gs_loader;
DROP ROLE gs_loader;

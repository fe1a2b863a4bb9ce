-- Each session reads a tree-ensemble model back from the image of its
-- validated forest, which gpu_load_model stores beside the model, instead of
-- parsing the model again (tens of milliseconds instead of a second for a
-- 2,000-tree XGBoost JSON model).  The image is checked like a parse checks
-- a model; one that cannot be used is ignored and the model parsed.
-- Networks have no image.  The model table can only be written by its owner
-- (privileges.sql); this test, a superuser, writes it to damage models.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set onnx :abs_srcdir '/tests/fixtures/onnx/'

-- categorical XGBoost, multi-class LightGBM, an MLP
SELECT gpu_load_model('img_cat', pg_read_binary_file(:'models' || 'x3_cat_binary.json'));
SELECT gpu_load_model('img_lgb', pg_read_binary_file(:'models' || 'lgb_multiclass.txt'));
SELECT gpu_load_model('img_mlp', pg_read_binary_file(:'onnx' || 'mlp_sigmoid.onnx'));
-- XGBoost 1.7's legacy binary format, saved by XGBClassifier(missing=-999): the
-- image keeps the value taken as missing
SELECT gpu_load_model('img_skm', pg_read_binary_file(:'models' || 'x17_sk_missing.model'));
-- and a missing value given at load (the file does not hold it): kept in the
-- image and in gpu_models.missing_value, which a session that parses the
-- model applies
SELECT gpu_load_model('img_bm', pg_read_binary_file(:'models' || 'x3_booster_missing.json'), 'auto', -999);
SELECT name, kind, compiled IS NOT NULL AS has_image
  FROM gpu_model_store WHERE name LIKE 'img%' ORDER BY name;

-- 200 rows of 30 features (categorical codes, negatives, NaN), and the
-- scores this session gives them
CREATE TABLE img_rows AS
SELECT i, ARRAY(SELECT CASE WHEN (i + j) % 13 = 0 THEN 'NaN'::real
                            ELSE ((i * 37 + j * 11) % 23)::real / 3 - 2 END
                  FROM generate_series(1, 30) j) AS x
  FROM generate_series(1, 200) i;
CREATE FUNCTION img_scores() RETURNS TABLE (name text, i int, p real[])
LANGUAGE sql AS $$
  SELECT m.name, r.i, gpu_predict(m.name, r.x[1:m.n_features])
    FROM gpu_models m, img_rows r WHERE m.name LIKE 'img%'
$$;
CREATE TABLE img_ref AS SELECT * FROM img_scores();
CREATE FUNCTION img_compare() RETURNS TABLE (name text, n bigint, differ bigint)
LANGUAGE sql AS $$
  SELECT s.name, count(*), count(*) FILTER (WHERE s.p IS DISTINCT FROM r.p)
    FROM img_scores() s JOIN img_ref r USING (name, i) GROUP BY s.name ORDER BY s.name
$$;

-- A new session reads the image: with the stored model bytes of the tree
-- ensembles made unreadable, it scores exactly as before.
UPDATE gpu_model_store SET model = '\x00' WHERE compiled IS NOT NULL;
\c
SELECT * FROM img_compare() WHERE name <> 'img_mlp';
SELECT gpu_score(m, ARRAY[0.5, -999, 1, -999, 0, 2, -999, 1]) =
       gpu_score(m, ARRAY[0.5, NULL, 1, NULL, 0, 2, NULL, 1]) AS minus_999_is_missing
  FROM unnest(ARRAY['img_skm', 'img_bm']) m;

-- Images that cannot be used (another image version, truncated, not an
-- image at all) are ignored: a new session parses the (restored) model
-- bytes and scores exactly as before.
UPDATE gpu_model_store SET model = pg_read_binary_file(:'models' || 'x3_cat_binary.json')
 WHERE name = 'img_cat';
UPDATE gpu_model_store SET model = pg_read_binary_file(:'models' || 'lgb_multiclass.txt')
 WHERE name = 'img_lgb';
UPDATE gpu_model_store SET model = pg_read_binary_file(:'models' || 'x17_sk_missing.model')
 WHERE name = 'img_skm';
UPDATE gpu_model_store SET model = pg_read_binary_file(:'models' || 'x3_booster_missing.json')
 WHERE name = 'img_bm';
CREATE TABLE img_saved AS SELECT name, compiled FROM gpu_model_store WHERE compiled IS NOT NULL;
UPDATE gpu_model_store SET compiled = overlay(compiled PLACING '\x09000000' FROM 9 FOR 4)
 WHERE compiled IS NOT NULL;
\c
SELECT * FROM img_compare();
UPDATE gpu_model_store s SET compiled = substring(v.compiled FROM 1 FOR length(v.compiled) - 1)
  FROM img_saved v WHERE v.name = s.name;
\c
SELECT * FROM img_compare();
UPDATE gpu_model_store SET compiled = '\x7b7d' WHERE compiled IS NOT NULL;
\c
SELECT * FROM img_compare();
-- parsed, not read from the image: the same
SELECT gpu_score(m, ARRAY[0.5, -999, 1, -999, 0, 2, -999, 1]) =
       gpu_score(m, ARRAY[0.5, NULL, 1, NULL, 0, 2, NULL, 1]) AS minus_999_is_missing
  FROM unnest(ARRAY['img_skm', 'img_bm']) m;

-- A damaged node is caught, not scored: the left child of the first root
-- (header 200 bytes, 3 base scores, 45 trees of 12 bytes, then the nodes,
-- 12 bytes each: value, info, left) pointed far past its tree; the new
-- session refuses the image, parses the model and scores as before.
UPDATE gpu_model_store s SET compiled = v.compiled FROM img_saved v WHERE v.name = s.name;
UPDATE gpu_model_store SET compiled = overlay(compiled PLACING '\xffffff7f'
       FROM 200 + 4 * 3 + 12 * 45 + 8 + 1 FOR 4) WHERE name = 'img_lgb';
\c
SELECT * FROM img_compare() WHERE name = 'img_lgb';

-- The caps apply to a model read from its image as to a parsed one.
UPDATE gpu_model_store s SET compiled = v.compiled FROM img_saved v WHERE v.name = s.name;
\c
SET pg_gpuscore.max_trees = 20;
SELECT gpu_score('img_cat', x[1:10]) FROM img_rows WHERE i = 1;
RESET pg_gpuscore.max_trees;
SELECT * FROM img_compare() WHERE name = 'img_cat';

SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'img%' ORDER BY name;

-- CatBoost models with categorical features keep their tables in the image
-- too (one-hot values, CTRs and the values of their statistics), as does a
-- file saved without its pool, whose names are found by their hash.  A new
-- session, the model bytes made unreadable, reads the names from the image
-- and scores within 1e-6 of CatBoost's predict_proba, unseen names included.
SELECT gpu_load_model('cbimg_named', pg_read_binary_file(:'models' || 'cb_cat_combo.json')) > 0 AS loaded;
SELECT gpu_load_model('cbimg_hashed', pg_read_binary_file(:'models' || 'cb_cat_combo_nopool.json')) > 0 AS loaded;
SELECT name, compiled IS NOT NULL AS has_image
  FROM gpu_model_store WHERE name LIKE 'cbimg%' ORDER BY name;
CREATE TABLE cbimg_rows (id bigint, amount real, mcc text, country text, hour real, device text,
                         want float8);
\set tsv :abs_srcdir '/tests/fixtures/catnames/cb_cat_combo.tsv'
COPY cbimg_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
UPDATE gpu_model_store SET model = '\x00' WHERE name LIKE 'cbimg%';
\c
SELECT m AS name, count(*) AS n,
       count(*) FILTER (WHERE 'zz-never-seen' IN (r.mcc, r.country, r.device)) AS unseen,
       max(abs(q.score - r.want)) < 1e-6 AS within_1e6
  FROM unnest(ARRAY['cbimg_hashed', 'cbimg_named']) m,
       LATERAL gpu_score_query(m, 'SELECT id, amount, mcc, country, hour, device FROM cbimg_rows') q
  JOIN cbimg_rows r USING (id)
 GROUP BY m ORDER BY m;
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'cbimg%' ORDER BY name;
DROP TABLE img_rows, img_ref, img_saved;
DROP FUNCTION img_compare(), img_scores();

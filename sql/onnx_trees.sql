-- ONNX-ML tree ensembles (ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier, and the
-- opset-5 TreeEnsemble): scikit-learn forests and boosted trees converted by skl2onnx, XGBoost and
-- LightGBM models converted by onnxmltools, and converted models edited to use every node mode
-- (BRANCH_LEQ / LT / GTE / GT / EQ / NEQ / MEMBER), nodes_missing_value_tracks_true, AVERAGE,
-- SOFTMAX_ZERO, ZipMap outputs.  Loaded as
-- 'onnx' (or detected), they become the same tree ensemble as XGBoost models: every scoring path
-- is checked against onnxruntime's scores (tests/fixtures/gen_onnx_tree_fixtures.py) within the
-- case's tolerance: 0, bit for bit (AVERAGE: 1e-6, relative above 1), then gpu_models, a few rows
-- by hand, and every error.
-- Binary classifiers give one score, the probability of the second class.
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures'
SET client_min_messages = warning;
CREATE TEMP TABLE ot_parity (model text, n_rows int, predict_ok boolean, query_ok boolean,
                             score_ok boolean, agg_ok boolean);
CREATE FUNCTION pg_temp.check_ot(model text, fmt text, dir text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  meta text[];
  nf int;
  nout int;
  tol float8;
  n int;
  bad_predict int;
  bad_query int;
  bad_score int;
  bad_agg int;
BEGIN
  PERFORM gpu_load_model(model, pg_read_binary_file(dir || '/onnx/trees/' || model || '.onnx'), fmt);
  meta := regexp_split_to_array(trim(pg_read_file(dir || '/cases/' || model || '.meta')), ' ');
  nf := meta[1]::int;
  nout := meta[2]::int;
  tol := meta[4]::float8;
  CREATE TEMP TABLE cases_raw (line text);
  EXECUTE format('COPY cases_raw FROM %L', dir || '/cases/' || model || '.csv');
  CREATE TEMP TABLE cases AS
    SELECT a[1]::bigint AS id, a[2:nf + 1]::real[] AS f, a[nf + 2:nf + 1 + nout]::real[] AS want
      FROM (SELECT string_to_array(line, ',') AS a FROM cases_raw) s;
  SELECT count(*) INTO n FROM cases;
  SELECT count(*) INTO bad_predict FROM cases
   WHERE EXISTS (SELECT 1 FROM unnest(gpu_predict(model, f), want) AS u(got, w)
                  WHERE abs(got - w) > tol * greatest(1, abs(w)) OR got IS NULL);
  SELECT n - count(*) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM unnest(q.scores, c.want) AS u(got, w)
            WHERE abs(got - w) > tol * greatest(1, abs(w)) OR got IS NULL)) INTO bad_query
    FROM gpu_predict_query(model, 'SELECT id, f FROM cases') q JOIN cases c USING (id);
  -- single-output models (regressors, binary classifiers): gpu_score and the aggregate
  IF nout = 1 THEN
    SELECT count(*) INTO bad_score FROM cases
     WHERE abs(gpu_score(model, f) - want[1]) > tol * greatest(1, abs(want[1]))
        OR gpu_score(model, f) IS NULL;
    SELECT n - count(*) FILTER (WHERE abs(r.score - c.want[1]) <= tol * greatest(1, abs(c.want[1])))
      INTO bad_agg
      FROM gpu_scores((SELECT gpu_score_agg(model, id, f) FROM cases)) r JOIN cases c USING (id);
  END IF;
  INSERT INTO ot_parity VALUES (model, n, bad_predict = 0, bad_query = 0, bad_score = 0, bad_agg = 0);
  DROP TABLE cases_raw;
  DROP TABLE cases;
END $$;

-- scikit-learn (skl2onnx), format given
SELECT pg_temp.check_ot(m, 'onnx', :'fx')
  FROM unnest(ARRAY['onnx_skl_rf_binary', 'onnx_skl_rf_binary_zipmap', 'onnx_skl_rf_3class',
                    'onnx_skl_rf_reg', 'onnx_skl_rf_2targets', 'onnx_skl_et_reg',
                    'onnx_skl_gb_binary', 'onnx_skl_gb_reg', 'onnx_skl_hgb_binary',
                    'onnx_skl_hgb_3class', 'onnx_skl_hgb_reg']) m;
-- XGBoost and LightGBM (onnxmltools) and the edited models, format detected
SELECT pg_temp.check_ot(m, 'auto', :'fx')
  FROM unnest(ARRAY['onnx_xgb_binary', 'onnx_xgb_3class', 'onnx_xgb_reg',
                    'onnx_lgb_binary', 'onnx_lgb_3class', 'onnx_lgb_reg', 'onnx_lgb_inf_threshold',
                    'onnx_edit_modes', 'onnx_edit_softmax_zero', 'onnx_edit_average',
                    'onnx_edit_reg_logistic', 'onnx_edit_3targets_softmax',
                    'onnx_edit_binary_both', 'onnx_edit_binary_positive_logistic',
                    'onnx_edit_binary_positive_softmax', 'onnx_edit_3class_logistic',
                    'onnx_edit_binary_both_none',
                    'onnx_edit_binary_mixed_none', 'onnx_edit_binary_mixed_softmax',
                    'onnx_v5_modes_member', 'onnx_v5_3targets_softmax']) m;
-- CatBoost's own ONNX export (gen_onnx_catboost_fixtures.py): BRANCH_GT nodes, weights on both
-- classes, ZipMap, base values
SELECT pg_temp.check_ot(m, 'auto', :'fx')
  FROM unnest(ARRAY['onnx_cb_binary', 'onnx_cb_3class', 'onnx_cb_reg']) m;
-- scikit-learn pipelines (gen_onnx_pipeline_fixtures.py): imputers, scalers and column
-- transformers before the forest, folded into the splits; rows on both sides of each boundary
SELECT pg_temp.check_ot(m, 'auto', :'fx')
  FROM unnest(ARRAY['onnx_pipe_impute_rf', 'onnx_pipe_impute_std_gb', 'onnx_pipe_minmax_hgb_3class',
                    'onnx_pipe_robust_et_reg', 'onnx_pipe_maxabs_dt_3class', 'onnx_pipe_ct_rf',
                    'onnx_pipe_ct_pass_hgb_reg', 'onnx_pipe_edit_signs', 'onnx_pipe_edit_scaler_scalar',
                    'onnx_pipe_edit_impute_modes', 'onnx_pipe_edit_impute_v5',
                    'onnx_pipe_df_ct_rf', 'onnx_pipe_df_hgb_3class', 'onnx_pipe_df_vec_gb',
                    'onnx_pipe_onehot_rf', 'onnx_pipe_onehot_drop_gb_reg', 'onnx_pipe_onehot_hgb_3class',
                    'onnx_pipe_onehot_neg_rf', 'onnx_pipe_onehot_neg_drop_gb', 'onnx_pipe_onehot_neg_hgb_reg']) m;
-- scikit-learn's IsolationForest (gen_onnx_iforest_fixtures.py): skl2onnx writes one tree node
-- per tree whose output is a leaf's id, element-wise nodes turning it into the tree's path
-- length, and offset - 2^(-sum / d) at the end: the score is scikit-learn's decision_function
-- (negative: an outlier).  Tolerance 1e-6 (onnxruntime's Log against the C library's).
SELECT pg_temp.check_ot(m, 'auto', :'fx')
  FROM unnest(ARRAY['onnx_iforest', 'onnx_iforest_boot', 'onnx_iforest_tiny']) m;
RESET client_min_messages;
SELECT * FROM ot_parity ORDER BY model;

-- What gpu_models says: a tree ensemble in format 'onnx', what its score is, the trees it
-- became (one per tree and class for multi-class forests, plus one leaf for the base values),
-- and the converter that wrote it.
SELECT name, format, kind, objective, n_features, n_outputs, n_trees, max_depth, saved_by,
       n_layers, categorical_splits
  FROM gpu_models WHERE name LIKE 'onnx\_%' ORDER BY name;

-- A few rows by hand.  NULL is a missing value, as NaN; binary classifiers give a probability.
SELECT round(gpu_score('onnx_skl_gb_binary', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 1, 0.3])::numeric, 6) AS gb_p,
       round(gpu_score('onnx_xgb_binary', ARRAY[0.5, -0.2, NULL, 30, 0, 0, 1, 0.3])::numeric, 6) AS xgb_p,
       gpu_score('onnx_lgb_binary', ARRAY[0.5, -0.2, NULL, 30, 0, 0, 1, 0.3]::float8[]) =
       gpu_score('onnx_lgb_binary', ARRAY[0.5, -0.2, 'NaN', 30, 0, 0, 1, 0.3]::real[]) AS null_is_nan;
SELECT round(sum(p)::numeric, 5) AS prob_sum, count(*) AS classes
  FROM unnest(gpu_predict('onnx_lgb_3class', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 1, 0.3])) p;
-- An IsolationForest flags what is far from its training rows: an ordinary row scores above 0,
-- one with an amount of 10,000 (the training rows' amounts are at most a few hundred) below.
SELECT round(gpu_score('onnx_iforest', ARRAY[0.1, -0.3, 0.2, 45, 0.1, 0, 1, 0.2])::numeric, 4) AS ordinary,
       round(gpu_score('onnx_iforest', ARRAY[4, -4, 3, 10000, 4, 3, 3, -4])::numeric, 4) AS far_out;
-- A pipeline takes raw values.  SimpleImputer(strategy="median") learned 67.875 for the fourth
-- column: a NULL there scores exactly as 67.875 does, and not as 0 does
SELECT gpu_score('onnx_pipe_impute_std_gb', ARRAY[0.5, -0.2, 0.1, NULL, 0, 0, 1, 0.3]) =
       gpu_score('onnx_pipe_impute_std_gb', ARRAY[0.5, -0.2, 0.1, 67.875, 0, 0, 1, 0.3]) AS null_is_median,
       gpu_score('onnx_pipe_impute_std_gb', ARRAY[0.5, -0.2, 0.1, NULL, 0, 0, 1, 0.3]) =
       gpu_score('onnx_pipe_impute_std_gb', ARRAY[0.5, -0.2, 0.1, 0, 0, 0, 1, 0.3]) AS null_is_zero;
-- A OneHotEncoder of category codes (column 7, codes 0-3) becomes category splits on the codes
-- themselves: a code is truncated as onnxruntime's cast to int64 does (2.5 is 2, -0.5 is 0),
-- codes never seen go where no indicator is set, alike.  (gpu_models above counts the category
-- splits the indicators' splits became.)
SELECT gpu_score('onnx_pipe_onehot_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 2.5, 0.3]) =
       gpu_score('onnx_pipe_onehot_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 2, 0.3]) AS truncated,
       gpu_score('onnx_pipe_onehot_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -0.5, 0.3]) =
       gpu_score('onnx_pipe_onehot_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 0, 0.3]) AS toward_zero,
       gpu_score('onnx_pipe_onehot_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 9, 0.3]) =
       gpu_score('onnx_pipe_onehot_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -7, 0.3]) AS unseen_alike;
-- Negative categories (gen_onnx_onehot_negative_fixtures.py: -2 and -1 as "missing" codes)
-- truncate the same way: -2.5 is -2, -1.5 is -1, -2.0001 is -2 and -3 is a code never seen
SELECT gpu_score('onnx_pipe_onehot_neg_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -2.5, 0.3]) =
       gpu_score('onnx_pipe_onehot_neg_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -2, 0.3]) AS truncated,
       gpu_score('onnx_pipe_onehot_neg_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -2, 0.3]) <>
       gpu_score('onnx_pipe_onehot_neg_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -1, 0.3]) AS categories_differ,
       gpu_score('onnx_pipe_onehot_neg_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, -3, 0.3]) =
       gpu_score('onnx_pipe_onehot_neg_rf', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 9, 0.3]) AS unseen_alike;
-- A pipeline fitted on a pandas DataFrame has one input per column: its features are named
-- after the columns, and a scoring trigger finds them in a table by those names.
SELECT feature_names FROM gpu_models WHERE name = 'onnx_pipe_df_ct_rf';
CREATE TABLE df_tx (id bigint, amount_z real, hour_z real, merchant_risk real, amount real,
                    velocity real, zero_share real, country_code real, device_age real, p real);
CREATE TRIGGER df_score BEFORE INSERT ON df_tx FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=onnx_pipe_df_ct_rf', 'score_column=p');
INSERT INTO df_tx (id, amount_z, hour_z, merchant_risk, amount, velocity, zero_share, country_code, device_age)
  SELECT g, sin(g), cos(g), (g % 5) / 4.0, g * 3.5, CASE WHEN g % 4 = 0 THEN NULL ELSE g % 7 END, 0,
         g % 3, g % 11 FROM generate_series(1, 40) g;
SELECT count(*) AS rows, count(p) AS scored,
       count(*) FILTER (WHERE p IS DISTINCT FROM gpu_score('onnx_pipe_df_ct_rf',
         ARRAY[amount_z, hour_z, merchant_risk, amount, velocity, zero_share, country_code, device_age]))
         AS differing
  FROM df_tx;
DROP TABLE df_tx;
-- BRANCH_EQ / BRANCH_NEQ test exact values: 0 and -0 are equal, so they score alike
SELECT gpu_score('onnx_edit_modes', ARRAY[0.5, -0.2, 0.1, 30, 1, 0, 2, 0.3]) =
       gpu_score('onnx_edit_modes', ARRAY[0.5, -0.2, 0.1, 30, 1, '-0'::real, 2, 0.3]) AS zero_eq_minus_zero;

-- The GPU engine's path, tested without a GPU through the CPU mock of the provider (as in
-- gpu_engine.sql): the same scores through the upload and the two-slot pipeline.  (The
-- kernels' own code for equality splits and onnxruntime's transforms is checked by
-- tests/unit/test_kernel_emulation, the CUDA build by make gputest where a GPU exists.)
\c
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures'
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 50;
CREATE TEMP TABLE ot_rows AS
  SELECT g AS id, ARRAY[sin(g), cos(g * 3), (g % 7) - 3, g % 101, CASE WHEN g % 3 = 0 THEN 0 ELSE g % 5 - 2 END,
                        CASE WHEN g % 4 = 0 THEN 0 END, g % 4, tan(g)]::real[] AS f
    FROM generate_series(1, 300) g;
SELECT m AS model, count(*) AS n_rows,
       count(*) FILTER (WHERE q.scores <> gpu_predict(m, r.f)) AS differing
  FROM unnest(ARRAY['onnx_edit_modes', 'onnx_edit_softmax_zero', 'onnx_xgb_binary', 'onnx_lgb_3class',
                    'onnx_skl_hgb_binary', 'onnx_v5_modes_member', 'onnx_iforest']) m,
       LATERAL gpu_predict_query(m, 'SELECT id, f FROM ot_rows') q JOIN ot_rows r USING (id)
 GROUP BY m ORDER BY m;
SELECT engine, batches, rows FROM gpu_engine_stats() ORDER BY engine;
RESET pg_gpuscore.device;
RESET pg_gpuscore.provider;
RESET pg_gpuscore.batch_size;

-- Errors, each with its SQLSTATE.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- a multi-class model has several outputs: gpu_predict, not gpu_score
SELECT pg_temp.try($$SELECT gpu_score('onnx_lgb_3class', ARRAY[0.5, -0.2, 0.1, 30, 0, 0, 1, 0.3])$$);
SELECT pg_temp.try($$SELECT gpu_score('onnx_lgb_binary', ARRAY[0.5, -0.2, 0.1])$$);
-- gpu_verify_model compares with XGBoost
SELECT pg_temp.try($$SELECT * FROM gpu_verify_model('onnx_xgb_binary')$$);
-- a tree ensemble is no autoencoder
SELECT pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L), %L)', 'ot_bad',
                          :'fx' || '/onnx/trees/onnx_xgb_reg.onnx', 'onnx-autoencoder'));
-- caps count the forest's trees: 6 trees x 3 classes
SET pg_gpuscore.max_trees = 10;
SELECT pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'ot_bad',
                          :'fx' || '/onnx/trees/onnx_skl_rf_3class.onnx'));
RESET pg_gpuscore.max_trees;
-- every hostile or unsupported file (tests/fixtures/onnx/bad/trees_expected.txt)
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'ot_bad',
                                     :'fx' || '/onnx/bad/trees_' || f || '.onnx')) AS error
  FROM unnest(ARRAY['node_id', 'cycle', 'shared_child', 'child_missing', 'feature_out_of_range',
                    'nan_threshold', 'lengths', 'unknown_mode', 'leaf_without_weight', 'duplicate_weight',
                    'weight_nowhere', 'target_out_of_range', 'min_aggregate', 'probit',
                    'split_tree', 'truncated', 'as_tensor', 'class1_only', 'normalizer',
                    'v5_cycle', 'v5_max_aggregate', 'v5_double_splits', 'v5_member_empty']) f;
-- pipelines whose preprocessing cannot be folded (tests/fixtures/onnx/bad/pipe_expected.txt)
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'ot_bad',
                                     :'fx' || '/onnx/bad/pipe_' || f || '.onnx')) AS error
  FROM unnest(ARRAY['impute_zero', 'nan', 'div_zero', 'div_by_features', 'two_features', 'cast_double',
                    'extract_range', 'concat_axis0', 'feature_range', 'steps', 'eq_after_scale',
                    'df_int_column']) f;
SELECT count(*) AS nothing_stored FROM gpu_models WHERE name = 'ot_bad';

SELECT count(*) AS dropped FROM (SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'onnx\_%') d;
DROP TABLE ot_rows;

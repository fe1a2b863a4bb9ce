-- Every model format and feature beyond plain XGBoost trees, scored in SQL
-- against the library's own predictions (tests/fixtures/gen_fixtures_formats.py):
-- XGBoost 3.x and 1.7.4 models with categorical splits, 1.0 - 1.5 models, XGBoost's legacy
-- binary format (1.0 - 2.0, gen_fixtures_binary.py), per-class and
-- per-target base_score (3.1+), multi-target, dart, random forests, and
-- LightGBM text models of every supported objective, with numerical,
-- zero-as-missing and categorical splits.  Each line: the model, rows
-- compared, and whether every output is within the case's tolerance
-- (1e-6, relative above 1: LightGBM's leaves are summed in double as LightGBM does) through
-- gpu_predict, gpu_predict_query and (single-output models) the
-- gpu_score_agg aggregate.
-- Categorical features are passed as the category code in the feature array.
\getenv abs_srcdir PG_ABS_SRCDIR
SET client_min_messages = warning;
CREATE TEMP TABLE formats (model text, file text, n_rows int, ok_row boolean, ok_query boolean,
                           ok_agg boolean);

CREATE FUNCTION pg_temp.check_format(model text, file text, fmt text, dir text,
                                      missing real DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  meta text[];
  nf int;
  nout int;
  tol float8;
  n int;
  bad_row int;
  bad_query int;
  bad_agg int;
BEGIN
  PERFORM gpu_load_model(model, pg_read_binary_file(dir || '/models/' || file), fmt, missing);
  meta := regexp_split_to_array(btrim(pg_read_file(dir || '/cases/' || model || '.meta'), E' \n'), ' ');
  nf := meta[1]::int;
  nout := meta[2]::int;
  -- the objective may be two words ("regression sqrt"); a tolerance comes last
  tol := CASE WHEN cardinality(meta) > 3 AND translate(meta[cardinality(meta)], '0123456789.eE+-', '') = ''
              THEN meta[cardinality(meta)]::float8 ELSE 1e-6 END;
  CREATE TEMP TABLE cases_raw (line text);
  EXECUTE format('COPY cases_raw FROM %L', dir || '/cases/' || model || '.csv');
  CREATE TEMP TABLE cases AS
    SELECT a[1]::bigint AS id, a[2:nf + 1]::real[] AS f, a[nf + 2:nf + 1 + nout]::real[] AS want
      FROM (SELECT string_to_array(line, ',') AS a FROM cases_raw) s;
  SELECT count(*) INTO n FROM cases;
  SELECT count(*) INTO bad_row FROM cases
   WHERE EXISTS (SELECT 1 FROM unnest(gpu_predict(model, f), want) AS u(got, w)
                  WHERE abs(got - w) > tol * greatest(1, abs(w)) OR got IS NULL);
  SELECT count(*) INTO bad_query
    FROM gpu_predict_query(model, 'SELECT id, f FROM cases') q JOIN cases c USING (id)
   WHERE EXISTS (SELECT 1 FROM unnest(q.scores, c.want) AS u(got, w)
                  WHERE abs(got - w) > tol * greatest(1, abs(w)) OR got IS NULL);
  -- the aggregate scores single-output models (NULL: not applicable)
  IF nout = 1 THEN
    SELECT count(*) INTO bad_agg
      FROM gpu_scores((SELECT gpu_score_agg(model, id, f) FROM cases)) r JOIN cases c USING (id)
     WHERE abs(r.score - c.want[1]) > tol * greatest(1, abs(c.want[1])) OR r.score IS NULL;
  END IF;
  INSERT INTO formats VALUES (model, file, n, bad_row = 0, bad_query = 0, bad_agg = 0);
  DROP TABLE cases_raw;
  DROP TABLE cases;
END $$;

-- XGBoost 3.x (JSON and UBJ), Debian's 1.7.4 and 1.6.2 (whose categorical
-- rule differs: invalid codes go the default way), format detected
SELECT pg_temp.check_format(m, m || ext, 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['x3_cat_binary', 'x3_cat_softprob', 'x3_cat_dart_reg', 'x3_cat_rf',
                    'x3_multi_target', 'x3_cat_poisson', 'x3_softmax_rf',
                    'x3_quantile3', 'x3_quantile', 'x3_survival_cox', 'x3_survival_aft',
                    'x3_vector_leaf', 'x3_vector_softprob', 'x3_vector_rf',
                    'x2_vector_leaf', 'x2_vector_softprob',
                    'x17_cat_binary', 'x17_cat_softprob', 'x17_cat_dart_reg',
                    'x16_cat_binary', 'x16_cat_softprob', 'x16_cat_dart_reg']) m,
       unnest(ARRAY['.json', '.ubj']) ext;
-- the same model re-encoded as UBJ with int8 / uint8 typed arrays
SELECT pg_temp.check_format('x3_ubj_int8', 'x3_ubj_int8.ubj', 'xgboost-ubj', :'abs_srcdir' || '/tests/fixtures');
-- XGBoost 1.0.2, 1.3.3, 1.5.2 (JSON; base_score as "5E-1")
SELECT pg_temp.check_format(v || m, v || m || '.json', 'xgboost-json', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['x10_', 'x13_', 'x15_']) v, unnest(ARRAY['binary', 'softprob', 'dart', 'rf']) m;
-- XGBoost's legacy binary format, what save_model("model.model") wrote from 1.0 to 2.0
-- (gen_fixtures_binary.py; 1.0's files lack the magic "binf"): detected, and given
SELECT pg_temp.check_format(v || m, v || m || '.model', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['xb10_', 'xb15_', 'xb17_', 'xb20_']) v,
       unnest(ARRAY['logistic', 'softprob', 'softmax', 'dart', 'rf', 'regression', 'poisson', 'deep']) m;
-- and what releases before 1.0 wrote (gen_fixtures_xgb_pre10.py: 0.72.1, 0.82, 0.90; no
-- magic, no version, base_score stored as a margin), against Debian's XGBoost 1.7.4
SELECT pg_temp.check_format(v || m, v || m || '.model', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['xb072_', 'xb082_', 'xb090_']) v,
       unnest(ARRAY['logistic', 'logitraw', 'softprob', 'softmax', 'dart', 'rf', 'regression',
                    'poisson', 'gamma', 'deep']) m;
SELECT pg_temp.check_format(v || 'hinge', v || 'hinge.model', 'xgboost-binary', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['xb082_', 'xb090_']) v;
SELECT name, format, objective, saved_by FROM gpu_models WHERE name IN ('xb090_logistic', 'xb072_rf', 'xb090_hinge') ORDER BY 1;
SELECT pg_temp.check_format(v || 'sklearn_early', v || 'sklearn_early.model', 'xgboost-binary',
                            :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['xb17_', 'xb20_']) v;
-- XGBoost's scikit-learn `missing` (gen_fixtures_missing.py): XGBClassifier(missing=-999)
-- takes -999 as missing; XGBoost 1.x saves that in the model (x17_*: -999 scores as NULL),
-- 2.0 and later do not (x3_*: -999 is a number, in XGBoost after load_model too)
SELECT pg_temp.check_format(m, m || ext, 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM (VALUES ('x17_sk_missing', '.json'), ('x17_sk_missing', '.model'), ('x17_sk_missing0', '.json'),
               ('x3_sk_missing', '.json'), ('x3_sk_missing', '.ubj'), ('x3_sk_missing0', '.json'),
               ('x3_booster_missing', '.json')) v(m, ext);
-- a file that does not record it (here a Booster trained on a DMatrix(missing=-999)) takes
-- it at load: gpu_load_model(name, bytes, format, missing_value); reference: XGBoost's
-- predict on a DMatrix(missing=-999)
SELECT pg_temp.check_format('x3_booster_missing_m999', 'x3_booster_missing.json', 'auto',
                            :'abs_srcdir' || '/tests/fixtures', -999);
-- LightGBM 4.x text models: format given, then detected (lgb_inf_threshold:
-- splits at threshold inf, "every present value left, missing right";
-- lgb_zero_threshold*: splits at +-1e-35, where LightGBM takes |x| <= 1e-35 as 0;
-- lgb_sigmoid_*: the sigmoid parameter, p = 1 / (1 + exp(-sigmoid * score));
-- lgb_fair_leaves: leaves of 1e5 and more that cancel, 7e-5 off if summed in float)
SELECT pg_temp.check_format(m, m || '.txt', 'lightgbm', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['lgb_binary', 'lgb_regression', 'lgb_regression_l1', 'lgb_huber', 'lgb_fair',
                    'lgb_fair_leaves', 'lgb_quantile', 'lgb_poisson', 'lgb_gamma', 'lgb_tweedie',
                    'lgb_multiclass', 'lgb_multiclassova', 'lgb_cross_entropy']) m;
SELECT pg_temp.check_format(m, m || '.txt', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['lgb_lambdarank', 'lgb_rank_xendcg', 'lgb_rf', 'lgb_zero_missing',
                    'lgb_no_missing', 'lgb_cat_wide', 'lgb_dart', 'lgb_goss',
                    'lgb_inf_threshold', 'lgb_zero_threshold', 'lgb_zero_threshold_nomissing',
                    'lgb_zero_threshold_zam', 'lgb_sigmoid_binary', 'lgb_sigmoid_ova',
                    'lgb_sigmoid_rf']) m;
-- LightGBM trained with a custom objective (the focal loss; a softmax by hand for 3
-- classes): the file names no objective, and the scores are the raw scores, as LightGBM's
-- predict gives them (a NOTICE says so at load)
SELECT pg_temp.check_format(m, m || '.txt', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['lgb_custom_focal', 'lgb_custom_multiclass']) m;
SELECT name, objective, n_outputs FROM gpu_models WHERE name LIKE 'lgb_custom%' ORDER BY name;
SET client_min_messages = notice;
SELECT gpu_load_model('lgb_custom_focal', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/lgb_custom_focal.txt')) > 0 AS reloaded;
SET client_min_messages = warning;
-- LightGBM objectives with their own link: cross_entropy_lambda (the score is
-- log(1 + exp(raw)), an intensity; the probability is 1 - exp(-score)) and regression
-- with reg_sqrt (trained on sign(y) sqrt(|y|); the score is sign(raw) raw^2)
SELECT pg_temp.check_format(m, m || '.txt', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['lgb_xentlambda', 'lgb_reg_sqrt']) m;
SELECT name, objective, n_outputs FROM gpu_models WHERE name IN ('lgb_xentlambda', 'lgb_reg_sqrt') ORDER BY name;
SELECT min(score) < -100 AS squares_negative_raw_scores, max(score) > 100 AS and_positive_ones
  FROM gpu_score_query('lgb_reg_sqrt',
                       'SELECT g, (g % 7) - 3, 1 - (g % 5), 0.5, 40 + g, (g % 3) - 1, 0, 0.2, -0.4, g % 30, g % 5
                          FROM generate_series(1, 500) g');
-- LightGBM linear trees (linear_tree=true, gen_fixtures_lgb_linear.py): each leaf holds a
-- linear model of some numerical features, and gives its plain value when one of them is
-- NaN, as LightGBM's predict; binary with categorical features, regression, multiclass, rf
SELECT pg_temp.check_format(m, m || '.txt', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['lgb_linear_binary', 'lgb_linear_regression', 'lgb_linear_multiclass',
                    'lgb_linear_rf']) m;
SELECT name, kind, objective, n_outputs, n_trees FROM gpu_models WHERE name LIKE 'lgb\_linear%' ORDER BY name;
-- only the CPU engine scores them: 'gpu' is refused ('auto' stays on the CPU), and they
-- have no explanations (LightGBM's pred_contrib refuses linear trees too)
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('lgb_linear_regression',
                                     'SELECT g, g % 5, 1, 2, 3, 4, 5, 6, 7, 1, 2 FROM generate_series(1, 100) g');
SET pg_gpuscore.device = 'auto';
SELECT count(*) FROM gpu_score_query('lgb_linear_regression',
                                     'SELECT g, g % 5, 1, 2, 3, 4, 5, 6, 7, 1, 2 FROM generate_series(1, 100) g');
RESET pg_gpuscore.device;
SELECT * FROM gpu_explain('lgb_linear_binary', ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 1, 2]);
\set VERBOSITY sqlstate
SELECT * FROM gpu_explain('lgb_linear_binary', ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 1, 2]);
\set VERBOSITY default
-- LightGBM 3.3.5 (model format v3)
SELECT pg_temp.check_format(m, m || '.txt', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['lgb3_binary', 'lgb3_multiclass', 'lgb3_rf']) m;
-- CatBoost models saved as JSON (save_model(..., format="json"); gen_fixtures_catboost.py,
-- CatBoost 1.2.10), detected by 'auto': symmetric trees with NaN as the smallest value (the
-- default) or the largest (nan_mode Max), non-symmetric trees (Depthwise; Lossguide with a
-- vector of class values per leaf), Logloss, MultiClass, MultiClassOneVsAll, RMSE (a bias),
-- Poisson, MultiRMSE, YetiRank, Focal, MultiLogloss (3 labels), Cox, SurvivalAft, a model
-- scaled by set_scale_and_bias, trees of depth 10; the rows include values exactly at the
-- split borders (CatBoost goes right when x > border)
SELECT pg_temp.check_format(m, m || '.json', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['cb_binary', 'cb_nanmax', 'cb_multiclass', 'cb_ova', 'cb_regression',
                    'cb_poisson', 'cb_multirmse', 'cb_yetirank', 'cb_depthwise', 'cb_lossguide',
                    'cb_scaled', 'cb_deep', 'cb_focal', 'cb_multilogloss', 'cb_cox', 'cb_aft']) m;
-- with categorical features (gen_fixtures_catboost_cats.py): one-hot splits and CTRs of
-- categories given as codes in the arrays (NaN: a name the model never saw); by name in
-- catboost_cats.sql
SELECT pg_temp.check_format(m, m || '.json', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['cb_cat_binary', 'cb_cat_multiclass', 'cb_cat_regression', 'cb_cat_combo',
                    'cb_cat_depthwise', 'cb_cat_int']) m;
SELECT name, format, objective, n_features, n_outputs, n_trees, max_depth, saved_by
  FROM gpu_models WHERE name LIKE 'cb\_%' ORDER BY name;
-- a model trained on a DataFrame keeps its column names
SELECT feature_names FROM gpu_models WHERE name = 'cb_binary';
-- CatBoost before 0.20 (gen_fixtures_catboost_old.py: 0.12.2, 0.16.5): no scale_and_bias
-- (scale 1, bias 0), oblivious_trees first and an integer beyond int64 in model_info; detected
-- by its keys; reference: CatBoost 1.2.10's predict of the same files
SELECT pg_temp.check_format(v || m, v || m || '.json', 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['cb012_', 'cb016_']) v, unnest(ARRAY['binary', 'multiclass', 'regression']) m;
-- every feature categorical: CatBoost 1.2.10 writes no float_features
SELECT pg_temp.check_format('cb_allcat', 'cb_allcat.json', 'auto', :'abs_srcdir' || '/tests/fixtures');
SELECT name, format, objective, n_features, n_outputs, n_trees
  FROM gpu_models WHERE name IN ('cb012_multiclass', 'cb016_regression', 'cb_allcat') ORDER BY name;
-- catboost.sum_models writes no loss function: raw values, as CatBoost's predict, with a NOTICE
SET client_min_messages = notice;
SELECT gpu_load_model('cb_summed', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/cb_summed.json')) > 0 AS loaded;
SET client_min_messages = warning;
SELECT pg_temp.check_format('cb_summed', 'cb_summed.json', 'auto', :'abs_srcdir' || '/tests/fixtures');
SELECT name, objective, n_trees FROM gpu_models WHERE name = 'cb_summed';
-- the format can be given; another format's name is refused as that format
SELECT gpu_load_model('cb_nanmax', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/cb_nanmax.json'), 'catboost-json') > 0 AS reloaded;
SELECT gpu_load_model('cbx', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/cb_nanmax.json'), 'lightgbm');
-- refused: RMSEWithUncertainty, hostile edits
\set cbbad :abs_srcdir '/tests/fixtures/models/bad/cb_bad_'
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'uncertainty.json'));
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'split_type.json'));
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'feature.json'));
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'child.json'));
SELECT gpu_load_model('cbx', pg_read_binary_file(:'cbbad' || 'truncated.json'));
CREATE FUNCTION pg_temp.load_sqlstate(file text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM gpu_load_model('cbx', pg_read_binary_file(file));
  RETURN 'loaded';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
SELECT f, pg_temp.load_sqlstate(:'cbbad' || f || '.json') AS sqlstate
  FROM unnest(ARRAY['uncertainty', 'loss', 'split_type', 'feature', 'border',
                    'border_huge', 'leaf_count', 'leaf_value', 'nan_mode', 'flat_index', 'bias',
                    'scale', 'no_trees', 'child', 'truncated', 'depth']) f;
SELECT count(*) AS stored FROM gpu_models WHERE name = 'cbx';
-- Explanations of CatBoost models are CatBoost's ShapValues
-- (get_feature_importance(type="ShapValues")), weighed by the model's leaf weights:
-- 300 rows spread over every border, some reaching leaves no training row reached
-- (gen_fixtures_shap.py), 3 classes, each line the row's 10 features then CatBoost's
-- 3 x 11 contributions
CREATE TEMP TABLE cb_wide (line text);
\set f :abs_srcdir '/tests/fixtures/shap/cb_multiclass_wide.csv'
COPY cb_wide FROM :'f';
SELECT count(DISTINCT w.id) AS rows, count(*) AS contributions,
       max(abs(e.contribution - w.phi[(e.output - 1) * 11 + coalesce(e.feature, 11)])
           / greatest(1, abs(w.phi[(e.output - 1) * 11 + coalesce(e.feature, 11)]))) < 1e-6 AS agrees_with_catboost
  FROM (SELECT a[1]::int AS id, a[2:11]::real[] AS x, a[12:44]::float8[] AS phi
          FROM (SELECT string_to_array(line, ',') FROM cb_wide) s(a)) w,
       gpu_explain('cb_multiclass', w.x) e;
-- CatBoost explains no model with a scale other than 1 (set_scale_and_bias), nor do we
SELECT * FROM gpu_explain('cb_scaled', ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 1, 2]);
-- Early stopping through XGBoost's scikit-learn API (gen_fixtures_campaign.py): the file the
-- model saved is scored with the rounds up to best_iteration, as its predict_proba does; the same
-- model saved from its Booster with every round, as Booster.predict does
SELECT pg_temp.check_format(v || m, v || m || ext, 'auto', :'abs_srcdir' || '/tests/fixtures')
  FROM unnest(ARRAY['x3_', 'x17_']) v,
       unnest(ARRAY['sklearn_early_stop', 'sklearn_early_stop_rf3', 'booster_early_stop']) m,
       unnest(ARRAY['.json']) ext;
SELECT model, file, n_rows, ok_row, ok_query, ok_agg FROM formats ORDER BY file, model;

-- What gpu_models says about them: format, the library that saved the model
-- (LightGBM records only its model format version), categorical splits.
SELECT name, format, objective, n_outputs, n_trees, saved_by, categorical_splits > 0 AS has_categorical
  FROM gpu_models
 WHERE name IN ('x3_cat_binary', 'x3_multi_target', 'x3_quantile3', 'x3_survival_aft', 'x3_vector_leaf', 'x17_cat_binary', 'lgb_binary',
                'lgb_multiclass', 'lgb_rf', 'lgb_regression', 'xb10_logistic', 'xb20_dart')
 ORDER BY name;
-- a binary file and the JSON file the same XGBoost saved: the same explanations (the covers
-- come from the binary file's node statistics)
SELECT gpu_load_model('xb17_softprob_json', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/xb17_softprob.json')) > 0 AS loaded;
SELECT count(*) AS contributions, count(*) FILTER (WHERE b.contribution IS DISTINCT FROM j.contribution) AS differ
  FROM generate_series(1, 20) i
  CROSS JOIN LATERAL (SELECT array_agg(((i * 7 + k * 13) % 17 - 8) / 4.0) AS f
                        FROM generate_series(1, 12) k) r
  CROSS JOIN LATERAL gpu_explain('xb17_softprob', r.f) b
  JOIN LATERAL gpu_explain('xb17_softprob_json', r.f) j
    ON j.output = b.output AND j.feature IS NOT DISTINCT FROM b.feature;

-- Categorical rules, one row each on x3_cat_binary (feature 9 = cat_a, a
-- partition split; feature 10 = cat_b, one-hot): scores equal XGBoost's for
-- unseen codes, NaN, negative and fractional codes (already in the cases
-- above); here the value of one unseen code equals that of another.
SELECT gpu_score('x3_cat_binary', ARRAY[0.1, -0.2, 0.3, 50, 0, 0, 0.5, -1, 45, 1]::float8[]) =
       gpu_score('x3_cat_binary', ARRAY[0.1, -0.2, 0.3, 50, 0, 0, 0.5, -1, 1000, 1]::float8[])
       AS unseen_codes_alike;

-- Errors: a format that does not match the bytes, refused features.
SELECT gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x3_cat_binary.json'), 'lightgbm');
SELECT gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/lgb_binary.txt'), 'xgboost-json');
SELECT gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x3_cat_binary.json'), 'xgboost-binary');
-- a binary model cut short, and one whose version was wiped (the rest of its header is no
-- pre-1.0 header: 1.7 records num_target there)
\set xb :abs_srcdir '/tests/fixtures/models/xb17_logistic.model'
SELECT gpu_load_model('x', substr(pg_read_binary_file(:'xb'), 1, 5000));
SELECT gpu_load_model('x', overlay(pg_read_binary_file(:'xb') PLACING '\x0000000000000000'::bytea FROM 25 FOR 8));
-- 'auto' says the same of it, and of a header cut short after the objective's name
SELECT gpu_load_model('x', overlay(pg_read_binary_file(:'xb') PLACING '\x0000000000000000'::bytea FROM 25 FOR 8), 'auto');
SELECT gpu_load_model('x', substr(overlay(pg_read_binary_file(:'xb') PLACING '\x0000000000000000'::bytea FROM 25 FOR 8), 5, 170), 'auto');
\set bad :abs_srcdir '/tests/fixtures/models/bad/'
\set f :bad 'lgb_bad_cycle.txt'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'lgb_bad_bitset_bounds.txt'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'lgb_bad_objective.txt'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'lgb_bad_truncated.txt'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));

SELECT count(*) > 0 AS dropped FROM (SELECT gpu_drop_model(name) FROM gpu_models
                                     WHERE name ~ '^(x3|x1[0357]|xb[0-9]+|lgb3?)_') d;

-- gpu_verify_model loads the XGBoost library at run time
-- (pg_gpuscore.xgboost_library, empty: the system's) and says which one it used.
SELECT gpu_load_model('x17', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x17_cat_binary.ubj')) > 0 AS loaded;
SELECT gpu_load_model('x3', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x3_cat_binary.json')) > 0 AS loaded;
SELECT gpu_load_model('lgb', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/lgb_binary.txt')) > 0 AS loaded;
-- categorical features get generated codes (in the sets, unseen, negative)
SELECT model, engine, rows_compared, mismatches, passed, xgboost_library
  FROM gpu_verify_model('x17', 3000) WHERE engine = 'cpu';
-- a model saved with missing=-999: XGBoost is asked to take -999 as missing too, and one
-- generated value in twenty is -999
RESET client_min_messages;
SELECT gpu_load_model('skm', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x17_sk_missing.json')) > 0 AS loaded;
SELECT name, missing_value FROM gpu_models WHERE name IN ('skm', 'xbin', 'x17') ORDER BY name;
-- a missing value given at load replaces the file's (NOTICE); only XGBoost models take one
SELECT gpu_load_model('skm2', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x17_sk_missing.json'), 'auto', -1) > 0 AS loaded;
SELECT name, missing_value FROM gpu_models WHERE name = 'skm2';
SELECT gpu_score('skm2', ARRAY[0.5, -1, 1, -999, 0, 2, -1, 1]) = gpu_score('skm2', ARRAY[0.5, NULL, 1, -999, 0, 2, NULL, 1]) AS minus_1_is_missing,
       gpu_score('skm2', ARRAY[0.5, -1, 1, -999, 0, 2, -1, 1]) <> gpu_score('skm2', ARRAY[0.5, NULL, 1, NULL, 0, 2, NULL, 1]) AS minus_999_is_not;
SELECT gpu_drop_model('skm2');
SELECT gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/lgb_binary.txt'), 'auto', -999);
SELECT gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x17_sk_missing.json'), 'auto', 'Infinity');
-- NULL and NaN: none given
SELECT gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/xb17_rf.json'), 'auto', NULL) AS v1,
       gpu_load_model('x', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/xb17_rf.json'), 'auto', 'NaN') AS v2;
SELECT missing_value IS NULL AS none FROM gpu_models WHERE name = 'x';
SELECT gpu_drop_model('x');
SET client_min_messages = warning;
SELECT model, engine, rows_compared, mismatches, passed FROM gpu_verify_model('skm', 3000) WHERE engine = 'cpu';
-- explanations take it as missing: its value is NULL, as NULL's is
SELECT count(*) AS features, count(*) FILTER (WHERE a.value IS DISTINCT FROM b.value OR a.contribution <> b.contribution) AS differ
  FROM gpu_explain('skm', ARRAY[0.5, -999, 1, -999, 0, 2, -999, 1]) a
  JOIN gpu_explain('skm', ARRAY[0.5, NULL, 1, NULL, 0, 2, NULL, 1]) b
    ON a.output = b.output AND a.feature IS NOT DISTINCT FROM b.feature;
SELECT gpu_drop_model('skm');
-- a model in the legacy binary format: XGBoost reads the same bytes
SELECT gpu_load_model('xbin', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/xb17_dart.model')) > 0 AS loaded;
SELECT model, engine, rows_compared, mismatches, passed FROM gpu_verify_model('xbin', 3000) WHERE engine = 'cpu';
-- a model newer than the library: a warning says the comparison may not hold
SET client_min_messages = warning;
SELECT count(*) > 0 AS compared FROM gpu_verify_model('x3', 100) WHERE engine = 'cpu';
SELECT model FROM gpu_verify_model('lgb', 100);
SELECT model FROM gpu_verify_model('cb_nanmax', 100);
-- early stopping: the NOTICE at load, the trees kept, and XGBoost asked for the same rounds
RESET client_min_messages;
\set es :abs_srcdir '/tests/fixtures/models/x17_'
SELECT gpu_load_model('es', pg_read_binary_file(:'es' || 'sklearn_early_stop.json')) > 0 AS loaded;
SELECT gpu_load_model('es_rf3', pg_read_binary_file(:'es' || 'sklearn_early_stop_rf3.json')) > 0 AS loaded;
SELECT gpu_load_model('es_booster', pg_read_binary_file(:'es' || 'booster_early_stop.json')) > 0 AS loaded;
SET client_min_messages = warning;
SELECT name, n_trees FROM gpu_models WHERE name LIKE 'es%' ORDER BY name;
SELECT model, engine, rows_compared, mismatches, passed
  FROM unnest(ARRAY['es', 'es_rf3', 'es_booster']) m, gpu_verify_model(m, 3000)
 WHERE engine = 'cpu';
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'es%' ORDER BY name;
-- a model the library cannot read at all (reg:quantileerror came in XGBoost 2.0):
-- XGBoost's own message, without its stack trace
SELECT gpu_load_model('xq', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/x3_quantile3.json')) > 0 AS loaded;
SELECT model FROM gpu_verify_model('xq', 100);
SELECT gpu_drop_model('xq');
SET pg_gpuscore.xgboost_library = '/nonexistent/libxgboost.so';
SELECT model FROM gpu_verify_model('x17', 100);
RESET pg_gpuscore.xgboost_library;
SELECT gpu_drop_model('x17'), gpu_drop_model('x3'), gpu_drop_model('lgb');

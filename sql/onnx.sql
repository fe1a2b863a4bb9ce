-- Neural networks read from ONNX (feed-forward MLPs and autoencoders): loading,
-- what gpu_models shows, scoring through every path (gpu_score, gpu_predict,
-- gpu_score_query, gpu_predict_query, gpu_score_agg, the score trigger) against
-- onnxruntime's own outputs (tests/fixtures/gen_onnx_fixtures.py; scikit-learn
-- networks exported by skl2onnx: gen_onnx_sklearn_fixtures.py), and every
-- error; and XGBoost's linear booster, scored as a one-layer network.
-- An output passes within 1e-5 of the larger of |onnxruntime's| and that output's scale (its
-- largest |onnxruntime's| over the case's rows), or 1e-6: a small output made of large
-- cancelling terms carries rounding of the size of its terms (tests/common/nn_tolerance.h).
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures/onnx'

-- 'onnx' explicitly, 'auto' (detected), and reconstruction-error scoring
SELECT gpu_load_model('nn_sigmoid', pg_read_binary_file(:'fx' || '/mlp_sigmoid.onnx'), 'onnx') AS v1,
       gpu_load_model('nn_bn', pg_read_binary_file(:'fx' || '/mlp_bn_leaky.onnx')) AS v2,
       gpu_load_model('nn_softmax', pg_read_binary_file(:'fx' || '/mlp_softmax.onnx'), 'ONNX') AS v3,
       gpu_load_model('nn_scaled', pg_read_binary_file(:'fx' || '/mlp_scaled.onnx')) AS v4,
       gpu_load_model('nn_ae', pg_read_binary_file(:'fx' || '/autoencoder.onnx'), 'onnx-autoencoder') AS v5,
       gpu_load_model('nn_ae_net', pg_read_binary_file(:'fx' || '/autoencoder.onnx'), 'auto') AS v6;
SELECT name, format, objective, n_features, n_outputs, n_trees, max_depth, kind, n_layers,
       n_parameters, saved_by, feature_names
  FROM gpu_models WHERE kind <> 'tree-ensemble' ORDER BY name;

-- Parity with onnxruntime on every fixture case, through every scoring path.
SET client_min_messages = warning;
CREATE TEMP TABLE nn_parity (model text, n_rows int, predict_ok boolean, query_ok boolean,
                             score_ok boolean, score_query_ok boolean, agg_ok boolean);
CREATE FUNCTION pg_temp.close_enough(got real, want real, scale float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT got IS NOT NULL AND
         (got = want OR abs(got::float8 - want) <= greatest(1e-5 * greatest(abs(want), scale), 1e-6))
$$;
CREATE FUNCTION pg_temp.check_nn(model text, file_case text, dir text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  meta text[];
  nf int;
  nout int;
  n int;
  bad_predict int;
  bad_query int;
  bad_score int;
  bad_score_query int;
  bad_agg int;
  scales float8[];
BEGIN
  meta := regexp_split_to_array(trim(pg_read_file(dir || '/' || file_case || '.meta')), ' ');
  nf := meta[1]::int;
  nout := meta[2]::int;
  CREATE TEMP TABLE cases_raw (line text);
  EXECUTE format('COPY cases_raw FROM %L', dir || '/' || file_case || '.csv');
  CREATE TEMP TABLE cases AS
    SELECT a[1]::bigint AS id, a[2:nf + 1]::real[] AS f, a[nf + 2:nf + 1 + nout]::real[] AS want
      FROM (SELECT string_to_array(line, ',') AS a FROM cases_raw) s;
  SELECT count(*) INTO n FROM cases;
  SELECT array_agg(coalesce(s, 0) ORDER BY k) INTO scales
    FROM (SELECT k, max(abs(c.want[k])) FILTER (WHERE c.want[k] NOT IN ('NaN', 'Infinity', '-Infinity')) AS s
            FROM cases c, generate_series(1, nout) k GROUP BY k) t;
  SELECT count(*) INTO bad_predict FROM cases
   WHERE EXISTS (SELECT 1 FROM unnest(gpu_predict(model, f), want, scales) AS u(got, w, s)
                  WHERE NOT pg_temp.close_enough(got, w, s));
  SELECT count(*) INTO bad_query
    FROM gpu_predict_query(model, 'SELECT id, f FROM cases') q JOIN cases c USING (id)
   WHERE EXISTS (SELECT 1 FROM unnest(q.scores, c.want, scales) AS u(got, w, s)
                  WHERE NOT pg_temp.close_enough(got, w, s));
  IF nout = 1 THEN
    SELECT count(*) INTO bad_score FROM cases
     WHERE NOT pg_temp.close_enough(gpu_score(model, f), want[1], scales[1]);
    SELECT n - count(*) FILTER (WHERE pg_temp.close_enough(q.score, c.want[1], scales[1])) INTO bad_score_query
      FROM gpu_score_query(model, 'SELECT id, f FROM cases') q JOIN cases c USING (id);
    SELECT n - count(*) FILTER (WHERE pg_temp.close_enough(s.score, c.want[1], scales[1])) INTO bad_agg
      FROM gpu_scores((SELECT gpu_score_agg(model, id, f) FROM cases)) s JOIN cases c USING (id);
  END IF;
  INSERT INTO nn_parity VALUES (model, n, bad_predict = 0, bad_query = 0, bad_score = 0,
                                bad_score_query = 0, bad_agg = 0);
  DROP TABLE cases_raw;
  DROP TABLE cases;
END $$;
SELECT pg_temp.check_nn(m, c, :'fx')
  FROM (VALUES ('nn_sigmoid', 'mlp_sigmoid'), ('nn_bn', 'mlp_bn_leaky'), ('nn_softmax', 'mlp_softmax'),
               ('nn_scaled', 'mlp_scaled'), ('nn_ae', 'autoencoder'), ('nn_ae_net', 'autoencoder_net')) v(m, c);
RESET client_min_messages;
SELECT * FROM nn_parity ORDER BY model;

-- XGBoost's linear booster (booster="gblinear"; tests/fixtures/gen_fixtures_linear.py, XGBoost
-- 1.7.4 and 3.2.0) is scored as a network of one dense layer: gpu_models says kind 'linear' and
-- XGBoost's objective; the scores are XGBoost's predict (its float sum, in its order) in every
-- path, with NaN and the scikit-learn API's saved missing=-999 adding nothing.
\set lin :abs_srcdir '/tests/fixtures/models/linear/'
SET client_min_messages = warning;
SELECT count(gpu_load_model(m, pg_read_binary_file(:'lin' || m || '.json'))) AS loaded
  FROM unnest(ARRAY['x17l_binary', 'x17l_regression', 'x17l_sk_missing', 'x3l_binary', 'x3l_softprob']) m;
SELECT gpu_load_model('x3l_regression', pg_read_binary_file(:'lin' || 'x3l_regression.ubj')) AS ubj;
SELECT pg_temp.check_nn(m, m, :'fx')
  FROM unnest(ARRAY['x17l_binary', 'x17l_regression', 'x17l_sk_missing', 'x3l_binary', 'x3l_regression',
                    'x3l_softprob']) m;
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE ANY (ARRAY['x17l\_%', 'x3l\_%']) ORDER BY model;
SELECT name, format, objective, n_outputs, n_trees, kind, n_layers, n_parameters, saved_by, missing_value
  FROM gpu_models WHERE name LIKE ANY (ARRAY['x17l\_%', 'x3l\_%']) ORDER BY name;
-- a missing value given at load (XGBoost 2.0 and later do not save the scikit-learn API's)
SELECT gpu_load_model('x3l_binary', pg_read_binary_file(:'lin' || 'x3l_binary.json'), 'auto', -999) AS v2;
SELECT gpu_score('x3l_binary', array_fill(-999::real, ARRAY[30])) =
       gpu_score('x3l_binary', array_fill('NaN'::real, ARRAY[30])) AS minus_999_is_missing,
       (SELECT missing_value FROM gpu_models WHERE name = 'x3l_binary') AS missing_value;
-- explanations are XGBoost's for gblinear (each present feature's value times its weight, and
-- the bias; test_mlp checks them against pred_contribs): they add up to the margin, a missing
-- value (-999 here) contributes nothing; gpu_explain_query ranks them
SELECT round(sum(contribution)::numeric, 4) = round(ln(s / (1 - s))::numeric, 4) AS adds_up_to_margin,
       count(*) FILTER (WHERE value IS NULL AND contribution = 0) AS missing_contribute_nothing
  FROM gpu_explain('x3l_binary', ARRAY[-999, 2, 3, -999, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                       18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]::real[]) e,
       gpu_score('x3l_binary', ARRAY[-999, 2, 3, -999, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                     18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]::real[]) s
 GROUP BY s;
SELECT id, rank, feature, contribution > 0 AS raises
  FROM gpu_explain_query('x3l_softprob', 'SELECT 1, array_fill(1::real, ARRAY[30])', top => 2)
 WHERE output = 2 ORDER BY rank;
-- gpu_verify_model compares it with the XGBoost library (Debian's 1.7.4 here, so the models it
-- saved: 1.7 reads 3.x's base_score "[3.58E-1]" wrongly, which the WARNING for newer models is
-- about), on random rows with NaN and the missing value -999
SELECT model, engine, rows_compared, max_abs_diff, mismatches, passed
  FROM gpu_verify_model('x17l_sk_missing', 3000)
UNION ALL
SELECT model, engine, rows_compared, max_abs_diff, mismatches, passed
  FROM gpu_verify_model('x17l_binary', 3000)
UNION ALL
SELECT model, engine, rows_compared, max_abs_diff, mismatches, passed
  FROM gpu_verify_model('x17l_regression', 3000);
-- refused files
SELECT gpu_load_model('x', pg_read_binary_file(:'lin' || 'bad/x3l_linear_poisson.json'));
SELECT gpu_load_model('x', pg_read_binary_file(:'lin' || 'bad/x17l_linear_binary.model'));
-- the CPU engine scores it (a dot product per row): batches stay there under 'auto', and
-- 'gpu' says so, with or without a GPU
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('x3l_binary', 'SELECT 1, array_fill(1::real, ARRAY[30])');
RESET pg_gpuscore.device;
SELECT count(gpu_drop_model(name)) AS dropped FROM gpu_models WHERE name LIKE ANY (ARRAY['x17l\_%', 'x3l\_%']);

-- scikit-learn networks as skl2onnx exports them (tests/fixtures/gen_onnx_sklearn_fixtures.py):
-- a leading Cast to float, a pipeline's StandardScaler as an ai.onnx.ml Scaler or MinMaxScaler as
-- Mul + Add, a classifier's label output ignored (its probabilities scored), a binary classifier's
-- Concat(1 - p, p) scored as p, the probability of the second class.
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx')) AS version
  FROM unnest(ARRAY['skl_mlp_reg', 'skl_mlp_reg_tanh', 'skl_mlp_bin', 'skl_mlp_3class_tanh',
                    'skl_mlp_4class_logistic', 'skl_pipe_std_bin', 'skl_pipe_std_3class',
                    'skl_pipe_minmax_reg', 'skl_edit_scaler1', 'skl_pipe_impute_bin']) c;
-- Pipelines whose columns are not all treated alike (gen_onnx_mlp_pipeline_fixtures.py): a
-- ColumnTransformer picks groups of columns, scales, imputes or one-hot encodes each its own way
-- and drops or passes through the rest; a pipeline fitted on a pandas DataFrame has one input per
-- column.  skl_zipmap_*: classifiers converted without options, their probabilities as
-- skl2onnx's default ZipMap (a sequence of maps), whose input is scored.
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx')) AS version
  FROM unnest(ARRAY['skl_ct_bin', 'skl_ct_pass_3class', 'skl_ct_reg', 'skl_edit_ct_signs',
                    'skl_df_ct_bin', 'skl_df_std_reg', 'skl_ct_onehot_bin', 'skl_ct_onehot_drop_reg',
                    'skl_ct_onehot_drop_one', 'skl_df_onehot_bin', 'skl_zipmap_bin',
                    'skl_zipmap_ct_3class', 'skl_ct_impute_sentinel']) c;
SELECT name, objective, n_features, n_outputs, kind, n_layers, n_parameters, saved_by
  FROM gpu_models WHERE name LIKE 'nn_skl%' ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx') FROM gpu_models WHERE name LIKE 'nn_skl%';
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_skl%' ORDER BY model;
-- A ColumnTransformer's dropped columns are never read: a NULL there changes nothing (skl_ct_bin
-- keeps columns 0 2 5 11 and 7 3 1 of its 30; column 4, the 5th value, is dropped), while a NULL
-- in an imputed column (column 7) scores as the median SimpleImputer learned, -29.707914, and one
-- in a scaled, not imputed, column (column 0) gives NaN, as in onnxruntime.
CREATE FUNCTION pg_temp.row_with(k int, v real) RETURNS real[] LANGUAGE sql AS
  $$ SELECT array_agg(CASE WHEN i = k THEN v ELSE (i % 7) / 3.0 END::real ORDER BY i)
       FROM generate_series(1, 30) i $$;
SELECT gpu_score('nn_skl_ct_bin', pg_temp.row_with(5, NULL)) =
       gpu_score('nn_skl_ct_bin', pg_temp.row_with(5, 1e6)) AS dropped_ignored,
       gpu_score('nn_skl_ct_bin', pg_temp.row_with(8, NULL)) =
       gpu_score('nn_skl_ct_bin', pg_temp.row_with(8, -29.707914352416992)) AS null_is_median,
       gpu_score('nn_skl_ct_bin', pg_temp.row_with(8, NULL)) =
       gpu_score('nn_skl_ct_bin', pg_temp.row_with(8, 0)) AS null_is_zero,
       gpu_score('nn_skl_ct_bin', pg_temp.row_with(1, NULL)) AS null_scaled;
-- An imputer may replace a number, not NaN (skl_ct_impute_sentinel): 0 in columns 0 and 2 (the 1st
-- and 3rd values) becomes the column's mean (-5.525371 for column 0), a -1 sentinel in column 4
-- (the 5th value) the median, -59.693111; any other value, a NaN included, is kept.
SELECT gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(1, 0)) =
       gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(1, -5.525371074676514)) AS zero_is_mean,
       gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(5, -1)) =
       gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(5, -59.693111419677734)) AS sentinel_is_median,
       gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(5, -1)) <>
       gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(5, -1.5)) AS others_kept,
       gpu_score('nn_skl_ct_impute_sentinel', pg_temp.row_with(5, NULL)) AS null_not_imputed;
-- A OneHotEncoder reads category codes: skl_ct_onehot_bin encodes column 3 (codes 0-5, the 4th
-- value) and column 8 (10, 20, 30, 99).  A code is truncated to an integer, as onnxruntime's cast
-- to int64 does (2.5 is 2, -0.5 is 0); codes it never saw (7, 42, -1) set none of the columns
-- (handle_unknown="ignore"), so they score alike, and unlike a known code.
SELECT gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 2.5)) =
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 2)) AS truncated,
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, -0.5)) =
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 0)) AS toward_zero,
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 7)) =
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 42)) AND
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 42)) =
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, -1)) AS unknown_alike,
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 7)) =
       gpu_score('nn_skl_ct_onehot_bin', pg_temp.row_with(4, 2)) AS unknown_is_known;
-- A DataFrame's model names its features after the columns, and a scoring trigger finds them in
-- a table by those names, in any order.
SELECT feature_names FROM gpu_models WHERE name = 'nn_skl_df_ct_bin';
CREATE TABLE df_nn_tx (id bigint, card_age_days real, amount real, hour real, merchant_risk real,
                       velocity_1h real, country_risk real, device_age_days real, amount_z real,
                       p real);
CREATE TRIGGER df_nn_score BEFORE INSERT ON df_nn_tx FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=nn_skl_df_ct_bin', 'score_column=p');
INSERT INTO df_nn_tx (id, card_age_days, amount, hour, merchant_risk, velocity_1h, country_risk,
                      device_age_days, amount_z)
  SELECT g, g % 400, g * 13.5, g % 24, (g % 5) / 4.0, g % 9, CASE WHEN g % 4 = 0 THEN NULL ELSE g % 3 END,
         g % 700, sin(g) FROM generate_series(1, 40) g;
-- (compared with the calls row by row, as the trigger scores: a network's batch of 40 rows may
-- round differently in OpenBLAS than one row at a time)
SET pg_gpuscore.batch_calls = off;
SELECT count(*) AS rows, count(p) FILTER (WHERE p = p) AS scored,
       count(*) FILTER (WHERE p IS DISTINCT FROM gpu_score('nn_skl_df_ct_bin',
         ARRAY[amount, hour, merchant_risk, velocity_1h, country_risk, device_age_days,
               card_age_days, amount_z])) AS differing
  FROM df_nn_tx;
RESET pg_gpuscore.batch_calls;
DROP TABLE df_nn_tx;
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'nn_skl%' ORDER BY name;

-- Networks exported by PyTorch (tests/fixtures/gen_onnx_torch_fixtures.py; reference: PyTorch's
-- outputs, which onnxruntime matches) and a graph of the other activations (reference: numpy):
-- Elu, Selu, Softplus, Softsign, HardSigmoid, PRelu, Clip (ReLU6, Hardtanh; bounds as inputs
-- and, before opset 11, as attributes), BatchNorm1d, an autoencoder with ELU, GELU / SiLU /
-- Softsign as PyTorch writes them (several nodes each, read as one step; GELU's tanh form
-- too, its cube written as Mul(h, Mul(h, h))), opset 20's Gelu, LayerNorm as exports before
-- opset 17 write it (ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div, with and without
-- its weight and bias), read as one step, and nn.GLU (Split into halves, Sigmoid, Mul).
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx'),
                                    CASE WHEN c = 'torch_autoencoder' THEN 'onnx-autoencoder' ELSE 'onnx' END) AS version
  FROM unnest(ARRAY['torch_sigmoid', 'torch_bn_prelu', 'torch_elu_selu', 'torch_softplus',
                    'torch_relu6', 'torch_clip_opset9', 'torch_autoencoder', 'torch_gelu_silu',
                    'torch_gelu_tanh', 'torch_layernorm_opset14', 'torch_glu', 'onnx_activations', 'onnx_gelu_op']) c;
SELECT name, objective, n_outputs, kind, n_layers, n_parameters, saved_by
  FROM gpu_models WHERE name LIKE 'nn_torch%' OR name IN ('nn_onnx_activations', 'nn_onnx_gelu_op') ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx')
  FROM gpu_models WHERE name LIKE 'nn_torch%' OR name IN ('nn_onnx_activations', 'nn_onnx_gelu_op');
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_torch%' OR model IN ('nn_onnx_activations', 'nn_onnx_gelu_op') ORDER BY model;
SELECT gpu_drop_model(name) FROM gpu_models
 WHERE name LIKE 'nn_torch%' OR name IN ('nn_onnx_activations', 'nn_onnx_gelu_op') ORDER BY name;

-- Skip connections and branches (tests/fixtures/gen_onnx_skip_fixtures.py): residual blocks
-- out = h + f(h) as PyTorch exports them (a tabular ResNet with BatchNorm1d, pre-norm blocks
-- with LayerNorm and GELU after a skip from the input, an autoencoder whose decoder adds an
-- encoder layer), blocks with a projection on the shortcut, a wide & deep model whose two
-- parts' logits are summed, a deep & cross network (x0 * (W x + b) + x, joined to an MLP by
-- torch.cat; reference: PyTorch's outputs), one value read by two skips, a gated linear unit,
-- Sub both ways and a Concat of three values (reference: numpy).  What stays refused (a Concat
-- of branches as the graph's output, values of different widths) is below, with the other
-- hostile files.
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx'),
                                    CASE WHEN c = 'skip_autoencoder' THEN 'onnx-autoencoder' ELSE 'onnx' END) AS version
  FROM unnest(ARRAY['skip_resnet', 'skip_resnet_ln', 'skip_autoencoder', 'skip_projection',
                    'skip_wide_deep', 'skip_cross', 'skip_shared', 'skip_gates']) c;
SELECT name, objective, n_outputs, kind, n_layers, n_parameters
  FROM gpu_models WHERE name LIKE 'nn_skip%' ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx') FROM gpu_models WHERE name LIKE 'nn_skip%';
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_skip%' ORDER BY model;
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'nn_skip%' ORDER BY name;
-- Networks exported by PyTorch 2's default exporter (torch.onnx.export(..., dynamo=True,
-- external_data=False); tests/fixtures/gen_onnx_torch2_fixtures.py; reference: PyTorch's
-- outputs): a module ending in .squeeze(-1) and one in torch.flatten (output [N]), LayerNorm,
-- Mish, Hardswish, tanh GELU, LogSoftmax, Softplus with beta and threshold (written as
-- Where(Greater(...))), scaling in forward, a LayerNorm autoencoder, both GELU forms at
-- opset 18 (several nodes each).
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx'),
                                    CASE WHEN c = 'torch2_autoencoder' THEN 'onnx-autoencoder' ELSE 'onnx' END) AS version
  FROM unnest(ARRAY['torch2_fraud_mlp', 'torch2_flatten', 'torch2_layernorm', 'torch2_softplus',
                    'torch2_mish_hswish', 'torch2_scaled', 'torch2_autoencoder', 'torch2_gelu_opset18']) c;
SELECT name, objective, n_outputs, kind, n_layers, n_parameters, saved_by
  FROM gpu_models WHERE name LIKE 'nn_torch2%' ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx') FROM gpu_models WHERE name LIKE 'nn_torch2%';
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_torch2%' ORDER BY model;
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'nn_torch2%' ORDER BY name;
-- Keras networks converted by tf2onnx (tests/fixtures/gen_onnx_keras_fixtures.py; reference:
-- Keras' outputs): Dense as MatMul + Add, BatchNormalization, LeakyReLU, elu, selu, a
-- Normalization layer, swish, gelu (several nodes), hard_sigmoid (Mul / Add / Min / Max),
-- ReLU(max_value=6), softsign, an autoencoder, LayerNormalization in both of tf2onnx's forms
-- (TensorFlow's fused batch normalization over a reshape for the default epsilon, its moments
-- for an epsilon below 1.001e-5; with and without scale and center; opsets 15 and 18), PReLU
-- layers (Relu / Neg / Relu / Mul / Add, read as one step), and functional models with branches:
-- wide & deep (tf2onnx interleaves the two parts' nodes) and a residual block.
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx'),
                                    CASE WHEN c = 'keras_autoencoder' THEN 'onnx-autoencoder' ELSE 'onnx' END) AS version
  FROM unnest(ARRAY['keras_sigmoid', 'keras_bn_leaky', 'keras_softmax', 'keras_norm_gelu',
                    'keras_hard', 'keras_autoencoder', 'keras_layernorm', 'keras_layernorm_opts',
                    'keras_layernorm_eps', 'keras_layernorm_opset18', 'keras_prelu', 'keras_wide_deep',
                    'keras_residual']) c;
SELECT name, objective, n_outputs, kind, n_layers, n_parameters, saved_by
  FROM gpu_models WHERE name LIKE 'nn_keras%' ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx') FROM gpu_models WHERE name LIKE 'nn_keras%';
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_keras%' ORDER BY model;
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'nn_keras%' ORDER BY name;
-- Keras 3 exports (tests/fixtures/gen_onnx_keras3_fixtures.py; reference: Keras' outputs). The
-- TensorFlow backend's model.export or tf2onnx.convert.from_keras: Mish, hard_silu and the tanh
-- GELU written as several nodes, LayerNormalization written as ReduceMean moments (on the raw
-- features, with scale=False and center=False); the JAX backend's jax2onnx: BatchNormalization
-- and a Normalization layer written as subgraphs of constants (folded at load time), Mish and
-- the tanh GELU at opset 17, LayerNormalization from sums broadcast back to [N, 1].
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx')) AS version
  FROM unnest(ARRAY['keras3_mish', 'keras3_hard_silu', 'keras3_gelu_tanh', 'keras3_layernorm_in',
                    'keras3_jax_bn_leaky', 'keras3_jax_norm', 'keras3_jax_mish_gelu',
                    'keras3_jax_layernorm']) c;
SELECT name, objective, n_outputs, kind, n_layers, n_parameters, saved_by
  FROM gpu_models WHERE name LIKE 'nn_keras3%' ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx') FROM gpu_models WHERE name LIKE 'nn_keras3%';
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_keras3%' ORDER BY model;
SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'nn_keras3%' ORDER BY name;
-- PyTorch 2's exporter keeps the weights in a side file unless told otherwise: refused,
-- with the way out in the detail.
SELECT gpu_load_model('nn_side_file', pg_read_binary_file(:'fx' || '/bad/t2_external_data.onnx'), 'onnx');

-- One row by hand: the softmax probabilities sum to 1; the all-zero row's
-- reconstruction error; integer and numeric arrays are accepted as for trees.
SELECT round(sum(p)::numeric, 5) AS prob_sum, count(*) AS classes
  FROM unnest(gpu_predict('nn_softmax', array_fill(0.5::real, ARRAY[30]))) p;
SELECT round(gpu_score('nn_ae', array_fill(0::real, ARRAY[30]))::numeric, 5) AS ae_zero_row,
       gpu_score('nn_sigmoid', array_fill(1, ARRAY[30])) = gpu_score('nn_sigmoid', array_fill(1.0::numeric, ARRAY[30])) AS int_eq_numeric;
-- A missing value (NULL or NaN) propagates: the network's output is NaN, as onnxruntime's.
SELECT gpu_score('nn_sigmoid', array_fill(NULL::real, ARRAY[30])) AS all_missing;

-- The score trigger with a network: the same score as gpu_score.
DO $$
BEGIN
  EXECUTE 'CREATE TABLE nn_tx (id int PRIMARY KEY, '
          || (SELECT string_agg(format('c%s real', k), ', ') FROM generate_series(1, 30) k)
          || ', score real, flagged boolean)';
  EXECUTE format('CREATE TRIGGER nn_flag BEFORE INSERT ON nn_tx FOR EACH ROW '
                 'EXECUTE FUNCTION gpu_score_trigger(%L, %L, %L, %L, %L)',
                 'model=nn_sigmoid', 'score_column=score', 'flag_column=flagged', 'threshold=0.5',
                 'features=' || (SELECT string_agg('c' || k, ',') FROM generate_series(1, 30) k));
  EXECUTE 'INSERT INTO nn_tx SELECT g, '
          || (SELECT string_agg(format('((g * %s) %% 17 - 8) / 4.0', k), ', ') FROM generate_series(1, 30) k)
          || ' FROM generate_series(1, 50) g';
END $$;
-- (row by row: a network's batched scores equal those within the tolerance
-- above, since BLAS rounds matrix products of different sizes differently)
SET pg_gpuscore.batch_calls = off;
SELECT count(*) AS n_rows,
       count(*) FILTER (WHERE score = gpu_score('nn_sigmoid', ARRAY[c1, c2, c3, c4, c5, c6, c7, c8, c9, c10,
                          c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25,
                          c26, c27, c28, c29, c30])) AS same_as_gpu_score,
       count(*) FILTER (WHERE flagged = (score >= 0.5)) AS flag_ok
  FROM nn_tx;
RESET pg_gpuscore.batch_calls;

-- Errors, each with its SQLSTATE (pg_temp.try runs a statement and returns
-- "SQLSTATE: message" or "ok").
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- gpu_verify_model compares with XGBoost: not for networks
SELECT pg_temp.try($$SELECT * FROM gpu_verify_model('nn_sigmoid')$$);
-- gpu_score needs one output; features must match the input width
SELECT pg_temp.try($$SELECT gpu_score('nn_softmax', array_fill(0.5::real, ARRAY[30]))$$);
SELECT pg_temp.try($$SELECT gpu_score('nn_sigmoid', array_fill(0.5::real, ARRAY[29]))$$);
SELECT pg_temp.try($$SELECT gpu_score_agg('nn_softmax', 1, array_fill(0.5::real, ARRAY[30]))$$);
-- reconstruction scoring of a model that is not an autoencoder; ONNX bytes
-- declared as XGBoost, XGBoost bytes declared as ONNX, an unknown format
SELECT pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L), %L)', 'nn_bad', f, fmt)) AS error
  FROM (VALUES (:'fx' || '/mlp_sigmoid.onnx', 'onnx-autoencoder'),
               (:'fx' || '/mlp_sigmoid.onnx', 'xgboost-json'),
               (:'abs_srcdir' || '/tests/fixtures/models/breast_cancer.json', 'onnx'),
               (:'fx' || '/mlp_sigmoid.onnx', 'tensorflow')) v(f, fmt);
-- every hostile or unsupported file (tests/fixtures/onnx/bad/expected.txt, two of skip_expected.txt)
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'nn_bad',
                                     :'fx' || '/bad/' || f)) AS error
  FROM unnest(ARRAY['unsupported_op.onnx', 'unsupported_conv.onnx', 'skip_concat.onnx', 'skip_width.onnx',
                    'external_data.onnx', 'wrong_shape.onnx', 'short_raw_data.onnx',
                    'huge_dims.onnx', 'too_wide.onnx', 'nan_weight.onnx', 'double_input.onnx',
                    'rank3_input.onnx', 'reshape_real.onnx', 'truncated.onnx', 'garbage.onnx']) f;
-- skl2onnx exports that stay refused (tests/fixtures/onnx/bad/skl_expected.txt)
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'nn_bad',
                                     :'fx' || '/bad/' || f)) AS error
  FROM unnest(ARRAY['skl_mlp_reg2_reshape.onnx', 'skl_cast_int64.onnx',
                    'skl_two_float_outputs.onnx', 'skl_concat_swapped.onnx', 'skl_concat_unity2.onnx',
                    'skl_scaler_offset_length.onnx', 'skl_duplicate_value.onnx',
                    'skl_too_many_outputs.onnx']) f;
-- scikit-learn's linear models (gen_onnx_linear_fixtures.py), read as one dense layer: a
-- LogisticRegression (an ai.onnx.ml LinearClassifier; binary: P(second class), several classes:
-- through a softmax), the decision function of LinearSVC, RidgeClassifier, SGDClassifier and
-- Perceptron, the linear regressors (an ai.onnx.ml LinearRegressor), and a fraud scorecard fitted
-- on a DataFrame with a one-hot country code.
SELECT c AS fixture, gpu_load_model('nn_' || c, pg_read_binary_file(:'fx' || '/' || c || '.onnx')) AS version
  FROM unnest(ARRAY['skl_lin_logreg_bin', 'skl_lin_logreg_str_zipmap', 'skl_lin_logreg_3class',
                    'skl_lin_svc_bin', 'skl_lin_ridgec_bin', 'skl_lin_ridgec_3class',
                    'skl_lin_sgd_log_bin', 'skl_lin_sgd_hinge_bin', 'skl_lin_perceptron_3class',
                    'skl_lin_df_scorecard', 'skl_lin_ridge_reg', 'skl_lin_enet_2targets',
                    'skl_lin_edit_one_row_logistic', 'skl_lin_edit_one_row_none',
                    'skl_lin_edit_two_rows']) c;
SELECT name, objective, n_features, n_outputs, kind, n_layers, n_parameters
  FROM gpu_models WHERE name LIKE 'nn_skl_lin%' ORDER BY name;
SET client_min_messages = warning;
SELECT pg_temp.check_nn(name, substr(name, 4), :'fx') FROM gpu_models WHERE name LIKE 'nn_skl_lin%';
RESET client_min_messages;
SELECT * FROM nn_parity WHERE model LIKE 'nn_skl_lin%' ORDER BY model;
-- By hand: skl_lin_edit_one_row_* have intercept 0.25 and no scaler, so a row of zeros scores
-- 1 / (1 + exp(-0.25)) through LOGISTIC and 0.25 itself through NONE (onnxruntime's [1 - p, p]
-- scored as p).
SELECT abs(gpu_score('nn_skl_lin_edit_one_row_logistic', array_fill(0::real, ARRAY[30])) -
           1 / (1 + exp(-0.25))) < 1e-7 AS logistic,
       gpu_score('nn_skl_lin_edit_one_row_none', array_fill(0::real, ARRAY[30])) = 0.25 AS raw_score;
-- The scorecard names its features after the DataFrame's columns (a trigger finds them by name).
SELECT feature_names FROM gpu_models WHERE name = 'nn_skl_lin_df_scorecard';
-- Linear models refused (tests/fixtures/onnx/bad/lin_expected.txt): post-transforms PROBIT and
-- SOFTMAX_ZERO, a transform after a regressor, coefficients that do not fill the rows, a
-- Normalizer other than L1 after a softmax
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'nn_bad',
                                     :'fx' || '/bad/' || f)) AS error
  FROM unnest(ARRAY['lin_post_probit.onnx', 'lin_post_softmax_zero.onnx', 'lin_reg_logistic.onnx',
                    'lin_coef_count.onnx', 'lin_normalizer_l2.onnx']) f;
-- ColumnTransformer pipelines refused (tests/fixtures/onnx/bad/sklct_expected.txt): the features
-- read twice, a column index past the input, scikit-learn's
-- default OneHotEncoder (handle_unknown="error": onnxruntime fails a whole batch holding a code
-- it never saw), a category of 2^24, codes cast to int64 read by the network itself
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'nn_bad',
                                     :'fx' || '/bad/' || f)) AS error
  FROM unnest(ARRAY['sklct_reads_twice.onnx', 'sklct_index_out.onnx',
                    'sklct_onehot_error.onnx', 'sklct_onehot_big_category.onnx',
                    'sklct_int64_read.onnx']) f;
-- an autoencoder compares its output with its input row: not after a ColumnTransformer
SELECT pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L), %L)', 'nn_bad',
                          :'fx' || '/skl_ct_bin.onnx', 'onnx-autoencoder'));
-- Keras 3 exports that stay refused (tests/fixtures/onnx/bad/keras3_expected.txt): the TensorFlow
-- backend's exact gelu (an Erfc node, which is not ONNX: onnxruntime refuses the file too), a
-- Normalization layer through the TensorFlow backend's model.export (its statistics left as
-- graph inputs without values: onnxruntime refuses it too), a LayerNormalization one detail off
-- (the variance over W - 1), a constant subgraph whose value is not finite
SELECT f AS file, pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'nn_bad',
                                     :'fx' || '/bad/' || f)) AS error
  FROM unnest(ARRAY['keras3_gelu_erfc.onnx', 'keras3_normalization_inputs.onnx',
                    'keras3_jax_layernorm_ddof.onnx', 'keras3_fold_sqrt_negative.onnx']) f;
-- the caps apply to networks too
SET pg_gpuscore.max_features = 20;
SELECT pg_temp.try(format('SELECT gpu_load_model(%L, pg_read_binary_file(%L))', 'nn_bad',
                          :'fx' || '/mlp_sigmoid.onnx'));
RESET pg_gpuscore.max_features;
SELECT count(*) AS nothing_stored FROM gpu_models WHERE name = 'nn_bad';

-- A network replaced by a tree ensemble under the same name, and back.
SELECT gpu_load_model('nn_swap', pg_read_binary_file(:'fx' || '/mlp_sigmoid.onnx')) AS v1;
SELECT round(gpu_score('nn_swap', array_fill(0.5::real, ARRAY[30]))::numeric, 4) AS as_network;
SELECT gpu_load_model('nn_swap', pg_read_binary_file(:'abs_srcdir' || '/tests/fixtures/models/breast_cancer.json')) AS v2;
SELECT kind, n_trees > 0 AS has_trees, n_layers FROM gpu_models WHERE name = 'nn_swap';
SELECT gpu_score('nn_swap', array_fill(0.5::real, ARRAY[30])) BETWEEN 0 AND 1 AS as_trees;

-- The GPU engine's path for networks, tested without a GPU (as in gpu_engine.sql):
-- pg_gpuscore.provider points at the CPU mock of the provider, so this checks the
-- glue (upload and self-test, the two-slot pipeline, statistics, release); the
-- CUDA provider's cuBLAS path itself is tested by tests/gpu where a device exists.
\c
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
-- (the session's own provider, whose device memory gpu_device_info shows; through the GPU
-- service, which holds the models of every session, see gpu_service.sql)
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.gpu_service = off;
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 20;
CREATE TEMP VIEW nn_rows AS
  SELECT id, ARRAY[c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17,
                   c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30] AS f
    FROM nn_tx;
-- nn_ct: a ColumnTransformer's GATHER step, on the provider's path too
SELECT gpu_load_model('nn_ct', pg_read_binary_file(:'fx' || '/skl_ct_reg.onnx')) AS v;
SELECT m AS model, count(*) AS n_rows,
       count(*) FILTER (WHERE abs(q.score - gpu_score(m, r.f)) > 1e-5 * abs(gpu_score(m, r.f)) + 1e-7) AS differing
  FROM unnest(ARRAY['nn_sigmoid', 'nn_ae', 'nn_scaled', 'nn_ct']) m,
       LATERAL gpu_score_query(m, 'SELECT id, f FROM nn_rows') q JOIN nn_rows r USING (id)
 GROUP BY m ORDER BY m;
SELECT count(*) AS n_rows, bool_and(array_length(q.scores, 1) = 4) AS four_classes
  FROM gpu_predict_query('nn_softmax', 'SELECT id, f FROM nn_rows') q;
SELECT engine, batches, rows FROM gpu_engine_stats() ORDER BY engine;
-- 5 models uploaded (1 MiB each on the mock), every pipeline released
SELECT (total_memory - free_memory) >> 20 AS used_mib FROM gpu_device_info();
RESET pg_gpuscore.device;
RESET pg_gpuscore.provider;

SELECT gpu_drop_model(name) FROM gpu_models WHERE name LIKE 'nn%' ORDER BY name;
DROP VIEW nn_rows;
DROP TABLE nn_tx;

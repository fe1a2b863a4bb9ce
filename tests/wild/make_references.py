#!/usr/bin/env python3
"""
make_references.py -- (re)compute the reference scores of the wild corpus (tests/wild/models/):
model files published by other people in public GitHub repositories, scored by the library that
reads them (never by pg_gpuscore).  Writes tests/wild/cases/NAME.csv and tests/wild/manifest.tsv.

How to run (from anywhere; paths are relative to this file):

    python3 tests/wild/make_references.py            # every file, each in its interpreter
    python3 tests/wild/make_references.py NAME ...   # only these files (the manifest is rewritten
                                                     # from the cases already there)

The driver runs each file's reference in the interpreter its entry names (override with the
environment variables below), as "INTERPRETER make_references.py --one NAME", which writes
cases/NAME.csv and prints one JSON line (n_features, n_outputs) read back by the driver:

  PY_XGB17   Debian's /usr/bin/python3: XGBoost 1.7.4 (numpy).  The XGBoost legacy binary files
             (before 1.0, 1.x, and the 2.x ones, which XGBoost 3.x no longer reads) and the JSON /
             UBJ files of 1.x.
  PY_XGB090  /tmp/venv-xgb090/bin/python (tests/fixtures/make_venv_xgb_pre10.sh): XGBoost 0.90, for
             jx04_logreg_audit only: a 2016 file whose num_parallel_tree is 0, which 1.7.4 loads
             but cannot predict with ("num_parallel_tree != 0").
  PY_MODERN  /tmp/pg_gpuscore-venv-onnx-trees/bin/python (tests/fixtures/make_venv_onnx_trees.sh
             with tests/fixtures/requirements-catboost.txt): XGBoost 3.2.0, LightGBM 4.7.0,
             CatBoost 1.2.10, onnxruntime 1.32.0, onnx 1.23.2.  XGBoost JSON / UBJ of 2.x and 3.x,
             every LightGBM, CatBoost and ONNX file.

Rows: 200 per file, float32, from a seed per file (zlib.crc32 of its name): each feature's values
are drawn around the model's own split thresholds (read from the file by the library: XGBoost's
JSON dump, LightGBM's dump_model, CatBoost's borders, the ONNX nodes_values), exactly on
a threshold, a float step either side, or spread around it; categorical features (LightGBM
'==' splits) take the codes the model splits on plus codes it never saw and -1; 5% of values NaN
for tree models (all of them take missing values), none for the network; the last row is all NaN
for tree models.  Outputs are the library's prediction of exactly those float32 rows:
  XGBoost   Booster.predict(DMatrix(X, missing=nan)), one thread (probabilities for
            binary:logistic, one column per class for multi:softprob, the class for
            multi:softmax, one column per target).
  LightGBM  Booster(model_file=...).predict(X, num_threads=1) (transformed output).
  CatBoost  CatBoost().load_model(path, format="json").predict(X, thread_count=1) with
            prediction_type "Probability" (column 1 for two classes) or "RawFormulaVal"
            (regression).
  ONNX      onnxruntime InferenceSession (CPU, one thread, graph optimizations off): a regressor's
            values, a classifier's probabilities (the ZipMap maps read back in label order; two
            classes give the second class's only, as pg_gpuscore gives one output), a network's
            output.  A model with a fixed batch of 1 is run row by row.

Entries marked expect "refused:CODE" are files pg_gpuscore cannot read (what a user might still
hand it); they have no case.  CatBoost .cbm binaries are not supported by pg_gpuscore: the
jpmml-catboost ones were converted to JSON once with CatBoost 1.2.10 (convert_cbm() below, run
with "--convert-cbm" in PY_MODERN); the .cbm files are kept too, as refused entries.
"""
import json
import os
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
CASES = os.path.join(HERE, "cases")
N_ROWS = 200
NAN_RATE = 0.05

PY = {
    "xgb17": os.environ.get("PY_XGB17", "/usr/bin/python3"),
    "modern": os.environ.get("PY_MODERN", "/tmp/pg_gpuscore-venv-onnx-trees/bin/python"),
    "xgb090": os.environ.get("PY_XGB090", "/tmp/venv-xgb090/bin/python"),
}
# features of files whose library cannot say (XGBoost 0.90 has no num_features())
N_FEATURES = {"jx04_logreg_audit": 48}

JX = "jpmml/jpmml-xgboost"
JL = "jpmml/jpmml-lightgbm"
JC = "jpmml/jpmml-catboost"
AGPL = "AGPL-3.0"
NONE = "none stated"
XR = "src/test/resources/xgboost/"
XR2 = "pmml-xgboost/src/test/resources/xgboost/"
LR = "src/test/resources/lgbm/"
LR2 = "pmml-lightgbm/src/test/resources/lgbm/"

# name, file, format, interpreter, library, tolerance, expect, repo, path, commit, license, writer
E = [
    # --- XGBoost legacy binary (before 1.0: no magic, no version) ---
    ("jx04_logreg_audit", "jx04_logreg_audit.model", "xgboost-binary", "xgb090", "xgboost", 1e-6, "ok",
     JX, XR + "LogisticRegressionAudit.model", "02bd54b9d2481b3061687fc4f0baff397fa54163",
     AGPL, "XGBoost 0.4 era (2016-02, R package), reg:logistic"),
    ("jx06_softmax_iris_na", "jx06_softmax_iris_na.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "SoftMaxClassificationIrisNA.model", "ec4bdc669d625dabb34fd63ae24f516d1092428c", AGPL, "XGBoost 0.6 (2016-09), multi:softprob"),
    ("jx06_poisson_visit", "jx06_poisson_visit.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "PoissonRegressionVisit.model", "ec4bdc669d625dabb34fd63ae24f516d1092428c", AGPL, "XGBoost 0.6 (2016-09), count:poisson"),
    ("jx081_multinomial_iris", "jx081_multinomial_iris.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "MultinomialClassificationIris.model", "6d006d9d51c991582c9560d9f31412bb2045cb80", AGPL, "XGBoost 0.81, multi:softprob"),
    ("jx081_tweedie_visit", "jx081_tweedie_visit.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "TweedieRegressionVisit.model", "6d006d9d51c991582c9560d9f31412bb2045cb80", AGPL, "XGBoost 0.81, reg:tweedie"),
    ("jx090_binomial_audit", "jx090_binomial_audit.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "BinomialClassificationAudit.model", "9a9745f7694451dc066e92438eeffd1a96aa8c62", AGPL, "XGBoost 0.90, binary:logistic, dart"),
    ("jx090_gamma_visit", "jx090_gamma_visit.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "GammaRegressionVisit.model", "9a9745f7694451dc066e92438eeffd1a96aa8c62", AGPL, "XGBoost 0.90, reg:gamma, dart"),
    # --- XGBoost legacy binary, 1.x / 2.x ---
    ("jx10_logreg_audit", "jx10_logreg_audit.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR + "LogisticRegressionAudit.model", "4d451546ae723abf54ff20a050f46509144961e5", AGPL, "XGBoost 1.0.0 (no magic), reg:logistic, dart"),
    ("jx17_gamma_visit_na", "jx17_gamma_visit_na.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR2 + "GammaRegressionVisitNA.model", "add6b2ac1c81b32d99e967041ee6925334512a06", AGPL, "XGBoost 1.7.2 (binf), reg:gamma"),
    ("jx20_multinomial_iris", "jx20_multinomial_iris.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR2 + "MultinomialClassificationIris.model", "865239e3bda47c80787e542853b85e1a42e1a831", AGPL,
     "XGBoost 2.0.3 (binf), multi:softprob, dart; reference by 1.7.4 (3.x no longer reads binary)"),
    ("jx34_legacy_logreg_audit", "jx34_legacy_logreg_audit.model", "xgboost-binary", "xgb17", "xgboost", 1e-6,
     "ok", JX, XR2 + "legacy/LogisticRegressionAudit.model", "6652be50d21eeaae27788e07e7e463898cb8d33a", AGPL,
     "XGBoost >= 2.0 binary (binf, estimated base_score 0.2576), reg:logistic, dart; reference by 1.7.4"),
    ("tl_mushroom", "tl_mushroom.model", "xgboost-binary", "xgb17", "xgboost", 1e-6, "ok",
     "dmlc/treelite", "tests/examples/mushroom/mushroom.model", "35b90e80018d8337a7eb3f18bdcffe79062b1eea", "Apache-2.0",
     "XGBoost before 1.0 (agaricus demo, 2018), binary:logistic"),
    # --- XGBoost JSON / UBJ ---
    ("jx13_hinge_audit_dump", "jx13_hinge_audit_dump.json", "xgboost-json", None, None, 0, "refused:INVALID_MODEL",
     JX, XR + "HingeClassificationAudit.json", "16545e0633e94583adf8ae485c90a1835e714013", AGPL,
     "XGBoost 1.3.1 dump_model(format='json') (a text dump of the trees, not a model)"),
    ("jx16_multinomial_audit_na", "jx16_multinomial_audit_na.ubj", "xgboost-ubj", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR2 + "MultinomialClassificationAuditNA.ubj", "4a4aa7a82a9584a1dfa08771ebf887912a7521f8", AGPL, "XGBoost 1.6.0 UBJ, multi:softprob (2 classes)"),
    ("jx17_poisson_visit", "jx17_poisson_visit.ubj", "xgboost-ubj", "xgb17", "xgboost", 1e-6, "ok",
     JX, XR2 + "PoissonRegressionVisit.ubj", "add6b2ac1c81b32d99e967041ee6925334512a06", AGPL, "XGBoost 1.7.2 UBJ, count:poisson, dart"),
    ("jx20_aft_lung_na", "jx20_aft_lung_na.json", "xgboost-json", "modern", "xgboost", 1e-6, "ok",
     JX, XR2 + "AFTLungNA.json", "865239e3bda47c80787e542853b85e1a42e1a831", AGPL, "XGBoost 2.0.3 JSON, survival:aft"),
    ("jx21_tweedie_visit", "jx21_tweedie_visit.json", "xgboost-json", "modern", "xgboost", 1e-6, "ok",
     JX, XR2 + "TweedieRegressionVisit.json", "fb81cb701ee6caa9aeb3c4963b8eaa79604f82ef", AGPL, "XGBoost 2.1.0 JSON, reg:tweedie, dart"),
    ("jx30_linreg_auto_na", "jx30_linreg_auto_na.ubj", "xgboost-ubj", "modern", "xgboost", 1e-6, "ok",
     JX, XR2 + "LinearRegressionAutoNA.ubj", "310e4998b1d0073c58c95d874f46985bc7fd6e85", AGPL, "XGBoost 3.0.0 UBJ, reg:squarederror"),
    ("jx32_binomial_audit", "jx32_binomial_audit.ubj", "xgboost-ubj", "modern", "xgboost", 1e-6, "ok",
     JX, XR2 + "BinomialClassificationAudit.ubj", "b9c6fffde64658c6ffe04878e2898f7715481beb", AGPL, "XGBoost 3.2.0 UBJ, binary:logistic, dart"),
    ("jx34_quantile_auto", "jx34_quantile_auto.json", "xgboost-json", "modern", "xgboost", 1e-6, "ok",
     JX, XR2 + "QuantileRegressionAuto.json", "6652be50d21eeaae27788e07e7e463898cb8d33a", AGPL,
     "XGBoost 3.4.1 JSON, reg:quantileerror; reference by 3.2.0 (the newest here)"),
    ("jx34_multi_tree_auto_na", "jx34_multi_tree_auto_na.json", "xgboost-json", "modern", "xgboost", 1e-6, "ok",
     JX, XR2 + "MultiDecisionTreeAutoNA.json", "6652be50d21eeaae27788e07e7e463898cb8d33a", AGPL,
     "XGBoost 3.4.1 JSON, reg:squarederror with 2 targets; reference by 3.2.0"),
    ("jx34_expectile_auto", "jx34_expectile_auto.json", "xgboost-json", None, None, 0, "refused:UNSUPPORTED",
     JX, XR2 + "ExpectileRegressionAuto.json", "6652be50d21eeaae27788e07e7e463898cb8d33a", AGPL,
     "XGBoost 3.4.1 JSON, reg:expectileerror (an objective XGBoost 3.2.0 does not know either)"),
    ("ih_cardio_xgboost", "ih_cardio_xgboost.json", "xgboost-json", "modern", "xgboost", 1e-6, "ok",
     "Imamhossain01/Cardiovascular-Disease-Prediction", "xgboost_model.json",
     "908d336943ad5dd60beda751689ed3c30cae7bb4", NONE, "XGBoost 3.2.0 JSON (XGBClassifier), binary:logistic"),
    # --- LightGBM text ---
    ("jl2017_regression_auto", "jl2017_regression_auto.txt", "lightgbm", None, None, 0, "refused:UNSUPPORTED",
     JL, LR + "RegressionAuto.txt", "e7c18f9fcba0695cde00190ae64c31c6af408cf7", AGPL, "LightGBM 2017-01 (before 2.0, no version line), regression"),
    ("jl2017_regression_visit_na", "jl2017_regression_visit_na.txt", "lightgbm", None, None, 0,
     "refused:UNSUPPORTED",
     JL, LR + "RegressionVisitNA.txt", "31100e57027085f6921b3be3c0f037e517011ecb", AGPL, "LightGBM 2017-03 (before 2.0, no version line), poisson"),
    ("jl207_classification_iris_na", "jl207_classification_iris_na.txt", "lightgbm", "modern", "lightgbm", 1e-6,
     "ok", JL, LR + "ClassificationIrisNA.txt", "0dd689cae86e4e39352768db81cbd1b3628fa80b", AGPL, "LightGBM 2.0.7 (no version line), multiclass"),
    ("jl2012_regression_housing_na", "jl2012_regression_housing_na.txt", "lightgbm", "modern", "lightgbm", 1e-6,
     "ok", JL, LR + "RegressionHousingNA.txt", "ac3b47148ba145249d9fb3dc291431e62885f1c3", AGPL, "LightGBM 2.0.12 (version=v2), regression"),
    ("jl223_classification_audit", "jl223_classification_audit.txt", "lightgbm", "modern", "lightgbm", 1e-6, "ok",
     JL, LR + "ClassificationAudit.txt", "64368963262d4615847d1b771f5d8b2e2a55b318", AGPL, "LightGBM 2.2.3 (v2), binary, categorical splits"),
    ("jl230_classification_audit_bin_na", "jl230_classification_audit_bin_na.txt", "lightgbm", "modern",
     "lightgbm", 1e-6, "ok", JL, LR + "ClassificationAuditBinNA.txt", "306526624d94f5ecf65f53592903e591df02ad21", AGPL,
     "LightGBM 2.3.0 (v3), binary, categorical splits"),
    ("jl300_rf_classification_iris", "jl300_rf_classification_iris.txt", "lightgbm", "modern", "lightgbm", 1e-6,
     "ok", JL, LR + "RFClassificationIris.txt", "22c8cbf07284f5176aac13b7d106089d95f5ac7e", AGPL, "LightGBM 3.0.0 (v3), rf, multiclass"),
    ("jl332_classification_audit_na", "jl332_classification_audit_na.txt", "lightgbm", "modern", "lightgbm", 1e-6,
     "ok", JL, LR2 + "ClassificationAuditNA.txt", "3ba5b7b5ce38f7cac1e45c283c4be52b961652f3", AGPL,
     "LightGBM 3.3.2 (v3), cross_entropy, categorical splits"),
    ("jl400_regression_auto_direct_na", "jl400_regression_auto_direct_na.txt", "lightgbm", "modern", "lightgbm",
     1e-6, "ok", JL, LR2 + "RegressionAutoDirectNA.txt", "4be9db871ec825fcac5f2a473e6c99ef1ea09c91", AGPL,
     "LightGBM 4.0.0 (v4), regression, categorical splits"),
    ("jl460_rf_regression_auto", "jl460_rf_regression_auto.txt", "lightgbm", "modern", "lightgbm", 1e-6, "ok",
     JL, LR2 + "RFRegressionAuto.txt", "07a5dadfc262bea23ff2db85bab8032be3f4de2b", AGPL, "LightGBM 4.6.0 (v4), rf, regression, categorical splits"),
    ("jl46_linear_tree_audit_na", "jl46_linear_tree_audit_na.txt", "lightgbm", "modern", "lightgbm", 1e-6, "ok",
     JL, LR2 + "LinearTreeClassificationAuditNA.txt", "026780f9615cf8815c16895f7274576ecf8b5792", AGPL,
     "LightGBM 4.6.0 (v4), binary, linear_tree, categorical splits"),
    ("tl_toy_categorical", "tl_toy_categorical.txt", "lightgbm", "modern", "lightgbm", 1e-6,
     "ok",
     "dmlc/treelite", "tests/examples/toy_categorical/toy_categorical_model.txt", "35b90e80018d8337a7eb3f18bdcffe79062b1eea", "Apache-2.0",
     "LightGBM 2.x (v2, 2018), regression, categorical splits"),
    # --- CatBoost ---
    ("jc_classification_iris", "jc_classification_iris.json", "catboost-json", "modern", "catboost", 1e-6, "ok",
     JC, "src/test/resources/cbm/ClassificationIris.cbm", "1e5d8eba01b4d1f9cae243cfb4179b9ea5f825f6", AGPL,
     "CatBoost 0.15/0.16 era .cbm (2019), MultiClass; converted to JSON by CatBoost 1.2.10"),
    ("jc_classification_versicolor", "jc_classification_versicolor.json", "catboost-json", "modern", "catboost",
     1e-6, "ok", JC, "src/test/resources/cbm/ClassificationVersicolor.cbm",
     "1e5d8eba01b4d1f9cae243cfb4179b9ea5f825f6", AGPL,
     "CatBoost 0.15/0.16 era .cbm (2019), Logloss; converted to JSON by CatBoost 1.2.10"),
    ("jc_regression_auto", "jc_regression_auto.json", "catboost-json", "modern", "catboost", 1e-6, "ok",
     JC, "src/test/resources/cbm/RegressionAuto.cbm", "1e5d8eba01b4d1f9cae243cfb4179b9ea5f825f6", AGPL,
     "CatBoost 0.15/0.16 era .cbm (2019), RMSE; converted to JSON by CatBoost 1.2.10"),
    ("jc_classification_iris_cbm", "jc_classification_iris.cbm", "catboost-json", None, None, 0,
     "refused:INVALID_MODEL", JC, "src/test/resources/cbm/ClassificationIris.cbm",
     "1e5d8eba01b4d1f9cae243cfb4179b9ea5f825f6", AGPL, "CatBoost .cbm binary (2019), as published"),
    ("ih_cardio_catboost", "ih_cardio_catboost.json", "catboost-json", "modern", "catboost", 1e-6, "ok",
     "Imamhossain01/Cardiovascular-Disease-Prediction", "catboost_model.json",
     "908d336943ad5dd60beda751689ed3c30cae7bb4", NONE, "CatBoost 1.2.10 JSON, Logloss, 14 float features"),
    ("kh_heart_catboost_cbm", "kh_heart_catboost_cbm.json", "catboost-json", None, None, 0, "refused:INVALID_MODEL",
     "kirillshatarov/Classification-of-heart-diseases", "catboost_model.json",
     "159ad4177782550ecbef5f264e08138f3e591996", NONE, "a CatBoost .cbm binary (CBM1) saved under a .json name"),
    ("tt_purchase_catboost_pickle", "tt_purchase_catboost_pickle.json", "catboost-json", None, None, 0,
     "refused:INVALID_MODEL", "TimbukTwoTwos/propensity_to_purchase", "catboost_model.json",
     "9c43663ebe0aaf171759c1709fed188a61d1aa9b", NONE,
     "a Python pickle of a CatBoostClassifier saved under a .json name"),
    # --- ONNX ---
    ("on_mikedparrott_rf_iris", "on_mikedparrott_rf_iris.onnx", "onnx", "modern", "onnx", 1e-6, "ok",
     "mikedparrott/onnxmodels", "rf_iris.onnx", "987fe73e5799a4a9bd131d25ad01f22ebed9efd9", NONE,
     "skl2onnx 1.5.0, RandomForestClassifier (3 classes), ZipMap, batch fixed to 1"),
    ("on_jessicayung_rf_iris", "on_jessicayung_rf_iris.onnx", "onnx", "modern", "onnx", 1e-6, "ok",
     "jessicayung/artifacts-for-github-issues", "rf_iris.onnx", "226f0cdd9f59497455cee92ec9975b1c110f82d2", NONE,
     "OnnxMLTools 1.8.1, TreeEnsembleClassifier (3 classes)"),
    ("on_hepatitis_random_forest", "on_hepatitis_random_forest.onnx", "onnx", None, None, 0,
     "refused:INVALID_MODEL",
     "shadow89x/Hepatitis", "random_forest.onnx", "4e41f1fdd32f3a5eae570a0c8fb24b90a289b05f", NONE,
     "skl2onnx 1.4.9, RandomForestClassifier (2 classes), ZipMap; its trees read feature 18 of a "
     "13-feature input (onnxruntime fails every run)"),
    ("on_sss_xgboost", "on_sss_xgboost.onnx", "onnx", "modern", "onnx", 1e-6, "ok",
     "SSS202001/Scalable-XGBoost-Classification-System", "xgboost_model.onnx",
     "2d02a8acb97fbcd9ea96b10449af209778b74aae", NONE, "OnnxMLTools 1.13.0, XGBoost classifier"),
    ("on_bokaihe_lightgbm", "on_bokaihe_lightgbm.onnx", "onnx", "modern", "onnx", 1e-6, "ok",
     "BokaiHe/ML-Visualization-Web", "lightgbm_model.onnx", "88de66d50469d31e133fd13a84a73810d7034fe8", NONE,
     "OnnxMLTools 1.16.0, LightGBM regressor (TreeEnsembleRegressor)"),
    ("on_churn_ann", "on_churn_ann.onnx", "onnx", "modern", "onnx", 1e-5, "ok",
     "Deepak-1440/Customer_churn_prediction_ANN", "model.onnx", "280e110213c88decf81cf4474d1712638ad48006", NONE,
     "tf2onnx 1.17.0, Keras MLP 12-?-1 (MatMul, Add, Relu, Sigmoid)"),
]
# Files whose repositories state no license are not redistributed here (all rights reserved
# by default): only files under a license that allows it (AGPL-3.0, Apache-2.0) are kept.
E = [e for e in E if e[10] != NONE]
ENTRIES = {e[0]: e for e in E}
FIELDS = ["name", "file", "format", "interp", "lib", "tol", "expect", "repo", "path", "commit", "license",
          "writer"]


def entry(name):
    return dict(zip(FIELDS, ENTRIES[name]))


# ------------------------------------------------------------------ thresholds per library


def thresholds_xgb(bst):
    """{feature index: (thresholds, categories)} from XGBoost's own JSON dump of the trees."""
    names = bst.feature_names
    idx = {n: i for i, n in enumerate(names)} if names else {}
    out = {}

    def walk(n):
        if "children" not in n:
            return
        f = n["split"]
        i = idx[f] if f in idx else int(str(f).lstrip("f"))
        th, cats = out.setdefault(i, ([], []))
        if "categories" in n or isinstance(n.get("split_condition"), list):
            cats.extend(int(c) for c in n.get("categories", n.get("split_condition")))
        elif "split_condition" in n:
            th.append(float(n["split_condition"]))
        for c in n["children"]:
            walk(c)

    for t in bst.get_dump(dump_format="json"):
        walk(json.loads(t))
    return out


def thresholds_lgb(bst):
    out = {}

    def walk(n):
        if "split_feature" not in n:
            return
        th, cats = out.setdefault(n["split_feature"], ([], []))
        if n["decision_type"] == "==":
            cats.extend(int(c) for c in str(n["threshold"]).split("||"))
        else:
            th.append(float(n["threshold"]))
        walk(n["left_child"])
        walk(n["right_child"])

    for t in bst.dump_model()["tree_info"]:
        walk(t["tree_structure"])
    return out


def thresholds_cb(path):
    doc = json.load(open(path))
    return {f["flat_feature_index"]: (list(f.get("borders", [])), [])
            for f in doc["features_info"].get("float_features", [])}


def thresholds_onnx(model):
    from onnx import numpy_helper
    out = {}
    for n in model.graph.node:
        if not n.op_type.startswith("TreeEnsemble"):
            continue
        a = {x.name: x for x in n.attribute}
        feats = list(a["nodes_featureids"].ints)
        if "nodes_values" in a:
            vals = list(a["nodes_values"].floats)
        else:
            vals = list(numpy_helper.to_array(a["nodes_values_as_tensor"].t).ravel())
        modes = [m.decode() for m in a["nodes_modes"].strings]
        for f, v, m in zip(feats, vals, modes):
            if m != "LEAF":
                out.setdefault(f, ([], []))[0].append(float(v))
    return out


# ------------------------------------------------------------------ rows


def make_rows(name, nf, th, nan_rate=NAN_RATE, all_nan_row=True):
    """N_ROWS float32 rows around the thresholds th ({feature: (thresholds, categories)})."""
    import numpy as np
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    X = np.zeros((N_ROWS, nf), np.float32)
    for f in range(nf):
        ts, cats = th.get(f, ([], []))
        ts = np.asarray(sorted(set(t for t in ts if np.isfinite(t))), np.float64)
        cats = sorted(set(cats))
        for r in range(N_ROWS):
            u = rng.random()
            if cats:
                pool = cats + [max(cats) + 1, max(cats) + 7, -1]
                X[r, f] = pool[rng.integers(len(pool))] if u < 0.9 else rng.integers(0, max(cats) + 3)
                continue
            if len(ts) == 0:
                X[r, f] = np.float32(rng.normal())
                continue
            t = np.float32(ts[rng.integers(len(ts))])
            if u < 0.2:
                v = t
            elif u < 0.3:
                v = np.nextafter(t, np.float32(np.inf))
            elif u < 0.4:
                v = np.nextafter(t, np.float32(-np.inf))
            else:
                span = (ts[-1] - ts[0]) if len(ts) > 1 else abs(float(t)) + 1.0
                v = np.float32(float(t) + rng.normal() * 0.1 * (span + 1e-3))
            # a threshold beyond float's range (LightGBM's 1e300) would give an infinite
            # feature, which SQL refuses: the largest float instead
            X[r, f] = np.clip(v, -np.finfo(np.float32).max, np.finfo(np.float32).max)
    if nan_rate > 0:
        X[rng.random(X.shape) < nan_rate] = np.nan
        X[N_ROWS - 6:N_ROWS - 1][rng.random((5, nf)) < 0.6] = np.nan
    if all_nan_row:
        X[N_ROWS - 1, :] = np.nan
    return X


# ------------------------------------------------------------------ references per library


def ref_xgboost(e, path):
    import numpy as np
    import xgboost as xgb
    bst = xgb.Booster(params={"nthread": 1})
    bst.load_model(path)
    bst.set_param({"nthread": 1})
    nf = N_FEATURES.get(e["name"]) or bst.num_features()
    X = make_rows(e["name"], nf, thresholds_xgb(bst))
    kw = {}
    if getattr(bst, "feature_names", None):
        kw["feature_names"] = bst.feature_names
    if getattr(bst, "feature_types", None):
        kw["feature_types"] = bst.feature_types
        kw["enable_categorical"] = "c" in bst.feature_types
    out = bst.predict(xgb.DMatrix(X, missing=np.nan, nthread=1, **kw))
    return X, np.asarray(out, np.float32).reshape(len(X), -1)


def ref_lightgbm(e, path):
    import numpy as np
    import lightgbm as lgb
    bst = lgb.Booster(model_file=path, params={"num_threads": 1})
    nf = bst.num_feature()
    X = make_rows(e["name"], nf, thresholds_lgb(bst))
    out = bst.predict(X, num_threads=1)
    return X, np.asarray(out, np.float32).reshape(len(X), -1)


def ref_catboost(e, path):
    import numpy as np
    import catboost as cb
    m = cb.CatBoost()
    m.load_model(path, format="json")
    doc = json.load(open(path))
    nf = len(doc["features_info"].get("float_features", [])) + len(doc["features_info"].get("categorical_features", []))
    X = make_rows(e["name"], nf, thresholds_cb(path))
    params = doc["model_info"].get("params", {})
    if isinstance(params, str):
        params = json.loads(params)
    loss = params.get("loss_function", {}).get("type") or m.get_params().get("loss_function", "")
    if loss in ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll"):
        out = np.asarray(m.predict(X, prediction_type="Probability", thread_count=1))
        if out.shape[1] == 2:
            out = out[:, 1:2]
    else:
        out = np.asarray(m.predict(X, prediction_type="RawFormulaVal", thread_count=1))
    return X, np.asarray(out, np.float32).reshape(len(X), -1)


def ref_onnx(e, path):
    import numpy as np
    import onnx
    import onnxruntime as ort
    model = onnx.load(path)
    inp = model.graph.input[0]
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    nf = dims[-1]
    trees = any(n.op_type.startswith("TreeEnsemble") for n in model.graph.node)
    if trees:
        X = make_rows(e["name"], nf, thresholds_onnx(model))
    else:
        rng = np.random.default_rng(zlib.crc32(e["name"].encode()))
        X = rng.normal(size=(N_ROWS, nf)).astype(np.float32) * 1.5
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    batches = [X[i:i + 1] for i in range(len(X))] if dims[0] == 1 else [X]
    rows = []
    for b in batches:
        res = dict(zip(names, sess.run(None, {inp.name: b})))
        if not trees:
            rows.append(np.asarray(list(res.values())[0], np.float32).reshape(len(b), -1))
            continue
        node = [n for n in model.graph.node if n.op_type.startswith("TreeEnsemble")][0]
        if node.op_type == "TreeEnsembleRegressor":
            v = [v for v in res.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"][0]
            rows.append(np.asarray(v, np.float32).reshape(len(b), -1))
            continue
        prob = [v for k, v in res.items() if "prob" in k][0]
        if isinstance(prob, list):
            labels = sorted(prob[0].keys())
            prob = np.array([[row[k] for k in labels] for row in prob], np.float32)
        prob = np.asarray(prob, np.float32)
        rows.append(prob[:, 1:2] if prob.shape[1] == 2 else prob)
    return X, np.concatenate(rows)


def fmt(v):
    import numpy as np
    v = float(np.float32(v))
    return "NaN" if v != v else "%.9g" % v


def one(name):
    e = entry(name)
    path = os.path.join(MODELS, e["file"])
    X, out = {"xgboost": ref_xgboost, "lightgbm": ref_lightgbm, "catboost": ref_catboost,
              "onnx": ref_onnx}[e["lib"]](e, path)
    os.makedirs(CASES, exist_ok=True)
    with open(os.path.join(CASES, name + ".csv"), "w") as f:
        for i, (x, o) in enumerate(zip(X, out)):
            f.write(",".join([str(i)] + [fmt(v) for v in x] + [fmt(v) for v in o]) + "\n")
    print(json.dumps({"n_features": int(X.shape[1]), "n_outputs": int(out.shape[1])}))


def convert_cbm(src_dir):
    """Once: jpmml-catboost's .cbm files (src_dir) to the JSON of CatBoost 1.2.10 (PY_MODERN)."""
    import catboost as cb
    for src, dst in [("ClassificationIris", "jc_classification_iris"),
                     ("ClassificationVersicolor", "jc_classification_versicolor"),
                     ("RegressionAuto", "jc_regression_auto")]:
        m = cb.CatBoost()
        m.load_model(os.path.join(src_dir, src + ".cbm"))
        m.save_model(os.path.join(MODELS, dst + ".json"), format="json")


def shape_from_case(name):
    with open(os.path.join(CASES, name + ".csv")) as f:
        n = len(f.readline().rstrip("\n").split(",")) - 1
    return n


def main(argv):
    if argv[:1] == ["--one"]:
        one(argv[1])
        return
    if argv[:1] == ["--convert-cbm"]:
        convert_cbm(argv[1])
        return
    todo = argv or [e[0] for e in E]
    shapes = {}
    for name in todo:
        e = entry(name)
        if e["expect"].startswith("refused:"):
            continue
        r = subprocess.run([PY[e["interp"]], os.path.abspath(__file__), "--one", name],
                           capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            raise SystemExit("%s: reference failed" % name)
        shapes[name] = json.loads(r.stdout.strip().splitlines()[-1])
        print("%-36s %3d features %2d outputs" % (name, shapes[name]["n_features"], shapes[name]["n_outputs"]))
    old = {}
    mpath = os.path.join(HERE, "manifest.tsv")
    if os.path.exists(mpath):
        for line in open(mpath):
            if not line.startswith("#"):
                c = line.rstrip("\n").split("\t")
                old[c[0]] = (int(c[3]), int(c[4]))
    with open(mpath, "w") as f:
        f.write("# name\tfile\tformat\tn_features\tn_outputs\ttolerance\texpect\trepo\tpath\tcommit\tlicense\twriter\n")
        for t in E:
            e = dict(zip(FIELDS, t))
            if e["name"] in shapes:
                nf, no = shapes[e["name"]]["n_features"], shapes[e["name"]]["n_outputs"]
            elif e["name"] in old:
                nf, no = old[e["name"]]
            else:
                nf, no = 0, 0
            f.write("\t".join([e["name"], e["file"], e["format"], str(nf), str(no), "%g" % e["tol"],
                               e["expect"], e["repo"], e["path"], e["commit"], e["license"], e["writer"]]) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

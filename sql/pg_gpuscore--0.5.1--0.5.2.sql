/* pg_gpuscore--0.5.1--0.5.2.sql: update pg_gpuscore from 0.5.1 to 0.5.2 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.5.2'" to load this file. \quit

-- CatBoost models saved as JSON load natively (format 'catboost-json', or
-- detected by 'auto'): the comment of gpu_load_model names the format.  The
-- comments of gpu_explain name what it explains besides XGBoost's and
-- LightGBM's trees: XGBoost's linear boosters.  No object changes otherwise.
COMMENT ON FUNCTION @extschema@.gpu_load_model(text, bytea, text) IS
'validate a model (xgboost-json, xgboost-ubj, xgboost-binary, lightgbm, catboost-json, onnx, onnx-autoencoder or auto) and store it as the new active version of name; returns the version';

COMMENT ON FUNCTION @extschema@.gpu_explain(text, real[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, double precision[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, numeric[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, integer[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, bigint[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, smallint[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM, and XGBoost''s linear boosters';

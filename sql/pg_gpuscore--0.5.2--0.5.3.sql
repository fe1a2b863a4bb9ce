/* pg_gpuscore--0.5.2--0.5.3.sql: update pg_gpuscore from 0.5.2 to 0.5.3 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.5.3'" to load this file. \quit

-- gpu_explain explains CatBoost models too (CatBoost's ShapValues, from the
-- model's leaf weights): its comments name CatBoost.  No object changes
-- otherwise.
COMMENT ON FUNCTION @extschema@.gpu_explain(text, real[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost, LightGBM or CatBoost, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, double precision[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost, LightGBM or CatBoost, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, numeric[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost, LightGBM or CatBoost, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, integer[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost, LightGBM or CatBoost, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, bigint[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost, LightGBM or CatBoost, and XGBoost''s linear boosters';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, smallint[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost, LightGBM or CatBoost, and XGBoost''s linear boosters';

/* pg_gpuscore--0.2.0--0.3.0.sql: update pg_gpuscore from 0.2.0 to 0.3.0 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.3.0'" to load this file. \quit

-- Categorical features by name ------------------------------------------------

-- A model trained on a pandas DataFrame with category columns keeps the
-- names of its categories (XGBoost 3.1 and later, LightGBM, skl2onnx's
-- OneHotEncoders of string columns); text,
-- varchar and char columns are then read by name wherever columns are
-- (gpu_score_query, gpu_score_agg's column form, the triggers).  These two
-- show the names and give the code a feature array needs.
CREATE FUNCTION @extschema@.gpu_model_categories(model text)
RETURNS TABLE (feature integer, feature_name text, code integer, category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_model_categories'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_model_categories(text) IS
'the category names a model keeps, feature by feature: code n of a categorical feature is its n-th name (trained on a pandas DataFrame: XGBoost 3.1 or later, LightGBM, skl2onnx one-hot encoders of string columns)';

CREATE FUNCTION @extschema@.gpu_category_code(model text, feature text, category text)
RETURNS integer
AS 'MODULE_PATHNAME', 'gpuscore_gpu_category_code'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_category_code(text, text, text) IS
'the code of a category of a named feature, for a feature array; NULL for a category a LightGBM or ONNX model does not know, an error for one an XGBoost model does not know';

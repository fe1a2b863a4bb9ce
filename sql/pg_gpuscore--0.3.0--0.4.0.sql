/* pg_gpuscore--0.3.0--0.4.0.sql: update pg_gpuscore from 0.3.0 to 0.4.0 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.4.0'" to load this file. \quit

-- Explanations -----------------------------------------------------------------

-- Why one row got its score: each feature's contribution to a tree
-- ensemble's margin (SHAP values, as XGBoost's pred_contribs and LightGBM's
-- pred_contrib compute them), for reason codes.  Per output, one row per
-- feature (with its category name where the model keeps names), then the
-- expected margin as the row whose feature is NULL; the contributions of an
-- output add up to its margin.  One overload per array
-- type, as for gpu_score.  COST 1000: it walks every path of every tree.
CREATE FUNCTION @extschema@.gpu_explain(model text, features real[])
RETURNS TABLE (output integer, feature integer, feature_name text, value real, contribution real,
               category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain'
LANGUAGE C STABLE PARALLEL SAFE COST 1000 ROWS 31;
CREATE FUNCTION @extschema@.gpu_explain(model text, features double precision[])
RETURNS TABLE (output integer, feature integer, feature_name text, value real, contribution real,
               category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain'
LANGUAGE C STABLE PARALLEL SAFE COST 1000 ROWS 31;
CREATE FUNCTION @extschema@.gpu_explain(model text, features numeric[])
RETURNS TABLE (output integer, feature integer, feature_name text, value real, contribution real,
               category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain'
LANGUAGE C STABLE PARALLEL SAFE COST 1000 ROWS 31;
CREATE FUNCTION @extschema@.gpu_explain(model text, features integer[])
RETURNS TABLE (output integer, feature integer, feature_name text, value real, contribution real,
               category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain'
LANGUAGE C STABLE PARALLEL SAFE COST 1000 ROWS 31;
CREATE FUNCTION @extschema@.gpu_explain(model text, features bigint[])
RETURNS TABLE (output integer, feature integer, feature_name text, value real, contribution real,
               category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain'
LANGUAGE C STABLE PARALLEL SAFE COST 1000 ROWS 31;

COMMENT ON FUNCTION @extschema@.gpu_explain(text, real[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, double precision[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, numeric[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, integer[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM';
COMMENT ON FUNCTION @extschema@.gpu_explain(text, bigint[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM';

-- The rows of a query, read as gpu_score_query reads them (a key column, then
-- the features; text categories by name): per row and output the features
-- by decreasing contribution, then the expected margin; with top, only the
-- first top features (reason codes).
CREATE FUNCTION @extschema@.gpu_explain_query(model text, query text, top integer DEFAULT NULL)
RETURNS TABLE (id bigint, output integer, rank integer, feature integer, feature_name text,
               value real, contribution real, category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain_query'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1000;

COMMENT ON FUNCTION @extschema@.gpu_explain_query(text, text, integer) IS
'gpu_explain for every row of query (key column, then the features as for gpu_score_query): features by decreasing contribution, then the expected margin; with top, each row''s top reasons only';

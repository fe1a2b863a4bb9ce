/* pg_gpuscore--0.5.0--0.5.1.sql: update pg_gpuscore from 0.5.0 to 0.5.1 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.5.1'" to load this file. \quit

-- Feature arrays of smallint: gpu_score('m', ARRAY[hour, flags]) over smallint
-- columns was ambiguous between the other array overloads (a smallint[] casts
-- implicitly to each of them).  One more overload of each row function and of
-- the aggregate, on the same C functions.
CREATE FUNCTION @extschema@.gpu_score(model text, features smallint[])
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
COMMENT ON FUNCTION @extschema@.gpu_score(text, smallint[]) IS
'score one row with a single-output model; NULL elements are missing values';

CREATE FUNCTION @extschema@.gpu_predict(model text, features smallint[])
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
COMMENT ON FUNCTION @extschema@.gpu_predict(text, smallint[]) IS
'every output of one row (e.g. class probabilities of a multi-class model)';

CREATE FUNCTION @extschema@.gpu_explain(model text, features smallint[])
RETURNS TABLE (output integer, feature integer, feature_name text, value real, contribution real,
               category text)
AS 'MODULE_PATHNAME', 'gpuscore_gpu_explain'
LANGUAGE C STABLE PARALLEL SAFE COST 1000 ROWS 31;
COMMENT ON FUNCTION @extschema@.gpu_explain(text, smallint[]) IS
'each feature''s contribution to one row''s margin (SHAP values) and, where feature is NULL, the expected margin; tree ensembles saved by XGBoost or LightGBM';

CREATE FUNCTION @extschema@.gpu_score_agg_transfn(internal, text, bigint, smallint[])
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_agg_transfn'
LANGUAGE C STABLE PARALLEL SAFE COST 100;
CREATE AGGREGATE @extschema@.gpu_score_agg(model text, id bigint, features smallint[]) (
    SFUNC = @extschema@.gpu_score_agg_transfn,
    STYPE = internal,
    FINALFUNC = @extschema@.gpu_score_agg_finalfn,
    FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = @extschema@.gpu_score_agg_combinefn,
    SERIALFUNC = @extschema@.gpu_score_agg_serialfn,
    DESERIALFUNC = @extschema@.gpu_score_agg_deserialfn,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.gpu_score_agg(text, bigint, smallint[]) IS
'gpu_score_agg with the features as a smallint[] array';

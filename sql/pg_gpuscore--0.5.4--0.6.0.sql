/* pg_gpuscore--0.5.4--0.6.0.sql: update pg_gpuscore from 0.5.4 to 0.6.0 */

\echo Use "ALTER EXTENSION pg_gpuscore UPDATE TO '0.6.0'" to load this file. \quit

-- Plain gpu_score and gpu_predict calls are scored in columnar batches by a
-- custom scan node the planner hook puts over their input (src/batch_plan.c,
-- src/batch_exec.c); the whole-row forms gpu_score(model, row) and
-- gpu_predict(model, row) are new.

-- The planner support function of gpu_score and gpu_predict: a per-model cost
-- (SupportRequestCost) and, being called while the first query that uses them
-- is planned, it loads the library, whose planner hook then scores such calls
-- in columnar batches (src/batch_plan.c; pg_gpuscore.batch_calls).
CREATE FUNCTION @extschema@.gpu_score_support(internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_support'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@.gpu_score_support(internal) IS
'planner support of gpu_score and gpu_predict: their cost per row for the model named';

ALTER FUNCTION @extschema@.gpu_score(text, real[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, double precision[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, numeric[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, integer[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, bigint[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_score(text, smallint[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, real[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, double precision[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, numeric[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, integer[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, bigint[]) SUPPORT @extschema@.gpu_score_support;
ALTER FUNCTION @extschema@.gpu_predict(text, smallint[]) SUPPORT @extschema@.gpu_score_support;

-- The whole-row forms: gpu_score('fraud', t) takes the features from the
-- columns of row t named like the model's features (gpu_models.feature_names).
CREATE FUNCTION @extschema@.gpu_score(model text, features record)
RETURNS real AS 'MODULE_PATHNAME', 'gpuscore_gpu_score_row'
LANGUAGE C STABLE PARALLEL SAFE COST 100
SUPPORT @extschema@.gpu_score_support;
CREATE FUNCTION @extschema@.gpu_predict(model text, features record)
RETURNS real[] AS 'MODULE_PATHNAME', 'gpuscore_gpu_predict_row'
LANGUAGE C STABLE PARALLEL SAFE COST 100
SUPPORT @extschema@.gpu_score_support;

COMMENT ON FUNCTION @extschema@.gpu_score(text, record) IS
'score one row with a single-output model, taking each feature from the column of the row named like it; NULL is a missing value, text a category by name';
COMMENT ON FUNCTION @extschema@.gpu_predict(text, record) IS
'every output of one row, taking each feature from the column of the row named like it';

-- What the planner puts in place of a gpu_score or gpu_predict call that it
-- scores in a batch (src/batch_plan.c): the batch's score of the row, or the
-- error the call would have raised for that row, raised only where the call's
-- value is used, as the call itself would have raised it.
CREATE FUNCTION @extschema@.gpu_batch_result(score anyelement, error text)
RETURNS anyelement AS 'MODULE_PATHNAME', 'gpuscore_gpu_batch_result'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.gpu_batch_result(anyelement, text) IS
'internal to batched gpu_score and gpu_predict calls: the score, or the error the call raises for the row';

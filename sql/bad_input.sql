-- Bad input at the SQL level: every user-facing function with NULLs, empty
-- and huge arrays, NaN and +/-Infinity, wrong types, unknown models, crafted
-- bytes, and models dropped or replaced while a statement uses them.  Each
-- case gets an ERROR with its SQLSTATE or a documented result, never a crash;
-- the last query shows the backend still works.  (Model file errors are in
-- errors.sql and load.sql, privileges in privileges.sql.)
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_bc :models 'breast_cancer.json'
\set m_wine :models 'wine_softprob.json'
SELECT gpu_load_model('bad_bc', pg_read_binary_file(:'m_bc')) AS v1,
       gpu_load_model('bad_wine', pg_read_binary_file(:'m_wine')) AS v2;
CREATE TEMP TABLE r AS SELECT array_fill(1::real, ARRAY[30]) AS f;
\set VERBOSITY sqlstate

-- gpu_score / gpu_predict ------------------------------------------------------
-- A NULL array is no row: NULL, for every overload.
SELECT gpu_score('bad_bc', NULL::real[]) IS NULL AS r4, gpu_score('bad_bc', NULL::float8[]) IS NULL AS r8,
       gpu_score('bad_bc', NULL::numeric[]) IS NULL AS num, gpu_score('bad_bc', NULL::int[]) IS NULL AS i4,
       gpu_score('bad_bc', NULL::bigint[]) IS NULL AS i8, gpu_predict('bad_wine', NULL::real[]) IS NULL AS pred;
-- A NULL model name (22004), also with a NULL array.
SELECT gpu_score(NULL, f) FROM r;
SELECT gpu_score(NULL, NULL::bigint[]);
SELECT gpu_predict(NULL, f) FROM r;
-- NULL elements are missing values, whatever the element type.
SELECT gpu_score('bad_bc', array_fill(NULL::int, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AND gpu_score('bad_bc', array_fill(NULL::bigint, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AND gpu_score('bad_bc', array_fill(NULL::numeric, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AND gpu_score('bad_bc', array_fill(NULL::float8, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AS null_is_missing;
-- NaN is a missing value too (real, double precision, numeric).
SELECT gpu_score('bad_bc', array_fill('NaN'::real, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AND gpu_score('bad_bc', array_fill('NaN'::float8, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AND gpu_score('bad_bc', array_fill('NaN'::numeric, ARRAY[30])) = gpu_score('bad_bc', array_fill(NULL::real, ARRAY[30]))
   AS nan_is_missing;
-- Empty arrays: wrong feature count (22023), every overload.
SELECT gpu_score('bad_bc', '{}'::real[]);
SELECT gpu_score('bad_bc', '{}'::float8[]);
SELECT gpu_score('bad_bc', '{}'::numeric[]);
SELECT gpu_score('bad_bc', '{}'::int[]);
SELECT gpu_score('bad_bc', '{}'::bigint[]);
SELECT gpu_predict('bad_wine', '{}'::real[]);
-- Huge arrays: the count is checked before anything is converted (22023).
SELECT gpu_score('bad_bc', array_fill(1::real, ARRAY[10000000]));
SELECT gpu_predict('bad_wine', array_fill(1::float8, ARRAY[10000000]));
SELECT gpu_score('bad_bc', array_fill(1::real, ARRAY[31]));
-- Arrays of more than one dimension (2202E), even with 30 elements.
SELECT gpu_score('bad_bc', array_fill(1::real, ARRAY[5, 6]));
SELECT gpu_score('bad_bc', array_fill(1::int, ARRAY[1, 30]));
-- A lower bound other than 1 is ignored: elements are taken in order.
SELECT gpu_score('bad_bc', ('[0:29]=' || (SELECT f FROM r)::text)::real[]) = (SELECT gpu_score('bad_bc', f) FROM r)
       AS lower_bound_ignored;
-- Infinities (22003), every floating type; NaN is missing but Infinity is an error.
SELECT gpu_score('bad_bc', array_fill(1::real, ARRAY[29]) || 'Infinity'::real);
SELECT gpu_score('bad_bc', array_fill(1::real, ARRAY[29]) || '-Infinity'::real);
SELECT gpu_score('bad_bc', array_fill(1::float8, ARRAY[29]) || 'Infinity'::float8);
SELECT gpu_score('bad_bc', array_fill(1::numeric, ARRAY[29]) || 'Infinity'::numeric);
SELECT gpu_score('bad_bc', array_fill(1::numeric, ARRAY[29]) || '-Infinity'::numeric);
SELECT gpu_predict('bad_wine', array_fill(1::real, ARRAY[12]) || 'Infinity'::real);
-- Finite values beyond real (22003); tiny ones round to zero; bigint extremes fit.
SELECT gpu_score('bad_bc', array_fill(1::float8, ARRAY[29]) || 1e39::float8);
SELECT gpu_score('bad_bc', array_fill(1::numeric, ARRAY[29]) || 1e400::numeric);
SELECT gpu_score('bad_bc', array_fill(1::numeric, ARRAY[29]) || -1e39::numeric);
SELECT gpu_score('bad_bc', array_fill(0::numeric, ARRAY[29]) || 1e-400::numeric) =
       gpu_score('bad_bc', array_fill(0::real, ARRAY[30])) AS tiny_is_zero;
SELECT gpu_score('bad_bc', array_fill(9223372036854775807::bigint, ARRAY[15]) ||
                       array_fill('-9223372036854775808'::bigint, ARRAY[15])) BETWEEN 0 AND 1 AS bigint_extremes;
-- Wrong argument types: no such function (42883), or ambiguous (42725).
SELECT gpu_score('bad_bc', ARRAY['1', '2']::text[]);
SELECT gpu_score('bad_bc', ARRAY[true, false]);
SELECT gpu_score(1, ARRAY[1.0]::real[]);
SELECT gpu_score('bad_bc', 'not an array');
SELECT gpu_score('bad_bc', 1.5::real);
-- Unknown models (42704); an empty name (42602) or one too long for a model (42622).
SELECT gpu_score('no_such_model', f) FROM r;
SELECT gpu_score('', f) FROM r;
SELECT gpu_score(repeat('bad_x', 10000), f) FROM r;
SELECT gpu_predict('no_such_model', f) FROM r;
-- A multi-output model through gpu_score (22023).
SELECT gpu_score('bad_wine', array_fill(1::real, ARRAY[13]));

-- gpu_score_query / gpu_predict_query -----------------------------------------
SELECT * FROM gpu_score_query(NULL, 'SELECT 1::bigint, f FROM r');
SELECT * FROM gpu_score_query('bad_bc', NULL);
SELECT * FROM gpu_predict_query('bad_wine', NULL);
SELECT * FROM gpu_score_query('no_such_model', 'SELECT 1::bigint, f FROM r');
-- not a query that returns rows (42P11), a syntax error (42601)
SELECT * FROM gpu_score_query('bad_bc', '');
SELECT * FROM gpu_score_query('bad_bc', 'CREATE TEMP TABLE never_made (a int)');
SELECT * FROM gpu_score_query('bad_bc', 'SELECT 1; SELECT 2');
SELECT * FROM gpu_score_query('bad_bc', 'SELEKT 1');
SELECT count(*) AS never_made FROM pg_class WHERE relname = 'never_made';
-- wrong shapes: a text key, too few features, a text feature, an empty array
SELECT * FROM gpu_score_query('bad_bc', 'SELECT ''k''::text, f FROM r');
SELECT * FROM gpu_score_query('bad_bc', 'SELECT 1::bigint, 1::real, 2::real');
SELECT * FROM gpu_score_query('bad_bc', 'SELECT 1::bigint, ''bad_x''::text' || repeat(', 1::real', 29));
SELECT * FROM gpu_score_query('bad_bc', 'SELECT 1::bigint, ''{}''::real[]');
SELECT * FROM gpu_score_query('bad_bc', 'SELECT 1::bigint, array_fill(1::real, ARRAY[5, 6])');
-- an infinite feature in the third row fails the statement (22003)
SELECT * FROM gpu_score_query('bad_bc', 'SELECT i::bigint, CASE WHEN i = 3 THEN ''Infinity''::real ELSE 1 END' ||
                                    repeat(', 1::real', 29) || ' FROM generate_series(1, 5) i');
-- no rows: no output; a NULL key is passed through; a NULL features array is a
-- row of missing values (unlike gpu_score, where it gives NULL)
SELECT count(*) AS no_rows FROM gpu_score_query('bad_bc', 'SELECT 1::bigint, f FROM r WHERE false');
SELECT id IS NULL AS null_key, round(score::numeric, 6) AS score
  FROM gpu_score_query('bad_bc', 'SELECT NULL::bigint, f FROM r');
SELECT id, score IS NULL AS null_score FROM gpu_score_query('bad_bc', 'SELECT 7::bigint, NULL::real[]');

-- gpu_score_agg / gpu_scores ----------------------------------------------------
SELECT gpu_score_agg(NULL, 1, f) FROM r;
SELECT gpu_score_agg('no_such_model', 1, f) FROM r;
SELECT gpu_score_agg('bad_bc', 1, '{}'::real[]);
SELECT gpu_score_agg('bad_bc', 1, 1::real, 2::real);
SELECT gpu_score_agg('bad_bc', 1, 'bad_x'::text, 2::real);
SELECT gpu_score_agg('bad_bc', 1, array_fill(1::real, ARRAY[29]) || 'Infinity'::real);
-- one group naming two models (22023)
SELECT gpu_score_agg(CASE WHEN i = 1 THEN 'bad_bc' ELSE 'bad_wine' END, i, f) FROM r, generate_series(1, 2) i;
-- documented results: no rows gives NULL; NULL id and NULL features give NULLs
SELECT gpu_score_agg('bad_bc', 1, f) IS NULL AS empty_group FROM r WHERE false;
SELECT id, score IS NULL AS null_score FROM gpu_scores((
    SELECT gpu_score_agg('bad_bc', k, CASE WHEN k = 2 THEN NULL ELSE f END) FROM r, generate_series(1, 2) k))
 ORDER BY id;
SELECT id IS NULL AS null_id, round(score::numeric, 6) AS score
  FROM gpu_scores((SELECT gpu_score_agg('bad_bc', NULL, f) FROM r));
-- gpu_scores reads only what gpu_score_agg wrote (22P03); NULL gives no rows
SELECT * FROM gpu_scores(NULL);
SELECT * FROM gpu_scores(''::bytea);
SELECT * FROM gpu_scores('\x00'::bytea);
SELECT * FROM gpu_scores(decode(repeat('ff', 200), 'hex'));
CREATE TEMP TABLE agg_result AS SELECT gpu_score_agg('bad_bc', 1, f) AS b FROM r;
SELECT count(*) AS genuine FROM gpu_scores((SELECT b FROM agg_result));
-- the same bytes with a row count of 2^40, of 2, and one byte short or long
SELECT * FROM gpu_scores((SELECT overlay(b PLACING '\x0000000000010000'::bytea FROM 9) FROM agg_result));
SELECT * FROM gpu_scores((SELECT overlay(b PLACING '\x0200000000000000'::bytea FROM 9) FROM agg_result));
SELECT * FROM gpu_scores((SELECT substr(b, 1, length(b) - 1) FROM agg_result));
SELECT * FROM gpu_scores((SELECT b || '\x00'::bytea FROM agg_result));
-- a model name without its terminating NUL
SELECT * FROM gpu_scores((SELECT overlay(b PLACING decode(repeat('41', 64), 'hex') FROM 17) FROM agg_result));

-- gpu_verify_model, gpu_drop_model, gpu_model_lock, triggers -------------------
SELECT * FROM gpu_verify_model(NULL);
SELECT * FROM gpu_verify_model('no_such_model', 10);
SELECT * FROM gpu_verify_model('bad_bc', 0);
SELECT * FROM gpu_verify_model('bad_bc', -1);
SELECT * FROM gpu_verify_model('bad_bc', 2147483647);
SELECT rows_compared, passed FROM gpu_verify_model('bad_bc', NULL);  -- the default 10000
SELECT gpu_drop_model(NULL);
SELECT gpu_drop_model('no_such_model');
SELECT gpu_drop_model('no_such_model', NULL);
SELECT gpu_model_lock(NULL) IS NULL AS strict_null;
SELECT gpu_model_lock('no_such_model');
SELECT gpu_score_trigger();
SELECT gpu_alert_trigger();
-- loading: NULL format (22004), junk (22023), over the size cap (54000)
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'m_bc'), NULL);
SELECT gpu_load_model('bad_x', decode(repeat('7b22', 50000), 'hex'));
SELECT gpu_load_model('bad_x', '\x7b'::bytea || decode(repeat('5b', 100000), 'hex'));
SET pg_gpuscore.max_model_size = '1kB';
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'m_bc'));
RESET pg_gpuscore.max_model_size;
-- each cap names itself in the message (54000), and the hint names the setting
-- that holds it
\set VERBOSITY default
SET pg_gpuscore.max_trees = 3;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'m_bc'));
RESET pg_gpuscore.max_trees;
SET pg_gpuscore.max_tree_depth = 1;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'m_bc'));
RESET pg_gpuscore.max_tree_depth;
SET pg_gpuscore.max_features = 10;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'m_bc'));
RESET pg_gpuscore.max_features;
SET pg_gpuscore.max_nodes = 100;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'m_bc'));
RESET pg_gpuscore.max_nodes;
-- networks: dense layers and parameters (the MLP 30-64-32-1 has 3 layers and
-- 30*64+64 + 64*32+32 + 32+1 = 4097 parameters)
\set mlp :abs_srcdir '/tests/fixtures/onnx/mlp_sigmoid.onnx'
SET pg_gpuscore.max_layers = 2;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'mlp'));
RESET pg_gpuscore.max_layers;
SET pg_gpuscore.max_parameters = 4096;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'mlp'));
SET pg_gpuscore.max_parameters = 4097;
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'mlp')) AS loaded_at_the_cap;
SELECT gpu_drop_model('bad_x');
RESET pg_gpuscore.max_parameters;
-- a cap of pg_gpuscore's own (a layer of at most 65536 units) has no setting: no hint
\set wide :abs_srcdir '/tests/fixtures/onnx/bad/too_wide.onnx'
SELECT gpu_load_model('bad_x', pg_read_binary_file(:'wide'));
\set VERBOSITY sqlstate
SELECT count(*) AS nothing_stored FROM gpu_models WHERE name = 'bad_x';

-- Models dropped or replaced while in use -----------------------------------------
-- A statement keeps the model version it started with, in batches as well as
-- row by row; the next statement sees the change.
\set VERBOSITY default
CREATE TEMP TABLE feats AS
    SELECT i, ARRAY(SELECT ((i * 7 + k) % 13)::real FROM generate_series(1, 30) k) AS f
      FROM generate_series(1, 3000) i;
CREATE TEMP TABLE expect AS SELECT i, gpu_score('bad_bc', f) AS s FROM feats;
SET pg_gpuscore.batch_size = 500;
SELECT gpu_load_model('bad_victim', pg_read_binary_file(:'m_bc')) AS v;
-- gpu_score_query whose own rows drop the model halfway through
SELECT count(*) AS n, count(*) FILTER (WHERE q.score = e.s) AS same
  FROM gpu_score_query('bad_victim',
         'SELECT i::bigint, CASE WHEN i = 1700 AND gpu_drop_model(''bad_victim'') THEN f ELSE f END
            FROM feats ORDER BY i') q
  JOIN expect e ON e.i = q.id;
SELECT count(*) AS dropped FROM gpu_models WHERE name = 'bad_victim';
SELECT gpu_score('bad_victim', f) FROM r;
-- gpu_score_agg whose rows drop the model halfway through
SELECT gpu_load_model('bad_victim', pg_read_binary_file(:'m_bc')) AS v;
SELECT count(*) AS n, count(*) FILTER (WHERE g.score = e.s) AS same
  FROM gpu_scores((SELECT gpu_score_agg('bad_victim', i, CASE WHEN i = 1700 AND gpu_drop_model('bad_victim') THEN f ELSE f END)
                     FROM (SELECT * FROM feats ORDER BY i) s)) g
  JOIN expect e ON e.i = g.id;
-- ... and replace it with a model of another shape
SELECT gpu_load_model('bad_victim', pg_read_binary_file(:'m_bc')) AS v;
SELECT count(*) AS n, count(*) FILTER (WHERE g.score = e.s) AS same
  FROM gpu_scores((SELECT gpu_score_agg('bad_victim', i, CASE WHEN i = 1700 AND gpu_load_model('bad_victim', pg_read_binary_file(:'m_wine')) > 0 THEN f ELSE f END)
                     FROM (SELECT * FROM feats ORDER BY i) s)) g
  JOIN expect e ON e.i = g.id;
SELECT version, n_features FROM gpu_models WHERE name = 'bad_victim';
SELECT gpu_score('bad_victim', f) FROM r;
-- dropped and rolled back in one transaction
BEGIN;
SELECT gpu_load_model('bad_victim', pg_read_binary_file(:'m_bc')) AS v;
SELECT gpu_score('bad_victim', f) = (SELECT s FROM expect WHERE i = 1) AS same FROM feats WHERE i = 1;
SELECT gpu_drop_model('bad_victim');
SELECT gpu_score('bad_victim', f) FROM feats WHERE i = 1;
ROLLBACK;
SELECT version, n_features FROM gpu_models WHERE name = 'bad_victim';
SELECT gpu_drop_model('bad_victim');
RESET pg_gpuscore.batch_size;

-- The backend is still healthy.
SELECT round(gpu_score('bad_bc', f)::numeric, 6) AS still_scoring FROM r;

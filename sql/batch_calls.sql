-- Batched gpu_score and gpu_predict calls (pg_gpuscore.batch_calls).  The
-- planner puts a GpuScore node over the rows that plain calls score, which
-- scores them in columnar batches; every query here gives the same rows, in
-- the same order, as with batch_calls = off (row by row), compared in SQL by
-- same_rows(), and the same errors with the same SQLSTATEs.
\getenv abs_srcdir PG_ABS_SRCDIR
\set fx :abs_srcdir '/tests/fixtures'
SET pg_gpuscore.device = 'cpu';
SELECT gpu_load_model('fraud', pg_read_binary_file(:'fx' || '/models/fraud_binary.json')) > 0 AS fraud,
       gpu_load_model('bc', pg_read_binary_file(:'fx' || '/models/breast_cancer.json')) > 0 AS bc,
       gpu_load_model('wine', pg_read_binary_file(:'fx' || '/models/wine_softprob.json')) > 0 AS wine,
       gpu_load_model('xcat', pg_read_binary_file(:'fx' || '/models/x3_catnames.json')) > 0 AS xcat,
       gpu_load_model('cbcat', pg_read_binary_file(:'fx' || '/models/cb_cat_binary.json')) > 0 AS cbcat;

-- 3000 rows of 30 features with missing values and a few NULL arrays; the
-- same features as columns a1..a30 of three numeric types.
CREATE TABLE tx (id bigint PRIMARY KEY, merchant int, f real[], score real);
INSERT INTO tx
SELECT g, g % 7,
       CASE WHEN g % 211 = 0 THEN NULL
            ELSE ARRAY(SELECT CASE WHEN (g * 31 + i * 17) % 23 = 0 THEN NULL
                                   ELSE (((g * 7919 + i * 104729) % 10007) / 100.0)::real END
                         FROM generate_series(1, 30) i) END
  FROM generate_series(1, 3000) g;
CREATE TABLE tx_cols AS
SELECT id, merchant, f[1] AS a1, f[2]::float8 AS a2, f[3]::numeric AS a3, f[4] AS a4, f[5] AS a5,
       f[6] AS a6, f[7] AS a7, f[8] AS a8, f[9] AS a9, f[10] AS a10, f[11] AS a11, f[12] AS a12,
       f[13] AS a13, f[14] AS a14, f[15] AS a15, f[16] AS a16, f[17] AS a17, f[18] AS a18,
       f[19] AS a19, f[20] AS a20, f[21] AS a21, f[22] AS a22, f[23] AS a23, f[24] AS a24,
       f[25] AS a25, f[26] AS a26, f[27] AS a27, (f[28] * 100)::int AS a28, f[29] AS a29, f[30] AS a30
  FROM tx;
CREATE TABLE wine_rows AS
SELECT g AS id, ARRAY(SELECT ((g * 13 + i * 7) % 50 / 3.0)::real FROM generate_series(1, 13) i) AS f
  FROM generate_series(1, 500) g;
ANALYZE tx, tx_cols, wine_rows;
\set cols 'a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30'

-- batched(q): does the plan of q score calls in batches?
CREATE FUNCTION batched(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%GpuScore%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;
-- same_rows(q): q's rows, numbered in the order they come, with batch_calls
-- on and off; 'N rows, same' when they are equal.
CREATE FUNCTION same_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  differ bigint;
BEGIN
  PERFORM set_config('pg_gpuscore.batch_calls', 'on', true);
  EXECUTE 'CREATE TEMP TABLE rows_on AS SELECT row_number() OVER () AS rn, q.* FROM (' || q || ') q';
  PERFORM set_config('pg_gpuscore.batch_calls', 'off', true);
  EXECUTE 'CREATE TEMP TABLE rows_off AS SELECT row_number() OVER () AS rn, q.* FROM (' || q || ') q';
  PERFORM set_config('pg_gpuscore.batch_calls', 'on', true);
  SELECT count(*) INTO n FROM rows_on;
  SELECT count(*) INTO differ
    FROM ((TABLE rows_on EXCEPT ALL TABLE rows_off) UNION ALL (TABLE rows_off EXCEPT ALL TABLE rows_on)) d;
  DROP TABLE rows_on, rows_off;
  RETURN n || ' rows, ' || CASE WHEN differ = 0 THEN 'same' ELSE differ || ' differ' END;
END $$;

-- The plan: the node over the scan, the call replaced by its batched result.
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, gpu_score('fraud', f) AS p FROM tx WHERE merchant = 3;

-- Every shape of query, batched and as row by row.
SELECT batched(q), same_rows(q), q FROM (VALUES
  -- the target list, and a filter on the score
  ('SELECT id, gpu_score(''fraud'', f) AS p FROM tx'),
  ('SELECT id FROM tx WHERE merchant = 3 AND gpu_score(''fraud'', f) > 0.5'),
  -- features as ARRAY[] of columns of several types, read element by element
  ('SELECT id, gpu_score(''fraud'', ARRAY[' || :'cols' || ']) AS p FROM tx_cols'),
  -- ORDER BY the score, with and without LIMIT
  ('SELECT id, gpu_score(''fraud'', f) AS p FROM tx ORDER BY gpu_score(''fraud'', f) DESC, id LIMIT 25'),
  ('SELECT id FROM tx ORDER BY gpu_score(''fraud'', f), id'),
  -- aggregates: arguments, FILTER, GROUP BY a bucket of the score, HAVING
  ('SELECT merchant, count(*) FILTER (WHERE gpu_score(''fraud'', f) > 0.9) AS flagged, avg(gpu_score(''fraud'', f)) AS mean FROM tx GROUP BY 1 ORDER BY 1'),
  ('SELECT round(gpu_score(''fraud'', f) * 10) AS bucket, count(*) FROM tx GROUP BY 1 ORDER BY 1'),
  ('SELECT merchant, max(gpu_score(''fraud'', f)) FROM tx GROUP BY 1 HAVING avg(gpu_score(''fraud'', f)) > 0.4 ORDER BY 1'),
  ('SELECT sum(gpu_score(''fraud'', f)) FILTER (WHERE id % 2 = 0) AS even FROM tx'),
  -- a window function over scores
  ('SELECT id, avg(gpu_score(''fraud'', f)) OVER (PARTITION BY merchant) AS m FROM tx ORDER BY id'),
  -- a join, a CTE, subqueries
  ('SELECT t.id, gpu_score(''fraud'', t.f) AS p, c.a1 FROM tx t JOIN tx_cols c USING (id) WHERE c.a2 > 50'),
  -- features from both sides of a join, and from its inner side only
  ('SELECT t.id, gpu_score(''fraud'', ARRAY[c.a1, t.f[2], c.a3, t.f[4], c.a5, t.f[6], c.a7, t.f[8], c.a9, t.f[10], c.a11, t.f[12], c.a13, t.f[14], c.a15, t.f[16], c.a17, t.f[18], c.a19, t.f[20], c.a21, t.f[22], c.a23, t.f[24], c.a25, t.f[26], c.a27, t.f[28], c.a29, t.f[30]]) AS p FROM tx t JOIN tx_cols c USING (id)'),
  ('SELECT t.id, gpu_score(''fraud'', t.f[1:15] || u.f[16:30]) AS p FROM tx t JOIN tx u ON u.id = t.id + 1 WHERE t.f IS NOT NULL AND u.f IS NOT NULL'),
  ('SELECT t.id, t.merchant, gpu_score(''fraud'', u.f) AS p FROM tx t JOIN tx u ON u.id = t.id + 1'),
  ('WITH s AS MATERIALIZED (SELECT id, gpu_score(''fraud'', f) AS p FROM tx) SELECT merchant, sum(p) FROM s JOIN tx USING (id) GROUP BY 1 ORDER BY 1'),
  ('SELECT id, p FROM (SELECT id, gpu_score(''fraud'', f) AS p FROM tx OFFSET 0) s WHERE p > 0.5'),
  ('SELECT (SELECT max(gpu_score(''fraud'', f)) FROM tx) AS top'),
  ('SELECT id FROM tx t WHERE EXISTS (SELECT 1 FROM tx u WHERE u.id = t.id + 1 AND gpu_score(''fraud'', u.f) > 0.99)'),
  -- two models, and the same call twice (scored once)
  ('SELECT id, gpu_score(''fraud'', f) AS a, gpu_score(''bc'', f) AS b, gpu_score(''fraud'', f) + 1 AS c FROM tx'),
  -- every output of a multi-class model
  ('SELECT id, gpu_predict(''wine'', f) AS p FROM wine_rows'),
  -- NULL elements and NULL arrays (NULL scores)
  ('SELECT id, gpu_score(''fraud'', f) IS NULL AS none, gpu_score(''fraud'', array_fill(NULL::real, ARRAY[30])) AS all_missing FROM tx'),
  -- VALUES, a function's rows
  ('SELECT gpu_score(''fraud'', v.f) FROM (VALUES (array_fill(1::real, ARRAY[30])), (array_fill(2::real, ARRAY[30])), (NULL)) v(f)'),
  ('SELECT g, gpu_score(''fraud'', array_fill(g::real, ARRAY[30])) FROM generate_series(1, 300) g')
) v(q);

-- A volatile expression beside a call is still evaluated once per row.
CREATE SEQUENCE per_row;
SELECT count(*) AS n, max(k) AS nextvals, count(p) AS scored
  FROM (SELECT nextval('per_row') AS k, gpu_score('fraud', f) AS p FROM tx) s;

-- LIMIT does not score a batch of 65536 rows: the node's first batch is the
-- LIMIT's rows; behind a filter, batches grow 1, 64, 1024, ... rows.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id, gpu_score('fraud', f) FROM tx LIMIT 10;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id FROM tx WHERE gpu_score('fraud', f) > 0.5 LIMIT 10;
SET pg_gpuscore.batch_size = 1000;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM tx WHERE gpu_score('fraud', f) > 0.5;
RESET pg_gpuscore.batch_size;

-- The whole-row form: the model's feature names pick the columns (text
-- columns as categories by name), here against XGBoost's own predictions.
CREATE TABLE cat_rows (id bigint, amount real, country text, hour real, mcc text,
                       channel varchar(8), want float8);
\set tsv :fx '/catnames/x3_catnames.tsv'
COPY cat_rows FROM :'tsv' WITH (FORMAT text, HEADER true);
SELECT count(*) AS n, max(abs(gpu_score('xcat', r) - r.want)) < 1e-6 AS as_xgboost
  FROM cat_rows r;
SELECT batched(q), same_rows(q) FROM (VALUES
  ('SELECT id, gpu_score(''xcat'', r) FROM cat_rows r'),
  ('SELECT id, gpu_predict(''xcat'', r.*) FROM cat_rows r WHERE hour > 5'),
  -- a row of a subquery, columns renamed to the feature names, in another order
  ('SELECT id, gpu_score(''xcat'', s) FROM (SELECT id, channel, mcc, hour, country, amount FROM cat_rows) s'),
  ('SELECT id, gpu_score(''cbcat'', s) FROM (SELECT id, amount, mcc, country, hour, channel AS device FROM cat_rows) s')
) v(q);
-- a table's row read as its columns straight from the scan, beside another column and
-- under a filter and a materialized CTE (EXPLAIN shows the columns the node reads)
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, gpu_score('xcat', r) FROM cat_rows r WHERE hour > 5;
SELECT same_rows('SELECT id, gpu_score(''xcat'', r) FROM cat_rows r WHERE hour > 5');
SELECT same_rows('WITH sc AS MATERIALIZED (SELECT r.id, gpu_score(''xcat'', r) AS s FROM cat_rows r WHERE r.want > 0) SELECT count(*), sum(s) FROM sc');
-- the same scores as gpu_score_query's columns
SELECT count(*) AS n, count(*) FILTER (WHERE q.score = gpu_score('xcat', r)) AS same
  FROM gpu_score_query('xcat', 'SELECT id, amount, country, hour, mcc, channel FROM cat_rows') q
  JOIN cat_rows r USING (id);

-- Statements that write: INSERT ... SELECT, CREATE TABLE AS, UPDATE, MERGE.
CREATE TABLE scores_on (id bigint, p real);
CREATE TABLE scores_off (id bigint, p real);
INSERT INTO scores_on SELECT id, gpu_score('fraud', f) FROM tx WHERE merchant <> 2;
SET pg_gpuscore.batch_calls = off;
INSERT INTO scores_off SELECT id, gpu_score('fraud', f) FROM tx WHERE merchant <> 2;
RESET pg_gpuscore.batch_calls;
SELECT count(*) AS rows, (SELECT count(*) FROM (TABLE scores_on EXCEPT ALL TABLE scores_off) d) AS differ
  FROM scores_on;
CREATE TABLE ctas_on AS SELECT id, gpu_predict('wine', f) AS p FROM wine_rows;
SET pg_gpuscore.batch_calls = off;
CREATE TABLE ctas_off AS SELECT id, gpu_predict('wine', f) AS p FROM wine_rows;
RESET pg_gpuscore.batch_calls;
SELECT count(*) AS rows, (SELECT count(*) FROM (TABLE ctas_on EXCEPT ALL TABLE ctas_off) d) AS differ
  FROM ctas_on;
CREATE TABLE tx_on AS TABLE tx;
CREATE TABLE tx_off AS TABLE tx;
EXPLAIN (COSTS OFF) UPDATE tx_on SET score = gpu_score('fraud', f) WHERE score IS NULL;
UPDATE tx_on SET score = gpu_score('fraud', f) WHERE score IS NULL;
SET pg_gpuscore.batch_calls = off;
UPDATE tx_off SET score = gpu_score('fraud', f) WHERE score IS NULL;
RESET pg_gpuscore.batch_calls;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.score IS NOT DISTINCT FROM b.score) AS same
  FROM tx_on a JOIN tx_off b USING (id);
TRUNCATE scores_on, scores_off;
INSERT INTO scores_on SELECT id, 0 FROM tx WHERE id % 2 = 0;
INSERT INTO scores_off SELECT id, 0 FROM tx WHERE id % 2 = 0;
EXPLAIN (COSTS OFF)
MERGE INTO scores_on s USING (SELECT id, gpu_score('fraud', f) AS p FROM tx) t ON s.id = t.id
  WHEN MATCHED THEN UPDATE SET p = t.p WHEN NOT MATCHED THEN INSERT VALUES (t.id, t.p);
MERGE INTO scores_on s USING (SELECT id, gpu_score('fraud', f) AS p FROM tx) t ON s.id = t.id
  WHEN MATCHED THEN UPDATE SET p = t.p WHEN NOT MATCHED THEN INSERT VALUES (t.id, t.p);
SET pg_gpuscore.batch_calls = off;
MERGE INTO scores_off s USING (SELECT id, gpu_score('fraud', f) AS p FROM tx) t ON s.id = t.id
  WHEN MATCHED THEN UPDATE SET p = t.p WHEN NOT MATCHED THEN INSERT VALUES (t.id, t.p);
RESET pg_gpuscore.batch_calls;
SELECT count(*) AS rows, (SELECT count(*) FROM (TABLE scores_on EXCEPT ALL TABLE scores_off) d) AS differ
  FROM scores_on;

-- A prepared statement with the model as a parameter: the generic plan is
-- batched, the model named at each execution.
SET plan_cache_mode = force_generic_plan;
PREPARE by_model(text, int) AS SELECT id, gpu_score($1, f) AS p FROM tx WHERE merchant = $2;
EXPLAIN (COSTS OFF) EXECUTE by_model('fraud', 1);
CREATE TEMP TABLE prep_fraud AS EXECUTE by_model('fraud', 1);
CREATE TEMP TABLE prep_bc AS EXECUTE by_model('bc', 1);
SET pg_gpuscore.batch_calls = off;
SELECT (SELECT count(*) FROM prep_fraud) AS fraud_rows,
       (SELECT count(*) FROM (TABLE prep_fraud EXCEPT ALL
                              SELECT id, gpu_score('fraud', f) FROM tx WHERE merchant = 1) d) AS fraud_differ,
       (SELECT count(*) FROM (TABLE prep_bc EXCEPT ALL
                              SELECT id, gpu_score('bc', f) FROM tx WHERE merchant = 1) d) AS bc_differ;
-- (a plan made before the setting changed keeps its form, as for enable_*)
EXPLAIN (COSTS OFF) EXECUTE by_model('fraud', 1);
RESET pg_gpuscore.batch_calls;
DEALLOCATE by_model;
RESET plan_cache_mode;

-- Cursors, SCROLL or not, moving back and forth: the node keeps the rows it
-- returned when the cursor may go backward.  walk(q) fetches in a fixed
-- pattern and returns what it saw.
CREATE FUNCTION walk(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor := 'walker';
  r record;
  seen text := '';
BEGIN
  EXECUTE 'DECLARE walker SCROLL CURSOR FOR ' || q;
  FOR i IN 1..5 LOOP
    FETCH NEXT FROM c INTO r;
    seen := seen || r.id || ':' || r.p || ' ';
  END LOOP;
  FOR i IN 1..3 LOOP
    FETCH PRIOR FROM c INTO r;
    seen := seen || r.id || ':' || r.p || ' ';
  END LOOP;
  FETCH ABSOLUTE 2000 FROM c INTO r;
  seen := seen || r.id || ':' || r.p || ' ';
  FETCH LAST FROM c INTO r;
  seen := seen || r.id || ':' || r.p || ' ';
  FETCH RELATIVE -100 FROM c INTO r;
  seen := seen || r.id || ':' || r.p;
  CLOSE c;
  RETURN seen;
END $$;
SELECT walk('SELECT id, gpu_score(''fraud'', f) AS p FROM tx') AS walk_on \gset
SET pg_gpuscore.batch_calls = off;
SELECT walk('SELECT id, gpu_score(''fraud'', f) AS p FROM tx') = :'walk_on' AS scroll_same;
RESET pg_gpuscore.batch_calls;
BEGIN;
DECLARE plain CURSOR FOR SELECT id, round(gpu_score('fraud', f)::numeric, 6) AS p FROM tx WHERE id > 10;
FETCH 3 FROM plain;
FETCH BACKWARD 2 FROM plain;
MOVE FORWARD 100 FROM plain;
FETCH 1 FROM plain;
COMMIT;

-- A model replaced inside a transaction: the next statement scores with the
-- new version ('bc' into 'swap': the same 30 features).
BEGIN;
SELECT gpu_load_model('swap', pg_read_binary_file(:'fx' || '/models/fraud_binary.json')) AS v;
SELECT same_rows('SELECT id, gpu_score(''swap'', f) AS p FROM tx') AS v1,
       (SELECT count(*) FILTER (WHERE gpu_score('swap', f) IS NOT DISTINCT FROM gpu_score('fraud', f))
          FROM tx) AS as_fraud;
SELECT gpu_load_model('swap', pg_read_binary_file(:'fx' || '/models/breast_cancer.json')) AS v;
SELECT same_rows('SELECT id, gpu_score(''swap'', f) AS p FROM tx') AS v2,
       (SELECT count(*) FILTER (WHERE gpu_score('swap', f) IS NOT DISTINCT FROM gpu_score('bc', f))
          FROM tx) AS as_bc;
EXPLAIN (COSTS OFF) SELECT gpu_score('swap', f) FROM tx;
COMMIT;

-- Errors: each raised by the batched call as by the call row by row, with
-- its SQLSTATE, message, detail and hint (try() fetches every row of a
-- query and returns them).
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  st text;
  msg text;
  det text;
  hint text;
  r record;
BEGIN
  FOR r IN EXECUTE q LOOP
  END LOOP;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hint = PG_EXCEPTION_HINT;
  RETURN st || ': ' || msg || coalesce(' DETAIL: ' || nullif(det, ''), '') || coalesce(' HINT: ' || nullif(hint, ''), '');
END $$;
-- on_and_off(q): q's outcome with batch_calls on, and whether it is the same off
CREATE FUNCTION on_and_off(q text) RETURNS TABLE (batched boolean, outcome text, as_row_by_row boolean)
LANGUAGE plpgsql AS $$
DECLARE
  on_ text;
  off_ text;
BEGIN
  PERFORM set_config('pg_gpuscore.batch_calls', 'on', true);
  on_ := try(q);
  PERFORM set_config('pg_gpuscore.batch_calls', 'off', true);
  off_ := try(q);
  PERFORM set_config('pg_gpuscore.batch_calls', 'on', true);
  RETURN QUERY SELECT batched(q), on_, on_ = off_;
END $$;
CREATE TABLE bad_rows (id int, f real[], ok boolean);
INSERT INTO bad_rows SELECT id, f, true FROM tx WHERE id <= 100 AND f IS NOT NULL;
INSERT INTO bad_rows VALUES (101, ARRAY[1, 2, 3], false),
  (102, array_fill('Infinity'::real, ARRAY[30]), false),
  (103, array_fill(1::real, ARRAY[5, 6]), false);
ANALYZE bad_rows;
SELECT (on_and_off(q)).*, q FROM (VALUES
  ('SELECT gpu_score(NULL, f) FROM tx'),
  ('SELECT gpu_score(NULL, NULL::real[]) FROM tx'),
  ('SELECT gpu_score('''', f) FROM tx'),
  ('SELECT gpu_score(repeat(''m'', 64), f) FROM tx'),
  ('SELECT gpu_score(''no_such_model'', f) FROM tx'),
  -- no row with features: no model is looked up, as row by row
  ('SELECT gpu_score(''no_such_model'', NULL::real[]) FROM tx'),
  ('SELECT gpu_score('''', f) FROM tx WHERE f IS NULL'),
  ('SELECT gpu_score(''fraud'', f) FROM tx WHERE false'),
  -- features: how many, their values, the array's shape
  ('SELECT gpu_score(''fraud'', ARRAY[a1, a2, a3]) FROM tx_cols'),
  ('SELECT gpu_score(''fraud'', f) FROM bad_rows'),
  ('SELECT gpu_score(''fraud'', f) FROM bad_rows WHERE id <> 101'),
  ('SELECT gpu_score(''fraud'', f) FROM bad_rows WHERE id > 101 ORDER BY id DESC'),
  ('SELECT gpu_score(''fraud'', ARRAY[1e300::float8] || f[2:30]::float8[]) FROM tx'),
  ('SELECT gpu_score(''fraud'', array_fill(''-Infinity''::float8, ARRAY[30])) FROM tx'),
  ('SELECT gpu_score(''wine'', f) FROM wine_rows'),
  -- the whole-row form: a row without a feature's column, a model without
  -- names, a column that cannot be a feature, text for a number feature,
  -- a category XGBoost refuses
  ('SELECT gpu_score(''xcat'', s) FROM (SELECT amount, country, hour, mcc FROM cat_rows) s'),
  ('SELECT gpu_score(''fraud'', t) FROM tx t'),
  ('SELECT gpu_score(''xcat'', s) FROM (SELECT amount::text::bytea AS amount, country, hour, mcc, channel FROM cat_rows) s'),
  ('SELECT gpu_score(''xcat'', s) FROM (SELECT amount::text AS amount, country, hour, mcc, channel FROM cat_rows) s'),
  ('SELECT gpu_score(''xcat'', s) FROM (SELECT amount, ''XX'' AS country, hour, mcc, channel FROM cat_rows) s'),
  -- a score that is not used does not fail: CASE, COALESCE, FILTER, AND, OR, LIMIT
  ('SELECT CASE WHEN ok THEN gpu_score(''fraud'', f) END FROM bad_rows'),
  ('SELECT coalesce(CASE WHEN ok THEN 1 END, gpu_score(''fraud'', f)) FROM bad_rows'),
  ('SELECT sum(gpu_score(''fraud'', f)) FILTER (WHERE ok) FROM bad_rows'),
  ('SELECT id FROM bad_rows WHERE ok AND gpu_score(''fraud'', f) > 0.5'),
  ('SELECT id FROM bad_rows WHERE ok OR gpu_score(''fraud'', f) > 0.5'),
  ('SELECT gpu_score(''fraud'', f) FROM bad_rows ORDER BY id LIMIT 100'),
  -- a conditional call whose features could fail by themselves stays row by row
  ('SELECT CASE WHEN ok THEN gpu_score(''fraud'', ARRAY[1 / (id - 101)] || f[2:30]) END FROM bad_rows')
) v(q);

-- Privileges: the batched call checks EXECUTE on gpu_score as the call does.
CREATE ROLE gs_no_score;
GRANT SELECT ON tx TO gs_no_score;
REVOKE EXECUTE ON FUNCTION gpu_score(text, real[]) FROM PUBLIC;
SET ROLE gs_no_score;
SELECT try('SELECT gpu_score(''fraud'', f) FROM tx') AS batched;
SET pg_gpuscore.batch_calls = off;
SELECT try('SELECT gpu_score(''fraud'', f) FROM tx') AS row_by_row;
RESET pg_gpuscore.batch_calls;
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpu_score(text, real[]) TO PUBLIC;
DROP OWNED BY gs_no_score;
DROP ROLE gs_no_score;

-- pg_gpuscore.batch_calls = off: the plan has no node.
SET pg_gpuscore.batch_calls = off;
EXPLAIN (COSTS OFF) SELECT id, gpu_score('fraud', f) FROM tx;
RESET pg_gpuscore.batch_calls;

-- The GPU engine's path, through the CPU mock of the provider: batches on
-- the "GPU" (gpu_engine_stats, EXPLAIN ANALYZE), and faults mid-query fall
-- back to the CPU with the same scores, as gpu_score_query's do.
\c
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 700;
SELECT same_rows('SELECT id, gpu_score(''fraud'', f) AS p FROM tx') AS on_gpu;
SELECT engine, batches, rows FROM gpu_engine_stats() ORDER BY engine;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FILTER (WHERE gpu_score('fraud', f) > 0.9) FROM tx;
SET pg_gpuscore.device = 'auto';
SET pg_gpuscore.gpu_min_rows = 500;
SET pg_gpuscore.fault_injection = 'wait';
SELECT same_rows('SELECT id, gpu_score(''fraud'', f) AS p FROM tx') AS fallen_back;
SELECT engine, batches, rows, fallbacks > 0 AS fell_back FROM gpu_engine_stats() ORDER BY engine;
SET pg_gpuscore.device = 'gpu';
SELECT count(gpu_score('fraud', f)) FROM tx;
RESET pg_gpuscore.fault_injection;
RESET pg_gpuscore.gpu_min_rows;
RESET pg_gpuscore.batch_size;
RESET pg_gpuscore.device;

DROP TABLE tx, tx_cols, wine_rows, cat_rows, scores_on, scores_off, ctas_on, ctas_off, tx_on, tx_off, bad_rows;
DROP SEQUENCE per_row;
DROP FUNCTION batched(text), same_rows(text), walk(text), try(text), on_and_off(text);
SELECT gpu_drop_model(m) FROM unnest(ARRAY['fraud', 'bc', 'wine', 'xcat', 'cbcat', 'swap']) m;

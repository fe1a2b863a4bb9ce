-- Scoring every row of a query in batches: gpu_score_query, gpu_predict_query.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_iris :models 'iris_softmax.json'
\set m_wine :models 'wine_softprob.json'
SELECT gpu_load_model('iris', pg_read_binary_file(:'m_iris')) AS v1,
       gpu_load_model('wine', pg_read_binary_file(:'m_wine')) AS v2;

CREATE TABLE flowers (id bigint PRIMARY KEY, sepal_l real, sepal_w double precision,
                      petal_l numeric, petal_w integer);
INSERT INTO flowers
SELECT g, 4.5 + (g % 30) / 10.0, 2.5 + (g % 15) / 10.0, 1 + (g % 55) / 10.0, (g % 3)
  FROM generate_series(1, 10000) g;
UPDATE flowers SET petal_l = NULL WHERE id % 97 = 0;

-- Columns of any numeric type; NULL is a missing value.
SELECT count(*) AS n, sum(score) AS class_sum
  FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, petal_w FROM flowers');

-- The same scores as gpu_score row by row, whatever the batch size.
SET pg_gpuscore.batch_size = 7;
SELECT count(*) AS differing
  FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, petal_w FROM flowers') q
  JOIN flowers f ON f.id = q.id
 WHERE q.score IS DISTINCT FROM gpu_score('iris', ARRAY[f.sepal_l, f.sepal_w, f.petal_l, f.petal_w]);
RESET pg_gpuscore.batch_size;

-- Features as one array column.
SELECT count(*) AS differing
  FROM gpu_score_query('iris', 'SELECT id, ARRAY[sepal_l, sepal_w, petal_l, petal_w]::real[] FROM flowers') q
  JOIN gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, petal_w FROM flowers') r USING (id)
 WHERE q.score IS DISTINCT FROM r.score;
-- The array may be of any numeric type, as gpu_score's: numeric[], smallint[],
-- integer[] or bigint[] as well (here numbers that are whole, so that each
-- type holds them exactly).
SELECT t AS array_type, count(*) AS n,
       count(*) FILTER (WHERE q.score IS DISTINCT FROM r.score) AS differing
  FROM unnest(ARRAY['numeric[]', 'smallint[]', 'integer[]', 'bigint[]', 'double precision[]']) t,
       gpu_score_query('iris', format('SELECT id, ARRAY[id %% 8, id %% 5, id %% 7, petal_w]::%s FROM flowers', t)) q
  JOIN gpu_score_query('iris', 'SELECT id, id % 8, id % 5, id % 7, petal_w FROM flowers') r USING (id)
 GROUP BY t ORDER BY t;

-- Keys may be any integer type, and NULL.
SELECT * FROM gpu_score_query('iris', 'SELECT 7::smallint, 5.1, 3.5, 1.4, 0.2 UNION ALL SELECT NULL, 6.7, 3.0, 5.2, 2.3') ORDER BY id;

-- Empty input gives no rows.
SELECT count(*) FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, petal_w FROM flowers WHERE false');

-- Multi-output models: gpu_predict_query.
SELECT id, array_length(scores, 1) AS n, round((scores[1] + scores[2] + scores[3])::numeric, 5) AS total
  FROM gpu_predict_query('wine', 'SELECT 1, 13.2,1.8,2.1,15,100,2.6,2.7,0.3,1.8,4.3,1.0,3.3,1050');

-- Errors.
SELECT * FROM gpu_score_query('wine', 'SELECT 1, 13.2,1.8,2.1,15,100,2.6,2.7,0.3,1.8,4.3,1.0,3.3,1050');
SELECT * FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w FROM flowers');
SELECT * FROM gpu_score_query('iris', 'SELECT sepal_l, sepal_l, sepal_w, petal_l, petal_w FROM flowers');
SELECT * FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, ''x''::text FROM flowers');
SELECT * FROM gpu_score_query('iris', 'SELECT id FROM flowers');
SELECT * FROM gpu_score_query('iris', 'SELECT id, ARRAY[sepal_l::text] FROM flowers');
SELECT * FROM gpu_score_query('iris', 'DELETE FROM flowers');
SELECT * FROM gpu_score_query('iris', 'SELECT nonsense FROM flowers');
SELECT * FROM gpu_score_query('iris', 'SELECT 1, ''Infinity''::float8, 1, 1, 1');
SELECT * FROM gpu_score_query('iris', NULL);
SELECT * FROM gpu_score_query('nope', 'SELECT 1, 1, 1, 1, 1');
SET pg_gpuscore.batch_size = 0;

-- The query runs with the caller's privileges.
CREATE ROLE gs_reader;
SET ROLE gs_reader;
SELECT * FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, petal_w FROM flowers');
RESET ROLE;
DROP ROLE gs_reader;

-- The query may run in parallel: here its scan is shared out to workers only
-- (parallel_leader_participation off), whose backend pids serve as the keys
-- (worker_pid() is parallel safe, so the workers evaluate it); the scores
-- equal those of the same rows scored one by one.
CREATE FUNCTION worker_pid() RETURNS integer LANGUAGE plpgsql PARALLEL SAFE AS
$$BEGIN RETURN pg_backend_pid(); END$$;
CREATE TABLE many_flowers AS
  SELECT g AS id, (4 + g % 40 / 10.0)::real AS sepal_l, (2 + g % 25 / 10.0)::float8 AS sepal_w,
         (1 + g % 60 / 10.0)::numeric AS petal_l, (g % 25 / 10.0)::real AS petal_w
    FROM generate_series(1, 20000) g;
ANALYZE many_flowers;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT count(*) AS rows_scored, bool_and(id <> pg_backend_pid()) AS all_read_by_workers
  FROM gpu_score_query('iris', 'SELECT worker_pid(), sepal_l, sepal_w, petal_l, petal_w FROM many_flowers');
SELECT count(*) AS rows_scored,
       count(*) FILTER (WHERE q.score IS DISTINCT FROM
                        gpu_score('iris', ARRAY[f.sepal_l, f.sepal_w, f.petal_l, f.petal_w]::real[])) AS differing
  FROM gpu_score_query('iris', 'SELECT id, sepal_l, sepal_w, petal_l, petal_w FROM many_flowers WHERE id % 3 = 0') q
  JOIN many_flowers f USING (id);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
DROP TABLE many_flowers;
DROP FUNCTION worker_pid();

-- A long run can be cancelled (here by statement_timeout after 200 ms of a
-- query that would take about 50 s).
CREATE FUNCTION slow_feature(g bigint) RETURNS real LANGUAGE plpgsql AS
$$BEGIN PERFORM pg_sleep(0.0005); RETURN 5; END$$;
SET statement_timeout = '200ms';
SET pg_gpuscore.batch_size = 1000;
\set VERBOSITY terse
SELECT count(*) FROM gpu_score_query('iris',
  'SELECT g, slow_feature(g), 3, 1, 0 FROM generate_series(1, 100000) g');
\set VERBOSITY default
RESET statement_timeout;
RESET pg_gpuscore.batch_size;
DROP FUNCTION slow_feature(bigint);
DROP TABLE flowers;

-- Scoring single rows: gpu_score (one output) and gpu_predict (all outputs).
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_bc :models 'breast_cancer.json'
\set m_wine :models 'wine_softprob.json'
\set m_iris :models 'iris_softmax.json'
\set m_reg :models 'diabetes_reg.json'
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_bc')) AS v1,
       gpu_load_model('wine', pg_read_binary_file(:'m_wine')) AS v2,
       gpu_load_model('iris', pg_read_binary_file(:'m_iris')) AS v3,
       gpu_load_model('diabetes', pg_read_binary_file(:'m_reg')) AS v4;

-- A breast cancer row (sklearn's first sample): a probability.
CREATE TEMP TABLE bc_rows (id int, f real[]);
INSERT INTO bc_rows VALUES
 (1, '{17.99,10.38,122.8,1001,0.1184,0.2776,0.3001,0.1471,0.2419,0.07871,1.095,0.9053,8.589,153.4,0.006399,0.04904,0.05373,0.01587,0.03003,0.006193,25.38,17.33,184.6,2019,0.1622,0.6656,0.7119,0.2654,0.4601,0.1189}'),
 (2, '{13.54,14.36,87.46,566.3,0.09779,0.08129,0.06664,0.04781,0.1885,0.05766,0.2699,0.7886,2.058,23.56,0.008462,0.0146,0.02387,0.01315,0.0198,0.0023,15.11,19.26,99.7,711.2,0.144,0.1773,0.239,0.1288,0.2977,0.07259}');
SELECT id, round(gpu_score('bc', f)::numeric, 6) AS p FROM bc_rows ORDER BY id;

-- double precision[] gives the same scores as real[].
SELECT id, gpu_score('bc', f::float8[]) = gpu_score('bc', f) AS same FROM bc_rows ORDER BY id;

-- NULL elements and NaN are missing values and score identically.
SELECT gpu_score('bc', array_fill(NULL::real, ARRAY[30])) =
       gpu_score('bc', array_fill('NaN'::real, ARRAY[30])) AS null_is_nan;
SELECT round(gpu_score('bc', array_fill(NULL::real, ARRAY[30]))::numeric, 6) AS all_missing;

-- A NULL array gives NULL (no row to score).
SELECT gpu_score('bc', NULL::real[]) IS NULL AS null_row;

-- Arrays with any lower bound are fine.
SELECT gpu_score('bc', ('[0:29]=' || f::text)::real[]) = gpu_score('bc', f) AS lower_bound_ok
  FROM bc_rows WHERE id = 1;

-- Regression output, unbounded.
SELECT round(gpu_score('diabetes', ARRAY[0.038,0.05,0.062,0.022,-0.044,-0.035,-0.043,-0.003,0.02,-0.018])::numeric, 3) AS progression;

-- Multi-class: gpu_predict returns the class probabilities (summing to 1).
SELECT array_length(p, 1) AS n_classes,
       round((p[1] + p[2] + p[3])::numeric, 5) AS total
  FROM (SELECT gpu_predict('wine', ARRAY[13.2,1.8,2.1,15,100,2.6,2.7,0.3,1.8,4.3,1.0,3.3,1050]) AS p) s;
-- multi:softmax has one output: the class index.
SELECT gpu_score('iris', ARRAY[5.1,3.5,1.4,0.2]) AS setosa,
       gpu_score('iris', ARRAY[6.7,3.0,5.2,2.3]) AS virginica,
       gpu_predict('iris', ARRAY[6.7,3.0,5.2,2.3]) AS as_array;

-- The model name may differ row by row.
SELECT m, round(gpu_score(m, ARRAY[5.1,3.5,1.4,0.2])::numeric, 3)
  FROM (VALUES ('iris'), ('iris')) v(m);

-- Arrays of numeric, smallint, integer and bigint work too (ARRAY[amount, ...]
-- over columns of any numeric type); text does not.
SELECT gpu_score('iris', ARRAY[5.1,3.5,1.4,0.2]) = gpu_score('iris', ARRAY[5.1,3.5,1.4,0.2]::real[]) AS from_numeric,
       gpu_score('iris', ARRAY[7,3,5,2]) AS from_int,
       gpu_score('iris', ARRAY[7,3,5,2]::bigint[]) AS from_bigint,
       gpu_score('iris', ARRAY[7.0,3,NULL,2]) AS with_null;
SELECT gpu_score('iris', ARRAY[7,3,5,2]::smallint[]) = gpu_score('iris', ARRAY[7,3,5,2]) AS from_smallint,
       gpu_predict('iris', ARRAY[7,3,5,2]::smallint[]) = gpu_predict('iris', ARRAY[7,3,5,2]::real[]) AS predict_from_smallint;
SELECT gpu_score('iris', ARRAY['1','2','3','4']);

-- Replacing a model is seen by the next statement.
SELECT round(gpu_score('bc', f)::numeric, 6) AS before FROM bc_rows WHERE id = 1;
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_reg'));
SELECT gpu_score('bc', f) FROM bc_rows WHERE id = 1;
SELECT round(gpu_score('bc', ARRAY[0.038,0.05,0.062,0.022,-0.044,-0.035,-0.043,-0.003,0.02,-0.018])::numeric, 3) AS after;
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_bc'));
SELECT round(gpu_score('bc', f)::numeric, 6) AS restored FROM bc_rows WHERE id = 1;

-- A model replaced in another session is seen by this session's next statement.
CREATE EXTENSION dblink;
SELECT dblink_connect('other', format('dbname=%s host=%s port=%s', current_database(),
       current_setting('unix_socket_directories'), current_setting('port')));
SELECT gpu_load_model('shared', pg_read_binary_file(:'m_bc'));
SELECT round(gpu_score('shared', f)::numeric, 6) AS here_v1 FROM bc_rows WHERE id = 1;
SELECT * FROM dblink('other', $$SELECT gpu_load_model('shared', pg_read_binary_file('$$ || :'m_reg' || $$'))$$) AS t(v int);
SELECT round(gpu_score('shared', ARRAY[0.038,0.05,0.062,0.022,-0.044,-0.035,-0.043,-0.003,0.02,-0.018])::numeric, 3) AS here_v2;
SELECT * FROM dblink('other', $$SELECT gpu_drop_model('shared')$$) AS t(dropped boolean);
SELECT gpu_score('shared', ARRAY[0.038,0.05,0.062,0.022,-0.044,-0.035,-0.043,-0.003,0.02,-0.018]);
SELECT dblink_disconnect('other');
DROP EXTENSION dblink;

-- Parallel query: workers score with the same results as the leader.
CREATE TABLE many AS SELECT g AS id, ARRAY[5 + (g % 30) / 10.0, 3, 1 + (g % 50) / 10.0, (g % 25) / 10.0]::real[] AS f
  FROM generate_series(1, 20000) g;
ANALYZE many;
SELECT sum(gpu_score('iris', f)) AS class_sum, count(*) FROM many;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET force_parallel_mode = on;
EXPLAIN (COSTS OFF) SELECT sum(gpu_score('iris', f)) FROM many;
SELECT sum(gpu_score('iris', f)) AS class_sum, count(*) FROM many;
RESET force_parallel_mode;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
DROP TABLE many;

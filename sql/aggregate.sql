-- The scoring aggregate gpu_score_agg(model, id, features) and gpu_scores(),
-- which turns its result (a bytea of (id, score) pairs) back into rows.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_bc :models 'breast_cancer.json'
\set m_iris :models 'iris_softmax.json'
\set m_fraud :models 'fraud_binary.json'
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_bc')) > 0 AS bc,
       gpu_load_model('iris', pg_read_binary_file(:'m_iris')) > 0 AS iris,
       gpu_load_model('fraud', pg_read_binary_file(:'m_fraud')) > 0 AS fraud;

-- 5000 rows of 30 features around a real sample, some elements missing.
CREATE TABLE agg_rows (id bigint PRIMARY KEY, grp int, f real[]);
INSERT INTO agg_rows
SELECT g, g % 4,
       ARRAY(SELECT CASE WHEN (g + k) % 53 = 0 THEN NULL
                         ELSE (v * (0.6 + ((g * (k + 3)) % 89) / 100.0))::real END
               FROM unnest('{17.99,10.38,122.8,1001,0.1184,0.2776,0.3001,0.1471,0.2419,0.07871,1.095,0.9053,8.589,153.4,0.006399,0.04904,0.05373,0.01587,0.03003,0.006193,25.38,17.33,184.6,2019,0.1622,0.6656,0.7119,0.2654,0.4601,0.1189}'::real[])
                    WITH ORDINALITY u(v, k))
  FROM generate_series(1, 5000) g;
ANALYZE agg_rows;

-- Every row comes back once with gpu_score's score, whatever the batch size
-- (700 rows: 7 full batches and a partial one).
SET pg_gpuscore.batch_size = 700;
SELECT count(*) AS n, count(DISTINCT s.id) AS ids,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, f) FROM agg_rows)) s
  JOIN agg_rows r USING (id);

-- Arrays of numeric, smallint, integer or bigint (ARRAY[...] of columns of those types)
-- score as gpu_score scores the same values as real[].
CREATE TEMP TABLE agg_whole AS
  SELECT id, ARRAY(SELECT round(v::numeric) FROM unnest(f) WITH ORDINALITY u(v, k) ORDER BY k) AS n
    FROM agg_rows;
SELECT 'numeric[]' AS array_type, count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', w.n::real[])) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, n) FROM agg_whole)) s JOIN agg_whole w USING (id)
UNION ALL
SELECT 'smallint[]', count(*), count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', w.n::real[]))
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, n::smallint[]) FROM agg_whole)) s JOIN agg_whole w USING (id)
UNION ALL
SELECT 'integer[]', count(*), count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', w.n::real[]))
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, n::integer[]) FROM agg_whole)) s JOIN agg_whole w USING (id)
UNION ALL
SELECT 'bigint[]', count(*), count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', w.n::real[]))
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, n::bigint[]) FROM agg_whole)) s JOIN agg_whole w USING (id);
DROP TABLE agg_whole;

-- GROUP BY: one result (one batch set) per group.
SELECT a.grp, count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing,
       bool_and(r.grp = a.grp) AS own_rows
  FROM (SELECT grp, gpu_score_agg('bc', id, f) AS res FROM agg_rows GROUP BY grp) a,
       gpu_scores(a.res) s JOIN agg_rows r USING (id)
 GROUP BY a.grp ORDER BY a.grp;

-- FILTER scores only the rows it lets through.
SELECT count(*) AS n, min(id) AS min_id, max(id) AS max_id
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, f) FILTER (WHERE id % 10 = 0) FROM agg_rows));

-- Empty input (or a FILTER letting nothing through): the result is NULL, and
-- gpu_scores(NULL) gives no rows.
SELECT gpu_score_agg('bc', id, f) IS NULL AS is_null FROM agg_rows WHERE false;
SELECT gpu_score_agg('bc', id, f) FILTER (WHERE false) IS NULL AS is_null FROM agg_rows;
SELECT count(*) FROM gpu_scores((SELECT gpu_score_agg('bc', id, f) FROM agg_rows WHERE false));
SELECT count(*) FROM gpu_scores(NULL);

-- A NULL features array keeps its row with a NULL score; a NULL id is kept.
SELECT s.id, round(s.score::numeric, 6) AS score
  FROM gpu_scores((SELECT gpu_score_agg('bc', i, CASE WHEN i = 2 THEN NULL ELSE f END)
                     FROM (VALUES (1::bigint), (2), (NULL)) v(i), (SELECT f FROM agg_rows WHERE id = 1) r)) s
 ORDER BY s.id NULLS LAST;

-- Every element missing scores like gpu_score of the same array.
SELECT s.score = gpu_score('bc', array_fill(NULL::real, ARRAY[30])) AS same
  FROM gpu_scores((SELECT gpu_score_agg('bc', 1, array_fill(NULL::real, ARRAY[30])))) s;

-- Two calls in one query keep their own states.  Not a window function: the
-- final function scores the state in place.
SELECT (SELECT count(*) FROM gpu_scores(a)) AS n1, (SELECT count(*) FROM gpu_scores(b)) AS n2
  FROM (SELECT gpu_score_agg('bc', id, f) AS a, gpu_score_agg('bc', id, f) FILTER (WHERE id > 2) AS b
          FROM agg_rows WHERE id <= 5) x;
SELECT id, (SELECT count(*) FROM gpu_scores(w)) AS n
  FROM (SELECT id, gpu_score_agg('bc', id, f) OVER (ORDER BY id) AS w FROM agg_rows WHERE id <= 3) x
 ORDER BY id;
RESET pg_gpuscore.batch_size;

-- Parallel aggregation: the workers score their partial aggregates, the
-- leader concatenates them; the same scores as serially.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET force_parallel_mode = on;
SET pg_gpuscore.batch_size = 700;
EXPLAIN (COSTS OFF) SELECT gpu_score_agg('bc', id, f) FROM agg_rows;
EXPLAIN (COSTS OFF) SELECT grp, gpu_score_agg('bc', id, f) FROM agg_rows GROUP BY grp;
SELECT count(*) AS n, count(DISTINCT s.id) AS ids,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, f) FROM agg_rows)) s
  JOIN agg_rows r USING (id);
SELECT a.grp, count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM (SELECT grp, gpu_score_agg('bc', id, f) AS res FROM agg_rows GROUP BY grp) a,
       gpu_scores(a.res) s JOIN agg_rows r USING (id)
 GROUP BY a.grp ORDER BY a.grp;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET force_parallel_mode;
RESET pg_gpuscore.batch_size;

-- Errors.
SELECT gpu_score_agg('nope', id, f) FROM agg_rows;
SELECT gpu_score_agg(NULL, id, f) FROM agg_rows;
SELECT gpu_score_agg('bc', id, f[1:29]) FROM agg_rows;
SELECT gpu_score_agg('iris', id, f) FROM agg_rows;
SELECT gpu_score_agg(CASE WHEN id < 3 THEN 'bc' ELSE 'fraud' END, id, f) FROM agg_rows;
SELECT gpu_score_agg('bc', id, CASE WHEN id = 9 THEN '{Infinity}'::real[] || f[2:30] ELSE f END) FROM agg_rows;
-- gpu_scores checks its argument: anything but a gpu_score_agg result is refused.
SELECT * FROM gpu_scores('\x'::bytea);
SELECT * FROM gpu_scores(decode(repeat('00', 200), 'hex'));
SELECT * FROM gpu_scores(overlay((SELECT gpu_score_agg('bc', id, f) FROM agg_rows WHERE id < 3)
                                 placing '\xffffffffffffffff' from 9));
SELECT * FROM gpu_scores(substr((SELECT gpu_score_agg('bc', id, f) FROM agg_rows WHERE id < 3), 1, 90));
SELECT * FROM gpu_scores((SELECT gpu_score_agg('bc', id, f) FROM agg_rows WHERE id < 3) || '\x00'::bytea);

-- The GPU path, through the CPU mock of the GPU provider (see gpu_engine):
-- full batches go to the device while the scan goes on; the same scores, and
-- the device memory is given back when the aggregate ends or fails.
\set mock :abs_srcdir '/tests/mock_provider/pg_gpuscore_mock_provider.so'
\c
-- (the session's own provider, whose device memory gpu_device_info shows; through the GPU
-- service, which holds the models of every session, see gpu_service.sql)
SET pg_gpuscore.provider = :'mock';
SET pg_gpuscore.gpu_service = off;
SET pg_gpuscore.device = 'gpu';
SET pg_gpuscore.batch_size = 700;
SELECT (total_memory - free_memory) >> 20 AS used_mib_before FROM gpu_device_info();
SELECT count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, f) FROM agg_rows)) s
  JOIN agg_rows r USING (id);
SELECT a.grp, count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM (SELECT grp, gpu_score_agg('bc', id, f) AS res FROM agg_rows GROUP BY grp) a,
       gpu_scores(a.res) s JOIN agg_rows r USING (id)
 GROUP BY a.grp ORDER BY a.grp;
SELECT engine, rows > 0 AS scored FROM gpu_engine_stats() WHERE engine = 'gpu';
SELECT gpu_score_agg('bc', id, CASE WHEN id = 4000 THEN '{Infinity}'::real[] || f[2:30] ELSE f END) FROM agg_rows;
-- only the model stays on the device
SELECT (total_memory - free_memory) >> 20 AS used_mib_after FROM gpu_device_info();
RESET pg_gpuscore.device;
RESET pg_gpuscore.batch_size;

-- Features as separate columns: gpu_score_agg(model, id, VARIADIC "any")
-- takes one argument per feature, in model order, so no array is built per
-- row.  A NULL column is a missing value, as a NULL array element is.
\c
SET pg_gpuscore.batch_size = 700;
CREATE TABLE agg_cols AS SELECT id, grp, f[1] AS c1, f[2] AS c2, f[3] AS c3, f[4] AS c4, f[5] AS c5, f[6] AS c6, f[7] AS c7, f[8] AS c8, f[9] AS c9, f[10] AS c10, f[11] AS c11, f[12] AS c12, f[13] AS c13, f[14] AS c14, f[15] AS c15, f[16] AS c16, f[17] AS c17, f[18] AS c18, f[19] AS c19, f[20] AS c20, f[21] AS c21, f[22] AS c22, f[23] AS c23, f[24] AS c24, f[25] AS c25, f[26] AS c26, f[27] AS c27, f[28] AS c28, f[29] AS c29, f[30] AS c30 FROM agg_rows;
SELECT count(*) AS n, count(DISTINCT s.id) AS ids,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('bc', id, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30) FROM agg_cols)) s
  JOIN agg_rows r USING (id);
-- ... with GROUP BY, FILTER and in parallel, like the array form.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET force_parallel_mode = on;
SELECT a.grp, count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('bc', r.f)) AS differing
  FROM (SELECT grp, gpu_score_agg('bc', id, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30)
                    FILTER (WHERE id % 3 <> 0) AS res
          FROM agg_cols GROUP BY grp) a,
       gpu_scores(a.res) s JOIN agg_rows r USING (id)
 GROUP BY a.grp ORDER BY a.grp;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET force_parallel_mode;

-- Columns of any numeric type (and boolean, as 0/1) mix freely.
SELECT gpu_load_model('diab', pg_read_binary_file(:'models' || 'diabetes_reg.json')) > 0 AS diab;
CREATE TABLE agg_mixed (id bigint, a real, b double precision, c numeric, d integer,
                        e bigint, g smallint, h boolean, i real, j double precision, k numeric);
INSERT INTO agg_mixed
SELECT n, (n % 7) / 100.0, (n % 11) / 50.0 - 0.1, (n % 13) / 60.0 - 0.1, n % 3 - 1,
       (n % 5) - 2, (n % 4)::smallint - 2, n % 2 = 0,
       CASE WHEN n % 9 = 0 THEN NULL ELSE (n % 17) / 80.0 - 0.1 END,
       (n % 19) / 90.0 - 0.1, 'NaN'
  FROM generate_series(1, 300) n;
SELECT count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM
                        gpu_score('diab', ARRAY[m.a, m.b, m.c, m.d, m.e, m.g, m.h::int, m.i, m.j, m.k]::float8[]))
         AS differing
  FROM gpu_scores((SELECT gpu_score_agg('diab', id, a, b, c, d, e, g, h, i, j, k) FROM agg_mixed)) s
  JOIN agg_mixed m USING (id);
-- One array argument works too (double precision[] here).
SELECT count(*) AS n,
       count(*) FILTER (WHERE s.score IS DISTINCT FROM gpu_score('diab', m.arr)) AS differing
  FROM gpu_scores((SELECT gpu_score_agg('diab', id, arr)
                     FROM (SELECT id, ARRAY[a, b, c, d, e, g, h::int, i, j, k]::float8[] AS arr
                             FROM agg_mixed) t)) s
  JOIN (SELECT id, ARRAY[a, b, c, d, e, g, h::int, i, j, k]::float8[] AS arr FROM agg_mixed) m USING (id);

-- Errors of the column form.
SELECT gpu_score_agg('diab', id, a, b, c, d, e, g, h, i, j) FROM agg_mixed;
SELECT gpu_score_agg('diab', id, a, b, c, d, e, g, h, i, j, 'x'::text) FROM agg_mixed;
SELECT gpu_score_agg('diab', id, a, b, c, d, e, g, h, i, j, ARRAY[k]) FROM agg_mixed;
SELECT gpu_score_agg('diab', id, a, b, c, d, e, g, h, i, j, CASE WHEN id = 5 THEN 'Infinity' ELSE k END) FROM agg_mixed;
SELECT gpu_score_agg('diab', id, VARIADIC ARRAY[a, b, c, d, e, g, i, j, k, k]) FROM agg_mixed;
RESET pg_gpuscore.batch_size;
DROP TABLE agg_rows, agg_cols, agg_mixed;

-- The support functions of the array forms take and return bytea (so that
-- Citus can split the aggregate): called directly, they refuse
SELECT gpu_score_agg_transfn(NULL::bytea, 'agg', 1, ARRAY[1, 2, 3, 4]::real[]);
SELECT gpu_score_agg_combinefn(NULL::bytea, NULL::bytea);
SELECT gpu_score_agg_finalfn(NULL::bytea);

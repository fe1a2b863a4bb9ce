-- Nothing leaks across statements: each model version is parsed once per
-- backend, and its memory ("pg_gpuscore model" contexts) is released when it
-- is replaced or dropped and no statement uses it any more, errors included.
\getenv abs_srcdir PG_ABS_SRCDIR
\set m :abs_srcdir '/tests/fixtures/models/iris_softmax.json'
\set w :abs_srcdir '/tests/fixtures/models/wine_softprob.json'
CREATE FUNCTION model_contexts() RETURNS TABLE (n bigint, bytes bigint) LANGUAGE sql AS
$$SELECT count(*), coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
   WHERE name = 'pg_gpuscore model'$$;
SELECT gpu_load_model('iris', pg_read_binary_file(:'m')) > 0 AS loaded;
SELECT n FROM model_contexts();

-- Scoring many times keeps one parsed copy.
SELECT gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]) FROM generate_series(1, 3);
SELECT count(*) FROM gpu_score_query('iris', 'SELECT g, 5.1, 3.5, 1.4, 0.2 FROM generate_series(1, 1000) g');
SELECT n AS contexts_after_scoring FROM model_contexts();
CREATE TEMP TABLE baseline AS SELECT * FROM model_contexts();
DO $$BEGIN
  FOR i IN 1..50 LOOP
    PERFORM count(*) FROM gpu_score_query('iris', 'SELECT g, 5.1, 3.5, 1.4, 0.2 FROM generate_series(1, 100) g');
    PERFORM gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]);
  END LOOP;
END $$;
SELECT m.n = b.n AND m.bytes = b.bytes AS unchanged_after_100_statements
  FROM model_contexts() m, baseline b;

-- Replacing the model frees the old version once it is out of use.
SELECT gpu_load_model('iris', pg_read_binary_file(:'m')) > 1 AS replaced;
SELECT gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]);
SELECT gpu_load_model('iris', pg_read_binary_file(:'m')) > 2 AS replaced_again;
SELECT gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]);
SELECT n AS contexts_after_replacing FROM model_contexts();

-- Statements that fail keep nothing.
SELECT gpu_score('iris', ARRAY[1, 2, 3]);
SELECT count(*) FROM gpu_score_query('iris', 'SELECT 1, 1, 1, 1, ''Infinity''::float8');
SELECT count(*) FROM gpu_score_query('iris', 'SELECT g, 1, 1, 1, 1 / (g - 500) FROM generate_series(1, 1000) g');
SELECT gpu_load_model('iris', pg_read_binary_file(:'m')) > 3 AS replaced_after_errors;
SELECT gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]);
SELECT n AS contexts_after_errors FROM model_contexts();

-- Two models, then one dropped.
SELECT gpu_load_model('wine', pg_read_binary_file(:'w')) > 0 AS loaded;
SELECT array_length(gpu_predict('wine', array_fill(1, ARRAY[13])), 1);
SELECT n AS two_models FROM model_contexts();
SELECT gpu_drop_model('wine');
SELECT gpu_predict('wine', array_fill(1, ARRAY[13]));
SELECT n AS after_drop FROM model_contexts();
DROP FUNCTION model_contexts();

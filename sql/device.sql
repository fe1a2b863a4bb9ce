-- pg_gpuscore.device chooses the engine for batch scoring.  This build scores
-- on the CPU; forcing 'gpu' says so instead of quietly using the CPU.
\getenv abs_srcdir PG_ABS_SRCDIR
\set m :abs_srcdir '/tests/fixtures/models/iris_softmax.json'
SELECT gpu_load_model('iris', pg_read_binary_file(:'m')) > 0 AS loaded;
SHOW pg_gpuscore.device;
SHOW pg_gpuscore.batch_size;
SET pg_gpuscore.device = 'cpu';
SELECT count(*) FROM gpu_score_query('iris', 'SELECT 1, 5.1, 3.5, 1.4, 0.2');
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('iris', 'SELECT 1, 5.1, 3.5, 1.4, 0.2');
-- single rows always use the CPU engine
SELECT gpu_score('iris', ARRAY[5.1, 3.5, 1.4, 0.2]);
SET pg_gpuscore.device = 'tpu';
RESET pg_gpuscore.device;
SET pg_gpuscore.max_trees = 5;   -- superuser-only settings exist
RESET pg_gpuscore.max_trees;

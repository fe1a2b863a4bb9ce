-- Every user-facing scoring error, with its SQLSTATE.
\set VERBOSITY sqlstate
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/tests/fixtures/models/'
\set m_bc :models 'breast_cancer.json'
\set m_wine :models 'wine_softprob.json'
SELECT gpu_load_model('bc', pg_read_binary_file(:'m_bc')) AS v1,
       gpu_load_model('wine', pg_read_binary_file(:'m_wine')) AS v2;
\set VERBOSITY default

-- unknown model (42704)
SELECT gpu_score('no_such_model', ARRAY[1,2,3]::real[]);
SELECT gpu_predict('no_such_model', ARRAY[1,2,3]::real[]);
-- NULL model name (22004)
SELECT gpu_score(NULL, ARRAY[1,2,3]::real[]);
SELECT gpu_score(NULL, NULL::real[]);
-- wrong feature count (22023), empty array
SELECT gpu_score('bc', ARRAY[1,2,3]::real[]);
SELECT gpu_score('bc', '{}'::real[]);
-- multi-dimensional array (2202E)
SELECT gpu_score('bc', array_fill(1::real, ARRAY[5, 6]));
-- infinite values (22003); double precision beyond real (22003)
SELECT gpu_score('bc', array_fill(1::real, ARRAY[29]) || 'Infinity'::real);
SELECT gpu_score('bc', array_fill(1::float8, ARRAY[29]) || '-Infinity'::float8);
SELECT gpu_score('bc', array_fill(1::float8, ARRAY[29]) || 1e300::float8);
-- multi-output model through gpu_score (22023)
SELECT gpu_score('wine', array_fill(1::real, ARRAY[13]));

-- the same with SQLSTATEs
\set VERBOSITY sqlstate
SELECT gpu_score('no_such_model', ARRAY[1,2,3]::real[]);
SELECT gpu_score(NULL, ARRAY[1,2,3]::real[]);
SELECT gpu_score('bc', ARRAY[1,2,3]::real[]);
SELECT gpu_score('bc', array_fill(1::real, ARRAY[5, 6]));
SELECT gpu_score('bc', array_fill(1::real, ARRAY[29]) || 'Infinity'::real);
SELECT gpu_score('wine', array_fill(1::real, ARRAY[13]));
SELECT gpu_load_model('x', '\x7b7d'::bytea);
SELECT gpu_load_model('x', '\x69642c610a312c320a'::bytea);
SELECT gpu_load_model('x', '\x504b0304'::bytea);
\set VERBOSITY default

-- Bad model files: each one gets a clear ERROR, never a crash.
\set bad :abs_srcdir '/tests/fixtures/models/bad/'
\set f :bad 'xb17_gblinear.model'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'lgb_bad_linear_feature.txt'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'unknown_objective.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'truncated.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'truncated.ubj'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'child_out_of_range.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'cycle.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'feature_out_of_range.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'nonfinite_threshold.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'wrong_lengths.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'not_a_model.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'empty.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
\set f :bad 'negative_child.json'
SELECT gpu_load_model('x', pg_read_binary_file(:'f'));
SELECT count(*) AS nothing_stored FROM gpu_models WHERE name = 'x';

-- The backend is still healthy.
SELECT gpu_score('bc', array_fill(NULL::real, ARRAY[30])) > 0 AS still_scoring;

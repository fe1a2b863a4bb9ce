# tests/t/020_dump_restore.pl: models survive pg_dump / pg_restore.
#
# A database with several models (binary JSON and UBJ, multi-class, one
# replaced twice, one dropped), a grant of loading rights and a table of
# scores taken before the dump is dumped with pg_dump -Fc and restored with
# pg_restore into a fresh cluster.  There: the same models with the same
# metadata and bytes, every row scores bit for bit as before (row by row, in
# batches and through the aggregate), the model id sequence and versions go
# on from where they were, the grant is kept and PUBLIC still may not load,
# and a model row tampered with in the dump is rejected when used (the
# restored forest image and bytes are validated again, like any other).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GsTest;

my $fixtures = $ENV{GS_FIXTURES};
my $src = gs_node('dump_src');

# Roles are global objects: pg_restore does not make them.
$src->safe_psql('postgres', 'CREATE ROLE gs_dump_loader');

gs_load_fraud($src);
$src->safe_psql('postgres', qq{
	SELECT gpu_load_model('bc', pg_read_binary_file('$fixtures/models/breast_cancer.ubj'));
	SELECT gpu_load_model('wine', pg_read_binary_file('$fixtures/models/wine_softprob.json'));
	SELECT gpu_load_model('iris', pg_read_binary_file('$fixtures/models/iris_softmax.json'));
	-- 'replaced' ends as version 3 (breast cancer, JSON)
	SELECT gpu_load_model('replaced', pg_read_binary_file('$fixtures/models/wine_softprob.json'));
	SELECT gpu_load_model('replaced', pg_read_binary_file('$fixtures/models/iris_softmax.json'));
	SELECT gpu_load_model('replaced', pg_read_binary_file('$fixtures/models/breast_cancer.json'));
	SELECT gpu_load_model('gone', pg_read_binary_file('$fixtures/models/tiny_base.json'));
	SELECT gpu_drop_model('gone');
	GRANT EXECUTE ON FUNCTION gpu_load_model(text, bytea, text) TO gs_dump_loader;
});
gs_make_tx($src, 'tx', 3000);

# Rows for the other models, and every score taken before the dump.
$src->safe_psql('postgres', q{
	CREATE TABLE rows30 AS
		SELECT i, ARRAY(SELECT CASE WHEN (i + k) % 17 = 0 THEN NULL
		                            ELSE ((i * 31 + k * 7) % 1000) / 7.0 END::real
		                  FROM generate_series(1, 30) k) AS f
		  FROM generate_series(1, 2000) i;
	CREATE TABLE rows13 AS
		SELECT i, ARRAY(SELECT ((i * 13 + k * 5) % 300) / 20.0::real FROM generate_series(1, 13) k) AS f
		  FROM generate_series(1, 2000) i;
	CREATE TABLE rows4 AS
		SELECT i, ARRAY(SELECT ((i * 3 + k) % 80) / 10.0::real FROM generate_series(1, 4) k) AS f
		  FROM generate_series(1, 500) i;
});
my @fraud = gs_feature_names();
my $fraud_row = 'ARRAY[' . join(', ', @fraud) . ']';
my $fraud_cols = join(', ', @fraud);

# One query per model and path; each returns (key, scores as text) rows.
my %score_sql = (
	fraud_row => "SELECT id, gpu_score('fraud', $fraud_row)::text FROM tx",
	fraud_batch => "SELECT id, score::text FROM gpu_score_query('fraud', 'SELECT id, $fraud_cols FROM tx')",
	fraud_agg => "SELECT id, score::text FROM gpu_scores((SELECT gpu_score_agg('fraud', id, $fraud_cols) FROM tx))",
	bc => "SELECT i, gpu_score('bc', f)::text FROM rows30",
	replaced => "SELECT i, gpu_score('replaced', f)::text FROM rows30",
	wine => "SELECT i, gpu_predict('wine', f)::text FROM rows13",
	iris => "SELECT i, gpu_predict('iris', f)::text FROM rows4",
);
$src->safe_psql('postgres', q{
	SET extra_float_digits = 3;
	CREATE TABLE scores_before (what text, key bigint, scores text, PRIMARY KEY (what, key));
});
for my $what (sort keys %score_sql)
{
	$src->safe_psql('postgres',
		"SET extra_float_digits = 3; INSERT INTO scores_before SELECT '$what', s.* FROM ($score_sql{$what}) s");
}
my $n_scores = $src->safe_psql('postgres', 'SELECT count(*) FROM scores_before');
is($n_scores, 3000 * 3 + 2000 * 3 + 500, 'scores taken before the dump');

my $meta_sql = q{
	SELECT string_agg(concat_ws('|', name, version, format, objective, n_features, n_outputs,
	                            n_trees, max_depth, size_bytes, saved_by, feature_names::text,
	                            loaded_at, loaded_by), E'\n' ORDER BY name)
	  FROM gpu_models};
my $bytes_sql = q{SELECT string_agg(name || ':' || md5(model) || ':' || coalesce(md5(compiled), 'none'), ',' ORDER BY name) FROM gpu_model_store};
my $meta_before = $src->safe_psql('postgres', $meta_sql);
my $bytes_before = $src->safe_psql('postgres', $bytes_sql);
my $max_id = $src->safe_psql('postgres', 'SELECT max(model_id) FROM gpu_model_store');

# ---- dump, restore into a fresh cluster ----
my $dir = PostgreSQL::Test::Utils::tempdir;
my $dump = "$dir/models.dump";
$src->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $src->connstr('postgres') ], 'pg_dump -Fc');
$src->stop;

my $dst = PostgreSQL::Test::Cluster->new('dump_dst');
$dst->init;
$dst->start;
$dst->safe_psql('postgres', 'CREATE ROLE gs_dump_loader; CREATE DATABASE restored');
$dst->command_ok([ 'pg_restore', '--exit-on-error', '-d', $dst->connstr('restored'), $dump ],
	'pg_restore into a fresh cluster');

is($dst->safe_psql('restored', $meta_sql), $meta_before, 'gpu_models lists the same models');
is($dst->safe_psql('restored', $bytes_sql), $bytes_before, 'model bytes and forest images identical');
is($dst->safe_psql('restored', q{SELECT count(*) FROM gpu_models WHERE name = 'gone'}), '0',
	'a dropped model stays dropped');

for my $what (sort keys %score_sql)
{
	my $sql = qq{
		SET extra_float_digits = 3;
		SELECT count(*), count(*) FILTER (WHERE b.scores IS DISTINCT FROM a.scores),
		       count(*) FILTER (WHERE a.key IS NULL OR b.key IS NULL)
		  FROM (SELECT * FROM scores_before WHERE what = '$what') b
		  FULL JOIN ($score_sql{$what}) a(key, scores) ON a.key = b.key};
	my ($n, $diff, $unmatched) = split /\|/, $dst->safe_psql('restored', $sql);
	ok($n > 0 && $diff == 0 && $unmatched == 0,
		"restored '$what' scores identically ($n rows, $diff differ, $unmatched unmatched)");
}

# ---- the catalog goes on from where it was ----
is($dst->safe_psql('restored',
	"SELECT gpu_load_model('replaced', pg_read_binary_file('$fixtures/models/breast_cancer.ubj'))"),
	'4', 'replacing a restored model gives the next version');
ok($dst->safe_psql('restored', q{SELECT model_id FROM gpu_model_store WHERE name = 'replaced'}) > $max_id,
	'new model ids come after the restored ones');
is($dst->safe_psql('restored', q{
	SELECT has_function_privilege('gs_dump_loader', 'gpu_load_model(text, bytea, text)', 'EXECUTE')
	       || ',' || has_function_privilege('public', 'gpu_load_model(text, bytea, text)', 'EXECUTE')
	       || ',' || has_function_privilege('public', 'gpu_drop_model(text, boolean)', 'EXECUTE')
	       || ',' || has_table_privilege('public', 'gpu_model_store', 'SELECT')}),
	'true,false,false,false', 'grant kept; PUBLIC still may not load, drop or read the bytes');

# ---- a dump with a tampered model ----
# Edit the restored copy as the owner (what a tampered dump file would
# restore) and check that the model is validated again when a new session
# uses it.  Sessions read the image of a tree ensemble's forest
# (gpu_model_store.compiled) and fall back to parsing the bytes when the
# image does not pass the check: a damaged image alone changes nothing.
$dst->safe_psql('restored', q{
	UPDATE gpu_model_store SET compiled = substring(compiled FROM 1 FOR length(compiled) - 1)
	 WHERE name = 'iris'});
is($dst->safe_psql('restored', qq{
	SET extra_float_digits = 3;
	SELECT count(*) FILTER (WHERE b.scores IS DISTINCT FROM a.scores)
	  FROM (SELECT * FROM scores_before WHERE what = 'iris') b
	  JOIN ($score_sql{iris}) a(key, scores) ON a.key = b.key}), '0',
	'a damaged forest image is ignored: the model is parsed and scores as before');
$dst->safe_psql('restored', q{
	UPDATE gpu_model_store
	   SET model = convert_to(replace(convert_from(model, 'UTF8'), '"left_children":[',
	                                  '"left_children":[9999,'), 'UTF8')
	 WHERE name = 'iris'});
my ($rc, $out, $err) = $dst->psql('restored',
	q{SELECT gpu_predict('iris', f) FROM (SELECT f FROM rows4 LIMIT 1) s});
isnt($rc, 0, 'tampered model bytes (with a damaged image) are rejected');
like($err, qr/invalid XGBoost model/, 'with the validator\'s error');
is($dst->safe_psql('restored', q{SELECT gpu_score('bc', f) IS NOT NULL FROM (SELECT f FROM rows30 LIMIT 1) s}),
	't', 'the other models still score');

$dst->stop;
done_testing();

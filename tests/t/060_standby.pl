# tests/t/060_standby.pl: scoring on a hot standby (a read replica).
#
# Analysts run ad-hoc queries on read replicas.  A primary with models and a
# transactions table is streamed to a hot standby.  There, every read path
# (gpu_score, gpu_score_query, gpu_predict_query, the aggregate, gpu_explain,
# gpu_verify_model, gpu_models, gpu_device_info) gives bit for bit the
# primary's answers; the paths that write (gpu_load_model, gpu_drop_model,
# gpu_score_table) give the read-only transaction's ERROR (25006), not a
# crash; and a model replaced on the primary is scored as its new version by
# a standby session that had the old one cached, once the replica replays
# the change.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GsTest;

my $fixtures = $ENV{GS_FIXTURES};

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_gpuscore');
gs_load_fraud($primary);
$primary->safe_psql('postgres', qq{
	SELECT gpu_load_model('wine', pg_read_binary_file('$fixtures/models/wine_softprob.json'));
	SELECT gpu_load_model('lgb', pg_read_binary_file('$fixtures/models/lgb_binary.txt'));
});
gs_make_tx($primary, 'tx', 2000);

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

my @f = gs_feature_names();
my $cols = join(', ', @f);
my $row = 'ARRAY[' . join(', ', @f) . ']';
my $row13 = "ARRAY(SELECT ((id * 13 + k * 5) % 300) / 20.0::real FROM generate_series(1, 13) k)";
my $row10 = "ARRAY(SELECT ((id * 7 + k * 3) % 90) / 9.0::real FROM generate_series(1, 10) k)";

# Each read path as one text value, so that primary and standby compare whole.
my %reads = (
	'gpu_score row by row' =>
	  "SELECT string_agg(id || ':' || gpu_score('fraud', $row)::text, ',' ORDER BY id) FROM tx",
	'gpu_score_query' =>
	  "SELECT string_agg(id || ':' || score::text, ',' ORDER BY id) FROM gpu_score_query('fraud', 'SELECT id, $cols FROM tx')",
	'gpu_predict_query (3 classes)' =>
	  "SELECT string_agg(id || ':' || scores::text, ',' ORDER BY id) FROM gpu_predict_query('wine', \$\$SELECT id, $row13 FROM tx WHERE id <= 300\$\$)",
	'LightGBM, gpu_score' =>
	  "SELECT string_agg(id || ':' || gpu_score('lgb', $row10)::text, ',' ORDER BY id) FROM tx WHERE id <= 500",
	'the aggregate' =>
	  "SELECT string_agg(id || ':' || score::text, ',' ORDER BY id) FROM gpu_scores((SELECT gpu_score_agg('fraud', id, $row) FROM tx))",
	'gpu_explain' =>
	  "SELECT string_agg(coalesce(feature_name, '-') || '=' || contribution::text, ',' ORDER BY feature) FROM tx, gpu_explain('fraud', $row) WHERE id = 7",
	'gpu_models' =>
	  q{SELECT string_agg(name || ' / ' || version || ' / ' || format || ' / ' || n_features, ',' ORDER BY name) FROM gpu_models},
);
for my $what (sort keys %reads)
{
	my $want = $primary->safe_psql('postgres', $reads{$what});
	my $got = $standby->safe_psql('postgres', $reads{$what});
	ok(length($want) > 100 || $what eq 'gpu_models', "$what gives an answer on the primary");
	is($got, $want, "$what: the standby gives the primary's answer");
}
like($standby->safe_psql('postgres', "SELECT mismatches FROM gpu_verify_model('fraud')"),
	qr/^0$/, 'gpu_verify_model runs on the standby: no mismatch');
like($standby->safe_psql('postgres', 'SELECT count(*) FROM gpu_device_info()'),
	qr/^[1-9]/, 'gpu_device_info answers on the standby');

# What writes is refused as any write is on a replica.
for my $sql (
	"SELECT gpu_load_model('new', pg_read_binary_file('$fixtures/models/tiny_base.json'))",
	"SELECT gpu_drop_model('wine')",
	"CALL gpu_score_table('fraud', 'tx', 'id')")
{
	my ($rc, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	isnt($rc, 0, "refused on the standby: $sql");
	like($err, qr/ERROR:  25006: cannot execute gpu_\w+(\(\))? in a read-only transaction.*HINT:  This server is a hot standby/s,
		"... with the read-only transaction's error and a hint");
}

# The same in a read-only transaction on the primary, without the hint;
# scoring works there.
my ($rc, $out, $err) = $primary->psql('postgres',
	"\\set VERBOSITY verbose\nBEGIN READ ONLY;\nSELECT count(*) FROM gpu_score_query('fraud', 'SELECT id, $cols FROM tx');\nSELECT gpu_drop_model('wine');");
is($out, '2000', 'a read-only transaction on the primary scores');
like($err, qr/ERROR:  25006: cannot execute gpu_drop_model\(\) in a read-only transaction/, '... and may not drop a model');
unlike($err, qr/HINT/, '... with no word of a standby');

# A standby session keeps the model cached; the primary replaces it.
my $s = gs_session($standby);
my $score1 = "SELECT gpu_score('fraud', $row)::text FROM tx WHERE id = 42";
my $before = $s->query_safe($score1);
my $path = gs_write_model($primary->basedir . '/fraud_v2.json', 1);
$primary->safe_psql('postgres', "SELECT gpu_load_model('fraud', pg_read_binary_file('$path'))");
$primary->wait_for_catchup($standby, 'replay');
my $after = $s->query_safe($score1);
my $want = $primary->safe_psql('postgres', $score1);
isnt($want, $before, 'the new version scores row 42 differently on the primary');
is($after, $want, 'the standby session scores the new version once the replacement is replayed');
is($s->query_safe("SELECT version FROM gpu_models WHERE name = 'fraud'"), '2',
	'the standby sees version 2');
is($s->query_safe("SELECT md5(($reads{gpu_score_query}))"),
	$primary->safe_psql('postgres', "SELECT md5(($reads{gpu_score_query}))"),
	'gpu_score_query in that session gives the new version\'s scores');
$s->quit;

is(join("\n", gs_server_crashes($standby), gs_server_crashes($primary)), '', 'no backend crashed');
done_testing();

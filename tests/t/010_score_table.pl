# tests/t/010_score_table.pl: gpu_score_table under concurrency and crashes.
#
# - two sessions scoring the same table at once: every row scored exactly
#   once (the second run is skipped, or waits and finds nothing left);
# - kill -9 of the backend in the middle of a run: the server recovers, the
#   committed batches stay, the run is logged as interrupted by the next run,
#   which scores the rest: every row scored exactly once, none lost.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GsTest;

my $node = gs_node('score_table', 'restart_after_crash = on');
gs_load_fraud($node);
gs_make_tx($node, 'tx', 20000);

# Every write of a score is recorded, so a row scored twice shows up even
# when both writes set the same value.
gs_record_score_writes($node, 'tx');

# ---- two runs at once ----
# Each batch sleeps a little (through the filter) so the runs overlap.
my $slow = q{filter => 'pg_sleep(0.0002) IS NOT NULL'};
my $a = gs_start_call($node, "CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 500, $slow)");
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM gpu_score_runs WHERE status = 'running'");
my $b = gs_start_call($node, "CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 500, $slow)");
my $c = gs_start_call($node,
	"CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 500, wait => true, $slow)");
$_->{harness}->finish for ($a, $b, $c);
is($a->{harness}->result(0), 0, 'first run succeeded') or diag ${ $a->{err} };
is($b->{harness}->result(0), 0, 'second run ended cleanly') or diag ${ $b->{err} };
is($c->{harness}->result(0), 0, 'waiting run ended cleanly') or diag ${ $c->{err} };
like(${ $b->{err} }, qr/another run is writing tx\.score, skipped/, 'second run was skipped');

is($node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE score IS NULL'), '0',
	'no row left unscored');
is($node->safe_psql('postgres',
	'SELECT count(*) FROM (SELECT id FROM score_writes GROUP BY id HAVING count(*) > 1) d'),
	'0', 'no row scored twice');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM score_writes'), '20000',
	'every row scored once');
is($node->safe_psql('postgres',
	q{SELECT string_agg(status || ':' || rows_scored, ',' ORDER BY run_id) FROM gpu_score_runs}),
	'succeeded:20000,skipped:0,succeeded:0', 'run log: one run scored, one skipped, one waited');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM tx
	 WHERE score IS DISTINCT FROM gpu_score('fraud', ARRAY[} . join(', ', gs_feature_names()) . q{])}),
	'0', 'scores equal gpu_score of each row');

# ---- crash in the middle of a run ----
$node->safe_psql('postgres', 'UPDATE tx SET score = NULL; TRUNCATE score_writes');
my $slower = q{filter => 'pg_sleep(0.001) IS NOT NULL'};
my $d = gs_start_call($node, "CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 200, $slower)");
$node->poll_query_until('postgres',
	"SELECT rows_scored >= 600 FROM gpu_score_runs WHERE status = 'running'");
my $pid = $node->safe_psql('postgres',
	"SELECT backend_pid FROM gpu_score_runs WHERE status = 'running'");
ok(kill('KILL', $pid), "killed the scoring backend $pid");
$d->{harness}->finish;
isnt($d->{harness}->result(0), 0, 'the killed run failed');

# The postmaster restarts after the crash: wait until it accepts queries.
$node->poll_query_until('postgres', 'SELECT true');
my ($committed, $logged) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM tx WHERE score IS NOT NULL),
	       (SELECT rows_scored FROM gpu_score_runs WHERE status = 'running')});
cmp_ok($committed, '>=', 600, "committed batches survived the crash ($committed rows)");
is($committed, $logged, 'the run log counts exactly the committed rows');
is($committed % 200, 0, 'only whole batches were committed');

$node->safe_psql('postgres', "CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 5000)");
is($node->safe_psql('postgres',
	q{SELECT string_agg(status, ',' ORDER BY run_id) FROM gpu_score_runs WHERE run_id > 3}),
	'interrupted,succeeded', 'the crashed run is logged as interrupted by the next run');
is($node->safe_psql('postgres', q{SELECT rows_scored FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1}),
	20000 - $committed, 'the rerun scored only the rest');
is($node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE score IS NULL'), '0', 'no row lost');
is($node->safe_psql('postgres',
	'SELECT count(*) FROM (SELECT id FROM score_writes GROUP BY id HAVING count(*) > 1) d'),
	'0', 'no row scored twice across the crash');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM score_writes'), '20000',
	'every row scored exactly once');

$node->stop;
done_testing();

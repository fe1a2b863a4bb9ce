# tests/t/031_cancel_commit.pl: a cancel that lands while gpu_score_table
# commits a batch is handled like one during the batch.
#
# gpu_score_table commits each batch.  A COMMIT cannot stand inside a PL/pgSQL
# block with an exception handler, and PL/pgSQL checks for interrupts before
# every statement, so a cancel or statement_timeout arriving at a COMMIT
# could escape the procedure: up to SQL 0.5.3 the run then stayed 'running'
# in the log and the session kept the run lock, so that other sessions' runs
# on the table were skipped until it ended (030_cancel hit this by chance).
# The procedure now holds cancels from the end of each batch's block to the
# start of the next (src/run_guard.c).
#
# Here that window is made wide on purpose: every COMMIT of the session waits
# commit_delay (0.1 s; fsync on, commit_siblings = 0) while a batch of 20 rows
# takes a few ms, so nearly every cancel lands in a COMMIT.  Each of a dozen
# runs is stopped, by a statement_timeout of varying length or by
# pg_cancel_backend at varying times, and must:
#   - end with SQLSTATE 57014 and the cancel's message, promptly;
#   - be logged 'cancelled', with the cancel's message and the rows its
#     committed batches wrote (whole batches);
#   - leave no run lock behind;
#   - leave the session cancellable (a later statement is cut by its
#     statement_timeout as usual).
# Then an uncancelled run scores the rest: every row scored exactly once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GsTest;

my $rows = 4000;
my $batch = 20;
my $commit_delay_us = 100_000;
# seconds from the cancel (or the timeout's expiry) to the error: a COMMIT
# (0.1 s) and a batch, with a wide margin for a loaded machine
my $bound = 2.0;

my $node = gs_node('cancel_commit', 'fsync = on');
gs_load_fraud($node);
gs_make_tx($node, 'tx', $rows);
gs_make_tx($node, 'ten_batches', 10 * $batch);
gs_record_score_writes($node, 'tx');

my $ctl = gs_session($node);
my $victim = gs_session($node);
my $pid = $victim->query_safe('SELECT pg_backend_pid()');
my $slow_commits = "SET commit_delay = $commit_delay_us; SET commit_siblings = 0; SET client_min_messages = warning";
my $call = "CALL gpu_score_table('fraud', 'tx', 'id', batch_size => $batch)";

# The window is wide: a run's time goes mostly to its COMMITs.
$victim->query_safe($slow_commits);
my $t = time;
$victim->query_safe("CALL gpu_score_table('fraud', 'ten_batches', 'id', batch_size => $batch)");
my $per_batch = (time - $t) / 10;
cmp_ok($per_batch, '>', 0.9 * $commit_delay_us / 1e6,
	sprintf('each batch waits out its COMMIT (%.3f s a batch)', $per_batch));
$victim->query_safe('RESET ALL');

my $scored_before = $node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE score IS NOT NULL');
for my $i (0 .. 11)
{
	my $how = $i % 2 ? 'cancel' : 'timeout';
	# spread over several batches, at no fixed phase of a batch
	my $after_ms = 250 + 73 * $i;
	my $what = "run $i ($how after $after_ms ms)";

	$victim->query_safe($slow_commits);
	$victim->query_safe("SET statement_timeout = '${after_ms}ms'") if $how eq 'timeout';
	$victim->{stderr} = '';
	my $t_start = time;
	$victim->query_until(qr/__started__/, "\\echo __started__\n$call;\n");
	my $t_stop = $t_start + $after_ms / 1000;
	if ($how eq 'cancel')
	{
		usleep(1000 * $after_ms);
		$t_stop = time;
		$ctl->query_safe("SELECT pg_cancel_backend($pid)");
	}
	$victim->query('SELECT 1');
	my $latency = time - $t_stop;
	my $err = $victim->{stderr};
	$victim->{stderr} = '';
	$victim->query_safe('RESET ALL');

	my ($state) = $err =~ /ERROR:  ([0-9A-Z]{5}):/;
	is($state, '57014', "$what: SQLSTATE 57014") or diag "stderr: $err";
	my $why = $how eq 'cancel' ? qr/due to user request/ : qr/due to statement timeout/;
	like($err, $why, "$what: the error says why");
	cmp_ok($latency, '<', $bound, sprintf('%s: error %.3f s after the %s', $what, $latency,
			$how eq 'cancel' ? 'cancel' : 'timeout expired'));

	my ($status, $logged, $error) = split /\|/, $ctl->query_safe(
		'SELECT status, rows_scored, error FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1');
	is($status, 'cancelled', "$what: logged as cancelled");
	like($error // '', $why, "$what: with the cancel's message");
	my $scored = $ctl->query_safe('SELECT count(*) FROM tx WHERE score IS NOT NULL');
	is($scored - $scored_before, $logged, "$what: the log counts the committed rows ($logged)");
	is($logged % $batch, 0, "$what: whole batches were committed");
	$scored_before = $scored;
	is($ctl->query_safe(q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'}), '0',
		"$what: no run lock left");

	# the session's cancels are not held any more
	$victim->query_safe("SET statement_timeout = '100ms'");
	$t = time;
	$victim->query('SELECT pg_sleep(5)');
	my $slept = time - $t;
	($state) = $victim->{stderr} =~ /ERROR:  ([0-9A-Z]{5}):/;
	$victim->{stderr} = '';
	$victim->query_safe('RESET ALL');
	ok(($state // '') eq '57014' && $slept < $bound,
		sprintf('%s: the session is cancellable afterwards (%.3f s)', $what, $slept));
}
cmp_ok($scored_before, '<', $rows, 'the cancelled runs left rows to score');

$victim->query_safe("SET client_min_messages = warning; $call; RESET client_min_messages");
is($ctl->query_safe(
	q{SELECT status || ':' || rows_scored FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1}),
	'succeeded:' . ($rows - $scored_before), 'a last run scored the rest');
is($ctl->query_safe('SELECT count(*) FROM tx WHERE score IS NULL'), '0', 'no row lost');
is($ctl->query_safe(
	'SELECT count(*) FROM (SELECT id FROM score_writes GROUP BY id HAVING count(*) > 1) d'),
	'0', 'no row scored twice');
is($ctl->query_safe(q{SELECT count(*) FROM gpu_score_runs WHERE status = 'running'}), '0',
	'no run left running');

$victim->quit;
$ctl->quit;
is(join("\n", gs_server_crashes($node)), '', 'no backend crashed');
$node->stop;
done_testing();

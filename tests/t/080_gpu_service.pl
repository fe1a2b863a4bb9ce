# tests/t/080_gpu_service.pl: the GPU service under load and under crashes.
#
# The service loads the CPU mock of the GPU provider here (CI has no GPU),
# set for every session in postgresql.conf; 'auto' with gpu_min_rows = 1
# sends every batch to it.  Checked:
#   - 16 sessions at once, with parallel workers, all scoring through the one
#     service (one worker, one GPU process): every session's rows equal the
#     CPU engine's; concurrent batches of one model share launches;
#   - the GPU process killed with SIGSEGV, and with SIGKILL, while sessions
#     score: the server does not restart, 'auto' sessions finish on the CPU
#     with the same rows, a 'gpu' session fails with a clear ERROR, no one
#     hangs; the service starts another GPU process and scores on it again;
#   - gpu_score_table across a crash of the GPU process: 'auto' goes on,
#     'gpu' stops with an ERROR and the next run resumes; every row scored
#     exactly once either way;
#   - a cancelled session does not disturb the others;
#   - the GPU process's memory stays flat over many model replacements, and
#     replaced versions leave the device;
#   - idle, the service exits; the next GPU query starts it again;
#   - with no background worker slot free, a session scores with its own
#     provider and says so once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GsTest;

my $mock = "$ENV{TESTDIR}/mock_provider/pg_gpuscore_mock_provider.so";
my $node = gs_node('service', qq{
max_worker_processes = 24
max_parallel_workers = 8
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
max_connections = 40
pg_gpuscore.provider = '$mock'
pg_gpuscore.gpu_min_rows = 1
pg_gpuscore.gpu_service_merge_delay = 500
});
gs_load_fraud($node);
gs_make_tx($node, 'tx', 50000);
$node->safe_psql('postgres', 'VACUUM ANALYZE tx');
my @f = gs_feature_names();
my $features = 'ARRAY[' . join(', ', @f) . ']';

sub svc
{
	my ($cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM gpu_service_info()");
}

# The rows of a query as one md5, and their number.
sub digest_sql
{
	my ($sql) = @_;
	return "SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) || ' ' || count(*) FROM ($sql) r";
}

my $q_tlist = "SELECT id, gpu_score('fraud', $features) AS p FROM tx";
my $q_query = "SELECT id, score FROM gpu_score_query('fraud', 'SELECT id, "
  . join(', ', @f) . " FROM tx')";
my $ref_tlist = $node->safe_psql('postgres',
	"SET pg_gpuscore.device = 'cpu'; SET extra_float_digits = 3; " . digest_sql($q_tlist));
my $ref_query = $node->safe_psql('postgres',
	"SET pg_gpuscore.device = 'cpu'; SET extra_float_digits = 3; " . digest_sql($q_query));

# ---- the service starts on demand ----
is(svc('running'), 'f', 'no service before a session wants the GPU');
is($node->safe_psql('postgres', 'SELECT provider_loaded, mode FROM gpu_device_info()'), 't|service',
	'the first session that wants the GPU starts the service and scores through it');
is(svc("running, device_state"), 't|ready', 'the service runs, its GPU process has probed the device');
my ($worker, $device) = split /\|/, svc('worker_pid, device_pid');

note(sprintf('%.1f s', time - $^T));
# ---- 16 sessions and their parallel workers ----
my $batches0 = svc('batches');
my @runs;
for my $i (1 .. 16)
{
	my $sql = $i % 2 ? $q_tlist : $q_query;
	push @runs, gs_start_call($node,
		"SET pg_gpuscore.batch_size = 2000; SET extra_float_digits = 3; " . digest_sql($sql));
}
$_->{harness}->finish for @runs;
my $same = 0;
for my $i (1 .. 16)
{
	my $r = $runs[ $i - 1 ];
	my $want = $i % 2 ? $ref_tlist : $ref_query;
	chomp(my $got = ${ $r->{out} });
	$same++ if $r->{harness}->result(0) == 0 && $got eq $want;
	diag("session $i: $got / ${ $r->{err} }") if $got ne $want;
}
is($same, 16, '16 concurrent sessions (and their parallel workers): every one the CPU engine\'s rows');
my ($batches, $launches, $merged) = split /\|/, svc('batches, launches, merged_batches');
cmp_ok($batches - $batches0, '>=', 16 * 25, 'their batches went through the service');
cmp_ok($merged, '>', 0, "concurrent batches of one model shared launches ($merged of "
	  . ($batches - $batches0) . " batches in $launches launches)");
is(svc('worker_pid, device_pid'), "$worker|$device", 'one worker and one GPU process served them all');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_gpuscore GPU service'"),
	'1', 'one service worker in pg_stat_activity');
like($node->safe_psql('postgres', "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q_tlist"),
	qr/Workers Launched: 2.*Rows Scored on GPU: 50000\b/s, 'parallel workers score on the service\'s GPU');

note(sprintf('%.1f s', time - $^T));
# ---- crashes of the GPU process ----
my $big = gs_write_model(PostgreSQL::Test::Utils::tempdir . '/big.json', 40);
$node->safe_psql('postgres', "SELECT gpu_load_model('big', pg_read_binary_file('$big'))");
my $q_big = "SELECT id, gpu_score('big', $features) AS p FROM tx";
my $ref_big = $node->safe_psql('postgres',
	"SET pg_gpuscore.device = 'cpu'; SET extra_float_digits = 3; " . digest_sql($q_big));

for my $sig ('SEGV', 'KILL')
{
	my $before = svc('device_restarts');
	my $gen_dev = svc('device_pid');
	my $batches_at = svc('batches');
	my @auto = map {
		gs_start_call($node,
			"SET max_parallel_workers_per_gather = 0; SET pg_gpuscore.batch_size = 1000; "
			  . "SET extra_float_digits = 3; " . digest_sql($q_big))
	} 1 .. 3;
	# the sessions are well into their queries: then a 'gpu' session whose
	# batch the GPU process holds (fault injection), and the kill
	$node->poll_query_until('postgres', "SELECT batches >= $batches_at + 20 FROM gpu_service_info()")
	  or diag('the sessions did not start scoring');
	my $gpu = gs_start_call($node,
		"SET max_parallel_workers_per_gather = 0; SET pg_gpuscore.device = 'gpu'; "
		  . "SET pg_gpuscore.fault_injection = 'service_stall'; " . digest_sql($q_big));
	usleep(2_000_000);
	kill $sig, $gen_dev;
	my $t0 = time;
	$_->{harness}->finish for (@auto, $gpu);
	my $took = time - $t0;
	my $ok = 0;
	for my $a (@auto)
	{
		chomp(my $got = ${ $a->{out} });
		$ok++ if $a->{harness}->result(0) == 0 && $got eq $ref_big;
		diag("auto: $got / ${ $a->{err} }") if $got ne $ref_big;
	}
	is($ok, 3, "SIG$sig of the GPU process: the 'auto' sessions finish with the CPU engine's rows");
	isnt($gpu->{harness}->result(0), 0, "SIG$sig: the 'gpu' session fails");
	like(${ $gpu->{err} }, qr/GPU scoring failed for model "big".*GPU process stopped/s,
		"SIG$sig: with an ERROR that says why") or diag(${ $gpu->{err} });
	cmp_ok($took, '<', 60, sprintf('SIG%s: nobody hangs (all done %.1f s after the kill)', $sig, $took));
	ok(!gs_server_crashes($node), "SIG$sig: the server did not restart");
	like(slurp_file($node->logfile), qr/its GPU process $gen_dev died of signal/,
		"SIG$sig: the service logged the death of its GPU process");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "SIG$sig: the server still answers");
	# the service comes back
	like($node->safe_psql('postgres', "SET pg_gpuscore.device = 'gpu'; "
			. "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q_tlist"),
		qr/Rows Scored on GPU: 50000\b/, "SIG$sig: the next query scores on a new GPU process");
	is(svc("device_restarts = $before + 1, device_pid <> $gen_dev, worker_pid = $worker"), 't|t|t',
		"SIG$sig: one restart of the GPU process, by the same worker");
}

note(sprintf('%.1f s', time - $^T));
# ---- gpu_score_table across a crash ----
gs_record_score_writes($node, 'tx');
for my $mode ('auto', 'gpu')
{
	$node->safe_psql('postgres', 'UPDATE tx SET score = NULL; TRUNCATE score_writes');
	my $dev = svc('device_pid');
	# (CALL alone: it commits; the setting through PGOPTIONS)
	local $ENV{PGOPTIONS} = "-c pg_gpuscore.device=$mode";
	my $run = gs_start_call($node, "CALL gpu_score_table('big', 'tx', 'id', batch_size => 2000)");
	$node->poll_query_until('postgres',
		"SELECT coalesce(max(rows_scored), 0) >= 10000 FROM gpu_score_runs WHERE status = 'running'")
	  or diag('the run did not get going');
	kill 'KILL', $dev;
	$run->{harness}->finish;
	if ($mode eq 'auto')
	{
		is($run->{harness}->result(0), 0, "gpu_score_table ('auto') goes on across the crash")
		  or diag(${ $run->{err} });
	}
	elsif ($run->{harness}->result(0) != 0)
	{
		# its batch was in the GPU process that died (a batch still queued
		# is scored by the next one, and the run goes on)
		like(${ $run->{err} }, qr/GPU scoring failed/, "gpu_score_table ('gpu') stops at the crash with the ERROR")
		  or diag(${ $run->{err} });
		my $rerun = gs_start_call($node, "CALL gpu_score_table('big', 'tx', 'id', batch_size => 2000)");
		$rerun->{harness}->finish;
		is($rerun->{harness}->result(0), 0, 'the next run resumes') or diag(${ $rerun->{err} });
	}
	else
	{
		pass("gpu_score_table ('gpu') went on: its batches were queued, not in the GPU process that died");
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE score IS NULL'), '0',
		"$mode: no row left unscored");
	is($node->safe_psql('postgres',
		'SELECT count(*) FROM (SELECT id FROM score_writes GROUP BY id HAVING count(*) > 1) d'),
		'0', "$mode: no row scored twice");
	is($node->safe_psql('postgres', "SET pg_gpuscore.device = 'cpu'; "
		  . "SELECT count(*) FROM tx WHERE score IS DISTINCT FROM gpu_score('big', $features)"),
		'0', "$mode: every score the CPU engine's");
}
ok(!gs_server_crashes($node), 'the server did not restart');

note(sprintf('%.1f s', time - $^T));
# ---- cancel one session ----
my $s = gs_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');
chomp $pid;
$s->query_safe("SET max_parallel_workers_per_gather = 0; SET pg_gpuscore.device = 'gpu'; "
	  . "SET pg_gpuscore.batch_size = 1000");
my @others = map {
	gs_start_call($node, "SET max_parallel_workers_per_gather = 0; SET pg_gpuscore.device = 'gpu'; "
		  . "SET pg_gpuscore.batch_size = 1000; SET extra_float_digits = 3; " . digest_sql($q_big))
} 1 .. 2;
$s->{stderr} = '';
# (20 times the table: it runs long after the cancel would come)
$s->query_until(qr/started/,
	"\\echo started\nSELECT sum(gpu_score('big', $features)) FROM tx, generate_series(1, 20);\n");
usleep(1_000_000);
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$node->poll_query_until('postgres', "SELECT state <> 'active' FROM pg_stat_activity WHERE pid = $pid");
$s->query("SELECT 'back'");
my $took = time - $t0;
like($s->{stderr}, qr/57014/, 'the cancelled session ends with 57014') or diag($s->{stderr});
cmp_ok($took, '<', 5, sprintf('promptly (%.2f s)', $took));
$_->{harness}->finish for @others;
is(join(',', map { chomp(my $o = ${ $_->{out} }); $o eq $ref_big ? 'same' : $o } @others), 'same,same',
	'the other sessions finish with the CPU engine\'s rows');
$s->{stderr} = '';
is($s->query_safe(digest_sql($q_big) =~ s/^/SET extra_float_digits = 3; /r), $ref_big,
	'the cancelled session scores through the service again');
$s->quit;

note(sprintf('%.1f s', time - $^T));
# ---- memory over many model replacements ----
sub device_rss
{
	my $dev = svc('device_pid');
	my $st = slurp_file("/proc/$dev/status");
	return $st =~ /VmRSS:\s+(\d+) kB/ ? $1 : -1;
}
my $fixture = "$ENV{GS_FIXTURES}/models/demo_fraud.ubj";
my $replace = "SELECT gpu_load_model('fraud', pg_read_binary_file('$fixture')); "
  . "SET pg_gpuscore.device = 'gpu'; SELECT count(*) FROM ($q_tlist) s;";
$node->safe_psql('postgres', $replace) for 1 .. 5;
usleep(3_000_000);
my $rss0 = device_rss();
$node->safe_psql('postgres', $replace) for 1 .. 40;
my $settled = $node->poll_query_until('postgres',
	"SELECT resident_models <= 2 FROM gpu_service_info()");
ok($settled, 'after 40 replacements, the replaced versions left the device')
  or diag(svc('resident_models, resident_bytes'));
my $rss1 = device_rss();
cmp_ok($rss1 - $rss0, '<', 16384, "the GPU process's memory stayed flat ($rss0 kB, then $rss1 kB)");

note(sprintf('%.1f s', time - $^T));
# ---- idle exit and start on demand ----
$node->append_conf('postgresql.conf', "pg_gpuscore.gpu_service_idle_timeout = 1\n");
$node->reload;
ok($node->poll_query_until('postgres', 'SELECT NOT running FROM gpu_service_info()'),
	'idle, the service exits');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_gpuscore GPU service'"),
	'0', 'its worker is gone');
is($node->safe_psql('postgres', "SET extra_float_digits = 3; " . digest_sql($q_tlist)), $ref_tlist,
	'the next query starts it again and scores the same rows');
like($node->safe_psql('postgres', "SET pg_gpuscore.device = 'gpu'; "
		. "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q_tlist"),
	qr/Rows Scored on GPU: 50000\b/, 'on the GPU');

note(sprintf('%.1f s', time - $^T));
# ---- no worker slot ----
$node->append_conf('postgresql.conf', "max_worker_processes = 0\n");
$node->restart;
my ($ret, $out, $err) = $node->psql('postgres',
	"SET pg_gpuscore.device = 'gpu'; SELECT count(*) FROM ($q_tlist) s; "
	  . "SELECT count(*) FROM ($q_tlist) s; SELECT provider_loaded, mode FROM gpu_device_info();");
is($ret, 0, 'with no background worker slot free, the queries still run');
is($out, "50000\n50000\nt|backend", 'on the session\'s own provider');
my @notices = $err =~ /GPU service is not available/g;
is(scalar @notices, 1, 'which the session says once') or diag($err);
like($err, qr/no background worker slot is free/, 'with the reason');

ok(!gs_server_crashes($node), 'no backend crashed');
done_testing();

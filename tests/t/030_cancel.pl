# tests/t/030_cancel.pl: cancel and statement_timeout stop every long path
# promptly, and the session goes on working.
#
# An operator who cancels a runaway scoring query, or a statement_timeout set
# to protect an OLTP database, must not wait for a whole table (or a whole
# batch of a heavy model) to be scored.  For each long path:
#   - gpu_score_query over a big table,
#   - the aggregate gpu_scores((SELECT gpu_score_agg(...))), serial and with
#     parallel workers (which must be gone after the cancel),
#   - gpu_score and gpu_predict row by row over a big table,
#   - gpu_load_model of a large model,
#   - CALL gpu_score_table (the run log says 'cancelled', committed batches
#     stay, and a rerun scores the rest: every row exactly once),
# the statement is started in a long-lived session, and once it has been
# running for a while (pg_stat_activity) it is stopped, once with
# pg_cancel_backend and once by statement_timeout.  Each must end with
# SQLSTATE 57014 within $bound seconds of the cancel (of the timeout's
# expiry), in the same backend, which then still scores exactly as a fresh
# session does and holds none of the statement's memory contexts.
#
# The work is made long with a heavy model (the 60 trees of fraud_binary.json
# repeated, see gs_write_model), not with huge tables: every scoring statement
# would run for well over ten seconds uncancelled on a 2-core machine (see
# %work).
#
# The parallel aggregate's latency includes the time the leader waits for
# its workers to stop.  Each parallel worker is a new process that reads the
# model at its first row: from its forest image (tens of ms), or by parsing
# it when the image cannot be used; a parse checks for interrupts too
# (src/core polls a GsInterrupt about every 256 KB of JSON, 64K UBJSON values
# or 64 trees), so a worker stops within a fraction of a second wherever it
# is.
#
# gpu_load_model: the parse stops the same way (freeing the partly built
# document takes up to ~0.3 s for the 56 MB model here).  What follows it
# cannot be interrupted: compressing the stored bytea, lz4 where the server
# has it (~0.2 s here; pglz would take ~1.4 s).  So the load gets the same
# bound as every other path; its statement_timeout is a quarter of the time
# of an uncancelled load (at most 1 s), so it expires during the parse.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GsTest;

# Seconds from the cancel (or the timeout's expiry) to the error.  Measured
# on a 2-core VM: 0.001-0.05 s on the serial scoring paths and
# gpu_score_table (the CPU engine checks for interrupts every ~20 ms of work,
# see gs_model_slice_rows in src/core/model.c); the bound leaves a wide margin for a
# loaded CI machine; cancelling a model's parse takes up to ~0.3 s.
my $bound = 2.0;
# statement_timeout of the timeout cases (less for the load, see above), and
# how long a statement runs before it is cancelled: both far below the
# statements' uncancelled times.
my $timeout_s = 2;
my $run_before_cancel = 1.0;

# Heavy model 'big': 100 x 60 trees (28 MB of JSON), scored at ~12 K rows/s
# in batches and ~2 K rows/s row by row on one core, so tx (200 K rows) takes
# 16 s in batches and 90 s row by row, st (100 K rows) 8 s.  Large model
# 'huge' for gpu_load_model: 200 x 60 trees, 56 MB of JSON, loaded in ~4 s.
my %work = (big_copies => 100, tx_rows => 200000, st_rows => 100000, st_batch => 5000,
	huge_copies => 200);

my $node = gs_node('cancel', q{
max_worker_processes = 8
max_parallel_workers = 4
});
my $dir = PostgreSQL::Test::Utils::tempdir;
my $big = gs_write_model("$dir/big.json", $work{big_copies});
my $huge = gs_write_model("$dir/huge.json", $work{huge_copies});
note sprintf('models: big %.1f MB, huge %.1f MB', (-s $big) / 1e6, (-s $huge) / 1e6);

$node->safe_psql('postgres', "SELECT gpu_load_model('big', pg_read_binary_file('$big'))");
gs_make_tx($node, 'tx', $work{tx_rows});
gs_make_tx($node, 'st', $work{st_rows});
$node->safe_psql('postgres', 'VACUUM ANALYZE tx; VACUUM ANALYZE st');

my @f = gs_feature_names();
my $cols = join(', ', @f);
my $arr = "ARRAY[$cols]";

# The scores of 500 rows, row by row and in a batch, as a fresh session
# computes them: a cancelled session must still give exactly these.
my %check = (
	row => "SELECT md5(string_agg(gpu_score('big', $arr)::text, ',' ORDER BY id)) FROM tx WHERE id <= 500",
	batch => "SELECT md5(string_agg(score::text, ',' ORDER BY id))
	            FROM gpu_score_query('big', 'SELECT id, $cols FROM tx WHERE id <= 500')",
);
my %ref = map { $_ => $node->safe_psql('postgres', $check{$_}) } keys %check;
is($ref{row}, $ref{batch}, 'reference scores: row by row and in a batch agree');

# How long a new session (as a parallel worker) takes to read 'big' (its
# forest image): its first use of the model, less a session that does not
# use it.
my $t = time;
$node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE id = 1');
my $parse_time = -(time - $t);
$t = time;
$node->safe_psql('postgres', "SELECT count(gpu_score('big', $arr)) FROM tx WHERE id = 1");
$parse_time += time - $t;
note sprintf('a new session reads the heavy model in %.2f s', $parse_time);

# The memory contexts a scoring statement creates; none may outlive it.
my $stmt_contexts = q{
	SELECT count(*) FROM pg_backend_memory_contexts
	 WHERE name IN ('pg_gpuscore query batches', 'pg_gpuscore query rows',
	                'pg_gpuscore aggregate batches', 'pg_gpuscore call site',
	                'pg_gpuscore model validation')};

my $ctl = gs_session($node);        # issues the cancels and watches
my $victim = gs_session($node);     # runs every long statement in turn
my $pid = $victim->query_safe('SELECT pg_backend_pid()');
# The victim parses 'big' now, not in the first case's statement (a parse is
# not interruptible, see above).
is($victim->query_safe($check{row}), $ref{row}, 'the victim session scores like a fresh one');

# Poll (every 20 ms, up to the default test timeout) until $sql returns 't'.
sub wait_for
{
	my ($sql) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		return 1 if $ctl->query_safe($sql) eq 't';
		usleep(20_000);
	}
	return 0;
}

# Start $sql in the victim session, stop it by $how ('cancel': with
# pg_cancel_backend once it has run $run_before_cancel s and $ready holds;
# 'timeout': statement_timeout) and check the error, the latency and the
# session afterwards.  Returns the latency.
sub stop_statement
{
	my (%c) = @_;
	my $what = "$c{name} ($c{how})";
	my $ready = $c{ready} // 'true';
	my $tmo = $c{timeout} // $timeout_s;

	$victim->query_safe($c{setup}) if $c{setup};
	$victim->query_safe(sprintf("SET statement_timeout = '%dms'", $tmo * 1000)) if $c{how} eq 'timeout';
	$victim->{stderr} = '';
	my $t_start = time;
	$victim->query_until(qr/__started__/, "\\echo __started__\n$c{sql};\n");

	my $t_stop;
	if ($c{how} eq 'cancel')
	{
		ok( wait_for(qq{
				SELECT count(*) = 1 FROM pg_stat_activity
				 WHERE pid = $pid AND state = 'active' AND query LIKE '%$c{like}%'
				   AND clock_timestamp() - query_start > interval '$run_before_cancel s'
				   AND ($ready)}),
			"$what: running");
		$t_stop = time;
		$ctl->query_safe("SELECT pg_cancel_backend($pid)");
	}
	else
	{
		$t_stop = $t_start + int($tmo * 1000) / 1000;
	}
	# psql runs this once the statement has ended
	my $after = $victim->query('SELECT 1');
	my $latency = time - $t_stop;
	my $err = $victim->{stderr};
	$victim->{stderr} = '';
	$victim->query_safe('RESET ALL');

	my ($state) = $err =~ /ERROR:  ([0-9A-Z]{5}):/;
	is($state, '57014', "$what: SQLSTATE 57014") or diag "stderr: $err\nstdout: $after";
	like($err,
		$c{how} eq 'cancel'
		? qr/canceling statement due to user request/
		: qr/canceling statement due to statement timeout/,
		"$what: the error says why");
	my $limit = $c{bound} // $bound;
	cmp_ok($latency, '<', $limit, sprintf('%s: error %.3f s after the %s', $what, $latency,
			$c{how} eq 'cancel' ? 'cancel' : 'timeout expired'));
	cmp_ok($latency, '>', -0.05, "$what: not before the timeout") if $c{how} eq 'timeout';
	is($victim->query_safe('SELECT pg_backend_pid()'), $pid, "$what: same backend afterwards");
	is($victim->query_safe($stmt_contexts), '0', "$what: no memory context of the statement left");
	my $k = $c{check} // 'row';
	is($victim->query_safe($check{$k}), $ref{$k}, "$what: the session still scores correctly ($k)");
	return $latency;
}

# An uncancelled load of the large model: it is valid, and how long it takes
# sets the statement_timeout of the load case (see above).
$t = time;
is($node->safe_psql('postgres', "SELECT gpu_load_model('huge', pg_read_binary_file('$huge'))"), '1',
	'the large model loads');
my $load_time = time - $t;
$node->safe_psql('postgres', "SELECT gpu_drop_model('huge')");
note sprintf('uncancelled load of the large model: %.2f s', $load_time);

my %latency;
my $no_parallel = 'SET max_parallel_workers_per_gather = 0';
my @cases = (
	{ name => 'gpu_score_query', like => 'gpu_score_query', check => 'batch',
	  sql => "SELECT count(*) FROM gpu_score_query('big', 'SELECT id, $cols FROM tx')" },
	{ name => 'aggregate, serial', like => 'gpu_score_agg', setup => $no_parallel, check => 'batch',
	  sql => "SELECT count(*) FROM gpu_scores((SELECT gpu_score_agg('big', id, $cols) FROM tx))" },
	{ name => 'aggregate, parallel', like => 'gpu_score_agg', check => 'batch',
	  setup => 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
	            SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0',
	  ready => "(SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $pid) > 0",
	  parallel => 1,
	  sql => "SELECT count(*) FROM gpu_scores((SELECT gpu_score_agg('big', id, $cols) FROM tx))" },
	{ name => 'gpu_score per row', like => 'gpu_score(', setup => $no_parallel,
	  sql => "SELECT count(gpu_score('big', $arr)) FROM tx" },
	{ name => 'gpu_predict per row', like => 'gpu_predict(', setup => $no_parallel,
	  sql => "SELECT count(gpu_predict('big', $arr)) FROM tx" },
	{ name => 'gpu_load_model', like => 'gpu_load_model',
	  timeout => ($load_time / 4 < 1 ? $load_time / 4 : 1),
	  sql => "SELECT gpu_load_model('huge', pg_read_binary_file('$huge'))" },
);

# The parallel plan really is parallel (else that case tests nothing new).
like($victim->query_safe("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
		SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
		EXPLAIN (COSTS OFF) $cases[2]{sql}; RESET ALL"),
	qr/Partial Aggregate/, 'the parallel aggregate plan has partial aggregates');

for my $c (@cases)
{
	for my $how ('cancel', 'timeout')
	{
		$latency{"$c->{name} ($how)"} = stop_statement(%$c, how => $how);
		if ($c->{parallel})
		{
			ok(wait_for("SELECT count(*) = 0 FROM pg_stat_activity WHERE leader_pid = $pid"),
				"$c->{name} ($how): the parallel workers are gone");
		}
	}
}
is($node->safe_psql('postgres', q{SELECT count(*) FROM gpu_models WHERE name = 'huge'}), '0',
	'a cancelled load stores nothing');

# ---- gpu_score_table ----
# Every write of a score is recorded (gs_record_score_writes), so a row
# scored twice shows up even when both writes set the same value.
gs_record_score_writes($node, 'st');
my $b = $work{st_batch};
my $call = "CALL gpu_score_table('big', 'st', 'id', batch_size => $b)";
my $scored_before = 0;
for my $how ('cancel', 'timeout')
{
	my $lat = stop_statement(name => 'gpu_score_table', how => $how, like => 'gpu_score_table',
		ready => "(SELECT rows_scored >= 2 * $b FROM gpu_score_runs WHERE status = 'running')",
		sql => $call);
	$latency{"gpu_score_table ($how)"} = $lat;
	my ($status, $rows, $error) = split /\|/, $node->safe_psql('postgres',
		'SELECT status, rows_scored, error FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1');
	is($status, 'cancelled', "gpu_score_table ($how): the run is logged as cancelled");
	like($error, $how eq 'cancel' ? qr/user request/ : qr/statement timeout/,
		"gpu_score_table ($how): with the cancel's message");
	my $scored = $node->safe_psql('postgres', 'SELECT count(*) FROM st WHERE score IS NOT NULL');
	is($scored - $scored_before, $rows, "gpu_score_table ($how): the log counts the committed rows ($rows)");
	ok($rows > 0 && $rows % $b == 0, "gpu_score_table ($how): whole batches were committed");
	$scored_before = $scored;
}
cmp_ok($scored_before, '<', $work{st_rows}, 'the cancelled runs left rows to score');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'}), '0',
	'no run lock is left behind');
$victim->query_safe("SET client_min_messages = warning; $call; RESET client_min_messages");
is($node->safe_psql('postgres',
	q{SELECT status || ':' || rows_scored FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1}),
	'succeeded:' . ($work{st_rows} - $scored_before), 'the rerun scored only the rest');
is($node->safe_psql('postgres', 'SELECT count(*) FROM st WHERE score IS NULL'), '0', 'no row lost');
is($node->safe_psql('postgres',
	'SELECT count(*) FROM (SELECT id FROM score_writes GROUP BY id HAVING count(*) > 1) d'),
	'0', 'no row scored twice');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM score_writes'), $work{st_rows},
	'every row scored exactly once');
# (through gpu_score_query, which scores as gpu_score does, see %ref, and
# takes 8 s where gpu_score row by row would take 45 s)
is($node->safe_psql('postgres',
	"SELECT count(*) FROM st FULL JOIN gpu_score_query('big', 'SELECT id, $cols FROM st') q USING (id)
	  WHERE st.score IS DISTINCT FROM q.score"),
	'0', 'the scores are those of gpu_score');

$victim->quit;
$ctl->quit;
is(join("\n", gs_server_crashes($node)), '', 'no backend crashed');
diag(join("\n", 'cancel latencies (s):',
		map { sprintf('  %-34s %.3f', $_, $latency{$_}) } sort keys %latency));

$node->stop;
done_testing();

# tests/t/070_batch_calls.pl: batched gpu_score calls in parallel plans.
#
# A plain `SELECT gpu_score(...) FROM t` on a big table gets a parallel plan;
# the GpuScore node sits below Gather, so each worker scores its own rows
# (and a partial aggregate over the scores stays in the workers).  Checked:
#   - EXPLAIN shows Gather above the node, and EXPLAIN ANALYZE counts the
#     rows the workers scored (they report through shared memory);
#   - the parallel query's rows equal the serial batched query's and the
#     row-by-row query's, for the target list, a filter and an aggregate;
#   - the first query of a new session, planned while the library is being
#     loaded (no shared_preload_libraries), is batched in its workers too;
#   - the workers score on the "GPU" (the CPU mock of the provider) and give
#     its device memory back;
#   - a cancelled parallel batched query ends with 57014 promptly, the
#     workers are gone, the session holds none of its memory contexts and
#     still scores as before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GsTest;

my $fixtures = $ENV{GS_FIXTURES};
my $mock = "$ENV{TESTDIR}/mock_provider/pg_gpuscore_mock_provider.so";
my $node = gs_node('batch', q{
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});
gs_load_fraud($node);
gs_make_tx($node, 'tx', 200000);
$node->safe_psql('postgres', 'VACUUM ANALYZE tx');
my @f = gs_feature_names();
my $features = 'ARRAY[' . join(', ', @f) . ']';

my %q = (
	tlist => "SELECT id, gpu_score('fraud', $features) AS p FROM tx",
	filter => "SELECT id FROM tx WHERE gpu_score('fraud', $features) > 0.5",
	agg => "SELECT count(*) FILTER (WHERE gpu_score('fraud', $features) > 0.5) AS n, "
	  . "sum(gpu_score('fraud', $features)::float8) AS s FROM tx",
);

# ---- the plan ----
my $plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $q{agg}");
like($plan, qr/Gather.*Partial Aggregate.*Parallel Custom Scan \(GpuScore\).*Parallel Seq Scan on tx/s,
	'the aggregate: Gather, a partial aggregate in the workers over the parallel GpuScore node')
  or diag($plan);
$plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $q{tlist}");
like($plan, qr/Gather.*Parallel Custom Scan \(GpuScore\).*Parallel Seq Scan on tx/s,
	'the target list: the node below Gather') or diag($plan);

my $analyze = $node->safe_psql('postgres',
	"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q{agg}");
like($analyze, qr/Workers Launched: 2/, 'two workers launched') or diag($analyze);
like($analyze, qr/Rows Scored on CPU: 200000\b/,
	'EXPLAIN ANALYZE counts every row scored, the workers\' included') or diag($analyze);

# ---- the same rows in parallel, serially and row by row ----
sub rows_of
{
	my ($sql, $settings) = @_;
	return $node->safe_psql('postgres',
		"$settings; SET extra_float_digits = 3; "
		  . "SELECT md5(string_agg(r::text, ',' ORDER BY r::text)), count(*) FROM ($sql) r");
}
for my $k (sort keys %q)
{
	my $parallel = rows_of($q{$k}, 'SET max_parallel_workers_per_gather = 2');
	my $serial = rows_of($q{$k}, 'SET max_parallel_workers_per_gather = 0');
	my $per_row = rows_of($q{$k}, 'SET max_parallel_workers_per_gather = 0; SET pg_gpuscore.batch_calls = off');
	is($parallel, $serial, "$k: parallel = serial batched");
	is($serial, $per_row, "$k: serial batched = row by row");
}

# ---- the first query of a session ----
# (a new session loads the library while planning its first gpu_score query)
my $first = $node->safe_psql('postgres',
	"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q{agg}");
like($first, qr/Parallel Custom Scan \(GpuScore\).*Rows Scored on CPU: 200000\b/s,
	"a session's first query is batched in its workers") or diag($first);

# ---- workers on the "GPU" ----
my $gpu = $node->safe_psql('postgres', qq{
	SET pg_gpuscore.provider = '$mock';
	SET pg_gpuscore.device = 'gpu';
	SET pg_gpuscore.batch_size = 20000;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q{agg};
});
like($gpu, qr/Rows Scored on GPU: 200000\b.*Rows Scored on CPU: 0\b/s,
	'with the mock provider every row is scored on the "GPU", in the workers too') or diag($gpu);
# (the mock's device holds 1 MiB per live model or pipeline: the model may
# stay on the device while it is current, the pipelines are gone)
is( $node->safe_psql('postgres', qq{
	SET pg_gpuscore.provider = '$mock';
	SET pg_gpuscore.device = 'gpu';
	SELECT count(*) FROM ($q{agg}) s;
	SELECT (total_memory - free_memory) >> 20 <= 1 FROM gpu_device_info();
}), "1\nt", 'after the "GPU" query, the leader\'s device holds no pipeline');
is(rows_of($q{agg}, "SET pg_gpuscore.provider = '$mock'; SET pg_gpuscore.device = 'gpu'"),
	rows_of($q{agg}, 'SET pg_gpuscore.batch_calls = off'), 'and the same result as row by row');

# ---- cancel ----
my $big = gs_write_model(PostgreSQL::Test::Utils::tempdir . '/big.json', 100);
$node->safe_psql('postgres', "SELECT gpu_load_model('big', pg_read_binary_file('$big'))");
my $s = gs_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');
chomp $pid;
my $expected = $s->query_safe("SELECT count(*) FROM tx WHERE gpu_score('fraud', $features) > 0.5");
$s->{stderr} = '';
$s->query_until(qr/started/, qq{\\echo started
SELECT count(*) FILTER (WHERE gpu_score('big', $features) > 0.5) FROM tx;
});
# wait until the workers run, then cancel
my $workers = 0;
for (1 .. 100)
{
	$workers = $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $pid AND backend_type = 'parallel worker'");
	last if $workers > 0;
	usleep(50_000);
}
ok($workers > 0, 'the parallel batched query runs with workers');
usleep(500_000);
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
my $after = $s->query("SELECT 'back'");
my $took = time - $t0;
like($s->{stderr}, qr/57014/, 'the cancelled query ends with 57014') or diag($s->{stderr});
$s->{stderr} = '';
cmp_ok($took, '<', 3, sprintf('within 3 s of the cancel (%.2f s)', $took));
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $pid"), '0', 'its workers are gone');
is($s->query_safe("SELECT count(*) FROM pg_backend_memory_contexts WHERE name LIKE 'pg_gpuscore batch%'"),
	'0', 'the session holds none of the node\'s memory contexts');
is($s->query_safe("SELECT count(*) FROM tx WHERE gpu_score('fraud', $features) > 0.5"), $expected,
	'and scores as before');
$s->quit;

ok(!gs_server_crashes($node), 'no backend crashed');
done_testing();

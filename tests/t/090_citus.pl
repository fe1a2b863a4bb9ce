# tests/t/090_citus.pl: pg_gpuscore on a Citus cluster (a coordinator and two
# workers on this machine, Citus built by ../shared/citus/build.sh).
#
# Checked:
#   - CREATE EXTENSION pg_gpuscore on the coordinator reaches the workers;
#   - gpu_load_model / gpu_drop_model on the coordinator put the model on
#     every node with one version number; a replacement reaches a reused
#     session on a worker at its next statement;
#   - a load that fails on one worker (its own size limit) changes no node;
#   - a direct load on a worker is refused with a clear ERROR;
#   - gpu_check_models() says which node lacks or differs; gpu_sync_models()
#     repairs a node and brings the models to a node added later;
#   - per-row and batched gpu_score on a distributed table (200,000 rows)
#     are pushed into the shard queries and equal the same queries on a
#     local copy, compared in SQL; so does INSERT ... SELECT of the scores
#     into a co-located table;
#   - gpu_score_query, gpu_predict_query and gpu_score_agg on a distributed
#     table score on the workers (gpu_model_stats of each node) and equal the
#     same calls on a local copy, compared in SQL; an ORDER BY query scores
#     on the coordinator and keeps its order; shape errors are one node's,
#     and so is a worker's error for an infinite feature;
#   - gpu_score_table on a distributed table, in place and into a co-located
#     results table, scores on the workers; with a worker stopped in the
#     middle of a run, the run fails (logged 'failed' at once) and the next
#     one resumes, every row scored exactly once;
#   - a row trigger and a statement alert trigger on the distributed table
#     (citus.enable_unsafe_triggers) fire on the shards; alerts go to a
#     distributed alerts table;
#   - DROP EXTENSION on the coordinator leaves no model behind on a worker.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GsTest;

my $fixtures = $ENV{GS_FIXTURES};
my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
BAIL_OUT("Citus is not installed ($libdir/citus.so): build it with ../shared/citus/build.sh")
  unless -f "$libdir/citus.so";

my $conf = qq{
shared_preload_libraries = 'citus'
max_prepared_transactions = 20
max_connections = 60
citus.node_conninfo = 'sslmode=disable'
citus.shard_count = 8
max_parallel_workers_per_gather = 0
};

sub citus_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', $conf);
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

my $coord = citus_node('coordinator');
my @workers = (citus_node('worker1'), citus_node('worker2'));
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ")");
for my $w (@workers)
{
	$coord->safe_psql('postgres',
		"SELECT citus_add_node('" . $w->host . "', " . $w->port . ")");
}
$coord->safe_psql('postgres', 'CREATE EXTENSION pg_gpuscore');
for my $w (@workers)
{
	is($w->safe_psql('postgres', "SELECT count(*) FROM pg_extension WHERE extname = 'pg_gpuscore'"),
		'1', $w->name . ': CREATE EXTENSION reached the worker');
}

# what every node holds: name:version:md5 of the bytes, by name
sub models_of
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(name || ':' || version || ':' || md5(model), ' ' ORDER BY name), '') FROM gpu_model_store");
}

sub same_everywhere
{
	my ($want, $what) = @_;
	for my $n ($coord, @workers)
	{
		is(models_of($n), $want, $n->name . ": $what");
	}
}

# -- load, replace, drop propagate with one version number
my $demo = "$fixtures/models/demo_fraud.ubj";
is($coord->safe_psql('postgres', "SELECT gpu_load_model('fraud', pg_read_binary_file('$demo'))"),
	'1', 'loaded on the coordinator as version 1');
my $v1 = models_of($coord);
like($v1, qr/^fraud:1:[0-9a-f]{32}$/, 'the coordinator holds version 1');
same_everywhere($v1, 'the same model, version 1');

my $features = 'ARRAY[' . join(', ', gs_feature_names()) . ']';
my $probe = 'ARRAY[' . join(', ', map { $_ / 7 } 1 .. 30) . ']::real[]';
my $w1 = gs_session($workers[0]);
my $before = $w1->query_safe("SELECT gpu_score('fraud', $probe)");
is($before, $coord->safe_psql('postgres', "SELECT gpu_score('fraud', $probe)"),
	'a worker session scores as the coordinator');

my $big = $coord->basedir . '/fraud_x2.json';
gs_write_model($big, 2);
is($coord->safe_psql('postgres', "SELECT gpu_load_model('fraud', pg_read_binary_file('$big'))"),
	'2', 'replaced on the coordinator: version 2');
my $v2 = models_of($coord);
same_everywhere($v2, 'the replacement reached every node, version 2');
my $after = $w1->query_safe("SELECT gpu_score('fraud', $probe)");
is($after, $coord->safe_psql('postgres', "SELECT gpu_score('fraud', $probe)"),
	'the reused worker session scores with the replacement at its next statement');
isnt($after, $before, 'and the replacement scores differently');

# a version drifted on one node is put right by the next load
$workers[1]->safe_psql('postgres', "UPDATE gpu_model_store SET version = 7");
$coord->safe_psql('postgres', "SELECT gpu_load_model('fraud', pg_read_binary_file('$big'))");
same_everywhere(models_of($coord), 'one version number cluster-wide after a load');
my $v3 = models_of($coord);
like($v3, qr/^fraud:3:/, "the coordinator's numbering goes on: version 3");

# -- a load that fails on one worker changes no node
$workers[1]->append_conf('postgresql.conf', 'pg_gpuscore.max_trees = 100');
$workers[1]->reload;
my ($rc, $out, $err) = $coord->psql('postgres',
	"SELECT gpu_load_model('fraud', pg_read_binary_file('$demo'))");
isnt($rc, 0, 'a load one worker refuses fails on the coordinator');
like($err, qr/trees/, 'with the worker\'s error');
same_everywhere($v3, 'no node changed');
($rc, $out, $err) = $coord->psql('postgres',
	"SELECT gpu_load_model('other', pg_read_binary_file('$demo'))");
isnt($rc, 0, 'a new model one worker refuses is not loaded');
same_everywhere($v3, 'still no node changed');
$workers[1]->append_conf('postgresql.conf', 'pg_gpuscore.max_trees = 100000');
$workers[1]->reload;

# -- a direct load or drop on a worker is refused
($rc, $out, $err) = $workers[0]->psql('postgres',
	"SELECT gpu_load_model('local', pg_read_binary_file('$demo'))");
like($err, qr/cannot execute gpu_load_model\(\) on a Citus worker/, 'a direct load on a worker is refused');
($rc, $out, $err) = $workers[0]->psql('postgres', "SELECT gpu_drop_model('fraud')");
like($err, qr/cannot execute gpu_drop_model\(\) on a Citus worker/, 'so is a direct drop');

# -- gpu_check_models and gpu_sync_models
is($coord->safe_psql('postgres', "SELECT string_agg(DISTINCT status, ',') FROM gpu_check_models()"),
	'same', 'gpu_check_models: every node the same');
$workers[0]->safe_psql('postgres', "DELETE FROM gpu_model_store");
$workers[1]->safe_psql('postgres', "UPDATE gpu_model_store SET version = 9");
is($coord->safe_psql('postgres',
	"SELECT string_agg(status, ',' ORDER BY node) FROM gpu_check_models()"),
	'missing,different', 'gpu_check_models: one worker lacks the model, the other differs');
is($coord->safe_psql('postgres', "SELECT string_agg(model || ':' || version, ',') FROM gpu_sync_models()"),
	'fraud:3', 'gpu_sync_models sends the model');
same_everywhere($v3, 'gpu_sync_models repaired both workers');

# a node added later gets the models from gpu_sync_models
my $w3 = citus_node('worker3');
$coord->safe_psql('postgres', "SELECT citus_add_node('" . $w3->host . "', " . $w3->port . ")");
is($coord->safe_psql('postgres',
	"SELECT count(*) FROM gpu_check_models() WHERE status = 'missing'"),
	'1', 'a new node lacks the model');
$coord->safe_psql('postgres', "SELECT * FROM gpu_sync_models()");
is(models_of($w3), $v3, 'gpu_sync_models brought the model to the new node');
push @workers, $w3;

# -- distributed table: per-row and batched scoring pushed to the workers
my @f = gs_feature_names();
my $cols = join(', ', map { "$_ real" } @f);
my $i = 0;
my $vals = join(', ', map { $i++; "CASE WHEN (g + $i) % 37 = 0 THEN NULL ELSE ((g * " . ($i + 6) . ") % 101) / 10.0 END" } @f);
$coord->safe_psql('postgres', qq{
	CREATE TABLE tx (id bigint PRIMARY KEY, $cols);
	SELECT create_distributed_table('tx', 'id');
	INSERT INTO tx SELECT g, $vals FROM generate_series(1, 200000) g;
	CREATE TABLE tx_local AS SELECT * FROM tx;
});
is($coord->safe_psql('postgres', "SELECT count(*) FROM tx"), '200000', '200,000 rows in the distributed table');
my $plan = $coord->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) SELECT id, gpu_score('fraud', $features) FROM tx");
like($plan, qr/Task Count: 8/, 'the query runs on the 8 shards');
like($plan, qr/gpu_score\('fraud'/, 'with gpu_score in the shard queries');

my $digest = "md5(string_agg(id || ':' || s::text, ',' ORDER BY id))";
for my $mode ('on', 'off')
{
	my $dist = $coord->safe_psql('postgres', qq{
		SET pg_gpuscore.batch_calls = $mode;
		WITH s AS (SELECT id, gpu_score('fraud', $features) AS s FROM tx) SELECT $digest FROM s});
	my $local = $coord->safe_psql('postgres', qq{
		SET pg_gpuscore.batch_calls = $mode;
		WITH s AS (SELECT id, gpu_score('fraud', $features) AS s FROM tx_local) SELECT $digest FROM s});
	like($dist, qr/^[0-9a-f]{32}$/, "batch_calls $mode: the distributed scores");
	is($dist, $local, "batch_calls $mode: every score on the workers equals the local table's");
}
my $agg = "count(*) FILTER (WHERE gpu_score('fraud', $features) > 0.5) || ':' || sum(gpu_score('fraud', $features)::numeric)";
is($coord->safe_psql('postgres', "SELECT $agg FROM tx"),
	$coord->safe_psql('postgres', "SELECT $agg FROM tx_local"),
	'an aggregate over the scores, partial on the workers, equals the local one');
# scores written by INSERT ... SELECT into a table distributed on the same column: on the workers
$coord->safe_psql('postgres', qq{
	CREATE TABLE scores (id bigint PRIMARY KEY, s real);
	SELECT create_distributed_table('scores', 'id', colocate_with => 'tx');
});
like($coord->safe_psql('postgres',
	"EXPLAIN (COSTS OFF) INSERT INTO scores SELECT id, gpu_score('fraud', $features) FROM tx"),
	qr/Task Count: 8/, 'INSERT ... SELECT of the scores runs on the shards');
$coord->safe_psql('postgres', "INSERT INTO scores SELECT id, gpu_score('fraud', $features) FROM tx");
is($coord->safe_psql('postgres', "WITH q AS (SELECT id, s FROM scores) SELECT $digest FROM q"),
	$coord->safe_psql('postgres',
		"WITH q AS (SELECT id, gpu_score('fraud', $features) AS s FROM tx_local) SELECT $digest FROM q"),
	'and writes every score as the local table gives it');
# the workers batched their shard queries (GpuScore in their plans)
like($workers[0]->safe_psql('postgres',
	"EXPLAIN (COSTS OFF) SELECT gpu_score('fraud', $features) FROM " .
	$workers[0]->safe_psql('postgres',
		"SELECT 'tx_' || min(shardid) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) " .
		"WHERE logicalrelid = 'tx'::regclass AND p.groupid = (SELECT groupid FROM pg_dist_local_group)")),
	qr/GpuScore/, 'a shard query on a worker is batched by GpuScore');
$coord->safe_psql('postgres', 'CREATE TABLE scores_local AS SELECT * FROM scores');

# -- gpu_score_query, gpu_predict_query and gpu_score_agg on the distributed table: the
# workers score their shards (gpu_model_stats counts the rows each node's batch paths
# scored: the workers' add up to the query's rows, the coordinator's stay 0), the
# results equal the same calls on the local copy, compared in SQL
sub scored_rows
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(gpu_rows + cpu_rows), 0) FROM gpu_model_stats WHERE model = 'fraud'");
}
sub where_scored
{
	my ($sql) = @_;
	$_->safe_psql('postgres', 'SELECT gpu_model_stats_reset()') for ($coord, @workers);
	$coord->safe_psql('postgres', $sql);
	my $on_workers = 0;
	$on_workers += scored_rows($_) for @workers;
	return scored_rows($coord) . ':' . $on_workers;
}
my $cols_q = join(', ', @f);
my %queries = (
	'columns' => "SELECT id, $cols_q FROM TX",
	'a filter' => "SELECT id, $cols_q FROM TX WHERE id % 3 <> 0 AND " . $f[0] . " IS NOT NULL",
	'an array' => "SELECT id, ARRAY[$cols_q] FROM TX",
	'an array, NULL in some rows' => "SELECT id, CASE WHEN id % 1000 = 0 THEN NULL ELSE ARRAY[$cols_q] END FROM TX",
	'columns of mixed types' => "SELECT id, $f[0]::numeric, round($f[1])::integer, ($f[2] > 5), $f[3]::float8, " .
		join(', ', @f[4 .. $#f]) . " FROM TX",
	'a join of co-located tables' => "SELECT t.id, " . join(', ', map { "t.$_" } @f) .
		" FROM TX t JOIN SC s ON s.id = t.id WHERE s.s > 0.3",
);
for my $what (sort keys %queries)
{
	my ($dq, $lq) = map { my $q = $queries{$what}; $q =~ s/TX/$_->[0]/; $q =~ s/SC/$_->[1]/; $q }
		(['tx', 'scores'], ['tx_local', 'scores_local']);
	my ($dql, $lql) = map { s/'/''/gr } ($dq, $lq);
	my $n = $coord->safe_psql('postgres', "SELECT count(*) FROM ($lq) q");
	is(where_scored("SELECT count(*) FROM gpu_score_query('fraud', '$dql')"), "0:$n",
		"gpu_score_query over $what: the workers scored the $n rows, the coordinator none");
	is($coord->safe_psql('postgres', qq{
		WITH d AS (SELECT id, score AS s FROM gpu_score_query('fraud', '$dql')),
		     l AS (SELECT id, score AS s FROM gpu_score_query('fraud', '$lql'))
		SELECT (SELECT count(*) FROM d) || ':' || (SELECT count(*) FROM (
		          (SELECT * FROM d EXCEPT ALL SELECT * FROM l) UNION ALL
		          (SELECT * FROM l EXCEPT ALL SELECT * FROM d)) x)}),
		"$n:0", "gpu_score_query over $what: every (id, score) equals the local copy's");
	is($coord->safe_psql('postgres', qq{
		WITH d AS (SELECT id, scores::text AS s FROM gpu_predict_query('fraud', '$dql')),
		     l AS (SELECT id, scores::text AS s FROM gpu_predict_query('fraud', '$lql'))
		SELECT (SELECT count(*) FROM d) || ':' || (SELECT count(*) FROM (
		          (SELECT * FROM d EXCEPT ALL SELECT * FROM l) UNION ALL
		          (SELECT * FROM l EXCEPT ALL SELECT * FROM d)) x)}),
		"$n:0", "gpu_predict_query over $what: the same");
}
# an ORDER BY keeps its order: such a query is scored on the coordinator, as before
my $ordered = "SELECT id, $cols_q FROM tx WHERE id <= 1000 ORDER BY id DESC";
is(where_scored("SELECT count(*) FROM gpu_score_query('fraud', '$ordered')"), '1000:0',
	'gpu_score_query with ORDER BY scores on the coordinator');
is($coord->safe_psql('postgres',
	"SELECT string_agg(id::text, ',') FROM (SELECT id FROM gpu_score_query('fraud', '$ordered') LIMIT 3) q"),
	'1000,999,998', 'in the query\'s order');
# the errors of one node: the query's shape is checked before any row is scored
my ($rc1, $o1, $e1) = $coord->psql('postgres', "SELECT * FROM gpu_score_query('fraud', 'SELECT id, $f[0] FROM tx')");
my ($rc2, $o2, $e2) = $coord->psql('postgres', "SELECT * FROM gpu_score_query('fraud', 'SELECT id, $f[0] FROM tx_local')");
like($e1, qr/ERROR:  model "fraud" expects \d+ features, the query returns 1 feature column/,
	'a query with too few features fails on a distributed table');
is($e1, $e2 =~ s/tx_local/tx/r, 'with the error of the local table (its name aside)');

# a bad value fails on its worker with one node's error
$coord->safe_psql('postgres', qq{
	CREATE TABLE tx_inf AS SELECT * FROM tx_local WHERE id <= 100;
	UPDATE tx_inf SET $f[0] = 'infinity' WHERE id = 50;
	CREATE TABLE tx_inf_local AS SELECT * FROM tx_inf;
	SELECT create_distributed_table('tx_inf', 'id', colocate_with => 'tx');
});
($rc1, $o1, $e1) = $coord->psql('postgres', "SELECT * FROM gpu_score_query('fraud', 'SELECT id, $cols_q FROM tx_inf')");
($rc2, $o2, $e2) = $coord->psql('postgres', "SELECT * FROM gpu_score_query('fraud', 'SELECT id, $cols_q FROM tx_inf_local')");
my ($first1) = $e1 =~ /^(.*ERROR:.*)$/m;
my ($first2) = $e2 =~ /^(.*ERROR:.*)$/m;
like($e1, qr/while executing command on/, 'an infinite feature on a distributed table fails on its worker');
is($first1, $first2, 'with the error of the local table');

# gpu_score_agg: Citus splits it (partial aggregates on the workers, combined on the coordinator)
my $agg_plan = $coord->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) SELECT gpu_score_agg('fraud', id, $features) FROM tx");
like($agg_plan, qr/worker_partial_agg/, 'gpu_score_agg on a distributed table: partial aggregates on the workers');
for my $form ("$features", $cols_q)
{
	my $cols = $form eq $cols_q;
	my $what = $cols ? 'separate columns' : 'an array';
	# (Citus cannot type-check the VARIADIC "any" form on a worker: its rows are gathered)
	is(where_scored("SELECT length(gpu_score_agg('fraud', id, $form)) FROM tx"),
		$cols ? '200000:0' : '0:200000',
		$cols ? "gpu_score_agg over $what: gathered and scored on the coordinator"
		: "gpu_score_agg over $what: the workers scored the 200,000 rows, the coordinator none");
	is($coord->safe_psql('postgres', qq{
		WITH d AS (SELECT r.id, r.score FROM gpu_scores((SELECT gpu_score_agg('fraud', id, $form) FROM tx)) r),
		     l AS (SELECT r.id, r.score FROM gpu_scores((SELECT gpu_score_agg('fraud', id, $form) FROM tx_local)) r)
		SELECT (SELECT count(*) FROM d) || ':' || (SELECT count(*) FROM (
		          (SELECT * FROM d EXCEPT ALL SELECT * FROM l) UNION ALL
		          (SELECT * FROM l EXCEPT ALL SELECT * FROM d)) x)}),
		'200000:0', "gpu_score_agg over $what: every (id, score) equals the local copy's");
}
# grouped by something else than the distribution column: one state per group and worker,
# combined per group on the coordinator
is($coord->safe_psql('postgres', qq{
	WITH d AS (SELECT g, r.id, r.score FROM (SELECT id % 7 AS g, gpu_score_agg('fraud', id, $features) AS a FROM tx GROUP BY 1) x,
	                                        gpu_scores(x.a) r),
	     l AS (SELECT g, r.id, r.score FROM (SELECT id % 7 AS g, gpu_score_agg('fraud', id, $features) AS a FROM tx_local GROUP BY 1) x,
	                                        gpu_scores(x.a) r)
	SELECT (SELECT count(*) FROM d) || ':' || (SELECT count(*) FROM (
	          (SELECT * FROM d EXCEPT ALL SELECT * FROM l) UNION ALL
	          (SELECT * FROM l EXCEPT ALL SELECT * FROM d)) x)}),
	'200000:0', 'gpu_score_agg grouped by another column: the same groups and scores');

# -- gpu_score_table on the distributed table: the batches score on the workers
$coord->safe_psql('postgres', qq{
	ALTER TABLE tx ADD COLUMN score real;
	CREATE TABLE tx_res (id bigint PRIMARY KEY, score real, model_version integer, scored_at timestamptz);
	SELECT create_distributed_table('tx_res', 'id', colocate_with => 'tx');
});
my $local_digest = $coord->safe_psql('postgres',
	"WITH q AS (SELECT id, gpu_score('fraud', t) AS s FROM tx_local t) SELECT $digest FROM q");
$coord->safe_psql('postgres', "CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 30000)");
is($coord->safe_psql('postgres', "WITH q AS (SELECT id, score AS s FROM tx) SELECT $digest FROM q"),
	$local_digest, 'gpu_score_table in place on a distributed table: every row, the local scores');
$coord->safe_psql('postgres', "CALL gpu_score_table('fraud', 'tx', 'id', target => 'tx_res', batch_size => 30000)");
is($coord->safe_psql('postgres', "WITH q AS (SELECT id, score AS s FROM tx_res) SELECT $digest FROM q"),
	$local_digest, 'gpu_score_table into a co-located results table: the same');
is($coord->safe_psql('postgres', "SELECT string_agg(DISTINCT model_version::text, ',') FROM tx_res"),
	'3', 'with the model version');
like($coord->safe_psql('postgres',
	"SELECT string_agg(status || ':' || rows_scored, ',' ORDER BY run_id) FROM gpu_score_runs"),
	qr/^succeeded:200000,succeeded:200000$/, 'both runs logged');

# one worker stopped in the middle of a run: the run fails, the next run resumes, every row
# scored exactly once (the rows the runs logged add up to the table)
my $slow = $coord->basedir . '/fraud_x20.json';
gs_write_model($slow, 20);
$coord->safe_psql('postgres', qq{
	SELECT gpu_load_model('slow', pg_read_binary_file('$slow'));
	CREATE TABLE tx_slow (id bigint PRIMARY KEY, score real, model_version integer, scored_at timestamptz);
	SELECT create_distributed_table('tx_slow', 'id', colocate_with => 'tx');
});
my $call = gs_start_call($coord,
	"CALL gpu_score_table('slow', 'tx', 'id', target => 'tx_slow', batch_size => 2000)");
my $batches = 0;
for (1 .. 600)
{
	$batches = $coord->safe_psql('postgres',
		"SELECT coalesce(max(batches), 0) FROM gpu_score_runs WHERE model = 'slow'");
	last if $batches >= 5;
	select(undef, undef, undef, 0.05);
}
cmp_ok($batches, '>=', 5, 'the run committed batches before the worker stops');
$workers[1]->stop('immediate');
eval { $call->{harness}->finish };
like(${ $call->{err} }, qr/ERROR/, 'the run fails when a worker is gone');
$workers[1]->start;
$coord->safe_psql('postgres', "CALL gpu_score_table('slow', 'tx', 'id', target => 'tx_slow', batch_size => 2000)");
# (the failed run's transaction, which cannot commit without the worker, is rolled
# back, and the run logged failed in a transaction of its own)
is($coord->safe_psql('postgres',
	"SELECT string_agg(status || ':' || (error IS NOT NULL), ',' ORDER BY run_id) FROM gpu_score_runs WHERE model = 'slow'"),
	'failed:true,succeeded:false', 'the stopped run is logged failed with its error, the next succeeded');
is($coord->safe_psql('postgres',
	"SELECT sum(rows_scored) || ':' || count(*) FROM gpu_score_runs WHERE model = 'slow'"),
	'200000:2', 'the next run scored the rest: 200,000 rows in the two runs, none twice');
is($coord->safe_psql('postgres', "SELECT count(*) FROM tx_slow"), '200000', 'every row has its score');
is($coord->safe_psql('postgres', "WITH q AS (SELECT id, score AS s FROM tx_slow) SELECT $digest FROM q"),
	$coord->safe_psql('postgres',
		"WITH q AS (SELECT id, gpu_score('slow', t) AS s FROM tx_local t) SELECT $digest FROM q"),
	'and it is the local table\'s score');

# -- triggers on the distributed table (Citus requires citus.enable_unsafe_triggers): they fire
# on the shards, on the workers, with the workers' models; alerts go to a distributed table
my $cols_list = join(', ', @f);
$coord->safe_psql('postgres', qq{
	SET citus.enable_unsafe_triggers = on;
	CREATE TABLE fraud_alerts (key bigint, score real, model text, model_version integer, alerted_at timestamptz);
	SELECT create_distributed_table('fraud_alerts', 'key');
	CREATE TRIGGER score_tx BEFORE INSERT ON tx FOR EACH ROW
	  EXECUTE FUNCTION gpu_score_trigger('model=fraud', 'score_column=score');
	CREATE TRIGGER alert_tx AFTER INSERT ON tx REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
	  EXECUTE FUNCTION gpu_alert_trigger('model=fraud', 'key_column=id', 'threshold=0.5', 'alerts_table=fraud_alerts');
	INSERT INTO tx (id, $cols_list) SELECT g, $vals FROM generate_series(200001, 201000) g;
});
is($coord->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE score IS NOT NULL) || ':' || count(*) FILTER (WHERE score IS DISTINCT FROM gpu_score('fraud', $features)) FROM tx WHERE id > 200000"),
	'1000:0', 'the row trigger scored every inserted row on the shards, as gpu_score scores it');
is($coord->safe_psql('postgres', "SELECT count(*) FROM fraud_alerts"),
	$coord->safe_psql('postgres', "SELECT count(*) FROM tx WHERE id > 200000 AND score >= 0.5"),
	'the statement trigger alerted every row above the threshold into the distributed alerts table');
cmp_ok($coord->safe_psql('postgres', "SELECT count(*) FROM fraud_alerts"), '>', 0, 'and there were such rows');
is($coord->safe_psql('postgres',
	"SELECT count(*) FROM fraud_alerts a JOIN tx t ON t.id = a.key WHERE a.score <> t.score OR a.model <> 'fraud' OR a.model_version <> 3"),
	'0', 'each alert with its score, model and version');

# -- drop propagates; DROP EXTENSION leaves nothing behind
is($coord->safe_psql('postgres', "SELECT gpu_drop_model('fraud') AND gpu_drop_model('slow')"), 't',
	'dropped on the coordinator');
same_everywhere('', 'the drop reached every node');
$coord->safe_psql('postgres', "SELECT gpu_load_model('fraud', pg_read_binary_file('$demo'))");
$coord->safe_psql('postgres', 'DROP TABLE tx, scores, tx_res, tx_slow, fraud_alerts; DROP EXTENSION pg_gpuscore');
for my $w (@workers)
{
	is($w->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'pg_gpuscore'") .
		':' . $w->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'gpu_model_store%'"),
		'0:0', $w->name . ': DROP EXTENSION left no model table');
}

$w1->quit;
done_testing();

# tests/t/011_pg_cron.pl: gpu_score_table scheduled with pg_cron.
#
# pg_cron (Debian postgresql-15-cron, 1.4) runs a job at most once a minute,
# so this test waits up to about two minutes for the first run: it schedules
# scoring of a table every minute, waits until the job has run, and checks
# that the rows were scored by it (the run log and cron.job_run_details agree),
# then inserts more rows and sees the next run score only those.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GsTest;

my $node = gs_node('pg_cron', qq{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 20
});
$node->safe_psql('postgres', 'CREATE EXTENSION pg_cron');
gs_load_fraud($node);
gs_make_tx($node, 'tx', 5000);

my $job = $node->safe_psql('postgres', q{
	SELECT cron.schedule('score-tx', '* * * * *',
	                     $$CALL gpu_score_table('fraud', 'tx', 'id', batch_size => 1000)$$)});
ok($job > 0, "job $job scheduled");

ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM gpu_score_runs WHERE status = 'succeeded' AND rows_scored = 5000}),
	'the scheduled run scored the table');
is($node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE score IS NULL'), '0',
	'every row has a score');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM tx
	 WHERE score IS DISTINCT FROM gpu_score('fraud', ARRAY[} . join(', ', gs_feature_names()) . q{])}),
	'0', 'the scores are those of gpu_score');
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) > 0 FROM cron.job_run_details WHERE jobid = $job AND status = 'succeeded'}),
	'pg_cron records the job as succeeded');

# New rows: the next run scores only them.
$node->safe_psql('postgres', q{
	INSERT INTO tx (id, amount) SELECT g, g FROM generate_series(5001, 5100) g});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM gpu_score_runs WHERE status = 'succeeded' AND rows_scored = 100}),
	'the next scheduled run scored the new rows');
is($node->safe_psql('postgres', 'SELECT count(*) FROM tx WHERE score IS NULL'), '0',
	'no row left unscored');
is($node->safe_psql('postgres', q{SELECT count(*) FROM gpu_score_runs WHERE status NOT IN ('succeeded', 'skipped')}),
	'0', 'no run failed');

$node->safe_psql('postgres', "SELECT cron.unschedule($job)");
$node->stop;
done_testing();

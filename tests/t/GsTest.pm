# tests/t/GsTest.pm: shared setup of the pg_gpuscore TAP tests.
#
# gs_node(name, extra_conf)   a started throwaway cluster with pg_gpuscore
#                             created in database postgres
# gs_load_fraud(node)         load the bundled demo fraud model as 'fraud'
# gs_make_tx(node, table, n)  a transactions table with the model's 30
#                             feature columns, a score column and n rows
# gs_start_call(node, sql)    run one SQL command in the background (an
#                             IPC::Run harness; finish it with ->finish)
package GsTest;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(gs_node gs_load_fraud gs_make_tx gs_start_call gs_feature_names);

my $fixtures = $ENV{GS_FIXTURES} or die "GS_FIXTURES is not set (run tests/t/run.sh)";

sub gs_feature_names
{
	open(my $fh, '<', "$fixtures/demo_fraud_features.txt") or die "features: $!";
	my @names = grep { length } map { s/\s+//gr } <$fh>;
	close $fh;
	return @names;
}

sub gs_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', $conf) if $conf;
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_gpuscore');
	return $node;
}

sub gs_load_fraud
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT gpu_load_model('fraud', pg_read_binary_file('$fixtures/models/demo_fraud.ubj'))");
}

sub gs_make_tx
{
	my ($node, $table, $n) = @_;
	my @f = gs_feature_names();
	my $cols = join(', ', map { "$_ real" } @f);
	my $i = 0;
	my $vals = join(', ', map { $i++; "((g * " . ($i + 6) . ") % 101) / 10.0" } @f);
	$node->safe_psql('postgres', qq{
		CREATE TABLE $table (id bigint PRIMARY KEY, $cols, score real);
		INSERT INTO $table (id, @{[ join(', ', @f) ]})
		SELECT g, $vals FROM generate_series(1, $n) g;
	});
	return;
}

sub gs_start_call
{
	my ($node, $sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	return { harness => $h, out => \$out, err => \$err };
}

1;

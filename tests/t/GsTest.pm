# tests/t/GsTest.pm: shared setup of the pg_gpuscore TAP tests.
#
# gs_node(name, extra_conf)   a started throwaway cluster with pg_gpuscore
#                             created in database postgres
# gs_load_fraud(node)         load the bundled demo fraud model as 'fraud'
# gs_make_tx(node, table, n)  a transactions table with the model's 30
#                             feature columns, a score column and n rows
# gs_start_call(node, sql)    run one SQL command in the background (an
#                             IPC::Run harness; finish it with ->finish)
# gs_session(node)            a long-lived psql session (BackgroundPsql) that
#                             goes on after errors and reports SQLSTATEs
# gs_write_model(path, n)     write a valid XGBoost JSON model with the demo
#                             model's 30 feature names and n x 60 trees
# gs_server_crashes(node)     lines of the server log that tell of a crashed
#                             backend (none is the only good answer)
# gs_record_score_writes(node, table)
#                             record the id of every write of a score into
#                             table.score in score_writes, so a row scored
#                             twice shows up even when both writes set the
#                             same value
package GsTest;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(gs_node gs_load_fraud gs_make_tx gs_start_call gs_feature_names
  gs_session gs_write_model gs_server_crashes gs_record_score_writes);

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

# A background psql session that does not stop at errors and prints the
# SQLSTATE of each (VERBOSITY verbose: "ERROR:  57014: canceling ...").  Each
# query gets its own timeout.  The caller reads and clears ->{stderr}.
sub gs_session
{
	my ($node) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->set_query_timer_restart();
	$s->query_safe('\set VERBOSITY verbose');
	return $s;
}

# Write an XGBoost model (JSON, as XGBoost 1.7 saves it) with the 30 features
# of the demo model, named as its columns, made of the 60 trees of the
# fixture fraud_binary.json repeated $copies times: a valid model of any
# size (about 5 KB and 60 trees per copy) that costs $copies times as much
# per row.  Scores saturate for large $copies; only their identity matters.
sub gs_write_model
{
	my ($path, $copies) = @_;
	my $json = JSON::PP->new->canonical;
	open(my $in, '<', "$fixtures/models/fraud_binary.json") or die "fraud_binary.json: $!";
	my $doc = $json->decode(do { local $/; <$in> });
	close $in;

	my $learner = $doc->{learner};
	my $model = $learner->{gradient_booster}{model};
	my @names = gs_feature_names();
	my $n = @{ $model->{trees} } * $copies;
	die "the demo features and fraud_binary.json differ in number"
	  unless @names == $learner->{learner_model_param}{num_feature};
	$learner->{feature_names} = \@names;
	$learner->{feature_types} = [ ('float') x @names ];
	$model->{gbtree_model_param}{num_trees} = "$n";
	$learner->{attributes} = {};

	# Each tree's text split around its id, so that every copy gets its own.
	my @halves = map {
		$_->{id} = 987654321;
		my @h = split /987654321/, $json->encode($_);
		die "tree id placeholder not unique" unless @h == 2;
		\@h
	} @{ $model->{trees} };
	$model->{trees} = 'TREES';
	$model->{tree_info} = 'TREE_INFO';
	my $text = $json->encode($doc);
	$text =~ s/"TREE_INFO"/'[' . join(',', (0) x $n) . ']'/e
	  or die "no tree_info placeholder";
	my ($head, $tail) = split /"TREES"/, $text, 2;

	open(my $out, '>', $path) or die "$path: $!";
	print $out $head, '[';
	my $id = 0;
	for my $c (1 .. $copies)
	{
		for my $h (@halves)
		{
			print $out ',' if $id > 0;
			print $out $h->[0], $id++, $h->[1];
		}
	}
	print $out ']', $tail;
	close $out or die "$path: $!";
	return $path;
}

# Lines of the server log saying that a backend crashed (a signal, an
# exception, a PANIC) or that the server reinitialized after one.
sub gs_record_score_writes
{
	my ($node, $table) = @_;
	$node->safe_psql('postgres', qq{
		CREATE TABLE score_writes (id bigint NOT NULL);
		CREATE FUNCTION note_write() RETURNS trigger LANGUAGE plpgsql AS
		  \$\$BEGIN INSERT INTO score_writes VALUES (NEW.id); RETURN NEW; END\$\$;
		CREATE TRIGGER note_write AFTER UPDATE OF score ON $table
		  FOR EACH ROW WHEN (NEW.score IS NOT NULL) EXECUTE FUNCTION note_write();
	});
	return;
}

sub gs_server_crashes
{
	my ($node) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	return grep {
		/terminated by signal|terminated by exception|server process .* was terminated|PANIC:|terminating any other active server processes/
	} split /\n/, $log;
}

1;

# tests/t/040_soak.pl: many sessions at once replacing, dropping and using
# one model, for GS_SOAK_SECONDS (default 60; set it higher for a real soak).
#
# Eight sessions run side by side until the deadline:
#   load     replaces model 'fraud' over and over, alternating two different
#            models with the same 30 features (A: the demo model, B: the trees
#            of fraud_binary.json), each loaded twice in a row (the same
#            bytes re-loaded also make a new version);
#   drop     drops 'fraud' and loads A again, once a second;
#   query    gpu_score_query over a 5000-row table;
#   agg      gpu_scores((SELECT gpu_score_agg(...))) with parallel workers;
#   row      gpu_score and gpu_predict row by row;
#   ins1/2   INSERTs of 50 rows through gpu_score_trigger;
#   mem      all of the above in turn; its backend's memory is watched.
# Afterwards:
#   - the only errors are 'model "fraud" does not exist' (42704) in the
#     sessions that use the model, while it is dropped: any other error, in
#     any session, fails the test (they are counted and listed by SQLSTATE);
#   - every scoring statement returned each of the 5000 rows exactly once,
#     and all its scores are those of A or all those of B (one version per
#     statement, never a mix, never garbage), compared exactly with the
#     scores of A and B loaded under other names;
#   - every INSERT that succeeded left its 50 rows exactly once, all scored
#     by one of A or B (all rows of a statement by the same one), and every
#     INSERT that failed left none;
#   - no backend crashed (server log);
#   - the memory of the long-lived session 'mem' is flat: its memory
#     contexts and its private resident memory (RssAnon of its backend, read
#     from /proc: the test runs on the server's machine) grew by less than
#     $ctx_bound and $rss_bound bytes between the end of the warm-up and the
#     end.  A leaked model per replacement (~1 MB) or a leaked batch per
#     statement would exceed them within seconds.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use IPC::Run;
use GsTest;

my $seconds = $ENV{GS_SOAK_SECONDS} // 60;
my $n_tx = 5000;
# Memory growth bounds, warm-up end to end.  Measured on a 2-core VM over
# 60 s: +0.0-0.05 MB of contexts (of ~1.9 MB) and +0.01 MB of RssAnon (of
# ~10 MB).  A model leaked at each replacement made the contexts grow by
# 10 MB in 15 s (checked by breaking model_cache.c on purpose).
my $ctx_bound = 2 * 1024 * 1024;
my $rss_bound = 8 * 1024 * 1024;

my $fixtures = $ENV{GS_FIXTURES};
my $node = gs_node('soak', q{
max_connections = 40
max_worker_processes = 16
max_parallel_workers = 8
});
my $dir = PostgreSQL::Test::Utils::tempdir;
my $path_a = "$fixtures/models/demo_fraud.ubj";
my $path_b = gs_write_model("$dir/b.json", 1);

my @f = gs_feature_names();
my $cols = join(', ', @f);
my $arr = "ARRAY[$cols]";

gs_make_tx($node, 'tx', $n_tx);
$node->safe_psql('postgres', qq{
	SELECT gpu_load_model('fraud', pg_read_binary_file('$path_a'));
	-- the two contents 'fraud' can have, under names nobody replaces
	SELECT gpu_load_model('chk_a', pg_read_binary_file('$path_a'));
	SELECT gpu_load_model('chk_b', pg_read_binary_file('$path_b'));
	CREATE TABLE ref AS
	  SELECT id, gpu_score('chk_a', $arr) AS a, gpu_score('chk_b', $arr) AS b FROM tx;
	CREATE UNIQUE INDEX ON ref (id);
	CREATE TABLE ins (tag text, seq bigint, @{[ join(', ', map { "$_ real" } @f) ]},
	                  score real, PRIMARY KEY (tag, seq));
	CREATE TRIGGER score_ins BEFORE INSERT ON ins FOR EACH ROW
	  EXECUTE FUNCTION gpu_score_trigger('model=fraud', 'score_column=score');
	VACUUM ANALYZE tx; VACUUM ANALYZE ref;
});
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM ref WHERE a <> b'), '>', $n_tx * 0.9,
	'models A and B score (nearly) every row differently');

# ---- the sessions' scripts ----
# A psql script per role: a preamble, then iterations of the role's body
# until the deadline (the epoch in :deadline).  Each iteration first counts
# itself (:i) and checks the clock; each statement is followed by a line
# "R <kind> <i> <SQLSTATE> [values]" that the test reads back.  psql cannot
# loop, so the iterations are \ir includes, 1000 per file, two levels deep.
my %check_cols = (
	n => 'count(*)', nd => 'count(DISTINCT s.id)',
	na => 'count(*) FILTER (WHERE s.score = r.a)', nb => 'count(*) FILTER (WHERE s.score = r.b)');
my $checks = join(', ', map { "$check_cols{$_} AS $_" } sort keys %check_cols);
my $report = 'SELECT ' . $checks;
my $agg_sql = qq{$report FROM gpu_scores((SELECT gpu_score_agg('fraud', id, $cols) FROM tx)) s
	  LEFT JOIN ref r ON r.id = s.id};
my %body = (
	query => qq{$report FROM gpu_score_query('fraud', 'SELECT id, $cols FROM tx') s
	  LEFT JOIN ref r ON r.id = s.id \\gset
\\echo R query :i :SQLSTATE :n :nd :na :nb
},
	agg => qq{$agg_sql \\gset
\\echo R agg :i :SQLSTATE :n :nd :na :nb
},
	row => qq{$report FROM (SELECT id, gpu_score('fraud', $arr) AS score FROM tx OFFSET 0) s
	  LEFT JOIN ref r ON r.id = s.id \\gset
\\echo R row :i :SQLSTATE :n :nd :na :nb
$report FROM (SELECT id, (gpu_predict('fraud', $arr))[1] AS score FROM tx OFFSET 0) s
	  LEFT JOIN ref r ON r.id = s.id \\gset
\\echo R predict :i :SQLSTATE :n :nd :na :nb
},
	ins => qq{INSERT INTO ins (tag, seq, $cols)
	  SELECT :'w' || '-' || :i, id, $cols FROM tx WHERE id > (:i * 53) % ($n_tx - 50) AND id <= (:i * 53) % ($n_tx - 50) + 50;
\\echo R ins :i :SQLSTATE
},
	load => q{SELECT CASE WHEN :i % 4 < 2 THEN :'path_a' ELSE :'path_b' END AS path \gset
SELECT gpu_load_model('fraud', pg_read_binary_file(:'path')) AS v \gset
\echo R load :i :SQLSTATE :v
SELECT pg_sleep(0.05) AS z \gset
},
	drop => q{SELECT gpu_drop_model('fraud') AS d \gset
\echo R drop :i :SQLSTATE
SELECT pg_sleep(0.05) AS z \gset
SELECT gpu_load_model('fraud', pg_read_binary_file(:'path_a')) AS v \gset
\echo R reload :i :SQLSTATE :v
SELECT pg_sleep(1) AS z \gset
},
);
# 'mem' does everything in turn (and re-loads A, which is a new version of A)
$body{mem} = join('',
	map { "\\if :turn$_\n$body{(qw(query agg row ins load))[$_]}\\endif\n" } 0 .. 4);
$body{mem} =~ s/CASE WHEN :i % 4 < 2 THEN :'path_a' ELSE :'path_b' END/:'path_a'/;
$body{mem} .= q{SELECT sum(total_bytes) AS mem, extract(epoch FROM clock_timestamp()) AS t
  FROM pg_backend_memory_contexts \gset
\echo M :i :mem :t
};

my %setup = (
	agg => 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
	  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;',
);
like($node->safe_psql('postgres', "$setup{agg} EXPLAIN (COSTS OFF) $agg_sql"),
	qr/Partial Aggregate/, "the 'agg' session's aggregate runs in parallel workers");

my %role_of = (load => 'load', drop => 'drop', query => 'query', agg => 'agg', row => 'row',
	ins1 => 'ins', ins2 => 'ins', mem => 'mem');
my $outer = int(($seconds * 2000) / 1000) + 1;    # up to 2000 iterations a second

for my $role (sort { $a cmp $b } keys %body)
{
	my $head = q{SELECT :i + 1 AS i, extract(epoch FROM clock_timestamp()) < :deadline AS go};
	$head .= ', (:i + 1) % 5 = ' . $_ . " AS turn$_" for ($role eq 'mem' ? (0 .. 4) : ());
	PostgreSQL::Test::Utils::append_to_file("$dir/iter_$role.sql",
		"$head \\gset\n\\if :go\n$body{$role}\\endif\n");
	PostgreSQL::Test::Utils::append_to_file("$dir/mid_$role.sql",
		"\\if :go\n\\ir iter_$role.sql\n\\endif\n" x 1000);
	PostgreSQL::Test::Utils::append_to_file("$dir/main_$role.sql",
		"\\set VERBOSITY verbose\n"
		  . "SELECT pg_backend_pid() AS pid \\gset\n\\echo PID :pid\n"
		  . "SELECT 0 AS i, true AS go \\gset\n"
		  . ($setup{$role} // '') . "\n"
		  . ("\\if :go\n\\ir mid_$role.sql\n\\endif\n" x $outer)
		  . "\\echo DONE :i\n");
}

# ---- run ----
my $deadline = time + $seconds;
my %w;
for my $name (sort keys %role_of)
{
	my $role = $role_of{$name};
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0', '-v', "deadline=$deadline", '-v', "w=$name",
		  '-v', "path_a=$path_a", '-v', "path_b=$path_b",
		  '-d', $node->connstr('postgres'), '-f', "$dir/main_$role.sql" ],
		'>', \$out, '2>', \$err);
	$w{$name} = { h => $h, out => \$out, err => \$err };
}

# Wait for the sessions (polling), sampling the 'mem' backend's RssAnon.
my @rss;    # [time, bytes]
my $mem_pid;
my $give_up = $deadline + $PostgreSQL::Test::Utils::timeout_default;
my $next_sample = 0;
while (grep { $_->{h}->pumpable } values %w)
{
	$_->{h}->pump_nb for grep { $_->{h}->pumpable } values %w;
	($mem_pid) = ${ $w{mem}{out} } =~ /^PID (\d+)$/m unless $mem_pid;
	if ($mem_pid && time >= $next_sample && time < $deadline)
	{
		if (open(my $st, '<', "/proc/$mem_pid/status"))
		{
			my ($kb) = join('', <$st>) =~ /^RssAnon:\s+(\d+) kB/m;
			push @rss, [ time, $kb * 1024 ] if defined $kb;
			close $st;
		}
		$next_sample = time + 0.5;
	}
	last if time > $give_up;
	usleep(50_000);
}
for my $name (sort keys %w)
{
	my $h = $w{$name}{h};
	if (time > $give_up) { $h->kill_kill; }
	else { $h->finish; }
	is($h->result(0), 0, "session $name: psql ended normally");
	like(${ $w{$name}{out} }, qr/^DONE \d+$/m, "session $name: ran its script to the end");
}

# ---- what each session saw ----
my (%stmt, %errors, @bad, %ins_ok, %ins_failed, @mem);
for my $name (sort keys %w)
{
	my $user = $name !~ /^(load|drop)$/;    # sessions that use the model
	for (split /\n/, ${ $w{$name}{out} })
	{
		if (/^M \d+ (\d+) ([\d.]+)$/) { push @mem, [ $2, $1 ]; next; }
		next unless /^R (\w+) (\d+) (\w{5})(?: (.*))?$/;
		my ($kind, $i, $state, $vals) = ($1, $2, $3, $4);
		$stmt{$kind}{$state}++;
		if ($state ne '00000')
		{
			my $expected = $state eq '42704' && $user;
			$errors{ ($expected ? 'expected ' : 'UNEXPECTED ') . "$state in $kind" }++;
			$ins_failed{"$name-$i"} = 1 if $kind eq 'ins';
			next;
		}
		$ins_ok{"$name-$i"} = 1 if $kind eq 'ins';
		next unless $kind =~ /^(query|agg|row|predict)$/;
		my ($n, $nd, $na, $nb) = split / /, $vals // '';
		push @bad, "$name $kind $i: n=$n distinct=$nd a=$na b=$nb"
		  unless defined $nb && $n == $n_tx && $nd == $n_tx && ($na == $n || $nb == $n);
	}
}
diag(join("\n", "soak: $seconds s, 8 sessions; statements by kind and SQLSTATE:",
		map { my $k = $_; "  $k: " . join(', ', map { "$_ x $stmt{$k}{$_}" } sort keys %{ $stmt{$k} }) }
		  sort keys %stmt));
diag(join("\n", 'errors:', map { "  $_: $errors{$_}" } sort keys %errors)) if %errors;

# The errors as psql printed them: each must be the missing model, and there
# must be as many as the statements that reported an error.
my (%messages, $n_messages);
for my $name (sort keys %w)
{
	for (${ $w{$name}{err} } =~ /ERROR:  (\w{5}: .*)/g)
	{
		$messages{$_}++;
		$n_messages++;
	}
}
my $n_failed = 0;
$n_failed += $_ for map { my $k = $_; map { $stmt{$k}{$_} } grep { $_ ne '00000' } keys %{ $stmt{$k} } } keys %stmt;
is(join(', ', grep { !/^42704: (trigger "score_ins" on table "ins": )?model "fraud" does not exist$/ }
		sort keys %messages), '',
	'every error message is \'model "fraud" does not exist\' (the trigger\'s names itself)');
is($n_messages // 0, $n_failed, "psql printed one error per failed statement ($n_failed)");

is(join(', ', grep { /^UNEXPECTED/ } sort keys %errors), '', 'no unexpected error in any session')
  or diag(join("\n", map { "--- $_ stderr:\n" . substr(${ $w{$_}{err} }, 0, 3000) } sort keys %w));
is(join("\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)]), '',
	'every scoring statement returned every row once, all scored by one version ('
	  . scalar(@bad) . ' bad)');
for my $kind (qw(query agg row predict ins load))
{
	cmp_ok($stmt{$kind}{'00000'} // 0, '>=', 5, "at least 5 '$kind' statements succeeded");
}
cmp_ok($stmt{drop}{'00000'} // 0, '>=', 1, 'the model was dropped and reloaded at least once');

# ---- the inserted rows ----
my %in_table;
for (split /\n/, $node->safe_psql('postgres', q{
	SELECT i.tag, count(*), count(DISTINCT i.seq), count(i.score),
	       count(*) FILTER (WHERE i.score = r.a), count(*) FILTER (WHERE i.score = r.b)
	  FROM ins i LEFT JOIN ref r ON r.id = i.seq GROUP BY i.tag}))
{
	my ($tag, @v) = split /\|/;
	$in_table{$tag} = \@v;
}
my @ins_bad;
for my $tag (sort keys %ins_ok)
{
	my $v = $in_table{$tag};
	push @ins_bad, "$tag: missing" and next unless $v;
	my ($n, $nd, $scored, $na, $nb) = @$v;
	push @ins_bad, "$tag: n=$n distinct=$nd scored=$scored a=$na b=$nb"
	  unless $n == 50 && $nd == 50 && $scored == 50 && ($na == 50 || $nb == 50);
}
push @ins_bad, map { "$_: failed but has rows" } grep { $in_table{$_} } sort keys %ins_failed;
push @ins_bad, map { "$_: rows of no reported INSERT" }
  grep { !$ins_ok{$_} && !$ins_failed{$_} } sort keys %in_table;
is(join("\n", @ins_bad[0 .. ($#ins_bad < 9 ? $#ins_bad : 9)]), '',
	sprintf('inserts: %d succeeded with all 50 rows once, scored by one version; %d failed and left nothing',
		scalar(keys %ins_ok), scalar(keys %ins_failed)));

# ---- crashes and memory ----
is(join("\n", gs_server_crashes($node)), '', 'no backend crashed');

# Median of the samples ([time, value]) taken in [from, to).
sub median_between
{
	my ($samples, $from, $to) = @_;
	my @v = sort { $a <=> $b } map { $_->[1] } grep { $_->[0] >= $from && $_->[0] < $to } @$samples;
	return @v ? $v[ int($#v / 2) ] : undef;
}
my $start = $deadline - $seconds;
my $warm = $start + ($seconds < 40 ? $seconds / 4 : 10);    # end of the warm-up
my $win = ($deadline - $warm) / 4;                          # measurement windows
for my $m ([ 'memory contexts', \@mem, $ctx_bound ], [ 'RssAnon', \@rss, $rss_bound ])
{
	my ($what, $samples, $limit) = @$m;
	my $before = median_between($samples, $warm, $warm + $win);
	my $after = median_between($samples, $deadline - $win, $deadline);
	ok(defined $before && defined $after, "session mem: $what sampled after the warm-up and at the end")
	  or next;
	cmp_ok($after - $before, '<', $limit,
		sprintf('session mem: %s flat (%.2f MB -> %.2f MB, %d samples)', $what, $before / 2**20,
			$after / 2**20, scalar @$samples));
}

$node->stop;
done_testing();

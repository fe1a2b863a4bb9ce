# tests/t/050_upgrade.pl: every version of pg_gpuscore, updated to the
# current one, has exactly the objects of a fresh install.
#
# The SQL scripts (sql/, see the Makefile): the first version's install
# script is frozen (pg_gpuscore--0.1.0.sql), each later version has an update
# script from the one before (pg_gpuscore--A--B.sql), and the current
# version's install script is built from sql/pg_gpuscore.sql.in.  Every
# version between is installed by PostgreSQL itself through the update
# scripts (CREATE EXTENSION ... VERSION 'X' runs 0.1.0, then each update
# script up to X).
#
# 1. The versions are read from the installed scripts, never from a list
#    here: one chain of update scripts from the first version to the
#    control file's default_version, using every update script, equal to
#    what PostgreSQL lists in pg_available_extension_versions.
# 2. For each version: a database made at that version, with a model loaded
#    and scored, is updated to the default version by one ALTER EXTENSION
#    UPDATE.  Its extension must be indistinguishable from a fresh install:
#    the same member objects; functions with the same signature, result,
#    language, volatility, strictness, parallel safety, security definer,
#    cost, settings, body (prosrc/probin), owner, privileges and comment;
#    aggregates with the same support functions; tables, views and sequences
#    with the same columns (types, defaults, collation, storage, compression,
#    privileges, comments), constraints, indexes, triggers, policies, view
#    definitions and sequence parameters; types with the same definitions;
#    and the same tables in the dump configuration (pg_extension_config_dump).
#    The model scores exactly as before, in a new session.
# 3. From the oldest version, with models of every kind, one update script
#    at a time: the same objects again; the models score exactly as before,
#    can be replaced and dropped; a model loaded after it gets what the new
#    version gives new models (0.2.0: a forest image).
# 4. 0.4.0 -> default: a model whose file says which value is missing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GsTest;

my $fixtures = $ENV{GS_FIXTURES};
my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;

sub version_cmp
{
	my ($a, $b) = @_;
	my @a = split /\./, $a;
	my @b = split /\./, $b;
	for my $k (0 .. 2)
	{
		my $c = ($a[$k] // 0) <=> ($b[$k] // 0);
		return $c if $c;
	}
	return 0;
}

# ---- 1. the versions, from the installed scripts ----
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
my $extdir = "$sharedir/extension";
my ($default) = slurp_file("$extdir/pg_gpuscore.control") =~ /^default_version\s*=\s*'([^']+)'/m;
ok(defined $default, "the control file names a default version");
my (@full, %next, %prev);
for my $f (glob("$extdir/pg_gpuscore--*.sql"))
{
	if ($f =~ m{/pg_gpuscore--([0-9.]+)--([0-9.]+)\.sql$})
	{
		fail("one update script from $1: $1--$next{$1} and $1--$2") if exists $next{$1};
		$next{$1} = $2;
		$prev{$2} = $1;
	}
	elsif ($f =~ m{/pg_gpuscore--([0-9.]+)\.sql$})
	{
		push @full, $1;
	}
	else
	{
		fail("a script named like pg_gpuscore--X.sql or pg_gpuscore--X--Y.sql: $f");
	}
}
my @roots = grep { !exists $prev{$_} } keys %next;
is(scalar(@roots), 1, 'the update scripts start from one version: ' . join(', ', sort @roots));
my @chain = ($roots[0] // '?');
push @chain, $next{ $chain[-1] } while exists $next{ $chain[-1] } && @chain <= keys(%next);
my $first = $chain[0];
is($chain[-1], $default, "the chain of update scripts from $first ends at the default version $default");
is(scalar(@chain) - 1, scalar(keys %next), 'the chain uses every update script: ' . join(' -> ', @chain));
ok(version_cmp($chain[$_ - 1], $chain[$_]) < 0, "$chain[$_ - 1] -> $chain[$_] goes forward") for 1 .. $#chain;
# Only the first version's and the current one's install scripts: a full
# script of a version between (left by an older make install) would install
# that version directly, not through the update scripts this test is about.
is(join(' ', sort { version_cmp($a, $b) } @full), "$first $default",
	"install scripts only for the first version ($first) and the default ($default)");
is($node->safe_psql('postgres', q{
	SELECT string_agg(version, ' ') FROM (
		SELECT version FROM pg_available_extension_versions WHERE name = 'pg_gpuscore'
		ORDER BY string_to_array(version, '.')::int[]) v}),
	join(' ', @chain), 'PostgreSQL can install exactly the versions of the chain');
cmp_ok(scalar(@chain), '>=', 10, 'at least the ten versions 0.1.0 ... 0.6.0');

# ---- the description of an installed extension ----
# One line per fact, sorted; a newline inside a fact (a function's body) is
# written as \n so that each fact stays one line.
my $describe = q{
	WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'pg_gpuscore'),
	members AS (
		SELECT d.classid, d.objid FROM pg_depend d, ext
		 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.refobjid = ext.oid),
	rels AS (   -- member relations, and the relations of member composite types
		SELECT objid AS oid FROM members WHERE classid = 'pg_class'::regclass
		UNION
		SELECT t.typrelid FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
		 WHERE t.typrelid <> 0)
	SELECT string_agg(replace(line, E'\n', '\n'), E'\n' ORDER BY line) FROM (
		SELECT 'member ' || pg_describe_object(classid, objid, 0) AS line FROM members
		UNION ALL
		SELECT 'function ' || p.oid::regprocedure || ' kind ' || p.prokind::text ||
		       ' (' || pg_get_function_arguments(p.oid) || ') returns ' ||
		       coalesce(pg_get_function_result(p.oid), '-') ||
		       ' language ' || l.lanname || ' volatile ' || p.provolatile::text ||
		       ' strict ' || p.proisstrict || ' parallel ' || p.proparallel::text ||
		       ' secdef ' || p.prosecdef || ' leakproof ' || p.proleakproof ||
		       ' cost ' || p.procost || ' rows ' || p.prorows ||
		       ' support ' || p.prosupport::regprocedure::text ||
		       ' config ' || coalesce(p.proconfig::text, '-') ||
		       ' owner ' || pg_get_userbyid(p.proowner) ||
		       ' acl ' || coalesce(p.proacl::text, 'default') ||
		       ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-') ||
		       ' probin ' || coalesce(p.probin, '-') || ' prosrc ' || p.prosrc ||
		       ' sqlbody ' || coalesce(pg_get_function_sqlbody(p.oid), '-')
		  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
		  JOIN pg_language l ON l.oid = p.prolang
		UNION ALL
		SELECT 'aggregate ' || a.aggfnoid::regprocedure || ' kind ' || a.aggkind::text ||
		       ' direct ' || a.aggnumdirectargs ||
		       ' transfn ' || a.aggtransfn::regprocedure || ' finalfn ' || a.aggfinalfn::regprocedure ||
		       ' combinefn ' || a.aggcombinefn::regprocedure || ' serialfn ' || a.aggserialfn::regprocedure ||
		       ' deserialfn ' || a.aggdeserialfn::regprocedure ||
		       ' mtransfn ' || a.aggmtransfn::regprocedure || ' minvtransfn ' || a.aggminvtransfn::regprocedure ||
		       ' mfinalfn ' || a.aggmfinalfn::regprocedure ||
		       ' finalextra ' || a.aggfinalextra || ' finalmodify ' || a.aggfinalmodify::text ||
		       ' sortop ' || a.aggsortop::regoperator::text ||
		       ' transtype ' || format_type(a.aggtranstype, NULL) || ' transspace ' || a.aggtransspace ||
		       ' mtranstype ' || coalesce(format_type(nullif(a.aggmtranstype, 0), NULL), '-') ||
		       ' initval ' || coalesce(a.agginitval, '-') || ' minitval ' || coalesce(a.aggminitval, '-')
		  FROM members m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
		UNION ALL
		SELECT 'relation ' || c.oid::regclass || ' kind ' || c.relkind::text ||
		       ' persistence ' || c.relpersistence::text || ' options ' || coalesce(c.reloptions::text, '-') ||
		       ' rowsecurity ' || c.relrowsecurity || ' ' || c.relforcerowsecurity ||
		       ' owner ' || pg_get_userbyid(c.relowner) ||
		       ' acl ' || coalesce(c.relacl::text, 'default') ||
		       ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '-') ||
		       CASE WHEN c.relkind IN ('v', 'm') THEN ' view ' || pg_get_viewdef(c.oid) ELSE '' END
		  FROM rels r JOIN pg_class c ON c.oid = r.oid
		UNION ALL
		SELECT 'column ' || c.oid::regclass || '.' || a.attname || ' #' || a.attnum || ' ' ||
		       format_type(a.atttypid, a.atttypmod) || ' notnull ' || a.attnotnull ||
		       ' collation ' || coalesce(co.collname::text, '-') ||
		       ' storage ' || a.attstorage::text ||
		       ' compression ' || coalesce(nullif(a.attcompression::text, ''), '-') ||
		       ' identity ' || coalesce(nullif(a.attidentity::text, ''), '-') ||
		       ' generated ' || coalesce(nullif(a.attgenerated::text, ''), '-') ||
		       ' default ' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-') ||
		       ' acl ' || coalesce(a.attacl::text, 'default') ||
		       ' comment ' || coalesce(col_description(c.oid, a.attnum), '-')
		  FROM rels r JOIN pg_class c ON c.oid = r.oid
		  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		  LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
		  LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0
		UNION ALL
		SELECT 'sequence ' || s.seqrelid::regclass || ' ' || format_type(s.seqtypid, NULL) ||
		       ' start ' || s.seqstart || ' increment ' || s.seqincrement || ' max ' || s.seqmax ||
		       ' min ' || s.seqmin || ' cache ' || s.seqcache || ' cycle ' || s.seqcycle ||
		       coalesce((SELECT ' owned by ' || d.refobjid::regclass || '.' || at.attname
		                   FROM pg_depend d
		                   JOIN pg_attribute at ON at.attrelid = d.refobjid AND at.attnum = d.refobjsubid
		                  WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
		                    AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')), '')
		  FROM rels r JOIN pg_sequence s ON s.seqrelid = r.oid
		UNION ALL
		SELECT 'constraint ' || co.conrelid::regclass || ' ' || co.conname || ' ' || pg_get_constraintdef(co.oid) ||
		       ' deferrable ' || co.condeferrable || ' ' || co.condeferred || ' valid ' || co.convalidated
		  FROM rels r JOIN pg_constraint co ON co.conrelid = r.oid
		UNION ALL
		SELECT 'index ' || pg_get_indexdef(i.indexrelid) || ' clustered ' || i.indisclustered ||
		       ' replident ' || i.indisreplident
		  FROM rels r JOIN pg_index i ON i.indrelid = r.oid
		UNION ALL
		SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
		  FROM rels r JOIN pg_trigger t ON t.tgrelid = r.oid AND NOT t.tgisinternal
		UNION ALL
		SELECT 'policy ' || po.polrelid::regclass || ' ' || po.polname || ' ' || po.polcmd::text ||
		       ' permissive ' || po.polpermissive || ' roles ' || po.polroles::regrole[]::text ||
		       ' using ' || coalesce(pg_get_expr(po.polqual, po.polrelid), '-') ||
		       ' check ' || coalesce(pg_get_expr(po.polwithcheck, po.polrelid), '-')
		  FROM rels r JOIN pg_policy po ON po.polrelid = r.oid
		UNION ALL
		SELECT 'rule ' || pg_get_ruledef(ru.oid)
		  FROM rels r JOIN pg_rewrite ru ON ru.ev_class = r.oid AND ru.rulename <> '_RETURN'
		UNION ALL
		SELECT 'type ' || t.oid::regtype || ' type ' || t.typtype::text || ' category ' || t.typcategory::text ||
		       ' len ' || t.typlen || ' base ' || coalesce(format_type(nullif(t.typbasetype, 0), t.typtypmod), '-') ||
		       ' notnull ' || t.typnotnull || ' default ' || coalesce(t.typdefault, '-') ||
		       ' input ' || t.typinput::regprocedure || ' output ' || t.typoutput::regprocedure ||
		       ' owner ' || pg_get_userbyid(t.typowner) || ' acl ' || coalesce(t.typacl::text, 'default') ||
		       ' comment ' || coalesce(obj_description(t.oid, 'pg_type'), '-') ||
		       ' labels ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
		                                 FROM pg_enum e WHERE e.enumtypid = t.oid), '-') ||
		       ' checks ' || coalesce((SELECT string_agg(co.conname || ' ' || pg_get_constraintdef(co.oid), ', '
		                                                 ORDER BY co.conname)
		                                 FROM pg_constraint co WHERE co.contypid = t.oid), '-')
		  FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
		UNION ALL
		SELECT 'dumped ' || x::regclass || ' where ' || coalesce(e.extcondition[k], '-')
		  FROM pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS u(x, k)
		 WHERE e.extname = 'pg_gpuscore'
		UNION ALL
		SELECT 'extension ' || e.extname || ' schema ' || e.extnamespace::regnamespace ||
		       ' relocatable ' || e.extrelocatable || ' owner ' || pg_get_userbyid(e.extowner)
		  FROM pg_extension e WHERE e.extname = 'pg_gpuscore'
	) lines
};

# The description of a fresh install of the default version.
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION pg_gpuscore');
my $fresh = $node->safe_psql('fresh', $describe);
my %fresh_kinds;
$fresh_kinds{ (split / /, $_)[0] }++ for split /\n/, $fresh;
cmp_ok($fresh_kinds{$_} // 0, '>', 0, "a fresh install is described by '$_' lines ($fresh_kinds{$_})")
  for qw(member function aggregate relation column sequence constraint index dumped);

# is() the description of database $db equal to the fresh install's; lists
# the differences when not.
sub same_as_fresh
{
	my ($db, $what) = @_;
	my $got = $node->safe_psql($db, $describe);
	my $ok = is($got, $fresh, "$what: the same objects as a fresh install of $default");
	if (!$ok)
	{
		my %f = map { $_ => 1 } split /\n/, $fresh;
		my %g = map { $_ => 1 } split /\n/, $got;
		diag("only after the update: $_") for grep { !$f{$_} } sort keys %g;
		diag("only in the fresh install: $_") for grep { !$g{$_} } sort keys %f;
	}
	return $ok;
}

sub extversion
{
	my ($db) = @_;
	return $node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'pg_gpuscore'});
}

# ---- 2. every version, updated to the default by one ALTER EXTENSION UPDATE ----
my $rows_sql = q{
	CREATE TABLE rows AS
		SELECT i, ARRAY(SELECT CASE WHEN (i + k) % 17 = 0 THEN NULL
		                            ELSE ((i * 31 + k * 7) % 1000) / 37.0 - 9 END::real
		                  FROM generate_series(1, 30) k) AS f
		  FROM generate_series(1, 1000) i;
};
# Scores of every row, as one text, row by row, in a new session.
sub scores_in
{
	my ($db, $expr) = @_;
	return $node->safe_psql($db,
		"SET extra_float_digits = 3; SET pg_gpuscore.batch_calls = off; "
		  . "SELECT string_agg(i || ':' || ($expr)::text, ' ' ORDER BY i) FROM rows");
}
for my $v (@chain)
{
	(my $db = "at_$v") =~ tr/./_/;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION pg_gpuscore VERSION '$v'");
	is(extversion($db), $v, "created at $v");
	$node->safe_psql($db, "SELECT gpu_load_model('bc', pg_read_binary_file('$fixtures/models/breast_cancer.ubj'));"
		  . $rows_sql);
	my $before = scores_in($db, q{gpu_predict('bc', f)});
	like($before, qr/^1:\{.*1000:\{/, "$v: a model scores 1000 rows");
	$node->safe_psql($db, 'ALTER EXTENSION pg_gpuscore UPDATE');
	is(extversion($db), $default, "$v updated to $default");
	same_as_fresh($db, "$v updated to $default");
	is(scores_in($db, q{gpu_predict('bc', f)}), $before, "$v: the model loaded before the update scores exactly as before");
	$node->safe_psql('postgres', "DROP DATABASE $db");
}

# ---- 3. the oldest version, with models of every kind, one update at a time ----
$node->safe_psql('postgres', 'CREATE DATABASE updated');
$node->safe_psql('updated', "CREATE EXTENSION pg_gpuscore VERSION '$first'");
is(extversion('updated'), $first, "created at the oldest version, $first");
$node->safe_psql('updated', qq{
	SELECT gpu_load_model('bc', pg_read_binary_file('$fixtures/models/breast_cancer.ubj'));
	SELECT gpu_load_model('wine', pg_read_binary_file('$fixtures/models/wine_softprob.json'));
	SELECT gpu_load_model('lgb', pg_read_binary_file('$fixtures/models/lgb_multiclass.txt'));
	SELECT gpu_load_model('mlp', pg_read_binary_file('$fixtures/onnx/mlp_sigmoid.onnx'));
} . $rows_sql);
# Scores of every row by each model, as one text per model, row by row (a
# network's batched scores round differently: batch_calls.sql compares those).
my %score_sql = (
	bc => q{gpu_predict('bc', f)},
	wine => q{gpu_predict('wine', f[1:13])},
	lgb => q{gpu_predict('lgb', f[1:10])},
	mlp => q{gpu_predict('mlp', array_replace(f, NULL, 0))},
);
sub scores { return scores_in('updated', @_); }
my %before = map { $_ => scores($score_sql{$_}) } keys %score_sql;
like($before{$_}, qr/^1:\{.*1000:\{/, "scores of 1000 rows by '$_' before the update") for sort keys %before;

# one update script at a time
for my $i (1 .. $#chain)
{
	$node->safe_psql('updated', "ALTER EXTENSION pg_gpuscore UPDATE TO '$chain[$i]'");
	is(extversion('updated'), $chain[$i], "updated to $chain[$i]");
}
same_as_fresh('updated', "$first updated one version at a time to $default");

# ---- models loaded before the update ----
# (each scores() is a new session: the models are read from the table)
is(scores($score_sql{$_}), $before{$_},
	"a new session scores '$_', loaded before the update, exactly as before") for sort keys %before;
is($node->safe_psql('updated', q{SELECT string_agg(name, ',' ORDER BY name) FROM gpu_models}),
	'bc,lgb,mlp,wine', 'gpu_models lists them');
is($node->safe_psql('updated', qq{
	SELECT gpu_load_model('bc', pg_read_binary_file('$fixtures/models/breast_cancer.json'));
	SELECT gpu_drop_model('wine');
	SELECT gpu_load_model('new', pg_read_binary_file('$fixtures/models/wine_softprob.json'));
	SELECT string_agg(name || ' v' || version || ' ' || (compiled IS NOT NULL), ', ' ORDER BY name)
	  FROM gpu_model_store}),
	"2\nt\n1\nbc v2 true, lgb v1 false, mlp v1 false, new v1 true",
	'they can be replaced and dropped; models loaded after the update get forest images');
# breast_cancer.json is the model of breast_cancer.ubj; 'new' is 'wine'
is(scores($score_sql{bc}), $before{bc}, "the replaced 'bc' scores as before");
is(scores(q{gpu_predict('new', f[1:13])}), $before{wine}, "'new' scores as 'wine' did");

# ---- 4. a model whose file says which value is missing (0.5.0) ----
# XGBoost 1.x's scikit-learn API saves missing=-999 in the model; before 0.5.0
# it was scored as a number, and the forest image of such a model does not
# hold it.  Loaded at 0.4.0, updated to the default version: the image is
# dropped, so sessions parse the model and take -999 as missing; loading it
# again stores a new image and fills gpu_models.missing_value.
my $skm_file = "$fixtures/models/x17_sk_missing.json";
my $same_as_null = q{SELECT gpu_score('skm', ARRAY[0.5, -999, 1, -999, 0, 2, -999, 1]) =
                            gpu_score('skm', ARRAY[0.5, NULL, 1, NULL, 0, 2, NULL, 1])};
$node->safe_psql('postgres', 'CREATE DATABASE previous');
$node->safe_psql('previous', "CREATE EXTENSION pg_gpuscore VERSION '0.4.0'");
$node->safe_psql('previous', "SELECT gpu_load_model('skm', pg_read_binary_file('$skm_file'))");
is($node->safe_psql('previous', q{SELECT compiled IS NOT NULL FROM gpu_model_store WHERE name = 'skm'}),
	't', "at 0.4.0 the model has a forest image");
$node->safe_psql('previous', "ALTER EXTENSION pg_gpuscore UPDATE TO '$default'");
is($node->safe_psql('previous', q{SELECT compiled IS NULL FROM gpu_model_store WHERE name = 'skm'}),
	't', 'the update drops the image of a model with a scikit_learn attribute of XGBoost 1.x');
is($node->safe_psql('previous', $same_as_null), 't',
	'a new session takes -999 as missing for the model loaded before the update');
is($node->safe_psql('previous', qq{
	SELECT gpu_load_model('skm', pg_read_binary_file('$skm_file'));
	SELECT missing_value || ' ' || (compiled IS NOT NULL) FROM gpu_model_store WHERE name = 'skm'}),
	"2\n-999 true", 'loaded again: missing_value -999 and a new image');
is($node->safe_psql('previous', $same_as_null), 't', 'and it scores from the new image alike');
ok(!gs_server_crashes($node), 'no backend crashed');

done_testing();

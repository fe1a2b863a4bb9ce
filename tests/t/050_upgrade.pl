# tests/t/050_upgrade.pl: ALTER EXTENSION pg_gpuscore UPDATE through every
# update script, from the oldest version.
#
# Each version's install script is kept (sql/pg_gpuscore--X.sql) and each
# step has an update script (sql/pg_gpuscore--X--Y.sql); the control file's
# default_version is the newest.  Here: a database made at the oldest
# version, with models of every kind loaded and scored, is updated step by
# step to the default version.  Then it must be indistinguishable from a
# database where the default version was installed directly: the same member
# objects with the same definitions, columns (types, defaults, compression),
# constraints, privileges, comments and dump configuration.  The models
# loaded before the update score exactly as before, in a new session, and
# can be replaced and dropped; a model loaded after it gets what the new
# version gives new models (0.2.0: a forest image).
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

# The versions, oldest first, from the installed scripts and the control file.
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
my @scripts = map { m{pg_gpuscore--([0-9.]+)\.sql$} ? $1 : () }
  glob("$sharedir/extension/pg_gpuscore--*.sql");
my @versions = sort { version_cmp($a, $b) } @scripts;
my ($default) = `cat $sharedir/extension/pg_gpuscore.control` =~ /default_version\s*=\s*'([^']+)'/;
ok(@versions >= 2, 'at least two versions are installed: ' . join(', ', @versions));
is($versions[-1], $default, "the newest install script is the default version ($default)");
for my $i (1 .. $#versions)
{
	ok(-f "$sharedir/extension/pg_gpuscore--$versions[$i - 1]--$versions[$i].sql",
		"an update script from $versions[$i - 1] to $versions[$i]");
}

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

# ---- the oldest version, with models of every kind ----
$node->safe_psql('postgres', 'CREATE DATABASE updated');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('updated', "CREATE EXTENSION pg_gpuscore VERSION '$versions[0]'");
is($node->safe_psql('updated', q{SELECT extversion FROM pg_extension WHERE extname = 'pg_gpuscore'}),
	$versions[0], "created at the oldest version, $versions[0]");
$node->safe_psql('updated', qq{
	SELECT gpu_load_model('bc', pg_read_binary_file('$fixtures/models/breast_cancer.ubj'));
	SELECT gpu_load_model('wine', pg_read_binary_file('$fixtures/models/wine_softprob.json'));
	SELECT gpu_load_model('lgb', pg_read_binary_file('$fixtures/models/lgb_multiclass.txt'));
	SELECT gpu_load_model('mlp', pg_read_binary_file('$fixtures/onnx/mlp_sigmoid.onnx'));
	CREATE TABLE rows AS
		SELECT i, ARRAY(SELECT CASE WHEN (i + k) % 17 = 0 THEN NULL
		                            ELSE ((i * 31 + k * 7) % 1000) / 37.0 - 9 END::real
		                  FROM generate_series(1, 30) k) AS f
		  FROM generate_series(1, 1000) i;
});
# Scores of every row by each model, as one text per model, row by row (a
# network's batched scores round differently: batch_calls.sql compares those).
my %score_sql = (
	bc => q{gpu_predict('bc', f)},
	wine => q{gpu_predict('wine', f[1:13])},
	lgb => q{gpu_predict('lgb', f[1:10])},
	mlp => q{gpu_predict('mlp', array_replace(f, NULL, 0))},
);
sub scores
{
	my ($expr) = @_;
	return $node->safe_psql('updated',
		"SET extra_float_digits = 3; SET pg_gpuscore.batch_calls = off; "
		  . "SELECT string_agg(i || ':' || ($expr)::text, ' ' ORDER BY i) FROM rows");
}
my %before = map { $_ => scores($score_sql{$_}) } keys %score_sql;
like($before{$_}, qr/^1:\{.*1000:\{/, "scores of 1000 rows by '$_' before the update") for sort keys %before;

# ---- update, one script at a time ----
for my $i (1 .. $#versions)
{
	$node->safe_psql('updated', "ALTER EXTENSION pg_gpuscore UPDATE TO '$versions[$i]'");
	is($node->safe_psql('updated', q{SELECT extversion FROM pg_extension WHERE extname = 'pg_gpuscore'}),
		$versions[$i], "updated to $versions[$i]");
}

# ---- the same objects as a direct install ----
$node->safe_psql('fresh', 'CREATE EXTENSION pg_gpuscore');
my $describe = q{
	WITH members AS (
		SELECT d.classid, d.objid FROM pg_depend d
		 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_gpuscore'))
	SELECT string_agg(line, E'\n' ORDER BY line) FROM (
		SELECT 'member ' || pg_describe_object(classid, objid, 0) AS line FROM members
		UNION ALL
		SELECT 'function ' || p.oid::regprocedure || ' ' ||
		       CASE WHEN p.prokind = 'a' THEN 'aggregate' ELSE pg_get_functiondef(p.oid) END ||
		       ' acl ' || coalesce(p.proacl::text, 'default') ||
		       ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
		  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
		UNION ALL
		SELECT 'aggregate ' || a.aggfnoid::regprocedure || ' ' || a.aggtransfn || ' ' ||
		       a.aggfinalfn || ' ' || a.aggcombinefn || ' ' || a.aggserialfn || ' ' ||
		       a.aggdeserialfn || ' ' || format_type(a.aggtranstype, NULL)
		  FROM members m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
		UNION ALL
		SELECT 'relation ' || c.oid::regclass || ' ' || c.relkind::text || ' acl ' ||
		       coalesce(c.relacl::text, 'default') || ' comment ' ||
		       coalesce(obj_description(c.oid, 'pg_class'), '') ||
		       CASE WHEN c.relkind = 'v' THEN ' ' || pg_get_viewdef(c.oid) ELSE '' END
		  FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
		UNION ALL
		SELECT 'column ' || c.oid::regclass || '.' || a.attname || ' #' || a.attnum || ' ' ||
		       format_type(a.atttypid, a.atttypmod) || ' notnull ' || a.attnotnull ||
		       ' compression ' || coalesce(nullif(a.attcompression::text, ''), '-') ||
		       ' default ' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
		  FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
		  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		  LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
		UNION ALL
		SELECT 'constraint ' || co.conrelid::regclass || ' ' || pg_get_constraintdef(co.oid)
		  FROM members m JOIN pg_constraint co ON m.classid = 'pg_class'::regclass AND co.conrelid = m.objid
		UNION ALL
		SELECT 'index ' || pg_get_indexdef(i.indexrelid)
		  FROM members m JOIN pg_index i ON m.classid = 'pg_class'::regclass AND i.indrelid = m.objid
		UNION ALL
		SELECT 'trigger ' || pg_get_triggerdef(t.oid)
		  FROM members m JOIN pg_trigger t ON m.classid = 'pg_class'::regclass AND t.tgrelid = m.objid
		UNION ALL
		SELECT 'dumped ' || x::regclass || ' ' || coalesce(e.extcondition[k], '')
		  FROM pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS u(x, k)
		 WHERE e.extname = 'pg_gpuscore'
	) lines
};
my $updated = $node->safe_psql('updated', $describe);
my $fresh = $node->safe_psql('fresh', $describe);
cmp_ok(scalar(split /\n/, $fresh), '>', 50, 'the description of a fresh install has every object');
is($updated, $fresh, "the updated extension is the same as a fresh install of $default");
if ($updated ne $fresh)
{
	my %f = map { $_ => 1 } split /\n/, $fresh;
	my %u = map { $_ => 1 } split /\n/, $updated;
	diag("only after the update: $_") for grep { !$f{$_} } sort keys %u;
	diag("only in the fresh install: $_") for grep { !$u{$_} } sort keys %f;
}

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

# ---- a model whose file says which value is missing (0.5.0) ----
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

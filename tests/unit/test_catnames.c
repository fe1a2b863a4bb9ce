/*
 * test_catnames.c
 *	  Category names kept by tree ensembles (src/core/cat_names.c, the
 *	  readers xgb_cats.c and lgbm_cats.c, their forest image), against the
 *	  libraries' own predictions on rows given by name.
 *
 * Fixtures: tests/fixtures/gen_fixtures_catnames.py (XGBoost 3.2, LightGBM
 * 4.7, pandas DataFrames with category columns).  For each model, every
 * row of catnames/NAME.tsv is turned into a float row by looking its text
 * up in the model's names (an unknown name is a missing value, as LightGBM
 * makes it; XGBoost's files have none), scored, and compared with the
 * library's predict on the same DataFrame rows, within 1e-6.  Then: the
 * names' own shape, the forest image round trip, names XGBoost stores
 * damaged (not kept), and hand-made damaged "cats" objects (refused).
 *
 * CatBoost files saved without their pool keep no names but find a name by
 * CatBoost's hash of it: the hash against 603 names CatBoost hashed itself
 * (catnames/cb_hash_names.tsv), and such files' scores of rows by name
 * against CatBoost's predict (gen_fixtures_catboost_cats.py).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat_names.h"
#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_image.h"
#include "model.h"
#include "../common/test_util.h"

#define FIXTURES "../fixtures"
#define MAX_COLS 16

static void
ok(int cond, const char *label, const char *what)
{
	gs_tap(cond, label, what);
}

static GsForest *
load(const char *file, GsStatus *st)
{
	GsForest   *f = NULL;

	if (gs_load_fixture_forest(FIXTURES "/models", file, &f, st) != 1)
		return NULL;
	return f;
}

/* Any model file under tests/fixtures (dir/file); NULL when it does not load. */
static GsModel *
load_model(const char *dir, const char *file, GsStatus *st)
{
	char		path[512];
	size_t		len;
	unsigned char *b;
	GsModel    *m = NULL;

	snprintf(path, sizeof(path), FIXTURES "/%s/%s", dir, file);
	if ((b = gs_read_file(path, &len)) == NULL)
		return NULL;
	if (gs_model_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &m, st) != GS_OK)
	{
		printf("# %s: %s\n", file, st->msg);
		m = NULL;
	}
	free(b);
	return m;
}

/* Split a TSV line in place into at most max fields; their count. */
static int
split_tabs(char *line, char **field, int max)
{
	int			n = 0;
	char	   *p = line;

	line[strcspn(line, "\n")] = '\0';
	while (n < max)
	{
		field[n++] = p;
		p = strchr(p, '\t');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	return n;
}

/*
 * Score every row of catnames/case.tsv (id, the features by name, score)
 * with model m, text looked up in its names (an unknown name missing); the
 * number of rows off, -1 when the file is not there or not m's shape.
 */
static int
check_rows(const GsModel *m, const char *label, const char *tsv, int *n_rows)
{
	char		path[512],
				line[4096];
	char	   *field[MAX_COLS + 2];
	FILE	   *in;
	int			bad = 0,
				nf = m->n_features;
	const GsCatNames *cn = gs_model_cat_names(m);
	float		x[MAX_COLS],
				out[8];
	float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, 1));

	snprintf(path, sizeof(path), FIXTURES "/catnames/%s.tsv", tsv);
	in = fopen(path, "r");
	*n_rows = 0;
	if (!in || !fgets(line, sizeof(line), in) || nf > MAX_COLS ||
		split_tabs(line, field, MAX_COLS + 2) != nf + 2 || m->n_outputs > 8)
	{
		if (in)
			fclose(in);
		free(scratch);
		return -1;
	}
	while (fgets(line, sizeof(line), in))
	{
		double		want;

		if (split_tabs(line, field, MAX_COLS + 2) != nf + 2)
		{
			bad++;
			continue;
		}
		for (int j = 0; j < nf; j++)
		{
			const char *v = field[j + 1];

			/* NULL and unknown names: the feature's value for them (NaN: missing) */
			if (strcmp(v, "\\N") == 0)
				x[j] = gs_catnames_takes_text(cn, j) ? cn->unknown[j] : NAN;
			else if (gs_catnames_takes_text(cn, j))
			{
				int32_t		code = gs_catnames_code(cn, j, v, strlen(v));

				x[j] = code >= 0 ? (float) code : cn->unknown[j];
			}
			else
				x[j] = strtof(v, NULL);
		}
		want = strtod(field[nf + 1], NULL);
		gs_model_predict(m, x, 1, 1, scratch, out);
		if (!(fabs((double) out[0] - want) <= 1e-6 * fmax(1.0, fabs(want))))
		{
			if (bad < 3)
				printf("# %s row %s: got %.9g, want %.9g\n", label, field[0], (double) out[0], want);
			bad++;
		}
		(*n_rows)++;
	}
	fclose(in);
	free(scratch);
	return bad;
}

/* The names of a fixture model as the generator made them. */
static void
check_shape(const GsForest *f, const char *label, int utf8)
{
	const GsCatNames *cn = f->cat_names;
	char		what[256];

	ok(cn != NULL, label, "keeps category names");
	if (cn == NULL)
		return;
	ok(gs_catnames_count(cn, 0) == 0 && gs_catnames_count(cn, 2) == 0 &&
	   cn->kind[0] == GS_CATNAMES_NONE, label, "numerical features have no names");
	ok(gs_catnames_count(cn, 1) == 9 && cn->kind[1] == GS_CATNAMES_TEXT &&
	   strcmp(gs_catnames_name(cn, 1, 0), "") == 0 && strcmp(gs_catnames_name(cn, 1, 1), "BR") == 0,
	   label, "country: 9 names in pandas' order, the empty name first");
	ok(gs_catnames_count(cn, 3) == 5 && cn->kind[3] == GS_CATNAMES_INT &&
	   strcmp(gs_catnames_name(cn, 3, 0), "4829") == 0 && gs_catnames_code(cn, 3, "7995", 4) == 4,
	   label, "mcc: integer categories as decimal text");
	ok(gs_catnames_count(cn, 4) == 3 && gs_catnames_code(cn, 4, "web", 3) == 2 &&
	   gs_catnames_code(cn, 4, "atm", 3) == 0, label, "channel: atm, pos, web");
	ok(gs_catnames_code(cn, 1, "US", 2) == (utf8 ? 7 : 8) && gs_catnames_code(cn, 1, "", 0) == 0 &&
	   gs_catnames_code(cn, 1, "us", 2) == -1 && gs_catnames_code(cn, 1, "US ", 3) == -1 &&
	   gs_catnames_code(cn, 1, "U", 1) == -1 && gs_catnames_code(cn, 1, "US\0", 3) == -1 &&
	   gs_catnames_code(cn, 0, "US", 2) == -1 && gs_catnames_code(cn, 99, "US", 2) == -1,
	   label, "lookups: exact bytes only, case and trailing blanks matter");
	if (utf8)
	{
		snprintf(what, sizeof(what), "names outside ASCII kept (code %d, %d)",
				 gs_catnames_code(cn, 1, "C\xc3\xb4te d'Ivoire", 14),
				 gs_catnames_code(cn, 1, "\xe6\x97\xa5\xe6\x9c\xac", 6));
		ok(gs_catnames_code(cn, 1, "C\xc3\xb4te d'Ivoire", 14) == 2 &&
		   gs_catnames_code(cn, 1, "\xe6\x97\xa5\xe6\x9c\xac", 6) == 8, label, what);
	}
}

/* Write f's image and read it back: the same names, the same scores. */
static void
check_image(const GsForest *f, const char *label, const char *tsv)
{
	size_t		n = gs_forest_image_size(f);
	unsigned char *img = malloc(n);
	GsModel    *gm = NULL;
	GsForest   *g;
	GsStatus	st;
	int			same = 1,
				rows,
				damaged_refused = 1;

	gs_forest_image_write(f, img);
	if (gs_model_load_image(img, n, NULL, &gs_malloc_allocator, &gm, &st) != GS_OK)
	{
		printf("# %s\n", st.msg);
		ok(0, label, "image read back");
		free(img);
		return;
	}
	g = gm->forest;
	same = g->cat_names != NULL && g->cat_names->n_names == f->cat_names->n_names;
	for (int j = 0; same && j < f->n_features; j++)
	{
		same &= gs_catnames_count(g->cat_names, j) == gs_catnames_count(f->cat_names, j) &&
			g->cat_names->kind[j] == f->cat_names->kind[j];
		for (int c = 0; same && c < gs_catnames_count(f->cat_names, j); c++)
			same &= strcmp(gs_catnames_name(g->cat_names, j, c), gs_catnames_name(f->cat_names, j, c)) == 0;
	}
	ok(same, label, "image keeps every name and kind");
	ok(check_rows(gm, label, tsv, &rows) == 0 && rows > 100, label, "image scores the rows by name");
	gs_model_free(gm);

	/* the last bytes are names: a name duplicated, a name cut, a count off */
	{
		unsigned char *bad = malloc(n);
		GsForest   *h = NULL;

		memcpy(bad, img, n);
		bad[n - 1] = 'x';		/* last name unterminated */
		damaged_refused &= gs_forest_image_read(bad, n, NULL, &gs_malloc_allocator, &h, &st) == GS_ERR_INVALID_MODEL;
		memcpy(bad, img, n);
		bad[n - 2] = (unsigned char) 0xC3;	/* not UTF-8 */
		damaged_refused &= gs_forest_image_read(bad, n, NULL, &gs_malloc_allocator, &h, &st) == GS_ERR_INVALID_MODEL;
		damaged_refused &= gs_forest_image_read(img, n - 1, NULL, &gs_malloc_allocator, &h, &st) == GS_ERR_INVALID_MODEL;
		ok(damaged_refused && h == NULL, label, "damaged name regions are refused");
		free(bad);
	}
	free(img);
}

/* A hand-made XGBoost model whose "cats" is cats_json: its load status. */
static GsCode
load_with_cats(const char *cats_json, GsForest **f, GsStatus *st)
{
	static const char *fmt =
		"{\"learner\":{\"attributes\":{},\"feature_names\":[\"a\",\"c\"],\"feature_types\":[\"float\",\"c\"],"
		"\"gradient_booster\":{\"model\":{\"cats\":%s,\"gbtree_model_param\":{\"num_parallel_tree\":\"1\",\"num_trees\":\"1\"},"
		"\"iteration_indptr\":[0,1],\"tree_info\":[0],\"trees\":[{\"base_weights\":[0,1,2],\"categories\":[],"
		"\"categories_nodes\":[],\"categories_segments\":[],\"categories_sizes\":[],\"default_left\":[0,0,0],\"id\":0,"
		"\"left_children\":[1,-1,-1],\"loss_changes\":[1,0,0],\"parents\":[2147483647,0,0],\"right_children\":[2,-1,-1],"
		"\"split_conditions\":[0.5,1,2],\"split_indices\":[0,0,0],\"split_type\":[0,0,0],\"sum_hessian\":[2,1,1],"
		"\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"2\",\"num_nodes\":\"3\",\"size_leaf_vector\":\"1\"}}]},"
		"\"name\":\"gbtree\"},\"learner_model_param\":{\"base_score\":\"0\",\"boost_from_average\":\"1\",\"num_class\":\"0\","
		"\"num_feature\":\"2\",\"num_target\":\"1\"},\"objective\":{\"name\":\"reg:squarederror\",\"reg_loss_param\":"
		"{\"scale_pos_weight\":\"1\"}}},\"version\":[3,2,0]}";
	char		buf[4096];

	snprintf(buf, sizeof(buf), fmt, cats_json);
	return gs_forest_load((const unsigned char *) buf, strlen(buf), GS_FORMAT_XGBOOST_JSON, NULL,
						  &gs_malloc_allocator, f, st);
}

static void
check_hand_made(void)
{
	static const struct
	{
		const char *cats;
		GsCode		want;
		int			names;		/* names of feature 2 when loaded */
		const char *what;
	}			cases[] = {
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1,3],\"values\":[65,66,67]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_OK, 2, "two names A and BC"},
		{"{\"enc\":[],\"feature_segments\":[],\"sorted_idx\":[]}", GS_OK, 0, "an empty cats (trained on arrays): no names"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"type\":15,\"values\":[-3,12]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_OK, 2, "integer categories, one negative"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1,2],\"values\":[65,-61]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_OK, 0, "a byte outside ASCII: names not kept"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1,2],\"values\":[65,65]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_ERR_INVALID_MODEL, 0, "a name twice"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,2,1],\"values\":[65,66]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_ERR_INVALID_MODEL, 0, "offsets going back"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1,5],\"values\":[65,66]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_ERR_INVALID_MODEL, 0, "offsets past the values"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[1,2],\"values\":[65,66]}],\"feature_segments\":[0,0,1],\"sorted_idx\":[0]}",
		GS_ERR_INVALID_MODEL, 0, "offsets not starting at 0"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1,2],\"values\":[65,66]}],\"feature_segments\":[0,0,3],\"sorted_idx\":[0,1]}",
		GS_ERR_INVALID_MODEL, 0, "feature_segments disagreeing"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]}],\"feature_segments\":[0,0],\"sorted_idx\":[]}",
		GS_ERR_INVALID_MODEL, 0, "one entry for two features"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1],\"values\":[0]}],\"feature_segments\":[0,0,1],\"sorted_idx\":[0]}",
		GS_ERR_INVALID_MODEL, 0, "a NUL byte in a name"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"offsets\":[0,1],\"values\":[300]}],\"feature_segments\":[0,0,1],\"sorted_idx\":[0]}",
		GS_ERR_INVALID_MODEL, 0, "a value that is not a byte"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"type\":8,\"values\":[1.5,2.5]}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_ERR_INVALID_MODEL, 0, "float categories (XGBoost refuses them)"},
		{"{\"enc\":[{\"offsets\":[],\"values\":[]},{\"values\":\"AB\"}],\"feature_segments\":[0,0,2],\"sorted_idx\":[0,1]}",
		GS_ERR_INVALID_MODEL, 0, "values not an array"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		GsForest   *f = NULL;
		GsStatus	st;
		GsCode		rc = load_with_cats(cases[i].cats, &f, &st);
		int			good = rc == cases[i].want;

		if (good && rc == GS_OK)
			good = gs_catnames_count(f->cat_names, 1) == cases[i].names &&
				gs_catnames_count(f->cat_names, 0) == 0;
		if (!good)
			printf("# status %d (%s)\n", (int) rc, rc ? st.msg : "ok");
		ok(good, "hand-made cats", cases[i].what);
		if (i == 0 && f)
			ok(gs_catnames_code(f->cat_names, 1, "BC", 2) == 1 && gs_catnames_code(f->cat_names, 1, "A", 1) == 0,
			   "hand-made cats", "A is code 0, BC code 1");
		if (i == 2 && f)
			ok(gs_catnames_code(f->cat_names, 1, "-3", 2) == 0 && gs_catnames_code(f->cat_names, 1, "12", 2) == 1,
			   "hand-made cats", "-3 is code 0, 12 code 1");
		if (i == 3 && f)
			ok(strstr(f->cat_note, "outside ASCII") != NULL, "hand-made cats", "the load note says why");
		gs_forest_free(f);
	}
}

/* lgb_catnames.txt with its text edited: from -> to (the first match). */
static GsCode
load_lgbm_edited(const char *from, const char *to, GsForest **f, GsStatus *st)
{
	size_t		len;
	unsigned char *b = gs_read_file(FIXTURES "/models/lgb_catnames.txt", &len);
	char	   *at = b ? strstr((char *) b, from) : NULL;
	char	   *edited;
	size_t		n = 0;
	GsCode		rc;

	*f = NULL;
	if (at == NULL)
	{
		free(b);
		return GS_ERR_INTERNAL;
	}
	edited = malloc(len + strlen(to) + 1);
	memcpy(edited, b, (size_t) (at - (char *) b));
	n = (size_t) (at - (char *) b);
	memcpy(edited + n, to, strlen(to));
	n += strlen(to);
	memcpy(edited + n, at + strlen(from), len - (size_t) (at - (char *) b) - strlen(from));
	n += len - (size_t) (at - (char *) b) - strlen(from);
	rc = gs_forest_load((unsigned char *) edited, n, GS_FORMAT_LIGHTGBM, NULL, &gs_malloc_allocator, f, st);
	free(edited);
	free(b);
	return rc;
}

static void
check_lgbm_edits(void)
{
	static const struct
	{
		const char *from,
				   *to;
		int			country,	/* names of feature 2 when loaded, -1: no names at all */
					noted;
		const char *what;
	}			cases[] = {
		{"[categorical_feature: 1,3,4]", "[categorical_feature: 1,3]", -1, 1,
		"two categorical features, three lists: no names, a note"},
		{"[categorical_feature: 1,3,4]", "[categorical_feature: ]", -1, 1, "no categorical features: no names, a note"},
		{"[categorical_feature: 1,3,4]", "[categorical_feature: 4,3,1]", -1, 1, "indices out of order: no names, a note"},
		{"[categorical_feature: 1,3,4]", "[categorical_feature: 1,3,9]", -1, 1, "an index past the features: no names, a note"},
		{"pandas_categorical:[[", "pandas_categorical:[{", -1, 1, "a line that is not JSON: no names, a note"},
		{"pandas_categorical:[[\"\",", "pandas_categorical:[[1.5,", 0, 0, "a list with a float: that feature has no names"},
		{"pandas_categorical:[[\"\",", "pandas_categorical:[[\"BR\",", -2, 0, "a name twice: refused"},
		{"pandas_categorical:", "pandas_categorical_x:", -1, 0, "no pandas_categorical line: no names, no note"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		GsForest   *f = NULL;
		GsStatus	st;
		GsCode		rc = load_lgbm_edited(cases[i].from, cases[i].to, &f, &st);
		int			good;

		if (cases[i].country == -2)
			good = rc == GS_ERR_INVALID_MODEL;
		else if (rc != GS_OK)
			good = 0;
		else if (cases[i].country == -1)
			good = f->cat_names == NULL && (f->cat_note[0] != '\0') == cases[i].noted;
		else
			good = f->cat_names != NULL && gs_catnames_count(f->cat_names, 1) == cases[i].country &&
				gs_catnames_count(f->cat_names, 3) == 5 && (f->cat_note[0] != '\0') == cases[i].noted;
		if (!good)
			printf("# status %d (%s)\n", (int) rc, rc ? st.msg : (f ? f->cat_note : ""));
		ok(good, "edited lgb_catnames.txt", cases[i].what);
		gs_forest_free(f);
	}
}

/*
 * skl2onnx pipelines over string columns: the OneHotEncoders' categories are
 * the names; rows by name against onnxruntime (NULL and unknown names set
 * no indicator); a forest's names survive its image.
 */
static void
check_onnx(void)
{
	static const char *const files[] = {"skl_str_logreg", "skl_str_mlp", "skl_str_rf",
	"skl_str_ord_hgb", "skl_str_ord_rf", "skl_str_ord_mlp"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
	{
		char		file[64];
		GsStatus	st;
		GsModel    *m;
		const GsCatNames *cn;
		int			rows = 0,
					bad;

		snprintf(file, sizeof(file), "%s.onnx", files[i]);
		m = load_model("catnames", file, &st);
		ok(m != NULL, file, "loads");
		if (m == NULL)
			continue;
		cn = gs_model_cat_names(m);
		ok(m->n_features == 4 && m->feature_names && strcmp(m->feature_names[1], "country") == 0 &&
		   cn && gs_catnames_count(cn, 0) == 0 && gs_catnames_count(cn, 2) == 0 &&
		   gs_catnames_count(cn, 1) == 9 && gs_catnames_count(cn, 3) == 3 &&
		   gs_catnames_code(cn, 1, "C\xc3\xb4te d'Ivoire", 14) == 2 && gs_catnames_code(cn, 3, "web", 3) == 2 &&
		   gs_catnames_code(cn, 1, "", 0) == 0,
		   file, "the encoders' categories are the names of country and channel");
		ok(strstr(file, "_ord_") == NULL ||
		   (cn && cn->unknown[1] == -1.0f && cn->unknown[3] == -1.0f && isnan(cn->unknown[0])),
		   file, "an unknown name is the OrdinalEncoder's unknown_value, -1");
		bad = check_rows(m, file, files[i], &rows);
		ok(bad == 0 && rows > 120, file, "every row by name within 1e-6 of onnxruntime");
		if (m->forest)
			check_image(m->forest, file, files[i]);
		gs_model_free(m);
	}
}

/* CatBoost's own hashes of names of 0 to 300 bytes (hash, then the name in hex). */
static void
check_cb_hash(void)
{
	FILE	   *in = fopen(FIXTURES "/catnames/cb_hash_names.tsv", "r");
	char		line[2048];
	int			n = 0,
				bad = 0;

	while (in && fgets(line, sizeof(line), in))
	{
		char	   *field[2];
		char		name[1024];
		size_t		len = 0;
		unsigned long long want;

		if (split_tabs(line, field, 2) != 2)
		{
			bad++;
			continue;
		}
		want = strtoull(field[0], NULL, 10);
		for (const char *h = field[1]; h[0] && h[1] && len < sizeof(name); h += 2)
		{
			unsigned	byte;

			sscanf(h, "%2x", &byte);
			name[len++] = (char) byte;
		}
		if (gs_cb_cat_hash(name, len) != (uint32_t) want)
		{
			if (bad++ < 3)
				printf("# %zu bytes: got %u, want %llu\n", len, gs_cb_cat_hash(name, len), want);
		}
		n++;
	}
	if (in)
		fclose(in);
	ok(n == 603 && bad == 0, "cb_hash_names.tsv", "CatBoost's hash of 603 names of 0 to 300 bytes");
}

/* The hash of code c of the categorical feature read from column col. */
static int32_t
cb_hash_of(const GsCbCtrs *c, int col, int32_t code)
{
	for (int32_t j = 0; j < c->n_catf; j++)
		if (c->catf_col[j] == col)
			return c->hash[c->hash_first[j] + code];
	return 0;
}

/*
 * A CatBoost model saved without its pool against the same model saved with
 * it: its case rows (codes of the named model) given by name score as
 * CatBoost scores them, and each name finds the same hash.
 */
static void
check_cb_nopool(const char *nopool, const char *pool, const char *unseen)
{
	GsStatus	st;
	char		file[128],
				cases_path[256];
	GsModel    *m = NULL,
			   *p = NULL;
	const GsCatNames *cn,
			   *pn;
	GsCases		cs = {0};
	float	   *scratch,
				x[MAX_COLS],
				out[8];
	int			bad = 0,
				same_hash = 0,
				found = 0,
				rows;

	snprintf(file, sizeof(file), "%s_nopool.json", nopool);
	m = load_model("models", file, &st);
	snprintf(file, sizeof(file), "%s.json", pool);
	p = load_model("models", file, &st);
	snprintf(cases_path, sizeof(cases_path), FIXTURES "/cases/%s.csv", pool);
	ok(m && p && m->forest && m->forest->cb_ctrs && m->n_features == p->n_features &&
	   m->n_features <= MAX_COLS && m->n_outputs <= 8 &&
	   gs_read_cases(cases_path, p->n_features, p->n_outputs, &cs) == 0, nopool,
	   "loads without names, beside the same model with them");
	if (!m || !p || !m->forest || !m->forest->cb_ctrs || m->n_features != p->n_features ||
		m->n_features > MAX_COLS || m->n_outputs > 8 || cs.x == NULL)
		goto done;
	cn = gs_model_cat_names(m);
	pn = gs_model_cat_names(p);
	scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, 1));
	for (int j = 0; j < m->n_features; j++)
		if (gs_catnames_takes_text(pn, j))
			ok(cn->kind[j] == GS_CATNAMES_HASH && gs_catnames_name(cn, j, 0) == NULL &&
			   gs_catnames_code(cn, j, unseen, strlen(unseen)) == -1, nopool,
			   "a categorical feature keeps hashes, no names; a name never seen has no code");
		else
			ok(!gs_catnames_takes_text(cn, j), nopool, "a number is no category");
	for (rows = 0; rows < cs.n_rows; rows++)
	{
		for (int j = 0; j < m->n_features; j++)
		{
			float		v = cs.x[(size_t) rows * (size_t) m->n_features + (size_t) j];
			const char *name;
			int32_t		k;

			x[j] = v;
			if (!gs_catnames_takes_text(pn, j))
				continue;
			name = isnan(v) ? unseen : gs_catnames_name(pn, j, (int32_t) v);
			k = gs_catnames_code(cn, j, name, strlen(name));
			x[j] = k >= 0 ? (float) k : NAN;
			found += k >= 0;
			if (k >= 0 && !isnan(v))
			{
				int32_t		ph = cb_hash_of(p->forest->cb_ctrs, j, (int32_t) v);

				same_hash += cb_hash_of(m->forest->cb_ctrs, j, k) == ph &&
					(int32_t) gs_cb_cat_hash(name, strlen(name)) == ph;
			}
		}
		gs_model_predict(m, x, 1, 1, scratch, out);
		for (int o = 0; o < m->n_outputs; o++)
		{
			double		want = cs.want[(size_t) rows * (size_t) m->n_outputs + (size_t) o];

			if (!(fabs((double) out[o] - want) <= 1e-6 * fmax(1.0, fabs(want))) && bad++ < 3)
				printf("# %s row %d: got %.9g, want %.9g\n", nopool, rows, (double) out[o], want);
		}
	}
	ok(bad == 0 && rows >= 200, nopool, "every case row by name within 1e-6 of CatBoost's predict");
	ok(found > rows / 2 && same_hash == found, nopool,
	   "each name found has the hash the named file gives it, CatBoost's hash of the name");
	free(scratch);
done:
	free(cs.x);
	free(cs.want);
	gs_model_free(m);
	gs_model_free(p);
}

/* CatBoost files without names: the hash, scores by name, what is refused. */
static void
check_cb_hashed(void)
{
	GsStatus	st;
	GsModel    *m;
	int			rows = 0,
				bad;

	check_cb_hash();
	check_cb_nopool("cb_cat_binary", "cb_cat_binary", "zz-never-seen");
	check_cb_nopool("cb_cat_combo", "cb_cat_combo", "zz-never-seen");
	check_cb_nopool("cb_cat_int", "cb_cat_int", "1234");
	/* the rows pg_regress gives, by name */
	m = load_model("models", "cb_cat_combo_nopool.json", &st);
	bad = m ? check_rows(m, "cb_cat_combo_nopool.json", "cb_cat_combo", &rows) : -1;
	ok(bad == 0 && rows == 400, "cb_cat_combo_nopool.json", "the rows of catnames/cb_cat_combo.tsv by name");
	gs_model_free(m);
	m = load_model("models/bad", "cb_bad_cat_nopool_no_own.json", &st);
	ok(m == NULL && st.code == GS_ERR_UNSUPPORTED &&
	   strstr(st.msg, "feature 2 has no statistics of its own") && strstr(st.detail, "pool=Pool("),
	   "cb_bad_cat_nopool_no_own.json", "a feature whose categories cannot all be known is refused");
	gs_model_free(m);
}

/* catnames/bad/expected.txt: file|status code|message fragment, each refused so. */
static void
check_onnx_bad(void)
{
	FILE	   *in = fopen(FIXTURES "/catnames/bad/expected.txt", "r");
	char		line[512];
	int			n = 0;

	while (in && fgets(line, sizeof(line), in))
	{
		char	   *field[3];
		GsStatus	st;
		GsModel    *m = NULL;
		char		path[600];
		size_t		len;
		unsigned char *b;
		GsCode		rc;
		int			good;

		if (split_tabs(line, field, 1) < 1 || (field[1] = strchr(line, '|')) == NULL ||
			(field[2] = strchr(field[1] + 1, '|')) == NULL)
			continue;
		*field[1]++ = '\0';
		*field[2]++ = '\0';
		snprintf(path, sizeof(path), FIXTURES "/catnames/bad/%s", field[0]);
		b = gs_read_file(path, &len);
		rc = b ? gs_model_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &m, &st) : GS_ERR_INTERNAL;
		good = b && rc == (GsCode) atoi(field[1]) && m == NULL &&
			(strstr(st.msg, field[2]) != NULL || strstr(st.detail, field[2]) != NULL);
		if (!good)
			printf("# %s: status %d: %s\n", field[0], (int) rc, b ? st.msg : "unreadable");
		ok(good, field[0], "refused with the expected status and message");
		gs_model_free(m);
		free(b);
		n++;
	}
	if (in)
		fclose(in);
	ok(n >= 6, "catnames/bad", "every refusal listed was tried");
}

int
main(void)
{
	static const struct
	{
		const char *file;
		const char *tsv;
		int			utf8;
	}			models[] = {
		{"x3_catnames.json", "x3_catnames", 0},
		{"x3_catnames.ubj", "x3_catnames", 0},
		{"x3_catnames_reg.json", "x3_catnames_reg", 0},
		{"lgb_catnames.txt", "lgb_catnames", 1},
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
	{
		GsStatus	st;
		GsModel    *m = load_model("models", models[i].file, &st);
		int			rows = 0,
					bad;

		ok(m != NULL && m->forest != NULL, models[i].file, "loads");
		if (!m || !m->forest)
			continue;
		check_shape(m->forest, models[i].file, models[i].utf8);
		bad = check_rows(m, models[i].file, models[i].tsv, &rows);
		ok(bad == 0 && rows > 150, models[i].file, "every row by name within 1e-6 of the library");
		check_image(m->forest, models[i].file, models[i].tsv);
		gs_model_free(m);
	}
	check_onnx();
	check_onnx_bad();

	/* XGBoost's damaged names outside ASCII: country keeps none, the others do */
	{
		GsStatus	st;
		GsForest   *f = load("x3_catnames_utf8.json", &st);

		ok(f && f->cat_names && gs_catnames_count(f->cat_names, 1) == 0 &&
		   gs_catnames_count(f->cat_names, 3) == 5 && gs_catnames_count(f->cat_names, 4) == 3,
		   "x3_catnames_utf8.json", "country's damaged names are not kept, mcc's and channel's are");
		ok(f && strstr(f->cat_note, "feature 2 (\"country\")") != NULL, "x3_catnames_utf8.json",
		   "the load note names the feature");
		gs_forest_free(f);
	}

	/* models without names */
	{
		GsStatus	st;
		GsForest   *f = load("x3_cat_binary.json", &st);
		GsForest   *g = load("lgb_binary.txt", &st);

		ok(f && f->cat_names == NULL && g && g->cat_names == NULL, "codes-only models",
		   "trained on arrays: no names");
		gs_forest_free(f);
		gs_forest_free(g);
	}

	check_hand_made();
	check_lgbm_edits();
	check_cb_hashed();
	printf("1..%d\ncatnames: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail > 0;
}

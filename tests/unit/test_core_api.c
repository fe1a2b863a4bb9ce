/*
 * test_core_api.c
 *	  Unit tests of the scoring core's interfaces beside scoring fixtures
 *	  (test_core.c): format detection and names, XGBoost's legacy binary
 *	  format, a model's own missing value, model kinds a loader does not
 *	  read, the output transforms on edge values, interrupting every loader
 *	  of a large model, and rows turned into columns.  Prints TAP lines and
 *	  a final "N passed, N failed".  Run from tests/unit (make unittest /
 *	  make unittest-asan).
 */
#include <dirent.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "forest/forest.h"
#include "forest/forest_eval.h"
#include "forest/forest_image.h"
#include "../common/test_util.h"
#include "core_util.h"

#define FIXTURES "../fixtures"

/*
 * XGBoost's legacy binary format: detected with and without its magic, the
 * same forest as the JSON file the same XGBoost saved, and damaged files
 * refused.  (Its scores against XGBoost's: test_fixtures, xb*.model.)
 */
static void
test_binary_format(void)
{
	const char *twins[] = {"xb10_logistic", "xb15_rf", "xb17_dart", "xb17_sklearn_early",
	"xb20_softprob", "xb20_deep"};
	size_t		len;
	unsigned char *b;
	GsModelFormat fmt;
	int			truncated_ok = 1;

	for (int i = 0; i < 6; i++)
	{
		GsStatus	st1,
					st2;
		GsForest   *bin = load_fixture(twins[i], "model", &st1);
		GsForest   *json = load_fixture(twins[i], "json", &st2);
		char		want[40];

		if (bin == NULL || json == NULL)
		{
			check(0, "%s: both files load (%s)", twins[i], bin ? st2.msg : st1.msg);
			gs_forest_free(bin);
			gs_forest_free(json);
			continue;
		}
		check(bin->format == GS_FORMAT_XGBOOST_BINARY && bin->n_trees == json->n_trees &&
			  bin->n_nodes == json->n_nodes && bin->n_groups == json->n_groups &&
			  strcmp(bin->objective, json->objective) == 0 &&
			  strcmp(bin->booster, json->booster) == 0 &&
			  memcmp(bin->nodes, json->nodes, sizeof(GsNode) * (size_t) bin->n_nodes) == 0 &&
			  memcmp(bin->base_margin, json->base_margin, sizeof(float) * (size_t) bin->n_groups) == 0 &&
			  memcmp(bin->tree_group, json->tree_group, sizeof(int32_t) * (size_t) bin->n_trees) == 0,
			  "%s: the binary file gives the forest of the JSON file%s", twins[i], "");
		snprintf(want, sizeof(want), "%.*s (binary)",
				 (int) (strrchr(json->saved_by, '.') - json->saved_by), json->saved_by);
		check(strcmp(bin->saved_by, want) == 0, "%s: saved_by \"%s\"", twins[i], bin->saved_by);
		gs_forest_free(bin);
		gs_forest_free(json);
	}

	b = gs_read_file(FIXTURES "/models/xb17_logistic.model", &len);
	if (b == NULL)
	{
		check(0, "%s%s", "xb17_logistic.model present", "");
		return;
	}
	check(gs_model_detect_format(b, len) == GS_FORMAT_XGBOOST_BINARY &&
		  gs_model_format_parse("xgboost-binary", &fmt) == 0 && fmt == GS_FORMAT_XGBOOST_BINARY,
		  "%s%s", "detects the binary format by its magic; format name xgboost-binary", "");
	/* every truncation is refused as invalid, none read out of bounds (ASan) */
	for (size_t n = 0; n < len; n++)
	{
		GsForest   *f = NULL;
		GsStatus	st;

		gs_xgb_load(b, n, GS_FORMAT_XGBOOST_BINARY, NULL, &gs_malloc_allocator, &f, &st);
		if (f != NULL || st.code != GS_ERR_INVALID_MODEL)
		{
			truncated_ok = 0;
			gs_forest_free(f);
		}
	}
	check(truncated_ok, "%s%s", "every truncation of a binary model is an invalid model", "");
	/*
	 * a 1.7 header whose version was wiped: not a header of a release
	 * before 1.0 either (1.7 records num_target after the version), so
	 * invalid, and 'auto' says why as the explicit format does
	 */
	{
		GsForest   *f = NULL;
		GsStatus	st;

		memset(b + 4 + 20, 0, 8);
		gs_forest_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
		check(f == NULL && st.code == GS_ERR_INVALID_MODEL && strstr(st.detail, "no XGBoost version") != NULL,
			  "binary model whose version was wiped: %s%s", st.msg, "");
	}
	free(b);
	b = gs_read_file(FIXTURES "/models/xb10_logistic.model", &len);
	check(b != NULL && memcmp(b, "binf", 4) != 0 &&
		  gs_model_detect_format(b, len) == GS_FORMAT_XGBOOST_BINARY,
		  "%s%s", "detects XGBoost 1.0's binary files, which have no magic", "");
	free(b);
	/* before 1.0: no magic, no version; read, and said so */
	b = gs_read_file(FIXTURES "/models/xb090_logistic.model", &len);
	check(b != NULL && gs_model_detect_format(b, len) == GS_FORMAT_XGBOOST_BINARY,
		  "%s%s", "detects XGBoost 0.90's binary files (no magic, no version)", "");
	if (b)
	{
		GsForest   *f = NULL;
		GsStatus	st;

		gs_forest_load(b, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st);
		check(f != NULL && strcmp(f->saved_by, "xgboost before 1.0 (binary)") == 0,
			  "XGBoost 0.90's binary file loads, saved by \"%s\"%s", f ? f->saved_by : st.msg, "");
		gs_forest_free(f);
	}
	free(b);
}

/*
 * A missing value given at load (gpu_load_model's missing_value): the
 * Booster trained on a DMatrix(missing=-999) scores as XGBoost's predict
 * told missing=-999 does (cases x3_booster_missing_m999), and, without it,
 * as XGBoost's predict without it (test_fixtures).
 */
static void
test_missing_value(void)
{
	GsStatus	st;
	GsForest   *f = load_fixture("x3_booster_missing", "json", &st);
	GsCases		c;

	if (f == NULL || gs_read_cases(FIXTURES "/cases/x3_booster_missing_m999.csv", 8, 1, &c) != 0)
	{
		check(0, "%s%s", "x3_booster_missing.json and its _m999 cases present", "");
		gs_forest_free(f);
		return;
	}
	check(!f->has_missing_value, "%s%s", "a Booster's file holds no missing value", "");
	f->has_missing_value = true;
	f->missing_value = -999.0f;
	check_model("x3_booster_missing.json with missing_value -999", f, &c, 1e-6);
	gs_forest_free(f);
	free(c.x);
	free(c.want);
}

/*
 * LightGBM feature names become PostgreSQL text: lgb_tiny.txt with a
 * feature name of UTF-8 text beyond ASCII keeps it; with a byte that is no
 * UTF-8 in one (a file written in Latin-1, say), the model loads without
 * names, and its forest passes gs_forest_check (what the stored image's
 * reader demands).
 */
static void
test_lgbm_name_encoding(void)
{
	static const char *const names[2] = {"Colum\xc3\xa9_8", "Colum\xe9_8"};
	size_t		len;
	unsigned char *text = gs_read_file(FIXTURES "/models/lgb_tiny.txt", &len);
	char	   *at = text ? strstr((char *) text, "Column_8") : NULL;

	if (at == NULL)
	{
		check(0, "%s%s", "lgb_tiny.txt names Column_8", "");
		free(text);
		return;
	}
	for (int k = 0; k < 2; k++)
	{
		size_t		off = (size_t) (at - (char *) text),
					nl = strlen(names[k]);
		unsigned char *b = malloc(len + 8);
		GsForest   *f = NULL;
		GsStatus	st;
		GsCode		rc;

		memcpy(b, text, off);
		memcpy(b + off, names[k], nl);
		memcpy(b + off + nl, text + off + 8, len - off - 8);
		rc = gs_forest_load(b, len - 8 + nl, GS_FORMAT_LIGHTGBM, NULL, &gs_malloc_allocator, &f, &st);
		if (k == 0)
			check(rc == GS_OK && f->feature_names && strcmp(f->feature_names[8], names[0]) == 0 &&
				  gs_forest_check(f, NULL, &gs_malloc_allocator, &st) == GS_OK,
				  "%s%s", "a LightGBM feature name in UTF-8 (\"Colum\xc3\xa9_8\") is kept", "");
		else
			check(rc == GS_OK && f->feature_names == NULL &&
				  gs_forest_check(f, NULL, &gs_malloc_allocator, &st) == GS_OK,
				  "%s%s", "a LightGBM feature name that is not UTF-8: the model loads without names", "");
		gs_forest_free(f);
		free(b);
	}
	free(text);
}

/*
 * Files that are no model are named, with how to export the model: the
 * first bytes of each kind (a pickle of protocol 4, a joblib file written
 * with compress, a zip archive as torch.save and Keras 3 write, a Keras 2
 * .h5, a CatBoost .cbm or JSON model, XGBoost's and LightGBM's dumps, PMML), each left
 * undetected as a model; no model fixture is taken for one of them.
 */
static void
test_foreign_kinds(void)
{
	static const struct
	{
		const char *bytes;
		size_t		len;
		const char *kind;
	}			cases[] = {
		{"\x80\x04\x95\x10\x00\x00\x00", 7, "pickled"},
		{"\x1f\x8b\x08\x00", 4, "gzip"},
		{"PK\x03\x04\x14\x00", 6, "zip"},
		{"\x89HDF\r\n\x1a\n\x00", 9, "HDF5"},
		{"CBM1\x10\x00", 6, "CatBoost"},
		{"booster[0]:\n0:[f0<0.5] yes=1,no=2\n", 34, "text dump"},
		{"  [\n  { \"nodeid\": 0, \"depth\": 0 }]", 34, "JSON dump"},
		{"{\"name\": \"tree\", \"version\": \"v4\", \"tree_info\": []}", 50, "LightGBM's JSON dump"},
		{"<?xml version=\"1.0\"?><PMML>", 27, "PMML"},
	};
	const char *hint;
	const char *kind;
	int			named = 0,
				n = 0;
	char		counts[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const unsigned char *b = (const unsigned char *) cases[i].bytes;

		kind = gs_model_foreign_kind(b, cases[i].len, &hint);
		check(kind && strstr(kind, cases[i].kind) && hint && hint[0] &&
			  gs_model_detect_format(b, cases[i].len) == GS_FORMAT_AUTO,
			  "foreign file %s: named \"%s\", not detected as a model", cases[i].kind,
			  kind ? kind : "(none)");
	}
	check(gs_model_foreign_kind((const unsigned char *) "a,b,c\n1,2,3\n", 12, &hint) == NULL &&
		  hint == NULL, "%s%s", "a CSV file is no known kind", "");
	for (int d = 0; d < 2; d++)
	{
		const char *dname = d == 0 ? FIXTURES "/models" : FIXTURES "/onnx";
		DIR		   *dir = opendir(dname);
		struct dirent *e;

		while (dir && (e = readdir(dir)) != NULL)
		{
			char		path[1024];
			size_t		len;
			unsigned char *b;
			struct stat sb;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dname, e->d_name);
			if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
				continue;		/* bad/, trees/ */
			b = (unsigned char *) gs_read_file(path, &len);
			if (b == NULL)
				continue;
			n++;
			if (gs_model_foreign_kind(b, len, &hint) != NULL)
			{
				named++;
				fprintf(stderr, "# %s taken for a foreign file\n", e->d_name);
			}
			free(b);
		}
		if (dir)
			closedir(dir);
	}
	snprintf(counts, sizeof(counts), "%d files, %d named", n, named);
	check(n > 200 && named == 0, "no model fixture is taken for a foreign file (%s)%s", counts, "");
}

/* Format detection and names. */
static void
test_formats(void)
{
	GsModelFormat fmt;
	const char *hint;

	check(gs_model_detect_format((const unsigned char *) "  {\"learner\": 1}", 16) == GS_FORMAT_XGBOOST_JSON,
		  "%s%s", "detects JSON", "");
	check(gs_model_detect_format((const unsigned char *) "{L\0\0", 4) == GS_FORMAT_XGBOOST_UBJ,
		  "%s%s", "detects UBJ", "");
	check(gs_model_detect_format((const unsigned char *) "PK\3\4", 4) == GS_FORMAT_AUTO,
		  "%s%s", "rejects other bytes", "");
	check(gs_model_format_parse("xgboost-ubj", &fmt) == 0 && fmt == GS_FORMAT_XGBOOST_UBJ &&
		  gs_model_format_parse("LightGBM", &fmt) == 0 && fmt == GS_FORMAT_LIGHTGBM &&
		  gs_model_format_parse("pmml", &fmt) != 0, "%s%s", "parses format names", "");
	check(gs_model_detect_format((const unsigned char *) "tree\nversion=v4\n", 16) == GS_FORMAT_LIGHTGBM,
		  "%s%s", "detects LightGBM text", "");
	check(gs_model_detect_format((const unsigned char *) "{\n  \"features_info\":\n    {", 28) == GS_FORMAT_CATBOOST_JSON &&
		  gs_model_foreign_kind((const unsigned char *) "{\"features_info\": {}}", 21, &hint) == NULL,
		  "%s%s", "detects CatBoost JSON, a model and no foreign file", "");
	check(gs_model_format_parse("catboost-json", &fmt) == 0 && fmt == GS_FORMAT_CATBOOST_JSON &&
		  gs_model_format_parse("CatBoost", &fmt) == 0 && fmt == GS_FORMAT_CATBOOST_JSON &&
		  strcmp(gs_model_format_name(GS_FORMAT_CATBOOST_JSON), "catboost-json") == 0,
		  "%s%s", "parses and names catboost-json", "");
	test_foreign_kinds();
}

/* Transform helpers agree with XGBoost's definitions on edge values. */
static void
test_transforms(void)
{
	float		m[3] = {1000.0f, -1000.0f, 0.0f},
				o[3];

	gs_transform_row(GS_TRANSFORM_SOFTMAX, NULL, m, 3, o);
	check(o[0] == 1.0f && o[1] == 0.0f && isfinite(o[2]), "%s%s", "softmax stable on extreme margins", "");
	check(gs_sigmoid(-1000.0f) >= 0.0f && gs_sigmoid(1000.0f) == 1.0f && gs_sigmoid(0.0f) == 0.5f,
		  "%s%s", "sigmoid bounded", "");
	gs_transform_row(GS_TRANSFORM_ARGMAX, NULL, m, 3, o);
	check(o[0] == 0.0f, "%s%s", "argmax picks the largest margin", "");
}

/* A GsInterrupt that counts its polls and fires at poll fire_at (0: never). */
typedef struct PollCount
{
	long		polls;
	long		fire_at;
} PollCount;

static bool
poll_count(void *arg)
{
	PollCount  *p = arg;

	p->polls++;
	return p->fire_at > 0 && p->polls >= p->fire_at;
}

/*
 * A load of bytes polls its GsInterrupt (at least min_polls times), and an
 * interrupt at any of those polls stops it with GS_ERR_CANCELLED and no
 * forest (ASan's leak check: nothing built so far is left behind).
 */
static void
check_interruptible(const char *label, const unsigned char *b, size_t len, long min_polls)
{
	GsLimits	lim = gs_default_limits;
	PollCount	pc = {0, 0};
	GsForest   *f;
	GsStatus	st;
	GsCode		rc;
	char		what[128];
	long		n,
				bad = 0;

	lim.interrupt.pending = poll_count;
	lim.interrupt.arg = &pc;
	rc = gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
	n = pc.polls;
	snprintf(what, sizeof(what), "%ld polls, at least %ld", n, min_polls);
	check(rc == GS_OK && n >= min_polls, "%s: loads, checking for interrupts (%s)", label, what);
	gs_forest_free(f);
	for (long k = 1; k <= n; k++)
	{
		pc.polls = 0;
		pc.fire_at = k;
		rc = gs_forest_load(b, len, GS_FORMAT_AUTO, &lim, &gs_malloc_allocator, &f, &st);
		if (rc != GS_ERR_CANCELLED || f != NULL || pc.polls != k ||
			strcmp(st.msg, "loading the model was interrupted") != 0)
		{
			bad++;
			gs_forest_free(f);
		}
	}
	snprintf(what, sizeof(what), "%ld of %ld wrong", bad, n);
	check(bad == 0, "%s: an interrupt at any poll stops the load (%s)", label, what);
}

/*
 * LightGBM text with the trees of lgb_binary.txt repeated copies times
 * (renumbered); malloc'd, NULL when the fixture is missing.
 */
static char *
repeat_lgbm_trees(int copies, size_t *len)
{
	size_t		n;
	char	   *text = (char *) gs_read_file(FIXTURES "/models/lgb_binary.txt", &n);
	char	   *first,
			   *end,
			   *out,
			   *o;
	int			per_copy = 0;

	if (!text)
		return NULL;
	text = realloc(text, n + 1);
	text[n] = '\0';
	first = strstr(text, "\nTree=0\n") + 1;
	end = strstr(first, "\nend of trees") + 1;
	for (char *q = first; q < end; q = strchr(q, '\n') + 1)
		per_copy += strncmp(q, "Tree=", 5) == 0;
	out = o = malloc(n + (size_t) copies * (size_t) (end - first + 16 * per_copy));
	memcpy(o, text, (size_t) (first - text));
	o += first - text;
	for (int c = 0; c < copies; c++)
		for (char *q = first; q < end;)
		{
			char	   *eol = strchr(q, '\n') + 1;

			if (strncmp(q, "Tree=", 5) == 0)
				o += sprintf(o, "Tree=%d\n", c * per_copy + atoi(q + 5));
			else
			{
				memcpy(o, q, (size_t) (eol - q));
				o += eol - q;
			}
			q = eol;
		}
	memcpy(o, end, n - (size_t) (end - text));
	o += n - (size_t) (end - text);
	*len = (size_t) (o - out);
	free(text);
	return out;
}

/* Every loader of a large model can be interrupted (see GsInterrupt). */
static void
test_interrupt(void)
{
	const char *files[] = {"lossguide_deep.json", "demo_fraud.ubj"};
	size_t		len;
	char	   *lgb;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
	{
		char		path[256];
		unsigned char *b;

		snprintf(path, sizeof(path), FIXTURES "/models/%s", files[i]);
		b = gs_read_file(path, &len);
		check(b != NULL, "%s%s present", files[i], "");
		if (b)
			check_interruptible(files[i], b, len, 2);
		free(b);
	}
	/*
	 * 300 trees: one poll per 64 trees as the loader parses and builds them
	 * (one pass since the forest builder; it was two, and 8 polls)
	 */
	lgb = repeat_lgbm_trees(10, &len);
	check(lgb != NULL, "%s%s", "lgb_binary.txt present", "");
	if (lgb)
		check_interruptible("lgb_binary.txt x 10", (unsigned char *) lgb, len, 4);
	free(lgb);
}

/*
 * gs_rows_to_columns: every element lands at x[f * ld + r], for row counts
 * around its block size, several feature counts and ld > n_rows; nothing
 * is written outside the n_rows entries of each column.
 */
static void
test_rows_to_columns(void)
{
	static const size_t ns[] = {0, 1, 63, 64, 65, 200, 4099};
	static const int nfs[] = {1, 3, 30, 31};
	int			bad = 0;

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(nfs) / sizeof(nfs[0]); b++)
		{
			size_t		n = ns[a],
						ld = n + 5;
			int			nf = nfs[b];
			float	   *rows = malloc(sizeof(float) * (n * nf + 1));
			float	   *x = malloc(sizeof(float) * (ld * nf + 1));

			for (size_t i = 0; i < n * nf; i++)
				rows[i] = (float) i;
			for (size_t i = 0; i < ld * nf; i++)
				x[i] = -1.0f;
			gs_rows_to_columns(rows, n, nf, x, ld);
			for (int f = 0; f < nf; f++)
				for (size_t r = 0; r < ld; r++)
					bad += x[(size_t) f * ld + r] != (r < n ? rows[r * nf + f] : -1.0f);
			free(rows);
			free(x);
		}
	gs_tap(bad == 0, "gs_rows_to_columns", "every value in place, nothing past n_rows, 28 shapes");
}

int
main(void)
{
	test_formats();
	test_binary_format();
	test_missing_value();
	test_lgbm_name_encoding();
	test_transforms();
	test_interrupt();
	test_rows_to_columns();
	printf("1..%d\n", n_pass + n_fail);
	printf("core-api: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

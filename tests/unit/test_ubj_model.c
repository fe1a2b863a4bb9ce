/*
 * test_ubj_model.c - standalone TAP test for the UBJSON decoder
 * (src/core/frontend/common/ubj_decode.c, ubj_reader.c) on models: one laid out as
 * XGBoost's UBJWriter writes it, every prefix and mutation of documents of
 * every kind, allocation failures at each of jansson's allocations, the
 * interrupt callback, and the fixtures (test_ubj.c: documents built by
 * hand, form by form).  No test framework, no PostgreSQL, no Python.
 *
 *   make tests/unit/test_ubj_model && tests/unit/test_ubj_model [FIXTURE_DIR]
 *
 * FIXTURE_DIR defaults to the first of tests/fixtures/models,
 * ../fixtures/models and ../../tests/fixtures/models that holds
 * breast_cancer.ubj (so it works from the repo root and from tests/unit;
 * otherwise tests/fixtures/models).  If breast_cancer.ubj and
 * breast_cancer.json both exist there, the decoded .ubj is compared with
 * the jansson-loaded .json (numbers compared after rounding both sides to
 * float32); otherwise that check is reported as "# SKIP".
 */
#include "ubj_util.h"

/*
 * Build a small model laid out exactly the way XGBoost's UBJWriter writes
 * one (keys with 'L' lengths, '[#L' arrays, '[$d#L' / '[$l#L' / '[$U#L'
 * typed arrays, integers with XGBoost's smallest-marker rule, floats as
 * 'd').  Returns the bytes in *out (caller frees out->p).
 */
static void
build_xgb_model(Buf *out)
{
	Buf			b = {0};
	int			t;

	put_u8(&b, '{');
	w_key(&b, "learner");
	put_u8(&b, '{');
	w_key(&b, "attributes");
	put_u8(&b, '{');
	put_u8(&b, '}');
	w_key(&b, "feature_names");
	w_arr(&b, 0);
	w_key(&b, "feature_types");
	w_arr(&b, 0);
	w_key(&b, "gradient_booster");
	put_u8(&b, '{');
	w_key(&b, "model");
	put_u8(&b, '{');
	w_key(&b, "gbtree_model_param");
	put_u8(&b, '{');
	w_key(&b, "num_parallel_tree");
	w_str(&b, "1");
	w_key(&b, "num_trees");
	w_str(&b, "2");
	put_u8(&b, '}');
	w_key(&b, "iteration_indptr");
	{
		int32_t		ip[] = {0, 1, 2};

		w_i32s(&b, ip, 3);
	}
	w_key(&b, "tree_info");
	{
		int32_t		ti[] = {0, 0};

		w_i32s(&b, ti, 2);
	}
	w_key(&b, "trees");
	w_arr(&b, 2);
	for (t = 0; t < 2; t++)
	{
		float		bw[] = {-0.1f, 0.5f, -0.25f};
		float		lc[] = {123.456f, 0.0f, 0.0f};
		float		sc[] = {t ? 17.5f : 0.3f, 0.5f, -0.25f};
		float		sh[] = {100.0f, 60.25f, 39.75f};
		int32_t		left[] = {1, -1, -1};
		int32_t		right[] = {2, -1, -1};
		int32_t		parents[] = {2147483647, 0, 0};
		int32_t		si[] = {7 + t, 0, 0};
		int32_t		none[1] = {0};
		uint8_t		dl[] = {1, 0, 0};
		uint8_t		st[] = {0, 0, 0};

		put_u8(&b, '{');
		w_key(&b, "base_weights");
		w_f32s(&b, bw, 3);
		w_key(&b, "categories");
		w_i32s(&b, none, 0);
		w_key(&b, "categories_nodes");
		w_i32s(&b, none, 0);
		w_key(&b, "categories_segments");
		w_typed_hdr(&b, 'L', 0);
		w_key(&b, "categories_sizes");
		w_typed_hdr(&b, 'L', 0);
		w_key(&b, "default_left");
		w_u8s(&b, dl, 3);
		w_key(&b, "id");
		w_int(&b, t);
		w_key(&b, "left_children");
		w_i32s(&b, left, 3);
		w_key(&b, "loss_changes");
		w_f32s(&b, lc, 3);
		w_key(&b, "parents");
		w_i32s(&b, parents, 3);
		w_key(&b, "right_children");
		w_i32s(&b, right, 3);
		w_key(&b, "split_conditions");
		w_f32s(&b, sc, 3);
		w_key(&b, "split_indices");
		w_i32s(&b, si, 3);
		w_key(&b, "split_type");
		w_u8s(&b, st, 3);
		w_key(&b, "sum_hessian");
		w_f32s(&b, sh, 3);
		w_key(&b, "tree_param");
		put_u8(&b, '{');
		w_key(&b, "num_deleted");
		w_str(&b, "0");
		w_key(&b, "num_feature");
		w_str(&b, "30");
		w_key(&b, "num_nodes");
		w_str(&b, "3");
		w_key(&b, "size_leaf_vector");
		w_str(&b, "1");
		put_u8(&b, '}');
		put_u8(&b, '}');
	}
	put_u8(&b, '}');			/* model */
	w_key(&b, "name");
	w_str(&b, "gbtree");
	put_u8(&b, '}');			/* gradient_booster */
	w_key(&b, "learner_model_param");
	put_u8(&b, '{');
	w_key(&b, "base_score");
	w_str(&b, "6.2741650E-1");
	w_key(&b, "boost_from_average");
	w_str(&b, "1");
	w_key(&b, "num_class");
	w_str(&b, "0");
	w_key(&b, "num_feature");
	w_str(&b, "30");
	w_key(&b, "num_target");
	w_str(&b, "1");
	put_u8(&b, '}');
	w_key(&b, "objective");
	put_u8(&b, '{');
	w_key(&b, "name");
	w_str(&b, "binary:logistic");
	w_key(&b, "reg_loss_param");
	put_u8(&b, '{');
	w_key(&b, "scale_pos_weight");
	w_str(&b, "1");
	put_u8(&b, '}');
	put_u8(&b, '}');
	put_u8(&b, '}');			/* learner */
	w_key(&b, "version");
	w_arr(&b, 3);
	w_int(&b, 2);
	w_int(&b, 1);
	w_int(&b, 3);
	w_key(&b, "big");
	w_arr(&b, 4);
	w_int(&b, 1000);
	w_int(&b, -100000);
	w_int(&b, INT64_C(5000000000));
	{
		put_u8(&b, 'd');
		put_f32(&b, 1e-7f);
	}
	put_u8(&b, '}');
	*out = b;
}

/* The JSON XGBoost would write for build_xgb_model() (decimal floats). */
static const char *xgb_model_json =
"{\"learner\":{\"attributes\":{},\"feature_names\":[],\"feature_types\":[],"
"\"gradient_booster\":{\"model\":{\"gbtree_model_param\":{\"num_parallel_tree\":\"1\","
"\"num_trees\":\"2\"},\"iteration_indptr\":[0,1,2],\"tree_info\":[0,0],\"trees\":["
"{\"base_weights\":[-1E-1,5E-1,-2.5E-1],\"categories\":[],\"categories_nodes\":[],"
"\"categories_segments\":[],\"categories_sizes\":[],\"default_left\":[1,0,0],\"id\":0,"
"\"left_children\":[1,-1,-1],\"loss_changes\":[1.23456E2,0E0,0E0],"
"\"parents\":[2147483647,0,0],\"right_children\":[2,-1,-1],"
"\"split_conditions\":[3E-1,5E-1,-2.5E-1],\"split_indices\":[7,0,0],"
"\"split_type\":[0,0,0],\"sum_hessian\":[1E2,6.025E1,3.975E1],"
"\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"30\",\"num_nodes\":\"3\","
"\"size_leaf_vector\":\"1\"}},"
"{\"base_weights\":[-1E-1,5E-1,-2.5E-1],\"categories\":[],\"categories_nodes\":[],"
"\"categories_segments\":[],\"categories_sizes\":[],\"default_left\":[1,0,0],\"id\":1,"
"\"left_children\":[1,-1,-1],\"loss_changes\":[1.23456E2,0E0,0E0],"
"\"parents\":[2147483647,0,0],\"right_children\":[2,-1,-1],"
"\"split_conditions\":[1.75E1,5E-1,-2.5E-1],\"split_indices\":[8,0,0],"
"\"split_type\":[0,0,0],\"sum_hessian\":[1E2,6.025E1,3.975E1],"
"\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"30\",\"num_nodes\":\"3\","
"\"size_leaf_vector\":\"1\"}}]},\"name\":\"gbtree\"},"
"\"learner_model_param\":{\"base_score\":\"6.2741650E-1\",\"boost_from_average\":\"1\","
"\"num_class\":\"0\",\"num_feature\":\"30\",\"num_target\":\"1\"},"
"\"objective\":{\"name\":\"binary:logistic\",\"reg_loss_param\":{\"scale_pos_weight\":\"1\"}}},"
"\"version\":[2,1,3],\"big\":[1000,-100000,5000000000,1E-7]}";

/* Hand-built XGBoost-layout model: decode, compare, sweep prefixes. */
static void
test_xgb_model(void)
{
	Buf			b;
	char		err[256];
	char		where[1024] = "";
	json_error_t jerr;
	json_t	   *got,
			   *want,
			   *sc,
			   *lcn;
	GsUbjLimits lim = {.max_depth = 64, .max_elements = 1000};

	build_xgb_model(&b);
	got = decode(b.p, b.n, &lim, err, sizeof err);
	if (!check(got != NULL, "hand-built XGBoost-layout model decodes (%zu bytes)", b.n))
		diag("%s", err);
	want = json_loads(xgb_model_json, 0, &jerr);
	check(want != NULL, "expected model JSON parses");
	if (!check(got && want && json_equal_f32(got, want, where, sizeof where),
			   "XGBoost-layout model equals its JSON form (float32 compare)"))
		diag("mismatch at %s", where);
	check(got && want && !json_equal(got, want),
		  "...while exact json_equal differs (float32 values are not the decimal doubles)");

	sc = json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(
				json_object_get(got, "learner"), "gradient_booster"), "model"), "trees"), 0),
						 "split_conditions");
	check(json_is_real(json_array_get(sc, 0)) &&
		  json_real_value(json_array_get(sc, 0)) == (double) 0.3f,
		  "split_conditions[0] is the exact float32 0.3f");
	lcn = json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(
				json_object_get(got, "learner"), "gradient_booster"), "model"), "trees"), 1),
						  "left_children");
	check(json_is_integer(json_array_get(lcn, 1)) &&
		  json_integer_value(json_array_get(lcn, 1)) == -1,
		  "left_children[1] is integer -1");

	/* the float32 comparison must actually detect differences */
	{
		json_t	   *w2 = json_deep_copy(want);
		json_t	   *t0 = json_array_get(json_object_get(json_object_get(json_object_get(
				json_object_get(w2, "learner"), "gradient_booster"), "model"), "trees"), 0);

		json_array_set_new(json_object_get(t0, "split_conditions"), 0, json_real(0.30001));
		check(!json_equal_f32(got, w2, where, sizeof where),
			  "float32 compare detects a changed split condition");
		json_decref(w2);
	}

	lim.max_elements = 50;
	expect_err_lim(b.p, b.n, &lim, "UBJSON document has more than 50 values",
				   "model rejected with a too-small max_elements");

	check_all_prefixes(b.p, b.n, "the XGBoost-layout model");
	check_mutations(b.p, b.n, "the XGBoost-layout model");

	json_decref(got);
	json_decref(want);
	free(b.p);
}

/* A document that uses every supported marker, for prefix/mutation sweeps. */
static void
test_kitchen_sink_sweeps(void)
{
	static const unsigned char doc[] = {
		'{', 'i', 1, 'a', '[', 'Z', 'T', 'F', 'N', 'i', 0x80, 'U', 0xFF, 'I', 0x12, 0x34,
		'l', 1, 2, 3, 4, 'L', 1, 2, 3, 4, 5, 6, 7, 8,
		'd', 0x3F, 0xC0, 0, 0, 'D', 0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18,
		'C', 'c', 'S', 'I', 0, 3, 'x', 'y', 'z', ']',
		'U', 2, 'b', 'c', '[', '$', 'd', '#', 'i', 2, 0x3F, 0x80, 0, 0, 0x40, 0, 0, 0,
		'i', 1, 'e', '[', '#', 'U', 2, '{', '}', '[', '$', 'i', '#', 'i', 2, 1, 0xFF,
		'i', 1, 'f', '{', '$', 'l', '#', 'i', 1, 'i', 1, 'g', 0, 0, 0, 9,
		'i', 1, 'h', '{', '#', 'i', 1, 'l', 0, 0, 0, 1, 'k', '[', '$', 'S', '#', 'i', 1,
		'i', 2, 'o', 'k',
		'i', 1, 'j', '[', '$', 'C', '#', 'i', 2, 'o', 'k',
		'i', 1, 'm', '[', '$', 'D', '#', 'i', 1, 0, 0, 0, 0, 0, 0, 0, 0,
		'i', 1, 'n', '[', '$', 'I', '#', 'i', 1, 0xFF, 0xFF,
		'i', 1, 'p', '[', '$', 'L', '#', 'i', 1, 0, 0, 0, 0, 0, 0, 0, 1,
		'i', 1, 'q', '[', '$', 'U', '#', 'i', 1, 200,
		'}'
	};

	expect_json(doc, sizeof doc,
				"{\"a\":[null,true,false,-128,255,4660,16909060,72623859790382856,1.5,"
				"3.141592653589793,\"c\",\"xyz\"],\"bc\":[1.0,2.0],\"e\":[{},[1,-1]],"
				"\"f\":{\"g\":9},\"h\":{\"k\":[\"ok\"]},\"j\":[\"o\",\"k\"],\"m\":[0.0],"
				"\"n\":[-1],\"p\":[1],\"q\":[200]}",
				"kitchen-sink document with every marker");
	check_all_prefixes(doc, sizeof doc, "the kitchen-sink document");
	check_mutations(doc, sizeof doc, "the kitchen-sink document");
}

/* Allocation budget for the OOM-injection test; -1 = unlimited. */
static long g_alloc_budget = -1;

/* jansson allocator that fails once g_alloc_budget is exhausted. */
static void *
budget_malloc(size_t n)
{
	if (g_alloc_budget == 0)
		return NULL;
	if (g_alloc_budget > 0)
		g_alloc_budget--;
	return malloc(n);
}

/*
 * Fail the k-th jansson allocation for k = 0, 1, ... while decoding the
 * model: every attempt must return NULL with an out-of-memory message
 * (and, under ASan/LSan, leak nothing) until the budget suffices.
 */
static void
test_oom(void)
{
	Buf			b;
	long		k;
	long		bad = 0;
	char		first[300] = "";
	int			succeeded = 0;

	build_xgb_model(&b);
	json_set_alloc_funcs(budget_malloc, free);
	for (k = 0; k < 100000 && !succeeded; k++)
	{
		char		err[256] = "";
		json_t	   *v;

		g_alloc_budget = k;
		v = decode(b.p, b.n, NULL, err, sizeof err);
		g_alloc_budget = -1;
		if (v != NULL)
		{
			succeeded = 1;
			json_decref(v);
		}
		else if (strstr(err, "out of memory decoding UBJSON at byte") == NULL)
		{
			if (bad++ == 0)
				snprintf(first, sizeof first, "budget %ld: %s", k, err);
		}
	}
	json_set_alloc_funcs(malloc, free);
	if (!check(succeeded && bad == 0,
			   "allocation failure at each of the first %ld jansson allocations is reported cleanly",
			   k - 1))
		diag("succeeded=%d bad=%ld first %s", succeeded, bad, first);
	free(b.p);
}

/* Read a whole file; returns malloc'd bytes or NULL if absent. */
static unsigned char *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *p = NULL;
	size_t		cap = 0,
				n = 0,
				r;

	if (f == NULL)
		return NULL;
	for (;;)
	{
		if (n == cap)
		{
			unsigned char *np;

			cap = cap ? cap * 2 : 65536;
			np = realloc(p, cap);
			if (np == NULL)
			{
				free(p);
				fclose(f);
				return NULL;
			}
			p = np;
		}
		r = fread(p + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*len = n;
	return p;
}

/*
 * Compare the real XGBoost fixture <dir>/<name>.ubj with its .json twin
 * (both written by XGBoost from the same booster); "# SKIP" if either file
 * is absent.
 */
static void
test_fixture_pair(const char *dir, const char *name)
{
	char		ubj_path[1024],
				json_path[1024];
	unsigned char *ubj;
	size_t		ubj_len = 0;
	FILE	   *jf;
	json_t	   *a,
			   *b;
	json_error_t jerr;
	char		err[256];
	char		where[1024] = "";
	GsUbjLimits lim = {.max_depth = 64};

	snprintf(ubj_path, sizeof ubj_path, "%s/%s.ubj", dir, name);
	snprintf(json_path, sizeof json_path, "%s/%s.json", dir, name);
	jf = fopen(json_path, "rb");
	ubj = read_file(ubj_path, &ubj_len);
	if (jf == NULL || ubj == NULL)
	{
		g_tests++;
		printf("ok %d # SKIP fixture %s and/or %s not present\n", g_tests, ubj_path,
			   json_path);
		if (jf)
			fclose(jf);
		free(ubj);
		return;
	}
	fclose(jf);

	a = decode(ubj, ubj_len, &lim, err, sizeof err);
	if (!check(a != NULL, "fixture %s decodes (%zu bytes)", ubj_path, ubj_len))
		diag("%s", err);
	b = json_load_file(json_path, 0, &jerr);
	if (!check(b != NULL, "fixture %s loads with jansson", json_path))
		diag("%s line %d: %s", jerr.source, jerr.line, jerr.text);
	if (!check(a && b && json_equal_f32(a, b, where, sizeof where),
			   "fixture %s.ubj equals %s.json (numbers compared as float32)", name, name))
		diag("mismatch at %s", where);
	check(a && json_is_object(json_object_get(a, "learner")),
		  "fixture %s has a learner object", name);
	json_decref(a);
	json_decref(b);
	free(ubj);
}

/* Real XGBoost fixtures: the required pair, extra pairs, a bad file. */
static void
test_fixtures(const char *dir)
{
	static const char *const extra[] = {
		"tiny_base", "diabetes_reg", "fraud_binary", "wine_softprob"
	};
	char		path[1024];
	unsigned char *p;
	size_t		n = 0,
				i;

	test_fixture_pair(dir, "breast_cancer");
	for (i = 0; i < sizeof extra / sizeof extra[0]; i++)
		test_fixture_pair(dir, extra[i]);

	snprintf(path, sizeof path, "%s/bad/truncated.ubj", dir);
	p = read_file(path, &n);
	if (p == NULL)
	{
		g_tests++;
		printf("ok %d # SKIP fixture %s not present\n", g_tests, path);
		return;
	}
	expect_err(p, n, "exceeds remaining input", "fixture bad/truncated.ubj is rejected");
	free(p);
}

/* Run all groups and print the TAP plan. */
/* GsUbjLimits.interrupted: counts its calls, fires at call fire_at (0: never). */
typedef struct UbjPolls
{
	long		calls;
	long		fire_at;
} UbjPolls;

static bool
count_polls(void *arg)
{
	UbjPolls   *p = arg;

	p->calls++;
	return p->fire_at > 0 && p->calls >= p->fire_at;
}

/*
 * Long documents call the interrupt check about every GS_UBJ_POLL_VALUES
 * values, also inside one long typed float array, and a check that fires
 * stops the decoding with an error (nothing leaks: ASan build).
 */
static void
test_interrupt(void)
{
	const uint64_t n = 4 * GS_UBJ_POLL_VALUES + 10;
	Buf			typed = {0},
				plain = {0};
	char		err[256];

	put_u8(&typed, '[');
	put_u8(&typed, '$');
	put_u8(&typed, 'd');
	put_u8(&typed, '#');
	put_u8(&typed, 'L');
	put_be(&typed, n, 8);
	put_u8(&plain, '[');
	for (uint64_t i = 0; i < n; i++)
	{
		put_f32(&typed, (float) i);
		put_u8(&plain, 'i');
		put_u8(&plain, (unsigned) (i & 0x7f));
	}
	put_u8(&plain, ']');

	for (int k = 0; k < 2; k++)
	{
		const Buf  *b = k ? &plain : &typed;
		const char *what = k ? "array of int8 values" : "typed float32 array";
		UbjPolls	polls = {0, 0};
		GsUbjLimits lim = {.interrupted = count_polls, .interrupt_arg = &polls};
		json_t	   *v = gs_ubj_decode(b->p, b->n, &lim, err, sizeof err);
		long		calls = polls.calls;

		check(v != NULL && json_array_size(v) == n && calls >= 4 && calls <= 6,
			  "%s of %llu values: decoded, interrupt checked %ld times", what,
			  (unsigned long long) n, calls);
		json_decref(v);
		for (long at = 1; at <= calls; at++)
		{
			polls.calls = 0;
			polls.fire_at = at;
			v = gs_ubj_decode(b->p, b->n, &lim, err, sizeof err);
			if (!check(v == NULL && strstr(err, "UBJSON decoding interrupted at byte") != NULL,
					   "%s: interrupt at check %ld stops it (%s)", what, at, err))
				json_decref(v);
		}
	}
	free(typed.p);
	free(plain.p);
}

int

main(int argc, char **argv)
{
	/* works from the repository root and from tests/unit */
	static const char *const candidates[] = {
		"tests/fixtures/models", "../fixtures/models", "../../tests/fixtures/models"
	};
	const char *fixture_dir = candidates[0];
	size_t		i;

	if (argc > 1)
		fixture_dir = argv[1];
	else
		for (i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
		{
			char		probe[1024];
			FILE	   *f;

			snprintf(probe, sizeof probe, "%s/breast_cancer.ubj", candidates[i]);
			f = fopen(probe, "rb");
			if (f != NULL)
			{
				fclose(f);
				fixture_dir = candidates[i];
				break;
			}
		}

	test_xgb_model();
	test_kitchen_sink_sweeps();
	test_oom();
	test_interrupt();
	test_fixtures(fixture_dir);

	printf("1..%d\n", g_tests);
	if (g_failed)
		printf("# %d of %d checks failed\n", g_failed, g_tests);
	return g_failed ? 1 : 0;
}

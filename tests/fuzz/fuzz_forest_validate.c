/*
 * fuzz_forest_validate.c
 *	  libFuzzer target for the model validator: the fuzz input is read as a
 *	  recipe for a small XGBoost model (objective, base_score, dart weights
 *	  and, per tree, the raw left/right/feature/condition/default_left
 *	  arrays), which is written out as XGBoost JSON and loaded.
 *
 * Byte-level fuzzing of JSON rarely gets past the JSON syntax into the tree
 * checks; this target spends all its time there: child indices out of range,
 * cycles, shared children, lone children, features out of range, NaN, Inf
 * and overflowing thresholds, dart weights, extreme base scores, number
 * fields written as strings.  Checks:
 *	- a rejected model gives a clean status (fuzz_common.h);
 *	- an accepted one holds the forest invariants and its margins equal,
 *	  bit for bit, those of a naive walk of the raw arrays from node 0
 *	  (so the validator never accepts something the re-layout changes);
 *	- in "well-formed" mode the recipe builds a proper tree with node ids
 *	  in shuffled order, which must be accepted.
 * Built and run by tests/fuzz/run.sh; seeds in
 * tests/fuzz/corpus/fuzz_forest_validate/.  All memory is malloc'd and
 * freed per input.
 */
#include "fuzz_common.h"

#define MAX_TREES 4
#define MAX_NODES 31

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fuzz input, consumed byte by byte (zeros once it runs out). */
typedef struct Reader
{
	const uint8_t *p;
	size_t		left;
} Reader;

static uint8_t
next_byte(Reader *r)
{
	if (r->left == 0)
		return 0;
	r->left--;
	return *r->p++;
}

/* Raw arrays of one tree, as written into the model. */
typedef struct RawTree
{
	int			n;
	int			left[MAX_NODES],
				right[MAX_NODES],
				feature[MAX_NODES],
				default_left[MAX_NODES];
	double		cond[MAX_NODES];
	int			group;
	double		weight;
} RawTree;

/* Values thresholds, leaves, weights and base scores are drawn from. */
static const double value_table[16] = {
	0.0, 0.5, -0.5, 1.0, -1.0, 2.5, 1e-3, 100.0,
	-100.0, 3e38, -3e38, 1e-40, NAN, INFINITY, 1e39, 0.25
};
static const double base_table[8] = {0.5, 0.1, 1e-45, 0.99999994, 1e-30, 2.0, 0.0, -1.0};

typedef struct Objective
{
	const char *name;
	int			multi;			/* needs num_class */
} Objective;

static const Objective objectives[5] = {
	{"binary:logistic", 0}, {"reg:squarederror", 0}, {"multi:softprob", 1},
	{"count:poisson", 0}, {"multi:softmax", 1}
};

/* Growing text buffer for the JSON document. */
typedef struct Buf
{
	char	   *s;
	size_t		len,
				cap;
} Buf;

static void
put(Buf *b, const char *fmt,...)
__attribute__((format(printf, 2, 3)));

static void
put(Buf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (b->s == NULL)
	{
		b->cap = 4096;
		b->s = malloc(b->cap);
		if (!b->s)
			fuzz_fail("out of memory in the generator");
	}
	for (;;)
	{
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			fuzz_fail("vsnprintf failed");
		if ((size_t) n < b->cap - b->len)
			break;
		b->cap = b->cap * 2 + (size_t) n + 64;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			fuzz_fail("out of memory in the generator");
	}
	b->len += (size_t) n;
}

/* A double as XGBoost writes it: a number, or a bare NaN/Infinity token. */
static void
put_number(Buf *b, double v)
{
	if (isnan(v))
		put(b, "NaN");
	else if (isinf(v))
		put(b, v > 0 ? "Infinity" : "-Infinity");
	else
		put(b, "%.9g", v);
}

/* An int array, optionally with one element fewer than n. */
static void
put_ints(Buf *b, const char *key, const int *v, int n, int short_by_one)
{
	put(b, "\"%s\":[", key);
	for (int i = 0; i < n - short_by_one; i++)
		put(b, "%s%d", i ? "," : "", v[i]);
	put(b, "],");
}

/* Build a proper tree of n (odd) nodes with shuffled ids, root 0. */
static void
well_formed_tree(Reader *r, RawTree *t, int n)
{
	int			perm[MAX_NODES];
	int			leaves[MAX_NODES];
	int			n_leaves = 1,
				made = 1;

	for (int i = 0; i < n; i++)
		perm[i] = i;
	for (int i = n - 1; i > 1; i--)
	{
		int			j = 1 + next_byte(r) % i;
		int			tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	t->n = n;
	for (int i = 0; i < n; i++)
	{
		t->left[i] = t->right[i] = -1;
		t->feature[i] = 0;
		t->default_left[i] = 0;
		t->cond[i] = value_table[next_byte(r) % 9];	/* |v| <= 100: no overflow */
	}
	leaves[0] = 0;
	while (made + 2 <= n)
	{
		int			k = next_byte(r) % n_leaves;
		int			id = perm[leaves[k]];

		t->left[id] = perm[made];
		t->right[id] = perm[made + 1];
		t->feature[id] = next_byte(r);	/* reduced mod n_features later */
		t->default_left[id] = next_byte(r) & 1;
		leaves[k] = made;
		leaves[n_leaves++] = made + 1;
		made += 2;
	}
}

/* Raw arrays straight from the input: anything goes. */
static void
raw_tree(Reader *r, RawTree *t, int n, int n_features)
{
	t->n = n;
	for (int i = 0; i < n; i++)
	{
		uint8_t		flags = next_byte(r);

		if (flags & 1)
			t->left[i] = t->right[i] = -1;
		else
		{
			t->left[i] = (int) (next_byte(r) % (n + 3)) - 1;
			t->right[i] = (flags & 2) ? t->left[i] + 1 : (int) (next_byte(r) % (n + 3)) - 1;
		}
		if (flags & 4)
			t->right[i] = -(int) next_byte(r);
		t->feature[i] = next_byte(r) % (n_features + 2);
		t->default_left[i] = (flags >> 3) & 3;	/* 2 and 3 are not booleans */
		t->cond[i] = value_table[(flags >> 4) & 15];
	}
}

/*
 * Leaf that row x reaches in raw tree t by the naive rules, or -1 when the
 * walk leaves the arrays or runs longer than the tree has nodes.
 */
static int
naive_leaf(const RawTree *t, const float *x, int n_features)
{
	int			id = 0;

	for (int steps = 0; steps <= t->n; steps++)
	{
		float		v,
					thr;

		if (t->left[id] == -1 && t->right[id] == -1)
			return id;
		if (t->left[id] < 0 || t->left[id] >= t->n || t->right[id] < 0 || t->right[id] >= t->n ||
			t->feature[id] < 0 || t->feature[id] >= n_features)
			return -1;
		v = x[t->feature[id]];
		thr = (float) t->cond[id];
		if (isnan(v))
			id = t->default_left[id] ? t->left[id] : t->right[id];
		else
			id = v < thr ? t->left[id] : t->right[id];
	}
	return -1;
}

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Reader		r = {data, size};
	RawTree		trees[MAX_TREES];
	uint8_t		b0 = next_byte(&r),
				b1 = next_byte(&r),
				b2 = next_byte(&r),
				b3 = next_byte(&r);
	int			n_features = 1 + b0 % 8;
	int			n_trees = 1 + b1 % MAX_TREES;
	const Objective *obj = &objectives[b2 % 5];
	int			dart = (b2 >> 3) & 1;
	int			as_strings = (b2 >> 4) & 1;
	int			well_formed = (b2 >> 5) & 1;
	int			num_class = obj->multi ? 2 + ((b2 >> 6) & 1) : 0;
	int			n_groups = num_class > 1 ? num_class : 1;
	double		base_score = well_formed ? 0.5 : base_table[b3 & 7];
	int			short_tree = well_formed ? -1 : (int) ((b3 >> 3) & 7);
	Buf			b = {NULL, 0, 0};
	GsForest   *f = NULL;
	GsStatus	st;
	GsCode		rc;

	for (int t = 0; t < n_trees; t++)
	{
		uint8_t		tb = next_byte(&r);
		int			n = 1 + tb % MAX_NODES;

		if (well_formed)
		{
			well_formed_tree(&r, &trees[t], n | 1);
			for (int i = 0; i < trees[t].n; i++)
				trees[t].feature[i] %= n_features;
			trees[t].group = t % n_groups;
			trees[t].weight = dart ? value_table[next_byte(&r) % 8] : 1.0;
		}
		else
		{
			raw_tree(&r, &trees[t], n, n_features);
			trees[t].group = (tb >> 5) % (n_groups + 1);
			trees[t].weight = value_table[next_byte(&r) % 16];
		}
	}

	/* the model as XGBoost JSON */
	put(&b, "{\"learner\":{\"attributes\":{},\"feature_names\":[],\"feature_types\":[],");
	put(&b, "\"gradient_booster\":{");
	if (dart)
		put(&b, "\"name\":\"dart\",\"gbtree\":{\"name\":\"gbtree\",");
	else
		put(&b, "\"name\":\"gbtree\",");
	put(&b, "\"model\":{\"gbtree_model_param\":{\"num_parallel_tree\":\"1\",\"num_trees\":\"%d\"},",
		n_trees);
	put(&b, "\"iteration_indptr\":[],\"tree_info\":[");
	for (int t = 0; t < n_trees; t++)
		put(&b, "%s%d", t ? "," : "", trees[t].group);
	put(&b, "],\"trees\":[");
	for (int t = 0; t < n_trees; t++)
	{
		const RawTree *rt = &trees[t];
		int			sh = (t == short_tree) ? 1 : 0;

		put(&b, "%s{\"base_weights\":[],\"categories\":[],\"categories_nodes\":[],"
			"\"categories_segments\":[],\"categories_sizes\":[],", t ? "," : "");
		put(&b, "\"id\":%d,", t);
		put_ints(&b, "left_children", rt->left, rt->n, sh);
		put_ints(&b, "right_children", rt->right, rt->n, 0);
		put_ints(&b, "split_indices", rt->feature, rt->n, 0);
		put_ints(&b, "default_left", rt->default_left, rt->n, 0);
		put(&b, "\"split_conditions\":[");
		for (int i = 0; i < rt->n; i++)
		{
			put(&b, "%s", i ? "," : "");
			put_number(&b, rt->cond[i]);
		}
		put(&b, "],\"split_type\":[");
		for (int i = 0; i < rt->n; i++)
			put(&b, "%s0", i ? "," : "");
		if (as_strings)
			put(&b, "],\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"%d\","
				"\"num_nodes\":\"%d\",\"size_leaf_vector\":\"0\"}}", n_features, rt->n);
		else
			put(&b, "],\"tree_param\":{\"num_nodes\":%d}}", rt->n);
	}
	put(&b, "]}");
	if (dart)
	{
		put(&b, "},\"weight_drop\":[");
		for (int t = 0; t < n_trees; t++)
		{
			put(&b, "%s", t ? "," : "");
			put_number(&b, trees[t].weight);
		}
		put(&b, "]");
	}
	put(&b, "},\"learner_model_param\":{\"base_score\":\"");
	put_number(&b, base_score);
	put(&b, "\",\"num_class\":\"%d\",\"num_feature\":\"%d\",\"num_target\":\"1\"},",
		num_class, n_features);
	put(&b, "\"objective\":{\"name\":\"%s\"}},\"version\":[1,7,4]}", obj->name);

	rc = gs_xgb_load((const unsigned char *) b.s, b.len, GS_FORMAT_XGBOOST_JSON,
					 &fuzz_limits, &gs_malloc_allocator, &f, &st);
	if (rc != GS_OK)
	{
		fuzz_check_failure(rc, f, &st);
		if (well_formed)
			fuzz_fail("well-formed model rejected: %s (%s)\n%s", st.msg, st.detail, b.s);
		free(b.s);
		return 0;
	}
	fuzz_check_forest(f, &fuzz_limits);
	fuzz_score_forest(f, data, size);
	if (f->n_features != n_features || f->n_trees != n_trees || f->n_groups != n_groups)
		fuzz_fail("shape changed: %d features, %d trees, %d groups", f->n_features,
				  f->n_trees, f->n_groups);

	/* margins against the naive walk of the raw arrays */
	{
		float		x[8];
		float		cols[8];
		float		margin[3],
					expect[3];

		for (int row = 0; row < 6; row++)
		{
			for (int k = 0; k < n_features; k++)
			{
				uint8_t		v = next_byte(&r);

				x[k] = (row == 0 || (v & 0x80)) ? NAN : (float) value_table[v % 12];
				cols[k] = x[k];
			}
			for (int g = 0; g < n_groups; g++)
				expect[g] = f->base_margin[g];
			for (int t = 0; t < n_trees; t++)
			{
				int			leaf = naive_leaf(&trees[t], x, n_features);

				if (leaf < 0)
					fuzz_fail("accepted tree %d that a naive walk cannot finish\n%s", t, b.s);
				expect[trees[t].group] += (float) trees[t].cond[leaf] * (dart ? (float) trees[t].weight : 1.0f);
			}
			gs_cpu_margins(f, cols, 1, 1, margin);
			for (int g = 0; g < n_groups; g++)
				if (!fuzz_same(margin[g], expect[g]))
					fuzz_fail("row %d group %d: margin %a, naive walk %a\n%s", row, g,
							  (double) margin[g], (double) expect[g], b.s);
		}
	}
	gs_forest_free(f);
	free(b.s);
	return 0;
}

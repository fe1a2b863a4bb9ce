/*
 * image_check.h
 *	  For test_image.c: whether two forests are the same field by field, an
 *	  independent check of the invariants forest.h promises (written here,
 *	  not shared with forest_image.c), and scoring a forest on a random
 *	  batch to compare two forests bit for bit.  Include after
 *	  image_util.h.
 */
#ifndef GS_TEST_IMAGE_CHECK_H
#define GS_TEST_IMAGE_CHECK_H

#include <math.h>

#include "cat_names.h"
#include "forest/catboost_ctr.h"
#include "forest/cpu_engine.h"
#include "util/utf8_valid.h"

/* The random batch every forest is scored on: N_ROWS rows, leading dimension LD. */
#define N_ROWS 97
#define LD 104

/* Whether two forests are identical field by field; else the first difference in why. */
static inline int
forest_same(const GsForest *a, const GsForest *b, char *why, size_t whylen)
{
#define DIFF(...) do { snprintf(why, whylen, __VA_ARGS__); return 0; } while (0)
#define SAME_SCALAR(field) \
	if (a->field != b->field) \
		DIFF("%s %lld, read back %lld", #field, (long long) a->field, (long long) b->field)
#define SAME_ARRAY(field, n) \
	if ((n) > 0 && memcmp(a->field, b->field, sizeof(*a->field) * (size_t) (n)) != 0) \
		DIFF("%s differs", #field)

	SAME_SCALAR(format);
	SAME_SCALAR(n_cat_splits);
	SAME_SCALAR(split_kinds);
	SAME_SCALAR(transform);
	SAME_SCALAR(n_features);
	SAME_SCALAR(n_groups);
	SAME_SCALAR(n_outputs);
	SAME_SCALAR(n_trees);
	SAME_SCALAR(max_depth);
	SAME_SCALAR(n_nodes);
	SAME_SCALAR(n_cat_words);
	if (memcmp(a->objective, b->objective, sizeof(a->objective)) != 0)
		DIFF("objective \"%.64s\", read back \"%.64s\"", a->objective, b->objective);
	if (memcmp(a->booster, b->booster, sizeof(a->booster)) != 0)
		DIFF("booster \"%.16s\", read back \"%.16s\"", a->booster, b->booster);
	if (memcmp(a->saved_by, b->saved_by, sizeof(a->saved_by)) != 0)
		DIFF("saved_by \"%.32s\", read back \"%.32s\"", a->saved_by, b->saved_by);
	SAME_ARRAY(base_margin, a->n_groups);
	SAME_ARRAY(tree_offset, a->n_trees);
	SAME_ARRAY(tree_group, a->n_trees);
	SAME_ARRAY(tree_depth, a->n_trees);
	SAME_ARRAY(nodes, a->n_nodes);
	if ((a->leaf_lo == NULL) != (b->leaf_lo == NULL))
		DIFF("leaf_lo %s, read back %s", a->leaf_lo ? "set" : "NULL",
			 b->leaf_lo ? "set" : "NULL");
	if (a->leaf_lo)
		SAME_ARRAY(leaf_lo, a->n_nodes);
	if ((a->linear == NULL) != (b->linear == NULL))
		DIFF("linear leaves %s, read back %s", a->linear ? "set" : "NULL",
			 b->linear ? "set" : "NULL");
	if (a->linear)
	{
		if (a->linear->n_terms != b->linear->n_terms)
			DIFF("linear leaves of %lld terms, read back %lld",
				 (long long) a->linear->n_terms, (long long) b->linear->n_terms);
		SAME_ARRAY(linear->constant, a->n_nodes);
		SAME_ARRAY(linear->start, a->n_nodes + 1);
		SAME_ARRAY(linear->feature, a->linear->n_terms);
		SAME_ARRAY(linear->coef, a->linear->n_terms);
	}
	if ((a->cat_words == NULL) != (b->cat_words == NULL))
		DIFF("cat_words %s, read back %s", a->cat_words ? "set" : "NULL",
			 b->cat_words ? "set" : "NULL");
	SAME_ARRAY(cat_words, a->n_cat_words);
	if ((a->feature_names == NULL) != (b->feature_names == NULL))
		DIFF("feature names %s, read back %s", a->feature_names ? "present" : "absent",
			 b->feature_names ? "present" : "absent");
	if (a->feature_names)
		for (int32_t i = 0; i < a->n_features; i++)
			if (b->feature_names[i] == NULL || strcmp(a->feature_names[i], b->feature_names[i]) != 0)
				DIFF("feature name %d \"%s\", read back \"%s\"", i, a->feature_names[i],
					 b->feature_names[i] ? b->feature_names[i] : "(null)");
	SAME_SCALAR(n_derived);
	if ((a->cat_names == NULL) != (b->cat_names == NULL))
		DIFF("category names %s, read back %s", a->cat_names ? "present" : "absent",
			 b->cat_names ? "present" : "absent");
	if (a->cat_names)
	{
		const GsCatNames *x = a->cat_names,
				   *y = b->cat_names;

		if (x->n_names != y->n_names || x->text_bytes != y->text_bytes ||
			memcmp(x->kind, y->kind, (size_t) a->n_features) != 0 ||
			memcmp(x->first, y->first, sizeof(int32_t) * ((size_t) a->n_features + 1)) != 0 ||
			memcmp(x->unknown, y->unknown, sizeof(float) * (size_t) a->n_features) != 0 ||
			(x->text_bytes > 0 && memcmp(x->text, y->text, x->text_bytes) != 0))
			DIFF("category names differ");
		if ((x->hashes == NULL) != (y->hashes == NULL) || x->hash_name != y->hash_name ||
			(x->hashes && (memcmp(x->hash_first, y->hash_first, sizeof(int32_t) * ((size_t) a->n_features + 1)) != 0 ||
						   memcmp(x->hashes, y->hashes, sizeof(uint32_t) * (size_t) x->hash_first[a->n_features]) != 0)))
			DIFF("category names found by hash differ");
	}
	if ((a->cb_ctrs == NULL) != (b->cb_ctrs == NULL))
		DIFF("CatBoost tables %s, read back %s", a->cb_ctrs ? "present" : "absent",
			 b->cb_ctrs ? "present" : "absent");
	if (a->cb_ctrs)
	{
		const GsCbCtrs *x = a->cb_ctrs,
				   *y = b->cb_ctrs;

#define SAME_CTR(field, n) \
		if ((n) > 0 && memcmp(x->field, y->field, sizeof(*x->field) * (size_t) (n)) != 0) \
			DIFF("CatBoost %s differs", #field)
		if (x->n_input != y->n_input || x->n_catf != y->n_catf || x->n_onehot != y->n_onehot ||
			x->n_ctr != y->n_ctr || x->n_table != y->n_table || x->n_hash != y->n_hash ||
			x->n_cat_of != y->n_cat_of || x->n_bin != y->n_bin || x->n_slots != y->n_slots ||
			x->n_values != y->n_values || x->split_base != y->split_base || y->counts != NULL)
			DIFF("CatBoost table counts differ");
		SAME_CTR(catf_col, x->n_catf);
		SAME_CTR(hash, x->n_hash);
		SAME_CTR(hash_first, x->n_catf + 1);
		SAME_CTR(onehot_cat, x->n_onehot);
		SAME_CTR(onehot_hash, x->n_onehot);
		SAME_CTR(ctr, x->n_ctr);
		SAME_CTR(ctr_border_start, x->n_ctr + 1);
		SAME_CTR(ctr_border, x->ctr_border_start[x->n_ctr]);
		SAME_CTR(table_ctr_start, x->n_table + 1);
		SAME_CTR(table_ctr, x->n_ctr);
		SAME_CTR(cat_of, x->n_cat_of);
		SAME_CTR(slots, x->n_slots);
		SAME_CTR(values, x->n_values);
		for (int32_t t = 0; t < x->n_table; t++)
		{
			const GsCbTable *p = &x->table[t],
					   *q = &y->table[t];

			if (p->n_cat != q->n_cat || p->cat_off != q->cat_off || p->n_bin != q->n_bin ||
				p->bin_off != q->bin_off || p->type != q->type || p->stride != q->stride ||
				p->denominator != q->denominator || p->mask != q->mask ||
				p->slot_off != q->slot_off || p->n_buckets != q->n_buckets ||
				p->value_off != q->value_off)
				DIFF("CatBoost table %d differs", t);
		}
		for (int32_t k = 0; k < x->n_bin; k++)
			if (x->bin[k].column != y->bin[k].column || x->bin[k].onehot != y->bin[k].onehot ||
				x->bin[k].nan_right != y->bin[k].nan_right || x->bin[k].hash != y->bin[k].hash ||
				memcmp(&x->bin[k].border, &y->bin[k].border, sizeof(float)) != 0)
				DIFF("CatBoost element %d differs", k);
#undef SAME_CTR
	}
	return 1;
#undef DIFF
#undef SAME_SCALAR
#undef SAME_ARRAY
}

/*
 * An independent check of the invariants forest.h promises (written here,
 * not shared with forest_image.c; the child rule is "after the parent and
 * reached once", weaker than the breadth-first layout the loaders write).
 * 1 when f holds them, else 0 with what broke in why.
 */
static inline int
indep_check(const GsForest *f, char *why, size_t whylen)
{
	int32_t    *refs = NULL,
			   *depth = NULL;
	int32_t		deepest_all = 0;
	uint32_t	kinds = 0;
	int64_t		n_cat = 0;
	int			ok = 0;

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); goto done; } while (0)
	if (f->n_trees < 1 || f->n_groups < 1 || f->n_features < 1 || f->n_nodes < f->n_trees)
		FAIL("bad shape");
	if (f->n_outputs != (f->transform == GS_TRANSFORM_ARGMAX ? 1 : f->n_groups))
		FAIL("%d outputs for %d groups", f->n_outputs, f->n_groups);
	if (memchr(f->objective, '\0', sizeof(f->objective)) == NULL ||
		memchr(f->booster, '\0', sizeof(f->booster)) == NULL ||
		memchr(f->saved_by, '\0', sizeof(f->saved_by)) == NULL)
		FAIL("unterminated name");
	for (int32_t g = 0; g < f->n_groups; g++)
		if (!isfinite(f->base_margin[g]))
			FAIL("base margin %d not finite", g);
	if (f->feature_names)
		for (int32_t i = 0; i < f->n_features; i++)
			if (f->feature_names[i] == NULL ||
				!gs_utf8_valid((const unsigned char *) f->feature_names[i],
							   strlen(f->feature_names[i])))
				FAIL("feature name %d missing or not UTF-8", i);
	if ((f->cat_words == NULL) != (f->n_cat_words == 0) || f->n_cat_words < 0)
		FAIL("cat_words and n_cat_words disagree");
	refs = calloc((size_t) f->n_nodes, sizeof(int32_t));
	depth = calloc((size_t) f->n_nodes, sizeof(int32_t));
	if (!refs || !depth)
		FAIL("out of memory in the checker");
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		off = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;
		int64_t		size = end - off;
		int32_t		deepest = 0;

		if ((t == 0 && off != 0) || size < 1 || end > f->n_nodes)
			FAIL("tree %d spans [%lld, %lld)", t, (long long) off, (long long) end);
		if (f->tree_group[t] < 0 || f->tree_group[t] >= f->n_groups)
			FAIL("tree %d in group %d", t, f->tree_group[t]);
		for (int64_t i = 0; i < size; i++)
		{
			GsNode		n = f->nodes[off + i];

			if (i > 0 && refs[off + i] != 1)
				FAIL("tree %d node %lld reached %d times", t, (long long) i, refs[off + i]);
			if (n.info & GS_NODE_LEAF)
			{
				if (!isfinite(n.value))
					FAIL("tree %d leaf %lld not finite", t, (long long) i);
				if (n.info & (GS_NODE_FEATURE_MASK | GS_NODE_CATEGORICAL))
					FAIL("tree %d leaf %lld has split bits", t, (long long) i);
				/* the low part: at most half a float ulp of the leaf (or of 2^-126) */
				if (f->leaf_lo &&
					!(fabsf(f->leaf_lo[off + i]) <=
					  (fabsf(n.value) < FLT_MIN ? FLT_MIN : fabsf(n.value)) * FLT_EPSILON))
					FAIL("tree %d leaf %lld has low part %g for %g", t, (long long) i,
						 f->leaf_lo[off + i], n.value);
				if (depth[off + i] > deepest)
					deepest = depth[off + i];
				continue;
			}
			if ((int64_t) n.left <= i || (int64_t) n.left + 1 >= size)
				FAIL("tree %d node %lld has children %u of %lld", t, (long long) i, n.left,
					 (long long) size);
			if (f->leaf_lo && f->leaf_lo[off + i] != 0.0f)
				FAIL("tree %d split %lld has a leaf's low part", t, (long long) i);
			if ((int64_t) (n.info & GS_NODE_FEATURE_MASK) >= (int64_t) f->n_features + f->n_derived)
				FAIL("tree %d node %lld splits on feature %u", t, (long long) i,
					 n.info & GS_NODE_FEATURE_MASK);
			if (n.info & GS_NODE_CATEGORICAL)
			{
				uint32_t	at;
				int64_t		words;

				memcpy(&at, &n.value, sizeof(at));
				if ((int64_t) at >= f->n_cat_words)
					FAIL("tree %d node %lld: category set at %u", t, (long long) i, at);
				words = f->cat_words[at] & GS_CAT_WORDS_MASK;
				if (words > (int64_t) GS_CAT_MAX_WORDS || (int64_t) at + 1 + words > f->n_cat_words)
					FAIL("tree %d node %lld: category set past cat_words", t, (long long) i);
				n_cat++;
			}
			else if (isnan(n.value))
				FAIL("tree %d node %lld: NaN threshold", t, (long long) i);
			kinds |= n.info & (GS_NODE_CATEGORICAL | GS_NODE_ZERO_MISSING | GS_NODE_EQUAL);
			refs[off + n.left]++;
			refs[off + n.left + 1]++;
			depth[off + n.left] = depth[off + n.left + 1] = depth[off + i] + 1;
		}
		if (deepest != f->tree_depth[t])
			FAIL("tree %d is %d deep, says %d", t, deepest, f->tree_depth[t]);
		if (deepest > deepest_all)
			deepest_all = deepest;
	}
	if (deepest_all != f->max_depth)
		FAIL("forest is %d deep, says %d", deepest_all, f->max_depth);
	if (kinds != f->split_kinds || n_cat != f->n_cat_splits)
		FAIL("split kinds %x / %lld categorical, says %x / %d", kinds, (long long) n_cat,
			 f->split_kinds, f->n_cat_splits);
	if (f->linear)
	{
		/* each node's terms inside the term arrays, splits without any */
		const GsLinearLeaves *lin = f->linear;

		if (f->leaf_lo == NULL)
			FAIL("linear leaves without double leaves");
		for (int64_t i = 0; i < f->n_nodes; i++)
		{
			int			leaf = (f->nodes[i].info & GS_NODE_LEAF) != 0;

			if (lin->start[i] > lin->start[i + 1] || (int64_t) lin->start[i + 1] > lin->n_terms)
				FAIL("node %lld's terms run from %u to %u of %lld", (long long) i,
					 lin->start[i], lin->start[i + 1], (long long) lin->n_terms);
			if (!leaf && (lin->start[i] != lin->start[i + 1] || lin->constant[i] != 0.0))
				FAIL("split node %lld has a leaf model", (long long) i);
			if (!isfinite(lin->constant[i]))
				FAIL("node %lld's constant is not finite", (long long) i);
		}
		for (int64_t k = 0; k < lin->n_terms; k++)
			if (lin->feature[k] < 0 || lin->feature[k] >= f->n_features || !isfinite(lin->coef[k]))
				FAIL("term %lld: feature %d of %d, coefficient %g", (long long) k,
					 lin->feature[k], f->n_features, lin->coef[k]);
	}
	if (f->cb_ctrs)
	{
		/* what expanding a row reads: every index inside its array, a free slot per table */
		const GsCbCtrs *c = f->cb_ctrs;

		if (c->n_input != f->n_features || c->n_onehot + c->n_ctr != f->n_derived ||
			c->hash_first[0] != 0 || c->hash_first[c->n_catf] != c->n_hash ||
			c->table_ctr_start[0] != 0 || c->table_ctr_start[c->n_table] != c->n_ctr)
			FAIL("CatBoost tables: counts");
		for (int32_t j = 0; j < c->n_catf; j++)
			if (c->catf_col[j] < 0 || c->catf_col[j] >= c->n_input ||
				c->hash_first[j + 1] < c->hash_first[j] ||
				f->cat_names == NULL || gs_catnames_count(f->cat_names, c->catf_col[j]) !=
				c->hash_first[j + 1] - c->hash_first[j])
				FAIL("CatBoost categorical feature %d", j);
		for (int32_t k = 0; k < c->n_onehot; k++)
			if (c->onehot_cat[k] < 0 || c->onehot_cat[k] >= c->n_catf)
				FAIL("CatBoost one-hot value %d", k);
		for (int32_t k = 0; k < c->n_cat_of; k++)
			if (c->cat_of[k] < 0 || c->cat_of[k] >= c->n_catf)
				FAIL("CatBoost projection element %d", k);
		for (int32_t k = 0; k < c->n_bin; k++)
			if (c->bin[k].column < 0 || c->bin[k].column >= (c->bin[k].onehot ? c->n_catf : c->n_input))
				FAIL("CatBoost binarized element %d", k);
		for (int32_t t = 0; t < c->n_table; t++)
		{
			const GsCbTable *tb = &c->table[t];
			int32_t		k0 = c->table_ctr_start[t],
						k1 = c->table_ctr_start[t + 1];
			int64_t		empty = 0;

			if (k1 < k0 || tb->cat_off < 0 || tb->n_cat < 0 || tb->cat_off + (int64_t) tb->n_cat > c->n_cat_of ||
				tb->bin_off < 0 || tb->n_bin < 0 || tb->bin_off + (int64_t) tb->n_bin > c->n_bin ||
				tb->n_buckets < 0 || tb->value_off < 0 ||
				tb->value_off + (tb->n_buckets + 1) * (k1 - k0) > c->n_values ||
				(tb->mask & (tb->mask + 1)) != 0 || tb->slot_off < 0 ||
				tb->mask >= (uint64_t) c->n_slots || tb->slot_off + (int64_t) tb->mask >= c->n_slots)
				FAIL("CatBoost table %d: ranges", t);
			for (int32_t i = k0; i < k1; i++)
				if (c->table_ctr[i] < 0 || c->table_ctr[i] >= c->n_ctr)
					FAIL("CatBoost table %d: CTR %d", t, c->table_ctr[i]);
			for (uint64_t sl = 0; sl <= tb->mask; sl++)
			{
				const GsCbSlot *e = &c->slots[tb->slot_off + (int64_t) sl];

				if (e->key == GS_CB_EMPTY)
					empty++;
				else if (e->bucket < 0 || e->bucket >= tb->n_buckets)
					FAIL("CatBoost table %d: bucket %lld", t, (long long) e->bucket);
			}
			if (empty == 0)
				FAIL("CatBoost table %d: no free slot", t);
		}
	}
	ok = 1;
done:
	free(refs);
	free(depth);
	return ok;
#undef FAIL
}

/*
 * For a forest with CatBoost tables: its categorical columns of x (n rows,
 * leading dimension ld) as codes, mostly of categories it has (so that its
 * tables are looked up), some past them, some NaN.
 */
static inline void
codes_for(const GsForest *f, float *x, size_t n, size_t ld)
{
	const GsCbCtrs *c = f->cb_ctrs;

	for (int32_t j = 0; c && j < c->n_catf; j++)
		for (size_t r = 0; r < n; r++)
		{
			double		u = gs_rnd();
			int32_t		m = c->hash_first[j + 1] - c->hash_first[j];

			x[(size_t) c->catf_col[j] * ld + r] = u < 0.05 ? NAN : u < 0.1 ? (float) m :
				(float) (int32_t) (gs_rnd() * m);
		}
}

/*
 * A random batch for f (column-major, LD x its features and derived ones;
 * codes in a CatBoost model's categorical columns); malloc'd.
 */
static inline float *
batch_for(const GsForest *f)
{
	float	   *x = malloc(sizeof(float) * ((size_t) f->n_features + (size_t) f->n_derived) * LD);

	gs_fill_batch(f, x, N_ROWS, LD);
	codes_for(f, x, N_ROWS, LD);
	return x;
}

/*
 * The batch the trees of f read for x (n rows, leading dimension ld): x
 * itself, or for a forest with CatBoost tables its rows expanded into *xe
 * (malloc'd; *ld_out n).
 */
static inline const float *
rows_for(const GsForest *f, const float *x, size_t n, size_t ld, float **xe, size_t *ld_out)
{
	*xe = NULL;
	*ld_out = ld;
	if (f->cb_ctrs == NULL)
		return x;
	*xe = malloc(sizeof(float) * ((size_t) f->n_features + (size_t) f->n_derived) * n);
	gs_cb_ctrs_expand(f->cb_ctrs, x, ld, n, *xe);
	*ld_out = n;
	return *xe;
}

/*
 * Score a few random rows of f, as a batch and one by one, for the forests
 * read from damaged images: they must score without a fault.  Returns
 * whether both paths agree.
 */
static inline int
score_a_few(const GsForest *f)
{
	enum
	{
	N = 5};
	size_t		nf = (size_t) f->n_features + (size_t) f->n_derived,
				ldx;
	float	   *xe;
	const float *xr;
	float	   *x = malloc(sizeof(float) * nf * N),
			   *row = malloc(sizeof(float) * nf),
			   *margin = malloc(sizeof(float) * (size_t) f->n_groups * N),
			   *out = malloc(sizeof(float) * (size_t) f->n_outputs * N),
			   *out1 = malloc(sizeof(float) * (size_t) f->n_outputs);
	int			same = 1;

	gs_fill_batch(f, x, N, N);
	codes_for(f, x, N, N);
	xr = rows_for(f, x, N, N, &xe, &ldx);
	gs_cpu_predict(f, xr, ldx, N, margin, out);
	for (size_t r = 0; r < N; r++)
	{
		for (size_t k = 0; k < nf; k++)
			row[k] = xr[k * ldx + r];
		gs_cpu_predict_row(f, row, margin, out1);
		same &= memcmp(out1, out + r * (size_t) f->n_outputs,
					   sizeof(float) * (size_t) f->n_outputs) == 0;
	}
	free(x);
	free(xe);
	free(row);
	free(margin);
	free(out);
	free(out1);
	return same;
}

/*
 * Margins then outputs of f on batch x, into one malloc'd array of
 * N_ROWS * (n_groups + n_outputs) floats.
 */
static inline float *
scores_of(const GsForest *f, const float *x)
{
	size_t		ng = (size_t) N_ROWS * (size_t) f->n_groups;
	float	   *s = malloc(sizeof(float) * (ng + (size_t) N_ROWS * (size_t) f->n_outputs));
	float	   *scratch = malloc(sizeof(float) * ng);
	float	   *xe;
	size_t		ld;
	const float *xr = rows_for(f, x, N_ROWS, LD, &xe, &ld);

	gs_cpu_margins(f, xr, ld, N_ROWS, s);
	gs_cpu_predict(f, xr, ld, N_ROWS, scratch, s + ng);
	free(scratch);
	free(xe);
	return s;
}

/* Whether a and b score batch x bit for bit alike (same shape assumed). */
static inline int
scores_same(const GsForest *a, const GsForest *b, const float *x)
{
	float	   *sa = scores_of(a, x);
	float	   *sb = scores_of(b, x);
	size_t		n = (size_t) N_ROWS * (size_t) (a->n_groups + a->n_outputs);
	int			same = memcmp(sa, sb, sizeof(float) * n) == 0;

	free(sa);
	free(sb);
	return same;
}

#endif							/* GS_TEST_IMAGE_CHECK_H */

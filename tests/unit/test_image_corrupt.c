/*
 * test_image_corrupt.c
 *	  Unit tests of gs_forest_check (src/core/forest/forest_check.c) on forests
 *	  broken in memory: targeted corruptions of a loaded forest (children,
 *	  features, leaves, groups, depths, category sets, split kinds, names,
 *	  linear leaves, symmetric levels, CatBoost tables) must make
 *	  gs_forest_check and the reading of the forest's image fail with
 *	  GS_ERR_INVALID_MODEL, each on a fresh load.  Prints TAP lines and a final "N passed, N failed".
 *
 * Run from tests/unit (make unittest / make unittest-asan).  Images of
 * valid and damaged files are test_image.c's.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/catboost_ctr.h"
#include "forest/forest_image.h"
#include "model.h"
#include "../common/test_util.h"
#include "image_util.h"

#define FIXTURES "../fixtures"

/* No caps at all (0 means no cap). */
static const GsLimits no_caps;

typedef enum Corruption
{
	C_CHILD_OUT_OF_RANGE,
	C_CHILD_HUGE,
	C_CHILD_BEFORE_PARENT,
	C_NODE_TWICE,
	C_UNREACHED_NODES,
	C_FEATURE_OUT_OF_RANGE,
	C_FEATURE_MAX,
	C_NAN_LEAF,
	C_INF_LEAF,
	C_NAN_THRESHOLD,
	C_LEAF_SPLIT_BITS,
	C_GROUP_TOO_LARGE,
	C_GROUP_NEGATIVE,
	C_TREE_DEPTH_LOW,
	C_TREE_DEPTH_HIGH,
	C_MAX_DEPTH,
	C_OFFSETS_EQUAL,
	C_OFFSET_FIRST,
	C_OUTPUTS,
	C_BASE_NAN,
	C_OBJECTIVE_UNTERMINATED,
	C_KINDS_CLEARED,
	C_KINDS_EXTRA,
	C_N_CAT_SPLITS,
	C_CAT_SET_INDEX,
	C_CAT_SET_WORDS,
	C_CAT_AND_EQUAL,
	C_NAME_NOT_UTF8,
	C_LEAF_LO_NAN,
	C_LEAF_LO_LARGE,
	C_LEAF_LO_ON_SPLIT,
	C_LIN_FEATURE,
	C_LIN_COEF_NAN,
	C_LIN_CONST_INF,
	C_LIN_CONST_ON_SPLIT,
	C_LIN_TERMS_ON_SPLIT,
	C_LIN_START_END,
	C_SYM_LEVEL,
	C_SYM_CLAIMED,
	C_CB_CATF_COL,
	C_CB_CATF_TWICE,
	C_CB_HASH_FIRST,
	C_CB_ONEHOT_CAT,
	C_CB_CTR_TABLE,
	C_CB_TABLE_CTR,
	C_CB_CAT_OF,
	C_CB_BIN_COLUMN,
	C_CB_SLOT_BUCKET,
	C_CB_NO_FREE_SLOT,
	C_CB_SLOT_OFF,
	C_CB_VALUE_OFF,
	C_CB_VALUE_NAN,
	C_CB_CODES_NAMES,
	C_CB_HASH_ORDER
} Corruption;

/* Index (in nodes) of the first split node with a split child; -1 if none. */
static int64_t
split_with_split_child(const GsForest *f, int32_t *tree, int64_t *off)
{
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int64_t		o = f->tree_offset[t];
		int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

		for (int64_t i = o; i < end; i++)
		{
			GsNode		n = f->nodes[i];

			if (!(n.info & GS_NODE_LEAF) && !(f->nodes[o + n.left].info & GS_NODE_LEAF))
			{
				*tree = t;
				*off = o;
				return i;
			}
		}
	}
	return -1;
}

/* Index of the first node whose flags satisfy (info & mask) == want; -1 if none. */
static int64_t
find_node(const GsForest *f, uint32_t mask, uint32_t want)
{
	for (int64_t i = 0; i < f->n_nodes; i++)
		if ((f->nodes[i].info & mask) == want)
			return i;
	return -1;
}

/* Apply corruption c to f; 0 when f has no place for it. */
/*
 * Break a CatBoost model's tables (an index, a slot, a value), its counts
 * and the arrays' lengths left as they are; 0 when f has no place for c.
 */
static int
corrupt_ctrs(GsForest *f, Corruption c)
{
	GsCbCtrs   *t = f->cb_ctrs;
	GsCbTable  *tb;

	if (t == NULL || t->n_table < 1)
		return 0;
	tb = &t->table[0];
	switch (c)
	{
		case C_CB_CATF_COL:
			t->catf_col[0] = t->n_input;
			return 1;
		case C_CB_CATF_TWICE:
			if (t->n_catf < 2)
				return 0;
			t->catf_col[1] = t->catf_col[0];
			return 1;
		case C_CB_HASH_FIRST:
			t->hash_first[1] = t->n_hash + 1;
			return 1;
		case C_CB_ONEHOT_CAT:
			if (t->n_onehot < 1)
				return 0;
			t->onehot_cat[0] = t->n_catf;
			return 1;
		case C_CB_CTR_TABLE:
			t->ctr[0].table = t->n_table;
			return 1;
		case C_CB_TABLE_CTR:
			t->table_ctr[0] = t->n_ctr;
			return 1;
		case C_CB_CAT_OF:
			t->cat_of[0] = t->n_catf;
			return 1;
		case C_CB_BIN_COLUMN:
			for (int32_t k = 0; k < t->n_bin; k++)
				if (!t->bin[k].onehot)
				{
					t->bin[k].column = t->n_input;
					return 1;
				}
			return 0;
		case C_CB_SLOT_BUCKET:
			for (uint64_t s = 0; s <= tb->mask; s++)
				if (t->slots[s].key != GS_CB_EMPTY)
				{
					t->slots[s].bucket = tb->n_buckets;
					return 1;
				}
			return 0;
		case C_CB_NO_FREE_SLOT:
			/* every free slot of table 0 taken (a lookup of an absent key would never end) */
			if (tb->n_buckets < 1)
				return 0;
			for (uint64_t s = 0; s <= tb->mask; s++)
				if (t->slots[s].key == GS_CB_EMPTY)
				{
					t->slots[s].key = UINT64_C(0x1234567800000000) + s;
					t->slots[s].bucket = 0;
				}
			return 1;
		case C_CB_SLOT_OFF:
			if (t->n_table < 2)
				return 0;
			t->table[1].slot_off = 0;
			return 1;
		case C_CB_VALUE_OFF:
			tb->value_off = t->n_values;
			return 1;
		case C_CB_VALUE_NAN:
			t->values[t->n_values - 1] = NAN;
			return 1;
		case C_CB_CODES_NAMES:
			/* a feature with one code fewer than it has names */
			if (f->cat_names == NULL || f->cat_names->hashes != NULL || t->hash_first[1] < 1)
				return 0;
			for (int32_t j = 1; j <= t->n_catf; j++)
				t->hash_first[j]--;
			t->n_hash--;
			return 1;
		case C_CB_HASH_ORDER:
			/* names found by hash: two codes of feature 0 swapped, in the tables and the names */
			if (f->cat_names == NULL || f->cat_names->hashes == NULL || t->hash_first[1] < 2)
				return 0;
			{
				int32_t		h = t->hash[0];
				uint32_t   *nh = f->cat_names->hashes + f->cat_names->hash_first[t->catf_col[0]];

				t->hash[0] = t->hash[1];
				t->hash[1] = h;
				nh[0] = (uint32_t) t->hash[0];
				nh[1] = (uint32_t) t->hash[1];
			}
			return 1;
		default:
			return 0;
	}
}

static int
corrupt(GsForest *f, Corruption c)
{
	int32_t		t;
	int64_t		off,
				i,
				j;

	switch (c)
	{
		case C_CHILD_OUT_OF_RANGE:
		case C_CHILD_HUGE:
		case C_CHILD_BEFORE_PARENT:
			if ((i = split_with_split_child(f, &t, &off)) < 0)
				return 0;
			{
				int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

				f->nodes[i].left = c == C_CHILD_OUT_OF_RANGE ? (uint32_t) (end - off - 1) :
					c == C_CHILD_HUGE ? UINT32_MAX : (uint32_t) (i - off);
			}
			return 1;
		case C_NODE_TWICE:

			/*
			 * Split nodes p < q of one tree with q before p's children: q
			 * takes p's children (reached twice; q's own, never).
			 */
			for (t = 0; t < f->n_trees; t++)
			{
				int64_t		end = t + 1 < f->n_trees ? (int64_t) f->tree_offset[t + 1] : f->n_nodes;

				off = f->tree_offset[t];
				for (i = off; i < end; i++)
					for (j = i + 1; j < end && j < off + (int64_t) f->nodes[i].left; j++)
						if (!(f->nodes[i].info & GS_NODE_LEAF) && !(f->nodes[j].info & GS_NODE_LEAF))
						{
							f->nodes[j].left = f->nodes[i].left;
							return 1;
						}
			}
			return 0;
		case C_UNREACHED_NODES:
			/* a split node made a leaf, its subtree left in place */
			if ((i = split_with_split_child(f, &t, &off)) < 0)
				return 0;
			f->nodes[i].info = GS_NODE_LEAF;
			f->nodes[i].value = 0.5f;
			f->nodes[i].left = 0;
			return 1;
		case C_FEATURE_OUT_OF_RANGE:
		case C_FEATURE_MAX:
			if ((i = find_node(f, GS_NODE_LEAF, 0)) < 0)
				return 0;
			f->nodes[i].info = (f->nodes[i].info & ~GS_NODE_FEATURE_MASK) |
				(c == C_FEATURE_MAX ? GS_NODE_FEATURE_MASK : (uint32_t) f->n_features);
			return 1;
		case C_NAN_LEAF:
		case C_INF_LEAF:
			if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
				return 0;
			f->nodes[i].value = c == C_NAN_LEAF ? NAN : -INFINITY;
			return 1;
		case C_NAN_THRESHOLD:
			if ((i = find_node(f, GS_NODE_LEAF | GS_NODE_CATEGORICAL, 0)) < 0)
				return 0;
			f->nodes[i].value = NAN;
			return 1;
		case C_LEAF_SPLIT_BITS:
			if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
				return 0;
			f->nodes[i].info |= 1;
			return 1;
		case C_GROUP_TOO_LARGE:
			f->tree_group[f->n_trees - 1] = f->n_groups;
			return 1;
		case C_GROUP_NEGATIVE:
			f->tree_group[0] = -1;
			return 1;
		case C_TREE_DEPTH_LOW:
			for (t = 0; t < f->n_trees; t++)
				if (f->tree_depth[t] > 0)
				{
					f->tree_depth[t]--;
					return 1;
				}
			return 0;
		case C_TREE_DEPTH_HIGH:
			/* a tree shallower than the forest: max_depth stays right */
			for (t = 0; t < f->n_trees; t++)
				if (f->tree_depth[t] < f->max_depth)
				{
					f->tree_depth[t]++;
					return 1;
				}
			return 0;
		case C_MAX_DEPTH:
			f->max_depth++;
			return 1;
		case C_OFFSETS_EQUAL:
			if (f->n_trees < 2)
				return 0;
			f->tree_offset[1] = f->tree_offset[0];
			return 1;
		case C_OFFSET_FIRST:
			f->tree_offset[0] = 1;
			return 1;
		case C_OUTPUTS:
			f->n_outputs++;
			return 1;
		case C_BASE_NAN:
			f->base_margin[0] = NAN;
			return 1;
		case C_OBJECTIVE_UNTERMINATED:
			memset(f->objective, 'x', sizeof(f->objective));
			return 1;
		case C_KINDS_CLEARED:
			if (f->split_kinds == 0)
				return 0;
			f->split_kinds = 0;
			return 1;
		case C_KINDS_EXTRA:
			if (f->split_kinds & GS_NODE_CATEGORICAL)
				return 0;
			f->split_kinds |= GS_NODE_CATEGORICAL;
			return 1;
		case C_N_CAT_SPLITS:
			if (f->n_cat_splits == 0)
				return 0;
			f->n_cat_splits--;
			return 1;
		case C_CAT_SET_INDEX:
		case C_CAT_SET_WORDS:
		case C_CAT_AND_EQUAL:
			if ((i = find_node(f, GS_NODE_LEAF | GS_NODE_CATEGORICAL, GS_NODE_CATEGORICAL)) < 0)
				return 0;
			if (c == C_CAT_SET_INDEX)
			{
				uint32_t	at = (uint32_t) f->n_cat_words;

				memcpy(&f->nodes[i].value, &at, sizeof(at));
			}
			else if (c == C_CAT_SET_WORDS)
			{
				uint32_t	at;

				memcpy(&at, &f->nodes[i].value, sizeof(at));
				f->cat_words[at] = (f->cat_words[at] & ~GS_CAT_WORDS_MASK) |
					(uint32_t) (f->n_cat_words - at);
			}
			else
			{
				f->nodes[i].info |= GS_NODE_EQUAL;
				f->split_kinds |= GS_NODE_EQUAL;
			}
			return 1;
		case C_LEAF_LO_NAN:
		case C_LEAF_LO_LARGE:
		case C_LEAF_LO_ON_SPLIT:
			if (f->leaf_lo == NULL)
				return 0;
			if (c == C_LEAF_LO_ON_SPLIT)
			{
				if ((i = find_node(f, GS_NODE_LEAF, 0)) < 0)
					return 0;
				f->leaf_lo[i] = 1e-3f;
			}
			else
			{
				if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
					return 0;
				/* a hundredth of the leaf: no rounding leaves that much */
				f->leaf_lo[i] = c == C_LEAF_LO_NAN ? NAN : f->nodes[i].value * 0.01f + 1.0f;
			}
			return 1;
		case C_LIN_FEATURE:
		case C_LIN_COEF_NAN:
			if (f->linear == NULL || f->linear->n_terms == 0)
				return 0;
			if (c == C_LIN_FEATURE)
				f->linear->feature[f->linear->n_terms - 1] = f->n_features;
			else
				f->linear->coef[0] = NAN;
			return 1;
		case C_LIN_CONST_INF:
		case C_LIN_CONST_ON_SPLIT:
		case C_LIN_TERMS_ON_SPLIT:
			if (f->linear == NULL)
				return 0;
			if (c == C_LIN_CONST_INF)
			{
				if ((i = find_node(f, GS_NODE_LEAF, GS_NODE_LEAF)) < 0)
					return 0;
				f->linear->constant[i] = INFINITY;
				return 1;
			}
			if ((i = find_node(f, GS_NODE_LEAF, 0)) < 0)
				return 0;
			if (c == C_LIN_CONST_ON_SPLIT)
			{
				f->linear->constant[i] = 0.5;
				return 1;
			}
			/* the split takes the first term of the leaves after it */
			if (f->linear->start[i] == f->linear->start[f->n_nodes])
				return 0;
			for (int64_t k = i + 1; k < f->n_nodes; k++)
				if (f->linear->start[k] == f->linear->start[i])
					f->linear->start[k]++;
				else
					break;
			return 1;
		case C_LIN_START_END:
			if (f->linear == NULL)
				return 0;
			f->linear->start[f->n_nodes]--;
			return 1;
		case C_SYM_LEVEL:
			/* a symmetric tree's second node of level 1 gets another threshold */
			if (!gs_forest_symmetric(f) || f->tree_depth[0] < 1)
				return 0;
			f->nodes[2].value = nextafterf(f->nodes[2].value, INFINITY);
			return 1;
		case C_SYM_CLAIMED:
			/* a CatBoost forest of non-symmetric trees claims to be symmetric */
			if (f->format != GS_FORMAT_CATBOOST_JSON || gs_forest_symmetric(f))
				return 0;
			snprintf(f->booster, sizeof(f->booster), "symmetric");
			return 1;
		case C_CB_CATF_COL:
		case C_CB_CATF_TWICE:
		case C_CB_HASH_FIRST:
		case C_CB_ONEHOT_CAT:
		case C_CB_CTR_TABLE:
		case C_CB_TABLE_CTR:
		case C_CB_CAT_OF:
		case C_CB_BIN_COLUMN:
		case C_CB_SLOT_BUCKET:
		case C_CB_NO_FREE_SLOT:
		case C_CB_SLOT_OFF:
		case C_CB_VALUE_OFF:
		case C_CB_VALUE_NAN:
		case C_CB_CODES_NAMES:
		case C_CB_HASH_ORDER:
			return corrupt_ctrs(f, c);
		case C_NAME_NOT_UTF8:
			if (f->feature_names == NULL)
				return 0;
			for (int32_t k = 0; k < f->n_features; k++)
				if (f->feature_names[k][0] != '\0')
				{
					f->feature_names[k][0] = (char) 0xC0;	/* an overlong lead byte */
					return 1;
				}
			return 0;
	}
	return 0;
}

/*
 * Corruption c on a fresh load of file: gs_forest_check must say
 * GS_ERR_INVALID_MODEL, and so must the reading of the forest's image.
 */
static void
test_corruption(const char *file, Corruption c, const char *label)
{
	char		path[512],
				what[1200],
				check_msg[GS_MSG_LEN] = "",
				read_msg[GS_MSG_LEN + GS_MSG_LEN + 8] = "";
	GsStatus	st;
	GsModel    *m;
	GsForest   *f,
			   *g = NULL;
	GsCode		rc_before,
				rc_check,
				rc_read;
	unsigned char *img;
	size_t		len;

	snprintf(path, sizeof(path), FIXTURES "/models/%s", file);
	m = load_model(path, &gs_malloc_allocator, &st);
	if (m == NULL || m->forest == NULL)
	{
		gs_tap(0, label, "fixture loads as a tree ensemble");
		gs_model_free(m);
		return;
	}
	f = m->forest;
	rc_before = gs_forest_check(f, &no_caps, &gs_malloc_allocator, &st);
	if (!corrupt(f, c))
	{
		snprintf(what, sizeof(what), "%s has a place for the corruption", file);
		gs_tap(0, label, what);
		gs_model_free(m);
		return;
	}
	gs_status_clear(&st);
	rc_check = gs_forest_check(f, &no_caps, &gs_malloc_allocator, &st);
	snprintf(check_msg, sizeof(check_msg), "%s", st.msg);
	img = image_of(f, &len, 0, NULL);
	rc_read = read_copy(img, len, NULL, &gs_malloc_allocator, &g, &st);
	if (rc_read != GS_OK)
		snprintf(read_msg, sizeof(read_msg), "%s%s%s", st.msg, st.detail[0] ? ": " : "", st.detail);
	snprintf(what, sizeof(what), "%s: gs_forest_check says \"%s\", reading its image \"%s\"",
			 file, rc_check == GS_OK ? "ok" : check_msg, rc_read == GS_OK ? "ok" : read_msg);
	gs_tap(rc_before == GS_OK && rc_check == GS_ERR_INVALID_MODEL && check_msg[0] != '\0' &&
		   rc_read == GS_ERR_INVALID_MODEL && g == NULL, label, what);
	gs_forest_free(g);
	free(img);
	gs_model_free(m);
}

static void
test_corruptions(void)
{
	/* fraud_binary: numerical; x3_cat_binary: categorical; lgb_tiny: names */
	static const struct
	{
		const char *file;
		Corruption	c;
		const char *label;
	}			cases[] = {
		{"fraud_binary.json", C_CHILD_OUT_OF_RANGE, "child index out of range"},
		{"fraud_binary.json", C_CHILD_HUGE, "child index 2^32-1"},
		{"fraud_binary.json", C_CHILD_BEFORE_PARENT, "child pointing at its parent"},
		{"fraud_binary.json", C_NODE_TWICE, "node reached twice"},
		{"fraud_binary.json", C_UNREACHED_NODES, "nodes no split reaches"},
		{"fraud_binary.json", C_FEATURE_OUT_OF_RANGE, "feature index n_features"},
		{"fraud_binary.json", C_FEATURE_MAX, "feature index 2^27-1"},
		{"fraud_binary.json", C_NAN_LEAF, "NaN leaf"},
		{"fraud_binary.json", C_INF_LEAF, "infinite leaf"},
		{"fraud_binary.json", C_NAN_THRESHOLD, "NaN threshold"},
		{"fraud_binary.json", C_LEAF_SPLIT_BITS, "leaf with a feature"},
		{"wine_softprob.json", C_GROUP_TOO_LARGE, "tree_group n_groups"},
		{"wine_softprob.json", C_GROUP_NEGATIVE, "tree_group -1"},
		{"fraud_binary.json", C_TREE_DEPTH_LOW, "tree_depth too small"},
		{"x2_lossguide.json", C_TREE_DEPTH_HIGH, "tree_depth too large"},
		{"fraud_binary.json", C_MAX_DEPTH, "max_depth above every tree's"},
		{"fraud_binary.json", C_OFFSETS_EQUAL, "an empty tree (equal offsets)"},
		{"fraud_binary.json", C_OFFSET_FIRST, "first tree offset not 0"},
		{"wine_softprob.json", C_OUTPUTS, "n_outputs not n_groups"},
		{"fraud_binary.json", C_BASE_NAN, "NaN base margin"},
		{"fraud_binary.json", C_OBJECTIVE_UNTERMINATED, "objective not terminated"},
		{"x3_cat_binary.json", C_KINDS_CLEARED, "split_kinds cleared with categorical nodes"},
		{"lgb_zero_missing.txt", C_KINDS_CLEARED, "split_kinds cleared with zero-as-missing nodes"},
		{"fraud_binary.json", C_KINDS_EXTRA, "split_kinds claims categorical nodes"},
		{"x3_cat_binary.json", C_N_CAT_SPLITS, "n_cat_splits one short"},
		{"x3_cat_binary.json", C_CAT_SET_INDEX, "category set index past cat_words"},
		{"x3_cat_binary.json", C_CAT_SET_WORDS, "category set longer than cat_words"},
		{"x3_cat_binary.json", C_CAT_AND_EQUAL, "node both categorical and equality"},
		{"lgb_tiny.txt", C_NAME_NOT_UTF8, "feature name not UTF-8"},
		{"lgb_fair_leaves.txt", C_LEAF_LO_NAN, "NaN low part of a double leaf"},
		{"lgb_fair_leaves.txt", C_LEAF_LO_LARGE, "low part of a double leaf above half an ulp"},
		{"lgb_fair_leaves.txt", C_LEAF_LO_ON_SPLIT, "low part on a split node"},
		{"lgb_linear_regression.txt", C_LIN_FEATURE, "linear leaf term on feature n_features"},
		{"lgb_linear_regression.txt", C_LIN_COEF_NAN, "NaN coefficient of a linear leaf"},
		{"lgb_linear_regression.txt", C_LIN_CONST_INF, "infinite constant of a linear leaf"},
		{"lgb_linear_regression.txt", C_LIN_CONST_ON_SPLIT, "linear leaf constant on a split node"},
		{"lgb_linear_regression.txt", C_LIN_TERMS_ON_SPLIT, "linear leaf term on a split node"},
		{"lgb_linear_regression.txt", C_LIN_START_END, "linear leaves' last start not the term count"},
		{"cb_nanmax.json", C_SYM_LEVEL, "a symmetric tree's level with two thresholds"},
		{"cb_depthwise.json", C_SYM_CLAIMED, "non-symmetric CatBoost trees claimed symmetric"},
		{"cb_cat_combo.json", C_CB_CATF_COL, "CatBoost categorical feature past the columns"},
		{"cb_cat_combo.json", C_CB_CATF_TWICE, "CatBoost column read by two categorical features"},
		{"cb_cat_combo.json", C_CB_HASH_FIRST, "CatBoost codes past the hashes"},
		{"cb_cat_combo.json", C_CB_ONEHOT_CAT, "CatBoost one-hot value of a feature past the model's"},
		{"cb_cat_combo.json", C_CB_CTR_TABLE, "CatBoost CTR of a table past the model's"},
		{"cb_cat_combo.json", C_CB_TABLE_CTR, "CatBoost table listing a CTR past the model's"},
		{"cb_cat_combo.json", C_CB_CAT_OF, "CatBoost projection of a feature past the model's"},
		{"cb_cat_combo.json", C_CB_BIN_COLUMN, "CatBoost binarized element past the columns"},
		{"cb_cat_combo.json", C_CB_SLOT_BUCKET, "CatBoost key of a bucket past its table's"},
		{"cb_cat_combo.json", C_CB_NO_FREE_SLOT, "CatBoost table without a free slot"},
		{"cb_cat_combo.json", C_CB_SLOT_OFF, "CatBoost tables sharing slots"},
		{"cb_cat_combo.json", C_CB_VALUE_OFF, "CatBoost table's values past the values"},
		{"cb_cat_combo.json", C_CB_VALUE_NAN, "CatBoost NaN CTR value"},
		{"cb_cat_combo.json", C_CB_CODES_NAMES, "CatBoost feature with more names than codes"},
		{"cb_cat_combo_nopool.json", C_CB_HASH_ORDER, "CatBoost names found by hash out of order"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_corruption(cases[i].file, cases[i].c, cases[i].label);
}

int
main(void)
{
	test_corruptions();
	printf("1..%d\n", n_pass + n_fail);
	printf("image-corrupt: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

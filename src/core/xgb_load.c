/*
 * xgb_load.c
 *	  Reads XGBoost models (JSON and UBJSON, as saved by XGBoost 1.0-3.x
 *	  save_model/save_raw), validates them and builds a GsForest.
 *
 * Beyond plain numerical trees this reads categorical splits (split_type 1,
 * with the node's category list in categories / categories_nodes /
 * categories_segments / categories_sizes, turned into a bitset in the
 * forest's cat_words), dart tree weights, num_parallel_tree > 1 (trees are
 * assigned to output groups by tree_info), multi-class and multi-target
 * models (one tree per class or target), and base_score in every form
 * XGBoost has written: a number, a string ("5E-1"), a bracketed string
 * ("[5E-1]"), and from 3.1 on one value per class or target
 * ("[a,b,c]").
 *
 * The bytes are decoded into a jansson document (xgb_decode.c), the
 * document is checked field by field, and every tree of
 * the ensemble is re-laid out breadth-first into the forest's node array.
 * Everything untrusted is checked here: lengths, child indices, reachability
 * (no cycles, no shared nodes), feature indices, finite values, and the
 * caller's caps before each allocation.  The jansson tree is temporary and
 * freed before returning; the forest is allocated with the caller's
 * allocator and owned by the caller.
 */
#include "forest.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "xgb_decode.h"

/* How an objective turns margins into outputs, and base_score into a margin. */
typedef enum BaseLink
{
	LINK_IDENTITY,
	LINK_LOGIT,
	LINK_LOG
} BaseLink;

typedef struct ObjectiveInfo
{
	const char *name;
	GsTransform transform;
	BaseLink	link;
} ObjectiveInfo;

static const ObjectiveInfo objectives[] = {
	{"binary:logistic", GS_TRANSFORM_SIGMOID, LINK_LOGIT},
	{"reg:logistic", GS_TRANSFORM_SIGMOID, LINK_LOGIT},
	{"binary:logitraw", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"binary:hinge", GS_TRANSFORM_HINGE, LINK_IDENTITY},
	{"reg:squarederror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:linear", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:squaredlogerror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:pseudohubererror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"reg:absoluteerror", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"count:poisson", GS_TRANSFORM_EXP, LINK_LOG},
	{"reg:gamma", GS_TRANSFORM_EXP, LINK_LOG},
	{"reg:tweedie", GS_TRANSFORM_EXP, LINK_LOG},
	{"multi:softprob", GS_TRANSFORM_SOFTMAX, LINK_IDENTITY},
	{"multi:softmax", GS_TRANSFORM_ARGMAX, LINK_IDENTITY},
	{"rank:pairwise", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"rank:ndcg", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
	{"rank:map", GS_TRANSFORM_IDENTITY, LINK_IDENTITY},
};

/* Per-tree arrays as found in the model, not yet trusted. */
typedef struct RawTree
{
	int64_t		num_nodes;
	json_t	   *left;
	json_t	   *right;
	json_t	   *feature;
	json_t	   *cond;
	json_t	   *default_left;
	json_t	   *split_type;		/* NULL: all numerical */
	json_t	   *categories;
	json_t	   *cat_nodes;
	json_t	   *cat_segments;
	json_t	   *cat_sizes;
	float		weight;			/* dart tree weight, 1 otherwise */
	uint32_t	cat_flags;		/* header flags of its category sets */
} RawTree;

/* Most 32-bit words of category sets in one forest (64 MiB). */
#define GS_CAT_MAX_TOTAL_WORDS	((int64_t) 1 << 24)

/* Allocate zeroed memory from the forest's allocator. */
static void *
forest_alloc(GsForest *f, size_t size)
{
	void	   *p = f->alloc.alloc(f->alloc.ctx, size);

	if (p)
		memset(p, 0, size);
	return p;
}

/* Member of an object, or NULL when obj is not an object. */
static json_t *
member(json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

/*
 * Read an integer that XGBoost writes either as a number or as a decimal
 * string ("30").  Returns 0 on success.
 */
static int
json_to_int64(json_t *v, int64_t *out)
{
	if (json_is_integer(v))
	{
		*out = (int64_t) json_integer_value(v);
		return 0;
	}
	if (json_is_real(v))
	{
		double		d = json_real_value(v);

		if (d != floor(d) || fabs(d) > 9e15)
			return -1;
		*out = (int64_t) d;
		return 0;
	}
	if (json_is_string(v))
	{
		const char *s = json_string_value(v);
		char	   *end;
		long long	l;

		errno = 0;
		l = strtoll(s, &end, 10);
		if (errno != 0 || end == s || *end != '\0')
			return -1;
		*out = l;
		return 0;
	}
	return -1;
}

/*
 * Read a float32 that XGBoost writes as a number or a string such as "5E-1"
 * or "[5E-1]" (newer versions bracket it).  Returns 0 on success.
 */
static int
json_to_float(json_t *v, float *out)
{
	if (json_is_number(v))
	{
		*out = (float) json_number_value(v);
		return 0;
	}
	if (json_is_string(v))
	{
		const char *s = json_string_value(v);
		char	   *end;
		float		f;

		while (isspace((unsigned char) *s))
			s++;
		if (*s == '[')
			s++;
		errno = 0;
		f = strtof(s, &end);
		if (end == s)
			return -1;
		while (isspace((unsigned char) *end))
			end++;
		if (*end == ']')
			end++;
		if (*end != '\0')
			return -1;
		*out = f;
		return 0;
	}
	return -1;
}

/*
 * Read base_score: a number, a string with one number ("5E-1", "[5E-1]"),
 * or (XGBoost 3.1 and later) a bracketed list of one value per output
 * group ("[1E-1,2E-1,7E-1]"), or a JSON array of numbers.  Writes the
 * values to out[0..*n) and returns 0 when there is one value or exactly
 * n_groups of them.
 */
static inline int elem_float(json_t *arr, size_t i, float *out);

static int
parse_base_score(json_t *v, float *out, int n_groups, int *n)
{
	if (json_is_array(v))
	{
		size_t		k = json_array_size(v);

		if (k != 1 && k != (size_t) n_groups)
			return -1;
		for (size_t i = 0; i < k; i++)
			if (elem_float(v, i, &out[i]))
				return -1;
		*n = (int) k;
		return 0;
	}
	if (json_is_string(v))
	{
		const char *s = json_string_value(v);
		int			k = 0;
		int			bracket;

		while (isspace((unsigned char) *s))
			s++;
		bracket = *s == '[';
		if (bracket)
			s++;
		for (;;)
		{
			char	   *end;
			float		f;

			while (isspace((unsigned char) *s))
				s++;
			f = strtof(s, &end);
			if (end == s || k >= n_groups)
				return -1;
			out[k++] = f;
			s = end;
			while (isspace((unsigned char) *s))
				s++;
			if (bracket && *s == ',')
			{
				s++;
				continue;
			}
			break;
		}
		if (bracket && *s++ != ']')
			return -1;
		while (isspace((unsigned char) *s))
			s++;
		if (*s != '\0' || (k != 1 && k != n_groups))
			return -1;
		*n = k;
		return 0;
	}
	if (json_to_float(v, &out[0]))
		return -1;
	*n = 1;
	return 0;
}

/* Element i of an array of numbers as int64; returns 0 on success. */
static inline int
elem_int(json_t *arr, size_t i, int64_t *out)
{
	json_t	   *v = json_array_get(arr, i);

	if (json_is_integer(v))
	{
		*out = (int64_t) json_integer_value(v);
		return 0;
	}
	if (json_is_boolean(v))
	{
		*out = json_is_true(v) ? 1 : 0;
		return 0;
	}
	return json_to_int64(v, out);
}

/* Element i of an array of numbers as float; returns 0 on success. */
static inline int
elem_float(json_t *arr, size_t i, float *out)
{
	json_t	   *v = json_array_get(arr, i);

	if (!json_is_number(v))
		return -1;
	*out = (float) json_number_value(v);
	return 0;
}

/* Fetch a required array member of tree t with exactly n elements. */
static GsCode
tree_array(json_t *tree, const char *key, int64_t n, int32_t t, json_t **out,
		   GsStatus *st)
{
	json_t	   *a = member(tree, key);

	if (!json_is_array(a))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d has no \"%s\" array", t, key);
	if ((int64_t) json_array_size(a) != n)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d has %zu entries in \"%s\" but %lld nodes",
							 t, json_array_size(a), key, (long long) n);
	*out = a;
	return GS_OK;
}

/*
 * Map the nodes of tree t to their entry in the tree's category lists:
 * cat_idx[node] = j when categories_nodes[j] == node, -1 otherwise.
 * Checks that the four category arrays agree in length, that listed nodes
 * exist and are listed once, and that every segment lies inside
 * "categories".  cat_idx is scratch of num_nodes entries.
 */
static GsCode
tree_cat_index(const RawTree *rt, int32_t t, int32_t *cat_idx, GsStatus *st)
{
	size_t		n,
				n_cats;

	for (int64_t i = 0; i < rt->num_nodes; i++)
		cat_idx[i] = -1;
	if (rt->cat_nodes == NULL)
		return GS_OK;
	n = json_array_size(rt->cat_nodes);
	n_cats = json_array_size(rt->categories);
	if (json_array_size(rt->cat_segments) != n || json_array_size(rt->cat_sizes) != n)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d has category arrays of different lengths", t);
	for (size_t j = 0; j < n; j++)
	{
		int64_t		node,
					seg,
					size;

		if (elem_int(rt->cat_nodes, j, &node) || node < 0 || node >= rt->num_nodes ||
			cat_idx[node] != -1)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d lists an invalid or repeated node in \"categories_nodes\"", t);
		if (elem_int(rt->cat_segments, j, &seg) || elem_int(rt->cat_sizes, j, &size) ||
			seg < 0 || size < 0 || (uint64_t) seg > n_cats || (uint64_t) size > n_cats - (uint64_t) seg)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %lld has a category segment outside \"categories\"",
								 t, (long long) node);
		cat_idx[node] = (int32_t) j;
	}
	return GS_OK;
}

/*
 * Category set of categorical split node id of tree t (entry j of its
 * category lists, -1 if none).  Appends the set at *cat_pos: a header word
 * (number of bitset words) and the bitset of the listed categories, which
 * must be integers in [0, 2^24) (XGBoost's valid range).  With cat_words
 * NULL only counts.  *set receives the set's index.  hdr_flags go into the
 * header (GS_CAT_INVALID_DEFAULT for models of XGBoost before 1.7).
 */
static GsCode
cat_split(const RawTree *rt, int32_t t, int32_t id, int32_t j, uint32_t hdr_flags,
		  uint32_t *cat_words, int64_t *cat_pos, int64_t *set, GsStatus *st)
{
	int64_t		seg,
				size,
				maxc = -1;
	uint32_t	words;

	if (j < 0)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: tree %d node %d is a categorical split without categories", t, id);
	elem_int(rt->cat_segments, (size_t) j, &seg);
	elem_int(rt->cat_sizes, (size_t) j, &size);
	for (int64_t k = 0; k < size; k++)
	{
		int64_t		c;

		if (elem_int(rt->categories, (size_t) (seg + k), &c) || c < 0 ||
			c >= (int64_t) GS_CAT_MAX_WORDS * 32)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has a category that is not an integer in [0, 16777216)", t, id);
		if (c > maxc)
			maxc = c;
	}
	words = maxc < 0 ? 0 : (uint32_t) (maxc / 32 + 1);
	if (*cat_pos + 1 + (int64_t) words > GS_CAT_MAX_TOTAL_WORDS)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "the category sets of the model's categorical splits exceed the limit of %lld words",
							 (long long) GS_CAT_MAX_TOTAL_WORDS);
	*set = *cat_pos;
	if (cat_words)
	{
		uint32_t   *bits = cat_words + *cat_pos + 1;

		cat_words[*cat_pos] = words | hdr_flags;
		memset(bits, 0, sizeof(uint32_t) * words);
		for (int64_t k = 0; k < size; k++)
		{
			int64_t		c;

			elem_int(rt->categories, (size_t) (seg + k), &c);
			bits[c / 32] |= 1u << (c % 32);
		}
	}
	*cat_pos += 1 + (int64_t) words;
	return GS_OK;
}

/*
 * Walk tree t breadth-first from its root, checking child indices, that every
 * node is reached at most once (no cycles, no shared children), feature
 * indices and finite values.  When nodes is not NULL also writes the
 * relabelled nodes there.  queue and seen are scratch of num_nodes entries.
 * Returns the number of reachable nodes in *n_out and the depth in *depth.
 */
static GsCode
walk_tree(const RawTree *rt, int32_t t, int32_t n_features, int32_t max_depth,
		  int32_t *queue, int32_t *level, unsigned char *seen, GsNode *nodes,
		  int64_t *n_out, int32_t *depth, const int32_t *cat_idx,
		  uint32_t *cat_words, int64_t *cat_pos, int32_t *n_cat, GsStatus *st)
{
	int64_t		head = 0,
				tail = 0;
	int32_t		deepest = 0;

	memset(seen, 0, (size_t) rt->num_nodes);
	queue[tail] = 0;
	level[tail++] = 0;
	seen[0] = 1;
	while (head < tail)
	{
		int32_t		id = queue[head];
		int32_t		lv = level[head];
		int64_t		l,
					r,
					feat = 0,
					dl = 0,
					stype = 0;
		float		cond = 0.0f;

		if (elem_int(rt->left, (size_t) id, &l) || elem_int(rt->right, (size_t) id, &r))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has a non-integer child index", t, id);
		if (rt->split_type && (elem_int(rt->split_type, (size_t) id, &stype) || stype < 0 || stype > 1))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has an invalid split_type", t, id);
		if (l == -1 && r == -1)
			stype = 0;
		/* a categorical split's condition is unused (XGBoost writes NaN or junk) */
		if (stype == 0 && (elem_float(rt->cond, (size_t) id, &cond) || !isfinite(cond)))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has a non-finite split condition or leaf value", t, id);
		if (l == -1 && r == -1)
		{
			/* a dart weight can push a finite leaf past float (found by fuzzing) */
			if (!isfinite(cond * rt->weight))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: tree %d node %d has a leaf value that overflows when scaled by the tree's dart weight", t, id);
			if (nodes)
			{
				nodes[head].value = cond * rt->weight;
				nodes[head].info = GS_NODE_LEAF;
				nodes[head].left = 0;
			}
			if (lv > deepest)
				deepest = lv;
			head++;
			continue;
		}
		if (l < 0 || l >= rt->num_nodes || r < 0 || r >= rt->num_nodes)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has child index out of range (%lld, %lld; %lld nodes)",
								 t, id, (long long) l, (long long) r, (long long) rt->num_nodes);
		if (seen[l] || seen[r] || l == r)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d is not a tree (node %d links to an already reached node)", t, id);
		if (elem_int(rt->feature, (size_t) id, &feat) || feat < 0 || feat >= n_features)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d splits on feature %lld, but the model has %d features",
								 t, id, (long long) feat, n_features);
		if (elem_int(rt->default_left, (size_t) id, &dl))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: tree %d node %d has an invalid default_left", t, id);
		if (lv + 1 > max_depth)
			return gs_status_set(st, GS_ERR_LIMIT,
								 "tree %d is deeper than the limit of %d levels", t, max_depth);
		if (nodes)
		{
			nodes[head].value = cond;
			nodes[head].info = (uint32_t) feat | (dl ? GS_NODE_DEFAULT_LEFT : 0);
			nodes[head].left = (uint32_t) tail;
		}
		if (stype == 1)
		{
			int64_t		set = 0;
			GsCode		rc = cat_split(rt, t, id, cat_idx[id], rt->cat_flags,
									   nodes ? cat_words : NULL, cat_pos, &set, st);

			if (rc)
				return rc;
			(*n_cat)++;
			if (nodes)
			{
				uint32_t	set32 = (uint32_t) set;

				memcpy(&nodes[head].value, &set32, sizeof(set32));
				nodes[head].info |= GS_NODE_CATEGORICAL;
			}
		}
		seen[l] = seen[r] = 1;
		queue[tail] = (int32_t) l;
		level[tail++] = lv + 1;
		queue[tail] = (int32_t) r;
		level[tail++] = lv + 1;
		head++;
	}
	*n_out = tail;
	*depth = deepest;
	return GS_OK;
}

/* Look up an objective by name. */
static const ObjectiveInfo *
find_objective(const char *name)
{
	for (size_t i = 0; i < sizeof(objectives) / sizeof(objectives[0]); i++)
		if (strcmp(objectives[i].name, name) == 0)
			return &objectives[i];
	return NULL;
}

/* Copy a string with the forest's allocator. */
static char *
forest_strdup(GsForest *f, const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *p = f->alloc.alloc(f->alloc.ctx, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/*
 * Build a forest from a decoded XGBoost model document.  f has been
 * allocated and zeroed by the caller, who frees it on failure.
 */
static GsCode
build_forest(json_t *root, const GsLimits *lim, GsForest *f, GsStatus *st)
{
	json_t	   *learner = member(root, "learner");
	json_t	   *mparam = member(learner, "learner_model_param");
	json_t	   *objective = member(learner, "objective");
	json_t	   *booster = member(learner, "gradient_booster");
	json_t	   *version = member(root, "version");
	json_t	   *model,
			   *trees,
			   *tree_info,
			   *weights = NULL,
			   *fnames;
	const char *bname,
			   *oname;
	const ObjectiveInfo *oi;
	int64_t		num_feature,
				num_class = 0,
				num_target = 1,
				num_trees,
				max_nodes_in_tree = 1,
				total_nodes = 0;
	RawTree    *raw = NULL;
	int32_t    *queue = NULL,
			   *level = NULL,
			   *cat_idx = NULL;
	unsigned char *seen = NULL;
	int64_t		cat_pos = 0;
	int32_t		n_cat = 0;
	uint32_t	cat_flags = 0;
	GsCode		rc = GS_OK;
	int32_t		t;

	if (!json_is_object(learner) || !json_is_object(mparam) || !json_is_object(booster))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no \"learner\" object with \"learner_model_param\" and \"gradient_booster\"");
	if (json_is_array(version) && json_array_size(version) == 3)
	{
		int64_t		vmaj = 0,
					vmin = 0,
					vpat = 0;

		elem_int(version, 0, &vmaj);
		elem_int(version, 1, &vmin);
		elem_int(version, 2, &vpat);
		snprintf(f->saved_by, sizeof(f->saved_by), "xgboost %lld.%lld.%lld",
				 (long long) vmaj, (long long) vmin, (long long) vpat);
		/* before 1.7, invalid category codes took the default direction */
		if (vmaj < 1 || (vmaj == 1 && vmin < 7))
			cat_flags = GS_CAT_INVALID_DEFAULT;
	}

	/* objective */
	if (!json_is_string(member(objective, "name")))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no objective name");
	oname = json_string_value(member(objective, "name"));
	oi = find_objective(oname);
	if (oi == NULL)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED,
					  "XGBoost objective \"%.64s\" is not supported", oname);
		gs_status_detail(st, "Supported objectives: binary:logistic, binary:logitraw, binary:hinge, reg:squarederror, reg:squaredlogerror, reg:logistic, reg:pseudohubererror, reg:absoluteerror, count:poisson, reg:gamma, reg:tweedie, multi:softprob, multi:softmax, rank:pairwise, rank:ndcg, rank:map.");
		return st->code;
	}
	snprintf(f->objective, sizeof(f->objective), "%s", oname);
	f->transform = oi->transform;

	/* learner parameters */
	if (json_to_int64(member(mparam, "num_feature"), &num_feature) || num_feature < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"num_feature\" is missing or not a positive integer");
	if (lim->max_features > 0 && num_feature > lim->max_features)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "%lld features, more than the limit of %d",
							 (long long) num_feature, lim->max_features);
	if (num_feature > (int64_t) GS_NODE_FEATURE_MASK)
		return gs_status_set(st, GS_ERR_LIMIT, "too many features");
	if (member(mparam, "num_class") && (json_to_int64(member(mparam, "num_class"), &num_class) || num_class < 0 || num_class > 100000))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"num_class\" is not a valid class count");
	if (member(mparam, "num_target") && (json_to_int64(member(mparam, "num_target"), &num_target) || num_target < 1 || num_target > 100000))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"num_target\" is not a valid target count");
	if (num_class > 1 && num_target > 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: both \"num_class\" and \"num_target\" are above 1");
	f->n_features = (int32_t) num_feature;
	f->n_groups = (int32_t) (num_class > 1 ? num_class : num_target);
	if ((oi->transform == GS_TRANSFORM_SOFTMAX || oi->transform == GS_TRANSFORM_ARGMAX) && num_class < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: objective \"%s\" needs \"num_class\"", oname);
	f->n_outputs = oi->transform == GS_TRANSFORM_ARGMAX ? 1 : f->n_groups;

	/* base margin, as the objective's ProbToMargin does in float */
	f->base_margin = forest_alloc(f, sizeof(float) * (size_t) f->n_groups);
	if (f->base_margin == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	{
		float	   *bs = f->base_margin;
		int			n_bs = 1;

		bs[0] = 0.5f;
		if (member(mparam, "base_score") &&
			parse_base_score(member(mparam, "base_score"), bs, f->n_groups, &n_bs))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: \"base_score\" is not a number or a list of %d numbers",
								 f->n_groups);
		for (int g = n_bs; g < f->n_groups; g++)
			bs[g] = bs[0];		/* one value for every group */
		for (int g = 0; g < f->n_groups; g++)
		{
			float		base_score = bs[g],
						m = base_score;

			if (!isfinite(base_score))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: \"base_score\" is not finite");
			if (oi->link == LINK_LOGIT)
			{
				if (!(base_score > 0.0f && base_score < 1.0f))
					return gs_status_set(st, GS_ERR_INVALID_MODEL,
										 "invalid XGBoost model: base_score %g must be between 0 and 1 for objective \"%s\"",
										 (double) base_score, oname);
				m = -logf(1.0f / base_score - 1.0f);
			}
			else if (oi->link == LINK_LOG)
			{
				if (!(base_score > 0.0f))
					return gs_status_set(st, GS_ERR_INVALID_MODEL,
										 "invalid XGBoost model: base_score %g must be positive for objective \"%s\"",
										 (double) base_score, oname);
				m = logf(base_score);
			}
			/* e.g. a subnormal base_score under the logit link (found by fuzzing) */
			if (!isfinite(m))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: base_score %g gives a non-finite margin for objective \"%s\"",
									 (double) base_score, oname);
			bs[g] = m;
		}
	}

	/* booster */
	if (!json_is_string(member(booster, "name")))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no booster name");
	bname = json_string_value(member(booster, "name"));
	if (strcmp(bname, "gbtree") == 0)
		model = member(booster, "model");
	else if (strcmp(bname, "dart") == 0)
	{
		model = member(member(booster, "gbtree"), "model");
		weights = member(booster, "weight_drop");
		if (!json_is_array(weights))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: dart booster without \"weight_drop\"");
	}
	else if (strcmp(bname, "gblinear") == 0)
	{
		gs_status_set(st, GS_ERR_UNSUPPORTED, "XGBoost booster \"gblinear\" is not supported");
		gs_status_detail(st, "Only tree boosters (gbtree, dart) can be scored.");
		return st->code;
	}
	else
		return gs_status_set(st, GS_ERR_UNSUPPORTED,
							 "XGBoost booster \"%.32s\" is not supported", bname);
	snprintf(f->booster, sizeof(f->booster), "%s", bname);

	trees = member(model, "trees");
	tree_info = member(model, "tree_info");
	if (!json_is_array(trees) || !json_is_array(tree_info))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: no \"trees\" and \"tree_info\" arrays");
	num_trees = (int64_t) json_array_size(trees);
	{
		int64_t		declared;

		if (json_to_int64(member(member(model, "gbtree_model_param"), "num_trees"), &declared) || declared != num_trees)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: \"num_trees\" does not match the %lld trees present",
								 (long long) num_trees);
	}
	if ((int64_t) json_array_size(tree_info) != num_trees)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"tree_info\" has %zu entries for %lld trees",
							 json_array_size(tree_info), (long long) num_trees);
	if (weights && (int64_t) json_array_size(weights) != num_trees)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: \"weight_drop\" has %zu entries for %lld trees",
							 json_array_size(weights), (long long) num_trees);
	if (lim->max_trees > 0 && num_trees > lim->max_trees)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "%lld trees, more than the limit of %d",
							 (long long) num_trees, lim->max_trees);
	if (num_trees < 1)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid XGBoost model: it has no trees");
	f->n_trees = (int32_t) num_trees;

	raw = f->alloc.alloc(f->alloc.ctx, sizeof(RawTree) * (size_t) num_trees);
	f->tree_offset = forest_alloc(f, sizeof(uint32_t) * (size_t) num_trees);
	f->tree_group = forest_alloc(f, sizeof(int32_t) * (size_t) num_trees);
	f->tree_depth = forest_alloc(f, sizeof(int32_t) * (size_t) num_trees);
	if (!raw || !f->tree_offset || !f->tree_group || !f->tree_depth)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}

	/* pass 1: per-tree arrays and node counts */
	for (t = 0; t < f->n_trees; t++)
	{
		json_t	   *tree = json_array_get(trees, (size_t) t);
		json_t	   *tparam = member(tree, "tree_param");
		json_t	   *split_type = member(tree, "split_type");
		json_t	   *cat_nodes = member(tree, "categories_nodes");
		int64_t		group,
					slv = 0;
		RawTree    *rt = &raw[t];

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		if (json_to_int64(member(tparam, "num_nodes"), &rt->num_nodes) || rt->num_nodes < 1 || rt->num_nodes > INT32_MAX / 2)
		{
			rc = gs_status_set(st, GS_ERR_INVALID_MODEL,
							   "invalid XGBoost model: tree %d has no valid \"num_nodes\"", t);
			goto done;
		}
		if (member(tparam, "size_leaf_vector") &&
			(json_to_int64(member(tparam, "size_leaf_vector"), &slv) || slv > 1))
		{
			rc = gs_status_set(st, GS_ERR_UNSUPPORTED,
							   "XGBoost trees with vector leaves are not supported");
			gs_status_detail(st, "The model was trained with multi_strategy=\"multi_output_tree\"; train with the default \"one_output_per_tree\".");
			goto done;
		}
		rt->split_type = NULL;
		rt->categories = rt->cat_nodes = rt->cat_segments = rt->cat_sizes = NULL;
		if (split_type && (rc = tree_array(tree, "split_type", rt->num_nodes, t, &rt->split_type, st)))
			goto done;
		if (cat_nodes)
		{
			rt->cat_nodes = cat_nodes;
			rt->categories = member(tree, "categories");
			rt->cat_segments = member(tree, "categories_segments");
			rt->cat_sizes = member(tree, "categories_sizes");
			if (!json_is_array(cat_nodes) || !json_is_array(rt->categories) ||
				!json_is_array(rt->cat_segments) || !json_is_array(rt->cat_sizes))
			{
				rc = gs_status_set(st, GS_ERR_INVALID_MODEL,
								   "invalid XGBoost model: tree %d has categories_nodes without categories, categories_segments and categories_sizes arrays", t);
				goto done;
			}
		}
		if ((rc = tree_array(tree, "left_children", rt->num_nodes, t, &rt->left, st)) ||
			(rc = tree_array(tree, "right_children", rt->num_nodes, t, &rt->right, st)) ||
			(rc = tree_array(tree, "split_indices", rt->num_nodes, t, &rt->feature, st)) ||
			(rc = tree_array(tree, "split_conditions", rt->num_nodes, t, &rt->cond, st)) ||
			(rc = tree_array(tree, "default_left", rt->num_nodes, t, &rt->default_left, st)))
			goto done;
		if (elem_int(tree_info, (size_t) t, &group) || group < 0 || group >= f->n_groups)
		{
			rc = gs_status_set(st, GS_ERR_INVALID_MODEL,
							   "invalid XGBoost model: tree %d belongs to output group %lld of %d",
							   t, (long long) group, f->n_groups);
			goto done;
		}
		f->tree_group[t] = (int32_t) group;
		rt->weight = 1.0f;
		rt->cat_flags = cat_flags;
		if (weights && (elem_float(weights, (size_t) t, &rt->weight) || !isfinite(rt->weight)))
		{
			rc = gs_status_set(st, GS_ERR_INVALID_MODEL,
							   "invalid XGBoost model: dart weight of tree %d is not a finite number", t);
			goto done;
		}
		if (rt->num_nodes > max_nodes_in_tree)
			max_nodes_in_tree = rt->num_nodes;
		total_nodes += rt->num_nodes;
		if (lim->max_nodes > 0 && total_nodes > lim->max_nodes)
		{
			rc = gs_status_set(st, GS_ERR_LIMIT,
							   "more than the limit of %lld tree nodes",
							   (long long) lim->max_nodes);
			goto done;
		}
	}

	/* pass 2: validate each tree and count reachable nodes */
	queue = f->alloc.alloc(f->alloc.ctx, sizeof(int32_t) * (size_t) max_nodes_in_tree);
	level = f->alloc.alloc(f->alloc.ctx, sizeof(int32_t) * (size_t) max_nodes_in_tree);
	seen = f->alloc.alloc(f->alloc.ctx, (size_t) max_nodes_in_tree);
	cat_idx = f->alloc.alloc(f->alloc.ctx, sizeof(int32_t) * (size_t) max_nodes_in_tree);
	if (!queue || !level || !seen || !cat_idx)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	total_nodes = 0;
	for (t = 0; t < f->n_trees; t++)
	{
		int64_t		n;
		int32_t		depth;

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		if ((rc = tree_cat_index(&raw[t], t, cat_idx, st)))
			goto done;
		rc = walk_tree(&raw[t], t, f->n_features,
					   lim->max_depth > 0 ? lim->max_depth : INT32_MAX - 1,
					   queue, level, seen, NULL, &n, &depth, cat_idx, NULL,
					   &cat_pos, &n_cat, st);
		if (rc)
			goto done;
		f->tree_offset[t] = (uint32_t) total_nodes;
		f->tree_depth[t] = depth;
		total_nodes += n;
		if (depth > f->max_depth)
			f->max_depth = depth;
	}
	if (total_nodes > (int64_t) UINT32_MAX)
	{
		rc = gs_status_set(st, GS_ERR_LIMIT, "too many tree nodes");
		goto done;
	}

	/* pass 3: lay out the validated trees and their category sets */
	f->n_nodes = total_nodes;
	f->nodes = f->alloc.alloc(f->alloc.ctx, sizeof(GsNode) * (size_t) total_nodes);
	if (!f->nodes)
	{
		rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
		goto done;
	}
	if (cat_pos > 0)
	{
		f->n_cat_words = cat_pos;
		f->cat_words = forest_alloc(f, sizeof(uint32_t) * (size_t) cat_pos);
		if (!f->cat_words)
		{
			rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			goto done;
		}
	}
	f->n_cat_splits = n_cat;
	cat_pos = 0;
	n_cat = 0;
	for (t = 0; t < f->n_trees; t++)
	{
		int64_t		n;
		int32_t		depth;

		if ((t & 63) == 63 && (rc = gs_check_interrupt(&lim->interrupt, st)))
			goto done;
		if ((rc = tree_cat_index(&raw[t], t, cat_idx, st)))
			goto done;
		rc = walk_tree(&raw[t], t, f->n_features, INT32_MAX - 1, queue, level, seen,
					   f->nodes + f->tree_offset[t], &n, &depth, cat_idx,
					   f->cat_words, &cat_pos, &n_cat, st);
		if (rc)
			goto done;
	}

	f->split_kinds = f->n_cat_splits > 0 ? GS_NODE_CATEGORICAL : 0;

	/* feature names, when the model has one per feature */
	fnames = member(learner, "feature_names");
	if (json_is_array(fnames) && (int64_t) json_array_size(fnames) == num_feature)
	{
		f->feature_names = forest_alloc(f, sizeof(char *) * (size_t) num_feature);
		if (!f->feature_names)
		{
			rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
			goto done;
		}
		for (int32_t i = 0; i < f->n_features; i++)
		{
			json_t	   *s = json_array_get(fnames, (size_t) i);

			f->feature_names[i] = forest_strdup(f, json_is_string(s) ? json_string_value(s) : "");
			if (!f->feature_names[i])
			{
				rc = gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
				goto done;
			}
		}
	}

done:
	if (raw)
		f->alloc.free(f->alloc.ctx, raw);
	if (queue)
		f->alloc.free(f->alloc.ctx, queue);
	if (level)
		f->alloc.free(f->alloc.ctx, level);
	if (seen)
		f->alloc.free(f->alloc.ctx, seen);
	if (cat_idx)
		f->alloc.free(f->alloc.ctx, cat_idx);
	return rc;
}

/* Parse, validate and build; see forest.h. */
GsCode
gs_xgb_load(const unsigned char *bytes, size_t len, GsModelFormat fmt,
			const GsLimits *lim, const GsAllocator *alloc, GsForest **out,
			GsStatus *st)
{
	json_t	   *root = NULL;
	GsForest   *f;
	GsCode		rc;
	GsModelFormat detected;

	gs_status_clear(st);
	*out = NULL;
	if (lim == NULL)
		lim = &gs_default_limits;
	if (len == 0)
		return gs_status_set(st, GS_ERR_INVALID_MODEL, "the model bytes are empty");
	if (lim->max_model_bytes > 0 && len > lim->max_model_bytes)
		return gs_status_set(st, GS_ERR_LIMIT,
							 "%zu bytes, more than the limit of %zu bytes",
							 len, lim->max_model_bytes);
	detected = gs_model_detect_format(bytes, len);
	if (fmt == GS_FORMAT_AUTO)
	{
		if (detected == GS_FORMAT_AUTO)
		{
			gs_status_set(st, GS_ERR_INVALID_MODEL,
						  "could not detect the model format");
			gs_status_detail(st, "The bytes are neither XGBoost JSON nor XGBoost UBJSON.");
			return st->code;
		}
		fmt = detected;
	}

	root = gs_xgb_decode(bytes, len, fmt, &lim->interrupt, st);
	if (root == NULL)
		return st->code;

	f = alloc->alloc(alloc->ctx, sizeof(GsForest));
	if (f == NULL)
	{
		json_decref(root);
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	}
	memset(f, 0, sizeof(GsForest));
	f->alloc = *alloc;
	f->format = fmt;
	rc = build_forest(root, lim, f, st);
	json_decref(root);
	if (rc != GS_OK)
	{
		gs_forest_free(f);
		return rc;
	}
	*out = f;
	return GS_OK;
}

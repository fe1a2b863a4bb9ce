/*
 * xgb_binary.c
 *	  XGBoost's legacy binary model format to the jansson document that the
 *	  same model saved as JSON gives, so that xgb_load.c validates and builds
 *	  it like any other XGBoost model.
 *
 * The format is what Booster.save_model wrote from XGBoost 1.0 to 2.0 for a
 * file name not ending in ".json" (or ".ubj"), and save_raw() before 2.1:
 * the C structs of the learner, the booster and each tree, little-endian,
 * optionally after the magic "binf":
 *
 *   learner parameters      136 bytes: float base_score, uint32 num_feature,
 *                           int32 num_class, int32 contain_extra_attrs,
 *                           int32 contain_eval_metrics, uint32 major and
 *                           minor version, (1.7+) uint32 num_target, rest
 *                           reserved
 *   objective, booster      strings: uint64 length, then the bytes
 *   gbtree parameters       160 bytes: int32 num_trees, int32
 *                           num_parallel_tree (1.7+; 1 before), reserved
 *   each tree               148 bytes of parameters (int32 num_nodes at
 *                           offset 4, int32 size_leaf_vector at 20), then
 *                           num_nodes nodes of 20 bytes (int32 parent,
 *                           left, right child, uint32 feature with the
 *                           default-left flag in its top bit, float split
 *                           condition or leaf value) and num_nodes
 *                           statistics of 16 bytes (float loss change,
 *                           float cover, float weight, int32)
 *   tree_info               int32 per tree: its output group
 *   (dart) weight_drop      uint64 count, then one float per tree
 *   (attributes)            uint64 count, then key and value strings
 *
 * Releases before 1.0 (0.7x to 0.90) wrote the same layout with no magic,
 * zeros where the version goes, and base_score stored after the objective's
 * ProbToMargin (a margin).  XGBoost 1.x reads such a file by turning that
 * margin back with the objective's prediction transform (multi:* excepted)
 * and then to a margin again, as for any model: so does pre10_base_score,
 * so that scores equal XGBoost 1.x's (and 2.x's) on those files.
 *
 * Every length and count is checked against the bytes left before anything
 * is allocated for it, so the document is at most a fixed multiple of the
 * input.  The format cannot hold categorical splits.
 */
#include "xgboost.h"
#include "forest/forest_eval.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LEARNER_PARAM_BYTES 136
#define GBTREE_PARAM_BYTES 160
#define TREE_PARAM_BYTES 148
#define NODE_BYTES 20
#define STAT_BYTES 16
#define MAX_NAME_BYTES 256

typedef struct Reader
{
	const unsigned char *p;
	size_t		left;
	size_t		len;
	char		err[128];
} Reader;

static const unsigned char *
take(Reader *r, size_t n, const char *what)
{
	const unsigned char *at = r->p;

	if (r->err[0])
		return NULL;
	if (n > r->left)
	{
		snprintf(r->err, sizeof(r->err), "truncated at byte %zu (%s)", r->len - r->left, what);
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return at;
}

static uint32_t
u32_at(const unsigned char *b)
{
	return (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 | (uint32_t) b[3] << 24;
}

static float
f32_at(const unsigned char *b)
{
	uint32_t	u = u32_at(b);
	float		v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

static uint64_t
read_u64(Reader *r, const char *what)
{
	const unsigned char *b = take(r, 8, what);

	return b ? (uint64_t) u32_at(b) | (uint64_t) u32_at(b + 4) << 32 : 0;
}

/* A length-prefixed string of at most max bytes (max 0: any), as a new JSON string. */
static json_t *
read_string(Reader *r, size_t max, const char *what)
{
	uint64_t	n = read_u64(r, what);
	const unsigned char *b;
	json_t	   *s;

	if (r->err[0])
		return NULL;
	if ((max > 0 && n > max) || n > r->left)
	{
		snprintf(r->err, sizeof(r->err), "%s of %llu bytes at byte %zu is %s", what,
				 (unsigned long long) n, r->len - r->left - 8, n > r->left ? "truncated" : "too long");
		return NULL;
	}
	b = take(r, (size_t) n, what);
	s = json_stringn((const char *) b, (size_t) n);
	if (s == NULL)
		snprintf(r->err, sizeof(r->err), "%s at byte %zu is not UTF-8 text", what,
				 r->len - r->left - (size_t) n);
	return s;
}

/*
 * A new empty JSON object.  Not json_object(): inside a PostgreSQL backend
 * that name resolves to the server's SQL function json_object() (see
 * ubj_decode.c); json_pack() is resolved inside libjansson.
 */
static json_t *
new_object(void)
{
	return json_pack("{}");
}

/* The JSON for a float as XGBoost's JSON holds it: non-finite values as an empty array. */
static json_t *
float_json(float v)
{
	return isfinite(v) ? json_real((double) v) : json_array();
}

/* Integer parameters are strings in XGBoost's JSON. */
static json_t *
int_string(long long v)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return json_string(buf);
}

/*
 * Set key of obj to v: jansson takes v's reference even when it fails.
 * Returns false when v is NULL or the set failed.
 */
static bool
put(json_t *obj, const char *key, json_t *v)
{
	return v != NULL && json_object_set_new(obj, key, v) == 0;
}

/* put, returning v (now borrowed from obj) or NULL. */
static json_t *
child(json_t *obj, const char *key, json_t *v)
{
	return put(obj, key, v) ? v : NULL;
}

static bool
push(json_t *arr, json_t *v)
{
	return v != NULL && json_array_append_new(arr, v) == 0;
}

/* Note running out of memory unless a more telling error is set. */
static void
note_oom(Reader *r)
{
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "out of memory");
}

/* One tree, as XGBoost's JSON writes it (the members xgb_load.c reads). */
static json_t *
read_tree(Reader *r, int32_t t)
{
	const unsigned char *param = take(r, TREE_PARAM_BYTES, "tree parameters");
	const unsigned char *nodes,
			   *stats;
	int32_t		num_nodes,
				slv;
	json_t	   *tree = new_object(),
			   *tparam,
			   *left,
			   *right,
			   *feature,
			   *cond,
			   *dleft,
			   *hess;
	bool		ok;

	if (param == NULL || tree == NULL)
		goto fail;
	num_nodes = (int32_t) u32_at(param + 4);
	slv = (int32_t) u32_at(param + 20);
	if (num_nodes < 1 || (size_t) num_nodes > r->left / (NODE_BYTES + STAT_BYTES))
	{
		snprintf(r->err, sizeof(r->err), "tree %d declares %d nodes, %s", t, num_nodes,
				 num_nodes < 1 ? "not a positive count" : "more than the bytes left hold");
		goto fail;
	}
	nodes = take(r, (size_t) num_nodes * NODE_BYTES, "tree nodes");
	stats = take(r, (size_t) num_nodes * STAT_BYTES, "tree statistics");
	tparam = child(tree, "tree_param", new_object());
	left = child(tree, "left_children", json_array());
	right = child(tree, "right_children", json_array());
	feature = child(tree, "split_indices", json_array());
	cond = child(tree, "split_conditions", json_array());
	dleft = child(tree, "default_left", json_array());
	hess = child(tree, "sum_hessian", json_array());
	ok = tparam && left && right && feature && cond && dleft && hess &&
		put(tparam, "num_nodes", int_string(num_nodes)) &&
		put(tparam, "size_leaf_vector", int_string(slv));
	for (int32_t i = 0; ok && i < num_nodes; i++)
	{
		const unsigned char *n = nodes + (size_t) i * NODE_BYTES;
		uint32_t	sindex = u32_at(n + 12);

		ok = push(left, json_integer((int32_t) u32_at(n + 4))) &&
			push(right, json_integer((int32_t) u32_at(n + 8))) &&
			push(feature, json_integer(sindex & 0x7fffffffu)) &&
			push(cond, float_json(f32_at(n + 16))) &&
			push(dleft, json_integer(sindex >> 31)) &&
			push(hess, float_json(f32_at(stats + (size_t) i * STAT_BYTES + 4)));
	}
	if (ok)
		return tree;
fail:
	note_oom(r);
	json_decref(tree);
	return NULL;
}

/* The gbtree model: parameters, trees, tree_info. */
static json_t *
read_gbtree(Reader *r, const GsInterrupt *intr, int *interrupted)
{
	const unsigned char *param = take(r, GBTREE_PARAM_BYTES, "booster parameters");
	json_t	   *model = new_object(),
			   *mparam,
			   *trees,
			   *info;
	int32_t		num_trees,
				per_round;
	const unsigned char *groups;

	if (param == NULL || model == NULL)
		goto fail;
	mparam = child(model, "gbtree_model_param", new_object());
	trees = child(model, "trees", json_array());
	info = child(model, "tree_info", json_array());
	if (!mparam || !trees || !info)
		goto fail;
	num_trees = (int32_t) u32_at(param);
	per_round = (int32_t) u32_at(param + 4);
	if (num_trees < 0 || (size_t) num_trees > r->left / (TREE_PARAM_BYTES + NODE_BYTES + STAT_BYTES))
	{
		snprintf(r->err, sizeof(r->err), "the model declares %d trees, %s", num_trees,
				 num_trees < 0 ? "a negative count" : "more than the bytes left hold");
		goto fail;
	}
	if (!put(mparam, "num_trees", int_string(num_trees)) ||
		(per_round > 1 && !put(mparam, "num_parallel_tree", int_string(per_round))))
		goto fail;
	for (int32_t t = 0; t < num_trees; t++)
	{
		if ((t & 63) == 63 && gs_interrupted(intr))
		{
			*interrupted = 1;
			goto fail;
		}
		if (!push(trees, read_tree(r, t)))
			goto fail;
	}
	groups = take(r, (size_t) num_trees * 4, "tree_info");
	if (groups == NULL)
		goto fail;
	for (int32_t t = 0; t < num_trees; t++)
		if (!push(info, json_integer((int32_t) u32_at(groups + (size_t) t * 4))))
			goto fail;
	return model;
fail:
	note_oom(r);
	json_decref(model);
	return NULL;
}

/* dart's tree weights: uint64 count, then the floats. */
static bool
read_weights(Reader *r, json_t *weights)
{
	uint64_t	n = read_u64(r, "weight_drop");
	const unsigned char *w;

	if (!r->err[0] && n > r->left / 4)
		snprintf(r->err, sizeof(r->err), "weight_drop of %llu values is truncated",
				 (unsigned long long) n);
	w = take(r, (size_t) n * 4, "weight_drop");
	for (uint64_t i = 0; w && i < n; i++)
		if (!push(weights, float_json(f32_at(w + i * 4))))
			return false;
	return w != NULL;
}

/* The learner's attributes (best_iteration, scikit_learn, ...), all strings. */
static bool
read_attributes(Reader *r, json_t *attrs)
{
	uint64_t	n = read_u64(r, "attributes");

	if (!r->err[0] && n > r->left / 16)
		snprintf(r->err, sizeof(r->err), "%llu attributes is more than the bytes left hold",
				 (unsigned long long) n);
	for (uint64_t i = 0; !r->err[0] && i < n; i++)
	{
		json_t	   *k = read_string(r, 0, "attribute name");
		json_t	   *v = read_string(r, 0, "attribute value");

		if (k && v && json_object_set(attrs, json_string_value(k), v) != 0)
			note_oom(r);
		json_decref(k);
		json_decref(v);
	}
	return !r->err[0];
}

/* Whether the n bytes at b are all zero. */
static bool
zeros(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/*
 * The base score of a file from before 1.0 as XGBoost 1.x reads it: the
 * stored margin through the objective's prediction transform, in float
 * (not for multi:*, whose transform is over classes).  binary:hinge's
 * transform makes 0.5 a 1 (and so moves every margin by 0.5 against what
 * the writing release scored): XGBoost 1.x and 2.x do that, and so do we.
 */
static float
pre10_base_score(const char *objective, float stored)
{
	static const char *const exp_link[] = {"count:poisson", "reg:gamma", "reg:tweedie",
	"survival:cox"};

	if (strncmp(objective, "multi:", 6) == 0)
		return stored;
	if (strcmp(objective, "binary:logistic") == 0 || strcmp(objective, "reg:logistic") == 0)
		return gs_sigmoid(stored);
	if (strcmp(objective, "binary:hinge") == 0)
		return stored > 0.0f ? 1.0f : 0.0f;
	for (size_t i = 0; i < sizeof(exp_link) / sizeof(exp_link[0]); i++)
		if (strcmp(objective, exp_link[i]) == 0)
			return gs_expf(stored);
	return stored;
}

/* Whether bytes without the magic may be the binary format; see xgboost.h. */
bool
gs_xgb_binary_detect(const unsigned char *b, size_t len)
{
	uint64_t	n;

	if (len < LEARNER_PARAM_BYTES + 8 + 3)
		return false;
	n = (uint64_t) u32_at(b + LEARNER_PARAM_BYTES) | (uint64_t) u32_at(b + LEARNER_PARAM_BYTES + 4) << 32;
	if (n < 3 || n > 64 || len < LEARNER_PARAM_BYTES + 8 + n)
		return false;
	for (uint64_t i = 0; i < n; i++)
	{
		unsigned char c = b[LEARNER_PARAM_BYTES + 8 + i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '_'))
			return false;
	}
	return true;
}

/* Decode the binary format; see xgboost.h. */
json_t *
gs_xgb_binary_decode(const unsigned char *bytes, size_t len, const GsInterrupt *intr,
					 GsStatus *st)
{
	Reader		r = {bytes, len, len, ""};
	const unsigned char *lp;
	json_t	   *root = new_object(),
			   *learner,
			   *mparam,
			   *objective,
			   *booster,
			   *version,
			   *bname;
	uint32_t	major,
				minor,
				num_target;
	int32_t		has_attrs;
	char		buf[32];
	int			interrupted = 0;

	if (root == NULL)
		goto bad;
	learner = child(root, "learner", new_object());
	version = child(root, "version", json_array());
	mparam = learner ? child(learner, "learner_model_param", new_object()) : NULL;
	objective = learner ? child(learner, "objective", new_object()) : NULL;
	booster = learner ? child(learner, "gradient_booster", new_object()) : NULL;
	if (!version || !mparam || !objective || !booster)
		goto bad;
	if (len >= 4 && memcmp(bytes, "binf", 4) == 0)
		take(&r, 4, "magic");
	lp = take(&r, LEARNER_PARAM_BYTES, "learner parameters");
	if (lp == NULL)
		goto bad;
	has_attrs = (int32_t) u32_at(lp + 12);
	major = u32_at(lp + 20);
	minor = u32_at(lp + 24);
	num_target = u32_at(lp + 28);
	if ((major == 0 && (minor != 0 || !zeros(lp + 28, LEARNER_PARAM_BYTES - 28))) ||
		major > 99 || minor > 99)
	{
		snprintf(r.err, sizeof(r.err), "bytes 20 to 27 of its header hold no XGBoost version");
		goto bad;
	}
	if (!put(mparam, "num_feature", int_string(u32_at(lp + 4))) ||
		!put(mparam, "num_class", int_string((int32_t) u32_at(lp + 8))) ||
		(num_target > 0 && !put(mparam, "num_target", int_string(num_target))) ||
		!put(objective, "name", read_string(&r, MAX_NAME_BYTES, "objective name")))
		goto bad;
	/* before 1.0 there is no version to record: f->saved_by says so */
	if (major > 0 &&
		(!push(version, json_integer(major)) || !push(version, json_integer(minor)) ||
		 !push(version, json_integer(0))))
		goto bad;
	snprintf(buf, sizeof(buf), "%.9g",
			 (double) (major > 0 ? f32_at(lp) :
					   pre10_base_score(json_string_value(json_object_get(objective, "name")),
										f32_at(lp))));
	if (!put(mparam, "base_score", json_string(buf)))
		goto bad;
	bname = child(booster, "name", read_string(&r, MAX_NAME_BYTES, "booster name"));
	if (bname == NULL)
		goto bad;
	if (strcmp(json_string_value(bname), "dart") == 0)
	{
		json_t	   *inner = child(booster, "gbtree", new_object());
		json_t	   *weights = child(booster, "weight_drop", json_array());

		if (!inner || !weights || !put(inner, "name", json_string("gbtree")) ||
			!put(inner, "model", read_gbtree(&r, intr, &interrupted)) ||
			!read_weights(&r, weights))
			goto bad;
	}
	else if (strcmp(json_string_value(bname), "gbtree") == 0)
	{
		if (!put(booster, "model", read_gbtree(&r, intr, &interrupted)))
			goto bad;
	}
	else
		return root;			/* gblinear and others: xgb_load.c says why not */
	if (has_attrs != 0)
	{
		json_t	   *attrs = child(learner, "attributes", new_object());

		if (attrs == NULL || !read_attributes(&r, attrs))
			goto bad;
	}
	return root;

bad:
	note_oom(&r);
	if (interrupted)
		gs_status_set(st, GS_ERR_CANCELLED, "loading the model was interrupted");
	else if (strcmp(r.err, "out of memory") == 0)
		gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	else
	{
		gs_status_set(st, GS_ERR_INVALID_MODEL, "invalid XGBoost binary model");
		gs_status_detail(st, "%s.", r.err);
	}
	json_decref(root);
	return NULL;
}

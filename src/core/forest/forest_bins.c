/*
 * forest_bins.c
 *	  Building the quantized form of a symmetric forest (forest_bins.h).
 *
 * One pass over the trees' levels finds the features the splits read and
 * which way each sends NaN; their thresholds are then sorted and made
 * distinct per feature, each level's split becomes (used feature, index of
 * its threshold), and each tree's leaves are copied out as doubles.
 * Anything that does not fit leaves the forest without bins: the engine
 * then compares floats, with the same results.
 */
#include "forest_bins.h"

#include <stdlib.h>
#include <string.h>

/* Which ways the splits of a feature send NaN (per feature, while building). */
#define NAN_SEEN_LEFT	1
#define NAN_SEEN_RIGHT	2

static void *
bins_alloc(const GsAllocator *a, size_t size)
{
	return a->alloc(a->ctx, size > 0 ? size : 1);
}

/* Release bins; see forest_bins.h. */
void
gs_forest_bins_free(const GsAllocator *alloc, GsForestBins *b)
{
	if (b == NULL)
		return;
	gs_release(alloc, b->feature);
	gs_release(alloc, b->border_start);
	gs_release(alloc, b->border);
	gs_release(alloc, b->nan_bin);
	gs_release(alloc, b->level_start);
	gs_release(alloc, b->level_used);
	gs_release(alloc, b->level_bin);
	gs_release(alloc, b->leaf_start);
	gs_release(alloc, b->leaf);
	alloc->free(alloc->ctx, b);
}

/* Bytes of the bins; see forest_bins.h. */
size_t
gs_forest_bins_bytes(const GsForest *f)
{
	const GsForestBins *b = f->bins;

	if (b == NULL)
		return 0;
	return sizeof(GsForestBins) +
		(size_t) b->n_used * (sizeof(int32_t) + sizeof(uint32_t) + sizeof(uint8_t)) +
		sizeof(uint32_t) + (size_t) b->n_borders * sizeof(float) +
		(size_t) (f->n_trees + 1) * sizeof(uint32_t) +
		(size_t) b->n_levels * (sizeof(uint16_t) + sizeof(uint8_t)) +
		(size_t) f->n_trees * sizeof(int64_t) + (size_t) b->n_leaves * sizeof(double);
}

/* qsort order of thresholds (no NaN here; -0.0 and 0.0 compare equal). */
static int
cmp_threshold(const void *a, const void *b)
{
	float		x = *(const float *) a,
				y = *(const float *) b;

	return x < y ? -1 : (y < x ? 1 : 0);
}

/* The split of tree t's level k (every node of the level has it). */
static inline const GsNode *
level_split(const GsForest *f, int32_t t, int32_t k)
{
	return f->nodes + f->tree_offset[t] + ((uint32_t) 1 << k) - 1;
}

/*
 * Whether f fits (see forest_bins.h), counting its levels and leaves and
 * marking in nan_seen[feature] the ways its splits send NaN (nonzero: the
 * feature is read).
 */
static bool
bins_fit(const GsForest *f, uint8_t *nan_seen, int64_t *n_levels, int64_t *n_leaves,
		 int32_t *n_used)
{
	*n_levels = *n_leaves = 0;
	*n_used = 0;
	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int32_t		d = f->tree_depth[t];

		if (d < 0 || d > GS_BINS_MAX_DEPTH)
			return false;
		*n_levels += d;
		*n_leaves += (int64_t) 1 << d;
		for (int32_t k = 0; k < d; k++)
		{
			const GsNode *s = level_split(f, t, k);
			uint32_t	feat = s->info & GS_NODE_FEATURE_MASK;

			if (s->value != s->value || feat >= (uint32_t) (f->n_features + f->n_derived))
				return false;
			if (nan_seen[feat] == 0)
				(*n_used)++;
			nan_seen[feat] |= (s->info & GS_NODE_DEFAULT_LEFT) ? NAN_SEEN_LEFT : NAN_SEEN_RIGHT;
			if (nan_seen[feat] == (NAN_SEEN_LEFT | NAN_SEEN_RIGHT))
				return false;
		}
	}
	return *n_used <= GS_BINS_MAX_USED && *n_levels < (int64_t) UINT32_MAX;
}

/*
 * The used features (ascending), their NaN bins, and the thresholds of each
 * sorted and distinct into b; used_of[feature] becomes its used index.  tmp
 * has room for every level, fill for n_used + 1 counts.  Returns false when
 * a feature has more than GS_BINS_MAX_BORDERS thresholds.
 */
static bool
bins_borders(const GsForest *f, const uint8_t *nan_seen, int32_t *used_of, float *tmp,
			 uint32_t *fill, GsForestBins *b)
{
	int32_t		u = 0;
	int64_t		n = 0;

	for (int32_t j = 0; j < f->n_features + f->n_derived; j++)
	{
		used_of[j] = -1;
		if (nan_seen[j] == 0)
			continue;
		used_of[j] = u;
		b->feature[u] = j;
		b->nan_bin[u] = nan_seen[j] == NAN_SEEN_RIGHT ? GS_BINS_NAN_RIGHT : 0;
		u++;
	}
	/* every level's threshold into tmp, grouped by used feature */
	memset(fill, 0, sizeof(uint32_t) * (b->n_used + 1));
	for (int32_t t = 0; t < f->n_trees; t++)
		for (int32_t k = 0; k < f->tree_depth[t]; k++)
			fill[used_of[level_split(f, t, k)->info & GS_NODE_FEATURE_MASK] + 1]++;
	for (u = 0; u < b->n_used; u++)
		fill[u + 1] += fill[u];
	for (int32_t t = 0; t < f->n_trees; t++)
		for (int32_t k = 0; k < f->tree_depth[t]; k++)
		{
			const GsNode *s = level_split(f, t, k);

			tmp[fill[used_of[s->info & GS_NODE_FEATURE_MASK]]++] = s->value;
		}
	/* fill[u] is now the end of u's group: sort it, keep its distinct values */
	for (u = 0; u < b->n_used; u++)
	{
		uint32_t	lo = u == 0 ? 0 : fill[u - 1];
		uint32_t	hi = fill[u];

		b->border_start[u] = (uint32_t) n;
		qsort(tmp + lo, hi - lo, sizeof(float), cmp_threshold);
		for (uint32_t i = lo; i < hi; i++)
			if (n == b->border_start[u] || b->border[n - 1] != tmp[i])
				b->border[n++] = tmp[i];
		if (n - b->border_start[u] > GS_BINS_MAX_BORDERS)
			return false;
	}
	b->border_start[b->n_used] = (uint32_t) n;
	b->n_borders = n;
	return true;
}

/*
 * Each level's split as (used feature, index of its threshold among the
 * feature's), and each tree's leaves as doubles in leaf-index order.
 */
static void
bins_levels_and_leaves(const GsForest *f, const int32_t *used_of, GsForestBins *b)
{
	int64_t		lv = 0,
				nl = 0;

	for (int32_t t = 0; t < f->n_trees; t++)
	{
		int32_t		d = f->tree_depth[t];
		uint32_t	first_leaf = ((uint32_t) 1 << d) - 1;

		b->level_start[t] = (uint32_t) lv;
		for (int32_t k = 0; k < d; k++, lv++)
		{
			const GsNode *s = level_split(f, t, k);
			int32_t		u = used_of[s->info & GS_NODE_FEATURE_MASK];
			const float *bd = b->border + b->border_start[u];
			uint32_t	nb = b->border_start[u + 1] - b->border_start[u];
			uint32_t	j = 0;

			/* the first threshold not < the split's: its own (it is there) */
			while (j + 1 < nb && bd[j] < s->value)
				j++;
			b->level_used[lv] = (uint16_t) u;
			b->level_bin[lv] = (uint8_t) j;
		}
		b->leaf_start[t] = nl;
		for (uint32_t i = 0; i < ((uint32_t) 1 << d); i++)
		{
			uint32_t	node = f->tree_offset[t] + first_leaf + i;

			b->leaf[nl++] = (double) f->nodes[node].value + (double) f->leaf_lo[node];
		}
	}
	b->level_start[f->n_trees] = (uint32_t) lv;
}

/* Build the bins of a forest; see forest_bins.h. */
GsCode
gs_forest_bins_build(GsForest *f, GsStatus *st)
{
	const GsAllocator *a = &f->alloc;
	GsForestBins *b = NULL;
	uint8_t    *nan_seen = NULL;
	int32_t    *used_of = NULL;
	float	   *tmp = NULL;
	uint32_t   *fill = NULL;
	int64_t		n_levels,
				n_leaves;
	int32_t		n_used;
	bool		ok = false;

	if (f->bins != NULL || !gs_forest_symmetric(f) || f->n_trees <= 0)
		return GS_OK;
	nan_seen = bins_alloc(a, (size_t) (f->n_features + f->n_derived));
	if (nan_seen == NULL)
		goto nomem;
	memset(nan_seen, 0, (size_t) (f->n_features + f->n_derived));
	if (!bins_fit(f, nan_seen, &n_levels, &n_leaves, &n_used))
	{
		/* not for bins: scored from the floats */
		gs_release(a, nan_seen);
		return GS_OK;
	}
	b = bins_alloc(a, sizeof(GsForestBins));
	if (b == NULL)
		goto nomem;
	memset(b, 0, sizeof(GsForestBins));
	b->n_used = n_used;
	b->n_levels = n_levels;
	b->n_leaves = n_leaves;
	used_of = bins_alloc(a, sizeof(int32_t) * (size_t) (f->n_features + f->n_derived));
	tmp = bins_alloc(a, sizeof(float) * (size_t) n_levels);
	fill = bins_alloc(a, sizeof(uint32_t) * ((size_t) n_used + 1));
	b->feature = bins_alloc(a, sizeof(int32_t) * (size_t) n_used);
	b->border_start = bins_alloc(a, sizeof(uint32_t) * ((size_t) n_used + 1));
	b->border = bins_alloc(a, sizeof(float) * (size_t) n_levels);
	b->nan_bin = bins_alloc(a, (size_t) n_used);
	b->level_start = bins_alloc(a, sizeof(uint32_t) * ((size_t) f->n_trees + 1));
	b->level_used = bins_alloc(a, sizeof(uint16_t) * (size_t) n_levels);
	b->level_bin = bins_alloc(a, (size_t) n_levels);
	b->leaf_start = bins_alloc(a, sizeof(int64_t) * (size_t) f->n_trees);
	b->leaf = bins_alloc(a, sizeof(double) * (size_t) n_leaves);
	if (used_of == NULL || tmp == NULL || fill == NULL || b->feature == NULL ||
		b->border_start == NULL || b->border == NULL || b->nan_bin == NULL ||
		b->level_start == NULL || b->level_used == NULL || b->level_bin == NULL ||
		b->leaf_start == NULL || b->leaf == NULL)
		goto nomem;
	ok = bins_borders(f, nan_seen, used_of, tmp, fill, b);
	if (ok)
		bins_levels_and_leaves(f, used_of, b);
	gs_release(a, nan_seen);
	gs_release(a, used_of);
	gs_release(a, tmp);
	gs_release(a, fill);
	if (ok)
		f->bins = b;
	else
		gs_forest_bins_free(a, b);
	return GS_OK;

nomem:
	gs_release(a, nan_seen);
	gs_release(a, used_of);
	gs_release(a, tmp);
	gs_release(a, fill);
	gs_forest_bins_free(a, b);
	return gs_status_set(st, GS_ERR_NOMEM, "out of memory preparing a model's bins");
}

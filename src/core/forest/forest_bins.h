/*
 * forest_bins.h
 *	  The quantized form of a forest of symmetric trees (gs_forest_symmetric:
 *	  CatBoost's) that the CPU engine scores it with.
 *
 * CatBoost's trees compare each feature against at most a few hundred
 * borders.  Sorted, the distinct thresholds t_0 < t_1 < ... of a feature's
 * splits cut its values into bins: a value's bin is the number of
 * thresholds at or below it, #{i : t_i <= v}.  For a value v that is not
 * NaN, t_0..t_j are all <= v exactly when t_j <= v, so
 *
 *	v < t_j  (the split sends v left)  <=>  bin(v) <= j
 *
 * whatever v and t_j are (-0.0 and 0.0 are one threshold; infinities
 * compare as floats do).  With at most GS_BINS_MAX_BORDERS thresholds a
 * feature a bin is a byte: the CPU engine bins a block of rows once, and
 * every level of every tree then compares bytes, sixteen rows to an SSE2
 * instruction, where floats would take four.  A missing value (NaN) gets
 * bin 0 when every split on its feature sends it left and
 * GS_BINS_NAN_RIGHT (greater than every j) when every one sends it right;
 * CatBoost decides that per feature (nan_value_treatment).  A forest that
 * does not fit (splits of one feature disagree about NaN, too many
 * thresholds, features or levels) gets no bins and is scored from its
 * floats, with the same results.
 *
 * Each tree's 2^d leaves are kept as doubles (GsForest.nodes[i].value +
 * leaf_lo[i], as gs_leaf_double) in the order of the leaf index the levels
 * give: sum of (went right at level k) << (d - 1 - k), the root's level
 * first.  The bins are derived from the nodes, built by gs_forest_bins_build
 * when a forest is loaded (but not by a load that keeps covers, which only
 * explanations use) or read from its image, never stored in the image, and
 * freed with the forest.
 */
#ifndef GS_FOREST_BINS_H
#define GS_FOREST_BINS_H

#include <stdint.h>

#include "forest.h"

#define GS_BINS_MAX_BORDERS 254		/* thresholds of one feature */
#define GS_BINS_NAN_RIGHT	255		/* the bin of NaN sent right */
#define GS_BINS_MAX_USED	1024	/* features the splits read (a CatBoost model's
									 * CTRs count: hundreds) */
#define GS_BINS_MAX_DEPTH	16		/* levels of one tree */

struct GsForestBins
{
	int32_t		n_used;			/* features the splits read */
	int32_t    *feature;		/* [n_used] their indices in a row */
	uint32_t   *border_start;	/* [n_used + 1] each one's thresholds in border */
	float	   *border;			/* ascending, distinct within a feature */
	uint8_t    *nan_bin;		/* [n_used] the bin of NaN: 0 or GS_BINS_NAN_RIGHT */
	uint32_t   *level_start;	/* [n_trees + 1] each tree's levels, root's first */
	uint16_t   *level_used;		/* which used feature a level's split reads */
	uint8_t    *level_bin;		/* j: the split sends a row right when bin > j */
	int64_t    *leaf_start;		/* [n_trees] each tree's first leaf in leaf */
	double	   *leaf;			/* 2^d leaves of each tree */
	int64_t		n_borders;
	int64_t		n_levels;
	int64_t		n_leaves;
};

/*
 * The bin of v among the n ascending thresholds t (n <= 254): the number
 * of them <= v, or nan_bin for NaN.  The same steps for every v of a
 * feature (a branch-free binary search), so rows do not mispredict.
 */
static inline uint8_t
gs_bins_of(float v, const float *t, uint32_t n, uint8_t nan_bin)
{
	uint32_t	base = 0;
	uint32_t	len = n;

	/* t[0..base) are <= v, t[base + len..n) are > v */
	while (len > 1)
	{
		uint32_t	half = len / 2;

		base += half & -(uint32_t) (t[base + half - 1] <= v);
		len -= half;
	}
	base += len & -(uint32_t) (t[base] <= v);	/* len is 1 unless n is 0 */
	return v == v ? (uint8_t) base : nan_bin;
}

/*
 * Build f->bins when f is symmetric and fits (see above); leave it NULL
 * otherwise.  Returns GS_OK, or GS_ERR_NOMEM (st filled, f->bins NULL).
 */
extern GsCode gs_forest_bins_build(GsForest *f, GsStatus *st);

/* Release bins built from alloc; NULL is allowed. */
extern void gs_forest_bins_free(const GsAllocator *alloc, GsForestBins *b);

/* Bytes the bins of f occupy (0 without). */
extern size_t gs_forest_bins_bytes(const GsForest *f);

#endif							/* GS_FOREST_BINS_H */

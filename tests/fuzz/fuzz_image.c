/*
 * fuzz_image.c
 *	  libFuzzer target: arbitrary bytes as a forest image
 *	  (gs_forest_image_read, src/core/forest/forest_image.c).
 *
 * An image is never trusted: whatever the bytes, the reader must either
 * refuse them with a clean status (fuzz_check_failure) or build a forest
 * that holds every invariant the engines trust (fuzz_check_forest, written
 * independently of the reader, and gs_forest_check itself) and scores the
 * same through both CPU paths (fuzz_score_forest).  An accepted forest must
 * also image again to bytes that read back as the same forest.  The input
 * is read from a copy at an odd address, as a bytea's data can lie.
 * Built and run by tests/fuzz/run.sh; seeds in tests/fuzz/corpus/fuzz_image/
 * (images of small fixtures, made by tests/fuzz/make_image_seeds.c).
 */
#include "fuzz_common.h"

#include "forest/catboost_ctr.h"
#include "forest/forest_image.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort unless a and b are the same forest, field by field. */
static void
check_same_forest(const GsForest *a, const GsForest *b)
{
	if (a->format != b->format || a->transform != b->transform ||
		a->n_features != b->n_features || a->n_groups != b->n_groups ||
		a->n_outputs != b->n_outputs || a->n_trees != b->n_trees ||
		a->max_depth != b->max_depth || a->n_nodes != b->n_nodes ||
		a->n_cat_words != b->n_cat_words || a->n_cat_splits != b->n_cat_splits ||
		a->split_kinds != b->split_kinds)
		fuzz_fail("a scalar changed on a second round trip");
	if (memcmp(a->objective, b->objective, sizeof(a->objective)) != 0 ||
		memcmp(a->booster, b->booster, sizeof(a->booster)) != 0 ||
		memcmp(a->saved_by, b->saved_by, sizeof(a->saved_by)) != 0)
		fuzz_fail("a name changed on a second round trip");
	if (memcmp(a->base_margin, b->base_margin, sizeof(float) * (size_t) a->n_groups) != 0 ||
		memcmp(a->tree_offset, b->tree_offset, sizeof(uint32_t) * (size_t) a->n_trees) != 0 ||
		memcmp(a->tree_group, b->tree_group, sizeof(int32_t) * (size_t) a->n_trees) != 0 ||
		memcmp(a->tree_depth, b->tree_depth, sizeof(int32_t) * (size_t) a->n_trees) != 0 ||
		memcmp(a->nodes, b->nodes, sizeof(GsNode) * (size_t) a->n_nodes) != 0 ||
		(a->leaf_lo == NULL) != (b->leaf_lo == NULL) ||
		(a->leaf_lo &&
		 memcmp(a->leaf_lo, b->leaf_lo, sizeof(float) * (size_t) a->n_nodes) != 0) ||
		(a->n_cat_words > 0 &&
		 memcmp(a->cat_words, b->cat_words, sizeof(uint32_t) * (size_t) a->n_cat_words) != 0))
		fuzz_fail("an array changed on a second round trip");
	if (a->n_derived != b->n_derived || (a->cb_ctrs == NULL) != (b->cb_ctrs == NULL) ||
		(a->cb_ctrs &&
		 (a->cb_ctrs->n_slots != b->cb_ctrs->n_slots || a->cb_ctrs->n_values != b->cb_ctrs->n_values ||
		  memcmp(a->cb_ctrs->slots, b->cb_ctrs->slots, sizeof(GsCbSlot) * (size_t) a->cb_ctrs->n_slots) != 0 ||
		  memcmp(a->cb_ctrs->values, b->cb_ctrs->values, sizeof(float) * (size_t) a->cb_ctrs->n_values) != 0)))
		fuzz_fail("CatBoost tables changed on a second round trip");
	if ((a->feature_names == NULL) != (b->feature_names == NULL))
		fuzz_fail("feature names appeared or vanished on a second round trip");
	if (a->feature_names)
		for (int32_t i = 0; i < a->n_features; i++)
			if (strcmp(a->feature_names[i], b->feature_names[i]) != 0)
				fuzz_fail("feature name %d changed on a second round trip", i);
}

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy = malloc(size + 1);
	unsigned char *img;
	GsForest   *f = NULL,
			   *g = NULL;
	GsStatus	st;
	GsCode		rc;
	size_t		len;

	if (!copy)
		fuzz_fail("out of memory in the target");
	if (size > 0)
		memcpy(copy + 1, data, size);
	rc = gs_forest_image_read(copy + 1, size, &fuzz_limits, &gs_malloc_allocator, &f, &st);
	free(copy);
	if (rc != GS_OK)
	{
		fuzz_check_failure(rc, f, &st);
		return 0;
	}
	if (f == NULL)
		fuzz_fail("read succeeded without a forest");
	fuzz_check_forest(f, &fuzz_limits);
	if (gs_forest_check(f, &fuzz_limits, &gs_malloc_allocator, &st) != GS_OK)
		fuzz_fail("accepted an image whose forest gs_forest_check refuses: %s", st.msg);
	fuzz_score_forest(f, data, size);

	/* what was accepted images again, to the same forest */
	len = gs_forest_image_size(f);
	if (len != size)
		fuzz_fail("image of %zu bytes read, %zu written back", size, len);
	img = malloc(len);
	if (!img)
		fuzz_fail("out of memory in the target");
	gs_forest_image_write(f, img);
	rc = gs_forest_image_read(img, len, &fuzz_limits, &gs_malloc_allocator, &g, &st);
	if (rc != GS_OK)
		fuzz_fail("the image of an accepted forest is refused: %s (%s)", st.msg, st.detail);
	check_same_forest(f, g);
	free(img);
	gs_forest_free(g);
	gs_forest_free(f);
	return 0;
}

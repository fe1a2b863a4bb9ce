/*
 * fuzz_xgb_json.c
 *	  libFuzzer target: arbitrary bytes as an XGBoost JSON model.
 *
 * Runs gs_xgb_load(..., GS_FORMAT_XGBOOST_JSON) and, on GS_FORMAT_AUTO,
 * the format detector too, gs_xgb_load_any (a linear booster's weights) and
 * gs_model_foreign_kind (files that are no model: XGBoost's and LightGBM's
 * JSON dumps start like JSON models).  A rejected input must give a clean status; an
 * accepted one must be a forest that holds every invariant the engines trust
 * and scores the same through both CPU paths (fuzz_common.h).  Built and run
 * by tests/fuzz/run.sh; seeds in tests/fuzz/corpus/fuzz_xgb_json/.
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *hint;
	const char *kind;

	fuzz_load_and_check(gs_xgb_load, data, size, GS_FORMAT_XGBOOST_JSON);
	if (gs_model_detect_format(data, size) == GS_FORMAT_XGBOOST_JSON)
		fuzz_load_and_check(gs_forest_load, data, size, GS_FORMAT_AUTO);
	/* a linear booster too: a forest without trees, with finite weights */
	{
		GsForest   *f = NULL;
		GsStatus	st;

		if (gs_xgb_load_any(data, size, GS_FORMAT_XGBOOST_JSON, &fuzz_limits, &gs_malloc_allocator,
							&f, &st) == GS_OK && f->linear_w)
		{
			int64_t		n = ((int64_t) f->n_features + 1) * f->n_groups;

			if (f->n_trees != 0 || f->n_groups < 1 || f->n_features < 1)
				fuzz_fail("a linear booster with %d trees, %d groups, %d features",
						  f->n_trees, f->n_groups, f->n_features);
			for (int64_t k = 0; k < n; k++)
				if (!isfinite(f->linear_w[k]))
					fuzz_fail("linear weight %lld is not finite", (long long) k);
		}
		gs_forest_free(f);
	}
	/* a file that is no model: named with a hint, or neither */
	kind = gs_model_foreign_kind(data, size, &hint);
	if ((kind == NULL) != (hint == NULL) || (kind && (!kind[0] || !hint[0])))
		fuzz_fail("foreign kind \"%s\" with hint \"%s\"", kind ? kind : "(null)",
				  hint ? hint : "(null)");
	return 0;
}

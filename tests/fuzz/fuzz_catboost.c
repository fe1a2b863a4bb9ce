/*
 * fuzz_catboost.c
 *	  libFuzzer target: arbitrary bytes as a CatBoost model saved as JSON.
 *
 * Runs gs_catboost_load(..., GS_FORMAT_CATBOOST_JSON) and the
 * format-dispatching gs_forest_load(..., GS_FORMAT_AUTO) with the checks of
 * fuzz_common.h: a clean status on rejection; on success a forest holding
 * every invariant the engines trust that scores the same through both CPU
 * paths.  Built and run by tests/fuzz/run.sh; seeds in
 * tests/fuzz/corpus/fuzz_catboost/.
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load_and_check(gs_catboost_load, data, size, GS_FORMAT_CATBOOST_JSON);
	fuzz_load_and_check(gs_forest_load, data, size, GS_FORMAT_AUTO);
	return 0;
}

/*
 * fuzz_lgbm.c
 *	  libFuzzer target: arbitrary bytes as a LightGBM text model.
 *
 * Runs gs_lgbm_load(..., GS_FORMAT_LIGHTGBM) and the format-dispatching
 * gs_forest_load(..., GS_FORMAT_AUTO) with the checks of fuzz_common.h: a
 * clean status on rejection; on success a forest holding every invariant
 * the engines trust (category sets included) that scores the same through
 * both CPU paths.  Built and run by tests/fuzz/run.sh; seeds in
 * tests/fuzz/corpus/fuzz_lgbm/.
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load_and_check(gs_lgbm_load, data, size, GS_FORMAT_LIGHTGBM);
	fuzz_load_and_check(gs_forest_load, data, size, GS_FORMAT_AUTO);
	return 0;
}

/*
 * fuzz_xgb_binary.c
 *	  libFuzzer target: arbitrary bytes as a model in XGBoost's legacy binary
 *	  format.
 *
 * Runs the whole loader gs_xgb_load(..., GS_FORMAT_XGBOOST_BINARY), which
 * decodes the bytes (xgb_binary.c) into the document xgb_load.c validates,
 * with the checks of fuzz_common.h.  Built and run by tests/fuzz/run.sh;
 * seeds in tests/fuzz/corpus/fuzz_xgb_binary/ (small fixture models of
 * XGBoost 1.0 - 2.0, with and without the "binf" magic, and damaged ones).
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load_and_check(gs_xgb_load, data, size, GS_FORMAT_XGBOOST_BINARY);
	return 0;
}

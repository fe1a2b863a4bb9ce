/*
 * fuzz_xgb_ubj.c
 *	  libFuzzer target: arbitrary bytes as an XGBoost UBJSON model.
 *
 * Runs the UBJSON decoder alone (ubj_decode.c, with tight caps, and checks
 * that what it returns can be serialised by jansson) and then the whole
 * loader gs_xgb_load(..., GS_FORMAT_XGBOOST_UBJ) with the checks of
 * fuzz_common.h.  Built and run by tests/fuzz/run.sh; seeds in
 * tests/fuzz/corpus/fuzz_xgb_ubj/.
 */
#include "fuzz_common.h"

#include <jansson.h>

#include "frontend/common/ubj_decode.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input; see the header comment. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		err[128];
	GsUbjLimits ulim = {.max_depth = 16, .max_elements = 100000};
	json_t	   *doc;

	memset(err, 'x', sizeof(err));
	doc = gs_ubj_decode(data, size, &ulim, err, sizeof(err));
	if (doc == NULL)
	{
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			fuzz_fail("UBJSON decoder failed without a terminated message");
	}
	else
	{
		char	   *text = json_dumps(doc, JSON_ENCODE_ANY);

		if (text == NULL)
			fuzz_fail("decoded UBJSON document cannot be serialised");
		free(text);
		json_decref(doc);
	}

	fuzz_load_and_check(gs_xgb_load, data, size, GS_FORMAT_XGBOOST_UBJ);
	return 0;
}

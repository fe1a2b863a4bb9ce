/*
 * catboost_loss.c
 *	  The output transform of CatBoost's predict for each loss function
 *	  (model_info.params.loss_function.type of a JSON model), for
 *	  catboost_load.c.
 */
#include "catboost_read.h"

#include <string.h>

#define CB_ERR(st, ...) gs_status_set((st), GS_ERR_INVALID_MODEL, __VA_ARGS__)

/* The output transform of a CatBoost loss function; see catboost_ctr.h. */
GsCode
gs_cb_loss(const char *name, int32_t dim, GsTransform *tf, GsStatus *st)
{
	/* losses whose predictions are the raw values: regression, ranking */
	static const char *const raw[] = {
		"RMSE", "MAE", "Quantile", "MultiQuantile", "Expectile", "LogLinQuantile", "MAPE",
		"Huber", "Lq", "LogCosh", "MultiRMSE", "FairLoss", "NumErrors",
		"YetiRank", "YetiRankPairwise", "PairLogit", "PairLogitPairwise", "QueryRMSE",
		"QuerySoftMax", "QueryCrossEntropy", "StochasticFilter", "StochasticRank", "LambdaMart",
		"Cox", "SurvivalAft",	/* survival: the log of a hazard ratio or of a time */
		NULL
	};

	/* Focal: Logloss's probabilities, trained to weigh rare positives more */
	if (strcmp(name, "Logloss") == 0 || strcmp(name, "CrossEntropy") == 0 ||
		strcmp(name, "Focal") == 0)
	{
		if (dim != 1)
			return CB_ERR(st, "invalid CatBoost model: a %s model with %d outputs", name, dim);
		*tf = GS_TRANSFORM_SIGMOID;
		return GS_OK;
	}
	if (strcmp(name, "MultiClass") == 0)
	{
		if (dim < 2)
			return CB_ERR(st, "invalid CatBoost model: a MultiClass model with %d output", dim);
		*tf = GS_TRANSFORM_SOFTMAX;
		return GS_OK;
	}
	/* a probability per class, or per label of a multi-label model */
	if (strcmp(name, "MultiClassOneVsAll") == 0 || strcmp(name, "MultiLogloss") == 0 ||
		strcmp(name, "MultiCrossEntropy") == 0)
	{
		*tf = GS_TRANSFORM_SIGMOID;
		return GS_OK;
	}
	if (strcmp(name, "Poisson") == 0 || strcmp(name, "Tweedie") == 0)
	{
		*tf = GS_TRANSFORM_EXP;
		return GS_OK;
	}
	for (int i = 0; raw[i]; i++)
		if (strcmp(name, raw[i]) == 0)
		{
			*tf = GS_TRANSFORM_IDENTITY;
			return GS_OK;
		}
	gs_status_set(st, GS_ERR_UNSUPPORTED, "CatBoost's loss function \"%.64s\" is not supported", name);
	gs_status_detail(st, "Classification (Logloss, CrossEntropy, Focal, MultiClass, MultiClassOneVsAll, "
					 "MultiLogloss, MultiCrossEntropy), Poisson, Tweedie, regression, survival (Cox, "
					 "SurvivalAft) and ranking losses are.");
	return st->code;
}

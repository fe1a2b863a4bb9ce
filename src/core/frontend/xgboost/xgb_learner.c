/*
 * xgb_learner.c
 *	  What the XGBoost loader (xgb_load.c) reads from the learner beside the
 *	  trees: the scikit-learn API's attributes (early stopping's
 *	  best_iteration, the `missing` value 1.x saves) and the linear booster's
 *	  weights (gblinear, xgb_linear.h).
 */
#include "xgb_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/common/json_decode.h"

/*
 * Early stopping: a model saved by XGBoost's scikit-learn API (its
 * attributes hold "scikit_learn") with a "best_iteration" attribute is
 * scored by XGBClassifier.predict_proba & co. with the rounds up to
 * best_iteration only (iteration_range (0, best_iteration + 1)), while a
 * Booster's predict uses every round.  Follow the scikit-learn API for such
 * models, as the user who saved one sees it score: *num_trees becomes the
 * trees of those rounds (from "iteration_indptr", XGBoost 2.0+, or
 * num_parallel_tree x outputs per round before), and f->load_note says so.
 */
GsCode
gs_xgb_best_iteration_trees(json_t *learner, json_t *model, GsForest *f, int64_t *num_trees, GsStatus *st)
{
	json_t	   *attrs = gs_xgb_member(learner, "attributes");
	json_t	   *bi = gs_xgb_member(attrs, "best_iteration");
	json_t	   *indptr = gs_xgb_member(model, "iteration_indptr");
	int64_t		best,
				rounds,
				keep;
	char	   *end;

	if (bi == NULL || gs_xgb_member(attrs, "scikit_learn") == NULL)
		return GS_OK;
	if (!json_is_string(bi) || (best = strtoll(json_string_value(bi), &end, 10), *end != '\0') ||
		json_string_value(bi)[0] == '\0' || best < 0)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: attribute \"best_iteration\" is not a round number");
	if (json_is_array(indptr))
	{
		int64_t		prev = 0,
					v;

		rounds = (int64_t) json_array_size(indptr) - 1;
		for (int64_t i = 0; i <= rounds; i++)
		{
			if (elem_int(indptr, (size_t) i, &v) || v < prev || (i == 0 && v != 0) ||
				(i == rounds && v != *num_trees))
				return gs_status_set(st, GS_ERR_INVALID_MODEL,
									 "invalid XGBoost model: \"iteration_indptr\" does not index the %lld trees",
									 (long long) *num_trees);
			prev = v;
		}
		if (rounds < 1 || best + 1 >= rounds)
			return GS_OK;
		elem_int(indptr, (size_t) (best + 1), &keep);
	}
	else
	{
		int64_t		per = 1;

		gs_xgb_json_to_int64(gs_xgb_member(gs_xgb_member(model, "gbtree_model_param"), "num_parallel_tree"), &per);
		per = (per < 1 ? 1 : per) * f->n_groups;
		if (*num_trees % per != 0)
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: %lld trees are not whole rounds of %lld",
								 (long long) *num_trees, (long long) per);
		rounds = *num_trees / per;
		if (best + 1 >= rounds)
			return GS_OK;
		keep = (best + 1) * per;
	}
	if (keep < 1)
		return GS_OK;
	snprintf(f->load_note, sizeof(f->load_note),
			 "scoring the %lld boosting rounds up to best_iteration %lld of its %lld (early stopping), as XGBoost's scikit-learn predict does",
			 (long long) (best + 1), (long long) best, (long long) rounds);
	*num_trees = keep;
	return GS_OK;
}

/*
 * XGBoost's scikit-learn API saves its parameters in the attribute
 * "scikit_learn" (JSON text), among them `missing` (XGBoost 1.x; 2.0 and
 * later save no parameters there): its predict, also after load_model,
 * takes x == missing as missing, a Booster's predict does not.  A finite
 * value is kept in the forest (has_missing_value), so rows score as that
 * predict scores them, as for best_iteration.  NaN (the default) changes
 * nothing.
 */
GsCode
gs_xgb_sklearn_missing(json_t *learner, GsForest *f, GsStatus *st)
{
	json_t	   *sk = gs_xgb_member(gs_xgb_member(learner, "attributes"), "scikit_learn");
	json_t	   *doc,
			   *mv;
	GsStatus	ignored;

	if (!json_is_string(sk))
		return GS_OK;
	doc = gs_json_decode((const unsigned char *) json_string_value(sk), json_string_length(sk),
						GS_FORMAT_XGBOOST_JSON, NULL, &ignored);
	if (!json_is_object(doc))
	{
		json_decref(doc);
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: attribute \"scikit_learn\" is not a JSON object");
	}
	mv = gs_xgb_member(doc, "missing");
	if (json_is_number(mv) && fabs(json_number_value(mv)) <= FLT_MAX)
	{
		f->has_missing_value = true;
		f->missing_value = (float) json_number_value(mv);
	}
	json_decref(doc);
	return GS_OK;
}

/*
 * A linear booster's "weights" into f->linear_w: (n_features + 1) x
 * n_groups finite floats.  f->n_features and f->n_groups must be set.
 */
GsCode
gs_xgb_linear_weights(json_t *weights, const GsLimits *lim, GsForest *f, GsStatus *st)
{
	int64_t		n_w = ((int64_t) f->n_features + 1) * f->n_groups;

	if (!json_is_array(weights))
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: gblinear booster without a \"weights\" array");
	if ((int64_t) json_array_size(weights) != n_w)
		return gs_status_set(st, GS_ERR_INVALID_MODEL,
							 "invalid XGBoost model: gblinear has %zu weights, not (%d features + 1) x %d groups",
							 json_array_size(weights), f->n_features, f->n_groups);
	if (lim->max_parameters > 0 && n_w > lim->max_parameters)
		return gs_status_limit(st, GS_LIMIT_PARAMETERS, lim->max_parameters,
							   "%lld weights, more than the limit of %lld parameters",
							 (long long) n_w, (long long) lim->max_parameters);
	f->linear_w = f->alloc.alloc(f->alloc.ctx, sizeof(float) * (size_t) n_w);
	if (f->linear_w == NULL)
		return gs_status_set(st, GS_ERR_NOMEM, "out of memory loading model");
	for (int64_t k = 0; k < n_w; k++)
	{
		json_t	   *v = json_array_get(weights, (size_t) k);
		double		d = json_is_number(v) ? json_number_value(v) : NAN;

		if (!(fabs(d) <= FLT_MAX))
			return gs_status_set(st, GS_ERR_INVALID_MODEL,
								 "invalid XGBoost model: gblinear weight %lld is not a finite float",
								 (long long) k);
		f->linear_w[k] = (float) d;
	}
	return GS_OK;
}

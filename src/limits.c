/*
 * limits.c
 *	  The caps on model size and shape (GsLimits) the core checks models
 *	  against, from the pg_gpuscore.max_* settings (pg_gpuscore.c).
 *
 * Plain values: nothing is allocated.
 */
#include "postgres.h"

#include <limits.h>

#include "gpuscore.h"

/*
 * The widest caps the settings allow, for a model that was checked against
 * the caps of its session when it was stored (the GPU service loads it
 * again, with settings of its own).
 */
GsLimits
gs_widest_limits(void)
{
	GsLimits	lim = gs_default_limits;

	lim.max_model_bytes = (size_t) GS_GUC_MAX_MODEL_SIZE_KB * 1024;
	lim.max_trees = GS_GUC_MAX_TREES;
	lim.max_depth = GS_GUC_MAX_TREE_DEPTH;
	lim.max_features = GS_GUC_MAX_FEATURES;
	lim.max_nodes = INT_MAX;
	lim.max_layers = GS_GUC_MAX_LAYERS;
	lim.max_parameters = INT_MAX;
	return lim;
}

/* Current caps as the core wants them. */
GsLimits
gs_current_limits(void)
{
	GsLimits	lim = gs_default_limits;

	lim.max_model_bytes = (size_t) gs_max_model_size_kb * 1024;
	lim.max_trees = gs_max_trees;
	lim.max_depth = gs_max_tree_depth;
	lim.max_features = gs_max_features;
	lim.max_nodes = gs_max_nodes;
	lim.max_layers = gs_max_layers;
	lim.max_parameters = gs_max_parameters;
	return lim;
}

/*
 * make_image_seeds.c
 *	  Writes the seed corpus of fuzz_image (tests/fuzz/corpus/fuzz_image/):
 *	  the forest images (forest_image.h) of a few small fixture models, one
 *	  of each kind of split and layout (numerical, categorical,
 *	  zero-as-missing, equality, several output groups, feature names,
 *	  category names, a missing value, linear leaves, a CatBoost model, its
 *	  categorical features' tables, with names or found by hash), and
 *	  of a hand-made model with more output groups than trees.
 *
 * Not part of any build; run from the repository root to regenerate the
 * seeds after a change of the image layout (GS_IMAGE_VERSION; the seeds of
 * older versions may stay, as the reader still reads them):
 *
 *	make src/core/frontend/onnx/onnx.pb-c.h
 *	B=/usr/lib/$(cc -print-multiarch)/openblas-serial
 *	cc -std=c11 -D_GNU_SOURCE -Isrc/core -Isrc \
 *		-I/usr/include/$(cc -print-multiarch)/openblas-serial \
 *		-o /tmp/make_image_seeds tests/fuzz/make_image_seeds.c src/core/*.c src/core/*/*.c src/core/*/*/*.c \
 *		-ljansson -lm -lprotobuf-c -L$B -Wl,-rpath,$B -lopenblas
 *	/tmp/make_image_seeds
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/forest_image.h"
#include "model.h"
#include "../common/test_util.h"

#define OUT_DIR "tests/fuzz/corpus/fuzz_image"

/* Fixtures (under tests/fixtures) whose images are seeds. */
static const char *const fixtures[] = {
	"models/tiny_base.json",	/* numerical, 3 trees */
	"models/stumps.json",		/* 40 trees of depth 1 */
	"models/iris_softmax.json", /* 3 output groups */
	"models/x10_dart.json",		/* dart */
	"models/x3_cat_poisson.json",	/* XGBoost categorical splits */
	"models/lgb_tiny.txt",		/* LightGBM: feature names, a category set */
	"models/lgb_rf.txt",		/* LightGBM random forest, categorical */
	"models/lgb_zero_missing.txt",	/* zero-as-missing splits */
	/* (every LightGBM model: double leaves, leaf_lo) */
	"onnx/trees/onnx_edit_modes.onnx",	/* equality splits */
	"models/x3_catnames_reg.json",	/* category names: text and integers */
	"models/lgb_catnames.txt",	/* category names outside ASCII */
	"models/x17_sk_missing.model",	/* a missing value (version 4), binary format */
	"models/lgb_linear_rf.txt",	/* linear leaves (version 5) */
	"models/cb_ova.json",		/* CatBoost: double leaves, 3 groups */
	"models/cb_cat_combo.json",	/* CatBoost tables: one-hot values, CTRs of
								 * combinations (version 7) */
	"models/cb_cat_int_nopool.json",	/* CatBoost names found by hash */
};

/* XGBoost JSON: 3 classes, one tree (the other classes score their base). */
static const char groups_json[] =
	"{\"learner\":{\"attributes\":{},\"feature_names\":[],\"feature_types\":[],"
	"\"gradient_booster\":{\"name\":\"gbtree\",\"model\":{\"gbtree_model_param\":"
	"{\"num_parallel_tree\":\"1\",\"num_trees\":\"1\"},\"iteration_indptr\":[],"
	"\"tree_info\":[0],\"trees\":[{\"base_weights\":[],\"categories\":[],"
	"\"categories_nodes\":[],\"categories_segments\":[],\"categories_sizes\":[],\"id\":0,"
	"\"left_children\":[1,-1,-1],\"right_children\":[2,-1,-1],\"split_indices\":[1,0,0],"
	"\"default_left\":[1,0,0],\"split_conditions\":[0.5,-1.0,1.0],\"split_type\":[0,0,0],"
	"\"tree_param\":{\"num_nodes\":\"3\"}}]}},\"learner_model_param\":{\"base_score\":\"0.5\","
	"\"num_class\":\"3\",\"num_feature\":\"2\",\"num_target\":\"1\"},"
	"\"objective\":{\"name\":\"multi:softprob\"}},\"version\":[1,7,4]}";

/* Write the image of f to OUT_DIR/name; 0 on success. */
static int
write_image(const GsForest *f, const char *name)
{
	char		path[512];
	size_t		len = gs_forest_image_size(f);
	unsigned char *img = calloc(1, len);
	FILE	   *out;
	int			ok;

	gs_forest_image_write(f, img);
	snprintf(path, sizeof(path), OUT_DIR "/%s", name);
	out = fopen(path, "wb");
	ok = out != NULL && fwrite(img, 1, len, out) == len;
	if (out && fclose(out) != 0)
		ok = 0;
	free(img);
	fprintf(stderr, "%s: %zu bytes%s\n", path, len, ok ? "" : " NOT WRITTEN");
	return ok ? 0 : 1;
}

int
main(void)
{
	int			failed = 0;
	GsForest   *f;
	GsStatus	st;

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
	{
		char		path[512],
					name[256];
		const char *base = strrchr(fixtures[i], '/') + 1;
		size_t		len;
		unsigned char *bytes;
		GsModel    *m = NULL;

		snprintf(path, sizeof(path), "tests/fixtures/%s", fixtures[i]);
		bytes = gs_read_file(path, &len);
		if (!bytes || gs_model_load(bytes, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator,
									&m, &st) != GS_OK || m->forest == NULL)
		{
			fprintf(stderr, "%s: %s\n", path, bytes ? st.msg : "cannot read");
			failed++;
		}
		else
		{
			snprintf(name, sizeof(name), "valid-%.*s.img", (int) strcspn(base, "."), base);
			failed += write_image(m->forest, name);
		}
		gs_model_free(m);
		free(bytes);
	}
	if (gs_forest_load((const unsigned char *) groups_json, sizeof(groups_json) - 1,
					   GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &f, &st) != GS_OK)
	{
		fprintf(stderr, "3 groups, 1 tree: %s\n", st.msg);
		failed++;
	}
	else
	{
		failed += write_image(f, "valid-3groups_1tree.img");
		gs_forest_free(f);
	}
	return failed ? 1 : 0;
}

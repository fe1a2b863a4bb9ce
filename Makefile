# Makefile for pg_gpuscore (PGXS)
#
#   make && make install        build and install the extension
#   make installcheck           pg_regress tests against a running server
#   make unittest               core unit tests without a server
#   make unittest-asan          the same under ASan + UBSan
#
# The scoring core (src/core) is plain C11 and links into the extension and
# into the unit tests and benchmarks.  cuda/ is built into a separate
# provider only when nvcc is found (see cuda/Makefile.inc).

MODULE_big = pg_gpuscore
EXTENSION  = pg_gpuscore
DATA       = sql/pg_gpuscore--0.1.0.sql sql/pg_gpuscore--0.2.0.sql sql/pg_gpuscore--0.3.0.sql sql/pg_gpuscore--0.4.0.sql sql/pg_gpuscore--0.5.0.sql sql/pg_gpuscore--0.5.1.sql sql/pg_gpuscore--0.5.2.sql sql/pg_gpuscore--0.5.3.sql sql/pg_gpuscore--0.5.4.sql sql/pg_gpuscore--0.6.0.sql sql/pg_gpuscore--0.1.0--0.2.0.sql sql/pg_gpuscore--0.2.0--0.3.0.sql sql/pg_gpuscore--0.3.0--0.4.0.sql sql/pg_gpuscore--0.4.0--0.5.0.sql sql/pg_gpuscore--0.5.0--0.5.1.sql sql/pg_gpuscore--0.5.1--0.5.2.sql sql/pg_gpuscore--0.5.2--0.5.3.sql sql/pg_gpuscore--0.5.3--0.5.4.sql sql/pg_gpuscore--0.5.4--0.6.0.sql
PGFILEDESC = "pg_gpuscore - score tree-ensemble models inside PostgreSQL"

CORE_OBJS = \
	src/core/forest.o \
	src/core/forest_image.o \
	src/core/forest_check.o \
	src/core/gs_status.o \
	src/core/utf8_valid.o \
	src/core/ubj_decode.o \
	src/core/ubj_reader.o \
	src/core/xgb_decode.o \
	src/core/xgb_binary.o \
	src/core/xgb_load.o \
	src/core/xgb_learner.o \
	src/core/xgb_json.o \
	src/core/xgb_trees.o \
	src/core/lgbm_load.o \
	src/core/lgbm_text.o \
	src/core/lgbm_linear.o \
	src/core/catboost_load.o \
	src/core/catboost_ctr.o \
	src/core/catboost_ctr_read.o \
	src/core/catboost_ctr_image.o \
	src/core/catboost_loss.o \
	src/core/catboost_hash.o \
	src/core/catboost_names.o \
	src/core/forest_bins.o \
	src/core/cpu_engine.o \
	src/core/cat_names.o \
	src/core/xgb_cats.o \
	src/core/lgbm_cats.o \
	src/core/forest_shap.o \
	$(NN_OBJS)

# Neural networks (ONNX): protobuf-c code generated from ONNX's onnx.proto,
# the loader, the BLAS CPU engine and the kind dispatch (src/core/model.c).
NN_OBJS = src/core/onnx.pb-c.o src/core/onnx_load.o src/core/onnx_output.o src/core/onnx_ops.o src/core/onnx_linear.o src/core/onnx_act.o src/core/onnx_shape.o \
	src/core/onnx_fuse.o src/core/onnx_fuse_norm.o src/core/onnx_fuse_norm_tf.o src/core/onnx_fold.o src/core/onnx_skip.o src/core/onnx_order.o \
	src/core/onnx_tensor.o src/core/onnx_trees.o src/core/onnx_trees_walk.o src/core/onnx_trees_graph.o \
	src/core/onnx_trees_v5.o src/core/onnx_trees_prep.o src/core/onnx_trees_fold.o src/core/onnx_iforest.o src/core/onnx_iforest_eval.o src/core/onnx_prep_cat.o src/core/onnx_mlp_prep.o src/core/mlp.o src/core/xgb_linear.o src/core/model.o

GLUE_OBJS = \
	src/pg_gpuscore.o \
	src/errors.o \
	src/catalog.o \
	src/model_cache.o \
	src/features.o \
	src/scalar.o \
	src/categories.o \
	src/score_query.o \
	src/verify.o \
	src/provider.o \
	src/device.o \
	src/trigger_common.o \
	src/trigger_score.o \
	src/trigger_alert.o \
	src/aggregate.o \
	src/run_guard.o \
	src/explain.o \
	src/row_error.o \
	src/row_features.o \
	src/batch_plan.o \
	src/batch_exec.o \
	src/service_shmem.o \
	src/service_worker.o \
	src/citus.o \
	src/citus_query.o \
	src/service_device.o \
	src/service_client.o

OBJS = $(CORE_OBJS) $(GLUE_OBJS)

REGRESS = load score errors score_query batch_calls parity formats verify device memory gpu_engine trigger aggregate score_table feature_order categories catboost_cats explain onnx onnx_trees bad_input privileges model_image gpu_service
REGRESS_OPTS = --load-extension=pg_gpuscore

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -ffp-contract=off -Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers
SHLIB_LINK = -ljansson -lm -ldl $(NN_LIBS) -Wl,--version-script=$(srcdir)/src/exports.map

# Debian's serial (single-threaded) OpenBLAS: a backend must not start
# threads.  Its directory is found at run time through the rpath.
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
OPENBLAS_DIR ?= /usr/lib/$(MULTIARCH)/openblas-serial
OPENBLAS_INC ?= /usr/include/$(MULTIARCH)/openblas-serial
NN_LIBS = -lprotobuf-c -L$(OPENBLAS_DIR) -Wl,-rpath,$(OPENBLAS_DIR) -lopenblas
PG_CPPFLAGS += -I$(OPENBLAS_INC)

# Objects are plain gcc objects; no LLVM bitcode for JIT inlining.
override with_llvm = no

# The CPU engine of networks applies each element-wise step to a column in
# a loop of unknown length: gcc's -O2 cost model ("very cheap") leaves such
# loops scalar, its "dynamic" one vectorizes them (about 1.5x the rows/s of
# a 256-wide ResNet; the same floats: no reassociation).  Only where the
# compiler takes the option.
VECT_CFLAGS := $(shell $(CC) -fvect-cost-model=dynamic -E -x c /dev/null >/dev/null 2>&1 && echo -fvect-cost-model=dynamic)
src/core/mlp.o: CFLAGS += $(VECT_CFLAGS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# ---- core unit tests and benchmark (no server) ----
# onnx.pb-c.[ch]: generated (not committed) from the onnx.proto Debian's libonnx-dev ships.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
src/core/onnx.pb-c.c src/core/onnx.pb-c.h &: $(ONNX_PROTO)
	protoc-c --c_out=src/core --proto_path=$(dir $(ONNX_PROTO)) $(ONNX_PROTO)
src/core/onnx_load.o src/core/onnx_output.o src/core/onnx_ops.o src/core/onnx_linear.o src/core/onnx_act.o src/core/onnx_shape.o src/core/onnx_fuse.o src/core/onnx_fuse_norm.o src/core/onnx_fuse_norm_tf.o src/core/onnx_fold.o src/core/onnx_skip.o src/core/onnx_order.o src/core/onnx_tensor.o src/core/onnx_trees.o \
	src/core/onnx_trees_walk.o src/core/onnx_trees_graph.o src/core/onnx_trees_v5.o src/core/onnx_trees_prep.o src/core/onnx_trees_fold.o src/core/onnx_iforest.o src/core/onnx_iforest_eval.o src/core/onnx_prep_cat.o src/core/onnx_mlp_prep.o: src/core/onnx.pb-c.h
CORE_SRC = src/core/forest.c src/core/forest_image.c src/core/forest_check.c src/core/gs_status.c src/core/utf8_valid.c src/core/ubj_decode.c src/core/ubj_reader.c src/core/xgb_decode.c src/core/xgb_binary.c src/core/xgb_load.c src/core/xgb_learner.c src/core/xgb_json.c src/core/xgb_trees.c src/core/lgbm_load.c src/core/lgbm_text.c src/core/lgbm_linear.c src/core/catboost_load.c src/core/catboost_ctr.c src/core/catboost_ctr_read.c src/core/catboost_ctr_image.c src/core/catboost_loss.c src/core/catboost_hash.c src/core/catboost_names.c src/core/forest_bins.c src/core/cpu_engine.c src/core/cat_names.c src/core/xgb_cats.c src/core/lgbm_cats.c src/core/forest_shap.c
NN_SRC = src/core/onnx.pb-c.c src/core/onnx_load.c src/core/onnx_output.c src/core/onnx_ops.c src/core/onnx_linear.c src/core/onnx_act.c src/core/onnx_shape.c \
	src/core/onnx_fuse.c src/core/onnx_fuse_norm.c src/core/onnx_fuse_norm_tf.c src/core/onnx_fold.c src/core/onnx_skip.c src/core/onnx_order.c \
	src/core/onnx_tensor.c \
	src/core/onnx_trees.c src/core/onnx_trees_walk.c src/core/onnx_trees_graph.c \
	src/core/onnx_trees_v5.c src/core/onnx_trees_prep.c src/core/onnx_trees_fold.c src/core/onnx_iforest.c src/core/onnx_iforest_eval.c src/core/onnx_prep_cat.c src/core/onnx_mlp_prep.c src/core/mlp.c src/core/xgb_linear.c src/core/model.c
NN_CFLAGS = -I$(OPENBLAS_INC)

tests/unit/test_mlp: tests/unit/test_mlp.c tests/unit/test_mlp_sklearn.c tests/unit/test_mlp_hostile.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_mlp.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_mlp_asan: tests/unit/test_mlp.c tests/unit/test_mlp_sklearn.c tests/unit/test_mlp_hostile.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_mlp.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# ONNX-ML tree ensembles (src/core/onnx_trees.c) against onnxruntime's scores.
tests/unit/test_onnx_trees: tests/unit/test_onnx_trees.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_onnx_trees.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_onnx_trees_asan: tests/unit/test_onnx_trees.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_onnx_trees.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# Model files from the wild (tests/wild/): published files against their libraries' scores.
tests/unit/test_wild: tests/unit/test_wild.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_wild.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_wild_asan: tests/unit/test_wild.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_wild.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# Forest images (src/core/forest_image.c): round trip of every fixture, damaged images.
tests/unit/test_image: tests/unit/test_image.c tests/unit/image_util.h tests/unit/image_check.h $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_image.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_image_corrupt: tests/unit/test_image_corrupt.c tests/unit/image_util.h $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_image_corrupt.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_image_asan: tests/unit/test_image.c tests/unit/image_util.h tests/unit/image_check.h $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_image.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_image_corrupt_asan: tests/unit/test_image_corrupt.c tests/unit/image_util.h $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_image_corrupt.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# Loaders and CPU engine on one model file of any format (bench/bench_formats.sh).
bench/bench_formats: bench/bench_formats.c bench/bench_util.h $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ bench/bench_formats.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# One step of the differential campaign against the libraries (tests/diff/README.md); ASan+UBSan.
tests/diff/diff_score: tests/diff/diff_score.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/diff/diff_score.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# CPU engine (BLAS) against a naive triple loop, no server (bench/README.md).
bench/bench_mlp: bench/bench_mlp.c bench/bench_util.h $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(VECT_CFLAGS) $(NN_CFLAGS) -o $@ bench/bench_mlp.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)
UNIT_CFLAGS = -std=c11 -D_GNU_SOURCE -O2 -g -ffp-contract=off -Wall -Wextra -Werror -Isrc/core -Isrc
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

tests/unit/test_core: tests/unit/test_core.c tests/unit/core_util.h $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/test_core.c $(CORE_SRC) -ljansson -lm

tests/unit/test_core_asan: tests/unit/test_core.c tests/unit/core_util.h $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_core.c $(CORE_SRC) -ljansson -lm

tests/unit/test_core_api: tests/unit/test_core_api.c tests/unit/core_util.h $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/test_core_api.c $(CORE_SRC) -ljansson -lm

tests/unit/test_core_api_asan: tests/unit/test_core_api.c tests/unit/core_util.h $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_core_api.c $(CORE_SRC) -ljansson -lm

# Category names of tree ensembles (src/core/cat_names.c) against the libraries, rows by name.
tests/unit/test_catnames: tests/unit/test_catnames.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_catnames.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_catnames_asan: tests/unit/test_catnames.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_catnames.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# Explanations (src/core/forest_shap.c) against XGBoost's and LightGBM's own TreeSHAP.
tests/unit/test_shap: tests/unit/test_shap.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ tests/unit/test_shap.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_shap_asan: tests/unit/test_shap.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_shap.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

UBJ_SRC = src/core/ubj_decode.c src/core/ubj_reader.c src/core/utf8_valid.c
UBJ_DEPS = $(UBJ_SRC) src/core/ubj_decode.h src/core/ubj_internal.h tests/unit/ubj_util.h

tests/unit/test_ubj: tests/unit/test_ubj.c $(UBJ_DEPS)
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/test_ubj.c $(UBJ_SRC) -ljansson -lm

tests/unit/test_ubj_asan: tests/unit/test_ubj.c $(UBJ_DEPS)
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_ubj.c $(UBJ_SRC) -ljansson -lm

tests/unit/test_ubj_model: tests/unit/test_ubj_model.c $(UBJ_DEPS)
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/test_ubj_model.c $(UBJ_SRC) -ljansson -lm

tests/unit/test_ubj_model_asan: tests/unit/test_ubj_model.c $(UBJ_DEPS)
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_ubj_model.c $(UBJ_SRC) -ljansson -lm

# Emulation of the GPU kernels' phase code on the CPU (cuda/kernel_phases.h).
tests/unit/test_kernel_emulation: tests/unit/test_kernel_emulation.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -Icuda -o $@ tests/unit/test_kernel_emulation.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_kernel_emulation_asan: tests/unit/test_kernel_emulation.c $(CORE_SRC) $(NN_SRC) src/core/*.h src/core/onnx.pb-c.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -Icuda -o $@ tests/unit/test_kernel_emulation.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

tests/unit/test_device_math: tests/unit/test_device_math.c $(CORE_SRC) src/core/*.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) -Icuda -o $@ tests/unit/test_device_math.c $(CORE_SRC) -ljansson -lm

tests/unit/test_device_math_asan: tests/unit/test_device_math.c $(CORE_SRC) src/core/*.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -Icuda -o $@ tests/unit/test_device_math.c $(CORE_SRC) -ljansson -lm

# The CPU engine's binned path for symmetric forests (src/core/forest_bins.c).
tests/unit/test_bins: tests/unit/test_bins.c $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) -o $@ tests/unit/test_bins.c $(CORE_SRC) -ljansson -lm

tests/unit/test_bins_asan: tests/unit/test_bins.c $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -o $@ tests/unit/test_bins.c $(CORE_SRC) -ljansson -lm

# Emulation of the binned GPU kernel (cuda/forest_binned.h, cuda/binned_phases.h).
tests/unit/test_binned: tests/unit/test_binned.c tests/unit/binned_emul.h $(CORE_SRC) src/core/*.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) -Icuda -o $@ tests/unit/test_binned.c $(CORE_SRC) -ljansson -lm

tests/unit/test_binned_asan: tests/unit/test_binned.c tests/unit/binned_emul.h $(CORE_SRC) src/core/*.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -Icuda -o $@ tests/unit/test_binned.c $(CORE_SRC) -ljansson -lm

tests/unit/test_binned_synth: tests/unit/test_binned_synth.c tests/unit/binned_emul.h $(CORE_SRC) src/core/*.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) -Icuda -o $@ tests/unit/test_binned_synth.c $(CORE_SRC) -ljansson -lm

tests/unit/test_binned_synth_asan: tests/unit/test_binned_synth.c tests/unit/binned_emul.h $(CORE_SRC) src/core/*.h cuda/*.h
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -Icuda -o $@ tests/unit/test_binned_synth.c $(CORE_SRC) -ljansson -lm

bench/bench_explain: bench/bench_explain.c bench/bench_util.h $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) -Ibench -o $@ bench/bench_explain.c $(CORE_SRC) -ljansson -lxgboost -lm

bench/bench_core: bench/bench_core.c bench/bench_util.h $(CORE_SRC) src/core/*.h
	$(CC) $(UNIT_CFLAGS) -o $@ bench/bench_core.c $(CORE_SRC) -ljansson -lxgboost -lm

.PHONY: unittest unittest-asan
unittest: tests/unit/test_core tests/unit/test_core_api tests/unit/test_bins tests/unit/test_catnames tests/unit/test_shap tests/unit/test_ubj tests/unit/test_ubj_model tests/unit/test_kernel_emulation tests/unit/test_device_math tests/unit/test_binned tests/unit/test_binned_synth tests/unit/test_mlp \
		tests/unit/test_onnx_trees tests/unit/test_image tests/unit/test_image_corrupt
	cd tests/unit && ./test_ubj && ./test_ubj_model && ./test_core && ./test_core_api && ./test_bins && ./test_catnames && ./test_shap && ./test_kernel_emulation && ./test_device_math && ./test_binned && ./test_binned_synth && ./test_mlp && ./test_onnx_trees && ./test_image && ./test_image_corrupt

unittest-asan: tests/unit/test_core_asan tests/unit/test_core_api_asan tests/unit/test_bins_asan tests/unit/test_catnames_asan tests/unit/test_shap_asan tests/unit/test_ubj_asan tests/unit/test_ubj_model_asan tests/unit/test_kernel_emulation_asan tests/unit/test_device_math_asan tests/unit/test_binned_asan tests/unit/test_binned_synth_asan \
		tests/unit/test_mlp_asan tests/unit/test_onnx_trees_asan tests/unit/test_image_asan tests/unit/test_image_corrupt_asan
	cd tests/unit && ./test_ubj_asan && ./test_ubj_model_asan && ./test_core_asan && ./test_core_api_asan && ./test_bins_asan && ./test_catnames_asan && ./test_shap_asan && ./test_kernel_emulation_asan && ./test_device_math_asan && ./test_binned_asan && ./test_binned_synth_asan && ./test_mlp_asan && ./test_onnx_trees_asan && ./test_image_asan && ./test_image_corrupt_asan

EXTRA_CLEAN = $(MOCK_PROVIDER) $(MOCK_TESTS) tests/unit/test_wild tests/unit/test_wild_asan bench/bench_formats tests/diff/diff_score tests/unit/test_mlp tests/unit/test_mlp_asan tests/unit/test_onnx_trees tests/unit/test_onnx_trees_asan tests/unit/test_image tests/unit/test_image_asan tests/unit/test_image_corrupt tests/unit/test_image_corrupt_asan bench/bench_mlp src/core/onnx.pb-c.c src/core/onnx.pb-c.h tests/unit/test_kernel_emulation tests/unit/test_kernel_emulation_asan tests/unit/test_device_math tests/unit/test_device_math_asan tests/unit/test_binned tests/unit/test_binned_asan tests/unit/test_binned_synth tests/unit/test_binned_synth_asan tests/unit/test_core tests/unit/test_core_asan tests/unit/test_core_api tests/unit/test_core_api_asan tests/unit/test_catnames tests/unit/test_catnames_asan tests/unit/test_shap tests/unit/test_shap_asan tests/unit/test_ubj \
	tests/unit/test_ubj_asan tests/unit/test_ubj_model tests/unit/test_ubj_model_asan bench/bench_core bench/bench_explain

# header dependencies (PGXS tracks none without --enable-depend)
$(CORE_OBJS): $(wildcard src/core/*.h)
$(GLUE_OBJS): src/gpuscore.h src/provider.h src/trigger.h cuda/gs_cuda.h $(wildcard src/core/*.h)

# The CPU mock of the GPU provider, for testing the GPU paths without a GPU
# (never installed; tests point pg_gpuscore.provider at it).
MOCK_PROVIDER = tests/mock_provider/pg_gpuscore_mock_provider$(DLSUFFIX)
all: $(MOCK_PROVIDER)
$(MOCK_PROVIDER): tests/mock_provider/mock_provider.c cuda/gs_cuda.h cuda/provider_fault.h $(CORE_SRC) $(NN_SRC) \
		$(wildcard src/core/*.h) src/core/onnx.pb-c.h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -fPIC -shared -Wl,-Bsymbolic -Icuda -o $@ tests/mock_provider/mock_provider.c \
		$(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# The server-free GPU test programs (tests/gpu) linked against the mock
# instead of the provider: CI runs them on small batches to check the tests'
# own logic, which otherwise runs only where a GPU is lent (scores from them
# say nothing of the GPU: the mock scores with the CPU engine).
MOCK_TESTS = tests/gpu/test_gpu_mock tests/gpu/test_gpu_mlp_mock
$(MOCK_TESTS): tests/gpu/%_mock: tests/gpu/%.c tests/common/*.h $(MOCK_PROVIDER)
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ $< $(CORE_SRC) $(NN_SRC) -Ltests/mock_provider \
		-l:pg_gpuscore_mock_provider$(DLSUFFIX) -Wl,-rpath,'$$ORIGIN/../mock_provider' -ljansson -lm $(NN_LIBS)

include cuda/Makefile.inc

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
# SQL scripts: the current version's install script is built from one source,
# sql/pg_gpuscore.sql.in; the first version's script is frozen, and every
# other version installs from it through the update scripts.
EXTVERSION := $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" pg_gpuscore.control)
DATA_built = sql/pg_gpuscore--$(EXTVERSION).sql
DATA       = sql/pg_gpuscore--0.1.0.sql $(wildcard sql/pg_gpuscore--*--*.sql)
PGFILEDESC = "pg_gpuscore - score tree-ensemble models inside PostgreSQL"

# The scoring core, one object list per folder of src/core (the layers are
# drawn in docs/architecture.md).  The tree objects (CORE_OBJS) link without
# protobuf-c or BLAS; NN_OBJS adds networks, ONNX and the model dispatch.
CORE_TOP_OBJS = $(addprefix src/core/, gs_status.o cat_names.o)
UTIL_OBJS = $(addprefix src/core/util/, utf8_valid.o)
FOREST_OBJS = $(addprefix src/core/forest/, forest.o forest_build.o forest_check.o forest_image.o forest_bins.o forest_complete.o forest_qs.o \
	cpu_engine.o cpu_complete.o cpu_bins.o cpu_walk_avx2.o cpu_qs.o \
	forest_shap.o catboost_ctr.o catboost_ctr_image.o catboost_hash.o)
FE_COMMON_OBJS = $(addprefix src/core/frontend/common/, load_checks.o json_decode.o ubj_decode.o ubj_reader.o)
FE_XGBOOST_OBJS = $(addprefix src/core/frontend/xgboost/, xgb_binary.o xgb_load.o \
	xgb_learner.o xgb_json.o xgb_trees.o xgb_cats.o)
FE_LIGHTGBM_OBJS = $(addprefix src/core/frontend/lightgbm/, lgbm_load.o lgbm_text.o lgbm_trees.o lgbm_linear.o lgbm_cats.o)
FE_CATBOOST_OBJS = $(addprefix src/core/frontend/catboost/, catboost_load.o catboost_ctr_read.o \
	catboost_loss.o catboost_names.o)
TREE_OBJS = $(CORE_TOP_OBJS) $(UTIL_OBJS) $(FOREST_OBJS) $(FE_COMMON_OBJS) $(FE_XGBOOST_OBJS) \
	$(FE_LIGHTGBM_OBJS) $(FE_CATBOOST_OBJS)
CORE_OBJS = $(TREE_OBJS) $(NN_OBJS)

# Neural networks and ONNX: the network engine (BLAS), the ONNX frontend
# (protobuf-c code generated from ONNX's onnx.proto), XGBoost's linear
# booster as a network, the table of formats with the only dispatch
# (src/core/frontend/frontend.c) and the model (src/core/model.c).
MLP_OBJS = $(addprefix src/core/mlp/, mlp.o)
FE_ONNX_OBJS = $(addprefix src/core/frontend/onnx/, onnx.pb-c.o onnx_load.o onnx_output.o onnx_ops.o \
	onnx_linear.o onnx_act.o onnx_shape.o onnx_fuse.o onnx_fuse_norm.o onnx_fuse_norm_tf.o onnx_fold.o \
	onnx_skip.o onnx_order.o onnx_tensor.o onnx_trees.o onnx_trees_runs.o onnx_trees_graph.o \
	onnx_trees_v5.o onnx_trees_prep.o onnx_trees_fold.o onnx_iforest.o onnx_iforest_eval.o \
	onnx_prep_cat.o onnx_mlp_prep.o)
NN_OBJS = $(MLP_OBJS) $(FE_ONNX_OBJS) src/core/frontend/xgboost/xgb_linear.o src/core/frontend/frontend.o \
	src/core/model.o

GLUE_OBJS = \
	src/pg_gpuscore.o \
	src/limits.o \
	src/errors.o \
	src/catalog.o \
	src/model_admin.o \
	src/model_cache.o \
	src/model_name.o \
	src/features.o \
	src/scalar.o \
	src/categories.o \
	src/score_query.o \
	src/verify.o \
	src/provider.o \
	src/provider_local.o \
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
	src/batch_calls.o \
	src/batch_node.o \
	src/batch_exec.o \
	src/batch_fill.o \
	src/batch_explain.o \
	src/batch_parallel.o \
	src/service_shmem.o \
	src/service_worker.o \
	src/citus.o \
	src/citus_query.o \
	src/service_device.o \
	src/service_client.o

OBJS = $(CORE_OBJS) $(GLUE_OBJS)

REGRESS = load score errors score_query batch_calls parity formats verify device memory gpu_engine trigger aggregate score_table feature_order categories catboost_cats explain onnx onnx_trees bad_input privileges model_image gpu_service
REGRESS_OPTS = --load-extension=pg_gpuscore

PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/src/core
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
src/core/mlp/mlp.o: CFLAGS += $(VECT_CFLAGS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The current version's install script (DATA_built: make clean removes it).
sql/pg_gpuscore--$(EXTVERSION).sql: sql/pg_gpuscore.sql.in pg_gpuscore.control
	{ echo '-- Generated by make from sql/pg_gpuscore.sql.in: edit that file, not this one.'; cat $<; } > $@

# ---- core unit tests and benchmarks (no server) ----
# Sources are derived from the object lists: a new file goes into its
# folder's list above and nothing else changes.
CORE_SRC = $(TREE_OBJS:.o=.c)
NN_SRC = $(NN_OBJS:.o=.c)
CORE_HDRS := $(shell find src/core -name '*.h')
NN_CFLAGS = -I$(OPENBLAS_INC)
UNIT_CFLAGS = -std=c11 -D_GNU_SOURCE -O2 -g -ffp-contract=off -Wall -Wextra -Werror -Isrc/core -Isrc
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# onnx.pb-c.[ch]: generated (not committed) from the onnx.proto Debian's libonnx-dev ships.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
ONNX_PB = src/core/frontend/onnx/onnx.pb-c
$(ONNX_PB).c $(ONNX_PB).h &: $(ONNX_PROTO)
	protoc-c --c_out=src/core/frontend/onnx --proto_path=$(dir $(ONNX_PROTO)) $(ONNX_PROTO)
$(FE_ONNX_OBJS): $(ONNX_PB).h

# Unit tests of the core (tests/unit/*.c), each built plain and with ASan +
# UBSan (name_asan): the UBJSON decoder's alone, the others with the whole
# core (the frontend's table names every format, ONNX included).
UBJ_TESTS = test_ubj test_ubj_model
NN_TESTS = test_core test_core_api test_bins test_device_math test_binned test_binned_synth test_catnames test_shap test_kernel_emulation test_mlp test_onnx_trees test_image \
	test_image_corrupt test_wild
UNIT_TESTS = $(UBJ_TESTS) $(NN_TESTS)
UNIT_BINS = $(addprefix tests/unit/,$(UNIT_TESTS)) $(addprefix tests/unit/,$(addsuffix _asan,$(UNIT_TESTS)))
UNIT_DEPS = $(wildcard tests/unit/*.h) $(wildcard tests/common/*.h) $(wildcard cuda/*.h) $(CORE_HDRS)
tests/unit/test_mlp tests/unit/test_mlp_asan: tests/unit/test_mlp_sklearn.c tests/unit/test_mlp_hostile.c

UBJ_SRC = $(addprefix src/core/frontend/common/, ubj_decode.c ubj_reader.c) $(UTIL_OBJS:.o=.c)
$(addprefix tests/unit/,$(UBJ_TESTS)): tests/unit/%: tests/unit/%.c $(UBJ_SRC) $(UNIT_DEPS)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(UBJ_SRC) -ljansson -lm
$(addprefix tests/unit/,$(addsuffix _asan,$(UBJ_TESTS))): tests/unit/%_asan: tests/unit/%.c $(UBJ_SRC) $(UNIT_DEPS)
	$(CC) $(UNIT_CFLAGS) $(ASAN_FLAGS) -o $@ $< $(UBJ_SRC) -ljansson -lm

$(addprefix tests/unit/,$(NN_TESTS)): tests/unit/%: tests/unit/%.c $(CORE_SRC) $(NN_SRC) $(ONNX_PB).h $(UNIT_DEPS)
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -Icuda -o $@ $< $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)
$(addprefix tests/unit/,$(addsuffix _asan,$(NN_TESTS))): tests/unit/%_asan: tests/unit/%.c $(CORE_SRC) $(NN_SRC) $(ONNX_PB).h $(UNIT_DEPS)
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -Icuda -o $@ $< $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

.PHONY: unittest unittest-asan
unittest: $(addprefix tests/unit/,$(UNIT_TESTS))
	cd tests/unit && for t in $(UNIT_TESTS); do ./$$t || exit 1; done
unittest-asan: $(addprefix tests/unit/,$(addsuffix _asan,$(UNIT_TESTS)))
	cd tests/unit && for t in $(UNIT_TESTS); do ./$${t}_asan || exit 1; done

# One step of the differential campaign against the libraries (tests/diff/README.md); ASan+UBSan.
tests/diff/diff_score: tests/diff/diff_score.c $(CORE_SRC) $(NN_SRC) $(CORE_HDRS) $(ONNX_PB).h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) $(ASAN_FLAGS) -o $@ tests/diff/diff_score.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)

# Benchmarks of the core (bench/README.md): loaders and CPU engine on one
# model file of any format; networks against a naive loop; explanations and
# the tree engine against XGBoost's C API.
bench/bench_formats: bench/bench_formats.c bench/bench_util.h $(CORE_SRC) $(NN_SRC) $(CORE_HDRS) $(ONNX_PB).h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ bench/bench_formats.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)
bench/bench_mlp: bench/bench_mlp.c bench/bench_util.h $(CORE_SRC) $(NN_SRC) $(CORE_HDRS) $(ONNX_PB).h
	$(CC) $(UNIT_CFLAGS) $(VECT_CFLAGS) $(NN_CFLAGS) -o $@ bench/bench_mlp.c $(CORE_SRC) $(NN_SRC) -ljansson -lm $(NN_LIBS)
bench/bench_explain: bench/bench_explain.c bench/bench_util.h $(CORE_SRC) $(NN_SRC) $(CORE_HDRS) $(ONNX_PB).h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -Ibench -o $@ bench/bench_explain.c $(CORE_SRC) $(NN_SRC) -ljansson -lxgboost -lm $(NN_LIBS)
bench/bench_core: bench/bench_core.c bench/bench_util.h $(CORE_SRC) $(NN_SRC) $(CORE_HDRS) $(ONNX_PB).h
	$(CC) $(UNIT_CFLAGS) $(NN_CFLAGS) -o $@ bench/bench_core.c $(CORE_SRC) $(NN_SRC) -ljansson -lxgboost -lm $(NN_LIBS)

EXTRA_CLEAN = $(MOCK_PROVIDER) $(MOCK_TESTS) $(UNIT_BINS) $(ONNX_PB).c $(ONNX_PB).h tests/diff/diff_score \
	bench/bench_formats bench/bench_mlp bench/bench_core bench/bench_explain

# header dependencies (PGXS tracks none without --enable-depend)
$(CORE_OBJS): $(CORE_HDRS)
$(GLUE_OBJS): $(wildcard src/*.h) cuda/gs_cuda.h $(CORE_HDRS)

# The CPU mock of the GPU provider, for testing the GPU paths without a GPU
# (never installed; tests point pg_gpuscore.provider at it).
MOCK_PROVIDER = tests/mock_provider/pg_gpuscore_mock_provider$(DLSUFFIX)
all: $(MOCK_PROVIDER)
$(MOCK_PROVIDER): tests/mock_provider/mock_provider.c cuda/gs_cuda.h cuda/provider_fault.h $(CORE_SRC) $(NN_SRC) \
		$(CORE_HDRS) $(ONNX_PB).h
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

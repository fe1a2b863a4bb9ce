/*
 * test_mlp_hostile.c
 *	  test_mlp's checks that hostile ONNX files give an error, never a crash
 *	  or a leak: constant folding's cap, deep protobuf nesting, caps and
 *	  formats, every allocation failing in turn, random corruptions of
 *	  valid models.  Included by test_mlp.c, not compiled alone: one
 *	  program, one set of test_util.h's counters.
 */

/*
 * Protobuf bytes of a network whose constant subgraph folds more values
 * than the loader allows: n chained Add(., z) of a [65536] constant z
 * (built with protobuf-c, which the loader reads with), then Mul(x, last)
 * over an input x of [N, 4].
 */
static unsigned char *
fold_heavy_model(int n, size_t *len)
{
	enum
	{
		W = 65536
	};
	Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *opsets[1] = {&opset};
	Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
	Onnx__TensorProto z = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto *inits[1] = {&z};
	Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT,
				out = ONNX__VALUE_INFO_PROTO__INIT;
	Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension rows = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
				cols = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
	Onnx__TensorShapeProto__Dimension *dim[2] = {&rows, &cols};
	Onnx__ValueInfoProto *ins[1] = {&in},
			   *outs[1] = {&out};
	Onnx__NodeProto *nodes = calloc((size_t) n + 1, sizeof(Onnx__NodeProto));
	Onnx__NodeProto **np = calloc((size_t) n + 1, sizeof(Onnx__NodeProto *));
	char	  (*names)[2][16] = calloc((size_t) n + 1, sizeof(*names));
	char	   *(*io)[2] = calloc((size_t) n + 1, sizeof(*io));
	char	   *(*oo)[1] = calloc((size_t) n + 1, sizeof(*oo));
	float	   *vals = malloc(sizeof(float) * W);
	int64_t		dims[1] = {W};
	unsigned char *buf;

	for (int k = 0; k < W; k++)
		vals[k] = 1.0f;
	z.name = "z";
	z.has_data_type = true;
	z.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	z.n_dims = 1;
	z.dims = dims;
	z.n_float_data = W;
	z.float_data = vals;
	for (int k = 0; k <= n; k++)
	{
		onnx__node_proto__init(&nodes[k]);
		snprintf(names[k][0], sizeof(names[k][0]), "fold%d", k);
		snprintf(names[k][1], sizeof(names[k][1]), "f%d", k);
		nodes[k].name = names[k][0];
		nodes[k].op_type = k < n ? "Add" : "Mul";
		io[k][0] = k == 0 ? "z" : k < n ? names[k - 1][1] : "x";
		io[k][1] = k < n ? "z" : names[k - 1][1];
		oo[k][0] = k < n ? names[k][1] : "y";
		nodes[k].n_input = 2;
		nodes[k].input = io[k];
		nodes[k].n_output = 1;
		nodes[k].output = oo[k];
		np[k] = &nodes[k];
	}
	/* x: float [N, 4] */
	rows.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	rows.dim_param = "N";
	cols.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	cols.dim_value = 4;
	shape.n_dim = 2;
	shape.dim = dim;
	tensor.has_elem_type = true;
	tensor.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tensor.shape = &shape;
	type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	type.tensor_type = &tensor;
	in.name = "x";
	in.type = &type;
	out.name = "y";
	graph.name = "fold_heavy";
	graph.n_node = (size_t) n + 1;
	graph.node = np;
	graph.n_initializer = 1;
	graph.initializer = inits;
	graph.n_input = 1;
	graph.input = ins;
	graph.n_output = 1;
	graph.output = outs;
	opset.has_version = true;
	opset.version = 17;
	model.has_ir_version = true;
	model.ir_version = 8;
	model.n_opset_import = 1;
	model.opset_import = opsets;
	model.graph = &graph;
	*len = onnx__model_proto__get_packed_size(&model);
	buf = malloc(*len);
	onnx__model_proto__pack(&model, buf);
	free(nodes);
	free(np);
	free(names);
	free(io);
	free(oo);
	free(vals);
	return buf;
}

/*
 * Constant folding's cap (16 x 65536 values per load) is checked before
 * allocating; a graph that stays under it gets past folding.
 */
static void
test_fold_cap(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	size_t		len;
	unsigned char *bytes = fold_heavy_model(17, &len);

	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	printf("# %s\n", st.msg);
	gs_tap(rc == GS_ERR_LIMIT && m == NULL && strstr(st.msg, "node \"fold16\" (Add)") != NULL &&
		   strstr(st.msg, "more than 1048576 values") != NULL,
		   "fold cap", "17 folded [65536] values: refused at the 17th before allocating it");
	free(bytes);
	bytes = fold_heavy_model(16, &len);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	printf("# %s\n", st.msg);
	gs_tap(rc == GS_ERR_UNSUPPORTED && m == NULL && strstr(st.msg, "does not broadcast over the 4 columns"),
		   "fold cap", "16 folded [65536] values: folded, then refused as a Mul of 4 columns");
	free(bytes);
}

/*
 * Protobuf bytes nesting graph -> node -> attribute -> graph ... depth
 * times, inside a ModelProto: protobuf-c would recurse once per level.
 */
static unsigned char *
deep_model(int depth, size_t *len)
{
	size_t		cap = (size_t) depth * 16 + 64;
	unsigned char *buf = malloc(cap);
	unsigned char *tmp = malloc(cap);
	size_t		n = 0;

	/* innermost: an empty graph; wrap it level by level from the inside */
	for (int i = 0; i < depth * 3; i++)
	{
		/* field tags: AttributeProto.g = 6, NodeProto.attribute = 5, GraphProto.node = 1 */
		static const unsigned char tags[3] = {(6 << 3) | 2, (5 << 3) | 2, (1 << 3) | 2};
		unsigned char hdr[12];
		size_t		h = 0,
					v = n;

		hdr[h++] = tags[i % 3];
		do
		{
			hdr[h++] = (unsigned char) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		memcpy(tmp, hdr, h);
		memcpy(tmp + h, buf, n);
		memcpy(buf, tmp, n + h);
		n += h;
	}
	/* ModelProto: ir_version = 8, graph (field 7) = the nest */
	{
		unsigned char hdr[16];
		size_t		h = 0,
					v = n;

		hdr[h++] = 0x08;
		hdr[h++] = 8;
		hdr[h++] = (7 << 3) | 2;
		do
		{
			hdr[h++] = (unsigned char) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		memcpy(tmp, hdr, h);
		memcpy(tmp + h, buf, n);
		memcpy(buf, tmp, n + h);
		n += h;
	}
	free(tmp);
	*len = n;
	return buf;
}

/* Hostile nesting, caps, formats, failing allocations. */
static void
test_hostile(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	size_t		len;
	unsigned char *bytes;
	GsLimits	lim = gs_default_limits;

	bytes = deep_model(5000, &len);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && strstr(st.msg, "nests messages too deeply") != NULL,
		   "deep nesting", "15000 nested messages refused before the stack runs out");
	free(bytes);
	bytes = deep_model(3, &len);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc != GS_OK && strstr(st.msg, "too deeply") == NULL, "shallow nesting",
		   "decodes, then fails on the graph itself");
	free(bytes);

	bytes = gs_read_file(FIXTURES "/mlp_sigmoid.onnx", &len);
	gs_tap(bytes && gs_model_detect_format(bytes, len) == GS_FORMAT_ONNX, "detect", "ONNX bytes detected as onnx");
	rc = gs_model_load(bytes, len, GS_FORMAT_AUTO, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_OK && m->kind == GS_MODEL_MLP && m->mlp->n_layers == 3 &&
		   m->mlp->n_params == 30 * 64 + 64 + 64 * 32 + 32 + 32 + 1 &&
		   strcmp(m->mlp->output_act, "sigmoid") == 0 && strcmp(gs_model_kind_name(m), "mlp") == 0,
		   "auto", "format 'auto' loads a 3-layer sigmoid MLP with its parameter count");
	gs_model_free(m);
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX_AUTOENCODER, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && strstr(st.msg, "not an autoencoder") != NULL && m == NULL,
		   "autoencoder", "reconstruction scoring refused for a 30 -> 1 network");
	lim.max_features = 29;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT && strstr(st.msg, "more than the limit of 29") != NULL,
		   "caps", "max_features applies");
	lim = gs_default_limits;
	lim.max_model_bytes = len - 1;
	rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, &lim, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_LIMIT, "caps", "max_model_bytes applies");
	rc = gs_model_load(bytes, len, GS_FORMAT_XGBOOST_JSON, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc != GS_OK && m == NULL, "format", "ONNX bytes declared as xgboost-json are refused");
	free(bytes);
	rc = gs_model_load((const unsigned char *) "", 0, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL, "empty", "empty bytes refused");
	{
		static const unsigned char json[] = "{\"learner\": {}}";

		gs_tap(gs_model_detect_format(json, sizeof(json) - 1) == GS_FORMAT_XGBOOST_JSON,
			   "detect", "JSON is not taken for ONNX");
	}
}

/* An allocator failing after budget allocations (malloc otherwise). */
typedef struct Budget
{
	long		left;
} Budget;

static void *
budget_alloc(void *ctx, size_t size)
{
	Budget	   *b = (Budget *) ctx;

	if (b->left-- <= 0)
		return NULL;
	return malloc(size ? size : 1);
}

static void
budget_free(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

/* test_nomem on one fixture. */
static void
test_nomem_file(const char *name)
{
	char		path[256];
	size_t		len = 0;
	unsigned char *bytes;
	int			ok = 1,
				loaded = 0;

	snprintf(path, sizeof(path), "%s/%s.onnx", FIXTURES, name);
	bytes = gs_read_file(path, &len);
	for (long k = 0; k < 5000 && !loaded; k++)
	{
		Budget		b = {k};
		GsAllocator a = {budget_alloc, budget_free, &b};
		GsModel    *m = NULL;
		GsStatus	st;
		GsCode		rc = gs_model_load(bytes, len, GS_FORMAT_ONNX, NULL, &a, &m, &st);

		if (rc == GS_OK)
		{
			loaded = 1;
			gs_model_free(m);
		}
		else if (rc != GS_ERR_NOMEM && rc != GS_ERR_INVALID_MODEL)
			ok = 0;
	}
	gs_tap(ok && loaded, name, "nomem: each failing allocation gives an error, then the model loads");
	free(bytes);
}

/*
 * Every allocation failing in turn gives NOMEM and leaks nothing (LSan):
 * a plain network and networks with multi-node activation patterns, whose
 * constants are read while matching (a failure there is NOMEM too, not a
 * refusal), one whose BatchNormalization is folded from constants
 * (jax2onnx) and ones with LayerNormalization patterns (tf2onnx, jax2onnx).
 */
static void
test_nomem(void)
{
	static const char *const files[] = {"mlp_bn_leaky", "torch_gelu_tanh", "torch_gelu_silu", "torch2_softplus",
	"keras3_jax_bn_leaky", "keras3_layernorm_in", "keras3_jax_layernorm", "skl_lin_svc_bin", "skl_lin_df_scorecard"};

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		test_nomem_file(files[f]);
}

/* Random corruption of valid models: never a crash; what loads can score. */
static void
test_corruption(void)
{
	static const char *const files[] = {"mlp_sigmoid.onnx", "mlp_bn_leaky.onnx", "mlp_scaled.onnx",
		"autoencoder.onnx", "mlp_softmax.onnx", "skl_mlp_bin.onnx", "skl_pipe_std_3class.onnx",
	"keras3_jax_bn_leaky.onnx", "keras3_layernorm.onnx", "keras3_gelu_tanh.onnx", "keras3_jax_layernorm.onnx",
	"skl_lin_logreg_3class.onnx", "skl_lin_svc_bin.onnx"};
	int			loaded = 0,
				refused = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
	{
		char		path[256];
		size_t		len = 0;
		unsigned char *orig,
				   *b;

		snprintf(path, sizeof(path), "%s/%s", FIXTURES, files[i]);
		orig = gs_read_file(path, &len);
		if (orig == NULL)
			continue;
		b = malloc(len);
		for (int t = 0; t < 300; t++)
		{
			size_t		n = len;
			GsModel    *m = NULL;
			GsStatus	st;

			memcpy(b, orig, len);
			for (int k = 0; k < 1 + t % 4; k++)
				b[(size_t) (gs_rnd() * len)] = (unsigned char) (gs_rnd() * 256);
			if (t % 5 == 0)
				n = (size_t) (gs_rnd() * len);
			if (gs_model_load(b, n, GS_FORMAT_ONNX, NULL, &gs_malloc_allocator, &m, &st) == GS_OK)
			{
				float		x[3 * 64];
				float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, 3));
				float	   *out = malloc(sizeof(float) * 3 * m->n_outputs);

				for (int k = 0; k < 3 * m->n_features && k < 3 * 64; k++)
					x[k] = (float) gs_rnd();
				if (m->n_features <= 64)
					gs_model_predict(m, x, 3, 3, scratch, out);
				free(scratch);
				free(out);
				gs_model_free(m);
				loaded++;
			}
			else
				refused++;
		}
		free(b);
		free(orig);
	}
	printf("# corruption: %d loaded, %d refused\n", loaded, refused);
	{
		char		what[80];

		snprintf(what, sizeof(what), "%d corrupted models: no crash, corrupt ones refused", loaded + refused);
		gs_tap(refused > 0 && loaded + refused == 300 * (int) (sizeof(files) / sizeof(files[0])),
			   "corruption", what);
	}
}

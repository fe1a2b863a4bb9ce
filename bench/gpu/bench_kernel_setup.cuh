/*
 * bench_kernel_setup.cuh
 *	  For bench_kernel.cu, which includes it (one translation unit): the
 *	  input rows generated on the device, the Markdown report, and the
 *	  benchmark's models (XGBoost files or synthetic forests of the same
 *	  shapes) with their checks against the CPU engine.
 */

/* ---------------------------------------------------------------- */
/* input rows                                                        */
/* ---------------------------------------------------------------- */

/* splitmix64 finaliser. */
static __host__ __device__ __forceinline__ uint64_t
mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1), a pure function of (row, feature, draw). */
static __host__ __device__ __forceinline__ float
u01(uint64_t r, uint32_t f, uint32_t k)
{
	uint64_t	h = mix64(r * 0x100000001B3ull ^ ((uint64_t) f << 40) ^
						  ((uint64_t) k << 56) ^ SEED_ROWS);

	return ((float) (h >> 40) + 0.5f) / 16777216.0f;
}

/*
 * Feature f of row r, from the distribution of bench/make_models.py:
 * features 0-9 normal(0, 1), 10-19 uniform(-5, 5), 20-24 exponential with
 * mean 100, 25-29 integers 0..11; 5% NaN.  The same row has the same
 * values in every batch size.
 */
static __host__ __device__ __forceinline__ float
feature_value(uint64_t r, uint32_t f)
{
	uint32_t	c = f % 30;
	float		a = u01(r, f, 1),
				b = u01(r, f, 2);

	if (u01(r, f, 0) < 0.05f)
		return NAN;
	if (c < 10)
		return sqrtf(-2.0f * logf(a)) * cosf(6.2831853f * b);
	if (c < 20)
		return -5.0f + 10.0f * a;
	if (c < 25)
		return -100.0f * logf(a);
	return floorf(a * 12.0f);
}

/* Fill a column-major device batch: x[f * ld + r] = feature_value(r, f). */
__global__ void
gen_rows(float *x, size_t n, size_t ld, int nf)
{
	size_t		total = n * (size_t) nf;

	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < total;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		size_t		f = i / n,
					r = i - f * n;

		x[f * ld + r] = feature_value(r, (uint32_t) f);
	}
}

/* Count positions where a and b differ (NaN equals NaN). */
__global__ void
count_diff(const float *a, const float *b, size_t n, unsigned long long *cnt)
{
	unsigned long long local = 0;

	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
			local++;
	if (local)
		atomicAdd(cnt, local);
}

/* ---------------------------------------------------------------- */
/* report                                                            */
/* ---------------------------------------------------------------- */

static std::string g_report;	/* Markdown, written to the results file */

/* Append to the report and echo to stdout. */
static void
emit(const char *fmt,...)
{
	char		buf[4096];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	g_report += buf;
	fputs(buf, stdout);
	fflush(stdout);
}

/* "1K", "16M", ... for a row count. */
static std::string
human(size_t n)
{
	char		b[32];

	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(b, sizeof(b), "%zuM", n >> 20);
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(b, sizeof(b), "%zuK", n >> 10);
	else
		snprintf(b, sizeof(b), "%zu", n);
	return b;
}

/* Rows per second as "123.4 M". */
static std::string
rate(double rows_per_s)
{
	char		b[32];

	if (rows_per_s >= 1e9)
		snprintf(b, sizeof(b), "%.2f G", rows_per_s / 1e9);
	else
		snprintf(b, sizeof(b), "%.1f M", rows_per_s / 1e6);
	return b;
}

/* ---------------------------------------------------------------- */
/* models                                                            */
/* ---------------------------------------------------------------- */

typedef struct ModelSpec
{
	const char *name;
	int			trees;
	int			depth;
} ModelSpec;

static const ModelSpec g_models[] = {
	{"m100x6", 100, 6},
	{"m500x8", 500, 8},
	{"m2000x10", 2000, 10},
};

/*
 * A synthetic binary:logistic forest of n_trees trees of depth up to
 * depth on N_FEATURES features (splits with probability 0.9 below the
 * root, thresholds drawn from the input distribution, leaves in
 * [-0.1, 0.1]), from fixed seeds; used when a model file is missing.
 */
static GsForest *
synth_forest(int n_trees, int depth, uint64_t seed)
{
	GsForest   *f = (GsForest *) calloc(1, sizeof(GsForest));
	size_t		per = ((size_t) 2 << depth) - 1,
				n = 0;
	std::vector<int> d(per);
	uint64_t	s = seed;

	f->alloc = gs_malloc_allocator;
	snprintf(f->objective, sizeof(f->objective), "binary:logistic");
	snprintf(f->booster, sizeof(f->booster), "gbtree");
	snprintf(f->saved_by, sizeof(f->saved_by), "synthetic");
	f->transform = GS_TRANSFORM_SIGMOID;
	f->n_features = N_FEATURES;
	f->n_groups = 1;
	f->n_outputs = 1;
	f->n_trees = n_trees;
	f->base_margin = (float *) calloc(1, sizeof(float));
	f->tree_offset = (uint32_t *) malloc(sizeof(uint32_t) * (size_t) n_trees);
	f->tree_group = (int32_t *) calloc((size_t) n_trees, sizeof(int32_t));
	f->tree_depth = (int32_t *) calloc((size_t) n_trees, sizeof(int32_t));
	f->nodes = (GsNode *) malloc(sizeof(GsNode) * per * (size_t) n_trees);
	for (int t = 0; t < n_trees; t++)
	{
		size_t		count = 1;

		f->tree_offset[t] = (uint32_t) n;
		d[0] = 0;
		for (size_t i = 0; i < count; i++)
		{
			GsNode	   *nd = &f->nodes[n + i];
			float		u;

			s = mix64(s);
			u = (float) (s >> 40) / 16777216.0f;
			if (d[i] < depth && (i == 0 || u < 0.9f))
			{
				uint32_t	feat;
				float		th;

				s = mix64(s);
				feat = (uint32_t) ((s >> 32) % N_FEATURES);
				do
				{
					s = mix64(s);
					th = feature_value(s >> 8, feat);
				} while (isnan(th));
				nd->value = th;
				nd->info = feat | ((s & 1) ? GS_NODE_DEFAULT_LEFT : 0u);
				nd->left = (uint32_t) count;
				d[count] = d[count + 1] = d[i] + 1;
				count += 2;
			}
			else
			{
				nd->value = (u - 0.5f) * 0.2f;
				nd->info = GS_NODE_LEAF;
				nd->left = 0;
				if (d[i] > f->tree_depth[t])
					f->tree_depth[t] = d[i];
			}
		}
		n += count;
		if (f->tree_depth[t] > f->max_depth)
			f->max_depth = f->tree_depth[t];
	}
	f->n_nodes = (int64_t) n;
	return f;
}

/*
 * Load DIR/NAME.ubj or DIR/NAME.json; synthesise when neither exists.
 * *source says which.  NULL (message printed) when a file fails to load.
 */
static GsForest *
load_model(const char *dir, const ModelSpec *m, std::string *source)
{
	const char *exts[] = {"ubj", "json"};

	for (int i = 0; i < 2; i++)
	{
		char		path[1024];
		size_t		len;
		unsigned char *b;
		GsForest   *f = NULL;
		GsStatus	st;

		snprintf(path, sizeof(path), "%s/%s.%s", dir, m->name, exts[i]);
		b = gs_read_file(path, &len);
		if (!b)
			continue;
		if (gs_xgb_load(b, len, strcmp(exts[i], "ubj") == 0 ? GS_FORMAT_XGBOOST_UBJ : GS_FORMAT_XGBOOST_JSON, NULL, &gs_malloc_allocator, &f, &st) != GS_OK)
		{
			fprintf(stderr, "bench_kernel: %s: %s\n", path, st.msg);
			free(b);
			return NULL;
		}
		free(b);
		*source = std::string(path) + " (" + f->saved_by + ")";
		return f;
	}
	*source = "synthetic (no model file in " + std::string(dir) + ")";
	return synth_forest(m->trees, m->depth, 7ull * 1000003ull + (uint64_t) m->trees);
}

/* Host batch of n rows (column-major, ld = n) of the benchmark input. */
static std::vector<float>
host_rows(size_t n)
{
	std::vector<float> x(n * N_FEATURES);

	for (size_t f = 0; f < N_FEATURES; f++)
		for (size_t r = 0; r < n; r++)
			x[f * n + r] = feature_value(r, (uint32_t) f);
	return x;
}

/*
 * Host-only checks of one model (no GPU): the FIL-style conversion walked
 * on the host must give the CPU engine's margins exactly.  Returns 0 when
 * the checks pass.
 */
static int
selfcheck_model(const char *name, const GsForest *f)
{
	const size_t n = 4096;
	std::vector<float> x = host_rows(n),
				m(n),
				o(n);
	char		err[256] = "";
	long		bad;

	gs_cpu_predict(f, x.data(), n, n, m.data(), o.data());
	bad = fil_forest_check_host(f, x.data(), n, n, m.data(), err, sizeof(err));
	printf("%s %s: FIL-style layout walked on the host matches the CPU engine on %zu rows%s%s\n",
		   bad == 0 ? "ok" : "not ok", name, n, bad ? ": " : "", err);

	/* the tile plan gs_dforest_create would make on an H100 (default budget) */
	{
		GsLayoutOptions o;
		GsLayout	l;
		size_t		forest_bytes;

		memset(&o, 0, sizeof(o));
		o.smem_budget = 115712;	/* (228 KB per SM) / 2 - 1 KB reserved */
		if (gs_layout_build(f, &o, &l) == GS_LAYOUT_OK)
		{
			forest_bytes = l.n_vecs * sizeof(GsVec4);
			printf("# %s: H100 default plan: %s, %s rows, rpt <= %d, %u tiles of <= %u B, "
				   "smem %zu B/block, forest %zu B = %.0f B per row per block at %d rows/block\n",
				   name, l.kernel == GS_KERNEL_TILED ? "tiled" : "rows",
				   l.staged ? "staged" : "global", l.max_rpt, l.n_tiles, l.tile_vecs * 16u,
				   gs_layout_smem_bytes(&l, l.max_rpt, f->n_features), forest_bytes,
				   (double) forest_bytes / (GS_KTHREADS * l.max_rpt), GS_KTHREADS * l.max_rpt);
			gs_layout_free(&l);
		}
	}
	return bad == 0 ? 0 : 1;
}

/*
 * Host-only check of the binned layout of one model (no GPU): the layout
 * gs_dforest_create_ex would make for kernel 3 on an H100 (default
 * budget), its rows binned with gs_bin_feature and walked with
 * gs_binned_tree_leaf on the host in model order, must give the CPU
 * engine's margins exactly on 4096 rows; prints the plan and its memory.
 * Returns 0 when the check passes (or the model is refused, which is
 * reported).
 */
static int
selfcheck_binned(const char *name, const GsForest *f)
{
	const size_t n = 4096;
	std::vector<float> x = host_rows(n),
				m(n * (size_t) f->n_groups);
	std::vector<uint16_t> b((size_t) f->n_features);
	GsLayoutOptions o;
	GsBinnedLayout l;
	long		bad = 0;
	int			rc;

	memset(&o, 0, sizeof(o));
	o.kernel = GS_KERNEL_BINNED;
	o.smem_budget = 115712;
	rc = gs_binned_build(f, &o, &l);
	if (rc != GS_LAYOUT_OK)
	{
		printf("# %s: binned kernel refuses the model (%d: %s)\n", name, rc, l.why);
		return 0;
	}
	gs_cpu_margins(f, x.data(), n, n, m.data());
	for (size_t r = 0; r < n; r++)
	{
		float		mg[GS_KMAX_GROUPS];

		for (int g = 0; g < f->n_groups; g++)
			mg[g] = f->base_margin[g];
		for (int k = 0; k < f->n_features; k++)
			b[k] = (uint16_t) gs_bin_feature(l.thr, l.thr_off, k, x[(size_t) k * n + r]);
		for (int32_t t = 0; t < f->n_trees; t++)
			mg[f->tree_group[t]] += gs_binned_tree_leaf(l.words + l.trees[t].first,
														l.trees[t].depth, b.data(), 1);
		for (int g = 0; g < f->n_groups; g++)
			bad += !(mg[g] == m[r * f->n_groups + g] ||
					 (isnan(mg[g]) && isnan(m[r * f->n_groups + g])));
	}
	printf("%s %s: binned layout walked on the host matches the CPU engine on %zu rows (%ld differ)\n",
		   bad == 0 ? "ok" : "not ok", name, n, bad);
	printf("# %s: H100 binned plan: rpt <= %d, %u tiles of <= %u B, smem %zu B/block, "
		   "%u thresholds, complete trees %zu B (depth <= %d)\n",
		   name, l.max_rpt, l.n_tiles, l.tile_vecs * 16u, gs_binned_smem_bytes(&l, l.max_rpt),
		   l.n_thr, l.n_words * 4, l.max_depth);
	gs_binned_free(&l);
	return bad == 0 ? 0 : 1;
}

/*
 * test_binned.c
 *	  CPU emulation of the binned GPU kernel (GS_KERNEL_BINNED:
 *	  cuda/forest_binned.h lays the forest out, cuda/binned_phases.h holds
 *	  the phases forest_binned.cu's forest_bin_kernel and
 *	  forest_binned_kernel run), checked bit for bit against the CPU
 *	  engine.  Runs anywhere, no GPU.
 *
 * For every fixture model (tests/fixtures/models/ *.json, *.ubj, *.model, *.txt)
 * that qualifies (plain numerical splits, depth <= 12), on its fixture
 * cases (tests/fixtures/cases/NAME.csv, when present), 1000 random rows
 * around its thresholds (ld > n_rows) and adversarial rows (every
 * threshold exactly, one ulp below and above it, -0.0, +0.0, +-Inf, NaN,
 * +-FLT_MAX, +-FLT_MIN, denormals, +-1e30):
 *	- the layout invariants (tiles, sorted distinct thresholds, descriptors);
 *	- bin(v) <= j  <=>  v < t_j for every adversarial v and every threshold
 *	  t_j of its feature, and NaN -> 0xFFFF;
 *	- every tree's binned leaf (gs_binned_tree_leaf) equals gs_tree_leaf
 *	  on every row;
 *	- the kernel emulated phase by phase in barrier order (shared memory
 *	  poisoned before every phase that fills it), fused and with the
 *	  separate binning pass (cut into small chunks, as predict_binned does
 *	  with its scratch), every rows-per-thread value, margins and outputs:
 *	  equal to gs_cpu_margins / gs_cpu_predict bit for bit, nothing written
 *	  past the outputs.
 * Models that do not qualify must be refused with the right code
 * (categorical, zero-as-missing, too deep).  Synthetic forests check the
 * other refusals and the padding of unbalanced trees (test_binned_synth.c);
 * the emulation is binned_emul.h.
 *
 * TAP lines, then "binned: N passed, M failed"; exit 1 on a failure.
 * With --models DIR it checks only the model files in DIR (the differential
 * campaign, tests/diff/campaign.py, runs it on random models).
 *
 * Build with the Makefile and run from tests/unit (relative paths):
 *
 *   make tests/unit/test_binned && cd tests/unit && ./test_binned
 *
 * (tests/unit/test_binned_asan: the same under ASan + UBSan).
 */
#include <dirent.h>

#include "binned_emul.h"

#define FIXTURES "../fixtures"


/*
 * The adversarial values of feature k: every threshold exactly and one ulp
 * either side, then the special values.  Returns the count (vals has room
 * for 3 * n_thr + 16).
 */
static size_t
adversarial_values(const GsBinnedLayout *l, int32_t k, float *vals)
{
	static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX,
		FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e30f, -1e30f, 1.0f, -1.0f, 0.5f};
	size_t		n = 0;

	for (uint32_t i = l->thr_off[k]; i < l->thr_off[k + 1]; i++)
	{
		vals[n++] = l->thr[i];
		vals[n++] = nextafterf(l->thr[i], -INFINITY);
		vals[n++] = nextafterf(l->thr[i], INFINITY);
	}
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		vals[n++] = special[i];
	return n;
}

/*
 * The bin property on every adversarial value of every feature:
 * v < t_j <=> bin(v) <= j for every threshold t_j, NaN <=> 0xFFFF.
 * Returns the number of violations.
 */
static long
check_bins(const GsBinnedLayout *l, char *msg, size_t msglen)
{
	long		bad = 0;

	for (int32_t k = 0; k < l->n_features; k++)
	{
		uint32_t	lo = l->thr_off[k],
					n = l->thr_off[k + 1] - lo;
		float	   *vals = malloc(sizeof(float) * (3 * (size_t) n + 16));
		size_t		nv = adversarial_values(l, k, vals);

		for (size_t i = 0; i < nv; i++)
		{
			uint32_t	b = gs_bin_feature(l->thr, l->thr_off, k, vals[i]);

			if ((b == GS_BIN_MISSING) != (vals[i] != vals[i]) && bad++ == 0)
				snprintf(msg, msglen, " (feature %d value %a: bin %u)", k, (double) vals[i], b);
			for (uint32_t j = 0; j < n; j++)
				if ((vals[i] < l->thr[lo + j]) != (b <= j) && bad++ == 0)
					snprintf(msg, msglen, " (feature %d value %a, threshold %u = %a: bin %u)",
							 k, (double) vals[i], j, (double) l->thr[lo + j], b);
		}
		free(vals);
	}
	return bad;
}

/*
 * Rows in which every feature takes each of its adversarial values at
 * least once (feature k of row r: value (r + 7k) mod count).
 */
static Batch
adversarial_batch(const GsBinnedLayout *l)
{
	Batch		b;
	size_t		rows = 0;

	for (int32_t k = 0; k < l->n_features; k++)
	{
		size_t		c = 3 * (size_t) (l->thr_off[k + 1] - l->thr_off[k]) + 16;

		rows = c > rows ? c : rows;
	}
	b.n = rows;
	b.ld = rows + 1;
	b.x = malloc(sizeof(float) * b.ld * (size_t) l->n_features);
	for (int32_t k = 0; k < l->n_features; k++)
	{
		float	   *vals = malloc(sizeof(float) * (3 * (size_t) (l->thr_off[k + 1] - l->thr_off[k]) + 16));
		size_t		nv = adversarial_values(l, k, vals);

		for (size_t r = 0; r < b.ld; r++)
			b.x[(size_t) k * b.ld + r] = vals[(r + 7 * (size_t) k) % nv];
		free(vals);
	}
	return b;
}

/*
 * The fixture cases of a model file (NAME.csv next to the models, rows
 * transposed to column-major); n == 0 when there are none or their
 * feature count differs from the model's.
 */
static Batch
case_batch(const GsForest *f, const char *file)
{
	Batch		b = {NULL, 0, 0};
	char		stem[256],
				path[600];
	const char *dot = strrchr(file, '.');
	FILE	   *mf;
	int			nf = 0,
				nout = 0;
	GsCases		c;

	snprintf(stem, sizeof(stem), "%.*s", (int) (dot ? dot - file : (long) strlen(file)), file);
	snprintf(path, sizeof(path), FIXTURES "/cases/%s.meta", stem);
	mf = fopen(path, "r");
	if (!mf)
		return b;
	if (fscanf(mf, "%d %d", &nf, &nout) != 2 || nf != f->n_features || nout < 1)
	{
		fclose(mf);
		return b;
	}
	fclose(mf);
	snprintf(path, sizeof(path), FIXTURES "/cases/%s.csv", stem);
	if (gs_read_cases(path, nf, nout, &c) != 0)
		return b;
	b.n = (size_t) c.n_rows;
	b.ld = b.n;
	b.x = malloc(sizeof(float) * (b.n > 0 ? b.n : 1) * (size_t) nf);
	for (size_t r = 0; r < b.n; r++)
		for (int k = 0; k < nf; k++)
			b.x[(size_t) k * b.ld + r] = c.x[r * (size_t) nf + (size_t) k];
	free(c.x);
	free(c.want);
	return b;
}

/*
 * One layout of one model on every batch (cases, random, adversarial);
 * one TAP line per batch kind.
 */
static void
check_model(const char *label, const GsForest *f, const char *file,
			const GsLayoutOptions *o, const char *cfg)
{
	GsBinnedLayout l;
	char		name[600],
				what[700],
				msg[300] = "";
	const char *inv;
	int			rc = gs_binned_build(f, o, &l);
	Batch		bs[3];
	const char *kinds[] = {"cases", "random", "adversarial"};

	snprintf(name, sizeof(name), "%s [%s]", label, cfg);
	if (rc != GS_LAYOUT_OK)
	{
		snprintf(what, sizeof(what), "layout refused with %d: %s", rc, l.why);
		gs_tap(0, name, what);
		return;
	}
	inv = check_layout(f, &l);
	gs_tap(inv == NULL, name, inv ? inv : "layout invariants hold");
	{
		long		bad = check_bins(&l, msg, sizeof(msg));

		snprintf(what, sizeof(what), "bin(v) <= j <=> v < t_j on every adversarial value: %ld violations%s", bad, msg);
		gs_tap(bad == 0, name, what);
	}
	bs[0] = file ? case_batch(f, file) : (Batch) {NULL, 0, 0};
	bs[1].n = 1000;
	bs[1].ld = 1003;
	bs[1].x = malloc(sizeof(float) * bs[1].ld * (size_t) f->n_features);
	gs_fill_batch(f, bs[1].x, bs[1].n, bs[1].ld);
	bs[2] = adversarial_batch(&l);
	for (int k = 0; k < 3; k++)
	{
		long		bad;

		if (bs[k].n == 0)
		{
			free(bs[k].x);
			continue;
		}
		msg[0] = '\0';
		bad = run_batch(f, &l, &bs[k], msg, sizeof(msg));
		snprintf(what, sizeof(what),
				 "%s, %zu rows: rpt <= %d, %u tiles of <= %u B, %u thresholds: %ld values differ from the CPU engine%s",
				 kinds[k], bs[k].n, l.max_rpt, l.n_tiles, l.tile_vecs * 16u, l.n_thr, bad, msg);
		gs_tap(bad == 0, name, what);
		free(bs[k].x);
	}
	gs_binned_free(&l);
}

/*
 * Every model file in dir: qualifying ones checked (their cases too when
 * the dir is the fixtures'), the others refused right; at least min_models
 * files, min_binned of them qualifying.
 */
static void
test_fixtures(const char *dir, int min_models, int min_binned)
{
	DIR		   *d = opendir(dir);
	int			fixtures = strcmp(dir, FIXTURES "/models") == 0;
	struct dirent *e;
	int			n_models = 0,
				n_binned = 0;
	char		summary[128];

	if (!d)
	{
		gs_tap(0, "fixtures", "directory present");
		return;
	}
	while ((e = readdir(d)) != NULL)
	{
		char		label[400],
					what[300];
		GsForest   *f;
		GsStatus	st;
		GsLayoutOptions o;
		GsBinnedLayout l;
		int			want,
					rc,
					got = gs_load_fixture_forest(dir, e->d_name, &f, &st);

		if (got == 0)
			continue;
		if (got < 0)
		{
			gs_tap(0, e->d_name, st.msg);
			continue;
		}
		n_models++;
		snprintf(label, sizeof(label), "%s (%d trees, depth %d, %d groups, splits 0x%x)",
				 e->d_name, f->n_trees, f->max_depth, f->n_groups, f->split_kinds);
		want = f->split_kinds != 0 ? GS_BINNED_ESPLITS :
			f->leaf_lo ? GS_BINNED_EDOUBLE :
			f->max_depth > GS_BINNED_MAX_DEPTH ? GS_BINNED_EDEPTH : GS_LAYOUT_OK;
		memset(&o, 0, sizeof(o));
		o.smem_budget = 115712;
		if (want != GS_LAYOUT_OK)
		{
			rc = gs_binned_build(f, &o, &l);
			snprintf(what, sizeof(what), "refused with %d (want %d): %s", rc, want, l.why);
			gs_tap(rc == want, label, what);
			if (rc == GS_LAYOUT_OK)
				gs_binned_free(&l);
		}
		else
		{
			char		cfg[64];

			n_binned++;
			check_model(label, f, fixtures ? e->d_name : NULL, &o, "113K");
			/* rows per thread imposed, room for about 2 of the largest trees */
			o.smem_budget = gs_binned_stage_bytes(4, f->n_features) + ((size_t) 16 << f->max_depth);
			o.max_rpt = 4;
			snprintf(cfg, sizeof(cfg), "%zu B, rpt 4", o.smem_budget);
			check_model(label, f, NULL, &o, cfg);
		}
		gs_forest_free(f);
	}
	closedir(d);
	snprintf(summary, sizeof(summary), "%d fixture models, %d qualify for the binned kernel", n_models, n_binned);
	gs_tap(n_models >= min_models && n_binned >= min_binned, "fixtures", summary);
}

int
main(int argc, char **argv)
{
	/* --models DIR: only the model files in DIR (tests/diff/campaign.py) */
	if (argc == 3 && strcmp(argv[1], "--models") == 0)
	{
		test_fixtures(argv[2], 1, 0);
		printf("1..%d\nbinned: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
		return n_fail ? 1 : 0;
	}
	test_fixtures(FIXTURES "/models", 40, 20);
	printf("1..%d\nbinned: %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}

/*
 * test_wild.c
 *	  Model files from the wild: files published by other people in public
 *	  GitHub repositories (tests/wild/models/, sources in tests/wild/README.md),
 *	  against the scores of the library that reads them
 *	  (tests/wild/make_references.py wrote tests/wild/cases/NAME.csv).  Prints
 *	  TAP lines and a final "wild: N passed, N failed".
 *
 * Run from tests/unit (make tests/unit/test_wild, or _asan).  For every line
 * of ../wild/manifest.tsv ("name file format n_features n_outputs tolerance
 * expect ...", tab-separated, '#' comments):
 *   expect ok         the file loads with format 'auto' and with its explicit
 *                     format, to the same shape (n_features, n_outputs) as the
 *                     manifest says; its case rows, scored as one column-major
 *                     batch and row by row, are within the tolerance of the
 *                     library's outputs (relative above 1, absolute below);
 *   expect known:WHY  the same, but a mismatch in the scores is a TAP TODO
 *                     (a known pg_gpuscore disagreement, README.md), not a
 *                     failure;
 *   expect refused:CODE  both loads fail with exactly that status
 *                     (INVALID_MODEL, UNSUPPORTED, LIMIT ...) and a non-empty
 *                     message (printed as a comment).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest/cpu_engine.h"
#include "model.h"
#include "../common/test_util.h"
#include "../common/test_models.h"

#define WILD "../wild"
#define MAX_COLS 16

static int	n_todo = 0;

/* A TAP line for a known disagreement: not counted as a failure. */
static void
tap_todo(int ok, const char *label, const char *what, const char *why)
{
	if (ok)
	{
		gs_tap(1, label, what);
		return;
	}
	printf("not ok %d - %s: %s # TODO %s\n", n_pass + n_fail + n_todo + 1, label, what, why);
	fflush(stdout);
	n_todo++;
}

/* gs_tap numbering that counts TODO lines too. */
static void
tap(int ok, const char *label, const char *what)
{
	printf("%s %d - %s: %s\n", ok ? "ok" : "not ok", n_pass + n_fail + n_todo + 1, label, what);
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
}

static GsModelFormat
format_of(const char *s)
{
	static const struct
	{
		const char *name;
		GsModelFormat fmt;
	}			t[] = {
		{"xgboost-json", GS_FORMAT_XGBOOST_JSON},
		{"xgboost-ubj", GS_FORMAT_XGBOOST_UBJ},
		{"xgboost-binary", GS_FORMAT_XGBOOST_BINARY},
		{"lightgbm", GS_FORMAT_LIGHTGBM},
		{"catboost-json", GS_FORMAT_CATBOOST_JSON},
		{"onnx", GS_FORMAT_ONNX},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i].name) == 0)
			return t[i].fmt;
	return GS_FORMAT_AUTO;
}

/* Within tol of want (relative above 1, absolute below)? */
static int
close_enough(float got, float want, double tol)
{
	if (isnan(got) || isnan(want))
		return isnan(got) && isnan(want);
	return fabs((double) got - (double) want) <= tol * fmax(1.0, fabs((double) want));
}

/* Score every row as one batch (ld = n_rows) and compare; *worst is the largest error. */
static int
score_batch(const GsModel *m, const GsCases *c, double tol, double *worst)
{
	size_t		n = (size_t) c->n_rows;
	float	   *x = malloc(sizeof(float) * n * c->nf + 1);
	float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, n) + 1);
	float	   *out = malloc(sizeof(float) * n * c->nout + 1);
	int			ok = 1;

	for (int f = 0; f < c->nf; f++)
		for (size_t r = 0; r < n; r++)
			x[(size_t) f * n + r] = c->x[r * c->nf + f];
	gs_model_predict(m, x, n, n, scratch, out);
	for (size_t r = 0; r < n; r++)
		for (int k = 0; k < c->nout; k++)
		{
			float		g = out[r * c->nout + k],
						w = c->want[r * c->nout + k];
			double		e = fabs((double) g - (double) w) / fmax(1.0, fabs((double) w));

			if (!(e <= *worst))
				*worst = e;
			if (!close_enough(g, w, tol))
			{
				if (ok)
					printf("# batch row %zu output %d: got %.9g want %.9g\n", r, k, g, w);
				ok = 0;
			}
		}
	free(x);
	free(scratch);
	free(out);
	return ok;
}

/* Score each row on its own (n_rows = ld = 1) and compare. */
static int
score_rows(const GsModel *m, const GsCases *c, double tol)
{
	float	   *scratch = malloc(sizeof(float) * gs_model_scratch_floats(m, 1) + 1);
	float	   *out = malloc(sizeof(float) * c->nout + 1);
	int			ok = 1;

	for (int r = 0; r < c->n_rows; r++)
	{
		gs_model_predict(m, c->x + (size_t) r * c->nf, 1, 1, scratch, out);
		for (int k = 0; k < c->nout; k++)
			if (!close_enough(out[k], c->want[(size_t) r * c->nout + k], tol))
			{
				if (ok)
					printf("# row %d output %d: got %.9g want %.9g\n", r, k, out[k],
						   c->want[(size_t) r * c->nout + k]);
				ok = 0;
			}
	}
	free(scratch);
	free(out);
	return ok;
}

static void
test_refused(const char *name, const char *path, GsModelFormat fmt, const char *code)
{
	GsModelFormat fmts[2] = {GS_FORMAT_AUTO, fmt};
	const char *fname[2] = {"auto", "explicit"};

	for (int i = 0; i < 2; i++)
	{
		GsModel    *m = NULL;
		GsStatus	st;
		GsCode		rc;
		char		what[300];

		gs_status_clear(&st);
		rc = gs_load_model_file(path, fmts[i], &m, &st);
		snprintf(what, sizeof(what), "refused with format %s: %s", fname[i], code);
		printf("# %s (%s): %s%s%s\n", name, fname[i], st.msg, st.detail[0] ? " / " : "", st.detail);
		tap(rc != GS_OK && m == NULL && strcmp(gs_code_name(rc), code) == 0 && st.msg[0] != '\0',
			name, what);
		if (rc != GS_OK && strcmp(gs_code_name(rc), code) != 0)
			printf("# got %s\n", gs_code_name(rc));
		gs_model_free(m);
	}
}

static void
test_ok(const char *name, const char *path, GsModelFormat fmt, int nf, int nout, double tol,
		const char *known)
{
	GsModelFormat fmts[2] = {GS_FORMAT_AUTO, fmt};
	const char *fname[2] = {"auto", "explicit"};
	char		cpath[512];
	GsCases		c;

	snprintf(cpath, sizeof(cpath), WILD "/cases/%s.csv", name);
	if (gs_read_cases(cpath, nf, nout, &c) != 0 || c.n_rows == 0)
	{
		tap(0, name, "case file read");
		return;
	}
	for (int i = 0; i < 2; i++)
	{
		GsModel    *m = NULL;
		GsStatus	st;
		GsCode		rc;
		char		what[300];
		double		worst = 0;
		int			ok;

		gs_status_clear(&st);
		rc = gs_load_model_file(path, fmts[i], &m, &st);
		snprintf(what, sizeof(what), "loads with format %s", fname[i]);
		if (rc != GS_OK)
			printf("# %s: %s%s%s\n", gs_code_name(rc), st.msg, st.detail[0] ? " / " : "", st.detail);
		if (known)
			tap_todo(rc == GS_OK, name, what, known);
		else
			tap(rc == GS_OK, name, what);
		if (rc != GS_OK)
			continue;
		snprintf(what, sizeof(what), "format %s: %d features, %d outputs", fname[i], nf, nout);
		if (m->n_features != nf || m->n_outputs != nout)
			printf("# model has %d features, %d outputs\n", m->n_features, m->n_outputs);
		if (known)
			tap_todo(m->n_features == nf && m->n_outputs == nout, name, what, known);
		else
			tap(m->n_features == nf && m->n_outputs == nout, name, what);
		if (m->n_features != nf || m->n_outputs != nout)
		{
			gs_model_free(m);
			continue;
		}
		ok = score_batch(m, &c, tol, &worst);
		snprintf(what, sizeof(what), "format %s: %d rows as one batch within %g (worst %.3g)",
				 fname[i], c.n_rows, tol, worst);
		if (known)
			tap_todo(ok, name, what, known);
		else
			tap(ok, name, what);
		ok = score_rows(m, &c, tol);
		snprintf(what, sizeof(what), "format %s: row by row within %g", fname[i], tol);
		if (known)
			tap_todo(ok, name, what, known);
		else
			tap(ok, name, what);
		gs_model_free(m);
	}
	free(c.x);
	free(c.want);
}

int
main(void)
{
	FILE	   *f = fopen(WILD "/manifest.tsv", "r");
	static char line[8192];
	int			n_files = 0;

	if (f == NULL)
	{
		tap(0, "manifest", WILD "/manifest.tsv present");
		printf("wild: %d passed, %d failed\n", n_pass, n_fail);
		return 1;
	}
	while (fgets(line, sizeof(line), f))
	{
		char	   *col[MAX_COLS];
		int			nc = 0;
		char	   *p = line,
				   *t;
		char		path[512];

		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\r\n")] = '\0';
		while (nc < MAX_COLS && (t = strsep(&p, "\t")) != NULL)
			col[nc++] = t;
		if (nc < 7)
		{
			tap(0, "manifest", "line has 7 columns at least");
			continue;
		}
		n_files++;
		snprintf(path, sizeof(path), WILD "/models/%s", col[1]);
		if (format_of(col[2]) == GS_FORMAT_AUTO)
		{
			tap(0, col[0], "known format name");
			continue;
		}
		if (strncmp(col[6], "refused:", 8) == 0)
			test_refused(col[0], path, format_of(col[2]), col[6] + 8);
		else if (strcmp(col[6], "ok") == 0 || strncmp(col[6], "known:", 6) == 0)
			test_ok(col[0], path, format_of(col[2]), atoi(col[3]), atoi(col[4]), atof(col[5]),
					strncmp(col[6], "known:", 6) == 0 ? col[6] + 6 : NULL);
		else
			tap(0, col[0], "known expectation");
	}
	fclose(f);
	tap(n_files >= 20, "manifest", "20 files at least");
	printf("1..%d\n", n_pass + n_fail + n_todo);
	printf("# %d TODO (known disagreements, not failures)\n", n_todo);
	printf("wild: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

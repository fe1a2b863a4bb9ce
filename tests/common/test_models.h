/*
 * test_models.h
 *	  Helpers of the unit tests that load models of any kind through
 *	  gs_model_load (model.h): test_mlp.c and test_onnx_trees.c, which link
 *	  the network code.  Include after test_util.h (gs_tap, gs_read_file).
 */
#ifndef GS_TEST_MODELS_H
#define GS_TEST_MODELS_H

#include "../../src/core/model.h"

/* Load a model file in the given format; GS_ERR_INTERNAL when unreadable. */
static inline GsCode
gs_load_model_file(const char *path, GsModelFormat fmt, GsModel **m, GsStatus *st)
{
	size_t		len;
	unsigned char *bytes = gs_read_file(path, &len);
	GsCode		rc;

	*m = NULL;
	if (bytes == NULL)
	{
		gs_status_set(st, GS_ERR_INTERNAL, "cannot read %s", path);
		return GS_ERR_INTERNAL;
	}
	rc = gs_model_load(bytes, len, fmt, NULL, &gs_malloc_allocator, m, st);
	free(bytes);
	return rc;
}

/* Name of a status code as the expected-results files write it. */
static inline const char *
gs_code_name(GsCode c)
{
	switch (c)
	{
		case GS_OK:
			return "OK";
		case GS_ERR_INVALID_MODEL:
			return "INVALID_MODEL";
		case GS_ERR_UNSUPPORTED:
			return "UNSUPPORTED";
		case GS_ERR_LIMIT:
			return "LIMIT";
		case GS_ERR_INVALID_INPUT:
			return "INVALID_INPUT";
		case GS_ERR_NOMEM:
			return "NOMEM";
		case GS_ERR_CANCELLED:
			return "CANCELLED";
		case GS_ERR_INTERNAL:
			return "INTERNAL";
	}
	return "?";
}

/*
 * Every file listed in expected ("FILE|CODE|message fragment" lines, '#'
 * comments) and found in dir, loaded as ONNX, must fail with CODE and a
 * message containing the fragment; at least min_files must be listed.
 */
static inline void
gs_check_bad_files(const char *expected, const char *dir, int min_files)
{
	FILE	   *f = fopen(expected, "r");
	char		line[1024];
	int			n = 0;

	if (f == NULL)
	{
		gs_tap(0, "bad", expected);
		return;
	}
	while (fgets(line, sizeof(line), f))
	{
		char	   *file = line,
				   *code,
				   *frag,
				   *nl,
					path[1100];
		GsModel    *m = NULL;
		GsStatus	st;
		GsCode		rc;

		if (line[0] == '#')
			continue;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		code = strchr(file, '|');
		frag = code ? strchr(code + 1, '|') : NULL;
		if (!frag)
			continue;
		*code++ = '\0';
		*frag++ = '\0';
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		rc = gs_load_model_file(path, GS_FORMAT_ONNX, &m, &st);
		printf("# %s: %s: %s%s%s\n", file, gs_code_name(rc), st.msg, st.detail[0] ? " / " : "", st.detail);
		gs_tap(rc != GS_OK && m == NULL && strcmp(gs_code_name(rc), code) == 0, file, code);
		gs_tap(strstr(st.msg, frag) != NULL, file, frag);
		gs_model_free(m);
		n++;
	}
	fclose(f);
	gs_tap(n >= min_files, "bad", "enough hostile files checked");
}

#endif							/* GS_TEST_MODELS_H */

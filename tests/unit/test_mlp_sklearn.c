/*
 * test_mlp_sklearn.c
 *	  test_mlp's checks of what scikit-learn exports become (skl2onnx):
 *	  networks and their pipelines (gen_onnx_sklearn_fixtures.py,
 *	  gen_onnx_mlp_pipeline_fixtures.py) and linear models
 *	  (gen_onnx_linear_fixtures.py).  Included by test_mlp.c, not compiled
 *	  alone: one program, one set of test_util.h's counters.
 */

/*
 * What skl2onnx exports become: the label branch ignored, a binary
 * classifier's Concat(1 - p, p) scored as p alone, the leading Cast to
 * float a no-op, a Scaler an ADD of the negated offsets and a MUL.
 */
static void
test_sklearn(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;

	rc = gs_load_model_file(FIXTURES "/skl_mlp_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->kind == GS_MODEL_MLP && m->n_outputs == 1 && m->mlp->n_net_outputs == 1 &&
		   m->mlp->n_layers == 3 && m->mlp->steps[0].op == GS_MLP_DENSE &&
		   strcmp(m->mlp->output_act, "sigmoid") == 0 &&
		   strncmp(m->mlp->producer, "skl2onnx", 8) == 0,
		   "skl_mlp_bin", "binary classifier: one output, P(class 1) through the sigmoid; Cast and label branch add no step");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_mlp_3class_tanh.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->n_outputs == 3 && strcmp(m->mlp->output_act, "softmax") == 0 &&
		   m->mlp->n_steps == 4,
		   "skl_mlp_3class_tanh", "3 classes: the probabilities, dense tanh dense softmax");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_pipe_std_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->mlp->n_steps >= 2 && m->mlp->steps[0].op == GS_MLP_ADD &&
		   m->mlp->steps[1].op == GS_MLP_MUL && m->mlp->steps[0].n_out == 30 &&
		   strcmp(m->mlp->steps[0].node, "Scaler") == 0 && m->n_outputs == 1,
		   "skl_pipe_std_bin", "StandardScaler's Scaler: an ADD then a MUL step over the 30 features");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_edit_scaler1.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->mlp->steps[0].op == GS_MLP_ADD && m->mlp->steps[0].p[0] == -12.5f &&
		   m->mlp->steps[0].p[29] == -12.5f && m->mlp->steps[1].p[29] == 0.03125f,
		   "skl_edit_scaler1", "a Scaler's single offset and scale apply to every column");
	gs_model_free(m);
	m = NULL;
	rc = gs_load_model_file(FIXTURES "/skl_pipe_std_bin.onnx", GS_FORMAT_ONNX_AUTOENCODER, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && m == NULL && strstr(st.msg, "not an autoencoder") != NULL,
		   "skl_pipe_std_bin", "reconstruction scoring refused for a classifier");
}

/* The ops of m's steps, comma-separated, in buf. */
static const char *
step_ops(const GsModel *m, char *buf, size_t cap)
{
	size_t		n = 0;

	buf[0] = '\0';
	for (int32_t i = 0; m && m->mlp && i < m->mlp->n_steps && n < cap; i++)
		n += (size_t) snprintf(buf + n, cap - n, "%s%s", i ? "," : "", gs_mlp_op_name(m->mlp->steps[i].op));
	return buf;
}

/*
 * scikit-learn pipelines whose preprocessing is not one chain
 * (gen_onnx_mlp_pipeline_fixtures.py): a ColumnTransformer becomes a GATHER
 * of the columns it keeps, in its order, then per-column steps; a
 * DataFrame's inputs are the features, named after its columns.
 */
static void
test_sklearn_pipelines(void)
{
	static const char *const df_cols[8] = {"amount", "hour", "merchant_risk", "velocity_1h",
	"country_risk", "device_age_days", "card_age_days", "amount_z"};
	static const char *const files[2] = {"skl_df_ct_bin", "skl_df_std_reg"};
	static const int32_t ct_cols[7] = {0, 2, 5, 11, 7, 3, 1};
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	char		path[256],
				ops[256];
	bool		ok;

	rc = gs_load_model_file(FIXTURES "/skl_ct_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	ok = rc == GS_OK && m->n_features == 30 && m->feature_names == NULL &&
		m->mlp->steps[0].op == GS_MLP_GATHER && m->mlp->steps[0].n_in == 30 &&
		m->mlp->steps[0].n_out == 7;
	for (int c = 0; ok && c < 7; c++)
		ok = m->mlp->steps[0].idx[c] == ct_cols[c];
	printf("# skl_ct_bin steps: %s\n", step_ops(m, ops, sizeof(ops)));
	/* Scaler (add, mul) on 4 columns; Imputer, Cast, Mul, Add (MinMaxScaler) on 3 */
	gs_tap(ok && strcmp(ops, "gather,add,mul,impute,mul,add,dense,relu,dense,sigmoid") == 0 &&
		   isnan(m->mlp->steps[3].p[0]) && !isnan(m->mlp->steps[3].p[4]) &&
		   m->mlp->steps[1].p[6] == 0.0f && signbit(m->mlp->steps[1].p[6]) &&
		   m->mlp->steps[2].p[4] == 1.0f && m->mlp->steps[4].p[0] == 1.0f &&
		   m->mlp->steps[5].p[3] == 0.0f && signbit(m->mlp->steps[5].p[3]),
		   "skl_ct_bin", "ColumnTransformer: a GATHER of columns 0 2 5 11 7 3 1, then each group's steps, "
		   "identities (impute NaN by NaN, add -0) elsewhere");
	gs_model_free(m);
	m = NULL;

	/* OneHotEncoder: the codes of columns 3 and 8 gathered once per category, then ONE_HOT */
	rc = gs_load_model_file(FIXTURES "/skl_ct_onehot_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	ok = rc == GS_OK && m->mlp->steps[0].op == GS_MLP_GATHER && m->mlp->steps[0].n_out == 14;
	for (int c = 4; ok && c < 14; c++)
		ok = m->mlp->steps[0].idx[c] == (c < 10 ? 3 : 8);
	printf("# skl_ct_onehot_bin steps: %s\n", step_ops(m, ops, sizeof(ops)));
	if (ok)
	{
		const GsMlpStep *oh = NULL;

		for (int i = 1; i < m->mlp->n_steps && oh == NULL; i++)
			if (m->mlp->steps[i].op == GS_MLP_ONEHOT)
				oh = &m->mlp->steps[i];
		ok = oh != NULL && isnan(oh->p[0]) && oh->p[4] == 0.0f && oh->p[9] == 5.0f &&
			oh->p[10] == 10.0f && oh->p[13] == 99.0f;
	}
	gs_tap(ok, "skl_ct_onehot_bin", "OneHotEncoder: codes 0-5 and 10 20 30 99 as 10 ONE_HOT columns, "
		   "the scaled columns passed through (NaN category)");
	gs_model_free(m);
	m = NULL;

	rc = gs_load_model_file(FIXTURES "/skl_ct_bin.onnx", GS_FORMAT_ONNX_AUTOENCODER, &m, &st);
	gs_tap(rc == GS_ERR_UNSUPPORTED && m == NULL && strstr(st.msg, "in their order") != NULL,
		   "skl_ct_bin", "reconstruction scoring refused after a ColumnTransformer");

	for (int f = 0; f < 2; f++)
	{
		snprintf(path, sizeof(path), FIXTURES "/%s.onnx", files[f]);
		rc = gs_load_model_file(path, GS_FORMAT_ONNX, &m, &st);
		ok = rc == GS_OK && m->n_features == 8 && m->feature_names != NULL;
		for (int c = 0; ok && c < 8; c++)
			ok = strcmp(m->feature_names[c], df_cols[c]) == 0;
		/* FeatureVectorizer keeps the columns in order: no GATHER */
		if (ok && f == 1)
			ok = m->mlp->steps[0].op == GS_MLP_IMPUTE;
		gs_tap(ok, files[f], "a DataFrame's 8 inputs are the features, named after its columns");
		gs_model_free(m);
		m = NULL;
	}
}


/*
 * scikit-learn's linear models (gen_onnx_linear_fixtures.py): one dense
 * layer, its post-transform a step; a binary classifier's two negated rows
 * of coefficients become one unit, the second class's.
 */
static void
test_linear(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	char		ops[256];
	bool		ok;

	rc = gs_load_model_file(FIXTURES "/skl_lin_logreg_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	ok = rc == GS_OK && m->n_outputs == 1 && m->mlp->n_layers == 1 &&
		strcmp(step_ops(m, ops, sizeof(ops)), "add,mul,dense,sigmoid") == 0 &&
		m->mlp->steps[2].n_out == 1 && strcmp(m->mlp->output_act, "sigmoid") == 0;
	gs_tap(ok, "skl_lin_logreg_bin", "LogisticRegression: Scaler, one unit (the second row), sigmoid");
	gs_model_free(m);
	m = NULL;

	rc = gs_load_model_file(FIXTURES "/skl_lin_logreg_3class.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->n_outputs == 3 &&
		   strcmp(step_ops(m, ops, sizeof(ops)), "add,mul,dense,softmax") == 0,
		   "skl_lin_logreg_3class", "3 classes: dense softmax, the Normalizer (L1) after it no step");
	gs_model_free(m);
	m = NULL;

	rc = gs_load_model_file(FIXTURES "/skl_lin_svc_bin.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->n_outputs == 1 && m->mlp->n_params == 60 + 31 &&
		   strcmp(step_ops(m, ops, sizeof(ops)), "add,mul,dense") == 0 &&
		   strcmp(m->mlp->output_act, "identity") == 0,
		   "skl_lin_svc_bin", "LinearSVC: the ArrayFeatureExtractor keeps the second unit (31 parameters after the Scaler's 60)");
	gs_model_free(m);
	m = NULL;

	rc = gs_load_model_file(FIXTURES "/skl_lin_df_scorecard.onnx", GS_FORMAT_ONNX, &m, &st);
	ok = rc == GS_OK && m->n_features == 8 && m->feature_names != NULL &&
		strcmp(m->feature_names[4], "country_risk") == 0 && m->mlp->steps[0].op == GS_MLP_GATHER &&
		strstr(step_ops(m, ops, sizeof(ops)), "one_hot,dense,sigmoid") != NULL;
	gs_tap(ok, "skl_lin_df_scorecard", "a DataFrame scorecard: named features, GATHER, ONE_HOT, dense, sigmoid");
	gs_model_free(m);
	m = NULL;

	rc = gs_load_model_file(FIXTURES "/skl_lin_enet_2targets.onnx", GS_FORMAT_ONNX, &m, &st);
	gs_tap(rc == GS_OK && m->n_outputs == 2 && strcmp(m->mlp->output_act, "identity") == 0,
		   "skl_lin_enet_2targets", "LinearRegressor with 2 targets: 2 outputs, no transform");
	gs_model_free(m);
	m = NULL;

	rc = gs_load_model_file(FIXTURES "/skl_lin_logreg_bin.onnx", GS_FORMAT_ONNX_AUTOENCODER, &m, &st);
	gs_tap(rc == GS_ERR_INVALID_MODEL && m == NULL && strstr(st.msg, "not an autoencoder") != NULL,
		   "skl_lin_logreg_bin", "reconstruction scoring refused for a linear classifier");
}

/*
 * Imputers of a number inside a ColumnTransformer
 * (gen_onnx_mlp_pipeline_fixtures.py's skl_ct_impute_sentinel): one IMPUTE
 * step per replaced number (0, then the -1 sentinel), alpha the number,
 * beta set; the imputer of NaN a step of its own.
 */
static void
test_impute_sentinel(void)
{
	GsModel    *m = NULL;
	GsStatus	st;
	GsCode		rc;
	char		ops[256];
	int			n_zero = 0,
				n_sentinel = 0,
				n_nan = 0;

	rc = gs_load_model_file(FIXTURES "/skl_ct_impute_sentinel.onnx", GS_FORMAT_ONNX, &m, &st);
	if (rc == GS_OK)
		for (int i = 0; i < m->mlp->n_steps; i++)
		{
			const GsMlpStep *s = &m->mlp->steps[i];

			if (s->op != GS_MLP_IMPUTE)
				continue;
			if (s->beta == 0.0f)
				n_nan++;
			else if (s->alpha == 0.0f)
				n_zero++;
			else if (s->alpha == -1.0f)
				n_sentinel++;
		}
	printf("# skl_ct_impute_sentinel steps: %s\n", step_ops(m, ops, sizeof(ops)));
	gs_tap(rc == GS_OK && n_zero == 1 && n_sentinel == 1 && n_nan == 1, "skl_ct_impute_sentinel",
		   "an IMPUTE step for 0, one for the -1 sentinel, one for NaN");
	gs_model_free(m);
}

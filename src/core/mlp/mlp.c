/*
 * mlp.c
 *	  The CPU engine of feed-forward networks (GsMlp, see mlp.h) and what
 *	  every network shares: releasing it, its size, op names.
 *
 * Batches are column-major, as for forests: feature f of row r is
 * x[f * ld + r].  A dense step is one cblas_sgemm on the whole batch
 * (Y[n x out] = X[n x in] * W^T, W stored row per unit, i.e. column-major
 * [in x out]) followed by one pass over Y, column by column, that adds
 * the bias and applies every element-wise step that follows (scaling,
 * batch normalization, activation; a skip connection's save and join),
 * each step a loop over the column while it is in the L1 cache: the
 * Makefile lets gcc vectorize those loops (-fvect-cost-model=dynamic).
 * Row-wise steps (softmax, log softmax, layer normalization) get a pass of
 * their own; so do a LOAD and a CONCAT of a saved value (copies).
 *
 * BLAS: OpenBLAS, single-threaded (the Makefile links Debian's serial
 * build; openblas_set_num_threads(1) keeps a threaded build single-threaded
 * too), since a PostgreSQL backend is one process per connection and must
 * not start threads.  The engine allocates nothing: the caller gives the
 * scratch (two ping-pong activations of n_rows * max_width floats, then
 * one as large per value a skip connection keeps).  The
 * per-value math is mlp_eval.h's, shared with the CUDA kernels.
 */
#include "mlp.h"
#include "mlp_eval.h"
#include "cat_names.h"

#include <math.h>
#include <string.h>

#include <cblas.h>

/* OpenBLAS's own entry point (not in every cblas.h). */
extern void openblas_set_num_threads(int num_threads);

/* Release a network; see mlp.h. */
void
gs_mlp_free(GsMlp *m)
{
	if (m == NULL)
		return;
	if (m->steps)
	{
		for (int32_t i = 0; i < m->n_steps; i++)
		{
			if (m->steps[i].w)
				m->alloc.free(m->alloc.ctx, m->steps[i].w);
			if (m->steps[i].p)
				m->alloc.free(m->alloc.ctx, m->steps[i].p);
			if (m->steps[i].idx)
				m->alloc.free(m->alloc.ctx, m->steps[i].idx);
		}
		m->alloc.free(m->alloc.ctx, m->steps);
	}
	if (m->feature_names)
	{
		for (int32_t i = 0; i < m->n_features; i++)
			if (m->feature_names[i])
				m->alloc.free(m->alloc.ctx, m->feature_names[i]);
		m->alloc.free(m->alloc.ctx, m->feature_names);
	}
	gs_catnames_free(m->cat_names);
	m->alloc.free(m->alloc.ctx, m);
}

/* Bytes a network occupies; see mlp.h. */
size_t
gs_mlp_memory_bytes(const GsMlp *m)
{
	size_t		n = sizeof(GsMlp) + sizeof(GsMlpStep) * (size_t) m->n_steps;

	for (int32_t i = 0; i < m->n_steps; i++)
		if (m->steps[i].idx)
			n += sizeof(int32_t) * (size_t) m->steps[i].n_out;
	if (m->feature_names)
		for (int32_t i = 0; i < m->n_features; i++)
			n += sizeof(char *) + (m->feature_names[i] ? strlen(m->feature_names[i]) + 1 : 0);
	return n + sizeof(float) * (size_t) m->n_params;
}

/* Name of an op; see mlp.h. */
const char *
gs_mlp_op_name(GsMlpOp op)
{
	switch (op)
	{
		case GS_MLP_DENSE:
			return "dense";
		case GS_MLP_ADD:
			return "add";
		case GS_MLP_MUL:
			return "mul";
		case GS_MLP_DIV:
			return "div";
		case GS_MLP_RELU:
			return "relu";
		case GS_MLP_LEAKY_RELU:
			return "leaky_relu";
		case GS_MLP_SIGMOID:
			return "sigmoid";
		case GS_MLP_TANH:
			return "tanh";
		case GS_MLP_SOFTMAX:
			return "softmax";
		case GS_MLP_ELU:
			return "elu";
		case GS_MLP_SELU:
			return "selu";
		case GS_MLP_SOFTPLUS:
			return "softplus";
		case GS_MLP_SOFTSIGN:
			return "softsign";
		case GS_MLP_HARD_SIGMOID:
			return "hard_sigmoid";
		case GS_MLP_PRELU:
			return "prelu";
		case GS_MLP_CLIP:
			return "clip";
		case GS_MLP_SILU:
			return "silu";
		case GS_MLP_GELU:
			return "gelu";
		case GS_MLP_IMPUTE:
			return "impute";
		case GS_MLP_LOG_SOFTMAX:
			return "log_softmax";
		case GS_MLP_LAYER_NORM:
			return "layer_norm";
		case GS_MLP_MISH:
			return "mish";
		case GS_MLP_HARD_SWISH:
			return "hard_swish";
		case GS_MLP_GELU_TANH:
			return "gelu_tanh";
		case GS_MLP_GATHER:
			return "gather";
		case GS_MLP_ONEHOT:
			return "one_hot";
		case GS_MLP_SAVE:
			return "save";
		case GS_MLP_ADD_SAVED:
			return "add_saved";
		case GS_MLP_LOAD:
			return "load";
		case GS_MLP_MUL_SAVED:
			return "mul_saved";
		case GS_MLP_SUB_SAVED:
			return "sub_saved";
		case GS_MLP_RSUB_SAVED:
			return "rsub_saved";
		case GS_MLP_CONCAT_SAVED:
			return "concat_saved";
	}
	return "unknown";
}

/* Scratch floats for a batch; see mlp.h. */
size_t
gs_mlp_scratch_floats(const GsMlp *m, size_t n_rows)
{
	return (2 + (size_t) m->n_slots) * (n_rows ? n_rows : 1) * (size_t) m->max_width;
}

/*
 * Can the CPU engine apply op value by value in a fused pass: an
 * element-wise step, a SAVE (the value also goes to its slot) or an
 * element-wise join with a saved value?  (The CUDA kernels fuse only the
 * element-wise steps.)
 */
static inline bool
cpu_fusable(GsMlpOp op)
{
	return gs_mlp_is_elementwise(op) || op == GS_MLP_SAVE || op == GS_MLP_ADD_SAVED ||
		op == GS_MLP_MUL_SAVED || op == GS_MLP_SUB_SAVED || op == GS_MLP_RSUB_SAVED;
}

/*
 * One element-wise step on the n values of a column, in place: the switch
 * taken once per column, each case a loop of gs_mlp_apply with its op a
 * constant, which the compiler inlines and vectorizes where it can (the
 * same float operations per value as the CUDA kernels').
 */
static void
apply_column(const GsMlpStep *st, float p, float *v, size_t n)
{
	float		alpha = st->alpha,
				beta = st->beta;

#define GS_APPLY_LOOP(OP) \
	case OP: \
		for (size_t r = 0; r < n; r++) \
			v[r] = gs_mlp_apply(OP, alpha, beta, p, v[r]); \
		break
	switch (st->op)
	{
			GS_APPLY_LOOP(GS_MLP_ADD);
			GS_APPLY_LOOP(GS_MLP_MUL);
			GS_APPLY_LOOP(GS_MLP_DIV);
			GS_APPLY_LOOP(GS_MLP_RELU);
			GS_APPLY_LOOP(GS_MLP_LEAKY_RELU);
			GS_APPLY_LOOP(GS_MLP_SIGMOID);
			GS_APPLY_LOOP(GS_MLP_TANH);
			GS_APPLY_LOOP(GS_MLP_ELU);
			GS_APPLY_LOOP(GS_MLP_SELU);
			GS_APPLY_LOOP(GS_MLP_SOFTPLUS);
			GS_APPLY_LOOP(GS_MLP_MISH);
			GS_APPLY_LOOP(GS_MLP_HARD_SWISH);
			GS_APPLY_LOOP(GS_MLP_GELU_TANH);
			GS_APPLY_LOOP(GS_MLP_SOFTSIGN);
			GS_APPLY_LOOP(GS_MLP_HARD_SIGMOID);
			GS_APPLY_LOOP(GS_MLP_PRELU);
			GS_APPLY_LOOP(GS_MLP_CLIP);
			GS_APPLY_LOOP(GS_MLP_SILU);
			GS_APPLY_LOOP(GS_MLP_IMPUTE);
			GS_APPLY_LOOP(GS_MLP_GELU);
			GS_APPLY_LOOP(GS_MLP_ONEHOT);
		default:
			/* not element-wise: never in a fused pass */
			break;
	}
#undef GS_APPLY_LOOP
}

/*
 * Apply steps [first, last) (cpu_fusable) to column c of n rows: src (may be
 * dst) to dst, adding bias first when bias is not NULL; one step at a time
 * over the column, which stays in the L1 cache.  Saved value k's column c
 * is slots + k * slot_floats + c * n.
 */
static void
fused_column(const GsMlpStep *steps, int32_t first, int32_t last, int32_t c,
			 const float *bias, const float *src, float *dst, size_t n,
			 float *slots, size_t slot_floats)
{
	if (bias)
	{
		float		b = bias[c];

		for (size_t r = 0; r < n; r++)
			dst[r] = src[r] + b;
	}
	else if (dst != src)
		memcpy(dst, src, sizeof(float) * n);
	for (int32_t k = first; k < last; k++)
	{
		const GsMlpStep *st = &steps[k];
		float	   *sv = slots + (size_t) st->slot * slot_floats + (size_t) c * n;

		switch (st->op)
		{
			case GS_MLP_SAVE:
				memcpy(sv, dst, sizeof(float) * n);
				break;
			case GS_MLP_ADD_SAVED:
				for (size_t r = 0; r < n; r++)
					dst[r] = gs_mlp_join(GS_MLP_ADD_SAVED, dst[r], sv[r]);
				break;
			case GS_MLP_MUL_SAVED:
				for (size_t r = 0; r < n; r++)
					dst[r] = gs_mlp_join(GS_MLP_MUL_SAVED, dst[r], sv[r]);
				break;
			case GS_MLP_SUB_SAVED:
				for (size_t r = 0; r < n; r++)
					dst[r] = gs_mlp_join(GS_MLP_SUB_SAVED, dst[r], sv[r]);
				break;
			case GS_MLP_RSUB_SAVED:
				for (size_t r = 0; r < n; r++)
					dst[r] = gs_mlp_join(GS_MLP_RSUB_SAVED, dst[r], sv[r]);
				break;
			default:
				apply_column(st, st->p ? st->p[c] : 0.0f, dst, n);
				break;
		}
	}
}

/*
 * The margins of XGBoost's linear booster (xgb_linear.h: steps 0-2, two
 * imputes and the dense layer) into dst (column-major, ld n), summed as
 * XGBoost's gblinear does: bias + base margin, then each present feature's
 * value times its weight, in feature order, in float.  A GEMM's order
 * differs, and with features of large scale that cancel the score moved by
 * 1e-5 of itself.
 */
static void
linear_margins(const GsMlp *m, const float *x, size_t ld, size_t n, float *dst)
{
	const GsMlpStep *miss = &m->steps[1],
			   *d = &m->steps[2];

	for (int32_t g = 0; g < d->n_out; g++)
	{
		float	   *col = dst + (size_t) g * n;

		for (size_t r = 0; r < n; r++)
			col[r] = d->p[g];
		for (int32_t i = 0; i < d->n_in; i++)
		{
			const float *xi = x + (size_t) i * ld;
			float		wi = d->w[(size_t) g * d->n_in + i];

			for (size_t r = 0; r < n; r++)
			{
				float		v = xi[r];

				if (v == v && !(miss->beta != 0.0f && v == miss->alpha))
					col[r] += v * wi;
			}
		}
	}
}

/*
 * Score a batch on the CPU; see mlp.h.  One loop interprets the network's
 * steps, each case beside the two buffers it swaps and the saved values it
 * reads, which is why it runs to ~150 lines: split, the cases would pass
 * that state around.
 */
void
gs_mlp_predict(const GsMlp *m, const float *x, size_t ld, size_t n,
			   float *scratch, float *out)
{
	float	   *buf[2],
			   *slots;
	size_t		slot_floats = n * (size_t) m->max_width;
	const float *cur = x;
	size_t		cur_ld = ld;
	int			free_buf = 0;	/* the buffer not holding cur */
	int32_t		width = m->n_features;
	int32_t		s = 0;

	if (n == 0)
		return;
	openblas_set_num_threads(1);
	buf[0] = scratch;
	buf[1] = scratch + n * (size_t) m->max_width;
	/* saved value k: scratch + (2 + k) * n * max_width */
	slots = scratch + 2 * slot_floats;
	if (m->linear_booster)
	{
		linear_margins(m, x, ld, n, buf[0]);
		cur = buf[0];
		cur_ld = n;
		free_buf = 1;
		width = m->steps[2].n_out;
		s = 3;
	}

	while (s < m->n_steps)
	{
		const GsMlpStep *st = &m->steps[s];

		if (st->op == GS_MLP_DENSE || st->op == GS_MLP_GATHER)
		{
			/*
			 * A GEMM, then bias and the element-wise steps after it in one
			 * pass; or a GATHER's columns read through those steps.
			 */
			bool		dense = st->op == GS_MLP_DENSE;
			float	   *dst = buf[free_buf];
			int32_t		e = s + 1;

			if (dense)
				cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans,
							(int) n, st->n_out, st->n_in, 1.0f, cur, (int) cur_ld,
							st->w, st->n_in, 0.0f, dst, (int) n);
			while (e < m->n_steps && cpu_fusable(m->steps[e].op))
				e++;
			for (int32_t c = 0; c < st->n_out; c++)
				fused_column(m->steps, s + 1, e, c, dense ? st->p : NULL,
							 dense ? dst + (size_t) c * n : cur + (size_t) st->idx[c] * cur_ld,
							 dst + (size_t) c * n, n, slots, slot_floats);
			cur = dst;
			cur_ld = n;
			free_buf ^= 1;
			width = st->n_out;
			s = e;
		}
		else if (st->op == GS_MLP_LOAD || st->op == GS_MLP_CONCAT_SAVED)
		{
			/*
			 * Go back to a saved value, or join one by its columns (copies:
			 * the steps after work in place, and the slot is kept).
			 */
			float	   *slot = slots + (size_t) st->slot * slot_floats;
			float	   *dst = buf[free_buf];

			if (st->op == GS_MLP_CONCAT_SAVED)
			{
				/* x's columns and the slot's, in the graph's order */
				int32_t		n_saved = st->n_out - st->n_in,
							x_at = st->alpha != 0.0f ? n_saved : 0,
							s_at = st->alpha != 0.0f ? 0 : width;

				for (int32_t c = 0; c < width; c++)
					memcpy(dst + (size_t) (x_at + c) * n, cur + (size_t) c * cur_ld, sizeof(float) * n);
				memcpy(dst + (size_t) s_at * n, slot, sizeof(float) * n * (size_t) n_saved);
				width = st->n_out;
			}
			else
			{
				width = st->n_out;
				memcpy(dst, slot, sizeof(float) * n * (size_t) width);
			}
			free_buf ^= 1;
			cur = dst;
			cur_ld = n;
			s++;
		}
		else if (gs_mlp_is_rowwise(st->op))
		{
			if (cur == x)
			{
				float	   *dst = buf[free_buf];

				for (int32_t c = 0; c < width; c++)
					memcpy(dst + (size_t) c * n, x + (size_t) c * ld, sizeof(float) * n);
				cur = dst;
				cur_ld = n;
				free_buf ^= 1;
			}
			for (size_t r = 0; r < n; r++)
				gs_mlp_row(st->op, st->alpha, st->w, st->p, (float *) cur + r, n, width);
			s++;
		}
		else
		{
			/*
			 * Element-wise steps not after a dense one (input scaling), saves
			 * and joins.
			 */
			int32_t		e = s;
			float	   *dst = cur == x ? buf[free_buf] : (float *) cur;

			while (e < m->n_steps && cpu_fusable(m->steps[e].op))
				e++;
			for (int32_t c = 0; c < width; c++)
				fused_column(m->steps, s, e, c, NULL, cur + (size_t) c * cur_ld,
							 dst + (size_t) c * n, n, slots, slot_floats);
			if (cur == x)
				free_buf ^= 1;
			cur = dst;
			cur_ld = n;
			s = e;
		}
	}

	if (m->reconstruction)
	{
		/* mean squared error between the input row and its reconstruction */
		for (size_t r = 0; r < n; r++)
			out[r] = 0.0f;
		for (size_t r = 0; r < n; r++)
		{
			double		sum = 0.0;

			for (int32_t f = 0; f < m->n_features; f++)
			{
				double		d = (double) cur[(size_t) f * cur_ld + r] - (double) x[(size_t) f * ld + r];

				sum += d * d;
			}
			out[r] = (float) (sum / m->n_features);
		}
	}
	else
	{
		for (int32_t k = 0; k < width; k++)
			for (size_t r = 0; r < n; r++)
				out[r * (size_t) width + k] = cur[(size_t) k * cur_ld + r];
	}
}

/* The value a linear booster takes as missing; see mlp.h. */
void
gs_mlp_set_missing(GsMlp *m, float v)
{
	m->steps[1].alpha = v;
	m->steps[1].beta = 1.0f;
}

/* The value a linear booster takes as missing, if any; see mlp.h. */
bool
gs_mlp_missing(const GsMlp *m, float *v)
{
	if (m->steps[1].beta == 0.0f)
		return false;
	*v = m->steps[1].alpha;
	return true;
}

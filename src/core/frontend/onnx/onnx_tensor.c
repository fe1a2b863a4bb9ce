/*
 * onnx_tensor.c
 *	  The ONNX loader's helpers (see onnx_internal.h): constants by name,
 *	  tensors checked and copied out of the decoded protobuf (external data
 *	  refused, dims against caps before any allocation, byte counts against
 *	  dims, finite values), node attributes, and the chain's bookkeeping.
 *	  Arrays they return come from the network's allocator.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* Copy an untrusted name for messages: printable ASCII only, truncated. */
void
onnx_safe_name(char *dst, size_t cap, const char *src)
{
	size_t		i = 0;

	if (src == NULL || src[0] == '\0')
		src = "(unnamed)";
	for (; src[i] && i + 4 < cap; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f && src[i] != '"') ? src[i] : '?';
	if (src[i])
	{
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
}

/* The first line of s (at most cap - 1 bytes) in dst. */
static void
first_line(char *dst, size_t cap, const char *s)
{
	size_t		n = strcspn(s ? s : "", "\r\n");

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
}

/*
 * "name version" of the program that wrote the model, for saved_by, in at
 * most cap bytes, made printable by onnx_safe_name: the first line of each
 * (CatBoost's producer_version is a multi-line build banner, "Git info:\n
 * Commit: ...", which says no version: dropped).
 */
void
onnx_producer(char *dst, size_t cap, const char *name, const char *version)
{
	char		n1[64],
				v1[64],
				pn[40],
				pv[24];

	first_line(n1, sizeof(n1), name);
	first_line(v1, sizeof(v1), version);
	if (strncmp(v1, "Git info", 8) == 0)
		v1[0] = '\0';
	onnx_safe_name(pn, sizeof(pn), n1);
	onnx_safe_name(pv, sizeof(pv), v1);
	snprintf(dst, cap, "%s%s%s", pn, v1[0] ? " " : "", v1[0] ? pv : "");
}

/* Allocate from the loader's (the caller's) allocator. */
void *
onnx_alloc(Loader *L, size_t size)
{
	return L->alloc.alloc(L->alloc.ctx, size ? size : 1);
}

/* Set an out-of-memory status. */
GsCode
onnx_nomem(Loader *L)
{
	return gs_status_set(L->st, GS_ERR_NOMEM, "out of memory loading ONNX model");
}

/* Find a constant (initializer or Constant node output) by name, or NULL. */
const Onnx__TensorProto *
onnx_find_const(const Loader *L, const char *name)
{
	if (name == NULL || name[0] == '\0')
		return NULL;
	for (size_t i = 0; i < L->g->n_initializer; i++)
		if (L->g->initializer[i]->name && strcmp(L->g->initializer[i]->name, name) == 0)
			return L->g->initializer[i];
	for (int32_t i = 0; i < L->n_consts; i++)
		if (strcmp(L->const_names[i], name) == 0)
			return L->consts[i];
	return NULL;
}

/*
 * A constant by name as onnx_find_const finds it, or else the value of a
 * Constant node anywhere in the graph (one not read yet: a pattern's
 * constants may come after the node that starts it), or NULL.
 */
const Onnx__TensorProto *
onnx_find_const_anywhere(const Loader *L, const char *name)
{
	const Onnx__TensorProto *t = onnx_find_const(L, name);

	for (size_t i = 0; t == NULL && name && i < L->g->n_node; i++)
	{
		const Onnx__NodeProto *node = L->g->node[i];
		const Onnx__AttributeProto *a;

		if (node->op_type && strcmp(node->op_type, "Constant") == 0 && node->n_input == 0 &&
			node->n_output >= 1 && node->output[0] && strcmp(node->output[0], name) == 0 &&
			(a = onnx_attr_find(node, "value")) != NULL)
			t = a->t;
	}
	return t;
}

/*
 * The value of name when it is a float scalar constant ([], [1], [1, 1]...):
 * an initializer, a Constant node already read, or a Constant node anywhere
 * in the graph (a pattern's constants may come after the node that starts
 * it).  false when it is none of these or not finite; never leaves an error
 * (an allocation that failed sets L->lost_alloc).
 */
bool
onnx_const_scalar(Loader *L, const char *name, float *v)
{
	const Onnx__TensorProto *t = onnx_find_const_anywhere(L, name);
	int64_t		n = 0;
	float	   *vals = NULL;
	bool		ok;

	if (t == NULL || !t->has_data_type || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		return false;
	for (size_t d = 0; d < t->n_dims; d++)
		if (t->dims[d] != 1)
			return false;
	if (onnx_tensor_floats(L, t, 1, &n, &vals) != GS_OK)
	{
		/* a damaged constant is just not a match; a failed allocation is remembered */
		if (L->st->code == GS_ERR_NOMEM)
			L->lost_alloc = true;
		gs_status_clear(L->st);
		return false;
	}
	ok = n == 1 && isfinite(vals[0]);
	if (ok)
		*v = vals[0];
	L->alloc.free(L->alloc.ctx, vals);
	return ok;
}

/* Record constant t under name (a Constant node, or an Identity copying one). */
void
onnx_register_const(Loader *L, const char *name, const Onnx__TensorProto *t)
{
	L->consts[L->n_consts] = t;
	L->const_names[L->n_consts] = name;
	L->n_consts++;
}

/* Name of an ONNX element type for messages. */
const char *
onnx_elem_type_name(int32_t t)
{
	static const char *const names[] = {
		"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
		"string", "bool", "float16", "double", "uint32", "uint64", "complex64",
		"complex128", "bfloat16"
	};

	if (t >= 0 && t < (int32_t) (sizeof(names) / sizeof(names[0])))
		return names[t];
	return "unknown";
}

/*
 * Check a tensor's storage and element count: not external, no segment,
 * data_type as wanted, dims >= 0 and product <= cap.  Sets *count.
 */
GsCode
onnx_tensor_check(Loader *L, const Onnx__TensorProto *t, int32_t want_type,
			 int64_t cap, int64_t *count)
{
	char		tname[80];
	int64_t		n = 1;

	onnx_safe_name(tname, sizeof(tname), t->name);
	if (t->n_external_data > 0 ||
		(t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "tensor \"%s\" of %s keeps its data in an external file", tname, L->label);
		gs_status_detail(L->st, "External data files are never read. Export the model with every tensor "
						 "inside the file (PyTorch 2.x: torch.onnx.export(..., external_data=False)), "
						 "or re-save it: onnx.save_model(onnx.load(path), path, "
						 "save_as_external_data=False).");
		return L->st->code;
	}
	if (t->segment != NULL)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "tensor \"%s\" of %s is segmented", tname, L->label);
	if (!t->has_data_type || t->data_type != want_type)
		return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
							 "tensor \"%s\" of %s has element type %s, expected %s", tname, L->label,
							 onnx_elem_type_name(t->has_data_type ? t->data_type : 0),
							 onnx_elem_type_name(want_type));
	if (t->n_dims > 8)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "tensor \"%s\" of %s has %zu dimensions", tname, L->label, t->n_dims);
	for (size_t i = 0; i < t->n_dims; i++)
	{
		if (t->dims[i] < 0)
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "tensor \"%s\" of %s has a negative dimension", tname, L->label);
		if (t->dims[i] > 0 && n > cap / t->dims[i])
			return gs_status_set(L->st, GS_ERR_LIMIT,
								 "tensor \"%s\" of %s has more than %lld elements",
								 tname, L->label, (long long) cap);
		n *= t->dims[i];
	}
	*count = n;
	return GS_OK;
}

/*
 * The values of a float constant as a new array of count floats (caller
 * frees with the network's allocator), all finite.
 */
GsCode
onnx_tensor_floats(Loader *L, const Onnx__TensorProto *t, int64_t cap, int64_t *count,
			  float **vals)
{
	char		tname[80];
	float	   *v;
	int64_t		n;

	*vals = NULL;
	if (onnx_tensor_check(L, t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, cap, &n) != GS_OK)
		return L->st->code;
	onnx_safe_name(tname, sizeof(tname), t->name);
	if (t->has_raw_data && t->n_float_data > 0)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "tensor \"%s\" of %s has both raw and float data", tname, L->label);
	if (t->has_raw_data ? t->raw_data.len != (size_t) n * sizeof(float)
		: t->n_float_data != (size_t) n)
	{
		gs_status_set(L->st, GS_ERR_INVALID_MODEL,
					  "tensor \"%s\" of %s holds the wrong amount of data", tname, L->label);
		gs_status_detail(L->st, "Its shape says %lld values, its data has %zu.", (long long) n,
						 t->has_raw_data ? t->raw_data.len / sizeof(float) : t->n_float_data);
		return L->st->code;
	}
	v = onnx_alloc(L, sizeof(float) * (size_t) n);
	if (v == NULL)
		return onnx_nomem(L);
	if (t->has_raw_data)
	{
		/* little-endian IEEE 754 in the file */
		for (int64_t i = 0; i < n; i++)
		{
			const uint8_t *b = t->raw_data.data + 4 * i;
			uint32_t	u = (uint32_t) b[0] | (uint32_t) b[1] << 8 |
				(uint32_t) b[2] << 16 | (uint32_t) b[3] << 24;

			memcpy(&v[i], &u, sizeof(float));
		}
	}
	else if (n > 0)
		memcpy(v, t->float_data, sizeof(float) * (size_t) n);
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
		{
			L->alloc.free(L->alloc.ctx, v);
			return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
								 "tensor \"%s\" of %s holds a non-finite value", tname, L->label);
		}
	*count = n;
	*vals = v;
	return GS_OK;
}

/* The values of a small int64 constant (at most cap elements). */
GsCode
onnx_tensor_int64s(Loader *L, const Onnx__TensorProto *t, int64_t cap, int64_t *count,
			  int64_t *vals)
{
	char		tname[80];
	int64_t		n;

	if (onnx_tensor_check(L, t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, cap, &n) != GS_OK)
		return L->st->code;
	onnx_safe_name(tname, sizeof(tname), t->name);
	if (t->has_raw_data ? t->raw_data.len != (size_t) n * 8 : t->n_int64_data != (size_t) n)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "tensor \"%s\" of %s holds the wrong amount of data", tname, L->label);
	for (int64_t i = 0; i < n; i++)
	{
		if (t->has_raw_data)
		{
			uint64_t	u = 0;

			for (int k = 7; k >= 0; k--)
				u = u << 8 | t->raw_data.data[8 * i + k];
			vals[i] = (int64_t) u;
		}
		else
			vals[i] = t->int64_data[i];
	}
	*count = n;
	return GS_OK;
}

/* ---- attributes ---- */

/* The node's attribute name, or NULL. */
const Onnx__AttributeProto *
onnx_attr_find(const Onnx__NodeProto *node, const char *name)
{
	for (size_t i = 0; i < node->n_attribute; i++)
		if (node->attribute[i]->name && strcmp(node->attribute[i]->name, name) == 0)
			return node->attribute[i];
	return NULL;
}

/* Refuse attributes outside allowed (a NULL-terminated list). */
GsCode
onnx_attrs_allowed(Loader *L, const Onnx__NodeProto *node, const char *const *allowed)
{
	for (size_t i = 0; i < node->n_attribute; i++)
	{
		const char *name = node->attribute[i]->name ? node->attribute[i]->name : "";
		bool		ok = false;
		char		aname[64];

		for (int k = 0; allowed[k]; k++)
			if (strcmp(name, allowed[k]) == 0)
				ok = true;
		if (!ok)
		{
			onnx_safe_name(aname, sizeof(aname), name);
			return gs_status_set(L->st, GS_ERR_UNSUPPORTED,
								 "attribute \"%s\" of %s is not supported", aname, L->label);
		}
	}
	return GS_OK;
}

/* An integer attribute, or def when absent. */
GsCode
onnx_attr_int(Loader *L, const Onnx__NodeProto *node, const char *name, int64_t def, int64_t *v)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);

	*v = def;
	if (a == NULL)
		return GS_OK;
	if (!a->has_i || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not an integer", name, L->label);
	*v = a->i;
	return GS_OK;
}

/* A float attribute, or def when absent; must be finite. */
GsCode
onnx_attr_float(Loader *L, const Onnx__NodeProto *node, const char *name, float def, float *v)
{
	const Onnx__AttributeProto *a = onnx_attr_find(node, name);

	*v = def;
	if (a == NULL)
		return GS_OK;
	if (!a->has_f || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) ||
		!isfinite(a->f))
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "attribute \"%s\" of %s is not a finite float", name, L->label);
	*v = a->f;
	return GS_OK;
}

/* ---- building steps ---- */

/* Append a step for the current node; NULL (status set) past the cap. */
GsMlpStep *
onnx_new_step(Loader *L, GsMlpOp op, const char *node_name)
{
	GsMlpStep  *s;

	if (L->m->n_steps >= L->cap_steps)
	{
		gs_status_set(L->st, GS_ERR_LIMIT, "the network has more than %d steps", GS_MLP_MAX_STEPS);
		return NULL;
	}
	s = &L->m->steps[L->m->n_steps++];
	memset(s, 0, sizeof(*s));
	s->op = op;
	s->n_in = L->width;
	s->n_out = L->width;
	onnx_safe_name(s->node, sizeof(s->node), node_name);
	if (op != GS_MLP_ADD)
		L->biasless_dense = -1;
	return s;
}

/* Is node op, of ai.onnx.ml when ml, else of the default domain? */
bool
onnx_node_is(const Onnx__NodeProto *node, const char *op, bool ml)
{
	const char *dom = node->domain ? node->domain : "";

	if (node->op_type == NULL || strcmp(node->op_type, op) != 0)
		return false;
	return ml ? strcmp(dom, "ai.onnx.ml") == 0 : (dom[0] == '\0' || strcmp(dom, "ai.onnx") == 0);
}

/*
 * Is name the tensor the chain has reached?  Never before the chain starts
 * (a DataFrame's graph: onnx_mlp_prep starts it after the constants).
 */
bool
onnx_is_cur(const Loader *L, const char *name)
{
	return name != NULL && L->cur != NULL && strcmp(name, L->cur) == 0;
}

/* Require exactly n_in inputs, the first being the chain. */
GsCode
onnx_want_chain_input(Loader *L, const Onnx__NodeProto *node, size_t min_in, size_t max_in)
{
	if (node->n_input < min_in || node->n_input > max_in)
		return gs_status_set(L->st, GS_ERR_INVALID_MODEL,
							 "%s has %zu inputs", L->label, node->n_input);
	if (!onnx_is_cur(L, node->input[0]))
	{
		gs_status_set(L->st, GS_ERR_UNSUPPORTED,
					  "%s is not part of a single feed-forward chain", L->label);
		gs_status_detail(L->st, "Each node must take the output of the node before it as its first input "
						 "(an Add may also take an earlier one: a skip connection).");
		return L->st->code;
	}
	return GS_OK;
}

/* The constant named by input k of node, or an error naming it. */
GsCode
onnx_want_const(Loader *L, const Onnx__NodeProto *node, size_t k, const Onnx__TensorProto **t)
{
	char		iname[80];

	*t = k < node->n_input ? onnx_find_const(L, node->input[k]) : NULL;
	if (*t != NULL)
		return GS_OK;
	onnx_safe_name(iname, sizeof(iname), k < node->n_input ? node->input[k] : NULL);
	gs_status_set(L->st, GS_ERR_UNSUPPORTED,
				  "input \"%s\" of %s is not a constant", iname, L->label);
	gs_status_detail(L->st, "Only a chain over one input tensor is supported: weights, biases and "
					 "scaling must be initializers or Constant nodes; two values of the network "
					 "may only be added (a skip connection).");
	return L->st->code;
}


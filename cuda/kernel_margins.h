/*
 * kernel_margins.h
 *	  The kernel phases that hold a thread's margins, written once over the
 *	  margin type.  Included only by kernel_phases.h, twice: with
 *	  GS_M_T float (names as they are: gs_phase_init, ...) and with
 *	  GS_M_T double (names suffixed _dbl: gs_phase_init_dbl, ...).
 *
 * Float margins are for forests without GsForest.leaf_lo: each leaf (a
 * float) is added to its row's float margin in tree order, exactly as
 * gs_cpu_margins adds them.  Double margins are for forests with
 * leaf_lo (LightGBM): each leaf is the double gs_leaf_double, added in tree
 * order to a double margin that is rounded to float once, in the output
 * phase, as gs_cpu_margins does for such forests; IEEE double adds are the
 * same on the device and the host, so both give the same float.
 *
 * Expects GS_M_T, GS_M(name) and GS_M_DOUBLE defined; undefines them.
 */

/*
 * Add leaf value v to margin g of one row whose margins are m[0..ngb).
 * The group index is a run-time value, so instead of m[g] (which would
 * force the margins into local memory) every slot compares its index: with
 * ngb a constant the loop unrolls into ngb predicated adds on registers.
 * The add itself is the same single add as the CPU engine's.
 */
GS_HD void
GS_M(gs_margin_add) (GS_M_T *m, int ngb, int32_t g, GS_M_T v)
{
	if (ngb == 1)
	{
		m[0] += v;
		return;
	}
	GS_UNROLL
	for (int s = 0; s < ngb; s++)
		if (s == g)
			m[s] += v;
}

/*
 * Add the leaves of trees t0..t1-1 (in that order) to the margins of rpt
 * rows of one thread.
 *
 * nodes holds the trees' nodes, with tree t's first node at
 * nodes[trees[t].first - node_base] (shared memory with node_base = the
 * tile's first node, or the whole device array with node_base = 0); lo is
 * the kernel's leaf_lo (double margins only; indexed by trees[t].first
 * plus the node).  Row k of the thread (k < rpt) is row
 * min(row_first + k * row_step, row_last) of x, whose feature f is
 * x[row + f * stride]; rows past row_last are clamped onto it so that every
 * lane walks valid data (their results are never written).
 * m[k * ngb + g] is margin g of row k.
 *
 * Trees of depth <= GS_KLOCKSTEP_MAX_DEPTH are walked with the branch-free
 * gs_node_step_num (gs_node_step when kinds, the forest's split_kinds, says
 * it has categorical or zero-as-missing splits) for exactly depth steps (a
 * leaf absorbs), the rpt rows interleaved so their independent loads
 * overlap; the loop bound is the same for every lane of a warp, since they
 * all walk the same tree.  Deeper trees use the plain walk of
 * gs_tree_leaf_index.
 */
GS_HD void
GS_M(gs_walk_trees) (const GsNode *nodes, uint32_t node_base,
					 const GsTreeDesc *trees, uint32_t t0, uint32_t t1,
					 const float *x, size_t stride, size_t row_first, size_t row_step,
					 size_t row_last, int rpt, int ngb, GS_M_T *m, const uint32_t *cats,
					 uint32_t kinds, const float *lo)
{
	const float *xr[GS_KMAX_RPT];
	GsTreeDesc	next;

	GS_UNROLL
	for (int k = 0; k < rpt; k++)
	{
		size_t		r = row_first + (size_t) k * row_step;

		xr[k] = x + (r < row_last ? r : row_last);
	}
	if (t0 >= t1)
		return;
	next = trees[t0];
	for (uint32_t t = t0; t < t1; t++)
	{
		const GsTreeDesc d = next;
		const GsNode *tree = nodes + (d.first - node_base);
		uint32_t	idx[GS_KMAX_RPT];

		/* fetch the next descriptor while this tree is walked */
		next = trees[t + 1 < t1 ? t + 1 : t];

		if (d.depth <= GS_KLOCKSTEP_MAX_DEPTH)
		{
			GS_UNROLL
			for (int k = 0; k < rpt; k++)
				idx[k] = 0;
			/* kinds is the same for every thread: a uniform branch */
			if (kinds == 0)
				for (int32_t s = 0; s < d.depth; s++)
				{
					GS_UNROLL
					for (int k = 0; k < rpt; k++)
						idx[k] = gs_node_step_num(tree, idx[k], xr[k], stride);
				}
			else
				for (int32_t s = 0; s < d.depth; s++)
				{
					GS_UNROLL
					for (int k = 0; k < rpt; k++)
						idx[k] = gs_node_step(tree, idx[k], xr[k], stride, cats);
				}
		}
		else
		{
			GS_UNROLL
			for (int k = 0; k < rpt; k++)
				idx[k] = gs_tree_leaf_index(tree, xr[k], stride, cats);
		}
		GS_UNROLL
		for (int k = 0; k < rpt; k++)
		{
#if GS_M_DOUBLE
			GS_M(gs_margin_add) (m + k * ngb, ngb, d.group,
								 (double) tree[idx[k]].value + (double) lo[d.first + idx[k]]);
#else
			GS_M(gs_margin_add) (m + k * ngb, ngb, d.group, tree[idx[k]].value);
#endif
		}
	}
#if !GS_M_DOUBLE
	(void) lo;
#endif
}

/*
 * Phase "init": set the thread's rpt x ngb margins to the base margins
 * (slots past n_groups, which exist only to round ngb up, to 0).
 */
GS_HD void
GS_M(gs_phase_init) (const GsKernelArgs *a, int rpt, int ngb, GS_M_T *m)
{
	GS_UNROLL
	for (int k = 0; k < rpt; k++)
	{
		GS_UNROLL
		for (int g = 0; g < ngb; g++)
			m[k * ngb + g] = g < a->n_groups ? (GS_M_T) a->base_margin[g] : (GS_M_T) 0;
	}
}

/*
 * Phase "walk tile": thread tid adds the leaves of tile `tile`'s trees (in
 * tree order) to the margins m of its rpt rows.  The tile's nodes are in
 * smem (loaded by gs_phase_load_tile); the rows are read from the staged
 * copy after the tile region (staged = 1) or from the batch in global
 * memory (staged = 0).
 */
GS_HD void
GS_M(gs_phase_walk_tile) (const GsKernelArgs *a, uint32_t tile, size_t block, int tid,
						  int nthreads, int rpt, int ngb, int staged,
						  const GsVec4 *smem, GS_M_T *m)
{
	const GsTile t = a->tiles[tile];
	const GsNode *nodes = (const GsNode *) smem;

	if (staged)
	{
		const size_t chunk = (size_t) nthreads * (size_t) rpt;

		GS_M(gs_walk_trees) (nodes, t.first_node, a->trees, t.first_tree,
							 t.first_tree + t.n_trees,
							 (const float *) (smem + a->tile_vecs), chunk,
							 (size_t) tid, (size_t) nthreads, chunk - 1, rpt, ngb, m,
							 a->cats, a->split_kinds, a->leaf_lo);
	}
	else
		GS_M(gs_walk_trees) (nodes, t.first_node, a->trees, t.first_tree,
							 t.first_tree + t.n_trees, a->x, a->ld,
							 gs_block_row0(block, nthreads, rpt) + (size_t) tid,
							 (size_t) nthreads, a->n_rows - 1, rpt, ngb, m,
							 a->cats, a->split_kinds, a->leaf_lo);
}

/*
 * Phase "output": thread tid writes, for each of its rows inside the
 * batch, either its margins (raw_margins) or the transformed outputs
 * (gs_transform_row: the CPU engine's gs_transform_row, bit for bit).
 * Margins are rounded to float first (double margins: once, here).  With
 * ngb == 1 the group count is the constant 1, so the transform stays in
 * registers; otherwise the margins are copied into a small array for it.
 */
GS_HD void
GS_M(gs_phase_output) (const GsKernelArgs *a, size_t block, int tid, int nthreads,
					   int rpt, int ngb, const GS_M_T *m)
{
	const size_t row0 = gs_block_row0(block, nthreads, rpt) + (size_t) tid;
	const int	ng = ngb == 1 ? 1 : a->n_groups;

	GS_UNROLL
	for (int k = 0; k < rpt; k++)
	{
		size_t		r = row0 + (size_t) k * (size_t) nthreads;
		float		mm[GS_KMAX_GROUPS];
		float		o[GS_KMAX_GROUPS];
		int			no;

		if (r >= a->n_rows)
			continue;
		GS_UNROLL
		for (int g = 0; g < ngb; g++)
			mm[g] = (float) m[k * ngb + g];
		if (a->raw_margins)
		{
			for (int g = 0; g < ng; g++)
				a->out[r * (size_t) ng + (size_t) g] = mm[g];
			continue;
		}
		gs_transform_row((GsTransform) a->transform, a->transform_param, mm, ng, o);
		no = ngb == 1 ? 1 : a->n_outputs;
		for (int j = 0; j < no; j++)
			a->out[r * (size_t) no + (size_t) j] = o[j];
	}
}

/*
 * The whole of the rows kernel for one thread (it has no shared memory and
 * no barrier): one row per thread, every tree from the device node array.
 */
GS_HD void
GS_M(gs_rows_thread) (const GsKernelArgs *a, size_t block, int tid, int nthreads,
					  int ngb, GS_M_T *m)
{
	GS_M(gs_phase_init) (a, 1, ngb, m);
	GS_M(gs_walk_trees) ((const GsNode *) a->nodes, 0, a->trees, 0,
						 (uint32_t) a->n_trees, a->x, a->ld,
						 gs_block_row0(block, nthreads, 1) + (size_t) tid, 0,
						 a->n_rows - 1, 1, ngb, m, a->cats, a->split_kinds,
						 a->leaf_lo);
	GS_M(gs_phase_output) (a, block, tid, nthreads, 1, ngb, m);
}

#undef GS_M_T
#undef GS_M
#undef GS_M_DOUBLE

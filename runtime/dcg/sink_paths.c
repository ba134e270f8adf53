/* The call paths of a run, merged: see sink_paths.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sink_paths.h"
#include "sink_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct dcg_pnode *nodes;
static uint32_t nnodes;
static size_t capnodes;
static uint32_t *slots; /* (parent, name) -> node + 1 */
static size_t capslots;
static struct dcg_strtab names;
static struct dcg_buf tmp;

/* Each thread's stack of nodes. */
struct pthread {
	pid_t pid, tid;
	uint32_t proc;
	uint32_t *s;
	size_t n, cap;
};
static void pthread_free(void *v)
{
	free(((struct pthread *)v)->s);
}
static struct dcg_tmap threads = {.size = sizeof(struct pthread)};
static struct pthread *last_t; /* the thread of the last record */

static size_t slot_of(uint32_t parent, uint32_t name)
{
	uint64_t k = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15u;
	return (size_t)(k >> 20) & (capslots - 1);
}

static int grow(void)
{
	if (dcg_grow(&nodes, nnodes, &capnodes, sizeof *nodes) < 0)
		return -1;
	if (2 * ((size_t)nnodes + 1) <= capslots)
		return 0;
	size_t cap = capslots ? 2 * capslots : 512;
	uint32_t *v = calloc(cap, sizeof *v);
	if (!v)
		return -1;
	free(slots);
	slots = v;
	capslots = cap;
	for (uint32_t i = 0; i < nnodes; i++) {
		size_t j = slot_of(nodes[i].parent, nodes[i].name);
		while (slots[j])
			j = (j + 1) & (capslots - 1);
		slots[j] = i + 1;
	}
	return 0;
}

/* The node of name under parent, made if new. */
static uint32_t node_at(uint32_t parent, uint32_t name)
{
	if (name == (uint32_t)-1 || grow() < 0)
		return DCG_PNONE;
	size_t j = slot_of(parent, name);
	while (slots[j] &&
	       (nodes[slots[j] - 1].parent != parent || nodes[slots[j] - 1].name != name))
		j = (j + 1) & (capslots - 1);
	if (slots[j])
		return slots[j] - 1;
	uint32_t i = nnodes++;
	struct dcg_pnode *n = &nodes[i];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->name = name;
	n->child = n->next = n->last = DCG_PNONE;
	if (parent != DCG_PNONE) {
		struct dcg_pnode *p = &nodes[parent];
		n->depth = p->depth + 1;
		if (p->last == DCG_PNONE)
			p->child = i;
		else
			nodes[p->last].next = i;
		p->last = i;
	}
	slots[j] = i + 1;
	return i;
}

void dcg_paths_record(const struct dcg_sink_rec *r)
{
	const struct dcg_sink_thread *th = r->thread;
	struct pthread *t = last_t && last_t->tid == th->tid && last_t->pid == th->pid
	    ? last_t
	    : dcg_tmap_get(&threads, th->pid, th->tid, 1);

	if (!(last_t = t))
		return;
	t->pid = th->pid;
	t->tid = th->tid;
	if (r->kind == DCG_REC_RETURN) {
		if (!r->matched || !t->n)
			return;
		uint32_t i = t->s[--t->n];
		if (i == DCG_PNONE)
			return;
		nodes[i].total += r->dur_ns;
		nodes[i].self += r->self_ns;
		if (r->dur_ns > nodes[i].max)
			nodes[i].max = r->dur_ns;
		return;
	}
	if (!t->proc) { /* its process's node, + 1 */
		tmp.n = 0;
		dcg_buf_printf(&tmp, "%s(%d)", th->execname ? th->execname : "", (int)th->pid);
		uint32_t p = node_at(DCG_PNONE, dcg_strtab_id(&names, dcg_buf_str(&tmp)));
		t->proc = p == DCG_PNONE ? 0 : p + 1;
	}
	if (dcg_grow(&t->s, t->n, &t->cap, sizeof *t->s) < 0)
		return;
	uint32_t parent = t->n ? t->s[t->n - 1] : t->proc ? t->proc - 1 : DCG_PNONE;
	uint32_t i = DCG_PNONE;
	if (parent != DCG_PNONE || !t->n)
		i = node_at(parent, dcg_strtab_id(&names, dcg_display_name(&tmp, r)));
	t->s[t->n++] = i;
	if (i != DCG_PNONE)
		nodes[i].calls++;
}

uint32_t dcg_paths_count(void)
{
	return nnodes;
}

const struct dcg_pnode *dcg_paths_node(uint32_t i)
{
	return &nodes[i];
}

const char *dcg_paths_name(uint32_t name)
{
	return dcg_strtab_str(&names, name);
}

uint32_t dcg_paths_names(void)
{
	return (uint32_t)names.n;
}

struct dcg_pfunc *dcg_paths_functions(void)
{
	uint32_t nn = dcg_paths_names();
	struct dcg_pfunc *f = calloc(nn ? nn : 1, sizeof *f);
	uint32_t *on_path = calloc(nn ? nn : 1, sizeof *on_path);

	if (!f || !on_path) {
		free(f);
		free(on_path);
		return NULL;
	}
	for (uint32_t i = 0; i < nn; i++)
		f[i].name = i;
	/* depth first, counting each name on the path from the process */
	for (uint32_t root = 0; root < nnodes; root++) {
		if (nodes[root].parent != DCG_PNONE)
			continue;
		uint32_t i = nodes[root].child;
		while (i != DCG_PNONE) {
			struct dcg_pnode *n = &nodes[i];
			struct dcg_pfunc *fn = &f[n->name];
			fn->calls += n->calls;
			fn->self += n->self;
			if (!on_path[n->name])
				fn->total += n->total;
			if (n->max > fn->max)
				fn->max = n->max;
			if (n->child != DCG_PNONE) {
				on_path[n->name]++;
				i = n->child;
				continue;
			}
			/* up until a node with a next sibling */
			while (i != DCG_PNONE && nodes[i].next == DCG_PNONE) {
				i = nodes[i].parent;
				if (i == root)
					i = DCG_PNONE;
				else if (i != DCG_PNONE)
					on_path[nodes[i].name]--;
			}
			if (i != DCG_PNONE)
				i = nodes[i].next;
		}
	}
	free(on_path);
	return f;
}

void dcg_paths_free(void)
{
	free(nodes);
	nodes = NULL;
	nnodes = capnodes = 0;
	free(slots);
	slots = NULL;
	capslots = 0;
	dcg_strtab_free(&names);
	dcg_buf_free(&tmp);
	dcg_tmap_free(&threads, pthread_free);
	last_t = NULL;
}

/* The core's stack put right after lost events (dcg_place_stack, used
 * by the translate mechanism's flight recorder): the frames it has in
 * common with the real stack (the same slot and function) stay, the
 * others are closed by returns, the missing ones entered by calls, at
 * the depths the real stack gives. Over this program's own functions, so
 * that the symbol lookups are real. */
#include "dcg/dcg_internal.h"
#include "sym/symbols.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline, used)) static int fa(int x)
{
	return x + 1;
}
__attribute__((noinline, used)) static int fb(int x)
{
	return fa(x) * 3;
}
__attribute__((noinline, used)) static int fc(int x)
{
	return fb(x) ^ 5;
}
__attribute__((noinline, used)) static int fd(int x)
{
	return fc(x) - 7;
}

static uint64_t A(int (*f)(int))
{
	return (uint64_t)(uintptr_t)f;
}

static int read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static const uint64_t SP = 0x7ffc00100000ull;

/* A thread traced from fd's entry that has called fc, then fb. */
static struct dthread *thread_in_fb(void)
{
	struct dthread *d = calloc(1, sizeof *d);
	d->tid = d->pid = getpid();
	d->hold = NO_HOLD;
	d->rd = (struct dcg_reader){read_self, NULL, getpid()};
	struct dcg_event on = {.kind = DCG_EV_ON, .to = A(fd), .sp = SP, .ns = 1000};
	dcg_event(d, &on);
	struct dcg_event c1 = {
	    .kind = DCG_EV_CALL, .from = A(fd) + 4, .to = A(fc), .sp = SP - 0x40, .ns = 2000};
	dcg_event(d, &c1);
	struct dcg_event c2 = {
	    .kind = DCG_EV_CALL, .from = A(fc) + 4, .to = A(fb), .sp = SP - 0x80, .ns = 3000};
	dcg_event(d, &c2);
	return d;
}

/* The records from the 4th on (after fd, fc, fb's calls) as "+name@depth"
 * for calls and "-name@depth" for returns, and the stack. */
static void describe(const struct dthread *d, char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 3; i < d->nr; i++) {
		const struct dcg_rec *r = &d->r[i];
		const char *nm = r->name == A(fa) ? "fa"
		    : r->name == A(fb)		  ? "fb"
		    : r->name == A(fc)		  ? "fc"
		    : r->name == A(fd)		  ? "fd"
						  : "?";
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%c%s@%u ",
				      r->kind == DCG_CALL ? '+' : '-', nm, r->depth);
	}
	n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "| %zu frames", d->nf);
}

static void check(const char *name, const struct dcg_frame_at *g, size_t ng, const char *want)
{
	struct dthread *d = thread_in_fb();
	char have[512];

	dcg_place_stack(d, g, ng, 5000);
	describe(d, have, sizeof have);
	unit_result(name, !strcmp(have, want), have);
	free(d->f);
	free(d->r);
	free(d);
}

int main(void)
{
	/* the same frames: nothing changes */
	check("dcg place: the same stack stays",
	      (struct dcg_frame_at[]){{SP - 0x40, A(fc), 0, 0}, {SP - 0x80, A(fb), 0, 0}}, 2,
	      "| 3 frames");
	/* fb returned; fa entered from fc, in fb's slot */
	check("dcg place: a frame gone, another in its slot",
	      (struct dcg_frame_at[]){{SP - 0x40, A(fc), 0, 0}, {SP - 0x80, A(fa), 0, 0}}, 2,
	      "-fb@2 +fa@2 | 3 frames");
	/* deeper: fb still there, and two frames entered under it */
	check("dcg place: frames missing under the ones kept",
	      (struct dcg_frame_at[]){{SP - 0x40, A(fc), 0, 0},
				      {SP - 0x80, A(fb), 0, 0},
				      {SP - 0xc0, A(fa), 0, 0},
				      {SP - 0x100, A(fd), 0, 0}},
	      4, "+fa@3 +fd@4 | 5 frames");
	/* fb tail-called fa meanwhile: fb stays, fa is entered at its slot */
	check("dcg place: a tail call made meanwhile",
	      (struct dcg_frame_at[]){
		  {SP - 0x40, A(fc), 0, 0}, {SP - 0x80, A(fb), 0, 0}, {SP - 0x80, A(fa), 0, 1}},
	      3, "+fa@3 | 4 frames");
	/* back in the root: every callee closed, innermost first */
	check("dcg place: back in the root", NULL, 0, "-fb@2 -fc@1 | 1 frames");
	/* a signal handler's frame: its call has the signal */
	struct dthread *d = thread_in_fb();
	dcg_place_stack(d,
			(struct dcg_frame_at[]){{SP - 0x40, A(fc), 0, 0},
						{SP - 0x80, A(fb), 0, 0},
						{SP - 0x400, A(fa), 10, 0}},
			3, 5000);
	unit_result("dcg place: a handler's frame entered with its signal",
		    d->nr == 4 && d->r[3].kind == DCG_CALL && d->r[3].sig == 10 && d->nf == 4 &&
			d->f[3].sig == 10 && d->f[3].known && d->f[3].sp == SP - 0x400,
		    "");
	free(d->f);
	free(d->r);
	free(d);
	_stp_sym_cache_free();
	return unit_failures != 0;
}

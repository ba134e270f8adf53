/* The tree's two ways of writing a line (dcg/sink_tree.c): plain(), the
 * shortcut the flush takes for most records (runs of one name, lines
 * queued, fixed-size copies, the head kept per thread and microsecond),
 * and record(), the general one. The same varied stream of records, in
 * batches of several threads (short and long comms, negative tids, comms
 * too long for a head), depths past the short indentation, names of
 * every length up to past the short copy, in runs of one name (short,
 * and longer than the output's queue holds) given to plain() in pieces
 * of any size, times in one microsecond and far apart, goes
 * through each into a file; both files must be byte for byte the line a
 * printf-made reference says ("%6lu comm(tid):", depth spaces, the arrow,
 * the name). */
#include "dcg/sink_out.h"
#include "dcg/sink_run.h"
#include "unit.h"

#include <inttypes.h>
#include <unistd.h>

static uint64_t rnd_state = 777;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(rnd_state >> 33) % n;
}

struct one {
	int call, th;
	uint32_t depth;
	uint64_t ns;
	char name[160];
};

#define N 40000
static struct one recs[N];
static struct dcg_sink_thread ths[5];
static char comms[5][80];

static void make_stream(void)
{
	static const pid_t tids[5] = {4242, -17, 7, 123456789, 99};
	static const size_t comm_len[5] = {4, 15, 25, 63, 64}; /* 64: no head */
	uint64_t ns = 0;
	int same = 0; /* records left of a run of one name */

	for (int t = 0; t < 5; t++) {
		memset(comms[t], 'a' + t, comm_len[t]);
		comms[t][comm_len[t]] = '\0';
		ths[t] = (struct dcg_sink_thread){tids[t] > 0 ? tids[t] : 1, tids[t], comms[t]};
	}
	for (int i = 0; i < N; i++) {
		struct one *o = &recs[i];
		unsigned pick = rnd(100);
		ns += pick < 60 ? rnd(300) : pick < 95 ? rnd(5000) : (uint64_t)rnd(1u << 30) * 4096;
		o->ns = ns;
		o->call = (int)rnd(2);
		o->th = i / 3000 % 5; /* a batch of one thread, then another */
		o->depth = rnd(10) ? rnd(34) : rnd(300);
		if (same-- > 0 && i % 3000) { /* the run goes on, in the batch */
			memcpy(o->name, recs[i - 1].name, sizeof o->name);
			continue;
		}
		same = rnd(3) ? (int)rnd(4) : rnd(100) ? (int)rnd(40) : 2000;
		size_t nl = rnd(10) ? 1 + rnd(70) : 1 + rnd(150);
		for (size_t k = 0; k < nl; k++)
			o->name[k] = (char)('!' + rnd(90));
		o->name[nl] = '\0';
	}
}

/* What the tree writes for o: the head unless the comm is too long. */
static size_t reference(const struct one *o, char *buf)
{
	const struct dcg_sink_thread *th = &ths[o->th];
	int n = 0;

	if (strlen(th->execname) < 64)
		n = sprintf(buf, "%6" PRIu64 " %s(%d):", o->ns / 1000, th->execname, (int)th->tid);
	n += sprintf(buf + n, "%*s%s%s\n", (int)o->depth, "", o->call ? "->" : "<-", o->name);
	return (size_t)n;
}

/* The stream through the layer into path: plain() if asked (then as
 * records.c gives it: the thread, the batch, a flush), else record(). */
static int write_stream(const char *path, int use_plain)
{
	_stp_dcg_format(NULL, "tree");
	_stp_dcg_output(NULL, path);
	if (dcg_run_open() < 0)
		return -1;
	dcg_plain_fn *plain = dcg_run_plain();
	if (use_plain && !plain)
		return -1;
	for (int i = 0; i < N; i++) {
		const struct one *o = &recs[i];
		const struct dcg_sink_thread *th = &ths[o->th];
		if (!i || o->th != recs[i - 1].th) {
			if (i && use_plain)
				dcg_out_flush();
			dcg_run_thread(th);
		}
		if (use_plain) { /* a piece of the run of o's name */
			struct dcg_rec v[300];
			size_t k = 0, most = 1 + rnd(300);
			do
				v[k] = (struct dcg_rec){.kind = recs[i + k].call ? DCG_REC_CALL
										 : DCG_REC_RETURN,
							.depth = recs[i + k].depth,
							.ns = recs[i + k].ns};
			while (++k < most && i + k < N && recs[i + k].th == o->th &&
			       !strcmp(recs[i + k].name, o->name));
			plain(th, o->name, strlen(o->name), v, k);
			i += (int)k - 1;
			continue;
		}
		struct dcg_sink_rec r = {
		    .kind = o->call ? DCG_REC_CALL : DCG_REC_RETURN,
		    .thread = th,
		    .depth = o->depth,
		    .ns = o->ns,
		    .name = o->name,
		    .name_len = strlen(o->name),
		};
		dcg_run_record(&r);
	}
	if (use_plain)
		dcg_out_flush();
	dcg_run_finish();
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 65536 > cap && !(p = realloc(p, cap = 2 * cap + 65536)))
			break;
		n += got = fread(p + n, 1, cap - n, f);
	} while (got);
	fclose(f);
	*len = n;
	return p;
}

/* The first line where text differs from the reference, or 0 if none. */
static int first_difference(const char *text, size_t len, char *detail, size_t dlen)
{
	char want[512];
	size_t at = 0;

	for (int i = 0; i < N; i++) {
		size_t n = reference(&recs[i], want);
		if (at + n > len || memcmp(text + at, want, n)) {
			snprintf(detail, dlen, "record %d: want \"%s\"", i, unit_show(want, n));
			return i + 1;
		}
		at += n;
	}
	if (at != len)
		snprintf(detail, dlen, "%zu bytes more than the reference", len - at);
	return at != len ? N + 1 : 0;
}

int main(void)
{
	char dir[] = "/tmp/unit-dcg-tree.XXXXXX", pp[64], pr[64], detail[800] = "";
	size_t lp = 0, lr = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(pp, sizeof pp, "%s/plain", dir);
	snprintf(pr, sizeof pr, "%s/record", dir);
	make_stream();
	int ok = write_stream(pp, 1) == 0 && write_stream(pr, 0) == 0;
	char *tp = ok ? slurp(pp, &lp) : NULL, *tr = ok ? slurp(pr, &lr) : NULL;
	unit_result("dcg tree: both streams written", tp && tr, "");
	detail[0] = '\0';
	unit_result("dcg tree: plain() lines are the reference's",
		    tp && !first_difference(tp, lp, detail, sizeof detail), detail);
	detail[0] = '\0';
	unit_result("dcg tree: record() lines are the reference's",
		    tr && !first_difference(tr, lr, detail, sizeof detail), detail);
	free(tp);
	free(tr);
	unlink(pp);
	unlink(pr);
	rmdir(dir);
	return unit_failures != 0;
}

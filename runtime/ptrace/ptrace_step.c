/* Single-step and single-block mode for one thread (the dynamic call
 * graph's blockstep mechanism builds on this), and the self-test telling
 * whether PTRACE_SINGLEBLOCK really stops only at taken branches (the x86
 * BTF bit; many hypervisors ignore it and the CPU then traps after every
 * instruction, which is still correct, only slower). */
#include "ptrace_internal.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

int _stp_pt_step_mode(struct _stp_pt_thread *t, int mode, _stp_pt_step_fn fn, void *data)
{
	if (mode != _STP_PT_STEP_NONE && mode != _STP_PT_STEP_INSN && mode != _STP_PT_STEP_BLOCK)
		return -EINVAL;
	if (mode != _STP_PT_STEP_NONE && !fn)
		return -EINVAL;
	t->step_mode = mode;
	t->step_fn = fn;
	t->step_data = data;
	return 0;
}

/* A step trap of t (in step mode): report it. */
int _stp_pt_step_trap(struct _stp_pt_thread *t)
{
	struct _stp_pt_session *s = t->proc->s;

	if (!t->step_mode || !t->step_fn)
		return 0;
	t->probe_point = t->regs_valid ? t->regs.rip : 0;
	s->in_handler = 1;
	t->step_fn(t, t->step_data);
	s->in_handler = 0;
	return 0;
}

/* ---- signal handler entries ---- */

int _stp_pt_sigstep_always;

int _stp_pt_signal_step(struct _stp_pt_thread *t, _stp_pt_sigstep_fn fn, void *data)
{
	t->sigstep_fn = fn;
	t->sigstep_data = fn ? data : NULL;
	return 0;
}

/* Has t's process a handler for sig? (Default and ignored signals set up
 * no frame: stepping them would only cost a stop.) */
static int sig_caught(pid_t tid, int sig)
{
	char path[64], line[128];
	unsigned long long cgt = ~0ULL;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return 1; /* cannot tell: step, the trap is handled either way */
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SigCgt: %llx", &cgt) == 1)
			break;
	fclose(f);
	return (cgt >> (sig - 1)) & 1;
}

/* Resuming t with sig: step into the handler instead of continuing? */
int _stp_pt_sigstep_wanted(struct _stp_pt_thread *t, int sig)
{
	if (!t->sigstep_fn || t->step_mode || t->ool_active || sig <= 0 || sig > 64)
		return 0;
	return _stp_pt_sigstep_always || sig_caught(t->tid, sig);
}

/* A SIGTRAP stop of t after it was resumed stepping into sig's handler.
 * 1 when it was that step's (handled here), 0 when it is another trap. */
int _stp_pt_sigstep_stop(struct _stp_pt_thread *t, int sig)
{
	struct _stp_pt_session *s = t->proc->s;
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0)
		return 0;
	if (si.si_code == TRAP_TRACE || si.si_code == TRAP_BRKPT) {
		/* no frame was set up (no handler any more, or the signal was
		 * not delivered): the step ended after one instruction (or a
		 * system call: TRAP_BRKPT); the trap is ours, not the program's */
		_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: signal %d had no handler", (int)t->tid,
			 sig);
		return 1;
	}
	/* the kernel reports the frame set up as a ptrace_notify(SIGTRAP),
	 * si_code SIGTRAP, with the thread at the handler's first insn */
	if (si.si_code != SIGTRAP)
		return 0;
	if (_stp_pt_fetch_regs(t) < 0)
		return 1;
	_stp_dbg(STP_DBG_PTRACE, 1, "thread %d: signal %d handler at %#llx", (int)t->tid, sig,
		 t->regs.rip);
	if (s->detaching || !t->sigstep_fn || t->step_mode)
		return 1;
	t->probe_point = t->regs.rip;
	s->in_handler = 1;
	t->sigstep_fn(t, sig, t->sigstep_data);
	s->in_handler = 0;
	return 1;
}

/* 32 nops and 3 taken jumps, then an int3: 36 instructions, 3 branches. */
__asm__(".pushsection .text\n"
	".globl _stp_pt_btf_seq\n"
	".hidden _stp_pt_btf_seq\n"
	".type _stp_pt_btf_seq, @function\n"
	"_stp_pt_btf_seq:\n"
	".rept 8\n nop\n.endr\n jmp 1f\n1:\n"
	".rept 8\n nop\n.endr\n jmp 2f\n2:\n"
	".rept 8\n nop\n.endr\n jmp 3f\n3:\n"
	".rept 8\n nop\n.endr\n int3\n"
	".globl _stp_pt_btf_end\n"
	".hidden _stp_pt_btf_end\n"
	"_stp_pt_btf_end:\n"
	" ret\n"
	".popsection\n");
extern const char _stp_pt_btf_seq[] __attribute__((visibility("hidden")));
extern const char _stp_pt_btf_end[] __attribute__((visibility("hidden")));

/* A traced child for a self-test, stopped before it runs `then` (NULL:
 * nothing) and exits; its pid, or a negative errno. */
static pid_t self_test_child(void (*then)(void))
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		if (then)
			then();
		_exit(0);
	}
	if (waitpid(pid, &st, __WALL) < 0 || !WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		return -EIO;
	}
	return pid;
}

int _stp_pt_blockstep_honoured(void)
{
	struct user_regs_struct r;
	int st, stops = 0, rc = -EIO;
	pid_t pid = self_test_child(NULL);

	if (pid < 0)
		return pid;
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		goto out;
	r.rip = (uint64_t)(uintptr_t)_stp_pt_btf_seq;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0)
		goto out;
	while (stops < 200) {
		if (ptrace(PTRACE_SINGLEBLOCK, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) < 0 ||
		    !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
			goto out;
		stops++;
		if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
			goto out;
		if (r.rip == (uint64_t)(uintptr_t)_stp_pt_btf_end)
			break;
	}
	/* honoured: a stop after each of the 3 jumps and the int3 */
	rc = stops <= 8;
	_stp_dbg(STP_DBG_PTRACE, 1, "blockstep self-test: %d stops over 36 instructions: %s", stops,
		 rc ? "BTF honoured" : "every instruction traps");
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, __WALL);
	return rc;
}

/* A function for the hardware-breakpoint self-test to stop in. */
__asm__(".pushsection .text\n"
	".globl _stp_pt_hwbp_target\n"
	".hidden _stp_pt_hwbp_target\n"
	".type _stp_pt_hwbp_target, @function\n"
	"_stp_pt_hwbp_target:\n"
	" nop\n"
	" ret\n"
	".popsection\n");
extern void _stp_pt_hwbp_target(void) __attribute__((visibility("hidden")));

int _stp_pt_hwbp_honoured(void)
{
	struct user_regs_struct r;
	int st, rc = -EIO;
	pid_t pid = self_test_child(_stp_pt_hwbp_target);

	if (pid < 0)
		return pid;
	/* DR0 = the function, DR7 = local enable of DR0, break on execution */
	if (ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[0]),
		   (void *)(uintptr_t)_stp_pt_hwbp_target) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]), (void *)1L) < 0) {
		rc = 0; /* refused: not available */
		goto out;
	}
	if (ptrace(PTRACE_CONT, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) < 0)
		goto out;
	rc = WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && ptrace(PTRACE_GETREGS, pid, 0, &r) == 0 &&
	    r.rip == (uint64_t)(uintptr_t)_stp_pt_hwbp_target;
	_stp_dbg(STP_DBG_PTRACE, 1, "hardware breakpoint self-test: %s",
		 rc ? "fires" : "accepted, never fires");
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, __WALL);
	return rc;
}

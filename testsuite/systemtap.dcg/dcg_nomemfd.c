/* Runs a command in a sandbox without memfd_create (seccomp: EPERM), as
 * some container profiles are: the in-process engine cannot make its
 * shared memory there (systemtap.dcg/translate.exp).
 * usage: dcg_nomemfd CMD ARGS... */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof *f, f};

	if (argc < 2) {
		fprintf(stderr, "usage: %s CMD ARGS...\n", argv[0]);
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("dcg_nomemfd: seccomp");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("dcg_nomemfd: exec");
	return 127;
}

/* The agent's entry and exit stubs (runtime/xlate/layout.h, enum
 * xl_entry). Translated code jumps here with the program's rax and rcx in
 * the control block's slots and every other register the program's. The
 * stub switches to the agent stack, saves the rest (the layout staprun
 * reads at a stop inside the C body: enum xl_saved), calls xl_agent(why)
 * and jumps where it says with every register restored. Nothing here or
 * in the C body touches vector state (-mgeneral-regs-only). */
#include "../layout.h"

#define CTL(off) xl_ctl + (off)(%rip)

	.section .text.entry, "ax"

.macro XL_ENTRY name, why
	.globl \name
	.hidden \name
\name:
	mov %rsp, CTL(XL_CTL_S_RSP)
	lea xl_ctl + (XL_STACK_TOP - XL_CTL_OFF)(%rip), %rsp
	pushfq
	push %rdx
	push %rbx
	push %rsi
	push %rdi
	push %rbp
	push %r8
	push %r9
	push %r10
	push %r11
	push %r12
	push %r13
	push %r14
	push %r15
	push $0 /* 16-byte alignment at the call */
	cld
	mov $\why, %edi
	call xl_agent
	jmp xl_exit
.endm

	XL_ENTRY xl_entry_miss_ret, XL_E_MISS_RET
	XL_ENTRY xl_entry_miss_jmp, XL_E_MISS_JMP
	XL_ENTRY xl_entry_miss_direct, XL_E_MISS_DIRECT
	XL_ENTRY xl_entry_full, XL_E_FULL
	XL_ENTRY xl_entry_sigreturn, XL_E_SIGRETURN
	XL_ENTRY xl_entry_fallback, XL_E_FALLBACK
	XL_ENTRY xl_entry_rseq, XL_E_RSEQ
	XL_ENTRY xl_entry_memsys, XL_E_MEMSYS

	.globl xl_exit
	.hidden xl_exit
xl_exit:
	mov %rax, CTL(XL_CTL_DEST)
	pop %r15 /* the pad */
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rbp
	pop %rdi
	pop %rsi
	pop %rbx
	pop %rdx
	popfq
	mov CTL(XL_CTL_S_RSP), %rsp
	mov CTL(XL_CTL_S_RAX), %rax
	mov CTL(XL_CTL_S_RCX), %rcx
	jmp *CTL(XL_CTL_DEST)
	/* rt_sigreturn, the frame fixed by the C body: rax is 15 again (the
	 * program's, restored), every other register comes from the frame. */
	.globl xl_do_sigreturn
	.hidden xl_do_sigreturn
xl_do_sigreturn:
	syscall
	/* The restorer of the SIGTRAP handler (rt_sigreturn). */
	.globl xl_restorer
	.hidden xl_restorer
xl_restorer:
	mov $15, %eax
	syscall
	.globl xl_entry_end
	.hidden xl_entry_end
xl_entry_end:

	/* The doorbell: a ptrace stop that staprun recognises by its address.
	 * Called from the C body (the whole native state is saved). */
	.text
	.globl xl_doorbell
	.hidden xl_doorbell
xl_doorbell:
	int3
	.globl xl_doorbell_after
	.hidden xl_doorbell_after
xl_doorbell_after:
	ret

/* The system-wide watcher (syswide.h). With the process-events connector
 * (NETLINK_CONNECTOR, CN_IDX_PROC; root only) each exec is an event read
 * from a socket: the process is looked at a few milliseconds after it
 * exec'd, already running, so its probes that fire in that window are
 * missed. Without it (not root, or no connector in this namespace), /proc
 * is scanned every _STP_SW_SCAN_MS: a process is looked at when it is new
 * or its executable changed since the last scan, so up to that long after
 * its exec (a process that execs and exits between two scans is never
 * seen). A lost connector message (the socket's buffer overran) is made up
 * for by one scan of every process.
 *
 * A process that maps a probed library later, by dlopen (no exec), is
 * noticed as root by fanotify: an open of one of those files is an event
 * naming the opener, read a few milliseconds after the open while the
 * opener goes on (dlopen maps the file after opening it). Without it, the
 * processes not settled yet (not attached, not refused) are looked at
 * again at each scan, so up to _STP_SW_SCAN_MS after they map it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "syswide.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int on, cn_fd = -1, fan_fd = -1, ep_fd = -1;
static int rescan; /* the scan looks again at processes not settled */
static int64_t next_scan = INT64_MAX;
static _stp_sw_fn notify;
static void *notify_data;

/* The /proc scan's memory: each process, the file it ran, and whether
 * the client settled it (attached or refused) while it ran that file. */
struct seen {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	int settled;
};
static struct seen *seen;
static size_t nseen;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const struct seen *find_seen(const struct seen *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return &v[i];
	return NULL;
}

static int exe_id(pid_t pid, struct stat *st)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	return stat(path, st); /* < 0: a kernel thread, gone, or not ours to see */
}

/* Tell the client of pid and keep its answer with what pid runs now. */
static void note(pid_t pid, enum _stp_sw_why why)
{
	struct stat st;
	int settled = notify(pid, why, notify_data);

	if (!rescan || exe_id(pid, &st) < 0)
		return;
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].pid == pid) {
			seen[i] = (struct seen){pid, st.st_dev, st.st_ino, settled};
			return;
		}
	struct seen *v = realloc(seen, (nseen + 1) * sizeof *v);
	if (v) {
		seen = v;
		seen[nseen++] = (struct seen){pid, st.st_dev, st.st_ino, settled};
	}
}

/* Every process now; with all, each is notified, else only those new or
 * running another file since the last scan (and with rescan, those not
 * settled yet). */
static void scan(int all)
{
	DIR *d = opendir("/proc");
	struct seen *now = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t pid = (pid_t)atoi(de->d_name);
		if (exe_id(pid, &st) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct seen *v = realloc(now, cap * sizeof *v);
			if (!v)
				break;
			now = v;
		}
		const struct seen *old = find_seen(seen, nseen, pid);
		int changed = all || !old || old->dev != st.st_dev || old->ino != st.st_ino;
		now[n] = (struct seen){pid, st.st_dev, st.st_ino, changed ? 0 : old->settled};
		if (changed || (rescan && !now[n].settled))
			now[n].settled =
			    notify(pid, changed ? _STP_SW_NEW : _STP_SW_AGAIN, notify_data);
		n++;
	}
	closedir(d);
	free(seen);
	seen = now;
	nseen = n;
}

/* fanotify on the files (root only): -1 when it cannot be had. */
static int open_fanotify(const char *const *files, int nfiles)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (int i = 0; i < nfiles; i++)
		if (fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, files[i]) < 0 &&
		    errno != ENOENT) {
			close(fd);
			return -1;
		}
	return fd;
}

static int open_connector(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	struct __attribute__((packed)) {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} msg;
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);

	if (fd < 0)
		return -1;
	memset(&msg, 0, sizeof msg);
	msg.nl.nlmsg_len = sizeof msg;
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = (uint32_t)getpid();
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof msg.op;
	msg.op = PROC_CN_MCAST_LISTEN;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || send(fd, &msg, sizeof msg, 0) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int _stp_sw_start(_stp_sw_fn fn, void *data, const char *const *files, int nfiles)
{
	int scanning = getenv("STAP_SYSWIDE_SCAN") != NULL;

	notify = fn;
	notify_data = data;
	on = 1;
	/* listening first: an exec or open while the first scan runs is not
	 * lost */
	cn_fd = scanning ? -1 : open_connector();
	fan_fd = scanning || !nfiles ? -1 : open_fanotify(files, nfiles);
	rescan = nfiles && fan_fd < 0;
	if (cn_fd >= 0 && fan_fd >= 0 && (ep_fd = epoll_create1(EPOLL_CLOEXEC)) >= 0) {
		struct epoll_event ev = {.events = EPOLLIN};
		if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, cn_fd, &ev) < 0 ||
		    epoll_ctl(ep_fd, EPOLL_CTL_ADD, fan_fd, &ev) < 0) {
			close(ep_fd);
			ep_fd = -1;
		}
	}
	if (cn_fd >= 0 && fan_fd >= 0 && ep_fd < 0) { /* one fd to poll: the connector's */
		close(fan_fd);
		fan_fd = -1;
		rescan = 1;
	}
	scan(1);
	next_scan = cn_fd >= 0 && !rescan ? INT64_MAX : now_ns() + _STP_SW_SCAN_MS * 1000000LL;
	return (cn_fd >= 0 ? _STP_SW_CONNECTOR : 0) | (fan_fd >= 0 ? _STP_SW_FANOTIFY : 0);
}

int _stp_sw_fd(void)
{
	return ep_fd >= 0 ? ep_fd : cn_fd >= 0 ? cn_fd : fan_fd;
}

int64_t _stp_sw_due(void)
{
	return next_scan;
}

/* The opens of the watched files: each opener is looked at (the event's
 * fd, the file, is not needed). */
static void read_opens(void)
{
	char buf[4096] __attribute__((aligned(8)));
	ssize_t len;

	while ((len = read(fan_fd, buf, sizeof buf)) != 0) {
		if (len < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN: all read */
		}
		for (struct fanotify_event_metadata *m = (struct fanotify_event_metadata *)buf;
		     FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (m->fd >= 0)
				close(m->fd);
			if (m->mask & FAN_Q_OVERFLOW)
				scan(1); /* events were lost */
			else if (m->pid > 0)
				note((pid_t)m->pid, _STP_SW_OPENED);
		}
	}
}

static void read_events(void)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t len;

	while ((len = recv(cn_fd, buf, sizeof buf, 0)) != 0) {
		if (len < 0) {
			if (errno == ENOBUFS)
				scan(1); /* events were lost */
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			return; /* EAGAIN: all read */
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)len);
		     nh = NLMSG_NEXT(nh, len)) {
			const struct cn_msg *cn = NLMSG_DATA(nh);
			struct proc_event ev;
			if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP ||
			    cn->id.idx != CN_IDX_PROC)
				continue;
			/* the event sits 4-byte aligned after the cn_msg header */
			memset(&ev, 0, sizeof ev);
			memcpy(&ev, cn->data, cn->len < sizeof ev ? cn->len : sizeof ev);
			if (ev.what == PROC_EVENT_EXEC)
				note(ev.event_data.exec.process_pid, _STP_SW_NEW);
		}
	}
}

void _stp_sw_poll(int64_t now)
{
	if (!on)
		return;
	if (cn_fd >= 0)
		read_events();
	if (fan_fd >= 0)
		read_opens();
	if (now >= next_scan) {
		scan(0);
		next_scan = now_ns() + _STP_SW_SCAN_MS * 1000000LL;
	}
}

void _stp_sw_stop(void)
{
	if (cn_fd >= 0)
		close(cn_fd);
	if (fan_fd >= 0)
		close(fan_fd);
	if (ep_fd >= 0)
		close(ep_fd);
	cn_fd = fan_fd = ep_fd = -1;
	on = rescan = 0;
	next_scan = INT64_MAX;
	free(seen);
	seen = NULL;
	nseen = 0;
}

int _stp_sw_active(void)
{
	return on;
}

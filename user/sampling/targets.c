// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* targets.c: the target processes of a run, their registration and their CPU time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include "util/log.h"
#include "sampling/targets.h"

/* A target whose CPU time does not count from 0: found running by targets__add_tree(), or
 * read by targets__snapshot(). */
struct target_proc {
	uint32_t tgid;
	int64_t start_ns; /* CPU time when it became a target */
	int64_t end_ns;	  /* at the last snapshot; -1: none yet */
	UT_hash_handle hh;
};

struct targets {
	struct loader *loader;
	struct target_proc *procs;
	int64_t exited_ns;     /* CPU time of the targets that exited, during the run */
	int64_t next_sweep_ns; /* CLOCK_MONOTONIC of targets__alive()'s next sweep() */
	pid_t self;
};

/* What targets.c reads of /proc/PID/stat (proc(5)). */
struct proc_stat {
	char state;	/* field 3: R, S, D, Z (zombie), X (dead)... */
	pid_t ppid;	/* field 4 */
	int64_t cpu_ns; /* fields 14 + 15, utime + stime of all its threads */
	long threads;	/* field 20 */
};

/* Reads /proc/PID/stat into st. 0, or -1 when the process is gone. */
static int proc_stat_read(pid_t pid, struct proc_stat *st)
{
	unsigned long long utime, stime;
	char path[64], buf[1024], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
			 "%*d %*d %*d %*d %ld",
			 &st->state, &st->ppid, &utime, &stime, &st->threads) != 5)
		return -1;
	st->cpu_ns = (int64_t)(utime + stime) * (1000000000ll / sysconf(_SC_CLK_TCK));
	return 0;
}

int64_t proc_cpu_ns(pid_t pid, pid_t *ppid)
{
	struct proc_stat st;

	if (proc_stat_read(pid, &st))
		return -1;
	if (ppid)
		*ppid = st.ppid;
	return st.cpu_ns;
}

struct targets *targets__new(struct loader *l)
{
	struct targets *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->loader = l;
	t->self = getpid();
	return t;
}

void targets__free(struct targets *t)
{
	struct target_proc *p, *tmp;

	if (!t)
		return;
	HASH_ITER(hh, t->procs, p, tmp) {
		HASH_DEL(t->procs, p);
		free(p);
	}
	free(t);
}

static struct target_proc *find(const struct targets *t, uint32_t tgid)
{
	struct target_proc *p;

	HASH_FIND(hh, t->procs, &tgid, sizeof(tgid), p);
	return p;
}

static struct target_proc *insert(struct targets *t, uint32_t tgid, int64_t start_ns)
{
	struct target_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->tgid = tgid;
	p->start_ns = start_ns;
	p->end_ns = -1;
	HASH_ADD(hh, t->procs, tgid, sizeof(p->tgid), p);
	return p;
}

/* Whether the process of pidfd has exited (its last thread: a zombie counts as exited). */
static bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/*
 * Makes the running process pid a target with state. Returns 1, 0 when it is gone or a target
 * of this run already, or a negative errno.
 */
static int add_one(struct targets *t, pid_t pid, uint32_t state)
{
	struct target_proc *p;
	int64_t cpu;
	int pidfd, err;

	if (pid == t->self || find(t, pid))
		return 0;
	/* A pidfd tells whether the process exited (even as a zombie, which kill() cannot)
	 * without mistaking a new process that reused the PID for it. */
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 && errno == ESRCH)
		return 0;
	cpu = proc_cpu_ns(pid, NULL);
	if (cpu < 0) {
		err = 0; /* gone */
		goto out;
	}
	p = insert(t, pid, cpu);
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	err = loader__add_target(t->loader, pid, state);
	if (err) {
		HASH_DEL(t->procs, p);
		free(p);
		goto out;
	}
	/*
	 * Exited before it became a target: BPF saw its exit as another process's, and the
	 * entry would stay (bpfprof would wait for it to the end of -d). One that exited after
	 * is gone already, and its exit record counts its CPU time from start_ns.
	 */
	if (pidfd >= 0 && pidfd_exited(pidfd)) {
		loader__remove_target(t->loader, pid);
		err = 0;
		goto out;
	}
	err = 1;
out:
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

/* One pass over /proc: the processes whose parent is one of ours become targets too.
 * Returns how many did. */
static int add_children(struct targets *t, uint32_t state, int *failed)
{
	struct dirent *de;
	int added = 0, n;
	pid_t pid, ppid;
	char *end;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir) {
		pr_warn("read /proc for the target's child processes: %s", strerror(errno));
		return 0;
	}
	while ((de = readdir(dir))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || find(t, pid))
			continue;
		if (proc_cpu_ns(pid, &ppid) < 0 || !find(t, ppid))
			continue;
		n = add_one(t, pid, state);
		if (n < 0 && !(*failed)++)
			pr_warn("profile child process %d of a target: %s", pid, strerror(-n));
		else if (n > 0)
			added++;
	}
	closedir(dir);
	return added;
}

int targets__add_tree(struct targets *t, pid_t pid, uint32_t state)
{
	int n, added, failed = 0;

	n = add_one(t, pid, state);
	if (n <= 0 || !(state & TARGET_F_FOLLOW_FORK))
		return n;
	/* Until a pass finds none: a child forked by a process after /proc was read for it
	 * but before it was a target shows up in the next pass. */
	while ((added = add_children(t, state, &failed)) > 0)
		n += added;
	if (failed)
		pr_warn("%d child processes of PID %d are not profiled", failed, pid);
	return n;
}

void targets__exit(struct targets *t, uint32_t tgid, uint64_t cpu_ns)
{
	struct target_proc *p = find(t, tgid);
	int64_t start = 0;

	if (p) {
		start = p->start_ns;
		HASH_DEL(t->procs, p);
		free(p);
	}
	if ((int64_t)cpu_ns > start)
		t->exited_ns += (int64_t)cpu_ns - start;
}

/* Targets read per pass over target_tgids at most: the walk restarts when a target exits
 * under it. */
#define WALK_MAX	  65536
/* Targets removed per sweep at most; the next sweep takes the rest. */
#define SWEEP_MAX	  64
/* Time between two sweeps, ns. */
#define SWEEP_INTERVAL_NS 1000000000ll

/*
 * A target whose process has exited (gone, or a zombie without live threads: a zombie leader
 * whose other threads run is alive) but that is still in target_tgids missed its exit record:
 * BPF's exit hook (sched_process_exit) had run before it became a target, and the process was
 * not a zombie yet when add_one() looked (the rest of do_exit(), closing its files, comes
 * between; a socket's SO_LINGER keeps it there for seconds). Removes such targets; their
 * CPU time counts when /proc still has it. Returns whether some target is left.
 */
static bool sweep(struct targets *t)
{
	struct {
		uint32_t tgid;
		int64_t cpu_ns;
	} gone[SWEEP_MAX];
	uint32_t tgid, next;
	const uint32_t *prev = NULL;
	struct proc_stat st;
	bool alive = false;
	int i, n = 0;

	for (i = 0; i < WALK_MAX && !loader__next_target(t->loader, prev, &next); i++) {
		tgid = next;
		prev = &tgid;
		if (proc_stat_read(tgid, &st)) {
			st.cpu_ns = 0;
		} else if ((st.state != 'Z' && st.state != 'X') || st.threads > 1) {
			alive = true;
			continue;
		}
		if (n < SWEEP_MAX)
			gone[n++] = (typeof(gone[0])){ tgid, st.cpu_ns };
		else
			alive = true;
	}
	for (i = 0; i < n; i++) {
		/* -ENOENT: its exit record came after all, between the walk and now. */
		if (loader__remove_target(t->loader, gone[i].tgid))
			continue;
		pr_debug("target process %u exited without an exit record", gone[i].tgid);
		targets__exit(t, gone[i].tgid, gone[i].cpu_ns);
	}
	return alive;
}

bool targets__alive(struct targets *t)
{
	struct timespec ts;
	int64_t now;
	uint32_t tgid;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ll + ts.tv_nsec;
	if (now >= t->next_sweep_ns) {
		t->next_sweep_ns = now + SWEEP_INTERVAL_NS;
		return sweep(t);
	}
	return loader__next_target(t->loader, NULL, &tgid) == 0;
}

void targets__snapshot(struct targets *t)
{
	uint32_t tgid, next;
	const uint32_t *prev = NULL;
	struct target_proc *p;
	int64_t cpu;
	int i;

	for (i = 0; i < WALK_MAX && !loader__next_target(t->loader, prev, &next); i++) {
		tgid = next;
		prev = &tgid;
		cpu = proc_cpu_ns(tgid, NULL);
		if (cpu < 0)
			continue;
		p = find(t, tgid);
		if (!p)
			p = insert(t, tgid, 0);
		if (p)
			p->end_ns = cpu;
	}
}

int64_t targets__cpu_ns(const struct targets *t)
{
	int64_t total = t->exited_ns;
	const struct target_proc *p;

	for (p = t->procs; p; p = p->hh.next) {
		if (p->end_ns > p->start_ns)
			total += p->end_ns - p->start_ns;
	}
	return total;
}

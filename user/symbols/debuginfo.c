// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* debuginfo.c: inline frames and source lines from DWARF (libdw), debug files from debuginfod. */
#include <dwarf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include "symbols/debuginfo.h"
#include "util/log.h"
#include "symbols/symbolize.h"
#include "util/util.h"

#define MAX_BUILD_ID		   64
/* Progress lines during one fetch: at most one per this many ns. */
#define PROGRESS_INTERVAL_NS	   5000000000ull
/* libdebuginfod gives up on a server sending less than 100 KB in DEBUGINFOD_TIMEOUT s (its
 * default, elfutils 0.188: debuginfod-client.c). */
#define DEBUGINFOD_DEFAULT_TIMEOUT "90"

/* One frame as cached: the name is chosen at each lookup (--no-demangle may change). */
struct dbg_frame {
	const char *raw;       /* DWARF name, in the Dwarf's string data; NULL: none */
	const char *demangled; /* in file_dbg->names, or NULL when raw is not mangled */
	const char *file;      /* in the Dwarf's line tables, or NULL */
	uint32_t line;
	bool from_symtab; /* the real function, named by the symbol table at addr */
};

/* The frames of one address, innermost first; cnt 0: no DWARF covers it. */
struct dbg_addr {
	uint64_t addr; /* hash key */
	uint32_t cnt;
	struct dbg_frame *frames;
	UT_hash_handle hh;
};

/* A demangled DWARF name, by the address of its raw string (one per distinct DIE name). */
struct dbg_name {
	const char *raw; /* hash key (the pointer) */
	char *demangled; /* malloc'd, NULL when raw is not a mangled name */
	UT_hash_handle hh;
};

/* A CU's address range, for files whose .debug_aranges does not cover it. */
struct cu_range {
	uint64_t lo, hi;
	Dwarf_Off die_off; /* of the CU DIE */
};

/* The DWARF state of one ELF file: elf_entry->dbg. */
struct file_dbg {
	bool requested;		 /* debuginfo__request() saw this file */
	bool symtab_fresh;	 /* the symtab is known to include the fetched debug file */
	unsigned int symtab_gen; /* fetch_gen at the last debuginfo__symtab_stale() */
	bool opened;		 /* a DWARF source was looked for */
	unsigned int gen;	 /* fetch_gen when it was */
	Dwarf *dw;		 /* of the file itself or of dbg_elf; NULL: none */
	Elf *dbg_elf;		 /* the separate debug file, or NULL */
	int dbg_fd;
	Dwarf *alt_dw; /* dw's dwz alt file (dwarf_setalt()), or NULL */
	Elf *alt_elf;
	int alt_fd;
	struct cu_range *cus; /* sorted by lo; built at the first address aranges miss */
	size_t cus_cnt;
	bool cus_built;
	struct dbg_addr *addrs;
	struct dbg_name *names;
};

/* --- debuginfod fetches: one background thread, a registry of build-ids ------------------- */

enum fetch_state {
	FETCH_QUEUED,
	FETCH_RUNNING,
	FETCH_DONE,
	FETCH_FAILED,
};

struct fetch {
	uint8_t id[MAX_BUILD_ID]; /* hash key: id_sz bytes */
	size_t id_sz;
	char id_hex[2 * MAX_BUILD_ID + 1];
	char *file; /* the ELF file's path, for messages */
	char *path; /* the debug file in the client cache, when FETCH_DONE */
	enum fetch_state state;
	uint64_t start_ns; /* CLOCK_MONOTONIC: the fetch began */
	uint64_t last_progress_ns;
	struct fetch *next; /* queue */
	UT_hash_handle hh;
};

/* Everything below is under fetcher.lock, but for the thread's own client. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC: queue changes, fetch ends, stop */
	bool cond_ready;
	pthread_t thread;
	bool started;
	bool stop;
	struct fetch *all; /* every build-id requested */
	struct fetch *head, *tail;
	unsigned int pending;	   /* queued or running */
	uint64_t wait_deadline_ns; /* debuginfo__wait() waits until then; 0: nobody waits */
	bool wait_over;		   /* a wait ran out or was skipped: later ones only poll */
} fetcher = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Bumped at each finished fetch: files without DWARF look again (read without the lock). */
static unsigned int fetch_gen;

static int cond_init(void)
{
	pthread_condattr_t attr;
	int err;

	if (fetcher.cond_ready)
		return 0;
	err = pthread_condattr_init(&attr);
	if (err)
		return -err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&fetcher.cond, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		return -err;
	fetcher.cond_ready = true;
	return 0;
}

/*
 * libdebuginfod's progress callback, after each second of waiting (curl_multi_wait) or any
 * transfer: a line every PROGRESS_INTERVAL_NS; non-zero cancels. Until a server sends the first
 * bytes, libdebuginfod passes its count of calls as got (elfutils 0.188): only once
 * debuginfod_get_url() names the server answering are got and total bytes (total 0: unknown).
 */
static int fetch_progress(debuginfod_client *client, long got, long total)
{
	struct fetch *f = debuginfod_get_user_data(client);
	const char *url = debuginfod_get_url(client), *env;
	uint64_t now = now_ns(), deadline;
	char what[96], wait[96];
	bool stop;

	pthread_mutex_lock(&fetcher.lock);
	stop = fetcher.stop;
	deadline = fetcher.wait_deadline_ns;
	pthread_mutex_unlock(&fetcher.lock);
	if (stop)
		return 1;
	if (!f || now - f->last_progress_ns < PROGRESS_INTERVAL_NS)
		return 0;
	f->last_progress_ns = now;
	if (deadline)
		snprintf(wait, sizeof(wait), "; bpfprof waits %.0f s more, Ctrl-C skips the wait",
			 deadline > now ? (deadline - now) / 1e9 : 0.0);
	else
		wait[0] = '\0';
	if (!url) {
		env = getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);
		pr_info("debuginfod: no answer from %s after %.0f s for %s (build-id %s); "
			"libdebuginfod gives up after %s s without 100 KB (DEBUGINFOD_TIMEOUT)%s",
			getenv(DEBUGINFOD_URLS_ENV_VAR) ?: "", (now - f->start_ns) / 1e9, f->file,
			f->id_hex, env && *env ? env : DEBUGINFOD_DEFAULT_TIMEOUT, wait);
		return 0;
	}
	if (total > 0)
		snprintf(what, sizeof(what), "%ld of %ld bytes", got, total);
	else
		snprintf(what, sizeof(what), "%ld bytes", got);
	pr_info("debuginfod: fetching debug info of %s (build-id %s): %s after %.0f s%s", f->file,
		f->id_hex, what, (now - f->start_ns) / 1e9, wait);
	return 0;
}

static void *fetch_thread(void *arg)
{
	debuginfod_client *client = NULL;
	struct fetch *f;
	char *path;
	struct stat st;
	int fd;

	pthread_mutex_lock(&fetcher.lock);
	for (;;) {
		while (!fetcher.stop && !fetcher.head)
			pthread_cond_wait(&fetcher.cond, &fetcher.lock);
		if (fetcher.stop)
			break;
		f = fetcher.head;
		fetcher.head = f->next;
		if (!fetcher.head)
			fetcher.tail = NULL;
		f->state = FETCH_RUNNING;
		pthread_mutex_unlock(&fetcher.lock);

		/* f stays valid: only debuginfo__shutdown() frees, after joining this thread. */
		if (!client) {
			client = debuginfod_begin();
			if (client)
				debuginfod_set_progressfn(client, fetch_progress);
		}
		path = NULL;
		pr_info("fetching debug info of %s (build-id %s) from debuginfod", f->file,
			f->id_hex);
		f->start_ns = f->last_progress_ns = now_ns();
		if (client) {
			debuginfod_set_user_data(client, f);
			fd = debuginfod_find_debuginfo(client, f->id, f->id_sz, &path);
		} else {
			fd = -ENOMEM;
		}
		if (fd >= 0) {
			if (!fstat(fd, &st))
				pr_info("fetched debug info of %s (build-id %s): %lld bytes, %s",
					f->file, f->id_hex, (long long)st.st_size, path);
			close(fd);
		} else {
			pr_info("fetch debug info of %s (build-id %s) from debuginfod: %s", f->file,
				f->id_hex, strerror(-fd));
		}

		pthread_mutex_lock(&fetcher.lock);
		if (fd >= 0 && path) {
			f->path = path;
			f->state = FETCH_DONE;
		} else {
			free(path);
			f->state = FETCH_FAILED;
		}
		fetcher.pending--;
		__atomic_add_fetch(&fetch_gen, 1, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&fetcher.cond);
	}
	pthread_mutex_unlock(&fetcher.lock);
	if (client)
		debuginfod_end(client);
	return NULL;
}

/* Under fetcher.lock. The thread gets no signals: they are the main thread's business. */
static int fetcher_start(void)
{
	sigset_t all, old;
	int err;

	if (fetcher.started)
		return 0;
	err = cond_init();
	if (err)
		return err;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&fetcher.thread, NULL, fetch_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	fetcher.started = true;
	return 0;
}

/* Queues id once per build-id; the file path is for messages only. */
static int fetch_queue(const uint8_t *id, size_t id_sz, const char *file)
{
	struct fetch *f;
	int err = 0;

	pthread_mutex_lock(&fetcher.lock);
	HASH_FIND(hh, fetcher.all, id, id_sz, f);
	if (f)
		goto out;
	err = fetcher_start();
	if (err)
		goto out;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->file = strdup(file))) {
		free(f);
		err = -ENOMEM;
		goto out;
	}
	memcpy(f->id, id, id_sz);
	f->id_sz = id_sz;
	hex_encode(f->id_hex, id, id_sz);
	f->state = FETCH_QUEUED;
	HASH_ADD(hh, fetcher.all, id, id_sz, f);
	if (fetcher.tail)
		fetcher.tail->next = f;
	else
		fetcher.head = f;
	fetcher.tail = f;
	fetcher.pending++;
	pthread_cond_broadcast(&fetcher.cond);
out:
	pthread_mutex_unlock(&fetcher.lock);
	return err;
}

/* A fetch of this build-id finished with a file. */
static bool fetch_done(const uint8_t *id, size_t id_sz)
{
	struct fetch *f;
	bool done;

	pthread_mutex_lock(&fetcher.lock);
	HASH_FIND(hh, fetcher.all, id, id_sz, f);
	done = f && f->state == FETCH_DONE;
	pthread_mutex_unlock(&fetcher.lock);
	return done;
}

int debuginfo__fetched_path(const uint8_t *id, size_t id_sz, char *buf, size_t buf_sz)
{
	struct fetch *f;
	int err = -ENOENT;

	if (!id_sz || id_sz > MAX_BUILD_ID)
		return -ENOENT;
	pthread_mutex_lock(&fetcher.lock);
	HASH_FIND(hh, fetcher.all, id, id_sz, f);
	if (f && f->state == FETCH_DONE) {
		if (strlen(f->path) < buf_sz) {
			strcpy(buf, f->path);
			err = 0;
		} else {
			err = -ENAMETOOLONG;
		}
	}
	pthread_mutex_unlock(&fetcher.lock);
	return err;
}

/* A SIGINT or SIGTERM waits for the main thread (blocked, read from its signalfd). */
static bool stop_signal_pending(void)
{
	sigset_t set;

	return !sigpending(&set) &&
	       (sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1);
}

unsigned int debuginfo__wait(uint64_t timeout_ns)
{
	uint64_t deadline = now_ns() + timeout_ns, slice;
	struct timespec ts;
	unsigned int pending;
	bool skipped = false;

	pthread_mutex_lock(&fetcher.lock);
	if (fetcher.wait_over || !fetcher.started)
		timeout_ns = 0;
	pending = fetcher.pending;
	if (pending && timeout_ns)
		fetcher.wait_deadline_ns = deadline;
	pthread_mutex_unlock(&fetcher.lock);
	if (pending && timeout_ns)
		pr_info("debuginfod: waiting up to %.0f s for %u debug file%s (Ctrl-C skips the "
			"wait)",
			timeout_ns / 1e9, pending, pending > 1 ? "s" : "");

	pthread_mutex_lock(&fetcher.lock);
	while (fetcher.pending && timeout_ns && now_ns() < deadline) {
		if (stop_signal_pending()) {
			skipped = true;
			break;
		}
		/* Wakes at each finished fetch, and every 100 ms to look at signals. */
		slice = min_t(uint64_t, deadline, now_ns() + 100000000ull);
		ts.tv_sec = slice / 1000000000ull;
		ts.tv_nsec = slice % 1000000000ull;
		pthread_cond_timedwait(&fetcher.cond, &fetcher.lock, &ts);
	}
	pending = fetcher.pending;
	fetcher.wait_deadline_ns = 0;
	/* The limit is for the whole run: a later profile format does not wait again. */
	if (pending && timeout_ns)
		fetcher.wait_over = true;
	pthread_mutex_unlock(&fetcher.lock);
	if (skipped)
		pr_info("debuginfod: wait skipped (Ctrl-C)");
	return pending;
}

void debuginfo__shutdown(void)
{
	struct fetch *f, *tmp;
	bool started;

	pthread_mutex_lock(&fetcher.lock);
	fetcher.stop = true;
	started = fetcher.started;
	if (fetcher.cond_ready)
		pthread_cond_broadcast(&fetcher.cond);
	pthread_mutex_unlock(&fetcher.lock);
	if (started)
		pthread_join(fetcher.thread, NULL);

	pthread_mutex_lock(&fetcher.lock);
	HASH_ITER(hh, fetcher.all, f, tmp) {
		HASH_DEL(fetcher.all, f);
		free(f->file);
		free(f->path);
		free(f);
	}
	fetcher.head = fetcher.tail = NULL;
	fetcher.pending = 0;
	fetcher.started = false;
	fetcher.stop = false;
	pthread_mutex_unlock(&fetcher.lock);
}

/* --- per-file DWARF state ---------------------------------------------------------------- */

static void file_dbg__reset(struct file_dbg *fd)
{
	struct dbg_addr *a, *atmp;
	struct dbg_name *n, *ntmp;

	HASH_ITER(hh, fd->addrs, a, atmp) {
		HASH_DEL(fd->addrs, a);
		free(a->frames);
		free(a);
	}
	HASH_ITER(hh, fd->names, n, ntmp) {
		HASH_DEL(fd->names, n);
		free(n->demangled);
		free(n);
	}
	free(fd->cus);
	fd->cus = NULL;
	fd->cus_cnt = 0;
	fd->cus_built = false;
	dwarf_end(fd->dw);
	fd->dw = NULL;
	/* After dw: libdw leaves an alt file given with dwarf_setalt() to its caller. */
	dwarf_end(fd->alt_dw);
	fd->alt_dw = NULL;
	elf_end(fd->alt_elf);
	fd->alt_elf = NULL;
	if (fd->alt_fd >= 0)
		close(fd->alt_fd);
	fd->alt_fd = -1;
	elf_end(fd->dbg_elf);
	fd->dbg_elf = NULL;
	if (fd->dbg_fd >= 0)
		close(fd->dbg_fd);
	fd->dbg_fd = -1;
}

static void file_dbg__free(void *p)
{
	struct file_dbg *fd = p;

	if (!fd)
		return;
	file_dbg__reset(fd);
	free(fd);
}

/* e's state, made at the first use. NULL on allocation failure. */
static struct file_dbg *file_dbg(struct elf_entry *e)
{
	struct file_dbg *fd = e->dbg;

	if (fd)
		return fd;
	fd = calloc(1, sizeof(*fd));
	if (!fd)
		return NULL;
	fd->dbg_fd = -1;
	fd->alt_fd = -1;
	e->dbg = fd;
	e->dbg_free = file_dbg__free;
	return fd;
}

/* A .debug_info with contents in elf itself (not a stripped file's). */
static bool elf_has_debug_info(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS || !shdr.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return true;
	}
	return false;
}

static const char *entry_path(const struct elf_entry *e)
{
	return e->path && e->path[0] == '/' ? e->path : NULL;
}

/*
 * libdw opens the dwz alt file a DWARF names (.gnu_debugaltlink) when it first needs it, with
 * a plain open() (a FIFO there blocks for ever) and mmap (a truncation raises SIGBUS). So
 * fd->dw gets its alt file opened our way (debug_file__open_alt(), dwarf_setalt()); a DWARF
 * whose alt file is not found is not used (its frames get symbol names). The .dwo files of
 * split units are opened the same way by libdw, but only for calls this file does not make
 * (a skeleton unit's subdie or integrated attributes): it reads skeletons' line tables only.
 * Returns whether fd->dw can be used.
 */
static bool file_dbg__own_files(struct file_dbg *fd, Elf *elf, int elf_fd, const char *path)
{
	if (debug_file__open_alt(elf, elf_fd, fd->dw, &fd->alt_elf, &fd->alt_fd)) {
		pr_debug("DWARF of %s not used: its dwz alt file (.gnu_debugaltlink) is missing",
			 path);
		return false;
	}
	if (!fd->alt_elf)
		return true;
	fd->alt_dw = dwarf_begin_elf(fd->alt_elf, DWARF_C_READ, NULL);
	if (!fd->alt_dw) {
		pr_debug("DWARF of %s not used: its dwz alt file: %s", path, dwarf_errmsg(-1));
		return false;
	}
	dwarf_setalt(fd->dw, fd->alt_dw);
	return true;
}

/* Opens the DWARF of e: its own, else its separate debug file's. Leaves fd->dw NULL if none. */
static void file_dbg__open(struct file_dbg *fd, struct elf_entry *e)
{
	fd->opened = true;
	fd->gen = __atomic_load_n(&fetch_gen, __ATOMIC_ACQUIRE);
	if (!e->elf)
		return;
	/* Rewritten in place since it was opened: its sections would be another build's. */
	if (elf_entry__changed(e)) {
		pr_debug("read DWARF of %s: the file changed since it was opened", e->path);
		return;
	}
	if (elf_has_debug_info(e->elf)) {
		fd->dw = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
		if (fd->dw) {
			if (!file_dbg__own_files(fd, e->elf, e->fd, e->path))
				file_dbg__reset(fd);
			return;
		}
	}
	fd->dbg_elf = debug_file__open(e->elf, entry_path(e), DEBUG_FILE_DWARF, &fd->dbg_fd);
	if (!fd->dbg_elf)
		return;
	fd->dw = dwarf_begin_elf(fd->dbg_elf, DWARF_C_READ, NULL);
	if (!fd->dw)
		pr_debug("read DWARF of %s: %s", e->path, dwarf_errmsg(-1));
	if (!fd->dw || !file_dbg__own_files(fd, fd->dbg_elf, fd->dbg_fd, e->path))
		file_dbg__reset(fd);
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/* The address ranges of every CU (DW_AT_low_pc/high_pc or DW_AT_ranges), sorted. */
static int cus_build(struct file_dbg *fd)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Die cudie, *subdie = NULL;
	Dwarf_CU *cu = NULL;
	uint8_t unit_type;
	Dwarf_Half version;
	size_t cap = 0;
	ptrdiff_t off;

	fd->cus_built = true;
	while (!dwarf_get_units(fd->dw, cu, &cu, &version, &unit_type, &cudie, subdie)) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		for (off = 0; (off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0;) {
			if (lo >= hi)
				continue;
			if (array_grow((void **)&fd->cus, &cap, fd->cus_cnt + 1, sizeof(*fd->cus),
				       64))
				return -ENOMEM;
			fd->cus[fd->cus_cnt++] = (struct cu_range){
				.lo = lo,
				.hi = hi,
				.die_off = dwarf_dieoffset(&cudie),
			};
		}
	}
	if (fd->cus_cnt)
		qsort(fd->cus, fd->cus_cnt, sizeof(*fd->cus), cu_range_cmp);
	return 0;
}

/* The CU covering addr: .debug_aranges first, else the CUs' own ranges. */
static int cu_of(struct file_dbg *fd, uint64_t addr, Dwarf_Die *cudie)
{
	size_t lo = 0, hi, i;
	int err;

	if (dwarf_addrdie(fd->dw, addr, cudie))
		return 1;
	if (!fd->cus_built) {
		err = cus_build(fd);
		if (err)
			return err;
	}
	/* Ranges may overlap (bad DWARF): the last one starting at or below addr that holds it. */
	hi = fd->cus_cnt;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fd->cus[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;) {
		if (addr < fd->cus[i].hi)
			return dwarf_offdie(fd->dw, fd->cus[i].die_off, cudie) ? 1 : 0;
	}
	return 0;
}

/* The DIE's name: its linkage name, else DW_AT_name, following origin and specification. */
static const char *die_name(Dwarf_Die *die)
{
	static const unsigned int attrs[] = {
		DW_AT_linkage_name,
		DW_AT_MIPS_linkage_name,
		DW_AT_name,
	};
	Dwarf_Attribute attr;
	const char *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		s = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &attr));
		if (s && s[0])
			return s;
	}
	return NULL;
}

/* The demangled form of a DWARF name, cached by the name's address; NULL: keep raw. */
static const char *demangled_name(struct file_dbg *fd, const char *raw)
{
	struct dbg_name *n;

	if (!raw)
		return NULL;
	HASH_FIND_PTR(fd->names, &raw, n);
	if (n)
		return n->demangled;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->raw = raw;
	n->demangled = symbol__demangle(raw);
	HASH_ADD_PTR(fd->names, raw, n);
	return n->demangled;
}

/* File name number idx of the line table of die's CU; NULL when unknown. */
static const char *call_file(Dwarf_Die *die, Dwarf_Word idx)
{
	Dwarf_Die cudie;
	Dwarf_Files *files;
	const char *name;
	size_t nfiles;

	if (!dwarf_diecu(die, &cudie, NULL, NULL) || dwarf_getsrcfiles(&cudie, &files, &nfiles) ||
	    idx >= nfiles)
		return NULL;
	name = dwarf_filesrc(files, idx, NULL, NULL);
	/* libdw names a DWARF 4 table's unused entry 0 "???". */
	return name && strcmp(name, "???") ? name : NULL;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/*
 * Builds a->frames for a->addr. Every DWARF failure means "no frames" (0): the caller falls
 * back to the symbol table; only allocation failures are errors.
 */
static int frames_build(struct file_dbg *fd, struct elf_entry *e, struct dbg_addr *a)
{
	Dwarf_Die cudie, *scopes = NULL, *chain = NULL;
	Dwarf_Attribute attr;
	Dwarf_Word word;
	const char *file = NULL, *sym;
	uint32_t line = 0;
	int nscopes, nchain = 0, i, n = 0, err;
	struct dbg_frame *frames = NULL;
	bool real = false;
	struct symtab *st;
	Dwarf_Line *dl;
	uint64_t off;

	err = cu_of(fd, a->addr, &cudie);
	if (err <= 0)
		return err;
	dl = dwarf_getsrc_die(&cudie, a->addr);
	if (dl) {
		int lineno = 0;

		file = dwarf_linesrc(dl, NULL, NULL);
		if (!dwarf_lineno(dl, &lineno) && lineno > 0)
			line = lineno;
	}
	nscopes = dwarf_getscopes(&cudie, a->addr, &scopes);
	for (i = 0; i < nscopes; i++) {
		if (is_function(&scopes[i]))
			break;
	}
	if (i >= nscopes) {
		/* Lines without a DW_TAG_subprogram (assembly, empty functions): one frame,
		 * named by the symbol table. */
		st = elf_entry__symtab(e);
		if (!line || !st || !symtab__find(st, a->addr, NULL))
			goto cleanup;
		frames = calloc(1, sizeof(*frames));
		if (!frames) {
			err = -ENOMEM;
			goto cleanup;
		}
		frames[0] = (struct dbg_frame){ .file = file, .line = line, .from_symtab = true };
		n = 1;
		real = true;
		goto done;
	}
	/* dwarf_getscopes() continues into the abstract origin's scopes after an inlined
	 * subroutine; the concrete tree's parents of the innermost function give the chain. */
	nchain = dwarf_getscopes_die(&scopes[i], &chain);
	if (nchain <= 0)
		goto cleanup;
	frames = calloc(nchain, sizeof(*frames));
	if (!frames) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < nchain; i++) {
		struct dbg_frame *f;

		if (!is_function(&chain[i]))
			continue;
		f = &frames[n++];
		f->raw = die_name(&chain[i]);
		f->demangled = demangled_name(fd, f->raw);
		f->file = file;
		f->line = line;
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) {
			/* The symbol table's name when its symbol starts in this function. */
			st = elf_entry__symtab(e);
			sym = st ? symtab__find(st, a->addr, &off) : NULL;
			f->from_symtab = sym && dwarf_haspc(&chain[i], a->addr - off) > 0;
			real = true;
			break;
		}
		/* The caller's position: this inlined instance's call site. */
		file = NULL;
		line = 0;
		if (!dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &attr), &word))
			file = call_file(&chain[i], word);
		if (!dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr), &word) &&
		    word <= UINT32_MAX)
			line = word;
	}
done:
	/* No real function above an inlined one (broken DWARF): not a usable chain. */
	if (real) {
		a->frames = frames;
		a->cnt = n;
		frames = NULL;
	}
	err = 0;

cleanup:
	free(frames);
	free(scopes);
	free(chain);
	return err;
}

/* The name of frame f at addr, and in *raw the name as the file spells it (or NULL). */
static const char *frame_name(struct elf_entry *e, const struct dbg_frame *f, uint64_t addr,
			      const char **raw)
{
	const char *name;

	*raw = NULL;
	if (f->from_symtab || !f->raw) {
		name = symtab__find_sym(elf_entry__symtab(e), addr, NULL, raw);
		if (name)
			return name;
	}
	if (!f->raw)
		return "[unknown]";
	*raw = f->raw;
	if (symbolize__demangle_on() && f->demangled)
		return f->demangled;
	return f->raw;
}

int debuginfo__frames(struct elf_entry *e, uint64_t addr, struct src_frame *out, size_t cap)
{
	struct file_dbg *fd;
	struct dbg_addr *a;
	size_t n, skip, i;
	int err;

	if (!e || !out || !cap)
		return -EINVAL;
	fd = file_dbg(e);
	if (!fd)
		return -ENOMEM;
	/* A file without DWARF looks again once debuginfod has fetched something. */
	if (fd->opened && !fd->dw && fd->gen != __atomic_load_n(&fetch_gen, __ATOMIC_ACQUIRE)) {
		file_dbg__reset(fd);
		fd->opened = false;
	}
	if (!fd->opened)
		file_dbg__open(fd, e);
	if (!fd->dw)
		return 0;

	HASH_FIND(hh, fd->addrs, &addr, sizeof(addr), a);
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->addr = addr;
		err = frames_build(fd, e, a);
		if (err < 0) {
			free(a);
			return err;
		}
		HASH_ADD(hh, fd->addrs, addr, sizeof(a->addr), a);
	}
	n = a->cnt < cap ? a->cnt : cap;
	skip = a->cnt - n;
	for (i = 0; i < n; i++) {
		const struct dbg_frame *f = &a->frames[skip + i];

		out[i].function = frame_name(e, f, addr, &out[i].system_name);
		out[i].file = f->file;
		out[i].line = f->line;
	}
	return n;
}

bool debuginfo__symtab_stale(struct elf_entry *e)
{
	struct file_dbg *fd = e ? e->dbg : NULL;
	unsigned int gen = __atomic_load_n(&fetch_gen, __ATOMIC_ACQUIRE);
	const void *id;
	ssize_t id_sz;

	if (!fd || !fd->requested || fd->symtab_fresh || fd->symtab_gen == gen)
		return false;
	fd->symtab_gen = gen;
	id_sz = dwelf_elf_gnu_build_id(e->elf, &id);
	if (id_sz <= 0 || id_sz > MAX_BUILD_ID || !fetch_done(id, id_sz))
		return false;
	/* A table not built yet will be built with the file: nothing to drop. */
	fd->symtab_fresh = true;
	return e->symtab_tried;
}

void debuginfo__request(struct elf_entry *e)
{
	const void *id;
	struct file_dbg *fd;
	const char *urls;
	ssize_t id_sz;
	Elf *dbg;
	int dbg_fd = -1, err;

	if (!e || !e->elf)
		return;
	fd = file_dbg(e);
	if (!fd || fd->requested)
		return;
	fd->requested = true;
	urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	if (!urls || !urls[0])
		return;
	id_sz = dwelf_elf_gnu_build_id(e->elf, &id);
	if (id_sz <= 0 || id_sz > MAX_BUILD_ID)
		return;
	if (elf_has_debug_info(e->elf))
		return;
	dbg = debug_file__open(e->elf, entry_path(e), DEBUG_FILE_DWARF, &dbg_fd);
	if (dbg) {
		elf_end(dbg);
		close(dbg_fd);
		return;
	}
	err = fetch_queue(id, id_sz, e->path);
	if (err)
		pr_warn("queue a debuginfod fetch for %s: %s", e->path, strerror(-err));
}

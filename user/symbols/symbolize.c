// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* symbolize.c: sorted function symbol tables of ELF files, separate debug files, demangling. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbols/debuginfo.h"
#include "util/file.h"
#include "symbols/symbolize.h"
#include "util/util.h"

#include <libiberty/demangle.h>

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"
#define MAX_BUILD_ID	  64

struct sym {
	uint64_t start;
	uint64_t end;
	/* NULL until first asked for; equal to the raw name when it is not a mangled name. */
	char *demangled;
	uint32_t name; /* offset in symtab->names */
	/* The innermost earlier symbol still covering start (nested symbols), or -1. */
	int32_t parent;
};

struct symtab {
	struct sym *syms;
	size_t cnt;
	char *names;
};

/* A symbol as read from one symbol table, before aliases are merged. */
struct sym_cand {
	uint64_t addr;
	uint64_t size;
	const char *name; /* in the ELF's string table: valid while building */
	uint16_t shndx;
	uint8_t src;  /* index in symtab_builder->elfs */
	uint8_t pref; /* alias preference: lower wins */
};

/* Only the names that win are copied: most of a large table's names are aliases or locals. */
struct symtab_builder {
	struct sym_cand *cands;
	size_t cnt;
	size_t cap;
	Elf *elfs[2]; /* the file, and its debug file */
};

static int demangle_on = 1;
static int full_names;
static char debug_dir[PATH_MAX] = DEFAULT_DEBUG_DIR;

void symbolize__set_demangle(int on)
{
	demangle_on = !!on;
}

int symbolize__demangle_on(void)
{
	return demangle_on;
}

void symbolize__set_full_names(int on)
{
	full_names = !!on;
}

int symbolize__set_debug_dir(const char *dir)
{
	size_t len;

	if (!dir)
		dir = DEFAULT_DEBUG_DIR;
	len = strlen(dir);
	/* "/x/" and "/x" must build the same candidate paths. */
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= sizeof(debug_dir))
		return -ENAMETOOLONG;
	memcpy(debug_dir, dir, len);
	debug_dir[len] = '\0';
	return 0;
}

char *symbol__demangle(const char *name)
{
	char *res;

	/* _Z: Itanium C++ ABI (and Rust's legacy mangling, which wraps it); _R: Rust v0. */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* libiberty's demangler, the one binutils and GCC use: C++ and both Rust manglings
	 * (Rust's legacy names lose their ::h<hash> suffix, as rustc-demangle prints them).
	 * Without DMGL_PARAMS it prints what perf prints by default (DMGL_NO_OPTS): a function
	 * name without its parameters, cv-qualifiers, return type or clone suffix. */
	res = cplus_demangle(name, full_names ? DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO : DMGL_AUTO);
	return res;
}

static int builder__add(struct symtab_builder *b, uint64_t addr, uint64_t size, const char *name,
			uint16_t shndx, uint8_t src, unsigned int bind)
{
	struct sym_cand *c;
	uint8_t pref;

	if (array_grow((void **)&b->cands, &b->cap, b->cnt + 1, sizeof(*b->cands), 256))
		return -ENOMEM;
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		pref = 0;
		break;
	case STB_WEAK:
		pref = 1;
		break;
	default:
		pref = 2;
		break;
	}
	/* Reserved-namespace aliases (__libc_malloc vs malloc) are the less familiar name. */
	pref = pref * 2 + (name[0] == '_');
	c = &b->cands[b->cnt++];
	c->addr = addr;
	c->size = size;
	c->name = name;
	c->shndx = shndx;
	c->src = src;
	c->pref = pref;
	return 0;
}

/* End of an allocated section, or 0 when shndx names none (ABS, out of range, not loaded). */
static uint64_t section_end(Elf *elf, size_t shndx)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC))
		return 0;
	if (shdr.sh_addr + shdr.sh_size < shdr.sh_addr)
		return UINT64_MAX;
	return shdr.sh_addr + shdr.sh_size;
}

/* The first section of type (SHT_SYMTAB or SHT_DYNSYM) whose data and string table are usable. */
static Elf_Scn *find_symtab(Elf *elf, uint32_t type, Elf_Data **syms, Elf_Data **strs)
{
	Elf_Scn *scn = NULL, *str_scn;
	GElf_Shdr shdr, str_shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type)
			continue;
		if (shdr.sh_flags & SHF_COMPRESSED)
			continue;
		str_scn = elf_getscn(elf, shdr.sh_link);
		if (!str_scn || !gelf_getshdr(str_scn, &str_shdr) ||
		    str_shdr.sh_type != SHT_STRTAB || (str_shdr.sh_flags & SHF_COMPRESSED))
			continue;
		*syms = elf_getdata(scn, NULL);
		*strs = elf_getdata(str_scn, NULL);
		if (!*syms || !(*syms)->d_buf || !*strs || !(*strs)->d_buf || !(*strs)->d_size)
			continue;
		return scn;
	}
	return NULL;
}

/* Adds the function symbols of one symbol table of b->elfs[src]. Returns how many, or -ENOMEM. */
static int builder__add_symtab(struct symtab_builder *b, uint8_t src, uint32_t type)
{
	Elf *elf = b->elfs[src];
	Elf_Data *syms, *strs;
	const char *strtab;
	GElf_Ehdr ehdr;
	size_t i, nsyms;
	GElf_Sym sym;
	int added = 0;

	if (!gelf_getehdr(elf, &ehdr) || !find_symtab(elf, type, &syms, &strs))
		return 0;
	strtab = strs->d_buf;
	/* Room for every symbol up front: growing a large table step by step costs copies. */
	nsyms = syms->d_size /
		(gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym));
	if (array_grow((void **)&b->cands, &b->cap, b->cnt + nsyms, sizeof(*b->cands), 256))
		return -ENOMEM;
	/* gelf_getsym() checks i against the data size: a short section just ends the loop. */
	for (i = 0; gelf_getsym(syms, i, &sym); i++) {
		unsigned int st_type = GELF_ST_TYPE(sym.st_info);
		uint64_t addr = sym.st_value;
		const char *name;

		if ((st_type != STT_FUNC && st_type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		if (!sym.st_name || sym.st_name >= strs->d_size)
			continue;
		name = strtab + sym.st_name;
		if (!name[0] || !memchr(name, '\0', strs->d_size - sym.st_name))
			continue;
		/* Thumb functions have bit 0 set in st_value; the code starts one byte lower. */
		if (ehdr.e_machine == EM_ARM)
			addr &= ~1ull;
		if (builder__add(b, addr, sym.st_size, name, sym.st_shndx, src,
				 GELF_ST_BIND(sym.st_info)))
			return -ENOMEM;
		added++;
	}
	return added;
}

static inline bool cand_before(const struct sym_cand *x, const struct sym_cand *y)
{
	if (x->addr != y->addr)
		return x->addr < y->addr;
	if (x->pref != y->pref)
		return x->pref < y->pref;
	/* Same rank: the name decides, so that every run picks the same alias. */
	return strcmp(x->name, y->name) < 0;
}

static void cands_sift_down(struct sym_cand *a, size_t root, size_t n)
{
	struct sym_cand tmp;
	size_t child;

	while ((child = 2 * root + 1) < n) {
		if (child + 1 < n && cand_before(&a[child], &a[child + 1]))
			child++;
		if (!cand_before(&a[root], &a[child]))
			return;
		tmp = a[root];
		a[root] = a[child];
		a[child] = tmp;
		root = child;
	}
}

/*
 * Heap sort: in place (on a fresh process, page faults on a second buffer cost more than the
 * sort), O(n log n) whatever a corrupt file holds, and an inlined compare where qsort_r() spent
 * most of a large table's load time in memcpy and indirect calls.
 */
static void cands_sort(struct sym_cand *a, size_t n)
{
	struct sym_cand tmp;
	size_t i;

	if (n < 2)
		return;
	for (i = n / 2; i-- > 0;)
		cands_sift_down(a, i, n);
	for (i = n - 1; i > 0; i--) {
		tmp = a[0];
		a[0] = a[i];
		a[i] = tmp;
		cands_sift_down(a, 0, i);
	}
}

/* (Re)builds st from the candidates: one entry per address, ends, nesting links, names. */
static int builder__finish(struct symtab_builder *b, struct symtab *st)
{
	const struct sym_cand *cands = b->cands;
	size_t i, j, n = 0, depth = 0, names_len = 0;
	struct sym *syms = NULL;
	int32_t *stack = NULL;
	char *names = NULL;
	int err = 0;

	if (b->cnt > INT32_MAX)
		return -ENOMEM;
	cands_sort(b->cands, b->cnt);
	for (i = 0; i < b->cnt; i++) {
		if (!i || cands[i].addr != cands[i - 1].addr) {
			n++;
			names_len += strlen(cands[i].name) + 1;
		}
	}
	if (names_len > UINT32_MAX)
		return -ENOMEM;
	if (n) {
		syms = calloc(n, sizeof(*syms));
		stack = malloc(n * sizeof(*stack));
		names = malloc(names_len);
		if (!syms || !stack || !names) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	n = 0;
	names_len = 0;
	for (i = 0; i < b->cnt; i = j) {
		const struct sym_cand *c = &cands[i];
		uint64_t end = 0, sec_end = 0, next;
		size_t len;

		/* Aliases: the first (preferred) name, the largest size any of them gives. */
		for (j = i; j < b->cnt && cands[j].addr == c->addr; j++) {
			const struct sym_cand *a = &cands[j];
			uint64_t e = a->addr + a->size < a->addr ? UINT64_MAX : a->addr + a->size;

			if (a->size && e > end)
				end = e;
		}
		if (!end) {
			for (j = i; j < b->cnt && cands[j].addr == c->addr; j++) {
				uint64_t e = section_end(b->elfs[cands[j].src], cands[j].shndx);

				if (e > sec_end)
					sec_end = e;
			}
			next = j < b->cnt ? cands[j].addr : UINT64_MAX;
			if (sec_end > c->addr)
				end = next < sec_end ? next : sec_end;
			else if (next != UINT64_MAX)
				end = next;
			else
				end = c->addr + 1;
		}
		len = strlen(c->name) + 1;
		memcpy(names + names_len, c->name, len);
		syms[n].start = c->addr;
		syms[n].end = end;
		syms[n].name = names_len;
		names_len += len;
		n++;
	}
	/*
	 * Sizes can nest (an inner entry point inside a larger function): link each symbol to the
	 * innermost earlier one that is still open, so that a lookup past the inner one's end
	 * falls back to the outer one in a few steps.
	 */
	for (i = 0; i < n; i++) {
		while (depth && syms[stack[depth - 1]].end <= syms[i].start)
			depth--;
		syms[i].parent = depth ? stack[depth - 1] : -1;
		stack[depth++] = i;
	}
	/* Called again only while building: nothing was demangled yet. */
	free(st->syms);
	free(st->names);
	st->syms = syms;
	st->names = names;
	st->cnt = n;
	syms = NULL;
	names = NULL;

cleanup:
	free(syms);
	free(stack);
	free(names);
	return err;
}

static struct sym *symtab__lookup(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->cnt;
	int32_t i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (int32_t)lo - 1; i >= 0; i = st->syms[i].parent) {
		if (addr < st->syms[i].end)
			return &st->syms[i];
	}
	return NULL;
}

/* Points *id at the NT_GNU_BUILD_ID of data's notes; returns its length, or 0. */
static size_t note_build_id(Elf_Data *data, const uint8_t **id)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz &&
		    nh.n_descsz <= MAX_BUILD_ID &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4)) {
			*id = (const uint8_t *)data->d_buf + desc_off;
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

/* The build-id of elf, valid as long as elf; returns its length, 0 when it has none. */
static size_t elf_build_id(Elf *elf, const uint8_t **id)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr shdr;
	GElf_Phdr phdr;
	size_t i, n, len;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf && (len = note_build_id(data, id)))
			return len;
	}
	/* Files whose section headers were stripped still have the PT_NOTE segment. */
	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &phdr) || phdr.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, phdr.p_offset, phdr.p_filesz,
					    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && data->d_buf && (len = note_build_id(data, id)))
			return len;
	}
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;
	const char *s;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

/* The file name in .gnu_debuglink (a plain name, no directory), or NULL. */
static const char *elf_debuglink(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".gnu_debuglink");
	Elf_Data *data;
	const char *name;
	size_t len;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf || !data->d_size)
		return NULL;
	name = data->d_buf;
	len = strnlen(name, data->d_size);
	if (!len || len == data->d_size || len > NAME_MAX || memchr(name, '/', len))
		return NULL;
	return name;
}

static bool elf_has_symtab(Elf *elf)
{
	Elf_Data *syms, *strs;

	return find_symtab(elf, SHT_SYMTAB, &syms, &strs);
}

/* A .debug_info with contents (a stripped file or a debug file's NOBITS copy has none). */
static bool elf_has_dwarf(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".debug_info");
	GElf_Shdr shdr;

	if (!scn)
		scn = find_section(elf, ".zdebug_info");
	return scn && gelf_getshdr(scn, &shdr) && shdr.sh_type != SHT_NOBITS && shdr.sh_size;
}

/*
 * Opens path as the debug file of elf: same class and machine, what need asks for, and the
 * same build-id when both have one. Returns the Elf (and *fdp), or NULL.
 */
static Elf *debug_file__try(const char *path, Elf *elf, const uint8_t *id, size_t id_len,
			    const struct stat *self, unsigned int need, int *fdp)
{
	GElf_Ehdr ehdr, dbg_ehdr;
	const uint8_t *dbg_id;
	size_t dbg_id_len;
	struct stat st;
	Elf *dbg = NULL;
	int fd;

	/* Debug files are often symlinks (.build-id/): followed, but only a regular file is
	 * opened. */
	fd = file__open_regular(path, 0, &st);
	if (fd < 0)
		return NULL;
	/* A debuglink naming the file itself would only duplicate its own symbols. */
	if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino)
		goto fail;
	/* pread, not mmap: a debug file truncated while in use must not raise SIGBUS. The fd
	 * lives as long as the Elf (the DWARF of a debug file stays open). */
	fd = file__move_high(fd);
	dbg = elf_begin(fd, ELF_C_READ, NULL);
	if (!dbg || elf_kind(dbg) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    !gelf_getehdr(dbg, &dbg_ehdr))
		goto fail;
	if (ehdr.e_ident[EI_CLASS] != dbg_ehdr.e_ident[EI_CLASS] ||
	    ehdr.e_machine != dbg_ehdr.e_machine)
		goto fail;
	dbg_id_len = elf_build_id(dbg, &dbg_id);
	if (id_len && dbg_id_len && (id_len != dbg_id_len || memcmp(id, dbg_id, id_len)))
		goto fail;
	if (((need & DEBUG_FILE_SYMTAB) && !elf_has_symtab(dbg)) ||
	    ((need & DEBUG_FILE_DWARF) && !elf_has_dwarf(dbg)))
		goto fail;
	*fdp = fd;
	return dbg;

fail:
	elf_end(dbg);
	close(fd);
	return NULL;
}

/* The .gnu_debuglink candidates: next to path, in its .debug/, under the debug dir. */
static Elf *debug_file__try_links(Elf *elf, const char *path, const char *link, const uint8_t *id,
				  size_t id_len, const struct stat *self, unsigned int need,
				  int *fdp)
{
	char buf[PATH_MAX];
	const char *slash;
	int dir_len, n;
	size_t i;
	Elf *dbg;

	slash = strrchr(path, '/');
	if (slash) {
		dir_len = slash - path;
	} else {
		path = ".";
		dir_len = 1;
	}
	for (i = 0; i < 3; i++) {
		if (i == 0)
			n = snprintf(buf, sizeof(buf), "%.*s/%s", dir_len, path, link);
		else if (i == 1)
			n = snprintf(buf, sizeof(buf), "%.*s/.debug/%s", dir_len, path, link);
		else
			n = snprintf(buf, sizeof(buf), "%s%s%.*s/%s", debug_dir,
				     path[0] == '/' ? "" : "/", dir_len, path, link);
		if (n < 0 || (size_t)n >= sizeof(buf))
			continue;
		dbg = debug_file__try(buf, elf, id, id_len, self, need, fdp);
		if (dbg)
			return dbg;
	}
	return NULL;
}

/* <debug dir>/.build-id/xx/yyyy.debug for a build-id of id_len bytes (2 at least) into buf;
 * false when there is none or it does not fit. */
static bool build_id_path(char *buf, size_t sz, const uint8_t *id, size_t id_len)
{
	size_t i;
	int n;

	if (id_len < 2)
		return false;
	n = snprintf(buf, sz, "%s/.build-id/%02x/", debug_dir, id[0]);
	for (i = 1; i < id_len && n > 0 && (size_t)n < sz; i++)
		n += snprintf(buf + n, sz - n, "%02x", id[i]);
	if (n > 0 && (size_t)n < sz)
		n += snprintf(buf + n, sz - n, ".debug");
	return n > 0 && (size_t)n < sz;
}

/*
 * By build-id first (it names exactly this build), then by .gnu_debuglink next to path, in its
 * .debug/, and under the debug dir; last, what debuginfod fetched (the network is the slowest
 * and least certain source: a local file wins).
 */
Elf *debug_file__open(Elf *elf, const char *path, unsigned int need, int *fdp)
{
	char buf[PATH_MAX];
	const uint8_t *id = NULL;
	const char *link;
	struct stat self;
	bool have_self;
	size_t id_len;
	Elf *dbg;

	have_self = path && !stat(path, &self);
	id_len = elf_build_id(elf, &id);
	if (build_id_path(buf, sizeof(buf), id, id_len)) {
		dbg = debug_file__try(buf, elf, id, id_len, have_self ? &self : NULL, need, fdp);
		if (dbg)
			return dbg;
	}

	link = elf_debuglink(elf);
	if (path && link) {
		dbg = debug_file__try_links(elf, path, link, id, id_len, have_self ? &self : NULL,
					    need, fdp);
		if (dbg)
			return dbg;
	}
	if (id_len && !debuginfo__fetched_path(id, id_len, buf, sizeof(buf)))
		return debug_file__try(buf, elf, id, id_len, NULL, need, fdp);
	return NULL;
}

int debug_file__open_alt(Elf *dbg, int dbg_fd, Dwarf *dw, Elf **altp, int *fdp)
{
	char buf[PATH_MAX], dir[PATH_MAX], fd_path[32], *slash;
	const void *id = NULL;
	const char *name;
	ssize_t id_len, n;

	*altp = NULL;
	/* No link, or one libdw could not read either: libdw will not look for a file. */
	id_len = dwelf_dwarf_gnu_debugaltlink(dw, &name, &id);
	if (id_len <= 0)
		return 0;
	if (build_id_path(buf, sizeof(buf), id, id_len))
		*altp = debug_file__try(buf, dbg, id, id_len, NULL, DEBUG_FILE_DWARF, fdp);
	if (*altp || !name[0])
		return *altp ? 0 : -ENOENT;
	if (name[0] == '/') {
		*altp = debug_file__try(name, dbg, id, id_len, NULL, DEBUG_FILE_DWARF, fdp);
	} else if (dbg_fd >= 0) {
		/* Relative to the debug file's directory, as libdw resolves it: the file dbg_fd
		 * holds, as bpfprof sees it. */
		snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", dbg_fd);
		n = readlink(fd_path, dir, sizeof(dir) - 1);
		slash = n > 0 ? memrchr(dir, '/', n) : NULL;
		if (slash && dir[0] == '/' &&
		    snprintf(buf, sizeof(buf), "%.*s/%s", (int)(slash - dir), dir, name) <
			    (int)sizeof(buf))
			*altp = debug_file__try(buf, dbg, id, id_len, NULL, DEBUG_FILE_DWARF, fdp);
	}
	return *altp ? 0 : -ENOENT;
}

static uint64_t read_uint(const uint8_t *p, size_t n, bool msb)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* Size in bytes of a DW_EH_PE format; 0 for the ones .eh_frame does not use for FDEs. */
static size_t eh_pe_size(uint8_t enc, bool is64)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return is64 ? 8 : 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;
	}
}

/* Decodes one pointer at *p (not past end); pc is *p's address, for pcrel. */
static int eh_pe_read(const uint8_t **p, const uint8_t *end, uint8_t enc, bool apply, bool is64,
		      bool msb, uint64_t pc, uint64_t *val)
{
	size_t n = eh_pe_size(enc, is64);
	uint64_t v;

	if (!n || n > (size_t)(end - *p) || (enc & DW_EH_PE_indirect))
		return -EINVAL;
	v = read_uint(*p, n, msb);
	if ((enc & DW_EH_PE_signed) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	if (apply) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			v += pc;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!is64)
		v &= 0xffffffffu;
	*p += n;
	*val = v;
	return 0;
}

/* The FDE pointer encoding of the CIE at off: 'R' in its "z" augmentation, else absptr. */
static int cie_fde_encoding(const unsigned char *ident, Elf_Data *data, Dwarf_Off off, bool is64,
			    uint8_t *enc)
{
	const uint8_t *p, *end;
	Dwarf_CFI_Entry ent;
	Dwarf_Off next;
	const char *a;
	size_t n;

	if (dwarf_next_cfi(ident, data, true, off, &next, &ent) || !dwarf_cfi_cie_p(&ent))
		return -EINVAL;
	a = ent.cie.augmentation;
	p = ent.cie.augmentation_data;
	end = p ? p + ent.cie.augmentation_data_size : NULL;
	*enc = DW_EH_PE_absptr;
	if (!a || !a[0])
		return 0;
	if (a[0] != 'z' || !p)
		return -EINVAL;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -EINVAL;
			*enc = *p++;
			break;
		case 'L':
			p++;
			break;
		case 'P':
			if (p >= end || !(n = eh_pe_size(*p, is64)))
				return -EINVAL;
			p += 1 + n;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -EINVAL;
		}
		if (p > end)
			return -EINVAL;
	}
	return 0;
}

/* Walks .eh_frame for the FDE covering addr, for its [initial_location, +address_range). */
static int eh_frame_fde_range(Elf *elf, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Scn *scn = find_section(elf, ".eh_frame");
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint64_t start, len, pc;
	bool is64, msb, cie_ok = false;
	Dwarf_CFI_Entry ent;
	const uint8_t *p;
	uint8_t enc = 0;
	Elf_Data *data;
	GElf_Shdr shdr;
	int ret;

	if (!scn || !ident || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -ENOENT;
	is64 = ident[EI_CLASS] == ELFCLASS64;
	msb = ident[EI_DATA] == ELFDATA2MSB;

	for (;; off = next) {
		next = 0;
		ret = dwarf_next_cfi(ident, data, true, off, &next, &ent);
		if (ret > 0 || next <= off)
			break;
		/* libdw sets next past some bad entries: the rest can still be read. */
		if (ret < 0 || dwarf_cfi_cie_p(&ent))
			continue;
		if (ent.fde.CIE_pointer != cie_off) {
			cie_off = ent.fde.CIE_pointer;
			cie_ok = !cie_fde_encoding(ident, data, cie_off, is64, &enc);
		}
		if (!cie_ok)
			continue;
		p = ent.fde.start;
		/* pcrel is relative to the initial_location field's own address. */
		pc = shdr.sh_addr + (p - (const uint8_t *)data->d_buf);
		if (eh_pe_read(&p, ent.fde.end, enc, true, is64, msb, pc, &start) ||
		    eh_pe_read(&p, ent.fde.end, enc, false, is64, msb, 0, &len))
			continue;
		if (addr >= start && addr - start < len) {
			*lo = start;
			*hi = start + len;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The code range to call "_start": libdw's CFI lookup (it uses .eh_frame_hdr's search table)
 * says whether an FDE covers the entry point at all; its row is the fallback range, widened
 * to the whole FDE when the FDE can be decoded.
 */
static int entry_range(Elf *elf, uint64_t entry, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start, end;
	Dwarf_CFI *cfi;
	bool signalp;
	int err = -ENOENT;

	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return -ENOENT;
	if (dwarf_cfi_addrframe(cfi, entry, &frame) ||
	    dwarf_frame_info(frame, &start, &end, &signalp) < 0 || start > entry || end <= entry)
		goto cleanup;
	*lo = start;
	*hi = end;
	err = 0;
	if (!eh_frame_fde_range(elf, entry, &start, &end) && start <= *lo && end >= *hi) {
		*lo = start;
		*hi = end;
	}

cleanup:
	free(frame);
	dwarf_cfi_end(cfi);
	return err;
}

/* Without an FDE (glibc's ld.so: RTLD_START has no CFI), the entry code up to the next
 * symbol, at most ENTRY_NO_CFI_SZ bytes: enough for the call that a sample's return address
 * follows. */
#define ENTRY_NO_CFI_SZ 64
static int entry_range_no_cfi(const struct symtab *st, uint64_t entry, uint64_t *lo, uint64_t *hi)
{
	size_t i;

	*lo = entry;
	*hi = entry + ENTRY_NO_CFI_SZ;
	for (i = 0; i < st->cnt; i++)
		if (st->syms[i].start > entry && st->syms[i].start < *hi)
			*hi = st->syms[i].start;
	return 0;
}

struct symtab *symtab__new(Elf *elf, const char *path)
{
	struct symtab_builder b = {};
	struct symtab *st;
	Elf *dbg = NULL;
	int dbg_fd = -1, err = 0, n;
	uint64_t lo, hi;
	GElf_Ehdr ehdr;

	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		goto cleanup;

	b.elfs[0] = elf;
	n = builder__add_symtab(&b, 0, SHT_SYMTAB);
	if (!n)
		n = builder__add_symtab(&b, 0, SHT_DYNSYM);
	if (n < 0) {
		err = n;
		goto cleanup;
	}
	dbg = debug_file__open(elf, path, DEBUG_FILE_SYMTAB, &dbg_fd);
	if (dbg) {
		b.elfs[1] = dbg;
		n = builder__add_symtab(&b, 1, SHT_SYMTAB);
		if (n < 0) {
			err = n;
			goto cleanup;
		}
	}
	err = builder__finish(&b, st);
	if (err)
		goto cleanup;

	if (ehdr.e_entry && !symtab__lookup(st, ehdr.e_entry) &&
	    (!entry_range(elf, ehdr.e_entry, &lo, &hi) ||
	     !entry_range_no_cfi(st, ehdr.e_entry, &lo, &hi))) {
		err = builder__add(&b, lo, hi - lo, "_start", SHN_UNDEF, 0, STB_GLOBAL);
		if (!err)
			err = builder__finish(&b, st);
		if (err)
			goto cleanup;
	}

cleanup:
	free(b.cands);
	elf_end(dbg);
	if (dbg_fd >= 0)
		close(dbg_fd);
	if (err) {
		symtab__free(st);
		errno = -err;
		return NULL;
	}
	return st;
}

void symtab__free(struct symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->cnt; i++) {
		if (st->syms[i].demangled != st->names + st->syms[i].name)
			free(st->syms[i].demangled);
	}
	free(st->syms);
	free(st->names);
	free(st);
}

size_t symtab__cnt(const struct symtab *st)
{
	return st ? st->cnt : 0;
}

const char *symtab__find(struct symtab *st, uint64_t addr, uint64_t *offset)
{
	return symtab__find_sym(st, addr, offset, NULL);
}

const char *symtab__find_sym(struct symtab *st, uint64_t addr, uint64_t *offset, const char **rawp)
{
	struct sym *s;
	char *raw;

	if (!st || !st->cnt)
		return NULL;
	s = symtab__lookup(st, addr);
	if (!s)
		return NULL;
	if (offset)
		*offset = addr - s->start;
	raw = st->names + s->name;
	if (rawp)
		*rawp = raw;
	if (!demangle_on)
		return raw;
	/* Demangling is slow and most symbols are never hit: do it once, on first use. */
	if (!s->demangled) {
		s->demangled = symbol__demangle(raw);
		if (!s->demangled)
			s->demangled = raw;
	}
	return s->demangled;
}

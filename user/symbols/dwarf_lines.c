// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dwarf_lines.c: inline frames and source lines of addresses, from DWARF (libdw), cached per
 * file and address. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "symbols/debug_file.h"
#include "symbols/demangle.h"
#include "symbols/dwarf_lines.h"
#include "symbols/symtab.h"
#include "util/log.h"
#include "util/util.h"

/* One frame as cached: the name is chosen at each lookup (--no-demangle may change). */
struct dbg_frame {
	const char *raw;       /* DWARF name, in the Dwarf's string data; NULL: none */
	const char *demangled; /* in dwarf_lines->names, or NULL when raw is not mangled */
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

/* The DWARF of one ELF file, and what was looked up in it. */
struct dwarf_lines {
	Dwarf *dw;    /* of the file itself or of dbg_elf */
	Elf *dbg_elf; /* the separate debug file, or NULL */
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

static void dwarf_lines__reset(struct dwarf_lines *dwl)
{
	struct dbg_addr *a, *atmp;
	struct dbg_name *n, *ntmp;

	HASH_ITER(hh, dwl->addrs, a, atmp) {
		HASH_DEL(dwl->addrs, a);
		free(a->frames);
		free(a);
	}
	HASH_ITER(hh, dwl->names, n, ntmp) {
		HASH_DEL(dwl->names, n);
		free(n->demangled);
		free(n);
	}
	free(dwl->cus);
	dwl->cus = NULL;
	dwl->cus_cnt = 0;
	dwl->cus_built = false;
	dwarf_end(dwl->dw);
	dwl->dw = NULL;
	/* After dw: libdw leaves an alt file given with dwarf_setalt() to its caller. */
	dwarf_end(dwl->alt_dw);
	dwl->alt_dw = NULL;
	elf_end(dwl->alt_elf);
	dwl->alt_elf = NULL;
	if (dwl->alt_fd >= 0)
		close(dwl->alt_fd);
	dwl->alt_fd = -1;
	elf_end(dwl->dbg_elf);
	dwl->dbg_elf = NULL;
	if (dwl->dbg_fd >= 0)
		close(dwl->dbg_fd);
	dwl->dbg_fd = -1;
}

void dwarf_lines__free(struct dwarf_lines *dwl)
{
	if (!dwl)
		return;
	dwarf_lines__reset(dwl);
	free(dwl);
}

/*
 * libdw opens the dwz alt file a DWARF names (.gnu_debugaltlink) when it first needs it, with
 * a plain open() (a FIFO there blocks for ever) and mmap (a truncation raises SIGBUS). So
 * dwl->dw gets its alt file opened our way (debug_file__open_alt(), dwarf_setalt()); a DWARF
 * whose alt file is not found is not used (its frames get symbol names). The .dwo files of
 * split units are opened the same way by libdw, but only for calls this file does not make
 * (a skeleton unit's subdie or integrated attributes): it reads skeletons' line tables only.
 * Returns whether dwl->dw can be used.
 */
static bool dwarf_lines__own_alt(struct dwarf_lines *dwl, Elf *elf, int elf_fd, const char *path)
{
	if (debug_file__open_alt(elf, elf_fd, dwl->dw, &dwl->alt_elf, &dwl->alt_fd)) {
		pr_debug("DWARF of %s not used: its dwz alt file (.gnu_debugaltlink) is missing",
			 path);
		return false;
	}
	if (!dwl->alt_elf)
		return true;
	dwl->alt_dw = dwarf_begin_elf(dwl->alt_elf, DWARF_C_READ, NULL);
	if (!dwl->alt_dw) {
		pr_debug("DWARF of %s not used: its dwz alt file: %s", path, dwarf_errmsg(-1));
		return false;
	}
	dwarf_setalt(dwl->dw, dwl->alt_dw);
	return true;
}

/* Opens the DWARF of elf: its own, else its separate debug file's. Leaves dwl->dw NULL if none. */
static void dwarf_lines__open_dw(struct dwarf_lines *dwl, Elf *elf, int elf_fd, const char *path,
				 const char *name)
{
	if (debug_file__has_dwarf(elf)) {
		dwl->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (dwl->dw) {
			if (!dwarf_lines__own_alt(dwl, elf, elf_fd, name))
				dwarf_lines__reset(dwl);
			return;
		}
	}
	dwl->dbg_elf = debug_file__open(elf, path, DEBUG_FILE_DWARF, &dwl->dbg_fd);
	if (!dwl->dbg_elf)
		return;
	dwl->dw = dwarf_begin_elf(dwl->dbg_elf, DWARF_C_READ, NULL);
	if (!dwl->dw)
		pr_debug("read DWARF of %s: %s", name, dwarf_errmsg(-1));
	if (!dwl->dw || !dwarf_lines__own_alt(dwl, dwl->dbg_elf, dwl->dbg_fd, name))
		dwarf_lines__reset(dwl);
}

struct dwarf_lines *dwarf_lines__open(Elf *elf, int elf_fd, const char *path, const char *name)
{
	struct dwarf_lines *dwl = calloc(1, sizeof(*dwl));

	if (!dwl)
		return NULL;
	dwl->dbg_fd = -1;
	dwl->alt_fd = -1;
	dwarf_lines__open_dw(dwl, elf, elf_fd, path, name);
	if (!dwl->dw) {
		dwarf_lines__free(dwl);
		errno = ENOENT;
		return NULL;
	}
	return dwl;
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/* The address ranges of every CU (DW_AT_low_pc/high_pc or DW_AT_ranges), sorted. */
static int cus_build(struct dwarf_lines *dwl)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Die cudie, *subdie = NULL;
	Dwarf_CU *cu = NULL;
	uint8_t unit_type;
	Dwarf_Half version;
	size_t cap = 0;
	ptrdiff_t off;

	dwl->cus_built = true;
	while (!dwarf_get_units(dwl->dw, cu, &cu, &version, &unit_type, &cudie, subdie)) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		for (off = 0; (off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0;) {
			if (lo >= hi)
				continue;
			if (array_grow((void **)&dwl->cus, &cap, dwl->cus_cnt + 1,
				       sizeof(*dwl->cus), 64))
				return -ENOMEM;
			dwl->cus[dwl->cus_cnt++] = (struct cu_range){
				.lo = lo,
				.hi = hi,
				.die_off = dwarf_dieoffset(&cudie),
			};
		}
	}
	if (dwl->cus_cnt)
		qsort(dwl->cus, dwl->cus_cnt, sizeof(*dwl->cus), cu_range_cmp);
	return 0;
}

/* The CU covering addr: .debug_aranges first, else the CUs' own ranges. */
static int cu_of(struct dwarf_lines *dwl, uint64_t addr, Dwarf_Die *cudie)
{
	size_t lo = 0, hi, i;
	int err;

	if (dwarf_addrdie(dwl->dw, addr, cudie))
		return 1;
	if (!dwl->cus_built) {
		err = cus_build(dwl);
		if (err)
			return err;
	}
	/* Ranges may overlap (bad DWARF): the last one starting at or below addr that holds it. */
	hi = dwl->cus_cnt;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dwl->cus[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;) {
		if (addr < dwl->cus[i].hi)
			return dwarf_offdie(dwl->dw, dwl->cus[i].die_off, cudie) ? 1 : 0;
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
static const char *demangled_name(struct dwarf_lines *dwl, const char *raw)
{
	struct dbg_name *n;

	if (!raw)
		return NULL;
	HASH_FIND_PTR(dwl->names, &raw, n);
	if (n)
		return n->demangled;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->raw = raw;
	n->demangled = demangle__name(raw);
	HASH_ADD_PTR(dwl->names, raw, n);
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
static int frames_build(struct dwarf_lines *dwl, struct symtab *st, struct dbg_addr *a)
{
	Dwarf_Die cudie, *scopes = NULL, *chain = NULL;
	Dwarf_Attribute attr;
	Dwarf_Word word;
	const char *file = NULL, *sym;
	uint32_t line = 0;
	int nscopes, nchain = 0, i, n = 0, err;
	struct dbg_frame *frames = NULL;
	bool real = false;
	Dwarf_Line *dl;
	uint64_t off;

	err = cu_of(dwl, a->addr, &cudie);
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
		f->demangled = demangled_name(dwl, f->raw);
		f->file = file;
		f->line = line;
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) {
			/* The symbol table's name when its symbol starts in this function. */
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
static const char *frame_name(struct symtab *st, const struct dbg_frame *f, uint64_t addr,
			      const char **raw)
{
	const char *name;

	*raw = NULL;
	if (f->from_symtab || !f->raw) {
		name = symtab__find_sym(st, addr, NULL, raw);
		if (name)
			return name;
	}
	if (!f->raw)
		return "[unknown]";
	*raw = f->raw;
	if (demangle__on() && f->demangled)
		return f->demangled;
	return f->raw;
}

int dwarf_lines__frames(struct dwarf_lines *dwl, struct symtab *st, uint64_t addr,
			struct src_frame *out, size_t cap)
{
	struct dbg_addr *a;
	size_t n, skip, i;
	int err;

	if (!dwl || !out || !cap)
		return -EINVAL;
	HASH_FIND(hh, dwl->addrs, &addr, sizeof(addr), a);
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->addr = addr;
		err = frames_build(dwl, st, a);
		if (err < 0) {
			free(a);
			return err;
		}
		HASH_ADD(hh, dwl->addrs, addr, sizeof(a->addr), a);
	}
	n = a->cnt < cap ? a->cnt : cap;
	skip = a->cnt - n;
	for (i = 0; i < n; i++) {
		const struct dbg_frame *f = &a->frames[skip + i];

		out[i].function = frame_name(st, f, addr, &out[i].system_name);
		out[i].file = f->file;
		out[i].line = f->line;
	}
	return n;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* symtab.c: sorted function symbol tables of ELF files (.symtab, .dynsym, a debug file's). */
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/debug_file.h"
#include "symbols/demangle.h"
#include "symbols/symtab.h"
#include "unwind/eh_frame.h"
#include "util/elf_read.h"
#include "util/util.h"

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
	uint16_t len;	  /* name's, at most BPFPROF_SYM_NAME_MAX */
	uint16_t shndx;
	uint8_t src;  /* index in symtab_builder->elfs */
	uint8_t pref; /* alias preference: lower wins (binding, then leading underscores) */
};

/* Most symbols a table keeps: a program's largest tables have a few hundred thousand functions,
 * and a candidate costs 32 bytes while building. Further symbols are left out. */
#define SYMTAB_SYMS_MAX (1u << 22)

/* Only the names that win are copied: most of a large table's names are aliases or locals. */
struct symtab_builder {
	struct sym_cand *cands;
	size_t cnt;
	size_t cap;
	Elf *elfs[2]; /* the file, and its debug file */
	char *plt_names; /* the "name@plt" strings the cands point at (builder__add_plt) */
};

/* Adds a candidate; name (len bytes, NUL-terminated) must live until builder__finish(). Past
 * SYMTAB_SYMS_MAX candidates, drops it. 0 or -ENOMEM. */
static int builder__add(struct symtab_builder *b, uint64_t addr, uint64_t size, const char *name,
			size_t len, uint16_t shndx, uint8_t src, unsigned int bind)
{
	struct sym_cand *c;
	uint8_t pref, under;

	if (b->cnt >= SYMTAB_SYMS_MAX || !len || len > BPFPROF_SYM_NAME_MAX)
		return 0;
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
	/* Reserved-namespace aliases (__libc_malloc vs malloc) are the less familiar name: the
	 * fewer leading underscores, the more public (as perf's choose_best_symbol()). */
	for (under = 0; under < 63 && name[under] == '_'; under++)
		;
	pref = pref * 64 + under;
	c = &b->cands[b->cnt++];
	c->addr = addr;
	c->size = size;
	c->name = name;
	c->len = len;
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

/* Adds the function symbols of one symbol table of b->elfs[src]. Returns how many, or -ENOMEM. */
static int builder__add_symtab(struct symtab_builder *b, uint8_t src, uint32_t type)
{
	Elf *elf = b->elfs[src];
	Elf_Data *syms, *strs;
	GElf_Ehdr ehdr;
	size_t i, nsyms, len;
	GElf_Sym sym;
	int added = 0;

	if (!gelf_getehdr(elf, &ehdr) || !elf_read__symbols(elf, type, &syms, &strs))
		return 0;
	/* Room for every symbol up front: growing a large table step by step costs copies. */
	nsyms = syms->d_size /
		(gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym));
	if (nsyms > SYMTAB_SYMS_MAX - b->cnt)
		nsyms = SYMTAB_SYMS_MAX - b->cnt;
	if (array_grow((void **)&b->cands, &b->cap, b->cnt + nsyms, sizeof(*b->cands), 256))
		return -ENOMEM;
	/* gelf_getsym() checks i against the data size: a short section just ends the loop. */
	for (i = 0; gelf_getsym(syms, i, &sym); i++) {
		unsigned int st_type = GELF_ST_TYPE(sym.st_info);
		uint64_t addr = sym.st_value;
		const char *name;

		if ((st_type != STT_FUNC && st_type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		/* Bounded: every symbol may name one unterminated region (elf_read__name()). */
		name = sym.st_name ? elf_read__name(strs->d_buf, strs->d_size, sym.st_name, &len) :
				     NULL;
		if (!name)
			continue;
		/* Thumb functions have bit 0 set in st_value; the code starts one byte lower. */
		if (ehdr.e_machine == EM_ARM)
			addr &= ~1ull;
		if (builder__add(b, addr, sym.st_size, name, len, sym.st_shndx, src,
				 GELF_ST_BIND(sym.st_info)))
			return -ENOMEM;
		added++;
	}
	return added;
}

/* x86-64 PLT entries are 16 bytes; PLT0, the lazy-binding stub, too (System V x86-64 psABI,
 * "Procedure Linkage Table"; binutils' -z ibtplt/IBT layout moves the entries to .plt.sec). */
#define X86_64_PLT_ENTRY_SZ 16
/* Bounds on what an untrusted file can make builder__add_plt() allocate: real programs have
 * thousands of PLT entries at most, and names far shorter. */
#define PLT_ENTRIES_MAX (1u << 20)
#define PLT_NAME_MAX	BPFPROF_SYM_NAME_MAX
#define PLT_NAMES_MAX	(64u << 20)

/* An allocated section by name, with its header; NULL when absent, empty or not loaded. */
static Elf_Scn *alloc_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = elf_read__section(elf, name);

	if (!scn || !gelf_getshdr(scn, shdr) || !(shdr->sh_flags & SHF_ALLOC) || !shdr->sh_size ||
	    shdr->sh_type == SHT_NOBITS)
		return NULL;
	return scn;
}

/*
 * Names the PLT, which has no symbols: on x86-64 each .rela.plt relocation's entry as
 * "name@plt" (in relocation order, as perf and objdump name them), and what is left of the
 * sections (.plt's PLT0 or the whole of it, .plt.sec, .plt.got) by the section's name. A
 * sample in the lazy-binding stub is then named, not an offset. Only b->elfs[0] (a debug
 * file's PLT is NOBITS). Returns how many symbols were added, or -ENOMEM.
 */
static int builder__add_plt(struct symtab_builder *b)
{
	GElf_Shdr plt, sec, got, rela, dynsym;
	Elf_Scn *plt_scn, *sec_scn, *rela_scn, *dynsym_scn;
	Elf *elf = b->elfs[0];
	Elf_Data *rel_data, *sym_data, *str_data;
	uint64_t first = 0, nrel = 0, i, at;
	size_t len = 0, strndx;
	bool entries = false;
	GElf_Ehdr ehdr;
	int added = 0;

	if (!gelf_getehdr(elf, &ehdr))
		return 0;
	plt_scn = alloc_section(elf, ".plt", &plt);
	sec_scn = alloc_section(elf, ".plt.sec", &sec);
	rela_scn = elf_read__section(elf, ".rela.plt");
	/* Entries: x86-64, a RELA section whose link is a usable symbol table. */
	if (ehdr.e_machine == EM_X86_64 && gelf_getclass(elf) == ELFCLASS64 && rela_scn &&
	    gelf_getshdr(rela_scn, &rela) &&
	    rela.sh_type == SHT_RELA && (rel_data = elf_getdata(rela_scn, NULL)) &&
	    (dynsym_scn = elf_getscn(elf, rela.sh_link)) && gelf_getshdr(dynsym_scn, &dynsym) &&
	    (dynsym.sh_type == SHT_DYNSYM || dynsym.sh_type == SHT_SYMTAB) &&
	    (sym_data = elf_getdata(dynsym_scn, NULL)) &&
	    (str_data = elf_getdata(elf_getscn(elf, dynsym.sh_link), NULL)) && str_data->d_buf) {
		nrel = rel_data->d_size / sizeof(Elf64_Rela);
		if (nrel > PLT_ENTRIES_MAX)
			nrel = 0;
		if (sec_scn && sec.sh_size >= nrel * X86_64_PLT_ENTRY_SZ) {
			first = sec.sh_addr;
			entries = nrel > 0;
		} else if (!sec_scn && plt_scn &&
			   plt.sh_size >= (nrel + 1) * X86_64_PLT_ENTRY_SZ) {
			first = plt.sh_addr + X86_64_PLT_ENTRY_SZ;
			entries = nrel > 0;
		}
	}
	strndx = entries ? dynsym.sh_link : 0;
	/* Two passes: the names' total length, then one buffer the candidates point into. */
	for (int pass = 0; entries && pass < 2; pass++) {
		char *out = b->plt_names;

		for (i = 0, at = first; i < nrel; i++, at += X86_64_PLT_ENTRY_SZ) {
			const char *name;
			GElf_Rela r;
			GElf_Sym sym;
			size_t n;

			/* IRELATIVE and other symbol-less entries stay unnamed (an offset in the
			 * file), as do names too long to be real. */
			if (!gelf_getrela(rel_data, i, &r) || !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(sym_data, GELF_R_SYM(r.r_info), &sym) || !sym.st_name ||
			    !(name = elf_strptr(elf, strndx, sym.st_name)) || !name[0])
				continue;
			n = strnlen(name, PLT_NAME_MAX) + sizeof("@plt");
			if (n > PLT_NAME_MAX)
				continue;
			if (!pass) {
				len += n;
				continue;
			}
			snprintf(out, n, "%s@plt", name);
			if (builder__add(b, at, X86_64_PLT_ENTRY_SZ, out, n - 1, SHN_UNDEF, 0,
					 STB_GLOBAL))
				return -ENOMEM;
			out += n;
			added++;
		}
		if (!pass) {
			if (!len || len > PLT_NAMES_MAX)
				break;
			free(b->plt_names);
			b->plt_names = malloc(len);
			if (!b->plt_names)
				return -ENOMEM;
		}
	}
	/* With entries in .plt, the section's own name goes to PLT0 only. */
	if (plt_scn) {
		if (builder__add(b, plt.sh_addr,
				 entries && !sec_scn ? X86_64_PLT_ENTRY_SZ : plt.sh_size, ".plt",
				 strlen(".plt"), SHN_UNDEF, 0, STB_LOCAL))
			return -ENOMEM;
		added++;
	}
	if (sec_scn && !entries) {
		if (builder__add(b, sec.sh_addr, sec.sh_size, ".plt.sec", strlen(".plt.sec"),
				 SHN_UNDEF, 0, STB_LOCAL))
			return -ENOMEM;
		added++;
	}
	if (alloc_section(elf, ".plt.got", &got)) {
		if (builder__add(b, got.sh_addr, got.sh_size, ".plt.got", strlen(".plt.got"),
				 SHN_UNDEF, 0, STB_LOCAL))
			return -ENOMEM;
		added++;
	}
	return added;
}

/* By address only: which alias names an address is group_winner()'s, in one pass. */
static inline bool cand_before(const struct sym_cand *x, const struct sym_cand *y)
{
	return x->addr < y->addr;
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

/*
 * The candidate of the aliases cands[i, j) (one address) whose name the symbol gets: the
 * preferred binding and fewest leading underscores (pref), then the shortest name, then the
 * smallest, so that every run picks the same alias. The shortest is the undecorated one: glibc
 * 2.41's clone3 is only LOCAL "__clone3" and its internal alias "__GI___clone3" (2.36 had a
 * LOCAL "clone3" too), "free" beats the obsolete "cfree". One comparison per alias, of names
 * at most BPFPROF_SYM_NAME_MAX long.
 */
static size_t group_winner(const struct sym_cand *cands, size_t i, size_t j)
{
	const struct sym_cand *k, *w = &cands[i];
	size_t n;

	for (n = i + 1; n < j; n++) {
		k = &cands[n];
		if (k->pref != w->pref ? k->pref < w->pref :
		    k->len != w->len   ? k->len < w->len :
					 k->name != w->name && strcmp(k->name, w->name) < 0)
			w = k;
	}
	return w - cands;
}

/* The end of the symbol at cands[i, j)'s address: the largest size any alias gives, else up to
 * the next symbol (cands[j]) within the aliases' section. */
static uint64_t group_end(const struct symtab_builder *b, size_t i, size_t j)
{
	const struct sym_cand *cands = b->cands;
	uint64_t addr = cands[i].addr, end = 0, sec_end = 0, next, e;
	size_t k;

	for (k = i; k < j; k++) {
		e = addr + cands[k].size < addr ? UINT64_MAX : addr + cands[k].size;
		if (cands[k].size && e > end)
			end = e;
	}
	if (end)
		return end;
	for (k = i; k < j; k++) {
		e = section_end(b->elfs[cands[k].src], cands[k].shndx);
		if (e > sec_end)
			sec_end = e;
	}
	next = j < b->cnt ? cands[j].addr : UINT64_MAX;
	if (sec_end > addr)
		return next < sec_end ? next : sec_end;
	return next != UINT64_MAX ? next : addr + 1;
}

/* A symbol's name while the table is built: [start, end) in the memory it was read from (end
 * is its NUL), for symbol sym. */
struct name_ref {
	uintptr_t end;
	uintptr_t start;
	size_t sym;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Copies the names of refs[0, n) into one buffer (*names, the caller frees it) and sets each
 * symbol's offset in it. Names are interned by where they end: the names that end at one NUL
 * of a string table (one name, or suffixes of it, as linkers merge them) share the copy of the
 * longest. A table's NULs cut it into disjoint names, so the copy is never larger than the
 * string tables read, whatever a crafted file's symbols point at. 0 or -ENOMEM.
 */
static int names_intern(struct name_ref *refs, size_t n, struct sym *syms, char **names)
{
	size_t i, j, len, total = 0;
	char *buf;

	qsort(refs, n, sizeof(*refs), name_ref_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && refs[j].end == refs[i].end; j++)
			;
		total += refs[i].end - refs[i].start + 1;
	}
	if (total > UINT32_MAX)
		return -ENOMEM;
	buf = malloc(total ? total : 1);
	if (!buf)
		return -ENOMEM;
	total = 0;
	for (i = 0; i < n; i = j) {
		len = refs[i].end - refs[i].start;
		memcpy(buf + total, (const char *)refs[i].start, len);
		buf[total + len] = '\0';
		for (j = i; j < n && refs[j].end == refs[i].end; j++)
			syms[refs[j].sym].name = total + (refs[j].start - refs[i].start);
		total += len + 1;
	}
	*names = buf;
	return 0;
}

/* (Re)builds st from the candidates: one entry per address, ends, nesting links, names. */
static int builder__finish(struct symtab_builder *b, struct symtab *st)
{
	const struct sym_cand *cands = b->cands, *c;
	size_t i, j, n = 0, depth = 0;
	struct name_ref *refs = NULL;
	struct sym *syms = NULL;
	int32_t *stack = NULL;
	char *names = NULL;
	int err = 0;

	if (b->cnt > INT32_MAX)
		return -ENOMEM;
	cands_sort(b->cands, b->cnt);
	for (i = 0; i < b->cnt; i++) {
		if (!i || cands[i].addr != cands[i - 1].addr)
			n++;
	}
	if (n) {
		syms = calloc(n, sizeof(*syms));
		stack = malloc(n * sizeof(*stack));
		refs = malloc(n * sizeof(*refs));
		if (!syms || !stack || !refs) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	for (i = 0, n = 0; i < b->cnt; i = j, n++) {
		for (j = i + 1; j < b->cnt && cands[j].addr == cands[i].addr; j++)
			;
		c = &cands[group_winner(cands, i, j)];
		syms[n].start = c->addr;
		syms[n].end = group_end(b, i, j);
		refs[n] = (struct name_ref){ (uintptr_t)(c->name + c->len), (uintptr_t)c->name, n };
	}
	err = n ? names_intern(refs, n, syms, &names) : 0;
	if (err)
		goto cleanup;
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
	free(refs);
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

/* Walks .eh_frame for the FDE covering addr, for its [initial_location, +address_range). */
static int eh_frame_fde_range(Elf *elf, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Scn *scn = elf_read__section(elf, ".eh_frame");
	struct eh_frame_cie cie = { .off = (Dwarf_Off)-1 };
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry ent;
	uint64_t start, len;
	Elf_Data *data;
	GElf_Shdr shdr;
	int ret;

	if (!scn || !ident || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -ENOENT;
	for (;; off = next) {
		next = 0;
		ret = dwarf_next_cfi(ident, data, true, off, &next, &ent);
		if (ret > 0 || next <= off)
			break;
		/* libdw sets next past some bad entries: the rest can still be read. */
		if (ret < 0 || dwarf_cfi_cie_p(&ent))
			continue;
		if (eh_frame__fde_range(ident, data, true, shdr.sh_addr, &ent.fde, &cie, &start,
					&len))
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

static const struct symtab_source *sources[4]; /* symtab__add_source() */
static size_t sources_cnt;

int symtab__add_source(const struct symtab_source *src)
{
	size_t i;

	for (i = 0; i < sources_cnt; i++)
		if (sources[i] == src)
			return 0;
	if (sources_cnt >= sizeof(sources) / sizeof(sources[0]))
		return -ENOSPC;
	sources[sources_cnt++] = src;
	return 0;
}

const struct symtab_source *const *symtab__sources(size_t *cnt)
{
	*cnt = sources_cnt;
	return sources;
}

static int builder__add_source(void *ctx, uint64_t start, uint64_t size, const char *name)
{
	/* A source bounds its names by BPFPROF_SYM_NAME_MAX. */
	return builder__add(ctx, start, size, name, strnlen(name, BPFPROF_SYM_NAME_MAX + 1),
			    SHN_UNDEF, 0, STB_GLOBAL);
}

struct symtab *symtab__new(Elf *elf, const char *path)
{
	struct symtab_builder b = {};
	struct symtab *st;
	Elf *dbg = NULL;
	int dbg_fd = -1, err = 0, n;
	bool full; /* a .symtab gave symbols */
	uint64_t lo, hi;
	GElf_Ehdr ehdr;
	size_t i;

	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		goto cleanup;

	b.elfs[0] = elf;
	n = builder__add_symtab(&b, 0, SHT_SYMTAB);
	full = n > 0;
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
		full |= n > 0;
	}
	/* A binary without .symtab (a Go one linked -ldflags='-s -w'; a cgo one keeps a .dynsym
	 * of its C side's exports): its runtime's own function table names its functions. */
	for (i = 0; !full && i < sources_cnt; i++) {
		if (!sources[i]->functions)
			continue;
		n = sources[i]->functions(elf, builder__add_source, &b);
		if (n == -ENOMEM) {
			err = n;
			goto cleanup;
		}
	}
	n = builder__add_plt(&b);
	if (n < 0) {
		err = n;
		goto cleanup;
	}
	err = builder__finish(&b, st);
	if (err)
		goto cleanup;

	if (ehdr.e_entry && !symtab__lookup(st, ehdr.e_entry) &&
	    (!entry_range(elf, ehdr.e_entry, &lo, &hi) ||
	     !entry_range_no_cfi(st, ehdr.e_entry, &lo, &hi))) {
		err = builder__add(&b, lo, hi - lo, "_start", strlen("_start"), SHN_UNDEF, 0,
				   STB_GLOBAL);
		if (!err)
			err = builder__finish(&b, st);
		if (err)
			goto cleanup;
	}

cleanup:
	free(b.cands);
	free(b.plt_names);
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

/* demangle__name() of a symbol, a PLT entry's ("name@plt") as its name with the suffix kept,
 * as perf shows them (a demangler would take the suffix for trailing junk and drop it). */
static char *demangle_sym(const char *raw)
{
	size_t n = strlen(raw), len;
	char *base, *d, *out;

	if (n <= 4 || strcmp(raw + n - 4, "@plt"))
		return demangle__name(raw);
	base = strndup(raw, n - 4);
	if (!base)
		return NULL;
	d = demangle__name(base);
	free(base);
	if (!d)
		return NULL;
	len = strlen(d) + sizeof("@plt");
	out = malloc(len);
	if (out)
		snprintf(out, len, "%s@plt", d);
	free(d);
	return out;
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
	if (!demangle__on())
		return raw;
	/* Demangling is slow and most symbols are never hit: do it once, on first use. */
	if (!s->demangled) {
		s->demangled = demangle_sym(raw);
		if (!s->demangled)
			s->demangled = raw;
	}
	return s->demangled;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* vmstructs.c: HotSpot's VMStructs tables read from a libjvm.so file (see vmstructs.h). */
#include <errno.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/jvm/vmstructs.h"
#include "util/elf_read.h"
#include "util/util.h"

/* vmStructs.hpp's VMStructEntry, VMTypeEntry, VMIntConstantEntry, VMLongConstantEntry on LP64:
 * pointers and uint64_t 8 bytes, int32_t 4, each struct padded to 8. */
const struct vmstructs_layout VMSTRUCTS_LAYOUT_LP64 = {
	.struct_stride = 48,
	.struct_type_name = 0,
	.struct_field_name = 8,
	.struct_type_string = 16,
	.struct_is_static = 24,
	.struct_offset = 32,
	.struct_address = 40,
	.type_stride = 40,
	.type_type_name = 0,
	.type_superclass_name = 8,
	.type_is_oop_type = 16,
	.type_is_integer_type = 20,
	.type_is_unsigned = 24,
	.type_size = 32,
	.int_stride = 16,
	.int_name = 0,
	.int_value = 8,
	.long_stride = 16,
	.long_name = 0,
	.long_value = 8,
};

enum { T_STRUCTS, T_TYPES, T_INTS, T_LONGS, T_NR };

static const char *const table_sym[T_NR] = {
	"gHotSpotVMStructs",
	"gHotSpotVMTypes",
	"gHotSpotVMIntConstants",
	"gHotSpotVMLongConstants",
};

/* One entry: its names as offsets in the pool (field: UINT32_MAX but in T_STRUCTS), value the
 * offset, address (is_static), size or constant. */
struct vm_entry {
	uint32_t type, field;
	bool is_static;
	uint64_t value;
};

struct vmstructs {
	char *pool; /* the names, NUL-terminated, one after the other */
	size_t pool_len, pool_cap;
	struct vm_entry *e[T_NR]; /* sorted by (type, field) once read */
	size_t n[T_NR], cap[T_NR];
	unsigned int major;
	char release[64];   /* "" when not known */
	bool offsets_known; /* the non-static offsets are HotSpot's (not a file's zeros) */
};

/* A section with file bytes. */
struct fsec {
	uint64_t addr, size;
	const uint8_t *data;
};

/* A relocated pointer: at vaddr off, value val (known false: against an undefined symbol). */
struct frel {
	uint64_t off, val;
	bool known;
};

struct file {
	Elf *elf;
	struct fsec *sec;
	size_t nsec;
	struct frel *rel;
	size_t nrel;
	vmstructs_read_fn read; /* the process's memory, or NULL */
	void *ctx;
	bool have_bias;
	uint64_t bias; /* the process's pointers minus the file's */
	char *why;
	size_t why_sz;
};

/* why (why_sz bytes: none when 0) says what fmt does, NUL-terminated. */
__attribute__((format(printf, 3, 4))) static void fail(char *why, size_t why_sz, const char *fmt,
						       ...)
{
	va_list ap;

	if (why_sz) {
		va_start(ap, fmt);
		vsnprintf(why, why_sz, fmt, ap);
		va_end(ap);
	}
}

/* The len bytes at vaddr, inside one section with file bytes, or NULL. */
static const uint8_t *file_bytes(const struct file *f, uint64_t vaddr, uint64_t len)
{
	size_t i;

	for (i = 0; i < f->nsec; i++) {
		const struct fsec *s = &f->sec[i];

		if (vaddr >= s->addr && vaddr - s->addr < s->size &&
		    len <= s->size - (vaddr - s->addr))
			return s->data + (vaddr - s->addr);
	}
	return NULL;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v)); /* x86-64 and aarch64 files: little-endian, checked */
	return v;
}

static int32_t le32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct frel *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The relocation at vaddr off, or NULL. */
static const struct frel *find_rel(const struct file *f, uint64_t off)
{
	size_t lo = 0, hi = f->nrel;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->rel[mid].off == off)
			return &f->rel[mid];
		if (f->rel[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The pointer at vaddr: its relocation's value, else the file's bytes. -EINVAL when it is
 * outside the file's bytes or relocated against an undefined symbol. */
static int read_ptr(const struct file *f, uint64_t vaddr, uint64_t *val)
{
	const uint8_t *p = file_bytes(f, vaddr, 8);
	const struct frel *r;

	if (!p)
		return -EINVAL;
	r = find_rel(f, vaddr);
	if (r && !r->known)
		return -EINVAL;
	*val = r ? r->val : le64(p);
	return 0;
}

/* The name at vaddr, NUL-terminated within VMSTRUCTS_NAME_MAX + 1 bytes of one section; its
 * length in *len. NULL when not. */
static const char *read_name(const struct file *f, uint64_t vaddr, size_t *len)
{
	size_t i;

	for (i = 0; i < f->nsec; i++) {
		const struct fsec *s = &f->sec[i];
		const char *p, *nul;
		uint64_t avail;

		if (vaddr < s->addr || vaddr - s->addr >= s->size)
			continue;
		p = (const char *)s->data + (vaddr - s->addr);
		avail = min_t(uint64_t, s->size - (vaddr - s->addr), VMSTRUCTS_NAME_MAX + 1);
		nul = memchr(p, 0, avail);
		if (!nul)
			return NULL;
		*len = nul - p;
		return p;
	}
	return NULL;
}

/* The sections with file bytes, and the relocations of pointers (RELATIVE, 64/ABS64), of
 * f->elf, sorted by offset. */
static int file_open(struct file *f, bool aarch64)
{
	uint32_t t_rel = aarch64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
	uint32_t t_abs = aarch64 ? R_AARCH64_ABS64 : R_X86_64_64;
	Elf_Scn *scn = NULL;
	size_t cap = 0, rcap = 0;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		/* code holds no table nor name: not read (libjvm's .text is 14 MB) */
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & (SHF_COMPRESSED | SHF_EXECINSTR)) || sh.sh_type == SHT_NOBITS ||
		    !sh.sh_size || sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		if (f->nsec == cap) {
			struct fsec *n;

			cap = cap ? 2 * cap : 32;
			n = realloc(f->sec, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			f->sec = n;
		}
		f->sec[f->nsec++] = (struct fsec){ sh.sh_addr, sh.sh_size, d->d_buf };
	}
	scn = NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		Elf_Data *d, *syms = NULL;
		Elf_Scn *symscn;
		GElf_Shdr sh;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		symscn = sh.sh_link ? elf_getscn(f->elf, sh.sh_link) : NULL;
		if (symscn)
			syms = elf_getdata(symscn, NULL);
		n = d->d_size / sizeof(Elf64_Rela);
		for (i = 0; i < n; i++) {
			struct frel r = { 0 };
			GElf_Rela ra;
			uint32_t type;

			if (!gelf_getrela(d, i, &ra))
				continue;
			type = GELF_R_TYPE(ra.r_info);
			r.off = ra.r_offset;
			if (type == t_rel) {
				r.val = ra.r_addend;
				r.known = true;
			} else if (type == t_abs) {
				GElf_Sym sym;

				r.known = syms && gelf_getsym(syms, GELF_R_SYM(ra.r_info), &sym) &&
					  sym.st_shndx != SHN_UNDEF;
				if (r.known)
					r.val = sym.st_value + ra.r_addend;
			} else {
				continue;
			}
			if (f->nrel == rcap) {
				struct frel *nr;

				rcap = rcap ? 2 * rcap : 1024;
				nr = realloc(f->rel, rcap * sizeof(*nr));
				if (!nr)
					return -ENOMEM;
				f->rel = nr;
			}
			f->rel[f->nrel++] = r;
		}
	}
	if (f->nrel)
		qsort(f->rel, f->nrel, sizeof(*f->rel), cmp_rel);
	return 0;
}

static void file_close(struct file *f)
{
	free(f->sec);
	free(f->rel);
}

/* The symbol called name (.dynsym, else .symtab), defined: true and *sym. */
static bool find_sym(Elf *elf, const char *name, GElf_Sym *sym)
{
	static const uint32_t types[] = { SHT_DYNSYM, SHT_SYMTAB };
	size_t i, t, n, len = strlen(name) + 1;
	Elf_Data *syms, *strs;

	for (t = 0; t < ARRAY_SIZE(types); t++) {
		if (!elf_read__symbols(elf, types[t], &syms, &strs))
			continue;
		n = syms->d_size / sizeof(Elf64_Sym);
		for (i = 1; i < n; i++) {
			if (!gelf_getsym(syms, i, sym) || sym->st_shndx == SHN_UNDEF ||
			    sym->st_name >= strs->d_size || strs->d_size - sym->st_name < len)
				continue;
			if (!memcmp((const char *)strs->d_buf + sym->st_name, name, len))
				return true;
		}
	}
	return false;
}

/* The layout from the gHotSpotVM* symbols' values: the process's (f->read), else the file's
 * where it has them, VMSTRUCTS_LAYOUT_LP64 where not (HotSpot's file: they are in .bss). */
static int file_layout(struct file *f, struct vmstructs_layout *l)
{
	static const struct {
		const char *sym;
		size_t off;
	} m[] = {
#define L(s, member) { "gHotSpotVM" s, offsetof(struct vmstructs_layout, member) }
		L("StructEntryArrayStride", struct_stride),
		L("StructEntryTypeNameOffset", struct_type_name),
		L("StructEntryFieldNameOffset", struct_field_name),
		L("StructEntryTypeStringOffset", struct_type_string),
		L("StructEntryIsStaticOffset", struct_is_static),
		L("StructEntryOffsetOffset", struct_offset),
		L("StructEntryAddressOffset", struct_address),
		L("TypeEntryArrayStride", type_stride),
		L("TypeEntryTypeNameOffset", type_type_name),
		L("TypeEntrySuperclassNameOffset", type_superclass_name),
		L("TypeEntryIsOopTypeOffset", type_is_oop_type),
		L("TypeEntryIsIntegerTypeOffset", type_is_integer_type),
		L("TypeEntryIsUnsignedOffset", type_is_unsigned),
		L("TypeEntrySizeOffset", type_size),
		L("IntConstantEntryArrayStride", int_stride),
		L("IntConstantEntryNameOffset", int_name),
		L("IntConstantEntryValueOffset", int_value),
		L("LongConstantEntryArrayStride", long_stride),
		L("LongConstantEntryNameOffset", long_name),
		L("LongConstantEntryValueOffset", long_value),
#undef L
	};
	size_t i;

	*l = VMSTRUCTS_LAYOUT_LP64;
	for (i = 0; i < ARRAY_SIZE(m); i++) {
		const uint8_t *p;
		GElf_Sym sym;

		if (!find_sym(f->elf, m[i].sym, &sym)) {
			if (!f->read)
				continue;
			fail(f->why, f->why_sz, "no symbol %s", m[i].sym);
			return -ENOENT;
		}
		if (f->read) {
			int err = f->read(f->ctx, sym.st_value, (char *)l + m[i].off,
					  sizeof(uint64_t));

			if (err) {
				fail(f->why, f->why_sz, "%s: unreadable in the process", m[i].sym);
				return err < 0 ? err : -EIO;
			}
			continue;
		}
		p = file_bytes(f, sym.st_value, 8);
		if (p)
			memcpy((char *)l + m[i].off, p, sizeof(uint64_t));
	}
	return 0;
}

/* Each member (offset, size) of a table's entry inside its stride. */
static int check_layout(const struct vmstructs_layout *l, char *why, size_t why_sz)
{
	static const struct {
		const char *name;
		size_t stride, off;
		uint64_t size;
	} m[] = {
#define M(n, s, o, z) \
	{ n, offsetof(struct vmstructs_layout, s), offsetof(struct vmstructs_layout, o), z }
		M("VMStructEntry.typeName", struct_stride, struct_type_name, 8),
		M("VMStructEntry.fieldName", struct_stride, struct_field_name, 8),
		M("VMStructEntry.typeString", struct_stride, struct_type_string, 8),
		M("VMStructEntry.isStatic", struct_stride, struct_is_static, 4),
		M("VMStructEntry.offset", struct_stride, struct_offset, 8),
		M("VMStructEntry.address", struct_stride, struct_address, 8),
		M("VMTypeEntry.typeName", type_stride, type_type_name, 8),
		M("VMTypeEntry.superclassName", type_stride, type_superclass_name, 8),
		M("VMTypeEntry.isOopType", type_stride, type_is_oop_type, 4),
		M("VMTypeEntry.isIntegerType", type_stride, type_is_integer_type, 4),
		M("VMTypeEntry.isUnsigned", type_stride, type_is_unsigned, 4),
		M("VMTypeEntry.size", type_stride, type_size, 8),
		M("VMIntConstantEntry.name", int_stride, int_name, 8),
		M("VMIntConstantEntry.value", int_stride, int_value, 4),
		M("VMLongConstantEntry.name", long_stride, long_name, 8),
		M("VMLongConstantEntry.value", long_stride, long_value, 8),
#undef M
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(m); i++) {
		uint64_t stride, off;

		memcpy(&stride, (const char *)l + m[i].stride, sizeof(stride));
		memcpy(&off, (const char *)l + m[i].off, sizeof(off));
		if (!stride || stride > VMSTRUCTS_STRIDE_MAX) {
			fail(why, why_sz, "%s: stride %llu outside 1..%u", m[i].name,
			     (unsigned long long)stride, VMSTRUCTS_STRIDE_MAX);
			return -EINVAL;
		}
		if (off > stride || m[i].size > stride - off) {
			fail(why, why_sz, "%s: offset %llu + %llu past the stride %llu", m[i].name,
			     (unsigned long long)off, (unsigned long long)m[i].size,
			     (unsigned long long)stride);
			return -EINVAL;
		}
	}
	return 0;
}

/* Copies name (len bytes) into the pool: its offset in *at. */
static int pool_add(struct vmstructs *vs, const char *name, size_t len, uint32_t *at)
{
	if (vs->pool_cap - vs->pool_len < len + 1) {
		size_t cap = vs->pool_cap ? 2 * vs->pool_cap : 64 * 1024;
		char *n;

		while (cap - vs->pool_len < len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		n = realloc(vs->pool, cap);
		if (!n)
			return -ENOMEM;
		vs->pool = n;
		vs->pool_cap = cap;
	}
	memcpy(vs->pool + vs->pool_len, name, len);
	vs->pool[vs->pool_len + len] = 0;
	*at = vs->pool_len;
	vs->pool_len += len + 1;
	return 0;
}

/* The name whose pointer is at vaddr (NULL allowed when null_ok: *at UINT32_MAX, *is_null),
 * copied into the pool unless at is NULL (checked only). */
static int entry_name(struct file *f, struct vmstructs *vs, const char *what, size_t idx,
		      uint64_t vaddr, bool null_ok, uint32_t *at, bool *is_null)
{
	uint64_t p;
	const char *s;
	size_t len;

	if (is_null)
		*is_null = false;
	if (read_ptr(f, vaddr, &p)) {
		fail(f->why, f->why_sz, "%s[%zu]: unreadable pointer at %#llx", what, idx,
		     (unsigned long long)vaddr);
		return -EINVAL;
	}
	if (!p) {
		if (is_null)
			*is_null = true;
		if (at)
			*at = UINT32_MAX;
		if (null_ok)
			return 0;
		fail(f->why, f->why_sz, "%s[%zu]: NULL name", what, idx);
		return -EINVAL;
	}
	s = read_name(f, p, &len);
	if (!s) {
		fail(f->why, f->why_sz,
		     "%s[%zu]: name at %#llx outside the file's sections or unterminated within %u "
		     "bytes",
		     what, idx, (unsigned long long)p, VMSTRUCTS_NAME_MAX);
		return -EINVAL;
	}
	return at ? pool_add(vs, s, len, at) : 0;
}

static int add_entry(struct vmstructs *vs, int t, const struct vm_entry *e)
{
	if (vs->n[t] == vs->cap[t]) {
		size_t cap = vs->cap[t] ? 2 * vs->cap[t] : 512;
		struct vm_entry *n = realloc(vs->e[t], cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vs->e[t] = n;
		vs->cap[t] = cap;
	}
	vs->e[t][vs->n[t]++] = *e;
	return 0;
}

/*
 * The process's pointer mp where the file has fp (mem: the entry's bytes in the process, off
 * the pointer's offset in them): both NULL, or mp - fp the same for every pointer of every
 * table (the bias of the process's mapping of this file). Else the process's table is not the
 * file's: -EINVAL.
 */
static int same_ptr(struct file *f, const char *what, size_t idx, const uint8_t *mem, uint64_t off,
		    uint64_t fp)
{
	uint64_t mp = le64(mem + off);

	if (!mp && !fp)
		return 0;
	if (mp && fp && !f->have_bias) {
		f->bias = mp - fp;
		f->have_bias = true;
	}
	if (!mp || !fp || mp - fp != f->bias) {
		fail(f->why, f->why_sz,
		     "%s[%zu]: the process's pointer %#llx is not the file's %#llx", what, idx,
		     (unsigned long long)mp, (unsigned long long)fp);
		return -EINVAL;
	}
	return 0;
}

/* The file's pointer at vaddr (0 when unreadable: entry_name() said so already). */
static uint64_t file_ptr(const struct file *f, uint64_t vaddr)
{
	uint64_t p;

	return read_ptr(f, vaddr, &p) ? 0 : p;
}

/* Reads table t, whose array the symbol table_sym[t] points to. */
static int read_table(struct file *f, struct vmstructs *vs, const struct vmstructs_layout *l, int t)
{
	uint64_t stride, name_off, base, i;
	const char *what = table_sym[t];
	GElf_Sym sym;
	int err;

	stride = t == T_STRUCTS ? l->struct_stride :
		 t == T_TYPES	? l->type_stride :
		 t == T_INTS	? l->int_stride :
				  l->long_stride;
	name_off = t == T_STRUCTS ? l->struct_type_name :
		   t == T_TYPES	  ? l->type_type_name :
		   t == T_INTS	  ? l->int_name :
				    l->long_name;
	if (!find_sym(f->elf, what, &sym)) {
		fail(f->why, f->why_sz, "no symbol %s: not a HotSpot libjvm", what);
		return -ENOENT;
	}
	if (read_ptr(f, sym.st_value, &base) || !base) {
		fail(f->why, f->why_sz, "%s at %#llx: no array in the file", what,
		     (unsigned long long)sym.st_value);
		return -EINVAL;
	}
	for (i = 0; i < VMSTRUCTS_ENTRIES_MAX; i++) {
		uint64_t at = base + i * stride;
		struct vm_entry e = { .field = UINT32_MAX };
		const uint8_t *p = at < base ? NULL : file_bytes(f, at, stride);
		uint8_t mem[VMSTRUCTS_STRIDE_MAX];
		bool end;

		if (!p) {
			fail(f->why, f->why_sz, "%s[%llu] at %#llx outside the file's sections",
			     what, (unsigned long long)i, (unsigned long long)at);
			return -EINVAL;
		}
		err = entry_name(f, vs, what, i, at + name_off, true, &e.type, &end);
		if (err)
			return err;
		if (f->read) {
			/* the values from the process; its names must be the file's */
			err = f->read(f->ctx, at, mem, stride);
			if (err) {
				fail(f->why, f->why_sz,
				     "%s[%llu] at %#llx: unreadable in the process", what,
				     (unsigned long long)i, (unsigned long long)at);
				return err < 0 ? err : -EIO;
			}
			err = same_ptr(f, what, i, mem, name_off, file_ptr(f, at + name_off));
			if (err)
				return err;
			p = mem;
		}
		if (end)
			return 0;
		switch (t) {
		case T_STRUCTS:
			err = entry_name(f, vs, what, i, at + l->struct_field_name, false, &e.field,
					 NULL);
			if (!err)
				err = entry_name(f, vs, what, i, at + l->struct_type_string, true,
						 NULL, NULL);
			if (!err && f->read)
				err = same_ptr(f, what, i, mem, l->struct_field_name,
					       file_ptr(f, at + l->struct_field_name));
			if (err)
				return err;
			e.is_static = le32(p + l->struct_is_static) != 0;
			if (!e.is_static) {
				e.value = le64(p + l->struct_offset);
			} else if (read_ptr(f, at + l->struct_address, &e.value)) {
				fail(f->why, f->why_sz, "%s[%llu]: unreadable address", what,
				     (unsigned long long)i);
				return -EINVAL;
			} else if (f->read) {
				/* the process's address, as a file vaddr: the file's where it has
				 * one (a static's address is a link-time constant) */
				uint64_t ma = le64(mem + l->struct_address);

				if (e.value && ma - f->bias != e.value) {
					fail(f->why, f->why_sz,
					     "%s[%llu]: the process's address %#llx is not the "
					     "file's %#llx",
					     what, (unsigned long long)i, (unsigned long long)ma,
					     (unsigned long long)e.value);
					return -EINVAL;
				}
				e.value = ma ? ma - f->bias : 0;
			}
			if (!e.is_static && e.value)
				vs->offsets_known = true;
			break;
		case T_TYPES:
			err = entry_name(f, vs, what, i, at + l->type_superclass_name, true, NULL,
					 NULL);
			if (err)
				return err;
			e.value = le64(p + l->type_size);
			break;
		case T_INTS:
			e.value = (uint64_t)(int64_t)le32(p + l->int_value);
			break;
		default:
			e.value = le64(p + l->long_value);
			break;
		}
		err = add_entry(vs, t, &e);
		if (err)
			return err;
	}
	fail(f->why, f->why_sz, "%s: no NULL entry within %u entries", what, VMSTRUCTS_ENTRIES_MAX);
	return -E2BIG;
}

static int cmp_key(const char *pool, const struct vm_entry *e, const char *type, const char *field)
{
	int c = strcmp(type, pool + e->type);

	if (c || !field)
		return c;
	return strcmp(field, e->field == UINT32_MAX ? "" : pool + e->field);
}

static int cmp_entry(const void *a, const void *b, void *pool)
{
	const struct vm_entry *y = b;

	/* cmp_key compares its key (b) with its entry (a): the opposite sign */
	return -cmp_key(pool, a, (const char *)pool + y->type,
			y->field == UINT32_MAX ? NULL : (const char *)pool + y->field);
}

/* Sorts table t by (type, field), for lookup()'s binary search. */
static void sort_table(struct vmstructs *vs, int t)
{
	if (vs->n[t] > 1)
		qsort_r(vs->e[t], vs->n[t], sizeof(*vs->e[t]), cmp_entry, vs->pool);
}

/* The entry of table t for (type, field) (field NULL but in T_STRUCTS), or NULL. */
static const struct vm_entry *lookup(const struct vmstructs *vs, int t, const char *type,
				     const char *field)
{
	size_t lo = 0, hi = vs->n[t];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_key(vs->pool, &vs->e[t][mid], type, field);

		if (!c)
			return &vs->e[t][mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/*
 * Abstract_VM_Version::_vm_major_version (an int, initialized data): the process's, else the
 * file's. With the process, the release string too: Abstract_VM_Version::_s_vm_release, set
 * at run time to the file's VM_RELEASE literal (a pointer into the file, bias removed), read
 * from the file; kept only when printable.
 */
static void read_version(struct file *f, struct vmstructs *vs)
{
	const uint8_t *p;
	const char *name;
	uint64_t a, ptr;
	int32_t v = 0;
	size_t len, i;

	if (!vmstructs__static(vs, "Abstract_VM_Version", "_vm_major_version", &a)) {
		if (f->read) {
			if (f->read(f->ctx, a, &v, sizeof(v)))
				v = 0;
		} else if ((p = file_bytes(f, a, 4))) {
			v = le32(p);
		}
		if (v > 0 && v < 1000)
			vs->major = v;
	}
	if (!f->read || !f->have_bias ||
	    vmstructs__static(vs, "Abstract_VM_Version", "_s_vm_release", &a) ||
	    f->read(f->ctx, a, &ptr, sizeof(ptr)) || !ptr ||
	    !(name = read_name(f, ptr - f->bias, &len)) || !len || len >= sizeof(vs->release))
		return;
	for (i = 0; i < len; i++)
		if (name[i] <= ' ' || name[i] > '~')
			return;
	memcpy(vs->release, name, len);
	vs->release[len] = 0;
}

int vmstructs__from_elf(Elf *elf, vmstructs_read_fn read, void *ctx, struct vmstructs **out,
			char *why, size_t why_sz)
{
	struct file f = { .elf = elf, .read = read, .ctx = ctx, .why = why, .why_sz = why_sz };
	struct vmstructs_layout l;
	struct vmstructs *vs;
	GElf_Ehdr eh;
	int t, err;

	*out = NULL;
	fail(why, why_sz, "%s", "");
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64)) {
		fail(why, why_sz, "%s", "not a 64-bit little-endian x86-64 or aarch64 ELF file");
		return -EINVAL;
	}
	vs = calloc(1, sizeof(*vs));
	if (!vs)
		return -ENOMEM;
	err = file_open(&f, eh.e_machine == EM_AARCH64);
	if (err)
		goto out;
	err = file_layout(&f, &l);
	if (!err)
		err = check_layout(&l, why, why_sz);
	for (t = 0; !err && t < T_NR; t++)
		err = read_table(&f, vs, &l, t);
	if (!err) {
		for (t = 0; t < T_NR; t++)
			sort_table(vs, t);
		if (read)
			vs->offsets_known = true;
		read_version(&f, vs);
	}
out:
	if (err == -ENOMEM)
		fail(why, why_sz, "%s", "out of memory");
	file_close(&f);
	if (err) {
		vmstructs__free(vs);
		return err;
	}
	*out = vs;
	return 0;
}

void vmstructs__free(struct vmstructs *vs)
{
	int t;

	if (!vs)
		return;
	for (t = 0; t < T_NR; t++)
		free(vs->e[t]);
	free(vs->pool);
	free(vs);
}

int vmstructs__field(const struct vmstructs *vs, const char *type, const char *field,
		     uint64_t *offset)
{
	const struct vm_entry *e = lookup(vs, T_STRUCTS, type, field);

	if (!e || e->is_static)
		return -ENOENT;
	if (!vs->offsets_known)
		return -ENODATA;
	*offset = e->value;
	return 0;
}

int vmstructs__static(const struct vmstructs *vs, const char *type, const char *field,
		      uint64_t *vaddr)
{
	const struct vm_entry *e = lookup(vs, T_STRUCTS, type, field);

	if (!e || !e->is_static || !e->value)
		return -ENOENT;
	*vaddr = e->value;
	return 0;
}

int vmstructs__type_size(const struct vmstructs *vs, const char *type, uint64_t *size)
{
	const struct vm_entry *e = lookup(vs, T_TYPES, type, NULL);

	if (!e)
		return -ENOENT;
	*size = e->value;
	return 0;
}

int vmstructs__int_constant(const struct vmstructs *vs, const char *name, int32_t *value)
{
	const struct vm_entry *e = lookup(vs, T_INTS, name, NULL);

	if (!e)
		return -ENOENT;
	*value = (int32_t)e->value;
	return 0;
}

int vmstructs__long_constant(const struct vmstructs *vs, const char *name, uint64_t *value)
{
	const struct vm_entry *e = lookup(vs, T_LONGS, name, NULL);

	if (!e)
		return -ENOENT;
	*value = e->value;
	return 0;
}

void vmstructs__counts(const struct vmstructs *vs, size_t counts[4])
{
	int t;

	for (t = 0; t < T_NR; t++)
		counts[t] = vs->n[t];
}

const char *vmstructs__release(const struct vmstructs *vs)
{
	return vs->release;
}

bool vmstructs__offsets_known(const struct vmstructs *vs)
{
	return vs->offsets_known;
}

unsigned int vmstructs__major(const struct vmstructs *vs)
{
	return vs->major;
}

/* What vmstructs__hotspot_offsets() looks up: a field (offset), a static (address) or a
 * type's size, under any of types and any of fields ('|'-separated alternatives, the first
 * preferred), into the uint64_t at off in struct hotspot_offsets. */
enum hs_kind { HS_FIELD, HS_STATIC, HS_SIZE };

struct hs_item {
	enum hs_kind kind;
	bool optional; /* a member of some JDKs only: HOTSPOT_OFF_NONE when absent */
	const char *types, *fields;
	size_t off;
};

#define HS(k, opt, t, f, m)                                       \
	{                                                         \
		k, opt, t, f, offsetof(struct hotspot_offsets, m) \
	}
#define FIELD(t, f, m)	   HS(HS_FIELD, false, t, f, m)
#define FIELD_OPT(t, f, m) HS(HS_FIELD, true, t, f, m)
#define STATIC(t, f, m)	   HS(HS_STATIC, false, t, f, m)
#define SIZE(t, m)	   HS(HS_SIZE, false, t, NULL, m)

/* nmethod's members were CompiledMethod's until JDK 23 (see vmstructs.h). */
#define NM "nmethod|CompiledMethod"

static const struct hs_item hs_items[] = {
	STATIC("CodeCache", "_heaps", code_cache.heaps),
	STATIC("CodeCache", "_low_bound", code_cache.low_bound),
	STATIC("CodeCache", "_high_bound", code_cache.high_bound),
	FIELD("GrowableArrayBase|GenericGrowableArray", "_len", growable_array.len),
	FIELD("GrowableArray<int>", "_data", growable_array.data),
	SIZE("CodeHeap", code_heap.size),
	FIELD("CodeHeap", "_memory", code_heap.memory),
	FIELD("CodeHeap", "_segmap", code_heap.segmap),
	FIELD("CodeHeap", "_log2_segment_size", code_heap.log2_segment_size),
	FIELD("VirtualSpace", "_low_boundary", virtual_space.low_boundary),
	FIELD("VirtualSpace", "_high_boundary", virtual_space.high_boundary),
	FIELD("VirtualSpace", "_low", virtual_space.low),
	FIELD("VirtualSpace", "_high", virtual_space.high),
	SIZE("HeapBlock", heap_block_size),
	SIZE("CodeBlob", code_blob.size_of),
	FIELD("CodeBlob", "_name", code_blob.name),
	FIELD("CodeBlob", "_size", code_blob.size),
	FIELD("CodeBlob", "_header_size", code_blob.header_size),
	FIELD("CodeBlob", "_frame_complete_offset", code_blob.frame_complete_offset),
	FIELD("CodeBlob", "_frame_size", code_blob.frame_size),
	FIELD("CodeBlob", "_code_begin|_code_offset", code_blob.code_begin),
	FIELD("CodeBlob", "_code_end|_data_offset", code_blob.code_end),
	FIELD_OPT("CodeBlob", "_mutable_data", code_blob.mutable_data),
	SIZE("nmethod", nmethod.size),
	FIELD(NM, "_method", nmethod.method),
	FIELD(NM, "_compile_id", nmethod.compile_id),
	FIELD(NM, "_orig_pc_offset", nmethod.orig_pc_offset),
	FIELD(NM, "_deopt_handler_begin|_deopt_handler_offset|_deopt_handler_entry_offset",
	      nmethod.deopt_handler),
	FIELD(NM, "_scopes_data_begin|_scopes_data_offset", nmethod.scopes_data),
	FIELD(NM, "_scopes_pcs_offset", nmethod.scopes_pcs_offset),
	FIELD_OPT(NM, "_metadata_offset", nmethod.metadata_offset),
	FIELD_OPT(NM, "_dependencies_offset", nmethod.dependencies_offset),
	FIELD_OPT(NM, "_immutable_data", nmethod.immutable_data),
	FIELD_OPT(NM, "_immutable_data_size", nmethod.immutable_data_size),
	SIZE("Method", method.size),
	FIELD("Method", "_constMethod", method.const_method),
	SIZE("ConstMethod", const_method.size),
	FIELD("ConstMethod", "_constants", const_method.constants),
	FIELD("ConstMethod", "_flags|_flags._flags", const_method.flags),
	FIELD("ConstMethod", "_code_size", const_method.code_size),
	FIELD("ConstMethod", "_name_index", const_method.name_index),
	FIELD("ConstMethod", "_signature_index", const_method.signature_index),
	SIZE("ConstantPool", constant_pool.size),
	FIELD("ConstantPool", "_pool_holder", constant_pool.pool_holder),
	FIELD("ConstantPool", "_source_file_name_index", constant_pool.source_file_name_index),
	FIELD("Klass", "_name", klass_name),
	SIZE("Symbol", symbol.size),
	FIELD("Symbol", "_length", symbol.length),
	FIELD("Symbol", "_body", symbol.body),
	SIZE("PcDesc", pc_desc.size),
	FIELD("PcDesc", "_pc_offset", pc_desc.pc_offset),
	FIELD("PcDesc", "_scope_decode_offset", pc_desc.scope_decode_offset),
	FIELD("PcDesc", "_obj_decode_offset", pc_desc.obj_decode_offset),
	FIELD("PcDesc", "_flags", pc_desc.flags),
	FIELD("JavaThread", "_anchor", java_thread.anchor),
	FIELD("JavaThread", "_thread_state", java_thread.thread_state),
	FIELD("JavaThread|Thread", "_osthread", java_thread.osthread),
	FIELD("JavaFrameAnchor", "_last_Java_sp", java_frame_anchor.last_java_sp),
	FIELD("JavaFrameAnchor", "_last_Java_pc", java_frame_anchor.last_java_pc),
	FIELD("JavaFrameAnchor", "_last_Java_fp", java_frame_anchor.last_java_fp),
	FIELD("OSThread", "_thread_id", osthread_thread_id),
};

#undef HS
#undef FIELD
#undef FIELD_OPT
#undef STATIC
#undef SIZE
#undef NM

/* The next '|'-separated name of *list into buf (sz bytes); false at the end. */
static bool next_alt(const char **list, char *buf, size_t sz)
{
	const char *s = *list, *bar;
	size_t len;

	if (!s || !*s)
		return false;
	bar = strchr(s, '|');
	len = bar ? (size_t)(bar - s) : strlen(s);
	len = min_t(size_t, len, sz - 1);
	memcpy(buf, s, len);
	buf[len] = 0;
	*list = bar ? bar + 1 : s + strlen(s);
	return true;
}

/* Looks item up: 0 with *val, the type and field it was found under (type, field: 64 bytes
 * each) and the index of that field among the alternatives (*alt); -ENOENT. */
static int hs_lookup(const struct vmstructs *vs, const struct hs_item *it, uint64_t *val,
		     char *type, char *field, unsigned int *alt)
{
	const char *types = it->types, *fields;

	while (next_alt(&types, type, 64)) {
		if (it->kind == HS_SIZE) {
			*alt = 0;
			if (!vmstructs__type_size(vs, type, val))
				return 0;
			continue;
		}
		fields = it->fields;
		for (*alt = 0; next_alt(&fields, field, 64); (*alt)++) {
			int err = it->kind == HS_FIELD ? vmstructs__field(vs, type, field, val) :
							 vmstructs__static(vs, type, field, val);
			if (!err)
				return 0;
		}
	}
	return -ENOENT;
}

int vmstructs__hotspot_offsets(const struct vmstructs *vs, struct hotspot_offsets *out, char *why,
			       size_t why_sz)
{
	char jdk[sizeof(vs->release)];
	size_t i;

	memset(out, 0, sizeof(*out));
	fail(why, why_sz, "%s", "");
	if (vs->release[0])
		snprintf(jdk, sizeof(jdk), "%s", vs->release);
	else if (vs->major)
		snprintf(jdk, sizeof(jdk), "%u", vs->major);
	else
		snprintf(jdk, sizeof(jdk), "%s", "?");
	if (!vs->offsets_known) {
		fail(why, why_sz,
		     "VMStructs of JDK %s: no field offsets in the file (HotSpot sets them when "
		     "libjvm.so is loaded): read them from the process",
		     jdk);
		return -ENODATA;
	}
	for (i = 0; i < ARRAY_SIZE(hs_items); i++) {
		const struct hs_item *it = &hs_items[i];
		uint64_t val, size;
		unsigned int alt;
		char type[64], field[64];

		if (hs_lookup(vs, it, &val, type, field, &alt)) {
			if (it->optional) {
				val = HOTSPOT_OFF_NONE;
				memcpy((char *)out + it->off, &val, sizeof(val));
				continue;
			}
			/* the first alternatives, as this JDK should have named them */
			const char *t = it->types, *f = it->fields;
			char ft[64], ff[64] = "";

			next_alt(&t, ft, sizeof(ft));
			if (f)
				next_alt(&f, ff, sizeof(ff));
			fail(why, why_sz, "VMStructs of JDK %s: no %s%s%s%s", jdk, ft,
			     f ? "::" : " size", ff,
			     (it->fields && strchr(it->fields, '|')) || strchr(it->types, '|') ?
				     " (nor its other names)" :
				     "");
			return -ENOENT;
		}
		if (it->kind == HS_SIZE && (!val || val > HOTSPOT_SIZE_MAX)) {
			fail(why, why_sz, "VMStructs of JDK %s: %s size %llu outside 1..%u", jdk,
			     type, (unsigned long long)val, HOTSPOT_SIZE_MAX);
			return -ERANGE;
		}
		if (it->kind == HS_FIELD && !vmstructs__type_size(vs, type, &size) && size &&
		    val >= size) {
			fail(why, why_sz, "VMStructs of JDK %s: %s::%s at %llu past its size %llu",
			     jdk, type, field, (unsigned long long)val, (unsigned long long)size);
			return -ERANGE;
		}
		if (it->kind == HS_FIELD && val >= HOTSPOT_SIZE_MAX) {
			fail(why, why_sz, "VMStructs of JDK %s: %s::%s at %llu", jdk, type, field,
			     (unsigned long long)val);
			return -ERANGE;
		}
		if (it->off == offsetof(struct hotspot_offsets, code_blob.code_begin))
			out->code_blob.code_is_offset = alt > 0;
		memcpy((char *)out + it->off, &val, sizeof(val));
	}
	return 0;
}

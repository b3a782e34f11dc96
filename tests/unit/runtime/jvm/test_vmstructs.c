// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_vmstructs.c: vmstructs__from_elf() on libjvm-like files written here with libelf: the
 * four gHotSpotVM* table symbols and the layout symbols in .dynsym, the arrays in .data, their
 * names in .rodata, the pointers to them R_X86_64_RELATIVE relocations in .rela.dyn (or, in one
 * case, the file's bytes), the layout symbols in .bss as HotSpot has them. Entries are written
 * from the names and values the JDKs publish (17's names, and 25's where they differ:
 * CodeBlob::_code_offset, nmethod's former CompiledMethod members, Thread::_osthread): read
 * back through each lookup and vmstructs__hotspot_offsets(). The values come from the file, or
 * (as on a real libjvm, whose offsets are zeros in the file) from a "process" image of the same
 * arrays with every pointer moved by a bias; a process whose names are not the file's is
 * refused. Refused too: a missing field (why names it), bad strides and members past them, a
 * name outside the file or unterminated, a table without its NULL entry within
 * VMSTRUCTS_ENTRIES_MAX, sizes and offsets out of range.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/jvm/vmstructs.h"

#define RO_ADDR	  0x10000ull
#define RO_MAX	  0x10000
#define DATA_ADDR 0x40000ull
#define DATA_MAX  (512 * 1024)
#define BSS_ADDR  0x200000ull
#define BSS_SIZE  0x1000
#define BIAS	  0x7f0000000000ull
#define RELEASE	  "17.0.15+6-Debian-1deb12u1"

/* .data: the four table pointers, the major version, the layout (when in the file), then the
 * arrays; .bss: the layout symbols (HotSpot's case), then the statics. */
#define D_TABLES  0
#define D_MAJOR	  32
#define D_LAYOUT  64
#define D_ARRAYS  256
#define B_STATICS 0x400

enum { V17 = 1, V25 = 2, VALL = 3 };

/* A non-static field (addr 0) or static (its .bss offset), in the JDKs of mask. */
struct sfield {
	const char *type, *field;
	uint64_t offset;
	unsigned int mask;
	bool is_static;
};

/* JDK 17.0.15's and 25.0.5's values (Debian, read from their processes). */
static const struct sfield sfields[] = {
	{ "CodeCache", "_heaps", 0x00, VALL, true },
	{ "CodeCache", "_low_bound", 0x20, VALL, true },
	{ "CodeCache", "_high_bound", 0x18, VALL, true },
	{ "Abstract_VM_Version", "_vm_major_version", 0, VALL, true }, /* .data: D_MAJOR */
	{ "Abstract_VM_Version", "_s_vm_release", 0x40, VALL, true },  /* set at run time */
	{ "GrowableArrayBase", "_len", 0, VALL },
	{ "GrowableArray<int>", "_data", 8, VALL },
	{ "CodeHeap", "_memory", 8, VALL },
	{ "CodeHeap", "_segmap", 120, VALL },
	{ "CodeHeap", "_log2_segment_size", 256, VALL },
	{ "VirtualSpace", "_low_boundary", 0, VALL },
	{ "VirtualSpace", "_high_boundary", 8, VALL },
	{ "VirtualSpace", "_low", 16, VALL },
	{ "VirtualSpace", "_high", 24, VALL },
	{ "CodeBlob", "_name", 96, VALL },
	{ "CodeBlob", "_size", 12, VALL },
	{ "CodeBlob", "_header_size", 16, VALL },
	{ "CodeBlob", "_frame_complete_offset", 20, VALL },
	{ "CodeBlob", "_frame_size", 28, VALL },
	{ "CodeBlob", "_code_begin", 32, V17 },
	{ "CodeBlob", "_code_end", 40, V17 },
	{ "CodeBlob", "_data_offset", 44, VALL },
	{ "CodeBlob", "_code_offset", 36, V25 },
	{ "CodeBlob", "_mutable_data", 16, V25 },
	{ "CompiledMethod", "_method", 112, V17 },
	{ "CompiledMethod", "_deopt_handler_begin", 128, V17 },
	{ "CompiledMethod", "_scopes_data_begin", 120, V17 },
	{ "nmethod", "_method", 80, V25 },
	{ "nmethod", "_deopt_handler_offset", 176, V25 },
	{ "nmethod", "_scopes_data_offset", 200, V25 },
	{ "nmethod", "_immutable_data", 96, V25 },
	{ "nmethod", "_immutable_data_size", 160, V25 },
	{ "nmethod", "_compile_id", 304, VALL },
	{ "nmethod", "_orig_pc_offset", 300, VALL },
	{ "nmethod", "_scopes_pcs_offset", 268, VALL },
	{ "nmethod", "_metadata_offset", 260, V17 },
	{ "nmethod", "_dependencies_offset", 272, V17 },
	{ "Method", "_constMethod", 8, VALL },
	{ "ConstMethod", "_constants", 8, VALL },
	{ "ConstMethod", "_flags", 28, V17 },
	{ "ConstMethod", "_flags._flags", 28, V25 },
	{ "ConstMethod", "_code_size", 32, VALL },
	{ "ConstMethod", "_name_index", 34, VALL },
	{ "ConstMethod", "_signature_index", 36, VALL },
	{ "ConstantPool", "_pool_holder", 24, VALL },
	{ "ConstantPool", "_source_file_name_index", 54, VALL },
	{ "Klass", "_name", 24, VALL },
	{ "Symbol", "_length", 4, VALL },
	{ "Symbol", "_body", 6, VALL },
	{ "PcDesc", "_pc_offset", 0, VALL },
	{ "PcDesc", "_scope_decode_offset", 4, VALL },
	{ "PcDesc", "_obj_decode_offset", 8, VALL },
	{ "PcDesc", "_flags", 12, VALL },
	{ "JavaThread", "_anchor", 656, VALL },
	{ "JavaThread", "_thread_state", 824, VALL },
	{ "JavaThread", "_osthread", 560, V17 },
	{ "Thread", "_osthread", 560, V25 },
	{ "JavaFrameAnchor", "_last_Java_sp", 0, VALL },
	{ "JavaFrameAnchor", "_last_Java_pc", 8, VALL },
	{ "JavaFrameAnchor", "_last_Java_fp", 16, VALL },
	{ "OSThread", "_thread_id", 208, VALL },
};

struct stype {
	const char *name;
	uint64_t size;
};

static const struct stype stypes[] = {
	{ "CodeHeap", 344 },   { "HeapBlock", 16 },	  { "CodeBlob", 104 },
	{ "nmethod", 352 },    { "CompiledMethod", 240 }, { "Method", 88 },
	{ "ConstMethod", 48 }, { "ConstantPool", 72 },	  { "Klass", 200 },
	{ "Symbol", 8 },       { "PcDesc", 16 },	  { "JavaThread", 1792 },
	{ "Thread", 800 },     { "OSThread", 256 },	  { "VirtualSpace", 112 },
	{ "int", 4 },
};

/* How a file is written. */
struct opts {
	unsigned int jdk;    /* V17 or V25 */
	bool no_relocs;	     /* pointers as the file's bytes, not relocations */
	bool zero_offsets;   /* the offsets zeros in the file (HotSpot's case) */
	bool layout_in_data; /* the layout symbols in .data, with layout's values */
	struct vmstructs_layout layout;
	const char *drop_field;	 /* "CodeBlob::_frame_size": left out */
	uint64_t bad_name;	 /* one name pointer (CodeBlob::_size's type) set to this */
	bool unterminated;	 /* .rodata 'x' from its last name to its end: no NUL */
	size_t nul_at;		 /* and a NUL at this offset in it (0: none) */
	bool no_structs_sym;	 /* gHotSpotVMStructs not in .dynsym */
	size_t int_entries;	 /* int constants written (no NULL entry when over the max) */
	uint64_t codeblob_size;	 /* CodeBlob's size (0: stypes') */
	uint64_t frame_size_off; /* CodeBlob::_frame_size's offset (0: sfields') */
};

/* The file being written, and the "process": the same .data and .bss as they are once
 * libjvm.so is loaded at BIAS and its initializers ran. */
struct jvm {
	char ro[RO_MAX];
	size_t ro_len;
	uint8_t *data, *mem_data;
	size_t data_len;
	uint8_t mem_bss[BSS_SIZE];
	Elf64_Rela *rel;
	size_t nrel;
	const struct opts *o;
	bool corrupt_mem; /* the process's first name pointer off by one */
	FILE *f;
	Elf *elf;
};

static uint64_t str(struct jvm *j, const char *s)
{
	size_t len = strlen(s) + 1;
	uint64_t at = RO_ADDR + j->ro_len;

	assert_true(j->ro_len + len <= RO_MAX);
	memcpy(j->ro + j->ro_len, s, len);
	j->ro_len += len;
	return at;
}

static void put64(uint8_t *b, uint64_t v)
{
	memcpy(b, &v, sizeof(v));
}

/* The pointer at .data offset off is vaddr: a relocation (file bytes 0) or the bytes. */
static void ptr(struct jvm *j, size_t off, uint64_t vaddr)
{
	put64(j->mem_data + off, vaddr ? vaddr + BIAS : 0);
	if (!vaddr)
		return;
	if (j->o->no_relocs) {
		put64(j->data + off, vaddr);
		return;
	}
	j->rel[j->nrel].r_offset = DATA_ADDR + off;
	j->rel[j->nrel].r_info = ELF64_R_INFO(0, R_X86_64_RELATIVE);
	j->rel[j->nrel].r_addend = vaddr;
	j->nrel++;
}

/* Both images get v at off; the file 0 instead when zero. */
static void val64(struct jvm *j, size_t off, uint64_t v, bool zero)
{
	put64(j->data + off, zero ? 0 : v);
	put64(j->mem_data + off, v);
}

static void val32(struct jvm *j, size_t off, int32_t v)
{
	memcpy(j->data + off, &v, sizeof(v));
	memcpy(j->mem_data + off, &v, sizeof(v));
}

static size_t write_structs(struct jvm *j, size_t at)
{
	const struct vmstructs_layout *l = &VMSTRUCTS_LAYOUT_LP64;
	char name[128];
	size_t i;

	for (i = 0; i < sizeof(sfields) / sizeof(sfields[0]); i++) {
		const struct sfield *s = &sfields[i];
		uint64_t tn;

		if (!(s->mask & j->o->jdk))
			continue;
		snprintf(name, sizeof(name), "%s::%s", s->type, s->field);
		if (j->o->drop_field && !strcmp(name, j->o->drop_field))
			continue;
		tn = str(j, s->type);
		if (j->o->bad_name && !strcmp(name, "CodeBlob::_size"))
			tn = j->o->bad_name;
		ptr(j, at + l->struct_type_name, tn);
		ptr(j, at + l->struct_field_name, str(j, s->field));
		ptr(j, at + l->struct_type_string, str(j, s->is_static ? "address" : "int"));
		val32(j, at + l->struct_is_static, s->is_static);
		if (!s->is_static) {
			uint64_t off = s->offset;

			if (j->o->frame_size_off && !strcmp(name, "CodeBlob::_frame_size"))
				off = j->o->frame_size_off;
			val64(j, at + l->struct_offset, off, j->o->zero_offsets);
		} else if (!strcmp(s->field, "_vm_major_version")) {
			ptr(j, at + l->struct_address, DATA_ADDR + D_MAJOR);
		} else {
			ptr(j, at + l->struct_address, BSS_ADDR + B_STATICS + s->offset);
		}
		at += l->struct_stride;
	}
	return at + l->struct_stride; /* the NULL entry: zeros */
}

static size_t write_types(struct jvm *j, size_t at)
{
	const struct vmstructs_layout *l = &VMSTRUCTS_LAYOUT_LP64;
	size_t i;

	for (i = 0; i < sizeof(stypes) / sizeof(stypes[0]); i++) {
		uint64_t size = stypes[i].size;

		if (j->o->codeblob_size && !strcmp(stypes[i].name, "CodeBlob"))
			size = j->o->codeblob_size;
		ptr(j, at + l->type_type_name, str(j, stypes[i].name));
		ptr(j, at + l->type_superclass_name, 0);
		val64(j, at + l->type_size, size, false);
		at += l->type_stride;
	}
	return at + l->type_stride;
}

static size_t write_ints(struct jvm *j, size_t at)
{
	const struct vmstructs_layout *l = &VMSTRUCTS_LAYOUT_LP64;
	uint64_t name = str(j, "InvocationEntryBci");
	size_t i, n = j->o->int_entries ? j->o->int_entries : 1;

	for (i = 0; i < n; i++) {
		ptr(j, at + l->int_name, name);
		val32(j, at + l->int_value, -1);
		at += l->int_stride;
	}
	return at + l->int_stride;
}

static size_t write_longs(struct jvm *j, size_t at)
{
	const struct vmstructs_layout *l = &VMSTRUCTS_LAYOUT_LP64;

	ptr(j, at + l->long_name, str(j, "markWord::hash_mask"));
	val64(j, at + l->long_value, 0x7fffffffull, false);
	at += l->long_stride;
	return at + l->long_stride;
}

static const char *const layout_syms[] = {
	"gHotSpotVMStructEntryArrayStride",	 "gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",	 "gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMStructEntryIsStaticOffset",	 "gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",	 "gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset",	 "gHotSpotVMTypeEntrySuperclassNameOffset",
	"gHotSpotVMTypeEntryIsOopTypeOffset",	 "gHotSpotVMTypeEntryIsIntegerTypeOffset",
	"gHotSpotVMTypeEntryIsUnsignedOffset",	 "gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMIntConstantEntryArrayStride", "gHotSpotVMIntConstantEntryNameOffset",
	"gHotSpotVMIntConstantEntryValueOffset", "gHotSpotVMLongConstantEntryArrayStride",
	"gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
};

static const char *const table_syms[] = {
	"gHotSpotVMStructs",
	"gHotSpotVMTypes",
	"gHotSpotVMIntConstants",
	"gHotSpotVMLongConstants",
};

#define NSYMS (1 + 4 + 20)

static Elf_Scn *add_scn(Elf *w, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
			void *buf, size_t len, uint64_t size)
{
	Elf_Scn *scn = elf_newscn(w);
	Elf64_Shdr *sh;
	Elf_Data *d;

	assert_non_null(scn);
	d = elf_newdata(scn);
	d->d_buf = buf;
	d->d_size = len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 8;
	sh = elf64_getshdr(scn);
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addr = addr;
	sh->sh_size = size;
	sh->sh_addralign = 8;
	return scn;
}

static void jvm_make(struct jvm *j, const struct opts *o)
{
	static const char shstr[] =
		"\0.rodata\0.data\0.bss\0.dynstr\0.dynsym\0.rela.dyn\0.shstrtab";
	/* offsets in shstr */
	enum {
		N_RO = 1,
		N_DATA = 9,
		N_BSS = 15,
		N_DYNSTR = 20,
		N_DYNSYM = 28,
		N_RELA = 36,
		N_SHSTR = 46
	};
	static char dynstr[2048];
	static Elf64_Sym syms[NSYMS];
	const uint64_t *lv = (const uint64_t *)&o->layout;
	size_t i, at, dynstr_len = 1;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf_Scn *scn;
	Elf *w;

	memset(j, 0, sizeof(*j));
	j->o = o;
	j->data = calloc(1, DATA_MAX);
	j->mem_data = calloc(1, DATA_MAX);
	j->rel = calloc(DATA_MAX / 8, sizeof(*j->rel));
	assert_true(j->data && j->mem_data && j->rel);
	j->ro_len = 1; /* no name at offset 0 */

	/* the arrays, and the table pointers to them */
	at = D_ARRAYS;
	ptr(j, D_TABLES + 0, DATA_ADDR + at);
	at = write_structs(j, at);
	ptr(j, D_TABLES + 8, DATA_ADDR + at);
	at = write_types(j, at);
	ptr(j, D_TABLES + 16, DATA_ADDR + at);
	at = write_ints(j, at);
	ptr(j, D_TABLES + 24, DATA_ADDR + at);
	at = write_longs(j, at);
	assert_true(at <= DATA_MAX);
	j->data_len = at;
	val32(j, D_MAJOR, o->jdk == V17 ? 17 : 25);
	/* _s_vm_release: NULL in the file, the release literal's address in the process */
	put64(j->mem_bss + B_STATICS + 0x40, str(j, RELEASE) + BIAS);
	/* the process's layout (HotSpot's, initialized at run time), and the file's if asked */
	for (i = 0; i < 20; i++) {
		memcpy(j->mem_bss + 8 * i, (const uint64_t *)&VMSTRUCTS_LAYOUT_LP64 + i, 8);
		if (o->layout_in_data)
			put64(j->data + D_LAYOUT + 8 * i, lv[i]);
	}
	if (o->unterminated)
		memset(j->ro + j->ro_len, 'x', RO_MAX - j->ro_len);
	if (o->nul_at)
		j->ro[o->nul_at] = 0;

	/* .dynsym: the tables in .data, the layout in .bss (or .data) */
	memset(syms, 0, sizeof(syms));
	for (i = 0; i < 24; i++) {
		const char *name = i < 4 ? table_syms[i] : layout_syms[i - 4];

		if (i == 0 && o->no_structs_sym)
			name = "gHotSpotVMStructz";
		Elf64_Sym *s = &syms[1 + i];

		s->st_name = dynstr_len;
		memcpy(dynstr + dynstr_len, name, strlen(name) + 1);
		dynstr_len += strlen(name) + 1;
		s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		s->st_size = 8;
		if (i < 4) {
			s->st_shndx = 2;
			s->st_value = DATA_ADDR + D_TABLES + 8 * i;
		} else if (o->layout_in_data) {
			s->st_shndx = 2;
			s->st_value = DATA_ADDR + D_LAYOUT + 8 * (i - 4);
		} else {
			s->st_shndx = 3;
			s->st_value = BSS_ADDR + 8 * (i - 4);
		}
	}

	j->f = tmpfile();
	assert_non_null(j->f);
	w = elf_begin(fileno(j->f), ELF_C_WRITE, NULL);
	assert_non_null(w);
	eh = elf64_newehdr(w);
	assert_non_null(eh);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	add_scn(w, N_RO, SHT_PROGBITS, SHF_ALLOC, RO_ADDR, j->ro, RO_MAX, RO_MAX); /* 1 */
	add_scn(w, N_DATA, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, DATA_ADDR, j->data, j->data_len,
		j->data_len);								   /* 2 */
	add_scn(w, N_BSS, SHT_NOBITS, SHF_ALLOC | SHF_WRITE, BSS_ADDR, NULL, 0, BSS_SIZE); /* 3 */
	add_scn(w, N_DYNSTR, SHT_STRTAB, SHF_ALLOC, 0, dynstr, dynstr_len, dynstr_len);	   /* 4 */
	scn = add_scn(w, N_DYNSYM, SHT_DYNSYM, SHF_ALLOC, 0, syms, sizeof(syms), sizeof(syms));
	elf_getdata(scn, NULL)->d_type = ELF_T_SYM;
	sh = elf64_getshdr(scn);
	sh->sh_link = 4;
	sh->sh_info = 1;
	sh->sh_entsize = sizeof(Elf64_Sym); /* 5 */
	scn = add_scn(w, N_RELA, SHT_RELA, SHF_ALLOC, 0, j->rel, j->nrel * sizeof(*j->rel),
		      j->nrel * sizeof(*j->rel));
	elf_getdata(scn, NULL)->d_type = ELF_T_RELA;
	sh = elf64_getshdr(scn);
	sh->sh_link = 5;
	sh->sh_entsize = sizeof(Elf64_Rela); /* 6 */
	scn = add_scn(w, N_SHSTR, SHT_STRTAB, 0, 0, (void *)shstr, sizeof(shstr), sizeof(shstr));
	eh->e_shstrndx = elf_ndxscn(scn);
	assert_true(elf_update(w, ELF_C_WRITE) > 0);
	elf_end(w);
	j->elf = elf_begin(fileno(j->f), ELF_C_READ, NULL);
	assert_non_null(j->elf);
}

static void jvm_drop(struct jvm *j)
{
	elf_end(j->elf);
	fclose(j->f);
	free(j->data);
	free(j->mem_data);
	free(j->rel);
}

/* The process's memory: .data and .bss as loaded (vaddr is the file's). */
static int mem_read(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	struct jvm *j = ctx;

	if (vaddr >= DATA_ADDR && vaddr + len <= DATA_ADDR + j->data_len) {
		memcpy(buf, j->mem_data + (vaddr - DATA_ADDR), len);
		if (j->corrupt_mem && vaddr == DATA_ADDR + D_ARRAYS)
			((uint8_t *)buf)[0] ^= 1;
		return 0;
	}
	if (vaddr >= BSS_ADDR && vaddr + len <= BSS_ADDR + BSS_SIZE) {
		memcpy(buf, j->mem_bss + (vaddr - BSS_ADDR), len);
		return 0;
	}
	return -EFAULT;
}

static struct opts opts_of(unsigned int jdk)
{
	struct opts o = { .jdk = jdk, .layout = VMSTRUCTS_LAYOUT_LP64 };

	return o;
}

/* Every lookup of the tables written for jdk, and the hotspot_offsets from them. */
static void check_good(struct vmstructs *vs, unsigned int jdk, bool process)
{
	struct hotspot_offsets h;
	uint64_t v;
	int32_t iv;
	size_t i, n[4];
	char why[160];

	assert_true(vmstructs__offsets_known(vs));
	assert_int_equal(vmstructs__major(vs), jdk == V17 ? 17 : 25);
	assert_string_equal(vmstructs__release(vs), process ? RELEASE : "");
	vmstructs__counts(vs, n);
	assert_int_equal(n[1], sizeof(stypes) / sizeof(stypes[0]));
	assert_int_equal(n[2], 1);
	assert_int_equal(n[3], 1);
	for (i = 0; i < sizeof(sfields) / sizeof(sfields[0]); i++) {
		const struct sfield *s = &sfields[i];

		if (!(s->mask & jdk)) {
			assert_int_equal(vmstructs__field(vs, s->type, s->field, &v), -ENOENT);
			continue;
		}
		if (!s->is_static) {
			assert_int_equal(vmstructs__field(vs, s->type, s->field, &v), 0);
			assert_int_equal(v, s->offset);
			assert_int_equal(vmstructs__static(vs, s->type, s->field, &v), -ENOENT);
		} else {
			assert_int_equal(vmstructs__static(vs, s->type, s->field, &v), 0);
			if (strcmp(s->field, "_vm_major_version"))
				assert_int_equal(v, BSS_ADDR + B_STATICS + s->offset);
			assert_int_equal(vmstructs__field(vs, s->type, s->field, &v), -ENOENT);
		}
	}
	for (i = 0; i < sizeof(stypes) / sizeof(stypes[0]); i++) {
		assert_int_equal(vmstructs__type_size(vs, stypes[i].name, &v), 0);
		assert_int_equal(v, stypes[i].size);
	}
	assert_int_equal(vmstructs__type_size(vs, "NoSuchType", &v), -ENOENT);
	assert_int_equal(vmstructs__int_constant(vs, "InvocationEntryBci", &iv), 0);
	assert_int_equal(iv, -1);
	assert_int_equal(vmstructs__long_constant(vs, "markWord::hash_mask", &v), 0);
	assert_int_equal(v, 0x7fffffff);
	assert_int_equal(vmstructs__long_constant(vs, "InvocationEntryBci", &v), -ENOENT);

	assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(h.code_cache.heaps, BSS_ADDR + B_STATICS);
	assert_int_equal(h.code_cache.low_bound, BSS_ADDR + B_STATICS + 0x20);
	assert_int_equal(h.code_blob.frame_size, 28);
	assert_int_equal(h.code_blob.size_of, 104);
	assert_int_equal(h.heap_block_size, 16);
	assert_int_equal(h.code_heap.log2_segment_size, 256);
	assert_int_equal(h.nmethod.compile_id, 304);
	assert_int_equal(h.const_method.flags, 28);
	assert_int_equal(h.java_thread.osthread, 560);
	assert_int_equal(h.osthread_thread_id, 208);
	if (jdk == V17) {
		assert_false(h.code_blob.code_is_offset);
		assert_int_equal(h.code_blob.code_begin, 32);
		assert_int_equal(h.code_blob.code_end, 40);
		assert_int_equal(h.nmethod.method, 112); /* CompiledMethod's */
		assert_int_equal(h.nmethod.deopt_handler, 128);
		assert_int_equal(h.nmethod.scopes_data, 120);
		assert_int_equal(h.nmethod.metadata_offset, 260);
		assert_int_equal(h.code_blob.mutable_data, HOTSPOT_OFF_NONE);
		assert_int_equal(h.nmethod.immutable_data, HOTSPOT_OFF_NONE);
	} else {
		assert_true(h.code_blob.code_is_offset);
		assert_int_equal(h.code_blob.code_begin, 36);
		assert_int_equal(h.code_blob.code_end, 44); /* _data_offset */
		assert_int_equal(h.nmethod.method, 80);
		assert_int_equal(h.nmethod.deopt_handler, 176);
		assert_int_equal(h.nmethod.scopes_data, 200);
		assert_int_equal(h.nmethod.immutable_data, 96);
		assert_int_equal(h.code_blob.mutable_data, 16);
		assert_int_equal(h.nmethod.metadata_offset, HOTSPOT_OFF_NONE);
		assert_int_equal(h.nmethod.dependencies_offset, HOTSPOT_OFF_NONE);
	}
}

static void test_good(void **state)
{
	static const unsigned int jdks[] = { V17, V25 };
	struct vmstructs *vs;
	struct jvm j;
	struct opts o;
	char why[160];
	size_t k;

	(void)state;
	for (k = 0; k < 2; k++) {
		/* the names through relocations, the values in the file */
		o = opts_of(jdks[k]);
		jvm_make(&j, &o);
		assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
		check_good(vs, jdks[k], false);
		vmstructs__free(vs);
		jvm_drop(&j);

		/* the pointers in the file's bytes, no relocation */
		o.no_relocs = true;
		jvm_make(&j, &o);
		assert_int_equal(j.nrel, 0);
		assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
		check_good(vs, jdks[k], false);
		vmstructs__free(vs);
		jvm_drop(&j);
	}
	vmstructs__free(NULL);
}

/* HotSpot's case: the offsets zeros in the file, the real ones in the process. */
static void test_process(void **state)
{
	struct hotspot_offsets h;
	struct vmstructs *vs;
	struct opts o = opts_of(V17);
	struct jvm j;
	char why[200];
	uint64_t v;

	(void)state;
	o.zero_offsets = true;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
	assert_false(vmstructs__offsets_known(vs));
	assert_int_equal(vmstructs__field(vs, "CodeBlob", "_frame_size", &v), -ENODATA);
	assert_int_equal(vmstructs__static(vs, "CodeCache", "_heaps", &v), 0);
	assert_int_equal(vmstructs__type_size(vs, "nmethod", &v), 0);
	assert_int_equal(v, 352);
	assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)), -ENODATA);
	assert_non_null(strstr(why, "JDK 17: no field offsets in the file"));
	vmstructs__free(vs);

	/* the process: every value from it, its pointers the file's plus BIAS */
	assert_int_equal(vmstructs__from_elf(j.elf, mem_read, &j, &vs, why, sizeof(why)), 0);
	check_good(vs, V17, true);
	vmstructs__free(vs);

	/* a process whose names are not the file's */
	j.corrupt_mem = true;
	assert_int_equal(vmstructs__from_elf(j.elf, mem_read, &j, &vs, why, sizeof(why)), -EINVAL);
	assert_null(vs);
	assert_non_null(strstr(why, "gHotSpotVMStructs[0]: the process's pointer"));
	jvm_drop(&j);

	/* a missing field, named with the process's release */
	o.drop_field = "CodeBlob::_frame_size";
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, mem_read, &j, &vs, why, sizeof(why)), 0);
	assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "VMStructs of JDK " RELEASE ": no CodeBlob::_frame_size");
	vmstructs__free(vs);
	jvm_drop(&j);
}

static void test_missing_field(void **state)
{
	static const char *const drops[][2] = {
		{ "CodeBlob::_frame_size", "VMStructs of JDK 17: no CodeBlob::_frame_size" },
		{ "CodeBlob::_code_begin",
		  "VMStructs of JDK 17: no CodeBlob::_code_begin (nor its other names)" },
		{ "CompiledMethod::_method",
		  "VMStructs of JDK 17: no nmethod::_method (nor its other names)" },
		{ "CodeCache::_heaps", "VMStructs of JDK 17: no CodeCache::_heaps" },
		{ "Thread::_osthread", NULL }, /* JDK 25's name: not needed in 17 */
		{ "Abstract_VM_Version::_vm_major_version", NULL },
	};
	struct hotspot_offsets h;
	struct vmstructs *vs;
	struct opts o;
	struct jvm j;
	char why[160];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(drops) / sizeof(drops[0]); k++) {
		o = opts_of(V17);
		o.drop_field = drops[k][0];
		jvm_make(&j, &o);
		assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
		if (drops[k][1]) {
			assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)),
					 -ENOENT);
			assert_string_equal(why, drops[k][1]);
		} else {
			assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)), 0);
			assert_int_equal(vmstructs__major(vs),
					 strstr(drops[k][0], "major") ? 0 : 17);
		}
		vmstructs__free(vs);
		jvm_drop(&j);
	}
}

static void test_bad_layout(void **state)
{
	static const struct {
		size_t member; /* uint64_t index in struct vmstructs_layout */
		uint64_t value;
		const char *why;
	} bad[] = {
		{ 0, 0, "VMStructEntry.typeName: stride 0 outside 1..256" },
		{ 0, 257, "VMStructEntry.typeName: stride 257 outside 1..256" },
		{ 0, 40, "VMStructEntry.address: offset 40 + 8 past the stride 40" },
		{ 4, 45, "VMStructEntry.isStatic: offset 45 + 4 past the stride 48" },
		{ 13, UINT64_MAX, "VMTypeEntry.size: offset 18446744073709551615 + 8 past" },
		{ 14, 11, "VMIntConstantEntry.value: offset 8 + 4 past the stride 11" },
		{ 19, 9, "VMLongConstantEntry.value: offset 9 + 8 past the stride 16" },
	};
	struct vmstructs *vs;
	struct opts o;
	struct jvm j;
	char why[160];
	size_t k;

	(void)state;
	/* the file's layout is read when it has one: the good one reads */
	o = opts_of(V17);
	o.layout_in_data = true;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
	check_good(vs, V17, false);
	vmstructs__free(vs);
	jvm_drop(&j);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		o = opts_of(V17);
		o.layout_in_data = true;
		((uint64_t *)&o.layout)[bad[k].member] = bad[k].value;
		jvm_make(&j, &o);
		assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)),
				 -EINVAL);
		assert_null(vs);
		assert_non_null(strstr(why, bad[k].why));
		jvm_drop(&j);
	}
}

static void test_bad_names(void **state)
{
	static const uint64_t outside[] = {
		0x900000,	  /* in no section */
		BSS_ADDR + 8,	  /* NOBITS: no file bytes */
		RO_ADDR + RO_MAX, /* just past .rodata */
		UINT64_MAX,
	};
	struct vmstructs *vs;
	struct opts o;
	struct jvm j;
	char why[200];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(outside) / sizeof(outside[0]); k++) {
		o = opts_of(V17);
		o.bad_name = outside[k];
		jvm_make(&j, &o);
		assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)),
				 -EINVAL);
		assert_null(vs);
		assert_non_null(strstr(why, "outside the file's sections or unterminated"));
		jvm_drop(&j);
	}

	/* a name running to the end of .rodata: no NUL */
	o = opts_of(V17);
	o.unterminated = true;
	o.bad_name = RO_ADDR + RO_MAX - 16;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unterminated within 512"));
	jvm_drop(&j);

	/* a name of VMSTRUCTS_NAME_MAX bytes reads; one more byte is refused */
	o = opts_of(V17);
	o.unterminated = true;
	o.bad_name = RO_ADDR + RO_MAX - 2000;
	o.nul_at = RO_MAX - 2000 + VMSTRUCTS_NAME_MAX;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
	vmstructs__free(vs);
	jvm_drop(&j);
	o.nul_at++;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unterminated within 512"));
	jvm_drop(&j);

	/* no gHotSpotVMStructs: not a libjvm */
	o = opts_of(V17);
	o.no_structs_sym = true;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "no symbol gHotSpotVMStructs: not a HotSpot libjvm");
	jvm_drop(&j);
}

static void test_no_terminator(void **state)
{
	struct vmstructs *vs;
	struct opts o;
	struct jvm j;
	char why[160];
	size_t n[4];

	(void)state;
	/* VMSTRUCTS_ENTRIES_MAX entries and their NULL one: read */
	o = opts_of(V17);
	o.int_entries = VMSTRUCTS_ENTRIES_MAX - 1;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
	vmstructs__counts(vs, n);
	assert_int_equal(n[2], VMSTRUCTS_ENTRIES_MAX - 1);
	vmstructs__free(vs);
	jvm_drop(&j);

	/* one more: no NULL entry within the bound */
	o.int_entries = VMSTRUCTS_ENTRIES_MAX;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), -E2BIG);
	assert_null(vs);
	assert_string_equal(why, "gHotSpotVMIntConstants: no NULL entry within 10000 entries");
	jvm_drop(&j);
}

static void test_ranges(void **state)
{
	struct hotspot_offsets h;
	struct vmstructs *vs;
	struct opts o;
	struct jvm j;
	char why[160];

	(void)state;
	/* a field at its type's size */
	o = opts_of(V17);
	o.frame_size_off = 104;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
	assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)), -ERANGE);
	assert_string_equal(why,
			    "VMStructs of JDK 17: CodeBlob::_frame_size at 104 past its size 104");
	vmstructs__free(vs);
	jvm_drop(&j);

	/* an absurd size */
	o = opts_of(V17);
	o.codeblob_size = HOTSPOT_SIZE_MAX + 1ull;
	jvm_make(&j, &o);
	assert_int_equal(vmstructs__from_elf(j.elf, NULL, NULL, &vs, why, sizeof(why)), 0);
	assert_int_equal(vmstructs__hotspot_offsets(vs, &h, why, sizeof(why)), -ERANGE);
	assert_string_equal(why, "VMStructs of JDK 17: CodeBlob size 1048577 outside 1..1048576");
	vmstructs__free(vs);
	jvm_drop(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),	      cmocka_unit_test(test_process),
		cmocka_unit_test(test_missing_field), cmocka_unit_test(test_bad_layout),
		cmocka_unit_test(test_bad_names),     cmocka_unit_test(test_no_terminator),
		cmocka_unit_test(test_ranges),
	};

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * vmstructs.h: HotSpot's VMStructs tables, read from a libjvm.so file, and the offsets a walker
 * of HotSpot frames needs, taken from them.
 *
 * libjvm.so exports, for its Serviceability Agent and debuggers (src/hotspot/share/runtime/
 * vmStructs.hpp and vmStructs.cpp of the JDK), four pointers to arrays: gHotSpotVMStructs
 * (VMStructEntry: typeName, fieldName, typeString, isStatic, offset, address), gHotSpotVMTypes
 * (VMTypeEntry: typeName, superclassName, isOopType, isIntegerType, isUnsigned, size),
 * gHotSpotVMIntConstants and gHotSpotVMLongConstants (name, value), each ended by an entry
 * whose (type) name is NULL. The strides and members' offsets of those entries are exported
 * too (gHotSpotVMStructEntryArrayStride, gHotSpotVMStructEntryTypeNameOffset...), but HotSpot
 * initializes them at run time, so a file has them in .bss: from a file they are the layout
 * vmStructs.hpp declares (VMSTRUCTS_LAYOUT_LP64 below, the same from JDK 6 to 25). The arrays
 * themselves are initialized data: their pointers to names are R_X86_64_RELATIVE
 * (R_AARCH64_RELATIVE) relocations whose addend is the name's vaddr (R_*_64/ABS64 against a
 * symbol: its value plus the addend); a pointer with no relocation is the file's bytes (REL or
 * RELR files keep the addend there).
 *
 * What a file holds, measured on Debian's 17.0.15, 21.0.13 and 25.0.5: names, isStatic, the statics'
 * addresses, the types' sizes and the constants; not the non-static fields' offsets, all zeros
 * in the file. HotSpot's offset_of() (globalDefinitions.hpp: an address computed from a fake
 * object, not offsetof) is no constant expression to GCC, so VMStructEntry.offset is stored by
 * a static initializer when libjvm.so is loaded. So the offsets come from the process when the
 * caller can read it (vmstructs_read_fn: the same entries, after libjvm.so's initializers ran,
 * their name pointers checked to be the file's plus one bias); read from a file alone, offsets
 * that are all zeros are not known (vmstructs__field() says -ENODATA) rather than wrong.
 *
 * Everything is checked, the file being a target's: strides and members' offsets inside an
 * entry of at most VMSTRUCTS_STRIDE_MAX bytes, every entry inside one section with file bytes,
 * every name inside such a section and NUL-terminated within VMSTRUCTS_NAME_MAX bytes, at most
 * VMSTRUCTS_ENTRIES_MAX entries a table (no NULL entry within them: refused).
 *
 * Names that differ between the JDKs bpfprof knows (17, 21, 25), handled by
 * vmstructs__hotspot_offsets() through alternatives (sources: each JDK's vmStructs.cpp, and the
 * OpenTelemetry eBPF profiler's interpreter/hotspot/data.go, which lists the same):
 *   - CodeBlob's code: _code_begin and _code_end (pointers, JDK 9 to 22) became _code_offset
 *     and _data_offset (int offsets from the blob, JDK 23+): code_is_offset says which.
 *   - nmethod's members owned by CompiledMethod until JDK 22 are published under
 *     "CompiledMethod" (_method, _deopt_handler_begin, _scopes_data_begin...); JDK 23 folded
 *     CompiledMethod into nmethod: each nmethod field is looked up under both type names.
 *   - nmethod::_deopt_handler_begin (a pointer, 17, 21) became _deopt_handler_offset (25,
 *     measured) and _deopt_handler_entry_offset (later JDKs); _scopes_data_begin (a pointer) became
 *     _scopes_data_offset; _metadata_offset moved into the mutable data (JDK 25+:
 *     CodeBlob::_mutable_data); _scopes_pcs_offset is relative to the immutable data from
 *     JDK 23 (nmethod::_immutable_data).
 *   - ConstMethod::_flags (u2, 17) became a ConstMethodFlags whose word is published as
 *     "_flags._flags" (21+).
 *   - JavaThread::_osthread (17, 21) is published as Thread::_osthread in 25; HeapBlock shrank
 *     from 16 to 8 bytes (25); CodeBlob gained _kind (25).
 *   - CodeCache::_heap (JDK 8, one heap) became _heaps (9+); GenericGrowableArray::_len became
 *     GrowableArrayBase::_len (16+).
 * The interpreter's frame slots are not in VMStructs (the SA's X86Frame.java has them): see
 * docs/jvm.md.
 */
#ifndef BPFPROF_JVM_VMSTRUCTS_H
#define BPFPROF_JVM_VMSTRUCTS_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Most entries read from one table. Debian's OpenJDK 17.0.15 has 788 VMStructEntry, 768
 * VMTypeEntry, 398 int and 86 long constants; 21: 826, 802, 352, 97; 25: 588, 336, 346, 97
 * (the JVMCI tables, not read here, apart). 10,000 leaves room for any JDK while bounding what
 * a file without a NULL entry (garbage, or made to loop) costs: a refusal after 10,000 entries,
 * a few hundred kilobytes read.
 */
#define VMSTRUCTS_ENTRIES_MAX 10000

/* Largest stride accepted, bytes: the entries are 48, 40, 16 and 16 bytes on LP64. */
#define VMSTRUCTS_STRIDE_MAX 256

/* Longest name read, bytes without the NUL. The longest in Debian's 17, 21 and 25 has 68 bytes
 * ("_klasses[static_cast<int>(vmClassID::Thread_FieldHolder_klass_knum)]"); 512 refuses
 * garbage, not a real name. */
#define VMSTRUCTS_NAME_MAX 512

/*
 * Strides and members' offsets, bytes, of the four entry types: the values of the exported
 * gHotSpotVM*Offset and *ArrayStride symbols. Members' sizes: names are pointers (8 bytes),
 * isStatic, isOopType, isIntegerType, isUnsigned and an int constant's value int32_t, offset,
 * size and a long constant's value uint64_t, address a pointer.
 */
struct vmstructs_layout {
	uint64_t struct_stride, struct_type_name, struct_field_name, struct_type_string,
		struct_is_static, struct_offset, struct_address;
	uint64_t type_stride, type_type_name, type_superclass_name, type_is_oop_type,
		type_is_integer_type, type_is_unsigned, type_size;
	uint64_t int_stride, int_name, int_value;
	uint64_t long_stride, long_name, long_value;
};

/* The layout of vmStructs.hpp's structs on LP64 (x86-64, aarch64), JDK 6 to 25. */
extern const struct vmstructs_layout VMSTRUCTS_LAYOUT_LP64;

/* The tables of one libjvm.so, owned (copies of its names): vmstructs.c. */
struct vmstructs;

/*
 * Reads len bytes at vaddr, a vaddr of the file (the reader adds the mapping's bias), from the
 * process that mapped it, into buf: 0, or a negative errno (a short read is an error).
 */
typedef int (*vmstructs_read_fn)(void *ctx, uint64_t vaddr, void *buf, size_t len);

/*
 * Reads the four tables of libjvm.so elf (ELFCLASS64, x86-64 or aarch64; symbols from .dynsym,
 * else .symtab). Names from the file always; values (layout, isStatic, offset, address, size,
 * constants) from the process through read(ctx, ...) when read is not NULL (every entry's name
 * pointers there must be the file's plus one bias), else from the file (the layout:
 * VMSTRUCTS_LAYOUT_LP64 where the file has no bytes for it). On 0, *out is the tables
 * (vmstructs__free() them); else a negative errno and why (why_sz bytes, NUL-terminated, may be
 * NULL when why_sz is 0) says why:
 *   -ENOENT: no gHotSpotVMStructs (or another of the four, or with read a layout symbol):
 *     not a libjvm;
 *   -EINVAL: a bad layout (stride 0 or over VMSTRUCTS_STRIDE_MAX, a member past the stride),
 *     a pointer or name outside the file's sections, a name unterminated within
 *     VMSTRUCTS_NAME_MAX, an entry without a field name, a process's entry not the file's;
 *   -E2BIG: no NULL entry within VMSTRUCTS_ENTRIES_MAX;
 *   read's error (-EIO for a positive one); -ENOMEM.
 */
int vmstructs__from_elf(Elf *elf, vmstructs_read_fn read, void *ctx, struct vmstructs **out,
			char *why, size_t why_sz);

/* Frees vs (NULL is fine). */
void vmstructs__free(struct vmstructs *vs);

/*
 * Lookups by HotSpot's names. Each returns 0 and the value, or -ENOENT (no such entry, or an
 * entry of the other kind: a static looked up as a field; a static whose address is NULL).
 * field: a non-static member's offset in its type, bytes ("CodeBlob", "_frame_size");
 *   -ENODATA when the offsets are not known (vmstructs__offsets_known()).
 * static: a static member's address, a vaddr of the file (the caller adds the mapping's bias).
 * type_size: sizeof the type ("nmethod"); 0 for a type HotSpot publishes without a size.
 */
int vmstructs__field(const struct vmstructs *vs, const char *type, const char *field,
		     uint64_t *offset);
int vmstructs__static(const struct vmstructs *vs, const char *type, const char *field,
		      uint64_t *vaddr);
int vmstructs__type_size(const struct vmstructs *vs, const char *type, uint64_t *size);
int vmstructs__int_constant(const struct vmstructs *vs, const char *name, int32_t *value);
int vmstructs__long_constant(const struct vmstructs *vs, const char *name, uint64_t *value);

/* Entries read: structs, types, int and long constants (counts[0..3]). */
void vmstructs__counts(const struct vmstructs *vs, size_t counts[4]);

/* Whether the non-static offsets are known: read from the process, or the file's not all 0. */
bool vmstructs__offsets_known(const struct vmstructs *vs);

/* The JDK's feature version (Abstract_VM_Version::_vm_major_version: 17), 0 when not known. */
unsigned int vmstructs__major(const struct vmstructs *vs);

/* The JDK's release ("17.0.15+6-Debian-1deb12u1": Abstract_VM_Version::_s_vm_release, set at
 * run time, so known only when read with the process), "" when not known. */
const char *vmstructs__release(const struct vmstructs *vs);

/* Largest type size accepted, bytes: HotSpot's largest published types (JavaThread, a few
 * KiB) are far below; it keeps offsets small enough for a BPF walker's bounded reads. */
#define HOTSPOT_SIZE_MAX (1u << 20)

/* An offset or address this JDK does not publish (a member of another JDK). */
#define HOTSPOT_OFF_NONE UINT64_MAX

/*
 * What a BPF walker of HotSpot frames (and the user-space naming of them) reads, by HotSpot's
 * names: sizes in bytes; offsets in bytes from the start of their type; statics as file
 * vaddrs (add the bias). HOTSPOT_OFF_NONE where this JDK has the other alternative (see the
 * file's comment). Once vmstructs__hotspot_offsets() returned 0, every offset other than
 * HOTSPOT_OFF_NONE is below its type's size where HotSpot publishes the size.
 */
struct hotspot_offsets {
	struct {
		uint64_t heaps;	    /* GrowableArray<CodeHeap*>* _heaps */
		uint64_t low_bound; /* address _low_bound: the code cache's lowest byte */
		uint64_t high_bound;
	} code_cache; /* CodeCache (statics) */
	struct {
		uint64_t len;  /* int: GrowableArrayBase, JDK 16+ */
		uint64_t data; /* E* _data: GrowableArray<int>'s, the same for any E */
	} growable_array;
	struct {
		uint64_t size;
		uint64_t memory;	    /* VirtualSpace: the heap's code */
		uint64_t segmap;	    /* VirtualSpace: one byte per segment */
		uint64_t log2_segment_size; /* int */
	} code_heap;			    /* CodeHeap */
	struct {
		uint64_t low_boundary, high_boundary, low, high; /* char* */
	} virtual_space;					 /* VirtualSpace */
	uint64_t heap_block_size; /* sizeof(HeapBlock): before each blob */
	struct {
		uint64_t size_of; /* sizeof(CodeBlob) */
		uint64_t name;	  /* const char* */
		uint64_t size;	  /* int: the blob's bytes */
		uint64_t header_size;
		uint64_t frame_complete_offset;
		uint64_t frame_size;   /* int: words */
		bool code_is_offset;   /* code_begin, code_end: int offsets (23+), else pointers */
		uint64_t code_begin;   /* _code_begin (pointer) or _code_offset (int) */
		uint64_t code_end;     /* _code_end (pointer) or _data_offset (int) */
		uint64_t mutable_data; /* address _mutable_data: 25+ */
	} code_blob;		       /* CodeBlob */
	struct {
		uint64_t size;
		uint64_t method;	 /* Method* _method */
		uint64_t compile_id;	 /* int */
		uint64_t orig_pc_offset; /* int */
		uint64_t deopt_handler;	 /* _deopt_handler_begin (pointer, 17, 21) or an offset */
		uint64_t scopes_data;	 /* _scopes_data_begin (pointer, 17, 21) or an offset */
		uint64_t scopes_pcs_offset;   /* int */
		uint64_t metadata_offset;     /* int: 17 to 24 */
		uint64_t dependencies_offset; /* int: the PcDescs' end, 17 to 22 */
		uint64_t immutable_data;      /* address: 23+ */
		uint64_t immutable_data_size; /* int: 23+ */
	} nmethod;			      /* nmethod, CompiledMethod before JDK 23 */
	struct {
		uint64_t size;
		uint64_t const_method; /* ConstMethod* _constMethod */
	} method;		       /* Method */
	struct {
		uint64_t size;		  /* the bytecodes follow it */
		uint64_t constants;	  /* ConstantPool* */
		uint64_t flags;		  /* u2 (17), the ConstMethodFlags' u4 (21+) */
		uint64_t code_size;	  /* u2 */
		uint64_t name_index;	  /* u2 */
		uint64_t signature_index; /* u2 */
	} const_method;			  /* ConstMethod */
	struct {
		uint64_t size;			 /* the pool's slots follow it */
		uint64_t pool_holder;		 /* InstanceKlass* */
		uint64_t source_file_name_index; /* u2: JDK 15+ */
	} constant_pool;			 /* ConstantPool */
	uint64_t klass_name;			 /* Klass::_name: Symbol* */
	struct {
		uint64_t size;
		uint64_t length; /* u2 */
		uint64_t body;	 /* u1[] */
	} symbol;		 /* Symbol */
	struct {
		uint64_t size;
		uint64_t pc_offset;	      /* int: from the nmethod's code begin */
		uint64_t scope_decode_offset; /* int */
		uint64_t obj_decode_offset;   /* int */
		uint64_t flags;		      /* int */
	} pc_desc;			      /* PcDesc */
	struct {
		uint64_t anchor;       /* JavaFrameAnchor, embedded */
		uint64_t thread_state; /* JavaThreadState (int) */
		uint64_t osthread;     /* OSThread* (Thread::_osthread) */
	} java_thread;		       /* JavaThread */
	struct {
		uint64_t last_java_sp, last_java_pc, last_java_fp; /* intptr_t*, address */
	} java_frame_anchor;					   /* JavaFrameAnchor */
	uint64_t osthread_thread_id;				   /* OSThread::_thread_id: pid_t */
};

/*
 * Fills *out from vs. Returns 0, or -ENOENT with why naming the first member missing
 * ("VMStructs of JDK 17.0.15+6-Debian-1deb12u1: no CodeBlob::_frame_size"; the major version
 * when the release is not known, "?" when neither is), -ENODATA when the offsets are not known
 * (a JDK 17 file read without its process), or -ERANGE for an offset at or past its type's
 * size, or a size over HOTSPOT_SIZE_MAX (why names it).
 */
int vmstructs__hotspot_offsets(const struct vmstructs *vs, struct hotspot_offsets *out, char *why,
			       size_t why_sz);

#endif /* BPFPROF_JVM_VMSTRUCTS_H */

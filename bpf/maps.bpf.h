/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* maps.bpf.h: the BPF maps shared by sample.bpf.c and task_events.bpf.c. */
#ifndef BPFPROF_MAPS_BPF_H
#define BPFPROF_MAPS_BPF_H

/*
 * Each map is defined __weak in every object that includes this header; `bpftool gen object`
 * merges the identical definitions into one, so both programs share them.
 */

/* Every record type, in reservation order: samples and task events of all CPUs.
 * Size set by the loader (bpf_map__set_max_entries) before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024 * 1024);
} ringbuf SEC(".maps") __weak;

/* tgid -> TARGET_* state. Only these processes are sampled and have memory read. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u32);
} target_tgids SEC(".maps") __weak;

/* One struct bpf_stats per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_stats);
} stats SEC(".maps") __weak;

/*
 * The stack mapping of a thread, cached: bpf_find_vma() takes mmap_lock, once per thread (and
 * again when sp leaves [start, limit), as the main thread's stack grows down). Deleted at
 * exec (task_events.bpf.c), whose new stack can overlap the old one's addresses.
 */
struct stack_vma {
	__u64 start;
	__u64 end;
	/* Where copies end: end, or for the main thread's stack the end of the page holding
	 * argc (mm->start_stack). Above it are the argv/auxv tables, the argument and
	 * environment strings (no frame, and possibly secrets), and a random gap exec leaves
	 * that the process may never touch, which a read cannot cross. */
	__u64 limit;
	/* The struct mm_struct the range belongs to: a hit needs the task's current mm, so a
	 * sample between exec's new mm and the exec tracepoint does not use the old image's. */
	__u64 mm;
	__u32 tid; /* the thread (stack_vmas_compat, where slots are shared), else 0 */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack_vma);
} stack_vmas SEC(".maps") __weak;

/* The same cache on kernels without task storage (< 5.11, compat.bpf.h): a direct-mapped
 * array, slot tid % STACK_VMAS_COMPAT_SZ, the owner in the slot's tid. An array, not a hash:
 * its lookups take no lock, and samples of a hardware event (-e cycles) run in NMI, which
 * can interrupt a hash map's update holding its bucket lock (5.10 has no guard). Threads
 * sharing a slot only miss; cleared at exec and thread exit. */
#define STACK_VMAS_COMPAT_SZ 16384
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACK_VMAS_COMPAT_SZ);
	__type(key, __u32);
	__type(value, struct stack_vma);
} stack_vmas_compat SEC(".maps") __weak;

/* tgid -> 1: the Go processes among the targets (their unwinds used .gopclntab), whose samples
 * get the stack their thread switched from (runtime/go.bpf.h, RECORD_GO_STACK). Set by user space,
 * deleted at exec and exit by user space too. LRU: a missed exit costs a few reads. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} go_procs SEC(".maps") __weak;

/* tgid -> struct py_proc: the CPython processes among the targets, whose samples get their
 * Python frames (runtime/python.bpf.h). Set by user space, and by task_events.bpf.c when a
 * process maps a file of py_binaries; deleted at exec and exit. LRU: a missed exit costs
 * nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps") __weak;

/* tid -> its PyThreadState in the first interpreter that has one, found by py_thread_state()
 * (a list walk): checked again at each use (thread_id is still the thread's). Deleted at thread
 * exit (task_events.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} py_tstates SEC(".maps") __weak;

/* The CPython files user space found, by (dev, ino): where _PyRuntime lies in them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct py_binary_key);
	__type(value, struct py_binary);
} py_binaries SEC(".maps") __weak;

/* Set by the loader before load. bpfprof -a: every process but bpfprof itself is a target. */
const volatile bool target_all __weak = false;
/* bpfprof's own tgid: never sampled, never followed. */
const volatile __u32 self_tgid __weak = 0;
/* Bytes of unread records from which a submit wakes the consumer (0: never). Records are
 * submitted without a wakeup (each costs an irq_work interrupt) and drained on a timer; this
 * wakes it early when the ringbuf fills faster than the timer drains it. */
const volatile __u64 wakeup_bytes __weak = 0;

/* The sampling state of tgid: TARGET_* with flags, or 0 when it is not a target. */
static __always_inline __u32 target_state(__u32 tgid)
{
	__u32 *state;

	if (target_all)
		return tgid == self_tgid || tgid == 0 ? 0 : TARGET_ACTIVE;
	state = bpf_map_lookup_elem(&target_tgids, &tgid);
	return state ? *state : 0;
}

/* bpf_ringbuf_submit() flags: a wakeup only past wakeup_bytes of unread records. */
static __always_inline __u64 ringbuf_flags(void)
{
	if (wakeup_bytes && bpf_ringbuf_query(&ringbuf, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline struct bpf_stats *stats__get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

#endif /* BPFPROF_MAPS_BPF_H */

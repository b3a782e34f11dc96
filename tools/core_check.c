// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * core_check: the CO-RE relocations of bpfprof's BPF programs, resolved against another
 * kernel's BTF. Every kernel struct field a program reads must exist on each kernel that
 * loads it: the programs for Linux >= 5.17 against the oldest such kernel tested (6.1), the
 * compat programs (bpf/compat.bpf.h) against 5.10. A field CO-RE cannot find makes libbpf
 * replace the instruction with an invalid one, and the program fails to load there (6.9's
 * pt_regs.csx did this on 6.1). Catches that at build time, without booting the kernel.
 *
 * usage: core_check OBJECT BTF full|compat
 *   OBJECT: build/bpfprof.bpf.o; BTF: a vmlinux ELF (its .BTF section) or raw BTF.
 * Needs root (libbpf relocates while loading; the load into this kernel is then undone) and
 * this kernel's BTF (libbpf reads it first for the tp_btf programs' attach points).
 * A read guarded by bpf_core_field_exists() is reported too: none is used today.
 * Exit status: 0 when every relocation resolved, 1 when some did not (each printed), 2 on
 * usage or setup errors.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
/* libbpf got past relocation (it logs each program it skips or loads after relocating all). */
static bool relocated;

/* libbpf's debug lines name each failed relocation: "prog 'X': relo #N: <spec>" followed by
 * "no matching targets found" and "substituting insn #M w/ invalid insn". */
static int print(enum libbpf_print_level level __attribute__((unused)), const char *fmt,
		 va_list args)
{
	static char last_spec[1024];
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, args);
	if (strstr(line, ": relo #") && strstr(line, "<") && !strstr(line, "candidate") &&
	    !strstr(line, "patched") && !strstr(line, "substituting"))
		snprintf(last_spec, sizeof(last_spec), "%s", line);
	if (strstr(line, "substituting insn") && strstr(line, "invalid insn")) {
		failures++;
		fprintf(stderr, "core_check: unresolved: %s", last_spec);
	}
	/* Errors that stop relocation instead of poisoning an instruction. */
	if (strstr(line, "failed to relocate") || strstr(line, "failed to patch") ||
	    strstr(line, "ambiguous")) {
		failures++;
		fprintf(stderr, "core_check: %s", line);
	}
	if (strstr(line, "skipped loading") || strstr(line, "BEGIN PROG LOAD LOG"))
		relocated = true;
	return 0;	/* the rest, the load into this kernel included, is not checked */
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *map;
	bool compat, is_compat;
	int err;

	if (argc != 4 || !argv[2][0] || (strcmp(argv[3], "full") && strcmp(argv[3], "compat"))) {
		fprintf(stderr, "usage: core_check OBJECT BTF full|compat\n");
		return 2;
	}
	compat = !strcmp(argv[3], "compat");
	if (geteuid() != 0) {
		fprintf(stderr, "core_check: needs root (libbpf relocates while loading)\n");
		return 2;
	}
	opts.btf_custom_path = argv[2];
	libbpf_set_print(print);
	obj = bpf_object__open_file(argv[1], &opts);
	if (!obj) {
		fprintf(stderr, "core_check: open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	/* The loader's choice (user/sampling/loader.c): one program of each NAME, NAME_compat pair. */
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		size_t n = strlen(name);

		is_compat = n > 7 && !strcmp(name + n - 7, "_compat");
		if (is_compat)
			bpf_program__set_autoload(prog, compat);
		else if (strcmp(name, "handle_fork"))
			bpf_program__set_autoload(prog, !compat);
	}
	bpf_object__for_each_map(map, obj) {
		if (!strcmp(bpf_map__name(map), "stack_vmas"))
			bpf_map__set_autocreate(map, !compat);
		else if (!strcmp(bpf_map__name(map), "stack_vmas_compat"))
			bpf_map__set_autocreate(map, compat);
	}
	/* Relocated against BTF, then loaded into this kernel: the load may well fail. */
	err = bpf_object__load(obj);
	bpf_object__close(obj);
	if (err && !relocated && !failures) {
		fprintf(stderr, "core_check: libbpf stopped before relocating: %s\n",
			strerror(-err));
		return 2;
	}
	if (failures) {
		fprintf(stderr, "core_check: %d CO-RE relocation%s of the %s programs do not resolve "
			"against %s\n", failures, failures > 1 ? "s" : "", argv[3], argv[2]);
		return 1;
	}
	printf("core_check: every CO-RE relocation of the %s programs resolves against %s\n",
	       argv[3], argv[2]);
	return 0;
}

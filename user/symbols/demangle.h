/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* demangle.h: C++ and Rust names demangled with libiberty, and the switches that pick the form. */
#ifndef BPFPROF_DEMANGLE_H
#define BPFPROF_DEMANGLE_H

/* Global switch for the demangling of symbol table and DWARF names (--no-demangle). Default
 * on. */
void demangle__set(int on);
/* The switch's current state: 1 when names are demangled. */
int demangle__on(void);

/*
 * Global switch for the form of demangled names (--full-names), default off: the short form
 * "ns::Class<T>::method", as perf shows it (libiberty without DMGL_PARAMS: template arguments
 * kept; no parameter list, cv-qualifiers or return type). On: the full signature
 * "ns::Class<T>::method(int) const". Set it before the first lookup: symbol tables and DWARF
 * caches keep the names of their first use.
 */
void demangle__set_full_names(int on);

/*
 * Demangles a C++ (Itanium ABI, "_Z...") or Rust (legacy "_ZN...17h<hash>E", v0 "_R...") name
 * with libiberty's cplus_demangle, in the form demangle__set_full_names() picks. Returns a
 * malloc'd string, or NULL when name is not a mangled name (the caller keeps the original).
 */
char *demangle__name(const char *name);

#endif /* BPFPROF_DEMANGLE_H */

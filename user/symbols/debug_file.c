// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* debug_file.c: separate debug files: by build-id, by .gnu_debuglink, fetched by debuginfod,
 * and dwz alt files. */
#include <gelf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include "symbols/debug_file.h"
#include "symbols/debuginfod.h"
#include "util/elf_read.h"
#include "util/file.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

static char debug_dir[PATH_MAX] = DEFAULT_DEBUG_DIR;

int debug_file__set_dir(const char *dir)
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

/* The file name in .gnu_debuglink (a plain name, no directory), or NULL. */
static const char *elf_debuglink(Elf *elf)
{
	Elf_Scn *scn = elf_read__section(elf, ".gnu_debuglink");
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

	return elf_read__symbols(elf, SHT_SYMTAB, &syms, &strs);
}

/* Whether elf's first section named name holds bytes (not SHT_NOBITS, not empty). */
static bool section_has_data(Elf *elf, const char *name)
{
	Elf_Scn *scn = elf_read__section(elf, name);
	GElf_Shdr shdr;

	return scn && gelf_getshdr(scn, &shdr) && shdr.sh_type != SHT_NOBITS && shdr.sh_size;
}

bool debug_file__has_dwarf(Elf *elf)
{
	return section_has_data(elf, ".debug_info") || section_has_data(elf, ".zdebug_info");
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
	dbg_id_len = elf_read__build_id(dbg, &dbg_id);
	if (id_len && dbg_id_len && (id_len != dbg_id_len || memcmp(id, dbg_id, id_len)))
		goto fail;
	if (((need & DEBUG_FILE_SYMTAB) && !elf_has_symtab(dbg)) ||
	    ((need & DEBUG_FILE_DWARF) && !debug_file__has_dwarf(dbg)))
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
	id_len = elf_read__build_id(elf, &id);
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
	if (id_len && !debuginfod__fetched_path(id, id_len, buf, sizeof(buf)))
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

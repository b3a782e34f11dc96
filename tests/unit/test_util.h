/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* test_util.h: helpers shared by the cmocka unit tests (include after cmocka.h). */
#ifndef BPFPROF_TEST_UTIL_H
#define BPFPROF_TEST_UTIL_H

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif

/* The path of fixture file name ($FIXTURES_DIR overrides the build's). Static buffer. */
static inline const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *dir = getenv("FIXTURES_DIR") ?: FIXTURES_DIR;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A lookup gave got+got_off for addr: name+off expected, or no symbol when name is NULL. */
static inline void assert_symbol(uint64_t addr, const char *got, uint64_t got_off,
				 const char *name, uint64_t off)
{
	if (!name) {
		if (got)
			fail_msg("%#llx: want no symbol, got %s+%#llx", (unsigned long long)addr,
				 got, (unsigned long long)got_off);
		return;
	}
	if (!got)
		fail_msg("%#llx: want %s+%#llx, got none", (unsigned long long)addr, name,
			 (unsigned long long)off);
}

/* Files for fixtures laid out at run time (debug roots, copies). */
static inline int read_file(const char *path, unsigned char **buf, size_t *size)
{
	struct stat st;
	ssize_t n;
	int fd;

	*buf = NULL;
	*size = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	*size = st.st_size;
	*buf = malloc(*size);
	n = read(fd, *buf, *size);
	close(fd);
	return n == (ssize_t)*size ? 0 : -1;
}

static inline void mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

/* Writes buf to dst, creating its directories. */
static inline void write_file(const char *dst, const void *buf, size_t size)
{
	char dir[PATH_MAX];
	int fd;

	snprintf(dir, sizeof(dir), "%s", dst);
	*strrchr(dir, '/') = '\0';
	mkdir_p(dir);
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
}

static inline void copy_file(const char *src, const char *dst)
{
	unsigned char *buf = NULL;
	size_t size = 0;

	assert_int_equal(read_file(src, &buf, &size), 0);
	write_file(dst, buf, size);
	free(buf);
}

/* The GNU build-id of the ELF file at path (at least 2 bytes: asserted) into id; its length. */
static inline size_t build_id_of(const char *path, uint8_t *id, size_t size)
{
	size_t off, next, name_off, desc_off, len = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Nhdr nh;
	Elf_Data *d;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!len && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		for (off = 0; d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off));
		     off = next) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= size) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				len = nh.n_descsz;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(len >= 2);
	return len;
}

#endif /* BPFPROF_TEST_UTIL_H */

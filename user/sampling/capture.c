// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* capture.c: raw capture files: length-prefixed records after a header. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/capture.h"
#include "util/output_file.h"

/* Largest entry a reader accepts: a sample with the largest stack, or a big maps text. */
#define CAPTURE_ENTRY_MAX (64u << 20)

struct capture_writer {
	struct output_file of;
	struct capture_header hdr;
	int err; /* the first write error: every later write fails with it */
};

/* One entry: a_sz + b_sz bytes, then padding. 0 or the first write error (negative errno). */
static int write_entry(struct capture_writer *w, const void *a, size_t a_sz, const void *b,
		       size_t b_sz)
{
	static const char zeros[8];
	FILE *fp = w->of.fp;
	__u32 sz = a_sz + b_sz;
	size_t pad = (8 - (sizeof(sz) + sz) % 8) % 8;

	if (w->err)
		return w->err;
	if (fwrite(&sz, sizeof(sz), 1, fp) != 1 || fwrite(a, a_sz, 1, fp) != 1 ||
	    (b_sz && fwrite(b, b_sz, 1, fp) != 1) || (pad && fwrite(zeros, pad, 1, fp) != 1))
		w->err = w->of.err ? w->of.err : -EIO;
	return w->err;
}

struct capture_writer *capture_writer__open(const char *path, const struct capture_header *hdr)
{
	struct capture_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	err = output_file__open(&w->of, path, OUTPUT_FILE_PRIVATE | OUTPUT_FILE_REGULAR);
	if (err) {
		free(w);
		errno = -err;
		return NULL;
	}
	w->hdr = *hdr;
	memset(w->hdr.magic, 0, sizeof(w->hdr.magic));
	memcpy(w->hdr.magic, CAPTURE_MAGIC, sizeof(CAPTURE_MAGIC));
	w->hdr.version = CAPTURE_VERSION;
	w->hdr.hdr_sz = sizeof(w->hdr);
	if (fwrite(&w->hdr, sizeof(w->hdr), 1, w->of.fp) != 1) {
		errno = -output_file__abort(&w->of, -EIO);
		free(w);
		return NULL;
	}
	return w;
}

int capture_writer__record(struct capture_writer *w, const void *data, size_t sz)
{
	return write_entry(w, data, sz, NULL, 0);
}

int capture_writer__text(struct capture_writer *w, uint32_t type, uint32_t tgid, const char *text,
			 size_t len)
{
	struct capture_maps_record r = {
		.hdr = { type, sizeof(r) + len },
		.tgid = tgid,
		.len = len,
	};

	return write_entry(w, &r, sizeof(r), text, len);
}

int capture_writer__close(struct capture_writer *w, int64_t start_realtime_ns, uint64_t duration_ns)
{
	struct record_header end = { RECORD_CAPTURE_BATCH, sizeof(end) };
	int err;

	if (!w)
		return 0;
	err = write_entry(w, &end, sizeof(end), NULL, 0);
	w->hdr.duration_ns = duration_ns;
	if (start_realtime_ns > 0)
		w->hdr.start_realtime_ns = start_realtime_ns;
	/* The header again, now with the run's start and duration. */
	if (!err &&
	    (fseek(w->of.fp, 0, SEEK_SET) || fwrite(&w->hdr, sizeof(w->hdr), 1, w->of.fp) != 1))
		err = -EIO;
	if (err)
		err = output_file__abort(&w->of, err);
	else
		err = output_file__commit(&w->of);
	free(w);
	return err;
}

struct capture_reader {
	FILE *fp;
	uint64_t *buf; /* 8-byte aligned */
	size_t cap;    /* bytes */
};

struct capture_reader *capture_reader__open(const char *path, struct capture_header *hdr)
{
	struct capture_reader *r = calloc(1, sizeof(*r));
	int err = -EINVAL;

	if (!r)
		return NULL;
	r->fp = fopen(path, "re");
	if (!r->fp) {
		err = -errno;
		goto fail;
	}
	memset(hdr, 0, sizeof(*hdr));
	if (fread(hdr, CAPTURE_HDR_SZ_V1, 1, r->fp) != 1 ||
	    memcmp(hdr->magic, CAPTURE_MAGIC, sizeof(CAPTURE_MAGIC)))
		goto fail;
	if (hdr->version == 1 && hdr->hdr_sz == CAPTURE_HDR_SZ_V1)
		return r;
	if (hdr->version != CAPTURE_VERSION || hdr->hdr_sz != sizeof(*hdr)) {
		err = -ENOTSUP;
		goto fail;
	}
	if (fread((char *)hdr + CAPTURE_HDR_SZ_V1, sizeof(*hdr) - CAPTURE_HDR_SZ_V1, 1, r->fp) != 1)
		goto fail;
	return r;
fail:
	capture_reader__close(r);
	errno = -err;
	return NULL;
}

int capture_reader__next(struct capture_reader *r, const void **data, size_t *sz)
{
	size_t pad, need;
	__u32 len;
	void *tmp;

	if (fread(&len, sizeof(len), 1, r->fp) != 1)
		return feof(r->fp) ? 0 : -EIO;
	if (len < sizeof(struct record_header) || len > CAPTURE_ENTRY_MAX)
		return -EINVAL;
	if (len > r->cap) {
		need = (len + 7) & ~7u;
		tmp = realloc(r->buf, need);
		if (!tmp)
			return -ENOMEM;
		r->buf = tmp;
		r->cap = need;
	}
	pad = (8 - (sizeof(len) + len) % 8) % 8;
	if (fread(r->buf, len, 1, r->fp) != 1 || (pad && fseek(r->fp, pad, SEEK_CUR)))
		return -EINVAL;
	*data = r->buf;
	*sz = len;
	return 1;
}

void capture_reader__close(struct capture_reader *r)
{
	if (!r)
		return;
	if (r->fp)
		fclose(r->fp);
	free(r->buf);
	free(r);
}

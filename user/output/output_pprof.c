// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output_pprof.c: aggregate -> profile.proto (protobuf-c) -> gzip (zlib). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <zlib.h>
#include "process/module_cache.h"
#include "output/output_pprof.h"
#include "util/util.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

#define PAGE_MASK_4K (~(uint64_t)4095)

/* ELF file -> mapping id; (name, system name, file) -> function id. */
struct map_ref {
	const struct module *entry;
	size_t idx;
	UT_hash_handle hh;
};

struct func_key {
	uint32_t name;
	uint32_t system_name;
	uint32_t file;
};

struct func_ref {
	struct func_key key;
	size_t idx;
	UT_hash_handle hh;
};

/* Everything the Profile message points to, freed in one place. */
struct encoder {
	struct aggregate *agg;
	const struct pprof_opts *o;
	uint64_t period;
	Profile prof;
	/* samples/count, cpu/nanoseconds, then with off-CPU stacks (--off-cpu) switches/count,
	 * off_cpu/nanoseconds; without perf_event samples, the last two only. */
	ValueType types[4], *type_ptrs[4], period_type;
	size_t n_types;
	bool cpu, off_cpu; /* which pairs the profile has */
	Mapping *maps;
	Mapping **map_ptrs;
	size_t maps_cnt, maps_cap;
	struct map_ref *map_hash;
	size_t kernel_map; /* 1 + index of the kernel mapping, 0 when none yet */
	Location *locs;
	Location **loc_ptrs;
	uint32_t *loc_ids; /* aggregate location id -> pprof id (1-based), 0: unused */
	size_t locs_cnt;
	Line *lines;
	Line **line_ptrs;
	Function *funcs;
	Function **func_ptrs;
	size_t funcs_cnt, funcs_cap;
	struct func_ref *func_hash;
	Sample *samples;
	Sample **sample_ptrs;
	size_t samples_cnt;
	uint64_t *sample_locs;	/* all samples' location ids, back to back */
	int64_t *sample_values; /* n_types per sample */
	Label *labels;		/* labels_per_sample per sample */
	Label **label_ptrs;
	size_t labels_per_sample; /* pid, tid, comm, then o->labels */
	size_t sample_locs_used;
	char **strings;
	int64_t *comments; /* o->comment, then "key=value" per o->labels */
	size_t comments_cnt;
	int64_t s_pid, s_tid, s_comm;
	int64_t *s_labels; /* o->labels: key and value ids, two per label */
	int err;
};

static int64_t str(struct encoder *enc, const char *s)
{
	int64_t id = aggregate__string(enc->agg, s);

	if (id < 0 && !enc->err)
		enc->err = id;
	return id < 0 ? 0 : id;
}

/* The index of a new mapping; the Mapping array may move, so pointers are set at the end. */
static ssize_t new_mapping(struct encoder *enc)
{
	Mapping *m;

	if (array_grow((void **)&enc->maps, &enc->maps_cap, enc->maps_cnt + 1, sizeof(*enc->maps),
		       16))
		return -ENOMEM;
	m = &enc->maps[enc->maps_cnt];
	perftools__profiles__mapping__init(m);
	m->id = enc->maps_cnt + 1;
	return enc->maps_cnt++;
}

/*
 * Mapping of an ELF file, in ELF virtual addresses (the locations' addresses): the range of its
 * PT_LOAD segments, the file offset of the first. bpfprof names every location itself, so
 * pprof never needs to map these addresses back into the file.
 */
static ssize_t elf_mapping(struct encoder *enc, const struct module *e)
{
	uint64_t lo = UINT64_MAX, hi = 0, off = 0;
	struct map_ref *r;
	char build_id[2 * sizeof(e->build_id) + 1];
	ssize_t idx;
	Mapping *m;
	size_t i;

	HASH_FIND_PTR(enc->map_hash, &e, r);
	if (r)
		return r->idx;
	idx = new_mapping(enc);
	r = malloc(sizeof(*r));
	if (idx < 0 || !r) {
		free(r);
		return -ENOMEM;
	}
	r->entry = e;
	r->idx = idx;
	HASH_ADD_PTR(enc->map_hash, entry, r);
	for (i = 0; i < e->loads_cnt; i++) {
		if (e->loads[i].vaddr < lo) {
			lo = e->loads[i].vaddr;
			off = e->loads[i].offset;
		}
		if (e->loads[i].vaddr + e->loads[i].memsz > hi)
			hi = e->loads[i].vaddr + e->loads[i].memsz;
	}
	m = &enc->maps[idx];
	if (lo < hi) {
		m->memory_start = lo & PAGE_MASK_4K;
		m->memory_limit = hi;
		m->file_offset = off & PAGE_MASK_4K;
	}
	m->filename = str(enc, e->path);
	if (e->build_id_sz) {
		hex_encode(build_id, e->build_id, e->build_id_sz);
		m->build_id = str(enc, build_id);
	}
	m->has_functions = true;
	return idx;
}

static ssize_t kernel_mapping(struct encoder *enc)
{
	ssize_t idx;

	if (enc->kernel_map)
		return enc->kernel_map - 1;
	idx = new_mapping(enc);
	if (idx < 0)
		return idx;
	/* A name in brackets: pprof never tries to open or symbolize it. */
	enc->maps[idx].filename = str(enc, "[kernel.kallsyms]");
	enc->maps[idx].memory_limit = UINT64_MAX;
	enc->maps[idx].has_functions = true;
	enc->kernel_map = idx + 1;
	return idx;
}

/* The function of line (its names and file), added on first use. */
static ssize_t function(struct encoder *enc, const struct agg_line *line)
{
	struct func_key key = {
		.name = line->function,
		/* The mangled name, from which pprof's demangler can rebuild any form
		 * (-symbolize=demangle=full); the name as shown where the file has no other. */
		.system_name = line->system_name ? line->system_name : line->function,
		.file = line->file,
	};
	struct func_ref *r;
	Function *f;

	HASH_FIND(hh, enc->func_hash, &key, sizeof(key), r);
	if (r)
		return r->idx;
	if (array_grow((void **)&enc->funcs, &enc->funcs_cap, enc->funcs_cnt + 1,
		       sizeof(*enc->funcs), 16))
		return -ENOMEM;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->key = key;
	r->idx = enc->funcs_cnt;
	HASH_ADD(hh, enc->func_hash, key, sizeof(r->key), r);
	f = &enc->funcs[enc->funcs_cnt];
	perftools__profiles__function__init(f);
	f->id = enc->funcs_cnt + 1;
	f->name = key.name;
	f->system_name = key.system_name;
	f->filename = key.file;
	return enc->funcs_cnt++;
}

/* pprof takes the first mapping for the main binary: executables first (ET_EXEC, or a PIE
 * whose name does not look like a shared object), then by first use. */
static int exec_rank(const struct module *e)
{
	if (!e->is_dyn)
		return 0;
	return strstr(e->name, ".so") ? 2 : 1;
}

static int map_main_binaries(struct encoder *enc)
{
	size_t n = aggregate__locations(enc->agg), i;
	const struct agg_location *l;
	int rank;

	for (rank = 0; rank < 3; rank++) {
		for (i = 0; i < n; i++) {
			l = aggregate__loc(enc->agg, i);
			if (enc->loc_ids[i] && l->entry && exec_rank(l->entry) == rank &&
			    elf_mapping(enc, l->entry) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static bool kept(const struct encoder *enc, const struct agg_stack *st)
{
	if (enc->o->only_origin && st->origin != enc->o->origin)
		return false;
	return !enc->o->keep || enc->o->keep(st, enc->o->keep_arg);
}

/* Numbers the locations the kept samples use, 1-based, in aggregate order. */
static int mark_locations(const struct agg_stack *st, void *arg)
{
	struct encoder *enc = arg;
	uint32_t i;

	if (!kept(enc, st))
		return 0;
	for (i = 0; i < st->n; i++)
		enc->loc_ids[st->locs[i]] = 1;
	return 0;
}

static int encode_locations(struct encoder *enc)
{
	size_t n = aggregate__locations(enc->agg), lines_cnt = 0, i, k = 0;
	const struct agg_location *l;
	ssize_t map, fn;
	uint32_t j;

	enc->loc_ids = calloc(n + 1, sizeof(*enc->loc_ids));
	if (!enc->loc_ids)
		return -ENOMEM;
	aggregate__for_each(enc->agg, mark_locations, enc);
	for (i = 0; i < n; i++) {
		if (enc->loc_ids[i]) {
			enc->loc_ids[i] = ++enc->locs_cnt;
			lines_cnt += aggregate__loc(enc->agg, i)->lines_cnt;
		}
	}
	enc->locs = calloc(enc->locs_cnt + 1, sizeof(*enc->locs));
	enc->loc_ptrs = calloc(enc->locs_cnt + 1, sizeof(*enc->loc_ptrs));
	enc->lines = calloc(lines_cnt + 1, sizeof(*enc->lines));
	enc->line_ptrs = calloc(lines_cnt + 1, sizeof(*enc->line_ptrs));
	if (!enc->locs || !enc->loc_ptrs || !enc->lines || !enc->line_ptrs ||
	    map_main_binaries(enc))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		Location *loc;

		if (!enc->loc_ids[i])
			continue;
		loc = &enc->locs[enc->loc_ids[i] - 1];
		l = aggregate__loc(enc->agg, i);
		perftools__profiles__location__init(loc);
		loc->id = enc->loc_ids[i];
		map = -1;
		if (l->entry)
			map = elf_mapping(enc, l->entry);
		else if (l->kind == FRAME_KERNEL)
			map = kernel_mapping(enc);
		if (map < -1)
			return -ENOMEM;
		if (map >= 0) {
			/* Ids, not pointers: the mapping array may still move. */
			loc->mapping_id = map + 1;
			loc->address = l->addr;
		}
		loc->line = &enc->line_ptrs[k];
		loc->n_line = l->lines_cnt;
		for (j = 0; j < l->lines_cnt; j++, k++) {
			Line *line = &enc->lines[k];

			perftools__profiles__line__init(line);
			fn = function(enc, &l->lines[j]);
			if (fn < 0)
				return fn;
			line->function_id = fn + 1;
			line->line = l->lines[j].line;
			enc->line_ptrs[k] = line;
			if (map >= 0) {
				Mapping *m = &enc->maps[map];

				if (l->lines[j].file)
					m->has_filenames = true;
				if (l->lines[j].line)
					m->has_line_numbers = true;
				if (l->lines_cnt > 1)
					m->has_inline_frames = true;
			}
		}
		enc->loc_ptrs[loc->id - 1] = loc;
	}
	return 0;
}

struct count_ctx {
	struct encoder *enc;
	size_t n[2];
};

static int count_locs(const struct agg_stack *st, void *arg)
{
	struct count_ctx *c = arg;
	size_t *n = c->n;

	if (!kept(c->enc, st))
		return 0;
	n[0]++;
	n[1] += st->n;
	return 0;
}

static int add_sample(const struct agg_stack *st, void *arg)
{
	struct encoder *enc = arg;
	size_t i, nl = enc->labels_per_sample;
	Sample *s;
	Label *lb;
	uint32_t j;

	if (!kept(enc, st))
		return 0;
	i = enc->samples_cnt++;
	s = &enc->samples[i];
	lb = &enc->labels[nl * i];
	perftools__profiles__sample__init(s);
	s->location_id = &enc->sample_locs[enc->sample_locs_used];
	s->n_location_id = st->n;
	for (j = 0; j < st->n; j++) /* leaf first */
		s->location_id[j] = enc->loc_ids[st->locs[st->n - 1 - j]];
	enc->sample_locs_used += st->n;
	s->value = &enc->sample_values[enc->n_types * i];
	s->n_value = enc->n_types;
	j = 0;
	if (enc->cpu) {
		s->value[j++] = st->origin == SAMPLE_CPU ? st->count : 0;
		s->value[j++] = st->origin == SAMPLE_CPU ? st->count * enc->period : 0;
	}
	if (enc->off_cpu) {
		s->value[j++] = st->origin == SAMPLE_OFF_CPU ? st->count : 0;
		s->value[j++] = st->origin == SAMPLE_OFF_CPU ? st->ns : 0;
	}
	for (j = 0; j < nl; j++) {
		perftools__profiles__label__init(&lb[j]);
		enc->label_ptrs[nl * i + j] = &lb[j];
	}
	lb[0].key = enc->s_pid;
	lb[0].num = st->pid;
	lb[1].key = enc->s_tid;
	lb[1].num = st->tid;
	lb[2].key = enc->s_comm;
	lb[2].str = st->comm;
	for (j = 3; j < nl; j++) {
		lb[j].key = enc->s_labels[2 * (j - 3)];
		lb[j].str = enc->s_labels[2 * (j - 3) + 1];
	}
	s->label = &enc->label_ptrs[nl * i];
	s->n_label = nl;
	enc->sample_ptrs[i] = s;
	return 0;
}

static int encode_samples(struct encoder *enc)
{
	struct count_ctx c = { .enc = enc };
	size_t *n = c.n;

	aggregate__for_each(enc->agg, count_locs, &c);
	enc->samples = calloc(n[0] + 1, sizeof(*enc->samples));
	enc->sample_ptrs = calloc(n[0] + 1, sizeof(*enc->sample_ptrs));
	enc->sample_locs = calloc(n[1] + 1, sizeof(*enc->sample_locs));
	enc->sample_values = calloc(enc->n_types * n[0] + 1, sizeof(*enc->sample_values));
	enc->labels = calloc(enc->labels_per_sample * n[0] + 1, sizeof(*enc->labels));
	enc->label_ptrs = calloc(enc->labels_per_sample * n[0] + 1, sizeof(*enc->label_ptrs));
	if (!enc->samples || !enc->sample_ptrs || !enc->sample_locs || !enc->sample_values ||
	    !enc->labels || !enc->label_ptrs)
		return -ENOMEM;
	return aggregate__for_each(enc->agg, add_sample, enc);
}

static void encoder__free(struct encoder *enc)
{
	struct map_ref *mr, *mt;
	struct func_ref *fr, *ft;

	HASH_ITER(hh, enc->map_hash, mr, mt) {
		HASH_DEL(enc->map_hash, mr);
		free(mr);
	}
	HASH_ITER(hh, enc->func_hash, fr, ft) {
		HASH_DEL(enc->func_hash, fr);
		free(fr);
	}
	free(enc->maps);
	free(enc->map_ptrs);
	free(enc->locs);
	free(enc->loc_ptrs);
	free(enc->loc_ids);
	free(enc->lines);
	free(enc->line_ptrs);
	free(enc->funcs);
	free(enc->func_ptrs);
	free(enc->samples);
	free(enc->sample_ptrs);
	free(enc->sample_locs);
	free(enc->sample_values);
	free(enc->labels);
	free(enc->label_ptrs);
	free(enc->strings);
	free(enc->comments);
	free(enc->s_labels);
}

/* The comment, o->labels as sample labels and as "key=value" comments: their string ids. */
static int profile_labels(struct encoder *enc)
{
	const struct pprof_opts *o = enc->o;
	char *kv;
	size_t i;

	enc->labels_per_sample = 3 + o->labels_cnt;
	enc->comments = calloc(1 + o->labels_cnt, sizeof(*enc->comments));
	enc->s_labels = calloc(2 * o->labels_cnt + 1, sizeof(*enc->s_labels));
	if (!enc->comments || !enc->s_labels)
		return -ENOMEM;
	if (o->comment)
		enc->comments[enc->comments_cnt++] = str(enc, o->comment);
	for (i = 0; i < o->labels_cnt; i++) {
		enc->s_labels[2 * i] = str(enc, o->labels[i].key);
		enc->s_labels[2 * i + 1] = str(enc, o->labels[i].value);
		if (asprintf(&kv, "%s=%s", o->labels[i].key, o->labels[i].value) < 0)
			return -ENOMEM;
		enc->comments[enc->comments_cnt++] = str(enc, kv);
		free(kv);
	}
	return 0;
}

/* Profile -> protobuf bytes -> gzip (RFC 1952 framing: deflateInit2 with 16 + MAX_WBITS).
 * Level 1: the agent compresses a profile per group every interval; on make demo's profile
 * (55 KiB) level 6 took 2.5x the CPU of level 1 for a file 6% smaller. */
static int gzip_bytes(const uint8_t *in, size_t in_sz, void **gz, size_t *gz_sz)
{
	z_stream zs = {};
	size_t cap = in_sz / 4 + 1024;
	uint8_t *out = malloc(cap), *tmp;
	int ret;

	if (!out)
		return -ENOMEM;
	if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		free(out);
		return -ENOMEM;
	}
	zs.next_in = (uint8_t *)in;
	zs.avail_in = in_sz;
	do {
		if (zs.total_out == cap) {
			tmp = realloc(out, cap * 2);
			if (!tmp) {
				deflateEnd(&zs);
				free(out);
				return -ENOMEM;
			}
			out = tmp;
			cap *= 2;
		}
		zs.next_out = out + zs.total_out;
		zs.avail_out = cap - zs.total_out;
		ret = deflate(&zs, Z_FINISH);
	} while (ret == Z_OK || ret == Z_BUF_ERROR);
	if (ret != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return -EIO;
	}
	*gz = out;
	*gz_sz = zs.total_out;
	deflateEnd(&zs);
	return 0;
}

/* output_pprof__encode(), and what it encoded in *counts (NULL: not wanted). */
static int encode(struct aggregate *agg, const struct pprof_opts *o, void **gz, size_t *gz_sz,
		  struct output_counts *counts)
{
	struct encoder enc = { .agg = agg, .o = o };
	Profile *p = &enc.prof;
	uint8_t *buf = NULL;
	size_t i, sz;
	int err;

	perftools__profiles__profile__init(p);
	enc.period = o->freq_hz ? 1000000000ull / o->freq_hz : 0;
	if (o->only_origin) {
		enc.off_cpu = o->origin == SAMPLE_OFF_CPU;
		enc.cpu = o->origin == SAMPLE_CPU;
	} else {
		enc.off_cpu = aggregate__has_off_cpu(agg);
		enc.cpu = !enc.off_cpu || o->freq_hz;
	}
	enc.n_types = 2 * enc.cpu + 2 * enc.off_cpu;
	for (i = 0; i < enc.n_types; i++) {
		perftools__profiles__value_type__init(&enc.types[i]);
		enc.type_ptrs[i] = &enc.types[i];
	}
	/* By convention the first value of a pair is a count; consumers show the last by default. */
	i = 0;
	if (enc.cpu) {
		enc.types[i].type = str(&enc, "samples");
		enc.types[i++].unit = str(&enc, "count");
		enc.types[i].type = str(&enc, "cpu");
		enc.types[i++].unit = str(&enc, "nanoseconds");
	}
	if (enc.off_cpu) {
		enc.types[i].type = str(&enc, "switches");
		enc.types[i++].unit = str(&enc, "count");
		enc.types[i].type = str(&enc, "off_cpu");
		enc.types[i++].unit = str(&enc, "nanoseconds");
	}
	perftools__profiles__value_type__init(&enc.period_type);
	enc.period_type.type = enc.types[1].type;
	enc.period_type.unit = enc.types[1].unit;
	enc.s_pid = str(&enc, "pid");
	enc.s_tid = str(&enc, "tid");
	enc.s_comm = str(&enc, "comm");
	err = profile_labels(&enc);
	err = err ?: enc.err;
	if (!err)
		err = encode_locations(&enc);
	if (!err)
		err = encode_samples(&enc);
	if (!err)
		err = enc.err;
	if (err)
		goto out;

	/* Pointer arrays last: the mapping and function arrays have stopped moving. */
	enc.map_ptrs = calloc(enc.maps_cnt + 1, sizeof(*enc.map_ptrs));
	enc.func_ptrs = calloc(enc.funcs_cnt + 1, sizeof(*enc.func_ptrs));
	enc.strings = calloc(aggregate__strings(agg) + 1, sizeof(*enc.strings));
	if (!enc.map_ptrs || !enc.func_ptrs || !enc.strings) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < enc.maps_cnt; i++)
		enc.map_ptrs[i] = &enc.maps[i];
	for (i = 0; i < enc.funcs_cnt; i++)
		enc.func_ptrs[i] = &enc.funcs[i];
	for (i = 0; i < aggregate__strings(agg); i++)
		enc.strings[i] = (char *)aggregate__str(agg, i);

	p->sample_type = enc.type_ptrs;
	p->n_sample_type = enc.n_types;
	p->sample = enc.sample_ptrs;
	p->n_sample = enc.samples_cnt;
	p->mapping = enc.map_ptrs;
	p->n_mapping = enc.maps_cnt;
	p->location = enc.loc_ptrs;
	p->n_location = enc.locs_cnt;
	p->function = enc.func_ptrs;
	p->n_function = enc.funcs_cnt;
	p->string_table = enc.strings;
	p->n_string_table = aggregate__strings(agg);
	p->time_nanos = o->time_ns;
	p->duration_nanos = o->duration_ns;
	p->period_type = &enc.period_type;
	p->period = enc.cpu ? enc.period : 0; /* no sampling period off CPU */
	p->comment = enc.comments;
	p->n_comment = enc.comments_cnt;

	sz = perftools__profiles__profile__get_packed_size(p);
	buf = malloc(sz + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(p, buf);
	err = gzip_bytes(buf, sz, gz, gz_sz);
	if (!err && counts) {
		counts->stacks = enc.samples_cnt;
		counts->samples = 0;
		for (i = 0; i < enc.samples_cnt; i++)
			counts->samples += enc.samples[i].value[0];
	}
out:
	free(buf);
	encoder__free(&enc);
	return err;
}

int output_pprof__encode(struct aggregate *agg, const struct pprof_opts *o, void **gz,
			 size_t *gz_sz)
{
	return encode(agg, o, gz, gz_sz, NULL);
}

int output_pprof__write(struct aggregate *agg, FILE *fp, const struct pprof_opts *o,
			struct output_counts *counts)
{
	size_t sz = 0;
	void *gz = NULL;
	int err;

	err = encode(agg, o, &gz, &sz, counts);
	if (err)
		return err;
	if (fwrite(gz, 1, sz, fp) != sz)
		err = -EIO;
	free(gz);
	return err;
}

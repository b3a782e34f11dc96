// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_flamegraph.c: the SVG flame graph: frame boxes against counts, order, escaping, colours,
 * pruning, determinism, and xmllint on the output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "output/flamegraph.h"
#include "runtime/jit/jit.h"

/* Where test_write_fixture() leaves a graph for tests/svg/check.sh (set by flamegraph.mk). */
#ifndef FLAMEGRAPH_UNIT_SVG
#define FLAMEGRAPH_UNIT_SVG "build/tests/flamegraph-unit.svg"
#endif

#define XPAD 10.0

/* One frame as written: <g data-x data-w><title/><rect/><text/></g>, text still escaped. */
struct frame {
	char name[256];		/* the title up to its last " (" */
	unsigned long long x, w, n;	/* data-x, data-w, N of the title */
	char unit[32];
	double pct;
	double rx, rw;		/* the rect's x and width, px */
	unsigned int ry;
	unsigned int rgb[3];
	char text[256];
};

struct graph {
	char *svg;
	size_t sz;
	struct frame *f;
	size_t cnt;
	unsigned int width, height;
};

/* Copies [from, to) of s into dst (cap bytes). */
static void copy_span(char *dst, size_t cap, const char *from, const char *to)
{
	size_t n = to - from;

	assert_true(to >= from);
	assert_true(n < cap);
	memcpy(dst, from, n);
	dst[n] = '\0';
}

static void parse_frame(const char *line, struct frame *f)
{
	const char *title, *end, *open, *p;
	char buf[4096];
	int off = -1;

	/* One line each; a copy, since sscanf() measures the whole string it reads. */
	end = strchr(line, '\n');
	assert_non_null(end);
	copy_span(buf, sizeof(buf), line, end + 1);
	p = buf;

	assert_int_equal(sscanf(p, "<g data-x=\"%llu\" data-w=\"%llu\"><title>%n", &f->x, &f->w,
				&off), 2);
	assert_true(off > 0);
	title = p + off;
	end = strstr(title, "</title>");
	assert_non_null(end);
	/* The last " (": names may hold parentheses. */
	for (open = end; open > title && strncmp(open, " (", 2); open--)
		;
	assert_true(open > title || !strncmp(open, " (", 2));
	copy_span(f->name, sizeof(f->name), title, open);
	assert_int_equal(sscanf(open, " (%llu %31[^,], %lf%%)</title>", &f->n, f->unit, &f->pct),
			 3);
	off = -1;
	assert_int_equal(sscanf(end, "</title><rect x=\"%lf\" y=\"%u\" width=\"%lf\" "
				"height=\"15\" fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>"
				"<text x=\"%*f\" y=\"%*u\">%n", &f->rx, &f->ry, &f->rw,
				&f->rgb[0], &f->rgb[1], &f->rgb[2], &off), 6);
	assert_true(off > 0);
	p = end + off;
	end = strstr(p, "</text></g>\n");
	assert_non_null(end);
	copy_span(f->text, sizeof(f->text), p, end);
}

static void parse(struct graph *g)
{
	const char *p, *nl;
	size_t cap = 16;

	assert_int_equal(sscanf(strstr(g->svg, "<svg "), "<svg version=\"1.1\" width=\"%u\" "
				"height=\"%u\"", &g->width, &g->height), 2);
	g->f = calloc(cap, sizeof(*g->f));
	/* Line by line, not strstr() over the rest: ASan's strstr measures the whole haystack,
	 * quadratic in test_large's 20 MB. */
	for (p = g->svg; p; p = (nl = strchr(p, '\n')) ? nl + 1 : NULL) {
		if (strncmp(p, "<g data-x=", 10))
			continue;
		if (g->cnt == cap) {
			cap *= 2;
			g->f = realloc(g->f, cap * sizeof(*g->f));
		}
		assert_non_null(g->f);
		memset(&g->f[g->cnt], 0, sizeof(*g->f));
		parse_frame(p, &g->f[g->cnt++]);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Writes fg into g and parses it; the time flamegraph__write_svg() took, ms. */
static double write_graph(const struct flamegraph *fg, const struct flamegraph_opts *o,
			  struct graph *g)
{
	double t0, ms;
	FILE *mem;

	memset(g, 0, sizeof(*g));
	mem = open_memstream(&g->svg, &g->sz);
	assert_non_null(mem);
	t0 = now_ms();
	assert_int_equal(flamegraph__write_svg(fg, mem, o), 0);
	assert_int_equal(fclose(mem), 0);
	ms = now_ms() - t0;
	parse(g);
	return ms;
}

static void free_graph(struct graph *g)
{
	free(g->svg);
	free(g->f);
}

/* The frame named name (as written, escaped) whose rect row is y, or any row when y is 0. */
static const struct frame *find(const struct graph *g, const char *name, unsigned int y)
{
	size_t i;

	for (i = 0; i < g->cnt; i++)
		if (!strcmp(g->f[i].name, name) && (!y || g->f[i].ry == y))
			return &g->f[i];
	fail_msg("no frame '%s' (row y=%u) in the graph", name, y);
	return NULL;
}

static int has_frame(const struct graph *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->cnt; i++)
		if (!strcmp(g->f[i].name, name))
			return 1;
	return 0;
}

/* Adds one stack given as "comm;f1;f2" with kinds from suffixes "_[k]", "_[i]", "_[j]". */
static void add(struct flamegraph *fg, const char *folded, uint64_t count)
{
	char *copy = strdup(folded), *save = NULL, *tok;
	const char *names[64];
	const struct frame_kind *kinds[64];
	size_t n = 0, len;

	assert_non_null(copy);
	for (tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		assert_true(n < 64);
		len = strlen(tok);
		kinds[n] = n ? FRAME_USER : FRAME_COMM;
		if (len > 4 && tok[len - 4] == '_' && tok[len - 3] == '[' && tok[len - 1] == ']') {
			kinds[n] = tok[len - 2] == 'k' ? FRAME_KERNEL :
				   tok[len - 2] == 'i' ? FRAME_INLINE : FRAME_JIT;
			tok[len - 4] = '\0';
		}
		names[n++] = tok;
	}
	assert_int_equal(flamegraph__add(fg, names, kinds, n, count), 0);
	free(copy);
}

static void assert_near(double actual, double expected, double tol, const char *what)
{
	if (actual < expected - tol || actual > expected + tol)
		fail_msg("%s: %.4f, expected %.4f +/- %.4f", what, actual, expected, tol);
}

/* xmllint --noout accepts the file (a failure when CI=true and xmllint is missing). */
static void assert_xmllint(const char *path)
{
	char cmd[4096 + 64];
	int rc;

	if (system("command -v xmllint >/dev/null 2>&1")) {
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			fail_msg("xmllint not found (Debian libxml2-utils); CI=true needs it");
		print_message("xmllint not found (Debian libxml2-utils): not checked\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", path);
	rc = system(cmd);
	if (rc)
		fail_msg("xmllint --noout %s: exit status %d", path, rc);
}

/* Widths and positions follow the counts; callees sorted by name from the left; rows from the
 * bottom; percentages; the root "all". */
static void test_layout(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	const struct frame *all, *app, *main_, *a, *b, *zeta, *leaf;
	struct graph g;
	double scale;

	assert_non_null(fg);
	add(fg, "app;main;zeta", 30);
	add(fg, "app;main;beta;leaf", 50);
	add(fg, "app;main;alpha", 15);
	add(fg, "app;main", 5);
	add(fg, "app;main;beta;leaf", 100);
	write_graph(fg, NULL, &g);
	assert_int_equal(g.width, 1200);
	scale = (1200 - 2 * XPAD) / 200.0;

	all = find(&g, "all", 0);
	app = find(&g, "app", 0);
	main_ = find(&g, "main", 0);
	a = find(&g, "alpha", 0);
	b = find(&g, "beta", 0);
	zeta = find(&g, "zeta", 0);
	leaf = find(&g, "leaf", 0);
	assert_int_equal(g.cnt, 7);
	/* Pre-order: the root first. */
	assert_ptr_equal(all, &g.f[0]);
	assert_int_equal(all->n, 200);
	assert_string_equal(all->unit, "samples");
	assert_near(all->pct, 100, 1e-9, "all %");
	assert_near(all->rw, 1180, 0.006, "all width");
	assert_near(main_->rw, 200 * scale, 0.006, "main width");
	assert_near(a->rw, 15 * scale, 0.006, "alpha width");
	assert_near(b->rw, 150 * scale, 0.006, "beta width");
	assert_near(zeta->rw, 30 * scale, 0.006, "zeta width");
	assert_near(b->pct, 75, 0.005, "beta %");
	assert_int_equal(leaf->n, 150);
	/* Sorted by name: alpha, beta, zeta from main's left edge; 5 self samples at the right. */
	assert_int_equal(a->x, 0);
	assert_int_equal(b->x, 15);
	assert_int_equal(zeta->x, 165);
	assert_near(a->rx, XPAD, 0.006, "alpha x");
	assert_near(b->rx, XPAD + 15 * scale, 0.006, "beta x");
	assert_near(zeta->rx, XPAD + 165 * scale, 0.006, "zeta x");
	assert_near(leaf->rx, b->rx, 0.006, "leaf x");
	/* data-w is the count; rows 16 px apart, the root lowest. */
	assert_int_equal(b->w, b->n);
	assert_int_equal(all->ry - app->ry, 16);
	assert_int_equal(app->ry - main_->ry, 16);
	assert_int_equal(main_->ry - b->ry, 16);
	assert_int_equal(b->ry - leaf->ry, 16);
	assert_int_equal(a->ry, b->ry);
	assert_true(all->ry + 15 < g.height);
	/* Text fits the box: the whole name in wide boxes. */
	assert_string_equal(b->text, "beta");
	free_graph(&g);
	flamegraph__free(fg);
}

/* One name under two callers is two frames; a kernel and a user frame of one name are two. */
static void test_merge_by_caller_and_kind(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	struct graph g;
	size_t i, reads = 0;

	add(fg, "app;main;read", 1);
	add(fg, "app;main;read_[k]", 2);
	add(fg, "app;other;read", 4);
	add(fg, "app;main;read", 8);
	write_graph(fg, NULL, &g);
	for (i = 0; i < g.cnt; i++)
		if (!strcmp(g.f[i].name, "read"))
			reads++;
	assert_int_equal(reads, 3);
	assert_int_equal(find(&g, "main", 0)->n, 11);
	assert_int_equal(find(&g, "other", 0)->n, 4);
	free_graph(&g);
	flamegraph__free(fg);
}

/* Markup characters are escaped; control characters and invalid UTF-8 become '?'. */
static void test_escaping(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	const char *names[] = { "a&b", "std::vector<int>::operator[]<'x'>(\"q\");",
				"bad\x01\x7f\xff",
				"caf\xc3\xa9 \xe2\x82\xac \xc2\x85 \xed\xa0\x80 \xef\xbf\xbe" };
	const struct frame_kind *const kinds[] = { FRAME_COMM, FRAME_USER, FRAME_USER, FRAME_USER };
	const struct flamegraph_opts o = {
		.title = "<title> & \"more\"", .subtitle = "1 < 2", .unit = "a&b",
	};
	char path[] = "/tmp/test_flamegraph.XXXXXX";
	struct graph g;
	FILE *tmp;

	assert_int_equal(flamegraph__add(fg, names, kinds, 4, 7), 0);
	write_graph(fg, &o, &g);
	assert_non_null(find(&g, "a&amp;b", 0));
	find(&g, "std::vector&lt;int&gt;::operator[]&lt;&apos;x&apos;&gt;(&quot;q&quot;);", 0);
	find(&g, "bad???", 0);
	/* é and € kept; U+0085 (C1), a surrogate (3 bytes) and U+FFFE are not XML characters. */
	find(&g, "caf\xc3\xa9 \xe2\x82\xac ?? ??? ???", 0);
	assert_string_equal(find(&g, "a&amp;b", 0)->unit, "a&amp;b");
	assert_non_null(strstr(g.svg, ">&lt;title&gt; &amp; &quot;more&quot;</text>"));
	assert_non_null(strstr(g.svg, ">1 &lt; 2</text>"));
	/* Nothing raw is left outside the script and style (CDATA). */
	assert_null(strstr(strstr(g.svg, "]]></script>"), "<'x'"));
	tmp = fdopen(mkstemp(path), "w");
	assert_non_null(tmp);
	assert_int_equal(fwrite(g.svg, 1, g.sz, tmp), g.sz);
	assert_int_equal(fclose(tmp), 0);
	assert_xmllint(path);
	unlink(path);
	free_graph(&g);
	flamegraph__free(fg);
}

static void assert_in(unsigned int v, unsigned int lo, unsigned int hi, const char *what)
{
	if (v < lo || v > hi)
		fail_msg("%s: %u not in [%u, %u]", what, v, lo, hi);
}

/* Each kind has its colour family; one name has one colour wherever it is. */
static void test_kind_colours(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	const struct frame *f, *again;
	struct graph g;
	char name[64];
	int i, j, shades;

	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "app;u%d;k%d_[k];i%d_[i];j%d_[j]", i, i, i, i);
		add(fg, name, 1);
	}
	add(fg, "other;u7", 1);
	write_graph(fg, NULL, &g);
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "u%d", i);
		f = find(&g, name, 0);
		assert_in(f->rgb[0], 205, 255, "user red");
		assert_in(f->rgb[1], 0, 230, "user green");
		assert_in(f->rgb[2], 0, 55, "user blue");
		assert_true(f->rgb[0] > f->rgb[2]);
		snprintf(name, sizeof(name), "k%d", i);
		f = find(&g, name, 0);
		assert_in(f->rgb[0], 160, 200, "kernel red");
		assert_in(f->rgb[1], 100, 145, "kernel green");
		assert_in(f->rgb[2], 55, 80, "kernel blue");
		assert_true(f->rgb[0] > f->rgb[1] && f->rgb[1] > f->rgb[2]);
		snprintf(name, sizeof(name), "i%d", i);
		f = find(&g, name, 0);
		assert_in(f->rgb[0], 0, 40, "inline red");
		assert_in(f->rgb[1], 165, 220, "inline green");
		assert_in(f->rgb[2], 165, 220, "inline blue");
		snprintf(name, sizeof(name), "j%d", i);
		f = find(&g, name, 0);
		assert_in(f->rgb[0], 50, 110, "jit red");
		assert_in(f->rgb[1], 190, 240, "jit green");
		assert_in(f->rgb[2], 50, 110, "jit blue");
	}
	/* Names one character apart (u1, u2...) still differ: at least 15 greens of 20. */
	for (i = 0, shades = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "u%d", i);
		f = find(&g, name, 0);
		for (again = NULL, j = 0; j < i && !again; j++) {
			snprintf(name, sizeof(name), "u%d", j);
			if (abs((int)find(&g, name, 0)->rgb[1] - (int)f->rgb[1]) < 3)
				again = f;
		}
		shades += !again;
	}
	assert_true(shades >= 15);
	f = find(&g, "app", 0);
	assert_true(f->rgb[0] == f->rgb[1] && f->rgb[1] == f->rgb[2]);
	f = find(&g, "all", 0);
	assert_true(f->rgb[0] == f->rgb[1] && f->rgb[1] == f->rgb[2]);
	/* u7 under app and under other: the same colour. */
	for (f = NULL, i = 0; i < (int)g.cnt; i++) {
		if (strcmp(g.f[i].name, "u7"))
			continue;
		if (!f) {
			f = &g.f[i];
			continue;
		}
		again = &g.f[i];
		assert_memory_equal(f->rgb, again->rgb, sizeof(f->rgb));
	}
	free_graph(&g);
	flamegraph__free(fg);
}

/* Frames narrower than min_width px are left out with their callees, and the rows they alone
 * filled; the names are truncated to the box, ".." marking the cut. */
static void test_min_width_and_text(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	struct flamegraph_opts o = { 0 };
	const struct frame *f;
	struct graph g, all;
	char long_name[200], stack[256];

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	add(fg, "app;hot", 100000);
	/* 1180 / 100003 px: 0.0118 px, under the default 0.1 */
	add(fg, "app;cold;colder;coldest", 1);
	/* 2 samples: 0.0236 px. */
	add(fg, "app;warm", 2);
	snprintf(stack, sizeof(stack), "app;hot;%s", long_name);
	add(fg, stack, 10000);
	add(fg, "app;hot;short", 50);
	write_graph(fg, NULL, &g);
	assert_false(has_frame(&g, "cold"));
	assert_false(has_frame(&g, "coldest"));
	assert_false(has_frame(&g, "warm"));
	assert_int_equal(g.cnt, 5);	/* all, app, hot, xxx..., short */
	/* The pruned frames keep their room: hot starts after cold. */
	assert_int_equal(find(&g, "hot", 0)->x, 1);

	o.min_width = 0.02;
	write_graph(fg, &o, &all);
	assert_false(has_frame(&all, "cold"));
	assert_true(has_frame(&all, "warm"));
	o.min_width = 0.001;
	free_graph(&all);
	write_graph(fg, &o, &all);
	assert_true(has_frame(&all, "coldest"));
	/* One more row (coldest: depth 4 above the root) makes the graph 16 px taller. */
	assert_int_equal(all.height - g.height, 16);

	/* 1180 * 10000 / 110053 = 107 px: (107 - 3) / 7.08 = 14 characters, 12 and "..". */
	f = find(&g, long_name, 0);
	assert_string_equal(f->text, "xxxxxxxxxxxx..");
	/* 0.54 px: no room for 3 characters, no text. */
	f = find(&g, "short", 0);
	assert_string_equal(f->text, "");
	free_graph(&all);
	free_graph(&g);
	flamegraph__free(fg);
}

/* The same profile added in another order gives the same bytes. */
static void test_deterministic(void **state)
{
	static const char *const stacks[] = {
		"b;x;y", "a;m_[k]", "a;m", "b;x;z_[i]", "a;m;n;o", "c", "b;x",
	};
	struct flamegraph *one = flamegraph__new(), *two = flamegraph__new();
	const struct flamegraph_opts o = { .title = "t", .subtitle = "s", .width = 900 };
	struct graph g1, g2;
	size_t i, n = sizeof(stacks) / sizeof(stacks[0]);

	for (i = 0; i < n; i++)
		add(one, stacks[i], i + 1);
	for (i = n; i--;)
		add(two, stacks[i], i + 1);
	write_graph(one, &o, &g1);
	write_graph(two, &o, &g2);
	assert_int_equal(g1.sz, g2.sz);
	assert_memory_equal(g1.svg, g2.svg, g1.sz);
	assert_int_equal(g1.width, 900);
	assert_near(find(&g1, "all", 0)->rw, 880, 0.006, "all width at 900 px");
	free_graph(&g1);
	free_graph(&g2);
	flamegraph__free(one);
	flamegraph__free(two);
}

/* Bad arguments, an empty graph, a failing stream. */
static void test_errors_and_empty(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	const char *names[] = { "app", NULL };
	const struct frame_kind *const kinds[] = { FRAME_COMM, FRAME_USER };
	struct flamegraph_opts o = { .width = 100 };
	struct graph g;
	FILE *full;

	assert_int_equal(flamegraph__add(fg, names, kinds, 2, 1), -EINVAL);
	assert_int_equal(flamegraph__write_svg(fg, stdout, &o), -EINVAL);
	o.width = 0;
	o.min_width = -1;
	assert_int_equal(flamegraph__write_svg(fg, stdout, &o), -EINVAL);
	write_graph(fg, NULL, &g);
	assert_int_equal(g.cnt, 0);
	assert_non_null(strstr(g.svg, ">No samples</text>"));
	free_graph(&g);
	/* n == 0 counts at the root only. */
	assert_int_equal(flamegraph__add(fg, names, kinds, 0, 3), 0);
	write_graph(fg, NULL, &g);
	assert_int_equal(g.cnt, 1);
	assert_int_equal(g.f[0].n, 3);
	free_graph(&g);

	full = fopen("/dev/full", "w");
	if (full) {
		assert_int_equal(flamegraph__write_svg(fg, full, NULL), -EIO);
		fclose(full);
	}
	flamegraph__free(NULL);
	flamegraph__free(fg);
}

/* 100k frames (a busy machine profiled with -a): written in well under a second, in less than
 * 400 bytes a frame. */
static void test_large(void **state)
{
	struct flamegraph *fg = flamegraph__new();
	const struct flamegraph_opts o = { .min_width = 1e-9 };
	const struct frame_kind *kinds[12];
	const char *names[12];
	char buf[12][48];
	struct graph g;
	double ms;
	int s, d;

	for (d = 0; d < 12; d++)
		names[d] = buf[d];
	for (s = 0; s < 10000; s++) {
		for (d = 0; d < 12; d++) {
			/* Shared callers, then 10 frames of its own per stack. */
			if (d < 2)
				snprintf(buf[d], sizeof(buf[d]), d ? "main%d" : "app", s % 10);
			else
				snprintf(buf[d], sizeof(buf[d]), "ns::frame_%d_depth_%d", s, d);
			kinds[d] = d == 0 ? FRAME_COMM : d % 3 ? FRAME_USER : FRAME_KERNEL;
		}
		assert_int_equal(flamegraph__add(fg, names, kinds, 12, 1 + s % 7), 0);
	}
	ms = write_graph(fg, &o, &g);
	print_message("%zu frames: %zu bytes, written in %.0f ms\n", g.cnt, g.sz, ms);
	assert_int_equal(g.cnt, 1 + 1 + 10 + 10000 * 10);
	assert_true(g.sz / g.cnt < 400);
	assert_true(ms < 2000);
	free_graph(&g);
	flamegraph__free(fg);
}

/* A graph with every kind, siblings and nested names, for xmllint here and for
 * tests/svg/check.sh (a headless browser). Written to FLAMEGRAPH_UNIT_SVG. */
static struct flamegraph *fixture(void)
{
	struct flamegraph *fg = flamegraph__new();

	add(fg, "demo;_start;main;parse_args", 40);
	add(fg, "demo;_start;main;compute;inner_loop", 300);
	add(fg, "demo;_start;main;compute;inner_loop;helper_[i]", 60);
	add(fg, "demo;_start;main;compute;std::sort<int*, cmp<&a>>", 100);
	add(fg, "demo;_start;main;compute;read;entry_SYSCALL_64_[k];vfs_read_[k]", 80);
	add(fg, "demo;_start;main;output;write;entry_SYSCALL_64_[k];vfs_write_[k]", 120);
	add(fg, "demo;_start;main;output;jit_fn_[j]", 30);
	add(fg, "helper;thread_start;worker;compute;inner_loop", 200);
	add(fg, "helper;thread_start;worker;idle", 70);
	return fg;
}

static void test_write_fixture(void **state)
{
	struct flamegraph *fg = fixture();
	const struct flamegraph_opts o = {
		.title = "bpfprof unit fixture",
		.subtitle = "cpu-clock 999 Hz, 1.0 s, 1000 samples",
	};
	FILE *fp;

	fp = fopen(FLAMEGRAPH_UNIT_SVG, "w");
	if (!fp)
		fail_msg("create %s: %s", FLAMEGRAPH_UNIT_SVG, strerror(errno));
	assert_int_equal(flamegraph__write_svg(fg, fp, &o), 0);
	assert_int_equal(fclose(fp), 0);
	flamegraph__free(fg);

	assert_xmllint(FLAMEGRAPH_UNIT_SVG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_merge_by_caller_and_kind),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_kind_colours),
		cmocka_unit_test(test_min_width_and_text),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_errors_and_empty),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_write_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

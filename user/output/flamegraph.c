// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* flamegraph.c: the frame tree (uthash) and its SVG flame graph, with an embedded script. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#define HASH_NONFATAL_OOM 1 /* a failed add leaves hh.tbl NULL instead of exiting */
#include <uthash.h>
#include "output/flamegraph.h"
#include "util/strtab.h"
#include "util/utf8.h"
#include "util/util.h"

/* Layout, px (flamegraph.pl's proportions). */
#define FG_XPAD		     10		      /* left and right margins */
#define FG_ROW		     16		      /* one row of frames; boxes are 1 px shorter */
#define FG_FONT		     12		      /* frame names, buttons, details */
#define FG_CHAR_W	     (FG_FONT * 0.59) /* average width of a Verdana character (script too) */
#define FG_TOP		     (FG_FONT * 3)    /* title and buttons above the frames */
#define FG_SUBTITLE	     (FG_FONT * 2)    /* more above them with a subtitle */
#define FG_BOTTOM	     (FG_FONT * 2 + 10) /* details line below the root */
#define FG_DEFAULT_WIDTH     1200
#define FG_DEFAULT_MIN_WIDTH 0.1

#define NODES_PER_CHUNK 1024
#define ROOT_ID		0
#define NO_PARENT	UINT32_MAX

/* An interned name. */
/* The hash key of a frame: no padding, hashed as bytes. */
struct fg_key {
	uint32_t parent; /* frame id of the caller */
	uint32_t name;	 /* string id */
	const struct frame_kind *kind;
};

/* One frame of the tree: a (name, kind) under one chain of callers. */
struct fg_node {
	UT_hash_handle hh;
	struct fg_key key;
	uint32_t id;
	uint64_t count; /* samples of the stacks through this frame */
};

struct flamegraph {
	struct strtab *strings;	 /* frame names */
	struct fg_node *nodes;	 /* by key: every frame but the root */
	struct fg_node **chunks; /* id -> chunks[id / NODES_PER_CHUNK]: stable storage */
	size_t chunk_cnt, chunk_cap;
	uint32_t node_cnt;
	uint32_t *path; /* flamegraph__add()'s frame ids, path_cap long */
	size_t path_cap;
};

static struct fg_node *node(const struct flamegraph *fg, uint32_t id)
{
	return &fg->chunks[id / NODES_PER_CHUNK][id % NODES_PER_CHUNK];
}

/* A new frame with count 0; its id, or -ENOMEM. */
static int64_t new_node(struct flamegraph *fg, const struct fg_key *key)
{
	uint32_t id = fg->node_cnt;
	struct fg_node *n;

	if (id == NO_PARENT)
		return -ENOMEM;
	if (id / NODES_PER_CHUNK == fg->chunk_cnt) {
		if (array_grow((void **)&fg->chunks, &fg->chunk_cap, fg->chunk_cnt + 1,
			       sizeof(*fg->chunks), 16))
			return -ENOMEM;
		fg->chunks[fg->chunk_cnt] = calloc(NODES_PER_CHUNK, sizeof(struct fg_node));
		if (!fg->chunks[fg->chunk_cnt])
			return -ENOMEM;
		fg->chunk_cnt++;
	}
	n = node(fg, id);
	memset(n, 0, sizeof(*n));
	n->key = *key;
	n->id = id;
	if (key->parent != NO_PARENT) {
		HASH_ADD(hh, fg->nodes, key, sizeof(n->key), n);
		if (!n->hh.tbl)
			return -ENOMEM;
	}
	fg->node_cnt++;
	return id;
}

struct flamegraph *flamegraph__new(void)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));
	struct fg_key root = { .parent = NO_PARENT, .kind = FRAME_COMM };
	int64_t name;

	if (!fg)
		return NULL;
	fg->strings = strtab__new();
	name = fg->strings ? strtab__intern(fg->strings, "all") : -ENOMEM;
	if (name >= 0) {
		root.name = name;
		name = new_node(fg, &root);
	}
	if (name < 0) {
		flamegraph__free(fg);
		errno = ENOMEM;
		return NULL;
	}
	return fg;
}

void flamegraph__free(struct flamegraph *fg)
{
	size_t i;

	if (!fg)
		return;
	HASH_CLEAR(hh, fg->nodes);
	for (i = 0; i < fg->chunk_cnt; i++)
		free(fg->chunks[i]);
	free(fg->chunks);
	strtab__free(fg->strings);
	free(fg->path);
	free(fg);
}

int flamegraph__add(struct flamegraph *fg, const char *const *names,
		    const struct frame_kind *const *kinds, size_t n, uint64_t count)
{
	struct fg_key key = { .parent = ROOT_ID };
	struct fg_node *found;
	int64_t id;
	size_t i;

	if (!fg || (n && (!names || !kinds)))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!names[i] || !kinds[i])
			return -EINVAL;
	if (array_grow((void **)&fg->path, &fg->path_cap, n, sizeof(*fg->path), 64))
		return -ENOMEM;
	/* Frames first, counts after: a failure leaves at most frames of count 0 (not drawn). */
	for (i = 0; i < n; i++) {
		id = strtab__intern(fg->strings, names[i]);
		if (id < 0)
			return id;
		key.name = id;
		key.kind = kinds[i];
		HASH_FIND(hh, fg->nodes, &key, sizeof(key), found);
		id = found ? found->id : new_node(fg, &key);
		if (id < 0)
			return id;
		fg->path[i] = id;
		key.parent = id;
	}
	node(fg, ROOT_ID)->count += count;
	for (i = 0; i < n; i++)
		node(fg, fg->path[i])->count += count;
	return 0;
}

/* Styles: presentation attributes (fill=) lose to CSS, so class "match" recolours a frame. */
static const char fg_style[] =
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(100,100,100); }\n"
	"#search, #matched { text-anchor: end; }\n"
	"#search, #unzoom { cursor: pointer; opacity: 0.7; }\n"
	"#search:hover, #unzoom:hover { opacity: 1; }\n"
	"#frames > g { cursor: pointer; }\n"
	"#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	"#frames text { pointer-events: none; }\n"
	".hide { display: none; }\n"
	".parent { opacity: 0.5; }\n"
	".match > rect { fill: rgb(230,0,230); }\n";

/*
 * The script. Frames are read from their attributes at each zoom or search (data-x, data-w:
 * samples; the rect's y: the row), so loading costs nothing per frame. Event handlers sit on
 * the #frames group only. A frame's name is its title up to the last " (". With 100k frames,
 * first touches of elements dominate: children are reached by firstChild/nextSibling (no
 * collections), classes set as strings (no classList objects) and only when they change.
 */
static const char fg_script[] =
	"'use strict';\n"
	"var frames, details, unzoombtn, searchbtn, matchedtxt;\n"
	"var total = 0, xpad = 0, fullw = 0, zx = 0, zw = 0, zoomed = null, term = null;\n"
	"var charw = 12 * 0.59;\n"
	"\n"
	"function init(evt) {\n"
	"\tframes = document.getElementById('frames');\n"
	"\tdetails = document.getElementById('details');\n"
	"\tunzoombtn = document.getElementById('unzoom');\n"
	"\tsearchbtn = document.getElementById('search');\n"
	"\tmatchedtxt = document.getElementById('matched');\n"
	"\ttotal = Number(frames.getAttribute('data-total'));\n"
	"\txpad = Number(frames.getAttribute('data-xpad'));\n"
	"\tfullw = Number(document.documentElement.getAttribute('width')) - 2 * xpad;\n"
	"\tzw = total;\n"
	"\tframes.addEventListener('click', function (e) {\n"
	"\t\tvar g = frame_of(e.target);\n"
	"\n"
	"\t\tif (g)\n"
	"\t\t\tzoom(g);\n"
	"\t});\n"
	"\tframes.addEventListener('mouseover', function (e) {\n"
	"\t\tvar g = frame_of(e.target);\n"
	"\n"
	"\t\tdetails.textContent = g ? 'Function: ' + g.firstChild.textContent : ' ';\n"
	"\t});\n"
	"\tframes.addEventListener('mouseout', function () {\n"
	"\t\tdetails.textContent = ' ';\n"
	"\t});\n"
	"\tunzoombtn.addEventListener('click', function () {\n"
	"\t\tzoom(null);\n"
	"\t});\n"
	"\tsearchbtn.addEventListener('click', function () {\n"
	"\t\tif (term !== null)\n"
	"\t\t\treset_search();\n"
	"\t\telse\n"
	"\t\t\tsearch_prompt();\n"
	"\t});\n"
	"\twindow.addEventListener('keydown', function (e) {\n"
	"\t\tvar find = (e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F');\n"
	"\n"
	"\t\tif (find || e.key === 'F3') {\n"
	"\t\t\te.preventDefault();\n"
	"\t\t\tsearch_prompt();\n"
	"\t\t} else if (e.key === 'Escape') {\n"
	"\t\t\treset_search();\n"
	"\t\t}\n"
	"\t});\n"
	"}\n"
	"\n"
	"/* The frame (a child <g> of #frames) that el is part of, or null. */\n"
	"function frame_of(el) {\n"
	"\twhile (el && el.parentNode !== frames)\n"
	"\t\tel = el.parentNode;\n"
	"\treturn el;\n"
	"}\n"
	"\n"
	"function name_of(g) {\n"
	"\tvar t = g.firstChild.textContent;\n"
	"\n"
	"\treturn t.substring(0, t.lastIndexOf(' ('));\n"
	"}\n"
	"\n"
	"/* A frame's classes: z is '', 'parent' or 'hide' (zoom), m true for a search match. */\n"
	"function set_class(g, z, m) {\n"
	"\tvar c = m ? (z ? z + ' match' : 'match') : z;\n"
	"\n"
	"\tif ((g.getAttribute('class') || '') !== c)\n"
	"\t\tg.setAttribute('class', c);\n"
	"}\n"
	"\n"
	"function has_class(g, c) {\n"
	"\tvar v = g.getAttribute('class');\n"
	"\n"
	"\treturn v !== null && v.indexOf(c) >= 0;\n"
	"}\n"
	"\n"
	"function zoom_class(g) {\n"
	"\treturn has_class(g, 'hide') ? 'hide' : has_class(g, 'parent') ? 'parent' : '';\n"
	"}\n"
	"\n"
	"/* name cut to a box w px wide, as the writer does. */\n"
	"function fit(name, w) {\n"
	"\tvar chars = Math.floor((w - 3) / charw);\n"
	"\n"
	"\tif (name.length <= chars)\n"
	"\t\treturn name;\n"
	"\treturn chars >= 3 ? name.substring(0, chars - 2) + '..' : '';\n"
	"}\n"
	"\n"
	"/* Moves frame g to x px, w px wide; its text is cut again when the width changed. */\n"
	"function place(g, x, w) {\n"
	"\tvar r = g.firstChild.nextSibling, t = g.lastChild;\n"
	"\tvar xs = x.toFixed(2), ws = w.toFixed(2);\n"
	"\n"
	"\tif (r.getAttribute('x') !== xs) {\n"
	"\t\tr.setAttribute('x', xs);\n"
	"\t\tt.setAttribute('x', (x + 3).toFixed(2));\n"
	"\t}\n"
	"\tif (r.getAttribute('width') !== ws) {\n"
	"\t\tr.setAttribute('width', ws);\n"
	"\t\tt.textContent = fit(name_of(g), w);\n"
	"\t}\n"
	"}\n"
	"\n"
	"/*\n"
	" * Zooms into frame g (null or the root: the whole graph): g and its callees\n"
	" * span the full width, its callers stay full width with class parent, the\n"
	" * others get class hide.\n"
	" */\n"
	"function zoom(g) {\n"
	"\tvar e, ex, ew, ey, s, zy = Infinity;\n"
	"\n"
	"\tif (g === frames.firstElementChild)\n"
	"\t\tg = null;\n"
	"\tzoomed = g;\n"
	"\tzx = 0;\n"
	"\tzw = total;\n"
	"\tif (g) {\n"
	"\t\tzx = Number(g.getAttribute('data-x'));\n"
	"\t\tzw = Number(g.getAttribute('data-w'));\n"
	"\t\tzy = Number(g.firstChild.nextSibling.getAttribute('y'));\n"
	"\t}\n"
	"\ts = fullw / zw;\n"
	"\tfor (e = frames.firstElementChild; e; e = e.nextElementSibling) {\n"
	"\t\tex = Number(e.getAttribute('data-x'));\n"
	"\t\tew = Number(e.getAttribute('data-w'));\n"
	"\t\tey = Number(e.firstChild.nextSibling.getAttribute('y'));\n"
	"\t\tif (ey > zy && ex <= zx && ex + ew >= zx + zw) {\n"
	"\t\t\tset_class(e, 'parent', has_class(e, 'match'));\n"
	"\t\t\tplace(e, xpad, fullw);\n"
	"\t\t} else if (ey <= zy && ex >= zx && ex + ew <= zx + zw) {\n"
	"\t\t\tset_class(e, '', has_class(e, 'match'));\n"
	"\t\t\tplace(e, xpad + (ex - zx) * s, ew * s);\n"
	"\t\t} else {\n"
	"\t\t\tset_class(e, 'hide', has_class(e, 'match'));\n"
	"\t\t}\n"
	"\t}\n"
	"\tunzoombtn.setAttribute('class', zoomed ? '' : 'hide');\n"
	"\tif (term !== null)\n"
	"\t\tsearch(term);\n"
	"}\n"
	"\n"
	"/*\n"
	" * Marks the frames whose name matches regex re with class match. Returns the\n"
	" * share (%) of the zoomed frame's samples under at least one match (nested\n"
	" * matches counted once), or -1 when re is not a regex.\n"
	" */\n"
	"function search(re) {\n"
	"\tvar spans = [], end = zx, sum = 0, rx, i, e, lo, hi, pct;\n"
	"\n"
	"\ttry {\n"
	"\t\trx = new RegExp(re);\n"
	"\t} catch (err) {\n"
	"\t\tmatchedtxt.textContent = 'Bad regex: ' + err.message;\n"
	"\t\treturn -1;\n"
	"\t}\n"
	"\tterm = re;\n"
	"\tfor (e = frames.firstElementChild; e; e = e.nextElementSibling) {\n"
	"\t\tif (rx.test(name_of(e))) {\n"
	"\t\t\tset_class(e, zoom_class(e), true);\n"
	"\t\t\tspans.push([Number(e.getAttribute('data-x')),\n"
	"\t\t\t\t    Number(e.getAttribute('data-w'))]);\n"
	"\t\t} else {\n"
	"\t\t\tset_class(e, zoom_class(e), false);\n"
	"\t\t}\n"
	"\t}\n"
	"\tspans.sort(function (a, b) {\n"
	"\t\treturn a[0] - b[0];\n"
	"\t});\n"
	"\tfor (i = 0; i < spans.length; i++) {\n"
	"\t\tlo = Math.max(spans[i][0], end);\n"
	"\t\thi = Math.min(spans[i][0] + spans[i][1], zx + zw);\n"
	"\t\tif (hi > lo) {\n"
	"\t\t\tsum += hi - lo;\n"
	"\t\t\tend = hi;\n"
	"\t\t}\n"
	"\t}\n"
	"\tpct = zw ? 100 * sum / zw : 0;\n"
	"\tmatchedtxt.textContent = 'Matched: ' + pct.toFixed(2) + '%';\n"
	"\tsearchbtn.textContent = 'Reset Search';\n"
	"\treturn pct;\n"
	"}\n"
	"\n"
	"function reset_search() {\n"
	"\tvar e;\n"
	"\n"
	"\tterm = null;\n"
	"\tfor (e = frames.firstElementChild; e; e = e.nextElementSibling)\n"
	"\t\tset_class(e, zoom_class(e), false);\n"
	"\tmatchedtxt.textContent = ' ';\n"
	"\tsearchbtn.textContent = 'Search';\n"
	"}\n"
	"\n"
	"function search_prompt() {\n"
	"\tvar re = prompt('Search frames: a regular expression, e.g. ^ext4_',\n"
	"\t\t\tterm === null ? '' : term);\n"
	"\n"
	"\tif (re)\n"
	"\t\tsearch(re);\n"
	"}\n";

/* What flamegraph__write_svg() works with. */
struct fg_writer {
	const struct flamegraph *fg;
	FILE *fp;
	uint32_t *first; /* the callees of frame id are kids[first[id] .. first[id + 1]) */
	uint32_t *kids;	 /* sorted by name, then kind */
	const char *unit;
	uint64_t total;	     /* samples */
	double scale;	     /* px per sample */
	double min_width;    /* px */
	unsigned int height; /* px */
};

/*
 * The length of the UTF-8 sequence at s if it is one character that XML 1.0 allows and that
 * is not a control character (C0, DEL, C1), else 0 (s[0] may be the terminating NUL).
 */
static size_t xml_char_len(const unsigned char *s)
{
	size_t n = utf8__char_len(s);

	if (n == 1)
		return s[0] >= 0x20 && s[0] != 0x7f;
	/* U+0080..U+009F: C1 control characters. */
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	/* U+FFFE and U+FFFF: not XML characters. */
	if (n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;
	return n;
}

/* Characters of s as put_xml() writes them (an invalid byte is one '?'). */
static size_t xml_chars(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n = 0, len;

	for (; *c; c += len ? len : 1, n++)
		len = xml_char_len(c);
	return n;
}

/* Writes the first max characters of s as XML character data or attribute value. */
static void put_xml(FILE *fp, const char *s, size_t max)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t len;

	for (; *c && max; c += len ? len : 1, max--) {
		len = xml_char_len(c);
		if (!len) {
			fputc('?', fp);
			continue;
		}
		switch (*c) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		case '\'':
			fputs("&apos;", fp);
			break;
		default:
			fwrite(c, 1, len, fp);
		}
	}
}

/* Name cut to a box w px wide: whole, or its start and "..", or nothing below 3 characters. */
static void put_fitted(FILE *fp, const char *name, double w)
{
	double room = (w - 3) / FG_CHAR_W;
	long chars = room < 0 ? -1 : (long)room;
	size_t len = xml_chars(name);

	if ((long)len <= chars) {
		put_xml(fp, name, len);
	} else if (chars >= 3) {
		put_xml(fp, name, chars - 2);
		fputs("..", fp);
	}
}

/* The fill of a frame: its kind's family, the shade from a hash of its name (stable). */
static void frame_rgb(const char *name, const struct frame_kind *kind, unsigned int rgb[3])
{
	const struct frame_colour *c = &kind->colour;
	uint64_t h = hash_bytes(name, strlen(name), 0);
	double v[3];
	int i;

	/* FNV-1a's low bits barely change with the last byte (cb_f01, cb_f02): mix them
	 * (MurmurHash3's fmix64), so that neighbours in a stack look apart. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	v[0] = (h & 0xffff) / 65535.0;
	v[1] = (h >> 16 & 0xffff) / 65535.0;
	v[2] = (h >> 32 & 0xffff) / 65535.0;

	for (i = 0; i < 3; i++)
		rgb[i] = c->base[i] + c->shade[i][0] * v[0] + c->shade[i][1] * v[1] +
			 c->shade[i][2] * v[2];
}

static bool drawn(const struct fg_writer *w, const struct fg_node *n)
{
	return n->count && n->count * w->scale >= w->min_width;
}

static int cmp_kids(const void *a, const void *b, void *arg)
{
	const struct flamegraph *fg = arg;
	const struct fg_key *ka = &node(fg, *(const uint32_t *)a)->key;
	const struct fg_key *kb = &node(fg, *(const uint32_t *)b)->key;
	int c = strcmp(strtab__str(fg->strings, ka->name), strtab__str(fg->strings, kb->name));

	if (c)
		return c;
	return ka->kind->rank < kb->kind->rank ? -1 : ka->kind->rank > kb->kind->rank;
}

/* The callee lists, sorted. 0 or -ENOMEM. */
static int sort_kids(struct fg_writer *w)
{
	const struct flamegraph *fg = w->fg;
	uint32_t id, *fill;

	w->first = calloc(fg->node_cnt + 1, sizeof(*w->first));
	w->kids = calloc(fg->node_cnt, sizeof(*w->kids));
	fill = calloc(fg->node_cnt, sizeof(*fill));
	if (!w->first || !w->kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (id = ROOT_ID + 1; id < fg->node_cnt; id++)
		w->first[node(fg, id)->key.parent + 1]++;
	for (id = 0; id < fg->node_cnt; id++)
		w->first[id + 1] += w->first[id];
	for (id = ROOT_ID + 1; id < fg->node_cnt; id++) {
		uint32_t parent = node(fg, id)->key.parent;

		w->kids[w->first[parent] + fill[parent]++] = id;
	}
	for (id = 0; id < fg->node_cnt; id++)
		qsort_r(w->kids + w->first[id], w->first[id + 1] - w->first[id], sizeof(*w->kids),
			cmp_kids, (void *)fg);
	free(fill);
	return 0;
}

/* The deepest row drawn in the subtree of frame id, drawn at row depth. */
static unsigned int max_depth(const struct fg_writer *w, uint32_t id, unsigned int depth)
{
	unsigned int d, deepest = depth;
	uint32_t i;

	for (i = w->first[id]; i < w->first[id + 1]; i++) {
		if (!drawn(w, node(w->fg, w->kids[i])))
			continue;
		d = max_depth(w, w->kids[i], depth + 1);
		if (d > deepest)
			deepest = d;
	}
	return deepest;
}

/* Frame id at row depth, x samples from the left, then its callees. */
static void put_frame(const struct fg_writer *w, uint32_t id, unsigned int depth, uint64_t x)
{
	const struct fg_node *n = node(w->fg, id);
	const char *name = strtab__str(w->fg->strings, n->key.name);
	unsigned int y = w->height - FG_BOTTOM - (depth + 1) * FG_ROW, rgb[3];
	double px = FG_XPAD + x * w->scale, width = n->count * w->scale;
	uint32_t i;

	frame_rgb(name, n->key.kind, rgb);
	fprintf(w->fp, "<g data-x=\"%llu\" data-w=\"%llu\"><title>", (unsigned long long)x,
		(unsigned long long)n->count);
	put_xml(w->fp, name, SIZE_MAX);
	fprintf(w->fp, " (%llu ", (unsigned long long)n->count);
	put_xml(w->fp, w->unit, SIZE_MAX);
	fprintf(w->fp,
		", %.2f%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%u\">",
		100.0 * n->count / w->total, px, y, width, FG_ROW - 1, rgb[0], rgb[1], rgb[2],
		px + 3, y + FG_ROW - 5);
	put_fitted(w->fp, name, width);
	fputs("</text></g>\n", w->fp);

	for (i = w->first[id]; i < w->first[id + 1]; i++) {
		n = node(w->fg, w->kids[i]);
		if (drawn(w, n))
			put_frame(w, w->kids[i], depth + 1, x);
		x += n->count;
	}
}

int flamegraph__write_svg(const struct flamegraph *fg, FILE *fp, const struct flamegraph_opts *o)
{
	static const struct flamegraph_opts defaults = { 0 };
	struct fg_writer w = { .fg = fg, .fp = fp };
	unsigned int width, top, rows = 0;
	const char *title;
	int err;

	if (!o)
		o = &defaults;
	if (!fg || !fp || (o->width && o->width < 200) || o->min_width < 0)
		return -EINVAL;
	width = o->width ? o->width : FG_DEFAULT_WIDTH;
	title = o->title ? o->title : "bpfprof";
	w.unit = o->unit ? o->unit : "samples";
	w.min_width = o->min_width ? o->min_width : FG_DEFAULT_MIN_WIDTH;
	w.total = node(fg, ROOT_ID)->count;
	w.scale = w.total ? (double)(width - 2 * FG_XPAD) / w.total : 0;
	err = sort_kids(&w);
	if (err)
		goto cleanup;
	if (w.total)
		rows = max_depth(&w, ROOT_ID, 0) + 1;
	top = FG_TOP + (o->subtitle ? FG_SUBTITLE : 0);
	w.height = top + (rows ? rows : 1) * FG_ROW + FG_BOTTOM;

	fprintf(fp,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		"\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<!-- Flame graph written by bpfprof, in the layout of Brendan Gregg's "
		"flamegraph.pl. -->\n"
		"<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop offset=\"5%%\" stop-color=\"#eeeeee\"/>"
		"<stop offset=\"95%%\" stop-color=\"#eeeeb0\"/></linearGradient></defs>\n"
		"<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"%u\">",
		width, w.height, width, w.height, fg_style, fg_script, width, w.height, width / 2,
		FG_FONT * 2);
	put_xml(fp, title, SIZE_MAX);
	fputs("</text>\n", fp);
	if (o->subtitle) {
		fprintf(fp, "<text id=\"subtitle\" x=\"%u\" y=\"%u\">", width / 2, FG_FONT * 4);
		put_xml(fp, o->subtitle, SIZE_MAX);
		fputs("</text>\n", fp);
	}
	fprintf(fp,
		"<text id=\"details\" x=\"%u\" y=\"%u\">%s</text>\n"
		"<text id=\"unzoom\" class=\"hide\" x=\"%u\" y=\"%u\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%u\" y=\"%u\">Search</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n"
		"<g id=\"frames\" data-total=\"%llu\" data-xpad=\"%u\">\n",
		FG_XPAD, w.height - FG_BOTTOM / 2, w.total ? " " : "No samples", FG_XPAD,
		FG_FONT * 2, width - FG_XPAD, FG_FONT * 2, width - FG_XPAD,
		w.height - FG_BOTTOM / 2, (unsigned long long)w.total, FG_XPAD);
	if (w.total)
		put_frame(&w, ROOT_ID, 0, 0);
	fputs("</g>\n</svg>\n", fp);
	if (fflush(fp) || ferror(fp))
		err = -EIO;
cleanup:
	free(w.first);
	free(w.kids);
	return err;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* opts_agent.c: what the agent's options set, and its other sources of options: the --config
 * file and BPFPROF_<OPTION> variables. */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf/record.h"
#include "cmd/opts.h"
#include "cmd/opts_parse.h"
#include "sampling/perf_event.h"
#include "unwind/unwind.h"
#include "util/util.h"

/* Agent (group 4). */
error_t opts_parse_agent_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_ctx *ctx = state->input;
	struct bpfprof_opts *o = ctx->o;
	uint64_t v = 0;

	switch (key) {
	case OPT_INTERVAL:
		if (opts_parse_duration(arg, 1000000000ull, 86400 * 1000000000ull,
					&o->ag.interval_ns))
			return opts_usage_error(
				state,
				"invalid interval '%s' (seconds, or with an m or h suffix; "
				"1 s to 1 day)",
				arg);
		ctx->agent_opt = true;
		break;
	case OPT_GROUP_BY:
		if (strcmp(arg, "exe") && strcmp(arg, "pid"))
			return opts_usage_error(state, "unknown grouping '%s' (exe or pid)", arg);
		o->ag.group_by_pid = !strcmp(arg, "pid");
		ctx->agent_opt = true;
		break;
	case OPT_SERVICE_NAME_FROM:
		o->ag.service_name_from = arg;
		ctx->agent_opt = true;
		break;
	case OPT_OUTPUT_DIR:
		o->ag.output_dir = arg;
		ctx->agent_opt = true;
		break;
	case OPT_OUTPUT_DIR_MAX:
		if (opts_parse_size(arg, 1024 * 1024, 1ull << 50, &v))
			return opts_usage_error(
				state, "invalid size '%s' (1M to 1P bytes, K/M/G suffix allowed)",
				arg);
		o->ag.output_dir_max = v;
		ctx->agent_opt = true;
		break;
	case OPT_PYROSCOPE_URL:
		o->ag.pyroscope_url = arg;
		ctx->agent_opt = true;
		break;
	case OPT_PYROSCOPE_API:
		if (strcmp(arg, "ingest") && strcmp(arg, "push"))
			return opts_usage_error(state,
						"unknown Pyroscope API '%s' (ingest or push)", arg);
		o->ag.pyroscope_push = !strcmp(arg, "push");
		ctx->agent_opt = true;
		break;
	case OPT_BASIC_AUTH_FILE:
		o->ag.basic_auth_file = arg;
		ctx->agent_opt = true;
		break;
	case OPT_BEARER_TOKEN_FILE:
		o->ag.bearer_token_file = arg;
		ctx->agent_opt = true;
		break;
	case OPT_TENANT_ID:
		o->ag.tenant_id = arg;
		ctx->agent_opt = true;
		break;
	case OPT_HEADER:
		if (o->ag.headers_cnt == AGENT_MAX_HEADERS || !strchr(arg, ':'))
			return opts_usage_error(
				state, "invalid or too many headers at '%s' ('K: V', at most %d)",
				arg, AGENT_MAX_HEADERS);
		o->ag.headers[o->ag.headers_cnt++] = arg;
		ctx->agent_opt = true;
		break;
	case OPT_QUEUE_SIZE:
		if (opts_parse_uint(arg, 1, 100000, &v))
			return opts_usage_error(state, "invalid queue size '%s' (1-100000)", arg);
		o->ag.queue_size = v;
		ctx->agent_opt = true;
		break;
	case OPT_KUBERNETES:
		o->ag.kubernetes = true;
		ctx->agent_opt = true;
		break;
	case OPT_KUBERNETES_API:
		o->ag.kubernetes_api = arg;
		o->ag.kubernetes = true;
		ctx->agent_opt = true;
		break;
	case OPT_METRICS_ADDR:
		o->ag.metrics_addr = strcmp(arg, "off") ? arg : NULL;
		ctx->agent_opt = true;
		break;
	case OPT_LOG_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "json"))
			return opts_usage_error(state, "unknown log format '%s' (text or json)",
						arg);
		o->ag.log_json = !strcmp(arg, "json");
		ctx->agent_opt = true;
		break;
	case OPT_CONFIG:
		/* Read before parsing (opts_agent_args()), where the option must be spelled out: an
		 * abbreviation (--conf) or --config outside the agent would be ignored. */
		if (!ctx->config_read || strcmp(arg, ctx->config_read))
			return opts_usage_error(
				state, "--config FILE: only 'bpfprof agent' reads it, and spelled "
				       "out in full (--config FILE or --config=FILE)");
		o->ag.config = arg;
		ctx->agent_opt = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option *option_named(const struct argp *argp, const char *name, size_t len)
{
	const struct argp_option *opt;

	for (opt = argp->options; opt->name || opt->doc; opt++)
		if (opt->name && strlen(opt->name) == len && !strncmp(opt->name, name, len))
			return opt;
	return NULL;
}

/* Adds "--name=value", or "--name" for a flag whose value is true (1, true, yes, on, or
 * nothing); a false flag adds nothing. 0, or the exit status (reported). */
static int option_arg(struct argv_buf *b, const struct argp_option *opt, const char *value,
		      const char *where)
{
	char *s = NULL;

	if (!opt->arg) {
		if (!strcmp(value, "0") || !strcasecmp(value, "false") ||
		    !strcasecmp(value, "no") || !strcasecmp(value, "off"))
			return 0;
		if (*value && strcmp(value, "1") && strcasecmp(value, "true") &&
		    strcasecmp(value, "yes") && strcasecmp(value, "on")) {
			fprintf(stderr, "bpfprof: %s: '%s' takes true or false, not '%s'\n", where,
				opt->name, value);
			return BPFPROF_EXIT_USAGE;
		}
		return opts_argv_add(b, asprintf(&s, "--%s", opt->name) < 0 ? NULL : s);
	}
	return opts_argv_add(b, asprintf(&s, "--%s=%s", opt->name, value) < 0 ? NULL : s);
}

/* One line of the --config file (where: "FILE:LINE") as an option, if it holds one. 0, or the
 * exit status (reported). */
static int config_line(const struct argp *argp, char *line, const char *where, struct argv_buf *b)
{
	const struct argp_option *opt;
	char *k, *v, *end;
	size_t len;

	for (k = line; *k == ' ' || *k == '\t'; k++)
		;
	if (*k == '#' || *k == '\n' || !*k)
		return 0;
	for (end = k + strlen(k);
	     end > k && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r');
	     end--)
		;
	*end = '\0';
	v = strchr(k, '=');
	len = v ? (size_t)(v - k) : strlen(k);
	while (len && (k[len - 1] == ' ' || k[len - 1] == '\t'))
		len--;
	opt = option_named(argp, k, len);
	if (!opt || opt->key == OPT_CONFIG) {
		fprintf(stderr, "bpfprof: %s: unknown option '%.*s'\n", where, (int)len, k);
		return BPFPROF_EXIT_USAGE;
	}
	if (v)
		for (v++; *v == ' ' || *v == '\t'; v++)
			;
	if (opt->arg && (!v || !*v)) {
		fprintf(stderr, "bpfprof: %s: '%s' needs a value\n", where, opt->name);
		return BPFPROF_EXIT_USAGE;
	}
	return option_arg(b, opt, v ? v : "", where);
}

/*
 * The lines of the --config file as options. A regular file only: a directory would read as
 * empty (its options silently lost) and a FIFO would block the agent's start or SIGHUP. The
 * path may be a symlink (a Kubernetes ConfigMap's file is one). 0, or the exit status
 * (reported).
 */
static int config_args(const struct argp *argp, const char *path, struct argv_buf *b)
{
	char *line = NULL, where[300];
	size_t cap = 0;
	unsigned int no = 0;
	struct stat st;
	FILE *f = NULL;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "bpfprof: config %s: not a regular file\n", path);
		close(fd);
		return BPFPROF_EXIT_USAGE;
	}
	if (fd >= 0)
		f = fdopen(fd, "r");
	if (!f) {
		fprintf(stderr, "bpfprof: open config %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return BPFPROF_EXIT_USAGE;
	}
	while (!ret && getline(&line, &cap, f) > 0) {
		no++;
		snprintf(where, sizeof(where), "%s:%u", path, no);
		ret = config_line(argp, line, where, b);
	}
	if (!ret && ferror(f)) {
		fprintf(stderr, "bpfprof: read config %s: %s\n", path, strerror(errno));
		ret = BPFPROF_EXIT_ERROR;
	}
	free(line);
	fclose(f);
	return ret;
}

/* BPFPROF_<OPTION> variables as options. 0, or the exit status (reported). */
static int env_args(const struct argp *argp, struct argv_buf *b)
{
	const struct argp_option *opt;
	char var[64], *c;
	const char *v;
	int ret;

	for (opt = argp->options; opt->name || opt->doc; opt++) {
		if (!opt->name || opt->key == OPT_CONFIG)
			continue;
		snprintf(var, sizeof(var), "BPFPROF_%s", opt->name);
		for (c = var; *c; c++)
			*c = *c == '-' ? '_' : toupper((unsigned char)*c);
		v = getenv(var);
		ret = v ? option_arg(b, opt, v, var) : 0;
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The agent's argv after name: options from the --config file, from the environment, then
 * argv's own (after "agent"): argp keeps the last value of an option, so the command line wins
 * over the environment, which wins over the file. ctx->config_read: the file read, if any.
 * 0, or the exit status (reported).
 */
int opts_agent_args(const struct argp *argp, int argc, char **argv, struct parse_ctx *ctx,
		    struct argv_buf *b)
{
	const char *config = getenv("BPFPROF_CONFIG");
	int i, ret;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			config = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			config = argv[i] + 9;
		else if (!strcmp(argv[i], "--"))
			break;
	}
	if (config) {
		ret = config_args(argp, config, b);
		if (ret)
			return ret;
	}
	ctx->config_read = config;
	return env_args(argp, b);
}

/* The agent's defaults, which its options then change. */
void opts_agent_defaults(struct bpfprof_opts *o)
{
	o->agent = true;
	o->freq_hz = 19;
	o->no_inline = true;
	o->drain_ms = 250;
	o->ag.interval_ns = 60 * 1000000000ull;
	o->ag.service_name_from = "container,unit,comm";
	o->ag.output_dir_max = 1ull << 30;
	o->ag.queue_size = 64;
	o->ag.metrics_addr = "127.0.0.1:9464";
}

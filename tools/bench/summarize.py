#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""summarize.py: tools/bench.sh's raw values -> quartiles, ratios, targets (table and JSON).

Usage: summarize.py RAW JSON_OUT TEXT_OUT

RAW holds one measured value a line, "KEY VALUE", in the order measured; a key repeated N times
is N runs (the i-th values of keys of one section come from the same iteration). Every figure
is a distribution over runs: p25/p50/p75 with linear interpolation between the order statistics
(statistics.quantiles(method="inclusive"), R's type 7) and n. Every comparison is a ratio of
medians measured in the same bench run. Field meanings: docs/performance.md.
"""
import json
import math
import os
import statistics
import sys
from collections import defaultdict

SCHEMA = "bpfprof-bench/1"

# Targets of issue 7: (key, description, comparison, goal, unit).
TARGETS = [
    ("cpu_per_sample", "CPU per sample, perf/bpfprof, marginal", ">=", 25, "x"),
    ("fast_vs_dwfl_chain", "unwind per frame, dwfl/fast, marginal (chain)", ">=", 20, "x"),
    ("fast_vs_dwfl_python", "unwind per frame, dwfl/fast, marginal (python3)", ">=", 20, "x"),
    ("overhead_999", "profiled program's CPU time growth, 999 Hz", "<", 1, "%"),
    ("own_cpu_99", "own CPU, 99 Hz, both CPUs busy (steady)", "<", 0.5, "% of a core"),
    ("rss_growth", "max RSS, 200 processes less 1", "<", 20, "MB"),
    # Issue 16.
    ("python_bpf_cost", "sampler BPF time per sample, Python frames - none", "<=", 2, "us"),
    # Issue 25: the same on CPython 3.14 (sid's, in a container root), offsets from the target.
    ("python_bpf_cost_py314", "the same, sid's CPython 3.14", "<=", 2, "us"),
    # Issue 18: no more slowdown than bcc's offcputime (where it runs: make bench-vm).
    ("offcpu_vs_offcputime", "pingpong wall, --off-cpu / offcputime", "<=", 1, "x"),
]


def load(path):
    """KEY -> list of values (float where they parse, else str), in file order."""
    vals = defaultdict(list)
    with open(path) as f:
        for line in f:
            parts = line.split(None, 1)
            if len(parts) != 2:
                continue
            k, v = parts[0], parts[1].strip()
            try:
                x = float(v)
                # "nan": a run whose value could not be measured (left out, order kept).
                vals[k].append(None if math.isnan(x) else x)
            except ValueError:
                vals[k].append(v)
    return vals


def dist(xs):
    """{"n", "p25", "p50", "p75"} of a list of numbers; None when empty."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    if len(xs) == 1:
        q = [xs[0]] * 3
    else:
        q = statistics.quantiles(xs, n=4, method="inclusive")
    return {"n": len(xs), "p25": q[0], "p50": q[1], "p75": q[2]}


def med(d):
    return d["p50"] if d else None


def ratio(a, b):
    """a / b of two medians (or numbers); None when either is missing or b is 0."""
    a = med(a) if isinstance(a, dict) else a
    b = med(b) if isinstance(b, dict) else b
    if a is None or b is None or b == 0:
        return None
    return a / b


def paired(f, *cols):
    """f applied to the i-th value of each column, for every i all columns have."""
    n = min(len(c) for c in cols) if cols else 0
    out = []
    for i in range(n):
        try:
            out.append(f(*(c[i] for c in cols)))
        except (ZeroDivisionError, TypeError):
            pass
    return out


def unwind_section(v):
    """Per workload and tool: figures of the long capture (one-time work included) and
    marginal ones (long - short of the same iteration: the extra samples alone)."""
    res = {}
    for w in ("chain", "python"):
        p = "unwind/%s/" % w
        if not v.get(p + "perf/long/wall_s"):
            continue
        tools = {}
        for u in ("fast", "dwfl"):
            L = {k: v[p + u + "/long/" + k] for k in ("wall_s", "unwind_ms", "samples", "frames")}
            S = {k: v[p + u + "/short/" + k] for k in ("wall_s", "unwind_ms", "samples", "frames")}
            cols = (L["unwind_ms"], S["unwind_ms"], L["frames"], S["frames"])
            tools[u] = {
                "samples": med(dist(L["samples"])),
                "frames_per_sample": med(dist(paired(lambda f, s: f / s, L["frames"],
                                                     L["samples"]))),
                "short_samples": med(dist(S["samples"])),
                "unwind_ns_per_frame": dist(paired(lambda t, f: t * 1e6 / f, L["unwind_ms"],
                                                   L["frames"])),
                "unwind_marginal_ns_per_frame": dist(paired(
                    lambda tl, ts, fl, fs: (tl - ts) * 1e6 / (fl - fs), *cols)),
                "unwind_marginal_samples_per_s": dist(paired(
                    lambda tl, ts, sl, ss: (sl - ss) / ((tl - ts) / 1e3), L["unwind_ms"],
                    S["unwind_ms"], L["samples"], S["samples"])),
                # The intercept: unwind time of the short capture less its frames at the
                # marginal cost (CFI tables, module reporting, first reads).
                "unwind_one_time_ms": dist(paired(
                    lambda tl, ts, fl, fs: ts - (tl - ts) / (fl - fs) * fs, *cols)),
                "wall_ns_per_sample": dist(paired(lambda t, s: t * 1e9 / s, L["wall_s"],
                                                  L["samples"])),
                "wall_ns_per_frame": dist(paired(lambda t, f: t * 1e9 / f, L["wall_s"],
                                                 L["frames"])),
                "wall_samples_per_s": dist(paired(lambda t, s: s / t, L["wall_s"], L["samples"])),
                "wall_marginal_ns_per_frame": dist(paired(
                    lambda tl, ts, fl, fs: (tl - ts) * 1e9 / (fl - fs), L["wall_s"], S["wall_s"],
                    L["frames"], S["frames"])),
                "wall_s": dist(L["wall_s"]),
            }
        sl, fl = v[p + "perf/long/samples"][0], v[p + "perf/long/frames"][0]
        ss, fs = v[p + "perf/short/samples"][0], v[p + "perf/short/frames"][0]
        wl, ws = v[p + "perf/long/wall_s"], v[p + "perf/short/wall_s"]
        tools["perf"] = {
            "samples": sl,
            "frames_per_sample": fl / sl if sl else None,
            "short_samples": ss,
            "wall_ns_per_sample": dist([t * 1e9 / sl for t in wl]),
            "wall_ns_per_frame": dist([t * 1e9 / fl for t in wl]),
            "wall_samples_per_s": dist([sl / t for t in wl]),
            "wall_marginal_ns_per_frame": dist(paired(lambda a, b: (a - b) * 1e9 / (fl - fs),
                                                      wl, ws)),
            "wall_s": dist(wl),
        }
        f, d, pf = tools["fast"], tools["dwfl"], tools["perf"]
        tools["ratios"] = {
            "unwind_marginal_per_frame_dwfl_over_fast": ratio(
                d["unwind_marginal_ns_per_frame"], f["unwind_marginal_ns_per_frame"]),
            "unwind_per_frame_dwfl_over_fast": ratio(d["unwind_ns_per_frame"],
                                                     f["unwind_ns_per_frame"]),
            "wall_per_frame_perf_over_fast": ratio(pf["wall_ns_per_frame"], f["wall_ns_per_frame"]),
            "wall_per_frame_perf_over_dwfl": ratio(pf["wall_ns_per_frame"], d["wall_ns_per_frame"]),
            "wall_marginal_per_frame_perf_over_fast": ratio(pf["wall_marginal_ns_per_frame"],
                                                            f["wall_marginal_ns_per_frame"]),
            "wall_marginal_per_frame_perf_over_dwfl": ratio(pf["wall_marginal_ns_per_frame"],
                                                            d["wall_marginal_ns_per_frame"]),
        }
        res[w] = tools
    return res


def overhead_section(v):
    res = {}
    none = v.get("overhead/none/own_cpu_s", [])
    for mode in ("none", "bpfprof-99", "perf-99", "bpfprof-999", "perf-999", "perf-ip-999"):
        xs = v.get("overhead/%s/own_cpu_s" % mode, [])
        if not xs:
            continue
        e = {"own_cpu_s": dist(xs)}
        if mode != "none":
            r = ratio(dist(xs), dist(none))
            e["growth_pct"] = (r - 1) * 100 if r is not None else None
            # Run i under the profiler against run i alone: the spread shows the noise.
            e["growth_pct_paired"] = dist(paired(lambda a, b: (a / b - 1) * 100, xs, none))
        res[mode] = e
    return res


def startup_section(v):
    res = {}
    for t in ("bpfprof", "perf", "perf-dwarf", "perf-script"):
        xs = v.get("startup/%s/wall_s" % t, [])
        if xs:
            res[t] = {"wall_ms": dist([x * 1e3 for x in xs]),
                      "cpu_ms": dist([x * 1e3 for x in v.get("startup/%s/cpu_s" % t, [])])}
    if "bpfprof" in res:
        res["ratios"] = {
            "bpfprof_over_perf": ratio(res["bpfprof"]["wall_ms"],
                                       res.get("perf", {}).get("wall_ms")),
            "bpfprof_over_perf_dwarf": ratio(res["bpfprof"]["wall_ms"],
                                             res.get("perf-dwarf", {}).get("wall_ms")),
        }
    return res


def memory_section(v):
    res = {}
    sizes = sorted({int(k.split("/")[1]) for k in v if k.startswith("memory/")})
    for n in sizes:
        p = "memory/%d/" % n
        res[str(n)] = {
            "max_rss_mb": dist([x * 1024 / 1e6 for x in v[p + "max_rss_kib"]]),
            "fds": dist(v[p + "fds"]),
            "samples": dist(v[p + "samples"]),
        }
    if "1" in res and "200" in res:
        res["rss_growth_200_vs_1_mb"] = med(res["200"]["max_rss_mb"]) - med(res["1"]["max_rss_mb"])
    return res


def cps_section(v):
    """Per tool: CPU per sample of the long runs (start-up included) and marginal (long - short
    of the same iteration: the extra samples alone)."""
    res = {}
    parts = {"bpfprof": ("own_cpu_s", "bpf_s"), "perf": ("record_cpu_s", "script_cpu_s")}
    for t, (a, b) in parts.items():
        p = "cps/%s/" % t
        if not v.get(p + "long/samples"):
            continue
        L = {k: v[p + "long/" + k] for k in (a, b, "samples")}
        S = {k: v.get(p + "short/" + k, []) for k in (a, b, "samples")}
        res[t] = {
            "us_per_sample": dist(paired(lambda x, y, n: (x + y) * 1e6 / n, L[a], L[b],
                                         L["samples"])),
            "marginal_us_per_sample": dist(paired(
                lambda xl, yl, nl, xs, ys, ns: (xl + yl - xs - ys) * 1e6 / (nl - ns),
                L[a], L[b], L["samples"], S[a], S[b], S["samples"])),
            "samples": dist(L["samples"]),
            "short_samples": dist(S["samples"]),
            a: dist(L[a]),
            b: dist(L[b]),
        }
    if "bpfprof" in res and "perf" in res:
        res["ratio_perf_over_bpfprof"] = ratio(res["perf"]["us_per_sample"],
                                               res["bpfprof"]["us_per_sample"])
        res["ratio_perf_over_bpfprof_marginal"] = ratio(res["perf"]["marginal_us_per_sample"],
                                                        res["bpfprof"]["marginal_us_per_sample"])
    return res


def own_section(v):
    res = {}
    for hz in ("99", "999", "idle"):
        p = "own/%s/" % hz
        if not v.get(p + "window_user_pct"):
            continue
        user, bpf = v[p + "window_user_pct"], v[p + "bpf_pct"]
        res[hz] = {
            "steady_pct": dist(paired(lambda a, b: a + b, user, bpf)),
            "steady_user_pct": dist(user),
            "bpf_pct": dist(bpf),
            "whole_run_pct": dist(v[p + "whole_run_pct"]),
            "samples_per_s": dist(v[p + "samples_per_s"]),
            "bpf_programs_pct": {k[len(p + "bpf_prog/"):-len("_pct")]: dist(x)
                                 for k, x in v.items() if k.startswith(p + "bpf_prog/")},
            # % of a core -> us of CPU per second, over samples per second.
            "steady_us_per_sample": dist(paired(lambda a, b, n: (a + b) * 1e4 / n, user, bpf,
                                                v[p + "samples_per_s"])),
        }
    return res


def python_section(v, key="python"):
    """The sampler's BPF time per sample with and without Python frames (same workload, same
    iteration), and the difference of medians; key: the CPython's figures ("python": the
    machine's python3, "python_py314": sid's 3.14 in a container root)."""
    res = {}
    for mode in ("py", "native"):
        p = "%s/%s/" % (key, mode)
        if not v.get(p + "bpf_us_per_sample"):
            continue
        res[mode] = {"bpf_us_per_sample": dist(v[p + "bpf_us_per_sample"]),
                     "samples": dist(v[p + "samples"])}
    if "py" in res:
        for k in ("python_frames_per_sample", "code_objects", "code_ms"):
            res["py"][k] = dist(v.get(key + "/py/" + k, []))
    if "py" in res and "native" in res:
        res["added_us_per_sample"] = dist(paired(lambda a, b: a - b,
                                                 v[key + "/py/bpf_us_per_sample"],
                                                 v[key + "/native/bpf_us_per_sample"]))
    return res


def go_section(v):
    """RSS beside GO_BINS processes of distinct Go builds and of one build; the time to read one
    file's .gopclntab names."""
    res = {}
    for mode in ("distinct", "same"):
        p = "go/%s/" % mode
        if not v.get(p + "max_rss_kib"):
            continue
        res[mode] = {"max_rss_mb": dist([x * 1024 / 1e6 for x in v[p + "max_rss_kib"]]),
                     "samples": dist(v[p + "samples"]),
                     "go_files": dist(v.get(p + "go_files", [])),
                     "go_table_ms_per_file": dist(paired(lambda ms, n: ms / n if n else 0,
                                                         v.get(p + "go_table_ms", []),
                                                         v.get(p + "go_files", [])))}
    if "distinct" in res and "same" in res:
        res["rss_per_extra_file_mb"] = dist(paired(
            lambda d, s_, n: (d - s_) * 1024 / 1e6 / max(n - 1, 1), v["go/distinct/max_rss_kib"],
            v["go/same/max_rss_kib"], v["go/distinct/go_files"]))
    return res


PINGPONG_MODES = ("none", "off-cpu", "wakers", "offcputime")


def offcpu_section(v):
    """wake pingpong's run time alone, under --off-cpu, --wakers and bcc's offcputime (where it
    ran), and the ratios of medians; fixed work's own CPU alone and under --off-cpu;
    sched_switch's ns per switch of processes that are not targets."""
    res = {}
    for mode in PINGPONG_MODES:
        xs = v.get("offcpu/pingpong/%s/wall_s" % mode)
        if xs:
            res.setdefault("pingpong", {})[mode] = {"wall_s": dist(xs)}
    pp = res.get("pingpong", {})
    for mode in PINGPONG_MODES[1:]:
        if mode in pp and "none" in pp:
            pp[mode]["over_none"] = ratio(pp[mode]["wall_s"], pp["none"]["wall_s"])
    if "off-cpu" in pp and "offcputime" in pp:
        res["off_cpu_over_offcputime"] = ratio(pp["off-cpu"]["wall_s"],
                                               pp["offcputime"]["wall_s"])
    for mode in ("none", "off-cpu"):
        xs = v.get("offcpu/work/%s/own_cpu_s" % mode)
        if xs:
            res.setdefault("work", {})[mode] = {"own_cpu_s": dist(xs)}
    w = res.get("work", {})
    if "off-cpu" in w and "none" in w:
        w["off-cpu"]["over_none"] = ratio(w["off-cpu"]["own_cpu_s"], w["none"]["own_cpu_s"])
    xs = [x for x in v.get("offcpu/untargeted/switch_ns", []) if x == x]
    if xs:
        res["untargeted_switch_ns"] = dist(xs)
    # Python frames' cost: pyoffcpu.py --pingpong alone, under --off-cpu with Python frames
    # (py) and with --no-python (native).
    pp = {}
    for mode in ("none", "py", "native"):
        p = "offcpu/pypingpong/%s/" % mode
        if not v.get(p + "wall_s"):
            continue
        pp[mode] = {"wall_s": dist(v[p + "wall_s"])}
        if mode != "none":
            pp[mode]["stacks"] = dist(v.get(p + "stacks", []))
            pp[mode]["sys_exit_ns_per_stack"] = dist(
                [x for x in v.get(p + "sys_exit_ns_per_stack", []) if x == x])
    for mode in ("py", "native"):
        if mode in pp and "none" in pp:
            pp[mode]["over_none"] = ratio(pp[mode]["wall_s"], pp["none"]["wall_s"])
    if "py" in pp and "native" in pp:
        pp["wall_py_over_native"] = ratio(pp["py"]["wall_s"], pp["native"]["wall_s"])
        pp["per_stack_py_over_native"] = ratio(pp["py"]["sys_exit_ns_per_stack"],
                                               pp["native"]["sys_exit_ns_per_stack"])
        # Paired (the same iteration): BPF ns per stack added, and the pingpong's wall time
        # added per stack written (each walk delays the thread it is made for: the critical
        # path of a ping-pong).
        pp["added_sys_exit_ns_per_stack"] = dist(paired(
            lambda a, b: a - b if a == a and b == b else None,
            v.get("offcpu/pypingpong/py/sys_exit_ns_per_stack", []),
            v.get("offcpu/pypingpong/native/sys_exit_ns_per_stack", [])))
        pp["added_wall_ns_per_stack"] = dist(paired(
            lambda a, b, n: (a - b) * 1e9 / n if n == n and n > 0 else None,
            v["offcpu/pypingpong/py/wall_s"], v["offcpu/pypingpong/native/wall_s"],
            v.get("offcpu/pypingpong/py/stacks", [])))
    if pp:
        res["python_pingpong"] = pp
    return res


def targets(r):
    vals = {
        "cpu_per_sample": r["cpu_per_sample"].get("ratio_perf_over_bpfprof_marginal"),
        "fast_vs_dwfl_chain": r["unwind"].get("chain", {}).get("ratios", {})
        .get("unwind_marginal_per_frame_dwfl_over_fast"),
        "fast_vs_dwfl_python": r["unwind"].get("python", {}).get("ratios", {})
        .get("unwind_marginal_per_frame_dwfl_over_fast"),
        "overhead_999": r["overhead"].get("bpfprof-999", {}).get("growth_pct"),
        "own_cpu_99": med(r["own_cpu"].get("99", {}).get("steady_pct")),
        "rss_growth": r["memory"].get("rss_growth_200_vs_1_mb"),
        "python_bpf_cost": med(r["python"].get("added_us_per_sample")),
        "python_bpf_cost_py314": med(r["python_py314"].get("added_us_per_sample")),
        "offcpu_vs_offcputime": r["offcpu"].get("off_cpu_over_offcputime"),
    }
    out = []
    for key, desc, cmp, goal, unit in TARGETS:
        x = vals[key]
        met = None if x is None else (x >= goal if cmp == ">=" else x <= goal if cmp == "<="
                                      else x < goal)
        out.append({"name": key, "description": desc, "value": x, "goal": "%s %g %s" %
                    (cmp, goal, unit), "unit": unit, "met": met})
    return out


def num(x):
    """x with 3 significant digits at most after the point, as short as that allows."""
    a = abs(x)
    if x == int(x) and a < 1e7:
        return "%d" % x
    return "%.0f" % x if a >= 100 else "%.1f" % x if a >= 10 else "%.2f" % x if a >= 1 else \
        "%.3f" % x


def q3(d, fmt=None):
    """ "p25 / p50 / p75" of a distribution."""
    if not d:
        return "-"
    return " / ".join((fmt % d[k]) if fmt else num(d[k]) for k in ("p25", "p50", "p75"))


def label(mode):
    return mode if mode == "idle" else mode + " Hz"


def fx(x, fmt="%.1f"):
    return "-" if x is None else fmt % x


def text(r):
    m = r["machine"]
    L = []
    L.append("bpfprof bench %s: kernel %s, %s CPUs (%s),\nperf %s, bpfprof %s" % (
        m.get("date", "?"), m.get("kernel", "?"), num(m.get("cpus", 0)),
        str(m.get("cpu_model", "?")).replace("_", " "), m.get("perf_version", "?"),
        m.get("bpfprof_commit", "?")))
    L.append("Figures: p25 / p50 / p75 over n runs; ratios: medians of this run.")

    L.append("")
    L.append("1. Offline unwinding: bpfprof report --unwinder=fast|dwfl --stats and perf script")
    L.append("   on 999 Hz captures; frames: user frames (no kernel, no inline); marginal: a long")
    L.append("   capture less a short one, per extra frame or sample (no start-up, one-time work)")
    L.append("%-7s %-5s %-22s %-22s %-22s %-14s" % (
        "work", "tool", "unwind ns/frame", "unwind ksamples/s", "unwind ns/frame", "one-time"))
    L.append("%-7s %-5s %-22s %-22s %-22s %-14s" % ("", "", "marginal", "marginal",
                                                    "long capture", "unwind ms"))
    for w, tools in r["unwind"].items():
        for t in ("fast", "dwfl"):
            e = tools[t]
            ks = e["unwind_marginal_samples_per_s"]
            ks = ks and {k: (x / 1e3 if k != "n" else x) for k, x in ks.items()}
            L.append("%-7s %-5s %-22s %-22s %-22s %-14s" % (
                w, t, q3(e["unwind_marginal_ns_per_frame"]), q3(ks),
                q3(e["unwind_ns_per_frame"]), num(med(e["unwind_one_time_ms"]) or 0)))
    L.append("%-7s %-5s %6s %6s %-22s %-22s %-22s %2s" % (
        "work", "tool", "smpl", "fr/smp", "wall us/sample", "wall samples/s",
        "wall ns/frame, marg.", "n"))
    for w, tools in r["unwind"].items():
        for t in ("fast", "dwfl", "perf"):
            e = tools[t]
            us = e["wall_ns_per_sample"]
            us = us and {k: (x / 1e3 if k != "n" else x) for k, x in us.items()}
            L.append("%-7s %-5s %6.0f %6.1f %-22s %-22s %-22s %2d" % (
                w, t, e["samples"], e["frames_per_sample"] or 0, q3(us),
                q3(e["wall_samples_per_s"]), q3(e["wall_marginal_ns_per_frame"]),
                e["wall_s"]["n"]))
    for w, tools in r["unwind"].items():
        rt = tools["ratios"]
        L.append("%-7s unwind per frame, dwfl/fast: %sx marginal, %sx long capture" % (
            w, fx(rt["unwind_marginal_per_frame_dwfl_over_fast"], "%.2f"),
            fx(rt["unwind_per_frame_dwfl_over_fast"], "%.2f")))
        L.append("%-7s wall per frame, perf/fast: %sx, %sx marginal; perf/dwfl: %sx, %sx marginal"
                 % (w, fx(rt["wall_per_frame_perf_over_fast"]),
                    fx(rt["wall_marginal_per_frame_perf_over_fast"]),
                    fx(rt["wall_per_frame_perf_over_dwfl"]),
                    fx(rt["wall_marginal_per_frame_perf_over_dwfl"])))

    L.append("")
    L.append("2. Overhead: the profiled program's own CPU time for fixed work (python3)")
    L.append("%-12s %-24s %-12s %-24s %2s" % ("mode", "CPU s", "growth", "paired growth %", "n"))
    for mode, e in r["overhead"].items():
        L.append("%-12s %-24s %-12s %-24s %2d" % (
            mode, q3(e["own_cpu_s"], "%.3f"),
            "" if mode == "none" else fx(e.get("growth_pct"), "%+.2f%%"),
            q3(e.get("growth_pct_paired"), "%+.2f"), e["own_cpu_s"]["n"]))

    L.append("")
    L.append("3. End-to-end CPU per sample, fixed work at 999 Hz (bpfprof: own CPU + BPF programs;")
    L.append("   perf: record + script), us per sample; marginal: long work less short work")
    c = r["cpu_per_sample"]
    L.append("%-12s %-24s %-26s %2s" % ("tool", "whole run", "marginal", "n"))
    for t in ("bpfprof", "perf"):
        if t in c:
            L.append("%-12s %-24s %-26s %2d" % (t, q3(c[t]["us_per_sample"]),
                                               q3(c[t]["marginal_us_per_sample"]),
                                               c[t]["us_per_sample"]["n"]))
    L.append("ratio perf/bpfprof: %sx whole run, %sx marginal" % (
        fx(c.get("ratio_perf_over_bpfprof")), fx(c.get("ratio_perf_over_bpfprof_marginal"))))
    L.append("%-12s %-24s %-24s %-24s" % ("whole run", "own / record CPU s", "BPF / script CPU s",
                                          "samples"))
    if "bpfprof" in c:
        e = c["bpfprof"]
        L.append("%-12s %-24s %-24s %-24s" % ("bpfprof", q3(e["own_cpu_s"]), q3(e["bpf_s"]),
                                              q3(e["samples"])))
    if "perf" in c:
        e = c["perf"]
        L.append("%-12s %-24s %-24s %-24s" % ("perf", q3(e["record_cpu_s"]),
                                              q3(e["script_cpu_s"]), q3(e["samples"])))

    L.append("")
    L.append("4. bpfprof's own CPU per second of profiling, one busy chain per CPU (-p), "
             "% of one core")
    L.append("%-6s %-22s %-22s %-22s %-20s %2s" % ("rate", "steady: user + BPF", "user space",
                                                   "BPF programs", "whole run", "n"))
    for hz, e in r["own_cpu"].items():
        L.append("%-6s %-22s %-22s %-22s %-20s %2d" % (
            label(hz), q3(e["steady_pct"]), q3(e["steady_user_pct"]), q3(e["bpf_pct"]),
            q3(e["whole_run_pct"]), e["steady_pct"]["n"]))
    for hz, e in r["own_cpu"].items():
        if hz != "idle":
            L.append("%-6s steady CPU per sample %s us, %s samples/s" % (
                label(hz), q3(e["steady_us_per_sample"]), q3(e["samples_per_s"])))
    L.append("idle: 99 Hz on two sleeping processes (no samples): the fixed cost")
    for hz, e in r["own_cpu"].items():
        progs = sorted(e["bpf_programs_pct"].items(), key=lambda kv: -kv[1]["p50"])
        L.append("%-6s BPF programs, p50 %% of a core: %s" % (label(hz), ", ".join(
            "%s %s" % (k, num(d["p50"])) for k, d in progs if d["p50"] >= 0.001) or "-"))

    L.append("")
    L.append("5. Memory: bpfprof --realtime 1 -F 999 -- crowd -n N chain 2")
    L.append("%-6s %-24s %-18s %-22s %2s" % ("procs", "max RSS MB", "fds at exit", "samples", "n"))
    for n, e in r["memory"].items():
        if not isinstance(e, dict):
            continue
        L.append("%-6s %-24s %-18s %-22s %2d" % (n, q3(e["max_rss_mb"], "%.1f"), q3(e["fds"]),
                                                 q3(e["samples"]), e["max_rss_mb"]["n"]))
    L.append("RSS(200) - RSS(1): %s MB" % fx(r["memory"].get("rss_growth_200_vs_1_mb")))

    L.append("")
    L.append("6. Start-up: bpfprof -- true; perf record [--call-graph dwarf] -- true; perf script")
    L.append("%-12s %-24s %-24s %2s" % ("tool", "wall ms", "CPU ms (user + system)", "n"))
    for t in ("bpfprof", "perf", "perf-dwarf", "perf-script"):
        if t in r["startup"]:
            e = r["startup"][t]
            L.append("%-12s %-24s %-24s %2d" % (t, q3(e["wall_ms"]), q3(e["cpu_ms"]),
                                               e["wall_ms"]["n"]))
    if "ratios" in r["startup"]:
        L.append("ratio bpfprof/perf: %sx, bpfprof/perf --call-graph dwarf: %sx" % (
            fx(r["startup"]["ratios"]["bpfprof_over_perf"]),
            fx(r["startup"]["ratios"]["bpfprof_over_perf_dwarf"])))

    L.append("")
    L.append("7. Python frames: pychain.py 3 at 999 Hz, the sampler's BPF time per sample")
    for key, title in (("python", "the machine's python3"),
                       ("python_py314", "sid's python3.14 (container root)")):
        rp = r[key]
        if not rp:
            continue
        L.append("%s:" % title)
        L.append("%-14s %-24s %-22s %2s" % ("mode", "BPF us per sample", "samples", "n"))
        for m, name in (("py", "Python frames"), ("native", "--no-python")):
            e = rp.get(m)
            if e:
                L.append("%-14s %-24s %-22s %2d" % (name, q3(e["bpf_us_per_sample"], "%.2f"),
                                                   q3(e["samples"]),
                                                   e["bpf_us_per_sample"]["n"]))
        if "added_us_per_sample" in rp:
            e = rp["py"]
            L.append("added per sample (paired): %s us; Python frames per sample %s; code "
                     "objects %s, decoded in %s ms" % (q3(rp["added_us_per_sample"], "%.2f"),
                                                      q3(e["python_frames_per_sample"]),
                                                      q3(e["code_objects"]), q3(e["code_ms"])))

    if r["go"]:
        L.append("")
        L.append("8. Go binaries: bpfprof -a -d 3 -F 99 beside %s gochain processes (-s -w)" %
                 fx(r["machine"].get("go_bins"), "%d"))
        L.append("%-10s %-24s %-14s %-26s %2s" % ("builds", "max RSS MB", "Go files",
                                                 "ms per .gopclntab read", "n"))
        for m in ("distinct", "same"):
            e = r["go"].get(m)
            if e:
                L.append("%-10s %-24s %-14s %-26s %2d" % (m, q3(e["max_rss_mb"], "%.1f"),
                                                         q3(e["go_files"]),
                                                         q3(e["go_table_ms_per_file"], "%.2f"),
                                                         e["max_rss_mb"]["n"]))
        if "rss_per_extra_file_mb" in r["go"]:
            L.append("RSS per Go file beyond the first (paired): %s MB" %
                     q3(r["go"]["rss_per_extra_file_mb"], "%.2f"))

    if r["offcpu"]:
        o = r["offcpu"]
        L.append("")
        L.append("9. Off-CPU: wake pingpong (%s rounds) and fixed work, alone and under --off-cpu"
                 % fx(r["machine"].get("pingpong_rounds"), "%d"))
        for m in PINGPONG_MODES:
            e = o.get("pingpong", {}).get(m)
            if e:
                L.append("pingpong %-10s wall %s s%s  n %d" % (
                    m, q3(e["wall_s"], "%.2f"),
                    "  x%.2f of alone" % e["over_none"] if e.get("over_none") else "",
                    e["wall_s"]["n"]))
        for m in ("none", "off-cpu"):
            e = o.get("work", {}).get(m)
            if e:
                L.append("work     %-8s own CPU %s s%s  n %d" % (
                    m, q3(e["own_cpu_s"], "%.3f"),
                    "  x%.3f of alone" % e["over_none"] if e.get("over_none") else "",
                    e["own_cpu_s"]["n"]))
        if o.get("off_cpu_over_offcputime"):
            L.append("pingpong's wall time under --off-cpu / under offcputime: x%.2f"
                     % o["off_cpu_over_offcputime"])
        elif "pingpong" in o:
            L.append("no offcputime run (bcc needs the kernel's headers: make bench-vm)")
        if "untargeted_switch_ns" in o:
            L.append("sched_switch per switch of a process not profiled: %s ns" %
                     q3(o["untargeted_switch_ns"], "%.0f"))
        pp = o.get("python_pingpong", {})
        for m, what in (("none", "alone"), ("py", "--off-cpu"), ("native", "--no-python")):
            e = pp.get(m)
            if not e:
                continue
            line = "python pingpong %-11s wall %s s" % (what, q3(e["wall_s"], "%.2f"))
            if e.get("over_none"):
                line += "  x%.2f of alone" % e["over_none"]
            if e.get("sys_exit_ns_per_stack"):
                line += "; %s stacks, sys_exit BPF %s ns per stack" % (
                    q3(e["stacks"], "%.0f"), q3(e["sys_exit_ns_per_stack"], "%.0f"))
            L.append(line + "  n %d" % e["wall_s"]["n"])
        if pp.get("wall_py_over_native"):
            L.append("python pingpong, Python frames / --no-python: wall x%.3f, BPF per "
                     "blocked stack x%s" % (pp["wall_py_over_native"],
                                            fx(pp.get("per_stack_py_over_native"), "%.2f")))
            L.append("python pingpong, added per blocked stack (paired): sys_exit BPF %s ns, "
                     "wall %s ns" % (q3(pp.get("added_sys_exit_ns_per_stack"), "%.0f"),
                                     q3(pp.get("added_wall_ns_per_stack"), "%.0f")))

    L.append("")
    L.append("Targets")
    for t in r["targets"]:
        verdict = {True: "met", False: "NOT MET", None: "not measured"}[t["met"]]
        L.append("  %-48s %8s  goal %-16s %s" % (t["description"], fx(t["value"], "%.2f"),
                                                t["goal"], verdict))
    return "\n".join(x.rstrip() for x in L) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: summarize.py RAW JSON_OUT TEXT_OUT")
    v = load(sys.argv[1])
    r = {
        "schema": SCHEMA,
        "quantiles": "p25/p50/p75 over n runs, statistics.quantiles(method='inclusive')",
        "machine": {k.split("/", 1)[1]: x[-1] for k, x in v.items() if k.startswith("meta/")},
        "unwind": unwind_section(v),
        "overhead": overhead_section(v),
        "own_cpu": own_section(v),
        "memory": memory_section(v),
        "startup": startup_section(v),
        "python": python_section(v),
        "python_py314": python_section(v, "python_py314"),
        "go": go_section(v),
        "offcpu": offcpu_section(v),
    }
    r["cpu_per_sample"] = cps_section(v)
    r["targets"] = targets(r)
    for path, data in ((sys.argv[2], json.dumps(r, indent=1) + "\n"), (sys.argv[3], text(r))):
        with open(path + ".tmp", "w") as f:
            f.write(data)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()

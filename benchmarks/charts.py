#!/usr/bin/python3
"""PNG charts for the benchmarks (Debian's python3-matplotlib).

  charts.py tlb     RESULT.json OUT.png   per-trial HGET throughput, both arms
  charts.py compare RESULT.json OUT.png   goblin/redis ratio per command, with range
  charts.py memory  RESULT.json OUT.png   bytes per element, side by side
  charts.py cache_heads RESULT.json OUT.png   goblin's --ram-head sweep (cache_bench.py):
                                          warm throughput, TTFB, RSS and object memory

The JSON files are what tlb_arena_benchmark.py, compare.py and memory.py
write with --json; their --chart option calls this script (with an
interpreter that has matplotlib: the running one, else /usr/bin/python3).
"""

import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BASE = "#4C72B0"
HUGE = "#DD8452"
GOB = "#55A868"
RED = "#C44E52"


def footer(fig, d):
    bits = [d.get("date", ""), d.get("machine", "")]
    fig.text(0.01, 0.005, " | ".join(b for b in bits if b), fontsize=7, color="#555555")


def tlb(d, out):
    trials = d["trials"]
    x = list(range(1, len(trials) + 1))
    b = [t["baseline"] / 1e3 for t in trials]
    h = [t["hugetlb"] / 1e3 for t in trials]
    dl = [100 * t["delta"] for t in trials]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6.4), sharex=True,
                                   gridspec_kw={"height_ratios": [3, 2]})
    ax1.plot(x, b, "o-", color=BASE, label="baseline (4 KiB pages)")
    ax1.plot(x, h, "s-", color=HUGE,
             label="hugetlb arm (--arena-hugetlb)" + ("" if d.get("huge_pages_used", True) else " (pool empty: 4 KiB)"))
    ax1.set_ylabel("random HGET, thousand req/s")
    ax1.set_ylim(bottom=0)
    ax1.grid(alpha=0.3)
    ax1.legend(loc="lower right", fontsize=8)
    ax1.set_title("%s-field hash, %.0f MiB arena, %d interleaved trials of %.0f s\n"
                  "resident delta %+.1f MiB (%+.2f%%)" % (
                      format(d["fields"], ","), d["arena_bytes"] / 2**20, len(trials), d["seconds"],
                      d["resident_delta"] / 2**20, 100 * d["resident_delta_pct"]), fontsize=10)
    ax2.bar(x, dl, color=[HUGE if v >= 0 else BASE for v in dl])
    med = 100 * d["delta_median"]
    ax2.axhline(med, color="black", lw=1, ls="--",
                label="throughput: median %+.1f%% (range %+.1f%% to %+.1f%%)" % (
                    med, 100 * d["delta_min"], 100 * d["delta_max"]))
    if trials and "cpu_delta" in trials[0]:
        cd = [100 * t["cpu_delta"] for t in trials]
        ax2.plot(x, cd, "D", color="black", ms=5,
                 label="per server-CPU-second: median %+.1f%% (range %+.1f%% to %+.1f%%)" % (
                     100 * d["cpu_delta_median"], 100 * d["cpu_delta_min"], 100 * d["cpu_delta_max"]))
    ax2.axhline(0, color="#888888", lw=0.8)
    ax2.set_ylabel("hugetlb vs baseline, %")
    ax2.set_xlabel("trial")
    ax2.set_xticks(x)
    ax2.grid(alpha=0.3, axis="y")
    ax2.legend(loc="best", fontsize=7)
    footer(fig, d)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(out, dpi=110)


def compare(d, out):
    rows = d["rows"]        # [{"test","pipeline","ratios":[...],"goblin":[...],"redis":[...]}]
    pipes = sorted({r["pipeline"] for r in rows})
    tests = []
    for r in rows:
        if r["test"] not in tests:
            tests.append(r["test"])
    fig, axes = plt.subplots(1, len(pipes), figsize=(5.2 * len(pipes), 0.38 * len(tests) + 1.8),
                             sharey=True, squeeze=False)
    for ax, p in zip(axes[0], pipes):
        ys, med, lo, hi = [], [], [], []
        for i, t in enumerate(tests):
            r = next((r for r in rows if r["test"] == t and r["pipeline"] == p), None)
            if not r or not r["ratios"]:
                continue
            m = statistics.median(r["ratios"])
            ys.append(i)
            med.append(m)
            lo.append(m - min(r["ratios"]))
            hi.append(max(r["ratios"]) - m)
        ax.barh(ys, med, xerr=[lo, hi], color=[GOB if m >= 1 else RED for m in med],
                capsize=3, error_kw={"lw": 0.8})
        ax.axvline(1.0, color="black", lw=0.8)
        for y, m in zip(ys, med):
            ax.text(0.02, y, "%.2f" % m, va="center", fontsize=7, color="white")
        ax.set_yticks(range(len(tests)))
        ax.set_yticklabels(tests, fontsize=8)
        ax.set_xlabel("goblin / redis throughput (median, bar = range over rounds)")
        ax.set_title("-P %d, %d clients" % (p, d.get("clients", 50)), fontsize=10)
        ax.grid(alpha=0.3, axis="x")
    axes[0][0].invert_yaxis()          # shared y axis: invert once
    fig.suptitle("goblin-core vs redis-server %s, redis-benchmark, %d rounds A/B" % (
        d.get("redis_version", "7.0"), d.get("rounds", 0)), fontsize=11)
    footer(fig, d)
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    fig.savefig(out, dpi=110)


def memory(d, out):
    rows = d["rows"]        # [{"name","goblin","redis"}]  bytes per element
    names = [r["name"] for r in rows]
    x = range(len(rows))
    w = 0.38
    fig, ax = plt.subplots(figsize=(max(7, 1.25 * len(rows) + 2), 4.6))
    g = [r["goblin"] for r in rows]
    rr = [r["redis"] for r in rows]
    ax.bar([i - w / 2 for i in x], g, w, color=GOB, label="goblin-core")
    ax.bar([i + w / 2 for i in x], rr, w, color=RED, label="redis-server")
    for i in x:
        if g[i] is not None and rr[i]:
            ax.text(i, max(g[i], rr[i]) * 1.02, "%.2fx" % (g[i] / rr[i]), ha="center", fontsize=8)
    for i, v in enumerate(g):
        ax.text(i - w / 2, v / 2, "%.0f" % v, ha="center", fontsize=7, color="white", rotation=90)
    for i, v in enumerate(rr):
        ax.text(i + w / 2, v / 2, "%.0f" % v, ha="center", fontsize=7, color="white", rotation=90)
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("bytes per element above the empty server\n(VmRSS + HugetlbPages)")
    ax.set_title(d.get("title", "memory per element, same data, both servers") +
                 ("" if not d.get("figure") else " -- " + d["figure"]), fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    footer(fig, d)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out, dpi=110)


def cache_heads(d, out):
    summ = d["summary"]     # label -> medians (cache_bench.py)
    heads = sorted((int(k.split("-")[1].rstrip("K")), k) for k in summ
                   if k.startswith("goblin-") and k.endswith("K") and not k.startswith("goblin-ram"))
    x = list(range(len(heads)))
    names = ["%d KiB" % h for h, _ in heads]
    rows = [summ[k] for _, k in heads]
    var = summ.get("varnish")
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 4.4))
    ax1.plot(x, [r["wrk_gbps"] for r in rows], "o-", color=GOB, label="goblin, wrk")
    ax1.plot(x, [r["py_gbps"] for r in rows], "s--", color=GOB, alpha=0.6, label="goblin, python client")
    if var:
        ax1.axhline(var["wrk_gbps"], color=RED, lw=1.2, label="varnish, wrk")
        ax1.axhline(var["py_gbps"], color=RED, lw=1.0, ls="--", label="varnish, python client")
    ax1.set_ylabel("warm Zipf replay, Gbit/s (concurrency 8)")
    ax1.set_ylim(bottom=0)
    ax1.legend(fontsize=7)
    for key, mk, lab in (("ttfb_p50", "o-", "p50"), ("ttfb_p90", "s-", "p90"), ("ttfb_p99", "^-", "p99")):
        ax2.plot(x, [r[key] / 1000.0 for r in rows], mk, label="goblin " + lab)
    if var:
        ax2.axhline(var["ttfb_p50"] / 1000.0, color=RED, lw=1.0, label="varnish p50")
        ax2.axhline(var["ttfb_p99"] / 1000.0, color=RED, lw=1.0, ls="--", label="varnish p99")
    ax2.set_yscale("log")
    ax2.set_ylabel("time to first byte, ms (python client)")
    ax2.legend(fontsize=7)
    mib = 1024.0 * 1024.0
    ax3.bar([i - 0.2 for i in x], [r["rss_pop"] / mib for r in rows], 0.4, color=GOB, label="goblin VmRSS after population")
    ax3.bar([i + 0.2 for i in x], [r["objmem"] / mib for r in rows], 0.4, color=BASE, label="goblin resident objects (INFO: heads + small arena)")
    if var:
        ax3.axhline(var["rss_pop"] / mib, color=RED, lw=1.2, label="varnish VmRSS")
        ax3.axhline(var["objmem"] / mib, color=RED, lw=1.0, ls="--", label="varnish SMA bytes")
    ax3.set_ylabel("MiB")
    ax3.legend(fontsize=7)
    for ax in (ax1, ax2, ax3):
        ax.set_xticks(x)
        ax.set_xticklabels(names, fontsize=8)
        ax.set_xlabel("--ram-head (--block 2M, tails on --ssd-dir)")
        ax.grid(alpha=0.3)
    c = d.get("corpus", {})
    fig.suptitle("HTTP cache, %s objects, mean %.0f KiB, Zipf s=%.1f; medians of %d round(s)" % (
        format(c.get("objects", 0), ","), c.get("mean", 0) / 1024.0, d["args"]["zipf"], d["args"]["rounds"]),
        fontsize=10)
    footer(fig, d)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(out, dpi=110)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("tlb", "compare", "memory", "cache_heads"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[2]) as f:
        d = json.load(f)
    {"tlb": tlb, "compare": compare, "memory": memory, "cache_heads": cache_heads}[sys.argv[1]](d, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())

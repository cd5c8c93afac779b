#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turns a results directory of siw2's benchmark into its report.

    report.py RESULTS_DIR

reads RESULTS_DIR/raw.jsonl and meta.json (written by
tools/testing/bench/run in the guest) and host.json (scripts/bench), and
writes RESULTS_DIR/bench.json, bench.md and chart.png (when matplotlib is
installed). Prints every figure of a siw2 system as a ratio to the same
figure of each other system.

Figures are medians over the repetitions; the spread is the range
(min-max). TCG figures mean little on their own: compare within one run.
"""

import json
import math
import os
import statistics
import sys

BW_TESTS = ["ib_write_bw", "ib_read_bw", "ib_send_bw"]
LAT_TESTS = ["ib_write_lat", "ib_send_lat", "ib_read_lat"]
SYSCALL_TESTS = [("ib_write_lat", 64), ("ib_send_lat", 64), ("ib_write_bw", 64)]

# What TCP measures in place of each RDMA test.
TCP_ANALOG = {
    "ib_write_bw": "tcp_stream",
    "ib_read_bw": "tcp_stream",
    "ib_send_bw": "tcp_stream",
    "ib_write_lat": "tcp_pingpong",
    "ib_send_lat": "tcp_pingpong",
    "ib_read_lat": "tcp_rr",
    "qp_scale": "tcp_conns",
}

# True when a larger figure is better.
HIGHER_BETTER = {"bw_gbps": True, "msg_rate_mpps": True, "mib_s": True,
                 "iops": True}

# The storage section (storage.sh): fio over each protocol, over siw2 (one
# column per CRC mode) and over TCP. (label, test prefix), then (job label,
# fio job, block size, metric).
STORAGE_PROTOCOLS = [("NFSv4.2, RDMA vs TCP", "nfs"),
                     ("NVMe-oF, RDMA vs TCP", "nvme"),
                     ("iSCSI, iSER vs TCP", "iscsi")]
STORAGE_ROWS = [("seq write 1 MiB QD16 (MiB/s)", "write", 1048576, "mib_s"),
                ("seq read 1 MiB QD16 (MiB/s)", "read", 1048576, "mib_s"),
                ("rand read 4 KiB QD1, p50 (us)", "randread", 4096,
                 "lat_p50_us"),
                ("rand read 4 KiB QD1, p99 (us)", "randread", 4096,
                 "lat_p99_us")]


def size_name(size):
    size = int(size)
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return "%d MiB" % (size >> 20)
    if size >= 1 << 10 and size % (1 << 10) == 0:
        return "%d KiB" % (size >> 10)
    return "%d B" % size


def fmt(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


class Results:
    def __init__(self, outdir):
        self.outdir = outdir
        self.meta = self._load_json("meta.json") or {}
        self.host = self._load_json("host.json") or {}
        self.done = self._load_json("done.json") or {}
        self.values = {}
        self.errors = []
        self.details = {}
        path = os.path.join(outdir, "raw.jsonl")
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                key = (r["system"], r["crc"], r["test"], int(r["size"]))
                if "metric" in r:
                    self.values.setdefault(key + (r["metric"],), []).append(
                        float(r["value"]))
                elif "error" in r:
                    self.errors.append(r)
                elif "syscalls_detail" in r:
                    self.details[key] = r["syscalls_detail"]
        self.systems = [s["name"] for s in self.meta.get("systems", [])]
        if not self.systems:
            self.systems = sorted({k[0] for k in self.values})
        self.kind = {s["name"]: s.get("kind", "rdma")
                     for s in self.meta.get("systems", [])}
        self.crcs = {s["name"]: s.get("crc", "-").split()
                     for s in self.meta.get("systems", [])}
        self.ours = [s for s in self.systems if s.startswith("siw2")]
        self.others = [s for s in self.systems if not s.startswith("siw2")]

    def _load_json(self, name):
        try:
            with open(os.path.join(self.outdir, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def stats(self, system, crc, test, size, metric):
        """Median, min, max and count of a figure, or None. TCP answers
        for its analog of an RDMA test; a system without CRC modes answers
        for every mode."""
        if self.kind.get(system) == "tcp":
            test = TCP_ANALOG.get(test, test)
        if crc not in self.crcs.get(system, [crc]):
            crc = "-"
        return self.raw_stats(system, crc, test, size, metric)

    def raw_stats(self, system, crc, test, size, metric):
        """stats() of exactly this key."""
        vals = self.values.get((system, crc, test, int(size), metric))
        if not vals:
            return None
        med = statistics.median(vals)
        return {"median": med, "min": min(vals), "max": max(vals),
                "n": len(vals), "values": vals,
                "spread_pct": (100.0 * (max(vals) - min(vals)) / med
                               if med else 0.0)}

    def ratio(self, ours, other, crc, test, size, metric):
        a = self.stats(ours, crc, test, size, metric)
        b = self.stats(other, crc, test, size, metric)
        if not a or not b or not b["median"]:
            return None
        return a["median"] / b["median"]


def cell(st):
    """median [min-max] or median alone for one value."""
    if not st:
        return "-"
    if st["n"] == 1:
        return fmt(st["median"])
    return "%s [%s-%s]" % (fmt(st["median"]), fmt(st["min"]), fmt(st["max"]))


def ratio_cell(r):
    return "-" if r is None else "%.2f" % r


class Table:
    def __init__(self, res, title, unit, note):
        self.res = res
        self.title = title
        self.unit = unit
        self.note = note
        self.rows = []
        self.measured = False

    def header(self, first):
        res = self.res
        cols = first + list(res.systems)
        cols += ["%s/%s" % (o, t) for o in res.ours for t in res.systems
                 if t != o]
        return cols

    def add(self, label, crc, test, size, metric):
        res = self.res
        row = list(label)
        for s in res.systems:
            st = res.stats(s, crc, test, size, metric)
            self.measured = self.measured or st is not None
            row.append(cell(st))
        for o in res.ours:
            for t in res.systems:
                if t != o:
                    row.append(ratio_cell(res.ratio(o, t, crc, test, size,
                                                    metric)))
        self.rows.append(row)

    def markdown(self, first):
        cols = self.header(first)
        out = ["### %s (%s)" % (self.title, self.unit), ""]
        if self.note:
            out += [self.note, ""]
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        for r in self.rows:
            out.append("| " + " | ".join(r) + " |")
        out.append("")
        return out


def sizes_of(res, key, default):
    return [int(s) for s in res.meta.get(key, default)]


def build_tables(res):
    bw_sizes = sizes_of(res, "bw_sizes", [64, 4096, 65536, 1048576])
    lat_sizes = sizes_of(res, "lat_sizes", [64, 4096])
    qps = int(res.meta.get("qps", 1000))
    tables = []

    t = Table(res, "Bandwidth", "Gb/s, higher is better",
              "One QP, perftest -R (TCP: iperf3, one stream, writes of the "
              "message size). Ratio columns: siw2's median over the other's.")
    for test in BW_TESTS:
        for crc in ("off", "on"):
            for size in bw_sizes:
                t.add([test, size_name(size), crc], crc, test, size, "bw_gbps")
    tables.append((t, ["test", "size", "CRC"]))

    t = Table(res, "Latency", "microseconds, lower is better",
              "perftest -R with CRC off: ib_write_lat and ib_send_lat report "
              "half the round trip, ib_read_lat the whole one. TCP: tcp_pp "
              "ping-pong, polling like perftest (half the round trip) for "
              "write/send, a 64 B request "
              "answered with the size (whole round trip) for read.")
    for test in LAT_TESTS:
        for size in lat_sizes:
            for metric, name in (("lat_typical_us", "typical"),
                                 ("lat_p99_us", "99%")):
                t.add([test, size_name(size), name], "off", test, size,
                      metric)
    tables.append((t, ["test", "size", "figure"]))

    t = Table(res, "CPU cost", "guest CPU seconds (system + softirq) per GiB "
              "moved, lower is better",
              "Both ends run in the guest, so this is the cost of sending "
              "and receiving; from /proc/stat around each bandwidth run "
              "(connection setup included). perftest's polling is user time "
              "and not counted.")
    for test in BW_TESTS:
        for crc in ("off", "on"):
            for size in bw_sizes:
                if size < 4096:
                    continue
                t.add([test, size_name(size), crc], crc, test, size,
                      "cpu_s_per_gib")
    tables.append((t, ["test", "size", "CRC"]))

    t = Table(res, "Scale", "lower is better",
              "qp_scale: %d RC QPs (64-entry send and receive queues, one "
              "shared CQ) connected through the RDMA CM, 16 connections "
              "under way at a time (TCP: %d connect() calls). "
              "Memory per idle connected QP: what the guest's Slab, "
              "VmallocUsed, PageTables, KernelStack, Percpu and AnonPages "
              "(/proc/meminfo) grew by between %d and %d connections, "
              "divided by the QPs of both ends (TCP: per socket); the drop "
              "of MemFree, page cache included, for comparison."
              % (qps, qps, qps // 10, qps))
    for metric, name in (("connect_s", "time to connect %d (s)" % qps),
                         ("mem_kib_per_qp", "memory per QP (KiB)"),
                         ("slab_kib_per_qp", "of which slab (KiB)"),
                         ("vmalloc_kib_per_qp", "of which vmalloc (KiB)"),
                         ("anon_kib_per_qp", "of which process memory (KiB)"),
                         ("memfree_kib_per_qp", "MemFree drop (KiB)")):
        t.add([name], "off", "qp_scale", qps, metric)
    tables.append((t, ["figure"]))

    t = Table(res, "System calls", "per 1000 work requests on the client, "
              "lower is better",
              "strace -c -f on the client, in separate short runs: the "
              "difference between N and 3N iterations, per 1000. One "
              "iteration posts one Send or RDMA Write work request (and for "
              "ib_send_lat one receive). TCP: tcp_pp ping-pong with blocking "
              "reads, per 1000 round trips.")
    for test, size in SYSCALL_TESTS:
        t.add([test, size_name(size)], "off", test, size,
              "syscalls_per_1k_wr")
    tables.append((t, ["test", "size"]))
    return tables


def is_storage(test):
    return test.startswith(("nfs_", "nvme_", "iscsi_", "storage_"))


def ran_per_system(res, system):
    """Whether a per-system section (not storage) has a figure or an error
    of SYSTEM."""
    return any(k[0] == system and not is_storage(k[2]) for k in res.values) \
        or any(e["system"] == system and not is_storage(e["test"])
               for e in res.errors)


def storage_rows(res):
    """The storage section: per protocol and fio job, siw2's figure for
    each of its CRC modes, TCP's, and siw2's over TCP's. Empty when the
    section did not run."""
    if not any(is_storage(k[2]) for k in res.values) and \
            not any(is_storage(e["test"]) for e in res.errors):
        return []
    crcs = res.crcs.get("siw2", ["off", "on"])
    rows = []
    for plabel, proto in STORAGE_PROTOCOLS:
        for jlabel, job, size, metric in STORAGE_ROWS:
            test = "%s_%s" % (proto, job)
            tcp = res.raw_stats("tcp", "-", test, size, metric)
            row = {"protocol": plabel, "workload": jlabel, "test": test,
                   "size": size, "metric": metric, "tcp": tcp, "siw2": {},
                   "ratio": {}}
            for crc in crcs:
                st = res.raw_stats("siw2", crc, test, size, metric)
                row["siw2"][crc] = st
                row["ratio"][crc] = (st["median"] / tcp["median"]
                                     if st and tcp and tcp["median"]
                                     else None)
            rows.append(row)
    return rows


def storage_markdown(res, rows):
    if not rows:
        return []
    crcs = list(rows[0]["siw2"])
    out = ["### Storage (fio; MiB/s: higher is better, microseconds: lower "
           "is better)", "",
           "NFSv4.2 (nfsd exporting a tmpfs, mounted with proto=rdma over "
           "siw2 or proto=tcp), NVMe-oF (the kernel's nvmet with a "
           "namespace on a tmpfs file behind an nvmet-rdma or an nvmet-tcp "
           "port, the kernel's nvme-rdma or nvme-tcp host connected to it) "
           "and iSCSI (a LIO ramdisk LUN behind one portal, logged into "
           "through the iser interface over siw2 or through tcp), on the "
           "same veth path, both ends in the guest; each protocol's "
           "transports share one backing store. fio with libaio and "
           "O_DIRECT on a %d MiB file (NFS), namespace (NVMe-oF) or LUN "
           "(iSCSI), %s s per job: sequential write and read of 1 MiB "
           "at queue depth 16, random read of 4 KiB at queue depth 1 "
           "(fio's total latency, submission to completion: median and 99th "
           "percentile). Ratio "
           "columns: siw2's median over TCP's; the goal is RDMA at least as "
           "fast as TCP, that is at least 1 for MiB/s and at most 1 for "
           "latency." % (res.meta.get("storage_mib", 128),
                         res.meta.get("storage_seconds", "?")), ""]
    cols = ["protocol", "workload"]
    cols += ["over siw2, CRC %s" % c for c in crcs] + ["over TCP"]
    cols += ["siw2 CRC %s / TCP" % c for c in crcs]
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "|".join("---" for _ in cols) + "|")
    for r in rows:
        cells = [r["protocol"], r["workload"]]
        cells += [cell(r["siw2"][c]) for c in crcs] + [cell(r["tcp"])]
        cells += [ratio_cell(r["ratio"][c]) for c in crcs]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def targets(res):
    """The performance issue's targets, for each siw2 system."""
    out = []
    tcp = [s for s in res.others if res.kind.get(s) == "tcp"]
    siw = [s for s in res.others if s == "siw"]
    rxe = [s for s in res.others if s == "rxe"]

    def add(ours, what, value, op, goal):
        if value is None:
            verdict = "not measured"
        elif (op == ">=" and value >= goal) or (op == "<=" and value <= goal) \
                or (op == "<" and value < goal):
            verdict = "met"
        else:
            verdict = "MISSED"
        out.append({"system": ours, "target": what, "value": value,
                    "op": op, "goal": goal, "verdict": verdict})

    for o in res.ours:
        if not ran_per_system(res, o):
            continue
        for test in BW_TESTS:
            for t in tcp:
                add(o, "%s 64 KiB CRC off / TCP" % test,
                    res.ratio(o, t, "off", test, 65536, "bw_gbps"), ">=", 0.9)
            for t in siw:
                add(o, "%s 64 KiB CRC off / upstream siw" % test,
                    res.ratio(o, t, "off", test, 65536, "bw_gbps"), ">=", 1.5)
            for t in tcp:
                add(o, "%s 64 KiB CRC on / TCP" % test,
                    res.ratio(o, t, "on", test, 65536, "bw_gbps"), ">=", 0.6)
        for t in siw:
            add(o, "ib_send_lat 64 B typical / upstream siw",
                res.ratio(o, t, "off", "ib_send_lat", 64, "lat_typical_us"),
                "<=", 0.8)
        for t in siw + rxe:
            for test in BW_TESTS:
                for crc in ("off", "on"):
                    if t == "rxe" and crc == "on":
                        continue
                    add(o, "CPU s/GiB %s 64 KiB CRC %s / %s" % (test, crc, t),
                        res.ratio(o, t, crc, test, 65536, "cpu_s_per_gib"),
                        "<", 1.0)
        qps = int(res.meta.get("qps", 1000))
        st = res.stats(o, "off", "qp_scale", qps, "established")
        add(o, "%d QPs connect (established)" % qps,
            st["median"] if st else None, ">=", qps)
    # Storage: RDMA at least as fast as TCP (throughput, typical latency).
    for r in storage_rows(res):
        if r["metric"] == "lat_p99_us":
            continue
        for crc, v in r["ratio"].items():
            add("siw2", "%s: %s, CRC %s / TCP" % (r["protocol"],
                                                 r["workload"], crc), v,
                ">=" if HIGHER_BETTER.get(r["metric"]) else "<=", 1.0)
    return out


def chart(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    bw_sizes = sizes_of(res, "bw_sizes", [64, 4096, 65536, 1048576])
    if not any(k[4] == "bw_gbps" for k in res.values):
        return False
    fig, axes = plt.subplots(1, len(BW_TESTS), figsize=(12, 4.2), dpi=72,
                             sharey=True)
    colours = ["tab:red", "tab:blue", "tab:green", "tab:gray", "tab:purple",
               "tab:orange", "tab:brown"]
    for ax, test in zip(axes, BW_TESTS):
        for i, s in enumerate(res.systems):
            crcs = res.crcs.get(s, ["-"])
            for crc in crcs:
                xs, ys, lo, hi = [], [], [], []
                for size in bw_sizes:
                    st = res.stats(s, crc if crc != "-" else "off", test,
                                   size, "bw_gbps")
                    if st:
                        xs.append(size)
                        ys.append(st["median"])
                        lo.append(st["median"] - st["min"])
                        hi.append(st["max"] - st["median"])
                if not xs:
                    continue
                label = s if crc == "-" else "%s CRC %s" % (s, crc)
                if res.kind.get(s) == "tcp":
                    label = "%s (iperf3)" % s
                ax.errorbar(xs, ys, yerr=[lo, hi], label=label,
                            color=colours[i % len(colours)],
                            linestyle="--" if crc == "on" else "-",
                            marker="o", markersize=3, capsize=2, linewidth=1.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(bw_sizes)
        ax.set_xticklabels([size_name(s) for s in bw_sizes], fontsize=8)
        ax.set_title(test, fontsize=10)
        ax.set_xlabel("message size", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("Gb/s (median, bars: min-max)", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7),
               fontsize=8, frameon=False)
    fig.suptitle("Bandwidth by message size, %s, %s guest (ratios within "
                 "one run are what counts)" % (res.meta.get("kernel", "?"),
                                                res.host.get("accel", "qemu")),
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path)
    plt.close(fig)
    return True


def markdown(res, tables, tgts, have_chart):
    m = res.meta
    out = ["# siw2 benchmark", ""]
    out.append("Run %s, guest kernel %s, %s CPUs, %s MiB, %s; topology %s, "
               "receive work on the %s vCPU; "
               "%s repetition(s)%s; guest time %s s." % (
                   m.get("date", "?"), m.get("kernel", "?"), m.get("cpus", "?"),
                   int(m.get("mem_kib", 0)) // 1024, res.host.get("accel", "qemu"),
                   m.get("topology", "?"), m.get("rx_cpu", "sender"),
                   m.get("reps", "?"),
                   " (quick mode)" if m.get("quick") else "",
                   res.done.get("guest_seconds", "?")))
    if res.host.get("command"):
        out += ["", "Command: `%s`" % res.host["command"]]
    if res.host.get("loadavg"):
        out += ["", "Host load average when the run started: %s (other guests "
                "on the same cores make figures noisy)." % res.host["loadavg"]]
    out += ["", "Systems:", ""]
    for s in m.get("systems", []):
        out.append("- **%s**: %s (CRC modes: %s)" % (s["name"], s["description"],
                                                    s["crc"]))
    out += ["", "Cells are the median over the repetitions, with the range "
            "[min-max] when there was more than one. Ratio columns divide a "
            "siw2 system's median by another system's; a system without CRC "
            "modes (rxe, tcp) is compared with both. Absolute figures of a "
            "TCG guest mean little: compare within one run.", ""]
    if have_chart:
        out += ["![bandwidth by message size](chart.png)", ""]
    for t, first in tables:
        if t.measured:
            out += t.markdown(first)
    out += storage_markdown(res, storage_rows(res))
    if tgts:
        out += ["### Targets of the performance issue", "",
                "| system | target | value | goal | verdict |",
                "|---|---|---|---|---|"]
        for g in tgts:
            out.append("| %s | %s | %s | %s %s | %s |" % (
                g["system"], g["target"], fmt(g["value"]), g["op"],
                fmt(g["goal"]), g["verdict"]))
        out.append("")
    if res.details:
        out += ["### System calls per 1000 iterations, by call", ""]
        for k in sorted(res.details):
            out.append("- %s CRC %s %s %s: %s" % (k[0], k[1], k[2],
                                                  size_name(k[3]),
                                                  res.details[k]))
        out.append("")
    if res.errors:
        out += ["### Runs without a figure (%d)" % len(res.errors), ""]
        for e in res.errors:
            out.append("- %s CRC %s %s %s rep %s: %s" % (
                e["system"], e["crc"], e["test"], size_name(e["size"]),
                e["rep"], e["error"].replace("|", "/")))
        out.append("")
    return "\n".join(out)


def summary(res, tables, tgts):
    """The ratios, for the terminal."""
    lines = []
    for o in res.ours:
        if not ran_per_system(res, o):
            continue
        for t in res.systems:
            if t == o:
                continue
            lines.append("%s / %s:" % (o, t))
            for test in BW_TESTS:
                for crc in ("off", "on"):
                    rs = []
                    for size in sizes_of(res, "bw_sizes", []):
                        r = res.ratio(o, t, crc, test, size, "bw_gbps")
                        rs.append("%s %s" % (size_name(size), ratio_cell(r)))
                    lines.append("  %-12s CRC %-3s bandwidth  %s" % (
                        test, crc, ", ".join(rs)))
            for test in LAT_TESTS:
                rs = []
                for size in sizes_of(res, "lat_sizes", []):
                    for metric, n in (("lat_typical_us", "typ"),
                                      ("lat_p99_us", "p99")):
                        rs.append("%s %s %s" % (size_name(size), n, ratio_cell(
                            res.ratio(o, t, "off", test, size, metric))))
                lines.append("  %-12s         latency    %s" % (test,
                                                             ", ".join(rs)))
            rs = []
            for test in BW_TESTS:
                for crc in ("off", "on"):
                    rs.append("%s/%s %s" % (test[3:-3], crc, ratio_cell(
                        res.ratio(o, t, crc, test, 65536, "cpu_s_per_gib"))))
            lines.append("  CPU s/GiB at 64 KiB        %s" % ", ".join(rs))
            qps = int(res.meta.get("qps", 1000))
            lines.append("  scale: connect time %s, memory per QP %s" % (
                ratio_cell(res.ratio(o, t, "off", "qp_scale", qps,
                                     "connect_s")),
                ratio_cell(res.ratio(o, t, "off", "qp_scale", qps,
                                     "mem_kib_per_qp"))))
            rs = ["%s %s" % (test, ratio_cell(res.ratio(
                o, t, "off", test, size, "syscalls_per_1k_wr")))
                for test, size in SYSCALL_TESTS]
            lines.append("  syscalls per 1000 WRs      %s" % ", ".join(rs))
    srows = storage_rows(res)
    if srows:
        lines.append("storage, siw2 / tcp (MiB/s: above 1 is better; "
                     "latency: below 1):")
        for r in srows:
            lines.append("  %-20s %-29s siw2 %s, tcp %s; %s" % (
                r["protocol"], r["workload"],
                ", ".join("CRC %s %s" % (c, cell(st))
                          for c, st in r["siw2"].items()),
                cell(r["tcp"]),
                ", ".join("CRC %s %s" % (c, ratio_cell(v))
                          for c, v in r["ratio"].items())))
    if tgts:
        lines.append("targets:")
        for g in tgts:
            lines.append("  %-7s %-6s %s: %s (goal %s %s)" % (
                g["verdict"], g["system"], g["target"], fmt(g["value"]),
                g["op"], fmt(g["goal"])))
    lines.append("%d runs without a figure (listed in bench.md)" %
                 len(res.errors))
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    outdir = sys.argv[1]
    res = Results(outdir)
    tables = build_tables(res)
    tgts = targets(res)
    have_chart = chart(res, os.path.join(outdir, "chart.png"))
    if not have_chart:
        sys.stderr.write("report: no chart.png (no bandwidth figures, or "
                         "no python3-matplotlib)\n")
    figures = []
    for key, vals in sorted(res.values.items()):
        st = res.stats(key[0], key[1], key[2], key[3], key[4])
        if res.kind.get(key[0]) == "tcp":
            # stats() maps RDMA tests to TCP's; use the raw values here.
            med = statistics.median(vals)
            st = {"median": med, "min": min(vals), "max": max(vals),
                  "n": len(vals), "values": vals,
                  "spread_pct": 100.0 * (max(vals) - min(vals)) / med
                  if med else 0.0}
        figures.append(dict(zip(("system", "crc", "test", "size", "metric"),
                                key), **st))
    ratios = []
    for o in res.ours:
        for t in res.systems:
            if t == o:
                continue
            for key in sorted({k[1:] for k in res.values if k[0] == o}):
                crc, test, size, metric = key
                r = res.ratio(o, t, crc, test, size, metric)
                if r is not None:
                    ratios.append({"system": o, "other": t, "crc": crc,
                                   "test": test, "size": size,
                                   "metric": metric, "ratio": r})
    with open(os.path.join(outdir, "bench.json"), "w") as f:
        json.dump({"meta": res.meta, "host": res.host, "done": res.done,
                   "figures": figures, "ratios": ratios, "targets": tgts,
                   "failures": res.errors, "storage": storage_rows(res),
                   "syscalls_detail": [dict(zip(("system", "crc", "test",
                                                 "size"), k), detail=v)
                                       for k, v in sorted(
                                           res.details.items())]},
                  f, indent=1)
    with open(os.path.join(outdir, "bench.md"), "w") as f:
        f.write(markdown(res, tables, tgts, have_chart))
    print(summary(res, tables, tgts))
    return 0


if __name__ == "__main__":
    sys.exit(main())

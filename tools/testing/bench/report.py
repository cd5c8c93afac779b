#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turns a results directory of siw2's benchmark into its report.

    report.py RESULTS_DIR
    report.py --matrix DIR

The first reads RESULTS_DIR/raw.jsonl and meta.json (written by
tools/testing/bench/run in the guest) and host.json (scripts/bench), and
writes RESULTS_DIR/bench.json, bench.md and chart.png (when matplotlib is
installed). Prints every figure of a siw2 system as a ratio to the same
figure of each other system, each side with its CRC setting.

The second combines the runs of a matrix (scripts/bench --kernels ...
--topologies ...): one results directory per kernel and path under DIR,
named in DIR/matrix.json (else every directory below DIR with results).
It writes DIR/bench.md and bench.json: every figure per kernel and path,
siw2's ratios per combination, and a headline of the worst ratio over all
of them, with where it occurs.

Figures are medians over the repetitions; the spread is the range
(min-max). TCG figures mean little on their own: compare within one run.
"""

import collections
import json
import math
import os
import re
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

# The CRC setting a user gets without asking, for systems that have one:
# siw2 asks for MPA CRCs (module parameter mpa_crc, Y by default, as RFC
# 5044 wants), so do its variants and "base"; upstream siw does not (its
# mpa_crc_required is a constant, false, and no module parameter changes
# it: CRC on is scripts/upstream-siw's "crc" build).
DEFAULT_CRC = {"siw": "off"}
DEFAULT_CRC_OURS = "on"

# What stands in for a CRC setting in a system without one ("-").
NO_CRC = {"rxe": "ICRC", "tcp": "checksum"}

# One comparison: siw2 system OURS with CRC setting OCRC over OTHER with
# OTHERCRC ("-": no setting). KIND is "like for like" (the same setting),
# "defaults" (each side's default; only against a system with a setting),
# both, or "".
Comparison = collections.namedtuple("Comparison",
                                    "ours ocrc other othercrc kind")


def default_crc(system, crcs):
    """SYSTEM's default CRC setting, given its modes CRCS ("-" if none)."""
    if not crcs or crcs == ["-"]:
        return "-"
    d = DEFAULT_CRC.get(system, DEFAULT_CRC_OURS)
    return d if d in crcs else crcs[0]


def side(system, crc, crcs, kind="rdma"):
    """SYSTEM with CRC setting CRC, as every comparison names a side."""
    if crc == "-":
        if kind == "tcp":
            return "%s (%s)" % (system, NO_CRC["tcp"])
        return "%s (%s)" % (system, NO_CRC.get(system, "no CRC setting"))
    return "%s CRC %s%s" % (system, crc,
                            " (default)" if crc == default_crc(system, crcs)
                            else "")


def comparisons(ours, systems, crcs, first_only=False):
    """Each siw2 system OURS against every other system of SYSTEMS: like
    for like in every CRC setting both have (a system without one is
    compared with each of ours), and each side's default against the
    other's. FIRST_ONLY: only each system's first mode (the scale and
    system call sections run in it alone)."""
    out = []

    def modes(s):
        m = crcs.get(s) or ["-"]
        return m[:1] if first_only else m

    for o in ours:
        for t in systems:
            if t == o:
                continue
            pairs = []
            for c in modes(o):
                if modes(t) == ["-"]:
                    pairs.append((c, "-"))
                elif c in modes(t):
                    pairs.append((c, c))
            d = (default_crc(o, crcs.get(o)), default_crc(t, crcs.get(t)))
            if not first_only and d not in pairs:
                pairs.append(d)
            for oc, tc in pairs:
                kinds = []
                if oc == tc:
                    kinds.append("like for like")
                if (oc, tc) == d and tc != "-":
                    kinds.append("defaults")
                out.append(Comparison(o, oc, t, tc, ", ".join(kinds)))
    return out


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
        m = self.meta.get("topology", "?")
        k = re.match(r"\d+\.\d+", self.meta.get("kernel", ""))
        # "6.12 loop": where a figure was taken, in a matrix's reports.
        self.where = "%s %s" % (k.group(0) if k else
                                self.meta.get("kernel", "?"), m)

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

    def ratio(self, ours, other, crc, test, size, metric, othercrc=None):
        """OURS's median over OTHER's, OURS with CRC setting CRC, OTHER
        with OTHERCRC (default: the same)."""
        a = self.stats(ours, crc, test, size, metric)
        b = self.stats(other, crc if othercrc is None else othercrc, test,
                       size, metric)
        if not a or not b or not b["median"]:
            return None
        return a["median"] / b["median"]

    def cmp_ratio(self, c, test, size, metric):
        return self.ratio(c.ours, c.other, c.ocrc, test, size, metric,
                          c.othercrc)

    def modes(self, system):
        return self.crcs.get(system) or ["-"]

    def series(self, first_only=False):
        """The value columns: every system in each of its CRC modes."""
        return [(s, c) for s in self.systems
                for c in (self.modes(s)[:1] if first_only
                          else self.modes(s))]

    def side(self, system, crc):
        return side(system, crc, self.crcs.get(system),
                    self.kind.get(system, "rdma"))

    def comparisons(self, first_only=False):
        return comparisons(self.ours, self.systems, self.crcs, first_only)

    def cmp_label(self, c):
        """OURS CRC x / OTHER CRC y [kind]."""
        return "%s / %s%s" % (self.side(c.ours, c.ocrc),
                              self.side(c.other, c.othercrc),
                              " [%s]" % c.kind if c.kind else "")


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
    """One section's table of one run: a row per test and size (and
    figure), a column per system in each CRC mode, then siw2's ratios,
    each naming both sides' CRC settings. FIRST_ONLY: a section that runs
    in each system's first CRC mode alone."""

    def __init__(self, res, title, unit, note, first_only=False):
        self.res = res
        self.title = title
        self.unit = unit
        self.note = note
        self.series = res.series(first_only)
        self.cmps = res.comparisons(first_only)
        self.rows = []
        self.measured = False

    def header(self, first):
        res = self.res
        return (first + [res.side(s, c) for s, c in self.series] +
                [res.cmp_label(c) for c in self.cmps])

    def add(self, label, test, size, metric):
        res = self.res
        row = list(label)
        for s, c in self.series:
            st = res.stats(s, c, test, size, metric)
            self.measured = self.measured or st is not None
            row.append(cell(st))
        for c in self.cmps:
            row.append(ratio_cell(res.cmp_ratio(c, test, size, metric)))
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


CRC_NOTE = ("Each column names its system's CRC setting: siw2's module "
            "parameter mpa_crc, upstream siw's build (CRC on is "
            "scripts/upstream-siw's crc build; upstream siw has no "
            "parameter), \"(default)\" marking what a user gets without "
            "asking (siw2: on, siw: off); rxe always computes its ICRC and "
            "TCP has only its checksum. Ratio columns: siw2's median over "
            "the other's, \"like for like\" with the same CRC setting on "
            "both sides, \"defaults\" each side with its default.")


def sections(bw_sizes, lat_sizes, qps, topology=None):
    """The tables of a run, or of a matrix's runs: per section its title,
    unit, note, the names of its label columns, whether it runs in each
    system's first CRC mode alone, and its rows (label, test, size,
    metric). topology: the one run's path, None for a matrix."""
    out = []

    def section(key, title, unit, note, first, rows, first_only=False):
        out.append({"key": key, "title": title, "unit": unit, "note": note,
                    "first": first, "first_only": first_only, "rows": rows})

    section("bw", "Bandwidth", "Gb/s, higher is better",
            "One QP, perftest -R (TCP: iperf3, one stream, writes of the "
            "message size). " + CRC_NOTE, ["test", "size"],
            [([test, size_name(size)], test, size, "bw_gbps")
             for test in BW_TESTS for size in bw_sizes])
    section("lat", "Latency", "microseconds, lower is better",
            "perftest -R in each CRC mode: ib_write_lat and ib_send_lat "
            "report half the round trip, ib_read_lat the whole one. TCP: "
            "tcp_pp ping-pong, polling like perftest (half the round "
            "trip) for write/send, a 64 B request answered with the size "
            "(whole round trip) for read. " + CRC_NOTE,
            ["test", "size", "figure"],
            [([test, size_name(size), name], test, size, metric)
             for test in LAT_TESTS for size in lat_sizes
             for metric, name in (("lat_typical_us", "typical"),
                                  ("lat_p99_us", "99%"))])
    section("bw", "CPU cost", "guest CPU seconds (system + softirq) per GiB "
            "moved, lower is better",
            ("On the hosts path only the client's host is counted: "
             "the cost of one end, mostly sending (and receiving Read "
             "Responses); " if topology == "hosts" else
             "Where both ends run in one guest (not on the hosts path, "
             "where only the client's host counts) this is the cost of "
             "sending and receiving; " if topology is None else
             "Both ends run in the guest, so this is the cost of sending "
             "and receiving; ") +
            "from /proc/stat around each bandwidth run "
            "(connection setup included). perftest's polling is user time "
            "and not counted.", ["test", "size"],
            [([test, size_name(size)], test, size, "cpu_s_per_gib")
             for test in BW_TESTS for size in bw_sizes if size >= 4096])
    section("scale", "Scale", "lower is better",
            "qp_scale: %d RC QPs (64-entry send and receive queues, one "
            "shared CQ) connected through the RDMA CM, 16 connections "
            "under way at a time (TCP: %d connect() calls), in each "
            "system's first CRC mode. "
            "Memory per idle connected QP: what the guest's Slab, "
            "VmallocUsed, PageTables, KernelStack, Percpu and AnonPages "
            "(/proc/meminfo) grew by between %d and %d connections, "
            "divided by the QPs of the ends it holds (both; on the hosts "
            "path the client's; TCP: per socket); the drop "
            "of MemFree, page cache included, for comparison."
            % (qps, qps, qps // 10, qps), ["figure"],
            [([name], "qp_scale", qps, metric) for metric, name in (
                ("connect_s", "time to connect %d (s)" % qps),
                ("mem_kib_per_qp", "memory per QP (KiB)"),
                ("slab_kib_per_qp", "of which slab (KiB)"),
                ("vmalloc_kib_per_qp", "of which vmalloc (KiB)"),
                ("anon_kib_per_qp", "of which process memory (KiB)"),
                ("memfree_kib_per_qp", "MemFree drop (KiB)"))],
            first_only=True)
    section("syscalls", "System calls", "per 1000 work requests on the "
            "client, lower is better",
            "strace -c -f on the client, in separate short runs in each "
            "system's first CRC mode: the "
            "difference between N and 3N iterations, per 1000. One "
            "iteration posts one Send or RDMA Write work request (and for "
            "ib_send_lat one receive). TCP: tcp_pp ping-pong with blocking "
            "reads, per 1000 round trips.", ["test", "size"],
            [([test, size_name(size)], test, size, "syscalls_per_1k_wr")
             for test, size in SYSCALL_TESTS], first_only=True)
    return out


def build_tables(res):
    tables = []
    for sec in sections(sizes_of(res, "bw_sizes", [64, 4096, 65536, 1048576]),
                        sizes_of(res, "lat_sizes", [64, 4096]),
                        int(res.meta.get("qps", 1000)),
                        res.meta.get("topology")):
        t = Table(res, sec["title"], sec["unit"], sec["note"],
                  sec["first_only"])
        for label, test, size, metric in sec["rows"]:
            if has_run(res, sec["key"], test):
                t.add(label, test, size, metric)
        tables.append((t, sec["first"]))
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


def verdict(value, op, goal):
    if value is None:
        return "not measured"
    if (op == ">=" and value >= goal) or (op == "<=" and value <= goal) \
            or (op == "<" and value < goal):
        return "met"
    return "MISSED"


def targets(res):
    """Issue 46's targets for each siw2 system (a matrix's report holds
    each to every kernel and path), and issue 45's for storage."""
    out = []
    tcp = [s for s in res.others if res.kind.get(s) == "tcp"]
    siw = [s for s in res.others if s == "siw"]
    rxe = [s for s in res.others if s == "rxe"]

    def add(ours, what, value, op, goal):
        out.append({"system": ours, "target": what, "value": value,
                    "op": op, "goal": goal,
                    "verdict": verdict(value, op, goal)})

    def bw(test, c):
        return "%s 64 KiB, %s / %s" % (test, res.side(c.ours, c.ocrc),
                                       res.side(c.other, c.othercrc))

    for o in res.ours:
        if not ran_per_system(res, o):
            continue
        cmps = [c for c in res.comparisons() if c.ours == o]
        off_siw = [c for c in cmps if c.other in siw and c.ocrc == "off"
                   and c.othercrc == "off"]
        def_siw = [c for c in cmps if c.other in siw
                   and "defaults" in c.kind]
        off_tcp = [c for c in cmps if c.other in tcp and c.ocrc == "off"]
        on_tcp = [c for c in cmps if c.other in tcp and c.ocrc == "on"]
        # Like for like, CRC off.
        for test in BW_TESTS:
            for c in off_siw:
                add(o, bw(test, c), res.cmp_ratio(c, test, 65536, "bw_gbps"),
                    ">=", 1.2)
            for c in off_tcp:
                add(o, bw(test, c), res.cmp_ratio(c, test, 65536, "bw_gbps"),
                    ">=", 0.9)
        for test in ("ib_send_lat", "ib_write_lat"):
            for c in off_siw:
                add(o, "%s 64 B typical, %s / %s" % (
                    test, res.side(o, c.ocrc), res.side(c.other, c.othercrc)),
                    res.cmp_ratio(c, test, 64, "lat_typical_us"), "<=", 0.9)
        # CRC on against TCP; defaults against defaults.
        for test in BW_TESTS:
            for c in on_tcp:
                add(o, bw(test, c), res.cmp_ratio(c, test, 65536, "bw_gbps"),
                    ">=", 0.6)
            for c in def_siw:
                add(o, bw(test, c), res.cmp_ratio(c, test, 65536, "bw_gbps"),
                    ">=", 1.0)
        # CPU cost, like for like (an earlier issue's).
        for c in cmps:
            if (c.other in siw and c.ocrc == c.othercrc) or \
                    (c.other in rxe and c.ocrc == "off"):
                for test in BW_TESTS:
                    add(o, "CPU s/GiB %s 64 KiB, %s / %s" % (
                        test, res.side(o, c.ocrc),
                        res.side(c.other, c.othercrc)),
                        res.cmp_ratio(c, test, 65536, "cpu_s_per_gib"),
                        "<", 1.0)
        first = res.modes(o)[0]
        st = res.stats(o, first, "ib_write_bw", 64, "syscalls_per_1k_wr")
        add(o, "ib_write_bw 64 B, system calls per work request",
            st["median"] / 1000 if st else None, "<=", 0.01)
        qps = int(res.meta.get("qps", 1000))
        for t in siw:
            add(o, "memory per idle connected QP, %s / %s" % (
                res.side(o, first), res.side(t, res.modes(t)[0])),
                res.ratio(o, t, first, "qp_scale", qps, "mem_kib_per_qp",
                          res.modes(t)[0]), "<=", 1.0)
        st = res.stats(o, first, "qp_scale", qps, "established")
        add(o, "%d QPs connect, established (issue 46 asks 10000: "
            "--qps 10000)" % qps, st["median"] if st else None, ">=", qps)
    # Storage (issue 45): RDMA at least as fast as TCP (throughput,
    # typical latency).
    for r in storage_rows(res):
        if r["metric"] == "lat_p99_us":
            continue
        for crc, v in r["ratio"].items():
            add("siw2", "%s: %s, %s / %s" % (
                r["protocol"], r["workload"], res.side("siw2", crc),
                side("tcp", "-", None, "tcp")), v,
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
                label = res.side(s, crc)
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


def has_run(res, section, test):
    """Whether RES's run was asked for SECTION and TEST (--sections,
    --tests; TCP's counterparts always run)."""
    secs = res.meta.get("sections", "all")
    if secs != "all" and section not in secs.split(","):
        return False
    tests = res.meta.get("tests", "all")
    return tests == "all" or test not in BW_TESTS + LAT_TESTS or \
        test in tests.split(",")


# The headline: per comparison, figure and size, siw2's worst ratio over
# the tests and, in a matrix, over kernels and paths.
HEADLINE = [("bandwidth", "bw", BW_TESTS, "bw_gbps", "bw_sizes"),
            ("latency, typical", "lat", LAT_TESTS, "lat_typical_us",
             "lat_sizes")]


def unique(items):
    out = []
    for i in items:
        if i not in out:
            out.append(i)
    return out


def headline(runs):
    """RUNS: the Results of one run or of a matrix's. One entry per
    comparison, figure and size: the worst ratio (the smallest for
    bandwidth, the largest for latency), the test and the kernel and
    path where it occurs, and how many of the ratios it was asked for
    were measured."""
    out = []
    cmps = unique(c for r in runs for c in r.comparisons())
    for c in cmps:
        for name, sec, tests, metric, key in HEADLINE:
            sizes = sorted({s for r in runs for s in sizes_of(r, key, [])})
            for size in sizes:
                found, asked = [], 0
                for r in runs:
                    if c.ours not in r.systems or c.other not in r.systems \
                            or size not in sizes_of(r, key, []):
                        continue
                    for test in tests:
                        if not has_run(r, sec, test):
                            continue
                        asked += 1
                        v = r.cmp_ratio(c, test, size, metric)
                        if v is not None:
                            found.append((v, test, r.where))
                if not asked:
                    continue
                pick = min if HIGHER_BETTER.get(metric) else max
                w = pick(found, key=lambda f: f[0]) if found else None
                out.append({"comparison": c, "figure": name, "size": size,
                            "metric": metric,
                            "worst": w[0] if w else None,
                            "test": w[1] if w else None,
                            "where": w[2] if w else None,
                            "measured": len(found), "asked": asked})
    return out


def headline_cell(h, matrix):
    if h["worst"] is None:
        return "- (none of %d measured)" % h["asked"]
    where = h["test"] + (", " + h["where"] if matrix else "")
    more = "" if h["measured"] == h["asked"] else \
        "; %d of %d measured" % (h["measured"], h["asked"])
    return "%s (%s%s)" % (ratio_cell(h["worst"]), where, more)


def headline_markdown(res, heads, matrix):
    """The headline as a table: a row per comparison, a column per figure
    and size."""
    if not heads:
        return []
    cols = unique((h["figure"], h["size"]) for h in heads)
    rows = unique(h["comparison"] for h in heads)
    by = {(h["comparison"], h["figure"], h["size"]): h for h in heads}
    over = "the tests, kernels and paths" if matrix else "the tests"
    out = ["%s Headline: siw2's worst ratio over %s" % (
        "##" if matrix else "###", over), "",
           "Per comparison, figure and size the worst of siw2's ratios "
           "over %s (bandwidth: the smallest, above 1 is siw2 ahead; "
           "latency: the largest, below 1 is siw2 ahead), with the test%s "
           "where it occurs. Each side is named with its CRC setting; "
           "\"like for like\": the same setting on both sides; "
           "\"defaults\": each side's default (siw2 asks for CRCs, "
           "upstream siw does not)." % (over, " and the kernel and path"
                                        if matrix else ""), ""]
    hdr = ["siw2 against"] + ["%s %s" % (f, size_name(sz)) for f, sz in cols]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "|".join("---" for _ in hdr) + "|")
    for c in rows:
        cells = [res.cmp_label(c)]
        for f, sz in cols:
            h = by.get((c, f, sz))
            cells.append(headline_cell(h, matrix) if h else "")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def headline_lines(res, heads, matrix):
    """The headline, for the terminal."""
    lines = []
    over = "tests, kernels and paths" if matrix else "tests"
    last = None
    for h in heads:
        if h["comparison"] != last:
            last = h["comparison"]
            lines.append("worst over %s, %s:" % (over, res.cmp_label(last)))
        lines.append("  %-17s %-7s %s" % (h["figure"], size_name(h["size"]),
                                          headline_cell(h, matrix)))
    return lines


def markdown(res, tables, tgts, have_chart):
    m = res.meta
    out = ["# siw2 benchmark", ""]
    out.append("Run %s, guest kernel %s, %s CPUs, %s MiB, %s; topology %s, "
               "MTU %s, receive work on the %s vCPU; "
               "%s repetition(s)%s; guest time %s s." % (
                   m.get("date", "?"), m.get("kernel", "?"), m.get("cpus", "?"),
                   int(m.get("mem_kib", 0)) // 1024, res.host.get("accel", "qemu"),
                   m.get("topology", "?"), m.get("mtu") or "?",
                   m.get("rx_cpu", "sender"),
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
        out.append("- **%s**: %s (CRC modes: %s; default: %s)" % (
            s["name"], s["description"], s["crc"],
            default_crc(s["name"], res.crcs.get(s["name"]))))
    out += ["", "Cells are the median over the repetitions, with the range "
            "[min-max] when there was more than one. Ratio columns divide a "
            "siw2 system's median by another system's, each side named with "
            "its CRC setting; a system without CRC modes (rxe, tcp) is "
            "compared with each of siw2's. Absolute figures of a "
            "TCG guest mean little: compare within one run.", ""]
    out += headline_markdown(res, headline([res]), False)
    if have_chart:
        out += ["![bandwidth by message size](chart.png)", ""]
    for t, first in tables:
        if t.measured:
            out += t.markdown(first)
    out += storage_markdown(res, storage_rows(res))
    out += targets_markdown(tgts, False)
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


def targets_markdown(tgts, matrix):
    if not tgts:
        return []
    out = ["%s Targets of the performance issues" % ("##" if matrix
                                                    else "###"), ""]
    if matrix:
        out += ["Issue 46's targets (and issue 45's for storage): a target "
                "is met only when it holds on every kernel and path; the "
                "value is the worst of them, with where it occurs.", ""]
    out += ["| system | target | value | goal | verdict |",
            "|---|---|---|---|---|"]
    for g in tgts:
        value = fmt(g["value"])
        if matrix and g.get("where"):
            value += " (%s)" % g["where"]
        out.append("| %s | %s | %s | %s %s | %s |" % (
            g["system"], g["target"], value, g["op"], fmt(g["goal"]),
            g["verdict"]))
    out.append("")
    return out


def summary(res, tgts):
    """The ratios, for the terminal."""
    lines = []
    for c in res.comparisons():
        if not ran_per_system(res, c.ours):
            continue
        lines.append("%s:" % res.cmp_label(c))
        bw = [t for t in BW_TESTS if has_run(res, "bw", t)]
        for test in bw:
            rs = ["%s %s" % (size_name(size), ratio_cell(
                res.cmp_ratio(c, test, size, "bw_gbps")))
                for size in sizes_of(res, "bw_sizes", [])]
            lines.append("  %-12s bandwidth  %s" % (test, ", ".join(rs)))
        for test in LAT_TESTS:
            if not has_run(res, "lat", test):
                continue
            rs = ["%s %s %s" % (size_name(size), n, ratio_cell(
                res.cmp_ratio(c, test, size, metric)))
                for size in sizes_of(res, "lat_sizes", [])
                for metric, n in (("lat_typical_us", "typ"),
                                  ("lat_p99_us", "p99"))]
            lines.append("  %-12s latency    %s" % (test, ", ".join(rs)))
        if bw:
            rs = ["%s %s" % (test[3:-3], ratio_cell(
                res.cmp_ratio(c, test, 65536, "cpu_s_per_gib")))
                for test in bw]
            lines.append("  CPU s/GiB at 64 KiB      %s" % ", ".join(rs))
        if c not in res.comparisons(first_only=True):
            continue
        if has_run(res, "scale", "qp_scale"):
            qps = int(res.meta.get("qps", 1000))
            lines.append("  scale: connect time %s, memory per QP %s" % (
                ratio_cell(res.cmp_ratio(c, "qp_scale", qps, "connect_s")),
                ratio_cell(res.cmp_ratio(c, "qp_scale", qps,
                                         "mem_kib_per_qp"))))
        rs = ["%s %s" % (test, ratio_cell(res.cmp_ratio(
            c, test, size, "syscalls_per_1k_wr")))
            for test, size in SYSCALL_TESTS
            if has_run(res, "syscalls", test)]
        if rs:
            lines.append("  syscalls per 1000 WRs    %s" % ", ".join(rs))
    lines += headline_lines(res, headline([res]), False)
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
    lines += targets_lines(tgts)
    lines.append("%d runs without a figure (listed in bench.md)" %
                 len(res.errors))
    return "\n".join(lines)


def targets_lines(tgts):
    if not tgts:
        return []
    lines = ["targets:"]
    for g in tgts:
        lines.append("  %-12s %-6s %s: %s%s (goal %s %s)" % (
            g["verdict"], g["system"], g["target"], fmt(g["value"]),
            " (%s)" % g["where"] if g.get("where") else "",
            g["op"], fmt(g["goal"])))
    return lines


def cmp_json(c):
    return {"system": c.ours, "crc": c.ocrc, "other": c.other,
            "other_crc": c.othercrc, "kind": c.kind}


def headline_json(heads):
    return [dict({k: v for k, v in h.items() if k != "comparison"},
                 **cmp_json(h["comparison"])) for h in heads]


def run_report(outdir):
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
    for c in res.comparisons():
        for key in sorted({k[2:] for k in res.values
                           if k[0] == c.ours and k[1] == c.ocrc}):
            test, size, metric = key
            r = res.cmp_ratio(c, test, size, metric)
            if r is not None:
                ratios.append(dict(cmp_json(c), test=test, size=size,
                                   metric=metric, ratio=r))
    with open(os.path.join(outdir, "bench.json"), "w") as f:
        json.dump({"meta": res.meta, "host": res.host, "done": res.done,
                   "figures": figures, "ratios": ratios,
                   "headline": headline_json(headline([res])),
                   "targets": tgts,
                   "failures": res.errors, "storage": storage_rows(res),
                   "syscalls_detail": [dict(zip(("system", "crc", "test",
                                                 "size"), k), detail=v)
                                       for k, v in sorted(
                                           res.details.items())]},
                  f, indent=1)
    with open(os.path.join(outdir, "bench.md"), "w") as f:
        f.write(markdown(res, tables, tgts, have_chart))
    print(summary(res, tgts))
    return 0


# --- a matrix: one run per kernel and path -------------------------------


def matrix_runs(topdir):
    """The combinations of the matrix in TOPDIR (its matrix.json, written
    by scripts/bench; else every subdirectory with results): a list of
    (combination, Results or None), where a combination is a dict with
    kernel, topology, dir and, when the guest ran, status."""
    plan = None
    try:
        with open(os.path.join(topdir, "matrix.json")) as f:
            plan = json.load(f)
    except (OSError, ValueError):
        pass
    combos = (plan or {}).get("combinations")
    if not combos:
        combos = []
        for d in sorted(os.listdir(topdir)):
            if os.path.exists(os.path.join(topdir, d, "raw.jsonl")):
                combos.append({"dir": d})
    out = []
    for c in combos:
        d = os.path.join(topdir, c["dir"])
        res = None
        try:
            with open(os.path.join(d, "host.json")) as f:
                c.setdefault("status", json.load(f).get("vm_status"))
        except (OSError, ValueError):
            pass
        if os.path.exists(os.path.join(d, "raw.jsonl")):
            res = Results(d)
            if c.get("kernel") and c.get("topology"):
                res.where = "%s %s" % (c["kernel"], c["topology"])
        c.setdefault("kernel", res.where.split()[0] if res else "?")
        c.setdefault("topology", res.meta.get("topology", "?")
                     if res else "?")
        out.append((c, res))
    return plan or {}, out


def matrix_targets(runs, total):
    """Each target over every run (of TOTAL combinations, some perhaps
    without results): met only where met in all of them; the value is the
    worst, with where it occurs."""
    per = collections.OrderedDict()
    for r in runs:
        for g in targets(r):
            per.setdefault((g["system"], g["target"]), []).append((g, r))
    out = []
    for (system, what), gs in per.items():
        op, goal = gs[0][0]["op"], gs[0][0]["goal"]
        seen = [(g["value"], r.where) for g, r in gs
                if g["value"] is not None]
        if seen:
            pick = min if op.startswith(">") else max
            value, where = pick(seen, key=lambda v: v[0])
        else:
            value, where = None, None
        verdicts = [g["verdict"] for g, _ in gs]
        if "MISSED" in verdicts:
            v = "MISSED"
        elif not seen:
            v = "not measured"
        elif len(seen) < total:
            v = "not measured everywhere (%d of %d)" % (len(seen), total)
        else:
            v = "met"
        out.append({"system": system, "target": what, "value": value,
                    "where": where, "op": op, "goal": goal, "verdict": v,
                    "per_run": {r.where: g["value"] for g, r in gs}})
    return out


def matrix_markdown(plan, combos, runs, heads, tgts):
    ref = runs[0]
    kernels = unique(c["kernel"] for c, _ in combos)
    paths = unique(c["topology"] for c, _ in combos)
    out = ["# siw2 benchmark: %d kernel(s) x %d path(s)" % (len(kernels),
                                                           len(paths)), ""]
    if plan.get("command"):
        out += ["Command: `%s`" % plan["command"], ""]
    out += ["One guest per kernel and path, one after the other, each with "
            "its own results directory and report; this report combines "
            "them. Paths: local (a veth pair between two addresses in one "
            "namespace), loop (one address on a dummy netdev, client and "
            "server on one device, through the loopback), netns (two "
            "namespaces; siw2 and tcp only), hosts (two guests of "
            "scripts/vm-pair on one kernel, one vCPU each, joined by "
            "virtio-net over a TCP stream, without offloads, or with "
            "--tap over taps, with TSO, GSO and checksum offloads; the "
            "server on one, the client on the other).", "",
            "| kernel | path | guest kernel | results | guest time (s) | "
            "host load at start | runs without a figure |",
            "|---|---|---|---|---|---|---|"]
    for c, r in combos:
        if r is None:
            out.append("| %s | %s | - | %s/ (no results%s) | - | - | - |" % (
                c["kernel"], c["topology"], c["dir"],
                "; vm-run status %s" % c["status"]
                if c.get("status") is not None else ""))
            continue
        out.append("| %s | %s | %s | [%s/bench.md](%s/bench.md) | %s | %s "
                   "| %d |" % (c["kernel"], c["topology"],
                               r.meta.get("kernel", "?"), c["dir"], c["dir"],
                               r.done.get("guest_seconds", "?"),
                               r.host.get("loadavg", "?"), len(r.errors)))
    m = ref.meta
    out += ["", "%s repetition(s)%s, receive work on the %s vCPU. Systems: %s."
            % (m.get("reps", "?"), " (quick mode)" if m.get("quick") else "",
               m.get("rx_cpu", "sender"),
               ", ".join("%s (CRC modes: %s; default: %s)" % (
                   s, " ".join(ref.modes(s)),
                   default_crc(s, ref.crcs.get(s))) for s in ref.systems)),
            ""]
    missing = ["%s %s" % (c["kernel"], c["topology"])
               for c, r in combos if r is None]
    if missing:
        out += ["**Without results: %s.** The headline and the targets "
                "cover the other combinations only." % ", ".join(missing),
                ""]
    out += headline_markdown(ref, heads, True)
    out += targets_markdown(tgts, True)
    wheres = [r.where for r in runs]
    for sec in sections(
            sorted({s for r in runs for s in sizes_of(r, "bw_sizes", [])}),
            sorted({s for r in runs for s in sizes_of(r, "lat_sizes", [])}),
            int(m.get("qps", 1000))):
        series = unique(x for r in runs for x in r.series(sec["first_only"]))
        cmps = unique(x for r in runs
                      for x in r.comparisons(sec["first_only"]))
        fig_rows, ratio_rows = [], []
        for label, test, size, metric in sec["rows"]:
            if not any(has_run(r, sec["key"], test) for r in runs):
                continue
            for s, c in series:
                sts = [r.stats(s, c, test, size, metric)
                       if s in r.systems else None for r in runs]
                if any(sts):
                    fig_rows.append(label + [ref.side(s, c)] +
                                    [cell(st) for st in sts])
            for c in cmps:
                rs = [r.cmp_ratio(c, test, size, metric) for r in runs]
                got = [(v, w) for v, w in zip(rs, wheres) if v is not None]
                if not got:
                    continue
                pick = min if HIGHER_BETTER.get(metric) else max
                v, w = pick(got, key=lambda x: x[0])
                ratio_rows.append(label + [ref.cmp_label(c)] +
                                  [ratio_cell(x) for x in rs] +
                                  ["%s (%s)" % (ratio_cell(v), w)])
        if not fig_rows:
            continue
        out += ["## %s (%s)" % (sec["title"], sec["unit"]), "", sec["note"],
                ""]
        cols = sec["first"] + ["system"] + wheres
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        out += ["| " + " | ".join(r) + " |" for r in fig_rows]
        out.append("")
        if ratio_rows:
            out += ["### %s: siw2's ratios" % sec["title"], ""]
            cols = sec["first"] + ["siw2 against"] + wheres + ["worst"]
            out.append("| " + " | ".join(cols) + " |")
            out.append("|" + "|".join("---" for _ in cols) + "|")
            out += ["| " + " | ".join(r) + " |" for r in ratio_rows]
            out.append("")
    errs = [(r.where, e) for r in runs for e in r.errors]
    if errs:
        out += ["## Runs without a figure (%d)" % len(errs), ""]
        for w, e in errs:
            out.append("- %s: %s CRC %s %s %s rep %s: %s" % (
                w, e["system"], e["crc"], e["test"], size_name(e["size"]),
                e["rep"], e["error"].replace("|", "/")))
        out.append("")
    return "\n".join(out)


def matrix_report(topdir):
    plan, combos = matrix_runs(topdir)
    runs = [r for _, r in combos if r is not None]
    if not runs:
        sys.stderr.write("report: no results in %s\n" % topdir)
        return 1
    heads = headline(runs)
    tgts = matrix_targets(runs, len(combos))
    with open(os.path.join(topdir, "bench.md"), "w") as f:
        f.write(matrix_markdown(plan, combos, runs, heads, tgts))
    with open(os.path.join(topdir, "bench.json"), "w") as f:
        json.dump({"matrix": plan,
                   "combinations": [dict(c, where=r.where if r else None,
                                         failures=len(r.errors) if r
                                         else None) for c, r in combos],
                   "headline": headline_json(heads), "targets": tgts,
                   "ratios": [dict(cmp_json(c), where=r.where, test=test,
                                   size=size, metric=metric,
                                   ratio=r.cmp_ratio(c, test, size, metric))
                              for r in runs for c in r.comparisons()
                              for test, size, metric in sorted(
                                  {k[2:] for k in r.values
                                   if k[0] == c.ours and k[1] == c.ocrc})
                              if r.cmp_ratio(c, test, size, metric)
                              is not None]},
                  f, indent=1)
    lines = headline_lines(runs[0], heads, True)
    lines += targets_lines(tgts)
    for c, r in combos:
        lines.append("%s %s: %s" % (
            c["kernel"], c["topology"],
            "no results" if r is None else
            "%d runs without a figure (%s/bench.md)" % (len(r.errors),
                                                        c["dir"])))
    print("\n".join(lines))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--matrix":
        return matrix_report(sys.argv[2])
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    return run_report(sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())

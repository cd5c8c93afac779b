#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Checks a capture of iWARP connections with tshark's own dissectors
(iwarp_mpa, iwarp_ddp_rdmap; Debian 12's tshark 4.0), for the interop
suite:

  mpa_capture_check.py FILE --conn PORT:REV:CRC:MARKERS [--conn ...]

Each --conn names one TCP connection of the capture by its responder's
(server's) port and says what it negotiated: MPA revision 1 or 2, CRC
on|off, Markers on|off (both directions). The capture holds exactly these
connections, each from its SYN to its FIN. Checked for each:
  - one MPA Request and one Reply of that revision, the Reply not a
    reject, their C and M flags what was negotiated (RFC 5044 7.1.1);
  - tshark framed every octet of both streams: the octets after the
    Request (Reply) add up to the FPDUs it decoded in that direction,
    2 + ULPDU_Length + pad + 4 octets each, plus 4 for every Marker it
    found; an FPDU tshark could not frame leaves octets over;
  - every FPDU carries a DDP and an RDMAP header (iwarp_ddp_rdmap);
  - no malformed packet;
  - CRCs negotiated: every FPDU's CRC is reported "Good CRC32", none bad;
  - Markers negotiated: tshark found them in both directions; not
    negotiated: it found none.
For the whole capture: no expert error or warning from any protocol but
TCP (whose retransmissions on a busy host are no fault of iWARP's; a lost
segment would show in the framing), except the two below.

MPA revision 2. tshark 4.0 knows RFC 5044 (revision 1) only. On an RFC
6581 (revision 2) Request it warns "Rev field is NOT set to one" and "Res
field is NOT set to zero" (RFC 6581's Enhanced flag is a bit RFC 5044
reserves), then decodes the connection as usual: the IRD/ORD octets show
as Private Data and the peer-to-peer RTR as an ordinary zero-length Write,
Read or Send. Those two warnings are therefore allowed when a revision 2
connection is in the capture, and nothing else is; at revision 1 the
Request's reserved bits must be zero. The suite captures its CRC and
Marker runs at both revisions, so nothing rests on revision 2 alone.

Markers. tshark 4.0 locates Markers from the TCP segment, assuming one
FPDU per segment: captures with Markers need traffic that keeps FPDUs in
segments of their own (messages of one FPDU, sent one at a time, and no
GSO on the capture device).

Output: a line "capture: ok PORT ..." or "capture: FAIL PORT ..." per
connection, each problem on a "problem: PORT: ..." line before it, and
the last line "capture: ok FILE" or "capture: FAIL FILE". Exit status 0
when all is well.
"""
import argparse
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

# What tshark 4.0 says about an RFC 6581 (revision 2) Request.
REV2_WARNINGS = {
    "Rev field is NOT set to one as required by RFC 5044",
    "Res field is NOT set to zero as required by RFC 5044",
}


def pad(ulpdu_len):
    return (4 - (ulpdu_len + 2) % 4) % 4


def expert_entries(text):
    """(severity, protocol, summary) from tshark's '-z expert' tables."""
    entries = []
    severity = None
    for line in text.splitlines():
        m = re.match(r"^(Errors|Warns|Notes|Chats|Comments) \(\d+\)$", line)
        if m:
            severity = m.group(1)
            continue
        m = re.match(r"^\s+\d+\s+\S+\s+(\S+)\s+(.*\S)\s*$", line)
        if severity and m:
            entries.append((severity, m.group(1), m.group(2)))
    return entries


class Packet:
    """What the checks need of one frame."""

    def __init__(self, el):
        self.fields = {}
        self.shownames = {}
        self.malformed = False
        for f in el.iter():
            name = f.get("name", "")
            if name.startswith("_ws.malformed"):
                self.malformed = True
            if f.tag != "field":
                continue
            self.fields.setdefault(name, []).append(f.get("show", ""))
            self.shownames.setdefault(name, []).append(
                f.get("showname", ""))

    def one(self, name, default=""):
        v = self.fields.get(name)
        return v[0] if v else default

    def all(self, name):
        return self.fields.get(name, [])


def check_conn(port, want, pkts):
    """Problems of the connection whose responder port is PORT."""
    rev, crc_want, mk_want = want
    problems = []
    reqs = [p for p in pkts if p.all("iwarp_mpa.key.req")]
    reps = [p for p in pkts if p.all("iwarp_mpa.key.rep")]
    if len(reqs) != 1 or len(reps) != 1:
        return [f"{len(reqs)} MPA Requests and {len(reps)} Replies "
                "decoded, want one each"], "", 0
    req, rep = reqs[0], reps[0]
    ini, res = req.one("tcp.srcport"), rep.one("tcp.srcport")
    if res != port or rep.one("tcp.dstport") != ini:
        problems.append("the Request and Reply are not between the "
                        "initiator and this port")
    for what, p in (("Request", req), ("Reply", rep)):
        if p.one("iwarp_mpa.rev") != str(rev):
            problems.append(f"{what} revision {p.one('iwarp_mpa.rev')}, "
                            f"want {rev}")
        if rev == 1 and p.one("iwarp_mpa.res") not in ("0", "0x00", "0x0"):
            problems.append(f"revision 1 {what} with reserved bits "
                            f"{p.one('iwarp_mpa.res')}")
    if rep.one("iwarp_mpa.rej_flag") != "0":
        problems.append("the Reply rejects the connection")
    crc = "1" in (req.one("iwarp_mpa.crc_flag"), rep.one("iwarp_mpa.crc_flag"))
    if crc != (crc_want == "on"):
        problems.append(f"CRC negotiated {'on' if crc else 'off'}, "
                        f"want {crc_want}")
    # M in the Request: the responder sends Markers; in the Reply: the
    # initiator does.
    mk = {res: req.one("iwarp_mpa.marker_flag") == "1",
          ini: rep.one("iwarp_mpa.marker_flag") == "1"}

    summary = []
    nfpdu = good = bad = 0
    for who, src, setup_pkt, name in (("initiator", ini, req, "Request"),
                                      ("responder", res, rep, "Reply")):
        if mk[src] != (mk_want == "on"):
            problems.append(f"Markers from the {who}: "
                            f"{'on' if mk[src] else 'off'}, want {mk_want}")
        end = 0
        nful = nddp = nrdma = nmark = octets = 0
        for p in pkts:
            if p.one("tcp.srcport") != src:
                continue
            if p.one("tcp.len", "0") != "0":
                end = max(end, int(p.one("tcp.seq")) +
                          int(p.one("tcp.len")) - 1)
            lens = [int(v) for v in p.all("iwarp_mpa.ulpdulength")]
            nful += len(lens)
            octets += sum(2 + n + pad(n) + 4 for n in lens)
            nmark += len(p.all("iwarp_mpa.marker_fpduptr"))
            nddp += len(p.all("iwarp_ddp.last_flag"))
            nrdma += len(p.all("iwarp_rdma.opcode"))
            for s in p.shownames.get("iwarp_mpa.crc_check", []):
                good += "(Good CRC32)" in s
                bad += "(Bad CRC32" in s
        setup = 20 + int(setup_pkt.one("iwarp_mpa.pdlength", "0") or 0)
        octets += 4 * nmark
        if end - setup != octets:
            problems.append(f"{who}: {end - setup} octets after the {name}, "
                            f"tshark framed {octets} ({nful} FPDUs, "
                            f"{nmark} Markers)")
        if nddp != nful or nrdma != nful:
            problems.append(f"{who}: {nful} FPDUs but {nddp} DDP and "
                            f"{nrdma} RDMAP headers")
        if not nful:
            problems.append(f"{who}: no FPDU decoded")
        if mk[src] and end - setup > 512 and not nmark:
            problems.append(f"{who}: Markers negotiated, none decoded")
        if not mk[src] and nmark:
            problems.append(f"{who}: {nmark} Markers decoded, none "
                            "negotiated")
        nfpdu += nful
        summary.append(f"{who} {nful} FPDUs {nmark} Markers")
    if crc and (good != nfpdu or bad):
        problems.append(f"{good} good and {bad} bad CRCs for {nfpdu} FPDUs")
    if not crc and (good or bad):
        problems.append(f"CRC off, yet {good + bad} CRCs checked")
    bad_frames = [p.one("frame.number") for p in pkts if p.malformed]
    if bad_frames:
        problems.append(f"malformed frames {' '.join(bad_frames[:10])}")
    text = (f"rev {rev}, CRC {'on' if crc else 'off'} ({good} good), "
            f"Markers {mk_want}; {', '.join(summary)}")
    return problems, text, nfpdu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--conn", action="append", required=True,
                    metavar="PORT:REV:CRC:MARKERS")
    a = ap.parse_args()
    want = {}
    for c in a.conn:
        m = re.fullmatch(r"(\d+):([12]):(on|off):(on|off)", c)
        if not m:
            ap.error(f"bad --conn {c}")
        want[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))

    res = subprocess.run(["tshark", "-n", "-r", a.file, "-T", "pdml",
                          "-z", "expert"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, check=False)
    if res.returncode != 0 or "</pdml>" not in res.stdout:
        print(f"capture: FAIL {a.file}: tshark exited {res.returncode}: "
              f"{res.stderr.strip()[:500]}")
        return 1
    pdml, experts = res.stdout.split("</pdml>", 1)
    root = ET.fromstring(pdml + "</pdml>")
    conns = {}
    for el in root.iter("packet"):
        p = Packet(el)
        conns.setdefault(p.one("tcp.stream"), []).append(p)

    failed = False
    seen = set()
    for stream, pkts in sorted(conns.items()):
        ports = {p.one("tcp.srcport") for p in pkts} | \
                {p.one("tcp.dstport") for p in pkts}
        port = next((x for x in ports if x in want), None)
        if port is None:
            print(f"problem: stream {stream}: a connection between ports "
                  f"{' '.join(sorted(ports))} that no --conn names")
            failed = True
            continue
        seen.add(port)
        problems, text, _ = check_conn(port, want[port], pkts)
        for pr in problems:
            print(f"problem: {port}: {pr}")
        print(f"capture: {'FAIL' if problems else 'ok'} {port}: {text}")
        failed |= bool(problems)
    for port in sorted(set(want) - seen):
        print(f"problem: {port}: not in the capture")
        print(f"capture: FAIL {port}: not captured")
        failed = True

    rev2 = any(w[0] == 2 for w in want.values())
    for sev, proto, what in expert_entries(experts):
        # TCP's own (a retransmission, a D-SACK on a busy host) are not
        # the iWARP layers'; what they break shows in the framing above.
        if proto == "TCP" or sev not in ("Errors", "Warns"):
            continue
        if sev == "Warns" and rev2 and proto == "IWARP_MPA" and \
                what in REV2_WARNINGS:
            continue
        print(f"problem: expert {sev.lower()}: {proto}: {what}")
        failed = True
    print(f"capture: {'FAIL' if failed else 'ok'} {a.file}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

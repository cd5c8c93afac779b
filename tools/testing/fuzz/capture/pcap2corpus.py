#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turns a capture of iWARP traffic into fuzz_rx inputs (see fuzz_rx.h).

    pcap2corpus.py PCAP OUTDIR

Each direction of each TCP connection is reassembled (tshark reads the
pcap) and becomes, when it starts with an MPA frame (RFC 5044 7.1.1):

  <conn>_req_resp   FZ_MODE_CM_RESP: the initiator's Request and FPDUs,
                    for siw2 as the responder
  <conn>_rep_init   FZ_MODE_CM_INIT: the responder's Reply and FPDUs, for
                    siw2 as an initiator asking what the captured Request
                    asked (revision, peer to peer, RTR, IRD/ORD, CRC)
  <conn>_req_raw,   FZ_MODE_RAW: the FPDU stream alone, starting at its
  <conn>_rep_raw    true stream position

FPDUs are kept whole, up to MAX_FPDU_OCTETS of them per input; the
header's generator seed is 0 (receive buffers and STags always fit).
"""
import os
import struct
import subprocess
import sys

MAX_FPDU_OCTETS = 8192

FZ_MODE_CM_INIT, FZ_MODE_CM_RESP, FZ_MODE_RAW = 0, 1, 2
FZ_F_MARKERS, FZ_F_CRC, FZ_F_EXT = 0x08, 0x10, 0x20
FZ_SPLIT_MIXED = 3
FZ_CM_REV2, FZ_CM_P2P, FZ_CM_RTR_SHIFT = 0x01, 0x02, 2

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"
FLAG_M, FLAG_C = 0x80, 0x40
V2_A, V2_B = 0x8000, 0x4000   # in IRD
V2_C, V2_D = 0x8000, 0x4000   # in ORD
RTR_SEND, RTR_WRITE, RTR_READ = 0x1, 0x2, 0x4


def streams(pcap):
    """{(tcp stream, src, sport): bytes}, reassembled by sequence number."""
    out = subprocess.run(
        ["tshark", "-r", pcap, "-Y", "tcp.len > 0",
         "--disable-protocol", "iwarp_mpa",
         "-o", "tcp.desegment_tcp_streams:FALSE",
         "-T", "fields", "-e", "tcp.stream", "-e", "ip.src",
         "-e", "tcp.srcport", "-e", "tcp.seq", "-e", "tcp.payload"],
        check=True, capture_output=True, text=True).stdout
    segs = {}
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) != 5 or not f[4]:
            continue
        key = (int(f[0]), f[1], int(f[2]))
        segs.setdefault(key, []).append((int(f[3]), bytes.fromhex(f[4])))
    result = {}
    for key, lst in segs.items():
        lst.sort()
        data = bytearray()
        base = lst[0][0]
        for seq, payload in lst:
            at = seq - base
            if at > len(data):
                break           # a hole: keep what is contiguous
            data += payload[len(data) - at:]
        result[key] = bytes(data)
    return result


def frame_len(b):
    if len(b) < 20 or b[:16] not in (KEY_REQ, KEY_REP):
        return 0
    n = 20 + struct.unpack(">H", b[18:20])[0]
    return n if n <= len(b) else 0


def fpdus(b, crc, limit):
    """Whole FPDUs (no Markers) from the start of @b, at most @limit octets."""
    at = 0
    while at + 2 <= len(b):
        n = 2 + struct.unpack(">H", b[at:at + 2])[0]
        n = (n + 3) & ~3
        if crc:
            n += 4
        if at + n > len(b) or at + n > limit:
            break
        at += n
    return b[:at]


def header(mode, fl, flags, b5, b6, pos):
    return bytes([mode | fl | FZ_SPLIT_MIXED << 6, 0, 0, 0,
                  flags, b5, b6, pos])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pcap2corpus.py PCAP OUTDIR")
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    by_conn = {}
    for (conn, _src, _port), data in streams(sys.argv[1]).items():
        n = frame_len(data)
        if n:
            by_conn.setdefault(conn, {})[data[:16]] = (data[:n], data[n:])
    written = 0
    for conn in sorted(by_conn):
        d = by_conn[conn]
        if KEY_REQ not in d or KEY_REP not in d:
            continue
        req, req_rest = d[KEY_REQ]
        rep, rep_rest = d[KEY_REP]
        rev2 = req[17] == 2 and rep[17] == 2
        markers = bool(rep[16] & FLAG_M)
        crc = bool(rep[16] & FLAG_C)
        if markers:
            # The corpus cuts FPDUs without parsing Markers.
            print(f"pcap2corpus: connection {conn} has Markers, skipped")
            continue
        fl = FZ_F_EXT | (FZ_F_CRC if crc else 0)
        ird = ord_ = 0
        p2p = rtr = 0
        if rev2 and len(req) >= 24:
            ird, ord_ = struct.unpack(">HH", req[20:24])
            p2p = bool(ird & V2_A)
            rtr = ((RTR_SEND if ird & V2_B else 0) |
                   (RTR_WRITE if ord_ & V2_C else 0) |
                   (RTR_READ if ord_ & V2_D else 0))
            ird, ord_ = min(ird & 0x3fff, 0xbf), min(ord_ & 0x3fff, 0xbf)
        cmflags = (FZ_CM_REV2 if rev2 else 0) | rtr << FZ_CM_RTR_SHIFT
        name = f"capture_{conn:02d}"
        files = {
            f"{name}_req_resp": header(FZ_MODE_CM_RESP, fl, cmflags, 0, 0, 0)
            + req + fpdus(req_rest, crc, MAX_FPDU_OCTETS),
            f"{name}_rep_init": header(
                FZ_MODE_CM_INIT, fl,
                cmflags | (FZ_CM_P2P if p2p else 0), ird, ord_, 0)
            + rep + fpdus(rep_rest, crc, MAX_FPDU_OCTETS),
        }
        # RAW: header[7] is the 4-aligned part of the first FPDU's stream
        # position, header[4]'s low two bits the rest (frames < 512 octets).
        for tag, fr, rest in (("req", req, req_rest), ("rep", rep, rep_rest)):
            body = fpdus(rest, crc, MAX_FPDU_OCTETS)
            if body and len(fr) < 512:
                files[f"{name}_{tag}_raw"] = header(
                    FZ_MODE_RAW, fl, len(fr) & 3, 0, 0,
                    len(fr) // 4) + body
        for fname, content in files.items():
            with open(os.path.join(outdir, fname), "wb") as f:
                f.write(content)
            written += 1
    print(f"pcap2corpus: {written} inputs from {len(by_conn)} connections")
    if not written:
        sys.exit(1)


if __name__ == "__main__":
    main()

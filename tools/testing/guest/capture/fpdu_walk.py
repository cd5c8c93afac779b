#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Walks the FPDUs of the iWARP connections in a capture, without
Markers, by the framing of RFC 5044 alone, independent of where TCP cut
the stream:

  fpdu_walk.py FILE --crc on|off [--check-crc]

FILE holds iWARP connections only (capture with a port filter; perftest
over the RDMA CM opens more than one). tshark reassembles each direction
of each connection (follow,tcp,raw); after the MPA Request (Reply), 20
octets and PD_Length, every FPDU is ULPDU_Length (2 octets), the ULPDU,
pad to 4 and, with CRCs, 4 octets of CRC. Prints a line per connection
and direction, then the sums over all connections:

  stream S initiator: N FPDUs, largest ULPDU L, ULPDU octets U
  ...
  initiator: N FPDUs, largest ULPDU L, ULPDU octets U
  responder: N FPDUs, largest ULPDU L, ULPDU octets U

and for each source address the frames the capture holds and the
largest (a capture on the sending host sees them before the NIC segments
them, one on the receiving host after GRO merged them):

  frames from ADDR: N, largest L octets

and exits 1 when a direction does not end on an FPDU boundary or holds
no MPA frame. tshark's own iWARP dissector assumes an FPDU per segment,
so it cannot say this about FPDUs larger than a segment.

With --check-crc (and --crc on) it also checks each FPDU's MPA CRC, the
CRC32c of ULPDU_Length, ULPDU and pad (RFC 5044 4.4, no Markers), in
the octet order of that section's example FPDU, adds "crc good G bad B"
to each stream's line, prints

  initiator CRCs: G good, B bad
  responder CRCs: G good, B bad

and exits 1 when one is bad or a direction had none to check (a capture
without an iWARP connection). The kernel's crc32c (AF_ALG) computes
them when it can, Python otherwise.
"""
import argparse
import socket
import subprocess
import sys


def streams(path):
    """The TCP stream numbers in the capture, and for each source address
    [frames, largest frame's length], in the same pass of tshark."""
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e",
                          "tcp.stream", "-e", "ip.src", "-e", "ipv6.src",
                          "-e", "frame.len"], check=True,
                         capture_output=True, text=True).stdout
    nums, frames = set(), {}
    for line in out.splitlines():
        stream, src4, src6, length = (line.split("\t") + [""] * 4)[:4]
        if not stream:
            continue
        nums.add(int(stream))
        acc = frames.setdefault(src4 or src6, [0, 0])
        acc[0] += 1
        acc[1] = max(acc[1], int(length or 0))
    return sorted(nums), frames


def directions(path, stream):
    """The octets each node sent: (first node's, second node's)."""
    out = subprocess.run(["tshark", "-r", path, "-q", "-z",
                          f"follow,tcp,raw,{stream}"], check=True,
                         capture_output=True, text=True).stdout
    data = [bytearray(), bytearray()]
    body = False
    for line in out.splitlines():
        if line.startswith("Node 1:"):
            body = True
            continue
        if not body or line.startswith("====="):
            continue
        side = 1 if line.startswith("\t") else 0
        data[side] += bytes.fromhex(line.strip())
    return data


def crc32c_python():
    """CRC32c (Castagnoli, reflected, inverted in and out) in Python."""
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)

    def crc(data):
        c = 0xFFFFFFFF
        for b in data:
            c = table[(c ^ b) & 0xFF] ^ (c >> 8)
        return (c ^ 0xFFFFFFFF).to_bytes(4, "little")
    return crc


def crc32c_kernel():
    """The kernel's crc32c through an AF_ALG hash socket, or None. Its
    digest is the CRC least significant octet first, as on the wire."""
    try:
        alg = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)
        alg.bind(("hash", "crc32c"))
        op, _ = alg.accept()
    except (AttributeError, OSError):
        return None

    def crc(data):
        view = memoryview(data)
        while view:
            view = view[op.send(view, socket.MSG_MORE):]
        op.send(b"")
        return op.recv(4)
    return crc


# RFC 5044 4.4's example: the first FPDU of a stream, a Marker, a Send
# of 24 zero octets, and its CRC as the wire carries it.
RFC_FPDU = bytes.fromhex("00000000002a4143" + "00" * 8 + "00000001" +
                         "00" * 28)
RFC_CRC = bytes.fromhex("52239983")


def crc32c():
    """(the CRC32c function, its name), checked against RFC 5044's
    example FPDU and the usual "123456789"."""
    for make, name in ((crc32c_kernel, "kernel"), (crc32c_python, "python")):
        crc = make()
        if (crc and crc(RFC_FPDU) == RFC_CRC and
                crc(b"123456789") == bytes.fromhex("839206e3")):
            return crc, name
    sys.exit("fpdu_walk.py: no working CRC32c")


def walk(octets, crc, check=None):
    """(FPDUs, largest ULPDU_Length, ULPDU octets, problem or None,
    CRCs good, CRCs bad, where the first bad one is). check: the CRC32c
    function when the CRCs are to be checked."""
    if len(octets) < 20 or not octets.startswith(b"MPA ID Re"):
        return 0, 0, 0, "no MPA Request or Reply", 0, 0, None
    at = 20 + int.from_bytes(octets[18:20], "big")
    n = largest = total = good = bad = 0
    first_bad = None
    while at + 2 <= len(octets):
        ulen = int.from_bytes(octets[at:at + 2], "big")
        end = at + 2 + ulen + (4 - (ulen + 2) % 4) % 4
        if check and end + 4 <= len(octets):
            if check(octets[at:end]) == octets[end:end + 4]:
                good += 1
            else:
                bad += 1
                if first_bad is None:
                    first_bad = (f"FPDU {n + 1} at octet {at}: CRC "
                                 f"{octets[end:end + 4].hex()}, computed "
                                 f"{check(octets[at:end]).hex()}")
        at = end + (4 if crc else 0)
        n += 1
        largest = max(largest, ulen)
        total += ulen
    if at != len(octets):
        return n, largest, total, (f"the octets end inside an FPDU "
                                   f"({len(octets)} octets, the last FPDU "
                                   f"ends at {at})"), good, bad, first_bad
    return n, largest, total, None, good, bad, first_bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--crc", choices=("on", "off"), required=True)
    ap.add_argument("--check-crc", action="store_true",
                    help="check each FPDU's CRC (with --crc on)")
    a = ap.parse_args()
    if a.check_crc and a.crc != "on":
        ap.error("--check-crc needs --crc on")
    check = None
    if a.check_crc:
        check, name = crc32c()
        print(f"CRC32c: {name}")
    ok = True
    sums = {"initiator": [0, 0, 0, 0, 0], "responder": [0, 0, 0, 0, 0]}
    nums, frames = streams(a.file)
    for st in nums:
        for octets in directions(a.file, st):
            who = ("initiator" if octets.startswith(b"MPA ID Req")
                   else "responder")
            n, largest, total, problem, good, bad, first_bad = walk(
                octets, a.crc == "on", check)
            print(f"stream {st} {who}: {n} FPDUs, largest ULPDU {largest}, "
                  f"ULPDU octets {total}" +
                  (f", crc good {good} bad {bad}" if check else ""))
            if problem:
                print(f"problem: stream {st} {who}: {problem}")
                ok = False
            if first_bad:
                print(f"problem: stream {st} {who}: {bad} bad CRCs, the "
                      f"first: {first_bad}")
                ok = False
            acc = sums[who]
            acc[0] += n
            acc[1] = max(acc[1], largest)
            acc[2] += total
            acc[3] += good
            acc[4] += bad
    for who, (n, largest, total, _, _) in sums.items():
        print(f"{who}: {n} FPDUs, largest ULPDU {largest}, "
              f"ULPDU octets {total}")
    for src, (n, largest) in sorted(frames.items()):
        print(f"frames from {src}: {n}, largest {largest} octets")
    if check:
        for who, (n, _, _, good, bad) in sums.items():
            print(f"{who} CRCs: {good} good, {bad} bad")
            if not good:
                print(f"problem: no {who} CRC checked")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

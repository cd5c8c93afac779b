#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Walks the FPDUs of the iWARP connections in a capture, without
Markers, by the framing of RFC 5044 alone, independent of where TCP cut
the stream:

  fpdu_walk.py FILE --crc on|off

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

and exits 1 when a direction does not end on an FPDU boundary or holds
no MPA frame. tshark's own iWARP dissector assumes an FPDU per segment,
so it cannot say this about FPDUs larger than a segment.
"""
import argparse
import subprocess
import sys


def streams(path):
    """The TCP stream numbers in the capture."""
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e",
                          "tcp.stream"], check=True, capture_output=True,
                         text=True).stdout
    return sorted({int(x) for x in out.split()})


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


def walk(octets, crc):
    """(FPDUs, largest ULPDU_Length, ULPDU octets, problem or None)."""
    if len(octets) < 20 or not octets.startswith(b"MPA ID Re"):
        return 0, 0, 0, "no MPA Request or Reply"
    at = 20 + int.from_bytes(octets[18:20], "big")
    n = largest = total = 0
    while at + 2 <= len(octets):
        ulen = int.from_bytes(octets[at:at + 2], "big")
        at += 2 + ulen + (4 - (ulen + 2) % 4) % 4 + (4 if crc else 0)
        n += 1
        largest = max(largest, ulen)
        total += ulen
    if at != len(octets):
        return n, largest, total, (f"the octets end inside an FPDU "
                                   f"({len(octets)} octets, the last FPDU "
                                   f"ends at {at})")
    return n, largest, total, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--crc", choices=("on", "off"), required=True)
    a = ap.parse_args()
    ok = True
    sums = {"initiator": [0, 0, 0], "responder": [0, 0, 0]}
    for st in streams(a.file):
        for octets in directions(a.file, st):
            who = ("initiator" if octets.startswith(b"MPA ID Req")
                   else "responder")
            n, largest, total, problem = walk(octets, a.crc == "on")
            print(f"stream {st} {who}: {n} FPDUs, largest ULPDU {largest}, "
                  f"ULPDU octets {total}")
            if problem:
                print(f"problem: stream {st} {who}: {problem}")
                ok = False
            acc = sums[who]
            acc[0] += n
            acc[1] = max(acc[1], largest)
            acc[2] += total
    for who, (n, largest, total) in sums.items():
        print(f"{who}: {n} FPDUs, largest ULPDU {largest}, "
              f"ULPDU octets {total}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

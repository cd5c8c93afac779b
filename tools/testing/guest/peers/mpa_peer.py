#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A raw TCP peer speaking (or mangling) MPA startup frames, RFC 5044 7.1.1
and RFC 6581, for the guest's cm suite. It prints one line per thing it
saw; the suite checks the lines.

  mpa_peer.py request ADDR PORT [--key good|bad] [--rev 1|2] [--pdata TEXT]
      initiator: send a Request, print the Reply or how the stream ended
  mpa_peer.py silent ADDR PORT
      connect, send nothing, print how long until siw2 closed
  mpa_peer.py respond ADDR PORT --mode accept|reject|silent|reset|rev1only
      [--pdata TEXT] [--count N] [--ird-ord IRD,ORD]
      responder: print each Request, then answer as told. rev1only closes
      on a revision 2 Request (as a responder without RFC 6581 does) and
      accepts a revision 1 one. An enhanced accept carries IRD,ORD
      (default 4,4) and echoes the peer-to-peer bit A with a Write RTR (C);
      the first FPDU received after it is printed
  mpa_peer.py churn ADDR PORT --count N [--pdata TEXT]
      N connections, one after another without waiting, each ended by a
      reset or FIN at another step of the MPA setup; prints the tally
  mpa_peer.py fill ADDR PORT
      a listener whose accept queue is full, so that SYNs are dropped;
      runs until killed
"""
import argparse
import socket
import struct
import sys
import time

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"
FLAG_M, FLAG_C, FLAG_R, FLAG_S = 0x80, 0x40, 0x20, 0x10


def out(*words):
    print(*words, flush=True)


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def frame(key, flags, rev, pdata, ird_ord=None):
    body = pdata
    if ird_ord is not None:
        flags |= FLAG_S
        body = struct.pack(">HH", *ird_ord) + pdata
    return key + struct.pack(">BBH", flags, rev, len(body)) + body


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(s):
    """(key, flags, rev, pdata, ird, ord) or a string saying how it ended."""
    try:
        hdr = recv_exact(s, 20)
        if hdr is None:
            return "CLOSED"
        flags, rev, plen = struct.unpack(">BBH", hdr[16:20])
        body = recv_exact(s, plen) if plen else b""
        if body is None:
            return "CLOSED"
    except ConnectionResetError:
        return "RESET"
    except socket.timeout:
        return "TIMEOUT"
    ird = ord_ = None
    if rev >= 2 and flags & FLAG_S and len(body) >= 4:
        ird, ord_ = struct.unpack(">HH", body[:4])
        body = body[4:]
    return hdr[:16], flags, rev, body, ird, ord_


def show(who, f):
    if isinstance(f, str):
        out(who, f)
        return
    key, flags, rev, body, ird, ord_ = f
    out(who, "key=%s flags=0x%02x rev=%d pdata=%s ird=%s ord=%s" %
        (key.decode(errors="replace").replace(" ", "_"), flags, rev,
         body.decode(errors="replace") or "-",
         "-" if ird is None else "0x%04x" % ird,
         "-" if ord_ is None else "0x%04x" % ord_))


def show_fpdu(s):
    """The first FPDU after the Reply: its length, DDP/RDMAP control
    octets and, for a Terminate, its layer/type and code octets."""
    s.settimeout(10)
    try:
        hdr = recv_exact(s, 2)
        if hdr is None:
            return
        (n,) = struct.unpack(">H", hdr)
        body = recv_exact(s, n)
    except (ConnectionResetError, socket.timeout):
        return
    if body is None or n < 2:
        return
    line = "peer fpdu len=%d ctrl=%02x%02x" % (n, body[0], body[1])
    if body[1] & 0x0f == 0x07 and n >= 22:
        line += " term=%02x%02x" % (body[18], body[19])
    out(line)


def wait_end(s, limit):
    """How the stream ends: CLOSED (FIN), RESET, or TIMEOUT."""
    s.settimeout(limit)
    try:
        while True:
            if not s.recv(4096):
                return "CLOSED"
    except ConnectionResetError:
        return "RESET"
    except socket.timeout:
        return "TIMEOUT"


def request(a):
    s = socket.create_connection((a.addr, a.port), timeout=30)
    key = KEY_REQ if a.key == "good" else b"MPA ID Bad Frame"
    ird_ord = (8, 8) if a.rev == 2 else None
    s.sendall(frame(key, FLAG_C, a.rev, a.pdata.encode(), ird_ord))
    s.settimeout(30)
    f = read_frame(s)
    show("peer reply", f)
    if isinstance(f, str):
        return
    if f[1] & FLAG_R:
        # After a reject siw2 closes the stream.
        out("peer end", wait_end(s, 30))
    else:
        # Accepted: Full Operation, which this peer ends at once.
        s.close()
        out("peer closed")


def silent(a):
    s = socket.create_connection((a.addr, a.port), timeout=30)
    t0 = time.monotonic()
    how = wait_end(s, 60)
    out("peer silent %s after %.1f s" % (how, time.monotonic() - t0))


def respond(a):
    ls = socket.socket(family(a.addr), socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(8)
    out("peer LISTENING")
    for _ in range(a.count):
        s, _ = ls.accept()
        s.settimeout(30)
        f = read_frame(s)
        show("peer request", f)
        if isinstance(f, str):
            continue
        rev = f[2]
        enhanced = rev >= 2 and f[1] & FLAG_S
        ird, ord_ = (int(v, 0) for v in a.ird_ord.split(","))
        if enhanced and f[4] & 0x8000:
            ird |= 0x8000          # A: peer-to-peer, as asked
            ord_ |= 0x8000         # C: a zero-length Write RTR
        ird_ord = (ird, ord_) if enhanced else None
        if a.mode == "accept" or (a.mode == "rev1only" and rev == 1):
            s.sendall(frame(KEY_REP, FLAG_C, rev, a.pdata.encode(), ird_ord))
            show_fpdu(s)
            out("peer end", wait_end(s, 30))
        elif a.mode == "reject":
            s.sendall(frame(KEY_REP, FLAG_C | FLAG_R, rev, a.pdata.encode(),
                            ird_ord))
            out("peer end", wait_end(s, 30))
        elif a.mode == "rev1only":
            s.close()
            out("peer closed the revision 2 request")
        elif a.mode == "reset":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
            s.close()
            out("peer reset")
        else:
            out("peer end", wait_end(s, 60))


def reset_close(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def churn(a):
    """Connections that end at once, each at another step of MPA setup: a
    reset before the Request, within it, right after it, after the Reply;
    a FIN right after the Request. No connection waits for another."""
    req = frame(KEY_REQ, FLAG_C, 2, a.pdata.encode(), (8, 8))
    ways = ["before", "within", "after", "fin", "reply"]
    done = {w: 0 for w in ways}
    for i in range(a.count):
        way = ways[i % len(ways)]
        try:
            s = socket.create_connection((a.addr, a.port), timeout=10)
            if way == "within":
                s.sendall(req[:10])
            elif way != "before":
                s.sendall(req)
            if way == "fin":
                s.close()
            elif way == "reply":
                s.settimeout(10)
                read_frame(s)
                reset_close(s)
            else:
                reset_close(s)
            done[way] += 1
        except OSError as e:
            out("peer churn %s: %s" % (way, e))
    out("peer churn " + " ".join("%s=%d" % (w, done[w]) for w in ways))


def fill(a):
    ls = socket.socket(family(a.addr), socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(0)
    # One connection that is never accepted fills the queue.
    c = socket.create_connection((a.addr, a.port))
    out("peer FULL")
    time.sleep(3600)
    c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["request", "silent", "respond", "fill",
                                   "churn"])
    p.add_argument("addr")
    p.add_argument("port", type=int)
    p.add_argument("--key", choices=["good", "bad"], default="good")
    p.add_argument("--rev", type=int, default=2)
    p.add_argument("--pdata", default="")
    p.add_argument("--mode", default="accept",
                   choices=["accept", "reject", "silent", "reset",
                            "rev1only"])
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--ird-ord", default="4,4")
    a = p.parse_args()
    {"request": request, "silent": silent, "respond": respond,
     "fill": fill, "churn": churn}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())

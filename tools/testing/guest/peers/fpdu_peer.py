#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A raw TCP peer that sets up MPA (RFC 5044 7.1, RFC 6581) and then speaks
FPDUs: MPA framing with CRC32c and no Markers (RFC 5044 4), DDP tagged and
untagged segments (RFC 5041 4) and RDMAP messages (RFC 5040 4), valid or
deliberately wrong, for the guest's hostile suite. The wire formats follow
drivers/siw2/wire.h. It prints one line per thing it sends ("sent ...")
and per thing it receives; the suite checks the lines.

  fpdu_peer.py connect ADDR PORT SCENARIO [options]
      MPA initiator: connect to a siw2 listener (peer_target.c server),
      learn the target buffer from the Reply's Private Data
      ("stag=0x.. to=0x.. len=N") and siw2's IRD from its RFC 6581 data,
      run SCENARIO, then report how the stream ended
  fpdu_peer.py accept ADDR PORT SCENARIO [options]
      MPA responder: take one connection from siw2's rdma_connect
      (peer_target.c client), learn the target from the Request, reply
      (ORD capped at siw2's IRD, RFC 6581 9.1; a Write RTR offered if
      siw2 asks for peer-to-peer, 9.2), wait for siw2's first FPDU
      (RFC 5044 7.1.2 rule 4), run SCENARIO
  fpdu_peer.py emit SCENARIO --target STAG,TO,LEN [--peer-ird N] --out FILE
      write the octets SCENARIO sends after MPA setup to FILE (no network),
      to replay them through siw2's own protocol code
  fpdu_peer.py decode FILE
      parse FILE as octets siw2 sent after MPA setup and print the events
  fpdu_peer.py selftest
      CRC32c and FPDU layout against RFC 3720 B.4 and RFC 5044 Appendix
  fpdu_peer.py list
      the scenarios and the Terminate each one expects

Lines printed for what arrives (one event each):
  send op=NAME msn=N len=N data=TEXT      a Send message (QN 0) completed
  write stag=0x.. to=0x.. len=N           an RDMA Write message completed
  rtr send|write|read                     a zero-length RTR (RFC 6581 9.2)
  read_req msn=N sink_stag=.. sink_to=.. size=N src_stag=.. src_to=..
  read_resp stag=0x.. len=N data=ok|bad@OFF|unchecked
  read_resp_octets n=N mismatched=N canary=N
      (at the end, when the scenario watches a Read: every octet of its
      Responses, complete or not, in an FPDU with a bad CRC too, against
      the region's contents; canary counts mismatched octets that are 0xca)
  term layer=NAME etype=N ecode=0xNN hdrctl=MDR seg_len=N copy=same|differs|none
      (TEXT)                              a Terminate (RFC 5040 4.8)
  violation TEXT                          siw2 broke a wire rule
  crc_bad got=.. want=..                  an FPDU from siw2 with a bad CRC
  partial ...                             a message left unfinished
  closed | reset | timeout                how the stream ended
  verdict match|mismatch ...              the first Terminate against the
                                          scenario's expectation

TEXT is one word: printable ASCII, anything else (spaces too) as '.'.
Target buffer contents: octet i of the region (i counted from its first
octet) is (7 * i + (i >> 8)) & 0xff, as peer_target.c fills it.
"""
import argparse
import random
import re
import socket
import struct
import sys
import time

import mpa_peer

# ---- Wire constants (drivers/siw2/wire.h) ----

# MPA Request/Reply frames (RFC 5044 7.1, RFC 6581) come from mpa_peer.py.
KEY_REQ, KEY_REP = mpa_peer.KEY_REQ, mpa_peer.KEY_REP
FLAG_M, FLAG_C, FLAG_R = mpa_peer.FLAG_M, mpa_peer.FLAG_C, mpa_peer.FLAG_R
family, mpa_frame = mpa_peer.family, mpa_peer.frame
V2_A, V2_B, V2_C, V2_D = 0x8000, 0x4000, 0x8000, 0x4000
IRD_ORD_MASK = 0x3fff
IRD_ORD_NONE = 0x3fff
MULPDU_MAX = 64768

DDP_T, DDP_L, DDP_DV = 0x80, 0x40, 0x03
RDMAP_RV_SHIFT, RDMAP_OPCODE = 6, 0x0f
DDP_VERSION = RDMAP_VERSION = 1

OP_WRITE, OP_READ_REQ, OP_READ_RESP, OP_SEND = 0x0, 0x1, 0x2, 0x3
OP_SEND_INV, OP_SEND_SE, OP_SEND_SE_INV, OP_TERMINATE = 0x4, 0x5, 0x6, 0x7
OP_IMM, OP_IMM_SE, OP_ATOMIC_REQ, OP_ATOMIC_RESP = 0x8, 0x9, 0xa, 0xb
OP_NAMES = {OP_WRITE: "write", OP_READ_REQ: "read_req",
            OP_READ_RESP: "read_resp", OP_SEND: "send",
            OP_SEND_INV: "send_inv", OP_SEND_SE: "send_se",
            OP_SEND_SE_INV: "send_se_inv", OP_TERMINATE: "terminate",
            OP_IMM: "imm", OP_IMM_SE: "imm_se",
            OP_ATOMIC_REQ: "atomic_req", OP_ATOMIC_RESP: "atomic_resp"}
SENDS = (OP_SEND, OP_SEND_INV, OP_SEND_SE, OP_SEND_SE_INV)

# RFC 5040 4.1, RFC 7306: untagged queue of each untagged opcode.
QN_SEND, QN_READ_REQ, QN_TERMINATE, QN_ATOMIC_RESP = 0, 1, 2, 3
OP_QN = {OP_SEND: 0, OP_SEND_INV: 0, OP_SEND_SE: 0, OP_SEND_SE_INV: 0,
         OP_IMM: 0, OP_IMM_SE: 0, OP_READ_REQ: 1, OP_ATOMIC_REQ: 1,
         OP_TERMINATE: 2, OP_ATOMIC_RESP: 3}

TAGGED_LEN = 14                 # struct siw2_ddp_tagged_hdr
UNTAGGED_LEN = 18               # struct siw2_ddp_untagged_hdr
READ_REQ_LEN = 28               # struct siw2_rdmap_read_req
ATOMIC_REQ_LEN = 52             # struct siw2_rdmap_atomic_req
TERM_M, TERM_D, TERM_R = 0x8000, 0x4000, 0x2000

LAYERS = {0: "rdmap", 1: "ddp", 2: "llp"}

# (layer, etype, ecode) -> meaning; RFC 5040 4.8, RFC 5041 7.2, RFC 5044 8,
# RFC 6581 8 (the SIW2_TERM_* and SIW2_MPA_ECODE_* names of wire.h).
CAUSES = {
    (0, 0, 0x00): "RDMAP local catastrophic",
    (0, 1, 0x00): "RDMAP remote protection: invalid STag",
    (0, 1, 0x01): "RDMAP remote protection: base or bounds violation",
    (0, 1, 0x02): "RDMAP remote protection: access rights violation",
    (0, 1, 0x03): "RDMAP remote protection: STag not associated",
    (0, 1, 0x04): "RDMAP remote protection: TO wrap",
    (0, 1, 0x09): "RDMAP remote protection: STag cannot be invalidated",
    (0, 1, 0xff): "RDMAP remote protection: unspecified",
    (0, 2, 0x05): "RDMAP remote operation: invalid RDMAP version",
    (0, 2, 0x06): "RDMAP remote operation: unexpected OpCode",
    (0, 2, 0x07): "RDMAP remote operation: catastrophic, stream",
    (0, 2, 0x08): "RDMAP remote operation: catastrophic, global",
    (0, 2, 0x09): "RDMAP remote operation: STag cannot be invalidated",
    (0, 2, 0xff): "RDMAP remote operation: unspecified",
    (1, 0, 0x00): "DDP local catastrophic",
    (1, 1, 0x00): "DDP tagged buffer: invalid STag",
    (1, 1, 0x01): "DDP tagged buffer: base or bounds violation",
    (1, 1, 0x02): "DDP tagged buffer: STag not associated",
    (1, 1, 0x03): "DDP tagged buffer: TO wrap",
    (1, 1, 0x04): "DDP tagged buffer: invalid DDP version",
    (1, 2, 0x01): "DDP untagged buffer: invalid QN",
    (1, 2, 0x02): "DDP untagged buffer: invalid MSN, no buffer available",
    (1, 2, 0x03): "DDP untagged buffer: invalid MSN, MSN range not valid",
    (1, 2, 0x04): "DDP untagged buffer: invalid MO",
    (1, 2, 0x05): "DDP untagged buffer: message too long for the buffer",
    (1, 2, 0x06): "DDP untagged buffer: invalid DDP version",
    (2, 0, 0x01): "LLP/MPA: TCP connection lost",
    (2, 0, 0x02): "LLP/MPA: CRC error",
    (2, 0, 0x03): "LLP/MPA: Marker and ULPDU_Length disagree",
    (2, 0, 0x04): "LLP/MPA: invalid Request or Reply frame",
    (2, 0, 0x05): "LLP/MPA: local catastrophic",
    (2, 0, 0x06): "LLP/MPA: insufficient IRD resources",
    (2, 0, 0x07): "LLP/MPA: no matching RTR option",
}


def out(*words):
    print(*words, flush=True)


def pattern(off, n):
    """Octets [off, off + n) of the target region as peer_target fills it."""
    return bytes(((7 * i) + (i >> 8)) & 0xff for i in range(off, off + n))


def printable(data, limit=64):
    text = data[:limit].decode("ascii", errors="replace")
    text = "".join(c if "!" <= c <= "~" else "." for c in text)
    return text + ("..." if len(data) > limit else "") if text else "-"


# ---- CRC32c (RFC 5044 4.4: as iSCSI computes it, RFC 3720 B.4) ----

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC32c value of data (continuing from a previous value crc)."""
    c = crc ^ 0xffffffff
    t = CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff


def crc_wire(value):
    """The CRC field: least significant octet first (RFC 5044 Figure 5 sends
    0x83992352 as 52 23 99 83; siw2_mpa_crc_put() does the same)."""
    return struct.pack("<I", value)


def pad_len(ulpdu_len):
    return (4 - ((ulpdu_len + 2) & 3)) & 3


def fpdu(ulpdu, bad_crc=False, length=None):
    """One FPDU, Markers off (RFC 5044 4.1): ULPDU_Length, ULPDU, pad, CRC."""
    n = len(ulpdu) if length is None else length
    body = struct.pack(">H", n) + ulpdu + bytes(pad_len(len(ulpdu)))
    value = crc32c(body)
    if bad_crc:
        value ^= 0x5a5a5a5a
    return body + crc_wire(value)


# ---- DDP and RDMAP headers (RFC 5041 4.2, 4.3; RFC 5040 4) ----

def ctrl(opcode, tagged, last, dv=DDP_VERSION, rv=RDMAP_VERSION):
    ddp = (DDP_T if tagged else 0) | (DDP_L if last else 0) | (dv & DDP_DV)
    return bytes([ddp, ((rv & 3) << RDMAP_RV_SHIFT) | (opcode & 0xf)])


def tagged_hdr(opcode, stag, to, last=True, dv=DDP_VERSION,
               rv=RDMAP_VERSION):
    return ctrl(opcode, True, last, dv, rv) + struct.pack(">IQ", stag, to)


def untagged_hdr(opcode, qn, msn, mo, last=True, inval=0, dv=DDP_VERSION,
                 rv=RDMAP_VERSION):
    return ctrl(opcode, False, last, dv, rv) + \
        struct.pack(">IIII", inval, qn, msn, mo)


def read_req_body(sink_stag, sink_to, size, src_stag, src_to):
    return struct.pack(">IQIIQ", sink_stag, sink_to, size, src_stag, src_to)


class Msg:
    """The segments (ULPDUs) of one message, with the header of the one a
    Terminate is expected to copy."""

    def __init__(self, label, segs, offending=None, bad_crc=False):
        self.label = label
        self.segs = segs
        self.offending = offending
        self.bad_crc = bad_crc

    def wire(self):
        return b"".join(fpdu(s, self.bad_crc) for s in self.segs)


def seg_sizes(total, room):
    """Payload sizes of the segments of a message (RFC 5041 5.2)."""
    if total == 0:
        return [0]
    sizes = []
    while total > 0:
        sizes.append(min(total, room))
        total -= sizes[-1]
    return sizes


def write_msg(stag, to, data, mulpdu, **kw):
    segs, off = [], 0
    sizes = seg_sizes(len(data), mulpdu - TAGGED_LEN)
    for i, n in enumerate(sizes):
        segs.append(tagged_hdr(OP_WRITE, stag, to + off,
                               last=i == len(sizes) - 1, **kw) +
                    data[off:off + n])
        off += n
    return segs


def send_msg(opcode, msn, data, mulpdu, qn=QN_SEND, inval=0, **kw):
    segs, off = [], 0
    sizes = seg_sizes(len(data), mulpdu - UNTAGGED_LEN)
    for i, n in enumerate(sizes):
        segs.append(untagged_hdr(opcode, qn, msn, off,
                                 last=i == len(sizes) - 1, inval=inval,
                                 **kw) + data[off:off + n])
        off += n
    return segs


def read_req_msg(msn, sink_stag, sink_to, size, src_stag, src_to):
    return untagged_hdr(OP_READ_REQ, QN_READ_REQ, msn, 0) + \
        read_req_body(sink_stag, sink_to, size, src_stag, src_to)


def term_msg(layer, etype, ecode, body=b"", hdrctl=0):
    word = (layer << 28) | (etype << 24) | (ecode << 16) | hdrctl
    return untagged_hdr(OP_TERMINATE, QN_TERMINATE, 1, 0) + \
        struct.pack(">I", word) + body


# ---- Receiving what siw2 sends ----

class Receiver:
    """Parses the FPDU stream siw2 sends, prints one line per event and
    checks siw2's side of the wire rules. reply() is called with octets to
    send back (the zero-length Read Response of a Read RTR)."""

    def __init__(self, crc, reply=None, offending=None):
        self.crc = crc
        self.reply = reply
        self.offending = offending     # header a Terminate should copy
        self.buf = b""
        self.dead = False
        self.fpdus = 0
        self.events = []
        self.terms = []
        self.reads = []                # data verdict of each Read Response
        self.start = 0                 # events before it preceded the run
        self.expect_read = {}          # sink STag -> expected octets
        self.msn = {0: 1, 1: 1, 2: 1, 3: 1}
        self.hold_rtr = False          # see --hold-rtr
        self.resp_extra = 0            # see sc_read_resp_long()
        self.held = None               # the Read RTR's answer, held
        self.untagged = {}             # qn -> [opcode, msn, bytearray]
        self.tagged = {}               # (opcode, stag) -> [first TO, data]
        self.watch = None              # see sc_read_inval()
        self.watched = [0, 0, 0]       # octets, mismatched, canary

    def event(self, kind, *words):
        self.events.append(kind)
        out(kind, *words)

    def violation(self, text):
        self.event("violation", text)

    def feed(self, data):
        if self.dead:
            return
        self.buf += data
        while len(self.buf) >= 2 and not self.dead:
            (n,) = struct.unpack(">H", self.buf[:2])
            if n == 0 or n > MULPDU_MAX:
                self.violation("ulpdu_len=%d (RFC 5044 3: 1..64768)" % n)
                self.dead = True
                return
            total = 2 + n + pad_len(n) + 4
            if len(self.buf) < total:
                return
            frame, self.buf = self.buf[:total], self.buf[total:]
            self.fpdus += 1
            if self.crc:
                want = crc_wire(crc32c(frame[:-4]))
                if frame[-4:] != want:
                    self.event("crc_bad", "got=%s want=%s" %
                               (frame[-4:].hex(), want.hex()))
                    # Its octets reached this peer all the same.
                    self.watch_seg(frame[2:2 + n])
                    self.dead = True
                    return
            self.segment(frame[2:2 + n])

    def segment(self, u):
        if len(u) < 2:
            self.violation("segment of %d octets" % len(u))
            return
        dv, rv = u[0] & DDP_DV, u[1] >> RDMAP_RV_SHIFT
        op, last = u[1] & RDMAP_OPCODE, bool(u[0] & DDP_L)
        if dv != DDP_VERSION or rv != RDMAP_VERSION:
            self.violation("DDP version %d, RDMAP version %d" % (dv, rv))
            return
        if u[0] & DDP_T:
            self.tagged_seg(op, u, last)
        else:
            self.untagged_seg(op, u, last)

    def tagged_seg(self, op, u, last):
        if len(u) < TAGGED_LEN or op not in (OP_WRITE, OP_READ_RESP):
            self.violation("tagged segment opcode %d len %d" % (op, len(u)))
            return
        stag, to = struct.unpack(">IQ", u[2:14])
        key = (op, stag)
        first = self.fpdus == 1
        msg = self.tagged.setdefault(key, [to, bytearray()])
        if to != msg[0] + len(msg[1]):
            self.violation("%s stag=0x%08x to=0x%x, expected 0x%x" %
                           (OP_NAMES[op], stag, to, msg[0] + len(msg[1])))
        msg[1] += u[TAGGED_LEN:]
        if op == OP_READ_RESP and self.watch and self.watch[0] == stag:
            self.watch_octets(to - self.watch[1], u[TAGGED_LEN:])
        if not last:
            return
        del self.tagged[key]
        data = bytes(msg[1])
        if op == OP_WRITE:
            if first and not data:
                self.event("rtr", "write")
            else:
                self.event("write", "stag=0x%08x to=0x%x len=%d" %
                           (stag, msg[0], len(data)))
            return
        want = self.expect_read.pop(stag, None)
        if want is None:
            verdict = "unchecked"
        elif want == data:
            verdict = "ok"
        else:
            k = next((i for i in range(min(len(want), len(data)))
                      if want[i] != data[i]), min(len(want), len(data)))
            verdict = "bad@%d" % k
        self.reads.append(verdict)
        self.event("read_resp", "stag=0x%08x len=%d data=%s" %
                   (stag, len(data), verdict))

    def watch_seg(self, u):
        """A segment not parsed otherwise: a watched Read Response's?"""
        if not self.watch or len(u) < TAGGED_LEN or not u[0] & DDP_T or \
                u[1] & RDMAP_OPCODE != OP_READ_RESP:
            return
        stag, to = struct.unpack(">IQ", u[2:14])
        if stag == self.watch[0]:
            self.watch_octets(to - self.watch[1], u[TAGGED_LEN:])

    def watch_octets(self, off, data):
        """Read Response octets at @off of the region, as they come."""
        want = pattern(off, len(data))
        self.watched[0] += len(data)
        for x, y in zip(data, want):
            if x != y:
                self.watched[1] += 1
                self.watched[2] += x == 0xca

    def untagged_seg(self, op, u, last):
        if op not in OP_QN:
            self.violation("reserved opcode %d" % op)
            return
        if len(u) < UNTAGGED_LEN:
            self.violation("untagged segment of %d octets" % len(u))
            return
        inval, qn, msn, mo = struct.unpack(">IIII", u[2:18])
        if qn != OP_QN[op]:
            self.violation("%s on QN %d" % (OP_NAMES[op], qn))
            return
        if msn != self.msn[qn]:
            self.violation("%s msn=%d, expected %d (RFC 5041 5.1)" %
                           (OP_NAMES[op], msn, self.msn[qn]))
        cur = self.untagged.setdefault(qn, [op, msn, bytearray()])
        if mo != len(cur[2]):
            self.violation("%s mo=%d, expected %d" %
                           (OP_NAMES[op], mo, len(cur[2])))
        first = self.fpdus == 1
        cur[2] += u[UNTAGGED_LEN:]
        if not last:
            return
        del self.untagged[qn]
        self.msn[qn] = msn + 1
        body = bytes(cur[2])
        if op in SENDS:
            if first and not body:
                self.event("rtr", "send")
                return
            self.event("send", "op=%s msn=%d len=%d data=%s" %
                       (OP_NAMES[op], msn, len(body), printable(body)))
        elif op == OP_READ_REQ:
            self.read_req(msn, body, first)
        elif op == OP_TERMINATE:
            self.terminate(u, body)
        else:
            self.event(OP_NAMES[op], "msn=%d len=%d body=%s" %
                       (msn, len(body), body[:32].hex()))

    def read_req(self, msn, body, first):
        if len(body) != READ_REQ_LEN:
            self.violation("read_req body of %d octets" % len(body))
            return
        sstag, sto, size, rstag, rto = struct.unpack(">IQIIQ", body)
        if first and size == 0:
            self.event("rtr", "read")
        else:
            self.event("read_req", "msn=%d sink_stag=0x%08x sink_to=0x%x "
                       "size=%d src_stag=0x%08x src_to=0x%x" %
                       (msn, sstag, sto, size, rstag, rto))
        # Only a zero-length Read (an RTR) is answered: this peer has no
        # memory to serve. Answers go in the order of the Requests (RFC
        # 5040 5.2), a held RTR answer first.
        if size != 0 or not self.reply:
            return
        if self.resp_extra:
            # More octets than the Request asked for (sc_read_resp_long()
            # runs as MPA initiator: siw2 sends no RTR).
            self.offending = tagged_hdr(OP_READ_RESP, sstag, sto)
            self.reply(fpdu(self.offending + b"L" * self.resp_extra))
            out("sent", "read_resp len=%d to a Request of size 0" %
                self.resp_extra)
            return
        answer = fpdu(tagged_hdr(OP_READ_RESP, sstag, sto))
        if first and self.hold_rtr:
            self.held = answer
            return
        if self.held:
            self.reply(self.held)
            self.held = None
        self.reply(answer)

    def terminate(self, u, body):
        if u[0] & DDP_L == 0 or struct.unpack(">I", u[10:14])[0] != 1 or \
                struct.unpack(">I", u[14:18])[0] != 0:
            self.violation("Terminate not MSN 1, MO 0, Last (RFC 5040 5.4)")
        if len(body) < 4:
            self.violation("Terminate without its control word")
            return
        (word,) = struct.unpack(">I", body[:4])
        layer, etype = word >> 28, (word >> 24) & 0xf
        ecode, hdrctl = (word >> 16) & 0xff, word & (TERM_M | TERM_D | TERM_R)
        rest = body[4:]
        seg_len, copy = "-", b""
        if hdrctl:
            if len(rest) >= 2:
                if hdrctl & TERM_M:
                    seg_len = str(struct.unpack(">H", rest[:2])[0])
                copy = rest[2:]
            else:
                self.violation("Terminate Hdr Ctrl without the header copy")
        if hdrctl & TERM_D and copy:
            want = TAGGED_LEN if copy[0] & DDP_T else UNTAGGED_LEN
            if hdrctl & TERM_R:
                opc = copy[1] & RDMAP_OPCODE
                want += ATOMIC_REQ_LEN if opc == OP_ATOMIC_REQ else \
                    READ_REQ_LEN
            copy = copy[:want]
        if not copy:
            same = "none"
        elif self.offending is None:
            same = "unchecked"
        else:
            same = "same" if copy == self.offending[:len(copy)] else "differs"
        flags = "".join(f for f, b in (("M", TERM_M), ("D", TERM_D),
                                       ("R", TERM_R)) if hdrctl & b) or "-"
        self.terms.append((layer, etype, ecode))
        self.event("term", "layer=%s etype=%d ecode=0x%02x hdrctl=%s "
                   "seg_len=%s copy=%s (%s)" %
                   (LAYERS.get(layer, str(layer)), etype, ecode, flags,
                    seg_len, same,
                    CAUSES.get((layer, etype, ecode), "unknown cause")))
        if copy and same == "differs":
            out("term_copy", copy.hex())

    def unfinished(self):
        if self.watch:
            out("read_resp_octets", "n=%d mismatched=%d canary=%d" %
                tuple(self.watched))
        for (op, stag), (to, data) in self.tagged.items():
            out("partial", "%s stag=0x%08x to=0x%x got=%d" %
                (OP_NAMES[op], stag, to, len(data)))
        for qn, (op, msn, data) in self.untagged.items():
            out("partial", "%s qn=%d msn=%d got=%d" %
                (OP_NAMES[op], qn, msn, len(data)))
        if self.buf and not self.dead:
            out("partial", "fpdu octets=%d" % len(self.buf))


# ---- Scenarios ----

class Ctx:
    """What a scenario knows: the target region, siw2's IRD, options."""

    def __init__(self, a, stag, to, length, peer_ird):
        self.a = a
        self.stag, self.to, self.len = stag, to, length
        self.peer_ird = peer_ird
        self.msn = {QN_SEND: 1, QN_READ_REQ: 1, QN_TERMINATE: 1}

    def next_msn(self, qn):
        m = self.msn[qn]
        self.msn[qn] = m + 1
        return m


# A step: ("send", Msg) | ("await", kind, count) | ("sleep", s) |
# ("expect_read", stag, octets) | ("watch", sink stag, sink TO) |
# ("begin",) (the verdict judges what comes after) | ("shutdown",)

def sc_write_bad_stag(c):
    bad = c.stag ^ 0xffffff00          # another index: no such region
    segs = [tagged_hdr(OP_WRITE, bad, c.to) + b"W" * 64]
    return [("send", Msg("write stag=0x%08x to=0x%x len=64" % (bad, c.to),
                         segs, segs[0][:TAGGED_LEN]))]


def sc_write_bad_key(c):
    bad = c.stag ^ 0x5a                # the region's index, another key
    segs = [tagged_hdr(OP_WRITE, bad, c.to) + b"K" * 64]
    return [("send", Msg("write stag=0x%08x to=0x%x len=64" % (bad, c.to),
                         segs, segs[0][:TAGGED_LEN]))]


def sc_write_oob(c):
    to = c.to + c.len - 16             # 48 of the 64 octets lie beyond
    segs = [tagged_hdr(OP_WRITE, c.stag, to) + b"O" * 64]
    return [("send", Msg("write stag=0x%08x to=0x%x len=64 (region ends at "
                         "0x%x)" % (c.stag, to, c.to + c.len), segs,
                         segs[0][:TAGGED_LEN]))]


def sc_read_bad_stag(c):
    bad = c.stag ^ 0xffffff00
    seg = read_req_msg(c.next_msn(QN_READ_REQ), 0x5200, 0, 64, bad, c.to)
    return [("send", Msg("read_req src_stag=0x%08x size=64" % bad, [seg],
                         seg))]


def sc_read_oob(c):
    to = c.to + c.len - 16
    seg = read_req_msg(c.next_msn(QN_READ_REQ), 0x5200, 0, 64, c.stag, to)
    return [("send", Msg("read_req src_stag=0x%08x src_to=0x%x size=64" %
                         (c.stag, to), [seg], seg))]


def sc_read_beyond_ird(c):
    ird = c.peer_ird if c.peer_ird != IRD_ORD_NONE else c.a.count
    size = min(c.len, c.a.read_len)
    segs = [read_req_msg(c.next_msn(QN_READ_REQ), 0x5300 + i, 0, size,
                         c.stag, c.to) for i in range(ird + 1)]
    # All at once, without reading: siw2's Read Responses stall on this
    # peer's small receive window, so no IRD credit comes back in between.
    return [("send", Msg("%d read_req size=%d (siw2 IRD %d)" %
                         (ird + 1, size, ird), segs, segs[-1])),
            ("sleep", 0.5)]


def sc_bad_crc(c):
    segs = send_msg(OP_SEND, c.next_msn(QN_SEND), b"payload under a bad CRC",
                    c.a.mulpdu)
    return [("send", Msg("send len=23 with a wrong CRC", segs, None, True))]


def sc_valid(c):
    size = min(c.len, c.a.read_len)
    note = b"fpdu_peer wrote this at offset 64 of the region"
    steps = [("send", Msg("send len=20", send_msg(
        OP_SEND, c.next_msn(QN_SEND), b"hello from fpdu_peer", c.a.mulpdu))),
        ("expect_read", 0x5100, pattern(0, size)),
        ("send", Msg("read_req size=%d of the whole region" % size, [
            read_req_msg(c.next_msn(QN_READ_REQ), 0x5100, 0, size, c.stag,
                         c.to)])),
        ("await", "read_resp", 1),
        ("send", Msg("write len=%d at offset 64" % len(note), write_msg(
            c.stag, c.to + 64, note, c.a.mulpdu))),
        ("expect_read", 0x5101, note),
        ("send", Msg("read_req size=%d at offset 64" % len(note), [
            read_req_msg(c.next_msn(QN_READ_REQ), 0x5101, 0x40, len(note),
                         c.stag, c.to + 64)])),
        ("await", "read_resp", 2),
        ("send", Msg("send_se len=3", send_msg(
            OP_SEND_SE, c.next_msn(QN_SEND), b"bye", c.a.mulpdu))),
        ("sleep", 0.5),
        ("shutdown",)]
    return steps


def garbage_octets(seed):
    """Random octets that make up exactly one FPDU as siw2 frames them: the
    first two set ULPDU_Length; enough follow to reach its CRC field."""
    r = random.Random(seed)
    head = bytes(r.getrandbits(8) for _ in range(2))
    (n,) = struct.unpack(">H", head)
    more = 2 + n + pad_len(n) + 4 - 2 if 0 < n <= MULPDU_MAX else 62
    return n, head + bytes(r.getrandbits(8) for _ in range(more))


def sc_garbage(c):
    n, data = garbage_octets(c.a.seed)
    return [("send", Msg("garbage octets=%d ulpdu_len=%d seed=%d" %
                         (len(data), n, c.a.seed), [], None)),
            ("raw", data)]


def sc_zero_len(c):
    # ULPDU_Length 0, two pad octets, a CRC that is right for them.
    return [("raw_label", "ulpdu_len=0"),
            ("raw", fpdu(b"", length=0))]


def sc_huge_len(c):
    return [("raw_label", "ulpdu_len=65535"),
            ("raw", b"\xff\xff" + bytes(62))]


def sc_ddp_version(c):
    segs = send_msg(OP_SEND, c.next_msn(QN_SEND), b"DDP version 2",
                    c.a.mulpdu, dv=2)
    return [("send", Msg("send with DDP version 2", segs, segs[0][:18]))]


def sc_ddp_version_tagged(c):
    segs = [tagged_hdr(OP_WRITE, c.stag, c.to, dv=0) + b"V" * 16]
    return [("send", Msg("write with DDP version 0", segs, segs[0][:14]))]


def sc_rdmap_version(c):
    segs = send_msg(OP_SEND, c.next_msn(QN_SEND), b"RDMAP version 0",
                    c.a.mulpdu, rv=0)
    return [("send", Msg("send with RDMAP version 0", segs, segs[0][:18]))]


def sc_bad_opcode(c):
    seg = untagged_hdr(0xc, QN_SEND, c.next_msn(QN_SEND), 0) + b"opcode 12"
    return [("send", Msg("untagged opcode 0xc (reserved)", [seg], seg[:18]))]


def sc_bad_qn(c):
    seg = untagged_hdr(OP_SEND, 5, 1, 0) + b"queue 5"
    return [("send", Msg("send on qn=5", [seg], seg[:18]))]


def sc_bad_msn(c):
    seg = untagged_hdr(OP_SEND, QN_SEND, 7, 0) + b"msn 7"
    return [("send", Msg("send msn=7 (expected 1)", [seg], seg[:18]))]


def sc_send_too_long(c):
    data = bytes(c.a.send_len)
    segs = send_msg(OP_SEND, c.next_msn(QN_SEND), data, c.a.mulpdu)
    return [("send", Msg("send len=%d" % len(data), segs,
                         segs[0][:UNTAGGED_LEN]))]


def sc_send_partial(c):
    seg = untagged_hdr(OP_SEND, QN_SEND, c.next_msn(QN_SEND), 0,
                       last=False) + b"the first half"
    return [("send", Msg("send len=14 without L, its rest never comes",
                         [seg]))]


def held_fpdu(label, ulpdu, cut, hold, offending=None):
    """Steps that send the first @cut octets of one FPDU, keep the rest
    back for @hold seconds (the siw2 side deregisters meanwhile), then
    send it."""
    wire = fpdu(ulpdu)
    return [("send", Msg(label, [], offending)),
            ("raw", wire[:cut]),
            ("sleep", hold),
            ("raw_label", "the rest of the FPDU, %d octets" %
             (len(wire) - cut)),
            ("raw", wire[cut:])]


def sc_write_partial_hold(c):
    # 2048 octets at offset 1024; the first 1000 arrive before the hold.
    seg = tagged_hdr(OP_WRITE, c.stag, c.to + 1024) + b"H" * 2048
    return held_fpdu("write len=2048 at offset 1024, held after 1000 "
                     "payload octets for %gs" % c.a.hold, seg,
                     2 + TAGGED_LEN + 1000, c.a.hold, seg[:TAGGED_LEN])


def sc_send_partial_hold(c):
    seg = untagged_hdr(OP_SEND, QN_SEND, c.next_msn(QN_SEND), 0) + \
        b"h" * 200
    return held_fpdu("send len=200, held after 100 payload octets for %gs" %
                     c.a.hold, seg, 2 + UNTAGGED_LEN + 100, c.a.hold,
                     seg[:UNTAGGED_LEN])


def sc_read_hold(c):
    # A Read of the whole region that this peer does not read for a
    # while: its Response stalls on the small receive window (rcvbuf_of()).
    req = read_req_msg(c.next_msn(QN_READ_REQ), 0x5400, 0, c.len, c.stag,
                       c.to)
    wr = tagged_hdr(OP_WRITE, c.stag, c.to) + b"Z" * 64
    return [("send", Msg("read_req size=%d of the whole region, then %gs "
                         "without reading" % (c.len, c.a.hold), [req])),
            ("sleep", c.a.hold),
            ("send", Msg("write len=64 at offset 0, after the hold", [wr],
                         wr[:TAGGED_LEN]))]


def sc_read_inval(c):
    # siw2_selftest.ko (inval_port=) serves the region from a fast
    # registration MR and says "ready" once it is registered, after this
    # peer's first FPDU (RFC 5044 7.1.2 rule 4). Its Read Response stalls
    # on the small receive window (rcvbuf_of()) while a Send with
    # Invalidate ends the STag; the module then writes 0xca over the
    # pages, and none of that may arrive once this peer reads again (in
    # an FPDU whose CRC fails either: see Receiver.watch_seg()).
    hello = send_msg(OP_SEND, c.next_msn(QN_SEND), b"hello", c.a.mulpdu)
    req = read_req_msg(c.next_msn(QN_READ_REQ), 0x5500, 0, c.len, c.stag,
                       c.to)
    inv = send_msg(OP_SEND_INV, c.next_msn(QN_SEND), b"invalidate",
                   c.a.mulpdu, inval=c.stag)
    return [("send", Msg("send len=5, then wait for siw2's", hello)),
            ("await", "send", 1),
            ("begin",),
            ("watch", 0x5500, 0),
            ("send", Msg("read_req size=%d of the whole region, then %gs "
                         "without reading" % (c.len, c.a.hold), [req])),
            ("sleep", c.a.hold),
            ("send", Msg("send_inv len=10 inval_stag=0x%08x, then %gs "
                         "without reading" % (c.stag, c.a.hold), inv)),
            ("sleep", c.a.hold)]


def sc_short_ulpdu(c):
    # ULPDU_Length 10 framing the first 10 octets of an 18-octet untagged
    # header: a length below the header it claims to carry.
    hdr = untagged_hdr(OP_SEND, QN_SEND, c.next_msn(QN_SEND), 0)
    return [("raw_label", "ulpdu_len=10 holding 10 octets of a Send header"),
            ("raw", fpdu(hdr[:10]))]


def sc_read_resp_long(c):
    # siw2 (peer_target -R 0) Reads 0 octets; the answer carries 64.
    return [("resp_extra", 64),
            ("send", Msg("send len=5, then a 64-octet answer to siw2's "
                         "zero-length Read", send_msg(
                             OP_SEND, c.next_msn(QN_SEND), b"hello",
                             c.a.mulpdu))),
            ("await", "read_req", 1),
            ("sleep", 1)]


def sc_send_inv_bad_stag(c):
    bad = c.stag ^ 0xffffff00
    segs = send_msg(OP_SEND_INV, c.next_msn(QN_SEND), b"invalidate",
                    c.a.mulpdu, inval=bad)
    return [("send", Msg("send_inv len=10 inval_stag=0x%08x (no region)" %
                         bad, segs, segs[-1][:UNTAGGED_LEN]))]


def sc_send_inv_user_mr(c):
    segs = send_msg(OP_SEND_INV, c.next_msn(QN_SEND), b"invalidate",
                    c.a.mulpdu, inval=c.stag)
    return [("send", Msg("send_inv len=10 inval_stag=0x%08x (a user MR)" %
                         c.stag, segs, segs[-1][:UNTAGGED_LEN]))]


def imm_msg(c, value):
    return untagged_hdr(OP_IMM, QN_SEND, c.next_msn(QN_SEND), 0) + \
        struct.pack(">Q", value)


def sc_imm_inside_write(c):
    # Write A whole; Write B's first half, an Immediate, B's second half,
    # an Immediate. Only the second follows a Write that ended.
    a = tagged_hdr(OP_WRITE, c.stag, c.to) + b"A" * 64
    b1 = tagged_hdr(OP_WRITE, c.stag, c.to + 64, last=False) + b"B" * 48
    b2 = tagged_hdr(OP_WRITE, c.stag, c.to + 112) + b"b" * 48
    return [("send", Msg("write len=64", [a])),
            ("send", Msg("write len=48 without L", [b1])),
            ("send", Msg("imm 0x11 inside the second Write",
                         [imm_msg(c, 0x11)])),
            ("send", Msg("write len=48, the second Write's last", [b2])),
            ("send", Msg("imm 0x22 after the second Write",
                         [imm_msg(c, 0x22)])),
            ("sleep", 0.5),
            ("shutdown",)]


def sc_send_term(c):
    seg = term_msg(0, 2, 0xff)
    return [("send", Msg("terminate layer=rdmap etype=2 ecode=0xff", [seg]))]


# name -> (steps, expected (layer, etype, ecode) or None, what it tests)
SCENARIOS = {
    "write-bad-stag": (sc_write_bad_stag, (1, 1, 0x00),
                       "RDMA Write to an STag naming no region "
                       "(RFC 5041 7.1 tagged item 1)"),
    "write-bad-key": (sc_write_bad_key, (1, 1, 0x00),
                      "RDMA Write to the region's index with another key"),
    "write-oob": (sc_write_oob, (1, 1, 0x01),
                  "RDMA Write crossing the region's end "
                  "(RFC 5041 7.1 tagged item 4)"),
    "read-bad-stag": (sc_read_bad_stag, (0, 1, 0x00),
                      "Read Request with an invalid source STag "
                      "(RFC 5040 4.8)"),
    "read-oob": (sc_read_oob, (0, 1, 0x01),
                 "Read Request beyond the source region (RFC 5040 4.8)"),
    "read-beyond-ird": (sc_read_beyond_ird, (1, 2, 0x02),
                        "IRD + 1 Read Requests at once (RFC 5040 5.2, "
                        "RFC 5041 7.1 untagged item 2)"),
    "bad-crc": (sc_bad_crc, (2, 0, 0x02),
                "a Send with a wrong CRC (RFC 5044 4.4, 8)"),
    "valid": (sc_valid, None,
              "Send, Read Request, Write, Read back, Send with SE, close"),
    "garbage": (sc_garbage, "any",
                "random octets after MPA setup: a Terminate or a close"),
    "zero-len": (sc_zero_len, (2, 0, 0x03),
                 "ULPDU_Length 0 (RFC 5044 3)"),
    "huge-len": (sc_huge_len, (2, 0, 0x03),
                 "ULPDU_Length 65535 > 64768 (RFC 5044 3)"),
    "ddp-version": (sc_ddp_version, (1, 2, 0x06),
                    "untagged segment with DDP version 2 (RFC 5041 4.1)"),
    "ddp-version-tagged": (sc_ddp_version_tagged, (1, 1, 0x04),
                           "tagged segment with DDP version 0"),
    "rdmap-version": (sc_rdmap_version, (0, 2, 0x05),
                      "Send with RDMAP version 0 (RFC 5040 4.2)"),
    "bad-opcode": (sc_bad_opcode, (0, 2, 0x06),
                   "reserved RDMAP opcode 0xc (RFC 5040 4.3)"),
    "bad-qn": (sc_bad_qn, (1, 2, 0x01),
               "Send on queue 5 (RFC 5041 7.1 untagged item 1)"),
    "bad-msn": (sc_bad_msn, (1, 2, 0x03),
                "first Send with MSN 7 "
                "(RFC 5041 7.1 untagged item 5)"),
    "send-too-long": (sc_send_too_long, (1, 2, 0x05),
                      "Send longer than the posted receive "
                      "(RFC 5041 7.1 untagged item 4)"),
    "send-partial": (sc_send_partial, "none",
                     "the first segment of a Send, then nothing: siw2's "
                     "receive stays half filled"),
    "write-partial-hold": (sc_write_partial_hold, (1, 1, 0x00),
                           "a Write's FPDU cut after 1000 payload octets "
                           "and held; the STag is deregistered meanwhile "
                           "(RFC 5041 7.1 tagged item 1)"),
    "send-partial-hold": (sc_send_partial_hold, (0, 0, 0x00),
                          "a Send's FPDU cut after 100 payload octets and "
                          "held; the receive buffers' MR is deregistered "
                          "meanwhile: a local error at siw2"),
    "read-hold": (sc_read_hold, "any",
                  "a Read of the region whose Response waits on a closed "
                  "window while the region is deregistered, then a Write "
                  "to it"),
    "read-inval": (sc_read_inval, "any",
                   "a Read of a fast registration region whose Response "
                   "waits on a closed window while a Send with Invalidate "
                   "ends the STag and the owner reuses the pages"),
    "short-ulpdu": (sc_short_ulpdu, "any",
                    "ULPDU_Length shorter than the DDP header it frames "
                    "(RFC 5044 4.1, RFC 5041 4.2)"),
    "read-resp-long": (sc_read_resp_long, "any",
                       "a Read Response longer than the Read Request it "
                       "answers (RFC 5040 4.4, 5.2)"),
    "send-inv-bad-stag": (sc_send_inv_bad_stag, (0, 2, 0x09),
                          "Send with Invalidate naming no region "
                          "(RFC 5040 5.3, 4.8)"),
    "send-inv-user-mr": (sc_send_inv_user_mr, (0, 2, 0x09),
                         "Send with Invalidate naming a region that is "
                         "not a fast registration (RFC 5040 5.3, 4.8)"),
    "imm-inside-write": (sc_imm_inside_write, "none",
                         "an Immediate Data message between the segments "
                         "of a Write, another after it (RFC 7306)"),
    "send-term": (sc_send_term, "none",
                  "this peer sends a Terminate; none may come back "
                  "(RFC 5040 5.4)"),
}


def expected_cause(a):
    return SCENARIOS[a.scenario][1]


def fmt_cause(c):
    return "layer=%s etype=%d ecode=0x%02x" % (LAYERS[c[0]], c[1], c[2])


def describe_expectation(a):
    exp = expected_cause(a)
    if exp is None:
        out("expect no terminate, traffic completes, then closed")
    elif exp == "none":
        out("expect no terminate back, then closed or reset")
    elif exp == "any":
        out("expect a terminate of any cause or none, nothing else, then "
            "closed or reset")
    else:
        out("expect term %s (%s), then closed or reset" %
            (fmt_cause(exp), CAUSES[exp]))


def verdict(a, rx, end):
    """The scenario's outcome, judged on what came once it had begun."""
    exp = expected_cause(a)
    events = rx.events[rx.start:]
    got = rx.terms[0] if rx.terms else None
    bad = [e for e in rx.events if e in ("violation", "crc_bad")]
    if exp is None:
        ok = got is None and not bad and end == "closed" and \
            rx.reads == ["ok", "ok"]
    elif exp == "none":
        ok = got is None and not bad and end in ("closed", "reset")
    elif exp == "any":
        ok = set(events) <= {"term"} and len(rx.terms) <= 1 and \
            end in ("closed", "reset")
    else:
        ok = got == exp and end in ("closed", "reset")
    out("verdict", "match" if ok else "mismatch",
        "term=%s end=%s" % ("%d/%d/0x%02x" % got if got else "none", end))


# ---- Running a scenario on a connection ----

class Conn:
    def __init__(self, sock, rx, wait):
        self.sock = sock
        self.rx = rx
        self.wait = wait
        self.end = None

    def send(self, data, split):
        try:
            if not split:
                self.sock.sendall(data)
                return True
            for i in range(0, len(data), split):
                self.sock.sendall(data[i:i + split])
                time.sleep(0.001)
            return True
        except (BrokenPipeError, ConnectionResetError):
            out("send_failed", "the stream is gone")
            self.end = self.end or "reset"
            return False

    def pump(self, until=None, limit=None):
        """Reads and parses until until() holds, the stream ends or the
        time limit passes. Returns False once the stream has ended."""
        deadline = time.monotonic() + (self.wait if limit is None else limit)
        while self.end is None:
            if until and until():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return True
            except ConnectionResetError:
                self.end = "reset"
                break
            if not data:
                self.end = "closed"
                break
            self.rx.feed(data)
        return False


def run_steps(conn, steps, a):
    for st in steps:
        if conn.end:
            break
        kind = st[0]
        if kind == "send":
            msg = st[1]
            conn.rx.offending = msg.offending or conn.rx.offending
            out("sent", msg.label)
            if msg.segs and not conn.send(msg.wire(), a.split):
                break
        elif kind == "raw_label":
            out("sent", st[1])
        elif kind == "raw":
            if not conn.send(st[1], a.split):
                break
        elif kind == "expect_read":
            conn.rx.expect_read[st[1]] = st[2]
        elif kind == "await":
            want = st[2]
            conn.pump(lambda: conn.rx.events.count(st[1]) >= want)
        elif kind == "sleep":
            time.sleep(st[1])
        elif kind == "resp_extra":
            conn.rx.resp_extra = st[1]
        elif kind == "watch":
            conn.rx.watch = st[1:]
        elif kind == "begin":
            conn.rx.start = len(conn.rx.events)
        elif kind == "shutdown":
            try:
                conn.sock.shutdown(socket.SHUT_WR)
                out("sent", "fin")
            except OSError:
                pass


def finish(conn, a):
    conn.pump()
    conn.rx.unfinished()
    end = conn.end or "timeout"
    out(end)
    verdict(a, conn.rx, end)
    conn.sock.close()


# ---- MPA setup ----

def read_frame(s):
    """{key, flags, rev, pdata, ird, ord} or a word saying how it ended."""
    f = mpa_peer.read_frame(s)
    if isinstance(f, str):
        return f.lower()
    return dict(zip(("key", "flags", "rev", "pdata", "ird", "ord"), f))


def show_frame(what, f):
    out("mpa", what, "rev=%d flags=0x%02x ird=%s ord=%s pdata=%s" %
        (f["rev"], f["flags"],
         "-" if f["ird"] is None else "0x%04x" % f["ird"],
         "-" if f["ord"] is None else "0x%04x" % f["ord"],
         printable(f["pdata"], 200)))


TARGET_RE = re.compile(rb"stag=(0x[0-9a-fA-F]+) to=(0x[0-9a-fA-F]+) "
                       rb"len=([0-9]+)")


def target_of(a, pdata):
    if a.target:
        stag, to, length = (int(v, 0) for v in a.target.split(","))
        return stag, to, length
    m = TARGET_RE.search(pdata)
    if not m:
        return None
    return int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))


def peer_ird_of(f):
    if f["ird"] is None:
        return IRD_ORD_NONE
    return f["ird"] & IRD_ORD_MASK


def start(a, sock, tgt, peer_ird, rx):
    if tgt is None:
        out("error", "no target region in the Private Data and no --target")
        sock.close()
        return 2
    out("target", "stag=0x%08x to=0x%x len=%d ird=%d" %
        (tgt[0], tgt[1], tgt[2], peer_ird))
    describe_expectation(a)
    conn = Conn(sock, rx, a.wait)
    rx.start = len(rx.events)
    ctx = Ctx(a, tgt[0], tgt[1], tgt[2], peer_ird)
    run_steps(conn, SCENARIOS[a.scenario][0](ctx), a)
    finish(conn, a)
    return 0


def do_connect(a):
    s = socket.socket(family(a.addr), socket.SOCK_STREAM)
    rcvbuf = rcvbuf_of(a)
    if rcvbuf:
        # Before connect, so that the window scale matches (RFC 7323).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(30)
    s.connect((a.addr, a.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ird, ord_ = (int(v, 0) for v in a.ird_ord.split(","))
    s.sendall(mpa_frame(KEY_REQ, FLAG_C, 2, a.pdata.encode(), (ird, ord_)))
    f = read_frame(s)
    if isinstance(f, str):
        out("mpa reply", f)
        return 1
    show_frame("reply", f)
    if f["key"] != KEY_REP or f["flags"] & FLAG_R:
        out("mpa", "rejected" if f["key"] == KEY_REP else "bad key")
        return 1
    if f["flags"] & FLAG_M:
        out("mpa", "siw2 wants Markers, which this peer does not send")
        return 1
    if f["ird"] is not None and f["ird"] & V2_A:
        out("mpa", "violation: A set in the Reply to a Request without A")
        return 1
    rx = Receiver(True, s.sendall)
    return start(a, s, target_of(a, f["pdata"]), peer_ird_of(f), rx)


def rcvbuf_of(a):
    """read-beyond-ird: a small receive window stalls siw2's Read
    Responses, so that no IRD credit comes back while the requests
    arrive."""
    if a.rcvbuf is None and a.scenario in ("read-beyond-ird", "read-hold",
                                           "read-inval"):
        return 4096
    return a.rcvbuf


def do_accept(a):
    ls = socket.socket(family(a.addr), socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf_of(a):
        # Inherited by the accepted socket, window scale included.
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf_of(a))
    ls.bind((a.addr, a.port))
    ls.listen(1)
    out("LISTENING")
    ls.settimeout(a.wait * 4)
    try:
        s, _ = ls.accept()
    except socket.timeout:
        out("timeout", "no connection")
        return 1
    ls.close()
    s.settimeout(30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    f = read_frame(s)
    if isinstance(f, str):
        out("mpa request", f)
        return 1
    show_frame("request", f)
    if f["key"] != KEY_REQ:
        out("mpa", "bad key")
        return 1
    rev = min(f["rev"], 2)
    ird, ord_ = (int(v, 0) for v in a.ird_ord.split(","))
    enhanced = rev == 2 and f["ird"] is not None
    if enhanced and f["ird"] & IRD_ORD_MASK != IRD_ORD_NONE:
        # RFC 6581 9.1: the responder ORD is at most the initiator IRD.
        ord_ = min(ord_, f["ird"] & IRD_ORD_MASK)
    if enhanced and f["ird"] & V2_A:
        ird |= V2_A            # peer-to-peer, as asked (RFC 6581 9.2)
        # A zero-length RDMA Write (C) or Read (D) RTR.
        ord_ |= V2_D if a.rtr == "read" else V2_C
    s.sendall(mpa_frame(KEY_REP, FLAG_C, rev, a.pdata.encode(),
                        (ird, ord_) if enhanced else None))
    if f["flags"] & FLAG_M:
        out("mpa", "siw2 wants Markers, which this peer does not send")
        return 1
    rx = Receiver(True, s.sendall)
    rx.hold_rtr = a.hold_rtr
    # RFC 5044 7.1.2 rule 4: the responder sends after the first FPDU;
    # --first waits for more (the Send that follows an RTR).
    conn = Conn(s, rx, a.wait)
    if a.first:
        conn.pump(lambda: a.first in rx.events or rx.terms)
    else:
        conn.pump(lambda: rx.fpdus >= 1)
    if rx.fpdus < 1 or rx.terms or (a.first and a.first not in rx.events):
        out("siw2 terminated before the scenario" if rx.terms else
            "no first %s from siw2" % (a.first or "FPDU"))
        finish(conn, a)
        return 1
    return start(a, s, target_of(a, f["pdata"]), peer_ird_of(f), rx)


# ---- Offline modes ----

def do_emit(a):
    stag, to, length = (int(v, 0) for v in a.target.split(","))
    ctx = Ctx(a, stag, to, length, a.peer_ird)
    data = b""
    offending = None
    for st in SCENARIOS[a.scenario][0](ctx):
        if st[0] == "send":
            out("sent", st[1].label)
            data += st[1].wire()
            offending = st[1].offending or offending
        elif st[0] == "raw":
            data += st[1]
        elif st[0] == "raw_label":
            out("sent", st[1])
    describe_expectation(a)
    if offending:
        out("offending", offending.hex())
    with open(a.out, "wb") as f:
        f.write(data)
    out("wrote", len(data), "octets to", a.out)
    return 0


def do_decode(a):
    rx = Receiver(not a.no_crc)
    if a.offending:
        rx.offending = bytes.fromhex(a.offending)
    for spec in a.expect_read or []:
        stag, off, n = (int(v, 0) for v in spec.split(","))
        rx.expect_read[stag] = pattern(off, n)
    with open(a.file, "rb") as f:
        data = f.read()
    step = a.split or len(data) or 1
    for i in range(0, len(data), step):
        rx.feed(data[i:i + step])
    rx.unfinished()
    out("eof")
    return 0


def do_selftest(a):
    fails = 0

    def check(name, ok):
        nonlocal fails
        out("ok  " if ok else "FAIL", name)
        fails += not ok

    check("CRC32c of '123456789' is 0xe3069283",
          crc32c(b"123456789") == 0xe3069283)
    check("RFC 3720 B.4: 32 zero octets give aa 36 91 8a",
          crc_wire(crc32c(bytes(32))) == bytes.fromhex("aa36918a"))
    check("RFC 3720 B.4: 32 0xff octets give 43 ab a8 62",
          crc_wire(crc32c(b"\xff" * 32)) == bytes.fromhex("43aba862"))
    # RFC 5044 Appendix, Figure 5: a Marker, then an FPDU with a 24 octet
    # Send (MSN 1, Last) of zeros; its CRC covers the Marker too.
    ulpdu = send_msg(OP_SEND, 1, bytes(24), 1024)[0]
    check("RFC 5044 Figure 5: the Send's DDP/RDMAP header",
          ulpdu[:18].hex() == "4143" + "00" * 8 + "00000001" + "00" * 4 and
          len(ulpdu) == 0x2a)
    framed = fpdu(ulpdu)
    whole = bytes(4) + framed[:-4]
    check("RFC 5044 Figure 5: CRC 52 23 99 83",
          crc_wire(crc32c(whole)) == bytes.fromhex("52239983"))
    check("FPDU of 42 octets: no pad, 48 octets", len(framed) == 48)
    check("pad: 1 octet ULPDU gets 1 pad octet", len(fpdu(b"x")) == 8)
    rx = Receiver(True)
    rx.feed(framed)
    check("the peer's own parser takes its Send", rx.events == ["send"])
    rx = Receiver(True)
    rx.feed(fpdu(ulpdu, bad_crc=True))
    check("the peer's own parser rejects a bad CRC", rx.events == ["crc_bad"])
    return 1 if fails else 0


def do_list(a):
    for name, (_, exp, what) in SCENARIOS.items():
        if exp is None:
            e = "no terminate"
        elif exp == "none":
            e = "no terminate back"
        elif exp == "any":
            e = "any terminate, or none"
        else:
            e = fmt_cause(exp)
        out("%-20s %-40s %s" % (name, e, what))
    return 0


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(q):
        q.add_argument("scenario", choices=list(SCENARIOS))
        q.add_argument("--mulpdu", type=int, default=1024,
                       help="largest ULPDU this peer sends (default 1024)")
        q.add_argument("--read-len", type=int, default=262144,
                       help="octets per Read Request (capped at the region)")
        q.add_argument("--count", type=int, default=8,
                       help="read-beyond-ird: the IRD to exceed when siw2 "
                       "advertised none (0x3fff)")
        q.add_argument("--send-len", type=int, default=4096,
                       help="send-too-long: octets of the Send")
        q.add_argument("--seed", type=int, default=5044,
                       help="garbage: seed of the random octets")
        q.add_argument("--split", type=int, default=0,
                       help="send in chunks of this many octets")
        q.add_argument("--hold", type=float, default=5,
                       help="*-hold: seconds the rest is held back")

    for name in ("connect", "accept"):
        q = sub.add_parser(name)
        q.add_argument("addr")
        q.add_argument("port", type=int)
        common(q)
        q.add_argument("--pdata", default="fpdu_peer",
                       help="ULP Private Data of the Request or Reply")
        q.add_argument("--ird-ord", default="8,8",
                       help="IRD,ORD sent in the RFC 6581 data (as "
                       "responder, ORD capped at the initiator IRD)")
        q.add_argument("--target", help="STAG,TO,LEN instead of what the "
                       "Private Data says")
        q.add_argument("--rcvbuf", type=int,
                       help="SO_RCVBUF (read-beyond-ird: 4096)")
        q.add_argument("--wait", type=float, default=15,
                       help="seconds to wait for each answer and the end")
        q.add_argument("--first", choices=["send", "rtr", "write",
                                            "read_req"],
                       help="accept: before the scenario, wait for this "
                       "event rather than any first FPDU")
        q.add_argument("--rtr", choices=["write", "read"], default="write",
                       help="accept: the RTR offered for peer-to-peer")
        q.add_argument("--hold-rtr", action="store_true",
                       help="accept: answer a Read RTR only together with "
                       "the next Read Request, so that siw2 has a Read "
                       "outstanding when the RTR's answer arrives")
    q = sub.add_parser("emit")
    common(q)
    q.add_argument("--target", required=True, help="STAG,TO,LEN")
    q.add_argument("--peer-ird", type=int, default=2)
    q.add_argument("--out", required=True)
    q = sub.add_parser("decode")
    q.add_argument("file")
    q.add_argument("--no-crc", action="store_true")
    q.add_argument("--split", type=int, default=0)
    q.add_argument("--offending", help="hex of the header a Terminate copies")
    q.add_argument("--expect-read", action="append",
                   help="STAG,OFF,LEN: a Read Response carries the pattern")
    sub.add_parser("selftest")
    sub.add_parser("list")
    a = p.parse_args()
    return {"connect": do_connect, "accept": do_accept, "emit": do_emit,
            "decode": do_decode, "selftest": do_selftest,
            "list": do_list}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0
#
# The pure protocol layers: no sockets, no skbs, no ib_* objects. They are
# linked into siw2.ko, into the KUnit kernel (with their tests) and into the
# userspace fuzz harness, so this list is the one place that names them.
SIW2_PROTO_OBJS := mpa.o mpa_cm.o ddp.o rdmap.o
SIW2_KUNIT_OBJS := tests/mpa_test.o tests/ddp_test.o tests/rdmap_test.o
SIW2_KUNIT_OBJS += tests/rfc_test.o

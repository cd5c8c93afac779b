#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Host smoke test of libsiw2 without siw2.ko: libibverbs is shown a fake
# sysfs (SYSFS_PATH) with three uverbs devices, a matching siw2 device, a
# siw2 device of another ABI version and a foreign device, and the kernel's
# command interface is played by fake_uverbs.so. Needs root (a private
# mount namespace puts a tmpfs over /dev for /dev/infiniband/uverbsN).
#
# Usage: tests/run.sh    (from userspace/provider, after make check's build)
#
# O is the build directory (make's O, default .); RDMA_CORE_LIB, when set,
# the build/lib of the rdma-core release the provider was built for, put
# in front of the system's libibverbs. FOREIGN_LIB, when set, the build/lib
# of a release the provider was not built for: test 7 checks that the
# provider does not register there.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
case ${O:-.} in /*) prov=$O ;; *) prov=$(cd "$src/${O:-.}" && pwd) ;; esac
bin=$prov/tests
# The release's own ibv_devices and ibv_devinfo: ibv_devinfo uses the
# private ABI, so the system's runs only with the system's libibverbs.
tools=${RDMA_CORE_LIB:+$RDMA_CORE_LIB/../bin/}
abi=$(sed -n 's/^#define SIW2_ABI_VERSION \([0-9]*\).*/\1/p' \
	"$src/../../include/uapi/rdma/siw2-abi.h")
attr=$(sed -n 's/^#define SIW2_SYSFS_ABI_ATTR "\(.*\)"/\1/p' \
	"$src/../../include/uapi/rdma/siw2-abi.h")

if [ "$(id -u)" != 0 ]; then
	echo "run.sh: needs root (unshare -m, mknod); skipped" >&2
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
sys=$tmp/sys

# uverbsN -> ibdev; the char device numbers are /dev/zero's (see below)
fake_dev() {
	uv=$1 ibdev=$2 ver=$3
	mkdir -p "$sys/class/infiniband_verbs/$uv" "$sys/class/infiniband/$ibdev"
	echo "$ibdev" > "$sys/class/infiniband_verbs/$uv/ibdev"
	echo "1:5" > "$sys/class/infiniband_verbs/$uv/dev"
	echo "$abi" > "$sys/class/infiniband_verbs/$uv/abi_version"
	echo "4: RNIC" > "$sys/class/infiniband/$ibdev/node_type"
	echo "0200:5eff:fe00:000${uv#uverbs}" > \
		"$sys/class/infiniband/$ibdev/node_guid"
	if [ -n "$ver" ]; then
		mkdir -p "$sys/class/infiniband/$ibdev/$(dirname "$attr")"
		echo "$ver" > "$sys/class/infiniband/$ibdev/$attr"
	fi
}
mkdir -p "$sys/class/infiniband_verbs"
echo 6 > "$sys/class/infiniband_verbs/abi_version"
fake_dev uverbs0 siw2_0 "$abi"
fake_dev uverbs1 siw2_1 "$((abi + 6))"
fake_dev uverbs2 other0 ""

# Runs inside the namespace: /dev is a private tmpfs, uverbsN are /dev/zero
# (ioctl gives ENOTTY, so libibverbs uses write(), which the shim answers).
cat > "$tmp/inner.sh" <<'EOF'
set -eu
mount -t tmpfs -o mode=0755 none /dev
mknod -m 0666 /dev/null c 1 3
mkdir /dev/infiniband
for i in 0 1 2; do mknod -m 0666 /dev/infiniband/uverbs$i c 1 5; done
exec "$@"
EOF

fails=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; sed 's/^/    /' "$tmp/out" "$tmp/err"; fails=$((fails + 1)); }

# ns CMD...: run CMD in the namespace with the fake sysfs and libsiw2
ns() {
	env SYSFS_PATH="$sys" RDMAV_DRIVERS="$prov/libsiw2" \
	    ${RDMA_CORE_LIB:+LD_LIBRARY_PATH="$RDMA_CORE_LIB"} \
	    FAKE_UVERBS_RDEV=1:5 \
	    unshare -m sh "$tmp/inner.sh" "$@" > "$tmp/out" 2> "$tmp/err"
}

# 1. dlopen, registration, matching
if ns "${tools}ibv_devices" &&
   grep -q '^ *siw2_0 ' "$tmp/out" &&
   ! grep -q 'siw2_1\|other0' "$tmp/out" &&
   grep -q "libsiw2: siw2_1: kernel siw2 ABI version '$((abi + 6))', provider ABI version $abi" "$tmp/err" &&
   [ "$(wc -l < "$tmp/err")" = 1 ] &&
   ! grep -q "couldn't load driver" "$tmp/err"; then
	pass "ibv_devices: siw2_0 matched, siw2_1 refused with one warning, other0 ignored"
else
	fail "ibv_devices"
fi

# 2. context, queries, PD, an unimplemented verb
if ns env LD_PRELOAD="$bin/fake_uverbs.so" "$bin/smoke" siw2_0 ok; then
	pass "open, query_device_ex (odp_caps too), query_port, alloc/dealloc_pd, EOPNOTSUPP"
else
	fail "smoke ok"
fi

# 3. CQ, QP, SRQ, MR and the ring data path against the fake kernel
if ns env LD_PRELOAD="$bin/fake_uverbs.so" "$bin/smoke" siw2_0 verbs; then
	pass "CQ/QP/SRQ/MR verbs, ODP MRs and ibv_advise_mr, rings, doorbells, flush; ibv_create_cq_ex polling, ibv_wr_* batches and refusals"
else
	fail "smoke verbs"
fi

# 4. ibv_devinfo end to end
if ns env LD_PRELOAD="$bin/fake_uverbs.so" "${tools}ibv_devinfo" -d siw2_0 &&
   grep -q 'transport:.*iWARP' "$tmp/out" &&
   grep -q 'fw_ver:.*1\.2\.3' "$tmp/out" &&
   grep -q 'state:.*PORT_ACTIVE' "$tmp/out"; then
	pass "ibv_devinfo -d siw2_0"
else
	fail "ibv_devinfo"
fi

# 5. kernel reports another ABI version in GET_CONTEXT
if ns env LD_PRELOAD="$bin/fake_uverbs.so" FAKE_SIW2_ABI=9 \
	"$bin/smoke" siw2_0 eproto &&
   grep -q "kernel siw2 ABI version 9, provider ABI version $abi; not opening" "$tmp/err"; then
	pass "GET_CONTEXT ABI mismatch refused"
else
	fail "GET_CONTEXT ABI mismatch"
fi

# 6. kernel without siw2's GET_CONTEXT part
if ns env LD_PRELOAD="$bin/fake_uverbs.so" FAKE_SIW2_NO_UDATA=1 \
	"$bin/smoke" siw2_0 eproto &&
   grep -q "kernel siw2 ABI version 0," "$tmp/err"; then
	pass "GET_CONTEXT without driver data refused"
else
	fail "GET_CONTEXT without driver data"
fi

# 7. libibverbs of another release: same PABI, the provider's own check
# refuses; another PABI, libibverbs finds no lib<name>-rdmav<PABI>.so.
if [ -n "${FOREIGN_LIB:-}" ]; then
	if (RDMA_CORE_LIB=$FOREIGN_LIB; ns "$FOREIGN_LIB/../bin/ibv_devices") &&
	   ! grep -q 'siw2_0' "$tmp/out" &&
	   grep -q "libsiw2: built for rdma-core [0-9]* (PABI [0-9]*), but libibverbs is .*; not registering\|couldn't load driver '$prov/libsiw2-rdmav" "$tmp/err"; then
		pass "not registered with libibverbs of another release ($(sed -n 's/.*libsiw2: built for \(rdma-core [0-9]*\).*/\1, refused by libsiw2/p; s/.*couldn.t load driver.*/other PABI, not loaded by libibverbs/p' "$tmp/err" | head -n 1))"
	else
		fail "another release's libibverbs"
	fi
fi

[ "$fails" = 0 ] || { echo "$fails test(s) failed"; exit 1; }
echo "all passed"

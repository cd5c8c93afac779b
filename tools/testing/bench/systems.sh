# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The systems siw2's benchmark compares. Sourced by tools/testing/bench/run.
#
# A system is one line of BENCH_SYSTEMS:
#
#   NAME|KIND|CRC MODES|SETUP|TEARDOWN|DESCRIPTION
#
#   NAME      what the results call it; a name starting with "siw2" is one of
#             ours, and the report gives each of its figures as a ratio to
#             the same figure of every other system
#   KIND      rdma (perftest, qp_scale) or tcp (iperf3, tcp_pp)
#   CRC MODES the MPA CRC settings it runs with, "off on"; "-" when CRC is
#             not a setting of the system (rxe always computes its ICRC,
#             TCP has its checksum)
#   SETUP     a command line, run as `SETUP CRC`: loads what is needed and
#             creates the devices on both ends (links_add: on bvs and bvc,
#             or one device on the loop path's bvl; see lib.sh), setting
#             DEV_S and DEV_C to their names; fails loudly
#   TEARDOWN  a command line, run as `TEARDOWN`: undoes SETUP
#
# Setup and teardown run once per system, repetition and CRC mode, so a
# system may change anything (module, parameters, knobs) between them.

BENCH_SYSTEMS=(
	"siw2|rdma|off on|siw2_setup|siw2_teardown|siw2, this tree, default settings"
	# --- siw2's send engine modes (the "zero system calls on the send
	# path" issue): the per-device knob sq_poll_us (Documentation/
	# admin-guide.md) is 0 for doorbell mode, else the idle window of SQ
	# polling in microseconds. siw2_setup KNOB=VALUE writes VALUE to
	# /sys/class/infiniband/DEV/siw2/KNOB on both devices after `rdma link
	# add`, before any QP exists; the system fails (reported, the others
	# still run) if the attribute does not exist. Not in the default
	# selection (BENCH_DEFAULT_SYSTEMS); ask for them, e.g.
	#   scripts/bench --systems siw2-doorbell,siw2-poll,siw \
	#       --tests ib_write_lat,ib_send_lat,ib_write_bw --sections bw,lat,syscalls
	"siw2-doorbell|rdma|off on|siw2_setup sq_poll_us=0|siw2_teardown|siw2, doorbell mode (sq_poll_us 0)"
	"siw2-poll|rdma|off on|siw2_setup sq_poll_us=1000|siw2_teardown|siw2, SQ polling (sq_poll_us 1000)"
	# The longest window there is (io_uring's SQPOLL idles for 1 s too):
	# a poller that cannot keep up with a ping-pong still keeps the QP.
	"siw2-poll1s|rdma|off on|siw2_setup sq_poll_us=1000000|siw2_teardown|siw2, SQ polling (sq_poll_us 1000000)"
	# --- large FPDUs between two siw2 ends (module parameter
	# mpa_large_fpdu, not RFC 5044; off by default): FPDUs of up to 64768
	# octets that TCP cuts into segments. siw2_setup mod:PARAM=VALUE sets
	# a module parameter before the devices exist.
	"siw2-large|rdma|off on|siw2_setup mod:mpa_large_fpdu=Y|siw2_teardown|siw2, large FPDUs at both ends (mpa_large_fpdu)"
	# Zero-copy transmit (tx_zerocopy, off by default): Sends and Writes
	# of 16 KiB or more from user memory go to TCP by page reference.
	"siw2-zc|rdma|off on|siw2_setup mod:tx_zerocopy=Y|siw2_teardown|siw2, zero-copy transmit (tx_zerocopy)"
	# MPA CRCs by crc32c() instead of the implementation siw2 timed
	# fastest at load (module parameter mpa_crc_impl); CRC on only.
	"siw2-crclib|rdma|on|siw2_setup mod:mpa_crc_impl=lib|siw2_teardown|siw2, CRC32c by crc32c() (mpa_crc_impl=lib)"
	# siw2.ko of another commit (scripts/bench --base REF builds it; run's
	# --base-ko names it), for an A/B in one guest run: each repetition
	# visits it and siw2 in turn. Not a "siw2..." name, so that the report
	# gives siw2's figures as ratios to it. The provider is this tree's:
	# REF must have the same uAPI.
	"base|rdma|off on|siw2_setup ko:base|siw2_teardown|siw2 of another commit (scripts/bench --base)"
	"siw|rdma|off on|siw_setup|siw_teardown|upstream siw (Debian's linux-source, out of tree)"
	"rxe|rdma|-|rxe_setup|rxe_teardown|rdma_rxe (RoCEv2; ICRC always on)"
	"tcp|tcp|-|true|true|kernel TCP (iperf3 one stream; tcp_pp ping-pong)"
)

# What runs when no system is named.
# shellcheck disable=SC2034 # read by run
BENCH_DEFAULT_SYSTEMS="siw2 siw rxe tcp"

# bench_system NAME: sets SYS_KIND, SYS_CRCS, SYS_SETUP, SYS_TEARDOWN,
# SYS_DESC from NAME's entry; fails if there is none.
bench_system() {
	local e name rest
	for e in "${BENCH_SYSTEMS[@]}"; do
		name=${e%%|*}
		[ "$name" = "$1" ] || continue
		rest=${e#*|}
		# shellcheck disable=SC2034 # for the caller
		IFS='|' read -r SYS_KIND SYS_CRCS SYS_SETUP SYS_TEARDOWN SYS_DESC <<<"$rest"
		return 0
	done
	return 1
}

bench_system_names() {
	local e
	for e in "${BENCH_SYSTEMS[@]}"; do
		echo "${e%%|*}"
	done
}

# link_add NAME TYPE NETDEV SIDE: `rdma link add` on the server (s) or the
# client (c) side.
link_add() {
	local pre=("${S_NS[@]}")
	[ "$4" = c ] && pre=("${C_NS[@]}")
	"${pre[@]}" rdma link add "$1" type "$2" netdev "$3"
}

link_del() { rdma link delete "$1" 2>/dev/null; }

# unload MODULE [rmmod]: modprobe -r (rmmod for a module out of the
# kernel's tree), tried for up to 10 s (closing is deferred work); fails
# if MODULE stays loaded.
unload() {
	local tries=50 how=(modprobe -r)
	[ "${2:-}" = rmmod ] && how=(rmmod)
	while grep -q "^$1 " /proc/modules && ! "${how[@]}" "$1" 2>/dev/null &&
		[ "$tries" -gt 0 ]; do
		sleep 0.2
		tries=$((tries - 1))
	done
	! grep -q "^$1 " /proc/modules
}

# write_to FILE VALUE: for both and on_s, which run commands, not
# redirections.
write_to() { echo "$2" >"$1"; }

# links_add TYPE NAME_S NAME_C: the server's device NAME_S on NET_S and the
# client's NAME_C on NET_C (lib.sh); sets DEV_S and DEV_C. Where both ends
# share a netdev (the loop path), NAME_S is both ends' device and NAME_C is
# not made (siw and rxe refuse a second device on a netdev). On the hosts
# path each host has its own NIC, named alike.
links_add() {
	DEV_S=$2 DEV_C=$3
	link_add "$DEV_S" "$1" "$NET_S" s || return 1
	if [ "$NET_C" = "$NET_S" ] && [ ${#S_REMOTE[@]} -eq 0 ]; then
		DEV_C=$DEV_S
		return 0
	fi
	link_add "$DEV_C" "$1" "$NET_C" c
}

# wait_port_active DEV: the device's port is ACTIVE (up to 10 s).
wait_port_active() {
	local tries=100
	while [ "$tries" -gt 0 ]; do
		rdma link show "$1/1" 2>/dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	echo "bench: $1's port is not ACTIVE" >&2
	return 1
}

# --- siw2 --------------------------------------------------------------------

# siw2_setup CRC [KNOB=VALUE...] [mod:PARAM=VALUE...] [ko:base]
siw2_setup() {
	local crc=$1 kv knob val
	shift
	both modprobe siw2 || return 1
	# ko:base: SIW2_BASE_KO instead, once modprobe has loaded what siw2
	# needs.
	if [[ " $* " = *" ko:base "* ]]; then
		if [ ${#S_REMOTE[@]} -ne 0 ]; then
			echo "bench: no base commit on the hosts path (b does not see the results directory)" >&2
			return 1
		fi
		if [ ! -r "${SIW2_BASE_KO:-}" ]; then
			echo "bench: no siw2.ko of a base commit ('${SIW2_BASE_KO:-}'; scripts/bench --base REF)" >&2
			return 1
		fi
		rmmod siw2 && insmod "$SIW2_BASE_KO" || return 1
	fi
	case $crc in
	on) both siw2_set mpa_crc Y ;;
	off) both siw2_set mpa_crc N ;;
	esac || return 1
	# Module parameters (siw2_teardown unloads the module, which resets
	# them).
	for kv in "$@"; do
		[[ $kv = mod:* ]] || continue
		kv=${kv#mod:} knob=${kv%%=*} val=${kv#*=}
		if [ ! -w "/sys/module/siw2/parameters/$knob" ]; then
			echo "bench: siw2 has no parameter $knob" >&2
			return 1
		fi
		both write_to "/sys/module/siw2/parameters/$knob" "$val" || return 1
	done
	LISTEN_TCP=1
	links_add siw2 siw2_bs siw2_bc || return 1
	# The send engine knob (see BENCH_SYSTEMS): per device, set before
	# any QP exists.
	for kv in "$@"; do
		[[ $kv = mod:* || $kv = ko:* ]] && continue
		knob=${kv%%=*} val=${kv#*=}
		if [ ! -e "/sys/class/infiniband/$DEV_C/siw2/$knob" ]; then
			echo "bench: siw2 has no knob $knob (/sys/class/infiniband/$DEV_C/siw2/$knob)" >&2
			return 1
		fi
		on_s write_to "/sys/class/infiniband/$DEV_S/siw2/$knob" "$val" &&
			write_to "/sys/class/infiniband/$DEV_C/siw2/$knob" "$val" || return 1
	done
	on_s wait_port_active "$DEV_S" && wait_port_active "$DEV_C"
}

siw2_teardown() {
	on_s link_del siw2_bs
	link_del siw2_bc
	[ -w /sys/module/siw2/parameters/mpa_crc ] &&
		both_all siw2_set mpa_crc Y
	# Closing is deferred work: unload waits for it.
	both_all unload siw2
}

# --- upstream siw --------------------------------------------------------------
#
# Upstream siw has no module parameters: its CRC setting is a constant, so
# CRC on is a second build (scripts/upstream-siw --variant crc, which sets
# mpa_crc_required and makes both ends ask for CRC). SIW_KO and SIW_CRC_KO
# are the two modules' paths (run's --siw-ko, --siw-crc-ko).

siw_setup() {
	local ko=$SIW_KO
	[ "$1" = on ] && ko=$SIW_CRC_KO
	if [ -z "$ko" ] || [ ! -r "$ko" ]; then
		echo "bench: no upstream siw.ko for CRC $1 ('$ko'; scripts/upstream-siw builds it)" >&2
		return 1
	fi
	both siw_load "$ko" || return 1
	LISTEN_TCP=1
	links_add siw siw_bs siw_bc || return 1
	on_s wait_port_active "$DEV_S" && wait_port_active "$DEV_C"
}

# siw_load KO: upstream siw's module KO in place of any siw loaded.
siw_load() {
	grep -q '^siw ' /proc/modules && rmmod siw
	modprobe ib_core && modprobe libcrc32c && insmod "$1"
}

siw_teardown() {
	on_s link_del siw_bs
	link_del siw_bc
	both_all unload siw rmmod
}

# --- rxe -----------------------------------------------------------------------

rxe_setup() {
	both modprobe rdma_rxe || return 1
	# shellcheck disable=SC2034 # LISTEN_TCP: read by lib.sh's listening()
	LISTEN_TCP=0
	links_add rxe rxe_bs rxe_bc || return 1
	on_s wait_port_active "$DEV_S" && wait_port_active "$DEV_C"
}

rxe_teardown() {
	on_s link_del rxe_bs
	link_del rxe_bc
	both_all unload rdma_rxe
}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The storage section of siw2's benchmark (tools/testing/bench/run): fio
# over NFSv4.2 and over iSCSI, each carried by siw2 (NFS over RDMA, iSER)
# and by kernel TCP, on the run's veth path (servers on bvs, clients on
# bvc; lib.sh). Sourced, never run.
#
# storage_run REP, once per repetition after the per-system sections:
#   - siw2 devices on bvs and bvc (systems.sh's siw2_setup);
#   - nfsd exporting a tmpfs that holds one ST_MIB MiB file, listening on
#     TCP 2049 and RDMA 20049; mounted vers=4.2 with proto=rdma once per
#     siw2 CRC mode, then with proto=tcp; the fio jobs on that file;
#   - a LIO target, an ST_MIB MiB ramdisk LUN behind one portal on
#     S_ADDR:3260 with iSER enabled (iwpmd maps isert's listener off LIO's
#     TCP port, as in the guest's iser suite); logged into through the
#     iser interface once per CRC mode, then through tcp; the fio jobs on
#     the raw block device;
#   - all of it torn down, siw2 unloaded.
# Both kernel ends live in the first namespace (ib_isert and ib_iser make
# their rdma_cm IDs there only), so the section needs --topology local.
#
# Figures: system siw2 (CRC off, on) or tcp (CRC -), test nfs_JOB or
# iscsi_JOB, size the block size. Metrics: mib_s for the sequential jobs;
# lat_p50_us, lat_p99_us and iops for the random read. The latency is
# fio's total latency, submission to completion: libaio's io_submit does
# much of a transport's work before it returns (fio's slat), so the
# completion latency alone (clat) would leave a transport-dependent part
# out. A transport that cannot be set up gets an error record.

ST_MIB=128
ST_IQN=iqn.2026-11.org.example:siw2-bench
# fio jobs: rw, block size, queue depth.
ST_JOBS=("write 1048576 16" "read 1048576 16" "randread 4096 1")
ST_PIDS=()
ST_ACTIVE=

# st_fio SYS CRC REP PROTO FILE: the fio jobs on FILE, one figure set each.
st_fio() {
	local sys=$1 crc=$2 rep=$3 proto=$4 file=$5 job rw bs qd name out
	local mib p50 p99 iops
	for job in "${ST_JOBS[@]}"; do
		read -r rw bs qd <<<"$job"
		name="storage-$proto-$sys-crc$crc-$rw-r$rep"
		timeout -k 5 $((STORAGE_SECONDS + 120)) fio --name="$rw" \
			--filename="$file" --size="${ST_MIB}M" --rw="$rw" \
			--bs="$bs" --iodepth="$qd" --ioengine=libaio --direct=1 \
			--time_based --runtime="$STORAGE_SECONDS" --lat_percentiles=1 \
			--output-format=json --output="$TMPD/$name.json" \
			>"$TMPD/$name.log" 2>&1
		mkdir -p "$OUT/logs"
		cat "$TMPD/$name.log" "$TMPD/$name.json" >"$OUT/logs/$name.txt" 2>/dev/null
		# MiB/s, p50 and p99 latency (us), IOPS.
		if ! out=$(/usr/bin/python3 - "$TMPD/$name.json" "${rw#rand}" 2>&1 <<'EOF'
import json, sys
t = open(sys.argv[1]).read()
j = json.JSONDecoder().raw_decode(t[t.index("{"):])[0]["jobs"][0]
s = j[sys.argv[2]]
if j.get("error") or not s["io_bytes"]:
    sys.exit("fio error %s, %s bytes" % (j.get("error"), s["io_bytes"]))
p = s["lat_ns"]["percentile"]
print("%.2f %.2f %.2f %.1f" % (s["bw_bytes"] / 1048576.0,
      p["50.000000"] / 1e3, p["99.000000"] / 1e3, s["iops"]))
EOF
		); then
			emit_error "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" \
				"fio: $(tail -n 2 "$TMPD/$name.log" | tr '\n' ' ') $out"
			continue
		fi
		read -r mib p50 p99 iops <<<"$out"
		if [ "$rw" = randread ]; then
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" lat_p50_us "$p50"
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" lat_p99_us "$p99"
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" iops "$iops"
		else
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" mib_s "$mib"
		fi
		log "storage: $proto over $sys (CRC $crc) $rw $bs B QD$qd: $mib MiB/s, p50 $p50 us, p99 $p99 us"
	done
}

# st_error SYS CRC REP PROTO MESSAGE: one error record per job.
st_error() {
	local job rw bs
	for job in "${ST_JOBS[@]}"; do
		read -r rw bs _ <<<"$job"
		emit_error "$1" "$2" "${4}_$rw" "$bs" "$3" "$5"
	done
}

st_crc() {
	case $1 in
	on) siw2_set mpa_crc Y ;;
	off) siw2_set mpa_crc N ;;
	esac
}

# st_daemon NAME ARG...: starts a daemon that forks, remembers its pid.
st_daemon() {
	local pid
	"$@" || return 1
	pid=$(pgrep -nx "${1##*/}") || return 1
	ST_PIDS+=("$pid")
}

# --- NFS ---------------------------------------------------------------------

st_nfs_start() {
	mkdir -p "$TMPD/export" "$TMPD/mnt" /var/lib/nfs/v4recovery &&
	mount -t tmpfs -o size=$((ST_MIB + 32))m tmpfs "$TMPD/export" &&
	head -c $((ST_MIB << 20)) /dev/zero >"$TMPD/export/fio.dat" &&
	{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
	echo "$TMPD/export ${S_ADDR%.*}.0/24(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" \
		>/etc/exports &&
	st_daemon rpcbind -w &&
	exportfs -ra &&
	st_daemon rpc.mountd --no-udp &&
	rpc.nfsd --no-udp --grace-time 10 --lease-time 10 4 &&
	echo "rdma 20049" >/proc/fs/nfsd/portlist &&
	# NFSv4 opens wait for the end of the grace period.
	sleep 11
}

st_nfs_stop() {
	umount "$TMPD/mnt" 2>/dev/null || umount -l "$TMPD/mnt" 2>/dev/null
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	mountpoint -q /proc/fs/nfsd && umount /proc/fs/nfsd
	mountpoint -q "$TMPD/export" && umount "$TMPD/export"
	: >/etc/exports
}

# st_nfs SYS CRC REP PROTO(rdma|tcp)
st_nfs() {
	local sys=$1 crc=$2 rep=$3 proto=$4 port=2049 out
	[ "$proto" = rdma ] && port=20049
	if ! out=$(timeout 120 mount -t nfs -o "vers=4.2,proto=$proto,port=$port" \
		"$S_ADDR:/" "$TMPD/mnt" 2>&1); then
		st_error "$sys" "$crc" "$rep" nfs "mount proto=$proto: $out"
		return
	fi
	out=$(grep " $TMPD/mnt " /proc/mounts)
	log "storage: mounted: ${out#* }"
	if echo "$out" | grep -q "proto=$proto,"; then
		st_fio "$sys" "$crc" "$rep" nfs "$TMPD/mnt/fio.dat"
	else
		st_error "$sys" "$crc" "$rep" nfs "not mounted with proto=$proto: $out"
	fi
	timeout 60 umount "$TMPD/mnt" ||
		emit_error "$sys" "$crc" nfs_umount 0 "$rep" "umount failed"
}

# --- iSCSI ---------------------------------------------------------------------

# The LIO target: tools/testing/guest/lio.sh.
st_target_start() {
	{ mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config; } &&
	lio_start "$ST_IQN" "$S_ADDR" "$ST_MIB" bench
}

st_target_stop() { lio_stop "$ST_IQN" "$S_ADDR" bench; }

st_iscsi_logout() {
	timeout 60 iscsiadm -m node -T "$ST_IQN" -p "$S_ADDR:3260" -u >/dev/null 2>&1
	timeout 30 iscsiadm -m node -o delete >/dev/null 2>&1
	local tries=200
	while iscsiadm -m session >/dev/null 2>&1 && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ $tries -gt 0 ]
}

# st_iscsi SYS CRC REP IFACE(iser|default)
st_iscsi() {
	local sys=$1 crc=$2 rep=$3 iface=$4 tr=tcp out dev tries=300
	[ "$iface" = iser ] && tr=iser
	if ! out=$(timeout 60 iscsiadm -m discovery -t st -p "$S_ADDR:3260" -I "$iface" 2>&1 &&
		timeout 120 iscsiadm -m node -T "$ST_IQN" -p "$S_ADDR:3260" -I "$iface" --login 2>&1); then
		st_error "$sys" "$crc" "$rep" iscsi "login through $iface: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		st_iscsi_logout
		return
	fi
	while { [ -z "$(lio_lun)" ] || [ ! -b "/dev/$(lio_lun)" ]; } && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	dev=$(lio_lun)
	if ! iscsiadm -m session 2>/dev/null | grep -q "^$tr: .*$S_ADDR:3260"; then
		st_error "$sys" "$crc" "$rep" iscsi "no $tr session: $(iscsiadm -m session 2>&1 | tr '\n' ' ')"
	elif [ -z "$dev" ] || [ ! -b "/dev/$dev" ]; then
		st_error "$sys" "$crc" "$rep" iscsi "no block device for the LUN after login"
	else
		st_fio "$sys" "$crc" "$rep" iscsi "/dev/$dev"
	fi
	st_iscsi_logout ||
		emit_error "$sys" "$crc" iscsi_logout 0 "$rep" "the session did not go away"
}

# --- the section -------------------------------------------------------------------

# st_teardown: undoes whatever storage_run set up; quiet, idempotent (run's
# exit trap calls it too).
st_teardown() {
	local pid
	[ -n "$ST_ACTIVE" ] || return 0
	st_nfs_stop
	st_iscsi_logout
	st_target_stop
	for pid in "${ST_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	ST_PIDS=()
	modprobe -r ib_iser ib_isert rpcrdma 2>/dev/null
	siw2_teardown
	ST_ACTIVE=
}

# st_why: the last lines of a step's output, on one line.
st_why() { tail -n 3 "$TMPD/storage.log" | tr '\n' ' '; }

# storage_run REP TOPOLOGY CRC...: the section, siw2 with each CRC mode,
# then TCP.
# State-changing steps run in this shell (ST_PIDS), their output to a log.
storage_run() {
	local rep=$1 crc t0=$SECONDS tool rdma=1 why=
	local slog=$TMPD/storage.log
	shift
	log "=== storage, repetition $rep/$REPS"
	[ "$1" = local ] ||
		why="the storage section needs --topology local"
	for tool in fio iscsiadm iscsid iwpmd rpc.nfsd rpc.mountd rpcbind exportfs mount.nfs; do
		[ -z "$why" ] && ! command -v $tool >/dev/null && why="no $tool in the guest"
	done
	# LIO keeps its configuration database there.
	mkdir -p /etc/target
	[ -z "$why" ] && ! modprobe -a nfsd rpcrdma ib_isert ib_iser sd_mod >"$slog" 2>&1 &&
		why="modprobe: $(st_why)"
	if [ -n "$why" ]; then
		st_error siw2 - "$rep" nfs "$why"
		st_error siw2 - "$rep" iscsi "$why"
		return
	fi
	shift
	ST_ACTIVE=1
	if ! siw2_setup "$1" >"$slog" 2>&1; then
		emit_error siw2 "$1" storage_setup 0 "$rep" "siw2 setup failed: $(st_why)"
		rdma=0
	fi

	if st_nfs_start >"$slog" 2>&1; then
		if [ $rdma = 1 ]; then
			for crc; do
				st_crc "$crc"
				st_nfs siw2 "$crc" "$rep" rdma
			done
		fi
		st_nfs tcp - "$rep" tcp
	else
		st_error tcp - "$rep" nfs "nfsd setup: $(st_why)"
	fi
	st_nfs_stop

	# iSER needs iwpmd and port mapping on both devices before isert
	# listens (see the guest's iser suite).
	mkdir -p /run/lock/iscsi
	if [ $rdma = 1 ] && ! { st_daemon iwpmd &&
		echo 1 >/sys/class/infiniband/siw2_bs/siw2/port_map &&
		echo 1 >/sys/class/infiniband/siw2_bc/siw2/port_map; } >"$slog" 2>&1; then
		emit_error siw2 - storage_setup 0 "$rep" "iwpmd or port_map: $(st_why)"
		rdma=0
	fi
	if { st_target_start && st_daemon iscsid; } >"$slog" 2>&1; then
		if [ $rdma = 1 ]; then
			for crc; do
				st_crc "$crc"
				st_iscsi siw2 "$crc" "$rep" iser
			done
		fi
		st_iscsi tcp - "$rep" default
	else
		st_error tcp - "$rep" iscsi "target or iscsid setup: $(st_why)"
	fi

	st_teardown >"$slog" 2>&1
	if [ -d "$LIO_CT/iscsi/$ST_IQN" ] || grep -q " $TMPD/" /proc/mounts ||
		grep -q '^siw2 ' /proc/modules; then
		emit_error storage - teardown 0 "$rep" "teardown left something: $(st_why)"
	fi
	log "storage: $((SECONDS - t0)) s"
}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The LIO iSCSI target through configfs, as targetcli would write it
# (targetcli-fb wants a D-Bus the guests do not have): one ramdisk LUN
# behind one portal with iSER enabled, open to any initiator. Used by the
# iser suite and by the benchmark's storage section.

LIO_CT=/sys/kernel/config/target

# lio_start IQN ADDR MIB NAME: ramdisk NAME of MIB MiB as LUN 0 of IQN's
# TPG 1, behind a portal on ADDR:3260 with iSER enabled.
lio_start() {
	local iqn=$1 addr=$2 mib=$3 name=$4
	local rd=$LIO_CT/core/rd_mcp_0/$name tpg=$LIO_CT/iscsi/$iqn/tpgt_1
	mkdir -p /etc/target "$rd" &&
	echo "rd_pages=$((mib << 8))" >"$rd/control" &&
	echo 1 >"$rd/enable" &&
	mkdir -p "$tpg/lun/lun_0" &&
	ln -s "$rd" "$tpg/lun/lun_0/$name" &&
	mkdir "$tpg/np/$addr:3260" &&
	echo 1 >"$tpg/np/$addr:3260/iser" &&
	echo 0 >"$tpg/attrib/authentication" &&
	echo 1 >"$tpg/attrib/generate_node_acls" &&
	echo 1 >"$tpg/attrib/cache_dynamic_acls" &&
	echo 0 >"$tpg/attrib/demo_mode_write_protect" &&
	echo 1 >"$tpg/enable"
}

# lio_stop IQN ADDR NAME: undoes lio_start; fails if something is left.
lio_stop() {
	local iqn=$1 addr=$2 name=$3
	local rd=$LIO_CT/core/rd_mcp_0/$name tpg=$LIO_CT/iscsi/$iqn/tpgt_1
	[ -d "$tpg" ] && echo 0 >"$tpg/enable"
	[ -d "$tpg/np/$addr:3260" ] && echo 0 >"$tpg/np/$addr:3260/iser"
	rmdir "$tpg/np/$addr:3260" 2>/dev/null
	rm -f "$tpg/lun/lun_0/$name"
	rmdir "$tpg/lun/lun_0" "$tpg" "$LIO_CT/iscsi/$iqn" "$rd" \
		"$LIO_CT/core/rd_mcp_0" 2>/dev/null
	[ ! -d "$LIO_CT/iscsi/$iqn" ] && [ ! -d "$rd" ]
}

# lio_lun: the block device of the initiator's one session, e.g. sdb.
lio_lun() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && basename "$b" && return
	done
}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# siw2's settings as the guest suites (lib.sh) and the benchmark
# (bench/run) change them. Sourced, never run.

# siw2_set NAME VALUE: the siw2 setting NAME of every siw2 device there
# is and, as the module parameter, of the devices made after (conf.c).
siw2_set() {
	local d
	echo "$2" >"/sys/module/siw2/parameters/$1" || return
	for d in /sys/class/infiniband/*/siw2; do
		[ -e "$d/$1" ] || continue
		echo "$2" >"$d/$1" || return
	done
}

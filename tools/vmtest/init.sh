#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make vmtest's guest init (POSIX sh: busybox sh in the initramfs, the host's sh after).
#
# Stage 1, PID 1 in the initramfs (busybox): loads the 9p modules, mounts the host's root file
# system (9p "hostroot", read-only) as the new root, the checkout (9p "checkout", read-write)
# at its own path, proc, sysfs, devtmpfs, devpts, /dev/shm, cgroup2, bpffs, tracefs, debugfs,
# fresh tmpfs on /tmp, /run, /var/tmp, /var/log and /var/cache, and the kernel package's
# modules on /lib/modules/<kver>; brings lo up; then switch_root runs stage 2 with the new root.
#
# Stage 2, PID 1 in the host's root: runs the command script (written by vmtest.sh in the run
# directory) with bash in its own session, output to the second serial port (ttyS1, the
# host's terminal), prints VMTEST_EXIT=<status> there and on the console, powers off.
#
# Parameters come from the kernel command line: vmtest.src=<checkout>, vmtest.run=<run dir>,
# vmtest.kdir=<unpacked kernel package>, vmtest.probe=1 (power off at once: accelerator probe).

OUT=/dev/ttyS1
MSIZE=524288

log() { echo "vmtest-init: $*" >/dev/console; }

# The value of vmtest.$1= on the kernel command line.
param() {
	read -r cmdline </proc/cmdline
	for w in $cmdline; do
		case $w in "vmtest.$1="*) echo "${w#*=}" ;; esac
	done
}

power_off() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
	exit 1	# PID 1 exits: panic=-1 reboots, qemu -no-reboot exits
}

# Mounts $3 on $4 as type $1 with options $2; a failure is logged, not fatal.
try_mount() {
	mkdir -p "$4" 2>/dev/null
	mount -t "$1" -o "$2" "$3" "$4" || log "mount $1 on $4 failed"
}

# Loads the initramfs's modules in the order mkinitramfs.sh resolved from modules.dep.
load_modules() {
	[ -f /modules/order ] || return 0
	while read -r m; do
		insmod "/modules/$m" || log "insmod $m failed"
	done </modules/order
}

stage1() {
	/bin/busybox --install -s /bin
	export PATH=/bin
	mkdir -p /proc /sys /dev /newroot
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	if [ "$(param probe)" = 1 ]; then
		echo VMTEST_PROBE_OK >/dev/console
		power_off
	fi
	load_modules
	src=$(param src)
	kdir=$(param kdir)
	kver=$(uname -r)

	# The host's root, read-only, as the new root: no overlay, whose files would show another
	# st_dev than the 9p inodes the kernel maps (bpfprof checks a mapped file's device and
	# inode when it opens it by path: replays, late drains). Writable: tmpfs on /tmp, /run,
	# /var/tmp, /var/log, /var/cache and /lib/modules below; HOME is under /tmp.
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=$MSIZE,cache=loose hostroot \
		/newroot || { log "cannot mount the host's root"; power_off; }

	for d in proc sys dev; do
		mount --move "/$d" "/newroot/$d"
	done
	r=/newroot
	try_mount devpts gid=5,mode=620,ptmxmode=666 devpts $r/dev/pts
	try_mount tmpfs mode=1777 tmpfs $r/dev/shm
	try_mount tmpfs mode=1777 tmpfs $r/tmp
	try_mount tmpfs mode=755 tmpfs $r/run
	try_mount tmpfs mode=1777 tmpfs $r/var/tmp
	try_mount tmpfs mode=755 tmpfs $r/var/log
	try_mount tmpfs mode=755 tmpfs $r/var/cache
	try_mount cgroup2 nsdelegate cgroup2 $r/sys/fs/cgroup
	try_mount bpf mode=700 bpf $r/sys/fs/bpf
	try_mount debugfs mode=700 debugfs $r/sys/kernel/debug
	try_mount tracefs mode=700 tracefs $r/sys/kernel/tracing
	[ -e $r/dev/fd ] || ln -s /proc/self/fd $r/dev/fd
	# The checkout, read-write, at the same path as on the host: after the tmpfs mounts, as
	# it may lie below one of them (a clone in /tmp).
	mkdir -p "$r$src" 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=$MSIZE,cache=mmap,access=client \
		checkout "$r$src" || { log "cannot mount the checkout on $src"; power_off; }
	# The kernel package's modules, for modprobe (veth, ...), where the host has a
	# /lib/modules to mount them on (its root is read-only here; this VM's has none).
	if [ -d "$r$kdir/lib/modules/$kver" ] && [ -d "$r/lib/modules" ]; then
		try_mount tmpfs mode=755 tmpfs $r/lib/modules
		mkdir -p "$r/lib/modules/$kver"
		mount --bind "$r$kdir/lib/modules/$kver" "$r/lib/modules/$kver" ||
			log "cannot bind the modules"
	fi
	hostname vmtest
	ip link set lo up
	# Raw: no CR before each LF on the way to the host's terminal.
	stty -F $OUT raw -echo 2>/dev/null

	cp /init $r/run/vmtest-init
	exec switch_root /newroot /bin/sh /run/vmtest-init stage2
}

stage2() {
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	run=$(param run)
	read -r up _ </proc/uptime
	echo "vmtest: $(uname -r) up in ${up}s" >$OUT
	# The guest's clock from the RTC lags the host's by up to a second or more (make's
	# "clock skew detected"): take the host's from the time stamp of a file made in the
	# checkout share.
	if touch "$run/clock" 2>/dev/null; then
		date -s "@$(date -r "$run/clock" +%s.%N)" >/dev/null
		rm -f "$run/clock"
	fi
	status=125
	if [ -f "$run/cmd" ]; then
		setsid -w env -i /bin/bash "$run/cmd" </dev/null >$OUT 2>&1
		status=$?
	else
		echo "vmtest: no $run/cmd" >$OUT
	fi
	echo "VMTEST_EXIT=$status" >$OUT
	echo "VMTEST_EXIT=$status" >/dev/console
	power_off
}

case ${1:-} in
stage2) stage2 ;;
*) stage1 ;;
esac

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make vmtest: boots a Debian kernel package under qemu and runs a command in it as root.
#
#   tools/vmtest/vmtest.sh KERNEL [COMMAND]
#
# KERNEL: 6.1, 6.12, 5.10, 7.2 (sid) or a linux-image-*.deb (fetch-kernel.sh). COMMAND (bash,
# default: a smoke test) runs in the checkout (the current directory) as root; the script exits
# with its status, or 125 when the guest gave none (panic, timeout: the console's last 50 lines
# are printed) or the kernel could not be fetched, 124 when the emulator lost the guest: it hung
# (VMTEST_IDLE_TIMEOUT) or TCG ran stale code (emulator_fault); its console is kept in
# VMTEST_DIR/lost-<kver>.<time>.log. 123: no kernel of sid's series to boot (sid's could not
# be fetched and none is cached: fetch-kernel.sh), nothing run.
# The guest's root is this machine's root file system (9p, read-only; tmpfs on /tmp, /run,
# /var/{tmp,log,cache}) and the checkout is shared read-write at the same path, so the host's
# build runs unchanged inside. The command's output streams here (second serial port); the
# kernel's console goes to VMTEST_DIR/<kver>/console.log, the output to
# VMTEST_DIR/<kver>/output.log.
#
# Environment: VMTEST_DIR (build/vmtest), VMTEST_TIMEOUT (3600 s), VMTEST_IDLE_TIMEOUT (0: off; else
# the seconds without output after which the guest is taken as hung: its kernel is asked for
# every CPU's backtrace and blocked task, then it is powered off), VMTEST_ACCEL (tcg or kvm;
# default: kvm only if a probe boot works), VMTEST_TCG_THREAD (multi or single: TCG's vCPUs
# in threads of their own or in one), VMTEST_MEM (4G), VMTEST_SMP (2), VMTEST_APPEND
# (more kernel parameters), VMTEST_HEADERS (1: the kernel's headers too, for bcc's tools:
# BCC_KERNEL_SOURCE in the command's environment), VMTEST_ENV (names of variables passed to
# the command besides CI),
# VMTEST_9P_MODEL (the checkout share's qemu security_model: passthrough, the default, keeps
# owners and modes as they are on the host but cannot make FIFOs or device nodes, which
# qemu >= 7.2.4 refuses (CVE-2023-2861); mapped-xattr can, as regular files with the mode in
# an xattr, but the host then sees new files as mode 0600).
# The command sees VMTEST_OUT (VMTEST_DIR/<kver>) and VMTEST_KDIR (the unpacked package).
set -euo pipefail

HERE=$(dirname "$(realpath "$0")")
SMOKE='uname -r; ls -la /sys/kernel/btf/vmlinux; build/bpfprof --version'

log() { echo "vmtest: $*" >&2; }
die() { log "$*"; exit 125; }

# KVM when a 30 s probe boot reaches the initramfs and powers off; the result is kept in
# $VMTEST_DIR/accel (delete it to probe again).
pick_accel() {
	if [ -n "${VMTEST_ACCEL:-}" ]; then
		echo "$VMTEST_ACCEL"
		return
	fi
	local cache=$VMTEST_DIR/accel
	if [ ! -s "$cache" ]; then
		local accel=tcg
		if [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
			timeout 30 qemu-system-x86_64 -accel kvm -cpu host -m 256M -display none \
				-monitor none -serial stdio -no-reboot -kernel "$VMLINUZ" -initrd "$INITRD" \
				-append 'console=ttyS0 panic=-1 vmtest.probe=1' </dev/null 2>&1 |
			grep -aq VMTEST_PROBE_OK; then
			accel=kvm
		fi
		echo "$accel" >"$cache"
		log "accelerator probe: $accel (cached in $cache)"
	fi
	cat "$cache"
}

# The command script the guest runs with bash (env -i): environment, cd, the command.
write_cmd() {
	local cmd=$1 file=$2 v
	{
		echo '#!/bin/bash'
		echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
		# HOME on tmpfs: the root file system is the host's, read-only.
		echo 'export HOME=/tmp/home TERM=dumb LANG=C.UTF-8 USER=root LOGNAME=root SHELL=/bin/bash'
		echo 'mkdir -p "$HOME"'
		# VMTEST_ACCEL: tests relax what emulation makes meaningless (tests/lib.sh emulated).
		printf 'export VMTEST_KDIR=%q VMTEST_OUT=%q VMTEST_ACCEL=%q\n' "$KDIR" "$KOUT" "$ACCEL"
		# The kernel's headers (VMTEST_HEADERS=1), where bcc's tools look for them.
		if [ "${VMTEST_HEADERS:-0}" = 1 ]; then
			printf 'export BCC_KERNEL_SOURCE=%q\n' "$KOUT/headers"
		fi
		for v in CI ${VMTEST_ENV:-}; do
			if [ -n "${!v+set}" ]; then printf 'export %s=%q\n' "$v" "${!v}"; fi
		done
		printf 'cd %q || exit 125\n' "$SRC"
		printf '%s\n' "$cmd"
	} >"$file"
}

# monitor SOCKET COMMAND: one human monitor command to the running qemu (best effort).
monitor() {
	echo "$2" | socat - "UNIX-CONNECT:$1" >/dev/null 2>&1 || true
}

# Takes the guest as hung once output.log stops growing for $1 seconds: the kernel's console
# gets sysrq-l (a backtrace of every CPU), sysrq-w (blocked tasks) and then an NMI (a panic
# with the backtrace of a CPU that takes no interrupts: unknown_nmi_panic), then qemu quits.
# Lines the kernel printed that say why stream to stderr as they come (watch_console).
watch_idle() {
	local idle=$1 sock=$2 file=$3 size last=-1 still=0 key

	while sleep 10; do
		size=$(stat -c %s "$file" 2>/dev/null) || return 0
		if [ "$size" != "$last" ]; then
			last=$size
			still=0
			continue
		fi
		still=$((still + 10))
		[ "$still" -ge "$idle" ] || continue
		log "no output from the guest for $idle s (VMTEST_IDLE_TIMEOUT): taken as hung;" \
			"asking its kernel for backtraces, then powering it off" 2>&3
		touch "$MON/hung"
		for key in l w; do
			monitor "$sock" "sendkey alt-sysrq-$key"
			sleep 10
		done
		monitor "$sock" nmi
		sleep 20
		monitor "$sock" quit
		return 0
	done
}

# Streams the kernel console's warnings and their backtraces to stderr, as they come: a CI
# run that is cut short still shows why the guest stopped.
watch_console() {
	tail -n +1 -F "$1" 2>/dev/null | grep -a --line-buffered -E -A 40 \
		'BUG:|WARNING:|Oops|Kernel panic|soft lockup|hard LOCKUP|rcu: INFO|blocked for more than|NMI backtrace|sysrq: Show' |
		sed -u 's/^/vmtest console: /' >&3
}

# Ends the watchers and what they started (tail, grep, sleep): after qemu, and at any exit.
WATCHERS=()
stop_watchers() {
	[ ${#WATCHERS[@]} -gt 0 ] || return 0
	pkill -P "$(printf '%s,' "${WATCHERS[@]}" | sed 's/,$//')" 2>/dev/null || true
	kill "${WATCHERS[@]}" 2>/dev/null || true
	wait "${WATCHERS[@]}" 2>/dev/null || true
	WATCHERS=()
}

# Runs qemu; its first serial port (kernel console) goes to console.log, the second (the
# command's output) to stdout and output.log.
run_qemu() {
	local accel=$1 cpu=max threads='' model=${VMTEST_9P_MODEL:-passthrough}
	[ "$accel" = kvm ] && cpu=host
	[ "$accel" = tcg ] && threads=,thread=${VMTEST_TCG_THREAD:-multi}
	# init_on_alloc=0: Debian's kernels zero every allocation, and 9p allocates two msize
	# (512 KiB) buffers per request: under TCG that zeroing made a program's exec and
	# ld.so 10-16% of a 2 s run's samples on 5.10 (docs/vmtest.md, Limits).
	local append="console=ttyS0 panic=-1 oops=panic mitigations=off random.trust_cpu=on"
	append+=" init_on_alloc=0"
	# For watch_idle: sysrq from the monitor's keyboard; under TCG (no PMU NMIs that could be
	# taken for unknown ones) a panic on its NMI.
	append+=" sysrq_always_enabled"
	[ "$accel" = tcg ] && append+=" unknown_nmi_panic=1"
	append+=" tsc=reliable no_timer_check vmtest.src=$SRC vmtest.run=$RUN vmtest.kdir=$KDIR"
	append+=" ${VMTEST_APPEND:-}"
	local qemu=(
		timeout -k 10 "${VMTEST_TIMEOUT:-3600}"
		qemu-system-x86_64 -accel "$accel$threads" -cpu "$cpu"
		-m "${VMTEST_MEM:-4G}" -smp "${VMTEST_SMP:-2}"
		-nodefaults -no-reboot -display none -monitor "unix:$MON/monitor,server=on,wait=off"
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$append"
		-chardev "file,id=console,path=$KOUT/console.log" -serial chardev:console
		-chardev 'stdio,id=out,signal=off' -serial chardev:out
		-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
		-device 'virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot'
		-fsdev "local,id=checkout,path=$SRC,security_model=$model,multidevs=remap"
		-device 'virtio-9p-pci,fsdev=checkout,mount_tag=checkout'
	)
	: >"$KOUT/output.log"
	: >"$KOUT/console.log"
	local rc=0
	# Their messages on fd 3; stderr is closed to the notices of their end ("Terminated").
	watch_console "$KOUT/console.log" 3>&2 2>/dev/null &
	WATCHERS+=($!)
	if [ "${VMTEST_IDLE_TIMEOUT:-0}" -gt 0 ]; then
		watch_idle "$VMTEST_IDLE_TIMEOUT" "$MON/monitor" "$KOUT/output.log" 3>&2 2>/dev/null &
		WATCHERS+=($!)
	fi
	"${qemu[@]}" </dev/null | tee "$KOUT/output.log" || rc=${PIPESTATUS[0]}
	sleep 1 # the console's last lines through watch_console
	stop_watchers
	case $rc in
	0) ;;
	124 | 137) log "timed out after ${VMTEST_TIMEOUT:-3600} s (VMTEST_TIMEOUT)" ;;
	*) log "qemu exited with status $rc" ;;
	esac
}

# True when the console holds an oops of an int3 that is no longer in the kernel's text:
# "int3: 0000 [#1]" ("Oops: int3" from 6.9), whose kernel RIP line ("RIP: 0010:") is followed
# by a Code: line that shows the byte before <RIP> (where the int3 was) as anything but cc.
# text_poke_bp had finished patching that site and dropped its int3 handler, and a vCPU still
# ran its old translation: multi-threaded TCG's cross-modifying code (docs/vmtest.md, Limits),
# not the kernel's or bpfprof's doing. Seen twice in 6.12 guests, as an attach flipped a
# tracepoint's static branch. With one TCG thread (VMTEST_TCG_THREAD=single) or KVM it cannot
# happen, and such an oops is the kernel's.
emulator_fault() {
	[ "$ACCEL" = tcg ] && [ "${VMTEST_TCG_THREAD:-multi}" = multi ] || return 1
	awk '
	/int3: [0-9a-f]+ \[#1\]/ { oops = 1; next }
	oops && /RIP: 0010:/ { rip = NR; next }
	rip {
		if (NR == rip + 1 && /Code: /)
			for (i = 2; i <= NF; i++)
				if ($i ~ /^<[0-9a-f][0-9a-f]>$/) { stale = $(i - 1) != "cc"; break }
		exit
	}
	END { exit !stale }' "$1"
}

# The guest's exit status from its VMTEST_EXIT= line, or nothing.
guest_status() {
	sed -n 's/^VMTEST_EXIT=\([0-9]*\)\r*$/\1/p' "$KOUT/output.log" | tail -n 1
}

main() {
	[ $# -ge 1 ] || die "usage: $0 KERNEL [COMMAND]"
	local kernel=$1 cmd=${2:-$SMOKE} kver accel status start
	start=$EPOCHREALTIME
	VMTEST_DIR=$(realpath -m "${VMTEST_DIR:-build/vmtest}")
	SRC=$(pwd -P)
	"$HERE/install-deps.sh"
	kver=$("$HERE/fetch-kernel.sh" "$kernel" "$VMTEST_DIR") || status=$?
	if [ "${status:-0}" -eq 3 ]; then
		log "no $kernel kernel to boot: sid's could not be fetched and none is cached"
		exit 123
	fi
	[ "${status:-0}" -eq 0 ] || exit 125
	KOUT=$VMTEST_DIR/$kver
	KDIR=$KOUT/root
	VMLINUZ=$KDIR/boot/vmlinuz-$kver
	INITRD=$KOUT/initramfs.cpio.gz
	"$HERE/mkinitramfs.sh" "$KDIR" "$kver" "$INITRD"
	accel=$(pick_accel)
	ACCEL=$accel
	RUN=$(mktemp -d "$KOUT/run.XXXXXX")
	# The monitor's socket: a short path (sun_path is 108 bytes; the checkout's may be long).
	MON=$(mktemp -d /tmp/vmtest-mon.XXXXXX)
	trap 'stop_watchers; rm -rf "$RUN" "$MON"' EXIT
	write_cmd "$cmd" "$RUN/cmd"
	log "booting $kver ($accel), console: $KOUT/console.log"
	run_qemu "$accel"
	status=$(guest_status)
	log "$kver: exit status ${status:-none}, $(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $start }") s in all"
	local lost='' lost_log
	if [ -z "$status" ] && [ -e "$MON/hung" ]; then
		lost='the guest hung (VMTEST_IDLE_TIMEOUT)'
	elif [ -z "$status" ] && emulator_fault "$KOUT/console.log"; then
		lost='the emulator ran a stale int3 (TCG cross-modifying code, docs/vmtest.md)'
	fi
	if [ -n "$lost" ]; then
		lost_log=$VMTEST_DIR/lost-$kver.$(date -u +%H%M%S).log
		cp "$KOUT/console.log" "$lost_log"
		log "$lost; console kept in $lost_log; its last 50 lines:"
		tail -n 50 "$KOUT/console.log" >&2
		exit 124
	fi
	if [ -z "$status" ]; then
		log "no exit status from the guest (panic or timeout); console's last 50 lines:"
		tail -n 50 "$KOUT/console.log" >&2
		exit 125
	fi
	exit "$status"
}

main "$@"

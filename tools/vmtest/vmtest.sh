#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make vmtest: boots a Debian kernel package under qemu and runs a command in it as root.
#
#   tools/vmtest/vmtest.sh KERNEL [COMMAND]
#
# KERNEL: 6.1, 6.12, 5.10 or a linux-image-*.deb (fetch-kernel.sh). COMMAND (bash, default:
# a smoke test) runs in the checkout (the current directory) as root; the script exits with
# its status, or 125 when the guest gave none (panic, timeout: the console's last 50 lines are
# printed). The guest's root is this machine's root file system (9p, read-only; tmpfs on /tmp,
# /run, /var/{tmp,log,cache}) and the checkout is shared read-write at the same path, so the
# host's build runs unchanged inside. The command's output streams here (second serial port); the kernel's
# console goes to VMTEST_DIR/<kver>/console.log, the output to VMTEST_DIR/<kver>/output.log.
#
# Environment: VMTEST_DIR (build/vmtest), VMTEST_TIMEOUT (3600 s), VMTEST_ACCEL (tcg or kvm;
# default: kvm only if a probe boot works), VMTEST_TCG_THREAD (multi or single: TCG's vCPUs
# in threads of their own or in one), VMTEST_MEM (4G), VMTEST_SMP (2), VMTEST_APPEND
# (more kernel parameters), VMTEST_ENV (names of variables passed to the command besides CI),
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
		for v in CI ${VMTEST_ENV:-}; do
			if [ -n "${!v+set}" ]; then printf 'export %s=%q\n' "$v" "${!v}"; fi
		done
		printf 'cd %q || exit 125\n' "$SRC"
		printf '%s\n' "$cmd"
	} >"$file"
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
	append+=" tsc=reliable no_timer_check vmtest.src=$SRC vmtest.run=$RUN vmtest.kdir=$KDIR"
	append+=" ${VMTEST_APPEND:-}"
	local qemu=(
		timeout -k 10 "${VMTEST_TIMEOUT:-3600}"
		qemu-system-x86_64 -accel "$accel$threads" -cpu "$cpu"
		-m "${VMTEST_MEM:-4G}" -smp "${VMTEST_SMP:-2}"
		-nodefaults -no-reboot -display none -monitor none
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$append"
		-chardev "file,id=console,path=$KOUT/console.log" -serial chardev:console
		-chardev 'stdio,id=out,signal=off' -serial chardev:out
		-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
		-device 'virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot'
		-fsdev "local,id=checkout,path=$SRC,security_model=$model,multidevs=remap"
		-device 'virtio-9p-pci,fsdev=checkout,mount_tag=checkout'
	)
	: >"$KOUT/output.log"
	local rc=0
	"${qemu[@]}" </dev/null | tee "$KOUT/output.log" || rc=${PIPESTATUS[0]}
	case $rc in
	0) ;;
	124 | 137) log "timed out after ${VMTEST_TIMEOUT:-3600} s (VMTEST_TIMEOUT)" ;;
	*) log "qemu exited with status $rc" ;;
	esac
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
	kver=$("$HERE/fetch-kernel.sh" "$kernel" "$VMTEST_DIR")
	KOUT=$VMTEST_DIR/$kver
	KDIR=$KOUT/root
	VMLINUZ=$KDIR/boot/vmlinuz-$kver
	INITRD=$KOUT/initramfs.cpio.gz
	"$HERE/mkinitramfs.sh" "$KDIR" "$kver" "$INITRD"
	accel=$(pick_accel)
	ACCEL=$accel
	RUN=$(mktemp -d "$KOUT/run.XXXXXX")
	trap 'rm -rf "$RUN"' EXIT
	write_cmd "$cmd" "$RUN/cmd"
	log "booting $kver ($accel), console: $KOUT/console.log"
	run_qemu "$accel"
	status=$(guest_status)
	log "$kver: exit status ${status:-none}, $(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $start }") s in all"
	if [ -z "$status" ]; then
		log "no exit status from the guest (panic or timeout); console's last 50 lines:"
		tail -n 50 "$KOUT/console.log" >&2
		exit 125
	fi
	exit "$status"
}

main "$@"

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs what `make vmtest` needs on Debian 12 (run as root): qemu, the initramfs tools.
# Each package is explained in docs/dependencies.md. Quiet when everything is there.
set -euo pipefail

pkgs=(
	qemu-system-x86		# qemu-system-x86_64 with virtfs (9p): boots the test kernels
	busybox-static		# the initramfs's only program (sh, insmod, mount, switch_root)
	cpio			# packs the initramfs
	xz-utils		# unpacks .ko.xz modules (busybox insmod loads plain .ko only)
	zstd			# unpacks .ko.zst modules, and 7.x kernels (zstd bzImage: kernel-btf.sh)
	kmod			# depmod (the packages leave modules.dep to their postinst); modprobe
				# in the guest (it runs the host's programs), e.g. veth
	socat			# talks to qemu's monitor socket (a hung guest's backtraces, power off)
	apt			# the kernel packages are fetched with apt-get through a private state
	debian-archive-keyring	# verifies bookworm, bookworm-backports, bullseye-security and sid
)

exec "$(dirname "$0")/../install-deps.sh" "${pkgs[@]}"

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs what bpfprof's build, tests and demo need on Debian 12 and 13 (run as root).
# Each package is explained in docs/dependencies.md. Quiet when everything is there.
#   tools/install-deps.sh [PKG...]: those packages instead of the list below
#   (tools/vmtest/install-deps.sh gives make vmtest's).
# Packages are named as every release has them, not by one release's versions: the release's
# defaults (default-jdk-headless, python3, clang); a name with %CLANG% gets the major version of
# the release's default clang (libclang-rt-%CLANG%-dev: 14 on Debian 12, 19 on Debian 13).
set -eu

pkgs=(
	make gcc g++ pkg-config	# build (g++: the C++ test program)
	clang llvm		# BPF objects (clang -target bpf), llvm-strip
	libclang-rt-dev		# make fuzz: libFuzzer, ASan, UBSan of the default clang
	clang-format		# make format (.clang-format)
	bpftool			# skeleton generation
	libbpf-dev		# BPF loader (1.1.2)
	libelf-dev libdw-dev	# ELF files, DWARF CFI unwinding (elfutils 0.188)
	zlib1g-dev		# libdw's compressed sections
	uthash-dev		# hash tables
	libiberty-dev		# C++ and Rust demangling
	rustc			# tests: a Rust program (legacy and v0 manglings)
	libcmocka-dev		# unit tests
	python3			# the demo's and tests' real-world target
	libc6-dbg		# tests: libc's local symbols (__libc_start_call_main, start_thread)
	dwz			# tests: a DWARF with a dwz alt file (.gnu_debugaltlink)
	openssl			# test_kube: the mock API server's TLS certificate, made at run time
	procps util-linux	# tests: ps, setpriv
	help2man man-db		# the man page from --help; tests: man -l renders it
	curl			# tests: run-agent.sh scrapes /metrics and /healthz
	iproute2		# tests: loopback up in run-debuginfod.sh's network namespace
	linux-perf time		# make bench: the peer measured in the same run, /usr/bin/time
	bpfcc-tools		# make bench(-vm): bcc's offcputime, the off-CPU peer
	libprotobuf-c-dev protobuf-c-compiler	# pprof output (profile.proto)
	golang-github-google-pprof-dev	# profile.proto, from the pprof project
	golang-go		# tests: go tool pprof reads our pprof files
	chromium		# tests: the SVG flame graph rendered and clicked headless
	libdebuginfod-dev debuginfod	# debug info by build-id; tests: a loopback server
	libcurl4-openssl-dev	# agent: Pyroscope and Kubernetes API over HTTP(S)
	libjson-c-dev		# agent: Kubernetes API pod lists
	libmicrohttpd-dev	# agent: /metrics and /healthz
	libxml2-utils		# tests: xmllint on the SVG flame graph
	valgrind		# tests: memcheck on bpfprof report (run-memcheck.sh)
	systemd			# tests: systemd-analyze verify of the agent's unit
	nodejs			# tests: deploy manifests checked with npm kubernetes-models; V8's JIT
	default-jdk-headless	# tests: HotSpot's JIT code (run-java.sh): OpenJDK 17 or 21
)

[ $# -gt 0 ] && pkgs=("$@")

# clang_major: the major version of the release's default clang (its clang package depends on
# clang-N), from the installed package or apt's candidate.
clang_major() {
	dpkg-query -W -f='${Depends}\n' clang 2>/dev/null | grep -o 'clang-[0-9]*' | head -1 |
		grep -o '[0-9]*' && return 0
	apt-cache depends clang 2>/dev/null | grep -o 'Depends: clang-[0-9]*' | head -1 |
		grep -o '[0-9]*'
}

if [[ "${pkgs[*]}" == *%CLANG%* ]]; then
	major=$(clang_major) || {
		echo "install-deps: no clang package known to apt (apt-get update?)" >&2
		exit 1
	}
	pkgs=("${pkgs[@]//%CLANG%/$major}")
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# npm: Debian's package on a fresh Debian 12; nodesource's nodejs bundles its own.
[ $# -gt 0 ] || command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

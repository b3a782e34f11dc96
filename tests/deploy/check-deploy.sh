#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# check-deploy.sh (make check-deploy): the deployment files (deploy/) checked offline, each check
# also run on a broken copy to show that it fails:
#   (a) deploy/kubernetes: base and the least-privilege overlay rendered (check-manifests.js
#       renders kustomize's resources + JSON 6902 patches itself: kubectl is not installed),
#       every object validated against its kind's schema (npm kubernetes-models, installed with
#       npm ci into build/deploy-check) and an allow-list of keys;
#   (b) their semantics: hostPID, NODE_NAME from spec.nodeName, exact capabilities after drop
#       ALL, RBAC pods get/list/watch only, probes on the port the agent listens on...;
#   (c) deploy/systemd: systemd-analyze verify and security, capabilities, settings;
#   (d) deploy/Containerfile against the binary's libraries and the build's packages (dpkg);
#   (e) every agent option the files use is one "bpfprof agent --help" lists.
# The live part, the agent as the unit starts it, is tests/integration/run-deploy.sh.
# Needs no BPF, no root and no network but the npm registry (first run); CI=true fails on a
# missing tool. Environment as tests/lib.sh's (BPFPROF; TARGETS unused).
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKS=$ROOT/tests/deploy
NPM_DIR=$ROOT/build/deploy-check
# The capabilities of the least-privilege agent (docs/deploy.md), without "CAP_": the Kubernetes
# overlay adds exactly these, the systemd unit bounds the agent to exactly these.
export EXPECTED_CAPS="BPF PERFMON SYS_RESOURCE SYS_PTRACE CHECKPOINT_RESTORE DAC_READ_SEARCH SYSLOG"

missing=()
for t in node npm systemd-analyze dpkg-query apt-cache readelf ldd pkg-config make gcc; do
	command -v "$t" >/dev/null || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
	reason="missing tools: ${missing[*]} (tools/install-deps.sh installs them)"
	if [ "${CI:-}" = true ]; then
		fail deploy_tools "$reason; CI=true makes this a failure"
		exit 1
	fi
	skip "$reason"
	exit 0
fi

# record_checks FILE WHAT: a checker's "PASS|FAIL NAME: DETAIL" lines become named assertions.
record_checks() {
	local file=$1 what=$2 line status rest n=0

	while IFS= read -r line; do
		case $line in
		PASS\ *|FAIL\ *) ;;
		*) continue ;;
		esac
		status=${line%% *}
		rest=${line#* }
		if [ "$status" = PASS ]; then
			pass "${rest%%: *}" "${rest#*: }"
		else
			fail "${rest%%: *}" "${rest#*: }"
		fi
		n=$((n + 1))
	done <"$file"
	[ "$n" -gt 0 ] ||
		fail "${what}_ran" "no check result; output: $(head -c 600 "$file" | tr '\n' '|')"
}

# expect_failure NAME FILE CHECK ERE: in a broken copy's results FILE, CHECK failed with a detail
# matching ERE (the broken part, not some other failure).
expect_failure() {
	local name=$1 file=$2 check=$3 re=$4 line

	line=$(grep -m1 -F "FAIL $check: " "$file")
	if [ -n "$line" ] && [[ "$line" =~ $re ]]; then
		pass "$name" "broken copy: ${line:5:300}"
	else
		fail "$name" "broken copy: expected FAIL $check matching /$re/, got: \
$(grep -m1 -F " $check: " "$file" || echo nothing)"
	fi
}

# mutate NAME FILE SED_EXPR: breaks FILE (a copy) on purpose; fails NAME if nothing changed (the
# original no longer holds what the mutation looks for: update this test).
mutate() {
	local name=$1 file=$2 expr=$3

	cp "$file" "$file.orig"
	sed -i -e "$expr" "$file"
	if cmp -s "$file" "$file.orig"; then
		fail "$name" "mutation '$expr' changed nothing in $file"
		return 1
	fi
	rm -f "$file.orig"
}
# --- (a), (b): Kubernetes manifests ----------------------------------------------------------
# npm ci only when the lock file changed since the last successful install.
echo "+ npm ci in $NPM_DIR"
mkdir -p "$NPM_DIR"
if [ ! -e "$NPM_DIR/node_modules/.bpfprof-installed" ] ||
   ! cmp -s "$CHECKS/package-lock.json" "$NPM_DIR/package-lock.json" ||
   ! cmp -s "$CHECKS/package.json" "$NPM_DIR/package.json"; then
	cp "$CHECKS/package.json" "$CHECKS/package-lock.json" "$NPM_DIR/"
	if (cd "$NPM_DIR" && npm ci --no-audit --no-fund) >"$TEST_TMP/npm.log" 2>&1; then
		touch "$NPM_DIR/node_modules/.bpfprof-installed"
	fi
fi
if [ -e "$NPM_DIR/node_modules/.bpfprof-installed" ]; then
	v=$(node -p "require('$NPM_DIR/node_modules/kubernetes-models/package.json').version")
	pass deploy_npm_ci "kubernetes-models $v, yaml, fast-json-patch (tests/deploy/*.json)"
else
	fail deploy_npm_ci "npm ci failed: $(tail -5 "$TEST_TMP/npm.log" | tr '\n' '|')"
	exit 1
fi

# check_manifests DIR OUT: runs check-manifests.js on a copy of deploy/kubernetes.
check_manifests() {
	NODE_PATH=$NPM_DIR/node_modules OPTIONS_OUT=${2%.txt}.options \
		node "$CHECKS/check-manifests.js" "$1" "$CHECKS/allowed-keys.txt" >"$2" 2>&1 ||
		echo "FAIL check_manifests_exit: node failed: $(tail -3 "$2" | tr '\n' '|')" >>"$2"
}

check_manifests "$ROOT/deploy/kubernetes" "$TEST_TMP/kube.txt"
record_checks "$TEST_TMP/kube.txt" kube

# Broken copy 1: a misspelled key, a schema type error, wrong semantics in each area.
b=$TEST_TMP/kube-broken
cp -r "$ROOT/deploy/kubernetes" "$b"
ds=$b/base/daemonset.yaml
sc=$b/overlays/least-privilege/securitycontext.yaml
mutate broken_kube_hostpid "$ds" 's/^      hostPID: true$/      hostPid: true/' &&
	mutate broken_kube_node_name "$ds" 's/fieldPath: spec.nodeName$/fieldPath: metadata.uid/' &&
	mutate broken_kube_port "$ds" 's/containerPort: 9464$/containerPort: "9464"/' &&
	mutate broken_kube_rbac "$b/base/clusterrole.yaml" \
		's/verbs: \[get, list, watch\]$/verbs: [get, list, watch, delete]/' &&
	mutate broken_kube_metrics_addr "$b/base/configmap.yaml" \
		's/metrics-addr = 0.0.0.0:9464$/metrics-addr = 127.0.0.1:9464/' &&
	mutate broken_kube_drop "$sc" 's/drop: \[ALL\]$/drop: [NET_RAW]/' &&
	mutate broken_kube_caps "$sc" 's/^\( *\)- SYSLOG .*/&\n\1- SYS_ADMIN/' && {
	check_manifests "$b" "$TEST_TMP/kube-broken.txt"
	f=$TEST_TMP/kube-broken.txt
	ds_id=DaemonSet/bpfprof-agent
	expect_failure kube_catches_misspelled_key "$f" "allowed_keys_base_$ds_id" 'hostPid'
	expect_failure kube_catches_hostpid "$f" hostpid_base 'hostPID is undefined'
	expect_failure kube_catches_schema_type "$f" "schema_base_$ds_id" \
		'containerPort must be integer'
	expect_failure kube_catches_node_name "$f" node_name_downward_base 'metadata.uid'
	expect_failure kube_catches_rbac_verb "$f" rbac_pods_read_only_base 'delete'
	expect_failure kube_catches_metrics_addr "$f" metrics_addr_base '127.0.0.1:9464'
	expect_failure kube_catches_drop "$f" drop_all_least_privilege 'NET_RAW'
	expect_failure kube_catches_extra_cap "$f" capabilities_least_privilege 'SYS_ADMIN'
}

# Broken copy 2: YAML that Kubernetes (1.1) and kustomize (1.2) read differently; a kustomize
# field the renderer does not implement (it must refuse, not ignore it).
b=$TEST_TMP/kube-broken2
cp -r "$ROOT/deploy/kubernetes" "$b"
mutate broken_kube_yaml11 "$b/base/daemonset.yaml" \
	's/prometheus.io\/scrape: "true"$/prometheus.io\/scrape: yes/' &&
	mutate broken_kube_kustomize "$b/overlays/least-privilege/kustomization.yaml" \
		's/^resources:$/namePrefix: test-\n&/' && {
	f=$TEST_TMP/kube-broken2.txt
	check_manifests "$b" "$f"
	expect_failure kube_catches_yaml_1_1 "$f" render_base 'YAML 1.1 and 1.2'
	expect_failure kube_catches_unrendered_field "$f" render_least_privilege 'namePrefix'
}

# --- (c): systemd unit -----------------------------------------------------------------------
mkdir -p "$TEST_TMP/unit" "$TEST_TMP/unit-broken"
bash "$CHECKS/check-unit.sh" "$ROOT/deploy/systemd/bpfprof-agent.service" "$BPFPROF" \
	"$TEST_TMP/unit" >"$TEST_TMP/unit.txt" 2>&1
record_checks "$TEST_TMP/unit.txt" unit

u=$TEST_TMP/unit-broken/broken.service
cp "$ROOT/deploy/systemd/bpfprof-agent.service" "$u"
mutate broken_unit_typo "$u" 's/^ProtectSystem=strict$/ProtectSytem=strict/' &&
	mutate broken_unit_caps "$u" 's/^\tCAP_CHECKPOINT_RESTORE .*/& CAP_SYS_ADMIN/' &&
	mutate broken_unit_kallsyms "$u" 's/^ReadOnlyPaths=.*/ProtectKernelTunables=yes/' &&
	mutate broken_unit_sandbox "$u" \
		'/^\(PrivateDevices\|SystemCall\|Restrict\|NoNewPriv\)/d' && {
	bash "$CHECKS/check-unit.sh" "$u" "$BPFPROF" "$TEST_TMP/unit-broken" \
		>"$TEST_TMP/unit-broken.txt" 2>&1
	f=$TEST_TMP/unit-broken.txt
	expect_failure unit_catches_unknown_key "$f" systemd_verify "Unknown key 'ProtectSytem'"
	expect_failure unit_catches_extra_cap "$f" systemd_caps 'CAP_SYS_ADMIN'
	expect_failure unit_catches_weak_sandbox "$f" systemd_exposure 'exposure [0-9.]+ >'
	expect_failure unit_catches_missing_setting "$f" systemd_settings \
		'NoNewPrivileges|ProtectSystem'
	expect_failure unit_catches_hidden_kallsyms "$f" systemd_agent_works 'ProtectKernelTunables'
}

# --- (d): Containerfile ----------------------------------------------------------------------
mkdir -p "$TEST_TMP/cf" "$TEST_TMP/cf-broken"
bash "$CHECKS/lint-containerfile.sh" "$ROOT/deploy/Containerfile" "$ROOT" "$BPFPROF" \
	"$TEST_TMP/cf" >"$TEST_TMP/cf.txt" 2>&1
record_checks "$TEST_TMP/cf.txt" containerfile

c=$TEST_TMP/cf-broken/Containerfile
cp "$ROOT/deploy/Containerfile" "$c"
mutate broken_cf_runtime_lib "$c" 's/ libcurl4 / /' &&
	mutate broken_cf_header "$c" 's/uthash-dev //' &&
	mutate broken_cf_tool "$c" 's/ bpftool \\$/ \\/' &&
	mutate broken_cf_copy "$c" '/^COPY tests /d' &&
	mutate broken_cf_entrypoint "$c" 's/^ENTRYPOINT .*/ENTRYPOINT ["bpfprof", "agent"]/' &&
	mutate broken_cf_package "$c" 's/ libjson-c5 / libjson-c4 /' &&
	mutate broken_cf_recommends "$c" \
		'0,/--no-install-recommends/s/ --no-install-recommends//' && {
	bash "$CHECKS/lint-containerfile.sh" "$c" "$ROOT" "$BPFPROF" "$TEST_TMP/cf-broken" \
		>"$TEST_TMP/cf-broken.txt" 2>&1
	f=$TEST_TMP/cf-broken.txt
	expect_failure cf_catches_missing_runtime_lib "$f" containerfile_runtime_libs 'libcurl.so.4'
	expect_failure cf_catches_unlisted_library "$f" containerfile_linked_libs 'libjson-c5'
	expect_failure cf_catches_missing_header "$f" containerfile_headers 'uthash.h'
	expect_failure cf_catches_missing_tool "$f" containerfile_build_tools 'BPFTOOL'
	expect_failure cf_catches_copy_set "$f" containerfile_copy_context 'tests/(tests|vmtest|fuzz/fuzz)\.mk'
	expect_failure cf_catches_entrypoint "$f" containerfile_stages 'ENTRYPOINT'
	expect_failure cf_catches_unknown_package "$f" containerfile_packages 'libjson-c4'
	expect_failure cf_catches_recommends "$f" containerfile_apt 'stage 0'
}

# --- (e): agent options ----------------------------------------------------------------------
# Every option the deployment files pass (DaemonSet args and ConfigMap, the unit's ExecStart,
# agent.conf, BPFPROF_* variables of the environment file) must be one the agent documents.
opts=$TEST_TMP/options.txt
{
	cat "$TEST_TMP/kube.options" 2>/dev/null
	# ExecStart, its continuation lines joined.
	awk '/^ExecStart=/ { on = 1 } on { print; if (!/\\$/) on = 0 }' \
		"$ROOT/deploy/systemd/bpfprof-agent.service" | grep -oE -- ' --[a-z][a-z0-9-]*' |
		sed 's/^ --//'
	# agent.conf lines, commented-out ones too ("#pyroscope-url = ...").
	sed -n 's/^#\{0,1\}[ \t]*\([a-z][a-z0-9-]*\)[ \t]*=.*/\1/p' \
		"$ROOT/deploy/systemd/agent.conf"
	sed -n 's/^#\{0,1\}BPFPROF_\([A-Z0-9_]*\)=.*/\1/p' \
		"$ROOT/deploy/systemd/bpfprof-agent.default" | tr 'A-Z_' 'a-z-'
} | sort -u >"$opts"
"$BPFPROF" agent --help >"$TEST_TMP/agent-help.txt" 2>&1
help_rc=$?
# options_missing FILE: the options of FILE that agent --help does not list.
options_missing() {
	local o

	while read -r o; do
		grep -qE -- "--$o([^a-z0-9-]|$)" "$TEST_TMP/agent-help.txt" || echo "--$o"
	done <"$1"
}
missing_opts=$(options_missing "$opts" | tr '\n' ' ')
if [ "$help_rc" -eq 0 ] && [ "$(wc -l <"$opts")" -gt 5 ] && [ -z "$missing_opts" ]; then
	pass deploy_agent_options "bpfprof agent --help lists the $(wc -l <"$opts") options used: \
$(tr '\n' ' ' <"$opts")"
else
	fail deploy_agent_options "bpfprof agent --help (exit $help_rc) lacks: ${missing_opts:-?} \
(of $(tr '\n' ' ' <"$opts"))"
fi
printf '%s\n' pyroscope-urls hostpid >"$TEST_TMP/bogus-options.txt"
assert_true deploy_agent_options_catches_unknown "options not in agent --help are reported" \
	test "$(options_missing "$TEST_TMP/bogus-options.txt" | wc -l)" -eq 2

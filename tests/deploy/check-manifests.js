// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// check-manifests.js: offline checks of deploy/kubernetes, run by tests/deploy/check-deploy.sh.
//
// Usage: node check-manifests.js KUBE_DIR ALLOWED_KEYS
//   KUBE_DIR      deploy/kubernetes (or a broken copy of it): base/ and overlays/least-privilege/
//   ALLOWED_KEYS  tests/deploy/allowed-keys.txt
// Environment: EXPECTED_CAPS (the least-privilege capabilities, space-separated, without CAP_),
// OPTIONS_OUT (optional: file that receives every agent option the manifests use, one a line).
// Prints one "PASS|FAIL NAME: DETAIL" line per named check; exit 0 unless the script itself broke
// (a missing module, an unreadable directory): the caller counts the FAIL lines.
//
// Rendering: kubectl is not installed, so this renders the kustomizations itself, for the subset
// they use: "resources" (files or directories holding a kustomization) and "patches" whose file is
// a JSON patch (RFC 6902) with a group/version/kind/name target, applied with fast-json-patch.
// Any other kustomization field fails the render rather than being ignored. Each object is then
// validated against its kind's schema (npm kubernetes-models, the OpenAPI schemas of Kubernetes),
// which accepts unknown fields: an allow-list of the key paths we use catches those ("hostPid").
'use strict';

const fs = require('fs');
const path = require('path');
const YAML = require('yaml');
const jsonpatch = require('fast-json-patch');

const results = [];

function report(ok, name, detail)
{
	results.push(`${ok ? 'PASS' : 'FAIL'} ${name}: ${String(detail).replace(/\s+/g, ' ')}`);
}

function check(name, ok, detail_ok, detail_fail)
{
	report(ok, name, ok ? detail_ok : detail_fail);
}

// Parses every document of a YAML file. Kubernetes reads YAML 1.1 (sigs.k8s.io/yaml), kustomize
// 1.2 (kyaml): a value they would read differently ("on", "yes", 0755) is an error, as are
// duplicate keys, which either silently resolves.
function load_yaml(file)
{
	const text = fs.readFileSync(file, 'utf8');
	const read = (version) => YAML.parseAllDocuments(text, { version, uniqueKeys: true,
								  prettyErrors: true });
	const v12 = read('1.2'), v11 = read('1.1');
	const objs = [];

	for (const doc of v12) {
		const problems = doc.errors.concat(doc.warnings);

		if (problems.length)
			throw new Error(`${file}: ${problems[0].message}`);
	}
	v12.forEach((doc, i) => {
		const a = doc.toJS(), b = v11[i].toJS();

		if (JSON.stringify(a) !== JSON.stringify(b))
			throw new Error(`${file}: document ${i + 1} reads differently as ` +
				'YAML 1.1 and 1.2 (quote booleans, octal-looking and ' +
				'sexagesimal values)');
		if (a !== null)
			objs.push(a);
	});
	return objs;
}

const KUSTOMIZATION_KEYS = new Set(['apiVersion', 'kind', 'resources', 'patches']);
const PATCH_KEYS = new Set(['path', 'target']);
const TARGET_KEYS = new Set(['group', 'version', 'kind', 'name']);

function matches_target(obj, target)
{
	const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') :
				 ['', obj.apiVersion];

	return (target.group === undefined || target.group === group) &&
	       (target.version === undefined || target.version === version) &&
	       (target.kind === undefined || target.kind === obj.kind) &&
	       (target.name === undefined || target.name === obj.metadata.name);
}

// Renders the kustomization in dir: a list of { obj, file } in resource order.
function render(dir)
{
	const kfile = path.join(dir, 'kustomization.yaml');
	const docs = load_yaml(kfile);
	const k = docs[0];
	let out = [];

	if (docs.length !== 1 || k.apiVersion !== 'kustomize.config.k8s.io/v1beta1' ||
	    k.kind !== 'Kustomization')
		throw new Error(`${kfile}: not one kustomize.config.k8s.io/v1beta1 Kustomization`);
	for (const key of Object.keys(k))
		if (!KUSTOMIZATION_KEYS.has(key))
			throw new Error(`${kfile}: field "${key}" is not rendered by this check ` +
					`(only resources and JSON 6902 patches)`);
	for (const res of k.resources || []) {
		const p = path.join(dir, res);

		if (fs.statSync(p).isDirectory())
			out = out.concat(render(p));
		else
			out = out.concat(load_yaml(p).map((obj) => ({ obj, file: p })));
	}
	for (const patch of k.patches || []) {
		for (const key of Object.keys(patch))
			if (!PATCH_KEYS.has(key))
				throw new Error(`${kfile}: patch field "${key}" is not supported`);
		for (const key of Object.keys(patch.target || {}))
			if (!TARGET_KEYS.has(key))
				throw new Error(`${kfile}: target field "${key}" is not supported`);
		const pfile = path.join(dir, patch.path);
		const ops = load_yaml(pfile)[0];
		const hits = out.filter((r) => matches_target(r.obj, patch.target || {}));

		if (!Array.isArray(ops))
			throw new Error(`${pfile}: not a JSON 6902 patch (a list of operations)`);
		if (hits.length !== 1)
			throw new Error(`${kfile}: the target of ${patch.path} matches ` +
					`${hits.length} objects, not 1`);
		// validate: each operation is checked (paths exist for replace, test ops hold).
		hits[0].obj = jsonpatch.applyPatch(hits[0].obj, ops, true, false).newDocument;
		hits[0].file += ` + ${pfile}`;
	}
	return out;
}

function id(obj)
{
	return `${obj.kind}/${obj.metadata && obj.metadata.name}`;
}

// kubernetes-models: one module per apiVersion ("v1", "apps/v1", "rbac.authorization.k8s.io/v1"),
// one class per kind; validate() throws with the schema's message.
function validate_schema(variant, r)
{
	const name = `schema_${variant}_${id(r.obj)}`;
	let model;

	try {
		model = require(`kubernetes-models/${r.obj.apiVersion}`)[r.obj.kind];
	} catch (e) {
		model = undefined;
	}
	if (!model) {
		report(false, name, `no schema for ${r.obj.apiVersion} ${r.obj.kind}`);
		return;
	}
	try {
		new model(r.obj).validate();
		report(true, name, `valid ${r.obj.apiVersion} ${r.obj.kind} (${r.file})`);
	} catch (e) {
		report(false, name, `${r.file}: ${e.message}`);
	}
}

// allowed-keys.txt: "Kind path" lines; path segments joined by ".", "[]" for array elements,
// "*" for any key of a free-form map (labels, data). A key path is allowed when it is listed or
// is the prefix of a listed one.
function load_allowed(file)
{
	const allowed = new Map();

	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		const t = line.replace(/#.*/, '').trim();

		if (!t)
			continue;
		const [kind, p] = t.split(/\s+/);

		if (!allowed.has(kind))
			allowed.set(kind, new Set());
		const parts = p.split('.');

		// "a.b[].c" allows "a", "a.b", "a.b[]", "a.b[].c".
		for (let i = 1; i <= parts.length; i++) {
			const prefix = parts.slice(0, i).join('.');

			allowed.get(kind).add(prefix);
			allowed.get(kind).add(prefix.replace(/(\[\])+$/, ''));
		}
	}
	return allowed;
}

function key_allowed(set, prefix, key)
{
	const p = prefix ? `${prefix}.${key}` : key;
	const star = prefix ? `${prefix}.*` : '*';

	if (set.has(p))
		return p;
	if (set.has(star))
		return star;
	return null;
}

// Walks obj; collects key paths not in set.
function unknown_keys(obj, set, prefix, out)
{
	if (Array.isArray(obj)) {
		for (const el of obj)
			unknown_keys(el, set, `${prefix}[]`, out);
		return;
	}
	if (obj === null || typeof obj !== 'object')
		return;
	for (const key of Object.keys(obj)) {
		const p = key_allowed(set, prefix, key);

		if (p === null)
			out.push(prefix ? `${prefix}.${key}` : key);
		else
			unknown_keys(obj[key], set, p, out);
	}
}

function check_keys(variant, r, allowed)
{
	const name = `allowed_keys_${variant}_${id(r.obj)}`;
	const set = allowed.get(r.obj.kind);
	const bad = [];

	if (!set) {
		report(false, name, `kind ${r.obj.kind} has no entry in allowed-keys.txt`);
		return;
	}
	unknown_keys(r.obj, set, '', bad);
	check(name, bad.length === 0, 'every key is on the allow-list',
	      'keys not on the allow-list (misspelled, or new: review and list them): ' +
	      bad.join(', '));
}

function same_set(a, b)
{
	return a.length === b.length && new Set(a).size === a.length &&
	       [...a].sort().join(' ') === [...b].sort().join(' ');
}

const show = (v) => JSON.stringify(v);

// Semantic checks of one rendered variant ("base" privileged, "least_privilege").
function check_semantics(variant, objs, options)
{
	const find = (kind) => objs.filter((o) => o.kind === kind);
	const ds = find('DaemonSet')[0];
	const ns = find('Namespace')[0];
	const sa = find('ServiceAccount')[0];
	const cm = find('ConfigMap')[0];
	const n = (s) => `${s}_${variant}`;

	const kinds = ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding',
		       'ConfigMap', 'DaemonSet'];

	check(n('one_of_each_kind'), kinds.every((k) => find(k).length === 1) &&
	      objs.length === kinds.length, `one each of ${kinds.join(', ')}`,
	      `objects: ${objs.map(id).join(', ')}`);
	if (!ds || !ns || !sa || !cm)
		return;
	const pod = ds.spec.template.spec;
	const c = pod.containers[0];
	const sc = c.securityContext || {};
	const nsname = ns.metadata.name;

	const pss = (ns.metadata.labels || {})['pod-security.kubernetes.io/enforce'];

	check(n('namespace_privileged'), pss === 'privileged',
	      `namespace ${nsname} enforces the privileged Pod Security Standard`,
	      `pod-security.kubernetes.io/enforce is ${pss}`);
	const strays = objs.filter((o) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding']
				   .includes(o.kind) && o.metadata.namespace !== nsname);
	check(n('in_namespace'), strays.length === 0, `namespaced objects are in ${nsname}`,
	      `outside ${nsname}: ${strays.map(id).join(', ')}`);
	check(n('hostpid'), pod.hostPID === true, 'hostPID: true',
	      `hostPID is ${show(pod.hostPID)}, expected true`);
	check(n('no_host_network_ipc'), !pod.hostNetwork && !pod.hostIPC,
	      'no hostNetwork, no hostIPC',
	      `hostNetwork ${pod.hostNetwork}, hostIPC ${pod.hostIPC}`);
	const node = (c.env || []).filter((e) => e.name === 'NODE_NAME');
	check(n('node_name_downward'), node.length === 1 && node[0].value === undefined &&
	      show(node[0].valueFrom) === show({ fieldRef: { fieldPath: 'spec.nodeName' } }),
	      'NODE_NAME from fieldRef spec.nodeName', `NODE_NAME entries: ${show(node)}`);
	check(n('tolerate_all'), show(pod.tolerations) === show([{ operator: 'Exists' }]),
	      'tolerations [{operator: Exists}]', `tolerations ${show(pod.tolerations)}`);
	check(n('linux_nodes'), show(pod.nodeSelector) === show({ 'kubernetes.io/os': 'linux' }),
	      'nodeSelector kubernetes.io/os: linux', `nodeSelector ${show(pod.nodeSelector)}`);
	// Requests and limits of CPU and memory, each request within its limit, and the memory
	// request above what the agent's bench measured (~22-32 MB RSS, plus its BPF maps).
	const qty = (v) => {
		const m = /^([0-9.]+)(m|Ki|Mi|Gi)?$/.exec(String(v ?? ''));
		if (!m)
			return NaN;
		const mul = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[m[2]] ?? 1;
		return Number(m[1]) * mul;
	};
	const r = c.resources || {}, req = r.requests || {}, lim = r.limits || {};
	const res_ok = ['cpu', 'memory'].every((k) => qty(req[k]) > 0 && qty(req[k]) <= qty(lim[k])) &&
		       qty(req.memory) >= 48 * 2 ** 20;
	check(n('resources'), res_ok, 'cpu and memory requests within limits, memory request >= 48Mi',
	      `resources ${show(c.resources)}`);
	const grace = pod.terminationGracePeriodSeconds;

	check(n('grace_period'), grace > 10,
	      `terminationGracePeriodSeconds ${grace} > 10 (the agent flushes, exits within 10 s)`,
	      `terminationGracePeriodSeconds ${grace}, not above 10`);

	// Writable state on a read-only root: an emptyDir at /var/lib/bpfprof.
	const vols = Object.fromEntries((pod.volumes || []).map((v) => [v.name, v]));
	const mount_of = (dir) => (c.volumeMounts || []).find((m) => m.mountPath === dir);
	const state = mount_of('/var/lib/bpfprof');
	check(n('read_only_root_state_emptydir'), sc.readOnlyRootFilesystem === true && state &&
	      vols[state.name] && vols[state.name].emptyDir !== undefined && !state.readOnly,
	      'readOnlyRootFilesystem with an emptyDir at /var/lib/bpfprof',
	      `readOnlyRootFilesystem ${sc.readOnlyRootFilesystem}, ` +
	      `/var/lib/bpfprof mount ${show(state)}`);

	// The agent's command line: a Pyroscope URL, a config file the ConfigMap provides.
	const args = c.args || [];
	const argval = (opt) => {
		const a = args.find((s) => s.startsWith(`--${opt}=`));

		return a === undefined ? undefined : a.slice(opt.length + 3);
	};
	const url = argval('pyroscope-url');
	check(n('pyroscope_url'), url !== undefined && /^https?:\/\/[^/\s]+(\/\S*)?$/.test(url),
	      `--pyroscope-url=${url}`, `args ${show(args)} hold no http(s) --pyroscope-url=`);
	const conf = argval('config');
	const conf_mount = conf && (c.volumeMounts || []).find((m) =>
						conf.startsWith(m.mountPath + '/'));
	const conf_vol = conf_mount && vols[conf_mount.name];
	const conf_key = conf_mount && conf.slice(conf_mount.mountPath.length + 1);
	const conf_text = conf_vol && conf_vol.configMap && conf_vol.configMap.name ===
			  cm.metadata.name && cm.data[conf_key];
	check(n('config_from_configmap'), typeof conf_text === 'string',
	      `--config=${conf} is key ${conf_key} of ConfigMap ${cm.metadata.name}`,
	      `--config=${conf} is not a key of a mounted ConfigMap (mount ${show(conf_mount)})`);
	const conf_opts = {};
	for (const line of (conf_text || '').split('\n')) {
		const t = line.replace(/#.*/, '').trim();
		const m = t.match(/^([a-z][a-z0-9-]*)\s*=\s*(.*)$/);

		if (t && !m)
			report(false, n('config_syntax'), `not "option = value": ${show(line)}`);
		else if (m)
			conf_opts[m[1]] = m[2];
	}
	for (const o of Object.keys(conf_opts))
		options.add(o);
	for (const a of args)
		options.add(a.replace(/^--/, '').replace(/=.*/, ''));

	// Probes reach /healthz on the port the agent listens on, on the pod's address.
	const port = (c.ports || []).find((p) => p.name === 'metrics');
	const addr = argval('metrics-addr') || conf_opts['metrics-addr'] || '127.0.0.1:9464';
	const am = addr.match(/^(.*):(\d+)$/);
	check(n('metrics_addr'), port && am && Number(am[2]) === port.containerPort &&
	      ['0.0.0.0', '[::]', ''].includes(am[1]),
	      `metrics-addr ${addr}: all addresses, containerPort ${port && port.containerPort}`,
	      `metrics-addr ${addr} vs port ${show(port)}: the kubelet probes the pod's IP ` +
	      'at containerPort');
	for (const probe of ['livenessProbe', 'readinessProbe']) {
		const g = c[probe] && c[probe].httpGet;

		check(n(probe.toLowerCase()), g && g.path === '/healthz' && port &&
		      (g.port === port.name || g.port === port.containerPort),
		      `${probe} GET /healthz on port ${g && g.port}`, `${probe} ${show(c[probe])}`);
	}

	// RBAC: pods get/list/watch, bound to the pod's service account, nothing else.
	const role = find('ClusterRole')[0], bind = find('ClusterRoleBinding')[0];
	const roles = objs.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole');
	const rule = role && role.rules.length === 1 && role.rules[0];
	check(n('rbac_pods_read_only'), roles.length === 1 && rule &&
	      show(rule.apiGroups) === show(['']) && show(rule.resources) === show(['pods']) &&
	      same_set(rule.verbs, ['get', 'list', 'watch']) && !rule.resourceNames &&
	      !rule.nonResourceURLs && !role.aggregationRule,
	      'one rule: core pods, verbs get, list, watch', `rules ${show(role && role.rules)}`);
	const subj = bind && bind.subjects.length === 1 && bind.subjects[0];

	check(n('rbac_binding'), subj && bind.roleRef.kind === 'ClusterRole' &&
	      bind.roleRef.name === role.metadata.name && subj.kind === 'ServiceAccount' &&
	      subj.name === sa.metadata.name && subj.namespace === nsname &&
	      pod.serviceAccountName === sa.metadata.name,
	      `ClusterRole ${role && role.metadata.name} bound to the pod's ServiceAccount ` +
	      `${nsname}/${sa.metadata.name}`,
	      `binding ${show(bind && { roleRef: bind.roleRef, subjects: bind.subjects })}, pod ` +
	      `serviceAccountName ${pod.serviceAccountName}`);

	// The two variants' security contexts.
	if (variant === 'base') {
		check(n('privileged'), sc.privileged === true && sc.runAsUser === 0,
		      'privileged: true, runAsUser: 0', `securityContext ${show(sc)}`);
		return;
	}
	const want = (process.env.EXPECTED_CAPS || '').split(/\s+/).filter(Boolean);
	const caps = sc.capabilities || {};
	check(n('not_privileged'), sc.privileged !== true &&
	      sc.allowPrivilegeEscalation === false && sc.runAsUser === 0,
	      'privileged false, allowPrivilegeEscalation false, runAsUser 0',
	      `securityContext ${show(sc)}`);
	check(n('drop_all'), show(caps.drop) === show(['ALL']), 'capabilities.drop [ALL]',
	      `capabilities.drop ${show(caps.drop)}`);
	check(n('capabilities'),
	      want.length > 0 && Array.isArray(caps.add) && same_set(caps.add, want),
	      `capabilities.add exactly ${want.join(' ')}`,
	      `capabilities.add ${show(caps.add)}, expected exactly ${show(want)} (each once)`);
	check(n('seccomp_runtime_default'), sc.seccompProfile &&
	      sc.seccompProfile.type === 'RuntimeDefault', 'seccompProfile RuntimeDefault',
	      `seccompProfile ${show(sc.seccompProfile)}`);
}

function main()
{
	const [kube_dir, allowed_file] = process.argv.slice(2);
	const allowed = load_allowed(allowed_file);
	const options = new Set();
	const variants = { base: 'base', least_privilege: 'overlays/least-privilege' };

	for (const [variant, sub] of Object.entries(variants)) {
		let rendered;

		try {
			rendered = render(path.join(kube_dir, sub));
			report(true, `render_${variant}`,
			       `${sub}: ${rendered.map((r) => id(r.obj)).join(', ')}`);
		} catch (e) {
			report(false, `render_${variant}`, `${sub}: ${e.message}`);
			continue;
		}
		for (const r of rendered) {
			validate_schema(variant, r);
			check_keys(variant, r, allowed);
		}
		check_semantics(variant, rendered.map((r) => r.obj), options);
	}
	if (process.env.OPTIONS_OUT)
		fs.writeFileSync(process.env.OPTIONS_OUT, [...options].sort().join('\n') + '\n');
	console.log(results.join('\n'));
}

main();

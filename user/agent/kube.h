/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kube.h: this node's Kubernetes pods by container id, from a list and watch of the API server. */
#ifndef BPFPROF_KUBE_H
#define BPFPROF_KUBE_H

#include <stdbool.h>
#include <stdint.h>

/* The service account files of a pod (in-cluster config, as client-go's rest.InClusterConfig). */
#define KUBE_SA_DIR   "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_SA_TOKEN KUBE_SA_DIR "/token"
#define KUBE_SA_CA    KUBE_SA_DIR "/ca.crt"

struct kube_opts {
	/* "https://HOST:PORT", or "http://..." (tests, kubectl proxy); NULL: in-cluster,
	 * https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT. */
	const char *api_url;
	/* Bearer token, read again for each request (projected tokens rotate); NULL:
	 * KUBE_SA_TOKEN if it exists, else none; "": none. */
	const char *token_file;
	/* PEM CA bundle; NULL: KUBE_SA_CA if it exists, else the system's; "": the system's. */
	const char *ca_file;
	/* Pods with spec.nodeName = this; NULL: $NODE_NAME. */
	const char *node_name;
	/* How long (ms) a container id of a deleted pod, or one replaced by a restart, stays
	 * found: samples taken before the event still get labels. 0 forgets it at once. */
	uint32_t deleted_ttl_ms;
};

/* A container's pod metadata (copied out: the caller's own). Sizes: Kubernetes' name limits. */
struct kube_pod {
	char namespace[64]; /* metadata.namespace (DNS label, 63 characters) */
	char pod[254];	    /* metadata.name (DNS subdomain, 253) */
	char pod_uid[37];   /* metadata.uid, "8-4-4-4-12" */
	char container[64]; /* the status's name; "" from kube__lookup_pod() */
	char app[64];	    /* label app.kubernetes.io/name, else label app, else "" */
	char runtime[16];   /* the scheme of containerID ("containerd", "cri-o", "docker");
				 * "" from kube__lookup_pod() */
};

/* Counters since kube__start() (kube__stats()). */
struct kube_stats {
	uint64_t lists;	     /* LIST requests that succeeded (the first, and relists) */
	uint64_t relists;    /* of them after 410 Gone (resourceVersion too old) */
	uint64_t events;     /* watch events applied: ADDED, MODIFIED, DELETED, BOOKMARK */
	uint64_t errors;     /* failed requests (connection, HTTP status, bad JSON): each
				 * followed by a retry with backoff */
	uint32_t pods;	     /* pods known now (not deleted) */
	uint32_t containers; /* container ids known now, expiring ones included */
	bool synced;	     /* the first LIST has been applied */
};

struct kube;

/*
 * Starts a thread that LISTs the pods of the node (GET /api/v1/pods?fieldSelector=
 * spec.nodeName=NODE, first from the API server's cache with resourceVersion=0), then WATCHes
 * them from the list's resourceVersion (newline-delimited JSON events {type, object}, bookmarks
 * on), applying ADDED/MODIFIED/DELETED to a map of container ids (status.containerStatuses,
 * initContainerStatuses, ephemeralContainerStatuses; "<runtime>://<id>") to pod metadata.
 * A watch that ends is resumed from the last resourceVersion; 410 Gone (HTTP status or an ERROR
 * event) relists with a consistent read; failures retry with exponential backoff (0.5 s to 30 s).
 * Source: Kubernetes API concepts, "Efficient detection of changes" and "Resource versions".
 * Logs one line per list, relist and failure (user/util/log.h), events with -v.
 * Calls curl_global_init(): call kube__start() while no other thread uses libcurl.
 * Returns the object (free with kube__stop()), or NULL with errno: EINVAL (no API URL: not in
 * a pod and no opts->api_url; no node name), ENOMEM, or pthread_create()'s error. Does not wait
 * for the API server: see kube__wait_synced().
 */
struct kube *kube__start(const struct kube_opts *opts);

/* Stops the thread (within about 1 s, even in a request) and frees k. NULL is fine. */
void kube__stop(struct kube *k);

/*
 * Copies the pod metadata of a container (64 hex digits, as cgroup.h's container_id) into
 * *out. Thread-safe and never waits for the network (a mutex held only while the map changes).
 * Returns 0, or -ENOENT when the id is unknown (yet: the pod's status may not have arrived).
 */
int kube__lookup(struct kube *k, const char *container_id, struct kube_pod *out);

/*
 * The same by pod UID (cgroup.h's pod_uid: conmon, or a container the status does not list
 * yet), with container and runtime "". 0 or -ENOENT.
 */
int kube__lookup_pod(struct kube *k, const char *pod_uid, struct kube_pod *out);

/* Waits until the first LIST has been applied: 0, or -ETIMEDOUT after timeout_ms. */
int kube__wait_synced(struct kube *k, uint32_t timeout_ms);

/* Copies the counters (thread-safe). */
void kube__stats(struct kube *k, struct kube_stats *out);

#endif /* BPFPROF_KUBE_H */

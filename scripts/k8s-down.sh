#!/usr/bin/env bash
# Stop the one-node cluster of scripts/k8s-up.sh and remove what it left.
#
#   scripts/k8s-down.sh      (make k8s-down)
#
# In order, each step bounded in time:
#   1. while the API server and the kubelet run: delete the Jobs and pods,
#      so that the kubelet tears the pods down itself (sandboxes, volumes,
#      pod cgroups);
#   2. stop the processes k8s-up.sh started, by the PIDs in
#      .cache/k8s/state/pids, in reverse order (SIGTERM, SIGKILL after
#      15 s); before containerd, kill and delete every task and container it
#      still has, and after it the runc shims it started (their PIDs from
#      its state directory's shim.pid files);
#   3. unmount whatever is still mounted under .cache/k8s/state (the
#      kubelet's bind mount of its root, pod volumes, container root file
#      systems), deepest first;
#   4. remove the kubepods cgroups (k8s-up.sh refuses to start when one
#      exists, so these are this cluster's), the network namespaces and the
#      CNI bridge the cluster created, and the directories outside .cache
#      that did not exist before k8s-up.sh (the kubelet makes
#      /var/lib/kubelet/device-plugins and /var/log/containers wherever its
#      root directory is);
#   5. put back the kernel settings the kubelet changed;
#   6. remove .cache/k8s/state (refused while anything under it is still
#      mounted). The built binaries, the images and the logs stay.
# It stops nothing that k8s-up.sh did not start. Running it with no
# cluster up does nothing.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/k8s-common.sh"

no_args "$@"

k8s_need_root
if [[ ! -d $K8S_STATE ]]; then
	log "no cluster state in $K8S_STATE: nothing to do"
	exit 0
fi

# 1. Pods torn down by the kubelet.
if pid_of kube-apiserver >/dev/null && pid_of kubelet >/dev/null && kctl get --raw /readyz >/dev/null 2>&1; then
	log "deleting the Jobs and pods"
	kctl delete jobs --all --all-namespaces --wait=false >/dev/null 2>&1 || true
	kctl delete pods --all --all-namespaces --grace-period=2 --wait=false >/dev/null 2>&1 || true
	deadline=$((SECONDS + 60))
	until [[ -z $(kctl get pods --all-namespaces -o name 2>/dev/null) ]]; do
		((SECONDS < deadline)) || { log "pods still there after 60 s: going on"; break; }
		sleep 1
	done
	# The kubelet removes the pods' sandboxes after the pods are gone.
	until [[ -z $(k8s_ctr containers list -q 2>/dev/null) ]]; do
		((SECONDS < deadline)) || { log "containers still there after 60 s: going on"; break; }
		sleep 1
	done
fi

# stop NAME: SIGTERM to the PID in NAME's pidfile, SIGKILL after 15 s.
stop() {
	local name=$1 pid i
	if pid=$(pid_of "$name"); then
		log "stopping $name (PID $pid)"
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 150; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "$name (PID $pid) did not stop in 15 s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$K8S_PIDS/$name.pid"
}

# 2. The processes, in reverse start order.
for ((i = ${#K8S_PROCS[@]} - 1; i >= 0; i--)); do
	name=${K8S_PROCS[i]}
	if [[ $name == containerd ]] && pid_of containerd >/dev/null; then
		for t in $(k8s_ctr tasks list -q 2>/dev/null); do
			k8s_ctr tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
		done
		for t in $(k8s_ctr tasks list -q 2>/dev/null); do
			timeout 15 ctr --address "$K8S_CONTAINERD_SOCK" --namespace k8s.io tasks delete -f "$t" >/dev/null 2>&1 || true
		done
		for c in $(k8s_ctr containers list -q 2>/dev/null); do
			k8s_ctr containers delete "$c" >/dev/null 2>&1 || true
		done
	fi
	stop "$name"
	if [[ $name == containerd ]]; then
		# The runc shims containerd started (they outlive it).
		for f in "$K8S_STATE"/containerd/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
			[[ -f $f ]] || continue
			pid=$(<"$f")
			if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && grep -q containerd-shim "/proc/$pid/cmdline" 2>/dev/null; then
				log "stopping the shim of $(basename "$(dirname "$f")") (PID $pid)"
				kill -KILL "$pid" 2>/dev/null || true
			fi
		done
	fi
done

# 3. Mounts under the state directory, deepest first.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r -u
}
for ((round = 0; round < 3; round++)); do
	list=$(mounts_under "$K8S_STATE")
	[[ -n $list ]] || break
	while read -r m; do
		m=$(printf '%b' "$m") # mountinfo escapes spaces as \040
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
	done <<<"$list"
done

# 4. Cgroups (deepest first; a cgroup goes once its processes are gone),
# network namespaces, the CNI bridge, directories made outside .cache.
for ((round = 0; round < 20; round++)); do
	left=$(find /sys/fs/cgroup/*/ -maxdepth 1 -type d -name 'kubepods*' 2>/dev/null)
	[[ -n $left ]] || break
	while read -r top; do
		find "$top" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done <<<"$left"
	sleep 0.5
done
[[ -z $left ]] || log "cgroups left (processes still in them?): $(tr '\n' ' ' <<<"$left")"

if [[ -f $K8S_NETNS_BEFORE ]]; then
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		if [[ $ns == cni-* ]] && ! grep -q -x -F "$ns" "$K8S_NETNS_BEFORE"; then
			log "removing network namespace $ns"
			ip netns delete "$ns" || true
		fi
	done
fi
if ip link show "$K8S_CNI_BRIDGE" >/dev/null 2>&1; then
	log "removing the CNI bridge $K8S_CNI_BRIDGE"
	ip link delete "$K8S_CNI_BRIDGE" || true
fi
if [[ -f $K8S_CREATED ]]; then
	while read -r d; do
		[[ -n $d && -d $d ]] || continue
		if [[ -z $(mounts_under "$d") ]]; then
			log "removing $d (made by this cluster)"
			rm -rf "$d"
		else
			log "leaving $d: something is mounted under it"
		fi
	done <"$K8S_CREATED"
fi

# 5. Kernel settings.
if [[ -f $K8S_SYSCTLS_SAVED ]]; then
	while IFS='=' read -r k v; do
		[[ -n $k && -n $v ]] || continue
		[[ $(sysctl -n "$k" 2>/dev/null) == "$v" ]] || { log "putting back $k=$v"; sysctl -q -w "$k=$v" >/dev/null || true; }
	done <"$K8S_SYSCTLS_SAVED"
fi

# 6. The state.
if [[ -n $(mounts_under "$K8S_STATE") ]]; then
	die "still mounted under $K8S_STATE (not removed): $(mounts_under "$K8S_STATE" | tr '\n' ' ')"
fi
for name in "${K8S_PROCS[@]}"; do
	pid_of "$name" >/dev/null && die "$name still runs (PID $(pid_of "$name")): $K8S_STATE not removed"
done
rm -rf "$K8S_STATE"
log "cluster stopped and removed (logs of the last one in $K8S_LOGS)"

# shellcheck shell=bash
# Shared part of scripts/k8s-up.sh, k8s-down.sh and k8s-e2e.sh: the one-node
# cluster's versions, directories, ports and pidfiles. Source it from a
# script running under `set -euo pipefail`.
#
# Everything lives under .cache/k8s/ of this checkout:
#   build/   the wrapper Go module that builds Kubernetes (generated)
#   bin/     kube-apiserver, kube-controller-manager, kube-scheduler,
#            kubelet, kubeadm (built once, reused), k8s-pause
#   images/  the pod sandbox ("pause") image archive
#   state/   one cluster's state: certificates, kubeconfigs, etcd's data,
#            containerd's root and state, kubelet's root, CNI config,
#            pidfiles; k8s-down.sh removes it
#   logs/    the processes' logs of the last cluster (kept after k8s-down)
#
# Environment (all optional):
#   K8S_NODE_NAME    the node's name (default: this host's name); it must
#                    resolve to a loopback address, where the kubelet
#                    listens and the API server reaches it
#   K8S_APISERVER_PORT=6443  K8S_ETCD_PORT=2379 (peer: +1)  K8S_KUBELET_PORT=10250

K8S_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Kubernetes v1.34.4, built from the Go module proxy. Why this release:
#  - cgroup v1: the kubelet runs on it up to v1.34 with failCgroupV1 false
#    by default (v1.35 turned it to true, and later releases drop v1);
#  - containerd 1.6.20 (Debian bookworm) serves CRI v1, which v1.26+
#    kubelets need; the kubelet falls back to its own cgroupDriver when
#    the runtime does not answer RuntimeConfig (containerd < 2.0), and
#    v1.36 ends support for containerd 1.x;
#  - etcd 3.4.23 (Debian bookworm): the v1.34 API server still talks to
#    etcd 3.4 and turns off what needs a newer one (watch progress
#    requests need 3.4.31).
K8S_VERSION=v1.34.4
K8S_STAGING_VERSION=v0.${K8S_VERSION#v1.} # the k8s.io/* staging modules of the same release
K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubeadm)

K8S_CACHE=$K8S_ROOT/.cache/k8s
K8S_BUILD=$K8S_CACHE/build
K8S_BIN=$K8S_CACHE/bin
K8S_IMAGES=$K8S_CACHE/images
K8S_STATE=$K8S_CACHE/state
K8S_LOGS=$K8S_CACHE/logs
K8S_PIDS=$K8S_STATE/pids
K8S_PKI=$K8S_STATE/pki
K8S_KUBECONFIG=$K8S_STATE/kubeconfig/admin.conf
K8S_CONTAINERD_SOCK=$K8S_STATE/containerd/containerd.sock
K8S_KUBELET_ROOT=$K8S_STATE/kubelet
K8S_NETNS_BEFORE=$K8S_STATE/netns-before # the network namespaces there were before k8s-up
K8S_SYSCTLS_SAVED=$K8S_STATE/sysctls     # the kernel settings the kubelet changes, as they were
K8S_CREATED=$K8S_STATE/created           # directories outside .cache that k8s-up created

K8S_PAUSE_IMAGE=localhost/loadlab/pause:${K8S_VERSION}
K8S_NODE_NAME=${K8S_NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
K8S_APISERVER_PORT=${K8S_APISERVER_PORT:-6443}
K8S_ETCD_PORT=${K8S_ETCD_PORT:-2379}
K8S_KUBELET_PORT=${K8S_KUBELET_PORT:-10250}
K8S_SERVICE_CIDR=10.96.0.0/16
K8S_POD_CIDR=10.244.0.0/24
K8S_CNI_NETWORK=loadlab-k8s
K8S_CNI_BRIDGE=llk8s0

# The kernel settings (sysctl names) the kubelet sets at start when
# protectKernelDefaults is false: k8s-up.sh saves them and k8s-down.sh
# puts them back. net.ipv4.ip_forward: the CNI bridge plugin's gateway.
K8S_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward)

# The processes k8s-up.sh starts, in start order (k8s-down.sh stops them in
# reverse); each has a pidfile K8S_PIDS/NAME.pid and a log K8S_LOGS/NAME.log.
K8S_PROCS=(etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)

k8s_me=$(basename "$0" .sh)
log() { echo "$k8s_me: $*" >&2; }
die() { log "$*"; exit 1; }
# usage: print the running script's header comment (its --help).
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "${BASH_SOURCE[${#BASH_SOURCE[@]} - 1]}"; }
# no_args ARGS...: --help prints the header and exits; any other argument
# is refused (for the scripts that take none).
no_args() {
	case ${1:-} in
	-h | --help) usage; exit 0 ;;
	"") ;;
	*) die "unknown argument $1 (try --help)" ;;
	esac
}

k8s_need_root() { [[ $(id -u) -eq 0 ]] || die "run as root (the kubelet and containerd need it)"; }

# kctl ARGS...: kubectl against this cluster, with a request timeout.
kctl() { kubectl --kubeconfig "$K8S_KUBECONFIG" --request-timeout=30s "$@"; }

# k8s_ctr ARGS...: containerd's ctr against this cluster's containerd, in
# the namespace the CRI uses.
k8s_ctr() { ctr --address "$K8S_CONTAINERD_SOCK" --namespace k8s.io "$@"; }

# pid_of NAME: the PID in NAME's pidfile if that process still runs.
pid_of() {
	local f=$K8S_PIDS/$1.pid pid
	[[ -f $f ]] || return 1
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# wait_until SECONDS WHAT CMD...: run CMD every 0.5 s until it succeeds;
# die after SECONDS saying WHAT did not happen.
wait_until() {
	local limit=$1 what=$2 deadline
	shift 2
	deadline=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || die "timed out after ${limit}s waiting for $what"
		sleep 0.5
	done
}

# cni_bin_dir: where Debian's containernetworking-plugins put the plugins.
cni_bin_dir() {
	local bridge
	bridge=$(dpkg-query -L containernetworking-plugins 2>/dev/null | grep -m1 '/bridge$') ||
		die "containernetworking-plugins is not installed (k8s-up.sh installs it)"
	dirname "$bridge"
}

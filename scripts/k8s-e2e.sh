#!/usr/bin/env bash
# The README's sharded-run flow on the one-node cluster of scripts/k8s-up.sh,
# checked end to end.
#
#   scripts/k8s-e2e.sh      (make k8s-e2e; the cluster must be up: make k8s-up)
#
# 1. `make image` (bin/loadlab-image.tar, tag loadlab:dev), imported into the
#    node's containerd with ctr; `loadlab serve` on 127.0.0.1 of the node.
# 2. The run: `loadlab k8s job --shards 2 --host-network` against that
#    target, `kubectl apply`, `kubectl wait`, `kubectl logs ... --tail=-1`,
#    `loadlab merge`. Checked:
#    - both pods ran the image (its digest) as user 65532 with a read-only
#      root and no capabilities: read from the live processes (/proc) while
#      they wait for the start time;
#    - each got its own JOB_COMPLETION_INDEX (the pod's completion-index
#      annotation, the process's environment, the result's shard index);
#    - both started within 50 ms of the shared --start-at, read from their
#      results (schedule start, first second, largest send lag);
#    - the merged requests are the sum of the shards' and rate x duration
#      within 1%, and each merged histogram is the sum of the shards',
#      bucket by bucket, exactly (scripts/k8s-check).
# 3. The killed shard: the same Job, longer, and shard 1's pod deleted
#    mid-run. Checked: no retry (backoffLimitPerIndex 0: no second pod for
#    index 1), shard 0 runs to its end, the Job fails (FailedIndexes, index
#    1) within its activeDeadlineSeconds, `loadlab merge` of the logs left
#    refuses, naming the missing shard, and `merge --partial` gives shard
#    0's requests with a note naming it.
# Outputs (manifests, logs, results) stay in .cache/k8s/e2e/.
#
# Environment: RATE=1000 (requests/s of the whole run), DURATION=10
# (seconds), CONNS=8, START_IN=25 (seconds from the manifest to the start:
# scheduling, container start). Load goes to 127.0.0.1 only and every run is
# bounded by DURATION; every wait has a timeout.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/k8s-common.sh"

no_args "$@"

RATE=${RATE:-1000}
DURATION=${DURATION:-10}
CONNS=${CONNS:-8}
START_IN=${START_IN:-25}
KILL_DURATION=$((DURATION * 3))
IMAGE=loadlab:dev
E2E=$K8S_CACHE/e2e
LOADLAB=$K8S_ROOT/bin/loadlab-static
for v in RATE DURATION CONNS START_IN; do
	[[ ${!v} =~ ^[0-9]+$ && ${!v} -ge 1 ]] || die "$v must be a whole number >= 1 (got '${!v}')"
done

k8s_need_root
command -v jq >/dev/null || die "jq is missing (make k8s-up installs it)"
if [[ ! -f $K8S_KUBECONFIG ]] || ! kctl get --raw /readyz >/dev/null 2>&1; then
	die "no cluster answers: run make k8s-up first"
fi

SERVE_PID=""
JOBS=()
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	local j
	for j in "${JOBS[@]}"; do
		kctl delete job "$j" --wait=false --ignore-not-found >/dev/null 2>&1 || true
	done
	if [[ -n $SERVE_PID ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fails=0
# check OK WHAT: one line of the summary; a failed check fails the run at its end.
check() {
	if [[ $1 == 0 ]]; then
		echo "ok   $2"
	else
		echo "FAIL $2"
		fails=$((fails + 1))
	fi
}

t0=$SECONDS
rm -rf "$E2E"
mkdir -p "$E2E"

# ------------------------------------------------- image, target ----

log "make image"
(cd "$K8S_ROOT" && nice -n 15 make -s image IMAGE="$IMAGE") >"$E2E/image.txt" 2>&1 || die "make image failed: $(tail -n 3 "$E2E/image.txt")"
digest=$(grep -o 'sha256:[0-9a-f]\{64\}' "$E2E/image.txt" | head -n 1)
# The image's ID, which the pods' status reports: its config's digest.
image_id=sha256:$(tar -xOf "$K8S_ROOT/bin/loadlab-image.tar" manifest.json | jq -r '.[0].Config' | sed 's#.*/##')
k8s_ctr images import "$K8S_ROOT/bin/loadlab-image.tar" >/dev/null || die "ctr images import bin/loadlab-image.tar failed"
(cd "$K8S_ROOT" && nice -n 15 go build -o "$K8S_BIN/k8s-check" ./scripts/k8s-check) || die "go build ./scripts/k8s-check failed"
stored=$(k8s_ctr images list 2>/dev/null | awk -v d="$digest" '$3 == d {print $1}' | head -n 1)
check "$([[ $stored == docker.io/library/$IMAGE ]]; echo $?)" "image $IMAGE ($digest) imported as ${stored:-nothing} (the name the kubelet asks containerd for)"

# Port 0: serve picks a free one and says which.
"$LOADLAB" serve --listen 127.0.0.1:0 >"$E2E/serve.log" 2>&1 &
SERVE_PID=$!
serving() { grep -q -o '^serving http://127\.0\.0\.1:[0-9]*' "$E2E/serve.log"; }
wait_until 10 "loadlab serve to listen" serving
target=$(grep -o -m 1 '^serving http://127\.0\.0\.1:[0-9]*' "$E2E/serve.log" | cut -d' ' -f2)/1k
curl -sf --max-time 2 -o /dev/null "$target" || die "loadlab serve does not answer at $target"
log "target $target (loadlab serve, PID $SERVE_PID)"

# job NAME DURATION: write NAME's manifest (2 shards, host network) to
# E2E/NAME.yaml and apply it; sets START_AT and DEADLINE.
job() {
	local name=$1 dur=$2
	"$LOADLAB" k8s job --shards 2 --host-network --image "$IMAGE" --start-in "${START_IN}s" --name "$name" -o "$E2E/$name.yaml" \
		-- gen -r "$RATE" -d "${dur}s" -c "$CONNS" "$target" 2>"$E2E/$name.job.txt" || die "loadlab k8s job failed: $(cat "$E2E/$name.job.txt")"
	START_AT=$(grep -o -- '--start-at=[^ ]*' "$E2E/$name.yaml" | head -n 1 | cut -d= -f2)
	DEADLINE=$(awk '$1 == "activeDeadlineSeconds:" {print $2}' "$E2E/$name.yaml")
	[[ -n $START_AT && -n $DEADLINE ]] || die "$E2E/$name.yaml has no --start-at or activeDeadlineSeconds"
	JOBS+=("$name")
	kctl apply -f "$E2E/$name.yaml" >/dev/null || die "kubectl apply -f $E2E/$name.yaml failed"
	log "job $name applied: 2 shards start at $START_AT, ${dur}s at $RATE/s"
}

# running NAME: both of NAME's pods run.
running() {
	[[ $(kctl get pods -l "job-name=$1" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c -x Running) == 2 ]]
}

# pod_of NAME INDEX: the pod of NAME's shard INDEX.
pod_of() {
	kctl get pods -l "job-name=$1,batch.kubernetes.io/job-completion-index=$2" -o jsonpath='{.items[0].metadata.name}'
}

# shard_pid POD: the PID of POD's loadlab process on this node.
shard_pid() {
	local p
	for p in /proc/[0-9]*; do
		# (a process may end while this looks)
		[[ $(tr '\0' '\n' 2>/dev/null <"$p/cmdline" | head -n 1) == /loadlab ]] || continue
		tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -q -x "POD_NAME=$1" && { echo "${p#/proc/}"; return 0; }
	done
	return 1
}

# check_processes NAME: the live shard processes of NAME (while they wait
# for the start time): user, read-only root, capabilities, seccomp, index.
check_processes() {
	local name=$1 i pod pid uid gid root caps seccomp env ann img
	for i in 0 1; do
		pod=$(pod_of "$name" "$i")
		pid=$(shard_pid "$pod") || { check 1 "shard $i ($pod): no loadlab process found on the node"; continue; }
		uid=$(awk '$1 == "Uid:" {print $2, $3, $4, $5}' "/proc/$pid/status")
		gid=$(awk '$1 == "Gid:" {print $2, $3, $4, $5}' "/proc/$pid/status")
		caps=$(awk '$1 == "CapEff:" {print $2}' "/proc/$pid/status")
		seccomp=$(awk '$1 == "Seccomp:" {print $2}' "/proc/$pid/status")
		root=$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo" | tail -n 1)
		env=$(tr '\0' '\n' <"/proc/$pid/environ" | awk -F= '$1 == "JOB_COMPLETION_INDEX" {print $2}')
		ann=$(kctl get pod "$pod" -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}')
		img=$(kctl get pod "$pod" -o jsonpath='{.status.containerStatuses[0].imageID}')
		check "$([[ $uid == "65532 65532 65532 65532" && $gid == "65532 65532 65532 65532" ]]; echo $?)" \
			"shard $i ($pod, PID $pid): runs as user 65532 (Uid $uid, Gid $gid)"
		check "$([[ $root == ro,* || $root == ro ]]; echo $?)" "shard $i: root file system read-only (mount options $root)"
		check "$([[ $caps == 0000000000000000 && $seccomp == 2 ]]; echo $?)" "shard $i: no capabilities (CapEff $caps), seccomp filter (Seccomp $seccomp)"
		check "$([[ $env == "$i" && $ann == "$i" ]]; echo $?)" "shard $i: JOB_COMPLETION_INDEX=$env in its environment, completion-index annotation $ann"
		check "$([[ $img == *"$image_id" ]]; echo $?)" "shard $i: image ID ${img:-?} (make image's: $image_id)"
	done
}

# ------------------------------------------------------- the run ----

run=loadlab-e2e-$(date -u +%H%M%S)
job "$run" "$DURATION"
t_start=$(date -d "$START_AT" +%s)
wait_until $((START_IN - 3)) "both pods of $run to run before the start time" running "$run"
check_processes "$run"
check "$([[ $(date +%s) -lt $t_start ]]; echo $?)" "both pods ran before the start time $START_AT"
log "waiting for job $run to complete (timeout ${DEADLINE}s)"
if ! kctl --request-timeout=0 wait --for=condition=complete "job/$run" --timeout="${DEADLINE}s" >/dev/null; then
	kctl get pods -l "job-name=$run" -o wide >&2 || true
	die "job $run did not complete: see kubectl --kubeconfig $K8S_KUBECONFIG describe job $run"
fi
kctl logs -l "job-name=$run" --tail=-1 --max-log-requests=2 >"$E2E/shards.jsonl"
"$LOADLAB" merge "$E2E/shards.jsonl" --json "$E2E/run.json" >"$E2E/merge.txt" 2>&1 || { cat "$E2E/merge.txt" >&2; die "loadlab merge failed"; }
check 0 "job $run complete; kubectl logs --tail=-1: $(wc -l <"$E2E/shards.jsonl") lines; loadlab merge: $(head -n 1 "$E2E/merge.txt")"
rc=0
"$K8S_BIN/k8s-check" --shards 2 --start-at "$START_AT" --rate "$RATE" --duration "${DURATION}s" "$E2E/shards.jsonl" "$E2E/run.json" >"$E2E/check.txt" || rc=$?
cat "$E2E/check.txt"
((rc == 0)) || fails=$((fails + 1))

# ------------------------------------------------ a killed shard ----

kill_run=loadlab-e2e-kill-$(date -u +%H%M%S)
job "$kill_run" "$KILL_DURATION"
t_apply=$SECONDS
t_start=$(date -d "$START_AT" +%s)
wait_until $((START_IN - 3)) "both pods of $kill_run to run" running "$kill_run"
victim=$(pod_of "$kill_run" 1)
survivor=$(pod_of "$kill_run" 0)
# Mid-run: a third of the way through.
sleep $((t_start - $(date +%s) + KILL_DURATION / 3))
log "deleting shard 1's pod $victim mid-run"
kctl delete pod "$victim" --wait=false >/dev/null
log "waiting for job $kill_run to fail (timeout ${DEADLINE}s)"
if ! kctl --request-timeout=0 wait --for=condition=failed "job/$kill_run" --timeout="${DEADLINE}s" >/dev/null; then
	die "job $kill_run did not fail within its deadline after shard 1's pod was deleted"
fi
t_failed=$((SECONDS - t_apply))
reason=$(kctl get job "$kill_run" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}')
failed_idx=$(kctl get job "$kill_run" -o jsonpath='{.status.failedIndexes}')
check "$([[ $reason == FailedIndexes && $failed_idx == 1 && $t_failed -lt $DEADLINE ]]; echo $?)" \
	"job $kill_run failed ($reason, failed indexes: $failed_idx) ${t_failed}s after it was applied, within its activeDeadlineSeconds $DEADLINE"
pods_index1=$(kctl get pods -l "job-name=$kill_run,batch.kubernetes.io/job-completion-index=1" -o name | grep -c -v -x "pod/$victim" || true)
phase0=$(kctl get pod "$survivor" -o jsonpath='{.status.phase}')
check "$([[ $pods_index1 == 0 && $phase0 == Succeeded ]]; echo $?)" \
	"shard 1 not retried (backoffLimitPerIndex 0: $pods_index1 new pods for index 1); shard 0 ran to its end ($survivor: $phase0)"
kctl logs -l "job-name=$kill_run" --tail=-1 --max-log-requests=2 >"$E2E/kill-shards.jsonl" 2>"$E2E/kill-logs.err" || true
rc=0
"$LOADLAB" merge "$E2E/kill-shards.jsonl" >"$E2E/kill-merge.txt" 2>&1 || rc=$?
check "$([[ $rc == 2 ]] && grep -q 'shard 1/2 missing' "$E2E/kill-merge.txt"; echo $?)" \
	"loadlab merge of the logs left (exit $rc): $(head -n 1 "$E2E/kill-merge.txt")"
rc=0
"$LOADLAB" merge --partial "$E2E/kill-shards.jsonl" --json "$E2E/kill-partial.json" >/dev/null 2>&1 || rc=$?
note=$(jq -r '.generator.notes[]? | select(test("partial merge"))' "$E2E/kill-partial.json" 2>/dev/null | head -n 1)
req=$(jq -r '.requests' "$E2E/kill-partial.json" 2>/dev/null)
check "$([[ $rc == 0 && $note == *"shard 1/2 missing"* && $req == $((RATE * KILL_DURATION / 2)) ]]; echo $?)" \
	"loadlab merge --partial (exit $rc): shard 0's $req requests; note: ${note:-none}"

echo "e2e: Kubernetes $K8S_VERSION, $((SECONDS - t0)) s, $fails failed"
((fails == 0))

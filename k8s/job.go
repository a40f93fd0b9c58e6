// Package k8s builds the Kubernetes objects that run a sharded loadlab
// load test: a batch/v1 Job in Indexed completion mode whose pods are the
// shards (loadlab gen --shard INDEX/N), all starting their schedule at one
// wall-clock time, each printing its JSON result on standard output for
// `kubectl logs` and `loadlab merge`. It only builds manifests: nothing
// here talks to a cluster. It is a leaf package, imported by cmd alone.
//
// Imports: k8s is a leaf imported only by cmd/loadlab; it imports no other
// loadlab package and talks to no cluster.
package k8s

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Names the manifests use.
const (
	// IndexEnv is the variable the Job controller sets to each pod's
	// completion index (0..N-1); the container's arguments refer to it.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// InstanceLabel carries the Job's name on its pods (the anti-affinity
	// selects on it).
	InstanceLabel = "app.kubernetes.io/instance"
	// ContainerName is the name of the generator's container.
	ContainerName = "loadlab"
	// Binary is the path of the loadlab binary in the image (see package
	// image).
	Binary = "/loadlab"

	// HeaderSecretKey is the key of a --header-secret Secret that holds
	// the headers, one "Name: value" per line.
	HeaderSecretKey = "headers"
	// headerEnv is the prefix of the variables the Secrets' headers reach
	// gen through (--headers-env): never the Job spec, never argv.
	headerEnv = "LOADLAB_HEADERS_"
	// tmpDir is where the Job mounts an emptyDir: the image's root is
	// read-only and has no /tmp, and gen spills its per-second
	// histograms to the temporary directory.
	tmpDir = "/tmp"

	completionIndexAnnotation = "batch.kubernetes.io/job-completion-index"
	nonRootID                 = 65532 // the conventional "nonroot" user of distroless images
)

// JobOptions describes a sharded run. Shards, Image, Start and GenArgs are
// required.
type JobOptions struct {
	Name      string // the Job's name (a DNS-1123 label); default "loadlab"
	Namespace string // "" = the namespace kubectl applies to

	Image  string // container image holding the static loadlab binary at /loadlab
	Shards int    // pods, one shard each: completions = parallelism = Shards

	// CPUsPerShard is each pod's CPU request and limit, in whole CPUs:
	// with the kubelet's static CPU manager policy a Guaranteed pod
	// (requests = limits for CPU and memory) with whole CPUs gets cores of
	// its own, which gen pins one event loop each to. Default 1.
	CPUsPerShard int
	// MemoryPerShard is each pod's memory request and limit (a Kubernetes
	// quantity); default 512Mi.
	MemoryPerShard string
	// Spread requires each shard on a node of its own (pod anti-affinity
	// on the node's hostname): pods stay pending while there are fewer
	// nodes than shards.
	Spread bool
	// HostNetwork runs the pods in their node's network namespace
	// (hostNetwork, with dnsPolicy ClusterFirstWithHostNet so that cluster
	// names still resolve): a target on the node's loopback (127.0.0.1)
	// is reachable, and the traffic stays on the node. With MetricsPort,
	// every shard binds that port on its node: give Spread too.
	HostNetwork bool

	// Start is the wall-clock time every shard starts its schedule
	// (--start-at): far enough ahead for the pods to be scheduled and
	// their image pulled.
	Start time.Time
	// Deadline bounds the Job (activeDeadlineSeconds, counted from when
	// the Job starts): after it, Kubernetes stops every pod left.
	Deadline time.Duration

	// GenArgs are loadlab gen's flags and URL, without --shard,
	// --start-at, --json and --quiet, which the Job sets.
	GenArgs []string

	// MetricsPort, when not 0, has every shard serve its Prometheus
	// metrics (gen --metrics-addr, labelled shard=INDEX) on this port of
	// the pod's address: the container declares the port and the pod
	// carries the prometheus.io/scrape, port and path annotations that
	// annotation-based scrape configs discover. The endpoint is off
	// loopback, so GenArgs must include --metrics-allow-remote.
	MetricsPort int

	// HeaderSecrets name Secrets (in the Job's namespace) whose key
	// "headers" holds request headers, one "Name: value" per line: each
	// reaches gen through an environment variable set by secretKeyRef
	// (gen --headers-env), so the values are neither in the Job spec nor
	// on the command line. For Authorization, cookies and API keys,
	// instead of -H.
	HeaderSecrets []string
}

// reserved are the gen flags the Job sets itself.
var reserved = []string{"--shard", "--start-at", "--json", "--quiet", "-q", "--host"}

// Job returns the batch/v1 Job of o. Errors say which option is wrong.
func Job(o JobOptions) (*batchv1.Job, error) {
	if o.Name == "" {
		o.Name = "loadlab"
	}
	if o.CPUsPerShard == 0 {
		o.CPUsPerShard = 1
	}
	if o.MemoryPerShard == "" {
		o.MemoryPerShard = "512Mi"
	}
	// Pods of an Indexed Job are named NAME-INDEX-RANDOM and take
	// NAME-INDEX as hostname: keep room for the index.
	if errs := validation.IsDNS1123Label(o.Name + "-" + strconv.Itoa(max(o.Shards-1, 0))); len(errs) > 0 {
		return nil, fmt.Errorf("job name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return nil, fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
		}
	}
	switch {
	case o.Image == "":
		return nil, fmt.Errorf("no image: give the image that holds the loadlab binary")
	case o.Shards < 1 || o.Shards > 10_000:
		return nil, fmt.Errorf("shards must be between 1 and 10000 (got %d)", o.Shards)
	case o.CPUsPerShard < 1 || o.CPUsPerShard > 1024:
		return nil, fmt.Errorf("CPUs per shard must be a whole number between 1 and 1024 (got %d): the static CPU manager gives whole cores only to whole-CPU requests", o.CPUsPerShard)
	case o.Start.IsZero():
		return nil, fmt.Errorf("no start time: every shard needs the same one")
	case o.Deadline < 0:
		return nil, fmt.Errorf("deadline must be >= 0 (got %v)", o.Deadline)
	case len(o.GenArgs) == 0:
		return nil, fmt.Errorf("no gen arguments: give at least the target URL")
	}
	if o.MetricsPort != 0 {
		switch {
		case o.MetricsPort < 1 || o.MetricsPort > 65535:
			return nil, fmt.Errorf("metrics port must be between 1 and 65535 (got %d)", o.MetricsPort)
		case HasArg(o.GenArgs, "--metrics-addr"):
			return nil, fmt.Errorf("gen argument --metrics-addr: the Job sets it from the metrics port; leave it out")
		case !HasArg(o.GenArgs, "--metrics-allow-remote"):
			return nil, fmt.Errorf("metrics port: the shards serve metrics on the pod's address, off loopback; add --metrics-allow-remote to the gen arguments")
		case o.HostNetwork && o.Shards > 1 && !o.Spread:
			return nil, fmt.Errorf("metrics port with host network: the shards on one node would all bind port %d of the node; add --spread (one shard per node)", o.MetricsPort)
		}
	}
	mem, err := resource.ParseQuantity(o.MemoryPerShard)
	if err != nil || mem.Sign() <= 0 {
		return nil, fmt.Errorf("memory per shard %q: give a Kubernetes quantity such as 512Mi or 2Gi", o.MemoryPerShard)
	}
	for _, a := range o.GenArgs {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(reserved, name) {
			return nil, fmt.Errorf("gen argument %s: the Job sets it for each shard; leave it out", name)
		}
	}
	n := int32(o.Shards)
	labels := map[string]string{
		"app.kubernetes.io/name":      "loadlab",
		"app.kubernetes.io/component": "generator",
		InstanceLabel:                 o.Name,
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(o.CPUsPerShard), resource.DecimalSI),
		corev1.ResourceMemory: mem,
	}
	args := []string{
		"gen",
		fmt.Sprintf("--shard=$(%s)/%d", IndexEnv, o.Shards),
		"--start-at=" + o.Start.UTC().Format(time.RFC3339Nano),
		"--host=$(NODE_NAME)/$(POD_NAME)",
		"--json=-",
		"--quiet",
	}
	var annotations map[string]string
	var ports []corev1.ContainerPort
	if o.MetricsPort != 0 {
		args = append(args, "--metrics-addr=0.0.0.0:"+strconv.Itoa(o.MetricsPort))
		ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: int32(o.MetricsPort), Protocol: corev1.ProtocolTCP}}
		annotations = map[string]string{
			"prometheus.io/scrape": "true",
			"prometheus.io/port":   strconv.Itoa(o.MetricsPort),
			"prometheus.io/path":   "/metrics",
		}
	}
	var secretEnv []corev1.EnvVar
	for i, name := range o.HeaderSecrets {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("header secret %q: %s", name, strings.Join(errs, "; "))
		}
		v := headerEnv + strconv.Itoa(i)
		args = append(args, "--headers-env="+v)
		secretEnv = append(secretEnv, corev1.EnvVar{Name: v, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: HeaderSecretKey}}})
	}
	args = append(args, o.GenArgs...)
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		NodeSelector:  map[string]string{corev1.LabelOSStable: "linux"},
		// gen talks to no Kubernetes API: no token in the pod.
		AutomountServiceAccountToken: ptr(false),
		// The image's root is read-only and has no /tmp: gen spills its
		// per-second histograms here (the result's generator.spill).
		Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr(true),
			RunAsUser:      ptr(int64(nonRootID)),
			RunAsGroup:     ptr(int64(nonRootID)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:    ContainerName,
			Image:   o.Image,
			Command: []string{Binary},
			Args:    args,
			Ports:   ports,
			Env: append([]corev1.EnvVar{
				fieldEnv(IndexEnv, "metadata.annotations['"+completionIndexAnnotation+"']"),
				fieldEnv("NODE_NAME", "spec.nodeName"),
				fieldEnv("POD_NAME", "metadata.name"),
				{Name: "TMPDIR", Value: tmpDir},
			}, secretEnv...),
			VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: tmpDir}},
			Resources:    corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
			// A failed shard's error line is its termination message.
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false),
				ReadOnlyRootFilesystem:   ptr(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
	if o.HostNetwork {
		pod.HostNetwork = true
		pod.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if o.Spread {
		pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{InstanceLabel: o.Name}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    ptr(n),
			Parallelism:    ptr(n),
			// A retried shard would start after the start time and fail
			// as late: one attempt per shard. Per index, not for the
			// whole Job (backoffLimit 0): there the first failed shard
			// fails the Job at once and its controller deletes every
			// other shard's running pod, and with it the log that holds
			// its result. So the others run to their end, the Job then
			// fails (FailedIndexes), and merge names the missing shard
			// (or merges the rest with --partial). Kubernetes 1.29+
			// (beta, on by default; GA in 1.33).
			BackoffLimitPerIndex: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec:       pod,
			},
		},
	}
	if o.Deadline > 0 {
		job.Spec.ActiveDeadlineSeconds = ptr(int64((o.Deadline + time.Second - 1) / time.Second))
	}
	return job, nil
}

// YAML writes job as YAML (sigs.k8s.io/yaml: through the API types' JSON
// names, as kubectl reads it).
func YAML(job *batchv1.Job) ([]byte, error) {
	b, err := yaml.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("write the Job as YAML: %w", err)
	}
	return b, nil
}

// HasArg reports whether args give the flag name, as --name or
// --name=value, before a "--".
func HasArg(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if n, _, _ := strings.Cut(a, "="); n == name {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

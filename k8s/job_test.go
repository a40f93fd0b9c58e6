package k8s

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func example() JobOptions {
	return JobOptions{
		Name:         "loadlab-run1",
		Image:        "registry.example/loadlab:v1",
		Shards:       4,
		CPUsPerShard: 2,
		Spread:       true,
		Start:        time.Date(2026, 5, 1, 12, 1, 0, 0, time.UTC),
		Deadline:     3 * time.Minute,
		GenArgs:      []string{"-r", "20000", "-d", "60s", "-c", "400", "--allow-remote", "http://proxy.bench.svc:8080/1k"},
	}
}

// decode reads a manifest the way a strict API client would: every field
// must be a field of batch/v1 Job.
func decode(t *testing.T, b []byte) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, b)
	}
	return &job
}

func TestJobGolden(t *testing.T) {
	job, err := Job(example())
	if err != nil {
		t.Fatal(err)
	}
	got, err := YAML(job)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "job-4-shards.yaml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./k8s -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("manifest differs from %s (go test ./k8s -update rewrites it):\n%s", golden, got)
	}
	decode(t, want)
}

// TestJobFields: the manifest decodes strictly into a batch/v1 Job with
// what a sharded run needs.
func TestJobFields(t *testing.T) {
	b, err := YAML(must(Job(example())))
	if err != nil {
		t.Fatal(err)
	}
	job := decode(t, b)
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "loadlab-run1" {
		t.Fatalf("type/name %s %s %s", job.APIVersion, job.Kind, job.Name)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 {
		t.Fatalf("completion mode %v, completions %v, parallelism %v", s.CompletionMode, s.Completions, s.Parallelism)
	}
	// No retry of a shard, and no whole-Job backoff limit: with one, the
	// first failed shard would fail the Job and its controller would
	// delete the other shards' pods, their results with them.
	if s.BackoffLimit != nil || s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 || *s.ActiveDeadlineSeconds != 180 {
		t.Fatalf("backoff limit %v, per index %v, deadline %d: want none, 0, 180", s.BackoffLimit, s.BackoffLimitPerIndex, *s.ActiveDeadlineSeconds)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("restart policy %s, %d containers", pod.RestartPolicy, len(pod.Containers))
	}
	c := pod.Containers[0]
	wantArgs := []string{"gen", "--shard=$(JOB_COMPLETION_INDEX)/4", "--start-at=2026-05-01T12:01:00Z", "--host=$(NODE_NAME)/$(POD_NAME)",
		"--json=-", "--quiet", "-r", "20000", "-d", "60s", "-c", "400", "--allow-remote", "http://proxy.bench.svc:8080/1k"}
	if c.Image != "registry.example/loadlab:v1" || !slices.Equal(c.Command, []string{"/loadlab"}) || !slices.Equal(c.Args, wantArgs) {
		t.Fatalf("container %s %v %q", c.Image, c.Command, c.Args)
	}
	var index *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == IndexEnv {
			index = &c.Env[i]
		}
	}
	if index == nil || index.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Fatalf("env %+v: want %s from the completion-index annotation", c.Env, IndexEnv)
	}
	// Guaranteed QoS with whole CPUs: what the static CPU manager pins.
	req, lim := c.Resources.Requests, c.Resources.Limits
	if req.Cpu().String() != "2" || lim.Cpu().String() != "2" || !req.Memory().Equal(*lim.Memory()) || req.Memory().String() != "512Mi" {
		t.Fatalf("resources requests %v limits %v", req, lim)
	}
	aa := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(aa) != 1 || aa[0].TopologyKey != "kubernetes.io/hostname" || aa[0].LabelSelector.MatchLabels[InstanceLabel] != "loadlab-run1" ||
		s.Template.Labels[InstanceLabel] != "loadlab-run1" {
		t.Fatalf("anti-affinity %+v, pod labels %v", aa, s.Template.Labels)
	}
	if sc := c.SecurityContext; *sc.ReadOnlyRootFilesystem != true || *sc.AllowPrivilegeEscalation || *pod.SecurityContext.RunAsNonRoot != true {
		t.Fatalf("security context %+v / %+v", sc, pod.SecurityContext)
	}

	o := example()
	o.Spread, o.Deadline = false, 0
	job = decode(t, must(YAML(must(Job(o)))))
	if job.Spec.Template.Spec.Affinity != nil || job.Spec.ActiveDeadlineSeconds != nil {
		t.Fatalf("without --spread and deadline: affinity %+v, deadline %v", job.Spec.Template.Spec.Affinity, job.Spec.ActiveDeadlineSeconds)
	}
}

func TestJobRefuses(t *testing.T) {
	for want, edit := range map[string]func(*JobOptions){
		"job name":             func(o *JobOptions) { o.Name = "Load_Lab" },
		"namespace":            func(o *JobOptions) { o.Namespace = "a b" },
		"no image":             func(o *JobOptions) { o.Image = "" },
		"shards must be":       func(o *JobOptions) { o.Shards = 0 },
		"whole number":         func(o *JobOptions) { o.CPUsPerShard = -1 },
		"no start time":        func(o *JobOptions) { o.Start = time.Time{} },
		"memory per shard":     func(o *JobOptions) { o.MemoryPerShard = "lots" },
		"gen argument --shard": func(o *JobOptions) { o.GenArgs = append(o.GenArgs, "--shard=1/2") },
		"gen argument --json":  func(o *JobOptions) { o.GenArgs = append(o.GenArgs, "--json", "x") },
		"no gen arguments":     func(o *JobOptions) { o.GenArgs = nil },
	} {
		o := example()
		edit(&o)
		if _, err := Job(o); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v", want, err)
		}
	}
	// Pod hostnames are NAME-INDEX: the name must leave room for the
	// largest index within a DNS label's 63 characters.
	o := example()
	o.Name = strings.Repeat("a", 62)
	if _, err := Job(o); err == nil {
		t.Error("a 62-character name with 4 shards (pod hostname of 64) was accepted")
	}
	o.Name = strings.Repeat("a", 61)
	if _, err := Job(o); err != nil {
		t.Errorf("a 61-character name with 4 shards: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestJobMetricsPort: --metrics-port gives each shard an endpoint on the
// pod's address that annotation-based discovery finds.
func TestJobMetricsPort(t *testing.T) {
	o := withMetrics(example())
	job := decode(t, must(YAML(must(Job(o)))))
	tpl := job.Spec.Template
	c := tpl.Spec.Containers[0]
	if i := slices.Index(c.Args, "--metrics-addr=0.0.0.0:9464"); i != 6 || c.Args[len(c.Args)-1] != "http://proxy.bench.svc:8080/1k" {
		t.Fatalf("args %q: want --metrics-addr after the Job's own flags, the URL last", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9464 || c.Ports[0].Name != "metrics" || c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("ports %+v", c.Ports)
	}
	a := tpl.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9464" || a["prometheus.io/path"] != "/metrics" {
		t.Fatalf("pod annotations %v", a)
	}
	job = decode(t, must(YAML(must(Job(example())))))
	if c := job.Spec.Template.Spec.Containers[0]; len(c.Ports) != 0 || job.Spec.Template.Annotations != nil || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--metrics-addr") }) {
		t.Fatalf("without a metrics port: ports %+v, annotations %v, args %q", c.Ports, job.Spec.Template.Annotations, c.Args)
	}
	for want, edit := range map[string]func(*JobOptions){
		"between 1 and 65535":         func(o *JobOptions) { o.MetricsPort = 70000 },
		"gen argument --metrics-addr": func(o *JobOptions) { o.GenArgs = append([]string{"--metrics-addr=127.0.0.1:1"}, o.GenArgs...) },
		"add --metrics-allow-remote": func(o *JobOptions) { // --allow-remote is for targets
			o.GenArgs = slices.DeleteFunc(o.GenArgs, func(a string) bool { return a == "--metrics-allow-remote" })
		},
	} {
		o := withMetrics(example())
		edit(&o)
		if _, err := Job(o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v", want, err)
		}
	}
}

// withMetrics is o with metrics port 9464, which gen's
// --metrics-allow-remote allows.
func withMetrics(o JobOptions) JobOptions {
	o.MetricsPort = 9464
	o.GenArgs = append([]string{"--metrics-allow-remote"}, o.GenArgs...)
	return o
}

// TestJobHostNetwork: HostNetwork puts the pods in their node's network
// namespace, where a target on the node's loopback is reachable, and
// keeps cluster DNS (ClusterFirstWithHostNet: plain ClusterFirst would
// fall back to the node's resolver in a host-network pod).
func TestJobHostNetwork(t *testing.T) {
	o := example()
	o.HostNetwork = true
	o.GenArgs = []string{"-r", "1000", "-d", "10s", "-c", "4", "http://127.0.0.1:8080/1k"}
	pod := decode(t, must(YAML(must(Job(o))))).Spec.Template.Spec
	if !pod.HostNetwork || pod.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Fatalf("hostNetwork %v, dnsPolicy %q: want true, %q", pod.HostNetwork, pod.DNSPolicy, corev1.DNSClusterFirstWithHostNet)
	}
	pod = decode(t, must(YAML(must(Job(example()))))).Spec.Template.Spec
	if pod.HostNetwork || pod.DNSPolicy != "" {
		t.Fatalf("without host network: hostNetwork %v, dnsPolicy %q", pod.HostNetwork, pod.DNSPolicy)
	}
	// Every shard on a node binds the metrics port in the node's
	// namespace: more than one shard per node cannot start.
	o = withMetrics(example())
	o.HostNetwork, o.Spread = true, false
	if _, err := Job(o); err == nil || !strings.Contains(err.Error(), "add --spread") {
		t.Fatalf("host network, metrics port, 4 shards without spread: error %v", err)
	}
	o.Spread = true
	if _, err := Job(o); err != nil {
		t.Fatalf("host network, metrics port, spread: %v", err)
	}
}

// TestJobHardening: the pods get no service account token (gen talks to
// no Kubernetes API), a writable emptyDir at /tmp for gen's spill (the
// image's root is read-only), and each --header-secret reaches gen by a
// secretKeyRef, never in the manifest or on the command line.
func TestJobHardening(t *testing.T) {
	o := example()
	o.HeaderSecrets = []string{"api-headers", "more.headers"}
	b := must(YAML(must(Job(o))))
	job := decode(t, b)
	pod := job.Spec.Template.Spec
	if a := pod.AutomountServiceAccountToken; a == nil || *a {
		t.Fatalf("automountServiceAccountToken %v, want false", a)
	}
	c := pod.Containers[0]
	if len(pod.Volumes) != 1 || pod.Volumes[0].EmptyDir == nil || len(c.VolumeMounts) != 1 ||
		c.VolumeMounts[0].Name != pod.Volumes[0].Name || c.VolumeMounts[0].MountPath != "/tmp" || c.VolumeMounts[0].ReadOnly {
		t.Fatalf("volumes %+v, mounts %+v: want an emptyDir at /tmp", pod.Volumes, c.VolumeMounts)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if env["TMPDIR"].Value != "/tmp" {
		t.Errorf("TMPDIR %q, want /tmp", env["TMPDIR"].Value)
	}
	for i, name := range o.HeaderSecrets {
		v := "LOADLAB_HEADERS_" + strconv.Itoa(i)
		ref := env[v].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != name || ref.SecretKeyRef.Key != HeaderSecretKey {
			t.Errorf("env %s: %+v, want a secretKeyRef to %s/%s", v, env[v], name, HeaderSecretKey)
		}
		if !slices.Contains(c.Args, "--headers-env="+v) {
			t.Errorf("args %q: want --headers-env=%s", c.Args, v)
		}
	}
	o.HeaderSecrets = []string{"Not_A_Name"}
	if _, err := Job(o); err == nil || !strings.Contains(err.Error(), "header secret") {
		t.Errorf("a bad secret name: %v", err)
	}
}

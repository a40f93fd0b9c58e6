package main

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestK8sJobCLI(t *testing.T) {
	start := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	code, stdout, stderr := runCLI(t, "k8s", "job", "--shards", "3", "--cpus-per-shard", "2", "--spread", "--image", "reg/loadlab:1",
		"--start-at", start.Format(time.RFC3339), "--", "gen", "-r", "3000", "-d", "30s", "-c", "30", "--allow-remote", "http://svc.ns:8080/1k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, stdout)
	}
	c := job.Spec.Template.Spec.Containers[0]
	wantName := "loadlab-" + start.Format("20060102-150405")
	if job.Name != wantName || *job.Spec.Completions != 3 || c.Args[1] != "--shard=$(JOB_COMPLETION_INDEX)/3" ||
		c.Args[2] != "--start-at="+start.Format(time.RFC3339) || c.Args[len(c.Args)-1] != "http://svc.ns:8080/1k" {
		t.Fatalf("job %s, args %q", job.Name, c.Args)
	}
	// The deadline covers the start, the run and its drain (2 x the 10 s
	// default timeout), plus the margin.
	min := int64((90*time.Second + 30*time.Second + 20*time.Second + jobMargin).Seconds())
	if d := *job.Spec.ActiveDeadlineSeconds; d < min-5 || d > min+1 {
		t.Fatalf("deadline %d s, want about %d", d, min)
	}
	if !strings.Contains(stderr, "kubectl logs -l job-name="+wantName+" --tail=-1 --max-log-requests=3 > shards.jsonl") || strings.Contains(stderr, "--allow-remote") {
		t.Fatalf("stderr %q", stderr)
	}
}

// TestK8sJobCLIRefuses: bad input is one line on stderr and exit 2.
func TestK8sJobCLIRefuses(t *testing.T) {
	base := []string{"k8s", "job", "--shards", "4", "--image", "img"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"k8s", "job", "--image", "img", "--", "gen", "http://x/"}, "--shards must be at least 1"},
		{[]string{"k8s", "job", "--shards", "2", "--", "gen", "http://x/"}, "--image is required"},
		{append(base, "gen", "http://x/"), "after --"},
		{append(base, "--", "gen"), "exactly one URL"},
		{append(base, "--", "gen", "--json", "out.json", "http://x/"), "gen argument --json"},
		{append(base, "--", "gen", "--shard", "1/4", "http://x/"), "gen argument --shard"},
		{append(base, "--", "gen", "--start-at=+5s", "http://x/"), "gen argument --start-at"},
		{append(base, "--", "gen", "-q", "http://x/"), "gen argument --quiet"},
		{append(base, "--", "gen", "-c", "3", "http://x/"), "cannot be split over 4 shards"},
		{append(base, "--", "gen", "--nope", "http://x/"), "unknown flag: --nope"},
		{append(base, "--", "gen", "ftp://x/"), "gen arguments:"},
		{append(base, "--start-at", "2020-01-01T00:00:00Z", "--", "gen", "http://x/"), "not in the future"},
		{append(base, "--cpus-per-shard", "0", "--", "gen", "http://x/"), "whole number"},
		{append(base, "--name", "Bad_Name", "--", "gen", "http://x/"), "job name"},
		{append(base, "--", "gen", "--targets", "t.txt"), "gen argument --targets: the pods cannot read a file"},
		{append(base, "--", "gen", "--threshold", "p99<1s", "http://x/"), "loadlab merge --threshold"},
		{append(base, "--", "gen", "--stages", "10s", "http://x/"), "gen arguments: --stages: bad stages"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
}

// TestK8sJobStagesDeadline: a staged run lasts its stages' sum, and the
// Job's deadline covers it.
func TestK8sJobStagesDeadline(t *testing.T) {
	start := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	code, stdout, stderr := runCLI(t, "k8s", "job", "--shards", "2", "--image", "img", "--start-at", start.Format(time.RFC3339),
		"--", "gen", "--stages", "1m:1000,2m:1000,1m:0", "-c", "10", "--allow-remote", "http://svc.ns:8080/1k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatal(err)
	}
	want := int64((90*time.Second + 4*time.Minute + 20*time.Second + jobMargin).Seconds())
	if d := *job.Spec.ActiveDeadlineSeconds; d < want-5 || d > want+1 {
		t.Fatalf("deadline %d s, want about %d (the stages last 4 min)", d, want)
	}
}

// TestK8sJobMetricsPort: the Job's deadline also covers the shards'
// metrics linger, and a metrics port without --metrics-allow-remote is
// refused (--allow-remote, which allows remote targets, is not enough).
func TestK8sJobMetricsPort(t *testing.T) {
	start := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	args := []string{"k8s", "job", "--shards", "2", "--image", "reg/loadlab:1", "--metrics-port", "9464", "--start-at", start.Format(time.RFC3339),
		"--", "gen", "-r", "3000", "-d", "30s", "-c", "30", "--metrics-linger", "7s"}
	code, stdout, stderr := runCLI(t, append(args, "--allow-remote", "--metrics-allow-remote", "http://svc.ns:8080/1k")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, stdout)
	}
	if a := job.Spec.Template.Annotations; a["prometheus.io/port"] != "9464" {
		t.Fatalf("annotations %v", a)
	}
	min := int64((90*time.Second + 30*time.Second + 20*time.Second + 7*time.Second + jobMargin).Seconds())
	if d := *job.Spec.ActiveDeadlineSeconds; d < min-5 || d > min+1 {
		t.Fatalf("deadline %d s, want about %d (with the 7 s linger)", d, min)
	}
	code, _, stderr = runCLI(t, append(args, "--allow-remote", "http://svc.ns:8080/1k")...)
	if code != 2 || !strings.Contains(stderr, "add --metrics-allow-remote") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("without --metrics-allow-remote: exit %d, %q", code, stderr)
	}
}

// TestK8sJobHostNetwork: --host-network gives pods in the node's network
// namespace, for a target on the node's loopback (no --allow-remote
// needed, so no note about it).
func TestK8sJobHostNetwork(t *testing.T) {
	start := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	args := []string{"k8s", "job", "--shards", "2", "--image", "reg/loadlab:1", "--start-at", start.Format(time.RFC3339)}
	gen := []string{"--", "gen", "-r", "1000", "-d", "10s", "-c", "4", "http://127.0.0.1:8080/1k"}
	code, stdout, stderr := runCLI(t, append(append(args, "--host-network"), gen...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, stdout)
	}
	if pod := job.Spec.Template.Spec; !pod.HostNetwork || pod.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Fatalf("hostNetwork %v, dnsPolicy %q", pod.HostNetwork, pod.DNSPolicy)
	}
	if strings.Contains(stderr, "--allow-remote") {
		t.Fatalf("a loopback target from the node's network got the --allow-remote note: %q", stderr)
	}
	code, stdout, stderr = runCLI(t, append(args, gen...)...)
	if code != 0 || !strings.Contains(stderr, "--allow-remote") {
		t.Fatalf("without --host-network: exit %d, stderr %q (want the --allow-remote note)", code, stderr)
	}
	if strings.Contains(stdout, "hostNetwork") || strings.Contains(stdout, "dnsPolicy") {
		t.Fatalf("without --host-network the manifest has host networking:\n%s", stdout)
	}
}

// TestK8sJobHeaderSecret: `k8s job --header-secret NAME` gives the pods
// the Secret's headers by secretKeyRef and no service account token; an
// Authorization header given with -H is named as being in the manifest in
// clear. Decoded into batchv1.Job, as kubectl reads it.
func TestK8sJobHeaderSecret(t *testing.T) {
	start := time.Now().Add(90 * time.Second).UTC().Truncate(time.Second)
	args := []string{"k8s", "job", "--shards", "2", "--image", "reg/loadlab:1", "--start-at", start.Format(time.RFC3339), "--header-secret", "api-headers",
		"--", "gen", "-r", "3000", "-d", "30s", "-c", "30", "--allow-remote", "http://svc.ns:8080/1k"}
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, stdout)
	}
	pod := job.Spec.Template.Spec
	if a := pod.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken %v, want false", a)
	}
	var ref *corev1.SecretKeySelector
	var envName string
	for _, e := range pod.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref, envName = e.ValueFrom.SecretKeyRef, e.Name
		}
	}
	if ref == nil || ref.Name != "api-headers" || ref.Key != "headers" {
		t.Fatalf("env %+v: want a secretKeyRef to api-headers/headers", pod.Containers[0].Env)
	}
	if !strings.Contains(strings.Join(pod.Containers[0].Args, " "), "--headers-env="+envName) {
		t.Errorf("args %q: want --headers-env=%s", pod.Containers[0].Args, envName)
	}
	args[len(args)-1] = "-H"
	args = append(args, "Authorization: Bearer abc", "http://svc.ns:8080/1k")
	if code, _, stderr = runCLI(t, args...); code != 0 || !strings.Contains(stderr, "-H Authorization is in the manifest in clear") {
		t.Errorf("-H Authorization: exit %d, stderr %q: want a note pointing to --header-secret", code, stderr)
	}
}

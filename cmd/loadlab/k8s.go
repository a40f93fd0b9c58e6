package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/internal/loopback"
	"github.com/loadlab/loadlab/k8s"
	"github.com/spf13/cobra"
)

// newK8sCmd builds `loadlab k8s`: manifests and the image for sharded runs
// on Kubernetes.
func newK8sCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Run sharded load from Kubernetes: an Indexed Job of generator shards, and the image it runs",
	}
	cmd.AddCommand(newK8sJobCmd(), newK8sImageCmd())
	return cmd
}

type k8sJobFlags struct {
	opts    k8s.JobOptions
	startIn time.Duration
	startAt string
	out     string
}

// jobMargin is the time a Job is given beyond its start, run and drain
// before Kubernetes stops it.
const jobMargin = 2 * time.Minute

func newK8sJobCmd() *cobra.Command {
	f := &k8sJobFlags{}
	cmd := &cobra.Command{
		Use:   "job --shards N --image IMG [flags] -- gen [gen flags] URL",
		Short: "Print a batch/v1 Job that runs loadlab gen as N shards starting together",
		Long: `job prints a Kubernetes Job (YAML, batch/v1, Indexed completion mode) whose N
pods are the shards of one run: pod INDEX runs loadlab gen --shard INDEX/N
with the gen arguments given after --, all with one --start-at time (now +
--start-in, on a whole second), and prints its JSON result on standard
output. Collect and merge the results with:

  kubectl logs -l job-name=NAME --tail=-1 --max-log-requests=N > shards.jsonl
  loadlab merge shards.jsonl

-c (connections), -r (rate) and -n (requests) are the whole run's: each
shard takes every N-th request of the schedule and its share of the
connections. Each pod requests and is limited to --cpus-per-shard whole CPUs
and --memory-per-shard (Guaranteed QoS): under the kubelet's static CPU
manager policy it gets cores of its own, which gen pins one event loop each
to. --spread puts each shard on a node of its own (required pod
anti-affinity). --host-network runs the shards in their node's network
namespace, for a target on the node itself (http://127.0.0.1:PORT/).

Apply the manifest at once: a shard whose pod starts after the start time
fails rather than run unsynchronised. A failed shard is not retried
(backoffLimitPerIndex 0, Kubernetes 1.29+) and the others run to their end,
so their results stay in their logs: the Job then fails (FailedIndexes) and
merge names the missing shard. The Job is stopped after its start, run and
drain plus 2 minutes (activeDeadlineSeconds).

Nothing here talks to a cluster: pipe the output to kubectl apply -f -.`,
		Example: `  loadlab k8s job --shards 4 --cpus-per-shard 2 --spread --image registry.example/loadlab:v1 \
      -- gen -r 40000 -d 60s -c 400 --allow-remote http://proxy.bench.svc:8080/1k | kubectl apply -f -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 || len(args) == 0 || args[0] != "gen" {
				return usagef("give the generator's arguments after --: loadlab k8s job [flags] -- gen [gen flags] URL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runK8sJob(cmd, f, args[1:]) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.opts.Shards, "shards", 0, "number of shards (pods; completions = parallelism)")
	fl.StringVar(&f.opts.Image, "image", "", "container image holding the static loadlab binary at /loadlab (see loadlab k8s image)")
	fl.IntVar(&f.opts.CPUsPerShard, "cpus-per-shard", 1, "whole CPUs each pod requests and is limited to")
	fl.StringVar(&f.opts.MemoryPerShard, "memory-per-shard", "512Mi", "memory each pod requests and is limited to")
	fl.BoolVar(&f.opts.Spread, "spread", false, "put every shard on a node of its own (required pod anti-affinity)")
	fl.BoolVar(&f.opts.HostNetwork, "host-network", false, "run the shards in their node's network namespace (hostNetwork, dnsPolicy ClusterFirstWithHostNet): for a target on the node itself, such as http://127.0.0.1:PORT/, with the traffic kept on the node")
	fl.StringVar(&f.opts.Name, "name", "", "Job name (default loadlab-YYYYMMDD-HHMMSS of the start time)")
	fl.StringVar(&f.opts.Namespace, "namespace", "", "namespace (default: the one kubectl applies to)")
	fl.DurationVar(&f.startIn, "start-in", time.Minute, "start the schedule this long after now, rounded up to a whole second: time for the pods to be scheduled and the image pulled")
	fl.StringVar(&f.startAt, "start-at", "", "start the schedule at this time instead (RFC 3339)")
	fl.StringVarP(&f.out, "output", "o", "-", "write the manifest to FILE (- = stdout)")
	fl.StringArrayVar(&f.opts.HeaderSecrets, "header-secret", nil, "request headers from the Secret NAME (repeatable): its key \"headers\" holds them, one \"Name: value\" per line; each pod gets them by secretKeyRef (gen --headers-env), so they are neither in the manifest nor on a command line. Use it instead of -H for Authorization, cookies and API keys")
	fl.IntVar(&f.opts.MetricsPort, "metrics-port", 0, "have each shard serve Prometheus metrics on this port of its pod (gen --metrics-addr, label shard), with the container port and the prometheus.io/scrape, port and path pod annotations; needs --metrics-allow-remote in the gen arguments")
	return cmd
}

func runK8sJob(cmd *cobra.Command, f *k8sJobFlags, genArgs []string) error {
	o := f.opts
	if o.Shards < 1 {
		return usagef("--shards must be at least 1 (got %d)", o.Shards)
	}
	if o.CPUsPerShard < 1 {
		return usagef("--cpus-per-shard must be a whole number of CPUs, at least 1 (got %d)", o.CPUsPerShard)
	}
	if o.Image == "" {
		return usagef("--image is required: the image that holds the loadlab binary (build one with loadlab k8s image)")
	}
	now := time.Now()
	switch {
	case f.startAt != "" && cmd.Flags().Changed("start-in"):
		return usagef("give --start-in or --start-at, not both")
	case f.startAt != "":
		t, err := gen.ParseStartAt(f.startAt, now)
		if err != nil {
			return usageError{err}
		}
		if !t.After(now) {
			return usagef("--start-at %s is not in the future", f.startAt)
		}
		o.Start = t
	case f.startIn <= 0:
		return usagef("--start-in must be > 0 (got %v): the pods need time to start", f.startIn)
	default:
		o.Start = now.Add(f.startIn).Truncate(time.Second).Add(time.Second)
	}
	run, target, err := checkGenArgs(genArgs, o.Shards, o.MetricsPort != 0)
	if err != nil {
		return err
	}
	o.GenArgs = genArgs
	o.Deadline = o.Start.Sub(now) + run + jobMargin
	if o.Name == "" {
		o.Name = "loadlab-" + o.Start.UTC().Format("20060102-150405")
	}
	job, err := k8s.Job(o)
	if err != nil {
		return usageError{err}
	}
	b, err := k8s.YAML(job)
	if err != nil {
		return err
	}
	var w io.Writer = cmd.OutOrStdout()
	if f.out != "-" {
		if err := checkWritable(f.out); err != nil {
			return usagef("--output: %v", err)
		}
		if err := os.WriteFile(f.out, b, 0o644); err != nil {
			return fmt.Errorf("write the manifest: %v", err)
		}
	} else if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write the manifest: %v", err)
	}
	ns := ""
	if o.Namespace != "" {
		ns = " -n " + o.Namespace
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "job %s: %d shards start at %s (in %v): apply it now, then\n  kubectl%s wait --for=condition=complete job/%s --timeout=%ds\n  kubectl%s logs -l job-name=%s --tail=-1 --max-log-requests=%d > shards.jsonl\n  loadlab merge shards.jsonl\n",
		o.Name, o.Shards, o.Start.UTC().Format(time.RFC3339), o.Start.Sub(now).Round(time.Second), ns, o.Name, int(o.Deadline.Seconds()), ns, o.Name, o.Shards)
	if names := secretHeaders(genArgs); len(names) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: -H %s is in the manifest in clear: put such headers in a Secret and give it with --header-secret\n", strings.Join(names, ", "))
	}
	// From the node's own network namespace a loopback target is local.
	if !k8s.HasArg(genArgs, "--allow-remote") && !(o.HostNetwork && loopback.Is(target.Host)) {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: the shards refuse a target reached through a gateway (usually the case from a pod) unless the gen arguments include --allow-remote\n")
	}
	return nil
}

// secretHeaders returns the names of the -H headers in gen's arguments
// that usually carry credentials.
func secretHeaders(args []string) []string {
	g := newGenCmd()
	if g.ParseFlags(args) != nil {
		return nil
	}
	hs, _ := g.Flags().GetStringArray("header")
	var names []string
	for _, h := range hs {
		n, _, _ := strings.Cut(h, ":")
		switch n = strings.TrimSpace(n); strings.ToLower(n) {
		case "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token":
			names = append(names, n)
		}
	}
	return names
}

// checkGenArgs parses the Job's gen arguments with gen's own flags, so that
// a typo fails here rather than in every pod, and returns how long a shard
// runs at most (duration and two timeouts to drain, and the metrics
// endpoint's linger when metrics is set) and the target.
func checkGenArgs(args []string, shards int, metrics bool) (time.Duration, gen.Target, error) {
	g := newGenCmd()
	g.SetArgs(args)
	if err := g.ParseFlags(args); err != nil {
		return 0, gen.Target{}, usagef("gen arguments: %w", err)
	}
	fl := g.Flags()
	for _, name := range []string{"shard", "start-at", "json", "quiet", "hdr-log", "host", "cpuprofile"} {
		if f := fl.Lookup(name); f != nil && f.Changed {
			return 0, gen.Target{}, usagef("gen argument --%s: the Job sets it for each shard (results are printed as JSON on stdout); leave it out", name)
		}
	}
	if f := fl.Lookup("threshold"); f != nil && f.Changed {
		return 0, gen.Target{}, usagef("gen argument --threshold: a shard's pod would fail (exit 3) on its own part of the run; check the merged result instead: loadlab merge --threshold")
	}
	if f := fl.Lookup("headers-env"); f != nil && f.Changed {
		return 0, gen.Target{}, usagef("gen argument --headers-env: the pods have no such variable; put the headers in a Secret and give it with --header-secret")
	}
	if f := fl.Lookup("targets"); f != nil && f.Changed {
		return 0, gen.Target{}, usagef("gen argument --targets: the pods cannot read a file of this machine; run the Job with one URL")
	}
	if n := len(fl.Args()); n != 1 {
		return 0, gen.Target{}, usagef("gen arguments: give exactly one URL (got %d arguments)", n)
	}
	target, err := gen.ParseTarget(fl.Args()[0])
	if err != nil {
		return 0, gen.Target{}, usagef("gen arguments: %w", err)
	}
	if c, _ := fl.GetInt("connections"); c < shards {
		return 0, gen.Target{}, usagef("gen arguments: -c %d connections cannot be split over %d shards: give at least one per shard", c, shards)
	}
	d, _ := fl.GetDuration("duration")
	if st, _ := fl.GetString("stages"); st != "" {
		stages, err := gen.ParseStages(st)
		if err != nil {
			return 0, gen.Target{}, usagef("gen arguments: %w", err)
		}
		d = gen.StagesDuration(stages)
	}
	t, _ := fl.GetDuration("timeout")
	if d <= 0 || t <= 0 {
		return 0, gen.Target{}, usagef("gen arguments: --duration and --timeout must be > 0")
	}
	run := d + 2*t
	if metrics {
		linger, _ := fl.GetDuration("metrics-linger")
		run += linger
	}
	return run, target, nil
}

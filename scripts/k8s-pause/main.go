// Command k8s-pause is the pod sandbox ("pause") container of the one-node
// cluster scripts/k8s-up.sh brings up, where no image can be pulled: it
// holds the pod's namespaces open by sleeping until SIGTERM or SIGINT, and
// exits 0 then. As PID 1 of a pod that shares its process namespace, it
// also reaps the orphans reparented to it, as Kubernetes' own pause does.
// k8s-up.sh builds it static (CGO off) and writes it as an image with
// `loadlab k8s image --binary ... --path /pause`.
//
// Imports: a tool of scripts/k8s-up.sh, not part of loadlab's commands:
// none of loadlab's packages; nothing imports it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	child := make(chan os.Signal, 1)
	signal.Notify(child, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			os.Exit(0)
		case <-child:
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}

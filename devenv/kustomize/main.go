// `kubectl kustomize` exactly as one kubectl release runs it: its own command package
// (k8s.io/kubectl/pkg/cmd/kustomize) with that release's module graph, so the embedded kustomize is
// the one that kubectl ships (kubectl 1.30: kustomize/api v0.13.5-0.20230601165947; 1.31: v0.17.2;
// 1.32: v0.18.0). test/e2e/manifests.test.ts builds every kustomization in manifests/ with each.
// Usage: kubectl-kustomize DIR (the YAML on stdout).
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/kustomize"
)

func main() {
	cmd := kustomize.NewCmdKustomize(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	cmd.SetArgs(os.Args[1:])
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}

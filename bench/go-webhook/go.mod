module staticsite.dev/bench/go-webhook

go 1.25

require (
	k8s.io/api v0.37.2
	sigs.k8s.io/controller-runtime v0.25.2
)

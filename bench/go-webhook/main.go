// A controller-runtime webhook with the StaticSite validation rules written by hand in Go, the
// comparison bench/webhook-go.ts measures ours against: the same review, the same wrk run. The
// rules and their messages are those of api/constants.ts (CEL in the CRD, enforced by our webhook):
// a prod site needs 2 replicas, the tier is immutable, the hostname is an RFC 1123 subdomain.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"regexp"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

type siteSpec struct {
	Content  *string `json:"content"`
	Replicas *int64  `json:"replicas"`
	Tier     string  `json:"tier"`
	Hostname string  `json:"hostname"`
}

type site struct {
	Spec siteSpec `json:"spec"`
}

var hostname = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

type validator struct{}

func (validator) Handle(_ context.Context, req admission.Request) admission.Response {
	var s site
	if err := json.Unmarshal(req.Object.Raw, &s); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var problems []string
	if s.Spec.Content == nil {
		problems = append(problems, "spec.content: Required value")
	}
	if s.Spec.Tier == "prod" && (s.Spec.Replicas == nil || *s.Spec.Replicas < 2) {
		problems = append(problems, "spec: Invalid value: prod sites need at least 2 replicas")
	}
	if s.Spec.Hostname != "" && !hostname.MatchString(s.Spec.Hostname) {
		problems = append(problems, "spec.hostname: Invalid value: hostname must be a lowercase RFC 1123 subdomain")
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		var old site
		if err := json.Unmarshal(req.OldObject.Raw, &old); err == nil && old.Spec.Tier != s.Spec.Tier {
			problems = append(problems, "spec.tier: Invalid value: tier is immutable")
		}
	}
	if len(problems) > 0 {
		return admission.Denied(strings.Join(problems, ", "))
	}
	return admission.Allowed("")
}

func main() {
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key")
	port := flag.Int("port", 9443, "HTTPS port on 127.0.0.1")
	flag.Parse()
	server := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: *port, CertDir: *certDir})
	server.Register("/validate", &webhook.Admission{Handler: validator{}})
	if err := server.Start(ctrl.SetupSignalHandler()); err != nil {
		panic(err)
	}
}

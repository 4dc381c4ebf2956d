{{/* Helm's own labels, on every object's metadata (not on selectors or pod templates). */}}
{{- define "staticsite.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "staticsite.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The one check of the certificate mode, so a typo fails the render instead of rendering neither. */}}
{{- define "staticsite.certManager" -}}
{{- if not (has .Values.certificates.mode (list "bootstrapper" "cert-manager")) -}}
{{- fail (printf "certificates.mode must be bootstrapper or cert-manager, not %q" .Values.certificates.mode) -}}
{{- end -}}
{{- if eq .Values.certificates.mode "cert-manager" }}true{{ end -}}
{{- end }}

{{/* cainjector's annotation, on the objects whose caBundle the API server uses to call the webhook. */}}
{{- define "staticsite.injectCa" -}}
{{- if include "staticsite.certManager" . }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/staticsite-webhook
{{- end }}
{{- end }}

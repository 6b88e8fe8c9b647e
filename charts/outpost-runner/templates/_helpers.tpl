{{/* The chart's name. */}}
{{- define "outpost-runner.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the release name, with the chart's unless it holds it. */}}
{{- define "outpost-runner.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "outpost-runner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outpost-runner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "outpost-runner.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "outpost-runner.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "outpost-runner.serviceAccountName" -}}
{{- default (include "outpost-runner.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The Secret holding the token: the given one, or the chart's. */}}
{{- define "outpost-runner.tokenSecretName" -}}
{{- if .Values.token.existingSecret }}
{{- .Values.token.existingSecret }}
{{- else }}
{{- printf "%s-token" (include "outpost-runner.fullname" .) }}
{{- end }}
{{- end }}

{{- define "outpost-runner.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The pod's security context: root, so the runner can run jobs as other
uids (runner.jobUser), else podSecurityContext. */}}
{{- define "outpost-runner.podSecurityContext" -}}
{{- if .Values.runner.jobUser }}
runAsNonRoot: false
runAsUser: 0
runAsGroup: 0
seccompProfile:
  type: RuntimeDefault
{{- else }}
{{- toYaml .Values.podSecurityContext }}
{{- end }}
{{- end }}

{{/* The runner container's: with runner.jobUser, only what switching to a
job's uid, giving it its directory, cleaning up after it and stopping it
needs; else securityContext. */}}
{{- define "outpost-runner.securityContext" -}}
{{- if .Values.runner.jobUser }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
  add: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID"]
{{- else }}
{{- toYaml .Values.securityContext }}
{{- end }}
{{- end }}

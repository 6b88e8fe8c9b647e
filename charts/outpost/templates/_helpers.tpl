{{/* The chart's name. */}}
{{- define "outpost.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the release name, with the chart's unless it holds it. */}}
{{- define "outpost.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "outpost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outpost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "outpost.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "outpost.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* A component's selector labels: (dict "root" $ "component" "api"). */}}
{{- define "outpost.componentSelector" -}}
{{ include "outpost.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "outpost.componentLabels" -}}
{{ include "outpost.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "outpost.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "outpost.registryClaim" -}}
{{- default (printf "%s-registry" (include "outpost.fullname" .)) .Values.registry.persistence.existingClaim }}
{{- end }}

{{/* What every pod of the chart shares: user, no service-account token, pull secrets. */}}
{{- define "outpost.podSpec" -}}
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The environment every outpost process reads: the database and the keys. */}}
{{- define "outpost.storeEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.existingSecret }}
      key: {{ .Values.database.key }}
- name: OUTPOST_KEK_FILE
  value: /run/outpost-kek/current/{{ .Values.kek.key }}
{{- if .Values.kek.previousSecret }}
- name: OUTPOST_KEK_PREVIOUS_FILE
  value: /run/outpost-kek/previous/{{ .Values.kek.previousKey }}
{{- end }}
- name: OUTPOST_DATA_DIR
  value: /var/lib/outpost
{{- end }}

{{/* The environment of api and worker: Temporal and the gateway's URL. */}}
{{- define "outpost.planeEnv" -}}
{{ include "outpost.storeEnv" . }}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- with .Values.temporal.taskQueue }}
- name: OUTPOST_TASK_QUEUE
  value: {{ . | quote }}
{{- end }}
- name: OUTPOST_GATEWAY_URL
  value: {{ .Values.gateway.url | quote }}
{{- end }}

{{/* The key Secrets, and /tmp (the root file system is read-only). */}}
{{- define "outpost.volumes" -}}
- name: kek
  secret:
    secretName: {{ .Values.kek.existingSecret }}
    defaultMode: 0440
{{- if .Values.kek.previousSecret }}
- name: kek-previous
  secret:
    secretName: {{ .Values.kek.previousSecret }}
    defaultMode: 0440
{{- end }}
- name: tmp
  emptyDir: {}
{{- end }}

{{- define "outpost.volumeMounts" -}}
- name: kek
  mountPath: /run/outpost-kek/current
  readOnly: true
{{- if .Values.kek.previousSecret }}
- name: kek-previous
  mountPath: /run/outpost-kek/previous
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/* A component's scheduling: nodeSelector, tolerations, spread, and its
affinity, by default a preference for nodes without a pod of the component.
(dict "root" $ "component" "api" "values" .Values.api) */}}
{{- define "outpost.scheduling" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if .values.affinity }}
  {{- toYaml .values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "outpost.componentSelector" . | nindent 14 }}
{{- end }}
{{- end }}

{{/* A component's PodDisruptionBudget: (dict "root" $ "component" "api" "values" .Values.api) */}}
{{- define "outpost.pdb" -}}
{{- if .values.pdb.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ printf "%s-%s" (include "outpost.fullname" .root) .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "outpost.componentLabels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .values.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "outpost.componentSelector" . | nindent 6 }}
{{- end }}
{{- end }}

{{/* The -metrics-listen of an api or worker container, unless metricsPort is 0. */}}
{{- define "outpost.metricsEnv" -}}
{{- if .Values.metricsPort }}
- name: OUTPOST_METRICS_LISTEN
  value: {{ printf ":%v" .Values.metricsPort | quote }}
{{- end }}
{{- end }}

{{/* The container port of GET /metrics, unless metricsPort is 0. */}}
{{- define "outpost.metricsPort" -}}
{{- if .Values.metricsPort }}
- name: metrics
  containerPort: {{ .Values.metricsPort }}
  protocol: TCP
{{- end }}
{{- end }}

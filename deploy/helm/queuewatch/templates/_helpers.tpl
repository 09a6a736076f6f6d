{{/* Names, labels and the decisions every template shares. */}}

{{- define "queuewatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "queuewatch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "queuewatch.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "queuewatch.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "queuewatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "queuewatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "queuewatch.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "queuewatch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* sharded is "true" when clusters are split over pods. */}}
{{- define "queuewatch.sharded" -}}
{{- if gt (int .Values.shards) 1 }}true{{ end }}
{{- end }}

{{/*
statefulSet is "true" when the pods need a stable identity: a volume
each (SQLite) or an ordinal (shards). Only an unsharded deployment on
the shared PostgreSQL store is a Deployment.
*/}}
{{- define "queuewatch.statefulSet" -}}
{{- if or (include "queuewatch.sharded" .) (ne .Values.audit.driver "postgres") }}true{{ end }}
{{- end }}

{{/*
replicas is the pod count: replicaCount pods per shard. Pod k is shard
k mod shards (QUEUEWATCH_SHARD=auto/N), so pods 0..N-1 are one of each
shard and the pods after them their standbys, which share each shard's
polling through the PostgreSQL store's poll leases.
*/}}
{{- define "queuewatch.replicas" -}}
{{- mul (int .Values.shards) (int .Values.replicaCount) }}
{{- end }}

{{- define "queuewatch.headless" -}}
{{ include "queuewatch.fullname" . }}-headless
{{- end }}

{{/* secretName is the chart's own Secret (secretEnv, audit.dsn). */}}
{{- define "queuewatch.secretName" -}}
{{ include "queuewatch.fullname" . }}-env
{{- end }}

{{/* granularity is config.metrics.granularity, partition by default. */}}
{{- define "queuewatch.granularity" -}}
{{- $m := default dict .Values.config.metrics }}
{{- default "partition" $m.granularity }}
{{- end }}

{{/*
validate refuses values that would deploy something broken, with what to
change. It renders nothing.
*/}}
{{- define "queuewatch.validate" -}}
{{- $driver := .Values.audit.driver }}
{{- if not (has $driver (list "sqlite" "postgres")) }}
{{- fail (printf "audit.driver must be sqlite or postgres, got %q" $driver) }}
{{- end }}
{{- if lt (int .Values.shards) 1 }}
{{- fail (printf "shards must be at least 1, got %v" .Values.shards) }}
{{- end }}
{{- if lt (int .Values.replicaCount) 1 }}
{{- fail (printf "replicaCount must be at least 1, got %v" .Values.replicaCount) }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (eq $driver "sqlite") }}
{{- fail "replicaCount > 1 needs audit.driver postgres: with sqlite every pod keeps its own audit log, so one pod would not see (or fence) the jobs of another" }}
{{- end }}
{{- if and (eq $driver "postgres") (not .Values.audit.dsn) (not .Values.audit.existingSecret) }}
{{- fail "audit.driver postgres needs audit.dsn or audit.existingSecret (a Secret with the DSN under audit.existingSecretKey)" }}
{{- end }}
{{- range $k := list "listen" "data_dir" "audit" "shard" }}
{{- if hasKey $.Values.config $k }}
{{- fail (printf "config.%s is set by the chart: remove it (see values.yaml: service.port, persistence, audit, shards)" $k) }}
{{- end }}
{{- end }}
{{- $auth := default dict .Values.config.auth }}
{{- if and .Values.ingress.enabled (eq (default "none" $auth.mode) "none") }}
{{- fail "ingress.enabled with config.auth.mode none would let anyone who reaches the Ingress replay and delete dead letters: configure config.auth (basic, tokens or proxy)" }}
{{- end }}
{{- if and .Values.prometheusRule.enabled .Values.config.alerts (not .Values.prometheusRule.custom) }}
{{- fail "config.alerts changes the thresholds the shipped rules were generated for: generate them with `queuewatch rules --config` and pass them with --set-file prometheusRule.custom=rules.yml, or set prometheusRule.enabled=false" }}
{{- end }}
{{- end }}

{{/*
config is queuewatch.yml: config from values plus what the chart owns
(listen, data_dir, audit, shard). A sharded pod's index comes from
QUEUEWATCH_SHARD=auto/N, its ordinal; the file holds the count and where
the other shards answer, for the page of a cluster another shard polls.
*/}}
{{- define "queuewatch.config" -}}
{{- $c := deepCopy .Values.config }}
{{- $_ := set $c "listen" "0.0.0.0:8080" }}
{{- $_ := set $c "data_dir" "/var/lib/queuewatch" }}
{{- if eq .Values.audit.driver "postgres" }}
{{- $_ := set $c "audit" (dict "driver" "postgres" "dsn" "${QUEUEWATCH_AUDIT_DSN}") }}
{{- end }}
{{- if include "queuewatch.sharded" . }}
{{- $peer := printf "http://%s-{index}.%s.%s.svc:8080" (include "queuewatch.fullname" .) (include "queuewatch.headless" .) .Release.Namespace }}
{{- $_ := set $c "shard" (dict "count" (int .Values.shards) "peer_url" $peer) }}
{{- end }}
{{- toYaml $c }}
{{- end }}

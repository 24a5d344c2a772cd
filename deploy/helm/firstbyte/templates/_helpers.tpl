{{/*
Names. The StatefulSet is named fullname, so its pods are fullname-0,
fullname-1, ...; the headless Service (fullname-pods) gives each a DNS name,
fullname-N.fullname-pods, which the collector's fan-out uses.
*/}}
{{- define "firstbyte.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "firstbyte.headless" -}}{{ include "firstbyte.fullname" . }}-pods{{- end -}}
{{- define "firstbyte.adminService" -}}{{ include "firstbyte.fullname" . }}-admin{{- end -}}
{{- define "firstbyte.otelcol" -}}{{ include "firstbyte.fullname" . }}-otelcol{{- end -}}

{{/*
The gateway pods' service account: the release's own (fullname, or
serviceAccount.name) when serviceAccount.create, else serviceAccount.name
(empty: the namespace's default). Annotations need an account the chart
creates: on another one they would be dropped unseen.
*/}}
{{- define "firstbyte.serviceAccountName" -}}
{{- $sa := .Values.serviceAccount -}}
{{- if $sa.create -}}
{{- default (include "firstbyte.fullname" .) $sa.name -}}
{{- else -}}
{{- if $sa.annotations -}}
{{- fail "serviceAccount.annotations: the chart puts them on the account it creates (serviceAccount.create: true); annotate an existing account yourself" -}}
{{- end -}}
{{- default "default" $sa.name -}}
{{- end -}}
{{- end -}}

{{- define "firstbyte.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of the gateway pods. */}}
{{- define "firstbyte.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end -}}

{{/* Selector labels of the collector pods. */}}
{{- define "firstbyte.otelcolSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: otelcol
{{- end -}}

{{/* An image reference; input: (list IMAGE-VALUES APP-VERSION). */}}
{{- define "firstbyte.image" -}}
{{- $img := index . 0 -}}
{{- printf "%s:%s" (required "image.repository" $img.repository) ($img.tag | default (index . 1)) -}}
{{- end -}}

{{/*
firstbyte.seconds: a Go duration ("5s", "1m30s", "250ms", "0") as seconds,
a float, the way the gateway reads shutdown.delay and shutdown.grace. Input:
(list DURATION FIELD-PATH).
*/}}
{{- define "firstbyte.seconds" -}}
{{- $d := index . 0 | toString | trim -}}
{{- $field := index . 1 -}}
{{- if eq $d "0" -}}
0
{{- else -}}
{{- if not (regexMatch "^([0-9]+(\\.[0-9]+)?(h|ms|m|s|us|ns))+$" $d) -}}
{{- fail (printf "config.%s: %q is not a duration (e.g. 5s, 1m30s)" $field $d) -}}
{{- end -}}
{{- $units := dict "h" 3600.0 "m" 60.0 "s" 1.0 "ms" 0.001 "us" 0.000001 "ns" 0.000000001 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(h|ms|m|s|us|ns)" $d -1 -}}
{{- $n := regexFind "^[0-9.]+" . | float64 -}}
{{- $u := regexReplaceAll "^[0-9.]+" . "" -}}
{{- $total = addf $total (mulf $n (get $units $u)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}
{{- end -}}

{{/*
firstbyte.drainSeconds: shutdown.delay + shutdown.grace of the config, with
the gateway's defaults (0s, 30s) for what the config leaves out.
*/}}
{{- define "firstbyte.drainSeconds" -}}
{{- $sd := .Values.config.shutdown | default dict -}}
{{- $delay := include "firstbyte.seconds" (list ($sd.delay | default "0") "shutdown.delay") | float64 -}}
{{- $grace := include "firstbyte.seconds" (list ($sd.grace | default "30s") "shutdown.grace") | float64 -}}
{{- addf $delay $grace -}}
{{- end -}}

{{/*
firstbyte.terminationGracePeriodSeconds: the value given, checked against
the longest drain (delay + grace + 2 s to end what is open + 5 s to flush
spans), or that drain + 3 s when none is given.
*/}}
{{- define "firstbyte.terminationGracePeriodSeconds" -}}
{{- $drain := include "firstbyte.drainSeconds" . | float64 | ceil | int -}}
{{- $longest := add $drain 7 -}}
{{- $given := .Values.terminationGracePeriodSeconds -}}
{{- if kindIs "invalid" $given -}}{{- $given = "" -}}{{- end -}}
{{- if eq (toString $given) "" -}}
{{- add $longest 3 -}}
{{- else if lt (int $given) $longest -}}
{{- fail (printf "terminationGracePeriodSeconds %v is shorter than a drain can take: shutdown.delay + shutdown.grace + 7 = %d s (leave it empty to compute it)" $given $longest) -}}
{{- else -}}
{{- int $given -}}
{{- end -}}
{{- end -}}

{{/*
firstbyte.checkSecretField: fails when a secret field of the config holds
anything but ${VAR} references. Its value is never printed. Input:
(list VALUE FIELD-PATH).
*/}}
{{- define "firstbyte.checkSecretField" -}}
{{- $v := index . 0 -}}
{{- $field := index . 1 -}}
{{- if and (not (kindIs "invalid" $v)) (ne (toString $v) "") -}}
{{- if not (regexMatch "^(\\$\\{[A-Za-z_][A-Za-z0-9_]*\\})+$" (toString $v)) -}}
{{- fail (printf "config.%s: a secret in the chart's values would be rendered into a ConfigMap; write ${VAR} and give VAR in secretEnv (from a Secret)" $field) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
firstbyte.config: the gateway's config file. The user's config, checked,
with the chart's listeners, span export and ingest set.
*/}}
{{- define "firstbyte.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- if hasKey $cfg "listen" -}}
{{- fail "config.listen: the chart sets it from containerPorts.api" -}}
{{- end -}}
{{- $admin := deepCopy ($cfg.admin | default dict) -}}
{{- if hasKey $admin "listen" -}}
{{- fail "config.admin.listen: the chart sets it from containerPorts.admin" -}}
{{- end -}}
{{- include "firstbyte.checkSecretField" (list $admin.token "admin.token") -}}
{{- $auth := $cfg.auth | default dict -}}
{{- range $i, $k := ($auth.keys | default list) -}}
{{- include "firstbyte.checkSecretField" (list $k (printf "auth.keys[%d]" $i)) -}}
{{- end -}}
{{- range $name, $p := ($cfg.providers | default dict) -}}
{{- if kindIs "map" $p -}}
{{- include "firstbyte.checkSecretField" (list $p.api_key (printf "providers.%s.api_key" $name)) -}}
{{- range $field := list "headers" "query" -}}
{{- $m := index $p $field -}}
{{- if kindIs "map" $m -}}
{{- range $k, $v := $m -}}
{{- include "firstbyte.checkSecretField" (list $v (printf "providers.%s.%s.%s" $name $field $k)) -}}
{{- end -}}
{{- else -}}
{{- include "firstbyte.checkSecretField" (list $m (printf "providers.%s.%s" $name $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $tel := deepCopy ($cfg.telemetry | default dict) -}}
{{- if hasKey $tel "otlp_endpoint" -}}
{{- fail "config.telemetry.otlp_endpoint: the chart sets it to its collector (otelcol)" -}}
{{- end -}}
{{- $ingest := deepCopy ($tel.ingest | default dict) -}}
{{- if or (hasKey $ingest "enabled") (hasKey $ingest "token") -}}
{{- fail "config.telemetry.ingest.enabled and .token: the chart sets them (the token from ingest.secretName)" -}}
{{- end -}}
{{- $_ := set $cfg "listen" (printf "0.0.0.0:%d" (int .Values.containerPorts.api)) -}}
{{- $_ := set $admin "listen" (printf "0.0.0.0:%d" (int .Values.containerPorts.admin)) -}}
{{- $_ := set $cfg "admin" $admin -}}
{{- if .Values.otelcol.enabled -}}
{{- $_ := set $tel "otlp_endpoint" (printf "http://%s:4318" (include "firstbyte.otelcol" .)) -}}
{{- $_ := set $ingest "enabled" true -}}
{{- $_ := set $ingest "token" "${FIRSTBYTE_INGEST_TOKEN}" -}}
{{- $_ := set $tel "ingest" $ingest -}}
{{- end -}}
{{- $_ := set $cfg "telemetry" $tel -}}
{{- $text := toYaml $cfg -}}
{{- include "firstbyte.checkEnvRefs" (list $ $text) -}}
{{- $text -}}
{{- end -}}

{{/*
firstbyte.checkEnvRefs: every ${VAR} without a default in the config is an
environment variable the pod gets; else the gateway would refuse to start.
*/}}
{{- define "firstbyte.checkEnvRefs" -}}
{{- $ := index . 0 -}}
{{- $known := list "FIRSTBYTE_INGEST_TOKEN" -}}
{{- range $k, $v := ($.Values.secretEnv | default dict) -}}{{- if $v -}}{{- $known = append $known $k -}}{{- end -}}{{- end -}}
{{- range $k, $v := ($.Values.extraEnv | default dict) -}}{{- $known = append $known $k -}}{{- end -}}
{{- range regexFindAll "\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}" (index . 1) -1 -}}
{{- $var := trimSuffix "}" (trimPrefix "${" .) -}}
{{- if not (has $var $known) -}}
{{- fail (printf "config names ${%s}, which neither secretEnv nor extraEnv provides" $var) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The gateway pods' environment. */}}
{{- define "firstbyte.env" -}}
{{- range $name := keys (.Values.secretEnv | default dict) | sortAlpha }}
{{- $ref := index $.Values.secretEnv $name }}
{{- if $ref }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "secretEnv.%s.secretName" $name) $ref.secretName }}
      key: {{ required (printf "secretEnv.%s.key" $name) $ref.key }}
{{- end }}
{{- end }}
{{- if .Values.otelcol.enabled }}
- name: FIRSTBYTE_INGEST_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ required "ingest.secretName" .Values.ingest.secretName }}
      key: {{ required "ingest.key" .Values.ingest.key }}
{{- end }}
{{- range $name := keys (.Values.extraEnv | default dict) | sortAlpha }}
- name: {{ $name }}
  value: {{ index $.Values.extraEnv $name | toString | quote }}
{{- end }}
- name: POD_NAME
  valueFrom:
    fieldRef: {fieldPath: metadata.name}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef: {fieldPath: metadata.namespace}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: k8s.pod.name=$(POD_NAME),k8s.namespace.name=$(POD_NAMESPACE)
{{- end -}}

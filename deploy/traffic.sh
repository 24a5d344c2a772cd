#!/bin/sh
# Steady client traffic for deploy/compose.yaml, so the dashboard has
# something to show: WORKERS sequential streaming chat requests at a time
# to each gateway in GATEWAYS (host:port of the client API), a PAUSE apart.
# Stop it with `docker compose -f deploy/compose.yaml stop traffic`.
set -u
: "${GATEWAYS:?space-separated host:port of each gateway}"
: "${FIRSTBYTE_API_KEY:?the gateways require a client key}"
MODEL=${MODEL:-llama-3.3-70b}
WORKERS=${WORKERS:-2}
PAUSE=${PAUSE:-0.2}

body=$(printf '{"model":"%s","stream":true,"messages":[{"role":"user","content":"Say something quick."}]}' "$MODEL")

# One worker: one request at a time, so nothing piles up when a gateway is
# slow or down (curl gives up after 30 s; the next try follows).
worker() {
  while :; do
    curl -sS -o /dev/null --max-time 30 \
      -H "Authorization: Bearer $FIRSTBYTE_API_KEY" -H 'Content-Type: application/json' \
      -d "$body" "http://$1/v1/chat/completions" || sleep 1
    sleep "$PAUSE"
  done
}

for gw in $GATEWAYS; do
  i=0
  while [ "$i" -lt "$WORKERS" ]; do
    worker "$gw" &
    i=$((i + 1))
  done
done
echo "traffic: $WORKERS workers per gateway on $GATEWAYS, model $MODEL"
wait

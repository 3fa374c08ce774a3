#!/bin/sh
# One-shot (the temporal-namespace service, image temporalio/admin-tools):
# waits until the Temporal cluster answers, then creates the service's
# namespace unless it exists. The API registers its search attributes on it
# when it starts, so API and workers start after this has finished.
set -eu
: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS is required}"
: "${TEMPORAL_NAMESPACE:?TEMPORAL_NAMESPACE is required}"
retention=${NAMESPACE_RETENTION:-72h}

attempt=1
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  if [ "$attempt" -ge 60 ]; then
    echo "Temporal at $TEMPORAL_ADDRESS is not healthy after $attempt attempts" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 5
done

if temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" --address "$TEMPORAL_ADDRESS" > /dev/null 2>&1; then
  echo "namespace $TEMPORAL_NAMESPACE exists"
else
  temporal operator namespace create --namespace "$TEMPORAL_NAMESPACE" --retention "$retention" --address "$TEMPORAL_ADDRESS"
  echo "namespace $TEMPORAL_NAMESPACE created (history kept $retention after a workflow closes)"
fi

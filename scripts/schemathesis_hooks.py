# Hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS): schemathesis has no
# serializer for NDJSON bodies (POST /append), so they are sent as the text they are.
import schemathesis

schemathesis.serializer.alias("application/x-ndjson", "text/plain")

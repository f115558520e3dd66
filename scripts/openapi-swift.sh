#!/usr/bin/env bash
# Writes Sources/HTTPServer/OpenAPIDocument.swift from docs/openapi.yaml, so the server carries
# the document in its binary (GET /openapi.yaml) with no resource bundle to find at run time.
# Run it after every change to docs/openapi.yaml; ServerTests' OpenAPITests fail until you do.
set -euo pipefail
cd "$(dirname "$0")/.."
source=docs/openapi.yaml
target=Sources/HTTPServer/OpenAPIDocument.swift
# The text goes into a raw string literal ending in """##; the document must not hold that.
if grep -q '"""##' "$source"; then
    echo "openapi-swift.sh: $source contains \"\"\"##, which would end the Swift literal" >&2
    exit 1
fi
if [ -n "$(tail -c1 "$source")" ]; then
    echo "openapi-swift.sh: $source must end with a newline" >&2
    exit 1
fi
{
    echo '// Written by scripts/openapi-swift.sh from docs/openapi.yaml: do not edit; edit that file and run the script.'
    echo ''
    echo '/// The OpenAPI 3.1 document of the API, served at `GET /openapi.yaml`.'
    echo 'enum OpenAPIDocument {'
    echo '    /// The text of docs/openapi.yaml.'
    echo '    static let text = ##"""'
    cat "$source"
    echo ''
    echo '"""##'
    echo '}'
} > "$target.tmp"
mv "$target.tmp" "$target"
echo "wrote $target"

#!/usr/bin/env bash
# Regenerates model/fetch/generated from our fetch/DF4 schemas.
set -euo pipefail
cd "$(dirname "$0")"
../flatc-ts.sh generated model/fetch/fbs fbs/fetch.fbs fbs/df4.fbs fbs/hist.fbs

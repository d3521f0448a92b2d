#!/usr/bin/env bash
# Regenerates model/metric-list/generated from our MetricList schemas, one layout each.
set -euo pipefail
cd "$(dirname "$0")"
for v in v1 v2; do ../flatc-ts.sh "generated/$v" model/metric-list/fbs "fbs/metric_list_$v.fbs"; done

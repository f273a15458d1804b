#!/bin/bash
# The suited detector's recipe on a lent GPU machine, as one command (vision.det_gpu; docs/camera.md, "Training on a
# lent GPU"). Run there from the repository root, the pack and the wheels carried:
#   bash scripts/gpu-detector.sh [vision.det_gpu train options]      (device run: carry [".gpu/det", ".whl"])
# ultralytics is not installed there: its wheel, ultralytics-thop's and polars 0.20.0's (ultralytics' oldest polars,
# 28 MB; 2.x is 55 MB and would take the call over its 64 MiB) are installed from .whl into /tmp/site. The run goes
# to /tmp/det_run; only its checkpoint and recipe come back, in $OUT. PY names another Python (a CPU check here).
set -euo pipefail
PY=${PY:-python3}
: "${OUT:?OUT: the folder whose files come back}"
[ -f .gpu/det/fonts.json ] || { echo "no .gpu/det/fonts.json: python -m vision.det_gpu pack .gpu/det here first" >&2; exit 2; }
ls .whl/ultralytics-*.whl .whl/ultralytics_thop-*.whl .whl/polars-*.whl >/dev/null
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
rm -rf /tmp/det_run
rc=0
"$PY" -m vision.det_gpu train .gpu/det /tmp/det_run "$@" > /tmp/det_run.log 2>&1 || rc=$?
grep -v "it/s" /tmp/det_run.log | tail -n 40 || true  # the progress bars left out
[ "$rc" -eq 0 ] || exit "$rc"
cp /tmp/det_run/det_gpu.pt /tmp/det_run/det_gpu.json "$OUT/"

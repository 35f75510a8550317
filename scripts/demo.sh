#!/usr/bin/env bash
# Fresh machine to running rewy: installs what is missing, builds (Release; CUDA when nvcc
# exists) and runs the default job.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bash "$REWY_ROOT/scripts/setup.sh"
rewy_configure "$REWY_ROOT/build"
rewy_build "$REWY_ROOT/build" rewy
"$REWY_ROOT/build/rewy" demo

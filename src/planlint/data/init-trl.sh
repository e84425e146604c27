#!/usr/bin/env bash
# Starts the run of plans/__NAME__.yaml (written by `planlint init --trainer trl`). planlint reads this
# script's flags as overrides of the config, line by line, without running it.
set -euo pipefail
trl __METHOD__ --config configs/trl/__NAME__.yaml

#!/usr/bin/env bash
# Starts the run of plans/__NAME__.yaml (written by `planlint init --trainer axolotl`). planlint reads this
# script's --flag overrides of the config, line by line, without running it.
set -euo pipefail
axolotl train configs/axolotl/__NAME__.yaml

#!/usr/bin/env bash
# Starts the run of plans/__NAME__.yaml (written by `planlint init --trainer verl`). planlint reads this
# script's key=value overrides of the config, line by line, without running it.
set -euo pipefail
python3 -m verl.trainer.main_ppo \
    --config-path="$PWD/configs/verl" \
    --config-name=__NAME__ \
    trainer.total_epochs=1

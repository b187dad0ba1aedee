#!/usr/bin/env bash
# Installs the Debian packages the build needs, when missing. Idempotent.
set -euo pipefail
packages=(cmake g++ make libgtest-dev librapidcheck-dev libcli11-dev libboost-context-dev libboost-graph-dev libsimdjson-dev slurm-wlm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

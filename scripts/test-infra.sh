#!/usr/bin/env bash
# Installs the real servers and tools the tests need, from Debian's packages, when missing.
# Each block is idempotent; CI runs this on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

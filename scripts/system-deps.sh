#!/usr/bin/env bash
# Installs the Debian packages the project needs (tests and firmware), only those missing.
# poppler-utils (pdftoppm, pdfinfo): the print-deck round-trip test rasterises the PDF.
# Usage: scripts/system-deps.sh [run|test]   (default: test)
set -euo pipefail
what="${1:-test}"
pkgs_run=(libgl1 libegl1 libgl1-mesa-dri libmtdev1 libsdl2-2.0-0)
pkgs_test=(xvfb xauth poppler-utils chromium chromium-driver gcc-avr avr-libc binutils-avr simavr libsimavr-dev libelf-dev pkg-config make gcc)
case "$what" in
  run) pkgs=("${pkgs_run[@]}") ;;
  test) pkgs=("${pkgs_run[@]}" "${pkgs_test[@]}") ;;
  *) echo "system-deps: unknown set '$what' (expected run or test)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing Debian packages (${missing[*]}) and no apt-get here; install them by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "system-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

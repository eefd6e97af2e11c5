#!/usr/bin/env bash
# The tests of the packages that run on the device, built for arm64 and run
# under qemu-aarch64 (user mode): the code a phone runs, on the fixtures and
# the shared corpus. 4 to 9 minutes here (qemu runs them 5 to 20 times
# slower), which is why CI runs only cmd/crunch's TestDeviceRun (the arm64
# crunch on real dumps, its BMD byte-identical to the host's).
#
#   scripts/arm64.sh [PKG...]    (default: the packages below)
#
# One test is left out: TestMappedInput cuts the mapped dump while crunch
# reads it and expects the fault to name its address. qemu-user hands the
# program its SIGBUS with address 0 (the Go runtime prints "addr=0x0"),
# where an arm64 Linux kernel gives the faulting address (BUS_ADRERR with
# the fault address register, arch/arm64/mm/fault.c), so under qemu crunch
# cannot tell that fault from a nil dereference and stops, as it must.
#
# Installs qemu-user with apt-get when it is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v qemu-aarch64 >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null
fi
pkgs=("$@")
if ((${#pkgs[@]} == 0)); then
  # What crunch links in, and the rest of the library; not cmd/..., whose
  # tests build and run host binaries.
  pkgs=(./hprof ./bmd ./crunch ./apkstrings ./names ./decrunch ./internal/...)
fi
cd "$root"
CGO_ENABLED=0 GOARCH=arm64 go test -exec qemu-aarch64 -count=1 -skip '^TestMappedInput$' "${pkgs[@]}"

#!/usr/bin/env bash
# Install a private 32-bit (i386) HotSpot JVM from Debian packages, for making
# HPROF dumps with 4-byte identifiers (a 64-bit HotSpot always writes 8-byte IDs).
#
#   scripts/install-jdk32.sh [DEST]      (default DEST: $JDK32_ROOT or /opt/heapcrunch-jdk32)
#
# Afterwards "$DEST/java32" runs the 32-bit `java`; scripts/gendump.sh uses it when ID32=1.
#
# Why a private tree instead of `apt-get install openjdk-17-jre-headless:i386`:
#  * openjdk-17-jre-headless and most of its library dependencies are "Multi-Arch: same",
#    so the i386 package must have exactly the same version as the installed amd64 one.
#    On this Debian 12 mirror the bookworm-security i386 index fails to download
#    ("File has unexpected size ... Mirror sync in progress?"), so i386 only sees the
#    bookworm main versions while amd64 has the security versions: apt refuses
#    ("Breaks: openjdk-17-jre-headless:i386 (!= 17.0.x)", "libssl3:i386 ... not going to be installed").
#  * Adding the i386 architecture with `dpkg --add-architecture` would make every later
#    plain `apt-get update` on the machine exit 100 because of that broken index.
# So we only *download* the .debs (architecture i386 is enabled just for these apt
# invocations with -o APT::Architectures), unpack them with dpkg -x into DEST and run
# the JVM through the unpacked i386 dynamic loader. Nothing is installed system-wide.
# Only the JVM runtime (jre-headless) is needed: javac and jcmd from the 64-bit JDK
# compile the programs and attach to the 32-bit JVM fine.
set -euo pipefail

DEST=${1:-${JDK32_ROOT:-/opt/heapcrunch-jdk32}}
PKGS=(libc6 libgcc-s1 libstdc++6 zlib1g openjdk-17-jre-headless)

if [[ -x "$DEST/java32" ]] && "$DEST/java32" -version >/dev/null 2>&1; then
    echo "install-jdk32: already installed in $DEST"
    exit 0
fi

SUDO=
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi

APTOPTS=(-o APT::Architectures::=amd64 -o APT::Architectures::=i386 -o DPkg::Lock::Timeout=900)
# The i386 security index may fail to download (see above); the main index is enough.
$SUDO apt-get "${APTOPTS[@]}" update || echo "install-jdk32: apt-get update reported errors (ignored; see above)" >&2

DL=$(mktemp -d "${TMPDIR:-/tmp}/jdk32-dl.XXXXXX")
trap 'rm -rf "$DL"' EXIT
chmod 755 "$DL"   # so apt's _apt sandbox user can write the downloads
args=()
for p in "${PKGS[@]}"; do args+=("$p:i386"); done
(cd "$DL" && apt-get "${APTOPTS[@]}" download "${args[@]}")

rm -rf "$DEST.tmp"
mkdir -p "$DEST.tmp"
for deb in "$DL"/*.deb; do dpkg -x "$deb" "$DEST.tmp"; done
R=$(cd "$DEST.tmp" && pwd)
FINAL_R=$(mkdir -p "$(dirname "$DEST")" && cd "$(dirname "$DEST")" && pwd)/$(basename "$DEST")
J=usr/lib/jvm/java-17-openjdk-i386
# The JRE's conf/, jvm.cfg, security files ... are absolute symlinks into /etc/java-17-openjdk,
# which the .deb also ships: point them into our tree instead.
find "$R/$J" -type l -lname '/etc/*' | while read -r l; do
    ln -sfn "$FINAL_R$(readlink "$l")" "$l"
done
# ld-linux.so.2 lives in lib/i386-linux-gnu (Debian 12 libc6:i386)
LDSO=$(cd "$R" && find . -name 'ld-linux.so.2' \( -type f -o -type l \) | grep i386-linux-gnu | head -1)
[[ -n "$LDSO" ]] || { echo "install-jdk32: ld-linux.so.2 not found in the unpacked libc6:i386" >&2; exit 1; }
LDSO=${LDSO#./}
# A kernel built without 32-bit support (IA32 emulation) cannot run the
# loader ("Exec format error": the VM's kernel of 2026-12-02 was such a one):
# then the JVM runs under qemu-i386 (Debian's qemu-user), slower but the same
# JVM writing the same dumps.
EMU=
if ! "$R/$LDSO" --version >/dev/null 2>&1; then
    if ! command -v qemu-i386 >/dev/null; then
        echo "install-jdk32: this kernel does not run 32-bit programs; installing qemu-user to run the JVM" >&2
        $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y qemu-user >/dev/null
    fi
    EMU="$(command -v qemu-i386) "
fi
cat > "$R/java32" <<EOF
#!/bin/sh
# 32-bit HotSpot from Debian's openjdk-17-jre-headless:i386, run through its own i386 loader${EMU:+ under qemu-i386}.
R="$FINAL_R"
exec $EMU"\$R/$LDSO" --library-path "\$R/lib/i386-linux-gnu:\$R/usr/lib/i386-linux-gnu" "\$R/$J/bin/java" "\$@"
EOF
chmod 755 "$R/java32"

rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
"$DEST/java32" -version
echo "install-jdk32: installed in $DEST (run $DEST/java32)"

#!/bin/bash
# Regenerates x86_64.tbl and aarch64.tbl ("<number> <name>" per line, sorted by
# number) from the Linux uapi headers in Debian's linux-libc-dev package.
#
#   x86_64:  <asm/unistd_64.h>  from linux-libc-dev:amd64
#   aarch64: <asm/unistd.h>     from linux-libc-dev:arm64, i.e. arm64's
#            __ARCH_WANT_* switches followed by <asm-generic/unistd.h>
#
# Both packages are fetched with `apt-get download` and unpacked into a
# temporary directory (nothing is installed), so the result does not depend on
# the host's architecture or its installed headers. Each header is run through
# the C preprocessor with -nostdinc and only that package's include path, so
# the #ifdefs resolve exactly as they do for that architecture's kernel.
# Needs: root (to enable the arm64 dpkg architecture for apt, temporarily),
# apt-get, dpkg-deb, gcc (cpp).
#
# Usage: src/provider/syscalls/regen.sh [VERSION]
#   VERSION pins linux-libc-dev's version (default: the candidate apt offers).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ver=${1:-}
tmp=$(mktemp -d)
added_arch=
cleanup() {
  rm -rf "$tmp"
  # remove only the architectures this script added
  for a in $added_arch; do dpkg --remove-architecture "$a" || true; done
  [ -z "$added_arch" ] || apt-get update -qq || true
}
trap cleanup EXIT

native=$(dpkg --print-architecture)
for a in amd64 arm64; do
  if [ "$a" != "$native" ] && ! dpkg --print-foreign-architectures | grep -qx "$a"; then
    dpkg --add-architecture "$a"; added_arch="$added_arch $a"
  fi
done
apt-get update -qq

for a in amd64 arm64; do
  mkdir -p "$tmp/$a"
  (cd "$tmp/$a" && apt-get download -q "linux-libc-dev:$a${ver:+=$ver}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
  deb=$(ls "$tmp/$a"/linux-libc-dev_*.deb)
  echo "using $(basename "$deb")" >&2
  dpkg-deb -x "$deb" "$tmp/$a/root"
done

# table <include dir...> -- <header>  : prints "<nr> <name>" sorted by number
table() {
  local incs=() h
  while [ "$1" != "--" ]; do incs+=(-I "$1"); shift; done; h=$2
  local cpp=(gcc -E -P -undef -nostdinc "${incs[@]}" -x c)
  # every __NR_* macro defined once the header is included (not __NR3264_*, and
  # not the two helper macros that are not system calls)
  local names
  names=$(printf '#include <%s>\n' "$h" | "${cpp[@]}" -dM - |
          sed -n 's/^#define __NR_\([A-Za-z0-9_]*\) .*/\1/p' |
          grep -vx -e syscalls -e arch_specific_syscall | sort -u)
  # expand each macro to its number (aliases such as __NR_fcntl -> __NR3264_fcntl)
  { printf '#include <%s>\n' "$h"; for n in $names; do echo "@@ $n __NR_$n"; done; } |
    "${cpp[@]}" - | sed -n 's/^@@ //p' |
    while read -r n expr; do
      [[ $expr =~ ^[0-9()+\ ]+$ ]] || { echo "cannot evaluate __NR_$n: $expr" >&2; exit 1; }
      echo "$(( expr )) $n"
    done | sort -n -k1,1 -k2
}

table "$tmp/amd64/root/usr/include/x86_64-linux-gnu" "$tmp/amd64/root/usr/include" -- asm/unistd_64.h > "$here/x86_64.tbl"
table "$tmp/arm64/root/usr/include/aarch64-linux-gnu" "$tmp/arm64/root/usr/include" -- asm/unistd.h > "$here/aarch64.tbl"

for t in x86_64 aarch64; do
  f="$here/$t.tbl"
  dup=$(cut -d' ' -f1 "$f" | uniq -d; cut -d' ' -f2 "$f" | sort | uniq -d)
  [ -z "$dup" ] || { echo "duplicate numbers/names in $f: $dup" >&2; exit 1; }
  echo "$f: $(wc -l < "$f") system calls" >&2
done

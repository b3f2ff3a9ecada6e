#!/bin/sh
# Make sure a program from the system's packages is there.
#
#   sh tools/ensure_tool.sh PROGRAM DEBIAN_PACKAGES BREW_PACKAGE "what happens without it"
#
# PROGRAM is a command name (dot, npm), a path (/usr/bin/chromium), or "font:FAMILY"
# for a font that fontconfig's fc-list must find (font:Noto Sans CJK KR; then list
# fontconfig among the DEBIAN_PACKAGES, space-separated, so that fc-list is there). As root with
# apt-get (CI, containers, Binder-like machines) the Debian package is installed;
# elsewhere this prints the install command for the reader's system and carries on,
# because every part of the series that needs the program has a way to do without it.
program=$1 debian=$2 brew=$3 without=$4

present() {
    case "$program" in
        font:*) fc-list "${program#font:}" family 2>/dev/null | grep -q . ;;
        *) command -v "$program" >/dev/null 2>&1 || [ -x "$program" ] ;;
    esac
}

present && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing $debian (from Debian)..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debian >/dev/null
    present && exit 0
    echo "warning: installing $debian failed, so $without." >&2
    exit 0
fi
case "$(uname -s)" in
    Darwin) how="brew install $brew" ;;
    *) if command -v apt-get >/dev/null 2>&1; then how="sudo apt-get install $debian"
       elif command -v dnf >/dev/null 2>&1; then how="sudo dnf install $debian"
       else how="your system's package manager (package $debian)"; fi ;;
esac
echo "note: $program was not found, so $without. Install it with: $how" >&2

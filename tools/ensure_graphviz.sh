#!/bin/sh
# Make sure Graphviz's `dot` is on PATH. As root with apt-get (CI, containers,
# Binder-like machines) install it; elsewhere say how, and carry on: the
# lessons still run without it and show the graphs' DOT source instead.
if command -v dot >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Graphviz (Debian package graphviz)..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
    command -v dot >/dev/null 2>&1 && exit 0
    echo "warning: installing graphviz failed; the graphs will show as DOT source." >&2
    exit 0
fi
case "$(uname -s)" in
    Darwin) how="brew install graphviz" ;;
    *) if command -v apt-get >/dev/null 2>&1; then how="sudo apt-get install graphviz"
       elif command -v dnf >/dev/null 2>&1; then how="sudo dnf install graphviz"
       else how="conda install -c conda-forge graphviz"; fi ;;
esac
echo "note: Graphviz's dot is not installed, so graphs will show as DOT source. Install it with: $how" >&2

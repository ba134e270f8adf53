#!/bin/sh
# Regenerate configure and the Makefile.in files from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
autoreconf --install --force

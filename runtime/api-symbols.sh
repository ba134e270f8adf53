#!/bin/sh
# The runtime's API as a linker dynamic list: every function and variable
# that stap_runtime.h declares. staprun exports these to the compiled
# scripts it loads, and nothing else (testsuite/systemtap.driver/exports.exp).
#   sh api-symbols.sh stap_runtime.h > staprun.dynlist
# The header is plain C: comments, preprocessor lines and struct/enum
# bodies are dropped, then each declaration (up to its ';') names a
# function (the word before its first '(') or extern variables.
set -e
awk '
{ text = text "\n" $0 }
END {
	gsub(/\\\n/, " ", text)
	gsub(/\n[ \t]*#[^\n]*/, "\n", text)
	out = ""; depth = 0; n = length(text)
	for (i = 1; i <= n; i++) {
		if (substr(text, i, 2) == "/*") {
			i += index(substr(text, i + 2), "*/") + 2
			out = out " "
			continue
		}
		c = substr(text, i, 1)
		if (c == "{")
			depth++
		else if (c == "}")
			depth--
		else if (depth == 0)
			out = out c
	}
	gsub(/[ \t\n]+/, " ", out)
	m = split(out, decl, ";")
	print "{"
	for (k = 1; k <= m; k++) {
		d = decl[k]
		sub(/^ +/, "", d)
		if (d ~ /^extern /) {
			sub(/^extern /, "", d)
			q = split(d, names, ",")
			for (r = 1; r <= q; r++) {
				s = names[r]
				sub(/\[.*$/, "", s)
				sub(/ +$/, "", s)
				sub(/^.*[ *]/, "", s)
				print "\t" s ";"
			}
		} else if (d !~ /^(static|typedef) / && index(d, "(")) {
			s = substr(d, 1, index(d, "(") - 1)
			sub(/ +$/, "", s)
			sub(/^.*[ *]/, "", s)
			print "\t" s ";"
		}
	}
	print "};"
}' "$1"

#!/bin/bash
# The systemtap-doc examples whose probe points all start with a user-space
# or script-level name (process, begin, end, error, never, timer, oneshot,
# init, input): one NAME (DIR/FILE.stp, relative to the examples' dir) a
# line. Embedded C, comments and probe alias definitions' left sides are
# left out. Used by doc_examples.exp to check that every such example is
# in doc_examples.list.
#   doc_examples_classify.sh [EXAMPLES_DIR]
set -euo pipefail
dir=${1:-/usr/share/systemtap/examples}
cd "$dir"
for f in */*.stp; do
	# one line per probe point of every "probe ... {" header
	heads=$(perl -0777 -ne '
		s/%\{.*?%\}//gs; s{/\*.*?\*/}{}gs; s{(#|//)[^\n]*}{}g;
		while (/^\s*probe\s+([^{]*?)\s*\{/mg) {
			my $b = $1;
			# "probe {a,b}.c {": a brace group, never only user-space here
			$b = "{group" if $b eq "";
			$b = (split /=/, $b, 2)[1] if $b =~ /=/ && $b !~ /==/;
			for my $p (split /,\s*(?![^()]*\))/, $b) {
				$p =~ s/^\s*\{?//;
				my ($h) = split /[.(]/, $p, 2;
				print "$h\n";
			}
		}' "$f" | sort -u)
	[ -n "$heads" ] || continue
	user=1
	for h in $heads; do
		case $h in
		process | begin | end | timer | error | never | oneshot | init | input) ;;
		*) user=0 ;;
		esac
	done
	[ $user = 1 ] && echo "$f"
done
exit 0
